"""What the golden-set notebook says: sentences with numbers, tables with their captions,
and the index headlines.

Every function takes the study's :class:`~.records.JudgeGoldenResult`. Sentences are escaped
HTML (:func:`evalbench.display.fill`); tables are DataFrames with plain-text captions
(:func:`evalbench.display.table` escapes them); a part the run did not compute (retest,
pairs, several annotators) has a sentence saying so and no table. Nothing here computes a
number the metrics did not; the figures are :mod:`~.figures`'.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from evalbench import display, tiers
from evalbench.findings import Findings, count, percent
from evalbench.labels import POLICY_TEXT
from evalbench.measured import by_system, headline

from . import metrics
from .records import JudgeGoldenResult
from .scoring import PAIR_TIE_MARGIN

Table = tuple[pd.DataFrame, str]
"""A table to show and its caption (``display.table(*table)``)."""


def headlines(result: JudgeGoldenResult) -> dict[str, Any]:
    """The index headlines: the primary judge's ±k agreement on the headline dimension
    (with its Wilson interval), the panel's, and (with a retest) the exact retest agreement."""
    p, head = result.params, result.head
    primary, level = p.judges[0].name, p.confidence_level
    label = f"within ±{p.tolerance:g} on {p.headline} ({primary}; {level:.0%} Wilson)"
    value = f"{head.within_k:.3f} [{head.within_k_low:.3f}, {head.within_k_high:.3f}]"
    measured = by_system(metrics.measured_judges(result.judgments))
    out: dict[str, Any] = {
        label: headline(value, measured.get(primary)),
        f"panel within ±{p.tolerance:g} ({p.panel_method})": float(
            result.panel.summary["within_k"]
        ),
    }
    if result.retest is not None:
        out[f"retest exact ({primary})"] = float(result.retest.stats.exact.estimate)
    return out


def judge_kind(result: JudgeGoldenResult, name: str) -> str:
    """``simulated`` or ``real model``, for one judge."""
    return display.system_kind(name, result.simulated)


def is_demo(result: JudgeGoldenResult) -> bool:
    """Whether the golden set is the shipped synthetic demo set (not human labels)."""
    return result.params.golden == "demo"


# --------------------------------------------------------------------------- key result


def key_result(result: JudgeGoldenResult) -> str:
    """Each rubric judge's ±k agreement with the human headline score, labelled simulated or
    real, with its unscored items, the share of all items, and its failed calls."""
    p = result.params
    head = display.fill(
        "<p><b>Key result{syn}.</b> Within ±{k:g} of the human <b>{d}</b> score ({lvl:.0%} "
        "Wilson intervals over scored items; the share of all items counts unscored ones as "
        "misses): ",
        syn=" (synthetic golden set: rule-assigned scores, not human labels)"
        if is_demo(result)
        else "",
        k=p.tolerance,
        d=p.headline,
        lvl=p.confidence_level,
    )
    rows = result.agreement[result.agreement["dimension"] == p.headline]
    judges = "; ".join(_judge_sentence(result, row) for row in rows.to_dict("records"))
    return head + judges + ".</p>"


def _judge_sentence(result: JudgeGoldenResult, row: dict[str, Any]) -> str:
    name = str(row["judge"])
    primary = name == result.params.judges[0].name
    failed = display.failed_calls(result.usage, name)
    tail = display.fill(" — {f}", f=failed) if failed else ""
    if not row["n_scored"]:
        return display.fill(
            "{name} ({kind}{role}): no item scored ({u} unscored)",
            name=name,
            kind=judge_kind(result, name),
            role=", primary judge" if primary else "",
            u=row["n_unscored"],
        ) + tail  # fmt: skip
    text = display.fill(
        "{name} ({kind}{role}) {est:.1%} [{lo:.1%}, {hi:.1%}] of {n} scored items "
        "({u} unscored; {strict:.1%} of all {items})",
        name=name,
        kind=judge_kind(result, name),
        role=", primary judge" if primary else "",
        est=row["within_k"],
        lo=row["within_k_low"],
        hi=row["within_k_high"],
        n=row["n_scored"],
        u=row["n_unscored"],
        strict=row["within_k_strict"],
        items=row["n_items"],
    )
    return text + tail


