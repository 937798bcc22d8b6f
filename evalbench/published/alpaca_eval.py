"""AlpacaEval 2: annotations, model outputs and the leaderboard, and its official win rate.

Dubois et al. (2024), "Length-Controlled AlpacaEval: A Simple Way to Debias Automatic
Evaluators", arXiv:2404.04475; Li et al. (2023), AlpacaEval (tatsu-lab/alpaca_eval).
Registered files are read through :mod:`evalbench.sources`.

:func:`alpaca_eval_win_rate` reproduces the leaderboard's ``win_rate`` (and its SE, counts
and ``discrete_win_rate``) bit for bit. The length-controlled win rate
(:func:`evalbench.arena_public.metrics.alpaca_length_controlled`) is the official GLM, but not
the leaderboard's numbers: those need AlpacaEval's ``df_gamed.csv`` and instruction
difficulties from the Hugging Face hub, which are not registered sources.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

from evalbench import sources
from evalbench.ratings import ArenaError, fail_first_row, require_columns, validate_battles

ALPACA_MODELS = (
    "FuseChat-Gemma-2-9B-Instruct",
    "alpaca-7b",
    "gpt-3.5-turbo-1106",
    "gpt4_1106_preview",
    "vicuna-13b",
)
"""AlpacaEval 2 models whose annotations and outputs are registered sources."""


class AlpacaWinRate(NamedTuple):
    """AlpacaEval head-to-head metrics against the baseline (percentages where named so)."""

    win_rate: float
    standard_error: float
    n_wins: int
    n_wins_base: int
    n_draws: int
    n_total: int
    discrete_win_rate: float


def load_alpaca_eval_annotations(model: str) -> pd.DataFrame:
    """AlpacaEval 2 annotations of ``model`` vs the baseline (``generator_1``).

    Read with pandas' default JSON parser, like the official package: its float parsing
    differs from Python's in the last bits, and only it reproduces the leaderboard's
    ``win_rate`` bit for bit.
    """
    return pd.read_json(sources.fetch(f"alpaca_eval/annotations/{model}"))


def load_alpaca_eval_outputs(model: str) -> pd.DataFrame:
    """AlpacaEval 2 model outputs (``instruction, output, generator, dataset``)."""
    return pd.read_json(sources.fetch(f"alpaca_eval/model_outputs/{model}"))


def load_alpaca_eval_leaderboard() -> pd.DataFrame:
    """The official AlpacaEval 2 leaderboard (weighted GPT-4 Turbo annotator), by model."""
    return pd.read_csv(sources.fetch("alpaca_eval/leaderboard"), index_col=0)


def alpaca_eval_win_rate(preferences: Sequence[float] | np.ndarray | pd.Series) -> AlpacaWinRate:
    """AlpacaEval's win rate from preferences in [1, 2] (2 = the model, not the baseline).

    As ``alpaca_eval.metrics.get_winrate``: ``0`` is an old encoding of a draw (-> 1.5);
    values outside [1, 2] (and NaN) are dropped; ``win_rate = 100·mean(p - 1)`` (so an
    exact 1.5 counts half), ``standard_error`` = 100·SEM; ``n_wins``/``n_wins_base`` count
    ``p > 1.5`` / ``p < 1.5``; ``n_draws`` counts exact 1.5; ``discrete_win_rate`` rounds
    each non-draw preference to 1 or 2 first.
    """
    p = clean_preferences(preferences) - 1
    if p.empty:
        raise ArenaError("alpaca_eval_win_rate: no preference in [1, 2]")
    draws = p == 0.5
    discrete = p.where(draws, p.round())
    return AlpacaWinRate(
        win_rate=float(p.mean() * 100),
        standard_error=float(p.sem() * 100),
        n_wins=int((p > 0.5).sum()),
        n_wins_base=int((p < 0.5).sum()),
        n_draws=int(draws.sum()),
        n_total=len(p),
        discrete_win_rate=float(discrete.mean() * 100),
    )


def alpaca_preferences(preferences: Sequence[float] | np.ndarray | pd.Series) -> pd.Series:
    """AlpacaEval's cleaning, item by item: ``0`` (old draw) -> 1.5; outside [1, 2] -> NaN."""
    p = pd.Series(preferences, dtype=float).replace({0.0: 1.5})
    return p.where((p >= 1) & (p <= 2))


def clean_preferences(preferences: Sequence[float] | np.ndarray | pd.Series) -> pd.Series:
    """:func:`alpaca_preferences` without the unusable items (NaN dropped)."""
    p = alpaca_preferences(preferences)
    return p[p.notna()]


def battles_from_alpaca_eval(annotations: pd.DataFrame) -> pd.DataFrame:
    """Soft battles from AlpacaEval annotations: one item = one unit of weight.

    An item with preference ``p`` becomes two battles ``generator_1`` (the baseline) vs
    ``generator_2``: won by ``b`` with weight ``p - 1`` and by ``a`` with weight ``2 - p``
    (zero-weight halves are dropped), so the weighted win rate of ``b`` is AlpacaEval's
    ``win_rate``. NaN preferences are unscored and raise.
    """
    require_columns(
        annotations, ["generator_1", "generator_2", "preference"], "alpaca_eval annotations"
    )
    p = alpaca_preferences(annotations["preference"])
    fail_first_row(annotations, p.isna(), "alpaca_eval annotations", "preference not in [1, 2]")
    qid = annotations.get("instruction", annotations.index)
    halves = [
        pd.DataFrame({"winner": w, "weight": weight, "question_id": qid})
        for w, weight in (("b", p - 1), ("a", 2 - p))
    ]
    out = pd.concat(halves).sort_index(kind="stable")
    out["model_a"] = annotations["generator_1"].reindex(out.index).to_numpy()
    out["model_b"] = annotations["generator_2"].reindex(out.index).to_numpy()
    out = out[out["weight"] > 0]
    return validate_battles(out, source="alpaca_eval annotations").reset_index(drop=True)


def answer_lengths(outputs: pd.DataFrame, *, column: str = "output") -> pd.Series:
    """Answer length in characters by instruction (AlpacaEval's ``avg_length`` unit)."""
    require_columns(outputs, ["instruction", column], "outputs")
    lengths = outputs.set_index("instruction")[column].str.len()
    if lengths.index.duplicated().any():
        raise ArenaError("outputs: duplicate instruction; lengths need one answer each")
    return lengths.astype(int)


def registered_models() -> list[str]:
    """AlpacaEval 2 models whose annotations are registered sources (sorted)."""
    return sorted(n.rsplit("/", 1)[1] for n in sources.names("alpaca_eval/annotations/"))
