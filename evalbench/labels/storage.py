"""Label files: one append-only JSON Lines file per annotator, flushed per label.

Every submitted label is one :class:`LabelRecord` line appended to
``<labels dir>/<annotator>.jsonl`` and flushed to disk (``fsync``) before the submit is
acknowledged, so a crash or a closed tab loses nothing already submitted. An edit is a new
line (``revision`` 2, 3 ...): the file is the full history and the *current* label of an
item is its annotator's last line (:func:`current_labels`). Two annotators never share a
file; two writers of the same file (two tabs, two servers on one folder) take a lock
(``filelock``) around each append. A torn last line (a crash mid-write, never acknowledged)
is cut off before the next append and skipped when reading; ``label status`` and
``label export`` name the file (:meth:`LabelStore.read_counted`, :func:`read_counted`).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

import pandas as pd
from filelock import FileLock
from pydantic import Field, ValidationError

from evalbench.records import Record, open_in_folder, parse_json, to_json

from .tasks import NAME_PATTERN, check_annotator


class LabelFileError(ValueError):
    """A label file has a line that is not a valid label (message: file:line and field)."""


class LabelRecord(Record):
    """One line of a label file: one label of one item by one annotator."""

    task: str
    """The label task (its tasks file stem)."""
    kind: Literal["rubric", "pairwise", "verification"]
    item: str
    """The item id."""
    item_digest: str
    """Hash of the item as shown (a label of an item edited since is stale)."""
    annotator: str = Field(pattern=NAME_PATTERN)
    time: datetime
    """When the label was saved (UTC)."""
    position: int = Field(ge=0)
    """The item's place in this annotator's order (0 = first shown)."""
    revision: int = Field(default=1, ge=1)
    """1 for the first label of this item by this annotator, 2 for the first edit, ..."""
    scores: dict[str, float] | None = None
    """Rubric and verification: a score per dimension."""
    status: Literal["approved", "rejected", "needs_revision"] | None = None
    """Verification: the decision."""
    choice: Literal["left", "right", "tie"] | None = None
    """Pairwise: what the annotator picked, as shown."""
    left: Literal["x", "y"] | None = None
    """Pairwise: the item side shown on the left (A)."""
    preference: Literal["a", "b", "tie"] | None = None
    """Pairwise: the choice in item terms (``a`` = ``system_x`` better)."""
    system_x: str | None = None
    system_y: str | None = None
    question_id: str | None = None
    comment: str = ""
    """The pairwise reason, or the rubric / verification comment."""
    elapsed_s: float | None = Field(default=None, ge=0)
    """Seconds from showing the item to saving (measured in the browser; advisory)."""
    simulated: bool = False
    """Written by a simulated annotator (demos and tests), never by a person."""


def now_utc() -> datetime:
    """The current time, UTC."""
    return datetime.now(timezone.utc)


def label_path(folder: Path, annotator: str) -> Path:
    """``<folder>/<annotator>.jsonl`` (the name is checked: it becomes a file name)."""
    return folder / f"{check_annotator(annotator)}.jsonl"


class LabelStore:
    """The label files of one task's folder: append (locked, fsynced) and read back."""

    def __init__(self, folder: Path | str):
        self.folder = Path(folder)
        self._thread_lock = threading.Lock()

    def append(self, record: LabelRecord) -> LabelRecord:
        """Append ``record`` to its annotator's file; returns it once it is on disk.

        The revision is set here, under the lock, from the lines already in the file.
        """
        path = _own_file(label_path(self.folder, record.annotator))
        self.folder.mkdir(parents=True, exist_ok=True)
        with self._thread_lock, FileLock(str(path) + ".lock", timeout=30):
            _cut_torn_tail(path)
            earlier = [r for r in _read_file(path)[0]
                       if (r.task, r.item) == (record.task, record.item)]  # fmt: skip
            record = record.model_copy(update={"revision": len(earlier) + 1})
            line = to_json(record.model_dump(mode="json"))
            with open_in_folder(path, "a") as fh:  # never through a link planted meanwhile
                fh.write(line + "\n")
                fh.flush()
                os.fsync(fh.fileno())
        return record

    def read(self, annotator: str) -> list[LabelRecord]:
        """Every label line of ``annotator`` in file order (``[]`` without a file)."""
        return self.read_counted(annotator)[0]

    def read_counted(self, annotator: str) -> tuple[list[LabelRecord], int]:
        """:meth:`read`, and 1 if the file ends in a torn line it skipped (else 0)."""
        return _read_file(_own_file(label_path(self.folder, annotator)))

    def annotators(self) -> list[str]:
        """Annotators with a label file in the folder, sorted."""
        if not self.folder.is_dir():
            return []
        return sorted(p.stem for p in self.folder.glob("*.jsonl"))


