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
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from typing import Any, Literal, NamedTuple, TypeAlias

import numpy as np
import pandas as pd
from scipy import stats as sps

from evalbench.stats import (
    DEFAULT_LEVEL,
    DEFAULT_ROUNDS,
    Interval,
    bootstrap,
    bootstrap_mean,
    percentile_interval,
    wilson_interval,
)

NAN = float("nan")
VERDICTS = ("a", "b", "tie")
Level = Literal["nominal", "ordinal", "interval", "ratio"]
Weights = Literal["linear", "quadratic"]
NoMajority = Literal["drop", "tie", "first"]
Values: TypeAlias = Sequence[Any] | np.ndarray | pd.Series
"""A 1-D sequence of per-item values (labels, scores or verdicts); None/NaN = missing."""
_FLIP: dict[str | None, str | None] = {"a": "b", "b": "a", "tie": "tie", None: None}
# Weighted scores carry float noise (0.5·2 + 0.3·2 + 0.2·4 minus 0.5·1 + 0.3·1 + 0.2·3 is
# 1.0000000000000002), so a difference of exactly k is compared with this slack.
DISTANCE_SLACK = 1e-9


# ---------------------------------------------------------------------------------------
# input handling
# ---------------------------------------------------------------------------------------


def _column(values: Any, where: str, name: str) -> np.ndarray:
    if isinstance(values, (str, bytes)) or np.ndim(values) != 1:
        raise ValueError(f"{where}: {name} must be a 1-D sequence, got {type(values).__name__}")
    arr = np.empty(len(values), dtype=object)
    arr[:] = list(values)
    return arr


def _is_missing(value: Any) -> bool:
    return value is None or (pd.api.types.is_scalar(value) and bool(pd.isna(value)))


def _present(values: np.ndarray) -> np.ndarray:
    """Elementwise "not None/NaN/NA" of an object array of any shape."""
    return ~np.asarray(pd.isna(values), dtype=bool)


def _aligned(where: str, **columns: Any) -> list[np.ndarray]:
    """1-D object arrays, one per column; columns of different lengths are an error."""
    arrays = {name: _column(v, where, name) for name, v in columns.items()}
    lengths = {name: len(a) for name, a in arrays.items()}
    if len(set(lengths.values())) > 1:
        sizes = ", ".join(f"{k} has {v}" for k, v in lengths.items())
        raise ValueError(f"{where}: lengths differ ({sizes}); align the items first")
    return list(arrays.values())


def _complete(arrays: list[np.ndarray]) -> list[np.ndarray]:
    """The rows where no array has a missing value (None/NaN)."""
    keep = np.ones(len(arrays[0]), dtype=bool)
    for arr in arrays:
        keep &= _present(arr)
    return [arr[keep] for arr in arrays]


def _paired(where: str, **columns: Any) -> list[np.ndarray]:
    """Equal-length 1-D object arrays with every row that has a missing side removed."""
    return _complete(_aligned(where, **columns))


def _to_float(arr: np.ndarray, where: str, name: str) -> np.ndarray:
    """Floats, missing values as NaN; a non-number is an error naming its position."""
    out = np.full(len(arr), np.nan)
    for i, value in enumerate(arr):
        if _is_missing(value):
            continue
        try:
            out[i] = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"{where}: {name}[{i}] = {value!r} is not a number") from None
    return out


def _paired_float(where: str, **columns: Any) -> list[np.ndarray]:
    arrays = _aligned(where, **columns)
    return _complete([_to_float(a, where, n) for n, a in zip(columns, arrays, strict=True)])


def _sorted_labels(values: Any) -> list[Hashable]:
    unique = list(dict.fromkeys(values))
    try:
        return sorted(unique)
    except TypeError:  # mixed types (e.g. 1 and "1"): order by type, then text
        return sorted(unique, key=lambda v: (type(v).__name__, str(v)))


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
    return _pearson_r(sps.rankdata(x), sps.rankdata(y))


def _kendall_tau_b(x: np.ndarray, y: np.ndarray) -> float:
    if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return NAN
    return float(sps.kendalltau(x, y, variant="b").statistic)


def _correlation(
    statistic: Callable[[np.ndarray, np.ndarray], float],
    where: str,
    x: Values,
    y: Values,
    rng: np.random.Generator | None,
    rounds: int,
    level: float,
) -> Interval:
    a, b = _paired_float(where, x=x, y=y)
    if rng is None or a.size == 0:
        return Interval(statistic(a, b) if a.size else NAN, NAN, NAN, level)
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
    return _correlation(_spearman_rho, "spearman", x, y, rng, rounds, level)


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
    o = _coincidences(counts)
    n_c = o.sum(axis=0)
    values = np.asarray(domain, dtype=float) if level in ("interval", "ratio") else n_c
    delta2 = _squared_distances(level, values, n_c)
    expected = float((np.outer(n_c, n_c) * delta2).sum())
    if n_c.sum() == 0 or expected == 0:
        return NAN
    return 1.0 - (n_c.sum() - 1) * float((o * delta2).sum()) / expected


