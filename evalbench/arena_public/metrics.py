"""AlpacaEval 2 win rates, lengths and star ratings; battle counts (pure).

On a star design (every model meets only the baseline) the Bradley–Terry likelihood splits
into one term per model, so :func:`star_bootstrap` rates AlpacaEval's models in closed form
with an item bootstrap.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from evalbench.published.alpaca_eval import (
    alpaca_eval_win_rate,
    alpaca_preferences,
    battles_from_alpaca_eval,
    clean_preferences,
)
from evalbench.ratings import ArenaError, BootstrapBT, fail_first_row, require_columns
from evalbench.ratings_lc import lc_win_rates
from evalbench.ratings_style import StyleControl, answer_style_counts, battles_with_style
from evalbench.stats import DEFAULT_LEVEL, DEFAULT_ROUNDS, bootstrap_mean, mean_replicates

from .data import AlpacaInputs
from .scoring import prefer_longer_shares


class LengthBias(NamedTuple):
    """Answer lengths (characters) and the judge's preference for the longer answer."""

    avg_length: float
    avg_length_baseline: float
    prefer_longer: float
    """P(the longer answer is preferred), over items whose lengths differ."""
    n_compared: int
    """Items whose two answers differ in length (and whose preference is usable)."""


def alpaca_eval_length_bias(
    annotations: pd.DataFrame, model_lengths: pd.Series, baseline_lengths: pd.Series
) -> LengthBias:
    """Lengths and P(prefer longer) for one model's AlpacaEval annotations.

    Args:
        annotations: the model's annotations (``instruction``, ``preference``; output 1 is
            the baseline's answer, output 2 the model's).
        model_lengths: :func:`evalbench.published.alpaca_eval.answer_lengths` of the
            model's outputs.
        baseline_lengths: the same of the baseline's outputs.
    """
    l1, l2 = _alpaca_lengths(annotations, model_lengths, baseline_lengths)
    shares = prefer_longer_shares(annotations["preference"], l1, l2)
    return LengthBias(
        avg_length=float(model_lengths.mean()),
        avg_length_baseline=float(baseline_lengths.mean()),
        prefer_longer=float(shares.mean()) if shares.size else float("nan"),
        n_compared=int(shares.size),
    )


def _alpaca_lengths(
    annotations: pd.DataFrame, model_lengths: pd.Series, baseline_lengths: pd.Series
) -> tuple[np.ndarray, np.ndarray]:
    """Baseline (output 1) and model (output 2) answer lengths, per annotation row."""
    require_columns(annotations, ["instruction", "preference"], "alpaca_eval annotations")
    l1 = baseline_lengths.reindex(annotations["instruction"]).to_numpy(dtype=float)
    l2 = model_lengths.reindex(annotations["instruction"]).to_numpy(dtype=float)
    for lengths, who in ((l1, "baseline"), (l2, "model")):
        fail_first_row(
            annotations, np.isnan(lengths), "alpaca_eval annotations", f"no {who} output"
        )
    return l1, l2


class AlpacaStudy(NamedTuple):
    """AlpacaEval 2 for several models against the baseline."""

    table: pd.DataFrame
    """Per model: our win rate, the leaderboard's, their difference, lengths, P(prefer longer)."""
    battles: pd.DataFrame
    """Soft battles (:func:`battles_from_alpaca_eval`) of every model but the baseline."""
    boot: BootstrapBT
    """Star Bradley–Terry ratings with an item bootstrap (:func:`star_bootstrap`)."""


def alpaca_eval_summary(
    inputs: AlpacaInputs,
    models: Sequence[str],
    *,
    baseline: str,
    rng: np.random.Generator,
    rounds: int = DEFAULT_ROUNDS,
    level: float = DEFAULT_LEVEL,
    anchor_rating: float = 1000.0,
) -> AlpacaStudy:
    """Win rates, lengths, P(prefer longer) and star ratings of AlpacaEval 2 models.

    Args:
        inputs: the files (:func:`evalbench.arena_public.data.load_alpaca_inputs`).
        models: the models to show (the baseline may be one of them: its annotations
            against itself give the leaderboard's 50% and no battles).
        baseline: ``generator_1`` of every annotation.
        rng: randomness of the P(prefer longer) and rating intervals (drawn in model order,
            then the ratings).
        rounds: bootstrap rounds.
        level: interval level.
        anchor_rating: the baseline's rating.
    """
    lengths = inputs.baseline_lengths
    rows, battles, preferences = [], [], {}
    for model in models:
        annotations = inputs.annotations[model]
        _check_generator(annotations, baseline, model)
        pair = (inputs.lengths[model], lengths)
        rows.append(_alpaca_row(model, annotations, inputs.leaderboard, pair, rng, rounds, level))
        if model != baseline:
            battles.append(battles_from_alpaca_eval(annotations))
            preferences[model] = annotations["preference"]
    if not battles:
        raise ArenaError("alpaca_eval_study: no model besides the baseline (empty input)")
    boot = star_bootstrap(
        preferences, baseline, rng=rng, rounds=rounds, anchor_rating=anchor_rating
    )
    return AlpacaStudy(pd.DataFrame(rows), pd.concat(battles, ignore_index=True), boot)


