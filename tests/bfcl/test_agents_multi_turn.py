"""Agents on multi-turn items: evalbench's reference agent against the loopback server with
scripted tool calls, and users' Python agents (async and plain functions) whose every call
evalbench runs in the item's backends."""

from __future__ import annotations

import asyncio
import json
import os

import pytest
from bfcl import python_agent_cases as agents
from bfcl.category_cases import ITEM
from loopback import Reply as Scripted
from studyfiles import KEY_ENV

from evalbench import bfcl
from evalbench.agents.types import AgentLimits
from evalbench.bfcl import backends
from evalbench.bfcl.conversation import ADDED_FUNCTIONS_PROMPT, Conversation
from evalbench.bfcl.multi_turn import FORCE_TERMINATED, check_multi_turn
from evalbench.bfcl.python_agents import converse
from evalbench.bfcl.records import AgentConversationRecord, TurnStepRecord
from evalbench.bfcl.schema import CALL_FAILED
from evalbench.bfcl.study import run_live_multi_turn
from evalbench.params import ParamsError
from evalbench.records import read_jsonl
from evalbench.studies import open_run

pytestmark = pytest.mark.skipif(
    not backends.available(), reason=f"needs the official BFCL backends: {backends.INSTALL_HINT}"
)


@pytest.fixture(autouse=True)
def _fresh_agents():
    agents.SEEN.clear()
    agents.RESULTS.clear()
    agents.LATE.clear()


def _study(tmp_path, system: dict, **fields) -> object:
    path = tmp_path / "study.yaml"
    body = {"study": "bfcl", "title": "t", "categories": "simple_python",
            "limit_per_category": 1, "systems": [system], **fields}  # fmt: skip
    path.write_text(json.dumps(body))
    return path


def _talk(fn, *, max_steps: int = 20, max_time_s: float = 5.0) -> Conversation:
    talk = Conversation(ITEM, "tools", model_name="py", max_steps=max_steps)
    asyncio.run(converse(fn, talk, AgentLimits(max_steps=max_steps, max_time_s=max_time_s)))
    return talk


# --------------------------------------------------------------------------- reference agent


def _reference(loopback, **limits) -> dict:
    return {"name": "ref", "provider": "agent", "model": "m", "base_url": loopback.base_url,
            "api_key_env": KEY_ENV, "max_retries": 1, "limits": limits}  # fmt: skip


def test_reference_agent_converses_with_tools_and_its_step_limit(tmp_path, loopback, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "k")
    loopback.enqueue(  # turn 0: two calling steps; max_steps 1 force-quits after the second
        Scripted(tool_calls=[{"name": "mkdir", "arguments": '{"dir_name": "out"}'}]),
        Scripted(tool_calls=[{"name": "ls", "arguments": "{}"}]),
    )
    path = _study(tmp_path, _reference(loopback, max_steps=1), mode="prompt")
    run = open_run(path)
    live = run_live_multi_turn(run, run.params.systems[0], [ITEM])
    assert loopback.count == 2  # stopped: no third request
    first = loopback.requests[0]
    # tools mode whatever `mode` says: no system prompt, the item's functions as tools
    assert first["model"] == "m" and [m["role"] for m in first["messages"]] == ["user"]
    assert {t["function"]["name"] for t in first["tools"]} == {"mkdir", "ls"}  # cat held out
    # tool_choice sent (llama-cpp-python drops tools without it); the call-only turn goes out
    # with content "", not null (which llama-cpp-python's default format refuses with a 500)
    assert first["tool_choice"] == loopback.requests[1]["tool_choice"] == "auto"
    assert loopback.requests[1]["messages"][1] == {
        "role": "assistant", "content": "", "tool_calls": [{"id": "call_0_0_0", "type": "function",
        "function": {"name": "mkdir", "arguments": '{"dir_name": "out"}'}}]}  # fmt: skip
    verdict = live.verdicts.iloc[0]
    # one turn played of two: the official force_terminated
    assert (verdict["valid"], verdict["error_type"], verdict["mode"]) == (
        False, FORCE_TERMINATED, "tools")  # fmt: skip
    again = run_live_multi_turn(open_run(path), run.params.systems[0], [ITEM])
    assert loopback.count == 2 and again.verdicts["error_type"].tolist() == [FORCE_TERMINATED]


def test_reference_agent_stops_past_its_token_budget(tmp_path, loopback, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "k")
    loopback.enqueue(  # 10 + 5 tokens per reply (loopback default): 30 > 20 after the second
        Scripted(tool_calls=[{"name": "mkdir", "arguments": '{"dir_name": "out"}'}]),
        Scripted(text="Made it."),
        Scripted(text="never asked"),
    )
    path = _study(tmp_path, _reference(loopback, max_tokens=20))
    run = open_run(path)
    live = run_live_multi_turn(run, run.params.systems[0], [ITEM])
    assert loopback.count == 2
    assert live.verdicts["error_type"].tolist() == [FORCE_TERMINATED]
    assert live.steps[-1]["result"] == "(stopped: 30 tokens > max_tokens=20)"
    assert live.verdicts["raw"].tolist() == [[[[{"mkdir": '{"dir_name": "out"}'}], "Made it."]]]


