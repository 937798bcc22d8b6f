"""BrowseComp's types: its params, the records it writes and the result the notebook shows.

``records/official.jsonl`` holds :class:`OfficialRecord` lines (ids, verdicts, confidences;
no question, answer or response text); :class:`BrowseCompResult` is what
:func:`~.study.run` returns.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, NamedTuple

import pandas as pd
from pydantic import AfterValidator, Field, ValidationInfo, model_validator

from evalbench.agents import SystemSpec
from evalbench.judge.spec import JudgeModel
from evalbench.models import ModelSpec
from evalbench.params import StudyParams, data_path
from evalbench.records import Record

from .scoring import Style


def _official_dataset(value: str, info: ValidationInfo) -> str:
    return value if value in ("browsecomp", "browsecomp_zh") else str(data_path(value, info))


class BrowseCompSystem(SystemSpec):
    """A system under test: a chat model or an agent (:class:`evalbench.agents.SystemSpec`)."""

    sim_confidence_shift: float = Field(default=0.0, ge=0, le=1, exclude_if=lambda v: v == 0)
    """``sim`` only: stated confidence = p + shift × (1 − p) for a question the system gets
    right with chance p (0: calibrated)."""


class Grader(JudgeModel):
    """The grader (official prompt)."""


class BrowseCompParams(StudyParams):
    """Parameters of a BrowseComp study (``study: browsecomp``)."""

    study: Literal["browsecomp"] = "browsecomp"
    systems: list[BrowseCompSystem] = Field(min_length=1)
    """The systems under test (unique names)."""
    dataset: Annotated[str, AfterValidator(_official_dataset)]
    """``browsecomp`` (OpenAI's CSV), ``browsecomp_zh`` (the registered xlsx) or a local
    ``.csv`` (BrowseComp columns) / ``.xlsx`` (BrowseComp-ZH columns)."""
    grader: Grader
    """The grader (official: ``gpt-4.1-2025-04-14`` at temperature 0.5 for BrowseComp,
    ``gpt-4o`` at 0.6 for BrowseComp-ZH)."""
    allowed_hosts: list[str] = Field(default_factory=list)
    """Hosts the reference agent's web tools may reach besides 127.0.0.1 (``"*"``: any)."""
    calibration_bin_size: int = Field(default=100, ge=2)
    """β of HLE's calibration error (the official 100)."""
    reliability_bins: int = Field(default=10, ge=2, le=50)
    """Equal-width confidence bins of the reliability diagram."""
    examples: int = Field(default=3, ge=0, le=10)
    """Graded questions shown (decrypted) in the report; nothing else is shown."""

    @model_validator(mode="before")
    @classmethod
    def _old_shape(cls, data: Any) -> Any:
        """Name what moved when a file still has the two-part shape of before the split."""
        if isinstance(data, dict) and "suite" in data:
            raise ValueError(
                "suite: the offline browse suite is now its own study (study: browse_suite, "
                "the suite's fields at the top level)"
            )
        if isinstance(data, dict) and "official" in data:
            raise ValueError(
                "official: its fields go at the top level now (dataset, grader, allowed_hosts, "
                "calibration_bin_size, reliability_bins, examples)"
            )
        return data

    @model_validator(mode="after")
    def _check_names(self) -> BrowseCompParams:
        names = [s.name for s in self.systems]
        if len(set(names)) != len(names):
            raise ValueError(f"systems: names must be unique (got {names})")
        if self.grader.name in names:
            raise ValueError(f"a system may not share a name with the grader: {self.grader.name}")
        return self

    def model_specs(self) -> list[ModelSpec]:
        """The systems and the grader."""
        return [*self.systems, self.grader]


class OfficialRecord(Record):
    """A line of ``records/official.jsonl``: one system on one question (no question,
    answer or response text: those stay in memory and in the response records)."""

    system: str
    id: str
    topic: str
    state: str
    status: str
    """``scored``, ``unscored`` (the grader's reply has no readable verdict) or ``not answered``."""
    correct: bool | None = None
    confidence: float | None = None
    """The grader's extracted confidence (0-100; ``None`` when missing or invalid)."""
    grade_note: str | None = None
    reference_grade: str
    """What the published simple-evals ``grade_sample`` returns (``"correct: yes"``...)."""
    reference_correct: bool
    """Its verdict (always false once the grader follows the format)."""
    pr93_correct: bool
    """The verdict of the ``group(1)`` fix proposed upstream."""
    zh_verdict: str
    """BrowseComp-ZH's reading: ``yes``/``no``/``none``."""
    zh_confidence: int
    """BrowseComp-ZH's confidence (0 when unparsed)."""
    error: str | None = None
    steps: int | None = None
    search_calls: int | None = None
    pages_opened: int | None = None
    cost_usd: float | None = None
    simulated: bool = False


class BrowseCompResult(NamedTuple):
    """Everything a BrowseComp study computed (what the notebook shows)."""

    params: BrowseCompParams
    style: Style
    """``browsecomp`` or ``browsecomp_zh``: which official prompts and readings apply."""
    topics: dict[str, int]
    """Questions per topic (after the tier), largest first."""
    records: pd.DataFrame
    """The :class:`OfficialRecord` lines."""
    accuracy: pd.DataFrame
    """:func:`~.metrics.official_accuracy`."""
    topic_accuracy: pd.DataFrame
    """:func:`~.metrics.topic_accuracy`."""
    calibration: pd.DataFrame
    """:func:`~.metrics.calibration_table`."""
    reliability: pd.DataFrame
    """:func:`~.metrics.reliability` (confidences as fractions)."""
    effort: pd.DataFrame
    """:func:`~.metrics.browsing_effort` (agents only; empty without agents)."""
    examples: list[dict[str, Any]]
    """A few graded questions with their (decrypted) text, for the report only."""
    usage: pd.DataFrame
    """Calls, tokens and cost per system and grader (:meth:`~evalbench.runs.Run.recorded_usage`)."""
    simulated: frozenset[str]
    """Names of the simulated systems and grader."""