def findings(result: JudgeGoldenResult) -> Findings:
    """What the study found (the report's opening, the summary's key result): how often each
    judge's headline score lands within ±k of the golden one, in words with its interval;
    caveats: a synthetic golden set, unscored items left out; a judge more lenient or
    stricter than the golden scores beyond chance as a risk."""
    p = result.params
    rows = result.agreement[result.agreement["dimension"] == p.headline].to_dict("records")
    key = display.fill(
        "How often each judge's {d} score lands within ±{k:g} of the golden score: ",
        d=p.headline,
        k=p.tolerance,
    ) + "; ".join(_judge_words(result, r) for r in rows if r["n_scored"])
    caveats = [_synthetic_caveat(result), _unscored_caveat(rows)]
    risks = [_bias_risk(r) for r in rows if r["n_scored"]]
    return Findings(
        key + ".",
        tuple(c for c in caveats if c),
        tuple(r for r in risks if r),
        detail=key_result(result),
    )


def _judge_words(result: JudgeGoldenResult, row: dict[str, Any]) -> str:
    primary = row["judge"] == result.params.judges[0].name
    return display.fill(
        "{name} ({kind}{role}) about {est} of {n}, likely between {lo} and {hi}",
        name=row["judge"],
        kind=judge_kind(result, row["judge"]),
        role=", primary judge" if primary else "",
        est=percent(row["within_k"]),
        n=count(int(row["n_scored"]), "scored item"),
        lo=percent(row["within_k_low"]),
        hi=percent(row["within_k_high"]),
    )


def _synthetic_caveat(result: JudgeGoldenResult) -> str:
    if not is_demo(result):
        return ""
    return (
        "The golden set is synthetic: its scores were assigned by rule for evalbench's demo, "
        "not given by people, so the agreement shows how the method works, not how good a "
        "judge is."
    )


def _unscored_caveat(rows: list[dict[str, Any]]) -> str:
    lost = [r for r in rows if r["n_unscored"]]
    if not lost:
        return ""
    each = "; ".join(
        display.fill("{j} {u} of {n}", j=r["judge"], u=int(r["n_unscored"]), n=int(r["n_items"]))
        for r in lost
    )
    return "Items a judge left unscored (an unreadable output or a failed call) are left out: " + (
        each + "."
    )


def _bias_risk(row: dict[str, Any]) -> str:
    """A judge more lenient or stricter than the golden scores beyond chance ("" if not)."""
    low, high = row.get("bias_low", math.nan), row.get("bias_high", math.nan)
    if not (low > 0 or high < 0):
        return ""
    return display.fill(
        "<b>{j} is {side} than the golden scores</b>: {b:+.1f} points on average (likely "
        "between {lo:+.1f} and {hi:+.1f}).",
        j=row["judge"],
        side="more lenient" if low > 0 else "stricter",
        b=row["bias"],
        lo=low,
        hi=high,
    )


def synthetic_notice(result: JudgeGoldenResult) -> str:
    """A banner when the golden set is the synthetic demo set ("" otherwise)."""
    if not is_demo(result):
        return ""
    return display.banner(
        "SYNTHETIC GOLDEN SET — evalbench's demo items with rule-assigned scores, not human "
        "labels. With simulated judges (their truth is the golden score) the numbers below "
        "measure the simulation knobs, which is what lets each one be checked against its "
        "known expectation."
    )


# --------------------------------------------------------------------------- golden set