def _check_generator(annotations: pd.DataFrame, baseline: str, model: str) -> None:
    require_columns(
        annotations, ["generator_1", "generator_2", "preference"], f"alpaca_eval {model}"
    )
    others = sorted(set(annotations["generator_1"]) - {baseline})
    if others:
        raise ArenaError(
            f"alpaca_eval {model}: generator_1 {others} is not the baseline {baseline!r}"
        )


def _alpaca_row(
    model: str,
    annotations: pd.DataFrame,
    leaderboard: pd.DataFrame,
    lengths: tuple[pd.Series, pd.Series],
    rng: np.random.Generator,
    rounds: int,
    level: float,
) -> dict[str, Any]:
    if model not in leaderboard.index:
        raise ArenaError(f"alpaca_eval: {model!r} is not on the AlpacaEval 2 leaderboard")
    official = leaderboard.loc[model]
    ours = alpaca_eval_win_rate(annotations["preference"])
    l1, l2 = _alpaca_lengths(annotations, *lengths)
    shares = prefer_longer_shares(annotations["preference"], l1, l2)
    longer = bootstrap_mean(shares, rng=rng, rounds=rounds, level=level)
    return {
        "model": model,
        "win_rate": ours.win_rate,
        "leaderboard_win_rate": float(official["win_rate"]),
        "difference": ours.win_rate - float(official["win_rate"]),
        "standard_error": ours.standard_error,
        "n_total": ours.n_total,
        "avg_length": float(lengths[0].mean()),
        "leaderboard_avg_length": int(official["avg_length"]),
        "prefer_longer": longer.estimate,
        "prefer_longer_low": longer.low,
        "prefer_longer_high": longer.high,
        "n_compared": len(shares),
    }


def star_bootstrap(
    preferences: Mapping[str, Sequence[float] | np.ndarray | pd.Series],
    baseline: str,
    *,
    rng: np.random.Generator,
    rounds: int = DEFAULT_ROUNDS,
    anchor_rating: float = 1000.0,
    base: float = 10.0,
    scale: float = 400.0,
) -> BootstrapBT:
    """Bradley–Terry ratings of a star design (every model meets only the baseline).

    On a star the BT likelihood splits into one term per model, so the MLE is closed-form:
    ``R = anchor_rating + scale·log_base(w / (1 − w))`` with ``w`` the model's win rate
    against the baseline (here AlpacaEval's mean of ``p − 1``; :func:`evalbench.ratings.fit_bt`
    on the soft battles gives the same). The bootstrap resamples *items* (the unit
    AlpacaEval's standard error is about), per model; a resample with ``w`` of 0 or 1 has no finite
    rating and is a NaN row. ``n_battles`` counts judged items (the baseline: all of them).

    Args:
        preferences: AlpacaEval preferences in [1, 2] by model (2 = the model wins).
        baseline: the model every other one met.
        rng: the source of randomness of the item bootstrap.
        rounds: bootstrap rounds.
        anchor_rating: the baseline's rating.
        base: logistic base (10 on the Elo scale).
        scale: rating points per factor ``base`` in odds (400 on the Elo scale).
    """
    if rounds < 1:
        raise ArenaError(f"star_bootstrap: rounds must be >= 1, got {rounds}")
    models = sorted({*preferences, baseline})
    to_rating = partial(_logit_rating, anchor=anchor_rating, base=base, scale=scale)
    ratings = np.full(len(models), anchor_rating)
    reps = np.full((rounds, len(models)), anchor_rating)
    n_items = np.zeros(len(models), dtype=int)
    for model, prefs in preferences.items():
        x = clean_preferences(prefs).to_numpy() - 1
        if x.size == 0:
            raise ArenaError(f"star_bootstrap: {model!r} has no preference in [1, 2]")
        k = models.index(model)
        ratings[k] = to_rating(np.array([x.mean()]))[0]
        reps[:, k] = to_rating(mean_replicates(x, rng=rng, rounds=rounds))
        n_items[k] = x.size
    n_items[models.index(baseline)] = n_items.sum()
    reps[~np.isfinite(reps).all(axis=1)] = np.nan
    return BootstrapBT(models, ratings, reps, n_items)


def _logit_rating(w: np.ndarray, *, anchor: float, base: float, scale: float) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return anchor + scale * np.log(w / (1 - w)) / math.log(base)


def winner_counts(battles: pd.DataFrame) -> dict[str, int]:
    """How many battles model A won, model B won, and tied (``a``, ``b``, ``tie``)."""
    counts = battles["winner"].value_counts().reindex(["a", "b", "tie"], fill_value=0)
    return {k: int(v) for k, v in counts.items()}


# --------------------------------------------------------------------------- style and length


