"""Agreement statistics: hand-derived values, published examples, scipy/sklearn cross-checks."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from sklearn import metrics as skm

from evalbench import agreement as ag
from evalbench.stats import Interval, wilson_interval

nan = float("nan")

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", example C:
# 4 observers (rows) x 12 units (columns), values 1-5, nan = not coded.
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
    [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
]

# Fleiss (1971) as worked on Wikipedia ("Fleiss' kappa", worked example):
# 10 subjects x 5 categories, 14 raters per subject.
FLEISS_WIKIPEDIA = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def _from_table(table: list[list[int]], labels: list) -> tuple[list, list]:
    """Two raters' labels reproducing a contingency table (rows = rater a, cols = rater b)."""
    a, b = [], []
    for i, row in enumerate(table):
        for j, count in enumerate(row):
            a += [labels[i]] * count
            b += [labels[j]] * count
    return a, b


def _random_scores(seed: int, n: int = 120) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    human = rng.integers(1, 6, n)
    judge = np.clip(human + rng.integers(-2, 3, n), 1, 5)
    return judge, human


# --- exact / within-k / errors ---------------------------------------------------------


def test_exact_agreement_counts_equal_labels():
    result = ag.exact_agreement([1, 2, 3, 4, 5], [1, 2, 4, 4, 1])
    assert result.estimate == pytest.approx(3 / 5)
    assert math.isnan(result.low) and math.isnan(result.high)  # no rng, no interval


def test_exact_agreement_works_on_strings_and_drops_missing_pairs():
    # pairs 2 (None) and 4 (NaN) are dropped: ("a","a"), ("b","c"), ("tie","tie") remain
    result = ag.exact_agreement(["a", None, "b", "tie", "a"], ["a", "b", "c", "tie", nan])
    assert result.estimate == pytest.approx(2 / 3)


def test_within_k_agreement_uses_absolute_difference():
    judge, human = [1, 2, 3, 5], [2, 2, 5, 1]  # |d| = 1, 0, 2, 4
    assert ag.within_k_agreement(judge, human).estimate == pytest.approx(2 / 4)
    assert ag.within_k_agreement(judge, human, k=2).estimate == pytest.approx(3 / 4)
    assert ag.within_k_agreement(judge, human, k=0).estimate == pytest.approx(1 / 4)


def test_mean_absolute_and_signed_error():
    judge, human = [1, 2, 3, 5], [2, 2, 5, 1]  # judge - human = -1, 0, -2, 4
    assert ag.mean_absolute_error(judge, human).estimate == pytest.approx((1 + 0 + 2 + 4) / 4)
    assert ag.mean_signed_error(judge, human).estimate == pytest.approx((-1 + 0 - 2 + 4) / 4)


def test_errors_drop_missing_pairs():
    judge, human = [1, None, 3, 4], [2, 2, nan, 1]  # kept: (1, 2), (4, 1)
    assert ag.mean_absolute_error(judge, human).estimate == pytest.approx((1 + 3) / 2)
    assert ag.mean_signed_error(judge, human).estimate == pytest.approx((-1 + 3) / 2)


@pytest.mark.parametrize(
    "statistic",
    [ag.exact_agreement, ag.within_k_agreement, ag.mean_absolute_error, ag.mean_signed_error],
)
def test_seeded_bootstrap_is_reproducible_and_contains_estimate(statistic):
    judge, human = _random_scores(0)
    first = statistic(judge, human, rng=np.random.default_rng(7), rounds=300)
    again = statistic(judge, human, rng=np.random.default_rng(7), rounds=300)
    other = statistic(judge, human, rng=np.random.default_rng(8), rounds=300)
    assert first == again
    assert first.low <= first.estimate <= first.high
    assert first.low < first.high
    assert (other.low, other.high) != (first.low, first.high)


def test_empty_input_gives_nan_not_an_error():
    result = ag.exact_agreement([None, "a"], ["b", None], rng=np.random.default_rng(0))
    assert all(math.isnan(v) for v in result[:3])


# --- correlations ----------------------------------------------------------------------


def test_correlations_on_a_hand_example():
    x, y = [1, 2, 3, 4, 5], [2, 1, 4, 3, 5]
    # deviations dx = (-2,-1,0,1,2), dy = (-1,-2,1,0,2): Σdxdy = 2+2+0+0+4 = 8, Σdx² = Σdy² = 10
    assert ag.pearson(x, y).estimate == pytest.approx(8 / math.sqrt(10 * 10))
    # the values are their own ranks, so rho = r
    assert ag.spearman(x, y).estimate == pytest.approx(8 / 10)
    # of the 10 pairs only (1,2) and (3,4) are discordant: tau = (8 - 2) / 10
    assert ag.kendall_tau(x, y).estimate == pytest.approx((8 - 2) / 10)


