"""The sweep study: a params file with a ``sweep:`` block runs every cell, then one report.

:func:`load` (the registry's ``load`` hook) validates the swept study's params and every
cell before anything runs. :func:`run` computes each cell as a run of the swept study in
its own run folder (``outputs/<params stem>/cells/<params hash>/``) through the study's own
``run`` function, without a notebook, in worker processes (:mod:`.executor`); a cell
finished earlier with the same code, params and data is read, not run again, and an
unfinished one resumes from its records. The cells are then read like ``evalbench compare``
reads runs and compared, summarized and ranked (:mod:`.metrics`). It writes
``records/cells.jsonl`` and ``records/comparisons.jsonl``.
"""

from __future__ import annotations

import json
import math
import time
from contextlib import redirect_stderr
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from evalbench import executors, sources
from evalbench.freshness import run_inputs
from evalbench.importers import READERS
from evalbench.measured import Measured
from evalbench.measured import measured as measured_states
from evalbench.models.progress import progress_bar
from evalbench.params import ParamsError, StudyParams, params_hash, validate_params
from evalbench.publish import classify_failure, error_verdict, measured_verdict
from evalbench.records import read_jsonl
from evalbench.runs import (
    USAGE_COLUMNS,
    Run,
    RunInUse,
    die_with_parent,
    lock_run,
    now_iso,
    read_manifest,
    recorded_calls,
    release_run,
    update_manifest,
)
from evalbench.settings import get_settings
from evalbench.studies import SWEEP, Study, UnknownStudyKind, get_study, summarize

from . import metrics, report
from .data import read_cell
from .executor import CellExecutor, Finished, LocalExecutor, Task
from .expand import check_spec, expand, factors, level_label, validated_cells, value_text
from .records import (
    Cell,
    CellRecord,
    CellSummary,
    ComparisonRecord,
    Estimate,
    SweepParams,
    SweepResult,
)

__all__ = ["CellRecord", "ComparisonRecord", "SweepParams", "SweepResult", "load", "run"]

BUSY_POLL_S = 0.2
"""How often a cell another sweep is computing is checked (it is then read, not rerun)."""


# ------------------------------------------------------------------------------ loading


def load(data: dict[str, Any], path: Path) -> SweepParams:
    """A params mapping with a ``sweep:`` block as :class:`SweepParams`, every cell validated.

    Raises:
        ParamsError: one line naming the file and the field, sweep key or cell.
    """
    if data.get("study") != SWEEP:
        base = {key: value for key, value in data.items() if key != "sweep"}
        common = {k: base[k] for k in StudyParams.model_fields if k in base and k != "study"}
        data = {
            **common,
            "study": SWEEP,
            "swept": data.get("study"),
            "sweep": data["sweep"],
            "base": base,
        }
    params = validate_params(SweepParams, data, path)
    try:
        model = get_study(params.swept).params
    except UnknownStudyKind:
        raise ParamsError(f"{path}: swept: unknown study kind {params.swept!r}") from None
    if params.swept not in READERS:
        raise ParamsError(
            f"{path}: sweep: study kind {params.swept!r} has no per-item outcomes to compare "
            f"cells by (kinds with them: {', '.join(sorted(READERS))})"
        )
    check_spec(params.sweep, path)
    cells = expand(params.sweep, params.seed, path)
    params._cells = validated_cells(model, dict(params.base), cells, path)
    return params


def params_of(run: Run[Any]) -> SweepParams:
    """The run's params, narrowed to :class:`SweepParams`."""
    assert isinstance(run.params, SweepParams), type(run.params)
    return run.params


# ------------------------------------------------------------------------------ one cell


class CellJob(NamedTuple):
    """What a worker needs to compute one cell (picklable)."""

    kind: str
    cell: Cell
    params: StudyParams
    params_file: Path
    overrides: list[str]
    """``-p`` texts that make the cell from the params file (``sweep=null`` among them)."""
    folder: Path
    notebook: Path
    """The swept study's notebook (part of the code a finished cell depends on)."""
    timeout_s: float


