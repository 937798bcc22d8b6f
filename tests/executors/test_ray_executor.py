"""Agent tasks on a real local Ray cluster (``--executor ray``): the same records and
headlines as the local executor, limits enforced on the workers, a killed worker retried
with one record, a killed driver resumed, a dependency missing on the workers one error.

One cluster (a head on 127.0.0.1, 2 CPUs; ``conftest.py``) serves every Ray test of this
folder, in one pytest-xdist process; it is stopped at the end with everything it started. The tests skip
only when Ray is not installed or the cluster cannot start.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml
from agents.example_agent import forever_mark
from executors.raycluster import RAY_ENV
from loopback import Reply
from studyfiles import CANARY_KEY, KEY_ENV

from evalbench import cli, gaia
from evalbench.agents import AgentConfigError
from evalbench.executors import ExecutorError, RayHints
from evalbench.executors.reach import PROBE, TIMEOUT_ENV
from evalbench.records import read_jsonl
from evalbench.settings import ENV_EXECUTOR, ENV_OUTPUTS, ENV_RAY_ADDRESS
from evalbench.studies import open_run

pytestmark = [pytest.mark.xdist_group("ray"), pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
AGENTS = "tests.executors.ray_agents"
TIMING = {"latency_s", "wall_s", "timing", "cpu_s"}  # the only fields that may differ by executor


def _dataset(folder: Path, questions: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    rows = [{"task_id": f"t{i}", "Question": q, "Level": 1, "Final answer": "ok", "file_name": ""}
            for i, q in enumerate(questions)]  # fmt: skip
    (folder / "metadata.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def _params(tmp_path: Path, questions: list[str], systems: list[dict], **extra) -> Path:
    data = {"study": "gaia", "title": "ray", "dataset": str(_dataset(tmp_path / "data", questions)),
            "systems": systems, "bootstrap_rounds": 20, "max_error_rate": 1.0, **extra}  # fmt: skip
    path = tmp_path / "ray_test.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _study(path: Path):
    run = open_run(path)
    result = gaia.run(run)
    run.finish(result)
    return run, result


def _records(run, name: str) -> list[dict]:
    path = run.dir / "records" / f"{name}.jsonl"
    return read_jsonl(path) if path.exists() else []


def _manifest(run) -> dict:
    return json.loads((run.dir / "manifest.json").read_text())


def _marked(mark: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            if entry.name.isdigit() and mark.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
    return found


def _wait_for(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return bool(condition())


def test_the_gaia_agents_demo_gives_the_same_records_and_headlines_on_ray(
    on_ray, tmp_path, monkeypatch
):
    def render(executor: str):
        monkeypatch.setenv(ENV_EXECUTOR, executor)
        monkeypatch.setenv(ENV_OUTPUTS, str(tmp_path / executor))
        return _study(ROOT / "params" / "gaia_agents_demo.yaml")[0]

    local, remote = render("local"), render("ray")
    assert local.dir.name == remote.dir.name  # the executor is not part of the params hash
    names = sorted(p.name for p in (local.dir / "records").glob("*.jsonl"))
    assert names == sorted(p.name for p in (remote.dir / "records").glob("*.jsonl"))
    assert "agent_runs.jsonl" in names and "steps.jsonl" in names
    for name in names:
        rows = [_without_timing(_records(run, name[:-6])) for run in (local, remote)]
        assert rows[0] == rows[1], name
    manifests = _manifest(local), _manifest(remote)
    assert manifests[0]["headlines"] == manifests[1]["headlines"]
    assert manifests[0]["executor"] == {"requested": "local", "address": None, "name": "local"}
    executor = manifests[1]["executor"]
    assert (executor["name"], executor["address"]) == ("ray", on_ray.address)
    assert executor["systems"]["sim-agent"]["tasks"] == 32  # every task ran remotely
    assert executor["nodes"] and all(n.startswith("127.0.0.1/") for n in executor["nodes"])


def _without_timing(rows: list[dict]) -> list[str]:
    return sorted(json.dumps({k: v for k, v in r.items() if k not in TIMING}, sort_keys=True)
                  for r in rows)  # fmt: skip


RAY_ORPHAN = f"EVALBENCH_RAY_ORPHAN-{os.environ['EVALBENCH_TEST_TOKEN']}"
"""On the command line of the orphan the command agent leaves (this test session's own)."""
COMMAND_AGENT = """
import json, subprocess, sys, time
task = json.load(sys.stdin)
if task["question"].startswith("hang"):
    sleeper = "import time; time.sleep(300)"  # argv[1] is the mark
    subprocess.Popen([sys.executable, "-c", sleeper, "RAY_ORPHAN"], start_new_session=True)
    time.sleep(300)
print(json.dumps({"answer": "ok", "steps": [{"kind": "tool", "tool": "think"}]}))
"""


def test_command_and_python_agents_run_remotely_under_their_limits(on_ray, tmp_path):
    """A hang past max_time_s is a timeout on the worker too, and nothing of the agent is
    left running there (a command's orphan in a session of its own, a sync agent's worker
    that ignores SIGTERM)."""
    script = tmp_path / "agent.py"
    script.write_text(COMMAND_AGENT.replace("RAY_ORPHAN", RAY_ORPHAN))
    systems = [
        {"name": "cli", "provider": "command", "argv": [sys.executable, str(script)],
         "limits": {"max_time_s": 1.5}, "max_concurrency": 2},
        {"name": "forever", "provider": "python", "limits": {"max_time_s": 1.5},
         "max_concurrency": 2, "entrypoint": "tests.agents.example_agent:forever"},
        {"name": "csv", "provider": "python", "entrypoint": "tests.agents.example_agent:answer"},
    ]  # fmt: skip
    run, _ = _study(_params(tmp_path, ["hang now", "answer now?"], systems))
    by = {(r["system"], r["task_id"]): r for r in _records(run, "agent_runs")}
    assert by[("cli", "t0")]["state"] == "timeout"
    assert by[("cli", "t0")]["detail"] == "no answer within max_time_s=1.5"
    assert (by[("cli", "t1")]["state"], by[("cli", "t1")]["answer"]) == ("answered", "ok")
    assert [by[("forever", t)]["state"] for t in ("t0", "t1")] == ["timeout", "timeout"]
    assert all(by[("forever", t)]["wall_s"] >= 1.5 for t in ("t0", "t1"))  # max_time_s, killed
    assert by[("csv", "t1")]["answer"] == "now"  # the README agent: the question's last word
    assert _wait_for(lambda: not _marked(RAY_ORPHAN), 30)
    assert _wait_for(lambda: not _marked(forever_mark()), 30)
    assert _manifest(run)["executor"]["systems"]["cli"]["tasks"] == 2


def test_a_killed_worker_is_retried_and_its_task_recorded_once(on_ray, tmp_path, monkeypatch):
    """kill -9 of the Ray worker in the middle of a task: the task runs again on another
    worker and leaves one record and one trajectory; a worker that dies every time ends in
    one error record saying so after the bounded retries."""
    from evalbench.executors import ray_cluster

    monkeypatch.setattr(ray_cluster, "RETRIES", 1)
    once, always = tmp_path / "once.pid", tmp_path / "always.pids"
    systems = [{"name": "once", "provider": "python", "entrypoint": f"{AGENTS}:killed_once"},
               {"name": "always", "provider": "python",
                "entrypoint": f"{AGENTS}:kills_its_worker"}]  # fmt: skip
    path = _params(tmp_path, [f"look at {once}"], systems[:1])
    killer = threading.Thread(target=_kill_when_written, args=(once,), daemon=True)
    killer.start()
    run, _ = _study(path)
    killer.join(5)
    records, steps = _records(run, "agent_runs"), _records(run, "steps")
    assert [(r["state"], r["answer"]) for r in records] == [("answered", "survived")]
    assert [(s["task_id"], s["tool"]) for s in steps] == [("t0", "look")]
    assert _manifest(run)["executor"]["systems"]["once"]["retried"] == 1

    run, _ = _study(_params(tmp_path / "always", [f"die {always}"], systems[1:]))
    record = _records(run, "agent_runs")[0]
    assert record["state"] == "error"
    assert record["error"].startswith("worker_lost: the Ray worker running it died on all 2 ")
    assert len(always.read_text().split()) == 2  # 1 + RETRIES attempts, each in a new worker
    assert _records(run, "steps") == []


def _kill_when_written(mark: Path) -> None:
    if _wait_for(lambda: mark.exists() and mark.read_text().strip(), 60):
        os.kill(int(mark.read_text()), signal.SIGKILL)


DRIVER = """
import sys
from evalbench import gaia
from evalbench.studies import open_run
run = open_run(sys.argv[1])
run.finish(gaia.run(run))
"""


def test_a_driver_killed_mid_run_resumes_with_one_record_per_task(on_ray, tmp_path):
    """``evalbench`` killed (-9) while its tasks run on the cluster: a rerun (here, this
    process) runs the rest, and every task has one record and one whole trajectory."""
    systems = [{"name": "steady", "provider": "python", "entrypoint": f"{AGENTS}:steady",
                "max_concurrency": 2}]  # fmt: skip
    path = _params(tmp_path, [f"Question {i}?" for i in range(4)], systems)
    env = {**os.environ, **RAY_ENV}  # EVALBENCH_EXECUTOR=ray and the address (on_ray)
    records = Path(os.environ[ENV_OUTPUTS]) / "ray_test"

    def written() -> int:
        files = list(records.glob("*/records/agent_runs.jsonl"))
        return len(files[0].read_text().splitlines()) if files else 0

    driver = subprocess.Popen([sys.executable, "-c", DRIVER, str(path)], env=env, cwd=ROOT,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    try:
        assert _wait_for(lambda: written() >= 2 or driver.poll() is not None, 90)
        assert driver.poll() is None, driver.stderr.read().decode()[-2000:]  # type: ignore[union-attr]
    finally:
        driver.kill()  # kill -9: no cleanup code of evalbench runs
        driver.wait(10)
    assert 2 <= written() < 4
    run, _ = _study(path)
    runs = _records(run, "agent_runs")
    assert sorted(r["task_id"] for r in runs) == [f"t{i}" for i in range(4)]  # once each
    assert {r["state"] for r in runs} == {"answered"}
    steps = _records(run, "steps")
    assert sorted((s["task_id"], s["step"]) for s in steps) == [
        (f"t{i}", step) for i in range(4) for step in (0, 1)
    ]


DRIVER_ONLY_AGENT = """
def answer(task):
    return "only the driver can import me"
"""


def test_an_agent_module_missing_on_the_workers_is_one_clear_error(on_ray, tmp_path, monkeypatch):
    """The driver imports the agent (its folder is on the driver's sys.path only); the
    workers cannot: the study stops with one line naming the module, not a hang or one
    error record per task."""
    folder = tmp_path / "driver_only"
    folder.mkdir()
    (folder / "driver_only_agent.py").write_text(DRIVER_ONLY_AGENT)
    monkeypatch.syspath_prepend(str(folder))
    systems = [{"name": "local-only", "provider": "python",
                "entrypoint": "driver_only_agent:answer", "max_concurrency": 2}]  # fmt: skip
    path = _params(tmp_path, ["a?", "b?", "c?"], systems)
    with pytest.raises(AgentConfigError) as caught:  # at once, not after a hang
        _study(path)
    message = str(caught.value)
    assert message.startswith("system 'local-only': a Ray worker cannot run its tasks: ")
    assert "No module named 'driver_only_agent'" in message
    assert not list(Path(os.environ[ENV_OUTPUTS]).glob("ray_test/*/records/agent_runs.jsonl"))


def test_resource_hints_no_node_has_are_refused_at_once(on_ray):
    from evalbench import executors

    executor = executors.current()
    assert executor.name == "ray"
    executor.check_feasible(RayHints(num_cpus=0.5, memory_mb=64))
    with pytest.raises(ExecutorError, match=r"no node of the Ray cluster has CPU 1, browser 1"):
        executor.check_feasible(RayHints(resources={"browser": 1}))


def test_the_reference_agent_runs_on_a_worker_through_the_drivers_cache(
    on_ray, tmp_path, loopback, monkeypatch
):
    """Its model calls leave the worker (the key is in the workers' environment, never in
    the task), its steps come back in order, the driver counts its usage, and the answers
    land in the driver's response cache: the same study again asks the server nothing."""
    monkeypatch.setenv(KEY_ENV, CANARY_KEY)
    loopback.enqueue(
        Reply(tool_calls=[{"name": "read_file", "arguments": '{"name": "notes.txt"}'}],
              prompt_tokens=30, completion_tokens=4),
        Reply(tool_calls=[{"name": "final_answer", "arguments": '{"answer": "ok"}'}]),
    )  # fmt: skip
    data = _dataset(tmp_path / "data", ["What do the notes say?"])
    (data / "notes.txt").write_text("the answer is ok")
    rows = [json.loads(line) for line in (data / "metadata.jsonl").read_text().splitlines()]
    rows[0]["file_name"] = "notes.txt"
    (data / "metadata.jsonl").write_text(json.dumps(rows[0]) + "\n")
    systems = [{"name": "react", "provider": "agent", "model": "m", "base_url": loopback.base_url,
                "api_key_env": KEY_ENV, "tools": ["read_file"]}]  # fmt: skip
    path = tmp_path / "ray_test.yaml"
    path.write_text(yaml.safe_dump({"study": "gaia", "title": "ref", "dataset": str(data),
                                    "systems": systems, "bootstrap_rounds": 20}))  # fmt: skip
    run, _ = _study(path)
    record = _records(run, "agent_runs")[0]
    assert (record["state"], record["answer"], record["prompt_tokens"]) == ("answered", "ok", 40)
    steps = _records(run, "steps")
    assert [(s["kind"], s["tool"]) for s in steps] == [
        ("model", "read_file"), ("tool", "read_file"), ("model", "final_answer"),
        ("tool", "final_answer"),
    ]  # fmt: skip
    assert "the answer is ok" in steps[1]["result"]  # the worker read its copy of the file
    manifest = _manifest(run)
    assert manifest["usage_this_session"]["react"]["calls"] == 2
    assert manifest["executor"]["systems"]["react"]["tasks"] == 1
    assert loopback.count == 2
    for name in ("agent_runs", "steps"):
        (run.dir / "records" / f"{name}.jsonl").unlink()
    _study(path)
    assert loopback.count == 2  # the second run found both answers in the driver's cache


def test_a_sweep_on_ray_gives_the_cells_and_comparisons_of_a_local_sweep(
    on_ray, tmp_path, monkeypatch
):
    """sweep_demo with one seed (4 cells), as ``evalbench run --executor ray`` runs it: its
    cells and their comparisons are Ray tasks (sweeps.study.executor_for), and
    cells.jsonl, comparisons.jsonl and every cell's records equal a local sweep's (timing
    aside); the driver wrote the cell folders (no lock left); the manifest names the
    cluster and its nodes."""
    from evalbench.sweeps import study as sweep

    def run_sweep(where: str, executor: str):
        monkeypatch.setenv(ENV_OUTPUTS, str(tmp_path / where))
        monkeypatch.setenv(ENV_EXECUTOR, executor)
        run = open_run(ROOT / "params" / "sweep_demo.yaml", ["sweep.seeds=[0]"])
        run.finish(sweep.run(run))
        return run

    local, remote = run_sweep("local", "local"), run_sweep("ray", "ray")
    cells = _records(remote, "cells")
    assert len(cells) == 4 and all(c["status"] == "ok" and not c["reused"] for c in cells)
    for name in ("cells", "comparisons"):
        rows = [_without_timing(_cost_to_9(_records(r, name))) for r in (local, remote)]
        assert rows[0] == rows[1], _differences(*rows)
    for row in cells:
        folders = [r.dir.parents[1] / "cells" / "gaia" / row["run_id"] for r in (local, remote)]
        names = sorted(p.name for p in (folders[1] / "records").glob("*.jsonl"))
        assert names == sorted(p.name for p in (folders[0] / "records").glob("*.jsonl"))
        for name in names:
            rows = [_without_timing(read_jsonl(f / "records" / name)) for f in folders]
            assert rows[0] == rows[1], (folders[1], name)
        assert not _locked(folders[1])  # released by this process once written
    executor = _manifest(remote)["executor"]
    assert executor["requested"] == "ray" and executor["name"] == "ray"
    assert executor["tasks"] == 4 + 3  # the cells, then 3 comparisons with the baseline cell
    assert executor["nodes"] and all(n.startswith("127.0.0.1/") for n in executor["nodes"])
    assert _manifest(local)["executor"] == {"requested": "local", "address": None, "name": "local"}


def _cost_to_9(rows: list[dict]) -> list[dict]:
    """Costs to 1e-9 USD: a run's cost is summed over its records in the order they were
    written, which differs in the last bit when tasks end in another order (notes: T2)."""
    return [{**r, "cost_usd": round(r["cost_usd"], 9)} if r.get("cost_usd") else r for r in rows]


def _differences(rows: list[str], others: list[str]) -> list[str]:
    """The fields in which two lists of rows (JSON texts) differ, row by row."""
    pairs = [(json.loads(a), json.loads(b)) for a, b in zip(rows, others, strict=False)]
    return [f"{k}: {a.get(k)!r} != {b.get(k)!r}" for a, b in pairs for k in a | b
            if a.get(k) != b.get(k)]  # fmt: skip


def _locked(folder: Path) -> bool:
    from evalbench.runs import run_is_active

    return run_is_active(folder)


def test_an_interrupt_stops_the_tasks_on_the_cluster_at_once(on_ray, tmp_path):
    """Ctrl-C / SIGTERM (STOP) while a sync agent hangs on a worker: the task is cancelled
    there (its process and the process it left in a session of its own are gone), left
    unrecorded for a rerun, and the study does not wait for max_time_s."""
    from evalbench.agents import AgentTask, TaskInput, backend_for, run_agents
    from evalbench.models.client import STOP

    systems = [{"name": "forever", "provider": "python", "limits": {"max_time_s": 120},
                "entrypoint": "tests.agents.example_agent:forever"}]  # fmt: skip
    run = open_run(_params(tmp_path, ["a?"], systems))
    spec = run.params.systems[0]
    items = [TaskInput(AgentTask(id="stop-ray", question="q", limits=spec.limits), {})]
    mark = forever_mark("stop-ray")

    def interrupt_once_started() -> None:
        if _wait_for(lambda: _marked(mark), 60):
            STOP.set()

    threading.Thread(target=interrupt_once_started, daemon=True).start()
    try:
        records = run_agents(run, spec, items, backend=backend_for(run, spec), progress=False)
        assert _wait_for(lambda: not _marked(mark), 30)
    finally:
        STOP.clear()
    # stopped by the interrupt, not at max_time_s (which would have recorded "timeout")
    assert records == {} and _records(run, "agent_runs") == []


def test_an_interrupt_cancels_a_command_agent_on_the_cluster(on_ray, tmp_path):
    """STOP while a command agent hangs on a worker: its task is cancelled (politely: Ray
    interrupts the worker, whose event loop must notice it; or by the executor's kill after
    CANCEL_GRACE_S), and the agent and the orphan it left are gone."""
    from evalbench.agents import AgentTask, TaskInput, backend_for, run_agents
    from evalbench.executors.ray_cluster import CANCEL_GRACE_S
    from evalbench.models.client import STOP

    script = tmp_path / "agent.py"
    script.write_text(COMMAND_AGENT.replace("RAY_ORPHAN", RAY_ORPHAN))
    systems = [{"name": "cli", "provider": "command", "argv": [sys.executable, str(script)],
                "limits": {"max_time_s": 600}}]  # fmt: skip
    run = open_run(_params(tmp_path, ["hang"], systems))
    spec = run.params.systems[0]
    items = [TaskInput(AgentTask(id="stop-cli", question="hang", limits=spec.limits), {})]
    stopped_at: list[float] = []

    def interrupt_once_started() -> None:
        if _wait_for(lambda: _marked(RAY_ORPHAN), 60):
            stopped_at.append(time.monotonic())
            STOP.set()

    threading.Thread(target=interrupt_once_started, daemon=True).start()
    try:
        records = run_agents(run, spec, items, backend=backend_for(run, spec), progress=False)
        ended = time.monotonic()
    finally:
        STOP.clear()
    assert stopped_at and records == {}
    # stopped by the interrupt (a polite cancel, or the worker killed CANCEL_GRACE_S later:
    # under load the cancel may not reach the agent in time), not by max_time_s; the bound
    # is wide so that load cannot fail it
    assert ended - stopped_at[0] < CANCEL_GRACE_S + 120
    assert _wait_for(lambda: not _marked(RAY_ORPHAN), 5)


def test_an_address_where_no_cluster_answers_is_given_up_on_at_the_connect_timeout(
    monkeypatch, capfd
):
    """Nothing listens on 127.0.0.1:1: Ray alone retries for ~13 minutes, writing a
    gcs_client line each time. evalbench gives up at EVALBENCH_RAY_CONNECT_TIMEOUT_S (5 s
    here; 30 s by default) with one line and exit 2, runs nothing, leaves no process."""
    pytest.importorskip("ray")
    for name, value in {**RAY_ENV, TIMEOUT_ENV: "5"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv(ENV_EXECUTOR, "local")  # restored after the test (the CLI sets both)
    monkeypatch.setenv(ENV_RAY_ADDRESS, "")
    argv = [
        "run",
        "params/gaia_agents_demo.yaml",
        "--executor",
        "ray",
        "--ray-address",
        "127.0.0.1:1",
    ]
    assert cli.main(argv) == 2
    out, err = capfd.readouterr()
    assert err.strip().splitlines() == [
        "evalbench: no answer from the Ray cluster at 127.0.0.1:1 within 5 s "
        "(EVALBENCH_RAY_CONNECT_TIMEOUT_S sets how long to wait)"
    ]
    assert (
        "gcs_client" not in out
        and not (Path(os.environ[ENV_OUTPUTS]) / "gaia_agents_demo").exists()
    )
    assert _wait_for(lambda: not _marked(str(PROBE)), 30)  # the connection check was stopped