def test_kendall_tau_b_with_ties_by_hand():
    x, y = [1, 1, 2, 3], [1, 2, 2, 3]
    # pairs: (0,1) tied in x only; (1,2) tied in y only; the other 4 are concordant
    # tau_b = (P - Q) / sqrt((P + Q + T_x)(P + Q + T_y)) = 4 / sqrt(5 * 5)
    assert ag.kendall_tau(x, y).estimate == pytest.approx(4 / math.sqrt(5 * 5))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_correlations_match_scipy_on_random_tied_scores(seed):
    judge, human = _random_scores(seed)
    assert ag.pearson(judge, human).estimate == pytest.approx(sps.pearsonr(judge, human).statistic)
    assert ag.spearman(judge, human).estimate == pytest.approx(
        sps.spearmanr(judge, human).statistic
    )
    assert ag.kendall_tau(judge, human).estimate == pytest.approx(
        sps.kendalltau(judge, human).statistic
    )


@pytest.mark.parametrize("statistic", [ag.pearson, ag.spearman, ag.kendall_tau])
def test_correlation_bootstrap_is_seeded_and_covers_estimate(statistic):
    judge, human = _random_scores(4, n=60)
    first = statistic(judge, human, rng=np.random.default_rng(11), rounds=200)
    again = statistic(judge, human, rng=np.random.default_rng(11), rounds=200)
    assert first == again
    assert -1 <= first.low <= first.estimate <= first.high <= 1


@pytest.mark.parametrize("n, chunk", [(60, 2_000_000), (5, 2_000_000), (60, 7 * 60)])
def test_spearmans_interval_is_the_bootstrap_of_rho_over_resampled_pairs(monkeypatch, n, chunk):
    # many resamples are ranked per call; the interval must be stats.bootstrap of rho, one
    # resample at a time, with the same rng: ties, resamples where one side is constant
    # (rho undefined: left out) at n = 5, and resamples ranked in chunks of 7 rounds
    from evalbench.stats import bootstrap

    monkeypatch.setattr(ag, "_ROWS_AT_ONCE", chunk)
    judge, human = _random_scores(5, n=n)
    got = ag.spearman(judge, human, rng=np.random.default_rng(2), rounds=300, level=0.9)
    want = bootstrap(ag._spearman_rho, np.asarray(judge, float), np.asarray(human, float),
                     rng=np.random.default_rng(2), rounds=300, level=0.9)  # fmt: skip
    assert (got.estimate, got.low, got.high) == pytest.approx(
        (want.estimate, want.low, want.high), rel=1e-12
    )


@pytest.mark.parametrize("statistic", [ag.pearson, ag.spearman, ag.kendall_tau])
def test_correlation_of_a_constant_is_nan(statistic):
    assert math.isnan(statistic([3, 3, 3, 3], [1, 2, 3, 4]).estimate)


def test_correlation_drops_missing_pairs():
    x, y = [1, None, 2, 3, 9], [1, 5, 2, 3, nan]
    assert ag.pearson(x, y).estimate == pytest.approx(1.0)


# --- Cohen's kappa ---------------------------------------------------------------------


def test_cohen_kappa_two_by_two():
    # rows = rater a (yes, no), cols = rater b: a says yes 25 times, b says yes 30 times
    a, b = _from_table([[20, 5], [10, 15]], ["yes", "no"])
    p_o = (20 + 15) / 50
    p_e = (25 * 30 + 25 * 20) / 50**2
    assert ag.cohen_kappa(a, b) == pytest.approx((p_o - p_e) / (1 - p_e))


def test_weighted_kappa_three_by_three():
    table = [[3, 1, 0], [1, 2, 1], [0, 1, 1]]  # n = 10, rows and columns sum to (4, 4, 2)
    a, b = _from_table(table, [1, 2, 3])
    # E = outer((4,4,2), (4,4,2)) / 10; one step off the diagonal E = 1.6, 1.6, 0.8, 0.8,
    # two steps E = 0.8, 0.8; observed: four cells one step off, none two steps off
    assert ag.weighted_kappa(a, b, "linear") == pytest.approx(
        1 - (1 * 4) / (1 * (1.6 + 1.6 + 0.8 + 0.8) + 2 * (0.8 + 0.8))
    )
    assert ag.weighted_kappa(a, b, "quadratic") == pytest.approx(
        1 - (1 * 4) / (1 * (1.6 + 1.6 + 0.8 + 0.8) + 4 * (0.8 + 0.8))
    )
    p_o, p_e = 6 / 10, (4 * 4 + 4 * 4 + 2 * 2) / 10**2
    assert ag.cohen_kappa(a, b) == pytest.approx((p_o - p_e) / (1 - p_e))