class CellRun(Run[StudyParams]):
    """A run of the swept study in a cell's own folder.

    Its :meth:`finish` keeps the folder locked: the worker writes the cell's verdict
    (:func:`_end`) and :func:`compute_cell` lets go. Let go in between, a second sweep
    waiting for the folder took it, found the cell unfinished and computed it again, while
    the first read the folder mid-way and called the cell failed.
    """

    releases_on_finish = False

    def __init__(self, job: CellJob, study: Study):
        super().__init__(
            job.params, job.params_file, job.overrides, summarize=partial(summarize, study)
        )
        self.dir = job.folder


def prepare_worker(kind: str) -> None:
    """A worker's start: end with the sweep's process; the swept study imported before the
    first cell's clock starts."""
    die_with_parent()
    get_study(kind)


def compute_cell(job: CellJob) -> CellSummary:
    """Compute (or resume, or reuse) one cell in its run folder (in a worker process).

    The folder is locked first; while another sweep holds it, this waits (up to the cell's
    timeout), then finds the cell finished and reads it.
    """
    started, cpu = time.perf_counter(), time.process_time()
    _lock(job.folder, started + job.timeout_s)
    timing = {"wait": time.perf_counter() - started}
    try:
        reused = _is_current(job, read_manifest(job.folder))
        if not reused:
            _logged(job, timing)
        summary = _summary(job, read_manifest(job.folder), reused, timing)
        timing |= {"total": time.perf_counter() - started, "cpu": time.process_time() - cpu}
        return summary._replace(wall_s=None if reused else round(timing["total"], 3))
    finally:
        release_run(job.folder)


def _lock(folder: Path, deadline: float) -> None:
    while True:
        try:
            lock_run(folder)
            return
        except RunInUse:
            if time.perf_counter() > deadline:
                raise
            time.sleep(BUSY_POLL_S)


def _logged(job: CellJob, timing: dict[str, float]) -> None:
    """:func:`_compute` with its stderr (warnings, progress bars) in ``<cell folder>/cell.log``:
    cells in parallel would interleave them on the sweep's terminal."""
    with open(job.folder / "cell.log", "w", encoding="utf-8") as log, redirect_stderr(log):
        _compute(job, timing)


def _compute(job: CellJob, timing: dict[str, float]) -> None:
    """Run the swept study on the cell (no notebook) and record how it ended; ``timing`` gets
    the seconds of ``start`` (opening the run), ``study`` (its run and finish), ``end``."""
    clock = time.perf_counter()
    study = get_study(job.kind)
    sources.forget_reads()  # this worker's earlier cells read files too
    run = CellRun(job, study)
    run.start()
    cell = {"cell": job.cell.id, "config": job.cell.config, "seed": job.cell.seed}
    update_manifest(job.folder, sweep_cell=cell)
    timing["start"], clock = time.perf_counter() - clock, time.perf_counter()
    try:
        run.finish(study.run(run))
    except Exception as exc:  # the cell failed: its manifest says why, the sweep shows it
        status, reason = classify_failure(exc)
        update_manifest(job.folder, status=status, reason=reason, ended_at=now_iso())
        timing["study"] = time.perf_counter() - clock
        return
    timing["study"], clock = time.perf_counter() - clock, time.perf_counter()
    _end(job, timing["study"])
    timing["end"] = time.perf_counter() - clock


def _end(job: CellJob, study_s: float) -> None:
    """Record how a finished cell ended (its verdict) and what it depends on (the folder is
    still locked: :class:`CellRun`)."""
    manifest = read_manifest(job.folder)  # finish() wrote the usage of every call
    status, reason = measured_verdict(
        error_verdict(pd.DataFrame(manifest["usage"], columns=USAGE_COLUMNS), job.params),
        manifest,
    )  # a cell that measured nothing is no_result, as a run is
    data_files = manifest.get("data_files") or {}
    update_manifest(
        job.folder,
        status=status,
        reason=reason or None,
        ended_at=now_iso(),
        wall_time_s=round(study_s, 3),
        cell_inputs=_inputs(job, data_files),
    )


