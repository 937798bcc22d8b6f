"""HLE data: the questions and the official predictions files.

Humanity's Last Exam (Phan et al., 2025, arXiv:2501.14249) is a set of expert-written
closed-ended questions (``exactMatch`` or ``multipleChoice``), some with an image, in
categories such as Math, Physics or Humanities/Social Science. The test split is the gated
Hugging Face dataset ``cais/hle`` (2,500 questions on its card; the contents change over time,
see ``hle-rolling-changes.txt`` in centerforaisafety/hle, so a revision is pinned).

This is the I/O edge of the benchmark:

- :func:`load` reads the hub dataset, a local folder / ``.jsonl`` / ``.json`` / ``.parquet``
  with the same fields, or the offline demo suite (``demo``: written for evalbench, *not*
  HLE); every bad row is one error naming ``file:line`` and the field;
- :func:`read_predictions` / :func:`write_predictions` read and write the official
  tooling's files (``hle_<model>.json``: ``{id: {"model", "response", "usage"}}``;
  ``judged_hle_<model>.json`` adds ``judge_response``), as
  ``hle_eval/run_model_predictions.py`` and ``hle_eval/run_judge_results.py`` of
  centerforaisafety/hle @ 26dca2e253b405105b4c3d8c2f5af06f86f90c66 write them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict

from evalbench.records import (
    leads_outside,
    parse_json,
    read_utf8,
    text_lines,
    to_json,
    write_atomic,
)
from evalbench.settings import get_settings, secret
from evalbench.sources import DataUnavailable, record_read

HF_REPO = "cais/hle"
HF_URL = "https://huggingface.co/datasets/cais/hle"
HF_SPLIT = "test"
HF_REVISION = "5a81a4c7271a2a2a312b9a690f0c2fde837e4c29"
"""Default hub commit: the one several independent third-party loaders pin (2,500 rows);
community-observed, not checked by us against the hub. Set ``revision:`` to pin another."""
HF_TOKEN_ENV = "HF_TOKEN"
OFFICIAL_REPO = "centerforaisafety/hle"
OFFICIAL_COMMIT = "26dca2e253b405105b4c3d8c2f5af06f86f90c66"
ANSWER_TYPES = ("exactMatch", "multipleChoice")
DATA_SUFFIXES = (".jsonl", ".json", ".parquet")
DEMO_NOTE = "DEMO — not HLE"


class HleDataError(ValueError):
    """Bad HLE input: a malformed row or predictions entry; the message names where."""


class HleItem(BaseModel):
    """One HLE question, with the dataset's field names."""

    model_config = ConfigDict(frozen=True)

    id: str
    """Unique question id (``id``)."""
    question: str
    """The question text; multiple-choice questions list their choices in it."""
    image: str = ""
    """The image as the dataset gives it (a data URI or URL); ``""`` for text-only."""
    answer: str
    """The correct answer (a letter for multiple choice)."""
    answer_type: Literal["exactMatch", "multipleChoice"]
    """``exactMatch`` or ``multipleChoice``."""
    category: str
    """Broad category (``Math``, ``Physics``, ...): the stratum of every table."""
    raw_subject: str = ""
    """Finer subject as written by the author."""
    author_name: str = ""
    rationale: str = ""
    """The author's explanation of the answer (never shown to systems or the judge)."""

    @property
    def has_image(self) -> bool:
        """Whether the question comes with an image."""
        return bool(self.image)


# ---------------------------------------------------------------------------- HLE questions


def demo_path() -> Path:
    """Folder of the offline demo suite (``evalbench/demo/hle``): written for evalbench,
    **not HLE** (see its ``README.md``)."""
    return Path(str(resources.files("evalbench").joinpath("demo").joinpath("hle")))


def load(
    source: str | Path,
    *,
    revision: str | None = HF_REVISION,
    token_env: str = HF_TOKEN_ENV,
    categories: Iterable[str] | None = None,
) -> list[HleItem]:
    """Load HLE questions from the hub, the demo suite, a folder or a file.

    Args:
        source: ``"hf"`` (gated ``cais/hle``, split ``test``, needs ``HF_TOKEN``),
            ``"demo"`` (:func:`demo_path`, not HLE), a folder holding ``.jsonl``/``.json``/
            ``.parquet`` files with HLE's fields (read in name order, subfolders included,
            e.g. a hub snapshot), or one such file.
        revision: hub commit (``"hf"`` only).
        token_env: variable holding the Hugging Face token (``"hf"`` only).
        categories: keep only these categories (each must occur); ``None`` keeps all.

    Returns:
        The items in dataset order.

    Raises:
        HleDataError: a malformed row or duplicate id (naming file:line and field), or an
            unknown category in ``categories``.
        evalbench.settings.MissingSecret: ``"hf"`` without a token.
        evalbench.sources.DataUnavailable: ``"hf"`` offline, not granted or unreachable.
    """
    if source == "hf":
        rows: Iterable[tuple[str, Mapping[str, Any]]] = _hub_rows(revision, token_env)
    elif source == "demo":
        rows = _file_rows(demo_path() / "questions.jsonl")
    else:
        rows = (row for path in data_files(Path(source)) for row in _file_rows(path))
    items = _unique([(where, _parse_item(row, where)) for where, row in rows])
    if not items:
        raise HleDataError(f"{source}: no questions")
    return filter_categories(items, categories)


