"""The datagen study's types: its params, the records of its derived files, its result.

The derived files (``records/<name>.jsonl``: :class:`ProblemRecord`, :class:`QualityRecord`,
:class:`PairwiseRecord`, :class:`DuplicateRecord`) are recomputed every run
(:meth:`evalbench.runs.Run.write_records`); the model calls themselves are
:class:`evalbench.records.ResponseRecord` in ``generations`` and ``judgments``. Missing
values are written as ``null``. :class:`DatagenResult` is what :func:`~.study.run` returns.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal, NamedTuple

import pandas as pd
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationInfo, model_validator

from evalbench.judge import PairJudgment, RubricJudgment
from evalbench.models import ModelSpec
from evalbench.params import StudyParams, data_path
from evalbench.records import Record

from .duplicates import DEFAULT_DUPLICATE_THRESHOLD, DuplicateReport
from .metrics import THRESHOLDS, AnswerSummary, StudySummary
from .reviewers import ReviewerData
from .scoring import TOPICS, GeneratedProblem, normalize_topic
from .verification import Verification

# --------------------------------------------------------------------------- params


def _topic_list(topics: list[str]) -> list[str]:
    norm = [normalize_topic(t) for t in topics]
    bad = [t for t, n in zip(topics, norm, strict=True) if n is None]
    if bad or not topics:
        raise ValueError(f"topics must be a non-empty subset of {', '.join(TOPICS)} (got {bad})")
    if len(set(norm)) != len(norm):
        raise ValueError(f"topics are repeated: {topics}")
    return [str(n) for n in norm]


def _verifications_source(value: str | None, info: ValidationInfo) -> str | None:
    if value is None or value == "simulated":
        return value
    return str(data_path(value, info))


ReferenceSource = Literal["matharena", "qwen25math", "demo"]
REFERENCE_SOURCES: tuple[ReferenceSource, ...] = ("matharena", "qwen25math")
"""The default: real AIME problems (the pinned files)."""


class ReferenceParams(BaseModel):
    """Which problems serve as style references, opponents and duplicate checks: real AIME
    problems, or evalbench's own demo problems (``demo``, offline; not AIME)."""

    model_config = ConfigDict(extra="forbid")

    sources: list[ReferenceSource] = Field(default_factory=lambda: list(REFERENCE_SOURCES))
    """Registered pinned files of real AIME problems (``matharena``, ``qwen25math``; mirror,
    cache or download) and/or ``demo`` (30 AIME-style problems written for evalbench,
    shipped in ``evalbench/demo/datagen``); see :func:`~.data.load_reference`. Order =
    preference when a problem is in both."""
    years: list[int] = Field(default_factory=lambda: [2024, 2025], min_length=1)
    """Contest years to keep (the registered files hold 2024 and 2025; ``demo`` problems
    have no year and are always kept)."""
    hf_dataset: str | None = None
    """Also load a Hugging Face AIME set (e.g. ``TianHongZXY/aime-1983-2025``; needs
    ``datasets``); ``years`` does not filter it."""
    hf_revision: str | None = None
    """Hub commit to pin (``hf_dataset`` only)."""
    hf_split: str | None = None
    """Split of ``hf_dataset`` (default: its only split)."""

    @model_validator(mode="after")
    def _some_source(self) -> ReferenceParams:
        if not self.sources and self.hf_dataset is None:
            raise ValueError("give at least one of sources or hf_dataset")
        if len(set(self.sources)) != len(self.sources):
            raise ValueError(f"sources are repeated: {self.sources}")
        return self


class Thresholds(BaseModel):
    """The bars of the conclusion (met when the value is at least the bar)."""

    model_config = ConfigDict(extra="forbid")

    judge_mean: float = Field(default=THRESHOLDS["judge_mean"], ge=1, le=5)
    """Judge mean weighted score, 1–5."""
    win_rate: float = Field(default=THRESHOLDS["win_rate"], ge=0, le=1)
    """Win rate against real problems (ties count half)."""
    judge_pass_rate: float = Field(default=THRESHOLDS["judge_pass_rate"], ge=0, le=1)
    """Share of problems the judge scores >= 3.5."""
    human_pass_rate: float = Field(default=THRESHOLDS["human_pass_rate"], ge=0, le=1)
    """Share of reviewed problems a human approved."""