def _specs(params: StudyParams) -> dict[str, Any]:
    return {spec.name: spec for spec in params.model_specs()}


def _inputs(job: CellJob, data_files: dict[str, Any]) -> dict[str, Any]:
    """What a finished cell depends on: the code, its resolved params, its data files."""
    return run_inputs(job.notebook, job.folder / "params.yaml", [], data_files, [])


def _is_current(job: CellJob, manifest: dict[str, Any]) -> bool:
    stored = manifest.get("cell_inputs")
    if manifest.get("status") != "ok" or not stored:
        return False
    now = _inputs(job, manifest.get("data_files") or {})
    return json.dumps(now, sort_keys=True) == json.dumps(stored, sort_keys=True)


def _summary(
    job: CellJob, manifest: dict[str, Any], reused: bool, timing: dict[str, float]
) -> CellSummary:
    usage = manifest.get("usage")  # what finish() recorded, else (it failed) from the records
    if manifest.get("status") not in ("ok", "degraded") or usage is None:
        usage = recorded_calls(job.folder, _specs(job.params)).to_dict(orient="records")
    status = manifest.get("status", "failed")
    return CellSummary(
        cell=job.cell.id,
        status=status if status in ("ok", "degraded", "skipped", "no_result") else "failed",
        reason=manifest.get("reason"),
        run_id=job.folder.name,
        reused=reused,
        wall_s=None,
        headlines=manifest.get("headlines") or {},
        data=read_cell(job.folder, usage),
        timing=timing,
        data_files=manifest.get("data_files") or {},
    )


# ------------------------------------------------------------------------------ the sweep


def plan(jobs: list[CellJob], shared_cache: bool) -> list[list[list[Task]]]:
    """The executor's plan. Simulated and own-agent systems share nothing: one phase, each cell
    alone. Systems behind an endpoint share the response cache: the baseline configuration's
    cells first, one after another, then each configuration's cells one after another (its
    seeds often ask the same requests), configurations in parallel; so a request a cell shares
    with the baseline or with its own seeds is paid once."""
    tasks = [Task(job.cell.id, job) for job in jobs]
    if not shared_cache:
        return [[[task] for task in tasks]]
    chains: dict[int, list[Task]] = {}
    for job, task in zip(jobs, tasks, strict=True):
        chains.setdefault(job.cell.config, []).append(task)
    first = [chain for chain in chains.values() if chain[0].job.cell.baseline]
    rest = [chain for chain in chains.values() if not chain[0].job.cell.baseline]
    return [first, rest] if rest else [first]


def _failed(job: CellJob, finished: Finished) -> CellSummary:
    """A cell whose worker raised, died or timed out (its records so far are counted)."""
    usage = recorded_calls(job.folder, _specs(job.params)).to_dict(orient="records")
    return CellSummary(
        job.cell.id,
        "failed",
        finished.error,
        job.folder.name,
        False,
        round(finished.wall_s, 3),
        {},
        read_cell(job.folder, usage),
        {"total": finished.wall_s},
        {},
    )


def executor_for(params: SweepParams) -> CellExecutor:
    """The executor of the sweep's cells: the Ray cluster's when one is chosen (``--executor``,
    :func:`evalbench.executors.current`), else ``max_parallel`` local worker processes."""
    remote = executors.current()
    if remote is None:
        setup = partial(prepare_worker, params.swept)
        return LocalExecutor(params.sweep.max_parallel, setup=setup, preload=[__name__])
    from evalbench.executors.ray_cells import RayCells

    return RayCells(remote, params.sweep.max_parallel, Finished)