def golden_intro(result: JudgeGoldenResult) -> str:
    """The golden set, rubric weights, target and who grades what."""
    p, rubric = result.params, result.rubric
    weights = ", ".join(
        f"{d.name} {d.weight:g} ({d.scale_min:g}–{d.scale_max:g})" for d in rubric.dimensions
    )
    retest = (
        f"; the primary judge {p.judges[0].name} grades everything a second time (replicate 1)"
        if p.retest
        else ""
    )
    return display.fill(
        "<p>{n} items from <code>{src}</code>, graded on the <b>{rub}</b> rubric (weights: {w}; "
        "weighted score = Σw·s/Σw). The target: the judge within ±{k:g} point(s) of the human "
        "score; headline dimension <b>{h}</b>. Every judge grades every item once (replicate "
        "0){rt}.</p>",
        n=len(result.golden),
        src=p.golden,
        rub=rubric.name,
        w=weights,
        k=p.tolerance,
        h=p.headline,
        rt=retest,
    )


def human_table(result: JudgeGoldenResult) -> Table:
    """The human (golden) scores per dimension: mean, standard deviation, quantiles."""
    caption = "Human (golden) scores per dimension: mean, standard deviation and quantiles"
    return metrics.human_summary(result.golden, result.rubric), caption


def status_table(result: JudgeGoldenResult) -> Table:
    """Scored and unscored judgments per judge and replicate."""
    caption = "Scored and unscored judgments per judge and replicate"
    return metrics.status_counts(result.judgments), caption


# --------------------------------------------------------------------------- agreement


def has_truth(result: JudgeGoldenResult) -> bool:
    """Whether any judge is simulated, so the agreement has known expected values."""
    return bool(result.agreement["expected_within_k"].notna().any())


def headline_sentence(result: JudgeGoldenResult) -> str:
    """The primary judge's ±k agreement on the headline dimension, strict share beside."""
    p, head = result.params, result.head
    return display.fill(
        "<p><b>Headline:</b> {j} ({kind}) is within ±{k:g} of the human <b>{d}</b> score on "
        "<b>{est:.1%}</b> of {n} scored items ({lvl:.0%} Wilson interval {lo:.1%}–{hi:.1%}); "
        "counting its {u} as misses: {strict:.1%}.</p>",
        j=p.judges[0].name,
        kind=judge_kind(result, p.judges[0].name),
        k=p.tolerance,
        d=p.headline,
        est=head.within_k,
        n=head.n_scored,
        lvl=p.confidence_level,
        lo=head.within_k_low,
        hi=head.within_k_high,
        u=display.count(head.n_unscored, "unscored item"),
        strict=head.within_k_strict,
    )


def expected_note(result: JudgeGoldenResult) -> str:
    """What the open diamonds are (only when a judge is simulated; "" otherwise)."""
    if not has_truth(result):
        return ""
    return (
        "<p>Open diamonds: the <i>expected</i> ±k agreement of each simulated judge, computed "
        "exactly from its knobs (noise, leniency, length bias, rounding, scale ends). About one "
        "interval in twenty is expected to miss its diamond by chance; many more would mean a "
        "bug.</p>"
    )


def within_caption(result: JudgeGoldenResult) -> str:
    """Caption of the ±k agreement table."""
    p = result.params
    truth = "; expected_within_k = the simulated judge's known value" if has_truth(result) else ""
    return (
        f"Judge vs human per dimension: share within ±{p.tolerance:g} over scored items "
        f"({p.confidence_level:.0%} Wilson interval); strict = over all items, unscored counted "
        f"as misses; exact = same score{truth}"
    )


def error_caption(result: JudgeGoldenResult) -> str:
    """Caption of the error, bias and kappa table."""
    p = result.params
    truth = "; expected_bias = the simulated judge's known value" if has_truth(result) else ""
    return (
        "Judge vs human per dimension: mean absolute error, bias = mean(judge − human) "
        f"(positive = lenient), quadratic weighted kappa ({p.confidence_level:.0%} bootstrap "
        f"intervals, {p.bootstrap_rounds} rounds), Spearman rho (point estimate){truth}"
    )


# --------------------------------------------------------------------------- bias and length


def confusion_note(result: JudgeGoldenResult) -> str:
    """Why there is no score confusion (``""`` when there is one)."""
    if result.confusion is not None:
        return ""
    return display.fill(
        "<p>No score confusion on {d}: the human reference ({pol}) has fractional scores, which "
        "are not points of the scale. With <code>human_reference: median</code> and an odd "
        "number of annotators, or <code>majority</code>, every reference is a scale point.</p>",
        d=result.shown, pol=result.params.human_reference,
    )  # fmt: skip


