"""BFCL metrics: accuracy with Wilson intervals, the leaderboard's aggregation (reproducing
a published row), errors, per-parameter accuracy, report tables, the simulator's truth."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from bfcl.cases import AREA, NONE_FITS, python_results, verdict_rows

from evalbench import bfcl, sources
from evalbench.bfcl import metrics
from evalbench.bfcl.metrics import (
    accuracy_matrix,
    category_table,
    coverage_table,
    error_matrix,
    error_table,
    failure_examples,
    overall_table,
    param_accuracy,
    systems_table,
)
from evalbench.bfcl.schema import CALL_FAILED, CATEGORY_SIZES, ResultLine


@pytest.mark.slow
def test_aggregates_reproduce_the_published_leaderboard_row(public_items, mirror):
    verdicts = bfcl.score_results(
        public_items, python_results("glyphh-ada-1.1"), system="glyphh", style="fc"
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


# --------------------------------------------------------------------------- metrics


def test_category_accuracy_with_wilson_intervals():
    frame = verdict_rows(
        [("A", "simple_python", v, None if v else "e", None) for v in (1, 1, 1, 0)]
    )
    row = category_table(frame).iloc[0]
    z, n, p = 1.959963984540054, 4, 3 / 4
    center = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert (row["n"], row["correct"], row["accuracy"]) == (4, 3, 0.75)
    assert row["ci_low"] == pytest.approx(center - half)
    assert row["ci_high"] == pytest.approx(center + half)


def test_error_table_and_systems_table():
    frame = verdict_rows(
        [
            ("A", "multiple", False, "x", None),
            ("A", "multiple", False, "x", None),
            ("A", "multiple", False, "y", None),
            ("A", "multiple", True, None, None),
            ("B", "multiple", True, None, None),
            ("B", "simple_python", False, "x", None),
        ]
    )
    errors = error_table(frame)
    assert errors[["system", "test_category", "error_type", "count"]].values.tolist() == [
        ["A", "multiple", "x", 2],
        ["A", "multiple", "y", 1],
        ["B", "simple_python", "x", 1],
    ]
    assert errors["share"].tolist() == pytest.approx([2 / 4, 1 / 4, 1 / 1])
    systems = systems_table(category_table(frame))
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

    frame = verdict_rows(
        [
            ("A", "simple_python", True, None, [p("a", True, True), p("b", True, True)]),
            ("A", "simple_python", False, "e", [p("a", True, False), p("b", True, True)]),
            ("A", "simple_python", False, "e", [p("a", False, False), p("b", False, False)]),
        ]
    )
    table = param_accuracy(frame).set_index("param")
    assert table.loc["a", "accuracy"] == 1 / 3 and table.loc["b", "accuracy"] == 2 / 3
    assert table.loc["a", "accuracy_when_called"] == 1 / 2
    assert table.loc["b", "accuracy_when_called"] == 2 / 2
    by_type = param_accuracy(frame, by=("type",)).iloc[0]
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
        [("S", c, a, CATEGORY_SIZES[c]) for c, a in acc.items()],
        columns=["system", "test_category", "accuracy", "n"],
    )
    row = overall_table(table).iloc[0]
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
    without = overall_table(table[table["test_category"] != "live_parallel"]).iloc[0]
    assert without["live"] == pytest.approx((0.4 * 258 + 0.3 * 1053 + 0.1 * 24) / 1351)


# --------------------------------------------------------------------------- report helpers


def test_report_helpers_on_a_hand_table():
    frame = verdict_rows(
        [
            ("B", "simple_python", True, None, None),
            ("B", "simple_python", False, "type_error:simple", None),
            ("A", "simple_python", False, "value_error:string", None),
            ("A", "irrelevance", True, None, None),
        ]
    ).assign(mode="results")
    values, labels = accuracy_matrix(category_table(frame), order=["B", "A"])
    assert values.index.tolist() == ["B", "A"]
    assert values.loc["B", "simple_python"] == 1 / 2
    z, n, p = 1.959963984540054, 2, 1 / 2  # Wilson: centre stays 0.5 for p = 1/2
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert labels.loc["B", "simple_python"] == f"0.50\n[{0.5 - half:.2f}, {0.5 + half:.2f}]"
    assert labels.loc["B", "irrelevance"] == ""  # B has no irrelevance result
    errors = error_matrix(frame)
    assert errors.loc["type_error:simple", "B"] == 1 and errors.loc["type_error:simple", "A"] == 0
    coverage = coverage_table(frame, ["simple_python", "irrelevance"])
    assert coverage.set_index("system").loc["B", "not submitted"] == "irrelevance"
    assert coverage.set_index("system").loc["A", "items"] == 2


def test_failure_examples_show_question_expected_and_decoded():
    items = [AREA, NONE_FITS]
    lines = [
        ResultLine(AREA.id, AREA.category, "[area(base=10, height=6)]"),
        ResultLine(NONE_FITS.id, NONE_FITS.category, "[f(a=1)]"),
    ]
    verdicts = bfcl.score_results(items, lines, system="s", style="prompt")
    examples = failure_examples(verdicts, items, per_system=5)
    assert len(examples) == 2
    by_id = {e["id"]: e for e in examples}
    area = by_id[AREA.id]
    assert area["question"] == "q" and area["error_type"] == "value_error:others"
    assert json.loads(area["expected"]) == AREA.possible_answer
    assert json.loads(area["decoded"]) == [{"area": {"base": 10, "height": 6}}]
    assert by_id[NONE_FITS.id]["expected"].startswith("no function call")


# --------------------------------------------------------------------------- answered items


FAILED_CALLS = [
    ("A", "simple_python", True, None, None),
    ("A", "simple_python", False, "value_error:others", None),
    ("A", "simple_python", False, CALL_FAILED, None),
    ("A", "multiple", False, CALL_FAILED, None),
    ("B", "simple_python", True, None, None),
]


def test_accuracy_over_answered_items_leaves_failed_calls_out():
    table = category_table(verdict_rows(FAILED_CALLS)).set_index(["system", "test_category"])
    a = table.loc[("A", "simple_python")]
    assert (a["n"], a["correct"], a["answered"]) == (3, 1, 2)
    assert a["accuracy"] == 1 / 3 and a["accuracy_answered"] == 1 / 2
    only_failed = table.loc[("A", "multiple")]
    assert only_failed["answered"] == 0 and math.isnan(only_failed["accuracy_answered"])
    assert table.loc[("B", "simple_python"), "accuracy_answered"] == 1.0


def test_system_accuracy_pools_categories():
    frame = verdict_rows(FAILED_CALLS).assign(mode="prompt")
    table = metrics.system_accuracy(frame, ["simple_python", "multiple"]).set_index("system")
    a = table.loc["A"]
    # A: 1 valid of 4 items; 2 calls failed, so 1 valid of the 2 answered
    assert (a["items"], a["failed calls"], a["not submitted"]) == (4, 2, "")
    assert a["accuracy"] == 1 / 4 and a["accuracy_answered"] == 1 / 2
    z, n, p = 1.959963984540054, 4, 1 / 4
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    center = (p + z * z / (2 * n)) / (1 + z * z / n)
    assert a["accuracy_low"] == pytest.approx(center - half)
    assert a["accuracy_high"] == pytest.approx(center + half)
    assert table.loc["B", "not submitted"] == "multiple"


def test_accuracy_text_adds_answered_accuracy_where_calls_failed():
    categories = category_table(verdict_rows(FAILED_CALLS))
    table = metrics.accuracy_text(categories, ["B", "A"]).set_index("test_category")
    assert list(table.columns) == ["n", "B", "A"]
    assert table.loc["simple_python", "n"] == 3  # the largest n of the category
    a = categories.set_index(["system", "test_category"]).loc[("A", "simple_python")]
    assert table.loc["simple_python", "A"] == (
        f"0.333 [{a['ci_low']:.3f}, {a['ci_high']:.3f}] · 0.500 of 2 answered"
    )
    assert table.loc["simple_python", "B"] == "1.000 [0.207, 1.000]"  # 1 of 1: no suffix
    assert table.loc["multiple", "A"].endswith("· — of 0 answered")
    assert table.loc["multiple", "B"] == "not submitted"


def test_items_per_category_and_the_official_sizes():
    items = [AREA, AREA, NONE_FITS]
    table = metrics.items_per_category(items)
    assert table.values.tolist() == [["simple_python", 2, 400], ["irrelevance", 1, 240]]


def test_compare_with_published_lines_up_categories_and_aggregates():
    frame = verdict_rows(
        [("A", "simple_python", v, None if v else "e", None) for v in (1, 1, 0, 1)]
    )
    summary = bfcl.summarize(frame)
    published = pd.Series({"simple_python": 0.7499})
    table = metrics.compare_with_published(summary, {"A": (published, {"overall": 0.1})})
    assert table["metric"].tolist() == ["simple_python", "overall"]
    # overall = 10 * non_live / 100, non_live = (simple AST mean over 3 languages) / 4
    overall = 10 * ((0.75 + 0 + 0) / 3 / 4) / 100
    assert table["ours"].tolist() == pytest.approx([0.75, overall])
    assert table["difference"].tolist() == pytest.approx([0.75 - 0.7499, overall - 0.1])


def test_error_shares_and_most_wrong_params():
    frame = verdict_rows(
        [("A", "multiple", False, "x", None)] * 3
        + [("B", "multiple", False, "x", None), ("B", "multiple", False, "y", None)]
    )
    counts, shares = metrics.error_shares(frame, ["B", "A"])
    assert list(counts.columns) == ["B", "A"] and counts.loc["x", "A"] == 3
    assert shares.loc["x", "B"] == 1 / 2 and shares.loc["y", "A"] == 0
    params = pd.DataFrame(
        [("A", "f", "p", 4, 1), ("A", "f", "q", 2, 0), ("A", "g", "r", 5, 3)],
        columns=["system", "function", "param", "n", "correct"],
    )
    top = metrics.most_wrong_params(params, per_system=1)
    assert top[["param", "failed"]].values.tolist() == [["p", 3]]  # q is expected only twice


def test_overall_by_system_orders_rows_and_joins_missing():
    overall = pd.DataFrame(
        {"system": ["A", "B"], "overall": [0.1, 0.2], "missing": [["x", "y"], []]}
    )
    shown = metrics.overall_by_system(overall, ["B", "A"])
    assert shown["system"].tolist() == ["B", "A"]
    assert shown["missing"].tolist() == ["—", "x, y"]