class DatagenParams(StudyParams):
    """Parameters of a generated-data quality study (``study: datagen``)."""

    study: Literal["datagen"] = "datagen"
    generator: ModelSpec
    """The model that writes problems (``sim`` knobs: ``quality``, ``malformed_rate``,
    ``copy_rate``)."""
    judge: ModelSpec
    """The rubric and pairwise judge (``sim`` knobs: ``noise``, ``leniency``,
    ``position_bias``, ``malformed_rate``)."""
    n_problems: int = Field(default=60, ge=1, le=100_000)
    """Problems to generate (one slot each; a slot is retried until valid)."""
    topics: Annotated[list[str], AfterValidator(_topic_list)] = Field(
        default_factory=lambda: list(TOPICS)
    )
    """Topics to spread the problems over evenly (a subset of the fixed topic set)."""
    max_attempts: int = Field(default=3, ge=1, le=20)
    """Generator calls per slot before it is left unfilled (invalid outputs are retried)."""
    json_mode: bool = False
    """Send ``response_format: json_object`` (for endpoints that support JSON mode)."""
    reference: ReferenceParams = Field(default_factory=ReferenceParams)
    """The real AIME problems."""
    duplicate_threshold: float = Field(default=DEFAULT_DUPLICATE_THRESHOLD, gt=0, le=1)
    """Similarity from which a generated problem is a near-duplicate of a real one."""
    duplicate_policy: Literal["loss", "exclude"] = "loss"
    """A near-duplicate's comparisons: counted as losses, or excluded from the win rate."""
    win_rate_pairs: int = Field(default=60, ge=0, le=100_000)
    """Generated-vs-real comparisons (each judged in both orders; 0 skips the win rate)."""
    verdict_format: Literal["mt_bench", "arena_hard"] = "mt_bench"
    """Pairwise verdict labels: ``[[A]]/[[B]]/[[C]]`` or Arena-Hard's five labels."""
    inconsistent: Literal["tie", "drop"] = "tie"
    """A pair whose two orders disagree counts as a tie, or is dropped."""
    verifications: Annotated[str | None, AfterValidator(_verifications_source)] = None
    """Human reviews: a ``<data>_verifications.json`` path (relative to the params file), a
    labels folder or ``.jsonl`` of the browser app / form (several reviewers: consensus and
    agreement, see :mod:`~.reviewers`), ``simulated`` (a simulated reviewer, for demos), or
    none: then the run folder's ``generated_verifications.json`` is read when it exists."""
    human_sample: int = Field(default=30, ge=1, le=100_000)
    """Problems the simulated reviewer checks (``verifications: simulated`` only)."""
    thresholds: Thresholds = Field(default_factory=Thresholds)
    """The criteria of the conclusion."""

    @model_validator(mode="after")
    def _check_names(self) -> DatagenParams:
        if self.generator.name == self.judge.name:
            raise ValueError(f"generator and judge need different names (both {self.judge.name!r})")
        if self.verifications == "simulated" and not self.generator.simulated:
            raise ValueError(
                "verifications: simulated reviews need a simulated generator (its hidden "
                "quality); give a <data>_verifications.json path or leave it empty"
            )
        return self

    def model_specs(self) -> list[ModelSpec]:
        """The generator and the judge."""
        return [self.generator, self.judge]


# --------------------------------------------------------------------------- records


class ProblemRecord(GeneratedProblem):
    """``records/problems.jsonl``: one valid generated problem (one per filled slot)."""

    true_quality: float | None = None
    """Hidden quality (1–5) of a simulated problem; ``None`` for a real generator."""


