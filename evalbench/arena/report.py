"""What the arena notebook says: sentences with numbers, tables with captions.

Every sentence is escaped HTML built with :func:`evalbench.display.fill`; each system is
labelled simulated or real on its own, and failed calls are stated next to its number.
The figures are :mod:`~.figures`'.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from evalbench import display, ratings_report, tiers
from evalbench.findings import Findings, about, ordinal, percent

from . import metrics
from .records import ArenaResult

RATING_COLUMNS = ["model", "rating", "ci_low", "ci_high", "true_rating", "covered", "strength",
                  "online_elo", "n_battles"]  # fmt: skip
"""Columns of the ratings table, in the order shown (those present)."""


def system_label(result: ArenaResult, name: str) -> str:
    """``"simulated"`` or ``"real"``, with the system's failed calls when there are any."""
    kind = "simulated" if name in result.simulated else "real"
    failed = display.failed_calls(result.usage, name)
    return f"{kind}; {failed}" if failed else kind


def _judge(result: ArenaResult) -> str:
    """The judge's name and label (the params validator makes the judge required)."""
    name = result.params.judge.name if result.params.judge else ""
    return f"{name} ({system_label(result, name)})"


def _rating_text(result: ArenaResult, row: Any) -> str:
    interval = "" if row.model == result.anchor else f" [{row.ci_low:.0f}, {row.ci_high:.0f}]"
    return display.fill(
        "{model} ({label}) {rating:.0f}{ci}",
        model=row.model, label=system_label(result, row.model), rating=row.rating, ci=interval,
    )  # fmt: skip


def key_result(result: ArenaResult) -> str:
    """The key-result sentence: every system's rating with its interval and its label.

    E.g. ``sim-strong (simulated) 1142 [1096, 1193]``; the anchor has no interval (it is
    fixed). The judge is named with its label and failed calls too.
    """
    p = result.params
    fixed = f"; {result.anchor} fixed at {p.anchor_rating:g}" if result.anchor else ""
    rows = ", ".join(_rating_text(result, r) for r in result.table.itertuples())
    return display.fill(
        "<p><b>Key results.</b> Bradley–Terry ratings on the Elo scale with {lvl:.0%} "
        "bootstrap intervals ({r} rounds) from {n} battles judged by {judge}{fixed}: ",
        lvl=p.confidence_level, r=p.bootstrap_rounds, n=len(result.battles),
        judge=_judge(result), fixed=fixed,
    ) + rows + ".</p>"  # fmt: skip


def findings(result: ArenaResult) -> Findings:
    """What the study found (the report's opening, the summary's key result): each system's
    rating in words with its interval, the anchor marked as fixed, the judge apart; the
    caveat that the order changes once style or length is controlled (if it does); the
    judge's position and length bias as the top risks, with their numbers."""
    rows = [_rating_words(result, r) for r in result.table.itertuples()]
    key = (
        display.fill(
            "Ratings on the Elo scale from {n} battles judged by {judge}; higher is better, and "
            "100 points apart the higher-rated system wins about 64% of battles: ",
            n=len(result.battles),
            judge=_judge(result),
        )
        + "; ".join(rows)
        + "."
    )
    risks = tuple(r for r in (_position_risk(result), _length_risk(result)) if r)
    controlled = [c for c in (_style_caveat(result), _length_caveat(result)) if c]
    moved = [c for c in controlled if c.startswith(CHANGES)]
    caveats = [*moved, _judge_caveat(result, risks), *(c for c in controlled if c not in moved)]
    return Findings(key, tuple(caveats), risks, detail=key_result(result))


def _judge_caveat(result: ArenaResult, risks: tuple[str, ...]) -> str:
    """The ratings are one judge's preferences (and its biases, when it shows them)."""
    name = result.params.judge.name if result.params.judge else ""
    text = display.fill(
        "These ratings are what one judge, {j} ({k}), prefers, not a measure of correctness",
        j=name,
        k="simulated" if name in result.simulated else "real",
    )
    return text + (": its biases (the risks below) move them." if risks else ".")