def answered_battles(battles: pd.DataFrame, answers: pd.DataFrame) -> pd.DataFrame:
    """The battles whose two answers are both in ``answers``, with their style counts.

    Args:
        battles: battles (``model_a, model_b, question_id``).
        answers: ``model, question_id, text``.

    Returns:
        Those battles (index kept) with :data:`evalbench.ratings_style.STYLE_COLUMNS`.
    """
    counts = answer_style_counts(answers)
    known = set(zip(counts["model"], counts["question_id"], strict=True))
    rows = zip(battles["model_a"], battles["model_b"], battles["question_id"], strict=True)
    both = [(a, q) in known and (b, q) in known for a, b, q in rows]
    return battles_with_style(battles[both], counts)


def alpaca_answers(annotations: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Every answer AlpacaEval annotations compare, once: ``model, question_id`` (the
    instruction) ``, text`` (``generator_1``'s ``output_1`` and ``generator_2``'s
    ``output_2``; the baseline's answer recurs in every file)."""
    parts = []
    for model, a in annotations.items():
        require_columns(a, ["instruction", "generator_1", "output_1", "generator_2", "output_2"],
                        f"alpaca_eval {model}")  # fmt: skip
        for side in ("1", "2"):
            parts.append(pd.DataFrame({"model": a[f"generator_{side}"],
                                       "question_id": a["instruction"],
                                       "text": a[f"output_{side}"]}))  # fmt: skip
    return pd.concat(parts, ignore_index=True).drop_duplicates(ignore_index=True)


def alpaca_length_controlled(
    annotations: Mapping[str, pd.DataFrame], leaderboard: pd.DataFrame, baseline: str
) -> pd.DataFrame:
    """AlpacaEval 2.0's length-controlled win rate of each model beside the leaderboard's.

    As the official ``get_length_controlled_winrate`` with ``length_controlled_noreg``:
    lengths are the characters of ``output_1`` (the baseline's) and ``output_2``, the
    preference ``p − 1`` (``0``, an old draw, is 1.5; outside [1, 2] unscored). The official
    instruction difficulty and gamed-baseline rows come from the Hugging Face hub and are not
    registered sources: the difficulty is fitted here once on every shown model's annotations
    (:func:`evalbench.ratings_lc.lc_win_rates` ``difficulty="all"``), as AlpacaEval fitted its
    own jointly on its leaderboard's models. The baseline is 50 by construction (official).

    Returns:
        :data:`evalbench.ratings_lc.LC_COLUMNS`, ``leaderboard_lc_win_rate`` and
        ``lc_difference`` (ours − leaderboard), by model.
    """
    table = lc_win_rates(alpaca_lc_scores(annotations, baseline), difficulty="all")
    if baseline in annotations:
        n = len(annotations[baseline])
        by_construction = {"model": baseline, "win_rate": 50.0, "lc_win_rate": 50.0,
                           "lc_standard_error": 0.0, "n": n, "note": "the baseline"}  # fmt: skip
        table = pd.concat([table, pd.DataFrame([by_construction])], ignore_index=True)
    official = leaderboard["length_controlled_winrate"].reindex(table["model"]).to_numpy()
    table["leaderboard_lc_win_rate"] = official
    table["lc_difference"] = table["lc_win_rate"] - official
    return table.sort_values("lc_win_rate", ascending=False, kind="stable").reset_index(drop=True)


def alpaca_lc_scores(annotations: Mapping[str, pd.DataFrame], baseline: str) -> pd.DataFrame:
    """The GLM's inputs from AlpacaEval annotations of every model but ``baseline``:
    ``model, question_id`` (the instruction), ``preference`` (``p − 1``, unscored NaN),
    ``len_model, len_baseline`` (characters of ``output_2`` and ``output_1``)."""
    frames = []
    for model, a in annotations.items():
        if model == baseline:
            continue
        require_columns(a, ["instruction", "preference", "output_1", "output_2"],
                        f"alpaca_eval {model}")  # fmt: skip
        frames.append(pd.DataFrame({
            "model": model,
            "question_id": a["instruction"],
            "preference": alpaca_preferences(a["preference"]).to_numpy() - 1,
            "len_model": a["output_2"].str.len(),
            "len_baseline": a["output_1"].str.len(),
        }))  # fmt: skip
    if not frames:
        raise ArenaError("alpaca_length_controlled: no model besides the baseline")
    return pd.concat(frames, ignore_index=True)


def style_records(control: StyleControl) -> pd.DataFrame:
    """``records/style_ratings.jsonl`` rows of one dataset: the side-by-side table with each
    model's battles, the interval level and the bootstrap rounds."""
    played = dict(zip(control.boot.models, control.boot.n_battles.tolist(), strict=True))
    level = float(control.coefficients["level"].iloc[0])
    rounds = len(control.boot.replicates)
    return control.table.assign(n_battles=control.table["model"].map(played), level=level,
                                rounds=rounds)  # fmt: skip
