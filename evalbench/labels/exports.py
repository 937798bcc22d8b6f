"""Label files to the formats the studies read, and a progress summary.

- rubric labels -> a golden set with an ``annotator`` column (one row per item and
  annotator: ``item, annotator, question, answer, reference, human_<dimension>``), the
  file ``judge_golden`` reads (``golden:``) and combines by its ``human_reference`` policy;
- pairwise labels -> battles (``model_a, model_b, winner, weight, question_id`` +
  ``annotator, item, reason``), the file the ``arena`` study reads (``human_battles:``);
- verification labels -> reviews (``problem_id, reviewer``, the four scores,
  ``total_score, status, comments, verified_at``).

Only *current* labels are exported (an annotator's last label of each item); labels of
items that were since edited or removed (their digest differs) are left out and counted.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from evalbench.records import to_json, write_atomic

from .storage import (
    LabelRecord,
    LabelStore,
    current_labels,
    read_counted,
    stale_labels,
)
from .tasks import Tasks


class Export(NamedTuple):
    """What an export wrote."""

    path: Path
    rows: int
    stale: int
    """Current labels left out: their item changed or is gone."""
    annotators: list[str]
    torn: tuple[Path, ...] = ()
    """Label files whose torn last line (a crash mid-write, never acknowledged) was skipped."""


def _usable(tasks: Tasks, labels: Iterable[LabelRecord]) -> tuple[list[LabelRecord], int]:
    current = [r for r in current_labels(labels) if r.task == tasks.name]
    stale = {(r.annotator, r.item) for r in stale_labels(current, _digests(tasks))}
    keep = [r for r in current if (r.annotator, r.item) not in stale]
    order = {it.id: i for i, it in enumerate(tasks.items)}
    keep.sort(key=lambda r: (order[r.item], r.annotator))
    return keep, len(stale)


def _digests(tasks: Tasks) -> dict[str, str]:
    return {it.id: it.digest for it in tasks.items}


def golden_rows(tasks: Tasks, labels: Iterable[LabelRecord]) -> list[dict[str, Any]]:
    """Rubric labels as golden-set rows with an ``annotator`` column (current labels)."""
    rows = []
    for r in _usable(tasks, labels)[0]:
        f = tasks.item(r.item).fields
        scores = {f"human_{d}": _plain(v) for d, v in (r.scores or {}).items()}
        rows.append({
            "item": r.item, "annotator": r.annotator, "question": f["question"],
            "answer": f["answer"], "reference": f.get("reference"), **scores,
            "labelled_at": r.time.isoformat(), "simulated": r.simulated,
        })  # fmt: skip
    return rows


def battle_rows(tasks: Tasks, labels: Iterable[LabelRecord]) -> list[dict[str, Any]]:
    """Pairwise labels as battles: ``model_a`` = the item's ``system_x``, ``winner`` a/b/tie."""
    rows = []
    for r in _usable(tasks, labels)[0]:
        hidden = tasks.item(r.item).hidden
        rows.append({
            "model_a": hidden["system_x"], "model_b": hidden["system_y"],
            "winner": r.preference, "weight": 1.0, "question_id": hidden["question_id"],
            "annotator": r.annotator, "item": r.item, "shown_left": r.left,
            "reason": r.comment, "labelled_at": r.time.isoformat(), "simulated": r.simulated,
        })  # fmt: skip
    return rows


def review_rows(tasks: Tasks, labels: Iterable[LabelRecord]) -> list[dict[str, Any]]:
    """Verification labels as reviews, one row per problem and reviewer."""
    rows = []
    for r in _usable(tasks, labels)[0]:
        scores = {d: _plain(v) for d, v in (r.scores or {}).items()}
        rows.append({
            "problem_id": r.item, "reviewer": r.annotator, **scores,
            "total_score": sum(scores.values()) / len(scores), "status": r.status,
            "comments": r.comment, "verified_at": r.time.isoformat(), "simulated": r.simulated,
        })  # fmt: skip
    return rows