def bias_sentence(result: JudgeGoldenResult) -> str:
    """The primary judge's mean error and its length slope, with the sim knobs when simulated."""
    primary = result.params.judges[0]
    row = result.agreement.set_index(["judge", "dimension"]).loc[(primary.name, result.shown)]
    level, slope = result.params.confidence_level, result.slope
    knob = ""
    if primary.simulated:
        knob = display.fill(
            " (simulated: leniency {l:g}, length_bias {b:g}; expected bias {e:+.2f})",
            l=primary.sim.leniency,
            b=primary.sim.length_bias,
            e=row["expected_bias"],
        )
    return display.fill(
        "<p>{j}'s mean error on {d} (judge − human) is {b:+.2f} points (positive = lenient; "
        "{lvl:.0%} bootstrap {lo:+.2f} to {hi:+.2f}). Its error changes by {s:+.2f} points per "
        "e-fold of answer length ({lvl:.0%} bootstrap {slo:+.2f} to {shi:+.2f})",
        j=primary.name, d=result.shown, b=row["bias"], lvl=level, lo=row["bias_low"],
        hi=row["bias_high"], s=slope.estimate, slo=slope.low, shi=slope.high,
    ) + knob + "; a slope near 0 means length does not sway it.</p>"  # fmt: skip


# --------------------------------------------------------------------------- failures


def worst_sentence(result: JudgeGoldenResult) -> str:
    """What the worst-disagreement examples are."""
    return display.fill(
        "<p>The {n} scored items where {j} is furthest from the human {d} score (ties broken by "
        "item id). Texts are escaped.</p>",
        n=len(result.worst),
        j=result.params.judges[0].name,
        d=result.params.headline,
    )


def worst_rows(result: JudgeGoldenResult) -> tuple[list[dict[str, Any]], list[str]]:
    """The worst disagreements as example rows (scores written with ``:g``) and the fields
    to show (a simulated judge's canned ``extra_*`` texts are left out)."""
    worst = result.worst.copy()
    for col in ("human", "judge_score", "diff"):
        worst[col] = worst[col].map("{:g}".format)
    simulated = result.params.judges[0].simulated
    fields = [c for c in worst.columns if not (simulated and c.startswith("extra_"))]
    return worst.to_dict("records"), fields


def unscored_sentence(result: JudgeGoldenResult) -> str:
    """How many judgments could not be scored, and the failed calls behind them."""
    calls = [display.failed_calls(result.usage, s.name) for s in result.params.judges]
    failed = "; ".join(
        f"{s.name}: {c}" for s, c in zip(result.params.judges, calls, strict=True) if c
    )
    return display.fill(
        "<p>{n} could not be scored{f}.</p>",
        n=display.count(len(result.unscored), "judgment"),
        f=f" (failed calls — {failed})" if failed else "",
    )


def unscored_tables(result: JudgeGoldenResult) -> list[Table]:
    """The unscored judgments by judge and cause (none when every judgment was scored)."""
    if result.unscored.empty:
        return []
    return [(metrics.unscored_kinds(result.unscored), "Unscored judgments by judge and cause")]


def unscored_examples(result: JudgeGoldenResult) -> tuple[list[dict[str, Any]], list[str]]:
    """The first five unscored judgments as example rows, and the fields to show."""
    rows = result.unscored.head(5).to_dict("records")
    return rows, ["judge", "item", "unscored_reason", "raw"]


# --------------------------------------------------------------------------- panel