def data_files(path: Path) -> list[Path]:
    """The data files of a source: ``path`` itself, or every data file under the folder (one
    that leads outside it, through a symbolic link, is refused)."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise HleDataError(f"HLE source {path} does not exist")
    found = sorted(p for p in path.rglob("*") if p.suffix in DATA_SUFFIXES and p.is_file())
    if (file := leads_outside(found, path)) is not None:  # a symbolic link may lead anywhere
        raise HleDataError(f"{file}: leads outside the HLE folder {path} (to "
                           f"{file.resolve()}); refused")  # fmt: skip
    if not found:
        raise HleDataError(f"HLE folder {path} holds no {'/'.join(DATA_SUFFIXES)} file")
    return found


def filter_categories(items: Sequence[HleItem], categories: Iterable[str] | None) -> list[HleItem]:
    """The items of ``categories`` (all when ``None``); an unknown category is an error."""
    if categories is None:
        return list(items)
    wanted, known = set(categories), {it.category for it in items}
    unknown = sorted(wanted - known)
    if unknown:
        raise HleDataError(f"unknown categories {unknown}; the data has {sorted(known)}")
    return [it for it in items if it.category in wanted]


def split_images(items: Sequence[HleItem], exclude: bool) -> tuple[list[HleItem], int]:
    """``(kept, excluded)``: with ``exclude``, the questions with an image are left out."""
    if not exclude:
        return list(items), 0
    kept = [it for it in items if not it.has_image]
    return kept, len(items) - len(kept)


def items_frame(items: Sequence[HleItem]) -> pd.DataFrame:
    """One row per item (the image as a flag, not its data)."""
    rows = [
        it.model_dump(exclude={"image", "rationale"}) | {"has_image": it.has_image} for it in items
    ]
    return pd.DataFrame(rows)


def category_counts(items: Sequence[HleItem]) -> pd.DataFrame:
    """Questions per category and answer type: ``category, exactMatch, multipleChoice,
    with_image, total`` (a ``total`` row last)."""
    frame = items_frame(items)
    table = pd.crosstab(frame["category"], frame["answer_type"]).reindex(
        columns=list(ANSWER_TYPES), fill_value=0
    )
    table["with_image"] = frame.groupby("category")["has_image"].sum()
    table["total"] = table[list(ANSWER_TYPES)].sum(axis=1)
    table.loc["total"] = table.sum()
    return table.reset_index().rename_axis(columns=None)


def _hub_rows(revision: str | None, token_env: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    purpose = (
        f"loading the gated Hugging Face dataset {HF_REPO} (accept its terms at "
        f"{HF_URL}, then create a read token)"
    )
    token = secret(token_env, purpose=purpose)
    if get_settings().offline:
        raise DataUnavailable(f"{HF_REPO}: EVALBENCH_OFFLINE is set, so the hub is not asked")
    from datasets import load_dataset  # slow to import; only the hub path needs it

    try:
        dataset = load_dataset(HF_REPO, split=HF_SPLIT, revision=revision, token=token)
    except Exception as exc:  # gated, offline, unknown revision: the study is skipped, saying why
        raise DataUnavailable(f"{HF_REPO}@{revision}: {type(exc).__name__}: {exc}") from exc
    wanted = [c for c in HleItem.model_fields if c in dataset.column_names]
    dataset = dataset.select_columns(wanted)  # the image_preview columns are never decoded
    for cache in dataset.cache_files:
        record_read(cache["filename"], label=f"{HF_REPO}@{revision}")
    for index, row in enumerate(dataset, start=1):
        yield f"{HF_REPO}@{revision} row {index}", row


def _file_rows(path: Path) -> Iterator[tuple[str, Mapping[str, Any]]]:
    record_read(path)
    if path.suffix == ".parquet":
        frame = pd.read_parquet(path)
        for index, row in enumerate(frame.to_dict("records"), start=1):
            yield f"{path} row {index}", row
    elif path.suffix == ".json":
        rows = _json_document(path)
        if not isinstance(rows, list):
            raise HleDataError(f"{path}: expected a JSON list of questions")
        for index, row in enumerate(rows, start=1):
            yield f"{path} item {index}", _object(row, f"{path} item {index}")
    else:
        yield from jsonl_rows(path)


def jsonl_rows(path: Path) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """``(path:line, object)`` for every non-blank line; a bad line names itself."""
    for lineno, line in text_lines(path, error=HleDataError):
        if not line.strip():
            continue
        where = f"{path}:{lineno}"
        try:
            value = parse_json(line)
        except json.JSONDecodeError as exc:
            raise HleDataError(f"{where}: not valid JSON ({exc.msg})") from None
        yield where, _object(value, where)


def _json_document(path: Path) -> Any:
    try:
        return parse_json(read_utf8(path, error=HleDataError))
    except json.JSONDecodeError as exc:
        raise HleDataError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None


def _object(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise HleDataError(f"{where}: expected a JSON object, got {type(value).__name__}")
    return value


def _parse_item(row: Mapping[str, Any], where: str) -> HleItem:
    answer_type = _text(row, "answer_type", where)
    if answer_type not in ANSWER_TYPES:
        raise HleDataError(
            f"{where}: field 'answer_type' must be exactMatch or multipleChoice, "
            f"got {answer_type!r}"
        )
    return HleItem(
        id=_text(row, "id", where),
        question=_text(row, "question", where),
        image=_text(row, "image", where, required=False),
        answer=_text(row, "answer", where),
        answer_type=answer_type,  # type: ignore[arg-type]
        category=_text(row, "category", where),
        raw_subject=_text(row, "raw_subject", where, required=False),
        author_name=_text(row, "author_name", where, required=False),
        rationale=_text(row, "rationale", where, required=False),
    )


def _text(row: Mapping[str, Any], field: str, where: str, *, required: bool = True) -> str:
    value = row.get(field)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        if required:
            raise HleDataError(f"{where}: missing field {field!r}")
        return ""
    if not isinstance(value, str):
        raise HleDataError(f"{where}: field {field!r} must be a string, got {value!r:.60}")
    if required and not value.strip():
        raise HleDataError(f"{where}: field {field!r} is empty")
    return value


def _unique(parsed: list[tuple[str, HleItem]]) -> list[HleItem]:
    """The items of ``parsed`` (``(where, item)``); a repeated id names both places."""
    first: dict[str, str] = {}
    for where, item in parsed:
        if item.id in first:
            raise HleDataError(f"{where}: duplicate question id {item.id!r} (first at "
                               f"{first[item.id]})")  # fmt: skip
        first[item.id] = where
    return [item for _, item in parsed]


# ---------------------------------------------------------------------------- predictions


class Prediction(BaseModel):
    """One entry of an official predictions file."""

    model: str = ""
    response: str
    usage: dict[str, Any] = {}


def read_predictions(path: Path | str) -> dict[str, Prediction]:
    """An official predictions file: ``{id: {"model", "response", "usage"}}`` (a judged
    file, whose entries also hold ``judge_response``, reads the same; that key is ignored).

    Raises:
        HleDataError: not a JSON object of objects, or an entry whose ``response`` is not a
            string (the message names the file and the id).
    """
    path = Path(path)
    record_read(path)
    document = _json_document(path)
    if not isinstance(document, dict):
        raise HleDataError(f"{path}: expected a JSON object keyed by question id")
    out: dict[str, Prediction] = {}
    for key, entry in document.items():
        where = f"{path}: entry {key!r}"
        entry = _object(entry, where)
        if not isinstance(entry.get("response"), str):
            raise HleDataError(f"{where}: field 'response' must be a string")
        usage: dict[str, Any] = entry["usage"] if isinstance(entry.get("usage"), dict) else {}
        out[key] = Prediction(
            model=str(entry.get("model") or ""), response=entry["response"], usage=usage
        )
    return out


def write_predictions(path: Path, entries: Mapping[str, Mapping[str, Any]]) -> Path:
    """Write an official-format predictions (or judged) file: a JSON object, indent 4."""
    write_atomic(path, to_json(dict(entries), indent=4))
    return path


def safe_name(name: str) -> str:
    """A file-name-safe form of a system name (letters, digits, ``-._``)."""
    cleaned = "".join(c if c.isalnum() or c in "-._" else "_" for c in name)
    return cleaned.strip("._") or "system"
