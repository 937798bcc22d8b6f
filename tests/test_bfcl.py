"""BFCL: loading, decoding, the AST checker (against the official verdicts), metrics, files,
and the study: prompts and tools, the simulated systems, result sets, the live path."""

from __future__ import annotations

import json
import math
import os
import time
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from evalbench import bfcl, sources
from evalbench.bfcl import BfclDataError, Call, Item, ResultLine
from evalbench.models import ChatRequest, ModelSpec, SimSpec
from evalbench.params import ParamsError, load_params
from evalbench.records import ResponseRecord, read_jsonl
from evalbench.runs import open_run

OFFICIAL_ROWS = {"glyphh-ada-1.1": 2591, "gemma4-e4b-toolcall-v02": 2351, "AIREV-Agent-0.8B": 2607}


# --------------------------------------------------------------------------- helpers


def fn(name: str, props: dict, required: tuple[str, ...] = ()) -> dict:
    """A function doc in the BFCL shape."""
    return {
        "name": name,
        "description": "",
        "parameters": {"type": "dict", "properties": props, "required": list(required)},
    }


def item(category: str, functions: list[dict], answer: list[dict] | None) -> Item:
    return Item(f"{category}_0", category, [[{"role": "user", "content": "q"}]], functions, answer)


def verdict(it: Item, raw, style: str = "prompt", **kw) -> bfcl.Check:
    return bfcl.check(it, bfcl.decode(raw, style), **kw)


INT = {"type": "integer"}
STR = {"type": "string"}
FLOAT = {"type": "float"}


@pytest.fixture(scope="module")
def public_items() -> list[Item]:
    """All eleven categories from the pinned files, parsed once for the module."""
    if not os.environ.get("EVALBENCH_DATA_MIRROR"):
        pytest.skip("needs the public-data mirror: set EVALBENCH_DATA_MIRROR (.ci/run does)")
    return bfcl.load()


# --------------------------------------------------------------------------- oracle


@pytest.mark.parametrize("model", list(bfcl.PUBLIC_SYSTEMS))
def test_every_public_verdict_agrees_with_the_official_checker(model, public_items, oracles):
    path = oracles / "bfcl" / model / "official_verdicts.jsonl"
    official = {row["id"]: row for row in map(json.loads, path.read_text().splitlines())}
    assert len(official) == OFFICIAL_ROWS[model]
    style = bfcl.PUBLIC_SYSTEMS[model]
    ours = bfcl.score_results(public_items, bfcl.fetch_results(model), system=model, style=style)
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


def test_aggregates_reproduce_the_published_leaderboard_row(public_items, mirror):
    verdicts = bfcl.score_results(
        public_items, bfcl.fetch_results("glyphh-ada-1.1"), system="glyphh", style="fc"
    )
    board = pd.read_csv(sources.fetch("bfcl/leaderboard/data_overall", progress=False))
    non_live = pd.read_csv(sources.fetch("bfcl/leaderboard/data_non_live", progress=False))
    pct = {k: float(v.rstrip("%")) for k, v in board.iloc[0].items() if str(v).endswith("%")}
    pct["Java Simple AST"] = float(non_live.at[0, "Java Simple AST"].rstrip("%"))
    pct["JavaScript Simple AST"] = float(non_live.at[0, "JavaScript Simple AST"].rstrip("%"))
    not_run = {  # categories this module does not run: the published scores
        "simple_java": "Java Simple AST",
        "simple_javascript": "JavaScript Simple AST",
        "multi_turn_base": "Multi Turn Base",
        "multi_turn_miss_func": "Multi Turn Miss Func",
        "multi_turn_miss_param": "Multi Turn Miss Param",
        "multi_turn_long_context": "Multi Turn Long Context",
        "web_search_base": "Web Search Base",
        "web_search_no_snippet": "Web Search No Snippet",
        "memory_kv": "Memory KV",
        "memory_vector": "Memory Vector",
        "memory_rec_sum": "Memory Recursive Summarization",
    }
    extra = pd.DataFrame(
        [("glyphh", cat, pct[col] / 100) for cat, col in not_run.items()],
        columns=["system", "test_category", "accuracy"],
    )
    summary = bfcl.summarize(verdicts, extra_categories=extra)
    overall = summary.overall.iloc[0]
    assert round(100 * overall["non_live"], 2) == pct["Non-Live AST Acc"] == 88.71
    assert round(100 * overall["live"], 2) == pct["Live Acc"] == 74.32
    assert round(100 * overall["irrelevance"], 2) == pct["Irrelevance Detection"] == 87.56
    assert round(100 * overall["overall"], 2) == pct["Overall Acc"] == 74.50
    assert overall["missing"] == ["live_relevance"]  # glyphh submitted no relevance file
    ours = summary.categories.set_index("test_category")["accuracy"]
    assert round(100 * ours["live_simple"], 2) == pct["Live Simple AST"] == 84.11
    assert f"{100 * ours['irrelevance']:.2f}%" == non_live.at[0, "Irrelevance Detection"]


# --------------------------------------------------------------------------- checker rules


MATH = item(
    "simple_python",
    [fn("math.factorial", {"number": INT}, ("number",))],
    [{"math.factorial": {"number": [5]}}],
)


def test_dotted_names_and_the_underscore_to_dot_conversion():
    assert verdict(MATH, "[math.factorial(number=5)]").valid
    wrong = verdict(MATH, "[math_factorial(number=5)]")
    assert (wrong.valid, wrong.error_type) == (False, "simple_function_checker:wrong_func_name")
    assert verdict(MATH, "[math_factorial(number=5)]", underscore_to_dot=True).valid
    dotted = verdict(MATH, "[math.factorial(number=5)]", underscore_to_dot=True)
    assert dotted.error_type == "simple_function_checker:wrong_func_name"


AREA = item(
    "simple_python",
    [fn("area", {"base": INT, "height": INT, "unit": STR}, ("base", "height"))],
    [{"area": {"base": [10], "height": [5], "unit": ["", "cm"]}}],
)


@pytest.mark.parametrize(
    ("raw", "error_type"),
    [
        ("[area(base=10, height=5)]", None),  # optional "unit" may be omitted ("" accepted)
        ("[area(base=10, height=5, unit='CM')]", None),
        ("[area(base=10)]", "simple_function_checker:missing_required"),
        ("[area(base=10, height=5, depth=2)]", "simple_function_checker:unexpected_param"),
        ("[area(base=10, height=6)]", "value_error:others"),
        ("[area(base=10, height='5')]", "type_error:simple"),
        (
            "[area(base=10, height=5), area(base=10, height=5)]",
            "simple_function_checker:wrong_count",
        ),
        ("[]", "simple_function_checker:wrong_count"),
        ("area base 10", "ast_decoder:decoder_failed"),
    ],
)
def test_simple_rules(raw, error_type):
    result = verdict(AREA, raw)
    assert result.valid is (error_type is None)
    if error_type is not None:
        assert result.error_type == error_type


def test_optional_parameter_without_empty_marker_is_missing_optional():
    strict = AREA._replace(
        possible_answer=[{"area": {"base": [10], "height": [5], "unit": ["cm"]}}]
    )
    result = verdict(strict, "[area(base=10, height=5)]")
    assert result.error_type == "simple_function_checker:missing_optional"
    # a doc parameter that the answer does not list must not be passed at all
    narrow = AREA._replace(possible_answer=[{"area": {"base": [10], "height": [5]}}])
    assert verdict(narrow, "[area(base=10, height=5, unit='cm')]").error_type == (
        "simple_function_checker:unexpected_param"
    )


SPEED = item(
    "simple_python",
    [fn("speed", {"v": FLOAT}, ("v",))],
    [{"speed": {"v": [5.0]}}],
)


