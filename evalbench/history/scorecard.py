"""What the index shows about runs over time: the systems × benchmarks scorecard, each
system's results and history, and the regression mark of a study with a pinned baseline.

A scorecard cell is one system in one study: its headline metric (the first metric the
study's outcome reader lists: accuracy for GAIA and BFCL, agreement within ±k for a judge;
the Bradley–Terry rating for arenas) in the latest *ok* run of that study that has the
system, with its interval, n, the system's cost in that run and whether it was simulated.
Runs of the params file as written come first: a run with ``-p`` overrides (an experiment,
e.g. the compare demo's reseeded GAIA runs) fills a cell only when no plain run has the
system.
No cell is averaged with another: benchmarks measure different things on different scales.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from evalbench.importers import OutcomeError, read_outcomes
from evalbench.importers.outcomes import iter_lines, simulated_names

from .paired import compare_runs, gate_blockers, regression_line, regressions, unmeasured
from .runs import latest_published, pinned_baseline, study_runs, summarize_outcomes

SKIPPED_KINDS = frozenset({"compare"})
"""Study kinds that compare other runs: they have no systems of their own."""
RESULT_COLUMNS = ["study", "title", "kind", "run_id", "started_at", "overrides", "system",
                  "metric", "metric_kind", "primary", "higher_is_better", "estimate", "low",
                  "high", "n", "unscored", "errors", "measured", "cost_usd", "simulated",
                  "report"]  # fmt: skip


class Scorecard(NamedTuple):
    """Every system's results in every ok run of every study (see the module docstring)."""

    results: pd.DataFrame
    """One row per study run, system and metric (:data:`RESULT_COLUMNS`: ``kind`` is the
    study's, ``metric_kind`` the metric's: binary, score or rating); ``primary`` marks
    each study's headline metric; oldest run first."""
    cells: pd.DataFrame
    """The scorecard: per study and system, the primary rows of the latest ok run with it."""
    headline_only: list[tuple[str, str]]
    """(study, title) of ok studies without per-system results (their index headlines only)."""
    problems: list[str]
    """Runs whose records could not be read (one line each)."""


def is_ok(manifest: dict[str, Any]) -> bool:
    """A run whose latest attempt is ``ok`` (then its records are the published report's; a
    run whose latest attempt failed may hold that attempt's records, so it is left out)."""
    return manifest.get("status") == "ok"


def scorecard(outputs: Path, *, level: float = 0.95, rounds: int = 1000) -> Scorecard:
    """Read every ok run under ``outputs`` into a :class:`Scorecard`."""
    frames, headline_only, problems = [], [], []
    for folder in sorted(p for p in outputs.glob("*") if p.is_dir()):  # none: no folder yet
        runs = [m for m in study_runs(folder.name, outputs) if is_ok(m)]
        if not runs or runs[-1].get("kind") in SKIPPED_KINDS:
            continue
        found = False
        for manifest in runs:
            try:
                frame = run_results(manifest, level=level, rounds=rounds)
            except OutcomeError as exc:
                if "has no per-item outcomes" not in str(exc):
                    problems.append(str(exc))
                continue
            found = found or len(frame) > 0
            frames.append(frame)
        if not found:
            headline_only.append((folder.name, str(runs[-1].get("title") or folder.name)))
    results = (
        pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=RESULT_COLUMNS)
    )
    return Scorecard(results, latest_cells(results), headline_only, problems)


def latest_cells(results: pd.DataFrame) -> pd.DataFrame:
    """Per (study, system): the primary rows of the newest run that has the system, among
    the runs without overrides when there is one."""
    primary = results[results["primary"].astype(bool)].copy()
    if not len(primary):
        return primary
    primary["plain"] = primary["overrides"] == ""
    best = primary.groupby(["study", "system"])["plain"].transform("max")
    primary = primary[primary["plain"] == best]
    newest = primary.groupby(["study", "system"])["started_at"].transform("max")
    chosen = primary[primary["started_at"] == newest].drop(columns="plain")
    return chosen.reset_index(drop=True)


