"""What the retry-loop notebook says: sentences with numbers, tables with their captions, and
the index headlines.

Every function takes the study's :class:`~.records.RetryLoopResult`. Sentences are escaped
HTML (:func:`evalbench.display.fill`); tables are DataFrames with plain-text captions; a part
the run did not compute (no control arm, no second judge) has a sentence saying so and no
table. Nothing here computes a number :mod:`~.metrics` did not.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from evalbench import display, tiers
from evalbench.findings import Findings

from .records import RetryLoopResult
from .scoring import FAILURES, STOP_REASONS, arm_order

Table = tuple[pd.DataFrame, str]
"""A table to show and its caption (``display.table(*table)``)."""


def _iv(value: float, low: float, high: float, fmt: str = "+.2f") -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if math.isnan(low) or math.isnan(high):
        return format(value, fmt)
    return f"{value:{fmt}} [{low:{fmt}}, {high:{fmt}}]"


def _last(result: RetryLoopResult, table: pd.DataFrame, arm: str | None = None) -> pd.Series:
    part = table if arm is None else table[table["arm"] == arm]
    return part.sort_values("round").iloc[-1]


def headlines(result: RetryLoopResult) -> dict[str, Any]:
    """The index headlines: the suggestion arm's gain after the last round, the suggestion's
    effect over the control arm (with one) and the self-preference gap (with a second judge);
    each ``estimate [low, high]``."""
    p = result.params
    row = _last(result, result.gains, "suggestion")
    out: dict[str, Any] = {
        f"gain after {int(row['round'])} rounds (suggestion arm)": _iv(
            row["cumulative"], row["cumulative_low"], row["cumulative_high"]
        )
    }
    if result.effect is not None:
        eff = _last(result, result.effect)
        out["suggestion − control"] = _iv(eff["effect"], eff["effect_low"], eff["effect_high"])
    if result.second is not None and result.second.difference is not None:
        d = result.second.difference
        out["self-preference (gap difference)"] = _iv(
            d["difference"], d["difference_low"], d["difference_high"]
        )
    elif p.second_judge is None and result.effect is None:
        out["stops helping at round"] = str(result.stops["suggestion"] or "never")
    return out


def findings(result: RetryLoopResult) -> Findings:
    """What the study found (the report's opening, the summary's key result): the gain after
    the last round and the suggestion's own effect over plain retries, in words with their
    intervals, and where more rounds stop helping; caveats: no control arm, a threshold that
    flatters the loop's own scores; the loop judge's self-preference as a risk."""
    row = _last(result, result.gains, "suggestion")
    key = display.fill(
        "After {n} rounds, the answers retried with the judge's suggestion score about {g} "
        "points higher than the first answers (weighted score), likely between {lo} and {hi}",
        n=int(row["round"]),
        g=f"{row['cumulative']:+.2f}",
        lo=f"{row['cumulative_low']:+.2f}",
        hi=f"{row['cumulative_high']:+.2f}",
    )
    if result.effect is not None:
        eff = _last(result, result.effect)
        key += display.fill(
            "; over the same retries without the suggestion, the suggestion itself adds about "
            "{e}, likely between {lo} and {hi}",
            e=f"{eff['effect']:+.2f}",
            lo=f"{eff['effect_low']:+.2f}",
            hi=f"{eff['effect_high']:+.2f}",
        )
    stop = result.stops["suggestion"]
    key += (
        ". Every round helped." if stop is None else f". More rounds stop helping at round {stop}."
    )
    caveats = [_control_caveat(result), _threshold_caveat(result)]
    risks = [_self_preference_risk(result)]
    return Findings(
        key,
        tuple(c for c in caveats if c),
        tuple(r for r in risks if r),
        detail=key_result(result),
    )


def _control_caveat(result: RetryLoopResult) -> str:
    if result.effect is not None:
        return ""
    return (
        "No control arm: part of the gain is what any second try gives (and regression to the "
        "mean), not the suggestion."
    )


def _threshold_caveat(result: RetryLoopResult) -> str:
    if result.params.threshold is None:
        return ""
    return display.fill(
        "The loop stops at a score of {t:g}, so the loop judge's own gains are flattered "
        "(lucky scores stop, unlucky ones are retried); the suggestion's effect over the "
        "control arm is free of this.",
        t=result.params.threshold,
    )


def _self_preference_risk(result: RetryLoopResult) -> str:
    d = result.second.difference if result.second is not None else None
    if d is None or not (d["difference_low"] > 0 or d["difference_high"] < 0):
        return ""
    return display.fill(
        "<b>The loop judge favours the answers it helped write</b>: its gains exceed a second "
        "judge's by {v} points, likely between {lo} and {hi}; read the gains through the "
        "second judge.",
        v=f"{d['difference']:+.2f}",
        lo=f"{d['difference_low']:+.2f}",
        hi=f"{d['difference_high']:+.2f}",
    )


def kind(result: RetryLoopResult, name: str) -> str:
    """``simulated`` or ``real model``."""
    return display.system_kind(name, result.simulated)


# --------------------------------------------------------------------------- intro


def simulated_notice(result: RetryLoopResult) -> str:
    """A banner when the generator is simulated ("" otherwise)."""
    if result.params.generator.name not in result.simulated:
        return ""
    sim = result.params.simulation
    return display.banner(
        "SIMULATED LOOP — the generator's answers are placeholders with known true scores "
        f"(first answers {sim.start:g} ± {sim.spread:g}; true mean gain per retry "
        f"{_list(sim.gains[: result.params.rounds])} with the suggestion, "
        f"{_list(sim.control_gains[: result.params.rounds])} without; loop judge's "
        f"self-preference {sim.self_preference:+g}). Every number below is about these knobs, "
        "which is what lets each estimate be checked against its truth."
    )


def _list(values: list[float]) -> str:
    return ", ".join(f"{v:+g}" for v in values)


def intro(result: RetryLoopResult) -> str:
    """The systems, the loop's settings and the size of the study."""
    p = result.params
    threshold = (
        f"until its weighted score reaches {p.threshold:g}" if p.threshold is not None
        else "for every round (no threshold)"
    )  # fmt: skip
    arms = "a suggestion arm and a control arm" if p.control else "the suggestion arm only"
    second = (
        display.fill(" The second judge {j} ({k}) grades the first and final answers.",
                     j=p.second_judge.name, k=kind(result, p.second_judge.name))
        if p.second_judge else ""
    )  # fmt: skip
    size = tiers.size_sentence(len(result.items), "items", p, quantity="a share of items")
    return display.fill(
        "<p>The generator {g} ({gk}) answers; the judge {j} ({jk}) grades each answer on the "
        "{r} rubric ({dims}) and writes a suggestion; an item is retried up to {n} times "
        "{t}, in {arms}.",
        g=p.generator.name, gk=kind(result, p.generator.name), j=p.judge.name,
        jk=kind(result, p.judge.name), r=p.rubric,
        dims=", ".join(d.name for d in result.rubric.dimensions), n=p.rounds, t=threshold,
        arms=arms,
    ) + second + display.fill(" {size}</p>", size=size)  # fmt: skip