@pytest.mark.parametrize(
    ("raw", "valid", "error_type"),
    [
        ("[speed(v=5)]", True, "simple_function_checker:unclear"),  # int accepted for float
        ("[speed(v=5.0)]", True, "simple_function_checker:unclear"),
        ("[speed(v=True)]", False, "type_error:simple"),  # bool is not a number here
        ("[speed(v='5')]", False, "type_error:simple"),
    ],
)
def test_int_is_accepted_for_float(raw, valid, error_type):
    result = verdict(SPEED, raw)
    assert (result.valid, result.error_type) == (valid, error_type)
    integer = item("simple_python", [fn("f", {"n": INT})], [{"f": {"n": [5]}}])
    assert verdict(integer, "[f(n=5.0)]").error_type == "type_error:simple"


def test_string_standardization():
    # spaces and , . / - _ * ^ dropped, lowercased, ' -> "
    assert bfcl.standardize("April 1, 2024") == "april12024"
    assert bfcl.standardize("New-York_City./*^") == "newyorkcity"
    assert bfcl.standardize("It's") == 'it"s'
    city = item("simple_python", [fn("f", {"city": STR})], [{"f": {"city": ["New York City"]}}])
    assert verdict(city, "[f(city='new-york  city')]").valid
    assert verdict(city, "[f(city='Boston')]").error_type == "value_error:string"
    # strings are compared standardized, but nothing else is (no stemming, no trimming of words)
    assert verdict(city, "[f(city='NYC')]").error_type == "value_error:string"


def test_valid_verdicts_keep_the_official_initial_error_type():
    # The official simple_function_checker returns its initial dict (error_type "unclear")
    # unless a string/list/dict check replaced it; parallel checkers return a fresh dict.
    assert verdict(MATH, "[math.factorial(number=5)]").error_type == (
        "simple_function_checker:unclear"
    )
    assert verdict(AREA, "[area(base=10, height=5, unit='cm')]").error_type is None


LISTS = item(
    "simple_python",
    [
        fn(
            "f",
            {
                "cities": {"type": "array", "items": STR},
                "point": {"type": "tuple", "items": INT},
                "ids": {"type": "array", "items": INT},
            },
        )
    ],
    [{"f": {"cities": [["New York", "LA"]], "point": [[1, 2]], "ids": ["", [3]]}}],
)


@pytest.mark.parametrize(
    ("raw", "error_type"),
    [
        ("[f(cities=['new york', 'L.A.'], point=(1, 2))]", None),  # tuple -> list for "tuple"
        ("[f(cities=['LA', 'New York'], point=[1, 2])]", "value_error:list/tuple"),  # order
        ("[f(cities=['New York', 'LA'], point=[1, 2], ids=[3])]", None),
        ("[f(cities=['New York', 'LA'], point=[1, 2], ids=[])]", None),  # "" accepts []
        ("[f(cities=['New York', 'LA'], point=[1, 2], ids=[4])]", "value_error:list/tuple"),
        ("[f(cities=['New York', 1], point=[1, 2])]", "type_error:nested"),
        ("[f(cities=('New York', 'LA'), point=[1, 2])]", "type_error:simple"),  # array != tuple
    ],
)
def test_list_values(raw, error_type):
    result = verdict(LISTS, raw)
    assert (result.valid, result.error_type) == (error_type is None, error_type)


PREFS = item(
    "simple_python",
    [fn("f", {"prefs": {"type": "dict"}, "rows": {"type": "array", "items": {"type": "dict"}}})],
    [{"f": {"prefs": [{"size": ["Large"], "milk": ["", "oat"]}], "rows": ["", [{"k": ["v"]}]]}}],
)


@pytest.mark.parametrize(
    ("raw", "error_type"),
    [
        ("[f(prefs={'size': 'LARGE'})]", None),  # optional key omitted, value standardized
        ("[f(prefs={'size': 'large', 'milk': 'oat'}, rows=[{'k': 'V'}])]", None),
        ("[f(prefs={'size': 'small'})]", "value_error:dict_value"),
        ("[f(prefs={'size': 'large', 'sugar': 1})]", "value_error:dict_key"),
        ("[f(prefs={'milk': 'oat'})]", "value_error:dict_key"),  # missing required key
        (
            "[f(prefs={'size': 'large'}, rows=[{'k': 'v'}, {'k': 'v'}])]",
            "value_error:list_dict_count",
        ),
        ("[f(prefs={'size': 'large'}, rows=[{'k': 'w'}])]", "value_error:dict_value"),
    ],
)
def test_dict_and_list_of_dict_values(raw, error_type):
    result = verdict(PREFS, raw)
    assert (result.valid, result.error_type) == (error_type is None, error_type)


def test_dict_checker_second_pass_overrides_the_error_type():
    # Official quirk: after a wrong value, the missing-key pass still runs and its type wins.
    two = PREFS._replace(possible_answer=[{"f": {"prefs": [{"size": ["large"], "milk": ["oat"]}]}}])
    result = verdict(two, "[f(prefs={'size': 'small'})]")
    assert result.error_type == "value_error:dict_key"
    assert result.error.startswith("Invalid value for parameter 'size'")


def test_variable_names_are_compared_exactly():
    # An accepted value typed unlike the doc (a string for an integer) marks a variable.
    var = item("simple_python", [fn("f", {"n": INT})], [{"f": {"n": ["count"]}}])
    assert verdict(var, "[f(n='count')]").valid
    assert verdict(var, "[f(n='Count')]").error_type == "value_error:others"


PAIR = item(
    "parallel",
    [fn("f", {"a": INT}, ("a",))],
    [{"f": {"a": [1]}}, {"f": {"a": [2]}}],
)


def test_parallel_calls_match_in_any_order():
    assert verdict(PAIR, "[f(a=2), f(a=1)]").valid
    assert verdict(PAIR, "[f(a=2), f(a=1)]").error_type is None
    assert verdict(PAIR, "[f(a=1)]").error_type == "parallel_function_checker_no_order:wrong_count"
    miss = verdict(PAIR, "[f(a=1), f(a=3)]")
    assert miss.error_type == "parallel_function_checker_no_order:cannot_find_match"
    assert miss.error == (
        "Could not find a matching function among index [1] of model output for index 1 of "
        "possible answers."
    )


CHOICE = item(
    "multiple",
    [fn("g", {"x": INT}, ("x",)), fn("h", {"x": INT}, ("x",))],
    [{"h": {"x": [1]}}],
)


def test_multiple_needs_the_right_function_among_several():
    assert verdict(CHOICE, "[h(x=1)]").valid
    assert verdict(CHOICE, "[g(x=1)]").error_type == "simple_function_checker:wrong_func_name"
    assert verdict(CHOICE, "[h(x=1), h(x=1)]").error_type == "multiple_function_checker:wrong_count"


NONE_FITS = item("irrelevance", [fn("f", {"a": INT})], None)


@pytest.mark.parametrize(
    ("raw", "style", "valid"),
    [
        ("I cannot answer that with these tools.", "prompt", True),  # decode failure: abstains
        ("[]", "prompt", True),  # empty decode: abstains
        ("[f(a=1)]", "prompt", False),
        ([], "fc", True),
        ([{"f": "[1, 2]"}], "fc", True),  # not call-shaped: officially "empty"
        ([{"f": '{"a": 1}'}], "fc", False),
    ],
)
def test_irrelevance_is_correct_when_no_call_is_decoded(raw, style, valid):
    result = verdict(NONE_FITS, raw, style)
    assert result.valid is valid
    if not valid:
        assert result.error_type == "irrelevance_error:decoder_success"