@pytest.mark.parametrize("seed", [5, 6])
@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_kappa_matches_sklearn(seed, weights):
    judge, human = _random_scores(seed)
    expected = skm.cohen_kappa_score(judge, human, weights=weights)
    if weights is None:
        assert ag.cohen_kappa(judge, human) == pytest.approx(expected)
    else:
        assert ag.weighted_kappa(judge, human, weights) == pytest.approx(expected)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_kappa_interval_equals_the_generic_bootstrap(weights):
    """Same draws as stats.bootstrap over (a, b) rows, so the same interval, computed at once."""
    from evalbench.stats import bootstrap

    rng = np.random.default_rng(3)
    a = rng.integers(1, 6, 120)
    b = np.where(rng.random(120) < 0.6, a, rng.integers(1, 6, 120))
    labels = [1, 2, 3, 4, 5]

    def statistic(x, y):
        if weights is None:
            return ag.cohen_kappa(x, y, labels)
        return ag.weighted_kappa(x, y, weights, labels)

    fast = ag.kappa_interval(
        a, b, labels, weights=weights, rng=np.random.default_rng(9), rounds=300
    )
    slow = bootstrap(statistic, a, b, rng=np.random.default_rng(9), rounds=300)
    assert fast.estimate == pytest.approx(statistic(a, b))
    assert (fast.low, fast.high) == pytest.approx((slow.low, slow.high))


def test_kappa_interval_edge_cases():
    # no rng: the estimate only; 2x2 by hand: p_o = 3/4, p_e = (2*1 + 2*3) / 16 = 1/2
    iv = ag.kappa_interval(["a", "a", "b", "b", None], ["a", "b", "b", "b", "a"])
    assert iv.estimate == pytest.approx((0.75 - 0.5) / (1 - 0.5))
    assert math.isnan(iv.low) and math.isnan(iv.high)
    assert all(math.isnan(v) for v in ag.kappa_interval([], [])[:3])
    # one label throughout: kappa undefined, and so is every resample
    same = ag.kappa_interval(["a"] * 5, ["a"] * 5, rng=np.random.default_rng(0), rounds=20)
    assert math.isnan(same.estimate) and math.isnan(same.low)
    with pytest.raises(ValueError, match="weights must be None, 'linear' or 'quadratic'"):
        ag.kappa_interval([1, 2], [1, 2], weights="cubic")  # type: ignore[arg-type]


def test_weighted_kappa_distances_follow_the_label_list_like_sklearn():
    a, b = [1, 1, 5, 5, 1], [1, 5, 5, 5, 5]  # only 1 and 5 used: one step unless scale given
    scale = [1, 2, 3, 4, 5]
    assert ag.weighted_kappa(a, b, labels=scale) == pytest.approx(
        skm.cohen_kappa_score(a, b, weights="quadratic", labels=scale)
    )
    assert ag.weighted_kappa(a, b) == pytest.approx(
        skm.cohen_kappa_score(a, b, weights="quadratic")
    )


def test_cohen_kappa_string_labels_match_sklearn():
    rng = np.random.default_rng(9)
    a = rng.choice(["a", "b", "tie"], 80)
    b = np.where(rng.random(80) < 0.6, a, rng.choice(["a", "b", "tie"], 80))
    assert ag.cohen_kappa(a, b) == pytest.approx(skm.cohen_kappa_score(a, b))


def test_kappa_perfect_agreement_is_one():
    assert ag.cohen_kappa([1, 2, 3, 1], [1, 2, 3, 1]) == pytest.approx(1.0)
    assert ag.weighted_kappa([1, 2, 3, 1], [1, 2, 3, 1]) == pytest.approx(1.0)


def test_kappa_with_one_label_throughout_is_nan():
    # p_e = 1: kappa = 0/0 is undefined, and we say so instead of returning 0 or 1
    assert math.isnan(ag.cohen_kappa(["x"] * 5, ["x"] * 5))
    assert math.isnan(ag.weighted_kappa([3] * 5, [3] * 5))


