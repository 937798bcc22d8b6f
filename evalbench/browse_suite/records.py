"""The browse suite's types: its params, the records it writes and the result the notebook
shows.

``records/suite.jsonl`` holds :class:`SuiteRecord` lines (one system on one task),
``records/suite_criteria.jsonl`` :class:`CriterionRecord` lines; :class:`BrowseSuiteResult`
is what :func:`~.study.run` returns.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, NamedTuple

import pandas as pd
from pydantic import AfterValidator, Field, ValidationInfo, model_validator

from evalbench.agents import SystemSpec
from evalbench.judge.spec import JudgeModel
from evalbench.models import ModelSpec
from evalbench.models.types import check_accuracy_keys
from evalbench.params import StudyParams, data_path
from evalbench.records import Record

from .data import LEVELS, SuiteTask


def _demo_or_path(value: str, info: ValidationInfo) -> str:
    return value if value == "demo" else str(data_path(value, info))


def _levels(levels: list[int]) -> list[int]:
    if not levels or any(level not in LEVELS for level in levels):
        raise ValueError(f"levels must be a non-empty subset of 1-5 (got {levels})")
    return sorted(set(levels))


class CriteriaJudge(JudgeModel):
    """The model that grades the ``judge`` criteria."""


class BrowseSuiteParams(StudyParams):
    """Parameters of a browse-suite study (``study: browse_suite``)."""

    study: Literal["browse_suite"] = "browse_suite"
    systems: list[SystemSpec] = Field(min_length=1)
    """The systems under test (unique names): agents browse, chat models answer unaided."""
    tasks: Annotated[str, AfterValidator(_demo_or_path)] = "demo"
    """``demo`` (evalbench's 30 tasks) or a tasks YAML (relative to the params file)."""
    site: Annotated[str, AfterValidator(_demo_or_path)] = "demo"
    """``demo`` or a folder holding ``site/`` (the pages) and ``data/`` (dynamic routes)."""
    levels: Annotated[list[int], AfterValidator(_levels)] = Field(
        default_factory=lambda: [1, 2, 3, 4, 5]
    )
    """Levels to keep."""
    success_threshold: float = Field(default=1.0, gt=0, le=1)
    """A task succeeds when its score is at least this (1: every criterion fully met)."""
    judge: CriteriaJudge
    """Grades the ``judge`` criteria (free-text analysis)."""
    failures_shown: int = Field(default=8, ge=0, le=50)
    """Trajectories of failed tasks shown in the report."""

    @model_validator(mode="before")
    @classmethod
    def _old_shape(cls, data: Any) -> Any:
        """Name what moved when a file still has browsecomp's ``suite:`` section."""
        if isinstance(data, dict) and "suite" in data:
            raise ValueError(
                "suite: its fields go at the top level now (tasks, site, levels, "
                "success_threshold, judge, failures_shown)"
            )
        return data

    @model_validator(mode="after")
    def _check_names(self) -> BrowseSuiteParams:
        names = [s.name for s in self.systems]
        if len(set(names)) != len(names):
            raise ValueError(f"systems: names must be unique (got {names})")
        if self.judge.name in names:
            raise ValueError(f"a system may not share a name with the judge: {self.judge.name}")
        for i, system in enumerate(self.systems):
            check_accuracy_keys(system, f"systems.{i}", [str(lv) for lv in LEVELS], "levels")
        return self

    def model_specs(self) -> list[ModelSpec]:
        """The systems and the criteria judge."""
        return [*self.systems, self.judge]


class SuiteRecord(Record):
    """A line of ``records/suite.jsonl``: one system on one task."""

    system: str
    task_id: str
    level: int
    kind: str
    state: str
    """``answered``, ``timeout``, ``step_limit`` or ``error``."""
    status: str
    """``scored``, ``unscored`` (a judge criterion could not be graded) or ``not answered``."""
    score: float | None = None
    """Weighted criteria score in [0, 1] (``None`` unless scored)."""
    success: bool | None = None
    """Score at or above the success threshold (``None`` when unscored)."""
    answer: str | None = None
    error: str | None = None
    detail: str | None = None
    steps: int = 0
    tool_calls: int = 0
    search_calls: int = 0
    pages_opened: int = 0
    wall_s: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    simulated: bool = False


class CriterionRecord(Record):
    """A line of ``records/suite_criteria.jsonl``: one criterion on one answered task."""

    system: str
    task_id: str
    level: int
    index: int
    type: str
    field: str | None
    weight: float
    score: float | None
    """``None``: unscored (judge)."""
    note: str


class BrowseSuiteResult(NamedTuple):
    """Everything a browse-suite study computed (what the notebook shows)."""

    params: BrowseSuiteParams
    tasks: list[SuiteTask]
    site: pd.DataFrame
    """The start-page check (every one served 200)."""
    records: pd.DataFrame
    """The :class:`SuiteRecord` lines."""
    criteria: pd.DataFrame
    """The :class:`CriterionRecord` lines."""
    levels: pd.DataFrame
    """:func:`~.metrics.success_tables` by level."""
    kinds: pd.DataFrame
    """:func:`~.metrics.kind_states` by task type."""
    kind_scores: pd.DataFrame
    """:func:`~.metrics.success_tables` by task type (the same "all" rows)."""
    effort: pd.DataFrame
    """:func:`~.metrics.effort_by_level`."""
    criteria_types: pd.DataFrame
    """:func:`~.metrics.criteria_table`."""
    steps: tuple[dict[str, Any], ...]
    """Every step of the agents' trajectories."""
    served: int
    """Requests the local web answered during the run."""
    usage: pd.DataFrame
    """Calls, tokens and cost per system and judge (:meth:`~evalbench.runs.Run.recorded_usage`)."""
    simulated: frozenset[str]
    """Names of the simulated systems and judge."""
