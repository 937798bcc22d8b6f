"""The retry-loop study's types: its params, the records it writes and its result.

``records/rounds.jsonl`` holds one :class:`RoundRecord` per item, arm and round reached (round
0, the first answer, once per arm: the same answer and judgment, ``shared``);
``records/second_judgments.jsonl`` one :class:`SecondJudgmentRecord` per answer the second
judge graded. The calls themselves are in ``answers.jsonl`` and ``judgments.jsonl``.
:class:`RetryLoopResult` is what :func:`~.study.run` returns.
"""

from __future__ import annotations

from typing import Annotated, Literal, NamedTuple

import pandas as pd
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationInfo, model_validator

from evalbench.judge import Rubric, RubricJudgment, get_rubric, known_rubric
from evalbench.models import ModelSpec
from evalbench.params import StudyParams, data_path
from evalbench.records import Record

from .scoring import SUGGESTION_FIELD, Arm, Stop

MAX_ROUNDS = 10


def _items_source(value: str, info: ValidationInfo) -> str:
    return value if value == "demo" else str(data_path(value, info))


def _suggesting_rubric(name: str) -> str:
    rubric = get_rubric(known_rubric(name))
    if not any(f.name == SUGGESTION_FIELD and f.kind == "text" for f in rubric.output_fields):
        raise ValueError(f"rubric {name!r} has no text output field {SUGGESTION_FIELD!r}")
    return name


class RetrySimulation(BaseModel):
    """The simulated generator's truth (used when ``generator`` is ``provider: sim``): each
    item's first answer has a true quality; each retry adds a true gain, known per round."""

    model_config = ConfigDict(extra="forbid")

    start: float = Field(default=5.0, ge=1, le=10)
    """Mean true score (1-10, every dimension) of the first answers."""
    spread: float = Field(default=1.2, ge=0)
    """Standard deviation of the first answers' true scores across items."""
    gains: list[float] = Field(default_factory=lambda: [1.5, 0.7, 0.1])
    """Mean true gain of retry 1, 2, … with the judge's suggestion (at least ``rounds``)."""
    control_gains: list[float] = Field(default_factory=lambda: [0.4, 0.1, 0.0])
    """Mean true gain of retry 1, 2, … without it: a second try alone."""
    gain_noise: float = Field(default=0.6, ge=0)
    """Standard deviation of one item's gain in one round around the mean."""
    self_preference: float = 0.0
    """Points the loop judge adds to answers written to its own suggestions (the second judge
    does not): the self-preference the study should detect."""


class RetryLoopParams(StudyParams):
    """Parameters of a suggestion-driven retry-loop study (``study: retry_loop``)."""

    study: Literal["retry_loop"] = "retry_loop"
    items: Annotated[str, AfterValidator(_items_source)] = "demo"
    """``demo`` (32 short factual questions shipped with evalbench) or a ``.jsonl``/``.csv``
    of ``item, question, [reference]`` (relative to the params file)."""
    limit: int | None = Field(default=None, ge=1)
    """Use only the first N items."""
    rubric: Annotated[str, AfterValidator(_suggesting_rubric)] = "fine_grained"
    """A built-in rubric whose judge writes a ``suggestion`` (``fine_grained``: accuracy,
    completeness, clarity, 1-10)."""
    generator: ModelSpec
    """The system that answers and retries."""
    judge: ModelSpec
    """The loop judge: scores every answer and writes the suggestion."""
    second_judge: ModelSpec | None = None
    """An independent judge of the first and final answers (the self-preference check);
    ``None``: no check."""
    rounds: int = Field(default=3, ge=1, le=MAX_ROUNDS)
    """The most retries after the first answer."""
    threshold: float | None = 8.0
    """Stop an item once its weighted score reaches this (``None``: every item gets every
    round). Stopping on a noisy score selects lucky scores: the report says how much."""
    control: bool = True
    """Also run the control arm: the same retries without the suggestion."""
    simulation: RetrySimulation = Field(default_factory=RetrySimulation)
    """The simulated generator's truth (ignored for a real generator)."""

    @model_validator(mode="after")
    def _check(self) -> RetryLoopParams:
        names = [s.name for s in self.model_specs()]
        if len(set(names)) != len(names):
            raise ValueError(f"generator, judge and second_judge need unique names (got {names})")
        sim = self.simulation
        for field, gains in (("gains", sim.gains), ("control_gains", sim.control_gains)):
            if self.generator.simulated and len(gains) < self.rounds:
                raise ValueError(
                    f"simulation.{field}: {len(gains)} values for {self.rounds} rounds"
                )
        judges = [s for s in (self.judge, self.second_judge) if s is not None]
        if any(j.simulated for j in judges) and not self.generator.simulated:
            raise ValueError(
                "a simulated judge grades the simulation's known truth: it needs a simulated "
                "generator (provider: sim)"
            )
        return self

    def model_specs(self) -> list[ModelSpec]:
        """The generator, the loop judge and the second judge."""
        return [self.generator, self.judge, *([self.second_judge] if self.second_judge else [])]

    def rubric_obj(self) -> Rubric:
        """The rubric, as an object."""
        return get_rubric(self.rubric)

    def arms(self) -> list[str]:
        """The arms this study runs: ``suggestion`` and, with ``control``, ``control``."""
        return ["suggestion", "control"] if self.control else ["suggestion"]


