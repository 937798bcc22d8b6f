"""The arena runner's types: its params, the records it writes and the result it returns.

``records/battles.jsonl`` holds :class:`ArenaBattle` lines, ``records/ratings.jsonl``
:class:`ArenaRating` lines and ``records/human_battles.jsonl`` :class:`HumanBattle` lines;
:class:`ArenaResult` is what :func:`~.study.run` returns and the notebook shows.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, NamedTuple

import pandas as pd
from pydantic import AfterValidator, Field, ValidationInfo, model_validator

from evalbench.agreement import PositionBias
from evalbench.judge import InconsistentPolicy, VerdictFormat, get_rubric, known_rubric
from evalbench.models import ModelSpec
from evalbench.params import StudyParams, data_path
from evalbench.ratings import RatingReport
from evalbench.ratings_style import StyleControl
from evalbench.records import Battle, StyleCounts, StyledRating
from evalbench.stats import Interval

from .data import ArenaPrompt

Judging = Literal["pairwise", "rubric"]
Pairing = Literal["all_pairs", "vs_baseline"]


def _prompt_source(value: str, info: ValidationInfo) -> str:
    return value if value == "demo" else str(data_path(value, info))


def _votes_source(value: str | None, info: ValidationInfo) -> str | None:
    return None if value is None else str(data_path(value, info))


def _unique(values: list[str]) -> list[str]:
    repeated = sorted({v for v in values if values.count(v) > 1})
    if repeated:
        raise ValueError(f"listed more than once: {repeated}")
    return values


class ArenaParams(StudyParams):
    """Parameters of the arena runner (``study: arena``).

    The runner asks every system every prompt (answers cached), has the judge compare
    them (pairwise, in both presentation orders) or grade them (rubric), turns the
    verdicts into battles and the battles into ratings. (Ratings from published battles
    are the ``arena_public`` study.)
    """

    study: Literal["arena"] = "arena"
    systems: list[ModelSpec] = Field(default_factory=list)
    """The systems compared head to head (at least two, unique names)."""
    prompts: Annotated[str, AfterValidator(_prompt_source)] = "demo"
    """``demo`` (40 built-in questions with two documents each) or a local JSONL of
    ``{id, question, documents?}`` (relative to the params file)."""
    limit: int | None = Field(default=None, ge=1)
    """keep the first N prompts (quick runs); ``None`` keeps all."""
    retrieval_systems: Annotated[list[str], AfterValidator(_unique)] = Field(default_factory=list)
    """systems that get each prompt's documents in their system prompt ("deep
    research"); the others answer from the question alone ("pure LLM")."""
    judge: ModelSpec | None = None
    """the judge (required with ``systems``)."""
    judging: Judging = "pairwise"
    """``pairwise`` (compare two answers, both orders) or ``rubric`` (grade each)."""
    pairing: Pairing = "all_pairs"
    """compare every pair of systems, or every system with ``baseline``."""
    baseline: str | None = None
    """the baseline system (required with ``pairing: vs_baseline``); with ``all_pairs`` too:
    raw and length-controlled win rates against it."""
    verdict_format: VerdictFormat = "mt_bench"
    """Pairwise: ``mt_bench`` ([[A]]/[[B]]/[[C]]) or ``arena_hard`` ([[A>>B]] ... [[B>>A]])."""
    inconsistent: InconsistentPolicy = "tie"
    """Pairwise: a pair whose two orders disagree becomes a ``tie`` or is dropped (``drop``)."""
    strong_weight: float = Field(default=3.0, ge=1.0)
    """Pairwise, ``arena_hard``: weight of a strong verdict (a battle weighs the mean of its
    two orders' weights; Arena-Hard uses 3)."""
    rubric: Annotated[str, AfterValidator(known_rubric)] = "fine_grained"
    """Rubric judging: the built-in rubric (its dimensions also shape the sim quality)."""
    judge_documents: bool = True
    """Rubric judging: give the judge each prompt's documents (the rubric's ``documents``)."""
    tie_margin: float = Field(default=0.25, ge=0)
    """Rubric judging: weighted scores within this distance make a tie."""
    anchor: str | None = None
    """system pinned at ``anchor_rating`` (default: the baseline with
    ``vs_baseline``, else the ratings are mean-centred)."""
    anchor_rating: float = 1000.0
    """The anchor's rating, or the mean rating without an anchor."""
    elo_k: float = Field(default=4.0, gt=0)
    """Online Elo's K factor (FastChat and the public studies use 4)."""
    prior: float = Field(default=0.0, ge=0)
    """pseudo-ties added between every pair of systems before fitting, so ratings
    exist when a system never loses (0 = pure maximum likelihood, as the public studies)."""
    human_battles: Annotated[str | None, AfterValidator(_votes_source)] = Field(
        default=None, exclude_if=lambda v: v is None
    )
    """Human pairwise votes on the same prompts and systems (``model_a, model_b, winner,
    question_id, annotator``; ``evalbench label export`` of a pairwise task writes them, from
    the run's ``label_pairs.jsonl``): rated beside the judge, and the judge's agreement
    with the human majority."""
    document_effect: dict[str, float] = Field(default_factory=dict)
    """Simulation only: log-odds added to a sim system's hidden quality on each rubric
    dimension when it answers with documents (dimension -> effect; missing = 0)."""

    @model_validator(mode="after")
    def _check_study(self) -> ArenaParams:
        if not self.systems:
            raise ValueError("nothing to do: give at least two `systems` and a `judge`")
        _check_runner(self)
        return self

    def model_specs(self) -> list[ModelSpec]:
        """The systems and the judge."""
        return [*self.systems, *([self.judge] if self.judge else [])]

    def rating_anchor(self) -> str | None:
        """The system pinned at ``anchor_rating`` in the runner's ratings (or ``None``)."""
        return self.anchor or (self.baseline if self.pairing == "vs_baseline" else None)

    def pairs(self) -> list[tuple[str, str]]:
        """The (x, y) system pairs to compare: every pair in params order, or baseline-first."""
        names = [s.name for s in self.systems]
        if self.pairing == "vs_baseline":
            return [(str(self.baseline), n) for n in names if n != self.baseline]
        return [(x, y) for k, x in enumerate(names) for y in names[k + 1 :]]