def test_an_agent_system_says_what_it_cannot_be(tmp_path):
    from bfcl.cases import study_params

    ref = {"name": "ref", "provider": "agent", "model": "m"}
    with pytest.raises(ParamsError, match=r"system_modes: 'ref' is an agent .* as 'tools'"):
        study_params(tmp_path, systems=[ref], system_modes={"ref": "prompt"})
    with pytest.raises(ParamsError, match="the reference agent's tools in BFCL are each item's"):
        study_params(tmp_path, systems=[{**ref, "tools": ["python"]}])
    with pytest.raises(
        ParamsError, match=r"tool_mode: prompt does not apply to BFCL: .* mode: prompt"
    ):
        study_params(tmp_path, systems=[{**ref, "tool_mode": "prompt"}])
    params = study_params(tmp_path, systems=[ref, {"name": "p", "provider": "python",
                                                   "entrypoint": "a.b:c"},
                                             {"name": "c", "provider": "command",
                                              "argv": ["x"]}])  # fmt: skip
    modes = [params.mode_of(name) for name in ("ref", "p", "c")]
    assert modes == ["tools", "python", "command"]


# --------------------------------------------------------------------------- Python agents


@pytest.mark.parametrize("fn", [agents.scripted, agents.scripted_sync])
def test_a_python_agent_plays_each_turn_and_evalbench_runs_its_calls(fn):
    talk = _talk(fn)
    assert talk.done and talk.error is None
    assert talk.result == [
        [[{"mkdir": '{"dir_name": "out"}'}], "Made it."],
        [[{"cat": '{"file_name": "notes.txt"}'}], "Read it."],
    ]
    assert check_multi_turn(ITEM, talk.result, style="fc").valid
    assert agents.RESULTS[1] == json.dumps({"file_content": "b line\na line"})  # the backend's
    first, second = agents.SEEN
    assert [d["name"] for d in first["functions"]] == ["mkdir", "ls"]  # cat held out
    assert [d["name"] for d in second["functions"]] == ["mkdir", "ls", "cat"]
    # the conversation so far: the call and its result, the final text, the new prompt
    assert [m["role"] for m in second["messages"]] == ["user", "assistant", "tool", "assistant",
                                                      "user"]  # fmt: skip
    assert second["messages"][-1]["content"] == ADDED_FUNCTIONS_PROMPT
    kinds = [(e["kind"], e["tool"]) for e in talk.events]
    assert kinds == [("model", "mkdir"), ("tool", "mkdir"), ("model", None),
                     ("model", "cat"), ("tool", "cat"), ("model", None)]  # fmt: skip


def test_a_python_agent_past_the_step_limit_is_force_quit():
    talk = _talk(agents.busy, max_steps=2)
    # calls 1 and 2 ran, the 3rd ran too (as officially) and force-quit the conversation
    assert len(agents.RESULTS) == 2 and talk.force_quit and talk.error is None
    assert len(talk.result) == 1 and len(talk.result[0]) == 3
    assert check_multi_turn(ITEM, talk.result).error_type == FORCE_TERMINATED


@pytest.mark.parametrize("fn", [agents.slow, agents.slow_async])
def test_a_python_agent_past_its_time_is_stopped(fn):
    talk = _talk(fn, max_time_s=0.05)
    assert talk.force_quit and talk.error is None and talk.result == [[]]
    assert talk.events[-1]["result"] == "(stopped: no answer within max_time_s=0.05)"
    if fn is agents.slow:  # a thread is not killed: its next call is refused
        assert agents.LATE.wait(2) and agents.RESULTS == []


def test_a_python_agent_that_raises_is_an_error_record():
    talk = _talk(agents.broken)
    assert talk.error == 'KeyError: "my agent\'s own bug"' and talk.result == [[]]


def test_a_python_agent_in_a_study_converses_records_and_resumes(tmp_path):
    if not os.environ.get("EVALBENCH_DATA_MIRROR"):
        pytest.skip("needs the public-data mirror: set EVALBENCH_DATA_MIRROR (.ci/run does)")
    system = {"name": "py", "provider": "python",
              "entrypoint": "bfcl.python_agent_cases:scripted"}  # fmt: skip
    item = next(i for i in bfcl.load("multi_turn_base") if i.id == "multi_turn_base_3")
    path = _study(tmp_path, system)
    run = open_run(path)
    live = run_live_multi_turn(run, run.params.systems[0], [item])
    assert live.verdicts[["id", "valid", "mode"]].values.tolist() == [
        ["multi_turn_base_3", True, "python"]]  # fmt: skip
    assert len(live.steps) == 2 * 5 + 2  # five calls (model + tool rows), two final texts
    for row in live.steps:
        TurnStepRecord.model_validate(row)
    stored = read_jsonl(run.dir / "records" / "agent_conversations.jsonl")
    assert [AgentConversationRecord.model_validate(r).id for r in stored] == ["multi_turn_base_3"]
    files = list((run.dir / "bfcl_results" / "py" / "multi_turn").glob("*.json"))
    assert [f.name for f in files] == ["BFCL_v4_multi_turn_base_result.json"]
    turns = len(agents.SEEN)
    again = run_live_multi_turn(open_run(path), run.params.systems[0], [item])
    assert len(agents.SEEN) == turns and again.verdicts["valid"].tolist() == [True]  # resumed