def execute(
    params: SweepParams, jobs: list[CellJob], executor: CellExecutor
) -> dict[int, CellSummary]:
    """Every cell through ``executor``, as they finish (a progress bar over cells)."""
    shared = any(spec.calls_endpoint for spec in params.model_specs())
    by_id = {job.cell.id: job for job in jobs}
    summaries: dict[int, CellSummary] = {}
    bar = progress_bar()(total=len(jobs), desc="sweep cells", unit="cell")
    try:
        for done in executor.run(
            plan(jobs, shared), compute_cell, timeout_s=params.sweep.cell_timeout_s
        ):
            ok = done.error is None
            summaries[done.cell] = done.value if ok else _failed(by_id[done.cell], done)
            bar.update(1)
    finally:
        bar.close()
    return summaries


def cell_jobs(run: Run[Any]) -> list[CellJob]:
    """One job per cell of the sweep ``run`` (folders under ``<run folder>/../cells/``)."""
    params = params_of(run)
    notebook = get_settings().project_root / "notebooks" / get_study(params.swept).notebook
    folder = run.dir.parent / "cells"
    return [
        CellJob(
            params.swept,
            cell,
            cell_params,
            run.params_file,
            [*run.overrides, "sweep=null", *cell.overrides],
            folder / params_hash(cell_params),
            notebook,
            params.sweep.cell_timeout_s,
        )
        for cell, cell_params in params.cells
    ]


def run(run: Run[Any]) -> SweepResult:
    """Compute every cell (workers; reusing and resuming), then compare and summarize them.

    Args:
        run: the open :class:`evalbench.runs.Run` of the sweep (``Run[SweepParams]``).
    """
    params = params_of(run)
    jobs = cell_jobs(run)
    executor = executor_for(params)
    summaries = execute(params, jobs, executor)
    cells = [job.cell for job in jobs]
    compared = compare_all(params, cells, summaries, executor)
    manifest = getattr(executor, "manifest", None)  # a cluster's: its nodes, tasks, retries
    run.executor.update(manifest() if manifest is not None else {"name": "local"})
    result = analyse(params, cells, summaries, jobs[0].folder.parent, compared)
    run.write_records("cells", cell_records(result))
    run.write_records("comparisons", _plain(result.comparisons, ComparisonRecord))
    for label in sorted({k for s in summaries.values() for k in s.data_files}):
        if Path(label).is_absolute() and Path(label).is_file():  # for the sweep's freshness
            sources.record_read(label)
    return result


# ------------------------------------------------------------------------------ analysis


def ranking_metric(params: SweepParams, estimates: pd.DataFrame) -> tuple[str, bool]:
    """The metric that ranks configurations and its direction.

    Raises:
        ValueError: ``sweep.metric`` names no metric of the cells.
    """
    have = list(dict.fromkeys(estimates["metric"]))
    if not have:
        return params.sweep.metric or "", True
    metric = params.sweep.metric or have[0]
    if metric not in have:
        raise ValueError(
            f"sweep.metric: {metric!r} is no metric of the cells (they have: {', '.join(have)})"
        )
    rows = estimates[estimates["metric"] == metric]
    return metric, bool(rows["higher_is_better"].iloc[0])


def compare_all(
    params: SweepParams,
    cells: list[Cell],
    summaries: dict[int, CellSummary],
    executor: CellExecutor | None = None,
) -> tuple[pd.DataFrame, list[str]]:
    """Every cell against the baseline cell of its seed (:func:`.metrics.compare_cell`, in
    ``executor``'s workers when given), adjusted over the sweep (:func:`.metrics.vs_baseline`)."""
    spec = params.sweep
    jobs, notes = metrics.baseline_pairs(
        cells, metrics.outcomes_of(summaries), seed=params.seed, rounds=params.bootstrap_rounds,
        level=params.confidence_level, alpha=spec.alpha, power=spec.power,
    )  # fmt: skip
    if executor is None or len(jobs) < 2:
        parts = [metrics.compare_cell(job) for job in jobs]
    else:
        tasks = [[[Task(job.cell, job)] for job in jobs]]
        done = {f.cell: f for f in executor.run(tasks, metrics.compare_cell,
                                                timeout_s=spec.cell_timeout_s)}  # fmt: skip
        parts = [
            done[job.cell].value if done[job.cell].error is None
            else (pd.DataFrame(), [f"cell {job.cell}: not compared ({done[job.cell].error})"])
            for job in jobs
        ]  # fmt: skip
    tests, more = metrics.vs_baseline(parts)
    return tests, notes + more


