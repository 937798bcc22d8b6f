"""evalbench.judge_golden.report: the sentences and headlines, with their arithmetic shown.

Each test takes a small simulated study (conftest.py), then replaces the parts a sentence reads with
hand-made numbers, so the expected text is the hand computation.
"""

from __future__ import annotations

import re

import pandas as pd

from evalbench.judge_golden import report
from evalbench.stats import Interval, wilson_interval


def _text(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html)


def _usage(errors: dict[str, tuple[int, int, dict[str, int]]]) -> pd.DataFrame:
    rows = [
        {"system": name, "calls": calls, "errors": n, "error_reasons": reasons}
        for name, (calls, n, reasons) in errors.items()
    ]
    return pd.DataFrame(rows)


def _agreement_row(judge: str, dimension: str, hits: int, scored: int, items: int) -> dict:
    iv = wilson_interval(hits, scored)
    return {
        "judge": judge, "dimension": dimension, "n_items": items, "n_scored": scored,
        "n_unscored": items - scored, "within_k": iv.estimate, "within_k_low": iv.low,
        "within_k_high": iv.high, "within_k_strict": hits / items,
    }  # fmt: skip


def test_headlines_format_the_primary_row_the_panel_and_the_retest(result) -> None:
    iv = wilson_interval(6, 8)  # 6 of 8 scored items within ±1
    head = pd.Series({"within_k": iv.estimate, "within_k_low": iv.low, "within_k_high": iv.high})
    panel = result.panel._replace(summary={**result.panel.summary, "within_k": 2 / 3})
    retest = result.retest._replace(
        stats=result.retest.stats._replace(exact=Interval(0.5, 0.3, 0.7, 0.95))
    )
    got = report.headlines(result._replace(head=head, panel=panel, retest=retest))
    assert got == {
        "within ±1 on accuracy (a; 95% Wilson)": f"0.750 [{iv.low:.3f}, {iv.high:.3f}]",
        "panel within ±1 (mean)": 2 / 3,
        "retest exact (a)": 0.5,
    }


def test_key_result_labels_each_judge_and_states_its_failed_calls(result) -> None:
    agreement = pd.DataFrame(
        [
            _agreement_row("a", "accuracy", hits=6, scored=8, items=10),  # 6/8 = 75.0%
            _agreement_row("b", "accuracy", hits=3, scored=4, items=10),  # 3/4 = 75.0%
            _agreement_row("a", "clarity", hits=1, scored=8, items=10),  # another dimension
        ]
    )
    usage = _usage({"a": (20, 0, {}), "b": (10, 6, {"http_500": 4, "timeout": 2})})
    text = _text(
        report.key_result(
            result._replace(agreement=agreement, usage=usage, simulated=frozenset({"a"}))
        )
    )
    lo, hi = wilson_interval(6, 8)[1:3]
    assert (
        f"a (simulated, primary judge) 75.0% [{lo:.1%}, {hi:.1%}] of 8 scored items "
        "(2 unscored; 60.0% of all 10)"  # strict: 6 of 10 items
    ) in text
    assert "b (real model) 75.0%" in text and "(6 unscored; 30.0% of all 10)" in text
    assert text.endswith("— 6 of 10 calls failed: http_500 × 4, timeout × 2.")
    assert "12.5%" not in text  # the clarity row is not the headline dimension
    assert "synthetic golden set" in text  # golden: demo


def test_key_result_says_when_a_judge_scored_nothing(result) -> None:
    agreement = pd.DataFrame([_agreement_row("a", "accuracy", hits=0, scored=0, items=6)])
    usage = _usage({"a": (6, 6, {"http_401": 6})})
    text = _text(report.key_result(result._replace(agreement=agreement, usage=usage)))
    assert "a (simulated, primary judge): no item scored (6 unscored) — 6 of 6 calls failed" in text
    assert "nan" not in text


def test_judge_names_are_escaped(result) -> None:
    agreement = pd.DataFrame([_agreement_row("<b>x</b>", "accuracy", 1, 2, 2)])
    html = report.key_result(result._replace(agreement=agreement))
    assert "<b>x</b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html


def test_unscored_sentence_counts_rows_and_names_failed_calls(result) -> None:
    unscored = pd.DataFrame({"judge": ["a", "b", "b"]})
    usage = _usage({"a": (6, 0, {}), "b": (6, 2, {"sim_error": 2})})
    text = _text(report.unscored_sentence(result._replace(unscored=unscored, usage=usage)))
    assert text == (
        "3 judgments could not be scored (failed calls — b: 2 of 6 calls failed: sim_error × 2)."
    )