def _rating_words(result: ArenaResult, row: Any) -> str:
    label = "simulated" if row.model in result.simulated else "real"
    if row.model == result.anchor:
        return display.fill(
            "{m} ({k}) is the anchor, fixed at {r:.0f} (the others are measured from it)",
            m=row.model,
            k=label,
            r=row.rating,
        )
    return display.fill(
        "{m} ({k}) {about}",
        m=row.model,
        k=label,
        about=about(row.rating, row.ci_low, row.ci_high, "rating"),
    )


def _style_caveat(result: ArenaResult) -> str:
    """Whether the order moves once length and formatting are controlled, and who moves."""
    if result.style is None or "rank_change" not in result.style.table:
        return ""
    moved = result.style.table[result.style.table["rank_change"] != 0]
    if not len(moved):
        return (
            "Controlled for answer length and formatting (style control), the order of "
            "the systems stays the same."
        )
    moves = "; ".join(
        display.fill(
            "{m} from {a} to {b}", m=r.model, a=ordinal(int(r.rank)), b=ordinal(int(r.style_rank))
        )
        for r in moved.itertuples()
    )
    return f"{CHANGES} answer length and formatting are controlled (style control): {moves}."


def _length_caveat(result: ArenaResult) -> str:
    """Raw and length-controlled win rates against the baseline, and whether the order of
    the systems changes between them ("" without a baseline)."""
    if result.lc is None:
        return ""
    rated = result.lc.dropna(subset=["lc_win_rate"])
    if not len(rated):
        return ""
    raw = list(rated.sort_values("win_rate", ascending=False)["model"])
    controlled = list(rated.sort_values("lc_win_rate", ascending=False)["model"])
    each = ", ".join(
        display.fill("{m} {w:.0f}% → {lc:.0f}%", m=r.model, w=r.win_rate, lc=r.lc_win_rate)
        for r in rated.itertuples()
    )
    head = display.fill(
        "win rates against {b}, raw → controlled for answer length (AlpacaEval 2.0's "
        "length-controlled win rate): ",
        b=result.params.baseline,
    )
    if len(raw) < 2:
        return "W" + head[1:] + each + "."
    if raw == controlled:
        return "W" + head[1:] + each + "; the order stays the same."
    now = display.fill("{o}", o=" then ".join(controlled))
    return f"{CHANGES} answer length is controlled, to {now} ({head}{each})."


CHANGES = "The order changes once"
"""How a caveat that the controlled order differs begins (such caveats come first)."""


POSITION_RISK = 0.9
"""A pairwise judge consistent in fewer of its pairs than this is a risk to the ratings."""


def _position_risk(result: ArenaResult) -> str:
    bias = result.position
    if bias is None or bias.consistency >= POSITION_RISK:
        return ""
    policy = "counted as ties" if result.params.inconsistent == "tie" else "dropped"
    return display.fill(
        "<b>The judge is position-inconsistent</b>: in {k} of {n} pairs ({share}) its verdict "
        "changed when the two answers swapped places; {first} of those favoured the answer "
        "shown first. Those pairs are {policy}, which pulls the ratings together.",
        k=bias.n_inconsistent,
        n=bias.n,
        share=percent(1 - bias.consistency),
        first=percent(bias.first_preference),
        policy=policy,
    )


def _length_risk(result: ArenaResult) -> str:
    if result.longer is None:
        return ""
    longer, n = result.longer
    if longer.low <= 0.5 <= longer.high:
        return ""
    which = "longer" if longer.low > 0.5 else "shorter"
    return display.fill(
        "<b>The judge prefers the {w} answer</b>: its verdict favoured the longer one in "
        "about {est} of {n} decisive pairs with different lengths (likely between {lo} and "
        "{hi}; 50% would be no preference). A system that writes more is rated {dir} for it.",
        w=which,
        est=percent(longer.estimate),
        n=n,
        lo=percent(longer.low),
        hi=percent(longer.high),
        dir="higher" if which == "longer" else "lower",
    )


