"""``kill -9`` of ``evalbench run``: nothing it started lives on (issue 33, item 8).

Each test starts ``evalbench run`` as a process whose environment carries a tag of the
test's own, waits (polling /proc, bounded) until the processes under test exist, kills only
the ``evalbench`` process with SIGKILL (no cleanup code of it runs), then waits (bounded)
until no process of its tree, and none carrying the tag, runs any more. The tree is taken
just before the kill; the tag finds what left it (daemons re-parented to init).

Real processes, kernels and servers: slow by nature.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import proctree
import pytest
import yaml
from loopback import LoopbackServer
from studyfiles import CANARY_KEY, KEY_ENV, gaia_dataset, openai_system

from evalbench.processes import LIFELINE_ENV

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]
TAG = "EVALBENCH_TEST_TAG"
START_S = 180.0  # a kernel start and the first cell or task on a loaded 2-core machine
GONE_S = 60.0


@pytest.fixture
def stuck() -> Iterator[LoopbackServer]:
    """A loopback server holding every request 300 s, as a slow endpoint being paid would:
    its own, so stopping it drops what the killed run left in flight (the shared one would
    make the next test wait for them)."""
    server = LoopbackServer(latency=300.0).start()
    yield server
    server.stop()


def _cli_run(params: Path, tag: str, *args: str) -> subprocess.Popen[bytes]:
    """``evalbench run PARAMS`` (or ``evalbench *args PARAMS``) in a process of its own,
    tagged (its output in a file: a pipe would be held open by whatever it left behind)."""
    env = {**os.environ, TAG: tag, KEY_ENV: CANARY_KEY, "TMPDIR": str(_temp(params.parent))}
    env.pop(LIFELINE_ENV, None)  # this test process's own mark: not the run's business
    argv = [sys.executable, "-m", "evalbench.cli", *(args or ["run"]), str(params)]
    with open(params.with_suffix(".log"), "wb") as log:
        return subprocess.Popen(argv, env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)  # fmt: skip


def _temp(folder: Path) -> Path:
    """The run's temporary folder (its ``TMPDIR``): one per test folder, made once, under
    /tmp with a short name (a forkserver's socket path must fit in 108 bytes), removed at the
    end of the session (:func:`_remove_temps`)."""
    if folder not in _TEMPS:
        _TEMPS[folder] = Path(tempfile.mkdtemp(prefix="ebkill-", dir="/tmp"))
    return _TEMPS[folder]


_TEMPS: dict[Path, Path] = {}


@pytest.fixture(autouse=True, scope="module")
def _remove_temps() -> Iterator[None]:
    yield
    for temp in _TEMPS.values():
        shutil.rmtree(temp, ignore_errors=True)


def _kill_and_check(
    cli: subprocess.Popen[bytes],
    tag: str,
    ready: Callable[[set[proctree.Proc]], bool],
    temp: Path,
) -> None:
    """Wait until ``ready(tree)``, kill -9 the run, and assert that nothing it started lives
    and that nothing it wrote in ``temp`` (its ``TMPDIR``) is left there: kernels' connection
    files, agents' working dirs, a forkserver's socket folder."""
    started: set[proctree.Proc] = set()
    try:
        tree = lambda: proctree.descendants(cli.pid)  # noqa: E731
        up = proctree.wait_for(lambda: cli.poll() is None and ready(tree()), START_S, 0.2)
        log = Path(str(cli.args[-1])).with_suffix(".log")
        output = log.read_text()[-2000:] if log.is_file() else "(see stderr)"
        assert up, f"never ready; its output: {output}"
        started = tree() | proctree.tagged(TAG, tag)
        os.kill(cli.pid, signal.SIGKILL)
        cli.wait(30)
        gone = lambda: not proctree.alive(started) and not proctree.tagged(TAG, tag)  # noqa: E731
        survivors = lambda: [proctree.cmdline(p)[:120] for p in proctree.alive(started)]  # noqa: E731
        assert proctree.wait_for(gone, GONE_S, 0.1), survivors()
        left = lambda: sorted(p.name for p in temp.iterdir())  # noqa: E731
        assert proctree.wait_for(lambda: not left(), GONE_S, 0.1), left()
    finally:
        cli.kill()
        cli.wait(30)
        proctree.kill(started | proctree.tagged(TAG, tag))


def _with(procs: set[proctree.Proc], text: str) -> int:
    return sum(text in proctree.cmdline(p) for p in procs)


def test_a_killed_sweep_leaves_no_cell_worker_asking_the_model(tmp_path, stuck):
    # the cell's worker is stuck mid-request until something kills it (cells of an endpoint
    # system start with the baseline's, one after another: one worker asks at a time)
    dataset = gaia_dataset(tmp_path, ["1", "2"])
    study = {"study": "gaia", "title": "killed sweep", "bootstrap_rounds": 50,
             "dataset": str(dataset), "systems": [openai_system(stuck, max_concurrency=1)],
             "sweep": {"grid": {"systems.0.temperature": [0.0, 0.5]}, "seeds": [0, 1],
                       "max_parallel": 2}}  # fmt: skip
    params = tmp_path / "killed_sweep.yaml"
    params.write_text(yaml.safe_dump(study, sort_keys=False))
    cli = _cli_run(params, tmp_path.name)
    # ready: a cell computing, its request at the server, in a worker forked from the
    # forkserver (2 processes running multiprocessing.forkserver)
    _kill_and_check(
        cli, tmp_path.name,
        lambda tree: stuck.count >= 1 and _with(tree, "multiprocessing.forkserver") >= 2,
        _temp(tmp_path),
    )  # fmt: skip
    assert stuck.count == 1  # the request in flight at the kill; none after it


AGENT = """
import json, subprocess, sys, time
task = json.load(sys.stdin)
# a daemon in a session of its own (left the agent's process group), then never answer
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", "DAEMON"],
                 start_new_session=True)
