"""The study registry: one line per study kind, and the interface every study exposes.

A params file names its kind in ``study:``; :data:`STUDY_KINDS` maps the kind to the module
(a benchmark package's ``study.py``) that defines ``STUDY``, a :class:`Study`. Everything
else (params validation, the notebook to execute, the records the contract test checks,
the index headlines) is read from that one object. Modules are imported on demand, so
loading one params file imports one benchmark.

Adding a study kind is one line here plus the package (see CONTRIBUTING.md, "Adding a
benchmark").
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

from evalbench.findings import Findings, honest
from evalbench.measured import Measured, honest_headlines, nothing_measured
from evalbench.params import ParamsError, StudyParams, read_params_data, validate_params
from evalbench.records import Record
from evalbench.runs import Run, Summary, folder_for_kernel, started_for
from evalbench.settings import get_settings

STUDY_KINDS: dict[str, str] = {
    "gaia": "evalbench.gaia.study",
    "bfcl": "evalbench.bfcl.study",
    "judge_public": "evalbench.judge_public.study",
    "judge_golden": "evalbench.judge_golden.study",
    "arena": "evalbench.arena.study",
    "arena_public": "evalbench.arena_public.study",
    "datagen": "evalbench.datagen.study",
    "hle": "evalbench.hle.study",
    "hle_grading": "evalbench.hle_grading.study",
    "compare": "evalbench.compare.study",
    "browsecomp": "evalbench.browsecomp.study",
    "browse_suite": "evalbench.browse_suite.study",
    "retry_loop": "evalbench.retry_loop.study",
    "sweep": "evalbench.sweeps.study",
}
"""Study kind -> module defining ``STUDY`` (the only registry)."""


class Study(NamedTuple):
    """What a study kind is: the same few names for every benchmark.

    Attributes:
        kind: the ``study:`` value of its params files.
        params: its params model (a :class:`~evalbench.params.StudyParams` subclass).
        run: ``run(run) -> result``: loads the data, asks the systems (resumable), scores
            and summarizes; the notebook shows the parts of ``result``.
        notebook: file name under ``notebooks/`` that renders it.
        records: ``records/<name>.jsonl`` -> the record type of each line it writes.
        headlines: ``headlines(result)`` -> two or three numbers for the index
            (label -> float or formatted string).
        counts: ``counts(result)`` -> item and record counts for the manifest.
        measured: ``measured(result)`` -> per system, the items its headline is measured
            over and why the others were not (:class:`~evalbench.measured.Measured`): a
            system with none scored has no headline number, a run with none at all is
            ``no_result``.
        notes: ``notes(result)`` -> short remarks shown on the index (optional).
        optional_records: names in ``records`` that a run may not write (e.g. live-system
            responses of a study that can also read published results only).
        dependencies: ``dependencies(params, base)`` -> files the results also depend on
            beyond the code, params and data files read (e.g. the runs a comparison reads,
            the params files it names relative to ``base``, its params file's folder), for
            :mod:`evalbench.freshness`.
        load: ``load(data, path)`` -> params, for a study whose params are more than its
            model validates (the sweep: the swept study's params and every cell's); raises
            :class:`~evalbench.params.ParamsError`.
        verdict: ``verdict(run_dir, params)`` -> (status, reason) of a run whose calls were
            all within ``max_error_rate``: how the study itself ended (a sweep with a
            failed cell is ``degraded``).
        findings: ``findings(result)`` -> what the study found, in its own words: the key
            result, caveats and risks its report opens with and its summary page carries
            (:class:`~evalbench.findings.Findings`; written in the benchmark's ``report.py``).
    """

    kind: str
    params: type[StudyParams]
    run: Callable[[Run[Any]], Any]
    notebook: str
    records: Mapping[str, type[Record]]
    headlines: Callable[[Any], dict[str, Any]]
    counts: Callable[[Any], dict[str, Any]]
    measured: Callable[[Any], list[Measured]]
    notes: Callable[[Any], list[str]] | None = None
    optional_records: frozenset[str] = frozenset()
    dependencies: Callable[[Any, Path], list[Path]] | None = None
    load: Callable[[dict[str, Any], Path, Sequence[str]], StudyParams] | None = None
    verdict: Callable[[Path, Any], tuple[str, str]] | None = None
    findings: Callable[[Any], Findings] | None = None


SWEEP = "sweep"
"""The study kind of a params file with a ``sweep:`` block (:mod:`evalbench.sweeps`)."""


class UnknownStudyKind(KeyError):
    """A ``study:`` value that is not a key of :data:`STUDY_KINDS`."""


def get_study(kind: str) -> Study:
    """The :class:`Study` of ``kind`` (its module imported on first use).

    Raises:
        UnknownStudyKind: ``kind`` is not registered.
        TypeError: the module's ``STUDY`` is not a :class:`Study` of that kind.
    """
    if kind not in STUDY_KINDS:
        raise UnknownStudyKind(kind)
    module = importlib.import_module(STUDY_KINDS[kind])
    study = getattr(module, "STUDY", None)
    if not isinstance(study, Study) or study.kind != kind:
        raise TypeError(f"{STUDY_KINDS[kind]}.STUDY is not the Study of kind {kind!r}")
    return study


def all_studies() -> Mapping[str, Study]:
    """Every registered study kind and its :class:`Study` (imports every benchmark)."""
    return {kind: get_study(kind) for kind in STUDY_KINDS}


def study_kind(data: Mapping[str, Any], path: Path) -> str:
    """The ``study:`` of a params mapping, checked against the registry.

    Raises:
        ParamsError: missing or unknown (the known kinds are listed).
    """
    kinds = ", ".join(STUDY_KINDS)
    kind = data.get("study")
    if kind is None:
        raise ParamsError(f"{path}: study: missing required field (one of {kinds})")
    if kind not in STUDY_KINDS:
        raise ParamsError(f"{path}: study: unknown study kind {kind!r} (expected one of {kinds})")
    return str(kind)


def load_params(path: Path | str, overrides: Sequence[str] = ()) -> StudyParams:
    """Read, override and validate a params file with its study kind's model.

    Args:
        path: the YAML file.
        overrides: ``key=value`` strings (dotted keys reach nested fields; values are YAML).

    Raises:
        ParamsError: one line naming the file, the field path and what was expected; or a
            file name that cannot name run folders (it starts with a dot, as ``...yaml``).
    """
    path = Path(path)
    if path.stem.startswith("."):  # "...yaml" would render into outputs/../<hash>
        raise ParamsError(
            f"{path}: its name without .yaml ({path.stem!r}) names its run folders under the "
            "outputs folder; rename the file (a name that does not start with a dot)"
        )
    data = read_params_data(path, overrides)
    kind = study_kind(data, path)
    if data.get("sweep") is not None:
        kind = SWEEP  # the sweep study validates the swept study's params and every cell
    elif "sweep" in data:
        del data["sweep"]  # `-p sweep=null`: the study itself (one cell's own report)
    study = get_study(kind)
    if study.load is not None:
        return study.load(data, path, overrides)
    return validate_params(study.params, data, path)


def notebook_for(params: StudyParams) -> str:
    """File name (under ``notebooks/``) of the notebook that renders this study."""
    return get_study(params.study).notebook


def summarize(study: Study, result: Any) -> Summary:
    """A study result's headlines, counts, notes, what was measured and what it found, as
    :meth:`Run.finish` records them: when no system scored anything, one headline saying so
    and why (:func:`~evalbench.measured.honest_headlines`) and findings that say "no result"
    (:func:`~evalbench.findings.honest`), never a number."""
    notes = study.notes(result) if study.notes is not None else []
    measured = list(study.measured(result))
    headlines = honest_headlines(study.headlines(result), measured)
    found = None
    if study.findings is not None and not nothing_measured(measured):
        found = study.findings(result)
    found = honest(found, measured) if study.findings is not None else None
    return Summary(headlines, study.counts(result), list(notes), measured, found)


def open_run(params_file: Path | str, overrides: Sequence[str] = ()) -> Run[StudyParams]:
    """Load params (relative paths resolved from the project root), open and start the run.

    In a notebook run by hand (JupyterLab, a script: no ``evalbench`` command started it), a
    run whose folder is published works in its lab folder instead, leaving the published
    run as it is (:func:`evalbench.runs.folder_for_kernel`); one line says where it works
    and how to publish it.
    """
    path = Path(params_file)
    if not path.is_absolute():
        path = get_settings().project_root / path
    params = load_params(path, overrides)
    run = Run(params, path, overrides, summarize=partial(summarize, get_study(params.study)))
    published = run.dir
    run.dir = folder_for_kernel(published)
    run.start()
    if not started_for(published):
        print(_by_hand(published, run.dir), file=sys.stderr, flush=True)  # stdout is the caller's
    return run


def _by_hand(published: Path, folder: Path) -> str:
    """Where a notebook run by hand works, and how its run is published."""
    if folder == published:
        return (f"evalbench: this session writes {folder} (records, no report); publish it "
                f"with: evalbench publish {folder}")  # fmt: skip
    return (f"evalbench: {published} is published and stays as it is (`evalbench publish` it "
            f"to render it again); this session works in {folder}")  # fmt: skip