def answers_intro(result: ArenaResult) -> str:
    """Who answered what: systems × prompts, how they were judged, who got documents."""
    p = result.params
    how = "pairwise (both orders)" if p.judging == "pairwise" else f"with the {p.rubric} rubric"
    return display.fill(
        "<p>{n} systems × {k} prompts (<code>{src}</code>), judged {how}; pairing "
        "<code>{pairing}</code>. Systems with the documents in their system prompt: {docs}.</p>",
        n=len(p.systems), k=len(result.prompts), src=p.prompts, how=how, pairing=p.pairing,
        docs=", ".join(p.retrieval_systems) or "none",
    )  # fmt: skip


def answers_table(result: ArenaResult) -> str:
    """Answers, errors and lengths per system."""
    summary = metrics.answer_summary(result.answers)
    return display.table_block(summary, "Answers per system (length in characters)", digits=0)


def example_answers(result: ArenaResult) -> list[dict[str, Any]]:
    """Every system's answer to the first prompt (shown with ``display.examples``)."""
    first = result.answers[result.answers["question_id"] == result.prompts[0].id]
    return first.to_dict("records")


def pairwise_judge(result: ArenaResult) -> str:
    """Position consistency, first-position preference and length preference of the judge."""
    bias, p = result.position, result.params
    if bias is None or result.longer is None:
        return "<p>Not used in this run: the answers were graded with a rubric (below).</p>"
    longer, n_longer = result.longer
    return display.fill(
        "<p>Verdict format <code>{fmt}</code>; an inconsistent pair becomes <b>{pol}</b>. "
        "Position consistency: <b>{c:.1%}</b> of {n} pairs judged in both orders; of the {ni} "
        "inconsistent pairs, {fp:.1%} favoured the answer shown first; the first position won "
        "{fw:.1%} of all verdicts. P(final verdict favours the longer answer) = <b>{pl:.1%}</b> "
        "({lvl:.0%} Wilson interval {lo:.1%}–{hi:.1%}, {nl} decisive pairs with different "
        "lengths). Judge: {judge}.</p>",
        fmt=p.verdict_format, pol="a tie" if p.inconsistent == "tie" else "dropped",
        c=bias.consistency, n=bias.n, ni=bias.n_inconsistent, fp=bias.first_preference,
        fw=bias.first_position_win_rate, pl=longer.estimate, lo=longer.low, hi=longer.high,
        lvl=p.confidence_level, nl=n_longer, judge=_judge(result),
    )  # fmt: skip


def pair_outcomes(result: ArenaResult) -> str:
    """How the pairs resolved (consistent, inconsistent tie or dropped, unscored); ``""`` in
    a rubric run (:func:`pairwise_judge` says so)."""
    if result.position is None:
        return ""
    outcomes = metrics.pair_outcomes(result.judgments)
    return display.table_block(outcomes, "Pair outcomes after resolving the two orders")


def rubric_grades(result: ArenaResult) -> str:
    """What the rubric judge saw and how many gradings were unscored."""
    p = result.params
    if result.means is None:
        return "<p>Not used in this run: the answers were compared pairwise (above).</p>"
    scores = result.judgments
    return display.fill(
        "<p>The judge grades every answer with the <code>{rubric}</code> rubric (1–10 per "
        "dimension; the weighted score combines them), {docs}. Unscored gradings: {u} of {n}. "
        "Judge: {judge}.</p>",
        rubric=p.rubric, u=int((scores["status"] != "scored").sum()), n=len(scores),
        docs="seeing the prompt's documents" if p.judge_documents else "without documents",
        judge=_judge(result),
    )  # fmt: skip


