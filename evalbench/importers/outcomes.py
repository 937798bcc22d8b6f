"""Per-item outcomes: one row per (item, system, metric), the unit every run comparison pairs.

An *outcome frame* has the columns :data:`OUTCOME_COLUMNS` plus one column per slice
(``level``, ``category``, ``dataset`` ...):

- ``value`` is the item's number for the metric (1/0 for a binary metric, a score
  otherwise) and is NaN when the item has none (``unscored``: a judge output that did not
  parse, a hidden ground truth, a harness error without a score) — never a made-up number;
- ``state`` says what happened: ``ok``, ``no_answer`` (scored, counted wrong as the study
  counts it), ``limit`` (an agent stopped at its time or step limit before it answered:
  scored wrong, as the study scores it), ``error`` (a failed call: the value is whatever the
  study's own headline counts, e.g. wrong for GAIA and BFCL, and NaN where the study leaves
  it out) or ``unscored``. Comparisons count every state apart.

:func:`read_run_folder` reads an evalbench run folder (``manifest.json`` + ``records/``)
through :data:`READERS`, one small function per study kind that knows its declared record
files (the study's ``STUDY.records``); :mod:`.inspect_logs` and :mod:`.lm_eval` read other
harnesses' runs into the same frame.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from evalbench.records import iter_jsonl, parse_json, read_regular_text
from evalbench.runs import PUBLISHED_STATUSES, UNFINISHED, current_manifest

OUTCOME_COLUMNS = ["item_id", "system", "metric", "kind", "higher_is_better", "value", "state"]
"""The fixed columns of an outcome frame (slice columns follow)."""
STATES = ("ok", "no_answer", "limit", "error", "unscored")
BINARY, SCORE = "binary", "score"


class OutcomeError(ValueError):
    """A run or log that cannot be read into outcomes (one line naming file:line and field)."""


class ImporterUnavailable(OutcomeError):
    """The optional package a reader needs is not installed (the message says what to run)."""


class RunOutcomes(NamedTuple):
    """One run of one benchmark, read into per-item outcomes."""

    label: str
    """Short name for tables (``<study>/<run id>``, or the log's file name)."""
    benchmark: str
    """What the items are: the study kind (``gaia``), ``inspect:<task>``, ``lm_eval:<tasks>``;
    items pair only between runs of the same benchmark."""
    source: str
    """``evalbench``, ``inspect_ai`` or ``lm_eval``."""
    path: Path
    outcomes: pd.DataFrame
    """:data:`OUTCOME_COLUMNS` plus the slice columns."""
    slices: tuple[str, ...]
    """The slice columns (each partitions the items: level, category ...)."""
    simulated: frozenset[str]
    """Systems whose outputs the offline simulator produced."""
    meta: dict[str, Any]
    """When and how the run was made: ``started_at``, ``ended_at``, ``commit``, ``dirty``,
    ``params_hash``, ``study``, ``run_id``, ``status``, ``overrides``, ``cost_usd`` (per
    system), ``report`` (path of its report, when there is one)."""
    pairable: bool = True
    """False when item ids do not name the same item in another run (generated items)."""
    notes: tuple[str, ...] = ()
    """What the reader left out and why (e.g. corpus-level metrics)."""

    @property
    def finished(self) -> bool:
        """Whether the run ended as it should: an evalbench run published (``ok`` or
        ``degraded`` or ``no_result``), an inspect_ai log ``success``; lm-eval writes its
        files at the end."""
        status = self.meta.get("status")
        ended = {"evalbench": status in PUBLISHED_STATUSES, "inspect_ai": status == "success"}
        return ended.get(self.source, True)

    @property
    def systems(self) -> list[str]:
        """The systems with outcomes, in name order."""
        return sorted(self.outcomes["system"].unique()) if len(self.outcomes) else []


def outcome_frame(rows: list[dict[str, Any]], slices: tuple[str, ...] = ()) -> pd.DataFrame:
    """Rows (dicts with the outcome columns and the slice columns) as an outcome frame."""
    columns = [*OUTCOME_COLUMNS, *slices]
    frame = pd.DataFrame(rows, columns=columns)
    frame["item_id"] = frame["item_id"].astype(str)
    frame["value"] = pd.to_numeric(frame["value"], errors="coerce").astype(float)
    frame["higher_is_better"] = frame["higher_is_better"].astype(bool)
    for name in slices:
        frame[name] = frame[name].astype(str)
    return frame


def iter_lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """:func:`evalbench.records.iter_jsonl` raising :class:`OutcomeError` (file:line).

    Raises:
        OutcomeError: a line that is not a JSON object, or nested too deeply to read.
    """
    return iter_jsonl(path, error=OutcomeError)


def check_unique(frame: pd.DataFrame, where: str) -> None:
    """Refuse a frame with two rows for one (item, system, metric).

    Raises:
        OutcomeError: naming the first duplicated item.
    """
    dup = frame.duplicated(["item_id", "system", "metric"], keep=False)
    if dup.any():
        row = frame[dup].iloc[0]
        raise OutcomeError(
            f"{where}: item {row['item_id']!r} has more than one {row['metric']!r} outcome for "
            f"system {row['system']!r} (item ids must be unique)"
        )


# --------------------------------------------------------------------------- run folders


def read_manifest(run_dir: Path) -> dict[str, Any]:
    """A run folder's ``manifest.json`` (a run marked running that no process holds is
    ``interrupted``: :func:`evalbench.runs.current_manifest`).

    Raises:
        OutcomeError: no manifest, or not a JSON object.
    """
    path = run_dir / "manifest.json"
    try:
        manifest = parse_json(read_regular_text(path))
    except OSError as exc:
        raise OutcomeError(f"{path}: no run manifest ({exc.strerror or exc})") from None
    except ValueError as exc:
        raise OutcomeError(f"{path}: not JSON ({exc})") from None
    if not isinstance(manifest, dict):
        raise OutcomeError(f"{path}: expected a JSON object")
    if manifest.get("status") in UNFINISHED:  # killed? every reader says the same
        manifest = current_manifest(run_dir)
    return manifest


def run_meta(manifest: dict[str, Any], run_dir: Path) -> dict[str, Any]:
    """The fields of a manifest that say when and how a run was made (see :class:`RunOutcomes`)."""
    published = manifest.get("status") in PUBLISHED_STATUSES
    shown = manifest if published else (manifest.get("published") or manifest)
    git = (manifest.get("environment") or {}).get("git") or {}
    costs = {
        str(row.get("system")): float(row.get("cost_usd") or 0.0)
        for row in (shown.get("usage") or [])
        if isinstance(row, dict)
    }
    report = run_dir / "report.html"
    return {
        "study": manifest.get("study", run_dir.parent.name),
        "kind": manifest.get("kind"),
        "title": manifest.get("title"),
        "run_id": manifest.get("run_id", run_dir.name),
        "status": manifest.get("status"),
        "started_at": manifest.get("started_at"),
        "ended_at": manifest.get("ended_at"),
        "commit": git.get("commit"),
        "dirty": git.get("dirty"),
        "params_hash": manifest.get("params_hash"),
        "params_file": manifest.get("params_file"),
        "overrides": list(manifest.get("overrides") or []),
        "cost_usd": costs,
        "report": str(report) if report.exists() else None,
    }


def simulated_names(manifest: dict[str, Any]) -> frozenset[str]:
    """Simulated systems of a run (``simulated_names``, or the ``sim`` provider in ``models``)."""
    names = manifest.get("simulated_names")
    if names is not None:
        return frozenset(str(n) for n in names)
    models = manifest.get("models") or []
    return frozenset(str(m.get("name")) for m in models if m.get("provider") == "sim")


def read_run_folder(run_dir: Path) -> RunOutcomes:
    """An evalbench run folder as per-item outcomes (through the reader of its study kind).

    Raises:
        OutcomeError: no manifest, a study kind without per-item records (the message says
            which kinds have them), or a bad record line (file:line: field).
    """
    manifest = read_manifest(run_dir)
    kind = str(manifest.get("kind"))
    if kind not in READERS:
        known = ", ".join(sorted(READERS))
        raise OutcomeError(
            f"{run_dir}: study kind {kind!r} has no per-item outcomes to compare "
            f"(kinds with them: {known})"
        )
    reader = READERS[kind]
    frame = reader.read(run_dir, manifest.get("params") or {})
    check_unique(frame, str(run_dir / "records"))
    meta = run_meta(manifest, run_dir)
    return RunOutcomes(
        label=f"{run_dir.parent.name}/{run_dir.name}",  # its folder (a copy keeps the
        # original's names in its manifest, and in ``meta``: the run's identity)
        benchmark=kind,
        source="evalbench",
        path=run_dir,
        outcomes=frame,
        slices=reader.slices,
        simulated=simulated_names(manifest),
        meta=meta,
        pairable=reader.pairable,
    )


def _rows(run_dir: Path, name: str) -> list[tuple[Path, int, dict[str, Any]]]:
    path = run_dir / "records" / f"{name}.jsonl"
    if not path.exists():
        raise OutcomeError(f"{path}: missing (the run wrote no {name} records; did it finish?)")
    return [(path, number, row) for number, row in iter_lines(path)]


def _field(where: tuple[Path, int], row: dict[str, Any], name: str) -> Any:
    if name not in row:
        raise OutcomeError(f"{where[0]}:{where[1]}: {name}: missing field")
    return row[name]


def _nan(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def shown(value: Any) -> str:
    """A value as JSON writes it (``Infinity``, ``"yes"``, ``null``), cut to 40 characters;
    a longer integer as its first 20 digits and its length (``99999999999999999999… (400
    digits)``): cut, it would look like a plain number."""
    if isinstance(value, int) and abs(value) >= 10**40:
        return _long_integer(value)
    try:
        return json.dumps(value)[:40]
    except (TypeError, ValueError):
        return repr(value)[:40]


def _long_integer(value: int) -> str:
    try:
        digits = str(abs(value))
    except ValueError:  # past Python's limit for int-to-text (4,300 digits)
        return f"{'-' if value < 0 else ''}an integer of over 4300 digits"
    return f"{'-' if value < 0 else ''}{digits[:20]}… ({len(digits)} digits)"


def as_float(value: int | float) -> float:
    """A JSON number as a float; an integer past a float's range (JSON sets no limit) is ±inf,
    as ``1e400`` reads: ``float()`` would raise OverflowError."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _number(where: tuple[Path, int], row: dict[str, Any], name: str, default: Any = None) -> float:
    """A numeric field. Without ``default``: missing, null or NaN is NaN (evalbench's "no
    value"); with one, a missing field is ``default`` and null or NaN is refused.

    Raises:
        OutcomeError: ±Infinity, a string, a boolean or any other non-number (file:line: field).
    """
    value = row.get(name, default)
    if default is None and _nan(value):
        return math.nan
    if isinstance(value, bool) or not isinstance(value, int | float):
        number = math.nan
    else:
        number = as_float(value)
    if not math.isfinite(number):
        raise OutcomeError(f"{where[0]}:{where[1]}: {name}: {shown(value)} is not a finite number")
    return number


def _flag(where: tuple[Path, int], row: dict[str, Any], name: str, *, null: bool) -> bool | None:
    """A verdict field: true or false (or null when ``null``); ``"no"`` is not a verdict.

    Raises:
        OutcomeError: anything else (file:line: field).
    """
    value = _field(where, row, name)
    if isinstance(value, bool) or (null and value is None):
        return value
    allowed = "true, false or null" if null else "true or false"
    raise OutcomeError(f"{where[0]}:{where[1]}: {name}: expected {allowed}, got {shown(value)}")


def _gaia(run_dir: Path, params: dict[str, Any]) -> pd.DataFrame:
    """GAIA (``records/gaia.jsonl``): first attempt of each item, the official verdict;
    a failed call or a missing answer counts wrong (as the study's accuracy counts it)."""
    rows = []
    for path, number, row in _rows(run_dir, "gaia"):
        where = (path, number)
        if _field(where, row, "attempt") != 0:
            continue
        correct = _flag(where, row, "correct", null=True)
        state = "ok"
        if not _nan(row.get("error")):
            state = "error"
        elif row.get("no_answer"):
            state = "no_answer"
        elif row.get("state") in ("timeout", "step_limit"):
            state = "limit"
        if correct is None:
            state = "unscored" if state == "ok" else state
        rows.append(
            {
                "item_id": _field(where, row, "task_id"),
                "system": _field(where, row, "system"),
                "metric": "accuracy",
                "kind": BINARY,
                "higher_is_better": True,
                "value": np.nan if correct is None else float(correct),
                "state": state,
                "level": f"L{_field(where, row, 'level')}",
            }
        )
    return outcome_frame(rows, ("level",))


CALL_FAILED = "evalbench:call_failed"
"""BFCL's error type of a failed model call (``evalbench.bfcl.schema.CALL_FAILED``)."""


def _bfcl(run_dir: Path, params: dict[str, Any]) -> pd.DataFrame:
    """BFCL (``records/bfcl.jsonl``): the official checker's verdict per item; a failed call
    is invalid (as the study counts it)."""
    rows = []
    for path, number, row in _rows(run_dir, "bfcl"):
        where = (path, number)
        failed = row.get("error_type") == CALL_FAILED
        rows.append(
            {
                "item_id": _field(where, row, "id"),
                "system": _field(where, row, "system"),
                "metric": "accuracy",
                "kind": BINARY,
                "higher_is_better": True,
                "value": float(bool(_flag(where, row, "valid", null=False))),
                "state": "error" if failed else "ok",
                "category": _field(where, row, "test_category"),
            }
        )
    return outcome_frame(rows, ("category",))


def _judge_golden(run_dir: Path, params: dict[str, Any]) -> pd.DataFrame:
    """Golden-set judging (``records/golden_judgments.jsonl``, replicate 0): per judge and
    item, ``within ±k (dim)`` (the study's headline: |judge − human| ≤ tolerance on its
    headline dimension) and the absolute error of the weighted score and of each dimension.
    An unscored judgment or a failed call has no value."""
    tolerance = float(params.get("tolerance", 1))
    headline = str(params.get("headline", "weighted"))
    rows = []
    for path, number, row in _rows(run_dir, "golden_judgments"):
        where = (path, number)
        if _field(where, row, "replicate") != 0:
            continue
        base = {"item_id": _field(where, row, "item"), "system": _field(where, row, "judge")}
        scored = row.get("status") == "scored"
        state = "ok" if scored else ("error" if not _nan(row.get("error")) else "unscored")
        for metric, kind, value in _golden_values(where, row, headline, tolerance, scored):
            higher = kind == BINARY
            rows.append(
                {
                    **base,
                    "metric": metric,
                    "kind": kind,
                    "higher_is_better": higher,
                    "value": value,
                    "state": state,
                }
            )
    return outcome_frame(rows)


def _golden_values(
    where: tuple[Path, int], row: dict[str, Any], headline: str, tolerance: float, scored: bool
) -> list[tuple[str, str, float]]:
    dims = sorted(
        k.removeprefix("human_")
        for k in row
        if k.startswith("human_")
        and k != "human_weighted"
        and f"score_{k.removeprefix('human_')}" in row
    )
    pairs = {"weighted": ("weighted_score", "human_weighted")}
    pairs |= {d: (f"score_{d}", f"human_{d}") for d in dims}
    errors = {}
    for name, (judge, human) in pairs.items():
        difference = _number(where, row, judge) - _number(where, row, human)
        errors[name] = abs(difference) if scored else np.nan
    out = []
    if headline in errors:
        err = errors[headline]
        within = np.nan if math.isnan(err) else float(err <= tolerance + 1e-9)
        out.append((f"within ±{tolerance:g} ({headline})", BINARY, within))
    out.append(("abs error (weighted)", SCORE, errors.pop("weighted")))
    out += [(f"abs error ({d})", SCORE, e) for d, e in errors.items()]
    return out


_POINTS = {"a": (1.0, 0.0), "b": (0.0, 1.0), "tie": (0.5, 0.5)}


def _battles(run_dir: Path, params: dict[str, Any]) -> pd.DataFrame:
    """Arena studies (``records/battles.jsonl``): per system and prompt, the weighted share of
    points it won (win 1, tie ½, loss 0) over its battles on that prompt."""
    points: dict[tuple[str, str, str], list[float]] = {}
    for path, number, row in _rows(run_dir, "battles"):
        where = (path, number)
        winner = _field(where, row, "winner")
        if winner not in _POINTS:
            raise OutcomeError(f"{path}:{number}: winner: expected a, b or tie, got {winner!r}")
        weight = _number(where, row, "weight", default=1.0)
        question = str(_field(where, row, "question_id"))
        dataset = str(row.get("dataset", ""))
        for side, got in zip(("model_a", "model_b"), _POINTS[winner], strict=True):
            key = (dataset, question, str(_field(where, row, side)))
            acc = points.setdefault(key, [0.0, 0.0])
            acc[0] += weight * got
            acc[1] += weight
    rows = [
        {
            "item_id": f"{dataset}/{question}" if dataset else question,
            "system": system,
            "metric": "win share",
            "kind": SCORE,
            "higher_is_better": True,
            "value": won / total if total else np.nan,
            "state": "ok" if total else "unscored",
            "dataset": dataset,
        }
        for (dataset, question, system), (won, total) in sorted(points.items())
    ]
    return outcome_frame(rows, ("dataset",))


def _hle(run_dir: Path, params: dict[str, Any]) -> pd.DataFrame:
    """HLE (``records/hle.jsonl``): the judge's verdict per question, counted as the official
    accuracy counts it (``n`` = every question: an unscored judgment, a missing answer or a
    failed call is wrong); the state says which it was."""
    rows = []
    for path, number, row in _rows(run_dir, "hle"):
        where = (path, number)
        status = _field(where, row, "status")
        correct = _flag(where, row, "correct", null=True) if "correct" in row else None
        right = status == "scored" and correct is True
        state = {"scored": "ok", "unscored": "unscored"}.get(status, "no_answer")
        if row.get("state") == "error":
            state = "error"
        rows.append(
            {
                "item_id": _field(where, row, "id"),
                "system": _field(where, row, "system"),
                "metric": "accuracy",
                "kind": BINARY,
                "higher_is_better": True,
                "value": float(right),
                "state": state,
                "category": _field(where, row, "category"),
            }
        )
    return outcome_frame(rows, ("category",))


def _datagen(run_dir: Path, params: dict[str, Any]) -> pd.DataFrame:
    """Generated-data quality (``records/quality.jsonl``, replicate 0): the judge's weighted
    rubric score (1-5) of each generated problem, attributed to the generator."""
    generator = str((params.get("generator") or {}).get("name", "generator"))
    rows = []
    for path, number, row in _rows(run_dir, "quality"):
        where = (path, number)
        if _field(where, row, "replicate") != 0:
            continue
        value = _number(where, row, "weighted_score")
        scored = row.get("status") == "scored" and not math.isnan(value)
        rows.append(
            {
                "item_id": _field(where, row, "problem_id"),
                "system": generator,
                "metric": "judge quality (1-5)",
                "kind": SCORE,
                "higher_is_better": True,
                "value": value if scored else np.nan,
                "state": "ok" if scored else "unscored",
            }
        )
    return outcome_frame(rows)


def _golden_metrics(params: dict[str, Any]) -> list[str]:
    """The metrics :func:`_judge_golden` reads for a study with ``params``: the headline's
    ``within ±k``, then the absolute error of the weighted score and of each dimension."""
    from evalbench.judge.rubrics import get_rubric

    dims = [d.name for d in get_rubric(str(params.get("rubric", "fine_grained"))).dimensions]
    tolerance, headline = float(params.get("tolerance", 1)), str(params.get("headline", ""))
    within = [f"within ±{tolerance:g} ({headline})"] if headline in [*dims, "weighted"] else []
    return [*within, "abs error (weighted)", *[f"abs error ({d})" for d in dims]]


def _named(*names: str) -> Callable[[dict[str, Any]], list[str]]:
    return lambda params: list(names)


class Reader(NamedTuple):
    """How to read one study kind's records into outcomes."""

    read: Callable[[Path, dict[str, Any]], pd.DataFrame]
    metrics: Callable[[dict[str, Any]], list[str]]
    """The metric names ``read`` gives a run with these params, the headline's first (known
    before the run: a sweep checks its ranking metric against them)."""
    slices: tuple[str, ...] = ()
    pairable: bool = True


READERS: dict[str, Reader] = {
    "gaia": Reader(_gaia, _named("accuracy"), ("level",)),
    "bfcl": Reader(_bfcl, _named("accuracy"), ("category",)),
    "judge_golden": Reader(_judge_golden, _golden_metrics),
    "hle": Reader(_hle, _named("accuracy"), ("category",)),
    "arena": Reader(_battles, _named("win share"), ("dataset",)),
    "arena_public": Reader(_battles, _named("win share"), ("dataset",)),
    # generated problems get fresh ids in every run: gen_0001 of two runs are different items
    "datagen": Reader(_datagen, _named("judge quality (1-5)"), pairable=False),
}
"""Study kind -> its reader. A study kind without per-item records (``judge_public``
reads published verdict tables only) has none."""
