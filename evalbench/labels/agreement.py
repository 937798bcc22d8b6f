"""Several annotators: agreement among them, and one human reference from their labels.

Pure functions over a long table of labels (one row per item and annotator, a column per
dimension or decision), used by the judge golden-set, datagen and arena studies:

- :func:`human_reference`: the reference per item by a stated policy — ``mean``,
  ``median``, or ``majority`` (the value more than half of the item's annotators gave;
  an item without one has no reference: NaN, counted by the caller, never guessed);
- :func:`annotator_agreement`: Krippendorff's alpha (interval and ordinal for scores,
  nominal for decisions; a seeded percentile bootstrap over items for the interval),
  with the mean of the pairwise statistics;
- :func:`pairwise_agreement_table`: every pair of annotators: items both labelled, exact
  and ±k agreement, Cohen's kappa and quadratic weighted kappa (scores on a scale);
- :func:`leave_one_out`: each annotator against the reference of the *others*, and a
  judge against the same references: the human ceiling a judge is compared with.

References: Krippendorff (2011) "Computing Krippendorff's Alpha-Reliability"; Cohen
(1960, 1968); Williamson, Xi & Breyer (2012) (exact / adjacent agreement).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import combinations
from typing import Any, Literal

import numpy as np
import pandas as pd

from evalbench import agreement as ag
from evalbench.stats import Interval, bootstrap

Policy = Literal["mean", "median", "majority"]
POLICIES: tuple[Policy, ...] = ("mean", "median", "majority")
POLICY_TEXT = {
    "mean": "the mean of the annotators' scores",
    "median": "the median of the annotators' scores",
    "majority": "the value more than half of the annotators gave (items without one have no "
    "reference and are left out, counted)",
}
"""How each policy is stated in reports."""


def wide(long: pd.DataFrame, column: str, *, item: str = "item") -> pd.DataFrame:
    """Items × annotators table of ``column`` (NaN / None where an annotator has no label).

    Raises:
        ValueError: an (item, annotator) pair appears twice.
    """
    dup = long.duplicated([item, "annotator"])
    if dup.any():
        row = long[dup].iloc[0]
        raise ValueError(f"two labels of item {row[item]!r} by annotator {row['annotator']!r}")
    table = long.pivot(index=item, columns="annotator", values=column)
    table.columns.name = None
    return table


def _majority(values: Sequence[Any]) -> Any:
    present = [v for v in values if not _missing(v)]
    if not present:
        return math.nan
    counts = pd.Series(present).value_counts()
    return counts.index[0] if counts.iloc[0] * 2 > len(present) else math.nan


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def human_reference(long: pd.DataFrame, columns: Sequence[str], policy: Policy) -> pd.DataFrame:
    """The human reference of every item and column by ``policy``.

    Args:
        long: one row per (``item``, ``annotator``) with the ``columns``.
        columns: numeric score columns (any policy) or decision columns (``majority``).
        policy: ``mean``, ``median`` or ``majority`` (see :data:`POLICY_TEXT`).

    Returns:
        Indexed by item: ``n_annotators`` and one column per ``columns`` (NaN: no
        reference, e.g. no majority).
    """
    if policy not in POLICIES:
        raise ValueError(f"human_reference: unknown policy {policy!r} (one of {POLICIES})")
    out = pd.DataFrame({"n_annotators": long.groupby("item")["annotator"].nunique()})
    for col in columns:
        table = wide(long, col)
        if policy == "majority":
            out[col] = [_majority(list(row)) for row in table.to_numpy(dtype=object)]
        else:
            numbers = table.astype(float)
            out[col] = numbers.mean(axis=1) if policy == "mean" else numbers.median(axis=1)
    return out


def pairwise_agreement_table(
    table: pd.DataFrame, *, scale: Sequence[Any] | None = None, tolerance: float | None = 1.0
) -> pd.DataFrame:
    """Every pair of annotators (columns of ``table``) on the items both labelled.

    Args:
        table: items × annotators (:func:`wide`).
        scale: the ordered label set (the full score scale, e.g. 1..10), for the kappas;
            ``None``: the labels seen.
        tolerance: k of the ±k agreement; ``None`` for decisions (no ±k, no weighted kappa).

    Returns:
        ``annotator_1, annotator_2, n, exact, within_k, kappa, qwk`` (the last three NaN
        where they do not apply or are undefined).
    """
    rows = []
    for a, b in combinations(table.columns, 2):
        pair = table[[a, b]].dropna()
        x, y = pair[a].tolist(), pair[b].tolist()
        k = tolerance if tolerance is not None and len(pair) > 0 else None
        numeric = k is not None
        rows.append({
            "annotator_1": a, "annotator_2": b, "n": len(pair),
            "exact": ag.exact_agreement(x, y).estimate if len(pair) else math.nan,
            "within_k": ag.within_k_agreement(x, y, k).estimate if k is not None else math.nan,
            "kappa": ag.cohen_kappa(x, y, scale) if len(pair) else math.nan,
            "qwk": ag.weighted_kappa(x, y, "quadratic", scale) if numeric else math.nan,
        })  # fmt: skip
    columns = ["annotator_1", "annotator_2", "n", "exact", "within_k", "kappa", "qwk"]
    return pd.DataFrame(rows, columns=columns)


def _alpha(level: ag.Level, domain: Sequence[Any]) -> Any:
    def statistic(counts: np.ndarray) -> float:
        return ag.alpha_of_counts(counts, domain, level)

    return statistic


def annotator_agreement(
    table: pd.DataFrame,
    *,
    numeric: bool,
    scale: Sequence[Any] | None = None,
    tolerance: float = 1.0,
    rng: np.random.Generator,
    rounds: int,
    level: float,
) -> dict[str, Any]:
    """Agreement among all annotators of ``table`` (items × annotators).

    Scores (``numeric``): Krippendorff's alpha at the interval level with a percentile
    bootstrap interval over items, the ordinal alpha (point estimate), and the means of
    the pairwise exact, ±k, Cohen and quadratic kappas. Decisions: nominal alpha with its
    interval and the mean pairwise exact agreement and Cohen's kappa. Only items labelled
    by at least two annotators count (Krippendorff's pairable units).

    Returns:
        ``n_items, n_annotators, alpha, alpha_low, alpha_high, alpha_level`` (the alpha's
        level: interval or nominal), ``alpha_ordinal`` (scores only), ``exact,
        within_k, kappa, qwk`` (means over pairs) and ``pairs`` (the pairwise table).
    """
    pairable = table[table.notna().sum(axis=1) >= 2]
    alpha_level: ag.Level = "interval" if numeric else "nominal"
    order = None if numeric else _labels(pairable)
    matrix = pairable.to_numpy(dtype=float if numeric else object)
    if len(pairable):
        # rows of the units' label counts, resampled as the items are (a round recounts nothing)
        counts, domain = ag.unit_counts(matrix.T, alpha_level, order=order)
        alpha = bootstrap(_alpha(alpha_level, domain), counts, rng=rng, rounds=rounds, level=level)
    else:
        alpha = Interval(math.nan, math.nan, math.nan, level)
    pairs = pairwise_agreement_table(table, scale=scale, tolerance=tolerance if numeric else None)
    ordinal = math.nan
    if numeric and len(pairable):
        ordinal = ag.krippendorff_alpha(matrix.T, "ordinal")
    return {
        "n_items": len(pairable), "n_annotators": int(table.shape[1]),
        "alpha": alpha.estimate, "alpha_low": alpha.low, "alpha_high": alpha.high,
        "alpha_level": alpha_level, "alpha_ordinal": ordinal,
        **{k: _weighted_mean(pairs, k) for k in ("exact", "within_k", "kappa", "qwk")},
        "pairs": pairs,
    }  # fmt: skip


def _labels(table: pd.DataFrame) -> list[Any]:
    values = [v for v in table.to_numpy(dtype=object).ravel() if not _missing(v)]
    return sorted(set(values), key=str)


def _weighted_mean(pairs: pd.DataFrame, column: str) -> float:
    """Mean of a pairwise statistic weighted by the items each pair shares."""
    part = pairs[pairs[column].notna() & (pairs["n"] > 0)]
    if part.empty:
        return math.nan
    return float(np.average(part[column], weights=part["n"]))


def leave_one_out(
    table: pd.DataFrame,
    policy: Policy,
    *,
    tolerance: float,
    judge: pd.Series | None = None,
) -> pd.DataFrame:
    """Each annotator against the reference of the others, and ``judge`` against the same.

    For annotator *a*: the reference of every item from the other annotators (``policy``;
    items where *a* or that reference is missing are left out), then *a*'s ±k agreement
    and mean absolute error against it; with ``judge`` (scores by item), the judge's on the
    same items and references. A judge as good as a person lands near the annotators.

    Returns:
        ``annotator, n, human_within_k, human_mae`` (+ ``judge_within_k, judge_mae``).
    """
    rows = []
    for a in table.columns:
        others = table.drop(columns=[a])
        long = others.stack().rename("value").reset_index()
        long.columns = ["item", "annotator", "value"]
        ref = human_reference(long, ["value"], policy)["value"].reindex(table.index)
        keep = table[a].notna() & ref.notna()
        if judge is not None:
            keep &= judge.reindex(table.index).notna()
        row: dict[str, Any] = {"annotator": a, "n": int(keep.sum())}
        row.update(_closeness(table[a][keep], ref[keep], tolerance, "human"))
        if judge is not None:
            row.update(_closeness(judge.reindex(table.index)[keep], ref[keep], tolerance, "judge"))
        rows.append(row)
    return pd.DataFrame(rows)


def _closeness(x: pd.Series, ref: pd.Series, k: float, prefix: str) -> dict[str, float]:
    if len(x) == 0:
        return {f"{prefix}_within_k": math.nan, f"{prefix}_mae": math.nan}
    diff = np.abs(x.to_numpy(float) - ref.to_numpy(float))
    return {
        f"{prefix}_within_k": float((diff <= k + ag.DISTANCE_SLACK).mean()),
        f"{prefix}_mae": float(diff.mean()),
    }