def _own_file(path: Path) -> Path:
    """``path``, a label file of the folder itself (or none yet).

    Raises:
        LabelFileError: it is a symbolic link (a folder from elsewhere with a planted link:
            an append, or the cut of a torn last line, would write into the file it names)
            or a folder.
    """
    if path.is_symlink():
        raise LabelFileError(f"{path}: a symbolic link; labels are read and written only in "
                             "the labels folder itself (delete the link)")  # fmt: skip
    if path.is_dir():
        raise LabelFileError(f"{path}: a folder, not a label file (move it out of the labels "
                             "folder)")  # fmt: skip
    return path


def _cut_torn_tail(path: Path) -> None:
    """Drop a last line without its newline (a write that crashed before acknowledging)."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with os.fdopen(os.open(path, os.O_RDWR | getattr(os, "O_NOFOLLOW", 0)), "rb+") as fh:
        fh.seek(-1, os.SEEK_END)
        if fh.read(1) == b"\n":
            return
        fh.seek(0)
        data = fh.read()
        fh.truncate(data.rfind(b"\n") + 1)


def _read_file(path: Path) -> tuple[list[LabelRecord], int]:
    """The records of one label file and the number of torn last lines skipped (0 or 1)."""
    if not path.exists():
        return [], 0
    raw = path.read_bytes()
    lines = raw.split(b"\n")
    out = []
    for number, line in enumerate(lines[:-1], start=1):
        if line.strip():
            out.append(_parse_line(line, f"{path}:{number}"))
    return out, 1 if lines[-1].strip() else 0  # no trailing newline: never acknowledged


def _parse_line(line: bytes, where: str) -> LabelRecord:
    try:
        obj = parse_json(line)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise LabelFileError(f"{where}: not JSON ({exc})") from None
    try:
        return LabelRecord.model_validate(obj)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "(line)"
        raise LabelFileError(f"{where}: field {field!r}: {first['msg']}") from None


def read_labels(source: Path | str | Iterable[LabelRecord]) -> list[LabelRecord]:
    """Every label of a folder (all annotators), one ``.jsonl`` file, or records as given.

    Raises:
        LabelFileError: a line that is not a valid label, naming file:line and field.
    """
    if not isinstance(source, (str, Path)):
        return list(source)
    return read_counted(source)[0]


def read_counted(source: Path | str) -> tuple[list[LabelRecord], list[Path]]:
    """:func:`read_labels` of a folder or file, and the files whose torn last line it
    skipped."""
    records: list[LabelRecord] = []
    torn = []
    for path in _label_files(Path(source)):
        lines, cut = _read_file(path)
        records += lines
        torn += [path] * cut
    return records, torn


def _label_files(path: Path) -> list[Path]:
    if path.is_dir():  # a folder's files are its own (a file named alone may be a link)
        return [_own_file(p) for p in sorted(path.glob("*.jsonl"))]
    if path.is_file():
        return [path]
    raise LabelFileError(f"{path}: no label file or folder")


def labels_frame(labels: Iterable[LabelRecord]) -> pd.DataFrame:
    """Labels as a DataFrame: the record fields, ``scores`` spread into ``score_<dim>``."""
    rows = []
    for r in labels:
        row: dict[str, Any] = r.model_dump(exclude={"scores"})
        for dim, value in (r.scores or {}).items():
            row[f"score_{dim}"] = value
        rows.append(row)
    columns = list(LabelRecord.model_fields)
    columns.remove("scores")
    frame = pd.DataFrame(rows)
    return frame if rows else pd.DataFrame(columns=columns)


def current_labels(labels: Iterable[LabelRecord]) -> list[LabelRecord]:
    """The current label of every (task, annotator, item): the last line written (edits
    win). Two tasks may share a labels folder (and item ids): each keeps its own labels."""
    last: dict[tuple[str, str, str], LabelRecord] = {}
    for r in labels:
        key = (r.task, r.annotator, r.item)
        if key not in last or (r.revision, r.time) >= (last[key].revision, last[key].time):
            last[key] = r
    return list(last.values())


def stale_labels(labels: Iterable[LabelRecord], digests: Mapping[str, str]) -> list[LabelRecord]:
    """Labels whose item is gone or was edited since (digest differs): not exported."""
    return [r for r in labels if digests.get(r.item) != r.item_digest]
