"""Expert-grading statistics by hand: only scored answers enter a mean, n counts them, a cell
of one answer has no interval, the human baseline is compared answer by answer, and the
judge's confidence is set against its gap to the humans."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hle_grading.cases import frame, grade

from evalbench.hle_grading import metrics
from evalbench.hle_grading.data import ExpertItem

RNG = np.random.default_rng(0)


def _records():
    """Physics/easy: a1 = 60, a2 = 80 (human 70 and 90), a3 unscored, a4 no answer;
    Physics/hard: a5 = 40 (human 55); Math/easy: only a6, unscored."""
    return frame([
        grade("dataset", "a1", "Physics", "easy", 60.0, human=70.0, confidence=90.0),
        grade("dataset", "a2", "Physics", "easy", 80.0, human=90.0, confidence=70.0),
        grade("dataset", "a3", "Physics", "easy", None, human=50.0),
        grade("dataset", "a4", "Physics", "easy", None, status="no_response"),
        grade("dataset", "a5", "Physics", "hard", 40.0, human=55.0, confidence=50.0),
        grade("dataset", "a6", "Math", "easy", None),
    ])  # fmt: skip


def test_only_scored_answers_enter_the_long_table():
    long = metrics.long_scores(_records())
    assert sorted(set(long["id"])) == ["a1", "a2", "a5"]
    assert len(long) == 3 * 7  # six dimensions and the overall
    a1 = long[(long["id"] == "a1") & (long["dimension"] == "overall")].iloc[0]
    assert (a1["score"], a1["human"], a1["diff"]) == (60.0, 70.0, -10.0)


def test_cell_means_count_scored_answers_and_leave_one_answer_without_interval():
    cells = metrics.cell_means(metrics.long_scores(_records()), rng=RNG, rounds=200)
    overall = cells[cells["dimension"] == "overall"].set_index(["category", "difficulty"])
    # Physics/easy: a1 and a2 scored (a3 unscored, a4 no answer): n = 2, mean (60 + 80)/2
    assert overall.loc[("Physics", "easy"), "n"] == 2
    assert overall.loc[("Physics", "easy"), "mean"] == 70.0
    low, high = overall.loc[("Physics", "easy"), ["ci_low", "ci_high"]]
    assert 60.0 <= low <= 70.0 <= high <= 80.0  # resamples of {60, 80}
    assert overall.loc[("Physics", "hard"), "n"] == 1
    assert math.isnan(overall.loc[("Physics", "hard"), "ci_low"])
    assert ("Math", "easy") not in overall.index  # no scored answer: no mean


def test_cell_counts_keep_every_cell_and_its_unscored_answers():
    counts = metrics.cell_counts(_records()).set_index(["source", "category", "difficulty"])
    assert counts.loc[("dataset", "Physics", "easy")].tolist() == [4, 2, 1, 1]
    assert counts.loc[("dataset", "Physics", "hard")].tolist() == [1, 1, 0, 0]
    assert counts.loc[("dataset", "Math", "easy")].tolist() == [1, 0, 1, 0]
    assert list(counts.columns) == ["answers", "scored", "unscored", "no_response"]


def test_the_heatmap_has_every_difficulty_and_blank_cells():
    cells = metrics.cell_means(metrics.long_scores(_records()), rng=RNG, rounds=50)
    matrix = metrics.heatmap_matrix(cells, "dataset")
    assert list(matrix.columns) == ["easy", "medium", "hard", "expert"]
    assert matrix.loc["Physics", "easy"] == 70.0 and matrix.loc["Physics", "hard"] == 40.0
    assert math.isnan(matrix.loc["Physics", "medium"])


@pytest.mark.slow
def test_agreement_with_the_human_baseline_by_hand():
    table = metrics.agreement_table(metrics.long_scores(_records()), tolerance=10, rng=RNG,
                                    rounds=200).set_index("dimension")  # fmt: skip
    overall = table.loc["overall"]
    # judge − human: a1 −10, a2 −10, a5 −15 (a3 has a human score but no judge score)
    assert overall.n == 3
    assert overall.within_k == pytest.approx(2 / 3)  # |−10| <= 10 twice, |−15| once not
    assert overall.bias == pytest.approx(-35 / 3)
    assert overall.mae == pytest.approx(35 / 3)


def test_the_human_baseline_distribution_counts_each_answer_once():
    distribution = metrics.overall_distribution(metrics.long_scores(_records()))
    rows = distribution.set_index("who")
    assert rows.loc["judge: dataset", "n"] == 3 and rows.loc["judge: dataset", "mean"] == 60.0
    assert rows.loc["human baseline", "n"] == 3
    assert rows.loc["human baseline", "mean"] == pytest.approx((70 + 90 + 55) / 3)


def test_confidence_bands_and_rho():
    bands, rho = metrics.confidence_gap(metrics.long_scores(_records()))
    by_band = bands.set_index("band")
    # a5: confidence 50, |gap| 15; a2: 70, 10; a1: 90, 10
    assert by_band.loc["0-60", "n"] == 1 and by_band.loc["0-60", "mean_abs_gap"] == 15.0
    assert by_band.loc["70-80", "mean_gap"] == -10.0 and by_band.loc["90-100", "n"] == 1
    assert by_band.loc["60-70", "n"] == 0 and math.isnan(by_band.loc["60-70", "mean_gap"])
    assert rho < 0  # the least confident grading is the farthest from the humans


def test_states_items_and_scored_sources():
    states = metrics.state_table(_records()).iloc[0]
    assert (states.answers, states.scored, states.unscored, states.no_response) == (6, 3, 2, 1)
    assert states.with_human == 3  # a3's human score does not count: it was not scored
    items = [ExpertItem(id=f"e{i}", category=c, difficulty=d, question="q", reference_answer="r",
                        answer=a, human_scores=h)
             for i, (c, d, a, h) in enumerate([
                 ("Physics", "easy", "x", None), ("Physics", "hard", "y", dict.fromkeys(
                     ("accuracy", "completeness", "relevance", "coherence", "depth",
                      "timeliness"), 50.0)), ("Math", "easy", None, None)])]  # fmt: skip
    table = metrics.item_counts(items).set_index("category")
    assert table.loc["Physics", ["easy", "hard", "total", "with_answer", "with_human"]].tolist() == [
        1, 1, 2, 2, 1]  # fmt: skip
    assert table.loc["total", "total"] == 3 and table.loc["total", "with_answer"] == 2
    long = metrics.long_scores(_records())
    assert metrics.scored_sources(["sys", "dataset"], long) == ["dataset"]
