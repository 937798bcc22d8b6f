"""inspect_ai eval logs (``.eval`` and ``.json``) read into per-item outcomes.

The log is read with inspect_ai's own reader (``inspect_ai.log.read_eval_log``): its
documentation asks users to go through the log API rather than the files, and ``.eval``
archives are Zstandard-compressed ZIPs since PR UKGovernmentBEIS/inspect_ai#3145. It is an
optional extra: ``pip install 'evalbench[importers]'``.

Semantics, from inspect_ai 0.3.285 (UKGovernmentBEIS/inspect_ai, ``src/inspect_ai/scorer/
_metric.py``, ``value_to_float``; stored copy at commit 03ed3dda081388b7e4e68e988a8ada9e3951305f):

- a score value maps to a float as inspect's ``value_to_float`` does: ``"C"`` 1, ``"P"``
  0.5, ``"I"`` and ``"N"`` 0, ``yes``/``true`` 1, ``no``/``false`` 0, numeric strings and
  numbers as themselves. Where inspect maps an unconvertible value to 0 with a warning,
  evalbench counts it *unscored* (no value): an unreadable score is not a wrong answer. A NaN
  value (``Score.unscored``) is unscored in both. An infinite value (a number, or a string
  such as ``"-Infinity"``, which inspect maps to ±inf, or an integer past a float's range,
  on which inspect's ``float()`` fails) is refused, naming the log, sample, epoch and scorer:
  a mean over it has no meaning.
- a dictionary value gives one metric per key (``<scorer>/<key>``); a list value has no
  per-item number and is left out (noted).
- several epochs: the reduced score inspect wrote (``log.reductions``, the task's reducer,
  ``mean`` by default) when the log has it, else the mean of the epochs' values.
- a sample that ended in an error is state ``error`` with no value (inspect's metrics leave
  errored samples out).
- the system is the log's model; a ``mockllm/`` model is labelled simulated.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .archive import MAX_LOG_BYTES, check_archive, check_file_size
from .outcomes import (
    BINARY,
    SCORE,
    ImporterUnavailable,
    OutcomeError,
    RunOutcomes,
    as_float,
    check_unique,
    outcome_frame,
    shown,
)

EXTRA = "pip install 'evalbench[importers]'  (inspect_ai>=0.3.280)"
CORRECT, INCORRECT, PARTIAL, NOANSWER = "C", "I", "P", "N"


def _read_log(path: Path, max_log_bytes: int = MAX_LOG_BYTES) -> Any:
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise ImporterUnavailable(f"{path}: reading inspect_ai logs needs: {EXTRA}") from None
    if path.suffix == ".eval":
        check_archive(path, max_log_bytes)  # inspect expands each member whole, in memory
    else:
        check_file_size(path, max_log_bytes)
    try:
        return read_eval_log(str(path))
    except Exception as exc:  # inspect raises many types; each becomes one line naming the file
        raise OutcomeError(
            f"{path}: not a readable inspect_ai log ({type(exc).__name__}: "
            f"{str(exc).splitlines()[0] if str(exc) else ''})"
        ) from None


def to_float(value: Any) -> float:
    """One scalar score value as a float, as inspect's ``value_to_float`` maps it, except
    that an unconvertible value is NaN (unscored) instead of 0 (±inf stays ±inf)."""
    if isinstance(value, bool):
        return float(value)
    if value == CORRECT:
        return 1.0
    if value == PARTIAL:
        return 0.5
    if value in (INCORRECT, NOANSWER):
        return 0.0
    if isinstance(value, int | float):
        return as_float(value)  # an integer past a float's range is ±inf, as "1e400" is
    if isinstance(value, str):
        text = value.lower()
        if text in ("yes", "true"):
            return 1.0
        if text in ("no", "false"):
            return 0.0
        try:
            return float(text)  # "inf" too, as inspect maps it: the reader refuses it
        except ValueError:
            return math.nan
    return math.nan


def score_values(scorer: str, value: Any, where: str = "") -> dict[str, float] | None:
    """``metric -> float`` for one score value (``None`` for a list value).

    Raises:
        OutcomeError: an infinite value (``where`` names the log and sample).
    """
    if isinstance(value, list | tuple):
        return None
    pieces = value.items() if isinstance(value, dict) else [(None, value)]
    out = {}
    for key, raw in pieces:
        metric = scorer if key is None else f"{scorer}/{key}"
        number = to_float(raw)
        if math.isinf(number):
            raise OutcomeError(f"{where}{metric}: {shown(raw)} is not a finite number")
        out[metric] = number
    return out


def read_inspect_log(
    path: Path | str, *, slices: Sequence[str] = (), max_log_bytes: int = MAX_LOG_BYTES
) -> RunOutcomes:
    """An inspect_ai log as per-item outcomes (see the module docstring for the semantics).

    Args:
        path: a ``.eval`` or ``.json`` log.
        slices: sample metadata keys to slice by (e.g. ``subject``).
        max_log_bytes: the most the log may expand to (it is read whole into memory;
            :mod:`.archive` checks an ``.eval`` archive as a stream first).

    Raises:
        ImporterUnavailable: inspect_ai is not installed.
        OutcomeError: unreadable log, a log above ``max_log_bytes`` or a hostile archive,
            no samples, or duplicate sample ids.
    """
    path = Path(path)
    log = _read_log(path, max_log_bytes)
    samples = list(log.samples or [])
    if not samples:
        raise OutcomeError(
            f"{path}: the log has no samples (was it written with "
            "log_samples=False, or did the eval fail before any sample?)"
        )
    values, states, meta, notes = _per_sample(path, samples, tuple(slices))
    reduced = _reductions(path, log)
    model = str(log.eval.model)
    rows = []
    for (sample_id, metric), epochs in values.items():  # samples, then the task's scorers
        value = reduced.get((sample_id, metric), _mean(epochs))
        state = states[sample_id]
        if state == "ok" and math.isnan(value):
            state = "unscored"
        rows.append(
            {
                "item_id": sample_id,
                "system": model,
                "metric": metric,
                "value": value,
                "state": state,
                **meta[sample_id],
            }
        )
    rows += [
        {
            "item_id": sid,
            "system": model,
            "metric": m,
            "value": math.nan,
            "state": "error",
            **meta[sid],
        }
        for sid, m in _errored_without_scores(states, values)
    ]
    frame = _with_kinds(pd.DataFrame(rows), tuple(slices))
    check_unique(frame, str(path))
    if reduced:
        notes.append(f"epochs reduced as the log's reductions say ({_reducers(log)})")
    if log.status != "success":
        notes.append(f"log status {log.status}: {len(samples)} samples in the log")
    return RunOutcomes(
        label=path.name,
        benchmark=f"inspect:{log.eval.task}",
        source="inspect_ai",
        path=path,
        outcomes=frame,
        slices=tuple(slices),
        simulated=frozenset({model}) if model.startswith("mockllm/") else frozenset(),
        meta=_meta(log, path),
        notes=tuple(notes),
    )


Values = dict[tuple[str, str], list[float]]
"""(sample id, metric) -> the value of each epoch."""


def _per_sample(
    path: Path, samples: list[Any], slices: tuple[str, ...]
) -> tuple[Values, dict[str, str], dict[str, dict[str, str]], list[str]]:
    values: Values = defaultdict(list)
    states: dict[str, str] = {}
    meta: dict[str, dict[str, str]] = {}
    notes: list[str] = []
    for sample in samples:
        sid = str(sample.id)
        if sample.error is not None or states.get(sid) == "error":
            states[sid] = "error"
        else:
            states.setdefault(sid, "ok")
        metadata = sample.metadata or {}
        meta[sid] = {name: str(metadata.get(name, "(none)")) for name in slices}
        where = f"{path}: sample {sid!r} epoch {sample.epoch}: "
        for scorer, score in (sample.scores or {}).items():
            mapped = score_values(scorer, score.value, where)
            if mapped is None:
                notes.append(f"scorer {scorer}: list values have no per-item number (left out)")
                continue
            for metric, value in mapped.items():
                values[(sid, metric)].append(value)
    return values, states, meta, sorted(set(notes))


def _errored_without_scores(states: dict[str, str], values: Values) -> list[tuple[str, str]]:
    metrics = sorted({m for _, m in values}) or ["score"]
    scored = {sid for sid, _ in values}
    return [
        (sid, m)
        for sid, st in sorted(states.items())
        if st == "error" and sid not in scored
        for m in metrics
    ]


def _mean(epochs: list[float]) -> float:
    finite = [v for v in epochs if not math.isnan(v)]
    return float(np.mean(finite)) if finite else math.nan


def _reductions(path: Path, log: Any) -> dict[tuple[str, str], float]:
    """Reduced values of a multi-epoch log (empty for one epoch: nothing to reduce)."""
    epochs = getattr(log.eval.config, "epochs", None) or 1
    if epochs <= 1 or not log.reductions:
        return {}
    out: dict[tuple[str, str], float] = {}
    for reduction in log.reductions:
        for sample in reduction.samples:
            where = f"{path}: reductions: sample {str(sample.sample_id)!r}: "
            mapped = score_values(reduction.scorer, sample.value, where) or {}
            for metric, value in mapped.items():
                out[(str(sample.sample_id), metric)] = value
    return out


def _reducers(log: Any) -> str:
    return ", ".join(sorted({f"{r.scorer}: {r.reducer or 'mean'}" for r in log.reductions}))


def _with_kinds(frame: pd.DataFrame, slices: tuple[str, ...]) -> pd.DataFrame:
    kinds = {}
    for metric, part in frame.groupby("metric"):
        finite = part["value"].dropna()
        kinds[metric] = BINARY if len(finite) and finite.isin([0.0, 1.0]).all() else SCORE
    frame["kind"] = frame["metric"].map(kinds)
    frame["higher_is_better"] = True  # inspect scores carry no direction; its metrics assume it
    return outcome_frame(frame.to_dict("records"), slices)


def _meta(log: Any, path: Path) -> dict[str, Any]:
    stats, spec = log.stats, log.eval
    revision = spec.revision
    costs = [u.total_cost for u in (stats.model_usage or {}).values() if u.total_cost is not None]
    return {
        "study": f"inspect:{spec.task}",
        "kind": "inspect_ai",
        "title": spec.task,
        "run_id": spec.run_id or spec.eval_id,
        "status": log.status,
        "started_at": stats.started_at or spec.created,
        "ended_at": stats.completed_at,
        "commit": revision.commit if revision else None,
        "dirty": revision.dirty if revision else None,
        "params_hash": None,
        "params_file": None,
        "overrides": [],
        "cost_usd": {str(spec.model): float(sum(costs))} if costs else {},
        "report": None,
    }


def read_inspect_samples(path: Path | str) -> pd.DataFrame:
    """Every sample, epoch and scorer of an inspect_ai log with what it said: ``id, epoch,
    scorer, raw, value, answer, explanation, target, error`` (for agreement analyses between
    scorers, e.g. a model grader against exact match; ``value`` as :func:`to_float`)."""
    log = _read_log(Path(path))
    rows = []
    for sample in log.samples or []:
        for scorer, score in (sample.scores or {}).items():
            rows.append(
                {
                    "id": str(sample.id),
                    "epoch": sample.epoch,
                    "scorer": scorer,
                    "raw": score.value,
                    "value": to_float(score.value),
                    "answer": score.answer,
                    "explanation": score.explanation,
                    "target": sample.target,
                    "error": sample.error.message if sample.error else None,
                }
            )
    return pd.DataFrame(
        rows,
        columns=[
            "id",
            "epoch",
            "scorer",
            "raw",
            "value",
            "answer",
            "explanation",
            "target",
            "error",
        ],
    )
