"""The sweep study: a params file with a ``sweep:`` block runs every cell, then one report.

:func:`load` (the registry's ``load`` hook) validates the swept study's params and every
cell before anything runs. :func:`run` computes each cell as a run of the swept study in
its own run folder (``outputs/cells/<study kind>/<params hash>/``: every sweep with an equal
cell shares it) through the study's own ``run`` function, without a notebook, in worker
processes (:mod:`.executor`); a cell finished earlier with the same code, params and data is
read, not run again, and an unfinished one resumes from its records. The cells are then
read like ``evalbench compare`` reads runs and compared, summarized and ranked
(:mod:`.metrics`). It writes ``records/cells.jsonl`` and ``records/comparisons.jsonl``.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from contextlib import redirect_stderr
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd
from filelock import FileLock, Timeout

from evalbench import executors, sources
from evalbench.freshness import run_inputs
from evalbench.importers import READERS
from evalbench.measured import Measured
from evalbench.measured import measured as measured_states
from evalbench.models import ModelClient, ModelSpec
from evalbench.models.progress import progress_bar
from evalbench.models.usage import token_cost
from evalbench.params import ParamsError, StudyParams, params_hash, validate_params
from evalbench.publish import classify_failure, error_verdict, measured_verdict
from evalbench.records import open_in_folder, read_jsonl
from evalbench.runs import (
    UNFINISHED,
    USAGE_COLUMNS,
    Run,
    RunInUse,
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
from .data import IN_FLIGHT, note_sent, read_cell, recorded_tokens, unanswered
from .executor import CellExecutor, Finished, LocalExecutor, Task, plan
from .expand import (
    check_new_keys,
    check_overrides,
    check_seed_fields,
    check_spec,
    expand,
    factors,
    level_label,
    ranking_metric,
    validated_cells,
    value_text,
)
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


def load(data: dict[str, Any], path: Path, overrides: Sequence[str] = ()) -> SweepParams:
    """A params mapping with a ``sweep:`` block as :class:`SweepParams`, every cell validated.

    Raises:
        ParamsError: one line naming the file and the field, sweep key, override or cell.
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
    check_overrides(params.sweep, overrides, path)
    cells = expand(params.sweep, params.seed, path)
    params._cells = validated_cells(model, dict(params.base), cells, path)
    check_new_keys(model, dict(params.base), params.sweep, cells[0], path)
    check_seed_fields(params.sweep, params._cells, path)
    params._metric = ranking_metric(params.swept, params._cells, params.sweep.metric, path)
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

    def client(self, spec: ModelSpec, **kwargs: Any) -> ModelClient:
        """The run's client, noting each request it sends to a provider in the cell's
        :data:`~.data.IN_FLIGHT` before it leaves (see :func:`_history`)."""
        client = super().client(spec, **kwargs)
        if not spec.simulated:
            ask = client._ask
            client._ask = partial(_noted, ask, self.dir, spec.name)  # type: ignore[method-assign]
        return client

    def cached(self, key: str) -> bool:
        """Whether the response cache holds the answer to ``key`` (``cache: use`` only: the
        other modes ask again whatever it holds)."""
        return self.params.cache == "use" and self.cache.get(key) is not None


async def _noted(ask: Any, folder: Path, system: str, request: Any, key: str, sim: Any) -> Any:
    note_sent(folder, system, key)
    return await ask(request, key, sim)


def _history(job: CellJob, run: CellRun) -> dict[str, Any]:
    """What the cell's earlier attempt left (read before the run marks it running): the
    attempt it resumes when that one did not end ok (``resumed_from``: its status and
    reason), and every request sent and never answered by it or the attempts before
    (``lost_in_flight``: paid, and asked again now)."""
    earlier = read_manifest(job.folder)
    if earlier.get("status") in (None, "ok"):
        return {"resumed_from": None, "lost_in_flight": []}
    lost = [*(earlier.get("lost_in_flight") or []), *unanswered(job.folder, run.cached)]
    return {
        "resumed_from": {"status": earlier["status"], "reason": earlier.get("reason")},
        "lost_in_flight": lost,
    }


