"""Statistics of the retry loop over its round records (pure).

The loop's **path** of an item in an arm is the weighted score it holds after each round: the
score of its latest answer, carried forward once the loop stopped at the threshold or the last
round, and missing from a failure on (an unscored judgment or a failed call: what the loop
would have done is unknown). Every comparison pairs an item with itself: round r against round
r − 1 (the gain of round r), round r against round 0 (the cumulative gain), the suggestion arm
against the control arm (the suggestion's effect). Intervals are seeded percentile bootstraps
over items; p-values are Wilcoxon signed-rank, Holm-adjusted across the rounds of an arm.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from evalbench.history.paired import holm, wilcoxon_signed_rank
from evalbench.judge.tables import interval_columns, wilson_columns
from evalbench.measured import Measured, failed_call, measured, unparsed
from evalbench.stats import bootstrap_mean

from .scoring import FAILURES, arm_order

_SLACK = 1e-9  # weighted scores are sums of weights times integers: 6.999… is 7


def score_paths(
    rounds: pd.DataFrame, arm: str, n_rounds: int, column: str = "weighted_score"
) -> pd.DataFrame:
    """Items × rounds ``0..n_rounds``: ``column`` of the answer the loop holds after each round.

    After a ``threshold`` or ``rounds`` stop the last value carries forward (the loop returned
    that answer); from a failure's round on (``unscored``, ``generator_error``,
    ``no_suggestion`` — the latter keeps its own, scored, round) the path is NaN.

    Args:
        rounds: the round records (``item, arm, round, stopped`` and ``column``).
        arm: ``suggestion`` or ``control``.
        n_rounds: the params' ``rounds``.
        column: ``weighted_score`` (the loop judge's), ``truth`` (a simulation's) or a
            ``score_<dimension>`` column.
    """
    part = rounds[rounds["arm"] == arm]
    items, row_of = np.unique(part["item"].to_numpy(dtype=str), return_inverse=True)
    r = part["round"].to_numpy(int)
    values = np.full((len(items), n_rounds + 1), np.nan)
    values[row_of, r] = part[column].to_numpy(float)
    end = np.full(len(items), -1)
    np.maximum.at(end, row_of, r)
    stopped = np.empty(len(items), dtype=object)
    at_end = r == end[row_of]
    stopped[row_of[at_end]] = part["stopped"].to_numpy(dtype=object)[at_end]
    failed = np.isin(stopped, list(FAILURES))[:, None]
    first_missing = np.where(stopped == "no_suggestion", end + 1, end)[:, None]
    cols = np.arange(n_rounds + 1)[None, :]
    held = values[np.arange(len(items)), end][:, None]
    values = np.where(~failed & (cols > end[:, None]), held, values)
    values = np.where(failed & (cols >= first_missing), np.nan, values)
    index = pd.Index(items, name="item")
    return pd.DataFrame(values, index=index, columns=pd.RangeIndex(n_rounds + 1, name="round"))


def _mean_iv(values: np.ndarray, rng: np.random.Generator, rounds: int, level: float) -> Any:
    return bootstrap_mean(values, rng=rng, rounds=rounds, level=level)


def round_gains(
    paths: pd.DataFrame,
    *,
    arm: str,
    rng: np.random.Generator,
    rounds: int,
    level: float,
    truth: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Per round r ≥ 1 of one arm: the mean gain ``S_r − S_{r−1}`` over the items whose path
    has both, and the cumulative gain ``S_r − S_0``, each with a paired bootstrap interval;
    the Wilcoxon p-value of the round's gain, Holm-adjusted across the arm's rounds.

    With ``truth`` (the same paths of a simulation's true scores): ``true_gain`` and
    ``true_cumulative`` over the same items, the values the intervals should hold.

    Returns:
        ``arm, round, n, gain, gain_low, gain_high, p, p_holm, cumulative, cumulative_low,
        cumulative_high, mean_score`` (+ ``true_gain, true_cumulative``).
    """
    rows = []
    values = paths.to_numpy(float)
    true = None if truth is None else truth.loc[paths.index].to_numpy(float)
    for r in range(1, values.shape[1]):
        step = values[:, r] - values[:, r - 1]
        ok = ~np.isnan(step)
        row: dict[str, Any] = {"arm": arm, "round": r, "n": int(ok.sum())}
        row |= interval_columns(_mean_iv(step[ok], rng, rounds, level), "gain")
        row["p"] = wilcoxon_signed_rank(step[ok]).p if ok.any() else math.nan
        total = values[ok, r] - values[ok, 0]
        row |= interval_columns(_mean_iv(total, rng, rounds, level), "cumulative")
        row["mean_score"] = _mean_or_nan(values[ok, r])
        if true is not None:
            row["true_gain"] = _mean_or_nan(true[ok, r] - true[ok, r - 1])
            row["true_cumulative"] = _mean_or_nan(true[ok, r] - true[ok, 0])
        rows.append(row)
    table = pd.DataFrame(rows)
    table.insert(table.columns.get_loc("p") + 1, "p_holm", holm(table["p"].to_numpy()))
    return table


