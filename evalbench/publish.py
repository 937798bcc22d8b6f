"""Execute study notebooks, export self-contained HTML reports, build the index.

Notebooks run through papermill's Python API (one kernel per study, no CLI subprocess);
reports are exported with nbconvert's ``HTMLExporter`` using a template that drops every
CDN script (require.js, MathJax, widget managers), hides code, strips progress bars and
sanitizes the HTML, so a report opens offline and untrusted text stays inert.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any, Literal, NamedTuple, cast

import pandas as pd

from evalbench import kernels, lean_imports, processes
from evalbench.alerts import AlertsSpec
from evalbench.freshness import file_digest, find_current, run_inputs
from evalbench.index import (  # noqa: F401  (build_index, collect_runs: re-exported)
    PUBLISHED,
    _fmt,
    build_index,
    collect_runs,
)
from evalbench.look import SCROLL_CSS, describe_figures
from evalbench.measured import from_rows, no_result_reason, partial_reason
from evalbench.models import ResponseCache
from evalbench.params import ParamsError, StudyParams, read_params_data
from evalbench.records import (
    NO_SPACE,
    UNWRITABLE,
    OutputsUnwritable,
    ensure_writable,
    unwritable,
    write_atomic,
)
from evalbench.runs import (
    FAILED_NOTEBOOK,
    LOCK_ENV,
    RunInUse,
    lock_run,
    now_iso,
    read_manifest,
    recorded_calls,
    release_run,
    run_dir_for,
    set_aside_unreadable_manifest,
    update_manifest,
)
from evalbench.settings import get_settings
from evalbench.skipped import skip_hints as hints_for
from evalbench.skipped import skip_reason
from evalbench.studies import SWEEP, get_study, load_params, notebook_for, study_kind

lean_imports.skip()  # papermill/nbconvert -> nbformat -> jsonschema: ~1 s of CPU (see there)

PROGRESS_ENV = "EVALBENCH_PROGRESS"

Status = Literal["ok", "degraded", "no_result", "failed", "skipped", "interrupted", "busy",
                 "current", "pending"]  # fmt: skip
"""How an attempt ended. ``ok``, ``degraded`` and ``no_result`` are published (the run
folder's ``report.html`` and ``notebook.ipynb`` are replaced: a ``no_result`` report says
what was asked and why nothing was measured); the others leave the last published report
in place; ``current``: nothing to do, the published run is up to date
(:mod:`evalbench.freshness`); ``pending``: batch mode submitted its batches and stopped
(``--no-wait``), run again to collect."""
SKIP_ERRORS = {"DataUnavailable", "MissingSecret", "LocalModelUnavailable"}
_WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
ATTEMPT_NOTEBOOK, ATTEMPT_REPORT = "notebook.attempt.ipynb", "report.attempt.html"


class StudyResult(NamedTuple):
    """How one study run ended."""

    params_file: Path
    status: Status
    run_dir: Path | None
    wall_s: float
    reason: str = ""


def run_study(
    params_file: Path,
    overrides: list[str] | None = None,
    *,
    progress: bool = False,
    force: bool = False,
    warm: bool = False,
) -> StudyResult:
    """Validate params, execute the study's notebook into its run folder, export the report.

    The attempt is executed and exported under temporary names and published (replacing
    the folder's ``notebook.ipynb`` and ``report.html``) only when it is ``ok`` — every
    system's share of failed calls at most ``max_error_rate`` — or ``degraded`` (above it,
    with ``allow_degraded``), or ``no_result`` (within it, but no system scored any item:
    :func:`measured_verdict`). Otherwise the last published report stays and the manifest
    says why the latest attempt was not published. A notebook failure is ``failed``; missing
    data or a missing secret ``skipped``; a signal ``interrupted`` (the requests in flight
    are recorded first); a run folder another process holds ``busy`` (nothing written). A
    published run that is up to date (same code, params and data; no failed call to retry)
    is ``current`` and not rendered again, unless ``force``. With ``warm``, the notebook runs
    in this process's warm kernel (:mod:`evalbench.kernels`; ``make report``).

    Raises:
        ParamsError: the params file or an override is invalid.
        NotebookMissing: the study's notebook is not under the project folder.
        OutputsUnwritable: the run folder cannot be written.
    """
    overrides = overrides or []
    params = load_params(params_file, overrides)
    loaded = file_digest(Path(params_file))  # the run's input, however the file changes
    run_dir = run_dir_for(params_file, params)
    notebook = get_settings().project_root / "notebooks" / notebook_for(params)
    if not notebook.is_file():
        raise NotebookMissing(
            f"{notebook}: no such notebook (the project, a folder with params/ and notebooks/, "
            "is found from the current folder upward); run from your evalbench checkout, or "
            "set EVALBENCH_HOME to it"
        )
    started = time.perf_counter()
    if not force and (current := _current(Path(params_file), overrides)) is not None:
        return current
    ensure_writable(run_dir)
    _check_cache(params)
    try:
        lock_run(run_dir)
    except RunInUse as exc:
        return StudyResult(Path(params_file), "busy", run_dir, 0.0, str(exc))
    except OSError as exc:  # its lock file cannot be opened (a link planted there: ELOOP)
        raise unwritable(run_dir, exc) from None
    try:
        set_aside_unreadable_manifest(run_dir)
        execute = _Execution(notebook, params_file, overrides, progress, warm)
        status, reason = _attempt(execute, run_dir, params)
        try:
            result = _end(params_file, run_dir, started, status, reason, execute.timing,
                          params, loaded)  # fmt: skip
        except OSError as exc:
            if exc.errno not in UNWRITABLE:
                raise
            _end_on_a_full_disk(run_dir, reason or f"OSError: {exc}")
            raise unwritable(run_dir, exc) from None
        if full := NO_SPACE.search(reason):  # the study's own writes failed: the same line
            raise unwritable(Path(full["path"]) if full["path"] else run_dir, reason)
        if result.status == "failed" and params.alerts and read_manifest(run_dir).get("usage"):
            return after_publish(result, params, failed=True)  # its error-rate rules
        return after_publish(result, params) if result.status in PUBLISHED else result
    except KeyboardInterrupt:  # stop at once (_Interrupts: a second signal), but say so
        _aborted(run_dir, "interrupted by SIGINT: stopped at once")
        raise
    finally:
        release_run(run_dir)


class NotebookMissing(ParamsError):
    """The study's notebook is not in the project folder (run from outside the project): a
    usage error, one line saying what to do (exit 2, like a params error)."""


def after_publish(result: StudyResult, params: StudyParams, failed: bool = False) -> StudyResult:
    """A published run's alert check (with ``alerts:``) and ``summary.html``; what they say
    joins the result's reason, the run's status line (the manifest keeps the details). A
    ``failed`` run's: its error-rate rules only (:func:`~evalbench.alerts.check.check_run`).

    Raises:
        OutputsUnwritable: the run folder cannot be written (full, read-only).
    """
    from evalbench.alerts.check import check_run, status_note
    from evalbench.summary import write_summary

    run_dir = Path(str(result.run_dir))
    try:
        record = check_run(run_dir, params.alerts, params.title, failed) if params.alerts else None
        summary = "" if failed else write_summary(run_dir).problem  # a failed run has none
        notes = [result.reason, status_note(record), summary]
    except OSError as exc:
        if exc.errno not in UNWRITABLE:
            raise
        raise unwritable(run_dir, exc) from None
    return result._replace(reason="; ".join(note for note in notes if note))


def _end_on_a_full_disk(run_dir: Path, reason: str) -> None:
    """The manifest could not be written at the end of an attempt: write it ``failed``, if
    need be after deleting this failed attempt's files (what filled the disk, often). When
    even that fails, the previous manifest stays (whole: it is replaced atomically); its
    ``running`` reads ``interrupted`` once the lock is released (:func:`runs.current_manifest`).
    """
    fields = {"status": "failed", "reason": reason, "ended_at": now_iso()}
    for leftover in (None, FAILED_NOTEBOOK, ATTEMPT_NOTEBOOK, ATTEMPT_REPORT):
        if leftover is not None:
            (run_dir / leftover).unlink(missing_ok=True)
        with contextlib.suppress(OSError):  # still full: free more, or leave the old one
            update_manifest(run_dir, **fields)
            return


def _inputs(notebook: Path, params_file: Path, params: StudyParams,
            manifest: dict[str, Any], loaded: str) -> dict[str, Any]:  # fmt: skip
    """What the published run depends on (:func:`evalbench.freshness.run_inputs`; ``loaded``:
    its params file's digest when it was loaded)."""
    study = get_study(params.study)
    dependencies = (study.dependencies(params, Path(params_file).resolve().parent)
                    if study.dependencies is not None else [])  # fmt: skip
    return run_inputs(notebook, params_file, manifest.get("overrides") or [],
                      manifest.get("data_files") or {}, dependencies, loaded)  # fmt: skip


def _aborted(run_dir: Path, why: str) -> None:
    """A run stopped at once (KeyboardInterrupt) is ``interrupted``, not ``running``."""
    with contextlib.suppress(OSError):
        if read_manifest(run_dir).get("status") == "running":
            update_manifest(run_dir, status="interrupted", ended_at=now_iso(), reason=why)


def _attempt(execute: _Execution, run_dir: Path, params: StudyParams) -> tuple[Status, str]:
    update_manifest(run_dir, status="running", started_at=now_iso(), reason=None,
                    pid=os.getpid(), kernel_pid=None)  # fmt: skip
    signals = _Interrupts(run_dir)
    try:
        with signals, _lock_env(run_dir):
            execute(run_dir / ATTEMPT_NOTEBOOK)
        if signals.received:  # it ran on to its end (no request left to stop): still a stop
            return "interrupted", f"interrupted by {signals.received}"
        _require_finished(run_dir)
        execute.export(run_dir / ATTEMPT_NOTEBOOK, run_dir / ATTEMPT_REPORT)
    except KeyboardInterrupt:
        _aborted(run_dir, signals.aborted or f"interrupted by {signals.received or 'SIGINT'}")
        raise
    except Exception as exc:  # every failure is recorded in the manifest, then reported
        status, reason = classify_failure(exc)
        if signals.received or reason.startswith("KeyboardInterrupt"):
            status, reason = "interrupted", f"interrupted by {signals.received or 'SIGINT'}"
        if status == "no_result":  # the study stopped: nothing measured to analyse
            verdict = error_verdict(recorded_calls(run_dir), params)
            if verdict[0] == "failed":  # above max_error_rate: failed, as for any study
                return "failed", f"{reason.removeprefix('NoResult: ')}; {verdict[1]}"
            return status, _no_result_report(run_dir, reason)
        return status, _with_call_errors(reason, run_dir)
    verdict = measured_verdict(error_verdict(recorded_calls(run_dir), params),
                               read_manifest(run_dir))  # fmt: skip
    study = get_study(params.study)
    if verdict[0] == "ok" and study.verdict is not None:  # e.g. a sweep with a failed cell
        ended, why = study.verdict(run_dir, params)
        return cast(Status, ended), "; ".join(r for r in (why, verdict[1]) if r)
    return verdict


def measured_verdict(verdict: tuple[Status, str], manifest: dict[str, Any]) -> tuple[Status, str]:
    """How a run ended, given what it measured (``run.finish`` wrote it in the manifest):
    ``no_result`` when no system scored any item (:mod:`evalbench.measured`) and the failed
    calls were within ``max_error_rate`` (above it, the run stays ``failed``); an ``ok`` or
    ``degraded`` run with a system that scored nothing says which in its reason, and so does
    one whose response cache failed mid-run (``cache_failed``)."""
    status, reason = verdict
    if status == "failed":
        return verdict
    rows = from_rows(manifest.get("measured"))
    why = manifest.get("no_result") or (no_result_reason(rows) if rows else "")
    cache = str(manifest.get("cache_failed") or "")  # Run.finish: the cache failed mid-run
    if why:
        return "no_result", "; ".join(r for r in (str(why), reason, cache) if r)
    return status, "; ".join(r for r in (partial_reason(rows), reason, cache) if r)


def _no_result_report(run_dir: Path, reason: str) -> str:
    """The attempt's report when its study stopped with nothing measured
    (:class:`evalbench.measured.NoResult`): a page of what was asked and why nothing was
    measured (:func:`evalbench.summary.no_result_html`). Returns the run's reason."""
    from evalbench.summary import no_result_html

    manifest = read_manifest(run_dir)
    write_atomic(run_dir / ATTEMPT_REPORT, no_result_html(manifest))
    return str(manifest.get("no_result") or reason.removeprefix("NoResult: "))


def error_verdict(calls: pd.DataFrame, params: StudyParams) -> tuple[Status, str]:
    """``ok`` when no system's share of failed calls exceeds ``params.max_error_rate``;
    else ``degraded`` (with ``allow_degraded``) or ``failed``, with a one-line reason that
    names each system above the limit, e.g. ``real-X: 6 of 6 calls failed: http_401 × 6``."""
    over = [
        row for row in calls.itertuples()
        if row.calls and row.errors / row.calls > params.max_error_rate
    ]  # fmt: skip
    if not over:
        return "ok", ""
    parts = "; ".join(f"{r.system}: {_failed(r)}" for r in over)
    limit = f"max_error_rate {params.max_error_rate:g}"
    return ("degraded" if params.allow_degraded else "failed"), f"{parts} (above {limit})"


def _failed(row: Any) -> str:
    reasons = ", ".join(f"{k} × {v}" for k, v in sorted(row.error_reasons.items()))
    return f"{row.errors} of {row.calls} calls failed: {reasons}"


def _with_call_errors(reason: str, run_dir: Path) -> str:
    """A failure's reason, plus the failed calls when there were any (often the cause)."""
    failing = [r for r in recorded_calls(run_dir).itertuples() if r.errors]
    if not failing:
        return reason
    return reason + "; " + "; ".join(f"{r.system}: {_failed(r)}" for r in failing)


def _check_cache(params: StudyParams) -> None:
    """Open the response cache here, before the kernel does, when the study will use it: a
    corrupt file is moved aside with its one-line message on this terminal (a kernel's
    stderr is not shown by ``make report``). Studies that send no request to an endpoint
    (simulated systems, users' own agents) never open it."""
    if params.cache != "off" and any(s.calls_endpoint for s in params.model_specs()):
        ResponseCache(get_settings().cache_dir / "responses.sqlite").close()


class _lock_env(contextlib.AbstractContextManager):
    """Tell the kernel about to start that this process holds its run folder's lock."""

    def __init__(self, run_dir: Path):
        self.value = str(run_dir.resolve())

    def __enter__(self) -> None:
        self.saved = os.environ.get(LOCK_ENV)
        os.environ[LOCK_ENV] = self.value

    def __exit__(self, *exc: Any) -> None:
        if self.saved is None:
            os.environ.pop(LOCK_ENV, None)
        else:
            os.environ[LOCK_ENV] = self.saved


class _Interrupts(contextlib.AbstractContextManager):
    """While a notebook runs: Ctrl-C or SIGTERM interrupts the study's kernel (which starts
    no new request, records those in flight, then stops); a second signal aborts at once.

    Only in the main thread (where Python delivers signals); elsewhere a no-op.
    """

    def __init__(self, run_dir: Path):
        self.run_dir = run_dir
        self.received: str | None = None
        self.aborted: str | None = None
        """Why the run stopped at once (the handler raised KeyboardInterrupt)."""
        self._saved: dict[int, Any] = {}

    def __enter__(self) -> _Interrupts:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._saved[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: Any) -> None:
        for sig, handler in self._saved.items():
            signal.signal(sig, handler)

    def _handle(self, signum: int, frame: Any) -> None:
        first, name = self.received, signal.Signals(signum).name
        self.received = first or name
        manifest = read_manifest(self.run_dir)
        pid = manifest.get("kernel_pid")
        if first:  # a second signal: stop here
            self.aborted = f"interrupted by {first}, then aborted at once by a second signal"
            raise KeyboardInterrupt
        if not pid:  # no kernel to stop yet: stop here
            self.aborted = f"interrupted by {name} before the study's kernel started"
            raise KeyboardInterrupt
        print(f"evalbench: {self.received}: {_stopping(manifest)}; signal again to abort",
              file=sys.stderr, flush=True)  # fmt: skip
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(int(pid), signal.SIGINT)


def _stopping(manifest: dict[str, Any]) -> str:
    """What the first Ctrl-C or SIGTERM does to the run: a study records its requests in
    flight first; a sweep's cells stop at once (docs/sweeps.md: asked again on resume)."""
    if manifest.get("kind") == SWEEP:
        return ("stopping the sweep (its cells stop at once: their requests in flight are "
                "asked again, and paid again, when you resume)")  # fmt: skip
    return "stopping the study (its requests in flight are recorded first)"


def run_many(files: list[Path], *, jobs: int = 1, force: bool = False) -> Iterator[StudyResult]:
    """Run several studies, ``jobs`` at a time, as they finish.

    Up-to-date studies are ``current`` at once (checked here, before any worker starts;
    ``force`` renders them anyway). The others run in ``jobs`` worker processes, each with
    one warm kernel reused for its studies (:mod:`evalbench.kernels`). A params error or an
    unwritable run folder is a failed study (nothing run); every other study still runs.
    After an interrupted study no new study starts.
    """
    stale = []
    for path in files:
        result = (None if force else _current(path)) or _unreadable(path)
        if result is None:
            stale.append(path)
        else:
            yield result
    if jobs <= 1 or len(stale) <= 1:
        for path in stale:
            result = _run_or_fail(path, force)
            yield result
            if result.status == "interrupted":
                return
        return
    context = multiprocessing.get_context("spawn")
    processes.lifeline()  # the workers, their kernels and all they start die with this process
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context,
                             initializer=processes.exit_with,
                             initargs=(os.getpid(),)) as pool:  # fmt: skip
        futures = [pool.submit(_run_or_fail, path, force) for path in stale]
        for future in as_completed(futures):
            result = future.result()
            if result.status == "interrupted":
                for other in futures:
                    other.cancel()
            yield result


