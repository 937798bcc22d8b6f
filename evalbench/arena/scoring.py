"""The arena runner's prompts and the battles its judge's verdicts and grades become (pure).

* :func:`answer_messages`: the chat a system answers; "deep research" systems get the
  prompt's documents in their system prompt, each in an untrusted-data block.
* :func:`battles_from_judged_pairs`: pairwise verdicts in both orders, resolved by
  :func:`evalbench.judge.judge_pairs`, -> one battle per pair.
* :func:`battles_from_scores` / :func:`battles_from_rubric`: per-question scores -> the
  higher score wins (within a tie margin).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

import numpy as np
import pandas as pd

from evalbench.judge import SIDE_TO_VERDICT, UNTRUSTED_RULE, fence_untrusted
from evalbench.ratings import (
    BATTLE_COLUMNS,
    ArenaError,
    Unscored,
    fail_first_row,
    require_columns,
    validate_battles,
)

from .data import ArenaPrompt

ANSWER_SYSTEM = (
    "You are a helpful assistant. Answer the user's question accurately, completely and clearly."
)


RETRIEVAL_SYSTEM = (
    ANSWER_SYSTEM + " Base your answer on the reference documents below, cite them as [1], "
    "[2] ..., and say so when they do not cover something. " + UNTRUSTED_RULE
)


def answer_messages(prompt: ArenaPrompt, *, with_documents: bool) -> list[dict[str, str]]:
    """The chat a system answers: the question, and the documents in the system prompt.

    A "deep research" system (``with_documents``) gets every document of the prompt in
    its system prompt, each in an untrusted-data block; a "pure LLM" one gets none.
    """
    system = ANSWER_SYSTEM
    if with_documents and prompt.documents:
        blocks = [fence_untrusted(f"DOCUMENT {i}", d) for i, d in enumerate(prompt.documents, 1)]
        system = "\n\n".join([RETRIEVAL_SYSTEM, *blocks])
    return [{"role": "system", "content": system}, {"role": "user", "content": prompt.question}]


def battles_from_judged_pairs(
    judgments: pd.DataFrame, *, strong_weight: float = 3.0
) -> pd.DataFrame:
    """Battles from :func:`evalbench.judge.judge_pairs` rows: one per resolved pair.

    ``model_a``/``model_b`` are the pair's x/y and the winner is its ``final`` verdict
    (both orders resolved; an inconsistent pair is a tie or dropped per the judge's
    policy). A win weighs the mean of its two orders' weights (``strong_weight`` for a
    strong verdict, 1 otherwise; MT-Bench verdicts are all weight 1); a tie weighs 1.
    Unscored and dropped pairs are counted in ``attrs["unscored"]`` / ``attrs["dropped"]``.
    """
    if len(judgments) == 0:
        raise ArenaError("pair judgments: empty input (no pair was judged)")
    require_columns(
        judgments, ["pair_id", "model_x", "model_y", "final", "outcome"], "pair judgments"
    )
    kept = judgments[judgments["final"].notna()]
    strengths = [
        kept.get(c, pd.Series(None, index=kept.index)) for c in ("strength_1", "strength_2")
    ]
    order_weight = [np.where(s == "strong", strong_weight, 1.0) for s in strengths]
    win = kept["final"].isin(["x", "y"]).to_numpy()
    out = pd.DataFrame(
        {
            "model_a": kept["model_x"],
            "model_b": kept["model_y"],
            "winner": kept["final"].map(SIDE_TO_VERDICT),
            "weight": np.where(win, (order_weight[0] + order_weight[1]) / 2, 1.0),
            "question_id": kept["pair_id"].astype(str),
            "outcome": kept["outcome"],
        }
    )
    if len(out) == 0:
        raise ArenaError(
            f"pair judgments: no battles (all {len(judgments)} pairs unscored or dropped)"
        )
    battles = validate_battles(out.reset_index(drop=True), source="pair judgments")
    battles.attrs["unscored"] = int((judgments["outcome"] == "unscored").sum())
    battles.attrs["dropped"] = int((judgments["outcome"] == "inconsistent_dropped").sum())
    return battles


def battles_from_scores(
    scores: pd.DataFrame,
    *,
    score: str = "score",
    criteria: Mapping[str, float] | None = None,
    tie_margin: float = 0.0,
    baseline: str | None = None,
    unscored: Unscored = "raise",
) -> pd.DataFrame:
    """Battles from per-question rubric scores: on each question the higher score wins.

    Args:
        scores: one row per (``question_id``, ``model``) with a ``score`` column, or with
            the ``criteria`` columns to combine.
        score: name of the score column (ignored when ``criteria`` is given).
        criteria: criterion column -> weight; the score is the weighted sum.
        tie_margin: scores within this distance (``|s_a - s_b| <= tie_margin``) tie.
        baseline: if set, only battles against this model (as ``model_a``); otherwise
            every pair of models that both scored the question (``model_a < model_b``).
        unscored: ``"raise"`` on a missing score, or ``"drop"`` that (question, model);
            the number dropped is in ``attrs["unscored"]``.

    Returns:
        Validated battles, one per question and pair.
    """
    require_columns(scores, ["question_id", "model"], "scores")
    s = scores.assign(_score=_weighted_score(scores, score, criteria))
    dup = s.duplicated(["question_id", "model"]).to_numpy()
    fail_first_row(s, dup, "scores", "duplicate (question_id, model)")
    missing = s["_score"].isna().to_numpy()
    if unscored == "raise":
        fail_first_row(s, missing, "scores", "missing score (pass unscored='drop' to skip it)")
    pairs = _score_pairs(s[~missing], baseline)
    diff = pairs["_score_a"] - pairs["_score_b"]
    winner = np.select([diff > tie_margin, diff < -tie_margin], ["a", "b"], default="tie")
    out = pairs[["model_a", "model_b", "question_id"]].assign(winner=winner, weight=1.0)
    result = validate_battles(out.reset_index(drop=True), source="scores")
    result.attrs["unscored"] = int(missing.sum())
    return result


def _weighted_score(
    scores: pd.DataFrame, score: str, criteria: Mapping[str, float] | None
) -> pd.Series:
    if criteria is None:
        require_columns(scores, [score], "scores")
        return scores[score].astype(float)
    require_columns(scores, list(criteria), "scores")
    parts = [scores[c].astype(float) * w for c, w in criteria.items()]
    return cast(pd.Series, sum(parts))


def _score_pairs(s: pd.DataFrame, baseline: str | None) -> pd.DataFrame:
    slim = s[["question_id", "model", "_score"]]
    pairs = slim.merge(slim, on="question_id", suffixes=("_a", "_b"))
    if baseline is None:
        return pairs[pairs["model_a"] < pairs["model_b"]]
    if baseline not in set(s["model"]):
        raise ArenaError(f"scores: baseline {baseline!r} has no scores")
    return pairs[(pairs["model_a"] == baseline) & (pairs["model_b"] != baseline)]


def battles_from_rubric(
    scores: pd.DataFrame, *, tie_margin: float, baseline: str | None = None
) -> pd.DataFrame:
    """Battles from rubric weighted scores: per question the higher score wins (tie margin).

    Args:
        scores: :func:`evalbench.arena.study.judge_by_rubric` rows (``system, question_id,
            weighted_score``; an unscored grading is dropped and counted).
        tie_margin: weighted scores within this distance tie.
        baseline: only battles against this system (``vs_baseline`` pairing).
    """
    frame = scores.rename(columns={"system": "model"})
    return battles_from_scores(
        frame, score="weighted_score", tie_margin=tie_margin, baseline=baseline,
        unscored="drop",
    )  # fmt: skip


def no_battles(judgments: pd.DataFrame) -> pd.DataFrame:
    """The battles of judgments none of which resolved into one (every answer failed, every
    verdict unscored or dropped): an empty table, with the unscored and dropped counts in
    ``attrs`` as :func:`battles_from_judged_pairs` and :func:`battles_from_rubric` keep them."""
    out = pd.DataFrame(columns=[*BATTLE_COLUMNS, "outcome"])
    if "outcome" in judgments:  # pairwise
        out.attrs["unscored"] = int((judgments["outcome"] == "unscored").sum())
        out.attrs["dropped"] = int((judgments["outcome"] == "inconsistent_dropped").sum())
    elif "status" in judgments:
        out.attrs["unscored"] = int((judgments["status"] != "scored").sum())
    return out


def any_pair_scored(scores: pd.DataFrame, baseline: str | None) -> bool:
    """Whether rubric scores hold a battle: a prompt where two systems were scored (one of
    them the ``baseline``, when given)."""
    if not len(scores):
        return False
    scored = scores[scores["status"] == "scored"]
    if baseline is not None:
        asked = set(scored.loc[scored["system"] == baseline, "question_id"])
        return bool((scored["question_id"].isin(asked) & (scored["system"] != baseline)).any())
    return bool((scored.groupby("question_id")["system"].nunique() >= 2).any())