def stops_helping(gains: pd.DataFrame, arm: str) -> int | None:
    """The first round of ``arm`` whose gain interval does not lie above 0 (more rounds stop
    helping there), or ``None`` when every round's does."""
    part = gains[(gains["arm"] == arm) & ~(gains["gain_low"] > 0)]
    return int(part["round"].min()) if len(part) else None


def round_shares(rounds: pd.DataFrame, level: float) -> pd.DataFrame:
    """Per arm and round r ≥ 1, the items retried in that round: how many improved, stayed
    and worsened against their own previous score (Wilson intervals), and how many retries
    could not be compared (a failed call or an unscored judgment in either round).

    Returns:
        ``arm, round, retried, compared, failed, improved, unchanged, worsened`` (counts) and
        ``improved_share`` / ``worsened_share`` with ``_low`` / ``_high``.
    """
    scores = rounds.set_index(["arm", "item", "round"])["weighted_score"].astype(float)
    rows = []
    for (arm, r), part in rounds[rounds["round"] > 0].groupby(["arm", "round"], sort=False):
        now = part["weighted_score"].to_numpy(float)
        before = scores.reindex(list(zip(part["arm"], part["item"], part["round"] - 1,
                                         strict=True))).to_numpy()  # fmt: skip
        delta = (now - before)[~np.isnan(now - before)]
        up, down = int((delta > _SLACK).sum()), int((delta < -_SLACK).sum())
        rows.append({
            "arm": arm, "round": int(r), "retried": len(part), "compared": len(delta),
            "failed": len(part) - len(delta), "improved": up, "unchanged": len(delta) - up - down,
            "worsened": down, **wilson_columns(up, len(delta), level, "improved_share"),
            **wilson_columns(down, len(delta), level, "worsened_share"),
        })  # fmt: skip
    if not rows:  # no round after the first (every loop ended there)
        return pd.DataFrame(columns=SHARE_COLUMNS)
    return pd.DataFrame(rows).sort_values(["round", "arm"], key=arm_order, ignore_index=True)


SHARE_COLUMNS = [
    "arm", "round", "retried", "compared", "failed", "improved", "unchanged", "worsened",
    *[f"{s}_share{b}" for s in ("improved", "worsened") for b in ("", "_low", "_high")],
]  # fmt: skip


def round_costs(rounds: pd.DataFrame, gains: pd.DataFrame) -> pd.DataFrame:
    """Per arm and round: the answers, tokens and cost (generator and loop judge) of that
    round, the cost per point gained in it and since the first answer.

    Cost per point = the round's cost / (mean gain × items compared): the price of one point
    of weighted score on one item. Its interval is the cost over the gain's interval, and
    only where the gain's interval lies above 0 (else a point may cost without bound).

    Returns:
        ``arm, round, answers, tokens, cost_usd, cumulative_cost_usd, per_point,
        per_point_low, per_point_high, cumulative_per_point`` (round 0: no gain, NaN).
    """
    table = (
        rounds.assign(tokens=rounds["prompt_tokens"] + rounds["completion_tokens"])
        .groupby(["arm", "round"], sort=False)
        .agg(answers=("item", "size"), tokens=("tokens", "sum"), cost_usd=("cost_usd", "sum"))
        .reset_index()
        .sort_values("round", kind="stable")  # the cumulative sums run over rounds
        .reset_index(drop=True)  # merged below has this order and index
    )
    retries = table["cost_usd"].where(table["round"] > 0, 0.0)
    table["cumulative_cost_usd"] = retries.groupby(table["arm"]).cumsum()
    merged = table.merge(gains, on=["arm", "round"], how="left")
    n, cost = merged["n"], merged["cost_usd"]
    above = merged["gain_low"] > 0
    table["per_point"] = _ratio(cost, merged["gain"] * n)
    table["per_point_low"] = _ratio(cost, merged["gain_high"] * n).where(above)
    table["per_point_high"] = _ratio(cost, merged["gain_low"] * n).where(above)
    table["cumulative_per_point"] = _ratio(table["cumulative_cost_usd"], merged["cumulative"] * n)
    return table.sort_values(["arm", "round"], key=arm_order).reset_index(drop=True)


