"""BFCL scoring: every verdict equals the official checker's (oracle), prompts and tools,
scoring result lines, reference answers."""

from __future__ import annotations

import json

import pytest
from bfcl.cases import (
    AREA,
    FLOAT,
    INT,
    MATH,
    OFFICIAL_ROWS,
    PAIR,
    STR,
    fn,
    item,
    python_results,
    verdict,
    write_jsonl,
)

from evalbench import bfcl, sources
from evalbench.bfcl.data import read_results
from evalbench.bfcl.schema import BfclDataError, Call, Item, ResultLine
from evalbench.bfcl.scoring import (
    PYTHON_HINT,
    correct_calls,
    prompt_messages,
    render_calls,
    response_result,
    to_openai_tools,
)
from evalbench.bfcl.study import build_request, to_records
from evalbench.records import ResponseRecord

# --------------------------------------------------------------------------- oracle


@pytest.mark.slow
@pytest.mark.parametrize("model", list(bfcl.PUBLIC_SYSTEMS))
def test_every_public_verdict_agrees_with_the_official_checker(model, public_items, oracles):
    path = oracles / "bfcl" / model / "official_verdicts.jsonl"
    official = {row["id"]: row for row in map(json.loads, path.read_text().splitlines())}
    assert len(official) == OFFICIAL_ROWS[model]
    style = bfcl.PUBLIC_SYSTEMS[model]
    ours = bfcl.score_results(public_items, python_results(model), system=model, style=style)
    ours = ours.set_index("id")
    assert set(official) <= set(ours.index)
    valid_diff = [i for i, row in official.items() if bool(ours.at[i, "valid"]) != row["valid"]]
    assert valid_diff == []
    type_diff = [
        (i, ours.at[i, "error_type"], row["error_type"])
        for i, row in official.items()
        if row["error_type"] is not None and ours.at[i, "error_type"] != row["error_type"]
    ]
    assert type_diff == []
    failed = [r for r in official.values() if not r["valid"]]
    assert len(failed) > 100  # the oracle exercises real failures, not only passes


def test_live_irrelevance_matches_the_official_score_file(public_items, mirror):
    # live_irrelevance is not in the oracle file; the submitted official score file lists
    # every failed item after a summary line.
    path = sources.fetch("bfcl/score/glyphh-ada-1.1/live_irrelevance", progress=False)
    summary, *failures = map(json.loads, path.read_text().splitlines())
    results = bfcl.fetch_results("glyphh-ada-1.1", "live_irrelevance")
    ours = bfcl.score_results(public_items, results, system="glyphh", style="fc")
    assert set(ours.loc[~ours["valid"], "id"]) == {f["id"] for f in failures}
    assert int(ours["valid"].sum()) == summary["correct_count"] == 884 - 91


def test_scoring_rejects_unknown_ids_and_missing_results(tmp_path):
    rows = [
        {"id": "simple_python_0", "result": "[math.factorial(number=5)]"},
        {"id": "simple_python_9", "result": "[]"},
    ]
    path = write_jsonl(tmp_path / "BFCL_v4_simple_python_result.json", rows)
    items = [MATH._replace(id="simple_python_0"), MATH._replace(id="simple_python_1")]
    with pytest.raises(BfclDataError, match=f"{path}:2: unknown id 'simple_python_9'"):
        bfcl.score_results(items, read_results(path), system="s", style="prompt")
    one = read_results(path)[:1]
    with pytest.raises(BfclDataError, match="no result for 'simple_python_1'"):
        bfcl.score_results(items, one, system="s", style="prompt")
    partial = bfcl.score_results(items, one, system="s", style="prompt", allow_missing=True)
    assert partial["id"].tolist() == ["simple_python_0"] and partial["valid"].all()


def test_summary_and_records_of_scored_items():
    items = [MATH, AREA._replace(id="simple_python_1")]
    lines = [
        ResultLine(MATH.id, "simple_python", "[math.factorial(number=5)]"),
        ResultLine("simple_python_1", "simple_python", "[area(base=1, height=5)]"),
    ]
    verdicts = bfcl.score_results(items, lines, system="s", style="prompt")
    assert verdicts["valid"].tolist() == [True, False]
    assert verdicts["decoded"].tolist()[1] == [{"area": {"base": 1, "height": 5}}]
    summary = bfcl.summarize(verdicts)
    assert summary.categories["accuracy"].tolist() == [1 / 2]
    assert summary.errors["error_type"].tolist() == ["value_error:others"]
    records = to_records(verdicts)
    assert records[1].error == "Invalid value for parameter 'base': 1. Expected one of [10]."
    assert records[1].model_dump()["params"][0] == {
        "function": "area",
        "param": "base",
        "type": "integer",
        "called": True,
        "correct": False,
    }


# --------------------------------------------------------------------------- prompts and tools