def test_pairs_sentence_counts_both_orders_and_quotes_the_expectation(result) -> None:
    summary = result.pairs.summary
    n = summary["position"]["n_pairs"]
    text = _text(report.pairs_sentence(result))
    assert f"compared the {summary['n_pairs']} pairs" in text
    assert f"wins {summary['position']['first_win_rate']:.1%} of the {2 * n} single-order" in text
    expected = result.pairs.expected_consistency
    assert f"expected consistency {expected:.1%}" in text
    assert "p (simulated)" in text


def test_bias_sentence_shows_the_knobs_of_a_simulated_judge(result) -> None:
    row = result.agreement.set_index(["judge", "dimension"]).loc[("a", result.shown)]
    text = _text(report.bias_sentence(result))
    assert f"is {row['bias']:+.2f} points" in text
    assert f"expected bias {row['expected_bias']:+.2f}" in text
    assert f"changes by {result.slope.estimate:+.2f} points per e-fold" in text


def test_retest_sentence_quotes_the_expected_exact_agreement(result) -> None:
    retest = result.retest._replace(expected_exact=0.25)
    text = _text(report.retest_sentence(result._replace(retest=retest)))
    assert "a graded the same" in text and "expected probability 25.0%" in text


def test_captions_name_the_tolerance_level_and_rounds(result) -> None:
    assert report.within_caption(result).startswith("Judge vs human per dimension: share within ±1")
    assert "20 rounds" in report.error_caption(result)
    within, _ = report.agreement_tables(result)
    assert list(within.columns)[:4] == ["judge", "dimension", "n_scored", "n_unscored"]
    assert within["within_k"].iloc[0].count("[") == 1  # folded: "0.833 [0.436, 0.970]"


def test_synthetic_notice_only_for_the_demo_set(result) -> None:
    assert "SYNTHETIC GOLDEN SET" in report.synthetic_notice(result)
    other = result._replace(params=result.params.model_copy(update={"golden": "/x/g.csv"}))
    assert report.synthetic_notice(other) == ""


def test_a_part_the_run_did_not_compute_has_no_table(result) -> None:
    assert [caption for _, caption in report.retest_tables(result)] == [
        "Test–retest of a on accuracy (95% bootstrap intervals, 20 rounds; the two kappas are "
        "point estimates)"
    ]
    assert report.retest_tables(result._replace(retest=None)) == []
    assert len(report.humans_tables(result)) == 4  # the demo's simulated annotators
    assert report.humans_tables(result._replace(humans=None)) == []
    assert report.unscored_tables(result._replace(unscored=result.unscored.head(0))) == []
    outliers, caption = report.outliers_table(result)
    assert caption.endswith(f"first 12 of {len(outliers)})")


def test_tier_sentence_states_the_half_width_by_hand(result) -> None:
    # 6 items: 1.96·sqrt(0.25 / 6) = 0.4001 -> ±40.0%
    assert report.tier_sentence(result) == (
        "<p>6 golden items studied (tier full). At this size a share near 50% is known to "
        "about ±40.0% (95%, normal approximation). Shares near 0 or 1 are known more "
        "tightly.</p>"
    )


def test_one_unscored_judgment_and_one_item_without_reference_read_singular(result) -> None:
    one = _text(report.unscored_sentence(result._replace(unscored=pd.DataFrame({"judge": ["a"]}))))
    assert one.startswith("1 judgment could not be scored")
    assert report._no_reference(1) == " 1 item has no reference and is left out."
    assert report._no_reference(2) == " 2 items have no reference and are left out."
    assert report._no_reference(0) == ""


def test_findings_give_each_judges_share_within_k_and_name_a_biased_judge(result) -> None:
    rows = [
        _agreement_row("a", "accuracy", hits=6, scored=8, items=10)  # 6/8 within ±1
        | {"bias": -1.5, "bias_low": -2.0, "bias_high": -1.0},  # stricter than the humans
        _agreement_row("b", "accuracy", hits=3, scored=4, items=10)
        | {"bias": 0.1, "bias_low": -0.5, "bias_high": 0.7},  # 0 inside: no risk
    ]
    found = report.findings(result._replace(agreement=pd.DataFrame(rows)))
    lo, hi = wilson_interval(6, 8)[1:3]
    assert f"{lo:.3f} {hi:.3f}" == "0.409 0.929"
    assert (
        "a (simulated, primary judge) about 75% of 8 scored items, likely between 41% and 93%"
    ) in found.key_result
    assert found.caveats[0].startswith("The golden set is synthetic: its scores were assigned")
    (risk,) = found.risks
    assert risk.startswith("<b>a is stricter than the golden scores</b>: -1.5 points")
    assert "likely between -2.0 and -1.0" in risk
