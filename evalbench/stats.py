"""Intervals and paired tests shared by several studies.

Everything here is a pure function of plain arrays; randomness only comes in through an
explicit ``numpy.random.Generator`` so every interval in a report is reproducible.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np
from scipy.special import betainc, ndtri

DEFAULT_LEVEL = 0.95
DEFAULT_ROUNDS = 1000


class Interval(NamedTuple):
    """A point estimate with a two-sided confidence interval."""

    estimate: float
    low: float
    high: float
    level: float = DEFAULT_LEVEL


def wilson_interval(successes: int, n: int, level: float = DEFAULT_LEVEL) -> Interval:
    """Wilson score interval for a binomial proportion.

    Formula (Wilson, 1927; Agresti & Coull, 1998):
    ``(p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)`` with ``z = Φ⁻¹(1 - α/2)``.
    An empty sample has no estimate: every field is NaN.

    Args:
        successes: number of successes, ``0 <= successes <= n``.
        n: number of trials.
        level: confidence level in (0, 1).

    Returns:
        The observed proportion and its Wilson interval.
    """
    if not 0 <= successes <= n:
        raise ValueError(f"wilson_interval: need 0 <= successes <= n, got {successes}/{n}")
    if n == 0:
        return Interval(float("nan"), float("nan"), float("nan"), level)
    z = float(ndtri(1 - (1 - level) / 2))  # the normal quantile, as scipy.stats.norm.ppf
    p = successes / n
    denom = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # the interval holds p exactly; rounding put low at 5.6e-17 > p = 0 for 0 of 3
    low, high = min(p, max(0.0, center - half)), max(p, min(1.0, center + half))
    return Interval(p, float(low), float(high), level)


def percentile_interval(
    estimate: float, replicates: np.ndarray, level: float = DEFAULT_LEVEL
) -> Interval:
    """Percentile bootstrap interval around ``estimate`` from bootstrap ``replicates``.

    NaN replicates (a resample where the statistic is undefined) are ignored; if all are
    NaN the interval is NaN.

    Args:
        estimate: the statistic on the full data (returned as the interval's estimate).
        replicates: the statistic on each bootstrap resample.
        level: confidence level in (0, 1).

    Returns:
        ``estimate`` with the ``(1 - level)/2`` and ``(1 + level)/2`` quantiles of the
        finite replicates.
    """
    finite = replicates[np.isfinite(replicates)]
    if finite.size == 0:
        return Interval(estimate, float("nan"), float("nan"), level)
    alpha = (1 - level) / 2
    low, high = np.quantile(finite, [alpha, 1 - alpha])
    return Interval(estimate, float(low), float(high), level)


def bootstrap(
    statistic: Callable[..., float],
    *columns: Sequence[float] | np.ndarray,
    rng: np.random.Generator,
    rounds: int = DEFAULT_ROUNDS,
    level: float = DEFAULT_LEVEL,
) -> Interval:
    """Percentile bootstrap of ``statistic(*columns)``, resampling rows jointly.

    Resampling the rows of all columns together keeps pairs paired, so the same helper
    serves one-sample statistics (one column) and paired ones (several columns).

    Args:
        statistic: function of the column arrays returning a float.
        *columns: equally long sequences (the rows are the resampling unit).
        rng: the source of randomness (seed it for reproducible reports).
        rounds: number of bootstrap resamples.
        level: confidence level.

    Returns:
        ``statistic`` on the full data with its percentile interval.
    """
    arrays = [np.asarray(c) for c in columns]
    n = _common_length(arrays)
    estimate = float(statistic(*arrays)) if n else float("nan")
    if n == 0:
        return Interval(estimate, float("nan"), float("nan"), level)
    idx = rng.integers(0, n, size=(rounds, n))
    reps = np.array([statistic(*(a[i] for a in arrays)) for i in idx], dtype=float)
    return percentile_interval(estimate, reps, level)


def bootstrap_mean(
    values: Sequence[float] | np.ndarray,
    *,
    rng: np.random.Generator,
    rounds: int = DEFAULT_ROUNDS,
    level: float = DEFAULT_LEVEL,
) -> Interval:
    """Percentile bootstrap interval of a mean (vectorised, see :func:`mean_replicates`).

    Args:
        values: the sample (booleans count as 0/1).
        rng: the source of randomness.
        rounds: number of bootstrap resamples.
        level: confidence level.

    Returns:
        The sample mean with its percentile interval (all NaN for an empty sample).
    """
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return Interval(float("nan"), float("nan"), float("nan"), level)
    return percentile_interval(float(x.mean()), mean_replicates(x, rng=rng, rounds=rounds), level)


def mean_replicates(
    values: Sequence[float] | np.ndarray,
    *,
    rng: np.random.Generator,
    rounds: int = DEFAULT_ROUNDS,
) -> np.ndarray:
    """The means of ``rounds`` resamples of ``values`` drawn with replacement.

    One ``rng.integers(0, n, size=(rounds, n))`` draw, so callers that need the replicates
    themselves (a ratio of two bootstrapped accuracies, a transformed mean) consume the
    generator exactly as :func:`bootstrap_mean` does.

    Args:
        values: the sample (booleans count as 0/1).
        rng: the source of randomness (not used for an empty sample).
        rounds: number of bootstrap resamples.

    Returns:
        ``rounds`` means; all NaN for an empty sample.
    """
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return np.full(rounds, np.nan)
    return x[rng.integers(0, x.size, size=(rounds, x.size))].mean(axis=1)


def mcnemar_exact(b: int, c: int) -> float:
    """Exact (binomial) two-sided McNemar p-value from the discordant counts.

    Under
    H0 each discordant item is a fair coin, so ``p = min(1, 2·P[Binom(b+c, 1/2) <= min(b,c)])``
    (McNemar, 1947; the exact form as in statsmodels' ``mcnemar(exact=True)``).
    With no discordant pairs there is no evidence of a difference: p = 1.

    Args:
        b: items only system A got right.
        c: items only system B got right.

    Returns:
        The two-sided p-value.
    """
    n = b + c
    if n == 0:
        return 1.0
    # P[Binom(n, 1/2) <= m] = I_{1/2}(n - m, m + 1), the regularized incomplete beta function:
    # the value scipy.stats.binom.cdf gives (both are Boost's ibeta), without importing
    # scipy.stats (~0.5 s of CPU in every process that compares two systems)
    m = min(b, c)
    return float(min(1.0, 2 * betainc(n - m, m + 1, 0.5)))


class PairedComparison(NamedTuple):
    """Two systems scored on the same items."""

    n: int
    accuracy_a: float
    accuracy_b: float
    only_a: int
    only_b: int
    difference: Interval
    mcnemar_p: float


def paired_comparison(
    correct_a: Sequence[bool] | np.ndarray,
    correct_b: Sequence[bool] | np.ndarray,
    *,
    rng: np.random.Generator,
    rounds: int = DEFAULT_ROUNDS,
    level: float = DEFAULT_LEVEL,
) -> PairedComparison:
    """Compare two systems' per-item correctness on the same items.

    Args:
        correct_a: per-item correctness of system A.
        correct_b: per-item correctness of system B, same items in the same order.
        rng: the source of randomness of the bootstrap.
        rounds: number of bootstrap resamples.
        level: confidence level.

    Returns:
        Both accuracies, the discordant counts, the exact McNemar p-value and a paired
        bootstrap interval of ``accuracy_a - accuracy_b`` (items resampled, each keeping
        both verdicts).

    Raises:
        ValueError: the two sequences differ in length.
    """
    a = np.asarray(correct_a, dtype=bool)
    b = np.asarray(correct_b, dtype=bool)
    if a.shape != b.shape:
        raise ValueError(f"paired_comparison: {a.size} vs {b.size} items; pair them first")
    only_a = int(np.sum(a & ~b))
    only_b = int(np.sum(~a & b))
    diff = bootstrap_mean(a.astype(float) - b.astype(float), rng=rng, rounds=rounds, level=level)
    return PairedComparison(
        n=int(a.size),
        accuracy_a=float(a.mean()) if a.size else float("nan"),
        accuracy_b=float(b.mean()) if b.size else float("nan"),
        only_a=only_a,
        only_b=only_b,
        difference=diff,
        mcnemar_p=mcnemar_exact(only_a, only_b),
    )


def _common_length(arrays: list[np.ndarray]) -> int:
    lengths = {len(a) for a in arrays}
    if len(lengths) > 1:
        raise ValueError(f"bootstrap: columns differ in length: {sorted(lengths)}")
    return lengths.pop() if lengths else 0
