"""Which alert rules a run triggers, next to its baseline run.

- ``drop_more_than``: the run is paired with the baseline item by item and every metric is
  tested, per system, overall and per slice (:func:`evalbench.history.compare_runs` with
  ``evalbench compare``'s defaults, so both say the same); a row fires when the metric fell
  by more than the threshold in its better direction *and* its Holm-adjusted p is below the
  rule's ``alpha`` (the regression gate's rule with ``--min-drop``).
- ``cost_usd_more_than``: cost per task (the system's recorded cost over its items, or its
  calls for a study without per-item outcomes) above threshold × the baseline's.
- ``error_rate_more_than``: failed calls over calls (as ``max_error_rate`` counts them)
  above the threshold; it needs no baseline (the baseline's share is shown when there is one),
  so it is checked on a first run too.
- ``latency_p95_more_than``: the 95th percentile of the latency of the calls actually sent
  (cache hits and failed calls left out) above threshold × the baseline's; each side needs
  :data:`MIN_TIMED_CALLS`.

A rule that cannot be checked (no such metric, no per-item outcomes, nothing paired) is a
*problem*, said on the run's status line; one with nothing to compare (an unpriced system, too
few timed calls) is a *note*, kept in the manifest.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from evalbench.history import compare_runs, gate_blockers
from evalbench.importers import OutcomeError, RunOutcomes, read_outcomes
from evalbench.importers.outcomes import iter_lines
from evalbench.runs import current_manifest

from .spec import AlertRule

MIN_TIMED_CALLS = 20
"""Calls with a latency each run needs before their 95th percentiles are compared."""


class Finding(NamedTuple):
    """One place where a rule fired."""

    rule: str
    """The rule in one line (:meth:`AlertRule.describe`)."""
    system: str
    metric: str
    slice: str
    """``overall`` or ``<slice>=<value>`` (``level=L3``)."""
    baseline: float
    now: float
    change: float
    """``now − baseline`` (a drop), or ``now / baseline`` (cost, latency: a ratio)."""
    low: float | None
    high: float | None
    """The paired bootstrap interval of a drop's change (``None`` for the other rules)."""
    p_holm: float | None
    n: int
    """Items paired (drop), tasks (cost) or calls (error rate, latency)."""


class RunNumbers(NamedTuple):
    """What the rules read of one run."""

    run_dir: Path
    label: str
    outcomes: RunOutcomes | None
    """``None`` for a study kind without per-item outcomes (then :attr:`why`)."""
    why: str
    usage: dict[str, dict[str, float]]
    """Per system: ``calls``, ``errors``, ``cost_usd`` (the published manifest's usage)."""


class Evaluation(NamedTuple):
    """Every rule of a run, checked."""

    findings: list[Finding]
    problems: list[str]
    notes: list[str]


USAGE = ("calls", "errors", "cost_usd")
NOT_FINITE = "not a finite number in a manifest"


def _amount(value: Any) -> float:
    """A usage number of a manifest: missing is 0, anything but a number NaN (a manifest
    edited by hand), so that a rule says it cannot compare instead of failing the run."""
    if value is None:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, int | float):
        return math.nan
    return float(value)


def read_numbers(run_dir: Path, attempt: bool = False) -> RunNumbers:
    """The outcomes and usage of a run folder (outcomes ``None`` when they cannot be read):
    its published attempt's usage, or with ``attempt`` its latest attempt's (a failed one)."""
    manifest = current_manifest(run_dir)
    ok = attempt or manifest.get("status") in ("ok", "degraded")
    shown = manifest if ok else manifest.get("published")
    usage = {
        str(row.get("system")): {name: _amount(row.get(name)) for name in USAGE}
        for row in (shown or {}).get("usage") or []
        if isinstance(row, dict)
    }
    label = f"{run_dir.parent.name}/{run_dir.name}"
    try:
        return RunNumbers(run_dir, label, read_outcomes(run_dir), "", usage)
    except OutcomeError as exc:
        return RunNumbers(run_dir, label, None, str(exc), usage)