def test_live_relevance_needs_at_least_one_call():
    some = item("live_relevance", [fn("f", {"a": INT})], None)
    assert verdict(some, "[f(a=999)]").valid  # any call counts, arguments are not checked
    failed = verdict(some, "no call")
    assert failed.error_type == "relevance_error:decoder_failed"
    assert failed.error.startswith("Invalid syntax. Failed to decode AST when it should have. ")
    assert verdict(some, "[]").error_type == "relevance_error:decoder_failed"


def test_decode_failures_fail_ast_items_with_the_decoder_error_type():
    failed = verdict(MATH, "Sure! math.factorial(number=5) is what you need.")
    assert failed.error_type == "ast_decoder:decoder_failed"
    assert failed.error.startswith("Invalid syntax. Failed to decode AST. ")
    shape = verdict(MATH, [{"math.factorial": "[5]"}], "fc")
    assert shape.error_type == "ast_decoder:decoder_wrong_output_format"


def test_items_the_checker_cannot_score_are_errors_not_verdicts():
    with pytest.raises(ValueError, match="is not one of"):
        verdict(MATH._replace(category="simple_java"), "[f()]")
    with pytest.raises(ValueError, match="needs its possible answer"):
        verdict(MATH._replace(possible_answer=None), "[f()]")


def test_per_parameter_details():
    result = verdict(AREA, "[area(base=10, height=6)]")
    by_param = {p.param: (p.called, p.correct) for p in result.params}
    assert by_param == {"base": (True, True), "height": (True, False), "unit": (True, True)}
    failed = verdict(AREA, "not a call")
    assert {p.param: (p.called, p.correct) for p in failed.params} == {
        "base": (False, False),
        "height": (False, False),
        "unit": (False, False),
    }
    # parallel: each expected call is paired with a same-name call that passes first
    pair = verdict(PAIR, "[f(a=2), f(a=7)]")
    assert [(p.param, p.correct) for p in pair.params] == [("a", False), ("a", True)]


# --------------------------------------------------------------------------- decoding


def test_python_call_strings_decode_to_literals():
    decoded = bfcl.decode(
        "[f(a=1, b='x'), m.n.g(c=[1, -2.5, {'k': (1, 2)}], d=True, e=None, h=false)]", "prompt"
    )
    assert decoded.calls == (
        Call("f", {"a": 1, "b": "x"}),
        # tuples stay tuples (the official decoder keeps them); a bare name is its text
        Call("m.n.g", {"c": [1, -2.5, {"k": (1, 2)}], "d": True, "e": None, "h": "false"}),
    )
    assert bfcl.decode("f(x=1)", "prompt").calls == (Call("f", {"x": 1}),)  # no brackets
    assert bfcl.decode("```[f(x=1)]```", "prompt").calls == (Call("f", {"x": 1}),)
    # positional arguments are dropped; nested calls become a dict or their source text
    nested = bfcl.decode("[f(1, y=g(z=2), w=h(3), s=data['a'])]", "prompt")
    assert nested.calls == (Call("f", {"y": {"g": {"z": 2}}, "w": "h(3)", "s": "data['a']"}),)


def test_unary_operators_follow_the_official_quirk():
    # officially every unary operator negates its literal operand
    assert bfcl.decode("[f(x=-3)]", "prompt").calls == (Call("f", {"x": -3}),)
    assert bfcl.decode("[f(x=+3)]", "prompt").calls == (Call("f", {"x": -3}),)
    assert bfcl.decode("[f(x=-y)]", "prompt").error_type == bfcl.DECODER_FAILED


def test_fenced_blocks_need_the_auto_style():
    text = "Here you go:\n```python\n[f(x=1)]\n```"
    assert bfcl.decode(text, "prompt").error_type == bfcl.DECODER_FAILED  # as officially
    assert bfcl.decode(text, "auto").calls == (Call("f", {"x": 1}),)


@pytest.mark.parametrize(
    "raw",
    [
        '[{"name": "f", "arguments": {"x": 1}}]',
        '{"name": "f", "arguments": "{\\"x\\": 1}"}',
        '[{"type": "function", "function": {"name": "f", "arguments": "{\\"x\\": 1}"}}]',
        '[{"f": {"x": 1}}]',
        '```json\n[{"f": "{\\"x\\": 1}"}]\n```',
        [{"f": '{"x": 1}'}],
        [{"name": "f", "parameters": {"x": 1}}],
    ],
)
def test_json_call_formats_decode_in_auto_style(raw):
    assert bfcl.decode(raw, "auto").calls == (Call("f", {"x": 1}),)


def test_function_calling_result_format_is_strict():
    assert bfcl.decode([{"f": '{"x": 1}'}, {"g": "{}"}], "fc").calls == (
        Call("f", {"x": 1}),
        Call("g", {}),
    )
    assert bfcl.decode([], "fc").calls == ()
    assert bfcl.decode("", "fc").calls == ()
    assert bfcl.decode([{"f": {"x": 1}}], "fc").error_type == bfcl.DECODER_FAILED  # not a string
    assert bfcl.decode("I have no tool for that.", "fc").error_type == bfcl.DECODER_FAILED
    assert bfcl.decode([{"f": "{x: 1}"}], "fc").error_type == bfcl.DECODER_FAILED
    with pytest.raises(ValueError, match="unknown decode style"):
        bfcl.decode("[f()]", "xml")


@pytest.mark.parametrize(
    ("raw", "style"),
    [
        ("[f(x=10**10**10)]", "prompt"),  # never evaluated
        ("[f(x=2*3)]", "auto"),
        ("[f(x=lambda y: y)]", "prompt"),
        ("[f(x=" + "[" * 10_000 + "]" * 10_000 + ")]", "prompt"),
        ("f(a=" * 5_000 + "1" + ")" * 5_000, "prompt"),
        ("[f(x=" + "-" * 50_000 + "1)]", "prompt"),
        ("[f(x=" + "not " * 20_000 + "1)]", "auto"),
        ("[f(x='" + "a" * 5_000_000 + "')]", "prompt"),  # multi-MB
        ("[f(x=" + "9" * 5_000 + ")]", "prompt"),
        ("[f(x='\x00')]", "prompt"),
        ([{"f": "[" * 40_000 + "]" * 40_000}], "fc"),
        ([{"f": '{"a": ' + "[" * 900 + "]" * 900 + "}"}], "fc"),
        ([{"f": "{}"}] * 200_000, "fc"),
        ({"f": {"a": json.loads("[" * 500 + "]" * 500)}}, "auto"),
    ],
)
def test_pathological_outputs_fail_fast_and_safely(raw, style):
    start = time.perf_counter()
    decoded = bfcl.decode(raw, style)
    elapsed = time.perf_counter() - start
    assert decoded.calls is None
    assert decoded.error_type == bfcl.DECODER_FAILED
    assert elapsed < 2.0  # a safety net only: each of these takes milliseconds


# --------------------------------------------------------------------------- loading


def test_registry_load_has_every_category_with_answers(public_items):
    counts = pd.Series([it.category for it in public_items]).value_counts().to_dict()
    assert counts == bfcl.CATEGORY_SIZES
    for it in public_items:
        has_answer = it.possible_answer is not None
        assert has_answer == (it.category not in bfcl.RELEVANCE_CATEGORIES), it.id
        assert it.question[0][-1]["content"]
        assert it.functions or it.category == "live_irrelevance"  # some offer no function
    first = public_items[0]
    assert (first.id, first.category) == ("simple_python_0", "simple_python")


def _write_jsonl(path: Path, rows: list) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


QUESTION = {
    "id": "simple_python_0",
    "question": [[{"role": "user", "content": "5!?"}]],
    "function": [fn("math.factorial", {"number": INT}, ("number",))],
}
ANSWER = {"id": "simple_python_0", "ground_truth": [{"math.factorial": {"number": [5]}}]}


