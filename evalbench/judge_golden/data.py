"""Golden sets: items with human scores per rubric dimension, loaded and validated.

A golden set is a CSV (header row) or JSON Lines file: ``item`` (unique id), ``question``,
``answer``, optional ``reference``, and ``human_<dimension>`` for every dimension of the
rubric (a number on that dimension's scale). Every problem is one :class:`GoldenSetError`
naming the file, line and column. ``"demo"`` is the synthetic demo set shipped with the
package (rule-assigned scores, not human data).

Several annotators: a golden set with an ``annotator`` column has one row per item and
annotator (what ``evalbench label export`` writes); :func:`load_annotations` reads it and
:func:`golden_from_annotations` makes the one-row-per-item golden set whose human scores
are the reference by a stated policy (mean, median or majority). A separate annotations
file of the same layout may hold only ``item, annotator, human_<dimension>`` for the
items of a golden set (``annotations:`` in params; ``"demo"`` is the simulated
three-annotator file shipped beside the demo golden set).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd

from evalbench import sources
from evalbench.judge import Dimension, Rubric, get_rubric, weighted_score
from evalbench.labels import Policy, human_reference
from evalbench.records import iter_csv, iter_jsonl

GOLDEN_REQUIRED = ("item", "question", "answer")
"""Columns every golden set has; ``reference`` is optional; ``human_<dimension>`` per dimension."""


class GoldenSetError(ValueError):
    """A golden-set file is malformed; the message names the file, line and column."""


def dimension_names(rubric: Rubric) -> list[str]:
    """The rubric's dimension names, in its order (e.g. accuracy, completeness, clarity)."""
    return [d.name for d in rubric.dimensions]


def demo_golden_path() -> Path:
    """The synthetic demo golden set shipped with the package (not human data)."""
    folder = resources.files("evalbench").joinpath("demo").joinpath("golden")
    return Path(str(folder.joinpath("golden_demo.jsonl")))


def demo_annotations_path() -> Path:
    """The simulated three-annotator labels of the demo golden set (not human data)."""
    folder = resources.files("evalbench").joinpath("demo").joinpath("golden")
    return Path(str(folder.joinpath("annotators_demo.jsonl")))


def _golden_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    if path.suffix.lower() == ".csv":
        return _golden_csv(path)
    if path.suffix.lower() not in (".jsonl", ".json"):
        raise GoldenSetError(f"{path}: a golden set must be .csv or .jsonl (got {path.suffix!r})")
    return _golden_jsonl(path)


