"""lm-evaluation-harness outputs (``results_*.json`` + ``samples_<task>_*.jsonl``) read into
per-item outcomes, with no dependency on lm_eval (plain JSON).

Layout and fields as lm-eval 0.4.13 writes them (EleutherAI/lm-evaluation-harness,
``lm_eval/loggers/evaluation_tracker.py`` ``save_results_aggregated`` /
``save_results_samples``, ``lm_eval/evaluator.py``, ``lm_eval/result_schema.py``; stored copy
at commit da2119697bd3b16e707f71d0886aed2cf5b0cd40): ``<output_path>/<model>/results_<date
id>.json`` and ``samples_<task>_<date id>.jsonl`` with ``date id`` =
``datetime.now().isoformat()`` with ``:`` replaced by ``-``. One sample line per document
and filter: ``doc_id``, ``doc``, ``target``, ``filter``, ``metrics`` (the names of the
per-sample metric keys) and one top-level key per metric.

- An item is ``<task>/<doc_id>``; the system is the results file's ``model_name`` (else its
  ``config.model``, else the folder name); the benchmark is ``lm_eval:<tasks>``.
- A metric is its name, or ``<metric>,<filter>`` for a filter other than ``none`` (the
  results file's own key form).
- A metric whose per-sample value is a list (BLEU, chrF, TER, perplexities: lm-eval stores
  the pieces — ``[reference, prediction]`` or ``[loglikelihood, words]`` — and aggregates
  over the corpus) has no per-item outcome and is left out, with a note. Any other value
  that is not a finite number (NaN, ±Infinity, an integer past a float's range, a string,
  null) is refused, naming file:line and metric: lm-eval has no "unscored" value, and a mean
  over it would be NaN or fail.
- Direction from ``higher_is_better`` of the results file (default: higher is better).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from evalbench.records import parse_json

from .outcomes import (
    BINARY,
    SCORE,
    OutcomeError,
    RunOutcomes,
    as_float,
    check_unique,
    iter_lines,
    outcome_frame,
    shown,
)


def date_id(path: Path) -> str:
    """The run's date id in an output file name (lm-eval's ``get_file_datetime``)."""
    stem = path.name.removesuffix(".jsonl").removesuffix(".json")
    return stem[stem.rfind("_") + 1 :]


def task_of(path: Path) -> str:
    """The task of ``samples_<task>_<date id>.jsonl`` (a task name may contain ``_``)."""
    stem = path.name.removesuffix(".jsonl")
    return stem.removeprefix("samples_")[: -(len(date_id(path)) + 1)]


def locate(path: Path) -> tuple[Path | None, list[Path]]:
    """The results file and sample files of one lm-eval run.

    ``path`` is a results file, a samples file, or a folder (its most recent run: the
    latest date id; several model folders are an error).

    Raises:
        OutcomeError: no samples (the run was made without ``--log_samples``) or an
            ambiguous folder.
    """
    if path.is_dir():
        results = sorted(path.glob("**/results_*.json"))
        samples = sorted(path.glob("**/samples_*.jsonl"))
        folders = {p.parent for p in [*results, *samples]}
        if len(folders) > 1:
            names = ", ".join(sorted(str(f) for f in folders))
            raise OutcomeError(
                f"{path}: lm-eval outputs of several models ({names}); give one folder or file"
            )
        latest = max((date_id(p) for p in [*results, *samples]), default=None)
        result = next((p for p in results if date_id(p) == latest), None)
        files = [p for p in samples if date_id(p) == latest]
    elif path.name.startswith("results_"):
        result = path
        files = sorted(path.parent.glob(f"samples_*_{date_id(path)}.jsonl"))
    else:
        result = next(iter(sorted(path.parent.glob(f"results_{date_id(path)}.json"))), None)
        files = [path]
    if not files:
        raise OutcomeError(
            f"{path}: no samples_<task>_{'<date>'}.jsonl beside it: per-item "
            "outcomes need lm_eval run with --log_samples"
        )
    return result, files


def read_lm_eval(path: Path | str) -> RunOutcomes:
    """lm-eval outputs as per-item outcomes (see the module docstring).

    Raises:
        OutcomeError: missing samples, a malformed line (file:line: field), or no numeric
            per-sample metric at all.
    """
    path = Path(path)
    result_file, sample_files = locate(path)
    results = _read_results(result_file) if result_file else {}
    system = str(
        results.get("model_name")
        or (results.get("config") or {}).get("model")
        or sample_files[0].parent.name
    )
    higher = results.get("higher_is_better") or {}
    rows: list[dict[str, Any]] = []
    skipped: set[str] = set()
    for file in sample_files:
        task = task_of(file)
        for number, line in iter_lines(file):
            rows += _sample_rows(
                line, (file, number), task, system, higher.get(task) or {}, skipped
            )
    if not rows:
        raise OutcomeError(
            f"{path}: no numeric per-sample metric in {len(sample_files)} "
            f"samples file(s) (left out: {', '.join(sorted(skipped))})"
        )
    tasks = sorted({task_of(f) for f in sample_files})
    slices = ("task",) if len(tasks) > 1 else ()
    frame = _with_kinds(pd.DataFrame(rows), slices)
    check_unique(frame, str(path))
    notes = [f"{m}: corpus-level metric (no per-item number), left out" for m in sorted(skipped)]
    return RunOutcomes(
        label=(result_file or sample_files[0]).name,
        benchmark="lm_eval:" + ",".join(tasks),
        source="lm_eval",
        path=path,
        outcomes=frame,
        slices=slices,
        simulated=frozenset({system})
        if (results.get("config") or {}).get("model") == "dummy"
        else frozenset(),
        meta=_meta(results, result_file, sample_files),
        notes=tuple(notes),
    )


def _read_results(path: Path) -> dict[str, Any]:
    try:
        data = parse_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise OutcomeError(f"{path}: not a readable lm-eval results file ({exc})") from None
    if not isinstance(data, dict) or "results" not in data:
        raise OutcomeError(f"{path}: results: missing field (not an lm-eval results file)")
    return data


def _sample_rows(
    line: dict[str, Any],
    where: tuple[Path, int],
    task: str,
    system: str,
    higher: dict[str, Any],
    skipped: set[str],
) -> list[dict[str, Any]]:
    for field in ("doc_id", "metrics"):
        if field not in line:
            raise OutcomeError(f"{where[0]}:{where[1]}: {field}: missing field")
    flt = str(line.get("filter", "none"))
    rows = []
    for metric in line["metrics"]:
        name = metric if flt == "none" else f"{metric},{flt}"
        if metric not in line:
            raise OutcomeError(f"{where[0]}:{where[1]}: {metric}: listed in metrics, missing")
        value = _number(line[metric], where, metric)
        if value is None:
            skipped.add(name)
            continue
        rows.append(
            {
                "item_id": f"{task}/{line['doc_id']}",
                "system": system,
                "metric": name,
                "higher_is_better": bool(higher.get(metric, True)),
                "value": value,
                "state": "ok",
                "task": task,
            }
        )
    return rows


def _number(value: Any, where: tuple[Path, int], metric: str) -> float | None:
    """A per-sample value as a number; ``None`` for a corpus metric's pieces (a list).

    Raises:
        OutcomeError: anything else — NaN, ±Infinity, an integer past a float's range, a
            string, null (lm-eval has no "unscored" value: its mean would be NaN or fail).
    """
    if isinstance(value, list | dict):
        return None
    number = as_float(value) if isinstance(value, int | float) else math.nan  # True is 1
    if math.isfinite(number):
        return number
    raise OutcomeError(
        f"{where[0]}:{where[1]}: {metric}: {shown(value)} is not a per-item number "
        "(a finite number, or a corpus metric's list)"
    )


def _with_kinds(frame: pd.DataFrame, slices: tuple[str, ...]) -> pd.DataFrame:
    kinds = {}
    for metric, part in frame.groupby("metric"):
        finite = part["value"].dropna()
        kinds[metric] = BINARY if len(finite) and finite.isin([0.0, 1.0]).all() else SCORE
    frame["kind"] = frame["metric"].map(kinds)
    return outcome_frame(frame.to_dict("records"), slices)


def _meta(results: dict[str, Any], result_file: Path | None, samples: list[Path]) -> dict[str, Any]:
    date = results.get("date")
    started = _started(date, result_file) if isinstance(date, int | float) else date_id(samples[0])
    return {
        "study": "lm_eval:" + ",".join(sorted(task_of(f) for f in samples)),
        "kind": "lm_eval",
        "title": None,
        "run_id": date_id(samples[0]),
        "status": "ok",
        "started_at": started,
        "ended_at": None,
        "commit": results.get("git_hash"),
        "dirty": None,
        "params_hash": None,
        "params_file": None,
        "overrides": [],
        "cost_usd": {},
        "report": None,
        "results_file": str(result_file) if result_file else None,
    }


def _started(date: int | float, result_file: Path | None) -> str:
    """The results file's ``date`` (seconds since 1970, lm-eval's ``time.time()``) as ISO text.

    Raises:
        OutcomeError: a date no timestamp holds (NaN, ±inf, past the year 2262).
    """
    try:
        when = pd.Timestamp(date, unit="s", tz="UTC")
    except (OverflowError, ValueError):  # pandas' OutOfBoundsDatetime is a ValueError
        when = pd.NaT
    if when is pd.NaT:
        raise OutcomeError(f"{result_file}: date: {shown(date)} is not a time (seconds since 1970)")
    return when.isoformat()
