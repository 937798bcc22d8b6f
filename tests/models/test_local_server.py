"""The real model, served by evalbench itself: ``evalbench run`` of the shipped
params/local_gaia.yaml (a chat model and the reference agent on SmolLM2-135M-Instruct, with
no key and no network), the manifest's record of what answered, a rerun from the records
that starts no server, and no server left running after a normal end, ``kill -9`` or Ctrl-C
of ``evalbench run``. (Every params/local_*.yaml is checked for what it promises in
tests/test_studies.py; rendering them all takes 1-3 minutes of model time.)

Needs the ``local`` extra (``pip install -e '.[local]'``): skipped without it, except in CI
(``EVALBENCH_CI``, set by ``.ci/run``, which installs it), where its absence fails. Each
``evalbench run`` here starts a server of its own (the session's real-model server,
tests/realmodel.py, is not passed on to it).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from realmodel import require_local_model
from studyfiles import gaia_dataset

from evalbench.models import local
from evalbench.publish import run_study

pytestmark = [pytest.mark.slow, pytest.mark.realmodel, pytest.mark.xdist_group("realmodel")]

ROOT = Path(__file__).resolve().parents[2]
SMOLLM2_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
EVALBENCH = str(Path(sys.executable).parent / "evalbench")
WAIT_S = 180.0
"""Bounded waits for a server to appear or to be gone (generous: a loaded 2-core machine)."""


@pytest.fixture(scope="module", autouse=True)
def _local_extra():
    require_local_model()


def _study(tmp_path: Path, questions: int, name: str = "local_chat") -> Path:
    dataset = gaia_dataset(tmp_path, [str(i) for i in range(questions)], name=f"data_{name}")
    system = {"name": "smollm2", "provider": "local", "max_tokens": 8,
              "local": {"threads": 1}}  # fmt: skip
    data = {"study": "gaia", "title": "a real local model", "dataset": str(dataset),
            "systems": [system], "bootstrap_rounds": 50}  # fmt: skip
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _env(tmp_path: Path) -> dict[str, str]:
    """``evalbench run``'s environment: no key, no server of this process to reuse, and a
    proxy that goes nowhere (the server evalbench starts on this machine is asked directly)."""
    env = {k: v for k, v in os.environ.items()
           if not k.endswith("_API_KEY") and k != local.ENV_SERVERS}  # fmt: skip
    return {**env, "HTTP_PROXY": "http://127.0.0.1:9", "http_proxy": "http://127.0.0.1:9",
            "EVALBENCH_OUTPUTS": os.environ["EVALBENCH_OUTPUTS"],
            "EVALBENCH_CACHE": os.environ["EVALBENCH_CACHE"]}  # fmt: skip


def _descendants(root: int) -> list[int]:
    """Every process below ``root`` (by parent pid, from /proc)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _servers_under(root: int) -> list[int]:
    """The llama-cpp-python servers among ``root``'s descendants."""
    found = []
    for pid in _descendants(root):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"llama_cpp.server" in cmdline and _alive(pid):
            found.append(pid)
    return found


def _servers_on_port(port: int) -> list[int]:
    wanted = f"--port\0{port}\0".encode()
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes()
        except OSError:
            continue
        if b"llama_cpp.server" in text and wanted in text and _alive(int(cmdline.parent.name)):
            found.append(int(cmdline.parent.name))
    return found


def _wait(condition, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_the_shipped_local_study_renders_with_no_key_and_stops_its_server(tmp_path):
    # params/local_gaia.yaml as a user runs it: a chat model and the reference agent
    # (tool_mode: prompt) on SmolLM2-135M, no key, no network; one question (level 1) where
    # the file asks three, as the model's time is most of the suite's
    path, levels = ROOT / "params" / "local_gaia.yaml", "levels=[1]"
    done = subprocess.run([EVALBENCH, "run", str(path), "-p", levels], env=_env(tmp_path),
                          timeout=600, capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    run_dir = Path(done.stdout.split("report: ", 1)[1].split()[0]).parent
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "ok" and manifest["simulated"] is False
    for model in manifest["models"]:  # both systems: the same model file, one server
        served = model["served"]
        assert served["model_sha256"] == SMOLLM2_SHA256 and served["model_bytes"] == 98_362_432
        assert (served["engine"], served["n_ctx"], served["chat_format"], served["threads"]) == (
            "llama-cpp-python", 2048, None, 1,
        )  # fmt: skip
        assert served["engine_version"] == local.ENGINES["llama-cpp-python"].version(None)  # type: ignore[arg-type]
        assert served["server_argv"][1:3] == ["-m", "llama_cpp.server"]
    (server,) = manifest["local_servers"]
    assert server["model_sha256"] == SMOLLM2_SHA256 and server["startup_s"] > 0
    # 1 question, one answer from the chat model, and 1 to max_steps=3 model calls from the
    # agent; none failed, every output counted (truncated included)
    usage = {row["system"]: row for row in manifest["usage"]}
    assert usage["smollm2-135m"]["calls"] == 1 and 1 <= usage["smollm2-135m-agent"]["calls"] <= 3
    for row in usage.values():
        assert (row["errors"], row["cached"]) == (0, 0) and row["completion_tokens"] > 0
        assert 0 <= row["truncated"] <= row["calls"]
    measured = {m["system"]: (m["scored"], m["total"]) for m in manifest["measured"]}
    assert measured == {"smollm2-135m": (1, 1), "smollm2-135m-agent": (1, 1)}
    port = int(server["base_url"].rsplit(":", 1)[1].split("/")[0])
    _wait(lambda: not _servers_on_port(port), "the server outlived evalbench run")

    # A rerun from the records: no request, so no server is started at all.
    rerun = run_study(path, [levels], force=True, warm=True)
    assert rerun.status == "ok", rerun.reason
    again = json.loads((rerun.run_dir / "manifest.json").read_text())
    assert again["local_servers"] == []
    assert {row["system"]: row["calls"] for row in again["usage"]} == {
        name: row["calls"] for name, row in usage.items()
    }


def _started_run(tmp_path: Path) -> tuple[subprocess.Popen, list[int]]:
    """``evalbench run`` of a 6-question study, once its server process exists (in its own
    session, as a terminal's foreground job)."""
    run = subprocess.Popen([EVALBENCH, "run", str(_study(tmp_path, questions=6))],
                           env=_env(tmp_path), stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    servers: list[int] = []

    def found() -> bool:
        servers[:] = _servers_under(run.pid)
        return bool(servers) or run.poll() is not None

    _wait(found, "no server was started")
    assert servers, f"evalbench run ended ({run.returncode}) before its server was seen"
    return run, servers


def test_kill_9_of_evalbench_run_leaves_no_server(tmp_path):
    run, servers = _started_run(tmp_path)
    os.kill(run.pid, signal.SIGKILL)
    run.wait(60)
    _wait(lambda: not any(_alive(pid) for pid in servers), "the server outlived kill -9")


def test_ctrl_c_of_evalbench_run_leaves_no_server(tmp_path):
    run, servers = _started_run(tmp_path)
    os.killpg(run.pid, signal.SIGINT)  # the terminal's Ctrl-C: its whole foreground group
    assert run.wait(WAIT_S) == 130
    _wait(lambda: not any(_alive(pid) for pid in servers), "the server outlived Ctrl-C")