def _data_folder(data: Path, question=QUESTION, answer=ANSWER) -> Path:
    _write_jsonl(data / "BFCL_v4_simple_python.json", [question])
    _write_jsonl(data / "possible_answer" / "BFCL_v4_simple_python.json", [answer])
    return data


def test_load_from_an_installed_package(tmp_path, monkeypatch):
    package = tmp_path / "site" / "bfcl_eval"
    _data_folder(package / "data")
    real = bfcl.importlib.util.find_spec

    def find_spec(name, *args):
        if name == "bfcl_eval":
            return types.SimpleNamespace(submodule_search_locations=[str(package)])
        return real(name, *args)

    monkeypatch.setattr(bfcl.importlib.util, "find_spec", find_spec)
    [loaded] = bfcl.load("simple_python", source="package")
    assert loaded == Item(
        "simple_python_0",
        "simple_python",
        QUESTION["question"],
        QUESTION["function"],
        ANSWER["ground_truth"],
    )


def test_load_from_a_missing_package_says_so(monkeypatch):
    monkeypatch.setattr(bfcl.importlib.util, "find_spec", lambda name, *a: None)
    with pytest.raises(BfclDataError, match="bfcl-eval is not installed"):
        bfcl.load("simple_python", source="package")


def test_load_from_a_gorilla_checkout(tmp_path):
    _data_folder(tmp_path / "gorilla" / "berkeley-function-call-leaderboard" / "bfcl_eval" / "data")
    [loaded] = bfcl.load(["simple_python"], source=tmp_path / "gorilla")
    assert loaded.possible_answer == ANSWER["ground_truth"]
    with pytest.raises(BfclDataError, match="not a gorilla checkout"):
        bfcl.load("simple_python", source=tmp_path)
    with pytest.raises(BfclDataError, match="missing BFCL file"):
        bfcl.load("multiple", source=tmp_path / "gorilla")


def _checkout_with(tmp_path: Path, question_rows: list, answer_rows: list) -> Path:
    data = tmp_path / "berkeley-function-call-leaderboard" / "bfcl_eval" / "data"
    _write_jsonl(data / "BFCL_v4_simple_python.json", question_rows)
    _write_jsonl(data / "possible_answer" / "BFCL_v4_simple_python.json", answer_rows)
    return data


def test_bad_data_files_name_file_and_line(tmp_path):
    other = {**QUESTION, "id": "simple_python_1"}
    data = _checkout_with(tmp_path, [QUESTION, '{"id": "simple_python_1",'], [ANSWER])
    question_file = data / "BFCL_v4_simple_python.json"
    with pytest.raises(BfclDataError, match=f"{question_file}:2: not a valid JSON line"):
        bfcl.load("simple_python", source=tmp_path)
    no_function = {k: v for k, v in other.items() if k != "function"}
    _checkout_with(tmp_path, [QUESTION, no_function], [ANSWER])
    with pytest.raises(BfclDataError, match=r":2: field 'function': Field required"):
        bfcl.load("simple_python", source=tmp_path)
    _checkout_with(tmp_path, [QUESTION, other], [ANSWER])
    with pytest.raises(BfclDataError, match="no possible answer for id 'simple_python_1'"):
        bfcl.load("simple_python", source=tmp_path)
    odd = {**QUESTION, "function": [fn("f", {"n": {"type": "number"}})]}
    _checkout_with(tmp_path, [odd], [ANSWER])
    with pytest.raises(
        BfclDataError, match=r":1: function 'f' parameter 'n': unknown type 'number'"
    ):
        bfcl.load("simple_python", source=tmp_path)
    with pytest.raises(BfclDataError, match="unknown BFCL category 'simple'"):
        bfcl.load("simple", source=tmp_path)


# --------------------------------------------------------------------------- result files


LINES = [
    ResultLine("live_parallel_0-0-0", "live_parallel", "[f(a=1), f(a=2)]", 10, 5, 0.5),
    ResultLine("live_parallel_1-0-1", "live_parallel", "[f(a=3)]"),
    ResultLine("simple_python_0", "simple_python", [{"math.factorial": '{"number": 5}'}]),
]


def test_results_round_trip_in_the_official_layout(tmp_path):
    written = bfcl.write_results(LINES, tmp_path, "org/model-1")
    live = tmp_path / "org_model-1" / "live" / "BFCL_v4_live_parallel_result.json"
    non_live = tmp_path / "org_model-1" / "non_live" / "BFCL_v4_simple_python_result.json"
    assert sorted(written) == sorted([live, non_live])
    first = json.loads(live.read_text().splitlines()[0])
    assert first == {
        "id": "live_parallel_0-0-0",
        "result": "[f(a=1), f(a=2)]",
        "input_token_count": 10,
        "output_token_count": 5,
        "latency": 0.5,
    }
    back = bfcl.read_result_dir(tmp_path / "org_model-1")
    assert [(r.id, r.category, r.result) for r in back] == [
        (r.id, r.category, r.result)
        for r in LINES  # live/ sorts before non_live/
    ]
    assert bfcl.fc_result([("f", {"x": 1}), ("g", '{"y": 2}')]) == [
        {"f": '{"x": 1}'},
        {"g": '{"y": 2}'},
    ]


def test_public_result_files_read_in_both_formats(mirror):
    fc = bfcl.fetch_results("glyphh-ada-1.1", "live_parallel")
    assert len(fc) == 16 and all(isinstance(r.result, list) for r in fc)
    assert all(r.latency is not None for r in fc)
    prompt = bfcl.fetch_results("AIREV-Agent-0.8B", ["live_parallel", "live_relevance"])
    assert len(prompt) == 16 + 16 and all(isinstance(r.result, str) for r in prompt)
    with pytest.raises(BfclDataError, match="no registered result file"):
        bfcl.fetch_results("gemma4-e4b-toolcall-v02", "irrelevance")
    with pytest.raises(BfclDataError, match="no registered BFCL results"):
        bfcl.fetch_results("nobody")


def test_malformed_result_files_name_file_and_line(tmp_path):
    good = {"id": "simple_python_0", "result": "[f()]"}
    path = _write_jsonl(tmp_path / "BFCL_v4_simple_python_result.json", [good, "{oops"])
    with pytest.raises(BfclDataError, match=f"{path}:2: not a valid JSON line"):
        bfcl.read_results(path)
    _write_jsonl(path, [good, {"id": "simple_python_1"}])
    with pytest.raises(BfclDataError, match=r":2: field 'result': Field required"):
        bfcl.read_results(path)
    _write_jsonl(path, [good, {"id": "multiple_3", "result": ""}])
    with pytest.raises(BfclDataError, match=r":2: id 'multiple_3' is not a simple_python id"):
        bfcl.read_results(path)
    _write_jsonl(path, [good, good])
    with pytest.raises(BfclDataError, match=r":2: duplicate id 'simple_python_0' \(line 1\)"):
        bfcl.read_results(path)
    odd = _write_jsonl(tmp_path / "BFCL_v4_sql_result.json", [good])
    with pytest.raises(BfclDataError, match="not a result file of a known category"):
        bfcl.read_results(odd)
    with pytest.raises(BfclDataError, match="no result files for category 'multiple'"):
        bfcl.read_result_dir(tmp_path, ["multiple"])


