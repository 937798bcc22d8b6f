"""Agents under test: python entrypoints, commands, the reference agent on the loopback
server, the simulated agent, resume after a kill — real processes, the real openai client."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import math
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml
from loopback import Reply
from studyfiles import CANARY_KEY, KEY_ENV, gaia_dataset

from evalbench import gaia
from evalbench.agents import (
    AgentConfigError,
    AgentTask,
    Recorder,
    TaskInput,
    backend_for,
    backends,
    load_entrypoint,
    run_agents,
)
from evalbench.agents.backends import outcome_of
from evalbench.agents.tools.sandbox import namespaces_available
from evalbench.models.client import STOP
from evalbench.publish import run_study
from evalbench.records import read_jsonl
from evalbench.studies import open_run

# one pytest-xdist worker runs this whole file: its tests find (and kill) their agents'
# processes by a mark on the command line that is the same in every test
pytestmark = pytest.mark.xdist_group("agent_marks")

ENTRY = "tests.agents.example_agent"
example_agent = sys.modules[load_entrypoint(f"{ENTRY}:answer").__module__]  # as agents see it


def test_under_dist_loadgroup_this_file_is_one_xdist_group(request):
    # `make test` (pytest-xdist --dist loadgroup) schedules by the node id's "@group" suffix
    # (tests/conftest.py: pytest-xdist 3.8 no longer sets it under pytest 9.2)
    if getattr(request.config.option, "loadgroup", False):
        assert request.node.nodeid.endswith("@agent_marks")


def _dataset(tmp_path: Path, answers: list[str], with_csv: bool = False) -> Path:
    folder = gaia_dataset(tmp_path, answers)
    if with_csv:
        (folder / "sales.csv").write_text("region,units\nnorth,5\nsouth,7\n")
        rows = [json.loads(line) for line in (folder / "metadata.jsonl").read_text().splitlines()]
        rows[0]["file_name"] = "sales.csv"
        (folder / "metadata.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def _params(tmp_path: Path, dataset: Path, systems: list[dict], **extra) -> Path:
    data = {"study": "gaia", "title": "agents", "dataset": str(dataset), "systems": systems,
            "bootstrap_rounds": 20, **extra}  # fmt: skip
    path = tmp_path / "agents_test.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _run(path: Path):
    run = open_run(path)
    return run, gaia.run(run)


def _records(run, name: str) -> list[dict]:
    return read_jsonl(run.dir / "records" / f"{name}.jsonl")


# --- python entrypoints --------------------------------------------------------------------


@pytest.mark.slow
def test_sync_async_and_raising_python_agents(tmp_path):
    dataset = _dataset(tmp_path, ["word", "42", "x"], with_csv=True)
    systems = [
        {"name": "sync", "provider": "python", "entrypoint": f"{ENTRY}:answer"},
        {"name": "async", "provider": "python", "entrypoint": f"{ENTRY}:async_answer"},
        {"name": "crash", "provider": "python", "entrypoint": f"{ENTRY}:crash"},
    ]
    run, result = _run(_params(tmp_path, dataset, systems))
    records = result.records.set_index(["system", "task_id"])
    assert records.loc[("sync", "t0"), "extracted_answer"] == "12"  # 5 + 7 from the CSV copy
    assert records.loc[("sync", "t1"), "extracted_answer"] == "1"  # "Question 1?" -> "1"
    assert records.loc[("async", "t1"), "correct"]  # "42" is t1's answer
    crashed = records.loc[("crash", "t0")]
    assert crashed["state"] == "error" and crashed["error"] == "RuntimeError: cannot solve t0"
    runs = {(r["system"], r["task_id"]): r for r in _records(run, "agent_runs")}
    assert runs[("sync", "t0")]["tool_counts"] == {"read_csv": 1}
    assert runs[("sync", "t0")]["cost_usd"] == 0.0001
    assert runs[("sync", "t0")]["prompt_tokens"] == 120


def test_a_python_agent_gets_copies_of_the_attachments(tmp_path):
    dataset = _dataset(tmp_path, ["a"], with_csv=True)
    systems = [{"name": "w", "provider": "python", "entrypoint": f"{ENTRY}:modify_attachment"}]
    _run(_params(tmp_path, dataset, systems))
    assert (dataset / "sales.csv").read_text().startswith("region,units")  # untouched


def test_reported_steps_past_max_steps_end_in_step_limit(tmp_path):
    systems = [{"name": "m", "provider": "python", "entrypoint": f"{ENTRY}:many_steps",
                "limits": {"max_steps": 10}}]  # fmt: skip
    run, result = _run(_params(tmp_path, _dataset(tmp_path, ["x"]), systems))
    row = result.records.iloc[0]
    assert row["state"] == "step_limit" and not row["correct"] and not row["no_answer"]
    assert len(_records(run, "steps")) == 50  # the partial trajectory is kept


def test_a_bad_entrypoint_fails_before_any_task(tmp_path):
    systems = [{"name": "b", "provider": "python", "entrypoint": "no_such_module:fn"}]
    with pytest.raises(AgentConfigError, match="cannot import no_such_module"):
        _run(_params(tmp_path, _dataset(tmp_path, ["x"]), systems))


def _marked(mark: str) -> list[int]:
    """Live processes with ``mark`` in their command line."""
    return _marked_processes(mark)


def _kill_marked(mark: str) -> None:
    for pid in _marked(mark):  # only what the test's own agent started
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _study_process(path: Path) -> subprocess.Popen:
    """The study in a process of its own, its stderr in a file (not a pipe, which processes
    an agent leaves behind would hold open)."""
    with open(path.with_suffix(".stderr"), "wb") as err:
        return subprocess.Popen([sys.executable, "-c", _RUN, str(path)],
                                cwd=Path(__file__).parents[2], stdout=subprocess.DEVNULL,
                                stderr=err)  # fmt: skip


@pytest.mark.slow
def test_a_sync_agent_that_never_returns_is_stopped_at_max_time_s(tmp_path):
    """The agent ignores SIGTERM and leaves a process in a session of its own: the study
    still ends by itself (the agent would run forever), with both tasks ``timeout`` at
    max_time_s and nothing left."""
    systems = [{"name": "forever", "provider": "python", "entrypoint": f"{ENTRY}:forever",
                "limits": {"max_time_s": 1}, "max_concurrency": 2}]  # fmt: skip
    path = _params(tmp_path, _dataset(tmp_path, ["a", "b"]), systems)
    proc = _study_process(path)
    try:
        ended = _wait_for(lambda: proc.poll() is not None, 300)  # bounded: not a hang
    finally:
        proc.kill()
        proc.wait()
        leftovers = _marked(example_agent.forever_mark())
        _kill_marked(example_agent.forever_mark())
    assert ended, "the study never ended"
    assert proc.returncode == 0, path.with_suffix(".stderr").read_text()[-2000:]
    outputs = Path(os.environ["EVALBENCH_OUTPUTS"])
    runs = read_jsonl(next(outputs.glob("agents_test/*/records/agent_runs.jsonl")))
    assert sorted(r["task_id"] for r in runs) == ["t0", "t1"]
    assert {r["state"] for r in runs} == {"timeout"}
    assert {r["detail"] for r in runs} == {"no answer within max_time_s=1"}
    assert all(r["wall_s"] >= 1 for r in runs)  # max_time_s, then the kill
    assert leftovers == []


@pytest.mark.slow
def test_the_worker_of_a_sync_agent_dies_with_evalbench(tmp_path):
    systems = [{"name": "forever", "provider": "python", "entrypoint": f"{ENTRY}:forever",
                "limits": {"max_time_s": 120}}]  # fmt: skip
    path = _params(tmp_path, _dataset(tmp_path, ["a"]), systems)
    proc = _study_process(path)
    try:
        assert _wait_for(lambda: _marked(example_agent.forever_mark()), 20), (
            "the agent never started"
        )
        proc.kill()  # kill -9: no cleanup code of evalbench runs
        proc.wait(10)
        assert _wait_for(lambda: not _marked(example_agent.forever_mark()), 5)
    finally:
        proc.kill()
        proc.wait()
        _kill_marked(example_agent.forever_mark())


@pytest.mark.parametrize("namespaces", [True, False], ids=["pid-namespace", "session"])
def test_a_cancelled_worker_leaves_no_process(namespaces, monkeypatch):
    """Cancelled (as at max_time_s), the worker goes with everything it started — in a
    session (no root) too, where its sleeper in a session of its own escapes the group."""
    if namespaces and not backends._pid_namespaces():
        pytest.skip("needs root and util-linux unshare")
    monkeypatch.setattr(backends, "_pid_namespaces", lambda: namespaces)
    task = {"id": f"cancel-{namespaces}"}
    mark = example_agent.forever_mark(task["id"])

    async def cancel_once_started() -> None:
        call = asyncio.ensure_future(backends.call_in_worker(f"{ENTRY}:forever", task))
        while not _marked(mark) and not call.done():
            await asyncio.sleep(0.02)
        call.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await call

    try:
        asyncio.run(asyncio.wait_for(cancel_once_started(), 20))
        assert _wait_for(lambda: not _marked(mark), 1)
    finally:
        _kill_marked(mark)


def test_an_interrupt_stops_agent_tasks_in_flight_at_once(tmp_path):
    """Ctrl-C / SIGTERM (STOP) does not wait up to max_time_s: the task in flight is killed
    and left unrecorded, so a rerun runs it again."""
    systems = [{"name": "forever", "provider": "python", "entrypoint": f"{ENTRY}:forever",
                "limits": {"max_time_s": 60}}]  # fmt: skip
    run = open_run(_params(tmp_path, _dataset(tmp_path, ["a"]), systems))
    spec = run.params.systems[0]
    items = [TaskInput(AgentTask(id="stop0", question="q", limits=spec.limits), {})]
    mark = example_agent.forever_mark("stop0")

    def interrupt_once_started() -> None:
        if _wait_for(lambda: _marked(mark), 20):
            STOP.set()

    threading.Thread(target=interrupt_once_started, daemon=True).start()
    try:
        records = run_agents(run, spec, items, backend=backend_for(run, spec), progress=False)
        assert _wait_for(lambda: not _marked(mark), 30)
    finally:
        STOP.clear()
        _kill_marked(mark)
    # stopped by the interrupt, not at max_time_s (which would have recorded "timeout")
    assert records == {} and not (run.dir / "records" / "agent_runs.jsonl").exists()


def _wait_for(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return bool(condition())


@pytest.mark.slow
def test_a_sync_agent_reply_comes_back_exactly_as_returned(tmp_path):
    """The worker's reply is recorded as the function's own would be in-process (the
    oracle: :func:`outcome_of` on the reply itself); a sys.exit or a dead worker is an
    error record with the reason."""
    systems = [{"name": name, "provider": "python", "entrypoint": f"{ENTRY}:{name}"}
               for name in ("rich", "exits", "dies")]  # fmt: skip
    run, _ = _run(_params(tmp_path, _dataset(tmp_path, ["ok"]), systems, max_error_rate=1.0))
    expected = Recorder(_ListStore(), "rich", TaskInput(AgentTask(id="t0", question="q"), {}))
    outcome = outcome_of(copy.deepcopy(example_agent.RICH_REPLY), expected)
    keep = ("step", "kind", "tool", "arguments", "result", "prompt_tokens", "completion_tokens",
            "latency_s", "error")  # fmt: skip
    steps = [s for s in _records(run, "steps") if s["system"] == "rich"]
    assert [{k: s[k] for k in keep} for s in steps] == [
        {k: getattr(s, k) for k in keep} for s in expected.steps
    ]
    by = {r["system"]: r for r in _records(run, "agent_runs")}
    assert (by["rich"]["answer"], by["rich"]["cost_usd"]) == (outcome.answer, 0.5)
    assert by["exits"]["error"] == "SystemExit: 3"
    assert by["dies"]["error"] == (
        "WorkerDied: the agent's process ended (exit status 7) before replying"
    )


@pytest.mark.parametrize("reply", [{"answer": "a", "prompt_tokens": -1_000_000},
                                   {"answer": "a", "completion_tokens": -5},
                                   {"answer": "a", "cost_usd": math.inf},
                                   {"answer": "a", "steps": [{"prompt_tokens": -3}]}])  # fmt: skip
def test_a_reply_with_negative_tokens_or_an_infinite_cost_is_an_invalid_reply(reply):
    # recorded as given before: -1,000,000 tokens (and under the max_tokens budget), and an
    # infinite cost stored as an unknown one
    recorder = Recorder(_ListStore(), "s", TaskInput(AgentTask(id="t0", question="q"), {}))
    with pytest.raises(ValueError, match="invalid agent reply"):  # the task's error record
        outcome_of(reply, recorder)


def test_every_text_of_a_step_is_clipped_the_error_too():
    # a read_file of a 100,000-character name left a 100,070-character error in steps.jsonl
    # (arguments and results were clipped, the error was not)
    from evalbench.agents.runner import CLIP

    recorder = Recorder(_ListStore(), "s", TaskInput(AgentTask(id="t0", question="q"), {}))
    step = recorder.step("tool", tool="read_file", arguments="a" * 100_000,
                         result="r" * 100_000, error="no file " + "a" * 100_000)  # fmt: skip
    for text in (step.arguments, step.result, step.error):
        assert text is not None and len(text) < CLIP + 40 and text.endswith(" more chars]")


class _ListStore(list):
    def append(self, record) -> None:  # a record store that keeps records in memory
        super().append(record)


@pytest.mark.slow
def test_an_async_agent_is_cancelled_at_max_time_s(tmp_path):
    example_agent.ASYNC_CANCELLED.clear()
    systems = [{"name": "af", "provider": "python", "entrypoint": f"{ENTRY}:async_forever",
                "limits": {"max_time_s": 0.5}}]  # fmt: skip
    run, _ = _run(_params(tmp_path, _dataset(tmp_path, ["a"]), systems))
    assert _records(run, "agent_runs")[0]["state"] == "timeout"  # the agent never returns
    assert example_agent.ASYNC_CANCELLED == ["t0"]  # its finally ran: it was cancelled


# --- command agents --------------------------------------------------------------------------

AGENT_SCRIPT = """
import json, os, subprocess, sys, time
task = json.load(sys.stdin)
mode = task["question"].split()[0]
if mode == "crash":
    print("boom", file=sys.stderr); sys.exit(3)
