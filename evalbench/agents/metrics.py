"""Trajectory statistics over agent run records (pure functions on DataFrames).

``runs`` is a frame of :class:`~evalbench.agents.types.AgentRunRecord` rows, optionally with
slice columns (``level``, ``category``) and a ``correct`` column merged in by the study;
``steps`` a frame of :class:`~evalbench.agents.types.StepRecord` rows.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import pandas as pd

from evalbench.stats import bootstrap_mean, wilson_interval

from .types import END_STATES

SEARCH_TOOLS = frozenset({"search", "search_site", "web_search"})
"""Tools counted as search calls (evalbench's and common harnesses' names)."""
PAGE_TOOLS = frozenset({"open_page", "open_url", "browser", "submit_form", "fetch", "visit"})
"""Tools counted as pages opened."""


def state_table(runs: pd.DataFrame, by: Sequence[str], level: float = 0.95) -> pd.DataFrame:
    """Per group: tasks, how many ended in each state, and the timeout and error rates with
    Wilson intervals (every task counts; a timeout is the agent's result, an error is a
    failure of the agent or its model calls)."""
    rows = []
    for keys, part in runs.groupby(list(by), sort=True):
        counts = part["state"].value_counts()
        row = dict(zip(by, keys if isinstance(keys, tuple) else (keys,), strict=True))
        row["tasks"] = len(part)
        row.update({state: int(counts.get(state, 0)) for state in END_STATES})
        for state in ("timeout", "error"):
            iv = wilson_interval(row[state], len(part), level)
            row |= {f"{state}_rate": iv.estimate, f"{state}_low": iv.low, f"{state}_high": iv.high}
        rows.append(row)
    return pd.DataFrame(rows)


def effort_table(
    runs: pd.DataFrame,
    by: Sequence[str],
    *,
    rng: np.random.Generator,
    rounds: int,
    level: float = 0.95,
) -> pd.DataFrame:
    """Per group: mean (with a percentile-bootstrap interval over tasks) and median of steps
    and tool calls; mean wall time, tokens and cost per task; tool-call error share."""
    rows = []
    for keys, part in runs.groupby(list(by), sort=True):
        row = dict(zip(by, keys if isinstance(keys, tuple) else (keys,), strict=True))
        row["tasks"] = len(part)
        for column in ("steps", "tool_calls"):
            values = part[column].to_numpy(float)
            iv = bootstrap_mean(values, rng=rng, rounds=rounds, level=level)
            row |= {f"{column}_mean": iv.estimate, f"{column}_low": iv.low}
            row |= {f"{column}_high": iv.high, f"{column}_median": float(np.median(values))}
        calls = int(part["tool_calls"].sum())
        row["tool_error_share"] = part["tool_errors"].sum() / calls if calls else np.nan
        row["wall_s_mean"] = float(part["wall_s"].mean())
        tokens = part[["prompt_tokens", "completion_tokens"]].fillna(0).sum(axis=1)
        row["tokens_mean"] = float(tokens.mean())
        row["cost_usd_mean"] = (
            float(part["cost_usd"].mean()) if part["cost_usd"].notna().any() else np.nan
        )
        rows.append(row)
    return pd.DataFrame(rows)


def tool_mix(runs: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """Per group: the share of tool calls going to each tool (rows sum to 1)."""
    counts = pd.DataFrame([dict(c) for c in runs["tool_counts"]], index=runs.index).fillna(0)
    frame = pd.concat([runs[list(by)], counts], axis=1).groupby(list(by), sort=True).sum()
    return frame.div(frame.sum(axis=1).where(lambda s: s > 0), axis=0).reset_index()


def accuracy_by_steps(
    runs: pd.DataFrame, by: Sequence[str] = ("system",), bins: Sequence[int] = (0, 3, 6, 10, 20)
) -> pd.DataFrame:
    """Accuracy of the tasks binned by steps taken (``correct`` must be merged in): does
    more effort go with better answers? Bins are ``[b_i, b_i+1)``, the last open-ended."""
    edges = [*bins, np.inf]
    labels = [
        f"{lo}–{hi - 1}" if hi != np.inf else f"{lo}+" for lo, hi in itertools.pairwise(edges)
    ]
    binned = runs.assign(steps_bin=pd.cut(runs["steps"], edges, right=False, labels=labels))
    out = binned.groupby([*by, "steps_bin"], sort=True, observed=True).agg(
        tasks=("correct", "size"), accuracy=("correct", lambda c: c.astype(bool).mean())
    )
    return out.reset_index()


def count_tools(tool_counts: dict[str, int] | None) -> tuple[int, int]:
    """(search calls, pages opened) from an agent run's tool counts."""
    counts = tool_counts or {}
    searches = sum(v for k, v in counts.items() if k in SEARCH_TOOLS)
    return searches, sum(v for k, v in counts.items() if k in PAGE_TOOLS)
