"""Run folders, manifests and resume.

A run folder is ``outputs/<params stem>/<params hash>/``: a pure function of the params
file name and its fully resolved content, so rerunning the same params (from the CLI or
from JupyterLab) reopens the same folder and resumes: record stores skip keys already
written and model calls hit the response cache. A published run folder is written only by
``evalbench run``/``report``/``publish``: a notebook run by hand works in a copy of it
(:func:`folder_for_kernel`).

``manifest.json`` says what the run was (params and their hash, code revision, package
versions, data files with sha256, systems and judges, seeds), what it did (counts, usage
and cost, headline numbers) and how it ended (status, times, error or skip reason).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import hashlib
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from functools import cached_property
from importlib import metadata
from pathlib import Path
from typing import Any, Generic, NamedTuple, NoReturn, TypeVar

import numpy as np
import pandas as pd
from filelock import FileLock, Timeout

from evalbench import sources
from evalbench.executors import requested_manifest
from evalbench.findings import Findings
from evalbench.findings import no_result as no_result_findings
from evalbench.manifest_shape import manifest_shape_error
from evalbench.measured import TRUNCATED, Measured, NoResult, no_result_reason, no_result_text
from evalbench.models import (
    ChatResponse,
    Job,
    ModelClient,
    ModelSpec,
    ResponseCache,
    UsageLedger,
    generate,
    local,
)
from evalbench.models.usage import token_cost
from evalbench.params import StudyParams, dump_yaml, params_hash
from evalbench.records import (
    RecordStore,
    ResponseRecord,
    parse_json,
    read_regular_text,
    to_json,
    write_atomic,
    write_jsonl,
)
from evalbench.settings import get_settings

KEY_PACKAGES = (
    "evalbench", "numpy", "scipy", "pandas", "pydantic", "openai", "papermill", "nbconvert",
    "matplotlib", "seaborn",
)  # fmt: skip


def run_dir_for(params_file: Path | str, params: StudyParams, outputs: Path | None = None) -> Path:
    """``<outputs>/<params file stem>/<params hash>``."""
    return study_dir_for(params_file, outputs) / params_hash(params)


def study_dir_for(params_file: Path | str, outputs: Path | None = None) -> Path:
    """``<outputs>/<params file stem>``: the folder of every run of the params file."""
    return (outputs or get_settings().outputs_dir) / Path(params_file).stem


def now_iso() -> str:
    """The current UTC time, ISO-8601 with seconds."""
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def read_manifest(run_dir: Path) -> dict[str, Any]:
    """The run's manifest (empty when there is none yet).

    Raises:
        ValueError: not JSON, nested too deeply to read (the message names file:line), or
            JSON that is not an object.
    """
    path = run_dir / "manifest.json"
    if not path.exists():
        return {}
    try:
        manifest = parse_json(read_regular_text(path))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}:{exc.lineno}: not JSON ({exc.msg})") from None
    if not isinstance(manifest, dict):
        raise ValueError(f"{path}: not a JSON object")
    wrong = manifest_shape_error(manifest)
    if wrong:
        raise ValueError(f"{path}: {wrong}")
    return manifest


def set_aside_unreadable_manifest(run_dir: Path) -> Path | None:
    """Rename a manifest that cannot be read (:func:`read_manifest`) to
    ``manifest.unreadable-<UTC time>.json`` and say so on stderr, so the run about to start
    in ``run_dir`` (holding its lock) writes a new one; ``None`` when it reads."""
    path = run_dir / "manifest.json"
    try:
        read_manifest(run_dir)
        return None
    except ValueError as exc:
        why = str(exc).removeprefix(str(path)).lstrip(":").strip()
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    aside = path.replace(run_dir / f"manifest.unreadable-{stamp}.json")
    print(f"evalbench: {path} could not be read ({why}); moved to {aside.name}; this run "
          "starts a new one", file=sys.stderr, flush=True)  # fmt: skip
    return aside


def update_manifest(run_dir: Path, **fields: Any) -> dict[str, Any]:
    """Merge ``fields`` into ``manifest.json`` (atomic replace, strict JSON) and return it.

    Raises:
        OSError: it could not be written (a full disk): the previous manifest stays.
    """
    manifest = {**read_manifest(run_dir), **fields}
    write_atomic(run_dir / "manifest.json", to_json(manifest, indent=2, default=str) + "\n")
    return manifest


LOCK_ENV = "EVALBENCH_RUN_LOCK"
"""Set by ``evalbench run``/``report`` for the notebook kernel it starts: the run folder whose
lock the parent process already holds on the kernel's behalf."""
_HELD: dict[Path, FileLock] = {}