if mode == "garbage":
    print("this is not json"); sys.exit(0)
if mode == "hang":
    time.sleep(300)
if mode == "huge":
    sys.stdout.write("x" * 30_000_000); sys.exit(0)
if mode == "orphan":
    sleeper = "import time; time.sleep(300)"  # the mark is its argv[1] (sleep would refuse it)
    subprocess.Popen([sys.executable, "-c", sleeper, "ORPHAN_MARK"], start_new_session=True)
print(json.dumps({"answer": "ok", "steps": [{"kind": "tool", "tool": "think"}]}))
"""


ORPHAN_MARK = f"EVALBENCH_ORPHAN_MARK-{os.environ['EVALBENCH_TEST_TOKEN']}"
"""On the command line of the orphan the agent script leaves (this test session's own)."""


def _marked_processes(mark: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if mark.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


@pytest.mark.slow
def test_command_agents_fail_cleanly_and_leave_no_process(tmp_path):
    script = tmp_path / "agent.py"
    script.write_text(AGENT_SCRIPT.replace("ORPHAN_MARK", ORPHAN_MARK))
    folder = gaia_dataset(tmp_path, ["ok"] * 6)
    rows = [json.loads(line) for line in (folder / "metadata.jsonl").read_text().splitlines()]
    for row, mode in zip(rows, ["crash", "garbage", "hang", "huge", "orphan", "fine"], strict=True):
        row["Question"] = f"{mode} question"
    (folder / "metadata.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    systems = [{"name": "cli", "provider": "command", "argv": [sys.executable, str(script)],
                "limits": {"max_time_s": 3}, "max_concurrency": 6}]  # fmt: skip
    run, result = _run(_params(tmp_path, folder, systems, max_error_rate=1.0))
    by = {r["task_id"]: r for r in _records(run, "agent_runs")}
    assert by["t0"]["state"] == "error" and by["t0"]["error"] == "exit_status 3: boom"
    assert by["t1"]["error"].startswith("invalid_output: stdout is not JSON: 'this is not json'")
    assert by["t2"]["state"] == "timeout" and "max_time_s=3" in by["t2"]["detail"]
    assert by["t3"]["error"] == "output_too_large: more than 10,000,000 bytes on stdout"
    assert by["t4"]["state"] == "answered" and by["t5"]["answer"] == "ok"
    # the background process died too (a bounded wait: SIGKILL lands asynchronously)
    assert _wait_for(lambda: _marked_processes(ORPHAN_MARK) == [], 30)
    assert len(result.records) == 6  # the study finished


def test_a_time_limit_shorter_than_a_process_start_ends_the_task_not_the_run(tmp_path):
    # max_time_s: 1e-300 cancelled the task while asyncio started its worker: the worker was
    # left running, unknown, and the run waited on its pipes for ever (SIGTERM did not help)
    script = tmp_path / "agent.py"
    script.write_text(AGENT_SCRIPT)
    systems = [
        {"name": "py", "provider": "python", "entrypoint": f"{ENTRY}:forever"},
        {"name": "cli", "provider": "command", "argv": [sys.executable, str(script)]},
    ]
    for system in systems:  # each its own mapping (yaml.safe_dump writes one shared as anchors)
        system["limits"] = {"max_time_s": 1e-300}
    done: list = []
    params = _params(tmp_path, _dataset(tmp_path, ["fine"]), systems, max_error_rate=1.0)
    worker = threading.Thread(target=lambda: done.append(_run(params)), daemon=True)
    worker.start()
    worker.join(120)
    assert not worker.is_alive(), "the run waits for ever"
    run, _ = done[0]
    assert {(r["system"], r["state"]) for r in _records(run, "agent_runs")} == {
        ("py", "timeout"), ("cli", "timeout")}  # fmt: skip
    assert _wait_for(lambda: _marked_processes(example_agent.forever_mark("t0")) == [], 30)


def test_a_command_agent_that_writes_megabytes_to_stderr_still_answers(tmp_path):
    # stderr was read up to 1 MB and then left unread: the agent blocked on the full pipe
    # and its answer became "timeout: no answer within max_time_s"
    script = tmp_path / "chatty.py"
    script.write_text("import json, sys\njson.load(sys.stdin)\nsys.stderr.write('log\\n' * "
                      "1_500_000)\nprint(json.dumps('ok'))\n")  # fmt: skip
    systems = [{"name": "cli", "provider": "command", "argv": [sys.executable, str(script)],
                "limits": {"max_time_s": 60}}]  # fmt: skip
    run, _ = _run(_params(tmp_path, _dataset(tmp_path, ["ok"]), systems))
    (record,) = _records(run, "agent_runs")
    assert (record["state"], record["answer"]) == ("answered", "ok"), record


def test_a_python_agents_reply_crosses_back_as_data_never_as_code(tmp_path):
    # the reply was a pickle: unpickled in evalbench it ran the agent's code there (a file
    # made, a sleep past max_time_s holding every other task); now it is JSON
    trap = tmp_path / "made_by_the_reply"
    folder = gaia_dataset(tmp_path, ["np"])
    rows = [json.loads(line) for line in (folder / "metadata.jsonl").read_text().splitlines()]
    rows[0]["Question"] = f"where {trap}"
    (folder / "metadata.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    systems = [
        {"name": "trap", "provider": "python", "entrypoint": f"{ENTRY}:pickle_trap"},
        {"name": "np", "provider": "python", "entrypoint": f"{ENTRY}:numpy_reply"},
    ]
    run, _ = _run(_params(tmp_path, folder, systems, max_error_rate=1.0))
    by = {r["system"]: r for r in _records(run, "agent_runs")}
    assert by["trap"]["error"].startswith("UnsendableReply: the reply cannot be sent back")
    assert not trap.exists()
    assert (by["np"]["state"], by["np"]["cost_usd"], by["np"]["prompt_tokens"]) == (
        "answered", 0.25, 7)  # fmt: skip


CLI_AGENT = """
import json, sys
from pathlib import Path
task = json.load(sys.stdin)
print(json.dumps({"answer": (Path(__file__).parent / "answer.txt").read_text()}))
"""


def test_relative_paths_in_argv_are_found_from_the_project_root(tmp_path, monkeypatch):
    """``argv: [python, my_agents/cli_agent.py]`` as in a shell at the project root, though
    the process runs in the task's private folder; arguments that are no path stay."""
    project = tmp_path / "project"
    (project / "my_agents").mkdir(parents=True)
    (project / "my_agents" / "cli_agent.py").write_text(CLI_AGENT)
    (project / "my_agents" / "answer.txt").write_text("42")
    monkeypatch.setenv("EVALBENCH_HOME", str(project))
    systems = [{"name": "cli", "provider": "command",
                "argv": [sys.executable, "my_agents/cli_agent.py", "openai/gpt-4o", "-v"]}]  # fmt: skip
    run, _ = _run(_params(tmp_path, _dataset(tmp_path, ["42"]), systems))
    record = _records(run, "agent_runs")[0]
    assert (record["state"], record["answer"], record["error"]) == ("answered", "42", None)
    script = str(project / "my_agents" / "cli_agent.py")
    argv = ["python3", "my_agents/cli_agent.py", "openai/gpt-4o", "-v", ""]
    assert backends.resolve_argv(argv, project) == ["python3", script, "openai/gpt-4o", "-v", ""]
    assert backends.resolve_argv(["my_agents/cli_agent.py"], project) == [script]


# --- the reference agent, against the loopback server ---------------------------------------


@pytest.mark.slow
def test_the_reference_agent_reads_a_csv_runs_python_and_answers(tmp_path, loopback, monkeypatch):
    monkeypatch.setenv(KEY_ENV, CANARY_KEY)
    dataset = _dataset(tmp_path, ["12"], with_csv=True)
    script = [
        Reply(tool_calls=[{"name": "read_file", "arguments": '{"name": "sales.csv"}'}]),
        Reply(tool_calls=[{"name": "python", "arguments": json.dumps({"code": "print(5 + 7)"})}]),
        Reply(tool_calls=[{"name": "final_answer", "arguments": '{"answer": "12"}'}]),
    ]
    loopback.enqueue(*script)
    systems = [{"name": "react", "provider": "agent", "model": "m", "base_url": loopback.base_url,
                "api_key_env": KEY_ENV, "tools": ["read_file", "python"],
                "price_input_per_mtok": 1.0, "price_output_per_mtok": 2.0}]  # fmt: skip
    run, result = _run(_params(tmp_path, dataset, systems))
    assert result.records.iloc[0]["correct"] and result.records.iloc[0]["state"] == "answered"
    steps = _records(run, "steps")
    assert [(s["kind"], s["tool"]) for s in steps] == [
        ("model", "read_file"), ("tool", "read_file"), ("model", "python"), ("tool", "python"),
        ("model", "final_answer"), ("tool", "final_answer"),
    ]  # fmt: skip
    assert "north" in steps[1]["result"] and steps[3]["result"].startswith("[exit code 0;")
    assert steps[3]["result"].endswith("stdout:\n12\n")
    # what the model saw: the tool results came back as tool messages, in order
    last = loopback.requests[2]["messages"]
    assert [m["role"] for m in last] == ["system", "user", "assistant", "tool", "assistant", "tool"]
    assert last[3]["tool_call_id"] == "call_0" and "north" in last[3]["content"]
    assert loopback.requests[0]["tools"][0]["function"]["name"] == "read_file"
    record = _records(run, "agent_runs")[0]
    # 3 calls × (10 prompt, 5 completion) tokens at $1 / $2 per M
    assert record["cost_usd"] == pytest.approx(3 * (10 * 1.0 + 5 * 2.0) / 1e6)
    # a rerun replays nothing: the task has its record
    again = loopback.count
    _run(_params(tmp_path, dataset, systems))
    assert loopback.count == again


FILL_16_MIB = (
    "f = open('big.bin', 'wb')\nfor _ in range(16):\n    f.write(b'x' * 2**20)\n    f.flush()"
)


@pytest.mark.skipif(not namespaces_available(), reason="the disk budget needs namespaces")
def test_the_systems_sandbox_limits_reach_the_python_tool(tmp_path, loopback, monkeypatch):
    monkeypatch.setenv(KEY_ENV, CANARY_KEY)
    loopback.enqueue(
        Reply(tool_calls=[{"name": "python", "arguments": json.dumps({"code": FILL_16_MIB})}]),
        Reply(tool_calls=[{"name": "final_answer", "arguments": '{"answer": "x"}'}]),
    )
    systems = [{"name": "react", "provider": "agent", "model": "m", "base_url": loopback.base_url,
                "api_key_env": KEY_ENV, "sandbox": {"disk_mb": 8}}]  # fmt: skip
    run, _ = _run(_params(tmp_path, _dataset(tmp_path, ["x"]), systems))
    tool = [s for s in _records(run, "steps") if s["tool"] == "python" and s["kind"] == "tool"]
    assert "OSError: [Errno 28] No space left on device" in tool[0]["result"]


def test_sandbox_limits_apply_to_the_reference_agent_only(tmp_path):
    systems = [{"name": "p", "provider": "python", "entrypoint": f"{ENTRY}:answer",
                "sandbox": {"disk_mb": 8}}]  # fmt: skip
    with pytest.raises(ValueError, match="sandbox applies to provider 'agent' only"):
        _run(_params(tmp_path, _dataset(tmp_path, ["x"]), systems))


@pytest.mark.parametrize(("max_steps", "calls"), [(3, "3 model calls"), (1, "1 model call")])
def test_the_reference_agent_stops_at_max_steps(tmp_path, loopback, monkeypatch, max_steps, calls):
    monkeypatch.setenv(KEY_ENV, CANARY_KEY)
    call = Reply(tool_calls=[{"name": "read_file", "arguments": '{"name": "x"}'}])
    loopback.enqueue(*[call] * max_steps)
    systems = [{"name": "react", "provider": "agent", "model": "m", "base_url": loopback.base_url,
                "api_key_env": KEY_ENV, "limits": {"max_steps": max_steps}}]  # fmt: skip
    run, result = _run(_params(tmp_path, _dataset(tmp_path, ["x"]), systems))
    assert result.records.iloc[0]["state"] == "step_limit"
    assert _records(run, "agent_runs")[0]["detail"] == f"no final answer in {calls}"
    steps = _records(run, "steps")
    assert len(steps) == 2 * max_steps and steps[1]["error"].startswith("no attachment named 'x'")


# --- the simulated agent -----------------------------------------------------------------------


@pytest.mark.slow
def test_the_simulated_agent_matches_its_knobs(tmp_path):
    # 300 tasks: mean tool calls per task ≈ mean_steps (Poisson 4), timeout share ≈ 0.2
    systems = [{"name": "sim", "provider": "sim", "sim": {"accuracy": 1.0},
                "sim_agent": {"mean_steps": {"default": 4}, "timeout_rate": {"default": 0.2},
                              "tool_error_rate": 0.0},
                "limits": {"max_steps": 50}}]  # fmt: skip
    run, result = _run(_params(tmp_path, _dataset(tmp_path, ["7"] * 300), systems))
    runs = _records(run, "agent_runs")
    answered = [r for r in runs if r["state"] == "answered"]
    timeouts = sum(r["state"] == "timeout" for r in runs)
    assert 0.2 - 0.07 < timeouts / 300 < 0.2 + 0.07  # ± 3 binomial SEs (0.023)
    mean_calls = sum(r["tool_calls"] for r in answered) / len(answered) - 1  # minus final_answer
    assert 4 - 0.5 < mean_calls < 4 + 0.5  # ± 4 SEs of a Poisson(4) mean over ~240 tasks
    assert all(r["answer"] == "7" for r in answered)  # accuracy 1.0
    assert result.agents is not None and set(result.agents.states["level"]) == {
        "L1",
        "L2",
        "L3",
        "all",
    }


# --- kill mid-study, rerun ---------------------------------------------------------------------

_RUN = "import sys; from evalbench import gaia; from evalbench.studies import open_run; gaia.run(open_run(sys.argv[1]))"


@pytest.mark.slow
def test_a_killed_agent_study_resumes_with_one_record_and_one_trajectory_per_task(tmp_path):
    n = 12  # the kill comes right after the 4th record: at most 2 more were in flight
    systems = [{"name": "slow", "provider": "python", "entrypoint": f"{ENTRY}:slow",
                "max_concurrency": 2}]  # fmt: skip
    path = _params(tmp_path, _dataset(tmp_path, [str(i) for i in range(n)]), systems)
    proc = subprocess.Popen([sys.executable, "-c", _RUN, str(path)], cwd=Path(__file__).parents[2],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    records = None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = list(
            Path(os.environ["EVALBENCH_OUTPUTS"]).glob("agents_test/*/records/agent_runs.jsonl")
        )
        if found and len(found[0].read_text().splitlines()) >= 4:
            records = found[0]
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    assert records is not None
    assert 4 <= len(read_jsonl(records)) < n
    # the agents' worker processes it forked hold the folder's lock until they are gone
    # (their lifeline ends them; under load that takes a moment): wait for it, bounded
    from evalbench.runs import run_is_active

    folder = records.parent.parent
    deadline = time.monotonic() + 60
    while run_is_active(folder) and time.monotonic() < deadline:
        time.sleep(0.05)
    result = run_study(path, warm=True)
    assert result.status == "ok", result.reason
    keys = [r["key"] for r in read_jsonl(records)]
    assert sorted(keys) == sorted(f"t{i}#0" for i in range(n))
    steps = read_jsonl(records.with_name("steps.jsonl"))
    # two steps per task, each written once: the partial trajectory of the task in flight
    # at the kill was dropped before it ran again
    assert sorted((s["task_id"], s["step"]) for s in steps) == sorted(
        (f"t{i}", k) for i in range(n) for k in (0, 1)
    )
