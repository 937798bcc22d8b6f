"""Users' command agents on multi-turn items: one process per conversation speaking JSON
lines (tests/bfcl/command_agent_case.py), every call run by evalbench in the item's backends."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path

import pytest
from bfcl.category_cases import ITEM

from evalbench import bfcl
from evalbench.agents import backends as agent_backends
from evalbench.agents.types import AgentLimits
from evalbench.bfcl import backends
from evalbench.bfcl.command_agents import converse_command
from evalbench.bfcl.conversation import Conversation
from evalbench.bfcl.multi_turn import FORCE_TERMINATED, check_multi_turn
from evalbench.bfcl.records import AgentConversationRecord
from evalbench.bfcl.study import run_live_multi_turn
from evalbench.records import read_jsonl
from evalbench.studies import open_run

pytestmark = pytest.mark.skipif(
    not backends.available(), reason=f"needs the official BFCL backends: {backends.INSTALL_HINT}"
)
AGENT = str(Path(__file__).with_name("command_agent_case.py"))


def _talk(*args: str, max_steps: int = 20, max_time_s: float = 5.0) -> Conversation:
    talk = Conversation(ITEM, "tools", model_name="cmd", max_steps=max_steps)
    limits = AgentLimits(max_steps=max_steps, max_time_s=max_time_s)
    asyncio.run(converse_command([sys.executable, AGENT, *args], talk, limits))
    return talk


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def test_a_command_agent_plays_each_turn_and_gets_each_result():
    talk = _talk("scripted")
    assert talk.done and talk.error is None and not talk.force_quit
    result = '{"file_content": "b line\\na line"}'  # what the backend's cat returned
    assert talk.result == [
        [[{"mkdir": '{"dir_name": "out"}'}], "Made it. (last result: None)"],
        [[{"cat": '{"file_name": "notes.txt"}'}], f"Read it. (last result: {result})"],
    ]
    assert check_multi_turn(ITEM, talk.result, style="fc").valid


def test_a_command_agent_past_the_step_limit_is_force_quit():
    talk = _talk("busy", max_steps=2)
    # calls 1 and 2 ran, the 3rd ran too (as officially) and force-quit the conversation
    assert talk.force_quit and talk.error is None and len(talk.result[0]) == 3
    assert check_multi_turn(ITEM, talk.result).error_type == FORCE_TERMINATED


@pytest.mark.slow
def test_a_hanging_command_agent_is_killed_with_everything_it_started(tmp_path):
    pids = tmp_path / "pids"
    talk = _talk("hang", str(pids), max_time_s=1.0)  # the agent would hang for ever: stopped
    assert talk.force_quit and talk.error is None and talk.result == [[]]
    assert talk.events[-1]["result"] == "(stopped: no answer within max_time_s=1)"
    assert len(pids.read_text().split()) == 2  # it had started its child
    # (process ids inside the agent's PID namespace mean nothing here: find them by the
    # PID_FILE path on both command lines)
    deadline = time.monotonic() + 2
    while _marked(str(pids)) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _marked(str(pids)), "the agent or its child is still running"


def _marked(mark: str) -> bool:
    """Whether a live (not zombie) process has ``mark`` on its command line."""
    for proc in Path("/proc").iterdir():
        try:
            if (
                proc.name.isdigit()
                and mark in (proc / "cmdline").read_text()
                and _alive(int(proc.name))
            ):
                return True
        except OSError:
            continue
    return False


@pytest.mark.slow
def test_a_descendant_that_called_setsid_is_killed_too():
    """The agent runs in a PID namespace of its own (as GAIA's command agents do): killing
    it kills a daemon that left its process group."""
    if not agent_backends.pid_namespaces():
        pytest.skip("needs root and util-linux unshare (PID namespaces)")
    mark = f"evalbench-bfcl-daemon-{os.getpid()}-{time.monotonic_ns()}"
    try:
        talk = _talk("daemon", mark, max_time_s=1.0)
        assert talk.force_quit and talk.error is None
        deadline = time.monotonic() + 2
        while _marked(mark) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not _marked(mark), "the daemon the agent started is still running"
    finally:
        os.system(f"pkill -9 -f {mark} >/dev/null 2>&1")


def test_a_malformed_line_is_an_error_record_naming_it():
    talk = _talk("malformed")
    assert talk.error == (
        "invalid_output: line 1 of the agent's stdout is not a JSON object: 'calling mkdir "
        'now!\' (expected {"call": name, "arguments": {...}} or {"answer": text})'
    )
    assert talk.result == [[]]


def test_an_agent_that_exits_is_an_error_record_with_its_stderr():
    talk = _talk("exit")
    assert talk.error == "exit_status 3 before answering turn 0: giving up"


@pytest.mark.slow
def test_a_command_agent_in_a_study_converses_records_and_resumes(tmp_path):
    if not os.environ.get("EVALBENCH_DATA_MIRROR"):
        pytest.skip("needs the public-data mirror: set EVALBENCH_DATA_MIRROR (.ci/run does)")
    log = tmp_path / "turns.log"
    system = {"name": "cmd", "provider": "command",
              "argv": [sys.executable, AGENT, "scripted", str(log)]}  # fmt: skip
    path = tmp_path / "study.yaml"
    path.write_text(json.dumps({"study": "bfcl", "title": "t", "categories": ["simple_python",
                    "multi_turn_base"], "limit_per_category": 1, "systems": [system]}))  # fmt: skip
    item = next(i for i in bfcl.load("multi_turn_base") if i.id == "multi_turn_base_3")
    run = open_run(path)
    live = run_live_multi_turn(run, run.params.systems[0], [item])
    assert live.verdicts[["id", "valid", "mode"]].values.tolist() == [
        ["multi_turn_base_3", True, "command"]]  # fmt: skip
    stored = read_jsonl(run.dir / "records" / "agent_conversations.jsonl")
    assert [AgentConversationRecord.model_validate(r).id for r in stored] == ["multi_turn_base_3"]
    assert log.read_text().split() == ["multi_turn_base_3"] * 2  # two turns
    again = run_live_multi_turn(open_run(path), run.params.systems[0], [item])
    assert again.verdicts["valid"].tolist() == [True]
    assert len(log.read_text().split()) == 2  # resumed: not started again
    sources = bfcl.run(open_run(path)).sources.set_index("system").loc["cmd"]
    assert sources["source"].startswith("command agent: ") and "scripted" in sources["source"]


def test_a_missing_program_is_one_clear_error():
    from evalbench.agents import AgentConfigError
    from evalbench.agents.types import SystemSpec
    from evalbench.bfcl.study import command_argv

    spec = SystemSpec(name="cmd", provider="command", argv=["no-such-agent-program", "x"])
    with pytest.raises(AgentConfigError, match="system 'cmd': program 'no-such-agent-program'"):
        command_argv(spec)
    assert command_argv(spec.model_copy(update={"argv": [sys.executable, AGENT]})) == [
        sys.executable, AGENT]  # fmt: skip


@pytest.mark.parametrize(
    "line",
    ['{"call": "ls", "arguments": [1]}', '{"answer": 3}', '{"call": "rm -rf"}', "[1, 2]",
     '{"answer": "a", "call": "ls"}'],
)  # fmt: skip
def test_each_malformed_message_is_named(line):
    from evalbench.bfcl.command_agents import AgentOutputError, _message

    with pytest.raises(AgentOutputError, match=r"invalid_output: line 7 of the agent's stdout"):
        _message(line, 7)
    assert _message('{"call": "ls"}', 1) == {"call": "ls", "arguments": {}}


def test_a_program_that_cannot_start_is_an_error_record(tmp_path):
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\n")  # not executable
    talk = Conversation(ITEM, "tools", model_name="cmd")
    asyncio.run(converse_command([str(script)], talk, AgentLimits()))
    assert talk.error is not None and talk.error.startswith(f"cannot start '{script}'")


def test_a_line_past_the_limit_is_an_error_record():
    talk = _talk("long")
    assert talk.error == (
        "invalid_output: line 1 of the agent's stdout is longer than 1,000,000 bytes"
    )