def panel_sentence(result: JudgeGoldenResult) -> str:
    """The panel's outliers, spread and ±k agreement with the human score."""
    p, s = result.params, result.panel.summary
    by_judge = ", ".join(f"{j} {c}" for j, c in s["outliers_by_judge"].items()) or "none"
    return display.fill(
        "<p>The {m} of the judges' {d} scores per item. A judge is an <b>outlier</b> on an item "
        "when it is more than {o:g} points from the median of the other judges (needs three or "
        "more). {f} of {n} items have an outlier (outlier flags by judge: {by}); mean range "
        "{r:.2f} points. The panel is within ±{k:g} of the human score on {pw:.1%} of items "
        "({lvl:.0%} Wilson {plo:.1%}–{phi:.1%}).</p>",
        m=p.panel_method, d=p.headline, o=p.outlier_distance, f=s["items_with_outlier"],
        n=s["n_items"], by=by_judge, r=s["mean_range"], k=p.tolerance, pw=s["within_k"],
        lvl=p.confidence_level, plo=s["within_k_low"], phi=s["within_k_high"],
    )  # fmt: skip


def outliers_table(result: JudgeGoldenResult) -> Table:
    """The items with an outlier judge (the caption says the notebook shows the first 12)."""
    p, outliers = result.params, result.panel.outliers
    caption = (
        f"Items with an outlier judge ({p.headline} scores; consensus = panel "
        f"{p.panel_method}, std = standard deviation of the judges' scores; first 12 of "
        f"{len(outliers)})"
    )
    return outliers, caption


# --------------------------------------------------------------------------- retest, pairs


def retest_sentence(result: JudgeGoldenResult) -> str:
    """How many items were graded twice, and the sim's expected exact agreement."""
    retest = result.retest
    if retest is None:
        return "<p>No retest in this study (<code>retest: false</code>).</p>"
    primary = result.params.judges[0]
    expected = ""
    if retest.expected_exact is not None:
        expected = display.fill(
            " Simulated: with its noise knob ({z:g}) two independent draws agree exactly with "
            "expected probability {e:.1%}.",
            z=primary.sim.noise,
            e=retest.expected_exact,
        )
    return display.fill(
        "<p>{j} graded the same {n} items twice (both runs scored). How often does it give the "
        "same {d} score?",
        j=primary.name,
        n=retest.stats.n,
        d=result.shown,
    ) + expected + "</p>"  # fmt: skip


def retest_tables(result: JudgeGoldenResult) -> list[Table]:
    """The retest table (none with ``retest: false``)."""
    if result.retest is None:
        return []
    p = result.params
    caption = (
        f"Test–retest of {p.judges[0].name} on {result.shown} ({p.confidence_level:.0%} "
        f"bootstrap intervals, {p.bootstrap_rounds} rounds; the two kappas are point estimates)"
    )
    return [(result.retest.table, caption)]


def pairs_sentence(result: JudgeGoldenResult) -> str:
    """Position consistency, length preference and human agreement of the pairwise judge."""
    if result.pairs is None:
        return "<p>No pairwise judge in this study (<code>pairwise_judge</code> not set).</p>"
    p, ps = result.params, result.pairs.summary
    spec = p.pairwise_judge
    assert spec is not None  # pairs exist only with a pairwise judge
    pos, lon, hum = ps["position"], ps["longer"], ps["human"]
    return display.fill(
        "<p>{j} ({kind}) compared the {n} pairs of answers to the same question in both orders "
        "({o}). <b>Position consistency</b> (same verdict in both orders): {c:.1%} ({lvl:.0%} "
        "Wilson {clo:.1%}–{chi:.1%}); {fp:.0%} of the inconsistent pairs favour whichever answer "
        "was shown first, and the first position wins {fw:.1%} of the {v} single-order "
        "verdicts.{e} The <b>longer answer</b> wins {pl:.1%} of decisive verdicts ({nl} pairs; "
        "Wilson {plo:.1%}–{phi:.1%}). Against the human preference (higher golden weighted "
        "score; tie within {tm:g}): {wt:.1%} with ties, {wo:.1%} without ties (n = {nd}).{fc}</p>",
        j=spec.name, kind=judge_kind(result, spec.name), n=ps["n_pairs"],
        o=", ".join(f"{k.replace('_', ' ')} {v}" for k, v in ps["outcomes"].items()),
        c=pos["consistency"], lvl=p.confidence_level, clo=pos["consistency_low"],
        chi=pos["consistency_high"], fp=pos["first_preference"], fw=pos["first_win_rate"],
        v=2 * pos["n_pairs"], e=_expected_consistency(result), pl=lon["p_longer"],
        nl=lon["n_longer"], plo=lon["p_longer_low"], phi=lon["p_longer_high"],
        tm=PAIR_TIE_MARGIN, wt=hum["with_ties"], wo=hum["without_ties"], nd=hum["n_decisive"],
        fc=_failed_pairs(result, spec.name),
    )  # fmt: skip