def _ratio(numerator: pd.Series, denominator: pd.Series) -> pd.Series:
    """``numerator / denominator`` where the denominator is above 0, else NaN."""
    return numerator.astype(float) / denominator.astype(float).where(denominator > 0)


def suggestion_effect(
    suggestion: pd.DataFrame,
    control: pd.DataFrame,
    *,
    rng: np.random.Generator,
    rounds: int,
    level: float,
    truth: tuple[pd.DataFrame, pd.DataFrame] | None = None,
) -> pd.DataFrame:
    """The suggestion's effect, paired by item: per round r ≥ 1, the suggestion arm's score
    minus the control arm's after r rounds (both start from the same first answer, so this
    is the cumulative effect) and the difference of the two arms' gains in round r, each with
    a bootstrap interval; Wilcoxon p of the cumulative effect, Holm-adjusted across rounds.

    Args:
        suggestion: :func:`score_paths` of the suggestion arm.
        control: :func:`score_paths` of the control arm.
        rng: randomness of the intervals.
        rounds: bootstrap rounds.
        level: interval level.
        truth: the same two paths of a simulation's true scores (``true_effect`` and
            ``true_round_effect`` over the same items).
    """
    rows = []
    items = suggestion.index.intersection(control.index)
    s, c = suggestion.loc[items].to_numpy(float), control.loc[items].to_numpy(float)
    ts, tc = (None, None) if truth is None else (t.loc[items].to_numpy(float) for t in truth)
    for r in range(1, s.shape[1]):
        step = (s[:, r] - s[:, r - 1]) - (c[:, r] - c[:, r - 1])
        ok = ~np.isnan(step)
        total = s[ok, r] - c[ok, r]
        row: dict[str, Any] = {"round": r, "n": int(ok.sum())}
        row |= interval_columns(_mean_iv(total, rng, rounds, level), "effect")
        row["p"] = wilcoxon_signed_rank(total).p if ok.any() else math.nan
        row |= interval_columns(_mean_iv(step[ok], rng, rounds, level), "round_effect")
        if ts is not None and tc is not None:
            row["true_effect"] = _mean_or_nan(ts[ok, r] - tc[ok, r])
            row["true_round_effect"] = _mean_or_nan(
                (ts[ok, r] - ts[ok, r - 1]) - (tc[ok, r] - tc[ok, r - 1])
            )
        rows.append(row)
    table = pd.DataFrame(rows)
    table.insert(table.columns.get_loc("p") + 1, "p_holm", holm(table["p"].to_numpy()))
    return table


def _mean_or_nan(values: np.ndarray) -> float:
    return float(values.mean()) if values.size else math.nan


# --------------------------------------------------------------------------- self-preference


def final_rounds(rounds: pd.DataFrame) -> pd.DataFrame:
    """Per item and arm, the answer the loop ended with: its last scored round (the score it
    reported), with the loop judge's weighted scores of it and of the first answer.

    Returns:
        ``item, arm, final_round, loop_first, loop_final`` (items whose first answer was
        not scored are left out: the loop reported nothing).
    """
    scored = rounds[rounds["status"] == "scored"].sort_values("round")
    last = scored.groupby(["item", "arm"]).last().reset_index()
    first = scored[scored["round"] == 0].drop_duplicates("item").set_index("item")
    last = last[last["item"].isin(first.index)]
    return pd.DataFrame({
        "item": last["item"], "arm": last["arm"], "final_round": last["round"].astype(int),
        "loop_first": first.loc[last["item"], "weighted_score"].to_numpy(float),
        "loop_final": last["weighted_score"].to_numpy(float),
    }).reset_index(drop=True)  # fmt: skip


def self_preference_items(finals: pd.DataFrame, second: pd.DataFrame) -> pd.DataFrame:
    """:func:`final_rounds` with the second judge's scores of the same first and final
    answers, and each judge's gain and their gap ``(loop gain) − (second gain)``.

    Args:
        finals: :func:`final_rounds`.
        second: the second judge's judgments (``item, answer, weighted_score``; ``answer`` is
            ``first`` or an arm; a final answer of round 0 is the first answer).
    """
    scores = second.set_index(["item", "answer"])["weighted_score"].astype(float)
    first = scores.reindex(list(zip(finals["item"], ["first"] * len(finals), strict=True)))
    final_key = np.where(finals["final_round"] > 0, finals["arm"], "first")
    final = scores.reindex(list(zip(finals["item"], final_key, strict=True)))
    out = finals.assign(second_first=first.to_numpy(), second_final=final.to_numpy())
    out["loop_gain"] = out["loop_final"] - out["loop_first"]
    out["second_gain"] = out["second_final"] - out["second_first"]
    out["gap"] = out["loop_gain"] - out["second_gain"]
    return out