def evaluate(rules: Sequence[AlertRule], base: RunNumbers | None, now: RunNumbers) -> Evaluation:
    """Check every rule of ``now`` against ``base`` (see the module docstring); without a
    baseline, only the rules that need none (:attr:`AlertRule.needs_baseline`)."""
    found = Evaluation([], [], [])
    rules = [rule for rule in rules if _has_systems(rule, now, found)]
    if base is None:
        for rule in rules:
            if rule.kind == "error_rate_more_than":
                _error_rates(rule, None, now, found)
        return found
    drops = [r for r in rules if r.kind == "drop_more_than"]
    if drops:
        _drops(drops, base, now, found)
    for rule in rules:
        if rule.kind == "cost_usd_more_than":
            _costs(rule, base, now, found)
        elif rule.kind == "error_rate_more_than":
            _error_rates(rule, base, now, found)
        elif rule.kind == "latency_p95_more_than":
            _latencies(rule, base, now, found)
    return found


def _has_systems(rule: AlertRule, now: RunNumbers, found: Evaluation) -> bool:
    """Whether the run has every system ``rule`` names; else a problem (a typo checked
    nothing, and said "none fired")."""
    known = set(now.usage)
    if now.outcomes is not None:
        known |= {str(s) for s in now.outcomes.outcomes["system"].unique()}
    missing = [s for s in rule.systems if s not in known]
    if missing:
        has = ", ".join(sorted(known)) or "none"
        found.problems.append(f"{rule.describe()}: not checked: no system {missing[0]!r} in "
                              f"{now.label} (it has: {has})")  # fmt: skip
    return not missing


def _wanted(rule: AlertRule, system: str) -> bool:
    return not rule.systems or system in rule.systems


# ------------------------------------------------------------------------------ drops


def _drops(rules: list[AlertRule], base: RunNumbers, now: RunNumbers, found: Evaluation) -> None:
    """Every drop rule over one paired comparison (one Holm family: every metric, system and
    slice, as ``evalbench compare`` tests them)."""
    if base.outcomes is None or now.outcomes is None:
        why = now.why or base.why
        found.problems.extend(f"{r.describe()}: not checked: {why}" for r in rules)
        return
    runs = [base.outcomes, now.outcomes]
    try:
        comparison = compare_runs(runs)
    except OutcomeError as exc:
        found.problems.extend(f"{r.describe()}: not checked: {exc}" for r in rules)
        return
    found.problems.extend(gate_blockers(comparison, runs))
    tests = comparison.tests
    metrics = list(dict.fromkeys(tests["metric"]))
    for rule in rules:
        if rule.metric is not None and rule.metric not in metrics:
            found.problems.append(
                f"{rule.describe()}: not checked: no metric {rule.metric!r} in "
                f"{now.label} (it has: {', '.join(metrics)})"
            )
            continue
        rows = tests if rule.metric is None else tests[tests["metric"] == rule.metric]
        fired = (rows["p_holm"] < rule.alpha) & (rows["improvement"] < -rule.threshold)
        for row in rows[fired].itertuples():
            if _wanted(rule, str(row.system_b)):
                found.findings.append(_drop_finding(rule, row))


def _drop_finding(rule: AlertRule, row: Any) -> Finding:
    system = row.system_b if row.system_a == row.system_b else f"{row.system_a}->{row.system_b}"
    where = "overall" if row.slice == "all" else f"{row.slice}={row.slice_value}"
    return Finding(
        rule=rule.describe(), system=str(system), metric=str(row.metric), slice=where,
        baseline=float(row.mean_a), now=float(row.mean_b), change=float(row.difference),
        low=float(row.low), high=float(row.high), p_holm=float(row.p_holm), n=int(row.n),
    )  # fmt: skip


# ------------------------------------------------------------------------------ cost, errors


def tasks(numbers: RunNumbers, system: str) -> int:
    """The system's tasks: its items with an outcome, else its calls."""
    if numbers.outcomes is not None:
        frame = numbers.outcomes.outcomes
        return int(frame.loc[frame["system"] == system, "item_id"].nunique())
    calls = numbers.usage.get(system, {}).get("calls", 0.0)
    return int(calls) if math.isfinite(calls) else 0


