"""Summaries, the conclusion and the report tables, by hand (evalbench.datagen.metrics)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from datagen.cases import (
    REF_ROW,
    judge_frame,
    review_of,
)
from scipy import stats as sps

from evalbench import stats
from evalbench.datagen import (
    duplicates,
    metrics,
    scoring,
    sim,
)


def _verdicts() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "generated_id": ["g1", "g2", "g3", "g4", "g5", "g6"],
            "outcome": ["win", "win", "loss", "tie", "tie", None],
        }
    )


def test_judge_summary_by_hand() -> None:
    summary = metrics.judge_summary(judge_frame(), rng=np.random.default_rng(0), rounds=200)
    m = summary.metrics
    assert m.loc["mean_score", "estimate"] == pytest.approx((4 + 3 + 5) / 3)  # 4.0
    assert m.loc["pass_rate", "estimate"] == pytest.approx(2 / 3)  # 4 and 5 are >= 3.5
    assert m.loc["excellent_rate", "estimate"] == pytest.approx(1 / 3)  # only 5 is >= 4.5
    assert m.loc["correctness", "estimate"] == pytest.approx((4 + 2 + 5) / 3)
    assert m.loc["pass_rate", "n"] == 3
    assert (summary.n_items, summary.n_scored, summary.n_unscored) == (4, 3, 1)
    assert summary.unscored_by_status == {"unscored": 1}
    assert m.loc["mean_score", "low"] <= 4.0 <= m.loc["mean_score", "high"]


def test_judge_summary_accepts_judge_results_frame_names() -> None:
    frame = judge_frame().rename(columns={"weighted": "weighted_score", "clarity": "score_clarity"})
    summary = metrics.judge_summary(frame, rng=np.random.default_rng(0), rounds=50)
    assert summary.metrics.loc["clarity", "estimate"] == pytest.approx((4 + 4 + 5) / 3)


def test_judge_summary_rejects_a_scored_row_without_score() -> None:
    bad = judge_frame()
    bad.loc[0, "weighted"] = np.nan
    with pytest.raises(
        ValueError, match="problem 'p1' is scored but its weighted score is missing"
    ):
        metrics.judge_summary(bad, rng=np.random.default_rng(0))


def test_win_rate_by_hand_with_duplicates_counted_as_losses() -> None:
    plain = metrics.win_rate(_verdicts(), rng=np.random.default_rng(0), rounds=200)
    assert (plain.n, plain.wins, plain.losses, plain.ties, plain.unscored) == (5, 2, 1, 2, 1)
    assert plain.table.loc["win_rate", "estimate"] == pytest.approx((2 + 2 / 2) / 5)  # 0.6
    assert plain.table.loc["wins", "estimate"] == pytest.approx(2 / 5)
    assert plain.table.loc["ties", "low"] == pytest.approx(stats.wilson_interval(2, 5).low)
    dup = metrics.win_rate(
        _verdicts(), rng=np.random.default_rng(0), duplicate_ids={"g1", "g4"}, rounds=200
    )
    assert (dup.wins, dup.losses, dup.ties) == (1, 3, 1)  # g1's win and g4's tie become losses
    assert dup.table.loc["win_rate", "estimate"] == pytest.approx((1 + 1 / 2) / 5)  # 0.3
    assert (dup.duplicate_comparisons, dup.duplicate_wins_changed) == (2, 2)


def test_win_rate_can_exclude_duplicates_instead() -> None:
    out = metrics.win_rate(
        _verdicts(),
        rng=np.random.default_rng(0),
        duplicate_ids=["g1", "g3"],
        duplicate_policy="exclude",
    )
    assert (out.n, out.wins, out.losses, out.ties) == (3, 1, 0, 2)
    assert out.table.loc["win_rate", "estimate"] == pytest.approx((1 + 2 / 2) / 3)
    assert (out.duplicate_comparisons, out.duplicate_wins_changed) == (2, 1)  # g3 was a loss


def test_topic_distribution_lists_every_topic() -> None:
    table = metrics.topic_distribution(
        pd.DataFrame({"topic": ["algebra", "algebra", "geometry", "x"]})
    )
    assert table.loc["algebra", "count"] == 2 and table.loc["probability", "count"] == 0
    assert table.loc["geometry", "share"] == pytest.approx(1 / 4)
    assert list(table.index) == [*scoring.TOPICS, "x"]


def test_answer_distribution_by_hand() -> None:
    s = metrics.answer_distribution([10, 20, 30, 41, 510, 10])
    assert (s.n, s.min, s.max) == (6, 10, 510)
    assert s.share_below_100 == pytest.approx(5 / 6) and s.share_below_10 == 0
    assert s.most_common[0] == (10, 2)
    assert s.last_digit_counts == [5, 1, 0, 0, 0, 0, 0, 0, 0, 0]
    expected = 6 / 10  # uniform expectation per digit
    chi2 = ((5 - expected) ** 2 + (1 - expected) ** 2 + 8 * expected**2) / expected
    assert s.last_digit_chi2 == pytest.approx(chi2)  # (19.36 + 0.16 + 2.88) / 0.6 = 37.33
    assert s.last_digit_p == pytest.approx(sps.chi2.sf(chi2, df=9))
    assert metrics.answer_distribution([]).n == 0


def test_human_summary_and_agreement_with_the_judge() -> None:
    reviews = {
        "p1": review_of("p1", (4, 4, 4, 4), "approved", "2025-01-01T00:00:00+00:00"),
        "p2": review_of("p2", (2, 4, 3, 3), "rejected", "2025-01-01T00:00:00+00:00"),
        "p3": review_of("p3", (5, 5, 4, 4), "approved", "2025-01-01T00:00:00+00:00"),
        "p4": review_of("p4", (4, 3, 4, 3), "needs_revision", "2025-01-01T00:00:00+00:00"),
    }
    human = metrics.human_summary(reviews)
    assert human.approved_rate.estimate == pytest.approx(2 / 4)
    assert human.score_pass_rate.estimate == pytest.approx(3 / 4)  # totals 4, 3, 4.5, 3.5
    assert human.status_counts == {"approved": 2, "rejected": 1, "needs_revision": 1}
    assert human.dimension_means["correctness"] == pytest.approx((4 + 2 + 5 + 4) / 4)
    pairs = metrics.paired_human_judge(reviews, judge_frame())
    assert len(pairs) == 3 * 5  # p1-p3 scored by both (p4 unscored by the judge), 4 dims + total
    table = metrics.human_judge_agreement(reviews, judge_frame())
    # correctness: human (4, 2, 5) vs judge (4, 2, 5) -> perfect
    assert table.loc["correctness", "exact"] == 1.0 and table.loc[
        "correctness", "qwk"
    ] == pytest.approx(1.0)
    # clarity: human (4, 4, 5) vs judge (4, 4, 5)
    assert table.loc["clarity", "pearson"] == pytest.approx(1.0)
    # completeness: human (4, 3, 4) vs judge (4, 3, 5): exact 2/3, bias (0 + 0 + 1) / 3
    assert table.loc["completeness", "exact"] == pytest.approx(2 / 3)
    assert table.loc["completeness", "bias"] == pytest.approx(1 / 3)
    # total: human (4, 3, 4.5) vs judge weighted (4, 3, 5)
    assert table.loc["total", "within_1"] == 1.0 and math.isnan(table.loc["total", "qwk"])
    assert table["n"].eq(3).all()


def test_conclusion_table_met_unmet_and_missing() -> None:
    out = metrics.conclusion(
        {"judge_mean": 4.2, "win_rate": 0.40, "judge_pass_rate": 0.80, "human_pass_rate": None},
        duplicate_rate=0.05,
    )
    assert out.table["threshold"].tolist() == [4.0, 0.45, 0.80, 0.90]
    assert out.table["met"].tolist() == [True, False, True, None]  # 0.80 >= 0.80 is met
    assert out.table["value"].tolist()[:3] == [4.2, 0.40, 0.80] and pd.isna(out.table["value"][3])
    assert any("real problems" in s for s in out.next_steps)  # advice for the win rate
    assert any(s.startswith("No data for human pass rate") for s in out.next_steps)
    assert any("5% of generated problems nearly copy" in s for s in out.next_steps)
    done = metrics.conclusion(
        {"judge_mean": 4.5, "win_rate": 0.5, "judge_pass_rate": 0.9, "human_pass_rate": 0.95}
    )
    assert done.table["met"].tolist() == [True] * 4 and done.next_steps[0].startswith(
        "All criteria met"
    )
    assert metrics.conclusion({"judge_mean": float("nan")}).table["met"].iloc[0] is None


def test_summarize_puts_the_pieces_together() -> None:
    rng = np.random.default_rng(0)
    gens = [sim.sim_generation_output(REF_ROW, t, rng=rng) for t in scoring.assign_topics(14, rng)]
    problems = scoring.problems_frame(
        scoring.parse_generated(g.text, id=f"p{i + 1}") for i, g in enumerate(gens)
    )
    verdicts = pd.DataFrame({"generated_id": ["p1", "p2"], "outcome": ["win", "loss"]})
    dup = duplicates.near_duplicates(
        problems, pd.DataFrame({"id": ["r"], "problem": [problems["problem"][0]]})
    )
    out = metrics.summarize(
        problems, rng=rng, judge_results=judge_frame(), verdicts=verdicts, duplicates=dup
    )
    assert out.win.wins == 0 and out.win.losses == 2  # p1 copies the 'reference': its win is a loss
    assert out.topics["count"].sum() == 14 and out.topics["count"].eq(2).all()
    assert out.human is None and out.conclusion.table["met"].tolist() == [True, False, False, None]
    assert out.answers.n == 14


def test_report_tables_by_hand() -> None:
    invalid = pd.DataFrame(
        {"reason": ["no JSON object found", "answer 1000 is outside 0-999; solution is empty",
                    "no JSON object found"]}
    )  # fmt: skip
    table = metrics.invalid_reasons(invalid).set_index("reason")
    assert table.loc["no JSON object found", "count"] == 2
    assert table.loc["solution is empty", "share"] == pytest.approx(1 / 3)
    assert metrics.invalid_reasons(invalid.iloc[:0]).empty
    compared = metrics.answer_comparison(
        metrics.answer_distribution([5, 50, 500]), metrics.answer_distribution([100, 200])
    )
    assert compared.loc["share_below_100", "generated"] == pytest.approx(2 / 3)
    assert compared.loc["median", "real"] == 150
    judged = pd.DataFrame(
        {"problem_id": ["a", "b", "c"], "status": ["scored", "unscored", "scored"],
         "weighted_score": [4.0, np.nan, 2.5]}
    )  # fmt: skip
    problems = pd.DataFrame({"id": ["a", "b", "c"], "true_quality": [3.8, 2.0, None]})
    truth = metrics.judge_vs_truth(judged, problems)
    assert truth.values.tolist() == [["a", 3.8, 4.0]]  # b unscored, c has no truth
    verdicts = pd.DataFrame({"order_outcome": ["consistent", "inconsistent_tie", "consistent"]})
    order = metrics.order_consistency(verdicts).set_index("resolution")
    assert order.loc["consistent", "pairs"] == 2 and order.loc["inconsistent_tie", "share"] == 1 / 3


def test_reference_rows_without_a_year_are_counted() -> None:
    # evalbench's demo problems have no contest year; they still count in the table
    reference = pd.DataFrame(
        {"source": ["demo", "demo", "demo", "matharena", "matharena"],
         "year": [None, None, None, 2024, 2025]}
    )  # fmt: skip
    counts = metrics.reference_counts(reference)
    assert counts["problems"].tolist() == [3, 1, 1]  # demo: 3; matharena: 1 per year
    assert counts["source"].tolist() == ["demo", "matharena", "matharena"]
    assert counts["year"].isna().tolist() == [True, False, False]