time.sleep(600)
"""


def test_a_killed_agent_run_leaves_no_command_agent_or_its_daemons(tmp_path):
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    dataset = gaia_dataset(tmp_path, ["a", "b"])
    systems = [{"name": "cli", "provider": "command", "argv": [sys.executable, str(script)],
                "limits": {"max_time_s": 600}, "max_concurrency": 2}]  # fmt: skip
    params = tmp_path / "killed_agents.yaml"
    params.write_text(yaml.safe_dump({"study": "gaia", "title": "killed agents",
                                      "dataset": str(dataset), "systems": systems}))  # fmt: skip
    cli = _cli_run(params, tmp_path.name)
    # ready: both tasks' agents running, each with its daemon
    _kill_and_check(cli, tmp_path.name, lambda tree: _with(tree, "DAEMON") >= 2, _temp(tmp_path))


DRIVER = """
import sys, threading
from pathlib import Path
from evalbench.agents.tools.python_exec import run_python
from evalbench.agents.tools.sandbox import SandboxLimits
from evalbench.models import ChatRequest, Job, ModelClient, ModelSpec, generate
workdir, base_url, key_env = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
# the python tool's sandbox running a program that does not end within its limits
limits = SandboxLimits(cpu_s=600, wall_s=600)
code = "import time; time.sleep(600)"
threading.Thread(target=run_python, args=(code, workdir, limits), daemon=True).start()
# a batch sharded over 2 worker processes (64 jobs each at least), the server holding them
spec = ModelSpec(name="m", provider="openai", model="m", base_url=base_url, api_key_env=key_env,
                 processes=2, max_concurrency=2, timeout_s=600, max_retries=0)
jobs = [Job(str(i), ChatRequest(messages=[{"role": "user", "content": str(i)}])) for i in range(128)]
generate(ModelClient(spec), jobs, progress=False)
"""


def test_a_killed_evalbench_leaves_no_sandbox_and_no_model_shard(tmp_path, stuck):
    workdir = tmp_path / "work"
    workdir.mkdir()
    env = {**os.environ, TAG: tmp_path.name, KEY_ENV: CANARY_KEY, "TMPDIR": str(_temp(tmp_path))}
    env.pop(LIFELINE_ENV, None)
    argv = [sys.executable, "-c", DRIVER, str(workdir), stuck.base_url, KEY_ENV]
    driver = subprocess.Popen(argv, env=env, cwd=ROOT, start_new_session=True)
    # ready: the sandbox running, and both shards' requests at the server (one each: 2 in
    # flight in all, 1 per worker)
    _kill_and_check(
        driver, tmp_path.name,
        lambda tree: _with(tree, "_sandbox_init.py") >= 1 and stuck.count >= 2,
        _temp(tmp_path),
    )  # fmt: skip
    assert stuck.count == 2  # nothing asked after the kill


def test_a_killed_report_leaves_no_pool_worker_and_no_kernel(tmp_path, stuck):
    dataset = gaia_dataset(tmp_path, ["1"])
    for name in ("first", "second"):
        study = {"study": "gaia", "title": name, "bootstrap_rounds": 50, "dataset": str(dataset),
                 "systems": [openai_system(stuck, model=name)]}  # fmt: skip
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(study))
    cli = _cli_run(tmp_path / "second.yaml", tmp_path.name, "report", "-j", "2",
                   str(tmp_path / "first.yaml"))  # fmt: skip
    # ready: 2 studies at once, each in its pool worker's kernel, each asking its one item
    _kill_and_check(
        cli, tmp_path.name,
        lambda tree: stuck.count >= 2 and _with(tree, "ipykernel_launcher") >= 2,
        _temp(tmp_path),
    )  # fmt: skip
    assert stuck.count == 2


def test_a_kernel_killed_mid_cell_ends_the_run_failed_and_leaves_nothing(tmp_path, stuck):
    # Before: evalbench run waited for ever (papermill's client blocked the event loop on the
    # kernel's next message, and with it nbclient's check that the kernel is alive), its
    # kernel an unreaped zombie; a Ray head lost mid-run ended its driver kernel so.
    dataset = gaia_dataset(tmp_path, ["1"])
    study = {"study": "gaia", "title": "dead kernel", "bootstrap_rounds": 50,
             "dataset": str(dataset), "systems": [openai_system(stuck)]}  # fmt: skip
    params = tmp_path / "dead_kernel.yaml"
    params.write_text(yaml.safe_dump(study))
    cli = _cli_run(params, tmp_path.name)
    started: set[proctree.Proc] = set()
    try:
        tree = lambda: proctree.descendants(cli.pid)  # noqa: E731
        kernels = lambda: {p for p in tree() if "ipykernel_launcher" in proctree.cmdline(p)}  # noqa: E731
        assert proctree.wait_for(lambda: stuck.count >= 1 and kernels(), START_S, 0.2)
        started = tree()
        (kernel,) = kernels()
        os.kill(kernel.pid, signal.SIGKILL)
        assert cli.wait(GONE_S) == 1  # a bounded wait: the run noticed, said so, ended
        output = params.with_suffix(".log").read_text()
        assert "failed" in output and "Kernel died" in output, output[-2000:]
        gone = lambda: not proctree.alive(started) and not proctree.tagged(TAG, tmp_path.name)  # noqa: E731
        assert proctree.wait_for(gone, GONE_S, 0.1)
    finally:
        cli.kill()
        cli.wait(30)
        proctree.kill(started | proctree.tagged(TAG, tmp_path.name))