def test_scoring_rejects_unknown_ids_and_missing_results(tmp_path):
    rows = [
        {"id": "simple_python_0", "result": "[math.factorial(number=5)]"},
        {"id": "simple_python_9", "result": "[]"},
    ]
    path = _write_jsonl(tmp_path / "BFCL_v4_simple_python_result.json", rows)
    items = [MATH._replace(id="simple_python_0"), MATH._replace(id="simple_python_1")]
    with pytest.raises(BfclDataError, match=f"{path}:2: unknown id 'simple_python_9'"):
        bfcl.score_results(items, bfcl.read_results(path), system="s", style="prompt")
    one = bfcl.read_results(path)[:1]
    with pytest.raises(BfclDataError, match="no result for 'simple_python_1'"):
        bfcl.score_results(items, one, system="s", style="prompt")
    partial = bfcl.score_results(items, one, system="s", style="prompt", allow_missing=True)
    assert partial["id"].tolist() == ["simple_python_0"] and partial["valid"].all()


# --------------------------------------------------------------------------- metrics


def _frame(rows: list[tuple]) -> pd.DataFrame:
    verdicts = [
        bfcl.Verdict(system, cat, f"{cat}_{i}", valid, etype, None, None, "", params or [])
        for i, (system, cat, valid, etype, params) in enumerate(rows)
    ]
    return bfcl.verdict_frame(verdicts)


def test_category_accuracy_with_wilson_intervals():
    frame = _frame([("A", "simple_python", v, None if v else "e", None) for v in (1, 1, 1, 0)])
    row = bfcl.category_table(frame).iloc[0]
    z, n, p = 1.959963984540054, 4, 3 / 4
    center = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert (row["n"], row["correct"], row["accuracy"]) == (4, 3, 0.75)
    assert row["ci_low"] == pytest.approx(center - half)
    assert row["ci_high"] == pytest.approx(center + half)


def test_error_table_and_systems_table():
    frame = _frame(
        [
            ("A", "multiple", False, "x", None),
            ("A", "multiple", False, "x", None),
            ("A", "multiple", False, "y", None),
            ("A", "multiple", True, None, None),
            ("B", "multiple", True, None, None),
            ("B", "simple_python", False, "x", None),
        ]
    )
    errors = bfcl.error_table(frame)
    assert errors[["system", "test_category", "error_type", "count"]].values.tolist() == [
        ["A", "multiple", "x", 2],
        ["A", "multiple", "y", 1],
        ["B", "simple_python", "x", 1],
    ]
    assert errors["share"].tolist() == pytest.approx([2 / 4, 1 / 4, 1 / 1])
    systems = bfcl.systems_table(bfcl.category_table(frame))
    assert list(systems.columns) == ["simple_python", "multiple"]  # leaderboard order
    assert systems.loc["A", "multiple"] == 1 / 4 and systems.loc["B", "simple_python"] == 0
    assert math.isnan(systems.loc["A", "simple_python"])


def test_per_parameter_accuracy():
    def p(param, called, correct):
        return {
            "function": "f",
            "param": param,
            "type": "string",
            "called": called,
            "correct": correct,
        }

    frame = _frame(
        [
            ("A", "simple_python", True, None, [p("a", True, True), p("b", True, True)]),
            ("A", "simple_python", False, "e", [p("a", True, False), p("b", True, True)]),
            ("A", "simple_python", False, "e", [p("a", False, False), p("b", False, False)]),
        ]
    )
    table = bfcl.param_accuracy(frame).set_index("param")
    assert table.loc["a", "accuracy"] == 1 / 3 and table.loc["b", "accuracy"] == 2 / 3
    assert table.loc["a", "accuracy_when_called"] == 1 / 2
    assert table.loc["b", "accuracy_when_called"] == 2 / 2
    by_type = bfcl.param_accuracy(frame, by=("type",)).iloc[0]
    assert (by_type["n"], by_type["correct"]) == (6, 3)


def test_overall_aggregation_formula():
    acc = {
        "simple_python": 0.9,
        "multiple": 0.8,
        "parallel": 0.7,
        "parallel_multiple": 0.6,
        "irrelevance": 0.5,
        "live_simple": 0.4,
        "live_multiple": 0.3,
        "live_parallel": 0.2,
        "live_parallel_multiple": 0.1,
        "live_irrelevance": 0.6,
        "live_relevance": 0.75,
    }
    table = pd.DataFrame(
        [("S", c, a, bfcl.CATEGORY_SIZES[c]) for c, a in acc.items()],
        columns=["system", "test_category", "accuracy", "n"],
    )
    row = bfcl.overall_table(table).iloc[0]
    non_live = ((0.9 + 0 + 0) / 3 + 0.8 + 0.7 + 0.6) / 4  # Java and JavaScript count as 0
    live = (0.4 * 258 + 0.3 * 1053 + 0.2 * 16 + 0.1 * 24) / (258 + 1053 + 16 + 24)
    irrelevance = (0.5 + 0.6) / 2
    assert row["non_live"] == pytest.approx(non_live)
    assert row["live"] == pytest.approx(live)
    assert row["irrelevance"] == pytest.approx(irrelevance)
    assert row["relevance"] == 0.75
    assert row["overall"] == pytest.approx((10 * non_live + 10 * live + 10 * irrelevance) / 100)
    assert "simple_java" in row["missing"] and "memory_kv" in row["missing"]
    # a missing live category still weighs with its full size, at accuracy 0
    without = bfcl.overall_table(table[table["test_category"] != "live_parallel"]).iloc[0]
    assert without["live"] == pytest.approx((0.4 * 258 + 0.3 * 1053 + 0.1 * 24) / 1351)


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
    records = bfcl.to_records(verdicts)
    assert records[1].error == "Invalid value for parameter 'base': 1. Expected one of [10]."
    assert records[1].model_dump()["params"][0] == {
        "function": "area",
        "param": "base",
        "type": "integer",
        "called": True,
        "correct": False,
    }


# =========================================================================== the study


NOOP = ChatRequest(messages=[])


def reply_raw(it: Item, mistake: str, mode: str, seed: int = 0):
    """What a simulated system outputs for ``mistake``, in result-file form."""
    rng = np.random.default_rng(seed)
    reply = bfcl.sim_respond(NOOP, SimSpec(), rng, item=it, mode=mode, mistake=mistake)
    if mode == "tools" and reply.tool_calls:
        return bfcl.fc_result((c.name, c.arguments) for c in reply.tool_calls)
    return reply.text or ""


def judged(it: Item, raw, mode: str) -> str | None:
    """The checker's error type, None for a valid verdict (as the official runner counts)."""
    style = "fc" if mode == "tools" else "prompt"
    result = bfcl.check(it, bfcl.decode(raw, style), underscore_to_dot=mode == "tools")
    return None if result.valid else result.error_type


# --------------------------------------------------------------------------- prompts and tools


ASKED = Item(
    "live_simple_0-0-0",
    "live_simple",
    [[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "5!?"}]],
    MATH.functions,
    MATH.possible_answer,
)