def dimension_table(result: ArenaResult) -> str:
    """Mean score per system and dimension with intervals (and the truth when simulated);
    ``""`` in a pairwise run (:func:`rubric_grades` says so)."""
    if result.means is None:
        return ""
    p = result.params
    caption = (
        f"Mean score per system and dimension, {p.confidence_level:.0%} bootstrap intervals "
        f"over answers ({p.bootstrap_rounds} rounds); n = scored answers"
    )
    if "true_mean" in result.means:
        caption += "; true_mean = the simulated truth (the average hidden score of the answers)"
    return display.table_block(result.means.drop(columns="level"), caption)


def ratings_intro(result: ArenaResult) -> str:
    """What the battles are and how the ratings are pinned."""
    p = result.params
    if p.judging == "pairwise":
        how = "per pair, the verdict after resolving both orders"
    else:
        how = f"per question, the higher rubric weighted score (within {p.tie_margin:g} = tie)"
    where = (
        f"anchored at {result.anchor} = {p.anchor_rating:g}"
        if result.anchor
        else f"centred at {p.anchor_rating:g}"
    )
    if p.prior:
        where += f", with {p.prior:g} pseudo-ties added per pair (prior)"
    return display.fill(
        "<p>{n} battles ({how}). Ratings are {where}; online Elo uses K={k:g} in battle order.</p>",
        n=len(result.battles), how=how, where=where, k=p.elo_k,
    )  # fmt: skip


def ratings_table(result: ArenaResult) -> str:
    """The ratings with intervals (and the simulated truth beside them)."""
    p = result.params
    shown = [c for c in RATING_COLUMNS if c in result.table.columns]
    caption = (
        f"Bradley–Terry ratings, {p.confidence_level:.0%} bootstrap intervals "
        f"({p.bootstrap_rounds} rounds)"
    )
    return display.table_block(result.table[shown], caption, digits=1)


def truth_note(result: ArenaResult) -> str:
    """How to read recovered vs true ratings (simulated runs only; else ``""``)."""
    if result.truth is not None:
        return (
            "<p><i>Simulated:</i> strength is each system's hidden quality in log-odds and "
            "true_rating its Elo-scale value, 400·strength/ln 10, anchored like the fit. The "
            "judge's length bias rewards the verbose system and penalises the terse one, and "
            "ties from inconsistent orders pull ratings toward each other: differences between "
            "recovered and true ratings show what the judge adds, not sampling error alone.</p>"
        )
    if result.params.judging == "rubric" and result.params.simulated:
        return (
            "<p><i>Simulated:</i> the truth is per dimension (the rubric table). A rubric battle "
            "is won by the higher weighted score, so its rating gap reflects P(higher score), "
            "which depends on the judge's noise and rounding as well as on the hidden quality: "
            "no true rating is drawn.</p>"
        )
    return ""


def versus_table(result: ArenaResult) -> str:
    """Win rate of each system against the baseline (``vs_baseline`` runs; else ``""``)."""
    if result.versus is None:
        return "<p>Not used in this run: every pair of systems was compared.</p>"
    p = result.params
    caption = (
        f"Win rate against {p.baseline} (ties = ½), {p.confidence_level:.0%} Wilson intervals; "
        "n_battles = questions where both answered and the judge scored both"
    )
    return display.table_block(result.versus.drop(columns=["level", "method", "weight"]), caption)


def headlines(result: ArenaResult) -> dict[str, Any]:
    """The index's numbers: position consistency (pairwise), the best win rate against the
    baseline (``vs_baseline``) and the top rating; the first three of these."""
    heads: dict[str, Any] = {}
    if result.position is not None:
        heads["position consistency"] = round(result.position.consistency, 3)
    if result.versus is not None:
        best = metrics.best_versus(result.versus)
        heads[f"{best['model']} win rate vs {result.params.baseline}"] = round(
            float(best["win_rate"]), 3
        )
    top = result.table.iloc[0]
    heads[f"top: {top['model']}"] = round(float(top["rating"]), 1)
    return dict(list(heads.items())[:3])