def self_preference(
    per_item: pd.DataFrame, *, arms: Sequence[str], rng: np.random.Generator, rounds: int,
    level: float,
) -> pd.DataFrame:  # fmt: skip
    """Per arm, over the items both judges scored (first and final answers): the loop
    judge's gain, the second judge's gain, and the gap between them, with bootstrap
    intervals; ``retried_share`` = share of those final answers written after round 0.

    A gap in the suggestion arm mixes self-preference (the judge grading answers written to
    its own suggestions) with the lucky scores a threshold stop keeps; the control arm has the
    second and not the first, so the two arms' difference (:func:`gap_difference`) is the
    self-preference.
    """
    rows = []
    for arm in arms:
        part = per_item[per_item["arm"] == arm].dropna(subset=["gap"])
        row: dict[str, Any] = {"arm": arm, "n": len(part),
                               "retried_share": float((part["final_round"] > 0).mean())
                               if len(part) else math.nan}  # fmt: skip
        for name in ("loop_gain", "second_gain", "gap"):
            row |= interval_columns(_mean_iv(part[name].to_numpy(), rng, rounds, level), name)
        rows.append(row)
    return pd.DataFrame(rows)


def gap_difference(
    per_item: pd.DataFrame, *, rng: np.random.Generator, rounds: int, level: float
) -> pd.Series:
    """Suggestion-arm gap − control-arm gap, paired by item (bootstrap interval): the loop
    judge's preference for answers written to its own suggestions, net of what a retry and a
    threshold stop do to any judge's scores."""
    wide = per_item.pivot(index="item", columns="arm", values="gap").dropna()
    diff = (wide["suggestion"] - wide["control"]).to_numpy() if len(wide) else np.array([])
    iv = _mean_iv(diff, rng, rounds, level)
    return pd.Series({"n": len(diff), **interval_columns(iv, "difference"),
                      "p": wilcoxon_signed_rank(diff).p if len(diff) else math.nan})  # fmt: skip


def second_effect(
    per_item: pd.DataFrame, *, rng: np.random.Generator, rounds: int, level: float
) -> pd.Series:
    """The suggestion's effect as the second judge sees the final answers: its score of the
    suggestion arm's final answer − the control arm's, paired by item (bootstrap interval).
    Free of the loop judge's self-preference and of the lucky scores a threshold stop keeps."""
    wide = per_item.pivot(index="item", columns="arm", values="second_final").dropna()
    diff = (wide["suggestion"] - wide["control"]).to_numpy() if len(wide) else np.array([])
    iv = _mean_iv(diff, rng, rounds, level)
    return pd.Series({"n": len(diff), **interval_columns(iv, "effect"),
                      "p": wilcoxon_signed_rank(diff).p if len(diff) else math.nan})  # fmt: skip


JUDGE_FAILED = "the judge call failed: "
"""How :func:`evalbench.judge.judge_rubric` words a failed judge call (``unscored_reason``)."""


def first_state(row: Any) -> str | None:
    """Why an item's first answer has no score (``None``: scored): the generator's failed
    call or empty answer, the judge's failed call, or its unparsed output."""
    if row.status == "scored":
        return None
    if row.status == "generator_error":
        error = str(row.generator_error or "")
        return "no answer (empty)" if error == "empty answer" else failed_call(error)
    reason = str(row.unscored_reason or "")
    return (
        failed_call(reason.removeprefix(JUDGE_FAILED), "judge")
        if reason.startswith(JUDGE_FAILED)
        else unparsed()
    )


def measured_arms(rounds: pd.DataFrame) -> list[Measured]:
    """Per arm (``<arm> arm``): items whose first answer (round 0, which every gain starts
    from) the judge scored, and why the others were not (:func:`first_state`)."""
    first = rounds[rounds["round"] == 0]
    return [
        measured(f"{arm} arm", [first_state(r) for r in rows.itertuples()], "item")
        for arm, rows in first.groupby("arm", sort=False)
    ]