def status_table(result: RetryLoopResult) -> Table:
    """Per arm and round: answers asked, scored, unscored, failed calls, and why items stopped."""
    rounds = result.rounds
    table = rounds.groupby(["arm", "round"], sort=False).agg(
        answers=("item", "size"),
        scored=("status", lambda s: int((s == "scored").sum())),
        unscored=("status", lambda s: int((s == "unscored").sum())),
        generator_errors=("status", lambda s: int((s == "generator_error").sum())),
    )
    stops = rounds.groupby(["arm", "round"], sort=False)["stopped"].value_counts().unstack()
    stops = stops.reindex(columns=list(STOP_REASONS)).fillna(0).astype(int)
    table = table.join(stops.rename(columns=lambda why: f"stopped: {why}")).reset_index()
    table = table.sort_values(["round", "arm"], key=arm_order, ignore_index=True)
    caption = (
        "Per arm and round: answers asked (round 0: the first answer, the same in both arms), "
        "judgments scored and unscored, failed generator calls, and how many items stopped "
        "there, by reason: " + "; ".join(f"{k}: {v}" for k, v in STOP_REASONS.items())
    )
    return table, caption


# --------------------------------------------------------------------------- gains


def _level(result: RetryLoopResult) -> str:
    p = result.params
    return f"{p.confidence_level:.0%} paired bootstrap over items, {p.bootstrap_rounds} rounds"


