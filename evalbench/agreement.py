"""Agreement statistics for LLM judges against humans, other judges, or themselves.

Pure functions over plain sequences, arrays and DataFrames (numpy/scipy only). Paired
statistics take two equally long sequences (position *i* is the same item on both sides)
and drop every pair with a missing side (None/NaN); a length mismatch is an error.
Undefined statistics (a kappa when every rating is one label, a correlation of a constant)
are NaN, never a made-up number. Intervals are percentile bootstraps over items, drawn only
from the ``rng`` you pass (no ``rng``: the interval bounds are NaN).

References: Cohen (1960, 1968) kappa; Fleiss (1971); Krippendorff (2011) "Computing
Krippendorff's Alpha-Reliability"; Zheng et al. (2023) "Judging LLM-as-a-judge with MT-Bench
and Chatbot Arena" (pairwise agreement, position bias); Wang et al. (2023) PandaLM
(classification metrics against the human majority); Williamson, Xi & Breyer (2012) "A
framework for evaluation and use of automated scoring" (exact/adjacent agreement).

The pairwise-verdict statistics (MT-Bench agreement, majority vote, position and length bias)
live in :mod:`evalbench.agreement_pairwise` and are importable from here too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, NamedTuple

import numpy as np
import pandas as pd

from evalbench.agreement_pairwise import (
    NAN,
    VERDICTS,
    LengthBias,
    NoMajority,
    PairwiseAgreement,
    PositionBias,
    Values,
    _paired,
    _paired_float,
    _present,
    _sorted_labels,
    _to_float,
    length_bias,
    majority_vote,
    normalize_verdict,
    pairwise_agreement,
    position_bias,
    positions_to_models,
    prefers_longer,
    swap_verdicts,
)
from evalbench.stats import (
    DEFAULT_LEVEL,
    DEFAULT_ROUNDS,
    Interval,
    bootstrap,
    bootstrap_mean,
    percentile_interval,
)

__all__ = [
    "DISTANCE_SLACK",
    "NAN",
    "VERDICTS",
    "LengthBias",
    "Level",
    "NoMajority",
    "PairwiseAgreement",
    "PositionBias",
    "RetestAgreement",
    "Values",
    "Weights",
    "classification_report",
    "cohen_kappa",
    "confusion_matrix",
    "exact_agreement",
    "fleiss_kappa",
    "fleiss_kappa_counts",
    "kappa_interval",
    "kendall_tau",
    "krippendorff_alpha",
    "length_bias",
    "majority_vote",
    "mean_absolute_error",
    "mean_signed_error",
    "normalize_verdict",
    "pairwise_agreement",
    "pearson",
    "per_class_scores",
    "position_bias",
    "positions_to_models",
    "prefers_longer",
    "rating_counts",
    "retest_agreement",
    "spearman",
    "swap_verdicts",
    "weighted_kappa",
    "within_k_agreement",
]

Level = Literal["nominal", "ordinal", "interval", "ratio"]
Weights = Literal["linear", "quadratic"]
# Weighted scores carry float noise (0.5·2 + 0.3·2 + 0.2·4 minus 0.5·1 + 0.3·1 + 0.2·3 is
# 1.0000000000000002), so a difference of exactly k is compared with this slack.
DISTANCE_SLACK = 1e-9


# ---------------------------------------------------------------------------------------
# input handling (the paired-column helpers are in evalbench.agreement_pairwise)
# ---------------------------------------------------------------------------------------


def _mean_interval(
    values: np.ndarray, rng: np.random.Generator | None, rounds: int, level: float
) -> Interval:
    if values.size == 0:
        return Interval(NAN, NAN, NAN, level)
    if rng is None:
        return Interval(float(values.mean()), NAN, NAN, level)
    return bootstrap_mean(values, rng=rng, rounds=rounds, level=level)


# ---------------------------------------------------------------------------------------
# agreement and error on scores
# ---------------------------------------------------------------------------------------


def exact_agreement(
    judge: Values,
    human: Values,
    *,
    rng: np.random.Generator | None = None,
    rounds: int = DEFAULT_ROUNDS,
    level: float = DEFAULT_LEVEL,
) -> Interval:
    """Share of items where both sides give the same label: ``mean(judge == human)``.

    "Exact agreement" in Williamson, Xi & Breyer (2012). Works for any labels (scores,
    verdicts, strings). Pairs with a missing side are dropped.

    Args:
        judge: one label per item.
        human: one label per item, same order as ``judge``.
        rng: if given, a percentile bootstrap interval over items; otherwise NaN bounds.
        rounds: bootstrap resamples.
        level: confidence level.

    Returns:
        The agreement rate with its interval (all NaN when no pair is left).
    """
    j, h = _paired("exact_agreement", judge=judge, human=human)
    return _mean_interval(np.asarray(j == h, dtype=float), rng, rounds, level)


def within_k_agreement(
    judge: Values,
    human: Values,
    k: float = 1,
    *,
    rng: np.random.Generator | None = None,
    rounds: int = DEFAULT_ROUNDS,
    level: float = DEFAULT_LEVEL,
) -> Interval:
    """Share of items with ``|judge - human| <= k`` ("adjacent agreement" for ``k = 1``).

    Williamson, Xi & Breyer (2012). Numeric scores only; pairs with a missing side are
    dropped; the comparison allows :data:`DISTANCE_SLACK` for float noise.
    ``rng``/``rounds``/``level`` as in :func:`exact_agreement`.
    """
    j, h = _paired_float("within_k_agreement", judge=judge, human=human)
    return _mean_interval((np.abs(j - h) <= k + DISTANCE_SLACK).astype(float), rng, rounds, level)


def mean_absolute_error(
    judge: Values,
    human: Values,
    *,
    rng: np.random.Generator | None = None,
    rounds: int = DEFAULT_ROUNDS,
    level: float = DEFAULT_LEVEL,
) -> Interval:
    """Mean absolute error ``mean(|judge - human|)`` (e.g. Willmott & Matsuura, 2005).

    Pairs with a missing side are dropped. ``rng``/``rounds``/``level`` as in
    :func:`exact_agreement`.
    """
    j, h = _paired_float("mean_absolute_error", judge=judge, human=human)
    return _mean_interval(np.abs(j - h), rng, rounds, level)


def mean_signed_error(
    judge: Values,
    human: Values,
    *,
    rng: np.random.Generator | None = None,
    rounds: int = DEFAULT_ROUNDS,
    level: float = DEFAULT_LEVEL,
) -> Interval:
    """Mean signed error (bias) ``mean(judge - human)``: positive = the judge is more lenient.

    The "mean difference" of Williamson, Xi & Breyer (2012), unstandardised. Pairs with a
    missing side are dropped. ``rng``/``rounds``/``level`` as in :func:`exact_agreement`.
    """
    j, h = _paired_float("mean_signed_error", judge=judge, human=human)
    return _mean_interval(j - h, rng, rounds, level)


# ---------------------------------------------------------------------------------------
# correlations
# ---------------------------------------------------------------------------------------


def _pearson_r(x: np.ndarray, y: np.ndarray) -> float:
    if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return NAN
    dx, dy = x - x.mean(), y - y.mean()
    return float(np.clip(dx @ dy / np.sqrt((dx @ dx) * (dy @ dy)), -1.0, 1.0))


def _spearman_rho(x: np.ndarray, y: np.ndarray) -> float:
    from scipy import stats as sps  # here: importing scipy.stats costs ~0.5 s per process

    return _pearson_r(sps.rankdata(x), sps.rankdata(y))


_ROWS_AT_ONCE = 2_000_000
"""Values resampled at once by :func:`_rows_bootstrap` (16 MB per array of them)."""


def _spearman_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """:func:`_spearman_rho` of each row of ``x`` with the same row of ``y``."""
    from scipy import stats as sps

    return _pearson_rows(sps.rankdata(x, axis=1), sps.rankdata(y, axis=1))


def _rows_bootstrap(
    rows: Callable[[np.ndarray, np.ndarray], np.ndarray],
    estimate: float,
    x: np.ndarray,
    y: np.ndarray,
    rng: np.random.Generator,
    rounds: int,
    level: float,
) -> Interval:
    """:func:`~evalbench.stats.bootstrap` (the same resamples of the same ``rng``) of a
    statistic ``rows`` computes for many resamples per call, a chunk of rows at a time:
    Spearman's rho 5-30x faster than one ranking per resample."""
    n = x.size
    idx = rng.integers(0, n, size=(rounds, n))
    reps = np.empty(rounds)
    step = max(1, _ROWS_AT_ONCE // n)
    for start in range(0, rounds, step):
        chunk = idx[start : start + step]
        reps[start : start + step] = rows(x[chunk], y[chunk])
    return percentile_interval(estimate, reps, level)


def _pearson_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """:func:`_pearson_r` of each row of ``x`` with the same row of ``y``."""
    dx, dy = x - x.mean(axis=1, keepdims=True), y - y.mean(axis=1, keepdims=True)
    constant = (np.ptp(x, axis=1) == 0) | (np.ptp(y, axis=1) == 0) | (x.shape[1] < 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.einsum("ij,ij->i", dx, dy) / np.sqrt(
            np.einsum("ij,ij->i", dx, dx) * np.einsum("ij,ij->i", dy, dy)
        )
    return np.where(constant, NAN, np.clip(r, -1.0, 1.0))


def _kendall_tau_b(x: np.ndarray, y: np.ndarray) -> float:
    if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return NAN
    from scipy import stats as sps

    return float(sps.kendalltau(x, y, variant="b").statistic)


def _correlation(
    statistic: Callable[[np.ndarray, np.ndarray], float],
    where: str,
    x: Values,
    y: Values,
    rng: np.random.Generator | None,
    rounds: int,
    level: float,
    rows: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
) -> Interval:
    """``statistic`` of the complete pairs with its bootstrap interval (``rows``: the same
    statistic of many resamples at once, :func:`_rows_bootstrap`)."""
    a, b = _paired_float(where, x=x, y=y)
    if rng is None or a.size == 0:
        return Interval(statistic(a, b) if a.size else NAN, NAN, NAN, level)
    if rows is not None:
        return _rows_bootstrap(rows, statistic(a, b), a, b, rng, rounds, level)
    return bootstrap(statistic, a, b, rng=rng, rounds=rounds, level=level)


def pearson(
    x: Values,
    y: Values,
    *,
    rng: np.random.Generator | None = None,
    rounds: int = DEFAULT_ROUNDS,
    level: float = DEFAULT_LEVEL,
) -> Interval:
    """Pearson's r ``cov(x, y) / (sd(x)·sd(y))`` (Pearson, 1895), as ``scipy.stats.pearsonr``.

    Pairs with a missing side are dropped; NaN if either side is constant or n < 2. With
    ``rng``, a percentile bootstrap (Efron & Tibshirani, 1993) resampling items jointly;
    resamples where r is undefined are ignored.
    """
    return _correlation(_pearson_r, "pearson", x, y, rng, rounds, level)


def spearman(
    x: Values,
    y: Values,
    *,
    rng: np.random.Generator | None = None,
    rounds: int = DEFAULT_ROUNDS,
    level: float = DEFAULT_LEVEL,
) -> Interval:
    """Spearman's rho: Pearson's r of the average ranks (Spearman, 1904), as ``spearmanr``.

    Missing pairs, NaN and bootstrap as in :func:`pearson`.
    """
    return _correlation(_spearman_rho, "spearman", x, y, rng, rounds, level, _spearman_rows)


def kendall_tau(
    x: Values,
    y: Values,
    *,
    rng: np.random.Generator | None = None,
    rounds: int = DEFAULT_ROUNDS,
    level: float = DEFAULT_LEVEL,
) -> Interval:
    """Kendall's tau-b ``(P - Q) / sqrt((P + Q + T_x)(P + Q + T_y))`` (Kendall, 1945).

    P/Q = concordant/discordant pairs, T_x/T_y = pairs tied only in x/only in y; computed
    by ``scipy.stats.kendalltau(variant="b")``. Missing pairs, NaN and bootstrap as in
    :func:`pearson`.
    """
    return _correlation(_kendall_tau_b, "kendall_tau", x, y, rng, rounds, level)


# ---------------------------------------------------------------------------------------
# kappa statistics
# ---------------------------------------------------------------------------------------


def _index(values: np.ndarray, labels: Values, where: str) -> np.ndarray:
    position = {label: i for i, label in enumerate(labels)}
    unknown = [v for v in values if v not in position]
    if unknown:
        raise ValueError(f"{where}: value {unknown[0]!r} is not in labels {list(labels)}")
    return np.array([position[v] for v in values], dtype=int)


def _table(a: Any, b: Any, labels: Values | None, where: str) -> np.ndarray:
    x, y = _paired(where, a=a, b=b)
    labels = _sorted_labels([*x, *y]) if labels is None else list(labels)
    table = np.zeros((len(labels), len(labels)))
    np.add.at(table, (_index(x, labels, where), _index(y, labels, where)), 1)
    return table


def _kappa(table: np.ndarray, disagreement: np.ndarray) -> float:
    if table.sum() == 0:
        return NAN
    return float(_kappas(table[None, :, :], disagreement)[0])


def cohen_kappa(a: Values, b: Values, labels: Values | None = None) -> float:
    """Cohen's (1960) kappa ``(p_o - p_e) / (1 - p_e)`` for two raters on nominal labels.

    ``p_o`` = observed agreement, ``p_e = Σ_c p_a(c)·p_b(c)`` from each rater's marginals.
    Any hashable labels. Pairs with a missing side are dropped. Undefined (NaN) when
    ``p_e = 1``, i.e. both raters used one and the same label throughout, or no pair is
    left. Matches ``sklearn.metrics.cohen_kappa_score``.

    Args:
        a: one label per item.
        b: one label per item, same order.
        labels: the label set; default the sorted labels seen. A value outside it is an error.
    """
    table = _table(a, b, labels, "cohen_kappa")
    return _kappa(table, _disagreement_weights(len(table), None))


def weighted_kappa(
    a: Values,
    b: Values,
    weights: Weights = "quadratic",
    labels: Values | None = None,
) -> float:
    """Weighted kappa (Cohen, 1968) ``1 - Σ w_ij·O_ij / Σ w_ij·E_ij``.

    ``O`` = observed table, ``E`` = outer product of the marginals / n, and the
    disagreement weight of labels at positions ``i, j`` of ``labels`` is ``|i - j|``
    (linear) or ``(i - j)²`` (quadratic; QWK, Fleiss & Cohen 1973). Distances are positions
    in ``labels``, not the values, as in ``sklearn.metrics.cohen_kappa_score(weights=...)``:
    pass the full scale (e.g. ``range(1, 11)``) so that an unused score still counts as a
    step. Missing pairs and NaN as in :func:`cohen_kappa`.
    """
    if weights not in ("linear", "quadratic"):
        raise ValueError(
            f"weighted_kappa: weights must be 'linear' or 'quadratic', got {weights!r}"
        )
    table = _table(a, b, labels, "weighted_kappa")
    return _kappa(table, _disagreement_weights(len(table), weights))


def _disagreement_weights(k: int, weights: Weights | None) -> np.ndarray:
    if weights is None:
        return 1.0 - np.eye(k)
    if weights not in ("linear", "quadratic"):
        raise ValueError(
            f"kappa_interval: weights must be None, 'linear' or 'quadratic', got {weights!r}"
        )
    steps = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(float)
    return steps ** (2 if weights == "quadratic" else 1)


def _kappas(tables: np.ndarray, disagreement: np.ndarray) -> np.ndarray:
    """:func:`_kappa` of a stack of tables (shape ``rounds × k × k``), vectorised."""
    n = tables.sum(axis=(1, 2))
    expected = tables.sum(2)[:, :, None] * tables.sum(1)[:, None, :] / n[:, None, None]
    chance = (disagreement * expected).sum(axis=(1, 2))
    observed = (disagreement * tables).sum(axis=(1, 2))
    out = np.full(len(tables), NAN)
    np.divide(observed, chance, out=out, where=chance > 0)
    return np.where(chance > 0, 1.0 - out, NAN)


def kappa_interval(
    a: Values,
    b: Values,
    labels: Values | None = None,
    *,
    weights: Weights | None = None,
    rng: np.random.Generator | None = None,
    rounds: int = DEFAULT_ROUNDS,
    level: float = DEFAULT_LEVEL,
) -> Interval:
    """Cohen's kappa (``weights=None``) or weighted kappa with a percentile bootstrap interval.

    The estimate equals :func:`cohen_kappa` / :func:`weighted_kappa`; the interval resamples
    items (pairs) with replacement, exactly as ``stats.bootstrap(statistic, a, b, rng=rng)``
    would (same draws), but builds all ``rounds`` agreement tables at once with one
    ``bincount``, so thousands of rounds cost milliseconds. Resamples where kappa is
    undefined (one label throughout) are ignored. Pairs with a missing side are dropped.

    Args:
        a: one label per item.
        b: one label per item, same order.
        labels: the label set (the scale, for weighted kappa); default the sorted labels seen.
        weights: ``None`` (nominal), ``"linear"`` or ``"quadratic"``.
        rng: if given, the bootstrap interval; otherwise NaN bounds.
        rounds: bootstrap resamples.
        level: confidence level.
    """
    x, y = _paired("kappa_interval", a=a, b=b)
    labels = _sorted_labels([*x, *y]) if labels is None else list(labels)
    k = len(labels)
    disagreement = _disagreement_weights(k, weights)
    codes = _index(x, labels, "kappa_interval") * k + _index(y, labels, "kappa_interval")
    if codes.size == 0:
        return Interval(NAN, NAN, NAN, level)
    table = np.bincount(codes, minlength=k * k).reshape(1, k, k).astype(float)
    estimate = float(_kappas(table, disagreement)[0])
    if rng is None:
        return Interval(estimate, NAN, NAN, level)
    idx = rng.integers(0, codes.size, size=(rounds, codes.size))
    flat = codes[idx] + (np.arange(rounds) * k * k)[:, None]
    tables = np.bincount(flat.ravel(), minlength=rounds * k * k).reshape(rounds, k, k)
    return percentile_interval(estimate, _kappas(tables.astype(float), disagreement), level)


def rating_counts(ratings: Any, labels: Values | None = None) -> pd.DataFrame:
    """Turn an items × raters table of labels into an items × labels table of counts.

    Missing ratings (None/NaN) are not counted. ``labels`` fixes the columns (default: the
    sorted labels seen); a rating outside it is an error.
    """
    data = pd.DataFrame(ratings)
    values = data.to_numpy(dtype=object)
    present = _present(values)
    labels = _sorted_labels(values[present]) if labels is None else list(labels)
    counts = np.zeros((len(data), len(labels)), dtype=int)
    rows = np.nonzero(present)[0]
    np.add.at(counts, (rows, _index(values[present], labels, "rating_counts")), 1)
    return pd.DataFrame(counts, index=data.index, columns=pd.Index(labels, name="label"))


def fleiss_kappa_counts(counts: Any) -> float:
    """Fleiss' (1971) kappa from an items × categories matrix of rating counts.

    With N items, n ratings per item and counts n_ij:
    ``P_i = (Σ_j n_ij² - n) / (n(n - 1))``, ``P̄ = mean_i P_i``, ``p_j = Σ_i n_ij / (N·n)``,
    ``P̄_e = Σ_j p_j²`` and ``κ = (P̄ - P̄_e) / (1 - P̄_e)``. Every item needs the same
    n >= 2 (use :func:`krippendorff_alpha` for missing ratings). NaN when ``P̄_e = 1``
    (every rating in one category) or there are no items.
    """
    n_ij = np.asarray(counts, dtype=float)
    if n_ij.ndim != 2 or (n_ij < 0).any():
        raise ValueError(f"fleiss_kappa: need a 2-D matrix of counts >= 0, got shape {n_ij.shape}")
    if n_ij.shape[0] == 0:
        return NAN
    per_item = n_ij.sum(axis=1)
    uneven = np.nonzero(per_item != per_item[0])[0]
    if uneven.size or per_item[0] < 2:
        i = int(uneven[0]) if uneven.size else 0
        raise ValueError(
            f"fleiss_kappa: every item needs the same number (>= 2) of ratings; item {i} has "
            f"{per_item[i]:g}, item 0 has {per_item[0]:g} (krippendorff_alpha allows missing)"
        )
    n = per_item[0]
    p_bar = float(((n_ij**2).sum(axis=1) - n).mean() / (n * (n - 1)))
    p_e = float(((n_ij.sum(axis=0) / n_ij.sum()) ** 2).sum())
    return (p_bar - p_e) / (1 - p_e) if not np.isclose(p_e, 1.0) else NAN


def fleiss_kappa(ratings: Any, labels: Values | None = None) -> float:
    """Fleiss' (1971) kappa from an items × raters table of labels (rows = items).

    Formula in :func:`fleiss_kappa_counts`; the raters need not be the same people across
    items, but every item needs the same number of ratings (a missing rating is an error).
    """
    return fleiss_kappa_counts(rating_counts(ratings, labels))


# ---------------------------------------------------------------------------------------
# Krippendorff's alpha
# ---------------------------------------------------------------------------------------


def _coincidences(counts: np.ndarray) -> np.ndarray:
    """o_ck = Σ_u (number of c-k pairs of values in unit u) / (m_u - 1), units with m_u >= 2."""
    m = counts.sum(axis=1)
    pairable = counts[m >= 2]
    weighted = pairable / (m[m >= 2] - 1)[:, None]
    return weighted.T @ pairable - np.diag(weighted.sum(axis=0))


def _squared_distances(level: str, values: np.ndarray, n_c: np.ndarray) -> np.ndarray:
    if level == "nominal":
        return 1.0 - np.eye(len(n_c))
    if level == "ordinal":
        # Krippendorff's (Σ_{g=c}^{k} n_g - (n_c + n_k)/2)² equals the squared gap between
        # the cumulative mid-ranks cumsum(n)_c - n_c/2 of the two values.
        values = np.cumsum(n_c) - n_c / 2
    diff = np.subtract.outer(values, values)
    if level == "ratio":
        total = np.add.outer(values, values)
        diff = np.divide(diff, total, out=np.zeros_like(diff), where=total != 0)
    return diff**2


def _domain(present: np.ndarray, level: str, order: Values | None) -> list[Any]:
    if order is not None:
        return list(order)
    if level == "nominal":
        return _sorted_labels(present)
    return sorted(set(_to_float(present, "krippendorff_alpha", "reliability_data")))


def krippendorff_alpha(
    reliability_data: Any,
    level: Level = "nominal",
    *,
    order: Values | None = None,
) -> float:
    """Krippendorff's alpha ``1 - D_o / D_e`` for raters × units data with missing values.

    Following Krippendorff (2011), with coincidences ``o_ck`` over pairable values
    (units with at least two values), marginals ``n_c`` and ``n = Σ n_c``:
    ``α = 1 - (n - 1)·Σ o_ck·δ²_ck / Σ n_c·n_k·δ²_ck``. Distances: nominal ``δ² = [c ≠ k]``;
    ordinal ``δ²_ck = (Σ_{g=c}^{k} n_g - (n_c + n_k)/2)²``; interval ``(c - k)²``; ratio
    ``((c - k)/(c + k))²``. Units coded by fewer than two raters do not count. NaN when no
    unit is pairable or every pairable value is the same (``D_e = 0``: alpha undefined).

    Args:
        reliability_data: rows = raters (coders/judges), columns = units; None/NaN = missing.
        level: "nominal", "ordinal", "interval" or "ratio".
        order: the ordered value domain, needed for ordinal non-numeric labels
            (e.g. ``["low", "mid", "high"]``); a value outside it is an error.

    Returns:
        Alpha in (-inf, 1]; 1 = perfect agreement, 0 = chance.
    """
    return alpha_of_counts(*unit_counts(reliability_data, level, order=order), level)


def unit_counts(
    reliability_data: Any, level: Level = "nominal", *, order: Values | None = None
) -> tuple[np.ndarray, list[Any]]:
    """The values of each unit counted by label: ``counts[u, c]`` raters gave unit ``u``
    the ``c``-th label of the returned domain (the argument checks and domain of
    :func:`krippendorff_alpha`). A bootstrap over units resamples these rows
    (:func:`alpha_of_counts`) instead of recounting the raw table in every round."""
    if level not in ("nominal", "ordinal", "interval", "ratio"):
        raise ValueError(f"krippendorff_alpha: unknown level {level!r}")
    data = pd.DataFrame(reliability_data).to_numpy(dtype=object)
    present = _present(data)
    domain = _domain(data[present], level, order)
    numeric = level in ("interval", "ratio") or (level == "ordinal" and order is None)
    keys = _to_float(data[present], "krippendorff_alpha", "value") if numeric else data[present]
    counts = np.zeros((data.shape[1], len(domain)))
    units = np.nonzero(present)[1]
    np.add.at(counts, (units, _index(keys, domain, "krippendorff_alpha")), 1)
    return counts, domain


def alpha_of_counts(counts: np.ndarray, domain: Sequence[Any], level: Level) -> float:
    """Krippendorff's alpha of units × labels counts (:func:`unit_counts`). A label no unit
    has adds nothing: a resample's alpha over the full domain is its alpha over its own."""
    o = _coincidences(counts)
    n_c = o.sum(axis=0)
    values = np.asarray(domain, dtype=float) if level in ("interval", "ratio") else n_c
    delta2 = _squared_distances(level, values, n_c)
    expected = float((np.outer(n_c, n_c) * delta2).sum())
    if n_c.sum() == 0 or expected == 0:
        return NAN
    return 1.0 - (n_c.sum() - 1) * float((o * delta2).sum()) / expected


# ---------------------------------------------------------------------------------------
# test-retest, classification
# ---------------------------------------------------------------------------------------


class RetestAgreement(NamedTuple):
    """The same judge scoring the same items twice."""

    n: int
    exact: Interval
    within_1: Interval
    pearson: Interval
    spearman: Interval
    kappa: float
    quadratic_kappa: float


def retest_agreement(
    run1: Values,
    run2: Values,
    *,
    labels: Values | None = None,
    rng: np.random.Generator | None = None,
    rounds: int = DEFAULT_ROUNDS,
    level: float = DEFAULT_LEVEL,
) -> RetestAgreement:
    """Test–retest reliability of a judge's numeric scores over two runs on the same items.

    Bundles :func:`exact_agreement`, :func:`within_k_agreement` (k = 1), :func:`pearson`,
    :func:`spearman`, :func:`cohen_kappa` and quadratic :func:`weighted_kappa` between the
    runs (each function's formula and source apply). Pairs with a missing run are dropped;
    ``labels`` is the score scale for the kappas (default: scores seen). For categorical
    verdicts use :func:`exact_agreement` and :func:`cohen_kappa` directly.
    """
    a, b = _paired_float("retest_agreement", run1=run1, run2=run2)
    return RetestAgreement(
        n=int(a.size),
        exact=exact_agreement(a, b, rng=rng, rounds=rounds, level=level),
        within_1=within_k_agreement(a, b, 1, rng=rng, rounds=rounds, level=level),
        pearson=pearson(a, b, rng=rng, rounds=rounds, level=level),
        spearman=spearman(a, b, rng=rng, rounds=rounds, level=level),
        kappa=cohen_kappa(a, b, labels),
        quadratic_kappa=weighted_kappa(a, b, "quadratic", labels),
    )


def confusion_matrix(pred: Values, gold: Values, labels: Values | None = None) -> pd.DataFrame:
    """Counts of (gold, pred) label pairs: rows = gold, columns = pred (sklearn's layout).

    Pairs with a missing side are dropped; ``labels`` fixes the order (default: sorted
    labels seen) and a value outside it is an error.
    """
    g, p = _paired("confusion_matrix", gold=gold, pred=pred)
    labels = _sorted_labels([*g, *p]) if labels is None else list(labels)
    table = _table(g, p, labels, "confusion_matrix").astype(int)
    return pd.DataFrame(
        table, index=pd.Index(labels, name="gold"), columns=pd.Index(labels, name="pred")
    )


def per_class_scores(pred: Values, gold: Values, labels: Values | None = None) -> pd.DataFrame:
    """Precision ``tp/(tp+fp)``, recall ``tp/(tp+fn)``, F1 ``2PR/(P+R)`` and support per label.

    A zero denominator gives 0, as PandaLM's ``compute_metrics.py`` and sklearn's
    ``precision_recall_fscore_support(zero_division=0)``. Missing pairs are dropped.
    """
    table = confusion_matrix(pred, gold, labels)
    counts = table.to_numpy(dtype=float)
    tp = np.diag(counts)
    precision = np.divide(tp, counts.sum(0), out=np.zeros_like(tp), where=counts.sum(0) > 0)
    recall = np.divide(tp, counts.sum(1), out=np.zeros_like(tp), where=counts.sum(1) > 0)
    both = precision + recall
    f1 = np.divide(2 * precision * recall, both, out=np.zeros_like(tp), where=both > 0)
    return pd.DataFrame(
        {"precision": precision, "recall": recall, "f1": f1, "support": counts.sum(1).astype(int)},
        index=table.index.rename("label"),
    )


def classification_report(
    pred: Values, gold: Values, labels: Values | None = None
) -> dict[str, float]:
    """Accuracy, macro precision/recall/F1 and Cohen's kappa of predictions against gold.

    The PandaLM protocol (Wang et al., 2023; ``data/compute_metrics.py``): a judge's
    verdicts against the human majority label, macro = unweighted mean over ``labels`` of
    the per-class scores of :func:`per_class_scores`. Pairs with a missing side are dropped.

    Returns:
        ``{"n", "accuracy", "precision", "recall", "f1", "kappa"}``.
    """
    scores = per_class_scores(pred, gold, labels)
    table = confusion_matrix(pred, gold, labels).to_numpy()
    n = int(table.sum())
    return {
        "n": n,
        "accuracy": float(np.trace(table) / n) if n else NAN,
        "precision": float(scores["precision"].mean()),
        "recall": float(scores["recall"].mean()),
        "f1": float(scores["f1"].mean()),
        "kappa": _kappa(table.astype(float), _disagreement_weights(len(table), None)),
    }