def test_kappa_rejects_a_value_outside_labels():
    with pytest.raises(ValueError, match=r"cohen_kappa: value 'maybe' is not in labels"):
        ag.cohen_kappa(["yes", "maybe"], ["yes", "no"], labels=["yes", "no"])


def test_weighted_kappa_rejects_unknown_weights():
    with pytest.raises(ValueError, match="weights must be 'linear' or 'quadratic'"):
        ag.weighted_kappa([1, 2], [1, 2], weights="cubic")  # type: ignore[arg-type]


# --- Fleiss' kappa ---------------------------------------------------------------------


def test_fleiss_kappa_wikipedia_example():
    # Σ_j n_ij² per subject: 196, 60, 70, 94, 74, 98, 58, 46, 66, 66 (sum 828)
    p_bar = (828 - 10 * 14) / (10 * 14 * 13)
    # column totals 20, 28, 39, 21, 32 of N·n = 140 ratings
    p_e = (20**2 + 28**2 + 39**2 + 21**2 + 32**2) / 140**2
    kappa = ag.fleiss_kappa_counts(FLEISS_WIKIPEDIA)
    assert kappa == pytest.approx((p_bar - p_e) / (1 - p_e))
    assert round(kappa, 3) == 0.210


def test_fleiss_kappa_from_ratings_equals_from_counts():
    ratings = [[c for c, k in enumerate(row) for _ in range(k)] for row in FLEISS_WIKIPEDIA]
    assert ag.fleiss_kappa(pd.DataFrame(ratings)) == pytest.approx(
        ag.fleiss_kappa_counts(FLEISS_WIKIPEDIA)
    )
    counts = ag.rating_counts(ratings)
    assert counts.to_numpy().tolist() == FLEISS_WIKIPEDIA
    assert list(counts.columns) == [0, 1, 2, 3, 4]


def test_fleiss_kappa_small_hand_example():
    ratings = [["a", "a", "a"], ["a", "b", "b"], ["b", "b", "b"]]
    # P_i = (Σ n_ij² - 3) / (3·2): (9-3)/6, (1+4-3)/6, (9-3)/6
    p_bar = (6 / 6 + 2 / 6 + 6 / 6) / 3
    p_e = (4 / 9) ** 2 + (5 / 9) ** 2
    assert ag.fleiss_kappa(ratings) == pytest.approx((p_bar - p_e) / (1 - p_e))


def test_fleiss_kappa_edge_cases():
    assert ag.fleiss_kappa([["a", "a"], ["b", "b"]]) == pytest.approx(1.0)
    assert math.isnan(ag.fleiss_kappa([["a", "a"], ["a", "a"]]))  # one category: undefined
    with pytest.raises(ValueError, match=r"fleiss_kappa: .* item 1 has 1"):
        ag.fleiss_kappa([["a", "b"], ["a", None]])


# --- Krippendorff's alpha --------------------------------------------------------------


def test_krippendorff_nominal_2011_example():
    # Pairable values n = 40 (unit 12 has a single value). Value totals n_c for 1..5:
    # 9, 13, 10, 5, 3. Coincidence diagonal o_cc: 7, 10, 8, 4, 3 (sum 32).
    # alpha = 1 - (n - 1)(n - Σ o_cc) / (n² - Σ n_c²)
    expected = 1 - 39 * (40 - 32) / (40**2 - (9**2 + 13**2 + 10**2 + 5**2 + 3**2))
    alpha = ag.krippendorff_alpha(KRIPPENDORFF_2011, "nominal")
    assert alpha == pytest.approx(expected)
    assert round(alpha, 3) == 0.743  # published value


def test_krippendorff_interval_2011_example():
    # Off-diagonal coincidences: o_12 = o_21 = 1 (unit 8), o_23 = o_32 = 1 (unit 2), and
    # 1/3 for each of the 12 ordered pairs of unit 6 (1,2,3,4): Σ (c-k)² there = 2·20.
    observed = 2 * (1 * 1**2 + 1 * 1**2) + (2 * 20) / 3
    # Σ_{c<k} n_c n_k (c-k)² with n = (9, 13, 10, 5, 3)
    expected_pairs = (
        9 * 13 * 1 + 9 * 10 * 4 + 9 * 5 * 9 + 9 * 3 * 16 + 13 * 10 * 1
        + 13 * 5 * 4 + 13 * 3 * 9 + 10 * 5 * 1 + 10 * 3 * 4 + 5 * 3 * 1
    )  # fmt: skip
    alpha = ag.krippendorff_alpha(KRIPPENDORFF_2011, "interval")
    assert alpha == pytest.approx(1 - 39 * observed / (2 * expected_pairs))
    assert round(alpha, 3) == 0.849  # published value


