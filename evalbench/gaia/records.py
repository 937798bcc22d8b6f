"""The GAIA study's types: its params, the record it writes and the result the notebook shows.

``records/gaia.jsonl`` holds one :class:`ScoredRecord` per system, item and attempt (agents
also write ``agent_runs.jsonl`` and ``steps.jsonl``, :mod:`evalbench.agents` types);
:class:`GaiaResult` is what :func:`~.study.run` returns.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal, NamedTuple

import pandas as pd
from pydantic import AfterValidator, Field, ValidationInfo, model_validator

from evalbench.agents import SystemSpec
from evalbench.judge.matching import MatchPrompt
from evalbench.models import ModelSpec
from evalbench.models.types import check_accuracy_keys
from evalbench.params import StudyParams, data_path
from evalbench.stats import PairedComparison

from .data import LEVELS, GaiaItem
from .equivalence import SEMANTIC_CASES
from .metrics import AgentSummary, GaiaSummary, SemanticSummary
from .scoring import DEFAULT_ATTACHMENT_CHARS, GaiaRecord


def _levels_in_range(levels: list[int]) -> list[int]:
    bad = [lv for lv in levels if lv not in LEVELS]
    if bad or not levels:
        raise ValueError(f"levels must be a non-empty subset of 1, 2, 3 (got {levels})")
    return sorted(set(levels))


def _dataset_source(value: str, info: ValidationInfo) -> str:
    if value in {"demo", "hf"}:
        return value
    return str(data_path(value, info))


class GaiaSystem(SystemSpec):
    """A GAIA system under test: a chat model or an agent (see
    :class:`~evalbench.agents.SystemSpec`)."""

    sim_variant_rate: float = Field(default=0.0, ge=0, le=1, exclude_if=lambda v: v == 0.0)
    """``sim`` chat models only: the share of right answers written in another, equivalent
    form (``forty-two``, ``四十二``, ``3.5 hours``, a list in another order where none is
    asked), to exercise semantic matching; 0 keeps every answer as the gold one."""

    @model_validator(mode="after")
    def _variants_need_sim(self) -> GaiaSystem:
        if self.sim_variant_rate and (self.provider != "sim" or self.sim_agent is not None):
            raise ValueError("sim_variant_rate applies to simulated chat models (provider sim)")
        return self


class SemanticJudge(ModelSpec):
    """The judge of semantic answer matching (:mod:`evalbench.judge.matching`)."""

    prompt: MatchPrompt = "hle_grader"
    """``hle_grader`` (HLE's and BrowseComp's grader prompt: question, response, correct
    answer; ``correct: yes|no``) or ``equality_checker`` (simple-evals' MATH equality checker:
    two expressions; ``Yes``/``No``)."""


class GaiaParams(StudyParams):
    """Parameters of a GAIA level-wise accuracy study (``study: gaia``)."""

    study: Literal["gaia"] = "gaia"
    dataset: Annotated[str, AfterValidator(_dataset_source)] = "demo"
    """``demo`` (the offline demo suite, not GAIA), ``hf`` (gated, needs ``HF_TOKEN``), or a
    folder / ``.jsonl`` path with GAIA's fields (relative to the params file)."""
    split: Literal["validation", "test"] = "validation"
    """Hub split (``test`` answers are hidden: export a submission instead of scoring)."""
    revision: str | None = None
    """Hub commit to pin (``hf`` only)."""
    levels: Annotated[list[int], AfterValidator(_levels_in_range)] = Field(
        default_factory=lambda: [1, 2, 3]
    )
    """Levels to keep."""
    limit_per_level: int | None = Field(default=None, ge=1)
    """Keep the first N items of each level (quick runs); ``None`` keeps all."""
    systems: list[GaiaSystem] = Field(min_length=1)
    """The assistants under test (unique names): chat models or agents."""
    attempts: int = Field(default=1, ge=1, le=20)
    """Attempts per item (pass@k for k up to this; the headline uses the first)."""
    compare: tuple[str, str] | None = None
    """Two system names for the paired comparison (default: the first two)."""
    attachment_chars: int = Field(default=DEFAULT_ATTACHMENT_CHARS, ge=0)
    """Characters of a text attachment inlined in the prompt."""
    lenient: bool = True
    """Also show the (non-official) lenient scorer beside the official one."""
    submission_system: str | None = None
    """Write the leaderboard submission JSONL for this system (default: the first)."""
    semantic_judge: SemanticJudge | None = Field(default=None, exclude_if=lambda v: v is None)
    """A judge that says whether each answer means the same as the gold one (numbers equal in
    value, units converted, a list in another order, another script...), shown beside the
    official verdict (which stays the headline); ``None``: no semantic matching."""

    @model_validator(mode="after")
    def _check_names(self) -> GaiaParams:
        names = [s.name for s in self.systems]
        if len(set(names)) != len(names):
            raise ValueError(f"systems: names must be unique (got {names})")
        for name in [*(self.compare or ()), self.submission_system]:
            if name is not None and name not in names:
                raise ValueError(f"unknown system {name!r} (systems are {names})")
        judge = self.semantic_judge
        if judge is not None and judge.name in names:
            raise ValueError(f"semantic_judge: a system is named like the judge: {judge.name!r}")
        for i, system in enumerate(self.systems):
            check_accuracy_keys(system, f"systems.{i}", [str(lv) for lv in LEVELS], "levels")
        if judge is not None:
            check_accuracy_keys(judge, "semantic_judge", SEMANTIC_CASES, "semantic cases")
        return self

    def model_specs(self) -> list[ModelSpec]:
        """The systems under test, then the semantic judge (if any)."""
        judge = [self.semantic_judge] if self.semantic_judge is not None else []
        return [*self.systems, *judge]

    def comparison(self) -> tuple[str, str] | None:
        """The pair of systems to compare (``compare`` or the first two), if any."""
        if self.compare:
            return self.compare
        return (self.systems[0].name, self.systems[1].name) if len(self.systems) > 1 else None


