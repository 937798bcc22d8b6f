"""Calibration error of stated confidences: HLE's official ``calib_err`` (quirks kept)
and a corrected variant, shared by every study that reports it (HLE, BrowseComp), and the
reliability-diagram table (:func:`reliability_table`; drawn by
:func:`evalbench.plots.reliability_diagram`).

The official function is ``calib_err`` of ``hle_eval/run_judge_results.py`` in
centerforaisafety/hle @ 26dca2e253b405105b4c3d8c2f5af06f86f90c66 (itself
hendrycks/outlier-exposure ``utils/calibration_tools.py`` @
e6ede98a5474a0620d9befa50b38eaf584df4401): sort by confidence with ``np.argsort`` (unstable
on ties), cut into ``n // beta`` bins of ``beta`` with the last bin stretched to the end,
then ``sqrt(Σ |bin|/n · (mean conf − accuracy)²)`` over every bin **but the last** (the
weights do not sum to 1), reported as ``100 · round(x, 2)``. With fewer than ``beta`` items
it raises ``IndexError`` (here: undefined, with that reason); with ``beta``..``2·beta − 1`` it
is exactly 0 (its one bin is skipped).

The **corrected** error uses the same bins but counts every one (weights sum to 1), sorts
stably, is defined for any n ≥ 1 (one bin below ``beta`` items) and is not rounded.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal, NamedTuple

import numpy as np
import pandas as pd

from evalbench.stats import DEFAULT_LEVEL, wilson_interval

BIN_SIZE = 100
Norm = Literal["1", "2", "infty"]


class Calibration(NamedTuple):
    """A calibration error: a fraction (0-1) or undefined, with the reason when undefined."""

    value: float | None
    """The error as a fraction of 1 (``None`` when undefined)."""
    percent: float | None
    """As reported: official ``100 · round(value, 2)``; corrected ``100 · value``."""
    n: int
    """Items it was computed over."""
    reason: str | None = None
    """Why it is undefined, or what is special about it (e.g. the single skipped bin)."""


def bin_edges(n: int, beta: int = BIN_SIZE) -> list[tuple[int, int]]:
    """The official bins over ``n`` sorted items: ``[i·β, (i+1)·β)`` for ``i < n // β``, the
    last stretched to ``n`` (``250`` -> ``[(0, 100), (100, 250)]``); empty when ``n < β``."""
    edges = [(i * beta, (i + 1) * beta) for i in range(n // beta)]
    if edges:
        edges[-1] = (edges[-1][0], n)
    return edges


def calib_err_official(
    confidence: Sequence[float] | np.ndarray,
    correct: Sequence[bool] | np.ndarray,
    *,
    beta: int = BIN_SIZE,
    p: Norm = "2",
) -> Calibration:
    """The official calibration error (see the module docstring), quirks included.

    Args:
        confidence: stated confidences as fractions (the official divides by 100), in the
            order of the judged file (dataset order).
        correct: the judge's verdicts, same order.
        beta: target bin size (the official 100).
        p: ``"2"`` (RMS, the official choice), ``"1"`` or ``"infty"``.

    Returns:
        ``value`` = ``calib_err`` itself, ``percent`` = ``100 · round(value, 2)``; undefined
        (``value=None``) below ``beta`` items, where the official function raises IndexError.
    """
    conf, hits = as_arrays(confidence, correct)
    n = conf.size
    if n < beta:
        reason = (
            f"undefined: the official calib_err raises IndexError with fewer than {beta} "
            f"judged items (here {n})"
        )
        return Calibration(None, None, n, reason)
    order = np.argsort(conf)  # numpy's default (unstable) sort, as the official code
    edges = bin_edges(n, beta)
    value = _binned_error(conf[order], hits[order], edges[:-1], n, p)
    note = None
    if len(edges) == 1:
        note = f"exactly 0 by construction: {n} items make one bin, which the official loop skips"
    return Calibration(value, 100 * round(value, 2), n, note)


def calib_err_corrected(
    confidence: Sequence[float] | np.ndarray,
    correct: Sequence[bool] | np.ndarray,
    *,
    beta: int = BIN_SIZE,
    p: Norm = "2",
) -> Calibration:
    """The corrected calibration error: the official bins, every bin counted.

    Stable sort by confidence (ties keep their order), bins of ``beta`` with the last
    stretched (one bin of all items when fewer than ``beta``), weights ``|bin| / n`` summing
    to 1, no rounding. Undefined only for ``n = 0``.
    """
    conf, hits = as_arrays(confidence, correct)
    n = conf.size
    if n == 0:
        return Calibration(None, None, 0, "undefined: no judged item with a valid confidence")
    order = np.argsort(conf, kind="stable")
    edges = bin_edges(n, beta) or [(0, n)]
    value = _binned_error(conf[order], hits[order], edges, n, p)
    return Calibration(value, 100 * value, n)


def as_arrays(confidence: Any, correct: Any) -> tuple[np.ndarray, np.ndarray]:
    conf = np.asarray(confidence, dtype=float)
    hits = np.asarray(correct, dtype=float)
    if conf.shape != hits.shape:
        raise ValueError(f"calibration: {conf.size} confidences vs {hits.size} verdicts")
    return conf, hits


def _binned_error(
    conf: np.ndarray, hits: np.ndarray, edges: Sequence[tuple[int, int]], n: int, p: Norm
) -> float:
    total = 0.0
    for start, end in edges:
        gap = abs(float(np.nanmean(conf[start:end])) - float(np.nanmean(hits[start:end])))
        if p == "2":
            total += (end - start) / n * gap**2
        elif p == "1":
            total += (end - start) / n * gap
        else:
            total = max(total, gap)
    return math.sqrt(total) if p == "2" else total


RELIABILITY_COLUMNS = ["system", "bin", "lower", "upper", "n", "mean_confidence", "accuracy",
                       "ci_low", "ci_high", "gap"]  # fmt: skip


def reliability_table(
    frame: pd.DataFrame, *, bins: int = 10, level: float = DEFAULT_LEVEL
) -> pd.DataFrame:
    """Reliability diagram data: fixed-width confidence bins per system.

    Args:
        frame: one row per judged item with a stated confidence: ``system``, ``confidence``
            (a fraction, 0-1) and ``correct`` (bool).
        bins: equal-width bins over [0, 1]; bin ``i`` is ``[i/bins, (i+1)/bins)``, 1.0 in the
            last.
        level: the Wilson interval's level.

    Returns:
        :data:`RELIABILITY_COLUMNS`: ``bin`` as percent edges (``"80-90"``), ``lower, upper``
        as fractions, ``accuracy`` with its Wilson interval, ``gap`` = mean confidence −
        accuracy (above 0: overconfident there). Empty bins are left out.
    """
    rows = []
    width = 100 / bins
    for system, part in frame.groupby("system", sort=False):
        conf = part["confidence"].to_numpy(float)
        # rounded first, so 0.3 (30.000000000000004 %) falls in the bin its percent names
        index = np.minimum(np.floor(np.round(conf * bins, 9)).astype(int), bins - 1)
        hits = part["correct"].to_numpy(bool)
        for b in np.unique(index):
            inside = index == b
            wilson = wilson_interval(int(hits[inside].sum()), int(inside.sum()), level)
            mean_conf = float(conf[inside].mean())
            rows.append([system, f"{b * width:g}-{(b + 1) * width:g}", b / bins, (b + 1) / bins,
                         int(inside.sum()), mean_conf, wilson.estimate, wilson.low, wilson.high,
                         mean_conf - wilson.estimate])  # fmt: skip
    return pd.DataFrame(rows, columns=RELIABILITY_COLUMNS)