def test_krippendorff_ordinal_2011_example():
    # Ordinal metric δ_ck = Σ_{g=c}^{k} n_g - (n_c + n_k)/2 with n = (9, 13, 10, 5, 3):
    # δ_12 = 11, δ_13 = 22.5, δ_14 = 30, δ_15 = 34, δ_23 = 11.5, δ_24 = 19, δ_25 = 23,
    # δ_34 = 7.5, δ_35 = 11.5, δ_45 = 4 (e.g. δ_13 = 9 + 13 + 10 - (9 + 10)/2).
    d = {(1, 2): 11, (1, 3): 22.5, (1, 4): 30, (1, 5): 34, (2, 3): 11.5, (2, 4): 19,
         (2, 5): 23, (3, 4): 7.5, (3, 5): 11.5, (4, 5): 4}  # fmt: skip
    n = {1: 9, 2: 13, 3: 10, 4: 5, 5: 3}
    unit6 = sum(d[p] ** 2 for p in [(1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4)])
    observed = 2 * (d[1, 2] ** 2 + d[2, 3] ** 2) + 2 * unit6 / 3
    expected_pairs = sum(n[c] * n[k] * d[c, k] ** 2 for c, k in d)
    alpha = ag.krippendorff_alpha(KRIPPENDORFF_2011, "ordinal")
    assert alpha == pytest.approx(1 - 39 * observed / (2 * expected_pairs))
    assert round(alpha, 3) == 0.815  # published value


def test_krippendorff_ratio_2011_example():
    assert round(ag.krippendorff_alpha(KRIPPENDORFF_2011, "ratio"), 3) == 0.797


def test_krippendorff_nominal_string_labels_by_hand():
    data = [["pos", "neg", "neu", None], ["pos", "neg", "neu", "pos"], ["pos", "neg", "pos", "pos"]]
    # o_pos,pos = 3 + 2, o_neg,neg = 3, o_neu,neu = 1, o_neu,pos = o_pos,neu = 1; n = 11
    # n_pos = 6, n_neg = 3, n_neu = 2
    expected = 1 - (11 - 1) * (11 - (5 + 3 + 1)) / (11**2 - (6**2 + 3**2 + 2**2))
    assert ag.krippendorff_alpha(data) == pytest.approx(expected)


def test_krippendorff_ordinal_labels_with_an_order_match_numbers():
    names = {1: "very low", 2: "low", 3: "mid", 4: "high", 5: "very high"}
    named = [[names.get(v) if v == v else None for v in row] for row in KRIPPENDORFF_2011]
    alpha = ag.krippendorff_alpha(named, "ordinal", order=list(names.values()))
    assert alpha == pytest.approx(ag.krippendorff_alpha(KRIPPENDORFF_2011, "ordinal"))


def test_krippendorff_accepts_a_dataframe_of_raters_by_units():
    frame = pd.DataFrame(KRIPPENDORFF_2011, index=["A", "B", "C", "D"])
    assert ag.krippendorff_alpha(frame, "interval") == pytest.approx(
        ag.krippendorff_alpha(KRIPPENDORFF_2011, "interval")
    )


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_krippendorff_edge_cases(level):
    assert ag.krippendorff_alpha([[1, 2, 3], [1, 2, 3]], level) == pytest.approx(1.0)
    assert math.isnan(ag.krippendorff_alpha([[2, 2, 2], [2, 2, 2]], level))  # D_e = 0
    assert math.isnan(ag.krippendorff_alpha([[1, None], [None, 2]], level))  # nothing pairable


def test_krippendorff_errors():
    with pytest.raises(ValueError, match="unknown level"):
        ag.krippendorff_alpha([[1, 2], [1, 2]], "cardinal")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="is not a number"):
        ag.krippendorff_alpha([["low", "high"], ["low", "low"]], "interval")
    with pytest.raises(ValueError, match="'huge' is not in labels"):
        ag.krippendorff_alpha([["low", "huge"], ["low", "low"]], "ordinal", order=["low", "high"])


# --- pairwise verdicts -----------------------------------------------------------------


