"""BFCL files: questions and answers (registry, package, checkout), result files."""

from __future__ import annotations

import importlib.util
import json
import types
from pathlib import Path

import pandas as pd
import pytest
from bfcl.cases import INT, fn, write_jsonl

from evalbench import bfcl
from evalbench.bfcl.data import read_result_dir, read_results, write_results
from evalbench.bfcl.schema import CATEGORY_SIZES, PYTHON, BfclDataError, Item, ResultLine
from evalbench.bfcl.scoring import fc_result

# --------------------------------------------------------------------------- loading


def test_registry_load_has_every_category_with_answers(public_items):
    counts = pd.Series([it.category for it in public_items]).value_counts().to_dict()
    assert counts == {cat: CATEGORY_SIZES[cat] for cat in PYTHON}
    for it in public_items:
        has_answer = it.possible_answer is not None
        assert has_answer == (it.category not in bfcl.RELEVANCE_CATEGORIES), it.id
        assert it.question[0][-1]["content"]
        assert it.functions or it.category == "live_irrelevance"  # some offer no function
    first = public_items[0]
    assert (first.id, first.category) == ("simple_python_0", "simple_python")


QUESTION = {
    "id": "simple_python_0",
    "question": [[{"role": "user", "content": "5!?"}]],
    "function": [fn("math.factorial", {"number": INT}, ("number",))],
}
ANSWER = {"id": "simple_python_0", "ground_truth": [{"math.factorial": {"number": [5]}}]}


def _data_folder(data: Path, question=QUESTION, answer=ANSWER) -> Path:
    write_jsonl(data / "BFCL_v4_simple_python.json", [question])
    write_jsonl(data / "possible_answer" / "BFCL_v4_simple_python.json", [answer])
    return data


def test_load_from_an_installed_package(tmp_path, monkeypatch):
    package = tmp_path / "site" / "bfcl_eval"
    _data_folder(package / "data")
    real = importlib.util.find_spec

    def find_spec(name, *args):
        if name == "bfcl_eval":
            return types.SimpleNamespace(submodule_search_locations=[str(package)])
        return real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    [loaded] = bfcl.load("simple_python", source="package")
    assert loaded == Item(
        "simple_python_0",
        "simple_python",
        QUESTION["question"],
        QUESTION["function"],
        ANSWER["ground_truth"],
    )


def test_load_from_a_missing_package_says_so(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
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
    write_jsonl(data / "BFCL_v4_simple_python.json", question_rows)
    write_jsonl(data / "possible_answer" / "BFCL_v4_simple_python.json", answer_rows)
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
    written = write_results(LINES, tmp_path, "org/model-1")
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
    back = read_result_dir(tmp_path / "org_model-1")
    assert [(r.id, r.category, r.result) for r in back] == [
        (r.id, r.category, r.result)
        for r in LINES  # live/ sorts before non_live/
    ]
    assert fc_result([("f", {"x": 1}), ("g", '{"y": 2}')]) == [
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
    path = write_jsonl(tmp_path / "BFCL_v4_simple_python_result.json", [good, "{oops"])
    with pytest.raises(BfclDataError, match=f"{path}:2: not a valid JSON line"):
        read_results(path)
    write_jsonl(path, [good, {"id": "simple_python_1"}])
    with pytest.raises(BfclDataError, match=r":2: field 'result': Field required"):
        read_results(path)
    write_jsonl(path, [good, {"id": "multiple_3", "result": ""}])
    with pytest.raises(BfclDataError, match=r":2: id 'multiple_3' is not a simple_python id"):
        read_results(path)
    write_jsonl(path, [good, good])
    with pytest.raises(BfclDataError, match=r":2: duplicate id 'simple_python_0' \(line 1\)"):
        read_results(path)
    odd = write_jsonl(tmp_path / "BFCL_v4_sql_result.json", [good])
    with pytest.raises(BfclDataError, match="not a result file of a known category"):
        read_results(odd)
    with pytest.raises(BfclDataError, match="no result files for category 'multiple'"):
        read_result_dir(tmp_path, ["multiple"])
