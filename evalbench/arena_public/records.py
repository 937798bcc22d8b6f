"""The published-ratings study's types: its params, records and the result the notebook shows.

``records/battles.jsonl`` holds :class:`PublicBattle` lines, ``records/ratings.jsonl``
:class:`PublicRating` lines; :class:`ArenaPublicResult` is what :func:`~.study.run` returns.
"""

from __future__ import annotations

from typing import Annotated, Literal, NamedTuple

import pandas as pd
from pydantic import AfterValidator, Field, model_validator

from evalbench.params import StudyParams
from evalbench.published.alpaca_eval import ALPACA_MODELS, registered_models
from evalbench.ratings import RatingReport
from evalbench.ratings_style import StyleControl
from evalbench.records import LengthControlled, Rating, Record, StyleCounts

from .metrics import AlpacaStudy

PublicName = Literal["prd_human", "arena_hard_pr44", "alpaca_eval"]


def _unique(values: list[str]) -> list[str]:
    repeated = sorted({v for v in values if values.count(v) > 1})
    if repeated:
        raise ValueError(f"listed more than once: {repeated}")
    return values


class ArenaPublicParams(StudyParams):
    """Parameters of the published-ratings study (``study: arena_public``)."""

    study: Literal["arena_public"] = "arena_public"
    public: Annotated[list[PublicName], AfterValidator(_unique)] = Field(min_length=1)
    """Public datasets to rate: ``prd_human``, ``arena_hard_pr44``, ``alpaca_eval``."""
    alpaca_models: Annotated[list[str], AfterValidator(_unique)] = Field(
        default_factory=lambda: list(ALPACA_MODELS)
    )
    """AlpacaEval 2 models to show (registered annotations and outputs are needed)."""
    alpaca_baseline: str = "gpt4_1106_preview"
    """AlpacaEval 2's baseline (``generator_1`` of every annotation)."""
    anchor_rating: float = 1000.0
    """PRD / Arena-Hard: the mean rating; AlpacaEval: the baseline's rating."""
    elo_k: float = Field(default=4.0, gt=0)
    """Online Elo's K factor (FastChat's ``compute_elo`` uses 4); battles in file order."""

    @model_validator(mode="after")
    def _check_alpaca(self) -> ArenaPublicParams:
        if "alpaca_eval" in self.public:
            _check_alpaca_models(self.alpaca_models, self.alpaca_baseline)
        return self


def _check_alpaca_models(models: list[str], baseline: str) -> None:
    registered = registered_models()
    unknown = [m for m in [*models, baseline] if m not in registered]
    if unknown:
        raise ValueError(
            f"alpaca_models: no registered AlpacaEval annotations for {unknown} "
            f"(registered: {registered})"
        )


class PublicBattle(StyleCounts):
    """One published battle (``records/battles.jsonl``; :class:`evalbench.records.Battle`
    with the dataset, question ids that may be integers, and both answers' style counts
    where the answers are published)."""

    dataset: str
    """The public dataset (``prd_human``, ``arena_hard_pr44``, ``alpaca_eval``)."""
    model_a: str
    model_b: str
    winner: Literal["a", "b", "tie"]
    weight: float
    """AlpacaEval: the preference share of the item's winner (soft battles)."""
    question_id: str | int
    """PRD's are integers (1-80); Arena-Hard's ids and AlpacaEval's instructions strings."""


class PublicRating(LengthControlled, Rating):
    """One model's rating in one public dataset (``records/ratings.jsonl``); AlpacaEval's
    with the raw and length-controlled win rates against the baseline."""

    leaderboard_lc_win_rate: float | None = None
    """AlpacaEval: the leaderboard's length-controlled win rate (percent)."""


class PublicStyleRating(Record):
    """One model's raw and style-controlled rating on the battles whose answers are published
    (``records/style_ratings.jsonl``; :func:`evalbench.ratings_style.style_ratings_table`)."""

    dataset: str
    model: str
    rating: float
    """Raw Bradley–Terry rating on the same battles (AlpacaEval: the star rating)."""
    style_rating: float
    style_ci_low: float
    style_ci_high: float
    """The style-controlled rating and its percentile bootstrap interval at ``level``."""
    rank: int
    style_rank: int
    rank_change: int
    """``rank − style_rank``: positive = the model climbs once style is controlled."""
    n_battles: int
    """Battles the model played among those with answers."""
    level: float
    rounds: int


class PublicStyle(NamedTuple):
    """Style control of one public dataset."""

    control: StyleControl | None
    """Raw and style-controlled ratings and coefficients (``None``: see ``note``)."""
    battles: pd.DataFrame
    """The battles whose two answers are published, with their style counts."""
    note: str
    """Why there is no style control (``""`` when there is)."""


class RatedDataset(NamedTuple):
    """One public dataset's battles and ratings."""

    battles: pd.DataFrame
    ratings: RatingReport
    style: PublicStyle | None = None
    """Style control on the battles whose answers are published."""


class ArenaPublicResult(NamedTuple):
    """Everything the notebook shows."""

    params: ArenaPublicParams
    rated: dict[str, RatedDataset]
    """PRD / Arena-Hard by name (those in ``public``)."""
    alpaca: AlpacaStudy | None
    """AlpacaEval 2 (when in ``public``)."""
    alpaca_ratings: pd.DataFrame | None
    """AlpacaEval 2 star ratings with intervals (:func:`evalbench.ratings.ratings_table`)."""
    licenses: dict[str, str]
    """The licenses of each dataset's registered files."""
    usage: pd.DataFrame
    """:meth:`evalbench.runs.Run.recorded_usage` (empty: no model is asked)."""
    simulated: frozenset[str]
    alpaca_style: PublicStyle | None = None
    """AlpacaEval 2: style control of its soft battles (when in ``public``)."""
    alpaca_lc: pd.DataFrame | None = None
    """AlpacaEval 2: length-controlled win rates beside the leaderboard's
    (:func:`~.metrics.alpaca_length_controlled`)."""
