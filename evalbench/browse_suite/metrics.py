"""Browse-suite statistics: pure functions over the ``suite`` records (one row per system
and task) and the ``suite_criteria`` records.

Denominators, stated once:

- **success rate** = tasks scored at or above the success threshold / tasks that are not
  unscored (a timeout, a step limit or an error is an unsuccessful task, counted in its own
  column; a task whose judge could not grade it is left out and counted);
- **mean score, answered** = mean over the answered and scored tasks;
- **mean score, all tasks** = the same sum over every task that is not unscored, a task
  that ended without an answer counting 0 (labelled so wherever it is shown).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from evalbench.measured import Measured, failed_call, measured, unparsed
from evalbench.stats import DEFAULT_LEVEL, DEFAULT_ROUNDS, bootstrap_mean, wilson_interval

_STATES = ("answered", "timeout", "step_limit", "error")


def _with_all(records: pd.DataFrame, column: str) -> pd.DataFrame:
    """``records`` plus a copy of every row with ``column`` = "all"."""
    every = records.assign(**{column: "all"})
    return pd.concat([records.astype({column: str}), every], ignore_index=True)


def _level_order(frame: pd.DataFrame, column: str = "level") -> pd.DataFrame:
    order = {str(k): k for k in range(1, 6)} | {"all": 99}
    key = frame[column].map(lambda v: order.get(str(v), 50))
    return frame.assign(_o=key).sort_values(["system", "_o"], kind="stable").drop(columns="_o")


def success_tables(
    records: pd.DataFrame,
    *,
    rng: np.random.Generator,
    rounds: int = DEFAULT_ROUNDS,
    level: float = DEFAULT_LEVEL,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Success and scores per system by level and by task type, each system's rows followed
    by its "all" row, computed once and shown in both (one bootstrap, one interval).

    Each row: tasks; end states; unscored; successes and the success rate (Wilson); mean
    score over answered tasks and over all tasks (bootstrap intervals); see the module
    docstring for the denominators.
    """
    by_level = _success_rows(records.astype({"level": str}), "level", rng, rounds, level)
    overall = _success_rows(records.assign(level="all"), "level", rng, rounds, level)
    by_kind = _success_rows(records, "kind", rng, rounds, level)
    levels = _level_order(pd.concat([by_level, overall], ignore_index=True))
    kinds = pd.concat([by_kind, overall.rename(columns={"level": "kind"})], ignore_index=True)
    last = kinds.assign(_all=kinds["kind"] == "all")
    kinds = last.sort_values(["system", "_all"], kind="stable").drop(columns="_all")
    return levels, kinds.reset_index(drop=True)


def _success_rows(
    records: pd.DataFrame, by: str, rng: np.random.Generator, rounds: int, level: float
) -> pd.DataFrame:
    rows = []
    for (system, group), part in records.groupby(["system", by], sort=False):
        row: dict[str, Any] = {"system": system, by: group, "tasks": len(part)}
        rows.append(row | _success_row(part, rng, rounds, level))
    return pd.DataFrame(rows)


def _success_row(
    part: pd.DataFrame, rng: np.random.Generator, rounds: int, level: float
) -> dict[str, Any]:
    row: dict[str, Any] = {s: int((part["state"] == s).sum()) for s in _STATES}
    scored = part[part["status"] == "scored"]
    graded = part[part["status"] != "unscored"]
    row["unscored"] = int((part["status"] == "unscored").sum())
    successes = int(scored["success"].astype(bool).sum())
    iv = wilson_interval(successes, len(graded), level)
    row |= {
        "successes": successes,
        "success_rate": iv.estimate,
        "success_low": iv.low,
        "success_high": iv.high,
    }
    answered = scored["score"].to_numpy(float)
    every = np.concatenate([answered, np.zeros(len(graded) - len(scored))])
    for name, values in (("score_answered", answered), ("score_all", every)):
        est = bootstrap_mean(values, rng=rng, rounds=rounds, level=level)
        row |= {name: est.estimate, f"{name}_low": est.low, f"{name}_high": est.high}
    return row


def effort_by_level(records: pd.DataFrame) -> pd.DataFrame:
    """Per system and level (and all): mean and median steps, tool calls and wall time per
    task, and mean tokens and cost (every task, whatever its end state)."""
    rows = []
    for (system, group), part in _with_all(records, "level").groupby(
        ["system", "level"], sort=False
    ):
        tokens = part[["prompt_tokens", "completion_tokens"]].fillna(0).sum(axis=1)
        rows.append(
            {
                "system": system,
                "level": group,
                "tasks": len(part),
                "steps_mean": part["steps"].mean(),
                "steps_median": part["steps"].median(),
                "tool_calls_mean": part["tool_calls"].mean(),
                "wall_s_mean": part["wall_s"].mean(),
                "wall_s_median": part["wall_s"].median(),
                "tokens_mean": float(tokens.mean()),
                "cost_usd_mean": part["cost_usd"].mean()
                if part["cost_usd"].notna().any()
                else math.nan,
            }
        )
    return _level_order(pd.DataFrame(rows))


def criteria_table(criteria: pd.DataFrame) -> pd.DataFrame:
    """Per system and criterion type: criteria graded, mean score, full marks, zero marks,
    missing fields and unscored (judge) — over the criteria of answered tasks."""
    rows = []
    for (system, kind), part in criteria.groupby(["system", "type"], sort=True):
        scores = part["score"].dropna().to_numpy(float)
        rows.append(
            {
                "system": system,
                "type": kind,
                "criteria": len(part),
                "mean_score": float(scores.mean()) if scores.size else math.nan,
                "full": int((scores >= 1 - 1e-9).sum()),
                "zero": int((scores <= 1e-9).sum()),
                "missing": int((part["note"] == "missing").sum()),
                "unscored": int(part["score"].isna().sum()),
            }
        )
    return pd.DataFrame(rows)


def kind_states(records: pd.DataFrame) -> pd.DataFrame:
    """Per system and task type: tasks and how many ended in each state, unscored and
    successful."""
    rows = []
    for (system, kind), part in records.groupby(["system", "kind"], sort=True):
        row: dict[str, Any] = {"system": system, "kind": kind, "tasks": len(part)}
        row |= {s: int((part["state"] == s).sum()) for s in _STATES}
        row["unscored"] = int((part["status"] == "unscored").sum())
        row["successes"] = int(part["success"].fillna(False).astype(bool).sum())
        rows.append(row)
    return pd.DataFrame(rows)


def failures(records: pd.DataFrame) -> pd.DataFrame:
    """Tasks that did not succeed (not answered, unscored, or below the threshold), lowest
    score first within each system."""
    failed = records[~records["success"].fillna(False).astype(bool)]
    return failed.sort_values(["system", "score", "task_id"], na_position="first", kind="stable")


def task_state(row: Any) -> str | None:
    """Why one task has no score (``None``: scored, or ended by a timeout or the step limit,
    which the suite counts as a measured failure): the system's failed call or agent error,
    or a judge output that could not be read for one of its criteria."""
    if row.state == "error":
        return failed_call(row.error)
    return unparsed() if row.status == "unscored" else None


def measured_systems(records: pd.DataFrame) -> list[Measured]:
    """Per system (in record order): tasks with a score or a measured failure, and why the
    others have none (:func:`task_state`)."""
    return [
        measured(str(system), [task_state(r) for r in rows.itertuples()], "task")
        for system, rows in records.groupby("system", sort=False)
    ]