def test_prompt_mode_puts_the_official_instructions_and_docs_in_the_system_prompt():
    messages = bfcl.prompt_messages(MATH)
    assert [m["role"] for m in messages] == ["system", "user"]
    prompt = messages[0]["content"]
    assert prompt.startswith("You are an expert in composing functions.")
    assert "[func_name1(params_name1=params_value1, params_name2=params_value2...)" in prompt
    docs = json.loads(prompt.split("that you can invoke.\n", 1)[1])
    assert docs[0]["name"] == "math.factorial"
    assert docs[0]["description"] == "" + bfcl.PYTHON_HINT  # the official Python 3 note
    assert MATH.functions[0]["description"] == ""  # the item is not mutated
    # a question's own system message follows the instructions (official behaviour)
    own = bfcl.prompt_messages(ASKED)
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
    [tool] = bfcl.to_openai_tools([doc])
    assert tool["type"] == "function"
    function = tool["function"]
    assert function["name"] == "geo_distance"  # OpenAI forbids dots
    assert function["description"] == "" + bfcl.PYTHON_HINT
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
    prompt = bfcl.build_request(MATH, "prompt")
    assert prompt.tools is None and prompt.messages[0]["role"] == "system"
    tools = bfcl.build_request(MATH, "tools")
    assert tools.messages == [{"role": "user", "content": "q"}]
    assert tools.tools[0]["function"]["name"] == "math_factorial"
    bare = MATH._replace(category="live_irrelevance", functions=[], possible_answer=None)
    assert bfcl.build_request(bare, "tools").tools is None  # OpenAI rejects an empty list
    with pytest.raises(ValueError, match="unknown mode 'json'"):
        bfcl.build_request(MATH, "json")
    called = ResponseRecord(
        system="s",
        key="k",
        text=None,
        tool_calls=[{"name": "math_factorial", "arguments": '{"number": 5}'}],
    )
    assert bfcl.response_result(called, "tools") == [{"math_factorial": '{"number": 5}'}]
    prose = ResponseRecord(system="s", key="k", text="No tool fits.")
    assert bfcl.response_result(prose, "tools") == "No tool fits."
    assert bfcl.response_result(prose, "prompt") == "No tool fits."
    assert bfcl.response_result(ResponseRecord(system="s", key="k"), "prompt") == ""


# --------------------------------------------------------------------------- simulation


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
    [call] = bfcl.correct_calls(DICTS)
    assert call == Call("book", {"prefs": {"size": "Large"}, "rows": [{"k": "v"}], "seats": 2})
    assert verdict(DICTS, bfcl.render_calls([call])).valid
    assert bfcl.correct_calls(AREA) == [Call("area", {"base": 10, "height": 5})]
    assert bfcl.correct_calls(PAIR) == [Call("f", {"a": 1}), Call("f", {"a": 2})]
    assert bfcl.render_calls(bfcl.correct_calls(PAIR)) == "[f(a=1), f(a=2)]"


def test_applicable_mistakes_follow_the_item_shape():
    assert bfcl.applicable_mistakes(AREA, "prompt") == (
        "wrong_value",
        "wrong_type",
        "missing_required",
        "extra_param",
    )
    assert "wrong_function" in bfcl.applicable_mistakes(CHOICE, "prompt")
    assert "dropped_call" in bfcl.applicable_mistakes(PAIR, "prompt")
    assert bfcl.applicable_mistakes(NONE_FITS, "tools") == ("hallucinated_call",)
    nothing = NONE_FITS._replace(category="live_irrelevance", functions=[])
    assert bfcl.applicable_mistakes(nothing, "tools") == ()  # no tool to call
    assert bfcl.applicable_mistakes(nothing, "prompt") == ("hallucinated_call",)
    relevant = item("live_relevance", [fn("f", {"a": INT})], None)
    assert bfcl.applicable_mistakes(relevant, "prompt") == ("missed_call",)
    # a string parameter is never "a number given as a string"
    words = item("simple_python", [fn("f", {"s": STR})], [{"f": {"s": ["x"]}}])
    assert "wrong_type" not in bfcl.applicable_mistakes(words, "prompt")


RELEVANT = item("live_relevance", [fn("f", {"a": INT}, ("a",))], None)


@pytest.mark.parametrize("mode", bfcl.MODES)
@pytest.mark.parametrize(
    ("it", "mistake", "expected"),
    [
        (AREA, "none", None),
        (AREA, "wrong_value", "value_error:others"),
        (AREA, "wrong_type", "type_error:simple"),
        (AREA, "missing_required", "simple_function_checker:missing_required"),
        (AREA, "extra_param", "simple_function_checker:unexpected_param"),
        (AREA, "malformed", "ast_decoder:decoder_failed"),
        (MATH, "extra_param", "simple_function_checker:unexpected_param"),
        (CHOICE, "wrong_function", "simple_function_checker:wrong_func_name"),
        (PAIR, "dropped_call", "parallel_function_checker_no_order:wrong_count"),
        (PAIR, "wrong_value", "parallel_function_checker_no_order:cannot_find_match"),
        (NONE_FITS, "hallucinated_call", "irrelevance_error:decoder_success"),
        (NONE_FITS, "none", None),
        (NONE_FITS, "malformed", None),  # an unreadable output abstains, as officially
        (RELEVANT, "none", None),
        (RELEVANT, "missed_call", "relevance_error:decoder_failed"),
        (RELEVANT, "malformed", "relevance_error:decoder_failed"),
    ],
)
def test_each_injected_mistake_gets_its_official_error_type(it, mistake, expected, mode):
    got = judged(it, reply_raw(it, mistake, mode), mode)
    assert got == expected
    assert got in bfcl.expected_error_types(it.category, mistake)


def test_tools_mode_replies_are_openai_tool_calls_with_dot_free_names():
    reply = bfcl.sim_respond(
        NOOP, SimSpec(), np.random.default_rng(0), item=MATH, mode="tools", mistake="none"
    )
    assert reply.text is None and reply.finish_reason == "tool_calls"
    [call] = reply.tool_calls
    assert (call.name, json.loads(call.arguments)) == ("math_factorial", {"number": 5})
    broken = bfcl.sim_respond(
        NOOP, SimSpec(), np.random.default_rng(0), item=MATH, mode="tools", mistake="malformed"
    )
    assert broken.tool_calls[0].arguments == '{"number": 5'  # truncated JSON
    prose = bfcl.sim_respond(
        NOOP, SimSpec(), np.random.default_rng(0), item=NONE_FITS, mode="tools", mistake="none"
    )
    assert prose.tool_calls == () and prose.text


def test_plan_mistake_rates_follow_the_knobs():
    knobs = SimSpec(accuracy={"simple_python": 0.7, "default": 0.2}, malformed_rate=0.1)
    rng = np.random.default_rng(7)
    n = 4000
    plans = pd.Series([bfcl.plan_mistake(AREA, knobs, "prompt", rng) for _ in range(n)])
    shares = plans.value_counts() / n
    # P(malformed) = 0.1; P(none) = 0.9 * 0.7; the rest split evenly over 4 mistakes
    for kind, p in [("malformed", 0.1), ("none", 0.9 * 0.7)]:
        assert abs(shares[kind] - p) < 4 * math.sqrt(p * (1 - p) / n)
    for kind in bfcl.applicable_mistakes(AREA, "prompt"):
        p = 0.9 * 0.3 / 4
        assert abs(shares[kind] - p) < 4 * math.sqrt(p * (1 - p) / n)
    other = MATH._replace(category="multiple")  # falls back to the "default" accuracy
    none = sum(bfcl.plan_mistake(other, knobs, "prompt", rng) == "none" for _ in range(n)) / n
    assert abs(none - 0.9 * 0.2) < 4 * math.sqrt(0.18 * 0.82 / n)
    lone = NONE_FITS._replace(category="live_irrelevance", functions=[])
    assert bfcl.plan_mistake(lone, SimSpec(accuracy=0.0), "tools", rng) == "none"  # nothing to do


def test_sim_answers_on_every_public_item_get_the_implied_verdict(public_items):
    # A correct answer exists for every item but five whose possible answer disagrees with
    # the function doc (a required parameter missing from the answer, or an undeclared one).
    unreachable = {
        it.id
        for it in public_items
        if it.category not in bfcl.RELEVANCE_CATEGORIES
        and judged(it, bfcl.render_calls(bfcl.correct_calls(it)), "prompt") is not None
    }
    assert unreachable == {
        "live_simple_106-63-0",
        "live_simple_112-68-0",
        "live_multiple_507-149-4",
        "live_multiple_862-181-3",
        "live_multiple_964-207-0",
    }
    wrong = []
    for it in public_items[::5]:  # every 5th item, both modes, every applicable mistake
        if it.id in unreachable:
            continue
        for mode in bfcl.MODES:
            for mistake in ("none", "malformed", *bfcl.applicable_mistakes(it, mode)):
                got = judged(it, reply_raw(it, mistake, mode, seed=len(it.id)), mode)
                allowed = bfcl.expected_error_types(it.category, mistake)
                if got not in allowed:
                    wrong.append((it.id, mode, mistake, got))
    assert wrong == []