def test_pairwise_agreement_with_and_without_ties():
    judge = ["a", "b", "tie", "a", "b", "tie", None]
    human = ["a", "a", "tie", "tie", "b", "b", "a"]
    result = ag.pairwise_agreement(judge, human)
    # 6 complete pairs, equal on items 1, 3, 5
    assert result.with_ties == pytest.approx(3 / 6) and result.n_with_ties == 6
    # both decisive on items 1, 2, 5; equal on 1 and 5
    assert result.without_ties == pytest.approx(2 / 3) and result.n_without_ties == 3


def test_pairwise_agreement_accepts_fastchat_spellings():
    judge = ["model_a", "tie (bothbad)", "B", "model_1", "Model_2"]
    result = ag.pairwise_agreement(judge, ["a", "tie", "model_b", "a", "b"])
    assert result.with_ties == 1.0 and result.n_without_ties == 4


def test_pairwise_agreement_rejects_unknown_verdicts():
    with pytest.raises(ValueError, match=r"pairwise_agreement: other\[1\]: unknown verdict 2"):
        ag.pairwise_agreement(["a", "b"], ["a", 2])


def test_majority_vote_policies():
    votes = [["a", "a", "b"], ["a", "b", "tie"], ["b", "a", "a", "b"], [None, "b"], [None]]
    assert ag.majority_vote(votes) == ["a", None, None, "b", None]
    assert ag.majority_vote(votes, no_majority="tie") == ["a", "tie", "tie", "b", None]
    # "first": the leading label voted first (PandaLM's get_majority_vote tie-break)
    assert ag.majority_vote(votes, no_majority="first") == ["a", "a", "b", "b", None]


def test_majority_vote_strict_needs_more_than_half():
    votes = [["a", "a", "b", "tie"], ["a", "a", "a", "b"]]  # 2/4 is a plurality, not > half
    assert ag.majority_vote(votes) == ["a", "a"]
    assert ag.majority_vote(votes, strict=True) == [None, "a"]


def test_judge_against_human_majority():
    humans = pd.DataFrame({"h1": ["a", "b", "a", "tie"], "h2": ["a", "b", "b", "b"],
                           "h3": ["b", "b", "tie", "tie"]})  # fmt: skip
    majority = ag.majority_vote(humans)  # a, b, (no majority), tie
    assert majority == ["a", "b", None, "tie"]
    result = ag.pairwise_agreement(["a", "a", "b", "tie"], majority)
    assert (result.with_ties, result.n_with_ties) == (pytest.approx(2 / 3), 3)


# --- position and length bias ----------------------------------------------------------


def test_positions_to_models_and_swap():
    assert ag.positions_to_models(["a", "b", "tie", None], "b") == ["b", "a", "tie", None]
    assert ag.positions_to_models(["a", "a"], ["a", "b"]) == ["a", "b"]
    assert ag.swap_verdicts(["a", "b", "tie"]) == ["b", "a", "tie"]
    with pytest.raises(ValueError, match="first_shown must be 'a' or 'b'"):
        ag.positions_to_models(["a"], ["c"])


def test_position_bias_by_hand():
    # model-terms verdicts; order_ab shows A first, order_ba shows B first
    order_ab = ["a", "a", "b", "tie", "a", "tie"]
    order_ba = ["a", "b", "a", "tie", "tie", "b"]
    # pair 1 consistent; 2 first both times; 3 second both times; 4 consistent tie;
    # 5 first then tie (favours first); 6 tie then B-as-first wins (favours first)
    result = ag.position_bias(order_ab, order_ba)
    assert result.n == 6
    assert result.consistency == pytest.approx(2 / 6)
    assert result.n_inconsistent == 4
    assert result.first_preference == pytest.approx(3 / 4)
    # first-shown wins: order_ab has 3 "a"; order_ba has 2 "b" (B was first): 5 of 12
    assert result.first_position_win_rate == pytest.approx(5 / 12)


def test_position_bias_from_position_verdicts():
    # a judge that always picks the first-shown answer: verdicts in positions are all "a"
    order_ba = ag.positions_to_models(["a", "a", "a"], "b")
    result = ag.position_bias(["a", "a", "a"], order_ba)
    assert (result.consistency, result.first_preference) == (0.0, 1.0)
    assert result.first_position_win_rate == 1.0


def test_position_bias_perfectly_consistent_judge():
    result = ag.position_bias(["a", "b", "tie"], ["a", "b", "tie"])
    assert result.consistency == 1.0 and result.n_inconsistent == 0
    assert math.isnan(result.first_preference)
    assert result.first_position_win_rate == pytest.approx(2 / 6)