def _expected_consistency(result: JudgeGoldenResult) -> str:
    pairs, spec = result.pairs, result.params.pairwise_judge
    if pairs is None or pairs.expected_consistency is None or spec is None:
        return ""
    return (
        f" Simulated (position_bias {spec.sim.position_bias:g}, length_bias "
        f"{spec.sim.length_bias:g}): expected consistency {pairs.expected_consistency:.1%}."
    )


def _failed_pairs(result: JudgeGoldenResult, name: str) -> str:
    failed = display.failed_calls(result.usage, name)
    return f" {failed}; a pair with a failed call is unscored." if failed else ""


def agreement_tables(result: JudgeGoldenResult) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The agreement table with its intervals folded, split in two for display: the ±k
    columns and the error/bias/kappa columns."""
    shown = display.fold_intervals(result.agreement, ["within_k", "mae", "bias", "qwk"])
    within = ["judge", "dimension", "n_scored", "n_unscored", "within_k", "within_k_strict",
              "expected_within_k", "exact"]  # fmt: skip
    errors = ["judge", "dimension", "n_scored", "mae", "bias", "expected_bias", "qwk", "spearman"]
    return shown[within], shown[errors]


# --------------------------------------------------------------------------- size, annotators


def tier_sentence(result: JudgeGoldenResult) -> str:
    """How many items were studied (tier or sample) and how precise a share is at that size."""
    size = tiers.size_sentence(len(result.golden), "golden items studied", result.params)
    return f"<p>{display.escape(size)} Shares near 0 or 1 are known more tightly.</p>"


def humans_intro(result: JudgeGoldenResult) -> str:
    """Who annotated what, and the stated reference policy (a note when there is none)."""
    h = result.humans
    if h is None:
        return (
            "<p>One human score per item in this study. With several annotators (a golden set "
            "with an <code>annotator</code> column, as <code>evalbench label export</code> "
            "writes, or <code>annotations:</code> in params) this section shows their "
            "agreement and each judge against their reference.</p>"
        )
    c = h.counts
    spread = ", ".join(f"{display.count(v, 'item')} by {k}" for k, v in c["per_item"].items())
    dropped = h.reference.attrs.get("no_reference", [])
    text = display.fill(
        "<p>{a} annotators ({names}) gave {labels} labels on {items} items ({spread}). "
        "<b>Human reference</b> (<code>human_reference: {policy}</code>): {how}.{drop}</p>",
        a=len(c["annotators"]), names=", ".join(c["annotators"]), labels=c["labels"],
        items=c["items"], spread=spread, policy=h.policy, how=POLICY_TEXT[h.policy],
        drop=_no_reference(len(dropped)),
    )  # fmt: skip
    if c["simulated"]:
        text = (
            display.banner(
                "SIMULATED ANNOTATORS — these labels were written by evalbench's simulator "
                "(the golden score plus each annotator's noise and bias), not by people."
            )
            + text
        )
    return text


def _no_reference(n: int) -> str:
    if not n:
        return ""
    has, are = ("has", "is") if n == 1 else ("have", "are")
    return f" {display.count(n, 'item')} {has} no reference and {are} left out."


def _alpha_row(result: JudgeGoldenResult) -> dict[str, Any]:
    h = result.humans
    assert h is not None
    return h.agreement.set_index("dimension").loc[h.dimension].to_dict()


def humans_agreement_sentence(result: JudgeGoldenResult) -> str:
    """Krippendorff's alpha and the pairwise ±k agreement on the shown dimension."""
    if result.humans is None:
        return ""
    p, r = result.params, _alpha_row(result)
    return display.fill(
        "<p>On <b>{d}</b>, Krippendorff's alpha among the annotators is {a:.2f} ({lvl:.0%} "
        "bootstrap over items {lo:.2f} to {hi:.2f}; interval level; ordinal level {ao:.2f}). "
        "Two annotators are within ±{k:g} of each other on {wk:.1%} of the items both scored "
        "(exact {ex:.1%}; quadratic weighted kappa {q:.2f}; means over pairs).</p>",
        d=result.humans.dimension, a=r["alpha"], lvl=p.confidence_level, lo=r["alpha_low"],
        hi=r["alpha_high"], ao=r["alpha_ordinal"], k=p.tolerance, wk=r["within_k"],
        ex=r["exact"], q=r["qwk"],
    )  # fmt: skip