def analyse(
    params: SweepParams,
    cells: list[Cell],
    summaries: dict[int, CellSummary],
    folder: Path,
    compared: tuple[pd.DataFrame, list[str]] | None = None,
) -> SweepResult:
    """Every statistic of the report from the cells' summaries (see :mod:`.metrics`);
    ``compared``: :func:`compare_all`'s result (computed here when not given)."""
    spec, names = params.sweep, factors(params.sweep)
    level, rounds, seed = params.confidence_level, params.bootstrap_rounds, params.seed
    outcomes = metrics.outcomes_of(summaries)
    estimates = metrics.estimate_frame(outcomes, level=level, rounds=rounds, seed=seed)
    usage = metrics.usage_frame(summaries)
    metric, higher = ranking_metric(params, estimates)
    tests, notes = compared or compare_all(params, cells, summaries)
    configs = metrics.with_fronts(metrics.config_frame(cells, estimates, usage, metric), higher)
    best = metrics.best_vs_others(
        cells,
        outcomes,
        configs,
        metric=metric,
        higher_is_better=higher,
        seed=seed,
        rounds=rounds,
        level=level,
        alpha=spec.alpha,
    )
    levels = metrics.levels_frame(cells, estimates, metric, names)
    return SweepResult(
        params=params,
        cells=cell_frame(cells, summaries, usage, names),
        estimates=estimates,
        comparisons=tests,
        configs=configs,
        best=best,
        separation=metrics.separation(
            cells,
            estimates,
            configs,
            metric=metric,
            higher_is_better=higher,
            alpha=spec.alpha,
            power=spec.power,
        ),
        effects=metrics.effects(levels, names, seed=seed, rounds=rounds, level=level),
        interactions=metrics.interactions(levels, names),
        metric=metric,
        higher_is_better=higher,
        factors=names,
        notes=notes
        + [
            f"cell {s.cell}: {s.data.problem}"
            for s in summaries.values()
            if s.data is not None and s.data.problem and s.status != "failed"
        ],
        simulated=frozenset(s.name for s in params.model_specs() if s.simulated),
        folder=folder,
    )


def cell_frame(
    cells: list[Cell], summaries: dict[int, CellSummary], usage: pd.DataFrame, names: list[str]
) -> pd.DataFrame:
    """One row per cell: how it ended, its settings (a column per factor), cost and tokens."""
    totals = usage.groupby("cell")[["cost_usd", "prompt_tokens", "completion_tokens"]].sum()
    rows = []
    for cell in cells:
        s = summaries[cell.id]
        spent = totals.loc[cell.id] if cell.id in totals.index else None
        latency = usage[usage["cell"] == cell.id]["latency_s"].dropna()
        rows.append(
            {
                "cell": cell.id,
                "config": cell.config,
                "seed": cell.seed,
                "baseline": cell.baseline,
                **{key: value_text(value) for key, value in cell.settings.items()},
                **{name: level_label(cell.settings, name) for name in names},
                "status": s.status,
                "reason": s.reason,
                "reused": s.reused,
                "wall_s": s.wall_s,
                "run_id": s.run_id,
                "overrides": list(cell.overrides),
                "cost_usd": None if spent is None else float(spent["cost_usd"]),
                "prompt_tokens": 0 if spent is None else int(spent["prompt_tokens"]),
                "completion_tokens": 0 if spent is None else int(spent["completion_tokens"]),
                "latency_s": float(latency.mean()) if len(latency) else None,
                "headlines": s.headlines,
                "settings": cell.settings,
                "timing": s.timing,
            }
        )
    return pd.DataFrame(rows)


