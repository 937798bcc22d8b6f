"""Summaries of an arena run: answers, the judge's biases, rubric means, truth coverage,
and human votes against the judge (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from evalbench import agreement as ag
from evalbench.agreement import PositionBias, majority_vote, position_bias, prefers_longer
from evalbench.judge import SIDE_TO_VERDICT, Rubric, get_rubric
from evalbench.labels import annotator_agreement, wide
from evalbench.measured import Measured, failed_call, judgment_state, measured, unparsed
from evalbench.ratings_lc import lc_win_rates
from evalbench.ratings_style import answer_style_counts
from evalbench.stats import DEFAULT_LEVEL, DEFAULT_ROUNDS, Interval, bootstrap_mean


def answer_summary(answers: pd.DataFrame) -> pd.DataFrame:
    """Per system: answers, errors, mean and median length (characters), documents or not."""
    return (
        answers.groupby("system", sort=False)
        .agg(
            answers=("answer", lambda s: int(s.notna().sum())),
            errors=("error", lambda s: int(s.notna().sum())),
            mean_length=("length", "mean"),
            median_length=("length", "median"),
            with_documents=("with_documents", "first"),
        )
        .reset_index()
    )


def judge_position_bias(judgments: pd.DataFrame) -> PositionBias:
    """Position consistency and first-position preference of the pairwise judge.

    From the two orders of each pair (``first``: x shown first, ``second``: y shown
    first), with :func:`evalbench.agreement.position_bias`.
    """
    first, second = (judgments[order].map(SIDE_TO_VERDICT) for order in ("first", "second"))
    return position_bias(first, second)


def judge_prefers_longer(
    judgments: pd.DataFrame, *, level: float = DEFAULT_LEVEL
) -> tuple[Interval, int]:
    """P(the final verdict favours the longer answer) among decisive pairs, Wilson interval."""
    verdicts = judgments["final"].map(SIDE_TO_VERDICT)
    return prefers_longer(verdicts, judgments["len_x"], judgments["len_y"], level)


def dimension_means(
    scores: pd.DataFrame,
    rubric: Rubric | str,
    *,
    rng: np.random.Generator,
    rounds: int = DEFAULT_ROUNDS,
    level: float = DEFAULT_LEVEL,
) -> pd.DataFrame:
    """Mean score per system and rubric dimension with a percentile bootstrap interval.

    Only scored judgments count (``n`` says how many). Returns ``system, dimension, mean,
    ci_low, ci_high, n, level``.

    ``scores`` are :func:`~evalbench.arena.study.judge_by_rubric` rows (``system, status,
    score_<dimension>``); ``rng`` draws the bootstraps.
    """
    rubric = get_rubric(rubric) if isinstance(rubric, str) else rubric
    scored = scores[scores["status"] == "scored"]
    rows = []
    for system in dict.fromkeys(scores["system"]):  # every system, even one never scored
        part = scored[scored["system"] == system]
        for dim in rubric.dimensions:
            ci = bootstrap_mean(part[f"score_{dim.name}"], rng=rng, rounds=rounds, level=level)
            rows.append((system, dim.name, ci.estimate, ci.low, ci.high, len(part)))
    columns = ["system", "dimension", "mean", "ci_low", "ci_high", "n"]
    return pd.DataFrame(rows, columns=columns).assign(level=level)


def with_truth(table: pd.DataFrame, truth: pd.DataFrame | None) -> pd.DataFrame:
    """The ratings table with the simulated truth beside it (unchanged without truth).

    Adds ``strength``, ``true_rating`` and ``covered`` (the true rating lies within the
    bootstrap interval) by model.
    """
    if truth is None:
        return table
    out = table.merge(truth, on="model", how="left")
    out["covered"] = (out["ci_low"] <= out["true_rating"]) & (out["true_rating"] <= out["ci_high"])
    return out


def best_versus(versus: pd.DataFrame) -> pd.Series:
    """The row of the system with the highest win rate against the baseline."""
    return versus.sort_values("win_rate", ascending=False).iloc[0]


def pair_outcomes(judgments: pd.DataFrame) -> pd.DataFrame:
    """How many pairs ended in each outcome (``consistent``, ``inconsistent_tie``, ...)."""
    return judgments["outcome"].value_counts().rename_axis("outcome").reset_index(name="pairs")


# --------------------------------------------------------------------------- human votes


def oriented(battles: pd.DataFrame, pairs: Sequence[tuple[str, str]]) -> pd.DataFrame:
    """``battles`` with every pair in the study's orientation (``model_a`` = the pair's x):
    a battle listed the other way round is flipped (models swapped, a <-> b)."""
    flip = {(y, x) for x, y in pairs}
    swap = np.array([(a, b) in flip for a, b in zip(battles["model_a"], battles["model_b"],
                                                       strict=True)], dtype=bool)  # fmt: skip
    out = battles.copy()
    out.loc[swap, ["model_a", "model_b"]] = battles.loc[swap, ["model_b", "model_a"]].to_numpy()
    out.loc[swap, "winner"] = battles.loc[swap, "winner"].map({"a": "b", "b": "a", "tie": "tie"})
    return out


def _pair_key(frame: pd.DataFrame) -> pd.Series:
    return frame["question_id"].astype(str) + "|" + frame["model_a"] + "|" + frame["model_b"]


def human_majority(votes: pd.DataFrame) -> pd.DataFrame:
    """Per (question, pair): the votes and the human verdict, the winner more than half of
    the annotators chose (``None`` without one: that pair leaves the agreement).

    Args:
        votes: :func:`oriented` human battles (``annotator`` column).

    Returns:
        ``key, question_id, model_a, model_b, n_votes, human`` (a / b / tie / None).
    """
    keyed = votes.assign(key=_pair_key(votes))
    first = keyed.drop_duplicates("key").set_index("key")
    grouped = keyed.groupby("key", sort=False)["winner"]
    return pd.DataFrame({
        "key": first.index, "question_id": first["question_id"].to_numpy(),
        "model_a": first["model_a"].to_numpy(), "model_b": first["model_b"].to_numpy(),
        "n_votes": grouped.size().loc[first.index].to_numpy(),
        "human": majority_vote([list(g) for _, g in grouped], strict=True),
    })  # fmt: skip


def judge_human_agreement(judge: pd.DataFrame, human: pd.DataFrame) -> dict[str, Any]:
    """The judge's battles against the human majority on the pairs both decided.

    MT-Bench agreement (Zheng et al. 2023): *with ties* over every common pair, *without
    ties* over the pairs where both picked a winner; also per vote (the judge's verdict
    repeated once per human vote, as MT-Bench counts). Pairs the judge left unscored or
    dropped, and pairs without a human majority, are counted, not compared.
    """
    judged = judge.assign(key=_pair_key(judge)).drop_duplicates("key").set_index("key")
    common = human[human["key"].isin(judged.index)]
    decided = common[common["human"].notna()]
    verdicts = judged.loc[decided["key"], "winner"].tolist()
    per_vote = ag.pairwise_agreement(
        np.repeat(verdicts, decided["n_votes"]), np.repeat(decided["human"], decided["n_votes"])
    ) if len(decided) else None  # fmt: skip
    return {
        "pairs": len(human), "judged": len(common),
        "no_majority": int(common["human"].isna().sum()),
        "agreement": ag.pairwise_agreement(verdicts, decided["human"].tolist()),
        "per_vote": per_vote,
    }  # fmt: skip


def vote_agreement(votes: pd.DataFrame, *, rng: np.random.Generator, rounds: int,
                   level: float) -> dict[str, Any] | None:  # fmt: skip
    """Agreement among annotators on the pairs several voted on (nominal Krippendorff's
    alpha with a bootstrap interval, mean pairwise exact agreement and Cohen's kappa);
    ``None`` with fewer than two annotators."""
    if votes["annotator"].nunique() < 2:
        return None
    long = votes.assign(item=_pair_key(votes))[["item", "annotator", "winner"]]
    table = wide(long.drop_duplicates(["item", "annotator"], keep="last"), "winner")
    return annotator_agreement(table, numeric=False, rng=rng, rounds=rounds, level=level)


# --------------------------------------------------------------------------- style and length


def answer_styles(answers: pd.DataFrame) -> pd.DataFrame:
    """Style counts of every successful answer (:func:`evalbench.ratings_style.style_counts`).

    Returns:
        ``model, question_id, tokens, headers, lists, bold``.
    """
    ok = answers[answers["error"].isna()].rename(columns={"system": "model"})
    return answer_style_counts(ok, text="answer")


def baseline_scores(battles: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """Each battle against ``baseline`` from the other system's side: ``model, question_id,
    preference`` (1 it won, 0.5 tie, 0 it lost)."""
    mine = battles[(battles["model_a"] == baseline) | (battles["model_b"] == baseline)]
    as_a = (mine["model_a"] == baseline).to_numpy()
    points = mine["winner"].map({"a": 1.0, "b": 0.0, "tie": 0.5}).to_numpy(dtype=float)
    return pd.DataFrame({
        "model": np.where(as_a, mine["model_b"], mine["model_a"]),
        "question_id": mine["question_id"].to_numpy(),
        "preference": np.where(as_a, 1.0 - points, points),
    })  # fmt: skip


def length_controlled(battles: pd.DataFrame, answers: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """AlpacaEval 2.0's length-controlled win rate of each system against ``baseline``
    (:func:`evalbench.ratings_lc.lc_win_rates`).

    One row per (system, question) battle against the baseline; answer lengths in characters;
    no gamed baselines (``length_controlled_noreg``). Instruction difficulty (AlpacaEval's own
    vector covers its 805 instructions only) is fitted on the *other* systems' battles against
    the baseline: fitted on the system's own outcomes it would explain them by construction.
    With no other system it is 0.

    Returns:
        :data:`evalbench.ratings_lc.LC_COLUMNS`.
    """
    scores = baseline_scores(battles, baseline)
    length = answers.set_index(["system", "question_id"])["length"]
    mine = pd.MultiIndex.from_arrays([scores["model"], scores["question_id"]])
    base = pd.MultiIndex.from_arrays([[baseline] * len(scores), scores["question_id"]])
    scores["len_model"] = length.reindex(mine).to_numpy()
    scores["len_baseline"] = length.reindex(base).to_numpy()
    return lc_win_rates(scores, difficulty="others")


def recovery(table: pd.DataFrame) -> dict[str, float]:
    """How close raw and style-controlled ratings are to the simulated true ratings.

    ``spearman_*``: rank correlation with ``true_rating``; ``rmse_*``: root mean squared
    difference (rating points); ``shape_rmse_*``: the same after the best line through the
    truth (``rating ≈ a + b·true``), i.e. distortion beyond a common shrinkage (ties pull
    every rating toward the others).
    """
    from scipy.stats import spearmanr  # here: importing scipy.stats costs ~0.5 s per process

    out: dict[str, float] = {}
    truth = table["true_rating"].to_numpy(dtype=float)
    for name, col in (("raw", "rating"), ("style", "style_rating")):
        got = table[col].to_numpy(dtype=float)
        out[f"spearman_{name}"] = float(spearmanr(got, truth).statistic)
        out[f"rmse_{name}"] = float(np.sqrt(np.mean((got - truth) ** 2)))
        fit = np.polyval(np.polyfit(truth, got, 1), truth)
        out[f"shape_rmse_{name}"] = float(np.sqrt(np.mean((got - fit) ** 2)))
    return out


NO_OPPONENT = "no battle (no other answer judged on this prompt)"
DROPPED = "dropped (the judge's two orders disagreed)"


def measured_systems(
    answers: pd.DataFrame, judgments: pd.DataFrame, battles: pd.DataFrame
) -> list[Measured]:
    """Per system (in answer order): its answers that took part in a battle, and why the
    others did not (its failed call; the judge's failed call, unparsed output or dropped
    inconsistent verdict; no other answer to compare with). Linear in the rows."""
    fought = set(zip(battles["model_a"], battles["question_id"].astype(str), strict=True))
    fought |= set(zip(battles["model_b"], battles["question_id"].astype(str), strict=True))
    why = _unjudged(judgments)
    out = []
    for system, rows in answers.groupby("system", sort=False):
        keys = [(str(system), str(q)) for q in rows["question_id"]]
        states = [
            failed_call(error) if isinstance(error, str)
            else None if key in fought else why.get(key, NO_OPPONENT)
            for error, key in zip(rows["error"], keys, strict=True)
        ]  # fmt: skip
        out.append(measured(str(system), states, "answer"))
    return out


def _unjudged(judgments: pd.DataFrame) -> dict[tuple[str, str], str]:
    """(system, prompt) -> why its judgment made no battle, from every judgment row once:
    the judge's failed call, its unparsed output, a dropped inconsistent pair (the first
    reason found per answer, in that order)."""
    found: dict[tuple[str, str], str] = {}
    if "pair_id" in judgments:  # pairwise: a pair speaks for both its answers
        for row in judgments.itertuples():
            reason = _pair_reason(row)
            for side in (row.model_x, row.model_y) if reason else ():
                key = (str(side), str(row.pair_id))
                if key not in found or _priority(reason) < _priority(found[key]):
                    found[key] = str(reason)
    elif {"question_id", "status"} <= set(judgments.columns):
        for row in judgments.itertuples():
            if row.status != "scored":
                kind = getattr(row, "unscored_kind", None)
                state = judgment_state(row.status, row.error, kind, role="judge")
                found[(str(row.system), str(row.question_id))] = str(state)
    return found


def _priority(reason: str | None) -> int:
    """A failed judge call explains more than an unparsed output, which explains more than
    a dropped pair."""
    return 0 if str(reason).startswith("failed") else 1 if reason != DROPPED else 2


def _pair_reason(row: Any) -> str | None:
    if isinstance(row.error, str) and row.error:
        return failed_call(row.error.split("; ")[0], "judge")
    if row.outcome == "unscored":
        return unparsed()
    return DROPPED if row.outcome == "inconsistent_dropped" else None
