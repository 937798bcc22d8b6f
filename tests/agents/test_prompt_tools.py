"""The reference agent's two ways to call tools (issue 34, item 3): ``tool_mode: native``
(OpenAI ``tools``, ``tool_choice`` from the system) and ``tool_mode: prompt`` (the tools
described in the system prompt, calls read from the text, results sent back as text) for
servers that ignore ``tools`` — llama-cpp-python's default chat format does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from loopback import Reply
from studyfiles import CANARY_KEY, KEY_ENV, gaia_dataset

from evalbench import gaia
from evalbench.agents.prompt_tools import parse_calls, results_message, tools_prompt
from evalbench.agents.types import SystemSpec
from evalbench.records import read_jsonl
from evalbench.studies import open_run

READ = {"type": "function", "function": {"name": "read_file", "description": "Read a file.",
        "parameters": {"type": "object", "properties": {"name": {"type": "string"}}}}}  # fmt: skip


def test_calls_are_read_from_tool_call_tags_as_a_list_or_one_object():
    text = (
        'Let me look.\n<tool_call>[{"name": "read_file", "arguments": {"name": "a.csv"}}, '
        '{"name": "python", "arguments": {"code": "1+1"}}]</tool_call>\n'
        '<tool_call>{"name": "final_answer", "arguments": "{\\"answer\\": \\"2\\"}"}</tool_call>'
    )
    calls, problems = parse_calls(text)
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [
        ("read_file", {"name": "a.csv"}), ("python", {"code": "1+1"}),
        ("final_answer", {"answer": "2"}),
    ]  # fmt: skip
    assert problems == []
    assert parse_calls("The answer is 4.") == ([], [])


@pytest.mark.parametrize(
    ("text", "problem"),
    [("<tool_call>[{'name': 'x'}]</tool_call>", "is not JSON"),
     ('<tool_call>{"arguments": {}}</tool_call>', 'needs a "name"'),
     ('<tool_call>[1]</tool_call>', 'needs a "name"'),
     ('<tool_call>{"name": "f", "arguments": {"a": 1', "is not JSON"),  # cut off mid-call
     ('<tool_call>' + '[' * 5000 + ']' * 5000 + '</tool_call>', "is not JSON")],
)  # fmt: skip
def test_a_call_that_cannot_be_read_is_a_problem_the_model_is_told(text, problem):
    calls, problems = parse_calls(text)
    assert calls == [] and len(problems) == 1 and problem in problems[0]


def test_the_tools_prompt_lists_the_schemas_and_results_go_back_as_user_text():
    prompt = tools_prompt([READ])
    assert '"name": "read_file"' in prompt and "<tool_call>" in prompt
    message = results_message([("read_file", "it's <b>north</b>"), ("final_answer", "error: x")])
    assert message["role"] == "user"
    blocks = message["content"].split("</tool_response>")
    first = json.loads(blocks[0].removeprefix("<tool_response>\n"))
    assert first == {"name": "read_file", "content": "it's <b>north</b>"}


def test_tool_mode_is_for_the_reference_agent_only_and_dumps_leave_it_out_at_native():
    agent = SystemSpec(name="a", provider="agent", model="m", tool_mode="prompt")
    assert agent.tool_mode == "prompt"
    assert "tool_mode" not in SystemSpec(name="a", provider="agent", model="m").model_dump()
    with pytest.raises(ValueError, match="tool_mode applies to provider 'agent' only"):
        SystemSpec(name="c", provider="openai", model="m", tool_mode="prompt")


def _study(tmp_path: Path, loopback, **system) -> Path:
    dataset = gaia_dataset(tmp_path, ["12"])
    (dataset / "sales.csv").write_text("region,units\nnorth,5\nsouth,7\n")
    rows = [json.loads(line) for line in (dataset / "metadata.jsonl").read_text().splitlines()]
    rows[0]["file_name"] = "sales.csv"
    (dataset / "metadata.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    systems = [{"name": "react", "provider": "agent", "model": "m", "base_url": loopback.base_url,
                "api_key_env": KEY_ENV, "tools": ["read_file"], **system}]  # fmt: skip
    path = tmp_path / "agents_test.yaml"
    path.write_text(yaml.safe_dump({"study": "gaia", "title": "t", "dataset": str(dataset),
                                    "systems": systems, "bootstrap_rounds": 20}))  # fmt: skip
    return path


def test_in_prompt_mode_the_agent_calls_tools_in_text_and_sees_their_results(
    tmp_path, loopback, monkeypatch
):
    monkeypatch.setenv(KEY_ENV, CANARY_KEY)
    loopback.enqueue(
        Reply(text='<tool_call>[{"name": "read_file", "arguments": {"name": "sales.csv"}}]'
                   "</tool_call>"),
        Reply(text='<tool_call>{"name": "final_answer", "arguments": {"answer": "12"}}'
                   "</tool_call>"),
    )  # fmt: skip
    run = open_run(_study(tmp_path, loopback, tool_mode="prompt"))
    result = gaia.run(run)
    assert result.records.iloc[0]["state"] == "answered" and result.records.iloc[0]["correct"]
    first, second = loopback.requests
    assert "tools" not in first and "tool_choice" not in first
    assert '"name": "read_file"' in first["messages"][0]["content"]
    # what the model saw: its own call as it wrote it, then the file as user text
    roles = [m["role"] for m in second["messages"]]
    assert roles == ["system", "user", "assistant", "user"]
    assert second["messages"][2]["content"].startswith("<tool_call>[")
    assert "north" in second["messages"][3]["content"]
    steps = read_jsonl(run.dir / "records" / "steps.jsonl")
    assert [(s["kind"], s["tool"]) for s in steps] == [
        ("model", "read_file"), ("tool", "read_file"), ("model", "final_answer"),
        ("tool", "final_answer"),
    ]  # fmt: skip


def test_in_prompt_mode_an_unreadable_call_is_answered_with_the_problem(
    tmp_path, loopback, monkeypatch
):
    monkeypatch.setenv(KEY_ENV, CANARY_KEY)
    loopback.enqueue(Reply(text="<tool_call>[{'name': 'read_file'}]</tool_call>"),
                     Reply(text="12"))  # fmt: skip
    result = gaia.run(open_run(_study(tmp_path, loopback, tool_mode="prompt")))
    assert result.records.iloc[0]["state"] == "answered"  # the plain answer ends the task
    told = loopback.requests[1]["messages"][-1]
    assert told["role"] == "user" and "is not JSON" in told["content"]


def test_in_native_mode_tool_call_turns_go_out_with_empty_content_and_the_systems_choice(
    tmp_path, loopback, monkeypatch
):
    monkeypatch.setenv(KEY_ENV, CANARY_KEY)
    loopback.enqueue(
        Reply(tool_calls=[{"name": "read_file", "arguments": '{"name": "sales.csv"}'}]),
        Reply(tool_calls=[{"name": "final_answer", "arguments": '{"answer": "12"}'}]),
    )
    gaia.run(open_run(_study(tmp_path, loopback, tool_choice="required")))
    first, second = loopback.requests
    assert first["tool_choice"] == second["tool_choice"] == "required"
    assert second["messages"][2]["content"] == ""  # the reply had none: not null on the wire


@pytest.mark.parametrize("mode", ["prompt", "native"])
def test_a_plain_reply_cut_at_max_tokens_is_no_final_answer_and_the_model_is_told(
    tmp_path, loopback, monkeypatch, mode
):
    """A reply cut off at ``max_tokens`` (``finish_reason: length``) with no tool call is not
    the agent's final answer: the model is told it was cut off and asked again; its next,
    complete reply is the answer."""
    monkeypatch.setenv(KEY_ENV, CANARY_KEY)
    loopback.enqueue(Reply(text="Let me think. The sales are north 5 and so", finish_reason="length"),
                     Reply(text="12"))  # fmt: skip
    run = open_run(_study(tmp_path, loopback, tool_mode=mode))
    row = gaia.run(run).records.iloc[0]
    assert (row["state"], row["model_answer"], bool(row["correct"])) == ("answered", "12", True)
    told = loopback.requests[1]["messages"][-1]
    assert told["role"] == "user" and "cut off at max_tokens" in told["content"]
    steps = read_jsonl(run.dir / "records" / "steps.jsonl")
    assert [s["finish_reason"] for s in steps] == ["length", "stop"]


def test_when_every_step_is_cut_at_max_tokens_the_task_has_no_answer_and_says_why(
    tmp_path, loopback, monkeypatch
):
    monkeypatch.setenv(KEY_ENV, CANARY_KEY)
    loopback.enqueue(*[Reply(text="12 because the", finish_reason="length")] * 2)
    run = open_run(_study(tmp_path, loopback, tool_mode="prompt", limits={"max_steps": 2}))
    row = gaia.run(run).records.iloc[0]
    assert row["state"] == "step_limit" and not row["correct"] and row["model_answer"] is None
    (ended,) = read_jsonl(run.dir / "records" / "agent_runs.jsonl")
    assert ended["answer"] is None and len(loopback.requests) == 2
    assert (
        ended["detail"]
        == "no final answer in 2 model calls (the last reply was cut off at max_tokens)"
    )


def test_an_empty_reply_is_no_answer_and_the_model_is_asked_again(tmp_path, loopback, monkeypatch):
    """Before: an empty plain reply ended the task ``answered`` with the answer ``''``."""
    monkeypatch.setenv(KEY_ENV, CANARY_KEY)
    loopback.enqueue(Reply(text="  "), Reply(text="12"))
    run = open_run(_study(tmp_path, loopback, tool_mode="prompt"))
    row = gaia.run(run).records.iloc[0]
    assert (row["state"], row["model_answer"], bool(row["correct"])) == ("answered", "12", True)
    told = loopback.requests[1]["messages"][-1]
    assert told["role"] == "user" and "Your reply was empty" in told["content"]


def test_a_tool_call_cut_at_max_tokens_is_told_as_cut_not_only_as_bad_json(
    tmp_path, loopback, monkeypatch
):
    """Before: the model read only "a <tool_call> is not JSON", and fixed its JSON at the
    same length instead of replying shorter."""
    monkeypatch.setenv(KEY_ENV, CANARY_KEY)
    cut = '<tool_call>[{"name": "final_answer", "arguments": {"answer": "1'
    loopback.enqueue(Reply(text=cut, finish_reason="length"), Reply(text="12"))
    gaia.run(open_run(_study(tmp_path, loopback, tool_mode="prompt")))
    told = loopback.requests[1]["messages"][-1]["content"]
    assert "is not JSON" in told and "cut off at max_tokens" in told