def gains_sentence(result: RetryLoopResult) -> str:
    """Each arm's gain per round and after the last round, with intervals."""
    parts = []
    for arm in result.params.arms():
        rows = result.gains[result.gains["arm"] == arm]
        steps = ", ".join(
            f"round {int(r['round'])} {_iv(r['gain'], r['gain_low'], r['gain_high'])}"
            for _, r in rows.iterrows()
        )
        last = rows.iloc[-1]
        parts.append(display.fill(
            "<b>{arm}</b> arm: {steps}; after {n} rounds {c} points over the first answer",
            arm=arm, steps=steps, n=int(last["round"]),
            c=_iv(last["cumulative"], last["cumulative_low"], last["cumulative_high"]),
        ))  # fmt: skip
    sim, note = result.params.simulation, ""
    if result.params.generator.simulated and sim.self_preference and result.params.judge.simulated:
        note = display.fill(
            " In the suggestion arm the loop judge also adds its simulated self-preference "
            "({sp:+g}) to every retry: round 1's gain holds it, the true gains do not.",
            sp=sim.self_preference,
        )
    return display.fill(
        "<p>Mean gain of the weighted score (1-10) per round, over the items whose loop has "
        "a score in both rounds ({lvl}): ", lvl=_level(result),
    ) + "; ".join(parts) + "." + note + "</p>"  # fmt: skip


def gains_table(result: RetryLoopResult) -> Table:
    """Per arm and round: items compared, gain and cumulative gain with intervals, Wilcoxon
    p (Holm-adjusted across the arm's rounds) and, in a simulation, the true values."""
    shown = display.fold_intervals(result.gains, ["gain", "cumulative"])
    columns = ["arm", "round", "n", "gain", "p", "p_holm", "cumulative", "mean_score"]
    columns += [c for c in ("true_gain", "true_cumulative") if c in shown]
    caption = (
        f"Gain of the loop judge's weighted score per round (S_r − S_r−1) and since the first "
        f"answer (S_r − S_0), {_level(result)}; an item that stopped at the threshold keeps its "
        "score (gain 0), one that failed is left out from the failure on; p: Wilcoxon "
        "signed-rank, p_holm: Holm across the arm's rounds; mean_score: after round r"
        + ("; true_*: the simulation's true gains of the same items" if "true_gain" in shown
           else "")
    )  # fmt: skip
    return shown[columns], caption


def stops_sentence(result: RetryLoopResult) -> str:
    """Where more rounds stop helping, per arm."""
    parts = []
    for arm in result.params.arms():
        stop = result.stops[arm]
        if stop is None:
            parts.append(display.fill("{arm}: every round's gain interval lies above 0", arm=arm))
            continue
        row = result.gains[(result.gains["arm"] == arm) & (result.gains["round"] == stop)].iloc[0]
        parts.append(display.fill(
            "{arm}: more rounds stop helping at round {r} (its gain {g}; rounds before it each "
            "added a gain whose interval lies above 0)", arm=arm, r=stop,
            g=_iv(row["gain"], row["gain_low"], row["gain_high"]),
        ))  # fmt: skip
    return "<p>" + "; ".join(parts) + ".</p>"


def selection_note(result: RetryLoopResult) -> str:
    """Why a threshold stop flatters the loop's own scores ("" without a threshold)."""
    p = result.params
    if p.threshold is None:
        return ""
    return display.fill(
        "<p><small>With a threshold ({t:g}) the loop stops on a noisy score: an item stops "
        "when its judgment was lucky and keeps that score, and an item is retried when its "
        "judgment was unlucky, so its next score tends to be higher even without a better "
        "answer (regression to the mean). Both inflate the gains measured by the loop judge; "
        "the control arm has the same inflation, so the suggestion's effect (suggestion − "
        "control) is free of it, and the second judge's gains are free of the lucky stops."
        "</small></p>", t=p.threshold,
    )  # fmt: skip


def shares_table(result: RetryLoopResult) -> Table:
    """Per arm and round, the retried items that improved, stayed and worsened."""
    shown = display.fold_intervals(result.shares, ["improved_share", "worsened_share"])
    columns = ["arm", "round", "retried", "compared", "failed", "improved", "unchanged",
               "worsened", "improved_share", "worsened_share"]  # fmt: skip
    caption = (
        "The items retried in each round against their own previous score (weighted, loop "
        f"judge): improved, unchanged, worsened; shares of the compared items with "
        f"{result.params.confidence_level:.0%} Wilson intervals; failed: a retry that was not "
        "scored (failed call or unscored judgment)"
    )
    return shown[columns], caption


# ------------------------------------------------------------------- the suggestion's effect