def _unreadable(path: Path) -> StudyResult | None:
    """A params file that does not parse or names no study, as a failed study: found here
    (its YAML only, no study imported), not in a worker process started for it alone."""
    try:
        study_kind(read_params_data(path), path)
    except ParamsError as exc:
        return failure_result(path, exc)
    return None


def summary_page(run_dir: Path) -> Path | None:
    """The published run's ``summary.html``, written first when it is missing (a run stopped
    during its alert check's deliveries is up to date without one); ``None`` when it cannot
    be written."""
    path = run_dir / "summary.html"
    if not path.exists():
        from evalbench.summary import write_summary

        with contextlib.suppress(OSError):
            write_summary(run_dir)
    return path if path.exists() else None


def _current(path: Path, overrides: list[str] | None = None) -> StudyResult | None:
    """The ``current`` result of an up-to-date study, else ``None`` (reads files only:
    :func:`evalbench.freshness.find_current`)."""
    settings = get_settings()
    notebooks = settings.project_root / "notebooks"
    run_dir = find_current(settings.outputs_dir, notebooks, Path(path), overrides or [])
    if run_dir is None:
        return None
    when = str(read_manifest(run_dir).get("ended_at", ""))[:16].replace("T", " ")
    return StudyResult(Path(path), "current", run_dir, 0.0, f"up to date ({when})")