def reasked_cost(
    folder: Path, run: CellRun | None = None, params: StudyParams | None = None
) -> float:
    """USD of the requests lost in flight (the manifest's ``lost_in_flight``), each at what
    asking it again cost (its answer in ``run``'s response cache, or in the records): the
    payment lost with the earlier attempt, estimated by the one that replaced it. Without
    ``run`` (the driver), from the records and ``params``' prices."""
    lost = (manifest_or_none(folder) or {}).get("lost_in_flight") or []
    if not lost:
        return 0.0
    specs = _specs(run.params if run is not None else params)
    tokens = recorded_tokens(folder)
    total = 0.0
    for system, key in lost:
        hit = run.cache.get(key) if run is not None and run.params.cache == "use" else None
        used = (hit.usage.prompt_tokens, hit.usage.completion_tokens) if hit else tokens.get(key)
        total += token_cost(specs.get(system), *used) if used else 0.0
    return total


def prepare_worker(kind: str) -> None:
    """A worker's start: the swept study imported before the first cell's clock starts (the
    worker dies with the sweep's process: the executor ties it); progress bars lock with a
    thread lock. tqdm's default adds a multiprocessing lock, which in a forkserver worker is
    a named semaphore (``/dev/shm/sem.mp-*``) only the resource tracker removes: a ``kill
    -9`` of the sweep left one per worker behind."""
    import threading

    from tqdm import tqdm

    tqdm.set_lock(threading.RLock())
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
    with open_in_folder(job.folder / "cell.log", "w") as log, redirect_stderr(log):
        _compute(job, timing)


def _compute(job: CellJob, timing: dict[str, float]) -> None:
    """Run the swept study on the cell (no notebook) and record how it ended; ``timing`` gets
    the seconds of ``start`` (opening the run), ``study`` (its run and finish), ``end``."""
    clock = time.perf_counter()
    study = get_study(job.kind)
    sources.forget_reads()  # this worker's earlier cells read files too
    run = CellRun(job, study)
    history = _history(job, run)
    run.start()
    cell = {"cell": job.cell.id, "config": job.cell.config, "seed": job.cell.seed}
    update_manifest(job.folder, sweep_cell=cell, **history)
    (job.folder / IN_FLIGHT).unlink(missing_ok=True)  # its lost requests are in the manifest
    timing["start"], clock = time.perf_counter() - clock, time.perf_counter()
    try:
        run.finish(study.run(run))
    except Exception as exc:  # the cell failed: its manifest says why, the sweep shows it
        status, reason = classify_failure(exc)
        update_manifest(job.folder, status=status, reason=reason, ended_at=now_iso(),
                        reasked_cost_usd=reasked_cost(job.folder, run))  # fmt: skip
        timing["study"] = time.perf_counter() - clock
        return
    update_manifest(job.folder, reasked_cost_usd=reasked_cost(job.folder, run))
    timing["study"], clock = time.perf_counter() - clock, time.perf_counter()
    (job.folder / IN_FLIGHT).unlink(missing_ok=True)  # every request came back: recorded
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


def _specs(params: StudyParams | None) -> dict[str, Any]:
    return {spec.name: spec for spec in params.model_specs()} if params is not None else {}


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
        **_resumed(manifest),
    )


def _resumed(manifest: dict[str, Any]) -> dict[str, Any]:
    """A cell's :class:`CellSummary` fields on its earlier attempts (from its manifest)."""
    return {
        "resumed": manifest.get("resumed_from") is not None,
        "reasked": len(manifest.get("lost_in_flight") or []),
        "reasked_cost_usd": float(manifest.get("reasked_cost_usd") or 0.0),
    }


# ------------------------------------------------------------------------------ the sweep