def test_length_bias_with_wilson_interval():
    verdicts = ["a", "b", "tie", "a", "b", "a", None]
    len_a = [100, 50, 10, 30, 80, 5, 1]
    len_b = [20, 90, 99, 30, 10, 9, 2]
    # counted: 1 (a, A longer: yes), 2 (b, B longer: yes), 5 (b, A longer: no),
    # 6 (a, B longer: no); 3 is a tie, 4 has equal lengths, 7 is missing
    rate, n = ag.prefers_longer(verdicts, len_a, len_b)
    assert n == 4
    assert rate == wilson_interval(2, 4)
    # humans on the same items: decisive everywhere; 4 has equal lengths; the longer
    # answer wins on 1, 2, 3, 5, 6 and loses on 7 (A chosen, A shorter)
    human = ["a", "b", "b", "a", "a", "b", "a"]
    result = ag.length_bias(verdicts, len_a, len_b, human=human)
    assert result.judge == wilson_interval(2, 4) and result.n_judge == 4
    assert result.human == wilson_interval(5, 6) and result.n_human == 6


def test_length_bias_without_humans():
    result = ag.length_bias(["a"], [10], [5])
    assert result.judge.estimate == 1.0 and result.n_human == 0
    assert math.isnan(result.human.estimate)


# --- test-retest -----------------------------------------------------------------------


def test_retest_agreement_bundles_the_paired_statistics():
    run1, run2 = [1, 2, 3, 4, 5, None], [1, 2, 4, 4, 5, 3]
    result = ag.retest_agreement(run1, run2)
    assert result.n == 5
    assert result.exact.estimate == pytest.approx(4 / 5)
    assert result.within_1.estimate == pytest.approx(5 / 5)
    assert result.pearson.estimate == pytest.approx(sps.pearsonr(run1[:5], run2[:5]).statistic)
    assert result.spearman.estimate == pytest.approx(sps.spearmanr(run1[:5], run2[:5]).statistic)
    assert result.kappa == pytest.approx(skm.cohen_kappa_score(run1[:5], run2[:5]))
    assert result.quadratic_kappa == pytest.approx(
        skm.cohen_kappa_score(run1[:5], run2[:5], weights="quadratic")
    )


def test_retest_agreement_seeded_intervals():
    run1, run2 = _random_scores(12, n=50)
    first = ag.retest_agreement(run1, run2, rng=np.random.default_rng(3), rounds=100)
    again = ag.retest_agreement(run1, run2, rng=np.random.default_rng(3), rounds=100)
    assert first == again
    for interval in (first.exact, first.within_1, first.pearson, first.spearman):
        assert isinstance(interval, Interval)
        assert interval.low <= interval.estimate <= interval.high


# --- classification --------------------------------------------------------------------


def test_confusion_matrix_is_labelled_gold_by_pred():
    pred, gold = ["a", "b", "tie", "a", "a"], ["a", "a", "tie", "b", "a"]
    table = ag.confusion_matrix(pred, gold, labels=["a", "b", "tie"])
    assert table.index.name == "gold" and table.columns.name == "pred"
    assert table.loc["a", "a"] == 2 and table.loc["a", "b"] == 1 and table.loc["b", "a"] == 1
    assert (
        table.to_numpy().tolist()
        == skm.confusion_matrix(gold, pred, labels=["a", "b", "tie"]).tolist()
    )


def test_classification_report_by_hand():
    pred, gold = ["a", "b", "tie", "a", "a"], ["a", "a", "tie", "b", "a"]
    # a: tp 2, predicted 3, true 3 -> P = R = F1 = 2/3; b: tp 0 -> 0, 0, 0; tie: 1, 1, 1
    report = ag.classification_report(pred, gold, labels=["a", "b", "tie"])
    assert report["n"] == 5
    assert report["accuracy"] == pytest.approx(3 / 5)
    assert report["precision"] == pytest.approx((2 / 3 + 0 + 1) / 3)
    assert report["recall"] == pytest.approx((2 / 3 + 0 + 1) / 3)
    assert report["f1"] == pytest.approx((2 / 3 + 0 + 1) / 3)
    p_o, p_e = 3 / 5, (3 * 3 + 1 * 1 + 1 * 1) / 5**2
    assert report["kappa"] == pytest.approx((p_o - p_e) / (1 - p_e))


