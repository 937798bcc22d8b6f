"""The sweep's statistics, pure functions over the cells' outcomes and usage.

- every cell's metrics with intervals (:func:`estimate_frame`, as ``evalbench compare``);
- every cell against the baseline cell of its seed, paired by item with the existing paired
  tests (:func:`vs_baseline`), Holm and Benjamini–Hochberg over all of them;
- per configuration: mean over seeds, between-seed spread beside the within-run interval,
  cost, tokens and latency (:func:`config_frame`);
- the best configuration against every other, items paired within each seed and pooled over
  seeds (:func:`best_vs_others`), and the seeds needed to separate the top two
  (:func:`separation`);
- main effects and two-way interactions of the swept keys (:func:`effects`,
  :func:`interactions`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from scipy.special import ndtri

from evalbench.history import (
    compare_runs,
    holm,
    paired_tests,
    rng_for,
    summarize_outcomes,
)
from evalbench.importers import OutcomeError
from evalbench.stats import bootstrap_mean

from . import scoring
from .expand import level_label
from .records import Cell, CellSummary

USAGE_COLUMNS = [
    "cell",
    "system",
    "calls",
    "errors",
    "prompt_tokens",
    "completion_tokens",
    "cost_usd",
    "latency_s",
]


def outcomes_of(summaries: dict[int, CellSummary]) -> dict[int, Any]:
    """Cell id -> its :class:`~evalbench.importers.RunOutcomes`, for cells that ended ok or
    degraded and could be read (a failed cell's records may be partial: left out), in cell
    order: every estimate, table and bootstrap after it is the same whatever order the
    cells finished in."""
    return {
        cell: s.data.outcomes
        for cell, s in sorted(summaries.items())
        if s.status in ("ok", "degraded") and s.data is not None and s.data.outcomes is not None
    }


def estimate_frame(
    outcomes: dict[int, Any], *, level: float, rounds: int, seed: int
) -> pd.DataFrame:
    """Per cell, system and metric: the mean outcome with its interval (Wilson for rates, a
    seeded bootstrap for scores: :func:`evalbench.history.summarize_outcomes`)."""
    frames = [
        summarize_outcomes(run.outcomes, level=level, rounds=rounds, seed=seed).assign(cell=cell)
        for cell, run in outcomes.items()
    ]
    if not frames:
        return pd.DataFrame(
            columns=["cell", "system", "metric", "higher_is_better", "n", "estimate", "low", "high"]
        )
    frame = pd.concat(frames, ignore_index=True)
    return frame[["cell", *frame.columns.drop("cell")]]


def usage_frame(summaries: dict[int, CellSummary]) -> pd.DataFrame:
    """Per cell and system: calls, errors, tokens, cost (USD, 0 when unpriced) and mean
    latency, from each cell's manifest and call records."""
    rows = []
    for cell, summary in sorted(summaries.items()):
        if summary.data is None:
            continue
        for row in summary.data.usage:
            system = str(row.get("system"))
            rows.append(
                {
                    "cell": cell,
                    "system": system,
                    "calls": int(row.get("calls") or 0),
                    "errors": int(row.get("errors") or 0),
                    "prompt_tokens": int(row.get("prompt_tokens") or 0),
                    "completion_tokens": int(row.get("completion_tokens") or 0),
                    "cost_usd": float(row.get("cost_usd") or 0.0),
                    "latency_s": summary.data.latency.get(system, math.nan),
                }
            )
    return pd.DataFrame(rows, columns=USAGE_COLUMNS)


class Comparing(NamedTuple):
    """One cell against the baseline cell of its seed, to be tested (picklable: a worker
    process may test it)."""

    cell: int
    baseline_cell: int
    baseline: Any
    """The baseline cell's :class:`~evalbench.importers.RunOutcomes`."""
    candidate: Any
    seed: int
    rounds: int
    level: float
    alpha: float
    power: float


def baseline_pairs(
    cells: Sequence[Cell], outcomes: dict[int, Any], **tests: Any
) -> tuple[list[Comparing], list[str]]:
    """Every cell (but the baseline's own) with the baseline cell of its seed, and notes on the
    cells that cannot be compared (``tests``: the seed, rounds, level, alpha and power)."""
    base_of = {c.seed: c.id for c in cells if c.baseline}
    found, notes = [], []
    for cell in cells:
        base = base_of.get(cell.seed)
        if cell.baseline or cell.id not in outcomes:
            continue
        if base is None or base not in outcomes:
            notes.append(f"cell {cell.id}: its baseline cell {base} did not end ok: not compared")
            continue
        found.append(Comparing(cell.id, base, outcomes[base], outcomes[cell.id], **tests))
    return found, notes


def compare_cell(job: Comparing) -> tuple[pd.DataFrame, list[str]]:
    """``evalbench compare BASELINE_CELL CELL``'s tests (every system, metric and slice; its
    Holm and BH within this one comparison as ``p_holm_pair`` / ``p_bh_pair``) and notes."""
    try:
        found = compare_runs([job.baseline, job.candidate], seed=job.seed, rounds=job.rounds,
                             level=job.level, alpha=job.alpha, power=job.power)  # fmt: skip
    except OutcomeError as exc:
        return pd.DataFrame(), [f"cell {job.cell}: not compared ({exc})"]
    tests = found.tests.rename(columns={"p_holm": "p_holm_pair", "p_bh": "p_bh_pair"})
    notes = [f"cell {job.cell}: {note}" for note in found.notes]
    return tests.assign(cell=job.cell, baseline_cell=job.baseline_cell), notes


def vs_baseline(parts: Sequence[tuple[pd.DataFrame, list[str]]]) -> tuple[pd.DataFrame, list[str]]:
    """The cells' tests (:func:`compare_cell`) together, Holm and BH over all of them
    (``p_holm`` / ``p_bh``: the whole sweep is one family), and their notes."""
    frames = [tests for tests, _ in parts if len(tests)]
    notes = [note for _, more in parts for note in more]
    if not frames:
        return pd.DataFrame(), notes
    tests = pd.concat(frames, ignore_index=True).sort_values(["cell"], kind="stable")
    return scoring.adjust(tests.reset_index(drop=True)), notes


CONFIG_COLUMNS = ["config", "system", "estimate", "seeds", "seed_sd", "half_width", "low_seed",
                  "high_seed", "cost_usd", "tokens", "latency_s"]  # fmt: skip
"""The columns of :func:`config_frame` (also when no cell ended ok: no row)."""


def config_frame(
    cells: Sequence[Cell], estimates: pd.DataFrame, usage: pd.DataFrame, metric: str
) -> pd.DataFrame:
    """Per configuration and system, on ``metric``: the mean of its cells' estimates over
    seeds, the between-seed SD (``seed_sd``, ≥ 2 seeds) beside the mean within-run interval
    half-width (``half_width``), and mean cost, tokens and latency per cell."""
    config_of = {c.id: c.config for c in cells}
    chosen = estimates[estimates["metric"] == metric].assign(
        config=lambda f: f["cell"].map(config_of), half=lambda f: (f["high"] - f["low"]) / 2
    )
    used = usage.assign(
        config=usage["cell"].map(config_of),
        tokens=usage["prompt_tokens"] + usage["completion_tokens"],
    )
    rows = []
    for (config, system), part in chosen.groupby(["config", "system"], sort=True):
        spent = used[(used["config"] == config) & (used["system"] == system)]
        values = part["estimate"].to_numpy(float)
        rows.append(
            {
                "config": int(config),
                "system": system,
                "estimate": float(values.mean()),
                "seeds": len(values),
                "seed_sd": float(values.std(ddof=1)) if len(values) > 1 else math.nan,
                "half_width": float(part["half"].mean()),
                "low_seed": float(values.min()),
                "high_seed": float(values.max()),
                "cost_usd": _mean(spent["cost_usd"]),
                "tokens": _mean(spent["tokens"]),
                "latency_s": _mean(spent["latency_s"]),
            }
        )
    return pd.DataFrame(rows, columns=CONFIG_COLUMNS)


def _mean(values: pd.Series) -> float:
    finite = values.dropna()
    return float(finite.mean()) if len(finite) else math.nan


def with_fronts(configs: pd.DataFrame, higher_is_better: bool) -> pd.DataFrame:
    """``configs`` with a Pareto flag per cost measure (``front_cost``, ``front_tokens``,
    ``front_latency``): no other entry is at least as good on the metric and at most as
    costly, and strictly better on one of the two."""
    out = configs.copy()
    for measure in ("cost_usd", "tokens", "latency_s"):
        name = "front_" + measure.removesuffix("_usd").removesuffix("_s")
        out[name] = scoring.pareto_front(
            out["estimate"].to_numpy(float), out[measure].to_numpy(float), higher_is_better
        )
    return out


def best_vs_others(
    cells: Sequence[Cell],
    outcomes: dict[int, Any],
    configs: pd.DataFrame,
    *,
    metric: str,
    higher_is_better: bool,
    seed: int,
    rounds: int,
    level: float,
    alpha: float,
) -> pd.DataFrame:
    """The best configuration (by mean over seeds) against every other entry on ``metric``:
    items paired within each seed both have, pooled over seeds (exact McNemar / Wilcoxon and
    a paired bootstrap interval, :func:`evalbench.history.paired_tests`), Holm over the
    comparisons. ``difference`` = other − best."""
    if len(configs) < 2:
        return pd.DataFrame()
    order = configs.sort_values(["estimate", "config"], ascending=[not higher_is_better, True])
    best = order.iloc[0]
    best_config = int(best["config"])
    by = {(c.config, c.seed): c.id for c in cells if c.id in outcomes}
    values = _values(outcomes, metric)
    kind = _kind(outcomes, metric)
    rows = []
    for other in order.iloc[1:].itertuples():
        frames = []
        for cell_seed in sorted({c.seed for c in cells}):
            a, b = by.get((best_config, cell_seed)), by.get((int(other.config), cell_seed))
            if a is None or b is None:
                continue
            empty = pd.DataFrame(columns=["value", "state"])
            left = values[a].get(best["system"], empty)
            right = values[b].get(other.system, empty)
            both = left.merge(right, left_index=True, right_index=True, suffixes=("_a", "_b"))
            frames.append(both.reset_index(names="item_id").assign(seed=cell_seed))
        paired = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
        paired = paired.assign(metric=metric, kind=kind, higher_is_better=higher_is_better)
        tests = (
            paired_tests(
                paired,
                seed=seed,
                rounds=rounds,
                level=level,
                alpha=alpha,
                label=f"best|{other.config}|{other.system}",
            )
            if len(paired)
            else None
        )
        rows.append(_best_row(best, other, tests))
    table = pd.DataFrame(rows)
    table["p_holm"] = holm(table["p"].to_numpy(float))
    return table


def _values(outcomes: dict[int, Any], metric: str) -> dict[int, dict[str, pd.DataFrame]]:
    """Cell -> system -> its ``value`` and ``state`` on ``metric`` by item id (items without a
    value left out, as :func:`evalbench.history.pair_outcomes` leaves them out)."""
    out: dict[int, dict[str, pd.DataFrame]] = {}
    for cell, run in outcomes.items():
        rows = run.outcomes[(run.outcomes["metric"] == metric) & run.outcomes["value"].notna()]
        out[cell] = {str(system): part.set_index("item_id")[["value", "state"]]
                     for system, part in rows.groupby("system", sort=False)}  # fmt: skip
    return out


def _kind(outcomes: dict[int, Any], metric: str) -> str:
    """``binary`` or ``score``: the kind of ``metric`` in the cells' outcomes."""
    for run in outcomes.values():
        rows = run.outcomes[run.outcomes["metric"] == metric]
        if len(rows):
            return str(rows["kind"].iloc[0])
    return "binary"


def _best_row(best: pd.Series, other: Any, tests: pd.DataFrame | None) -> dict[str, Any]:
    head = {
        "best_config": int(best["config"]),
        "best_system": best["system"],
        "config": int(other.config),
        "system": other.system,
    }
    if tests is None or not len(tests):
        return {
            **head,
            "n": 0,
            "difference": math.nan,
            "low": math.nan,
            "high": math.nan,
            "test": "none (no item paired)",
            "p": math.nan,
        }
    row = tests.iloc[0]
    return {
        **head,
        "n": int(row["n"]),
        "difference": float(row["difference"]),
        "low": float(row["low"]),
        "high": float(row["high"]),
        "test": str(row["test"]),
        "p": float(row["p"]),
    }


def separation(
    cells: Sequence[Cell],
    estimates: pd.DataFrame,
    configs: pd.DataFrame,
    *,
    metric: str,
    higher_is_better: bool,
    alpha: float,
    power: float,
) -> dict[str, Any]:
    """How many seeds would separate the top two configurations on ``metric``.

    The per-seed differences ``d_s`` (both configurations run at seed s, same items) have mean
    ``d`` and SD ``s``; a paired test over seeds at ``alpha`` detects ``d`` with ``power``
    once ``n ≥ ((z_(1−α/2) + z_power) · s / |d|)²`` (normal approximation), at least 2.
    ``None`` fields when fewer than two seeds are shared.
    """
    order = configs.sort_values(["estimate", "config"], ascending=[not higher_is_better, True])
    if len(order) < 2:
        return {"first": None, "second": None, "seeds": None, "why": "fewer than two entries"}
    first, second = order.iloc[0], order.iloc[1]
    per_seed = _per_seed(cells, estimates, metric)
    a, b = (
        per_seed.get((first["config"], first["system"]), {}),
        per_seed.get((second["config"], second["system"]), {}),
    )
    shared = sorted(set(a) & set(b))
    out: dict[str, Any] = {
        "first": _entry(first),
        "second": _entry(second),
        "shared_seeds": len(shared),
    }
    if len(shared) < 2:
        return out | {"seeds": None, "why": f"{len(shared)} seed(s) shared: no spread to estimate"}
    diffs = np.array([a[s] - b[s] for s in shared])
    mean, sd = float(diffs.mean()), float(diffs.std(ddof=1))
    z = float(ndtri(1 - alpha / 2) + ndtri(power))
    needed = math.inf if mean == 0 else max(2, math.ceil((z * sd / abs(mean)) ** 2))
    return out | {"difference": mean, "sd": sd, "seeds": needed, "why": None}


def _entry(row: pd.Series) -> dict[str, Any]:
    return {
        "config": int(row["config"]),
        "system": str(row["system"]),
        "estimate": float(row["estimate"]),
    }


def _per_seed(
    cells: Sequence[Cell], estimates: pd.DataFrame, metric: str
) -> dict[Any, dict[int, float]]:
    info = {c.id: (c.config, c.seed) for c in cells}
    out: dict[Any, dict[int, float]] = {}
    for row in estimates[estimates["metric"] == metric].itertuples():
        config, cell_seed = info[int(row.cell)]
        out.setdefault((config, row.system), {})[cell_seed] = float(row.estimate)
    return out


def levels_frame(
    cells: Sequence[Cell], estimates: pd.DataFrame, metric: str, factors: Sequence[str]
) -> pd.DataFrame:
    """Per cell and system on ``metric``: its estimate and its value of each factor (text)."""
    chosen = estimates[estimates["metric"] == metric][["cell", "system", "estimate"]]
    labels = pd.DataFrame(
        [{"cell": c.id, **{f: level_label(c.settings, f) for f in factors}} for c in cells]
    )
    if not len(labels):
        return chosen
    return chosen.merge(labels, on="cell", how="left")


def effects(
    levels: pd.DataFrame, factors: Sequence[str], *, seed: int, rounds: int, level: float
) -> pd.DataFrame:
    """Main effects: per system, factor and value, the mean of the cells' estimates with that
    value (over every other factor and seed), a seeded bootstrap interval over those cells,
    and ``effect`` = that mean − the system's mean over all cells."""
    rows = []
    for system, part in levels.groupby("system", sort=True):
        grand = float(part["estimate"].mean())
        for factor in factors:
            for value, group in part.groupby(factor, sort=False):
                values = group["estimate"].to_numpy(float)
                rng = rng_for(seed, "effect", system, factor, value)
                interval = bootstrap_mean(values, rng=rng, rounds=rounds, level=level)
                rows.append(
                    {
                        "system": system,
                        "factor": factor,
                        "value": value,
                        "cells": len(values),
                        "mean": interval.estimate,
                        "low": interval.low,
                        "high": interval.high,
                        "effect": interval.estimate - grand,
                    }
                )
    return pd.DataFrame(rows)


def interactions(levels: pd.DataFrame, factors: Sequence[str]) -> pd.DataFrame:
    """Two-way interactions: per system, pair of factors and pair of values, the mean of the
    cells' estimates and the residual ``mean_ab − mean_a − mean_b + grand`` (0 everywhere
    when the two factors add up; for a 2 × 2 grid, ± a quarter of the interaction contrast)."""
    rows = []
    for system, part in levels.groupby("system", sort=True):
        grand = float(part["estimate"].mean())
        for f, g in itertools.combinations(factors, 2):
            mean_f = part.groupby(f)["estimate"].mean()
            mean_g = part.groupby(g)["estimate"].mean()
            for (a, b), group in part.groupby([f, g], sort=False):
                mean = float(group["estimate"].mean())
                rows.append(
                    {
                        "system": system,
                        "factor_a": f,
                        "value_a": a,
                        "factor_b": g,
                        "value_b": b,
                        "cells": len(group),
                        "mean": mean,
                        "residual": mean - mean_f[a] - mean_g[b] + grand,
                    }
                )
    return pd.DataFrame(rows)