def run_results(manifest: dict[str, Any], *, level: float, rounds: int) -> pd.DataFrame:
    """One run's per-system, per-metric results (arena studies: their ratings first).

    Raises:
        OutcomeError: the run's records cannot be read (or its kind has none).
    """
    run_dir = Path(manifest["_dir"])
    run = read_outcomes(run_dir)
    summary = summarize_outcomes(run.outcomes, level=level, rounds=rounds,
                                 nothing_measured=unmeasured(run))  # fmt: skip
    first = run.outcomes["metric"].iloc[0] if len(run.outcomes) else None
    summary["primary"] = summary["metric"] == first
    ratings = read_ratings(run_dir)
    if len(ratings):
        summary["primary"] = False
        summary = pd.concat([ratings, summary], ignore_index=True)
    costs = {str(u.get("system")): u.get("cost_usd") for u in manifest.get("usage") or []}
    sims = simulated_names(manifest)
    report = run_dir / "report.html"
    summary = summary.rename(columns={"kind": "metric_kind"})
    return summary.assign(
        study=run_dir.parent.name,
        title=str(manifest.get("title") or run_dir.parent.name),
        kind=str(manifest.get("kind")),
        run_id=run_dir.name,
        started_at=str(manifest.get("started_at") or ""),
        overrides=" ".join(manifest.get("overrides") or []),
        cost_usd=[costs.get(s) for s in summary["system"]],
        simulated=[s in sims for s in summary["system"]],
        report=str(report) if report.exists() else None,
    )[RESULT_COLUMNS]


def read_ratings(run_dir: Path) -> pd.DataFrame:
    """An arena run's Bradley–Terry ratings with their bootstrap intervals (``records/
    ratings.jsonl``), one primary row per model and dataset (empty without the file)."""
    path = run_dir / "records" / "ratings.jsonl"
    if not path.exists():
        return pd.DataFrame()
    rows = []
    for number, r in iter_lines(path):
        try:
            rows.append({
                "system": str(r["model"]), "metric": f"rating ({r['dataset']})",
                "kind": "rating", "higher_is_better": True, "n": int(r["n_battles"]),
                "estimate": float(r["rating"]), "low": float(r["ci_low"]),
                "high": float(r["ci_high"]), "unscored": 0, "errors": 0,
                "measured": int(r["n_battles"]), "primary": True,
            })  # fmt: skip
        except (ValueError, KeyError, TypeError) as exc:
            raise OutcomeError(f"{path}:{number}: not a rating record ({exc})") from None
    return pd.DataFrame(rows)


def system_results(card: Scorecard, system: str) -> pd.DataFrame:
    """Every metric of ``system`` in the run each of its scorecard cells comes from."""
    cells = card.cells[card.cells["system"] == system]
    keys = set(zip(cells["study"], cells["run_id"], strict=True))
    rows = card.results[card.results["system"] == system]
    chosen = [(s, r) in keys for s, r in zip(rows["study"], rows["run_id"], strict=True)]
    return rows[chosen].reset_index(drop=True)


def system_history(card: Scorecard, system: str) -> pd.DataFrame:
    """The primary metric of ``system`` in every ok run of every study, oldest first."""
    rows = card.results[(card.results["system"] == system) & card.results["primary"].astype(bool)]
    return rows.sort_values(["study", "metric", "started_at"]).reset_index(drop=True)


def regression_status(study: str, outputs: Path | None = None) -> dict[str, Any] | None:
    """The latest published run of ``study`` (of its params as written, when there is one)
    against its pinned baseline (``None`` when no baseline is pinned): ``baseline``,
    ``latest``, ``regressions`` (lines) or ``problem``."""
    try:
        baseline = pinned_baseline(study, outputs)
    except OutcomeError as exc:
        return {"baseline": None, "latest": None, "regressions": [], "problem": str(exc)}
    if baseline is None:
        return None
    latest = latest_published(study, outputs, plain_first=True)
    status: dict[str, Any] = {
        "baseline": baseline.name,
        "latest": latest.name if latest else None,
        "regressions": [],
        "problem": None,
    }
    if latest is None or latest.resolve() == baseline.resolve():
        return status
    try:
        runs = [read_outcomes(baseline), read_outcomes(latest)]
        found = compare_runs(runs, rounds=200)
    except OutcomeError as exc:
        return status | {"problem": str(exc)}
    if blockers := gate_blockers(found, runs):
        return status | {"problem": "; ".join(blockers)}
    lines = [regression_line(r) for r in regressions(found.tests).itertuples()]
    return status | {"regressions": lines}