def humans_judge_sentence(result: JudgeGoldenResult) -> str:
    """The primary judge against the reference, and beside the annotators (leave one out)."""
    h = result.humans
    if h is None:
        return ""
    p, primary = result.params, result.params.judges[0].name
    row = h.versus.set_index(["judge", "dimension"]).loc[(primary, h.dimension)]
    mean = h.among.set_index("annotator").loc["mean"]
    gap = mean["judge_within_k"] - mean["human_within_k"]
    return display.fill(
        "<p>Against the annotators' {pol}, {j} ({kind}) is within ±{k:g} on {w:.1%} of {n} "
        "scored items ({lvl:.0%} Wilson {lo:.1%}–{hi:.1%}) on <b>{d}</b>. Leaving one annotator "
        "out at a time: an annotator is within ±{k:g} of the others' {pol} on {hw:.1%} of "
        "items on average, {j} on {jw:.1%} of the same items ({gap:+.1f} percentage points; "
        "a judge as good as a person lands near 0).</p>",
        pol=h.policy, j=primary, kind=judge_kind(result, primary), k=p.tolerance,
        w=row["within_k"], n=int(row["n_scored"]), lvl=p.confidence_level,
        lo=row["within_k_low"], hi=row["within_k_high"], d=h.dimension,
        hw=mean["human_within_k"], jw=mean["judge_within_k"], gap=100 * gap,
    )  # fmt: skip


def humans_tables(result: JudgeGoldenResult) -> list[Table]:
    """The annotators' tables, intervals folded: agreement per dimension, every pair, each
    judge against the reference, leave one annotator out (none without annotators)."""
    p, h = result.params, result.humans
    if h is None:
        return []
    k, lvl = f"±{p.tolerance:g}", f"{p.confidence_level:.0%}"
    agreement = display.fold_intervals(h.agreement, ["alpha"]).drop(columns="alpha_level")
    versus = display.fold_intervals(h.versus, ["within_k", "mae", "bias", "qwk"])
    keep = ["judge", "dimension", "n_scored", "within_k", "exact", "mae", "bias", "qwk"]
    return [
        (agreement, f"Among the annotators, per dimension: Krippendorff's alpha (interval "
         f"level, {lvl} percentile bootstrap over items, {p.bootstrap_rounds} rounds) and "
         f"ordinal alpha; exact, {k}, Cohen's and quadratic weighted kappa averaged over "
         "annotator pairs (weighted by shared items)"),
        (h.pairs, f"Every pair of annotators on {h.dimension}: items both scored, exact and "
         f"{k} agreement, Cohen's kappa, quadratic weighted kappa"),
        (versus[keep], f"Each judge against the annotators' {h.policy} ({k}: {lvl} Wilson; "
         f"MAE, bias, quadratic kappa: {lvl} bootstrap)"),
        (h.among, f"Leave one annotator out on {h.dimension}: the annotator and "
         f"{p.judges[0].name} against the {h.policy} of the other annotators ({k} share and "
         "mean absolute error, on the items where the annotator, the others' reference and "
         "the judge's score all exist); last row: the mean over annotators"),
    ]  # fmt: skip