class RunInUse(RuntimeError):
    """Another process (a second ``evalbench run``, ``make report`` or a notebook kernel) is
    running the study in this run folder."""


def lock_run(run_dir: Path) -> None:
    """Hold the run folder's lock until :func:`release_run` or the end of this process.

    One writer per run folder: a second run of the same study (same params) at the same time
    would pay every call twice. Re-entrant within a process; a kernel started by
    ``evalbench run`` inherits its parent's lock (:data:`LOCK_ENV`).

    Raises:
        RunInUse: another process holds it (the message names it and what to do).
    """
    key = run_dir.resolve()
    if key in _HELD:
        return
    if os.environ.get(LOCK_ENV) == str(key):  # the kernel dies with its parent: it carries
        return  # the parent's mark (evalbench.processes)
    run_dir.mkdir(parents=True, exist_ok=True)
    lock = FileLock(key / ".lock", timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise RunInUse(
            f"{run_dir} is in use by {_owner(key)}; wait for it to finish (or close the "
            "notebook kernel that has it open), then run again"
        ) from None
    _HELD[key] = lock
    write_atomic(key / ".lock.owner", to_json({"pid": os.getpid(), "since": now_iso()}))
    # temp files of a writer killed mid-write (records.write_atomic's): with the lock held,
    # no writer of this folder is alive
    for stale in [*key.glob(".*.tmp"), *key.glob("records/.*.tmp")]:
        stale.unlink(missing_ok=True)


def in_its_folder(run_dir: Path) -> bool:
    """Whether ``run_dir`` really is in its study's folder (not a link out of it): readers
    list only such runs, and never rewrite a manifest at a link's target."""
    return run_dir.resolve().parent == run_dir.parent.resolve()


def release_run(run_dir: Path) -> None:
    """Let go of the run folder's lock (if this process holds it)."""
    lock = _HELD.pop(run_dir.resolve(), None)
    if lock is not None:
        lock.release()


FAILED_NOTEBOOK = "notebook.failed.ipynb"
"""A failed attempt's executed notebook, in its run folder."""
LAB_FOLDER = "lab"
"""Under the outputs folder: ``lab/<study>/<run id>/``, where a notebook run by hand works
when its run folder is published (:func:`folder_for_kernel`)."""


def started_for(run_dir: Path) -> bool:
    """Whether this process is the notebook kernel ``evalbench run``/``report``/``publish``
    started to render ``run_dir`` (it was handed the folder's lock: :data:`LOCK_ENV`), not
    one a user started (JupyterLab, a script)."""
    return os.environ.get(LOCK_ENV) == str(run_dir.resolve())


def has_published_report(run_dir: Path) -> bool:
    """Whether the folder holds a published report (its latest attempt's or an earlier one's)."""
    if (run_dir / "report.html").exists():
        return True
    try:
        return bool(read_manifest(run_dir).get("published"))
    except (OSError, ValueError):
        return False


def lab_folder(run_dir: Path) -> Path:
    """``<outputs>/lab/<study>/<run id>`` of the run folder ``<outputs>/<study>/<run id>``."""
    return run_dir.parent.parent / LAB_FOLDER / run_dir.parent.name / run_dir.name


def folder_for_kernel(run_dir: Path) -> Path:
    """The folder a notebook's run writes: its run folder, unless that holds a published
    report and this kernel was not started by ``evalbench`` to render it (a notebook run in
    JupyterLab, a script). Then :func:`lab_folder`, locked, its records copied from the run
    folder's on first use (a rerun resumes as it would in place): the published folder's
    manifest, records and report stay exactly as rendered, so ``make report`` still finds it
    up to date. Only ``evalbench run``/``report``/``publish`` write a published run.

    Raises:
        RunInUse: another kernel works in the lab folder.
    """
    if started_for(run_dir) or not has_published_report(run_dir):
        return run_dir
    lab = lab_folder(run_dir)
    lock_run(lab)
    if not (lab / "records").exists():
        _copy_records(run_dir / "records", lab / "records")
    return lab


def _copy_records(source: Path, target: Path) -> None:
    """Copy a run's record files, whole or not at all: a copy killed half-way is redone."""
    staging = target.with_name(".records.copy")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for path in sorted(source.glob("*.jsonl")):  # not a writer's temp files (.*.tmp)
        if not path.is_symlink():  # what a link names is no record of this run (an archive's)
            shutil.copyfile(path, staging / path.name)
    staging.replace(target)


def run_is_active(run_dir: Path) -> bool:
    """Whether some process (this one included) holds the run folder's lock right now."""
    key = run_dir.resolve()
    if key in _HELD:
        return True
    if not (key / ".lock").exists():
        return False
    probe = FileLock(key / ".lock", timeout=0)
    try:
        probe.acquire()
    except Timeout:
        return True
    probe.release()
    return False


PUBLISHED_STATUSES = ("ok", "degraded", "no_result")
"""How a run ended whose report is published: ``ok``; ``degraded`` (more failed calls than
``max_error_rate``, with ``allow_degraded``); ``no_result`` (no system scored any item: its
report says why, and its headline is "no result", never a number)."""
UNFINISHED = ("running", "executed")
"""Statuses a run's own process writes before it ends (``executed``: the notebook ran to the
end, not yet exported and published)."""


def current_manifest(run_dir: Path) -> dict[str, Any]:
    """The run's manifest as every reader shows it (index, history, compare, scorecard).

    A manifest that cannot be read is a ``failed`` run saying why. A run still marked
    ``running`` or ``executed`` whose folder no process holds any more (killed by
    ``kill -9``, a crash, a reboot; or a notebook run by hand) is ``interrupted``, and
    ``manifest.json`` is rewritten to say so: the first reader settles it for all.
    """
    try:
        manifest = read_manifest(run_dir)
    except (OSError, ValueError) as exc:
        return {"status": "failed", "reason": f"unreadable manifest: {exc}"}
    if not isinstance(manifest, dict):
        return {"status": "failed", "reason": f"unreadable manifest {run_dir}: not an object"}
    if manifest.get("status") not in UNFINISHED or run_is_active(run_dir):
        return manifest
    return _settle(run_dir, manifest)


def _settle(run_dir: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    """Rewrite an abandoned run's manifest ``interrupted``, holding the folder's lock: a run
    that starts meanwhile (it takes the lock first) is never overwritten. A run or study
    folder that is a symbolic link (an archive linked into outputs) is shown so, unwritten:
    a reader never writes where a link leads."""
    if run_dir.is_symlink() or run_dir.parent.is_symlink():
        return {**manifest, **_interrupted(manifest)}
    lock = FileLock(run_dir.resolve() / ".lock", timeout=0)
    try:
        lock.acquire()
    except Timeout:
        return read_manifest(run_dir)  # a run has just started: it says so itself
    except OSError:  # a folder this process may not lock (read-only): say it, unwritten
        return {**manifest, **_interrupted(manifest)}
    try:
        manifest = read_manifest(run_dir)
        if manifest.get("status") not in UNFINISHED:
            return manifest
        try:
            return update_manifest(run_dir, **_interrupted(manifest))
        except OSError:  # read-only or full: the readers still agree, the file catches up later
            return {**manifest, **_interrupted(manifest)}
    finally:
        lock.release()


def _interrupted(manifest: dict[str, Any]) -> dict[str, Any]:
    if manifest.get("status") == "executed":
        why = (
            "its notebook ran to the end but was never published (run in JupyterLab or by "
            "hand, or its `evalbench run` was stopped); `evalbench publish` this run folder "
            "to publish it"
        )
    else:
        why = "its process is gone (killed?); rerun the same command to resume"
    return {"status": "interrupted", "reason": why, "interrupted_seen_at": now_iso()}


def _owner(run_dir: Path) -> str:
    try:
        owner = json.loads((run_dir / ".lock.owner").read_text())
        return f"process {owner['pid']} (since {owner['since']})"
    except (OSError, ValueError, KeyError):
        return "another process"


def git_revision(root: Path) -> dict[str, Any]:
    """Commit and dirty flag of the checkout at ``root`` (``None`` outside git). Read only:
    ``--no-optional-locks`` keeps ``git status`` from refreshing the index under
    ``.git/index.lock``, which a git killed meanwhile (with evalbench, or at the timeout)
    would leave behind, blocking the user's next git command."""

    def git(*args: str) -> str:
        out = subprocess.run(
            ["git", "--no-optional-locks", "-C", str(root), *args],
            capture_output=True, text=True, timeout=10, check=True,
        )  # fmt: skip
        return out.stdout.strip()

    try:
        return {"commit": git("rev-parse", "HEAD"), "dirty": bool(git("status", "--porcelain"))}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}


@functools.cache
def _package_versions() -> tuple[tuple[str, str], ...]:
    """The installed versions of :data:`KEY_PACKAGES`, read once per process: those this
    process runs are the ones it imported first (parsing every package's METADATA again cost
    ~13 ms per run)."""
    versions = []
    for name in KEY_PACKAGES:
        with contextlib.suppress(metadata.PackageNotFoundError):
            versions.append((name, metadata.version(name)))
    return tuple(versions)


def environment_info() -> dict[str, Any]:
    """evalbench version, git revision, Python and key package versions."""
    versions = dict(_package_versions())
    return {
        "evalbench_version": versions.get("evalbench"),
        "git": git_revision(get_settings().project_root),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": versions,
    }


def model_identity(spec: ModelSpec) -> dict[str, Any]:
    """What the manifest records of a system or judge: its settings (no secret), and for a
    local model what it is served from (:func:`evalbench.models.local.describe`: engine and
    version, model file with its sha256, context size, chat format, server command line).

    Raises:
        evalbench.models.local.LocalModelUnavailable: a local model that cannot run here.
    """
    identity = spec.identity()
    if spec.local is not None:
        identity["served"] = local.describe(spec)
    return identity


P = TypeVar("P", bound=StudyParams, covariant=True)


class Summary(NamedTuple):
    """What :meth:`Run.finish` records of a study's result (its ``Study`` computes it)."""

    headlines: dict[str, Any]
    counts: dict[str, Any]
    notes: list[str]
    measured: list[Measured] | None = None
    """Per system, the items its headline is measured over (:mod:`evalbench.measured`);
    ``None`` for headlines given by hand."""
    findings: Findings | None = None
    """What the study found, in its own words (:mod:`evalbench.findings`)."""


class Run(Generic[P]):
    """One study run: its params (a ``Run[GaiaParams]`` has ``GaiaParams``), folder, record
    stores, model clients and usage.

    Open it with :func:`evalbench.studies.open_run` at the top of a notebook and call
    :meth:`finish` at the end.
    """

    def __init__(
        self,
        params: P,
        params_file: Path,
        overrides: Sequence[str],
        summarize: Callable[[Any], Summary] | None = None,
    ):
        self.params = params
        self.summarize = summarize
        """``result -> Summary``: the study's headlines, counts and notes (set by open_run)."""
        self.params_file = params_file
        self.overrides = list(overrides)
        self.dir = run_dir_for(params_file, params)
        self.ledger = UsageLedger()
        self._stores: dict[str, RecordStore] = {}
        self._asked: dict[str, ModelSpec] = {}
        self._started = time.monotonic()  # reset by start(): local servers used since
        self.phases: dict[str, float] = {}
        """Seconds spent per timed phase (:meth:`timed`), kept in the manifest."""
        self.executor: dict[str, Any] = {}
        """Where agent tasks ran (the manifest's ``executor``): asked for (``requested``,
        ``address``), used (``name``, the cluster's address without credentials) and, per
        system run remotely, tasks, retries and the nodes that ran them."""

    releases_on_finish = True
    """Whether :meth:`finish` lets go of the folder's lock (a sweep cell keeps it until its
    worker has written the cell's verdict: :class:`evalbench.sweeps.study.CellRun`)."""

    @property
    def run_id(self) -> str:
        """The params hash naming the run folder."""
        return self.dir.name

    @property
    def simulated(self) -> bool:
        """Whether any system or judge of this run is simulated."""
        return self.params.simulated

    @property
    def simulated_names(self) -> frozenset[str]:
        """Names of the simulated systems and judges (label each one on its own)."""
        return frozenset(s.name for s in self.params.model_specs() if s.simulated)

    @cached_property
    def cache(self) -> ResponseCache:
        """The shared response cache (``<EVALBENCH_CACHE>/responses.sqlite``)."""
        return ResponseCache(get_settings().cache_dir / "responses.sqlite")

    def store(self, name: str, key_fields: Sequence[str]) -> RecordStore:
        """The append-only record file ``records/<name>.jsonl`` (resumes if it exists)."""
        if name not in self._stores:
            self._stores[name] = RecordStore(self.dir / "records" / f"{name}.jsonl", key_fields)
        return self._stores[name]

    def client(self, spec: ModelSpec, **kwargs: Any) -> ModelClient:
        """A model client using this run's cache mode, ledger and seed (batch mode saves its
        batch ids in ``<run folder>/batches/``)."""
        return ModelClient(
            spec,
            cache=None if spec.simulated else self.cache,  # sim-only studies never open it
            cache_mode=self.params.cache,
            ledger=self.ledger,
            seed=self.params.seed,
            batch_dir=self.dir / "batches",
            **kwargs,
        )

    def ask(
        self,
        spec: ModelSpec,
        jobs: Sequence[Job],
        *,
        store: str = "responses",
        desc: str | None = None,
        progress: bool = True,
        postfix: Callable[[Job, ChatResponse], dict[str, Any]] | None = None,
    ) -> dict[str, ResponseRecord]:
        """Ask ``spec`` every job not answered yet; checkpoint each answer as it arrives.

        Answers live in ``records/<store>.jsonl`` keyed by (system, job key): a rerun skips
        what is there, so an interrupted study resumes without losing or duplicating
        anything. Transient failures (timeouts, 429, 5xx...) are asked again on a rerun;
        permanent ones stay error records, so a finished study reruns with zero requests.
        A stored answer to a request that has changed since (edited data, prompt, model or
        settings: its request key differs) is stale and asked again.

        Returns:
            job key -> its :class:`ResponseRecord`, for every job, in job order.
        """
        records = self.store(store, ("system", "key"))
        self._asked[spec.name] = spec
        client = self.client(spec)
        wanted = {job.key: client.key_for(job.request, job.sim) for job in jobs}
        if len(wanted) != len(jobs):
            raise ValueError(f"{spec.name}: job keys are not unique")

        def redo(key: str) -> bool:
            row = records.get((spec.name, key))
            return row is not None and (
                row["error"] is not None or row.get("request_key") != wanted[key]
            )

        # by key, not by a scan: a study asking 10,000 systems must not read every record
        # once per system
        records.drop_keys((spec.name, key) for key in wanted if redo(key))
        todo = [job for job in jobs if (spec.name, job.key) not in records]
        if todo:
            generate(
                client,
                todo,
                on_result=lambda job, resp: records.append(response_record(spec, job, resp)),
                progress=progress,
                desc=desc or spec.name,
                postfix=postfix,
            )
        rows = {key: records.get((spec.name, key)) for key in wanted}
        return {key: ResponseRecord.model_validate(r) for key, r in rows.items() if r is not None}

    @contextlib.contextmanager
    def timed(self, phase: str) -> Iterator[None]:
        """Time a phase of the study (``load``: reading its data), for the timing table."""
        started = time.perf_counter()
        try:
            yield
        finally:
            self.phases[phase] = self.phases.get(phase, 0.0) + time.perf_counter() - started

    def write_records(self, name: str, rows: Any) -> Path:
        """Write derived records (recomputed each run) to ``records/<name>.jsonl`` atomically."""
        if hasattr(rows, "to_dict"):
            rows = rows.to_dict(orient="records")
        return write_jsonl(self.dir / "records" / f"{name}.jsonl", rows)

    def rng(self, *labels: str | int) -> np.random.Generator:
        """A generator seeded by the study seed and ``labels`` (independent streams per use)."""
        words = [self.params.seed & 0xFFFFFFFF]
        for label in labels:
            digest = hashlib.sha256(str(label).encode()).digest()
            words.append(int.from_bytes(digest[:4], "little"))
        return np.random.default_rng(np.random.SeedSequence(words))

    def start(self) -> None:
        """Lock the folder and write what the run is (status ``running``).

        Raises:
            RunInUse: another process is running this study in this folder.
        """
        lock_run(self.dir)
        self._started = time.monotonic()
        self.executor = requested_manifest()
        resolved = self.params.model_dump(mode="json")
        write_atomic(self.dir / "params.yaml", dump_yaml(resolved))
        update_manifest(
            self.dir,
            study=self.params_file.stem,
            kind=self.params.study,
            title=self.params.title,
            run_id=self.run_id,
            params_file=str(self.params_file),
            overrides=self.overrides,
            params=resolved,
            params_hash=params_hash(self.params),
            simulated=self.simulated,
            simulated_names=sorted(self.simulated_names),
            models=[model_identity(spec) for spec in self.params.model_specs()],
            seeds={"study": self.params.seed},
            environment=environment_info(),
            executor=self.executor,
            status="running",
            started_at=now_iso(),
            kernel_pid=os.getpid(),
        )

    def finish(
        self,
        result: Any = None,
        *,
        headlines: dict[str, Any] | None = None,
        counts: dict[str, Any] | None = None,
        notes: Sequence[str] = (),
        measured: Sequence[Measured] | None = None,
        findings: Findings | None = None,
    ) -> None:
        """Record what the run did (status ``executed``; the CLI marks ``ok`` after export).

        Notebooks pass the study's result: the headlines, counts and notes come from the
        study's own ``headlines``/``counts``/``notes`` functions (:attr:`summarize`).

        Args:
            result: what the study's ``run(run)`` returned.
            headlines: (without ``result``) two or three numbers for the index (label ->
                value, already formatted or a float).
            counts: (without ``result``) item/record counts (e.g. items, errors, unscored).
            notes: (without ``result``) short remarks shown on the index.
            measured: (without ``result``) what each system's headline is measured over.
            findings: (without ``result``) what the study found (:mod:`evalbench.findings`).
        """
        if result is not None:
            if self.summarize is None:
                raise ValueError("finish(result) needs a run opened by evalbench.studies.open_run")
            headlines, counts, notes, measured, findings = self.summarize(result)
        headlines, counts = headlines or {}, counts or {}
        cache_note = self._cache_notes()
        usage = self.ledger.summary()
        totals = self.recorded_usage()
        update_manifest(
            self.dir,
            headlines=headlines,
            counts=counts,
            notes=[*notes, *cache_note],
            cache_failed=cache_note[0] if cache_note else None,
            measured=None if measured is None else [m.as_row() for m in measured],
            no_result=None if measured is None else (no_result_reason(measured) or None),
            findings=None if findings is None else findings.as_row(),
            usage=totals.to_dict(orient="records"),
            usage_this_session=usage,
            cost_usd=round(float(totals["cost_usd"].sum()), 6) if len(totals) else 0.0,
            errors_by_system=dict(zip(totals["system"], totals["errors"], strict=True)),
            data_files=sources.reads(),
            records={name: len(store) for name, store in self._stores.items()},
            phases={k: round(v, 3) for k, v in self.phases.items()},
            executor=self.executor,
            local_servers=local.used_since(self._started),
            executed_at=now_iso(),
            status="executed",
        )
        if self.releases_on_finish:
            release_run(self.dir)  # a notebook run by hand lets `make report` in from here on

    def _cache_notes(self) -> list[str]:
        """A note when the response cache failed during the run (a full disk): the study
        went on without it, and only a kernel's stderr said so."""
        cache = self.__dict__.get("cache")  # never opened here: sim-only studies
        if cache is None or not cache.broken:
            return []
        return [
            f"the response cache {cache.path} failed ({cache.broken}): this run's answers are "
            "in its records but not in the cache, so a replay of it would ask again"
        ]

    def no_result(self, measured: Sequence[Measured]) -> NoReturn:
        """End a study that measured nothing and cannot go on to its analysis (no battle to
        rate): the manifest says so as :meth:`finish` records a result (headline "no
        result: ..." with the counts and reasons), then :class:`NoResult` is raised, which
        ``evalbench run`` turns into the status ``no_result`` and a page saying why.

        Raises:
            NoResult: always (its message is the headline).
        """
        text = no_result_text(list(measured))
        total = sum(m.total for m in measured)
        self.finish(
            headlines={"result": text},
            counts={"items": total, "scored": 0},
            measured=measured,
            findings=no_result_findings(text),
        )
        raise NoResult(text)

    def recorded_this_session(self, store: str | None = None) -> Counter[str]:
        """Records appended by this session (all stores, or ``store``'s) by system: what a
        rerun actually did, beside what the run folder holds from earlier sessions."""
        stores = [self._stores[store]] if store in self._stores else []
        if store is None:
            stores = list(self._stores.values())
        return sum((s.appended for s in stores), Counter())

    def recorded_usage(self) -> pd.DataFrame:
        """Usage of the whole study from its response records (every session, resumes too).

        One row per system or judge: calls, errors, calls answered from the cache, prompt
        and completion tokens of all answers, and the cost (USD, at the system's prices) of
        the calls actually paid (cache hits cost nothing). ``run.ledger`` counts only
        this session.
        """
        rows = [r for store in self._stores.values() for r in store.rows() if _is_call(r)]
        specs = {s.name: s for s in self.params.model_specs()} | self._asked
        return usage_from_rows(rows, specs)


USAGE_COLUMNS = ["system", "calls", "errors", "error_reasons", "outputs", "truncated",
                 "truncated_at_n_ctx", "cached", "prompt_tokens", "completion_tokens",
                 "cost_usd"]  # fmt: skip


def _is_call(row: dict[str, Any]) -> bool:
    return {"system", "request_key", "prompt_tokens"} <= set(row)


def usage_from_rows(rows: Sequence[dict[str, Any]], specs: dict[str, ModelSpec]) -> pd.DataFrame:
    """Per system: calls, errors (by reason), model outputs (``outputs``: one per call, an
    agent task's model steps), those cut at ``max_tokens`` (``truncated``: ``finish_reason``
    ``length``; an agent task's in ``truncated_steps``; ``truncated_at_n_ctx``: a local
    model's whose prompt and answer filled its ``n_ctx``), cache hits, tokens and the cost of
    paid calls.

    Args:
        rows: response records (one per call, de-duplicated by key).
        specs: the systems' specs by name (for their prices; unknown names cost 0).
    """
    # plain Python (a pandas groupby-agg took ~10 ms a call: every finish, every sweep cell)
    counts: dict[str, Counter[str]] = {}
    errors: dict[str, list[str]] = {}
    costs: dict[str, list[float]] = {}
    for row in rows:
        system = row.get("system")
        if system is None:
            continue
        prompt, completion = row.get("prompt_tokens") or 0, row.get("completion_tokens") or 0
        cached = bool(row.get("cached"))
        cost = row.get("cost_usd")  # an agent task's own (its calls' prices, or reported)
        if cost is None:
            cost = 0.0 if cached else _cost(specs.get(system), prompt, completion)
        truncated = (row.get("finish_reason") == TRUNCATED) + (row.get("truncated_steps") or 0)
        agent = row.get("truncated_steps") is not None  # a task: its model steps are outputs
        outputs = max(0, (row.get("steps") or 0) - (row.get("tool_calls") or 0)) if agent else 1
        local = getattr(specs.get(system), "local", None)  # a cut where n_ctx ran out
        at_n_ctx = bool(truncated and not agent and local and prompt + completion >= local.n_ctx)
        counts.setdefault(system, Counter()).update(calls=1, outputs=outputs, cached=cached,
            truncated=truncated, at_n_ctx=at_n_ctx, prompt=prompt,
            completion=completion)  # fmt: skip
        errors.setdefault(system, []).extend([row["error"]] if row.get("error") is not None else [])
        costs.setdefault(system, []).append(float(cost))
    return pd.DataFrame(
        [(s, c["calls"], len(errors[s]), error_reasons(pd.Series(errors[s], dtype=object)),
          c["outputs"], c["truncated"], c["at_n_ctx"], c["cached"], int(c["prompt"]),
          int(c["completion"]), math.fsum(costs[s]))  # exactly rounded: the same sum in any order
         for s, c in sorted(counts.items())],
        columns=USAGE_COLUMNS,
    )  # fmt: skip


def recorded_calls(run_dir: Path, specs: dict[str, ModelSpec] | None = None) -> pd.DataFrame:
    """:func:`usage_from_rows` over every response-record file of a run folder (read from
    disk, so it also works for a run whose notebook failed before ``run.finish``)."""
    rows: list[dict[str, Any]] = []
    for path in sorted((run_dir / "records").glob("*.jsonl")):
        with open(path, encoding="utf-8", errors="replace") as fh:  # torn by a kill: no call
            first = fh.readline()
        try:
            if not _is_call(json.loads(first)):
                continue
        except (ValueError, TypeError):
            continue
        rows += [r for r in RecordStore(path, ("system", "key")).rows() if _is_call(r)]
    return usage_from_rows(rows, specs or {})


def error_reasons(errors: pd.Series) -> dict[str, int]:
    """Failed calls by reason (the text before the first colon: ``http_401``, ``timeout``)."""
    reasons = [str(e).split(":", 1)[0] for e in errors.dropna()]
    return {r: reasons.count(r) for r in sorted(set(reasons))}


def _cost(spec: ModelSpec | None, prompt: float, completion: float) -> float:
    return token_cost(spec, prompt, completion)  # batch mode: at the batch price


def response_record(spec: ModelSpec, job: Job, response: ChatResponse) -> ResponseRecord:
    """The record of one finished call."""
    return ResponseRecord(
        system=spec.name,
        key=job.key,
        request_key=response.cache_key,
        text=response.text,
        tool_calls=[c.model_dump(exclude={"id"}) for c in response.tool_calls],
        finish_reason=response.finish_reason,
        error=response.error,
        prompt_tokens=response.usage.prompt_tokens,
        completion_tokens=response.usage.completion_tokens,
        latency_s=round(response.latency_s, 6),
        cached=response.cached,
        simulated=response.simulated,
    )