def cell_records(result: SweepResult) -> list[dict[str, Any]]:
    """``records/cells.jsonl``: one :class:`CellRecord` per cell, failed ones included."""
    estimates = result.estimates
    out = []
    for row in result.cells.to_dict(orient="records"):
        mine = estimates[estimates["cell"] == row["cell"]]
        found = [
            Estimate(
                system=e.system,
                metric=e.metric,
                estimate=_num(e.estimate),
                low=_num(e.low),
                high=_num(e.high),
                n=int(e.n),
            )
            for e in mine.itertuples()
        ]
        fields = {k: _none_if_nan(row[k]) for k in CellRecord.model_fields
                  if k in row and k != "metrics"}  # fmt: skip
        out.append(CellRecord(**fields, metrics=found).model_dump(mode="json"))
    return out


def _none_if_nan(value: Any) -> Any:
    """A frame's missing value (NaN in a column of text or numbers) as null."""
    return None if isinstance(value, float) and math.isnan(value) else value


def _num(value: Any) -> float | None:
    number = float(value)
    return number if math.isfinite(number) else None


def _plain(frame: pd.DataFrame, record: type[ComparisonRecord]) -> list[dict[str, Any]]:
    if not len(frame):
        return []
    rows = frame[[c for c in record.model_fields if c in frame.columns]].astype(object)
    clean = rows.where(rows.notna(), None).to_dict(orient="records")
    return [record.model_validate(r).model_dump(mode="json") for r in clean]


def verdict(run_dir: Path, params: SweepParams) -> tuple[str, str]:
    """``degraded`` (published, exit 1) when a cell did not end ok, naming the first few."""
    rows = read_jsonl(run_dir / "records" / "cells.jsonl")
    bad = [r for r in rows if r.get("status") != "ok"]
    if not bad:
        return "ok", ""
    shown = "; ".join(f"cell {r['cell']} {r['status']}: {r.get('reason') or ''}" for r in bad[:3])
    more = f"; and {len(bad) - 3} more" if len(bad) > 3 else ""
    return "degraded", f"{len(bad)} of {len(rows)} cells did not end ok: {shown}{more}"


def counts(result: SweepResult) -> dict[str, int]:
    """Cells (by how they ended), configurations, seeds and tests, for the manifest."""
    cells = result.cells
    return {
        "cells": len(cells),
        "ok": int((cells["status"] == "ok").sum()),
        "not_ok": int((cells["status"] != "ok").sum()),
        "reused": int(cells["reused"].sum()),
        "configurations": int(cells["config"].nunique()),
        "seeds": int(cells["seed"].nunique()),
        "tests": len(result.comparisons),
    }


def measured(result: SweepResult) -> list[Measured]:
    """Per configuration: its cells that ended with a result (``ok`` or ``degraded``), and
    how the others ended (``cell <status>``: failed, no_result, timed out ...)."""
    cells = result.cells
    return [
        measured_states(
            f"configuration {config}",
            [None if s in ("ok", "degraded") else f"cell {s}" for s in rows["status"]],
            "cell",
        )
        for config, rows in cells.groupby("config", sort=True)
    ]


STUDY = Study(
    kind=SWEEP,
    params=SweepParams,
    run=run,
    notebook="sweep.ipynb",
    records={"cells": CellRecord, "comparisons": ComparisonRecord},
    optional_records=frozenset({"comparisons"}),
    headlines=report.headlines,
    counts=counts,
    measured=measured,
    notes=report.notes,
    load=load,
    verdict=verdict,
)