def effect_sentence(result: RetryLoopResult) -> str:
    """The suggestion arm against the control arm after each round (or why there is none)."""
    if result.effect is None:
        return (
            "<p>No control arm in this study (<code>control: false</code>): the gains above "
            "mix the suggestion's effect with what any second try and the threshold's lucky "
            "stops do.</p>"
        )
    rows = result.effect
    steps = "; ".join(
        display.fill("after round {r}: {e} (p_holm {p:.3g}, n = {n})", r=int(r["round"]),
                     e=_iv(r["effect"], r["effect_low"], r["effect_high"]), p=r["p_holm"],
                     n=int(r["n"]))
        for _, r in rows.iterrows()
    )  # fmt: skip
    truth = ""
    if "true_effect" in rows:
        truth = display.fill(
            " The simulation's true effect on the same items after the last round: {t:+.2f}.",
            t=rows.iloc[-1]["true_effect"],
        )
    second = result.second.effect if result.second is not None else None
    if second is not None:
        truth += display.fill(
            " These are the loop judge's scores, self-preference included; the second judge "
            "puts the effect on the final answers at {e} (below).",
            e=_iv(second["effect"], second["effect_low"], second["effect_high"]),
        )
    return display.fill(
        "<p>Suggestion arm − control arm, paired by item (both start from the same first "
        "answer; {lvl}; Wilcoxon, Holm across rounds): ", lvl=_level(result),
    ) + steps + "." + truth + "</p>"  # fmt: skip


def effect_table(result: RetryLoopResult) -> list[Table]:
    """Per round: the cumulative and the round's own effect of the suggestion (no table
    without a control arm)."""
    if result.effect is None:
        return []
    shown = display.fold_intervals(result.effect, ["effect", "round_effect"])
    columns = ["round", "n", "effect", "p", "p_holm", "round_effect"]
    columns += [c for c in ("true_effect", "true_round_effect") if c in shown]
    caption = (
        "The suggestion's effect: effect = suggestion-arm score − control-arm score after "
        "round r; round_effect = the suggestion arm's gain in round r − the control arm's; "
        f"{_level(result)}; true_*: the simulation's, on the same items"
    )
    return [(shown[columns], caption)]


# --------------------------------------------------------------------------- cost


def costs_sentence(result: RetryLoopResult) -> str:
    """What each arm's retries cost and what a point of gain costs."""
    parts = []
    for arm in result.params.arms():
        rows = result.costs[result.costs["arm"] == arm].sort_values("round")
        last = rows.iloc[-1]
        parts.append(display.fill(
            "{arm}: the first answers cost ${c0:.4f}, the retries ${cr:.4f} more, "
            "${pp:.4f} per point of weighted score gained per item", arm=arm,
            c0=rows.iloc[0]["cost_usd"], cr=last["cumulative_cost_usd"],
            pp=last["cumulative_per_point"],
        ))  # fmt: skip
    return (
        "<p>Generator and loop-judge calls at the systems' prices (a cached call is "
        "counted as if paid: the cost of running the loop): " + "; ".join(parts) + ".</p>"
    )


def costs_table(result: RetryLoopResult) -> Table:
    """Per arm and round: answers, tokens, cost, cost per point gained (with the interval of
    the gain) and since the first answer."""
    shown = display.fold_intervals(result.costs, ["per_point"], digits=5)
    columns = ["arm", "round", "answers", "tokens", "cost_usd", "cumulative_cost_usd",
               "per_point", "cumulative_per_point"]  # fmt: skip
    caption = (
        "Cost (USD) of each round's generator and loop-judge calls; per_point = the round's "
        "cost / (mean gain × items compared), the price of one point of weighted score on one "
        "item, with the cost over the gain's interval where that lies above 0 (— otherwise); "
        "cumulative_per_point: the retries' cost over the gain since the first answer"
    )
    return shown[columns], caption


# --------------------------------------------------------------------------- self-preference


def self_preference_sentence(result: RetryLoopResult) -> str:
    """The loop judge's gain against the second judge's, per arm, and their difference."""
    p, second = result.params, result.second
    if second is None or p.second_judge is None:
        return (
            "<p>No second judge in this study (<code>second_judge</code> not set): the loop "
            "judge grades answers written to its own suggestions, and nothing checks it.</p>"
        )
    parts = []
    for _, r in second.table.iterrows():
        parts.append(display.fill(
            "{arm}: loop judge {lg}, second judge {sg}, gap {g} (n = {n})", arm=r["arm"],
            lg=_iv(r["loop_gain"], r["loop_gain_low"], r["loop_gain_high"]),
            sg=_iv(r["second_gain"], r["second_gain_low"], r["second_gain_high"]),
            g=_iv(r["gap"], r["gap_low"], r["gap_high"]), n=int(r["n"]),
        ))  # fmt: skip
    text = (
        display.fill(
            "<p>Gain from the first to the final answer as each judge sees it ({lvl}): ",
            lvl=_level(result),
        )
        + "; ".join(parts)
        + "."
    )
    return text + _difference_text(result) + "</p>"


