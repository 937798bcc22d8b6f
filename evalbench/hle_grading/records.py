"""Expert grading's types: its params, the grade record and the result the notebook shows.

``records/grades.jsonl`` holds :class:`GradeRecord` lines (one graded answer each);
:class:`HleGradingResult` is what :func:`~.study.run` returns.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

import pandas as pd
from pydantic import Field, ValidationInfo, field_validator, model_validator

from evalbench.agents import SystemSpec
from evalbench.models import ModelSpec
from evalbench.params import StudyParams, data_path
from evalbench.records import Record

from .data import ExpertItem
from .metrics import GradingSummary

DATASET_SOURCE = "dataset"
"""The source name of the expert set's own answers."""


class HleGradingParams(StudyParams):
    """Parameters of an expert-grading study (``study: hle_grading``)."""

    study: Literal["hle_grading"] = "hle_grading"
    dataset: str = "demo"
    """``demo`` (not HLE; invented "human" scores) or a ``.jsonl`` (see :func:`~.data.load`),
    relative to the params file."""
    systems: list[SystemSpec] = Field(default_factory=list)
    """Systems whose answers to the expert questions are graded beside the set's own (chat
    models or agents; none: only the set's answers)."""
    judge: ModelSpec
    """The rubric judge (the ``hle`` rubric)."""
    tolerance: float = Field(default=10.0, ge=0, le=100)
    """±k points of the agreement with the human baseline."""

    @field_validator("dataset")
    @classmethod
    def _dataset_path(cls, value: str, info: ValidationInfo) -> str:
        return value if value == "demo" else str(data_path(value, info))

    @model_validator(mode="after")
    def _check_names(self) -> HleGradingParams:
        names = [s.name for s in self.systems]
        if len(set(names)) != len(names):
            raise ValueError(f"systems: names must be unique (got {names})")
        clash = sorted(set(names) & {self.judge.name, DATASET_SOURCE})
        if clash:
            raise ValueError(
                f"a system may not be named like the judge or '{DATASET_SOURCE}' "
                f"(the expert set's own answers): {clash}"
            )
        return self

    def model_specs(self) -> list[ModelSpec]:
        """The systems and the judge."""
        return [*self.systems, self.judge]


class GradeRecord(Record):
    """A line of ``records/grades.jsonl``: one graded answer to one expert question."""

    id: str
    source: str
    """Whose answer: ``dataset`` (the set's own answer) or a system's name."""
    category: str
    difficulty: str
    judge: str | None = None
    status: Literal["scored", "unscored", "no_response"]
    unscored_kind: str | None = None
    unscored_reason: str | None = None
    answer: str | None = None
    error: str | None = None
    """Why there is no answer (the system's call failed, or an agent gave none)."""
    judge_error: str | None = None
    score_accuracy: float | None = None
    score_completeness: float | None = None
    score_relevance: float | None = None
    score_coherence: float | None = None
    score_depth: float | None = None
    score_timeliness: float | None = None
    score_overall: float | None = None
    """Mean of the six dimension scores, computed here (the rubric's weighted score)."""
    judge_overall: float | None = None
    """The overall score the judge wrote itself (kept for comparison, never used)."""
    judge_confidence: float | None = None
    """The judge's confidence in its grading (0-100)."""
    human_accuracy: float | None = None
    human_completeness: float | None = None
    human_relevance: float | None = None
    human_coherence: float | None = None
    human_depth: float | None = None
    human_timeliness: float | None = None
    human_overall: float | None = None
    """The human baseline (``dataset`` answers only; given, or the mean of the six)."""
    judge_raw: str | None = None


class HleGradingResult(NamedTuple):
    """Everything an expert-grading study computed (what the notebook shows)."""

    params: HleGradingParams
    items: list[ExpertItem]
    """The expert questions graded (after the tier)."""
    records: pd.DataFrame
    """One row per graded answer (``records/grades.jsonl``)."""
    summary: GradingSummary
    sources: list[str]
    """``dataset`` (if the set has answers) and the systems graded, in order."""
    usage: pd.DataFrame
    """:meth:`evalbench.runs.Run.recorded_usage`."""
    simulated: frozenset[str]
