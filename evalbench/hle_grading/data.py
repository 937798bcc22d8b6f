"""The expert-grading set: research questions with a reference answer, criteria, an answer to
grade and (optionally) human expert scores of that answer.

A JSON Lines file, one item per line: ``id, category, difficulty`` (easy | medium | hard |
expert), ``question, reference_answer``, optional ``criteria`` (a list of strings),
``answer`` (the set's own answer to grade) and ``human_scores`` (``{"accuracy": 0-100, ...
all six dimensions, "overall": optional}``). Every bad line is one :class:`GradingDataError`
naming ``file:line`` and the field. ``"demo"`` is evalbench's own 32-item set (invented
questions, answers and "human" scores: not HLE, not human data).
"""

from __future__ import annotations

import math
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, ValidationError

from evalbench.records import iter_jsonl
from evalbench.sources import record_read

DIFFICULTIES = ("easy", "medium", "hard", "expert")
DIMENSIONS = ("accuracy", "completeness", "relevance", "coherence", "depth", "timeliness")
"""The six dimensions of the ``hle`` rubric (:mod:`evalbench.judge.rubrics`), 0-100 each."""
DEMO_NOTE = "DEMO — not HLE"


class GradingDataError(ValueError):
    """A malformed expert-set line (the message names file:line and the field)."""


def _text(value: str) -> str:
    if not value.strip():
        raise ValueError("must be a non-empty string")
    return value


def _criteria(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)) or not all(
        isinstance(c, str) and c.strip() for c in value
    ):
        raise ValueError("must be a list of non-empty strings")
    return tuple(value)


def _human_scores(value: dict[str, Any] | None) -> dict[str, float] | None:
    if value is None:
        return None
    unknown = sorted(set(value) - {*DIMENSIONS, "overall"})
    missing = [d for d in DIMENSIONS if d not in value]
    if unknown or missing:
        raise ValueError(
            f"needs all six dimensions {list(DIMENSIONS)} (and optionally 'overall'); "
            f"unknown {unknown}, missing {missing}"
        )
    for key, score in value.items():
        number = isinstance(score, (int, float)) and not isinstance(score, bool)
        if not number or not 0 <= score <= 100:
            raise ValueError(f"{key} must be a number 0-100, got {score!r}")
    return {k: float(v) for k, v in value.items()}


Text = Annotated[str, AfterValidator(_text)]


class ExpertItem(BaseModel):
    """One item of the expert-grading set."""

    model_config = ConfigDict(frozen=True, strict=True)

    id: Text
    category: Text
    difficulty: Literal["easy", "medium", "hard", "expert"]
    question: Text
    reference_answer: Text
    criteria: Annotated[tuple[str, ...], BeforeValidator(_criteria)] = ()
    """Item-specific grading criteria, shown to the judge."""
    answer: Text | None = None
    """The set's own answer to grade (the ``dataset`` source); ``None``: only systems'."""
    human_scores: Annotated[dict[str, Any] | None, AfterValidator(_human_scores)] = None
    """Human scores of ``answer``: all six dimensions (0-100), optionally ``overall``."""

    def human(self, dimension: str) -> float:
        """The human score of a dimension; ``overall`` is the given one, else the mean of the
        six; NaN without a human baseline."""
        if not self.human_scores:
            return math.nan
        if dimension == "overall" and "overall" not in self.human_scores:
            return sum(self.human_scores[d] for d in DIMENSIONS) / len(DIMENSIONS)
        return float(self.human_scores[dimension])


def demo_path() -> Path:
    """The demo expert set (``evalbench/demo/hle/expert.jsonl``): not HLE, not human data."""
    folder = resources.files("evalbench").joinpath("demo").joinpath("hle")
    return Path(str(folder.joinpath("expert.jsonl")))


def load(source: str | Path) -> list[ExpertItem]:
    """The expert set: ``"demo"`` (:func:`demo_path`) or a JSON Lines file, in file order.

    Raises:
        GradingDataError: a missing or empty file, a malformed line or a duplicate id.
    """
    path = demo_path() if source == "demo" else Path(source)
    if not path.is_file():
        raise GradingDataError(f"expert set {path} does not exist")
    record_read(path)
    items: dict[str, ExpertItem] = {}
    for number, row in iter_jsonl(path, error=GradingDataError):
        item = _parse(row, f"{path}:{number}")
        if item.id in items:
            raise GradingDataError(f"{path}:{number}: duplicate id {item.id!r}")
        items[item.id] = item
    if not items:
        raise GradingDataError(f"expert set {path} is empty")
    return list(items.values())


def _parse(row: dict[str, Any], where: str) -> ExpertItem:
    fields = {k: v for k, v in row.items() if k in ExpertItem.model_fields}
    try:
        return ExpertItem.model_validate(fields)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in error["loc"][:1])
        message = error["msg"].removeprefix("Value error, ")
        raise GradingDataError(f"{where}: field {field!r}: {message}") from None
