"""The sweep's decision rules (pure): the family of tests adjusted together, the Pareto front,
and which configurations the best one is not separated from."""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalbench.history import benjamini_hochberg, holm


def adjust(tests: pd.DataFrame) -> pd.DataFrame:
    """Holm (``p_holm``) and Benjamini–Hochberg (``p_bh``) over every row of ``tests``: all
    cells × systems × metrics × slices of a sweep are one family (a test without a p-value
    stays NaN, outside it)."""
    p = tests["p"].to_numpy(float)
    return tests.assign(p_holm=holm(p), p_bh=benjamini_hochberg(p))


def pareto_front(quality: np.ndarray, cost: np.ndarray, higher_is_better: bool) -> np.ndarray:
    """Whether each entry is on the quality–cost Pareto front: no other entry is at least as
    good and at most as costly, and strictly better in one of the two. An entry without a
    finite quality or cost is never on it.

    E.g. (quality, cost) = (0.8, 2), (0.7, 1), (0.6, 3): the third is dominated by both others
    (worse and dearer); the first two are each best at something.
    """
    q = np.asarray(quality, dtype=float) * (1.0 if higher_is_better else -1.0)
    c = np.asarray(cost, dtype=float)
    valid = np.isfinite(q) & np.isfinite(c)
    front = np.zeros(q.size, dtype=bool)
    for i in np.flatnonzero(valid):
        others = valid.copy()
        others[i] = False
        dominated = others & (q >= q[i]) & (c <= c[i]) & ((q > q[i]) | (c < c[i]))
        front[i] = not dominated.any()
    return front


def not_separated(best: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """The rows of a best-vs-others table whose difference from the best is not significant
    (Holm-adjusted p at least ``alpha``, or no paired item)."""
    if not len(best):
        return best
    p = best["p_holm"].to_numpy(float)
    return best[~(p < alpha)]
