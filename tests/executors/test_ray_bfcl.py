"""BFCL multi-turn conversations of users' command and Python agents on a real local Ray
cluster (``--executor ray``): each conversation one remote call (the agent and the item's
backends together on a worker), the same records as the local executor, the driver the
only writer, a dead worker an error record, a module missing on the workers one error, an
agent that cannot be sent converses in the driver and the manifest says so.

The cluster is the session's (the fixtures of tests/executors/test_ray_executor.py), in
the same pytest-xdist process.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path

import pytest
from bfcl.category_cases import ITEM
from executors.test_ray_executor import TIMING, _marked, _wait_for

from evalbench.agents import AgentConfigError
from evalbench.bfcl import backends
from evalbench.bfcl.multi_turn import FORCE_TERMINATED
from evalbench.bfcl.schema import CALL_FAILED
from evalbench.bfcl.study import run_live_multi_turn
from evalbench.records import read_jsonl
from evalbench.settings import ENV_EXECUTOR, ENV_OUTPUTS
from evalbench.studies import open_run

pytestmark = [
    pytest.mark.xdist_group("ray"),
    pytest.mark.slow,
    pytest.mark.skipif(not backends.available(), reason=f"needs {backends.INSTALL_HINT}"),
]
ROOT = Path(__file__).resolve().parents[2]
AGENT = str(ROOT / "tests" / "bfcl" / "command_agent_case.py")
CASES = "tests.bfcl.python_agent_cases"  # importable on the workers (the project root)
SYSTEMS = [
    {"name": "cmd", "provider": "command", "argv": [sys.executable, AGENT, "scripted"]},
    {"name": "py", "provider": "python", "entrypoint": f"{CASES}:scripted"},
    {"name": "sync", "provider": "python", "entrypoint": f"{CASES}:scripted_sync"},
    {"name": "locked", "provider": "python", "entrypoint": f"{CASES}:locked"},
    {"name": "busy", "provider": "command", "argv": [sys.executable, AGENT, "busy"],
     "limits": {"max_steps": 2}},
    {"name": "slow", "provider": "python", "entrypoint": f"{CASES}:slow_async",
     "limits": {"max_time_s": 0.3}},
]  # fmt: skip


def _open(tmp_path: Path, systems: list[dict]):
    path = tmp_path / "bfcl_ray.yaml"
    path.write_text(json.dumps({"study": "bfcl", "title": "ray", "categories": "simple_python",
                                "limit_per_category": 1, "systems": systems}))  # fmt: skip
    return open_run(path)


def _rows(rows: list[dict]) -> list[str]:
    return sorted(json.dumps({k: v for k, v in r.items() if k not in TIMING}, sort_keys=True,
                             default=str) for r in rows)  # fmt: skip


def _conversations(run) -> list[dict]:
    path = run.dir / "records" / "agent_conversations.jsonl"
    return read_jsonl(path) if path.exists() else []


def test_conversations_on_ray_give_the_records_of_local_ones(on_ray, tmp_path, monkeypatch):
    """A command agent, an async and a plain Python agent, and two stopped by their limits
    (max_steps, max_time_s): the same verdicts, steps and conversation records as locally;
    the manifest names the cluster, its nodes and the conversations each system ran there;
    the agent holding a lock ran in the driver."""

    def converse(executor: str):
        monkeypatch.setenv(ENV_EXECUTOR, executor)
        monkeypatch.setenv(ENV_OUTPUTS, str(tmp_path / executor))
        run = _open(tmp_path, SYSTEMS)
        lives = [run_live_multi_turn(run, spec, [ITEM]) for spec in run.params.systems]
        run.finish()
        return run, lives

    (local, here), (remote, there) = converse("local"), converse("ray")
    assert local.dir.name == remote.dir.name  # the executor is not part of the params hash
    for mine, theirs in zip(here, there, strict=True):
        assert _rows(mine.verdicts.to_dict("records")) == _rows(theirs.verdicts.to_dict("records"))
        assert _rows(mine.steps) == _rows(theirs.steps)
    verdicts = [live.verdicts.iloc[0] for live in there]
    assert [(v["system"], v["valid"], v["error_type"]) for v in verdicts] == [
        ("cmd", True, None), ("py", True, None), ("sync", True, None), ("locked", True, None),
        ("busy", False, FORCE_TERMINATED), ("slow", False, FORCE_TERMINATED),
    ]  # fmt: skip
    assert _rows(_conversations(local)) == _rows(_conversations(remote))
    assert len(_conversations(remote)) == 6
    executor = json.loads((remote.dir / "manifest.json").read_text())["executor"]
    assert (executor["name"], executor["address"]) == ("ray", on_ray.address)
    assert {name: s["tasks"] for name, s in executor["systems"].items()} == {
        "cmd": 1, "py": 1, "sync": 1, "busy": 1, "slow": 1}  # fmt: skip
    assert executor["nodes"] and all(n.startswith("127.0.0.1/") for n in executor["nodes"])
    assert executor["ran_here"]["locked"].startswith(
        "its agent cannot be sent to a worker (TypeError: cannot pickle '_thread.lock' object"
    )
    manifest = json.loads((local.dir / "manifest.json").read_text())
    assert manifest["executor"] == {"requested": "local", "address": None, "name": "local"}


def test_a_worker_dead_on_every_attempt_is_an_error_record(on_ray, tmp_path, monkeypatch):
    """The agent kills its worker: after 1 + RETRIES attempts (here 1) the conversation is
    an error record saying so, scored as a failed call, and played again on a rerun."""
    from evalbench.executors import ray_cluster as ray_executor

    monkeypatch.setattr(ray_executor, "RETRIES", 0)
    run = _open(tmp_path, [{"name": "dies", "provider": "python",
                            "entrypoint": f"{CASES}:kills_its_worker"}])  # fmt: skip
    live = run_live_multi_turn(run, run.params.systems[0], [ITEM])
    verdict = live.verdicts.iloc[0]
    assert (verdict["valid"], verdict["error_type"]) == (False, CALL_FAILED)
    [stored] = _conversations(run)
    assert stored["error"].startswith("worker_lost: the Ray worker running it died on all 1 ")
    assert run.executor["systems"]["dies"] == {"tasks": 0, "retried": 0, "nodes": []}


DRIVER_ONLY_AGENT = """
def answer(turn, call):
    return "only the driver can import me"