# --------------------------------------------------------------------------- few-shot anchors


def anchors_sentence(result: JudgeGoldenResult) -> str:
    """What the anchors were and, per judge, how they moved the bias and the ±k agreement on
    the headline dimension (paired intervals; the sim judges' expected change beside it)."""
    if result.anchors is None:
        return (
            "<p>No few-shot anchors in this study (add <code>anchors:</code> to the params to "
            "grade every item a second time with them and compare).</p>"
        )
    p, table = result.params, result.anchors.comparison
    rows = table[table["dimension"] == p.headline].to_dict("records")
    head = display.fill(
        "<p>Every rubric judge graded every item a second time with {n} in its prompt "
        "(after the rubric's own calibration examples). On <b>{d}</b>, anchored − plain over "
        "the items scored both ways ({lvl:.0%} paired bootstrap over items, {r} rounds): ",
        n=display.count(len(p.anchors), "anchor"), d=p.headline, lvl=p.confidence_level,
        r=p.bootstrap_rounds,
    )  # fmt: skip
    return head + "; ".join(_anchor_row_text(result, row) for row in rows) + ".</p>"


def _anchor_row_text(result: JudgeGoldenResult, row: dict[str, Any]) -> str:
    k = result.params.tolerance
    text = display.fill(
        "{j} ({kind}): bias {bp:+.2f} → {ba:+.2f} ({bd:+.2f} [{bl:+.2f}, {bh:+.2f}]), within "
        "±{k:g} {wp:.1%} → {wa:.1%} ({wd:+.1%} [{wl:+.1%}, {wh:+.1%}]), n = {n}",
        j=row["judge"], kind=judge_kind(result, str(row["judge"])), bp=row["bias_plain"],
        ba=row["bias_anchored"], bd=row["bias_diff"], bl=row["bias_diff_low"],
        bh=row["bias_diff_high"], k=k, wp=row["within_k_plain"], wa=row["within_k_anchored"],
        wd=row["within_k_diff"], wl=row["within_k_diff_low"], wh=row["within_k_diff_high"],
        n=row["n_paired"],
    )  # fmt: skip
    if pd.notna(row["expected_bias_diff"]):
        text += display.fill(
            " (simulated: expected bias change {e:+.2f}, half its leniency)",
            e=row["expected_bias_diff"],
        )
    return text


def anchors_tables(result: JudgeGoldenResult) -> list[Table]:
    """One table, one row per judge, dimension and measure (±k agreement, bias, exact
    agreement): without and with the anchors, the paired difference with its interval and a
    simulated judge's expected difference (no table without anchors)."""
    if result.anchors is None:
        return []
    p, comparison = result.params, result.anchors.comparison
    labels = {"within_k": f"within ±{p.tolerance:g}", "bias": "bias", "exact": "exact"}
    parts = []
    for m, label in labels.items():
        part = display.fold_intervals(comparison, [f"{m}_diff"])
        part = part[["judge", "dimension", "n_paired", f"{m}_plain", f"{m}_anchored",
                     f"{m}_diff", f"expected_{m}_diff"]]  # fmt: skip
        part.columns = ["judge", "dimension", "n_paired", "plain", "anchored",
                        "anchored − plain", "expected (sim)"]  # fmt: skip
        parts.append(part.assign(measure=label))
    shown = pd.concat(parts).sort_index(kind="stable")
    caption = (
        f"Without (plain) and with few-shot anchors, per judge, dimension and measure, over the "
        f"n_paired items scored both ways: share within ±{p.tolerance:g} of the human score, "
        "bias (mean judge − human; positive = inflation), exact agreement; anchored − plain "
        f"with its {p.confidence_level:.0%} paired bootstrap interval over items "
        f"({p.bootstrap_rounds} rounds); expected (sim): a simulated judge's exact expected "
        "difference (— for a real judge)"
    )
    columns = ["judge", "dimension", "measure", "n_paired", "plain", "anchored",
               "anchored − plain", "expected (sim)"]  # fmt: skip
    return [(shown[columns].reset_index(drop=True), caption)]