@pytest.mark.parametrize("seed", [21, 22])
def test_classification_report_matches_sklearn(seed):
    rng = np.random.default_rng(seed)
    labels = ["a", "b", "tie", "never"]  # "never" is in no data: scores 0, as sklearn
    gold = rng.choice(labels[:3], 90, p=[0.45, 0.45, 0.1])
    pred = np.where(rng.random(90) < 0.6, gold, rng.choice(labels[:3], 90))
    report = ag.classification_report(pred, gold, labels)
    p, r, f, _ = skm.precision_recall_fscore_support(
        gold, pred, labels=labels, average="macro", zero_division=0
    )
    assert (report["precision"], report["recall"], report["f1"]) == pytest.approx((p, r, f))
    assert report["accuracy"] == pytest.approx(skm.accuracy_score(gold, pred))
    assert report["kappa"] == pytest.approx(skm.cohen_kappa_score(gold, pred))
    scores = ag.per_class_scores(pred, gold, labels)
    p, r, f, s = skm.precision_recall_fscore_support(gold, pred, labels=labels, zero_division=0)
    assert scores["f1"].tolist() == pytest.approx(f.tolist())
    assert scores["support"].tolist() == s.tolist()


def test_classification_report_reproduces_pandalm_published_numbers(mirror):
    """PandaLM's data/compute_metrics.py prints these for its test set (human majority of
    3 annotators; 0 = tie, 1 = response1, 2 = response2; GPT's "Tie"/"garbage" count as tie).
    """
    from evalbench.sources import fetch

    def load(name: str) -> list[dict]:
        return json.loads(fetch(name, progress=False).read_text(encoding="utf-8"))

    code = {0: "tie", 1: "a", 2: "b", "1": "a", "2": "b", "Tie": "tie", "garbage": "tie"}
    test_set = load("pandalm/testset-v1")
    gold = ag.majority_vote([[code[r[f"annotator{i}"]] for i in (1, 2, 3)] for r in test_set])
    published = {
        ("pandalm/gpt-3.5-turbo-testset-v1", "gpt_result"): (0.7107, 0.5879, 0.5736, 0.5755),
        ("pandalm/pandalm-7b-testset-v1", "pandalm_result"): (0.6677, 0.5738, 0.5750, 0.5743),
    }
    for (name, field), numbers in published.items():
        rows = load(name)
        assert [r["idx"] for r in rows] == [r["idx"] for r in test_set]
        report = ag.classification_report([code[r[field]] for r in rows], gold, ["tie", "a", "b"])
        got = (report["accuracy"], report["precision"], report["recall"], report["f1"])
        assert got == pytest.approx(numbers, abs=5e-5), name


# --- input validation ------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda: ag.exact_agreement([1, 2, 3], [1, 2]),
        lambda: ag.mean_absolute_error([1, 2, 3], [1, 2]),
        lambda: ag.pearson([1, 2, 3], [1, 2]),
        lambda: ag.cohen_kappa([1, 2, 3], [1, 2]),
        lambda: ag.pairwise_agreement(["a"], ["a", "b"]),
        lambda: ag.position_bias(["a"], ["a", "b"]),
        lambda: ag.prefers_longer(["a"], [1, 2], [3, 4]),
        lambda: ag.confusion_matrix([1, 2, 3], [1, 2]),
    ],
)
def test_mismatched_lengths_are_a_clear_error(call):
    with pytest.raises(ValueError, match=r"lengths differ \(\w+ has \d, \w+ has \d"):
        call()


def test_non_numeric_score_names_its_position():
    with pytest.raises(ValueError, match=r"mean_absolute_error: judge\[1\] = 'high'"):
        ag.mean_absolute_error([1, "high"], [1, 2])


def test_a_bare_string_is_not_a_sequence_of_labels():
    with pytest.raises(ValueError, match="must be a 1-D sequence"):
        ag.exact_agreement("abc", ["a", "b", "c"])


def test_within_k_counts_an_exact_k_despite_float_noise():
    # weighted scores 0.5/0.3/0.2 of (2, 2, 4) and (1, 1, 3): exactly one point apart on
    # paper (2.4 - 1.4), one point and a hair in floating point
    judge = sum([0.5 * 2, 0.3 * 2, 0.2 * 4])
    human = sum([0.5 * 1, 0.3 * 1, 0.2 * 3])
    assert judge - human > 1
    assert ag.within_k_agreement([judge], [human], k=1).estimate == 1.0
    assert ag.within_k_agreement([judge + 0.01], [human], k=1).estimate == 0.0