"""


def test_an_agent_module_missing_on_the_workers_is_one_clear_error(on_ray, tmp_path, monkeypatch):
    folder = tmp_path / "driver_only"
    folder.mkdir()
    (folder / "driver_only_bfcl_agent.py").write_text(DRIVER_ONLY_AGENT)
    monkeypatch.syspath_prepend(str(folder))
    run = _open(tmp_path, [{"name": "local-only", "provider": "python",
                            "entrypoint": "driver_only_bfcl_agent:answer"}])  # fmt: skip
    with pytest.raises(AgentConfigError) as caught:
        run_live_multi_turn(run, run.params.systems[0], [ITEM])
    message = str(caught.value)
    assert message.startswith("system 'local-only': a Ray worker cannot run its conversations: ")
    assert "No module named 'driver_only_bfcl_agent'" in message
    assert _conversations(run) == []


def test_an_interrupt_stops_a_conversation_on_the_cluster(on_ray, tmp_path):
    """STOP while a command agent hangs on a worker: the conversation is cancelled there
    (politely, or by killing its worker after CANCEL_GRACE_S), the agent and its child are
    gone, nothing is recorded, and nothing waits for max_time_s."""
    from evalbench.bfcl import remote
    from evalbench.bfcl.study import user_agent
    from evalbench.executors.ray_cluster import CANCEL_GRACE_S
    from evalbench.models.client import STOP, run_sync

    pids = tmp_path / "pids"
    run = _open(tmp_path, [{"name": "hangs", "provider": "command", "limits": {"max_time_s": 600},
                            "argv": [sys.executable, AGENT, "hang", str(pids)]}])  # fmt: skip
    spec = run.params.systems[0]
    play = remote.player(run.executor, spec, user_agent(spec), STOP)
    stopped_at: list[float] = []

    def interrupt_once_started() -> None:
        if _wait_for(pids.exists, 30):
            stopped_at.append(time.monotonic())
            STOP.set()

    threading.Thread(target=interrupt_once_started, daemon=True).start()
    finished: list = []
    try:
        run_sync(remote.play_all(play, spec, [ITEM], finished.append, STOP))
        ended = time.monotonic()
    finally:
        STOP.clear()
    assert stopped_at and finished == []
    # stopped by the interrupt (a polite cancel, or the worker killed CANCEL_GRACE_S later:
    # under load the cancel may not reach the agent in time), not by max_time_s; the bound
    # is wide so that load cannot fail it
    assert ended - stopped_at[0] < CANCEL_GRACE_S + 120
    assert _wait_for(lambda: not _marked(str(pids)), 5), "the agent or its child still runs"
    assert run.executor["systems"]["hangs"]["tasks"] == 0