class QualityRecord(RubricJudgment):
    """``records/quality.jsonl``: the ``aime_quality`` rubric judgment of one problem
    (``weighted_score``: the mean of the four dimensions; ``passed``: ≥ 3.5; ``excellent``:
    ≥ 4.5)."""

    problem_id: str
    case_id: str
    """``<problem id>@<hash of the card judged>``: a changed problem is judged again."""
    score_correctness: float | None = None
    score_clarity: float | None = None
    score_difficulty_match: float | None = None
    score_completeness: float | None = None
    extra_reason: str | None = None
    extra_suggestion: str | None = None


class PairwiseRecord(PairJudgment):
    """``records/pairwise.jsonl``: one generated-vs-real comparison, judged in both orders
    (side x is always the generated problem, side y the real one)."""

    generated_id: str
    reference_id: str
    order_outcome: str
    """``consistent``, ``inconsistent_tie``, ``inconsistent_dropped`` or ``unscored``."""
    outcome: str | None = None
    """``win``, ``loss`` or ``tie`` for the generated problem (``None``: unscored)."""


class DuplicateRecord(Record):
    """``records/duplicates.jsonl``: a generated problem's closest real problem."""

    generated_id: str
    reference_id: str | None = None
    similarity: float | None = None
    """Cosine similarity of the normalised texts (numbers masked)."""
    flagged: bool
    """At or above the near-duplicate threshold."""


# --------------------------------------------------------------------------- the result


class Slot(NamedTuple):
    """One problem to generate."""

    id: str
    topic: str


class GenerationResult(NamedTuple):
    """What generation produced."""

    problems: pd.DataFrame
    """One row per filled slot (:class:`~.scoring.GeneratedProblem` fields + ``true_quality``)."""
    invalid: pd.DataFrame
    """One row per invalid attempt (:class:`~.scoring.InvalidGeneration` fields)."""
    slots: list[Slot]
    unfilled: list[str]
    """Slots still invalid after ``max_attempts``."""
    calls: int
    """Generator calls (valid + invalid outputs)."""


class HumanData(NamedTuple):
    """The human reviews a study read."""

    verifications: dict[str, Verification]
    """Reviews of this run's problems, by problem id."""
    path: Path | None
    """The file read (``None``: none found)."""
    simulated: bool
    """Written by the simulated reviewer."""
    unknown_ids: list[str]
    """Reviewed ids that are not problems of this run (ignored)."""
    reviewers: ReviewerData | None = None
    """Label files (browser app or form with a labels folder): every reviewer's reviews,
    their agreement and the problems without a majority (``None`` for a JSON file)."""


class SimFacts(NamedTuple):
    """The simulator's hidden truths the report states next to simulated numbers."""

    real_quality: float
    """Hidden quality (1–5) of every real problem."""
    logit_per_point: float
    """Pairwise log-odds per quality point."""
    review_noise: float
    """Score sd of the simulated reviewer."""


class DatagenResult(NamedTuple):
    """Everything one run of the study produced (what the notebook shows)."""

    params: DatagenParams
    reference: pd.DataFrame
    """All reference rows (every source)."""
    real: pd.DataFrame
    """One row per real problem (style references and win-rate opponents)."""
    generation: GenerationResult
    judge_results: pd.DataFrame
    """One row per problem: :func:`evalbench.judge.judge_rubric` columns + ``problem_id``."""
    judge_truth: pd.DataFrame
    """The judge's score beside each simulated problem's hidden quality
    (:func:`~.metrics.judge_vs_truth`; empty for a real generator)."""
    verdicts: pd.DataFrame | None
    """One row per generated-vs-real pair (``None`` with ``win_rate_pairs: 0``)."""
    duplicates: DuplicateReport
    human: HumanData
    summary: StudySummary
    real_answers: AnswerSummary
    """The answer statistics of the real problems (beside the generated ones')."""
    mismatches: pd.DataFrame
    """Problems two reference sources both hold with different answers (should be empty)."""
    usage: pd.DataFrame
    """:meth:`evalbench.runs.Run.recorded_usage` after every call."""
    simulated: frozenset[str]
    """Names of the simulated generator and judge."""
    sim_facts: SimFacts
    """The simulator's constants the report states (:data:`~.study.SIM_FACTS`)."""

    @property
    def problems(self) -> pd.DataFrame:
        """The valid generated problems."""
        return self.generation.problems
