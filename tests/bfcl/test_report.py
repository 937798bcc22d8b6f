"""BFCL report sentences and headlines, on a hand-made result (arithmetic shown)."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from bfcl.cases import hand_made_result, verdict_rows, verdicts

from evalbench.bfcl import report
from evalbench.bfcl.records import BfclResult
from evalbench.bfcl.schema import CALL_FAILED

Z = 1.959963984540054  # the 95% normal quantile


def wilson(k: int, n: int) -> tuple[float, float]:
    """The Wilson interval written out: (p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)."""
    p = k / n
    center = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / (1 + Z * Z / n)
    return max(0.0, center - half), min(1.0, center + half)


@pytest.fixture
def result(tmp_path) -> BfclResult:
    """files: 3 of 4 valid; simmy: 2 of 4 valid, 1 failed call; real: both calls failed."""
    return hand_made_result(tmp_path)


def test_headlines_are_pooled_accuracy_of_the_first_three_systems(result):
    assert report.headlines(result) == {
        "files accuracy (4 items scored)": 3 / 4,
        "simmy accuracy (4 items scored)": 2 / 4,  # the failed call counts as wrong
        # both calls failed: nothing measured, no number
        "real accuracy (2 items scored)": "no result: 0 of 2 items scored — failed call (error) × 2",
    }
    more = result._replace(verdicts=pd.concat([result.verdicts, verdicts([("late", True, None)])]))
    assert len(report.headlines(more)) == 3


def test_key_result_labels_each_system_and_states_failed_calls(result):
    text = report.key_result(result)
    lo, hi = wilson(3, 4)
    assert f"files (result files) 75.0% [{lo:.1%}, {hi:.1%}] of 4 items" in text
    lo, hi = wilson(2, 4)
    # 1 of simmy's 4 calls failed: 2 valid of the 3 answered = 66.7%
    assert (
        f"simmy (simulated) 50.0% [{lo:.1%}, {hi:.1%}] of 4 items — 1 of 4 calls failed: "
        "sim_error × 1; 66.7% of the 3 answered items"
    ) in text
    lo, hi = wilson(0, 2)
    assert (
        f"real (real model) 0.0% [{lo:.1%}, {hi:.1%}] of 2 items — 2 of 2 calls failed: "
        "http_401 × 2; no item answered"
    ) in text
    assert "every system simulated" not in text and text.startswith("<p><b>Key result.</b>")


def test_key_result_escapes_system_names(result):
    odd = result.verdicts.assign(system=result.verdicts["system"].replace("files", "<b>x</b>"))
    text = report.key_result(result._replace(verdicts=odd))
    assert "<b>x</b>" not in text and "&lt;b&gt;x&lt;/b&gt; (real model)" in text


def test_captions_and_the_subset_notice(result):
    assert report.items_caption(result) == (
        "Items per category (data: registry; first 4 items of each category)"
    )
    assert "SUBSET — only the first 4 items" in report.subset_notice(result)
    whole = result._replace(params=result.params.model_copy(update={"limit_per_category": None}))
    assert report.items_caption(whole).endswith("every item)")
    assert "Every item" in report.subset_notice(whole)
    assert "[95% Wilson interval]" in report.systems_caption(result)
    assert report.accuracy_caption(result).startswith("Accuracy per category: estimate [95% ")


def test_comparison_sentence_gives_the_largest_difference(result):
    assert "No result set names" in report.comparison_sentence(result)
    comparison = pd.DataFrame(
        {"ours": [0.5, 0.25, 0.1], "published": [0.50004, 0.24999, float("nan")]}
    ).assign(difference=lambda f: f["ours"] - f["published"])
    text = report.comparison_sentence(result._replace(comparison=comparison))
    # two published numbers; |0.5 - 0.50004| = 0.00004 > |0.25 - 0.24999| = 0.00001
    assert "Largest absolute difference over 2 published numbers: 0.00004" in text


def test_injected_sentence_leaves_failed_calls_aside(result):
    assert "No simulated system" in report.injected_sentence(result)
    truth = pd.DataFrame(
        [
            ("none", "valid", True, 7),
            ("wrong_value", "value_error:others", False, 2),
            ("none", CALL_FAILED, False, 1),
        ],
        columns=["injected", "verdict", "as_expected", "items"],
    )
    text = report.injected_sentence(result._replace(truth=truth))
    assert "<p>2 of 10 simulated answers got a verdict other than" in text  # 7 + 2 + 1 = 10


def test_result_files_and_failed_calls(result):
    assert "No live system" in report.calls_sentence(result)
    assert report.result_files_caption(result).startswith("Official result files written (0;")
    files = pd.DataFrame({"folder": ["bfcl_results/a/", "bfcl_results/b/"], "result files": [3, 2]})
    written = result._replace(result_files=files)
    assert report.result_files_caption(written).startswith("Official result files written (5;")
    assert report.calls_sentence(written) == (
        "<p>3 model calls failed (counted wrong and left out of the result files).</p>"
    )


def test_system_kind(result):
    kinds = [report.system_kind(result, name) for name in ("files", "simmy", "real")]
    assert kinds == ["result files", "simulated", "real model"]


def test_comparison_table_rounds_to_five_decimals_without_negative_zero(result):
    comparison = pd.DataFrame({"difference": [-0.000001, 0.123456789, 0.0]})
    shown = report.comparison_table(result._replace(comparison=comparison))["difference"]
    # -0.000001 rounds to -0.0, shown as 0.0 (sign bit cleared by + 0.0); 0.123456789 -> 0.12346
    assert shown.tolist() == [0.0, 0.12346, 0.0]
    assert [math.copysign(1, d) for d in shown] == [1, 1, 1]


def test_key_result_gives_no_number_for_a_system_that_never_called(result):
    # quiet: 3 simple_python items answered in prose (no call decoded, wrong) and 1
    # irrelevance item "passed" by not calling — no skill, so nothing is measured: the key
    # result must not read 1 of 4 = 25.0% as its accuracy (seen with SmolLM2-135M)
    quiet = verdicts([("quiet", False, "simple_function_checker:wrong_count")] * 4)
    quiet["decoded"] = [[], [], [], []]
    quiet.loc[3, ["test_category", "valid", "error_type"]] = ["irrelevance", True, None]
    text = report.key_result(result._replace(verdicts=quiet, order=["quiet"]))
    assert "25.0%" not in text
    assert (
        "quiet (real model) no result: 0 of 4 items scored — no function call by this system "
        "in any item that needs one × 4"
    ) in text


# ------------------------------------------------------------------ findings


def test_findings_state_each_share_in_words_and_leave_out_a_system_with_none_scored(result):
    found = report.findings(result)
    lo, hi = wilson(3, 4)
    assert f"{lo:.3f}, {hi:.3f}" == "0.301, 0.954"
    assert (
        "files (result files) about 75% of 4 items in 1 category, likely between 30% and 95%"
        in (found.key_result)
    )
    assert "real" not in found.key_result  # both calls failed: no number (a caveat says so)
    assert found.detail == report.key_result(result)


def test_result_sets_with_different_categories_are_compared_on_the_shared_ones_only(tmp_path):
    # files: simple_python 2 of 3 valid, multiple 2 of 2; simmy: simple_python 1 of 3 only
    rows = [("files", "simple_python", v, None, None) for v in (True, True, False)]
    rows += [("files", "multiple", True, None, None)] * 2
    rows += [("simmy", "simple_python", v, None, None) for v in (True, False, False)]
    base = hand_made_result(tmp_path)
    params = base.params.model_copy(update={"categories": ["simple_python", "multiple"]})
    found = report.findings(base._replace(params=params, verdicts=verdict_rows(rows)))
    caveat = found.caveats[0]
    assert caveat.startswith(
        "<b>Not directly comparable</b>: the systems were scored on different categories"
    )
    assert "categories: files on 2 of 2; simmy on 1 of 2 (not submitted: multiple). " in caveat
    lo, hi = wilson(2, 3)  # on simple_python alone: files 2 of 3, simmy 1 of 3
    assert f"{lo:.3f}, {hi:.3f}" == "0.208, 0.939"
    assert (
        "On the 1 category all of them have (simple_python): files about 67%, likely "
        "between 21% and 94%; simmy about 33%"
    ) in caveat


def test_the_demo_items_are_the_top_caveat(tmp_path):
    base = hand_made_result(tmp_path)
    demo = base._replace(params=base.params.model_copy(update={"data": "demo"}))
    assert report.findings(demo).caveats[0] == (
        "The items are evalbench's own demo items in BFCL's file format, not BFCL's: the "
        "numbers show how the pipeline works, not how a model does on the leaderboard."
    )