# --------------------------------------------------------------------------- records


class RoundRecord(Record):
    """A line of ``records/rounds.jsonl``: one answer of one item in one arm and round, and
    the loop judge's judgment of it."""

    item: str
    arm: Arm
    round: int
    """0 = the first answer (the same in both arms: ``shared``), then each retry."""
    shared: bool
    status: Literal["scored", "unscored", "generator_error"]
    """Never a default score: a failed call or an unreadable judgment is not scored."""
    weighted_score: float | None = None
    scores: dict[str, float] = Field(default_factory=dict)
    """The loop judge's score per rubric dimension (empty unless scored)."""
    suggestion: str | None = None
    """The loop judge's suggestion (the next retry's, in the suggestion arm)."""
    stopped: Stop | None = None
    """Why the loop of this item ended after this round (``None``: it retried)."""
    unscored_reason: str | None = None
    generator_error: str | None = None
    answer_key: str
    """The generator's call (``records/answers.jsonl``)."""
    judge_key: str | None = None
    """The loop judge's call (``records/judgments.jsonl``; ``None`` without an answer)."""
    prompt_tokens: int
    completion_tokens: int
    """Of the generator's and the loop judge's calls together (0 where not reported)."""
    cost_usd: float
    """Of those calls at the systems' prices, cached or not: what the round costs to run."""
    truth: float | None = None
    """A simulated answer's true score (every dimension; ``None`` for a real generator)."""


class SecondJudgmentRecord(RubricJudgment):
    """A line of ``records/second_judgments.jsonl``: the second judge on a first or final
    answer (``replicate`` is 0)."""

    item: str
    answer: Literal["first", "suggestion", "control"]
    """The first answer, or the final answer of an arm (the last one its loop scored)."""
    round: int
    """The round that produced the answer."""
    scores: dict[str, float] = Field(default_factory=dict)


# --------------------------------------------------------------------------- the result


class SelfPreference(NamedTuple):
    """The loop judge against the second judge on the first and final answers."""

    per_item: pd.DataFrame
    """Per item and arm: both judges' scores of the first and final answers and the gaps."""
    table: pd.DataFrame
    """:func:`~.metrics.self_preference`: per arm, the gain by each judge and the gap."""
    difference: pd.Series | None
    """Suggestion-arm gap − control-arm gap, paired by item (``None`` without control)."""
    effect: pd.Series | None
    """The suggestion's effect on the final answers as the second judge sees it
    (:func:`~.metrics.second_effect`; ``None`` without control)."""


class RetryLoopResult(NamedTuple):
    """Everything a retry-loop study computed (what the notebook shows)."""

    params: RetryLoopParams
    rubric: Rubric
    items: pd.DataFrame
    """The questions studied: ``item, question, reference``."""
    rounds: pd.DataFrame
    """One row per :class:`RoundRecord`."""
    paths: dict[str, pd.DataFrame]
    """Per arm, items × rounds: the weighted score the loop holds after each round
    (:func:`~.metrics.score_paths`)."""
    gains: pd.DataFrame
    """:func:`~.metrics.round_gains` of every arm."""
    shares: pd.DataFrame
    """:func:`~.metrics.round_shares`: improved / unchanged / worsened per round."""
    costs: pd.DataFrame
    """:func:`~.metrics.round_costs`: cost per round and per point gained."""
    effect: pd.DataFrame | None
    """:func:`~.metrics.suggestion_effect` (``None`` without the control arm)."""
    stops: dict[str, int | None]
    """Per arm, the first round whose gain is not above 0 (``None``: every round helped)."""
    second: SelfPreference | None
    """``None`` without a ``second_judge``."""
    usage: pd.DataFrame
    """Model calls per system over the whole study (:meth:`~evalbench.runs.Run.recorded_usage`)."""
    simulated: frozenset[str]
    """Names of the simulated systems and judges."""