def _run_or_fail(path: Path, force: bool = False) -> StudyResult:
    try:
        return run_study(path, force=force, warm=True)
    except (ParamsError, OutputsUnwritable) as exc:
        return failure_result(path, exc)


class _Execution:
    """Executes one study's notebook (papermill) and exports it, timing each part.

    ``timing`` (kept in the manifest, printed by ``make report``): ``kernel_start_s`` (a new
    kernel and its imports, or resetting the warm one, plus papermill's own overhead),
    ``data_load_s`` and ``compute_s`` (the notebook's cells: loading the study's data as the
    study times it, everything else), ``export_s`` (HTML), ``fixed_s`` (kernel start +
    export: what every study pays whatever it does).
    """

    def __init__(
        self, notebook: Path, params_file: Path, overrides: list[str], progress: bool, warm: bool
    ):
        self.notebook, self.params_file, self.overrides = notebook, params_file, overrides
        self.progress, self.warm = progress, warm
        self.timing: dict[str, float] = {}

    def __call__(self, output: Path) -> None:
        import papermill as pm

        for name in ("papermill", "papermill.translators"):  # a filter is the logger's own
            _quiet_defaults(logging.getLogger(name))
        if self.progress:  # the kernel draws text bars; its stderr is relayed here
            os.environ[PROGRESS_ENV] = "text"
        processes.lifeline()  # the kernel, and all it starts, die with this process
        started = time.perf_counter()
        extra: dict[str, Any] = {}
        if self.warm:
            extra["km"] = kernels.warm_kernel(self.notebook.parent)[0]
            kernels.prepare(extra["km"])
        else:  # the kernel's own log (TCP notice, shutdown chatter) is not the study's output
            extra["extra_arguments"] = kernels.KERNEL_ARGS
            extra["kernel_manager_class"] = kernels.manager_class()
        try:
            pm.execute_notebook(
                str(self.notebook), str(output),
                parameters={"params_file": str(Path(self.params_file).resolve()),
                            "overrides": self.overrides},
                cwd=str(self.notebook.parent), kernel_name="python3", language="python",
                progress_bar=False, log_output=False, request_save_on_cell_execute=False,
                stderr_file=sys.stderr if self.progress else None, **extra,
            )  # fmt: skip
        finally:
            if self.warm:
                extra["km"].close_clients()  # papermill's client of a kernel it was handed
            self._time_cells(output, time.perf_counter() - started)

    def _time_cells(self, output: Path, wall: float) -> None:
        import nbformat

        cells = 0.0
        if output.exists():
            nb = nbformat.read(output, as_version=4)
            cells = sum(float(c.metadata.get("papermill", {}).get("duration") or 0)
                        for c in nb.cells)  # fmt: skip
        load = float((read_manifest(output.parent).get("phases") or {}).get("load", 0.0))
        self.timing = {"kernel_start_s": round(max(0.0, wall - cells), 3),
                       "data_load_s": round(load, 3),
                       "compute_s": round(max(0.0, cells - load), 3)}  # fmt: skip

    def export(self, notebook: Path, html: Path) -> None:
        started = time.perf_counter()
        export_html(notebook, html)
        self.timing["export_s"] = round(time.perf_counter() - started, 3)
        self.timing["fixed_s"] = round(self.timing["kernel_start_s"] + self.timing["export_s"], 3)