def _failed(job: CellJob, finished: Finished) -> CellSummary:
    """A cell whose worker raised, died or timed out (its records so far are counted, and
    the requests its earlier attempts lost in flight)."""
    usage = recorded_calls(job.folder, _specs(job.params)).to_dict(orient="records")
    manifest = manifest_or_none(job.folder) or {}
    earlier = _resumed(manifest) | {"reasked_cost_usd": reasked_cost(job.folder, None, job.params)}
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
        **earlier,
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
    stopped: list[tuple[CellJob, str]] = []
    bar = progress_bar()(total=len(jobs), desc="sweep cells", unit="cell")
    done_cells = executor.run(plan(jobs, shared), compute_cell,
                              timeout_s=params.sweep.cell_timeout_s)  # fmt: skip
    try:
        for done in done_cells:
            if done.error is None:
                summaries[done.cell] = done.value
            else:
                summaries[done.cell] = _failed(by_id[done.cell], done)
                stopped.append((by_id[done.cell], done.error))
            bar.update(1)
    except BaseException:  # Ctrl-C, SIGTERM: the cells under way say so, not "running"
        stopped += [(job, CUT_SHORT) for job in jobs if job.cell.id not in summaries]
        raise
    finally:
        getattr(done_cells, "close", lambda: None)()  # its workers stopped: their folders free
        for job, why in stopped:
            settle_stopped(job.folder, why, "interrupted" if why == CUT_SHORT else "failed")
        bar.close()
    return summaries


CUT_SHORT = "the sweep was stopped (Ctrl-C or SIGTERM) while this cell ran; rerun to resume it"
"""Why the cells under way when a sweep was stopped ended (their manifests say it)."""


def settle_stopped(folder: Path, why: str, status: str = "failed") -> None:
    """Record in a cell's manifest how it ended when its worker could not (timed out and
    killed, or its process died; with ``status`` ``interrupted``: the sweep was stopped):
    ``status`` with ``why``, if the manifest still says it is running, says nothing (a
    cluster's task that never sent its files back) or says what a reader guessed from the
    free lock (``interrupted``, "its process is gone"): the driver knows better. Done holding
    the folder's lock, once the executor stopped the worker; a folder another sweep holds by
    then is that sweep's to end. A folder this process cannot write (read-only, a full
    disk) is left as it is: the cell's row already says it failed and why, and the readers
    of a manifest still marked running show it ``interrupted``; the sweep goes on."""
    try:
        lock_run(folder)
    except (RunInUse, OSError):
        return
    try:
        manifest = manifest_or_none(folder)  # unreadable: left as it is, for a look
        guessed = manifest is not None and manifest.get("status") == "interrupted"
        if manifest is not None and (manifest.get("status") in (*UNFINISHED, None) or guessed):
            update_manifest(folder, status=status, reason=why, ended_at=now_iso())
    except OSError:  # as above: the cell's row says why it failed
        return
    finally:
        release_run(folder)


def manifest_or_none(folder: Path) -> dict[str, Any] | None:
    """A cell's manifest as the driver reads it (``None`` when it cannot be read: the cell's
    problem, shown as its reason, never the end of the sweep)."""
    try:
        manifest = read_manifest(folder)
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) else None


def cells_dir(outputs: Path, kind: str) -> Path:
    """Where every sweep's cells of study kind ``kind`` live: ``<outputs>/cells/<kind>/``, one
    folder per cell named by its params hash, so two sweeps with an equal cell (another params
    file name, another sweep block) share it."""
    return outputs / "cells" / kind


def cell_jobs(run: Run[Any]) -> list[CellJob]:
    """One job per cell of the sweep ``run`` (folders under :func:`cells_dir`; a cell an
    earlier version left under ``<params name>/cells/`` is moved there first)."""
    params = params_of(run)
    notebook = get_settings().project_root / "notebooks" / get_study(params.swept).notebook
    folder = cells_dir(run.dir.parent.parent, params.swept)
    jobs = []
    for cell, cell_params in params.cells:
        name = params_hash(cell_params)
        adopt_legacy(run.dir.parent / "cells" / name, folder / name)
        overrides = [*run.overrides, "sweep=null", *cell.overrides]
        jobs.append(CellJob(params.swept, cell, cell_params, run.params_file, overrides,
                            folder / name, notebook, params.sweep.cell_timeout_s))  # fmt: skip
    return jobs