# --------------------------------------------------------------------------- size, human votes


def size_sentence(result: ArenaResult) -> str:
    """How many prompts were studied (tier or sample) and what that size can resolve."""
    p, n = result.params, len(result.prompts)
    how = tiers.subset_label(p.tier, p.sample)
    return display.fill(
        "<p>{n} prompts ({how}). At this size a win rate near 50% between two systems is known "
        "to about ±{hw:.1%} ({lvl:.0%}, normal approximation, one battle per prompt).</p>",
        n=n, how=how, hw=tiers.expected_half_width(n, p.confidence_level),
        lvl=p.confidence_level,
    )  # fmt: skip


def human_intro(result: ArenaResult) -> str:
    """The human votes: how many, by whom, and the judge's agreement with their majority."""
    h = result.human
    if h is None:
        return (
            "<p>No human votes in this run. To collect them: <code>evalbench label init "
            "pairwise &lt;run folder&gt; -o votes.yaml</code>, <code>evalbench label serve "
            "votes.yaml</code>, then <code>evalbench label export votes.yaml votes.jsonl</code> "
            "and <code>human_battles: votes.jsonl</code> in params.</p>"
        )
    votes, agree = h.votes, h.agreement
    simulated = "simulated" in votes and bool(votes["simulated"].fillna(False).all())
    a = agree["agreement"]
    text = display.fill(
        "<p>{n} human votes by {k} on {pairs} prompt-pairs. On the {c} pairs the "
        "judge also decided and a strict majority of annotators chose (more than half; {nm} "
        "without one), the judge agrees with the human majority on {wt:.1%} of pairs with "
        "ties (n = {nt}) and {wo:.1%} of the decisive ones (n = {nd}; MT-Bench agreement).{pv}"
        "{out}</p>",
        n=len(votes), k=display.count(votes["annotator"].nunique(), "annotator"),
        pairs=agree["pairs"],
        c=agree["judged"] - agree["no_majority"], nm=agree["no_majority"], wt=a.with_ties,
        nt=a.n_with_ties, wo=a.without_ties, nd=a.n_without_ties, pv=_per_vote(agree),
        out=_outside(h.outside),
    )  # fmt: skip
    if simulated:
        note = "SIMULATED VOTES — written by evalbench's simulator, not by people."
        text = display.banner(note) + text
    return text + _annotator_sentence(result)


def _outside(n: int) -> str:
    if not n:
        return ""
    were = "was" if n == 1 else "were"
    return f" {display.count(n, 'vote')} on prompts outside this run {were} left out."


def _per_vote(agree: dict[str, Any]) -> str:
    pv = agree["per_vote"]
    if pv is None:
        return ""
    return display.fill(" Counting every vote: {w:.1%} with ties, {wo:.1%} without.",
                        w=pv.with_ties, wo=pv.without_ties)  # fmt: skip


def _annotator_sentence(result: ArenaResult) -> str:
    h = result.human
    if h is None or h.annotators is None:
        return ""
    s, p = h.annotators, result.params
    return display.fill(
        "<p>Among the annotators (pairs voted on by two or more): Krippendorff's alpha "
        "(nominal) {a:.2f} ({lvl:.0%} bootstrap over pairs {lo:.2f} to {hi:.2f}); two annotators "
        "give the same verdict on {ex:.1%} of the pairs both voted on (Cohen's kappa {k:.2f}, "
        "means over annotator pairs).</p>",
        a=s["alpha"], lvl=p.confidence_level, lo=s["alpha_low"], hi=s["alpha_high"],
        ex=s["exact"], k=s["kappa"],
    )  # fmt: skip