# ---------------------------------------------------------------------------------------
# pairwise verdicts (MT-Bench protocol)
# ---------------------------------------------------------------------------------------


def normalize_verdict(value: Any) -> str | None:
    """Map a pairwise verdict to ``"a"``, ``"b"`` or ``"tie"``; missing (None/NaN) -> None.

    Accepts, case-insensitively, ``a``/``model_a``/``model_1``, ``b``/``model_b``/``model_2``
    (FastChat's spellings) and anything starting with ``tie`` (``"tie (bothbad)"`` is a
    tie, as in FastChat's ``compute_agreement.py``). FastChat's ``"error"`` is not a
    verdict: map it to None first if those items should drop out. Numeric codes (1/2/0,
    1/2/3) differ between datasets and are the loader's job; they are rejected here.
    """
    if _is_missing(value):
        return None
    text = str(value).strip().lower() if isinstance(value, str) else None
    if text in ("a", "model_a", "model_1"):
        return "a"
    if text in ("b", "model_b", "model_2"):
        return "b"
    if text is not None and text.startswith("tie"):
        return "tie"
    raise ValueError(f"unknown verdict {value!r}; expected a, b or tie (or model_a/_1, model_b/_2)")


def _verdicts(values: Any, where: str, name: str) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    for i, value in enumerate(values):
        try:
            out[i] = normalize_verdict(value)
        except ValueError as err:
            raise ValueError(f"{where}: {name}[{i}]: {err}") from None
    return out


def _paired_verdicts(where: str, **columns: Any) -> list[np.ndarray]:
    return _paired(where, **{k: _verdicts(v, where, k) for k, v in columns.items()})


class PairwiseAgreement(NamedTuple):
    """Agreement of two sources of pairwise verdicts, MT-Bench style."""

    with_ties: float
    n_with_ties: int
    without_ties: float
    n_without_ties: int


def pairwise_agreement(judge: Values, other: Values) -> PairwiseAgreement:
    """Agreement on pairwise verdicts ("a"/"b"/"tie"), with and without ties.

    Zheng et al. (2023, Sec. 4.2 and FastChat ``compute_agreement.py``): *with ties* =
    share of all pairs where both verdicts are equal (tie = tie counts as agreement);
    *without ties* = the same over pairs where both sides picked a winner. Pairs with a
    missing side are dropped; an empty denominator gives NaN. Against several human votes
    per item use :func:`majority_vote` first, or repeat the judge's verdict once per vote
    to count every vote as MT-Bench does.
    """
    j, o = _paired_verdicts("pairwise_agreement", judge=judge, other=other)
    same = j == o
    decisive = (j != "tie") & (o != "tie")
    return PairwiseAgreement(
        with_ties=float(same.mean()) if same.size else NAN,
        n_with_ties=int(same.size),
        without_ties=float(same[decisive].mean()) if decisive.any() else NAN,
        n_without_ties=int(decisive.sum()),
    )


def majority_vote(
    votes: Any, *, no_majority: NoMajority = "drop", strict: bool = False
) -> list[Any]:
    """The most frequent label per item, with ties and no-majority handled explicitly.

    ``votes`` is one sequence of labels per item (or an items × voters DataFrame); missing
    votes are ignored. The winner is the unique most frequent label (plurality); with
    ``strict=True`` it must also hold more than half of the item's votes. Otherwise, by
    ``no_majority``: ``"drop"`` -> None (the item drops out of paired statistics),
    ``"tie"`` -> the label ``"tie"``, ``"first"`` -> the leading label voted first (the
    tie-break of PandaLM's ``get_majority_vote``). An item without votes gives None.
    """
    if no_majority not in ("drop", "tie", "first"):
        raise ValueError(f"majority_vote: unknown no_majority {no_majority!r}")
    rows = votes.to_numpy(dtype=object) if isinstance(votes, pd.DataFrame) else votes
    return [_majority(row, no_majority, strict) for row in rows]


def _majority(row: Values, no_majority: NoMajority, strict: bool) -> Any:
    cast = [v for v in row if not _is_missing(v)]
    if not cast:
        return None
    counts = Counter(cast)
    top = max(counts.values())
    leaders = [label for label, c in counts.items() if c == top]
    if len(leaders) == 1 and (not strict or 2 * top > len(cast)):
        return leaders[0]
    if no_majority == "drop":
        return None
    return "tie" if no_majority == "tie" else leaders[0]  # Counter keeps first-seen order


# ---------------------------------------------------------------------------------------
# position and length bias
# ---------------------------------------------------------------------------------------


def swap_verdicts(verdicts: Values) -> list[str | None]:
    """Swap "a" and "b" (tie and missing unchanged), e.g. to undo a swapped display order."""
    return [_FLIP[v] for v in _verdicts(verdicts, "swap_verdicts", "verdicts")]