def cost_per_task(numbers: RunNumbers, system: str) -> float | None:
    """The system's recorded cost (USD) per task; ``None`` without tasks."""
    count = tasks(numbers, system)
    cost = numbers.usage.get(system, {}).get("cost_usd")
    return None if not count or cost is None else cost / count


def _costs(rule: AlertRule, base: RunNumbers, now: RunNumbers, found: Evaluation) -> None:
    for system in sorted(set(now.usage) & set(base.usage)):
        before, after = cost_per_task(base, system), cost_per_task(now, system)
        if not _wanted(rule, system) or before is None or after is None:
            continue
        if not (math.isfinite(before) and math.isfinite(after)):
            found.notes.append(f"{rule.describe()}: {system}: no cost per task to compare "
                               f"({NOT_FINITE})")  # fmt: skip
            continue
        if before <= 0:
            if after > 0:
                found.notes.append(f"{rule.describe()}: {system}: the baseline cost nothing "
                                   "(unpriced or cached): no ratio")  # fmt: skip
            continue
        if after / before > rule.threshold:
            found.findings.append(Finding(
                rule.describe(), system, "cost per task (USD)", "overall", before, after,
                after / before, None, None, None, tasks(now, system),
            ))  # fmt: skip


def _error_rates(
    rule: AlertRule, base: RunNumbers | None, now: RunNumbers, found: Evaluation
) -> None:
    if not any(row["calls"] for row in now.usage.values()):  # "none fired" would be a guess
        found.problems.append(f"{rule.describe()}: this run records no call of its own (a "
                              "sweep's calls are its cells'; put the rule in the swept "
                              "study's own runs)")  # fmt: skip
        return
    for system, row in sorted(now.usage.items()):
        if not _wanted(rule, system) or not row["calls"]:
            continue
        if not (math.isfinite(row["calls"]) and math.isfinite(row["errors"])):
            found.notes.append(f"{rule.describe()}: {system}: no share of failed calls to "
                               f"compare ({NOT_FINITE})")  # fmt: skip
            continue
        rate = row["errors"] / row["calls"]
        if rate > rule.threshold:
            old = base.usage.get(system, {}) if base is not None else {}
            before = old["errors"] / old["calls"] if old.get("calls") else math.nan
            found.findings.append(Finding(
                rule.describe(), system, "share of calls that failed", "overall", before, rate,
                rate - before, None, None, None, int(row["calls"]),
            ))  # fmt: skip


# ------------------------------------------------------------------------------ latency


def call_latencies(run_dir: Path) -> dict[str, np.ndarray]:
    """Per system, the latency (s) of every call actually sent (no cache hit, no failure),
    from the run's response records."""
    rows: list[dict[str, Any]] = []
    for path in sorted((run_dir / "records").glob("*.jsonl")):
        for _, row in iter_lines(path):
            if not {"system", "request_key", "latency_s"} <= set(row):
                break  # not a response-record file (its first line says so)
            if not row.get("cached") and row.get("error") is None:
                rows.append({"system": row["system"], "latency_s": row["latency_s"]})
    frame = pd.DataFrame(rows, columns=["system", "latency_s"]).dropna()
    return {str(s): g["latency_s"].to_numpy(float) for s, g in frame.groupby("system")}


def _latencies(rule: AlertRule, base: RunNumbers, now: RunNumbers, found: Evaluation) -> None:
    before_all, after_all = call_latencies(base.run_dir), call_latencies(now.run_dir)
    for system in sorted(set(after_all) & set(before_all)):
        before, after = before_all[system], after_all[system]
        if not _wanted(rule, system):
            continue
        if min(before.size, after.size) < MIN_TIMED_CALLS:
            counts = f"{before.size} vs {after.size}"
            found.notes.append(
                f"{rule.describe()}: {system}: fewer than {MIN_TIMED_CALLS} timed calls "
                f"({counts}): not compared"
            )
            continue
        p_before, p_after = float(np.quantile(before, 0.95)), float(np.quantile(after, 0.95))
        if p_before > 0 and p_after / p_before > rule.threshold:
            found.findings.append(Finding(
                rule.describe(), system, "latency p95 (s)", "overall", p_before, p_after,
                p_after / p_before, None, None, None, int(after.size),
            ))  # fmt: skip