def human_ratings_table(result: ArenaResult) -> str:
    """The judge's ratings and the human votes' side by side (``""`` without votes)."""
    h = result.human
    if h is None:
        return ""
    if h.ratings is None:
        return display.fill("<p>No ratings from the human votes alone: {why}.</p>",
                            why=h.rating_error)  # fmt: skip
    judge = result.ratings.table.set_index("model")
    human = h.ratings.table.set_index("model")
    rows = []
    for model in judge.index:
        row = {"model": model, **_rating_cells(judge, model, "judge")}
        if model in human.index:
            row.update(_rating_cells(human, model, "human"))
            row["human_battles"] = int(human.loc[model, "n_battles"])
        rows.append(row)
    p = result.params
    caption = (
        f"Bradley–Terry ratings from the judge's battles and from the human votes alone "
        f"({p.confidence_level:.0%} bootstrap intervals, {p.bootstrap_rounds} rounds; the same "
        "anchor when the anchor system was voted on)"
    )
    return display.table_block(pd.DataFrame(rows), caption, digits=0)


def _rating_cells(table: pd.DataFrame, model: str, prefix: str) -> dict[str, Any]:
    low, high = table.loc[model, "ci_low"], table.loc[model, "ci_high"]
    return {
        f"{prefix}_rating": table.loc[model, "rating"],
        f"{prefix}_ci": f"[{low:.0f}, {high:.0f}]",
    }


# --------------------------------------------------------------------------- style and length


def style_intro(result: ArenaResult) -> str:
    """The style-controlled ratings in one paragraph: the coefficients with their intervals,
    the features that never varied, and who moves in the ranking."""
    s, p = result.style, result.params
    if s is None:
        return "<p>No style-controlled ratings in this run.</p>"
    return ratings_report.style_paragraph(s, level=p.confidence_level, rounds=p.bootstrap_rounds)


def style_table(result: ArenaResult) -> str:
    """Raw and style-controlled ratings side by side with the ranks (and the truth)."""
    s, p = result.style, result.params
    if s is None:
        return ""
    return ratings_report.style_table(s, level=p.confidence_level, rounds=p.bootstrap_rounds)


def style_coefficients_table(result: ArenaResult) -> str:
    """The style coefficients with their intervals."""
    return "" if result.style is None else ratings_report.style_coefficients_table(result.style)


def recovery_sentence(result: ArenaResult) -> str:
    """Simulated runs: raw vs controlled ratings against the true strengths (else ``""``)."""
    s = result.style
    if s is None or s.recovery is None:
        return ""
    r = s.recovery
    return display.fill(
        "<p><i>Simulated:</i> against the true ratings, the raw ratings have rank correlation "
        "{sr:.2f}, RMSE {er:.1f} points and {xr:.1f} points after the best line through the truth "
        "(distortion beyond the common shrinkage ties cause); the style-controlled ones {ss:.2f}, "
        "{es:.1f} and {xs:.1f}. The simulated judge adds log-odds for the longer answer, which "
        "the length coefficient absorbs.</p>",
        sr=r["spearman_raw"], er=r["rmse_raw"], xr=r["shape_rmse_raw"],
        ss=r["spearman_style"], es=r["rmse_style"], xs=r["shape_rmse_style"],
    )  # fmt: skip


def lc_table(result: ArenaResult) -> str:
    """Raw and length-controlled win rates against the baseline (``""`` without one)."""
    if result.lc is None:
        return ""
    caption = (
        f"Win rate against {result.params.baseline} (percent, ties ½) and AlpacaEval 2.0's "
        "length-controlled win rate (GLM length_controlled_noreg; instruction difficulty fitted "
        "on the other systems' battles against the baseline, not AlpacaEval's published vector, "
        "which covers its own instructions only); length_weight = the GLM's "
        "coefficient on tanh(standardized baseline − system length)"
    )
    return display.table_block(result.lc, caption, digits=1)


def lc_sentence(result: ArenaResult) -> str:
    """The length-controlled win rates in a sentence, beside the raw ones."""
    if result.lc is None:
        return ""
    return ratings_report.lc_sentence(result.lc, str(result.params.baseline))