def positions_to_models(verdicts: Values, first_shown: str | Sequence[str]) -> list:
    """Map verdicts about *positions* ("a" = shown first) to verdicts about *models*.

    ``first_shown`` says which model ("a" or "b") was displayed first, for all items or per
    item. For the swapped order of a position-bias check (B shown first) pass ``"b"``:
    a position-"a" win becomes a model-"b" win.
    """
    v = _verdicts(verdicts, "positions_to_models", "verdicts")
    shown = [first_shown] * len(v) if isinstance(first_shown, str) else list(first_shown)
    if len(shown) != len(v):
        raise ValueError(f"positions_to_models: {len(v)} verdicts but {len(shown)} first_shown")
    bad = [f for f in shown if f not in ("a", "b")]
    if bad:
        raise ValueError(f"positions_to_models: first_shown must be 'a' or 'b', got {bad[0]!r}")
    return [x if f == "a" else _FLIP[x] for x, f in zip(v, shown, strict=True)]


class PositionBias(NamedTuple):
    """Consistency of a judge when the two answers are shown in both orders."""

    n: int
    consistency: float
    n_inconsistent: int
    first_preference: float
    first_position_win_rate: float


def position_bias(order_ab: Values, order_ba: Values) -> PositionBias:
    """Position consistency and first-position preference from both display orders.

    Both sequences hold verdicts about the *models* ("a" = model A wins): ``order_ab`` from
    the prompt showing A first, ``order_ba`` from the prompt showing B first (convert a
    position verdict with ``positions_to_models(v, "b")``). Zheng et al. (2023, Sec. 3.3,
    Table 2): *consistency* = share of pairs whose two verdicts agree (same model, or both
    tie). Score each verdict +1 if the first-shown answer wins, -1 if the second wins, 0 for
    a tie; a pair is inconsistent exactly when the two scores do not cancel, and
    *first_preference* = share of inconsistent pairs whose sum is positive (they favour
    whichever answer was shown first; the matching share of all pairs, Zheng et al.'s
    "biased toward first", is ``(1 - consistency)·first_preference``).
    *first_position_win_rate* = P(first position wins) over all 2n verdicts (ties count as
    not winning). Pairs with a missing side are dropped; empty denominators give NaN.
    """
    ab, ba = _paired_verdicts("position_bias", order_ab=order_ab, order_ba=order_ba)
    score = {"a": 1, "b": -1, "tie": 0}
    first_ab = np.array([score[v] for v in ab])
    first_ba = np.array([-score[v] for v in ba])  # B was first: a "b" win is a first win
    net = first_ab + first_ba
    n, inconsistent = int(ab.size), net != 0
    first_wins = int((first_ab > 0).sum() + (first_ba > 0).sum())
    return PositionBias(
        n=n,
        consistency=float((~inconsistent).mean()) if n else NAN,
        n_inconsistent=int(inconsistent.sum()),
        first_preference=float((net[inconsistent] > 0).mean()) if inconsistent.any() else NAN,
        first_position_win_rate=first_wins / (2 * n) if n else NAN,
    )


def prefers_longer(
    verdicts: Values,
    length_a: Values,
    length_b: Values,
    level: float = DEFAULT_LEVEL,
) -> tuple[Interval, int]:
    """P(the longer answer wins) among decisive verdicts, with a Wilson (1927) interval.

    Only items with verdict "a" or "b" and ``length_a != length_b`` count; ties, equal
    lengths and missing values are dropped. The "P(prefer longer)" of AlpacaEval's
    annotator leaderboard (Dubois et al., 2024) and the verbosity bias of Zheng et al.
    (2023, Sec. 3.3). Returns the interval and the number of items counted.
    """
    where = "prefers_longer"
    v, la, lb = _paired(
        where, verdicts=_verdicts(verdicts, where, "verdicts"), length_a=length_a, length_b=length_b
    )
    la, lb = _to_float(la, where, "length_a"), _to_float(lb, where, "length_b")
    counted = (v != "tie") & (la != lb)
    longer_won = (v[counted] == "a") == (la[counted] > lb[counted])
    return wilson_interval(int(longer_won.sum()), int(counted.sum()), level), int(counted.sum())


class LengthBias(NamedTuple):
    """P(prefer the longer answer) for a judge and, for comparison, for humans."""

    judge: Interval
    n_judge: int
    human: Interval
    n_human: int


def length_bias(
    judge: Values,
    length_a: Values,
    length_b: Values,
    human: Values | None = None,
    level: float = DEFAULT_LEVEL,
) -> LengthBias:
    """:func:`prefers_longer` for the judge and (if given) the human verdicts on the same items.

    Without ``human`` the human fields are NaN and 0.
    """
    judge_rate, n_judge = prefers_longer(judge, length_a, length_b, level)
    if human is None:
        return LengthBias(judge_rate, n_judge, Interval(NAN, NAN, NAN, level), 0)
    human_rate, n_human = prefers_longer(human, length_a, length_b, level)
    return LengthBias(judge_rate, n_judge, human_rate, n_human)


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