# --------------------------------------------------------------------------- params


def _params(tmp_path: Path, **fields) -> bfcl.BfclParams:
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump({"study": "bfcl", "title": "t", **fields}))
    return load_params(path)  # type: ignore[return-value]


def test_params_validate_names_modes_and_sources(tmp_path):
    sims = [{"name": "a", "provider": "sim"}, {"name": "b", "provider": "sim"}]
    params = _params(tmp_path, categories="live", systems=sims, system_modes={"b": "tools"})
    assert params.categories == list(bfcl.LIVE)
    assert (params.mode_of("a"), params.mode_of("b")) == ("prompt", "tools")
    assert [s.name for s in params.model_specs()] == ["a", "b"] and params.simulated
    public = _params(tmp_path, result_sets=[{"name": "g", "model": "glyphh-ada-1.1"}])
    assert public.result_sets[0].decode_style == "fc" and public.model_specs() == []
    assert not public.simulated
    (tmp_path / "res").mkdir()
    local = _params(tmp_path, result_sets=[{"name": "m", "folder": "res"}])
    assert local.result_sets[0].folder == str(tmp_path / "res")
    assert local.result_sets[0].decode_style == "auto"
    bad = [
        ({}, "at least one entry"),
        ({"systems": [*sims, sims[0]]}, "names must be unique"),
        ({"systems": sims, "system_modes": {"c": "tools"}}, "unknown system 'c'"),
        ({"systems": sims, "mode": "json"}, "mode: expected one of"),
        ({"systems": sims, "categories": ["simple"]}, "unknown BFCL category 'simple'"),
        ({"result_sets": [{"name": "x"}]}, "exactly one of 'model', 'folder'"),
        ({"result_sets": [{"name": "x", "model": "nobody"}]}, "no registered BFCL results"),
        ({"result_sets": [{"name": "x", "folder": "nowhere"}]}, "data path not found"),
        (
            {
                "categories": "live",
                "result_sets": [
                    {"name": "x", "model": "glyphh-ada-1.1", "categories": ["multiple"]}
                ],
            },
            "categories \\['multiple'\\] are not studied",
        ),
    ]
    for fields, message in bad:
        with pytest.raises(ParamsError, match=message):
            _params(tmp_path, **fields)


def test_shipped_params_files_load():
    root = Path(__file__).resolve().parents[1] / "params"
    public = load_params(root / "bfcl_public.yaml")
    assert [r.name for r in public.result_sets] == list(bfcl.PUBLIC_SYSTEMS)
    demo = load_params(root / "bfcl_demo.yaml")
    modes = {s.name: demo.mode_of(s.name) for s in demo.systems}
    assert sorted(modes.values()) == ["prompt", "prompt", "tools"] and demo.simulated


# --------------------------------------------------------------------------- the study end to end


def _gorilla(root: Path) -> Path:
    """A small gorilla checkout: 12 items in each of five categories."""
    data = root / "berkeley-function-call-leaderboard" / "bfcl_eval" / "data"
    area = fn("geo.area", {"base": INT, "height": INT, "unit": STR}, ("base", "height"))
    pick = [fn("g", {"x": INT}, ("x",)), fn("h", {"x": INT, "y": FLOAT}, ("x",))]
    city = fn("weather", {"city": STR}, ("city",))
    rows: dict[str, list] = {c: [] for c in bfcl.CATEGORIES}
    answers: dict[str, list] = {c: [] for c in bfcl.CATEGORIES}
    for i in range(12):
        ask = [[{"role": "user", "content": f"question {i}"}]]
        add = [
            (
                "simple_python",
                f"simple_python_{i}",
                [area],
                [{"geo.area": {"base": [i], "height": [i + 1], "unit": ["", "cm"]}}],
            ),
            ("multiple", f"multiple_{i}", pick, [{"h": {"x": [i], "y": ["", 2.5]}}]),
            (
                "parallel",
                f"parallel_{i}",
                [city],
                [{"weather": {"city": [f"City {i}"]}}, {"weather": {"city": ["Paris"]}}],
            ),
            ("irrelevance", f"irrelevance_{i}", [city], None),
            ("live_relevance", f"live_relevance_{i}-0-0", [city], None),
        ]
        for cat, item_id, functions, truth in add:
            rows[cat].append({"id": item_id, "question": ask, "function": functions})
            if truth is not None:
                answers[cat].append({"id": item_id, "ground_truth": truth})
    for cat, items_ in rows.items():
        if items_:
            _write_jsonl(data / f"BFCL_v4_{cat}.json", items_)
        if answers[cat]:
            _write_jsonl(data / "possible_answer" / f"BFCL_v4_{cat}.json", answers[cat])
    return root


STUDY_CATEGORIES = ["simple_python", "multiple", "parallel", "irrelevance", "live_relevance"]


def _study_file(tmp_path: Path, **fields) -> Path:
    _gorilla(tmp_path / "gorilla")
    body = {
        "study": "bfcl",
        "title": "test",
        "data": "gorilla",
        "categories": STUDY_CATEGORIES,
        "systems": [
            {"name": "tooly", "provider": "sim", "sim": {"accuracy": 0.5, "malformed_rate": 0.1}},
            {
                "name": "texty",
                "provider": "sim",
                "sim": {"accuracy": 0.6, "malformed_rate": 0.1, "error_rate": 0.1},
            },
        ],
        "system_modes": {"tooly": "tools"},
        **fields,
    }
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(body))
    return path


def test_live_study_generates_checks_writes_official_files_and_resumes(tmp_path):
    path = _study_file(tmp_path)
    run = open_run(path)
    items = bfcl.load_study_items(run.params)
    assert len(items) == 5 * 12
    verdicts = bfcl.run_study(run, items)
    # one record per (system, category, id), with the fields the issue names
    records = read_jsonl(run.dir / "records" / "bfcl.jsonl")
    assert len(records) == 2 * 60
    keys = {(r["system"], r["test_category"], r["id"]) for r in records}
    assert len(keys) == len(records)
    assert {"system", "test_category", "id", "valid", "error_type"} <= set(records[0])
    bfcl.VerdictRecord.model_validate(records[0])  # the records follow the schema
    assert set(verdicts["mode"]) == {"tools", "prompt"}
    # every verdict is what the injected mistake implies, or a simulated API failure
    truth = bfcl.injected_vs_detected(verdicts)
    off = truth[~truth["as_expected"]]
    assert set(off["verdict"]) <= {bfcl.CALL_FAILED}
    failed = verdicts[verdicts["error_type"] == bfcl.CALL_FAILED]
    assert set(failed["system"]) == {"texty"} and len(failed) > 0  # texty's error rate
    assert {"none", "malformed"} <= set(verdicts["injected"])
    # official result files: re-read and re-scored they give the same verdicts (interop)
    for system, style, u2d in [("tooly", "fc", True), ("texty", "prompt", False)]:
        folder = run.dir / "bfcl_results" / system
        assert (folder / "non_live" / "BFCL_v4_simple_python_result.json").is_file()
        assert (folder / "live" / "BFCL_v4_live_relevance_result.json").is_file()
        lines = bfcl.read_result_dir(folder)
        ours = verdicts[
            (verdicts["system"] == system) & (verdicts["error_type"] != bfcl.CALL_FAILED)
        ]
        assert sorted(line.id for line in lines) == sorted(ours["id"])  # failed calls left out
        again = bfcl.score_results(
            items, lines, system=system, style=style, underscore_to_dot=u2d, allow_missing=True
        )
        merged = again.merge(ours, on="id")
        assert (merged["valid_x"] == merged["valid_y"]).all()
        assert (merged["error_type_x"].fillna("") == merged["error_type_y"].fillna("")).all()
    tools_line = bfcl.read_results(
        run.dir / "bfcl_results" / "tooly" / "non_live" / "BFCL_v4_simple_python_result.json"
    )[0]
    assert isinstance(tools_line.result, (list, str)) and tools_line.latency is not None
    # a rerun resumes: no request for answered items, identical verdicts
    rerun = open_run(path)
    again = bfcl.run_study(rerun, items)
    assert rerun.ledger.summary().get("tooly", {}).get("requests", 0) == 0
    pd.testing.assert_frame_equal(
        again.drop(columns=["latency"]), verdicts.drop(columns=["latency"])
    )