def _check_runner(p: ArenaParams) -> None:
    names = [s.name for s in p.systems]
    _unique(names)
    if len(names) < 2:
        raise ValueError(f"systems: need at least 2 to compare (got {names})")
    if p.judge is None:
        raise ValueError("judge: required when `systems` are given")
    if p.judge.name in names:
        raise ValueError(f"judge: name {p.judge.name!r} is also a system's (usage is by name)")
    if p.pairing == "vs_baseline" and p.baseline is None:
        raise ValueError("baseline: required with pairing: vs_baseline")
    for field, name in (("baseline", p.baseline), ("anchor", p.anchor)):
        if name is not None and name not in names:
            raise ValueError(f"{field}: unknown system {name!r} (systems are {names})")
    stray = [n for n in p.retrieval_systems if n not in names]
    if stray:
        raise ValueError(f"retrieval_systems: unknown system(s) {stray} (systems are {names})")
    dims = [d.name for d in get_rubric(p.rubric).dimensions]
    if set(p.document_effect) - set(dims):
        raise ValueError(f"document_effect: keys must be dimensions of {p.rubric!r}: {dims}")
    if p.judge.simulated and not all(s.simulated for s in p.systems):
        raise ValueError("judge: a sim judge needs sim systems (it reads their hidden quality)")


class ArenaBattle(StyleCounts, Battle):
    """One battle of the run (``records/battles.jsonl``), with both answers' style counts."""

    dataset: str
    """The prompt set (``demo`` or the prompts file's stem)."""
    outcome: str | None = None
    """Pairwise: how the pair's two orders resolved (``consistent``, ``inconsistent_tie``)."""


class HumanBattle(Battle):
    """One human vote as a battle (``records/human_battles.jsonl``), oriented like the
    judge's battles (``model_a`` = the pair's first system)."""

    annotator: str
    """Who voted."""


class ArenaRating(StyledRating):
    """One system's rating (``records/ratings.jsonl``), with the simulation's truth."""

    strength: float | None = None
    """Simulated: the system's true strength (log-odds)."""
    true_rating: float | None = None
    """Simulated: the true strength on the Elo scale, anchored like the fit."""
    covered: bool | None = None
    """Simulated: whether the interval covers the true rating."""


# ------------------------------------------------------------------ the study


class HumanVotes(NamedTuple):
    """Human pairwise votes: their ratings, and the judge against the human majority."""

    votes: pd.DataFrame
    """The votes as battles, oriented like the judge's (:func:`~.metrics.oriented`)."""
    outside: int
    """Votes on prompts this run did not study (left out)."""
    ratings: RatingReport | None
    """Bradley–Terry ratings (bootstrap intervals) from the human votes alone (``None``
    when they have no fit; see ``rating_error``)."""
    rating_error: str | None
    """Why the votes could not be rated (``None`` when they were)."""
    majority: pd.DataFrame
    """Per (question, pair): the votes and the strict human majority
    (:func:`~.metrics.human_majority`)."""
    agreement: dict[str, Any]
    """:func:`~.metrics.judge_human_agreement`."""
    annotators: dict[str, Any] | None
    """:func:`~.metrics.vote_agreement` (``None`` with one annotator)."""


class ArenaResult(NamedTuple):
    """Everything the notebook shows about one arena run."""

    params: ArenaParams
    prompts: list[ArenaPrompt]
    answers: pd.DataFrame
    """:func:`~.study.collect_answers`."""
    judgments: pd.DataFrame
    """Pairwise: :func:`evalbench.judge.judge_pairs` rows; rubric:
    :func:`~.study.judge_by_rubric`."""
    battles: pd.DataFrame
    counts: dict[str, int]
    """prompts, answers, answer errors, skipped pairs, judgments, unscored, dropped, battles."""
    anchor: str | None
    """The system pinned at ``anchor_rating`` (``None``: mean-centred)."""
    ratings: RatingReport
    """Bradley–Terry with bootstrap intervals, online Elo, win-rate matrices, ranks."""
    table: pd.DataFrame
    """The ratings table, with the simulated truth beside it when there is one."""
    truth: pd.DataFrame | None
    """Pairwise with sim systems: true strengths and ratings (:func:`~.sim.truth_table`)."""
    versus: pd.DataFrame | None
    """``vs_baseline``: win rate of each system against the baseline (Wilson)."""
    position: PositionBias | None
    """Pairwise: the judge's position consistency."""
    longer: tuple[Interval, int] | None
    """Pairwise: P(the verdict favours the longer answer) and the decisive pairs it counts."""
    means: pd.DataFrame | None
    """Rubric: mean score per system and dimension (with ``true_mean`` when simulated)."""
    usage: pd.DataFrame
    """:meth:`evalbench.runs.Run.recorded_usage` after every call."""
    simulated: frozenset[str]
    """Names of the simulated systems and judge."""
    human: HumanVotes | None = None
    """Human votes (``human_battles``; ``None`` without)."""
    style: StyleControl | None = None
    """Style-controlled ratings of the judge's battles."""
    lc: pd.DataFrame | None = None
    """With a ``baseline``: raw and length-controlled win rates against it
    (:func:`~.metrics.length_controlled`)."""