class _DefaultsInspection(logging.Filter):
    """Drops papermill's warnings about reading a parameters cell's default values: it cannot
    read a line with two ``=`` (``overrides = ["seed=7"]``, as a user leaves the cell in
    JupyterLab) and then calls the injected ``overrides`` unknown. evalbench never uses those
    defaults: it injects both parameters (papermill 2.7, ``execute.execute_notebook``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not message.startswith(("Unable to parse line", "Passed unknown parameter"))


def _quiet_defaults(logger: logging.Logger) -> None:
    if not any(isinstance(f, _DefaultsInspection) for f in logger.filters):
        logger.addFilter(_DefaultsInspection())


def _require_finished(run_dir: Path) -> None:
    if read_manifest(run_dir).get("status") != "executed":
        raise RuntimeError("the notebook ran to the end but never called run.finish()")


def classify_failure(exc: BaseException) -> tuple[Status, str]:
    """``skipped`` for unavailable data, secrets or local models (the ``local`` extra not
    installed), ``pending`` for batches submitted with ``--no-wait``, ``no_result`` for a study
    that stopped with nothing measured (:class:`evalbench.measured.NoResult`), ``failed``
    otherwise; one-line reason."""
    ename = getattr(exc, "ename", type(exc).__name__)
    evalue = str(getattr(exc, "evalue", exc)).strip().splitlines()
    reason = f"{ename}: {evalue[0] if evalue else ''}".strip()
    if ename == "BatchPending":
        return "pending", reason
    if ename == "NoResult":
        return "no_result", reason
    return ("skipped" if ename in SKIP_ERRORS else "failed"), reason


def _end(
    params_file: Path,
    run_dir: Path,
    started: float,
    status: Status,
    reason: str,
    timing: dict[str, float],
    params: StudyParams,
    loaded: str,
) -> StudyResult:
    """Publish (or keep aside) the attempt and record how it ended, from the params the run
    loaded (``loaded``: their file's digest then): never the file again, which may have been
    renamed or edited meanwhile."""
    wall = time.perf_counter() - started
    ended = now_iso()
    checks: dict[str, Any] = {}
    if status in PUBLISHED:
        _publish(run_dir)
        checks["alerts"] = _due(params.alerts)  # this attempt's check, due: never an earlier
    else:
        _keep_attempt(run_dir)
    manifest = update_manifest(
        run_dir, status=status, reason=reason or None, wall_time_s=round(wall, 2),
        ended_at=ended, timing=timing, **checks,
    )  # fmt: skip
    if status in PUBLISHED:
        notebook = get_settings().project_root / "notebooks" / notebook_for(params)
        inputs = _inputs(notebook, Path(params_file), params, manifest, loaded)
        manifest = update_manifest(run_dir, published=_snapshot(manifest), inputs=inputs,
                                   notebook=notebook.name)  # fmt: skip
    update_manifest(run_dir, report="report.html" if manifest.get("published") else None)
    return StudyResult(Path(params_file), status, run_dir, wall, reason)


def _due(alerts: AlertsSpec | None) -> dict[str, Any] | None:
    """The alerts record a published run has until its check ran (none without ``alerts:``):
    a run stopped before its check is not up to date, so the next run checks it."""
    if alerts is None:
        return None
    from evalbench.alerts.check import due_record

    return due_record(alerts)


def _publish(run_dir: Path) -> None:
    """Replace the published notebook and report with this attempt's (each an atomic rename)."""
    (run_dir / ATTEMPT_NOTEBOOK).replace(run_dir / "notebook.ipynb")
    (run_dir / ATTEMPT_REPORT).replace(run_dir / "report.html")
    (run_dir / FAILED_NOTEBOOK).unlink(missing_ok=True)


def _keep_attempt(run_dir: Path) -> None:
    """A failed attempt's executed notebook stays beside the published one, for debugging."""
    (run_dir / ATTEMPT_REPORT).unlink(missing_ok=True)
    if (run_dir / ATTEMPT_NOTEBOOK).exists():
        (run_dir / ATTEMPT_NOTEBOOK).replace(run_dir / FAILED_NOTEBOOK)


_SNAPSHOT = ("status", "reason", "started_at", "ended_at", "wall_time_s", "headlines", "counts",
             "notes", "usage", "cost_usd", "simulated", "simulated_names", "findings")  # fmt: skip


def _snapshot(manifest: dict[str, Any]) -> dict[str, Any]:
    """What the index shows of the last published attempt (kept when a later one fails)."""
    return {key: manifest.get(key) for key in _SNAPSHOT} | {"report": "report.html"}


@functools.cache
def _exporter() -> Any:
    """The HTML exporter (built once per process: its templates and sanitizer)."""
    from nbconvert import HTMLExporter

    sanitizer = _sanitizer()
    exporter = HTMLExporter(
        template_name="evalbench",
        extra_template_basedirs=[str(Path(__file__).parent / "templates")],
        exclude_input=True,
        exclude_input_prompt=True,
        exclude_output_prompt=True,
        embed_images=True,
        # the template sanitizes markdown once rendered, and HTML outputs, with our lists
        sanitize_html=True,
        filters={"clean_html": sanitizer.sanitize_html_tags},
    )
    exporter.register_preprocessor(sanitizer, enabled=True)
    return exporter


def export_html(notebook_path: Path, html_path: Path) -> Path:
    """Render an executed notebook as a self-contained, offline, input-free HTML report.

    Outputs are escaped where they are made (:mod:`evalbench.display`); as a second line of
    defence every HTML output is sanitized to a fixed list of tags and attributes (no
    script, no event handlers, no ``javascript:`` links).
    """
    import nbformat

    nb = nbformat.read(notebook_path, as_version=4)
    strip_noise(nb)
    title = str(nb.metadata.get("title") or _study_title(notebook_path.parent))
    resources = {"metadata": {"name": title}, "evalbench_css": SCROLL_CSS}
    body, _ = _exporter().from_notebook_node(nb, resources=resources)
    return write_atomic(html_path, describe_figures(body, title))


_SAFE_TAGS = [
    "a", "abbr", "b", "blockquote", "br", "caption", "code", "dd", "details", "div", "dl", "dt",
    "em", "summary",
    "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "li", "mark", "ol", "p", "pre", "small", "span",
    "strong", "sub", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul",
]  # fmt: skip
_SAFE_ATTRIBUTES = {
    "*": ["class", "style", "title", "id"],
    "a": ["href", "title"],
    "td": ["colspan", "rowspan"],
    "th": ["colspan", "rowspan"],
}
_SAFE_STYLES = [
    "background", "background-color", "border", "border-radius", "color", "font-size",
    "font-weight", "margin", "padding", "text-align", "white-space", "max-width", "overflow-x",
]  # fmt: skip


def _sanitizer() -> Any:
    """nbconvert's SanitizeHTML with our lists, leaving markdown and HTML to the template.

    Its preprocessor cleans markdown *source* as HTML: `<params>` in a code span became
    `&lt;params&gt;`, which the renderer escaped again (shown as `&lt;params&gt;`), and a
    `[x](javascript:...)` link passed as text, to become a link. The template's
    ``clean_html`` filter cleans what markdown renders to, and HTML outputs, instead; this
    preprocessor still drops every output type it does not know (scripts, widgets).
    """
    from nbconvert.preprocessors.sanitize import SanitizeHTML

    class Sanitizer(SanitizeHTML):
        def preprocess_cell(self, cell: Any, resources: Any, index: int) -> Any:
            if cell.cell_type == "markdown":
                return cell, resources
            return super().preprocess_cell(cell, resources, index)

    return Sanitizer(
        tags=_SAFE_TAGS,
        attributes=_SAFE_ATTRIBUTES,
        styles=_SAFE_STYLES,
        safe_output_keys={"metadata", "text/plain", "text/latex", "application/json",
                          "image/png", "image/jpeg", "text/html", "text/markdown"},
        sanitized_output_types=set(),
    )  # fmt: skip


def strip_noise(nb: Any) -> None:
    """Drop what a reader should not see: progress bars, logs (stderr, widget views) and
    code cells left with no output (with inputs hidden they would only leave gaps)."""
    kept = []
    for cell in nb.cells:
        if cell.get("cell_type") == "code":
            cell["outputs"] = [o for o in cell.get("outputs", []) if not _is_noise(o)]
            if not cell["outputs"]:
                continue
        kept.append(cell)
    nb.cells = kept
    nb.metadata.pop("widgets", None)


def _study_title(run_dir: Path) -> str:
    return str(read_manifest(run_dir).get("title") or "evalbench report")


def _is_noise(output: Any) -> bool:
    if output.get("output_type") == "stream":
        return output.get("name") == "stderr"
    return _WIDGET_MIME in output.get("data", {})


def summary_lines(results: list[StudyResult]) -> list[str]:
    """The console summary ``make report`` prints: one line per study."""
    lines = []
    for r in results:
        headlines = read_manifest(r.run_dir).get("headlines", {}) if r.run_dir else {}
        heads = ", ".join(f"{k}={_fmt(v)}" for k, v in headlines.items())
        said = {str(v) for v in headlines.values()}  # a no-result headline is its own reason
        reason = "; ".join(part for part in r.reason.split("; ") if part not in said)
        if r.status == "skipped":
            reason = skip_reason(reason)
        tail = f"  [{reason}]" if reason else ""
        lines.append(f"{r.status:11s} {r.wall_s:6.1f}s  {r.params_file.name:32s} {heads}{tail}")
    return lines


def skip_hints(results: Sequence[StudyResult]) -> list[str]:
    """One closing line per kind of skip, with the one command (or variable) that lifts it
    (:func:`evalbench.skipped.skip_hints`)."""
    return hints_for(r.reason for r in results if r.status == "skipped")


TIMING_COLUMNS = ("kernel_start_s", "data_load_s", "compute_s", "export_s", "fixed_s")


def timing_lines(results: list[StudyResult]) -> list[str]:
    """Where each rendered study's time went (seconds; ``fixed`` = kernel start + export,
    what every study pays whatever it does), as ``make report`` prints it."""
    rows = []
    for r in results:
        rendered = r.status not in ("current", "busy")  # busy: another process's timing
        timing = read_manifest(r.run_dir).get("timing") if r.run_dir and rendered else None
        if timing:
            cells = "".join(_timing_cell(timing.get(c)) for c in TIMING_COLUMNS)
            rows.append(f"{r.params_file.name:32s}{cells}{r.wall_s:>10.2f}")
    if not rows:
        return []
    head = "".join(f"{c.removesuffix('_s'):>10s}" for c in (*TIMING_COLUMNS, "total_s"))
    return [f"{'timing (s)':32s}{head}", *rows]


def _timing_cell(seconds: object) -> str:
    """Seconds right-aligned, or a dash for a phase the study never reached."""
    if isinstance(seconds, int | float) and math.isfinite(seconds):
        return f"{seconds:>10.2f}"
    return f"{'—':>10s}"


def failure_result(params_file: Path, exc: Exception) -> StudyResult:
    """A params error (or an unwritable run folder) as a failed study (nothing was run)."""
    return StudyResult(params_file, "failed", None, 0.0, str(exc))
