"""Intervals and paired tests, checked against hand computations."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats as sps

from evalbench.stats import (
    bootstrap,
    bootstrap_mean,
    mcnemar_exact,
    mean_replicates,
    paired_comparison,
    wilson_interval,
)


def test_wilson_interval_by_hand():
    # 8/10 at 95%: z = 1.959964, p = 0.8
    z, n, p = 1.959963984540054, 10, 0.8
    center = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    got = wilson_interval(8, 10)
    assert got.estimate == 0.8
    assert got.low == pytest.approx(center - half) and got.high == pytest.approx(center + half)
    assert got.low == pytest.approx(0.4902, abs=1e-4) and got.high == pytest.approx(
        0.9433, abs=1e-4
    )


def test_wilson_edges():
    assert wilson_interval(0, 5).low == 0.0 and wilson_interval(5, 5).high == 1.0
    assert math.isnan(wilson_interval(0, 0).estimate)
    with pytest.raises(ValueError, match="0 <= successes <= n"):
        wilson_interval(6, 5)


def test_mcnemar_exact_by_hand():
    # b=1, c=5: p = 2 * P[Binom(6, .5) <= 1] = 2 * (1 + 6) / 64
    assert mcnemar_exact(1, 5) == pytest.approx(2 * 7 / 64)
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(3, 3) == 1.0  # capped at 1
    assert mcnemar_exact(0, 10) == pytest.approx(sps.binomtest(0, 10, 0.5).pvalue)


@pytest.mark.parametrize("n", [1, 2, 7, 40, 301, 2000])
def test_mcnemar_exact_equals_the_binomial_sum_in_exact_arithmetic(n):
    # p = 2 * sum_{k <= min(b, c)} C(n, k) / 2^n, as a fraction, then rounded once
    for b in sorted({0, 1, n // 3, n // 2}):
        exact = 2 * Fraction(sum(math.comb(n, k) for k in range(b + 1)), 2**n)
        want = float(min(Fraction(1), exact))
        assert mcnemar_exact(b, n - b) == pytest.approx(want, rel=1e-12, abs=0), (b, n)
        assert mcnemar_exact(n - b, b) == mcnemar_exact(b, n - b)


def test_paired_comparison_counts_and_interval():
    a = [1, 1, 1, 0, 1, 0, 1, 1]
    b = [1, 0, 0, 0, 1, 0, 1, 0]
    result = paired_comparison(a, b, rng=np.random.default_rng(0), rounds=2000)
    assert (result.only_a, result.only_b, result.n) == (3, 0, 8)
    assert result.accuracy_a - result.accuracy_b == pytest.approx(3 / 8)
    assert result.difference.estimate == pytest.approx(3 / 8)
    assert result.difference.low <= 3 / 8 <= result.difference.high
    assert result.mcnemar_p == pytest.approx(2 * 1 / 8)  # 2 * P[Binom(3,.5) <= 0]
    with pytest.raises(ValueError, match="pair them first"):
        paired_comparison([1, 0], [1], rng=np.random.default_rng(0))


def test_bootstraps_are_seeded_and_agree_with_each_other():
    x = np.random.default_rng(1).normal(size=200)
    one = bootstrap_mean(x, rng=np.random.default_rng(5))
    two = bootstrap_mean(x, rng=np.random.default_rng(5))
    assert one == two and one.low < x.mean() < one.high
    generic = bootstrap(np.mean, x, rng=np.random.default_rng(5))
    assert generic == one  # same draws, same statistic
    # the interval width is close to the normal approximation 2 * 1.96 * sd / sqrt(n)
    assert one.high - one.low == pytest.approx(2 * 1.96 * x.std() / math.sqrt(x.size), rel=0.15)


def test_bootstrap_resamples_rows_jointly_and_rejects_ragged_columns():
    x = np.arange(10.0)
    diff = bootstrap(lambda a, b: float(np.mean(a - b)), x, x, rng=np.random.default_rng(0))
    assert (diff.low, diff.high) == (0.0, 0.0)  # pairs kept together: every difference is 0
    with pytest.raises(ValueError, match="differ in length"):
        bootstrap(np.mean, [1, 2], [1], rng=np.random.default_rng(0))


def test_mean_replicates_are_the_draws_of_bootstrap_mean():
    x = np.array([1.0, 0.0, 0.0, 1.0, 1.0])
    reps = mean_replicates(x, rng=np.random.default_rng(3), rounds=4)
    idx = np.random.default_rng(3).integers(0, 5, size=(4, 5))  # the same single draw
    assert reps.tolist() == [x[row].sum() / 5 for row in idx]
    one = bootstrap_mean(x, rng=np.random.default_rng(3), rounds=400)
    reps = mean_replicates(x, rng=np.random.default_rng(3), rounds=400)
    assert (one.low, one.high) == tuple(np.quantile(reps, [0.025, 0.975]))
    empty = mean_replicates([], rng=np.random.default_rng(0), rounds=3)
    assert empty.shape == (3,) and np.isnan(empty).all()


def test_wilson_interval_holds_its_estimate_exactly_at_0_and_n():
    # at p = 0: centre = half = (z²/2n) / (1 + z²/n), so low is 0 in exact arithmetic; floating
    # point gave 5.6e-17 for 0 of 3, above the estimate, and matplotlib refused the error bar
    for n in range(1, 200):
        none, every = wilson_interval(0, n), wilson_interval(n, n)
        assert none.low == 0.0 <= none.estimate
        assert every.high == 1.0 >= every.estimate
    for k, n in [(1, 3), (2, 7), (5, 9)]:
        w = wilson_interval(k, n)
        assert w.low <= w.estimate <= w.high
