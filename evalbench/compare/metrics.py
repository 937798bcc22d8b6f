"""Summaries of a comparison: the runs, their per-system numbers, the rows a reader looks at
first, and the error rates of the gate measured on simulated runs.

The paired tests themselves (pairing by item id, McNemar, Wilcoxon, paired bootstrap, Holm,
Benjamini–Hochberg, minimum detectable difference) are :func:`evalbench.history.compare_runs`
and its helpers, shared with ``evalbench compare`` and the index's regression marks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from evalbench.history import MEASURED_STATES, summarize_outcomes, unmeasured
from evalbench.history.runs import setup_label
from evalbench.importers import RunOutcomes
from evalbench.measured import Measured, measured
from evalbench.stats import Interval, wilson_interval

RUN_COLUMNS = [
    "run",
    "label",
    "benchmark",
    "source",
    "started_at",
    "commit",
    "params_hash",
    "overrides",
    "systems",
    "simulated",
    "status",
]


def run_table(runs: Sequence[RunOutcomes], labels: Sequence[str]) -> pd.DataFrame:
    """One row per compared run: what it is and when and how it was made."""
    rows = []
    for label, run in zip(labels, runs, strict=True):
        meta = run.meta
        commit = (meta.get("commit") or "")[:10] or "—"
        if meta.get("dirty"):
            commit += " (dirty)"
        rows.append(
            {
                "run": label,
                "label": run.label,
                "benchmark": run.benchmark,
                "source": run.source,
                "started_at": str(meta.get("started_at") or "")[:19].replace("T", " "),
                "commit": commit,
                "params_hash": meta.get("params_hash") or "—",
                "overrides": " ".join(meta.get("overrides") or []) or "—",
                "systems": ", ".join(run.systems),
                "simulated": ", ".join(sorted(run.simulated)) or "—",
                "status": meta.get("status") or "—",
            }
        )
    return pd.DataFrame(rows, columns=RUN_COLUMNS)


def run_summaries(
    runs: Sequence[RunOutcomes], labels: Sequence[str], *, level: float, rounds: int, seed: int
) -> pd.DataFrame:
    """Each run's per-system, per-metric mean outcome with its interval (unpaired: every
    item of the run), beside which the paired differences are read."""
    frames = [
        summarize_outcomes(run.outcomes, level=level, rounds=rounds, seed=seed,
                           nothing_measured=unmeasured(run)).assign(run=label)
        for label, run in zip(labels, runs, strict=True)
    ]  # fmt: skip
    table = pd.concat(frames, ignore_index=True)
    return table[["run", *table.columns.drop("run")]]


def overall(tests: pd.DataFrame) -> pd.DataFrame:
    """The rows over all paired items (one per candidate, system pair and metric)."""
    return tests[tests["slice"] == "all"].reset_index(drop=True)


def by_slice(tests: pd.DataFrame) -> pd.DataFrame:
    """The per-slice rows."""
    return tests[tests["slice"] != "all"].reset_index(drop=True)


def primary_metric(outcomes: pd.DataFrame) -> str | None:
    """The run's first metric (each reader lists the study's headline metric first)."""
    return str(outcomes["metric"].iloc[0]) if len(outcomes) else None


def history_series(series: pd.DataFrame | None, metric: str | None) -> pd.DataFrame:
    """``metric`` of each system over a study's published runs (:func:`evalbench.history.
    headline_series`), oldest first, with ``run`` (time and run id) and ``series``: the
    system and its configuration — the ``-p`` overrides (or "as written"), the params'
    identity and the code commit (:func:`evalbench.history.runs.setup_label`) — so that
    runs made differently are never one line."""
    if series is None or not len(series):
        return pd.DataFrame()
    part = series[series["metric"] == metric].copy()
    part["run"] = [
        f"{str(t)[5:16].replace('T', ' ')} {r[:6]}"
        for t, r in zip(part["started_at"], part["run_id"], strict=True)
    ]
    made = zip(part["overrides"], part["params"], part["commit"], part["dirty"], strict=True)
    part["series"] = [
        f"{system} · {setup_label(*how)}" for system, how in zip(part["system"], made, strict=True)
    ]
    return part.reset_index(drop=True)


def slice_accuracy(
    outcomes: pd.DataFrame, system: str, metric: str, slice_name: str | None
) -> dict[str, float]:
    """``slice value -> mean outcome`` of one system and binary metric (``{"all": p}``
    without a slice): the accuracies a simulated system is given to mimic the run."""
    part = outcomes[(outcomes["system"] == system) & (outcomes["metric"] == metric)]
    part = part[part["value"].notna()]
    if slice_name is None:
        return {"all": float(part["value"].mean())}
    return {str(k): float(v) for k, v in part.groupby(slice_name)["value"].mean().items()}


def slice_sizes(
    outcomes: pd.DataFrame, system: str, metric: str, slice_name: str | None
) -> dict[str, int]:
    """``slice value -> items with a value`` (``{"all": n}`` without a slice)."""
    part = outcomes[(outcomes["system"] == system) & (outcomes["metric"] == metric)]
    part = part[part["value"].notna()]
    if slice_name is None:
        return {"all": len(part)}
    return {str(k): int(v) for k, v in part.groupby(slice_name).size().items()}


def rate(events: Sequence[bool], level: float = 0.95) -> Interval:
    """Share of ``True`` with its Wilson interval (how often the gate fired)."""
    hits = int(np.sum(np.asarray(events, dtype=bool)))
    return wilson_interval(hits, len(events), level)


def calibration_row(
    system: str, metric: str, n: int, mdd: float, null: Interval, detect: Interval | None
) -> dict[str, Any]:
    """One row of the calibration table."""
    return {
        "system": system,
        "metric": metric,
        "n": n,
        "false_alarm": null.estimate,
        "false_alarm_low": null.low,
        "false_alarm_high": null.high,
        "mdd": mdd,
        "detected_at_mdd": detect.estimate if detect else np.nan,
        "detected_at_mdd_low": detect.low if detect else np.nan,
        "detected_at_mdd_high": detect.high if detect else np.nan,
    }


def measured_pairs(
    runs: Sequence[RunOutcomes], labels: Sequence[str], tests: pd.DataFrame
) -> list[Measured]:
    """Per compared system (per candidate run when there are several): items measured in
    both runs on the primary metric, and why the others were not (in one run only; a
    failed call, an unscored item ... in one of them)."""
    base = runs[0]
    names = dict(zip([r.label for r in runs], labels, strict=True))
    metric = primary_metric(base.outcomes)
    out = []
    for row in tests[["candidate", "system_a", "system_b"]].drop_duplicates().itertuples():
        run = next(r for r in runs if r.label == row.candidate)
        a = _states(base, str(row.system_a), metric)
        b = _states(run, str(row.system_b), metric)
        states = [
            _pair_state(a.get(item), b.get(item), names[base.label], names[run.label])
            for item in sorted(set(a) | set(b))
        ]
        who = row.system_b if row.system_a == row.system_b else f"{row.system_a} → {row.system_b}"
        who = f"{who} ({names[run.label]})" if len(runs) > 2 else who
        out.append(measured(str(who), states, "item"))
    return out


def _states(run: RunOutcomes, system: str, metric: str | None) -> dict[str, str]:
    frame = run.outcomes
    mine = frame[(frame["system"] == system) & (frame["metric"] == metric)]
    return dict(zip(mine["item_id"].astype(str), mine["state"].astype(str), strict=True))


def _pair_state(a: str | None, b: str | None, label_a: str, label_b: str) -> str | None:
    if a is None or b is None:
        return f"only in {label_b if a is None else label_a}"
    for state, label in ((a, label_a), (b, label_b)):
        if state not in MEASURED_STATES:
            return f"{state.replace('_', ' ')} in {label}"
    return None