def _difference_text(result: RetryLoopResult) -> str:
    second, sim = result.second, result.params.simulation
    if second is None or second.difference is None:
        return " Without a control arm the gap mixes self-preference with the lucky stops."
    d = second.difference
    text = display.fill(
        " <b>Self-preference</b> (suggestion gap − control gap, paired by item, n = {n}): {v}: "
        "the points the loop judge adds to answers written to its own suggestions.",
        n=int(d["n"]), v=_iv(d["difference"], d["difference_low"], d["difference_high"]),
    )  # fmt: skip
    if second.effect is not None:
        e = second.effect
        text += display.fill(
            " The suggestion's effect on the final answers as the second judge sees them "
            "(suggestion − control, paired, n = {n}): {v}.", n=int(e["n"]),
            v=_iv(e["effect"], e["effect_low"], e["effect_high"]),
        )  # fmt: skip
    if result.params.judge.name in result.simulated and result.params.generator.simulated:
        share = second.table.set_index("arm").loc["suggestion", "retried_share"]
        text += display.fill(
            " Simulated: the loop judge adds {sp:+g} to those answers, {s:.0%} of the final "
            "answers are retries: about {e:+.2f} expected.", sp=sim.self_preference, s=share,
            e=sim.self_preference * share,
        )  # fmt: skip
    return text


def self_preference_table(result: RetryLoopResult) -> list[Table]:
    """Per arm: both judges' gains and the gap (no table without a second judge)."""
    if result.second is None:
        return []
    shown = display.fold_intervals(result.second.table, ["loop_gain", "second_gain", "gap"])
    caption = (
        "First → final answer, paired by item: the loop judge's gain, the second judge's "
        f"gain and gap = their difference, {_level(result)}; retried_share: final answers "
        "written after round 0 (the rest are the first answer: no gain by either judge)"
    )
    return [(shown, caption)]


# --------------------------------------------------------------------------- failures


def failures_sentence(result: RetryLoopResult) -> str:
    """How many loops ended on a failure, by reason (never turned into a score)."""
    rounds = result.rounds
    failed = rounds[rounds["stopped"].isin(FAILURES)]
    if not len(failed):
        return "<p>No loop ended on a failure (every answer was produced and scored).</p>"
    counts = failed.groupby(["arm", "stopped"]).size()
    parts = ", ".join(f"{arm} {why} × {n}" for (arm, why), n in counts.items())
    return display.fill(
        "<p>Loops that ended on a failure, by arm and reason: {parts}. Such an item leaves the "
        "statistics from that round on (never scored as 0).</p>",
        parts=parts,
    )


def failure_examples(result: RetryLoopResult) -> tuple[list[dict[str, Any]], list[str]]:
    """The first few failed rounds with their reasons (for :func:`evalbench.display.examples`)."""
    rounds = result.rounds
    rows = rounds[rounds["status"] != "scored"].head(5)
    fields = ["item", "arm", "round", "status", "unscored_reason", "generator_error"]
    return rows[fields].to_dict("records"), fields


# --------------------------------------------------------------------------- key result


def key_result(result: RetryLoopResult) -> str:
    """The answer to "does feedback help?" in one paragraph: the gain with the suggestion,
    the suggestion's effect over a second try, where more rounds stop helping, the price of
    a point, and the self-preference check."""
    p = result.params
    row = _last(result, result.gains, "suggestion")
    text = display.fill(
        "<p><b>Key result{sim}.</b> After {n} rounds the suggestion arm gained {g} points of "
        "weighted score over the first answers ({lvl}). ",
        sim=" (simulated)" if p.generator.name in result.simulated else "", n=int(row["round"]),
        g=_iv(row["cumulative"], row["cumulative_low"], row["cumulative_high"]),
        lvl=_level(result),
    )  # fmt: skip
    if result.effect is not None:
        eff = _last(result, result.effect)
        text += display.fill(
            "Against the same retries without the suggestion: {e}. ",
            e=_iv(eff["effect"], eff["effect_low"], eff["effect_high"]),
        )
    stop = result.stops["suggestion"]
    text += "Every round helped. " if stop is None else display.fill(
        "More rounds stop helping at round {r}. ", r=stop)  # fmt: skip
    if result.second is not None and result.second.difference is not None:
        d, e = result.second.difference, result.second.effect
        text += display.fill(
            "Self-preference of the loop judge: {v}; the second judge puts the suggestion's "
            "effect on the final answers at {e}.",
            v=_iv(d["difference"], d["difference_low"], d["difference_high"]),
            e=_iv(e["effect"], e["effect_low"], e["effect_high"]) if e is not None else "—",
        )
    return text + "</p>"