def test_planned_mistakes_do_not_depend_on_the_subset(tmp_path):
    run = open_run(_study_file(tmp_path))
    items = bfcl.load_study_items(run.params)
    spec = run.params.systems[0]
    full = {j.key: j.sim.truth["mistake"] for j in bfcl.answer_jobs(items, spec, "tools", seed=0)}
    part = bfcl.answer_jobs(items[::7], spec, "tools", seed=0)
    assert all(full[j.key] == j.sim.truth["mistake"] for j in part)
    real = ModelSpec(name="real", provider="openai", model="m")
    assert all(j.sim is None for j in bfcl.answer_jobs(items[:3], real, "prompt", seed=0))
    other_seed = bfcl.answer_jobs(items, spec, "tools", seed=1)
    assert [j.sim.truth["mistake"] for j in other_seed] != list(full.values())


def _result_folder(tmp_path: Path, rows: list) -> Path:
    folder = tmp_path / "results" / "mine"
    _write_jsonl(folder / "non_live" / "BFCL_v4_simple_python_result.json", rows)
    return tmp_path / "results"


def test_result_set_folders_subsets_and_their_errors(tmp_path):
    _gorilla(tmp_path / "gorilla")
    good = [
        {"id": f"simple_python_{i}", "result": f"[geo.area(base={i}, height={i + 1})]"}
        for i in range(12)
    ]
    folder = _result_folder(tmp_path, good)
    common = {"data": "gorilla", "categories": ["simple_python", "multiple"]}
    params = _params(
        tmp_path,
        result_sets=[{"name": "m", "folder": "results", "style": "prompt"}],
        limit_per_category=3,
        **common,
    )
    items = bfcl.load_study_items(params)
    known = {it.id for it in bfcl.load(params.categories, source=params.data)}
    scored = bfcl.score_result_set(params.result_sets[0], items, known)
    # results of known items outside the 3-item subset are skipped; multiple is not submitted
    assert scored["id"].tolist() == ["simple_python_0", "simple_python_1", "simple_python_2"]
    assert scored["valid"].all() and set(scored["mode"]) == {"results"}
    # an unknown id is an error naming file and line, even when a subset is scored
    _write_jsonl(
        folder / "mine" / "non_live" / "BFCL_v4_simple_python_result.json",
        [*good, {"id": "simple_python_99", "result": "[]"}],
    )
    with pytest.raises(BfclDataError, match=r"BFCL_v4_simple_python_result.json:13: unknown id"):
        bfcl.score_result_set(params.result_sets[0], items, known)
    # a bad JSON line names file and line
    _write_jsonl(
        folder / "mine" / "non_live" / "BFCL_v4_simple_python_result.json", [good[0], "{broken"]
    )
    with pytest.raises(BfclDataError, match=r"BFCL_v4_simple_python_result.json:2: not a valid"):
        bfcl.score_result_set(params.result_sets[0], items, known)
    # a category the set must cover but has no file for
    strict = _params(
        tmp_path,
        result_sets=[{"name": "m", "folder": "results", "categories": ["multiple"]}],
        **common,
    )
    with pytest.raises(BfclDataError, match="no result files for category 'multiple'"):
        bfcl.score_result_set(strict.result_sets[0], bfcl.load_study_items(strict))


# --------------------------------------------------------------------------- report helpers


def test_report_helpers_on_a_hand_table():
    frame = _frame(
        [
            ("B", "simple_python", True, None, None),
            ("B", "simple_python", False, "type_error:simple", None),
            ("A", "simple_python", False, "value_error:string", None),
            ("A", "irrelevance", True, None, None),
        ]
    ).assign(mode="results")
    values, labels = bfcl.accuracy_matrix(bfcl.category_table(frame), order=["B", "A"])
    assert values.index.tolist() == ["B", "A"]
    assert values.loc["B", "simple_python"] == 1 / 2
    z, n, p = 1.959963984540054, 2, 1 / 2  # Wilson: centre stays 0.5 for p = 1/2
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert labels.loc["B", "simple_python"] == f"0.50\n[{0.5 - half:.2f}, {0.5 + half:.2f}]"
    assert labels.loc["B", "irrelevance"] == ""  # B has no irrelevance result
    errors = bfcl.error_matrix(frame)
    assert errors.loc["type_error:simple", "B"] == 1 and errors.loc["type_error:simple", "A"] == 0
    coverage = bfcl.coverage_table(frame, ["simple_python", "irrelevance"])
    assert coverage.set_index("system").loc["B", "not submitted"] == "irrelevance"
    assert coverage.set_index("system").loc["A", "items"] == 2


def test_failure_examples_show_question_expected_and_decoded():
    items = [AREA, NONE_FITS]
    lines = [
        ResultLine(AREA.id, AREA.category, "[area(base=10, height=6)]"),
        ResultLine(NONE_FITS.id, NONE_FITS.category, "[f(a=1)]"),
    ]
    verdicts = bfcl.score_results(items, lines, system="s", style="prompt")
    examples = bfcl.failure_examples(verdicts, items, per_system=5)
    assert len(examples) == 2
    by_id = {e["id"]: e for e in examples}
    area = by_id[AREA.id]
    assert area["question"] == "q" and area["error_type"] == "value_error:others"
    assert json.loads(area["expected"]) == AREA.possible_answer
    assert json.loads(area["decoded"]) == [{"area": {"base": 10, "height": 6}}]
    assert by_id[NONE_FITS.id]["expected"].startswith("no function call")


# --------------------------------------------------------------------------- published scores


def test_glyphh_matches_every_published_number(public_items, mirror, tmp_path):
    params = _params(
        tmp_path,
        result_sets=[
            {
                "name": "glyphh",
                "model": "glyphh-ada-1.1",
                "leaderboard_model": "Glyphh Ada 1.1 (HDC+FC)",
            }
        ],
    )
    verdicts = bfcl.score_result_set(params.result_sets[0], public_items)
    summary = bfcl.summarize(verdicts, extra_categories=bfcl.published_extras(params))
    table = bfcl.leaderboard_comparison(summary, params).set_index("metric")
    compared = table.dropna(subset=["published"])
    assert len(compared) == 10 + 5  # 10 submitted categories, 5 aggregates with a number
    # published percentages have two decimals: agreement to rounding (half of 0.0001)
    assert (compared["difference"].abs() <= 0.00005).all()
    assert table.loc["overall", "published"] == 0.7450
    assert math.isnan(table.loc["relevance", "published"])  # N/A: no relevance file submitted
    with pytest.raises(BfclDataError, match="no model 'Nobody'"):
        bfcl.published_row("data_overall", "Nobody")