def _golden_csv(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    _, rows = iter_csv(path, error=GoldenSetError)  # strict UTF-8, a BOM dropped
    for line, row in rows:
        if None in row:
            raise GoldenSetError(f"{path}:{line}: more cells than header columns")
        yield line, dict(row)


def _golden_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    return iter_jsonl(path, error=GoldenSetError)


def _golden_text(value: Any, where: str, *, required: bool) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise GoldenSetError(f"{where}: empty")
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise GoldenSetError(f"{where}: expected text, got {json.dumps(value)[:60]}")
    return str(value)


def _golden_score(value: Any, dim: Dimension, where: str) -> float:
    if value is None or (isinstance(value, str) and not value.strip()):
        raise GoldenSetError(f"{where}: missing human score")
    try:
        if isinstance(value, bool):
            raise ValueError
        number = float(value)
    except (TypeError, ValueError):
        raise GoldenSetError(f"{where}: {value!r} is not a number") from None
    if not (math.isfinite(number) and dim.scale_min <= number <= dim.scale_max):
        raise GoldenSetError(
            f"{where}: {value!r} is outside the {dim.name} scale "
            f"{dim.scale_min:g}-{dim.scale_max:g}"
        )
    if not number.is_integer():  # exact agreement, kappas and confusions need scale points
        raise GoldenSetError(
            f"{where}: {value!r} is not a whole number; golden scores are points of the "
            f"{dim.name} scale (several annotators' scores are combined by the study, not "
            "averaged in the file)"
        )
    return number


def _golden_row(
    path: Path,
    line: int,
    raw: dict[str, Any],
    rubric: Rubric,
    required: tuple[str, ...] = GOLDEN_REQUIRED,
) -> dict[str, Any]:
    def where(col: str) -> str:
        return f"{path}:{line}: column {col!r}"

    names = dimension_names(rubric)
    unknown = [c for c in raw if c.startswith("human_") and c[6:] not in names]
    if unknown:
        raise GoldenSetError(
            f"{where(unknown[0])}: not a dimension of rubric {rubric.name!r} ({', '.join(names)})"
        )
    row = dict(raw)
    for col in required:
        if col not in raw:
            raise GoldenSetError(f"{where(col)}: missing (required: {', '.join(GOLDEN_REQUIRED)})")
        row[col] = _golden_text(raw[col], where(col), required=True)
    row["reference"] = _golden_text(raw.get("reference"), where("reference"), required=False)
    for dim in rubric.dimensions:
        row[f"human_{dim.name}"] = _golden_score(
            raw.get(f"human_{dim.name}"), dim, where(f"human_{dim.name}")
        )
    row["line"] = line
    return row


def load_golden(
    source: str | Path, rubric: Rubric | str = "fine_grained", reference: Policy = "median"
) -> pd.DataFrame:
    """Load and validate a golden set: items with human scores per rubric dimension.

    Schema (CSV with a header row, or JSON Lines with one object per line): ``item``
    (unique id), ``question``, ``answer``, optional ``reference``, and ``human_<dimension>``
    for every dimension of ``rubric`` (a number on that dimension's scale, e.g.
    ``human_accuracy`` 1–10 for ``fine_grained``). Other columns are kept as metadata.

    A file with an ``annotator`` column (several annotators) is read with
    :func:`load_annotations` and combined by :func:`golden_from_annotations`.

    Args:
        source: ``"demo"`` (:func:`demo_golden_path`) or a ``.csv`` / ``.jsonl`` path.
        rubric: the rubric the human scores follow (a ``Rubric`` or a built-in name).
        reference: several annotators only: how their scores become the item's score.

    Returns:
        One row per item, with ``reference`` (None if absent), ``human_<dim>`` floats,
        ``human_weighted`` (the rubric's weighted score) and ``line`` (source line).

    Raises:
        GoldenSetError: one line naming the file, line and column of the first problem.
    """
    rubric = get_rubric(rubric) if isinstance(rubric, str) else rubric
    path = demo_golden_path() if str(source) == "demo" else Path(source)
    if not path.is_file():
        raise GoldenSetError(f"{path}: golden set not found")
    if has_annotators(path):
        annotations = load_annotations(path, rubric, texts=True)
        return golden_from_annotations(annotations, rubric, reference)
    sources.record_read(path)
    rows: list[dict[str, Any]] = []
    first_line: dict[str, int] = {}
    for line, raw in _golden_records(path):
        row = _golden_row(path, line, raw, rubric)
        if row["item"] in first_line:
            earlier = first_line[row["item"]]
            raise GoldenSetError(
                f"{path}:{line}: column 'item': {row['item']!r} repeats line {earlier}"
            )
        first_line[row["item"]] = line
        rows.append(row)
    if not rows:
        raise GoldenSetError(f"{path}: no items")
    return _with_weighted(texts_frame(rows), rubric)


def texts_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """``rows`` as a DataFrame whose missing texts are ``None``: pandas 3 stores a text
    column as strings with NaN for a missing one, which no text field accepts."""
    frame = pd.DataFrame(rows)
    texts = [c for c in frame if not pd.api.types.is_numeric_dtype(frame[c])]
    frame[texts] = frame[texts].astype(object).where(frame[texts].notna(), None)
    return frame


def _with_weighted(frame: pd.DataFrame, rubric: Rubric) -> pd.DataFrame:
    names = dimension_names(rubric)
    frame["human_weighted"] = [
        weighted_score(rubric, dict(zip(names, scores, strict=True)))
        for scores in frame[[f"human_{d}" for d in names]].to_numpy()
    ]
    return frame


# --------------------------------------------------------------------------- several annotators


def has_annotators(path: Path) -> bool:
    """Whether the golden-set file has an ``annotator`` column (read from its first row)."""
    for _, raw in _golden_records(path):
        return "annotator" in raw
    return False


def load_annotations(
    source: str | Path, rubric: Rubric | str = "fine_grained", *, texts: bool | None = None
) -> pd.DataFrame:
    """Several annotators' scores: one row per item and annotator, validated.

    Args:
        source: ``"demo"`` (:func:`demo_annotations_path`, simulated) or a ``.csv`` /
            ``.jsonl`` with ``item, annotator, human_<dimension>`` (whole scale points) and,
            for a self-contained golden set, ``question, answer`` (``reference`` optional),
            the same on every row of an item. ``simulated`` (true/false) is kept.
        rubric: the rubric the scores follow.
        texts: require ``question`` and ``answer`` (default: when the file has them).

    Returns:
        ``item, annotator, human_<dim>..., line`` (+ the texts and ``simulated``).

    Raises:
        GoldenSetError: naming the file, line and column (a repeated item and annotator, an
            item whose question or answer differs between rows, a score off the scale).
    """
    rubric = get_rubric(rubric) if isinstance(rubric, str) else rubric
    path = demo_annotations_path() if str(source) == "demo" else Path(source)
    if not path.is_file():
        raise GoldenSetError(f"{path}: annotations not found")
    sources.record_read(path)
    rows: list[dict[str, Any]] = []
    seen: dict[tuple[str, str], int] = {}
    texts_of: dict[str, tuple[int, tuple[Any, ...]]] = {}
    for line, raw in _golden_records(path):
        if texts is None:
            texts = "question" in raw
        required = ("item", "annotator", *(("question", "answer") if texts else ()))
        row = _golden_row(path, line, raw, rubric, required)
        key = (row["item"], row["annotator"])
        if key in seen:
            raise GoldenSetError(
                f"{path}:{line}: column 'annotator': item {key[0]!r} by {key[1]!r} repeats "
                f"line {seen[key]}"
            )
        seen[key] = line
        shown = tuple(row.get(c) for c in ("question", "answer", "reference"))
        if texts and texts_of.setdefault(row["item"], (line, shown))[1] != shown:
            raise GoldenSetError(
                f"{path}:{line}: item {row['item']!r}: question, answer or reference differs "
                f"from line {texts_of[row['item']][0]}"
            )
        rows.append(row)
    if not rows:
        raise GoldenSetError(f"{path}: no annotations")
    frame = texts_frame(rows)
    if "simulated" in frame:
        frame["simulated"] = frame["simulated"].map(_truthy)
    return frame


def _truthy(value: Any) -> bool:
    return value is True or str(value).strip().lower() in ("true", "1", "yes")


def golden_from_annotations(
    annotations: pd.DataFrame, rubric: Rubric, policy: Policy
) -> pd.DataFrame:
    """The one-row-per-item golden set of several annotators' scores.

    Each item's ``human_<dim>`` is :func:`evalbench.labels.human_reference` by ``policy``
    (mean, median, or the score more than half of the annotators gave); an item without a
    reference on some dimension (``majority`` without one) is left out and listed in
    ``frame.attrs["no_reference"]``. ``n_annotators`` says how many scored each item.
    """
    cols = [f"human_{d}" for d in dimension_names(rubric)]
    order = list(dict.fromkeys(annotations["item"]))  # file order, not sorted
    ref = human_reference(annotations, cols, policy).loc[order]
    missing = [i for i in order if ref.loc[i, cols].isna().any()]
    texts = annotations.drop_duplicates("item").set_index("item")
    keep = [c for c in ("question", "answer", "reference", "line") if c in texts]
    frame = texts.loc[ref.index, keep].join(ref).drop(index=missing).reset_index()
    frame = _with_weighted(frame, rubric)
    frame.attrs["no_reference"] = missing
    return frame
