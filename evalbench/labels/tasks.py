"""Label tasks: what annotators are asked, read from a tasks YAML and an items file.

A tasks file (YAML, validated with ``extra="forbid"``) names the kind of label, the items
file and who labels::

    kind: rubric                  # rubric | pairwise | verification
    title: Support answers — golden set
    items: golden_items.jsonl     # relative to the tasks file (.jsonl or .csv)
    rubric: fine_grained          # the dimensions scored (rubric and verification kinds)
    annotators: [alice, bob]      # who may label (required beyond this machine: tokens)

Three kinds, each with its items format (one JSON object per line, or a CSV header row;
other columns are ignored):

- ``rubric``: ``item, question, answer`` and optional ``reference``, ``documents`` (a list
  of strings; JSONL only): score every dimension of ``rubric`` (any built-in rubric: the
  3-dimension ``fine_grained``, the 6-dimension ``hle``, the 4-dimension ``aime_quality``);
- ``pairwise``: ``item, question, system_x, answer_x, system_y, answer_y`` and optional
  ``reference``, ``question_id``: which answer is better (A / B / tie, optional reason). The
  sides are randomized per annotator and item, and the systems' names never reach the page;
- ``verification``: ``id`` (or ``item``), ``problem, answer, solution`` and optional
  ``topic`` (a datagen run's ``generated.jsonl``): the four ``aime_quality`` dimensions
  1–5, a status (approved / rejected / needs revision) and comments.

Every problem is one :class:`LabelTaskError` line naming the file, line and field.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal, NamedTuple

import numpy as np
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from evalbench.judge import Rubric, get_rubric, known_rubric
from evalbench.params import ParamsError, format_validation_error, parse_yaml
from evalbench.records import iter_csv, iter_jsonl

Kind = Literal["rubric", "pairwise", "verification"]
STATUSES = ("approved", "rejected", "needs_revision")
"""The decisions of a verification label (datagen's ``VERIFICATION_STATUSES``)."""
CHOICES = ("left", "right", "tie")
"""What a pairwise annotator clicks; stored with the side shown left."""
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$"
"""An annotator name: letters, digits, ``_ . -`` (it names the annotator's label file)."""
MAX_TEXT = 200_000
"""Characters per shown field; longer texts are refused when the items are loaded."""


class LabelTaskError(ValueError):
    """A tasks or items file is malformed; the message names the file, line and field."""


class LabelTask(BaseModel):
    """A label task file (YAML): the kind, the items and who labels."""

    model_config = ConfigDict(extra="forbid")

    kind: Kind
    """``rubric`` (score dimensions), ``pairwise`` (A / B / tie) or ``verification``."""
    title: str = Field(min_length=1)
    """Shown on every page."""
    items: str
    """The items file (``.jsonl`` or ``.csv``), relative to the tasks file."""
    rubric: str | None = None
    """The dimensions scored: a built-in rubric (default ``fine_grained`` for ``rubric``,
    ``aime_quality`` for ``verification``; unused for ``pairwise``)."""
    instructions: str = ""
    """Markdown shown above every item (no HTML: it is escaped)."""
    annotators: list[str] = Field(default_factory=list)
    """Who may label. Empty: anyone who types a name (only on this machine); needed for the
    per-annotator tokens of a server reachable from other machines."""
    labels: str | None = None
    """Folder of the label files (one ``<annotator>.jsonl`` each), relative to the tasks
    file; default ``<tasks file stem>_labels`` beside it."""
    item_order: Literal["shuffled", "fixed"] = "shuffled"
    """Each annotator sees the items in their own seeded order, or in file order."""
    seed: int = 0
    """Seeds the per-annotator item order and pairwise sides."""
    reason: Literal["optional", "required", "off"] = "optional"
    """The free-text box (pairwise reason, rubric and verification comment)."""

    @field_validator("annotators")
    @classmethod
    def _names(cls, names: list[str]) -> list[str]:
        bad = [n for n in names if not re.fullmatch(NAME_PATTERN, n)]  # '$' takes 'a\n'
        if bad:
            raise ValueError(f"annotator names must match {NAME_PATTERN} (got {bad[0]!r})")
        repeated = next((n for i, n in enumerate(names) if n in names[:i]), None)
        if repeated is not None:  # a typo for another name, who would then get no URL
            raise ValueError(f"{repeated!r} is given twice")
        return names

    @field_validator("rubric")
    @classmethod
    def _rubric(cls, name: str | None, info: ValidationInfo) -> str | None:
        # checked here, not when serving, so `label init` refuses what `serve` would
        if name is not None:
            known_rubric(name)
            if info.data.get("kind") == "verification" and name != "aime_quality":
                raise ValueError("verification scores the aime_quality dimensions")
        return name

    def rubric_obj(self) -> Rubric:
        """The rubric whose dimensions are scored (``None`` for pairwise is an error)."""
        default = "aime_quality" if self.kind == "verification" else "fine_grained"
        return get_rubric(self.rubric or default)


class Item(NamedTuple):
    """One thing to label."""

    id: str
    """Unique item id (never shown for pairwise items: it may name the systems)."""
    fields: dict[str, Any]
    """The texts shown (question, answer, reference, documents; or problem, answer,
    solution, topic; or question, reference, answer_x, answer_y)."""
    hidden: dict[str, str]
    """Kept on the server only: ``system_x``, ``system_y``, ``question_id`` (pairwise)."""
    digest: str
    """Hash of everything shown and hidden: a label of an edited item is detectably stale."""
    line: int
    """Line of the items file (for error messages)."""


class Tasks(NamedTuple):
    """A loaded label task: the spec, where it lives, its items in file order."""

    spec: LabelTask
    path: Path
    """The tasks file."""
    items: list[Item]
    labels_dir: Path
    """Folder of the label files."""

    @property
    def name(self) -> str:
        """The task's name: the tasks file stem (stored on every label)."""
        return self.path.stem

    def item(self, item_id: str) -> Item:
        """The item called ``item_id`` (``KeyError`` if absent)."""
        for it in self.items:
            if it.id == item_id:
                return it
        raise KeyError(item_id)


# --------------------------------------------------------------------------- loading


def load_tasks(path: Path | str) -> Tasks:
    """Read and validate a tasks file and its items.

    Raises:
        LabelTaskError: one line naming the file (and line and field) of the first problem.
    """
    path = Path(path)
    if not path.is_file():
        raise LabelTaskError(f"{path}: tasks file not found")
    try:  # hand-edited like a params file, so read as strictly (no anchors, YAML 1.2 core)
        data = parse_yaml(path.read_text(encoding="utf-8"), str(path))
    except UnicodeDecodeError as exc:
        raise LabelTaskError(f"{path}: not a YAML file ({str(exc).splitlines()[0]})") from None
    except ParamsError as exc:
        raise LabelTaskError(str(exc)) from None
    if not isinstance(data, dict):
        raise LabelTaskError(f"{path}: expected a mapping of keys to values")
    try:
        spec = LabelTask.model_validate(data)
    except ValidationError as exc:
        raise LabelTaskError(f"{path}: {format_validation_error(exc)}") from None
    base = path.resolve().parent
    items = load_items(base / spec.items, spec.kind)
    labels_dir = base / spec.labels if spec.labels else base / f"{path.stem}_labels"
    return Tasks(spec, path.resolve(), items, labels_dir)


def load_items(path: Path, kind: Kind) -> list[Item]:
    """The items of a label task, validated (unique ids, required texts present).

    Raises:
        LabelTaskError: naming the file, line and field.
    """
    if not path.is_file():
        raise LabelTaskError(f"{path}: items file not found")
    return _checked_items(path, kind)


def _checked_items(path: Path, kind: Kind) -> list[Item]:
    items: list[Item] = []
    seen: dict[str, int] = {}
    for line, raw in _records(path):
        item = _ITEM_READERS[kind](raw, f"{path}:{line}", line)
        if item.id in seen:
            raise LabelTaskError(
                f"{path}:{line}: field 'item': {item.id!r} repeats line {seen[item.id]}"
            )
        seen[item.id] = line
        items.append(item)
    if not items:
        raise LabelTaskError(f"{path}: no items")
    return items


def _records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    suffix = path.suffix.lower()
    if suffix == ".csv":
        for line, row in iter_csv(path, error=LabelTaskError)[1]:
            yield line, {k: v for k, v in row.items() if k is not None}
        return
    if suffix not in (".jsonl", ".json"):
        raise LabelTaskError(f"{path}: items must be .jsonl or .csv (got {suffix!r})")
    yield from iter_jsonl(path, error=LabelTaskError)


def _text(raw: Mapping[str, Any], key: str, where: str, *, required: bool = True) -> str | None:
    value = raw.get(key)
    nan = isinstance(value, float) and math.isnan(value)  # JSON's NaN, pandas' missing value
    if value is None or nan or (isinstance(value, str) and not value.strip()):
        if required:
            raise LabelTaskError(f"{where}: field {key!r}: missing or empty")
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise LabelTaskError(f"{where}: field {key!r}: expected text, got {type(value).__name__}")
    if isinstance(value, float) and math.isinf(value):
        raise LabelTaskError(f"{where}: field {key!r}: expected text, got {json.dumps(value)}")
    text = str(value)
    if len(text) > MAX_TEXT:
        raise LabelTaskError(
            f"{where}: field {key!r}: {len(text):,d} characters (max {MAX_TEXT:,d})"
        )
    return text


def _documents(raw: Mapping[str, Any], where: str) -> list[str]:
    docs = raw.get("documents") or []
    if isinstance(docs, str):  # a CSV cell: one document
        docs = [docs]
    if not isinstance(docs, list) or not all(isinstance(d, str) for d in docs):
        raise LabelTaskError(f"{where}: field 'documents': expected a list of strings")
    return [d for d in docs if d.strip()]


def _digest(*parts: Any) -> str:
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _item_id(raw: Mapping[str, Any], where: str, keys: tuple[str, ...] = ("item",)) -> str:
    for key in keys:
        value = raw.get(key)
        if isinstance(value, float) and not math.isfinite(value):  # JSON NaN, pandas' missing
            raise LabelTaskError(
                f"{where}: field {key!r}: expected text or a finite number, got {json.dumps(value)}"
            )
        if value not in (None, ""):
            return str(_text(raw, key, where))
    raise LabelTaskError(f"{where}: field {keys[0]!r}: missing or empty")


def _rubric_item(raw: Mapping[str, Any], where: str, line: int) -> Item:
    fields = {
        "question": _text(raw, "question", where),
        "answer": _text(raw, "answer", where),
        "reference": _text(raw, "reference", where, required=False),
        "documents": _documents(raw, where),
    }
    item_id = _item_id(raw, where, ("item", "id"))
    return Item(item_id, fields, {}, _digest(item_id, fields), line)


def _pair_item(raw: Mapping[str, Any], where: str, line: int) -> Item:
    fields = {
        "question": _text(raw, "question", where),
        "reference": _text(raw, "reference", where, required=False),
        "answer_x": _text(raw, "answer_x", where),
        "answer_y": _text(raw, "answer_y", where),
    }
    hidden = {k: str(_text(raw, k, where)) for k in ("system_x", "system_y")}
    if hidden["system_x"] == hidden["system_y"]:
        raise LabelTaskError(f"{where}: field 'system_y': the same system as system_x")
    item_id = _item_id(raw, where)
    hidden["question_id"] = _text(raw, "question_id", where, required=False) or item_id
    return Item(item_id, fields, hidden, _digest(item_id, fields, hidden), line)


def _problem_item(raw: Mapping[str, Any], where: str, line: int) -> Item:
    fields = {
        "topic": _text(raw, "topic", where, required=False),
        "problem": _text(raw, "problem", where),
        "answer": _text(raw, "answer", where),
        "solution": _text(raw, "solution", where),
    }
    item_id = _item_id(raw, where, ("id", "item"))
    return Item(item_id, fields, {}, _digest(item_id, fields), line)


_ITEM_READERS = {"rubric": _rubric_item, "pairwise": _pair_item, "verification": _problem_item}


def make_item(kind: Kind, raw: Mapping[str, Any], where: str = "item") -> Item:
    """One item exactly as a tasks file loads it (same id, fields and digest), for code that
    writes labels without a server (the JupyterLab review form).

    Raises:
        LabelTaskError: a missing or malformed field (``where`` names the item).
    """
    return _ITEM_READERS[kind](raw, where, 0)


# --------------------------------------------------------------------------- per annotator


def _seed_words(*parts: Any) -> list[int]:
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()
    return [int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4)]


def annotator_order(tasks: Tasks, annotator: str) -> list[str]:
    """The item ids in the order ``annotator`` sees them: file order, or a permutation
    seeded by (task seed, annotator), so every annotator has their own order and a reload
    shows the same one."""
    ids = [it.id for it in tasks.items]
    if tasks.spec.item_order == "fixed":
        return ids
    rng = np.random.default_rng(_seed_words("order", tasks.spec.seed, annotator))
    return [ids[i] for i in rng.permutation(len(ids))]


def left_side(tasks: Tasks, annotator: str, item_id: str) -> Literal["x", "y"]:
    """Which side of a pairwise item ``annotator`` sees on the left (A): ``x`` or ``y``,
    from a hash of (task seed, annotator, item): random across annotators and items,
    the same on every reload."""
    words = _seed_words("side", tasks.spec.seed, annotator, item_id)
    return "x" if words[0] % 2 == 0 else "y"


def check_annotator(name: str) -> str:
    """``name`` if it is a valid annotator name (it names a file), else ``ValueError``."""
    if not isinstance(name, str) or not re.fullmatch(NAME_PATTERN, name):  # not 'alice\n'
        raise ValueError(f"annotator name must match {NAME_PATTERN} (got {name!r})")
    return name
