"""The report's sentences, tables and index numbers, by hand (evalbench.datagen.report)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest
from datagen.cases import judge_frame, review_of

from evalbench.datagen import duplicates, metrics, report, study
from evalbench.datagen.records import (
    DatagenParams,
    DatagenResult,
    GenerationResult,
    HumanData,
    Slot,
)

PROBLEMS = pd.DataFrame(
    {
        "id": ["p1", "p2", "p3"],
        "topic": ["algebra", "geometry", "algebra"],
        "requested_topic": ["algebra", "geometry", "geometry"],
        "problem": ["Find x.", "A triangle has sides 3, 4, 5.", "Compute y."],
        "answer": [12, 6, 120],
        "attempts": [1, 2, 1],
        "true_quality": [None, None, None],
    }
)
INVALID = pd.DataFrame(
    {"id": ["p2", "p4", "p4"], "attempt": [1, 1, 2], "reason": ["no JSON object found"] * 3}
)


def _usage(judge_errors: int = 0) -> pd.DataFrame:
    reasons = {"http_500": judge_errors} if judge_errors else {}
    return pd.DataFrame(
        {
            "system": ["gpt-x", "judge-sim"],
            "calls": [5, 10],
            "errors": [0, judge_errors],
            "error_reasons": [{}, reasons],
        }
    )


def _result(*, human: dict[str, Any] | None = None, **changes: Any) -> DatagenResult:
    """A hand-made result: a real generator ``gpt-x``, a simulated judge, 3 of 4 slots
    filled, the judge frame of ``cases`` and five scored comparisons (2 wins, 1 loss, 2 ties)."""
    params = DatagenParams.model_validate(
        {"study": "datagen", "title": "t", "n_problems": 4, "max_attempts": 2,
         "generator": {"name": "gpt-x", "provider": "openai", "model": "m"},
         "judge": {"name": "judge-sim", "provider": "sim"}}
    )  # fmt: skip
    slots = [Slot(f"p{i}", "algebra") for i in range(1, 5)]
    generation = GenerationResult(PROBLEMS, INVALID, slots, ["p4"], calls=6)
    verdicts = pd.DataFrame(
        {"generated_id": ["p1", "p2", "p3", "p1", "p2"],
         "outcome": ["win", "win", "loss", "tie", "tie"],
         "order_outcome": ["consistent"] * 3 + ["inconsistent_tie"] * 2}
    )  # fmt: skip
    reference = pd.DataFrame({"id": ["r1", "r2"], "problem": ["Find z.", "A square."]})
    dups = duplicates.near_duplicates(PROBLEMS, reference)
    reviews = human or {}
    summary = metrics.summarize(
        PROBLEMS, rng=np.random.default_rng(0), judge_results=judge_frame(), verdicts=verdicts,
        duplicates=dups, verifications=reviews, n_invalid=len(INVALID), rounds=50,
    )  # fmt: skip
    result = DatagenResult(
        params, reference, reference, generation, judge_frame().assign(unscored_kind=None),
        metrics.judge_vs_truth(judge_frame(), PROBLEMS), verdicts, dups,
        HumanData(reviews, None, False, []), summary,
        real_answers=metrics.answer_distribution([5, 50]), mismatches=pd.DataFrame(),
        usage=_usage(), simulated=frozenset({"judge-sim"}), sim_facts=study.SIM_FACTS,
    )  # fmt: skip
    return result._replace(**changes)


def test_headlines_and_counts_by_hand() -> None:
    result = _result()
    assert report.headlines(result) == {
        "judge mean (1-5)": pytest.approx((4 + 3 + 5) / 3),  # scored rows of judge_frame
        "win rate vs real": pytest.approx((2 + 2 / 2) / 5),  # ties count half: 0.6
        "judge pass rate": pytest.approx(2 / 3),  # no human reviews: 4 and 5 pass, 3 does not
    }
    assert study.counts(result) == {
        "problems": 3, "invalid_outputs": 3, "unfilled": 1, "judge_unscored": 1,
        "pairs_unscored": 0, "near_duplicates": 0, "verifications": 0,
    }  # fmt: skip
    assert study.notes(result) == []


def test_human_pass_rate_replaces_the_judge_pass_rate_in_the_headlines() -> None:
    reviews = {
        "p1": review_of("p1", (4, 4, 4, 4), "approved", "2025-01-01T00:00:00+00:00"),
        "p2": review_of("p2", (2, 2, 2, 2), "rejected", "2025-01-01T00:00:00+00:00"),
    }
    heads = report.headlines(_result(human=reviews))
    assert heads["human pass rate"] == pytest.approx(1 / 2) and "judge pass rate" not in heads


def test_key_results_label_each_system_and_state_failed_calls_next_to_the_judge() -> None:
    text = report.key_results(_result(usage=_usage(judge_errors=2)))
    assert "3 valid problems of 4 requested from generator <b>gpt-x</b> (real model)" in text
    assert "judge <b>judge-sim</b> (simulated) mean score 4.00" in text
    assert "(n = 3 scored of 4 problems; 2 of 10 calls failed: http_500 × 2)" in text
    assert "win rate against real AIME problems 60.0%" in text  # (2 + 2/2) / 5
    # judge mean 4.0 >= 4.0 and win rate 0.6 >= 0.45 met; pass rate 2/3 < 0.8; no human data
    assert "2 of 3 quality criteria met" in text
    assert "calls failed" not in report.key_results(_result())  # nothing failed: nothing said
    assert "every system" not in text


def test_names_and_reasons_are_escaped() -> None:
    result = _result(simulated=frozenset())
    assert report.system_label("<b>x</b>", result.simulated) == (
        "<b>&lt;b&gt;x&lt;/b&gt;</b> (real model)"
    )
    steps = report.next_steps(result._replace(summary=result.summary._replace(
        conclusion=metrics.Conclusion(pd.DataFrame(), ["<script>x</script>"]))))  # fmt: skip
    assert "<script>" not in steps and "&lt;script&gt;x&lt;/script&gt;" in steps


def test_generation_sentences_by_hand() -> None:
    result = _result()
    info = report.basic_info(result).set_index("item")["value"]
    assert info["invalid share of outputs"] == pytest.approx(3 / 6)
    assert info["mean attempts per valid problem"] == pytest.approx((1 + 2 + 1) / 3)
    assert info["declared topic differs from the requested one"] == 1  # p3
    assert report.validity_note(result) == (
        "<p>1 slot had no valid output after 2 attempts and is missing from the dataset: p4.</p>"
    )
    all_valid = result._replace(generation=result.generation._replace(invalid=INVALID.iloc[:0]))
    assert report.validity_note(all_valid) == "<p>Every generator output was valid.</p>"
    assert report.invalid_caption(result).startswith("Why outputs were invalid (3 invalid")


def test_judge_win_and_duplicate_sentences_by_hand() -> None:
    result = _result()
    assert report.unscored_note(result) == (
        "<p>3 of 4 problems scored; unscored: 1 (by kind: none).</p>"
    )
    assert report.win_notes(result).startswith("<p>0 pairs unscored")
    assert "they count as losses" in report.win_notes(result)
    no_pairs = result._replace(summary=result.summary._replace(win=None))
    assert report.win_notes(no_pairs) == "<p>No comparisons (<code>win_rate_pairs: 0</code>).</p>"
    flagged = result.duplicates._replace(
        top=result.duplicates.top.assign(flagged=[True, False, False])
    )
    assert report.duplicates_note(result._replace(duplicates=flagged)) == (
        "<p>1 of 3 generated problems (33.3%) are near-duplicates (similarity ≥ 0.6).</p>"
    )
    truth = pd.DataFrame({"true_quality": [2.0, 3.0, 4.0], "judge": [2.5, 3.5, 4.5]})
    assert "Correlation 1.00, mean judge − truth +0.50 points over 3 problems" in (
        report.truth_note(result._replace(judge_truth=truth))
    )
    assert report.truth_note(result._replace(judge_truth=truth.iloc[:0])) == ""


def test_human_sentences_by_hand() -> None:
    assert report.human_note(_result()).startswith("<p>No human reviews yet")
    assert report.human_notice(_result()) == ""
    reviews = {
        "p1": review_of("p1", (4, 4, 4, 4), "approved", "2025-01-01T00:00:00+00:00"),
        "p2": review_of("p2", (4, 3, 4, 3), "needs_revision", "2025-01-01T00:00:00+00:00"),
    }
    text = report.human_note(_result(human=reviews))
    # Wilson, 1 approved of 2: centre 0.5, half-width z·sqrt(1/8 + z²/16) / (1 + z²/2) = 0.4054
    z = 1.959964
    half = z * math.sqrt(0.25 / 2 + z**2 / 16) / (1 + z**2 / 2)
    assert (
        f"Wilson interval {0.5 - half:.1%} to {0.5 + half:.1%}" == "Wilson interval 9.5% to 90.5%"
    )
    assert "human pass rate (approved) 50.0% (95% Wilson interval 9.5% to 90.5%)" in text
    assert "mean score ≥ 3.5 for 100.0%" in text  # totals 4 and 3.5
    assert "Status counts: approved 1, rejected 0, needs_revision 1." in text


def test_findings_state_the_problems_judge_and_win_rate_in_words() -> None:
    found = report.findings(_result())
    win = _result().summary.win.table.loc["win_rate"]
    assert "3 valid problems of 4 requested from generator gpt-x (real model)" in found.key_result
    assert "judge-sim (simulated) gave them a mean score of about 4.0 of 5" in found.key_result
    assert (  # (2 wins + 2 ties / 2) / 5 = 60%
        f"against real AIME problems they win about 60% of 5 pairs, likely between "
        f"{win['low'] * 100:.0f}% and {win['high'] * 100:.0f}% (50% = parity)"
    ) in found.key_result
    assert "2 of 3 quality criteria met." in found.key_result
    assert found.caveats[0] == (
        "No person reviewed the problems: their quality is an LLM judge's opinion."
    )
    # pass rate 2/3 < 0.8: the unmet criterion is a risk with its numbers
    assert (
        "<b>Not met: judge pass rate (score &gt;= 3.5)</b>: 67% (threshold 80%)"
        in (found.risks[-1])
    )