def adopt_legacy(legacy: Path, folder: Path) -> None:
    """Move a cell folder of the per-params-file layout (``outputs/<params name>/cells/<hash>``,
    before cells were shared) to ``folder`` and leave a link in its place, so its old path
    still reads it. Holding its lock; one in use, or a ``folder`` already there, stays as is,
    and so does one reached through a symbolic link (``<params name>/cells`` linked to a folder
    elsewhere: nothing outside the outputs folder is moved into it)."""
    if folder.exists() or not legacy.is_dir() or legacy.resolve() != legacy.absolute():
        return
    lock = FileLock(legacy / ".lock", timeout=0)
    try:
        lock.acquire()
    except Timeout:
        return  # an older evalbench computes it right now: this sweep computes its own
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        legacy.rename(folder)
    except OSError:  # taken meanwhile (another sweep made folder): the old one stays
        return
    finally:
        lock.release()
    legacy.symlink_to(folder.resolve(), target_is_directory=True)


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


def higher_is_better(metric: str, estimates: pd.DataFrame) -> bool:
    """Whether a higher ``metric`` is better, as the cells' outcomes say (``True`` when no
    cell has it: nothing is ranked then)."""
    rows = estimates[estimates["metric"] == metric]
    return bool(rows["higher_is_better"].iloc[0]) if len(rows) else True


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
    metric = params.metric
    higher = higher_is_better(metric, estimates)
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
                "resumed": s.resumed,
                "reasked": s.reasked,
                "reasked_cost_usd": s.reasked_cost_usd,
                "wall_s": s.wall_s,
                "run_id": s.run_id,
                "overrides": list(cell.overrides),
                "cost_usd": _cost(spent, s.reasked_cost_usd),
                "prompt_tokens": 0 if spent is None else int(spent["prompt_tokens"]),
                "completion_tokens": 0 if spent is None else int(spent["completion_tokens"]),
                "latency_s": float(latency.mean()) if len(latency) else None,
                "headlines": s.headlines,
                "settings": cell.settings,
                "timing": s.timing,
            }
        )
    return pd.DataFrame(rows)


def _cost(spent: pd.Series | None, reasked: float) -> float | None:
    """A cell's cost: its recorded calls' and what its requests lost in flight had cost."""
    if spent is None:
        return reasked or None
    return float(spent["cost_usd"]) + reasked


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
    head = f"{len(bad)} of {len(rows)} cells did not end ok"
    if len(bad) == len(rows):
        head = f"no cell ended ok ({len(bad)} of {len(rows)})"
    return "degraded", f"{head}: {shown}{more}"


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
            [
                None if s in ("ok", "degraded") else _cell_state(s, why)
                for s, why in zip(rows["status"], rows["reason"], strict=True)
            ],
            "cell",
        )
        for config, rows in cells.groupby("config", sort=True)
    ]


def _cell_state(status: str, reason: Any) -> str:
    """``cell failed (m: 2 of 2 calls failed: connection_error × 2)``: a cell's end and the
    first clause of its reason, at most 60 characters (equal reasons count together)."""
    why = str(reason or "").split(";")[0].strip()[:60].rstrip()
    return f"cell {status} ({why})" if why else f"cell {status}"


STUDY = Study(
    kind=SWEEP,
    params=SweepParams,
    run=run,
    notebook="sweep.ipynb",
    records={"cells": CellRecord, "comparisons": ComparisonRecord},
    optional_records=frozenset({"comparisons"}),
    headlines=report.headlines,
    findings=report.findings,
    counts=counts,
    measured=measured,
    notes=report.notes,
    load=load,
    verdict=verdict,
)