ASKED = Item(
    "live_simple_0-0-0",
    "live_simple",
    [[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "5!?"}]],
    MATH.functions,
    MATH.possible_answer,
)


def test_prompt_mode_puts_the_official_instructions_and_docs_in_the_system_prompt():
    messages = prompt_messages(MATH)
    assert [m["role"] for m in messages] == ["system", "user"]
    prompt = messages[0]["content"]
    assert prompt.startswith("You are an expert in composing functions.")
    assert "[func_name1(params_name1=params_value1, params_name2=params_value2...)" in prompt
    docs = json.loads(prompt.split("that you can invoke.\n", 1)[1])
    assert docs[0]["name"] == "math.factorial"
    assert docs[0]["description"] == "" + PYTHON_HINT  # the official Python 3 note
    assert MATH.functions[0]["description"] == ""  # the item is not mutated
    # a question's own system message follows the instructions (official behaviour)
    own = prompt_messages(ASKED)
    assert [m["role"] for m in own] == ["system", "user"]
    assert own[0]["content"].endswith("\n\nBe brief.")
    assert own[0]["content"].startswith("You are an expert")


def test_tools_mode_converts_docs_to_openai_tools():
    doc = fn(
        "geo.distance",
        {
            "points": {"type": "array", "items": {"type": "tuple", "items": {"type": "float"}}},
            "opts": {"type": "dict", "properties": {"unit": STR, "scale": FLOAT}},
            "anything": {"type": "any"},
            "origin": {"type": "tuple", "items": INT},
        },
        ("points",),
    )
    [tool] = to_openai_tools([doc])
    assert tool["type"] == "function"
    function = tool["function"]
    assert function["name"] == "geo_distance"  # OpenAI forbids dots
    assert function["description"] == "" + PYTHON_HINT
    params = function["parameters"]
    assert params["type"] == "object" and params["required"] == ["points"]
    props = params["properties"]
    assert props["points"] == {
        "type": "array",
        "items": {
            "type": "array",
            "items": {
                "type": "number",
                "format": "float",
                "description": " This is a float type value.",
            },
        },
    }
    assert props["opts"]["type"] == "object"
    assert props["opts"]["properties"]["scale"]["type"] == "number"
    assert props["anything"] == {"type": "string"}
    assert props["origin"] == {"type": "array", "items": {"type": "integer"}}
    assert doc["parameters"]["type"] == "dict"  # the doc itself is untouched


def test_requests_per_mode_and_results_per_mode():
    prompt = build_request(MATH, "prompt")
    assert prompt.tools is None and prompt.messages[0]["role"] == "system"
    tools = build_request(MATH, "tools")
    assert tools.messages == [{"role": "user", "content": "q"}]
    assert tools.tools[0]["function"]["name"] == "math_factorial"
    bare = MATH._replace(category="live_irrelevance", functions=[], possible_answer=None)
    assert build_request(bare, "tools").tools is None  # OpenAI rejects an empty list
    with pytest.raises(ValueError, match="unknown mode 'json'"):
        build_request(MATH, "json")
    called = ResponseRecord(
        system="s",
        key="k",
        text=None,
        tool_calls=[{"name": "math_factorial", "arguments": '{"number": 5}'}],
    )
    assert response_result(called, "tools") == [{"math_factorial": '{"number": 5}'}]
    prose = ResponseRecord(system="s", key="k", text="No tool fits.")
    assert response_result(prose, "tools") == "No tool fits."
    assert response_result(prose, "prompt") == "No tool fits."
    assert response_result(ResponseRecord(system="s", key="k"), "prompt") == ""


DICTS = item(
    "simple_python",
    [
        fn(
            "book",
            {
                "prefs": {"type": "dict", "properties": {"size": STR, "milk": STR}},
                "rows": {"type": "array", "items": {"type": "dict"}},
                "when": STR,
                "seats": INT,
            },
            ("prefs", "seats"),
        )
    ],
    [
        {
            "book": {
                "prefs": [{"size": ["Large", "L"], "milk": ["", "oat"]}],
                "rows": [[{"k": ["v", "w"]}]],
                "when": ["", "today"],
                "seats": ["", 2],  # required by the doc although "" is accepted
            }
        }
    ],
)


def test_correct_calls_take_first_values_and_leave_out_optional_ones():
    [call] = correct_calls(DICTS)
    assert call == Call("book", {"prefs": {"size": "Large"}, "rows": [{"k": "v"}], "seats": 2})
    assert verdict(DICTS, render_calls([call])).valid
    assert correct_calls(AREA) == [Call("area", {"base": 10, "height": 5})]
    assert correct_calls(PAIR) == [Call("f", {"a": 1}), Call("f", {"a": 2})]
    assert render_calls(correct_calls(PAIR)) == "[f(a=1), f(a=2)]"
