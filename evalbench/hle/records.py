"""The HLE study's types: its params (systems, judge, the sim confidence knob), the record
of one judged answer and the result the notebook shows.

``records/hle.jsonl`` holds :class:`HleRecord` lines; :class:`HleResult` is what
:func:`~.study.run` returns.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal, NamedTuple

import pandas as pd
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationInfo, model_validator

from evalbench.agents import SystemSpec
from evalbench.calibration import BIN_SIZE
from evalbench.judge.spec import JudgeModel
from evalbench.models import ModelSpec
from evalbench.params import StudyParams, data_path
from evalbench.records import Record

from .data import HF_REVISION, HleItem
from .metrics import HleSummary


def _local_or_keyword(keywords: tuple[str, ...]) -> Callable[[str, ValidationInfo], str]:
    def check(value: str, info: ValidationInfo) -> str:
        return value if value in keywords else str(data_path(value, info))

    return check


class ConfidenceKnob(BaseModel):
    """How a simulated system's stated confidence relates to its latent P(right)."""

    model_config = ConfigDict(extra="forbid")

    style: Literal["calibrated", "overconfident"] = "calibrated"
    """``calibrated``: states p; ``overconfident``: states p + shift·(1 − p)."""
    shift: float = Field(default=0.6, ge=0, le=1)
    """How far an overconfident system moves its stated confidence towards 100%."""
    concentration: float = Field(default=4.0, gt=0, le=1000)
    """k of the Beta spread of p around the category accuracy (large k: every p ≈ a)."""


class HleSystem(SystemSpec):
    """A system under test: a chat model (``openai``, ``sim``), an agent (``python``,
    ``command``, ``agent``, or ``sim`` with ``sim_agent``; see :mod:`evalbench.agents`) or
    an imported official predictions file (``predictions:``; ``provider: predictions`` may
    be left out)."""

    provider: Literal["openai", "local", "sim", "predictions", "python", "command", "agent"] = "sim"  # type: ignore[assignment]
    """``sim`` | ``openai`` (asked), agents, ``predictions`` (read from ``predictions``)."""
    predictions: Annotated[str, AfterValidator(_local_or_keyword(()))] | None = Field(
        default=None, exclude_if=lambda v: v is None
    )
    """An official predictions file ``{id: {"model", "response", "usage"}}`` (relative to
    the params file); a question absent from it is a missing answer (counted wrong)."""
    sim_confidence: ConfidenceKnob = Field(
        default_factory=ConfidenceKnob, exclude_if=lambda v: v == ConfidenceKnob()
    )
    """``sim`` only: how the stated confidence relates to P(right): ``style: calibrated``
    or ``overconfident`` (``shift``), and the spread ``concentration``."""

    @model_validator(mode="before")
    @classmethod
    def _predictions_provider(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("predictions") and "provider" not in data:
            return {**data, "provider": "predictions"}
        return data

    @model_validator(mode="after")
    def _check_kind(self) -> HleSystem:
        if (self.provider == "predictions") != (self.predictions is not None):
            raise ValueError("'predictions' goes with provider 'predictions' (and needs a file)")
        if self.provider != "sim" and self.sim_confidence != ConfidenceKnob():
            raise ValueError("sim_confidence applies to provider 'sim' only")
        return self


class HleJudge(JudgeModel):
    """The judge of exact answers (official prompt; structured output is the JSON schema of
    the official ``ExtractedAnswer``)."""


class HleParams(StudyParams):
    """Parameters of an HLE study (``study: hle``)."""

    study: Literal["hle"] = "hle"
    dataset: Annotated[str, AfterValidator(_local_or_keyword(("demo", "hf")))] = "demo"
    """``demo`` (evalbench's offline suite, not HLE), ``hf`` (gated ``cais/hle``, needs
    ``HF_TOKEN``), or a folder / ``.jsonl`` / ``.json`` / ``.parquet`` with HLE's fields."""
    revision: str | None = HF_REVISION
    """Hub commit of ``cais/hle`` (``hf`` only)."""
    categories: list[str] | None = None
    """Keep only these categories (``None``: all)."""
    exclude_images: bool = False
    """Leave out the questions with an image (for text-only systems); the report says how
    many. Otherwise the image is sent as ``image_url`` content, as the official code does."""
    systems: list[HleSystem] = Field(min_length=1)
    """The systems under test (unique names)."""
    judge: HleJudge
    """The judge of the exact answers (the official default is ``o3-mini-2025-01-31``)."""
    calibration_bin_size: int = Field(default=BIN_SIZE, ge=2)
    """β of the calibration error (the official 100)."""
    reliability_bins: int = Field(default=10, ge=2, le=50)
    """Fixed-width bins of the reliability diagram."""

    @model_validator(mode="after")
    def _check_names(self) -> HleParams:
        names = [s.name for s in self.systems]
        if len(set(names)) != len(names):
            raise ValueError(f"systems: names must be unique (got {names})")
        if self.judge.name in names:
            raise ValueError(f"a system may not be named like the judge: {self.judge.name!r}")
        return self

    def model_specs(self) -> list[ModelSpec]:
        """The systems asked (not imported predictions) and the judge."""
        asked: list[ModelSpec] = [s for s in self.systems if s.provider != "predictions"]
        return [*asked, self.judge]


AnswerState = Literal["answered", "error", "missing"]
Status = Literal["scored", "unscored", "no_response"]


class HleRecord(Record):
    """A line of ``records/hle.jsonl``: one system's answer to one question and its judgment."""

    id: str
    system: str
    category: str
    raw_subject: str = ""
    answer_type: str
    has_image: bool = False
    correct_answer: str
    state: AnswerState
    """The answer: ``answered``, ``error`` (the call failed) or ``missing`` (absent from an
    imported predictions file)."""
    response: str | None = None
    error: str | None = None
    """Why there is no answer (``state`` error or missing)."""
    judge: str | None = None
    judge_error: str | None = None
    """The judge call's failure (then ``status`` is unscored)."""
    status: Status
    """``scored`` (a yes/no verdict), ``unscored`` (judge output unparseable or its call
    failed) or ``no_response`` (no answer to judge). Only ``scored`` items have a verdict;
    the official accuracy counts the other two as wrong."""
    correct: bool | None = None
    extracted_final_answer: str | None = None
    reasoning: str | None = None
    confidence: float | None = None
    confidence_official: float | None = None
    confidence_note: str | None = None
    parse_method: str | None = None
    unscored_reason: str | None = None
    judge_raw: str | None = None
    """The judge's output, verbatim."""
    prompt_tokens: float | None = None
    completion_tokens: float | None = None
    cost_usd: float | None = None
    latency_s: float | None = None
    truth_correct: bool | None = None
    """Simulated systems only: whether the response's stated answer is right."""
    truth_p_correct: float | None = None
    """Simulated systems only: the latent chance of a right answer on this item."""
    truth_stated: float | None = None
    """Simulated systems only: the confidence a perfect judge extracts (the stated one, or
    100 when the response states none, as the judge prompt says)."""


class HleResult(NamedTuple):
    """Everything an HLE study computed (what the notebook shows)."""

    params: HleParams
    items: list[HleItem]
    """The questions studied (after the filters and the tier)."""
    excluded_images: int
    """Questions left out because they have an image (``exclude_images: true``)."""
    records: pd.DataFrame
    """One row per system and question (``records/hle.jsonl``)."""
    summary: HleSummary
    official_files: list[Path]
    """The official-format predictions and judged files written into the run folder."""
    usage: pd.DataFrame
    simulated: frozenset[str]
    imported: list[str]
    """Systems read from official predictions files."""