def _plain(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


EXPORTERS = {"rubric": golden_rows, "pairwise": battle_rows, "verification": review_rows}
"""Kind -> the rows its labels export to."""


def export_labels(
    tasks: Tasks, out: Path | str, labels: Iterable[LabelRecord] | None = None
) -> Export:
    """Write the task's current labels in its study format (``.jsonl`` or ``.csv``).

    Args:
        tasks: the label task.
        out: the file to write (its suffix picks the format).
        labels: the labels (default: every file of the task's labels folder).
    """
    out = Path(out)
    if out.suffix.lower() not in (".jsonl", ".csv"):
        raise ValueError(f"{out}: export to a .jsonl or .csv file")
    _refuse_own_files(tasks, out)
    source, torn = read_counted(tasks.labels_dir) if labels is None else (list(labels), [])
    rows = EXPORTERS[tasks.spec.kind](tasks, source)
    stale = _usable(tasks, source)[1]
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.suffix.lower() == ".csv":
        _write_csv(out, rows)
    else:
        write_atomic(out, (to_json(row) + "\n" for row in rows))
    names = sorted({str(r.get("annotator", r.get("reviewer"))) for r in rows})
    return Export(out, len(rows), stale, names, tuple(torn))


def _refuse_own_files(tasks: Tasks, out: Path) -> None:
    """An export never replaces the task's own files: an annotator's labels (the export
    took their place, with their edit history, and every later read failed on it), another
    file of the labels folder (read back as one annotator's labels), the items or tasks file.

    Raises:
        ValueError: one line naming ``out`` and what it is.
    """
    real = out.resolve()
    if real.is_relative_to(tasks.labels_dir.resolve()):
        what = f"in the task's labels folder {tasks.labels_dir}"
    elif real == (tasks.path.parent / tasks.spec.items).resolve():
        what = "the task's items file"
    elif real == tasks.path.resolve():
        what = "the tasks file"
    else:
        return
    raise ValueError(f"{out}: {what}; export to a file outside the labels folder, not the "
                     "items or tasks file")  # fmt: skip


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    """The rows as CSV, written whole or not at all (a full disk keeps the last export)."""
    columns = list(dict.fromkeys(k for row in rows for k in row))
    text = io.StringIO(newline="")
    writer = csv.DictWriter(text, fieldnames=columns)
    writer.writeheader()
    writer.writerows({k: _csv_safe(v) for k, v in row.items()} for row in rows)
    write_atomic(path, text.getvalue())


def _csv_safe(value: Any) -> Any:
    # Model text opened in a spreadsheet must not become a formula (CSV injection).
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@"):
        return "'" + value
    return value


def label_status(tasks: Tasks) -> pd.DataFrame:
    """Per annotator: items labelled (current), edits, stale labels, the last label time and
    torn lines skipped.

    Returns:
        ``annotator, done, total, edits, stale, last_label, torn`` (declared annotators
        without a file show ``done`` 0; ``torn`` is 1 for a file ending in a torn line).
    """
    store = LabelStore(tasks.labels_dir)
    names = list(dict.fromkeys([*tasks.spec.annotators, *store.annotators()]))
    digests = _digests(tasks)
    rows = []
    for name in names:
        lines, torn = store.read_counted(name)
        lines = [r for r in lines if r.task == tasks.name]
        current = current_labels(lines)
        stale = stale_labels(current, digests)
        rows.append({
            "annotator": name, "done": len(current) - len(stale), "total": len(tasks.items),
            "edits": len(lines) - len(current), "stale": len(stale),
            "last_label": max((r.time for r in lines), default=None), "torn": torn,
        })  # fmt: skip
    columns = ["annotator", "done", "total", "edits", "stale", "last_label", "torn"]
    return pd.DataFrame(rows, columns=columns)