def test_a_python_agent_that_raises_scores_as_a_failed_call_and_is_retried(tmp_path):
    system = {"name": "py", "provider": "python",
              "entrypoint": "bfcl.python_agent_cases:broken"}  # fmt: skip
    path = _study(tmp_path, system)
    run = open_run(path)
    live = run_live_multi_turn(run, run.params.systems[0], [ITEM])
    assert live.verdicts[["valid", "error_type"]].values.tolist() == [[False, CALL_FAILED]]
    assert not (run.dir / "bfcl_results").exists() or not any(
        (run.dir / "bfcl_results").rglob("*.json")
    )
    path.write_text(path.read_text().replace(":broken", ":scripted"))
    fixed = open_run(path)
    assert run_live_multi_turn(fixed, fixed.params.systems[0], [ITEM]).verdicts[
        "valid"
    ].tolist() == [True]


def test_a_study_with_a_python_agent_submits_only_the_multi_turn_items(tmp_path):
    if not os.environ.get("EVALBENCH_DATA_MIRROR"):
        pytest.skip("needs the public-data mirror: set EVALBENCH_DATA_MIRROR (.ci/run does)")
    from evalbench.bfcl import metrics

    system = {"name": "py", "provider": "python",
              "entrypoint": "bfcl.python_agent_cases:scripted_sync"}  # fmt: skip
    path = _study(tmp_path, system, categories=["simple_python", "multi_turn_base"])
    result = bfcl.run(open_run(path))
    assert result.verdicts[["test_category", "mode"]].values.tolist() == [
        ["multi_turn_base", "python"]]  # fmt: skip
    coverage = metrics.coverage_table(result.verdicts, result.params.categories)
    assert coverage["not submitted"].tolist() == ["simple_python"]
    sources = result.sources.set_index("system").loc["py"]
    assert sources["source"] == "python agent: bfcl.python_agent_cases:scripted_sync"
    assert sources["decoder / mode"] == "python"


def test_reference_agent_answers_single_turn_items_with_its_model_in_tools_mode(
    tmp_path, loopback, monkeypatch
):
    from evalbench.bfcl.schema import Item
    from evalbench.bfcl.study import run_live_system

    monkeypatch.setenv(KEY_ENV, "k")
    loopback.enqueue(Scripted(tool_calls=[{"name": "ls", "arguments": '{"a": true}'}]))
    item = Item("simple_python_990", "simple_python", [[{"role": "user", "content": "List."}]],
                [ITEM.functions[2]], [{"ls": {"a": [True]}}])  # fmt: skip
    run = open_run(_study(tmp_path, _reference(loopback), mode="prompt"))
    verdicts = run_live_system(run, run.params.systems[0], [item])
    request = loopback.requests[0]
    assert [m["role"] for m in request["messages"]] == ["user"] and request["tools"]
    assert verdicts[["valid", "mode"]].values.tolist() == [[True, "tools"]]


def test_tools_mode_sends_tool_choice_and_says_so_loudly_when_no_answer_called(
    tmp_path, loopback, monkeypatch, capsys
):
    from bfcl.cases import AREA, MATH, NONE_FITS, hand_made_result

    from evalbench.bfcl.metrics import silent_tools
    from evalbench.bfcl.report import key_result
    from evalbench.bfcl.study import run_live_system

    monkeypatch.setenv(KEY_ENV, "k")
    # a server that leaves the tools out of the prompt: text for every item
    loopback.enqueue(Scripted(text="factorial(5) is 120."), Scripted(text="The area is 50."),
                     Scripted(text="No function fits."))  # fmt: skip
    system = {"name": "loop", "provider": "openai", "model": "m", "base_url": loopback.base_url,
              "api_key_env": KEY_ENV, "max_retries": 0, "max_concurrency": 1}  # fmt: skip
    run = open_run(_study(tmp_path, system, mode="tools"))
    items = [MATH, AREA._replace(id="simple_python_1"), NONE_FITS]
    verdicts = run_live_system(run, run.params.systems[0], items)
    assert [r["tool_choice"] for r in loopback.requests] == ["auto"] * 3
    # 2 items that want a call, 0 answers with one (the irrelevance item wants none)
    assert silent_tools(verdicts) == {"loop": 2}
    err = capsys.readouterr().err
    assert "system 'loop' (tools mode): 0 of 2 answers called a function" in err
    (tmp_path / "report").mkdir()
    result = hand_made_result(tmp_path / "report")._replace(
        verdicts=verdicts, order=["loop"], usage=run.recorded_usage(), simulated=frozenset()
    )
    assert "none of its 2 answers that should call a function called one" in key_result(result)