class ScoredRecord(GaiaRecord):
    """A line of ``records/gaia.jsonl``: a :class:`~.scoring.GaiaRecord` plus the lenient
    verdict and the call's usage (null where the call reported none, e.g. a failed call)."""

    correct_lenient: bool | None = None
    """The non-official lenient verdict (only when ``lenient: true``; ``None`` when hidden)."""
    correct_semantic: bool | None = None
    """The semantic judge's verdict (``semantic_judge``): ``False`` without an answer to judge
    (error, no answer, past a limit: ``semantic_status`` ``no_answer``, as the official scorer
    counts it); ``None`` when unscored or not judged (no judge, hidden truth)."""
    semantic_judge: str | None = None
    """Name of the semantic judge (``None`` when not judged)."""
    semantic_status: Literal["scored", "unscored", "no_answer"] | None = None
    """``scored`` (a yes/no verdict), ``unscored`` (unreadable output or a failed judge
    call: counted, never 0/1), ``no_answer`` (nothing to judge); ``None``: not judged."""
    semantic_reason: str | None = None
    """Why the judgment is unscored."""
    semantic_truth: bool | None = None
    """Simulated judge only: the simulation's truth (:func:`~.equivalence.equivalent`)."""
    steps: float | None = None
    """Agent steps taken (agents only)."""
    tool_calls: float | None = None
    """Tool calls made (agents only)."""
    prompt_tokens: float | None = None
    """Prompt tokens of the call."""
    completion_tokens: float | None = None
    """Completion tokens of the call."""
    total_tokens: float | None = None
    """Prompt plus completion tokens, when a system reports only the sum."""
    cost_usd: float | None = None
    """USD paid for the call at the system's prices (null when cached or failed)."""
    latency_s: float | None = None
    """Seconds the call took."""
    state: str | None = None
    """How the task ended (``answered``, ``timeout``, ``step_limit``, ``error``)."""
    wall_s: float | None = None
    """Agents: wall time of the task in seconds (simulated agents: simulated time)."""


class GaiaResult(NamedTuple):
    """Everything a GAIA study computed (what the notebook shows)."""

    params: GaiaParams
    items: list[GaiaItem]
    """The items studied (after the level filter and the per-level limit)."""
    records: pd.DataFrame
    """Scored records: one row per system, item and attempt (``records/gaia.jsonl``)."""
    summary: GaiaSummary
    """Accuracy by level, drops, usage and pass@k (:func:`~.metrics.summarize`)."""
    scorers: pd.DataFrame | None
    """Official vs lenient accuracy per system (``None`` when ``lenient: false``)."""
    pair: tuple[str, str] | None
    """The two systems compared item by item (``None`` with one system)."""
    comparison: PairedComparison | None
    """Their paired comparison (McNemar, paired bootstrap)."""
    submission: Path
    """The leaderboard submission JSONL written into the run folder."""
    submission_system: str
    """The system whose answers the submission holds."""
    usage: pd.DataFrame
    """Model calls per system over the whole study (:meth:`~evalbench.runs.Run.recorded_usage`)."""
    simulated: frozenset[str]
    """Names of the simulated systems."""
    agents: AgentSummary | None = None
    """Trajectory statistics of the agent systems (``None`` when no system is an agent)."""
    steps: tuple[dict[str, Any], ...] = ()
    """Every step of the agents' trajectories (``records/steps.jsonl``)."""
    semantic: SemanticSummary | None = None
    """Official vs semantic matching (``None`` without ``semantic_judge``)."""
