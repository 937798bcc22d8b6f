"""What the judge_public notebook says: sentences with numbers and tables.

Every sentence is escaped HTML built with :func:`evalbench.display.fill`; tables come with
their captions (:func:`evalbench.display.table_block`); the figures are :mod:`~.figures`'.
The judges are published ones: no model is asked, so nothing here is simulated and no call
can fail. A section not in this run's ``sections``: the function heading it (``prd_humans``,
``pandalm_setup``, ``mtbench_retest``, ``mtbench_pairs``) returns one line saying so and
its other functions return ``""``, so the notebook calls every one unconditionally.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from evalbench import display
from evalbench.findings import Findings, count, percent
from evalbench.tiers import expected_half_width, subset_label

from .data import Section
from .metrics import position_lean, reproduces_published
from .records import JudgePublicResult, PandalmResult, PrdResult

SECTION_TITLES: dict[Section, str] = {"prd": "PRD", "pandalm": "PandaLM", "mtbench": "MT-Bench"}
"""How a section is named in the line that says it was not run."""


def _level(result: JudgePublicResult) -> float:
    return result.params.confidence_level


def _all_pairs(result: JudgePublicResult) -> pd.Series:
    return result.mtbench_part().table.iloc[0]


def _not_run(section: Section) -> str:
    return display.fill(
        "<p>{s} is not in this run's <code>sections</code>.</p>", s=SECTION_TITLES[section]
    )


# --------------------------------------------------------------------------- key result


def _prd_key(prd: PrdResult) -> str:
    r = prd.table.set_index("reviewer").loc[prd.lead]
    return display.fill(
        "PRD Vicuna-80: {rev} agrees with the MTurk majority on {wt:.1%} [{wtl:.1%}, {wth:.1%}] "
        "of {n} items with ties, {wo:.1%} [{wol:.1%}, {woh:.1%}] of {nd} decisive items without "
        "ties (two MTurk workers agree {hw:.1%} / {ho:.1%})",
        rev=prd.lead, wt=r["with_ties"], wtl=r["with_ties_low"], wth=r["with_ties_high"],
        n=int(r["n"]), wo=r["without_ties"], wol=r["without_ties_low"], woh=r["without_ties_high"],
        nd=int(r["n_decisive"]), hw=prd.raters["with_ties"], ho=prd.raters["without_ties"],
    )  # fmt: skip


def _pandalm_key(panda: PandalmResult) -> str:
    judges = ", ".join(
        display.fill(
            "{j} {a:.1%} [{lo:.1%}, {hi:.1%}]",
            j=r.judge,
            a=r.accuracy,
            lo=r.accuracy_low,
            hi=r.accuracy_high,
        )
        for r in panda.judges.itertuples()
    )
    return (
        "PandaLM test set: accuracy against the annotators' majority "
        + judges
        + display.fill(" (n = {n})", n=len(panda.frame))
    )


def _mtbench_key(result: JudgePublicResult) -> str:
    row = _all_pairs(result)
    return display.fill(
        "MT-Bench: GPT-4 gives the same verdict in both answer orders on {c:.1%} "
        "[{lo:.1%}, {hi:.1%}] of {n} pairs",
        c=row["consistency"], lo=row["consistency_low"], hi=row["consistency_high"],
        n=int(row["n_pairs"]),
    )  # fmt: skip


def key_result(result: JudgePublicResult) -> str:
    """The key-result sentence: the lead PRD reviewer, both PandaLM judges, GPT-4 on MT-Bench.

    E.g. ``PRD Vicuna-80: gpt4 agrees with the MTurk majority on 58.9% [55.3%, 62.4%] of 744
    items with ties, ...``; the judges are published (real) ones, none simulated.
    """
    parts = []
    if result.prd is not None:
        parts.append(_prd_key(result.prd))
    if result.pandalm is not None:
        parts.append(_pandalm_key(result.pandalm))
    if result.mtbench is not None:
        parts.append(_mtbench_key(result))
    lead = display.fill(
        "<p><b>Key results</b> (published verdicts of real judges against real human labels; "
        "no model was asked, nothing is simulated). "
    )
    return (
        lead
        + "; ".join(parts)
        + display.fill(". Intervals: {lvl:.0%} Wilson.</p>", lvl=_level(result))
        + tier_note(result)
    )


POSITION_RISK = 0.9
"""A judge giving the same verdict in both orders on fewer pairs than this is a risk."""


def findings(result: JudgePublicResult) -> Findings:
    """What the study found (the report's opening, the summary's key result): each section's
    headline agreement in words with its interval; caveats: noisy human labels, a subsample;
    GPT-4's position inconsistency on MT-Bench as a risk."""
    parts = []
    if result.prd is not None:
        parts.append(_prd_words(result.prd))
    if result.pandalm is not None:
        parts.append(_pandalm_words(result.pandalm))
    if result.mtbench is not None:
        parts.append(_mtbench_words(result))
    key = "Published verdicts of real judges against real human labels (nothing simulated): "
    caveats = [_noisy_humans(result), _subsample_caveat(result)]
    risks = [_position_risk(result)]
    return Findings(
        key + "; ".join(parts) + ".",
        tuple(c for c in caveats if c),
        tuple(r for r in risks if r),
        detail=key_result(result),
    )


def _prd_words(prd: PrdResult) -> str:
    r = prd.table.set_index("reviewer").loc[prd.lead]
    return display.fill(
        "on PRD's Vicuna-80 questions, {rev} agrees with the MTurk majority on about {w} of {n} "
        "(ties counted), likely between {lo} and {hi}",
        rev=prd.lead,
        w=percent(r["with_ties"]),
        n=count(int(r["n"]), "item"),
        lo=percent(r["with_ties_low"]),
        hi=percent(r["with_ties_high"]),
    )


def _pandalm_words(panda: PandalmResult) -> str:
    judges = "; ".join(
        display.fill(
            "{j} about {a}, likely between {lo} and {hi}",
            j=r.judge,
            a=percent(r.accuracy),
            lo=percent(r.accuracy_low),
            hi=percent(r.accuracy_high),
        )
        for r in panda.judges.itertuples()
    )
    return (
        display.fill(
            "on PandaLM's test set ({n}), agreement with the annotators' majority: ",
            n=count(len(panda.frame), "pair"),
        )
        + judges
    )


def _mtbench_words(result: JudgePublicResult) -> str:
    row = _all_pairs(result)
    return display.fill(
        "on MT-Bench, GPT-4 gives the same verdict in both answer orders on about {c} of {n}, "
        "likely between {lo} and {hi}",
        c=percent(row["consistency"]),
        n=count(int(row["n_pairs"]), "pair"),
        lo=percent(row["consistency_low"]),
        hi=percent(row["consistency_high"]),
    )


def _noisy_humans(result: JudgePublicResult) -> str:
    if result.prd is None:
        return ""
    return display.fill(
        "The human labels are noisy: two MTurk workers agree with each other on only {w} of "
        "items (ties counted), which caps how far any judge can agree with them.",
        w=percent(result.prd.raters["with_ties"]),
    )


def _subsample_caveat(result: JudgePublicResult) -> str:
    p = result.params
    if p.tier == "full" and p.sample is None:
        return ""
    return display.fill(
        "A subsample ({size}): the published numbers are not reproduced, and each share is "
        "less certain than on the full data.",
        size=subset_label(p.tier, p.sample),
    )


def _position_risk(result: JudgePublicResult) -> str:
    if result.mtbench is None:
        return ""
    row = _all_pairs(result)
    if not row["consistency"] < POSITION_RISK:
        return ""
    return display.fill(
        "<b>GPT-4 is position-inconsistent on MT-Bench</b>: its verdict changes when the two "
        "answers swap places in about {k} of {n}, so a single-order verdict depends on "
        "which answer is shown first.",
        k=percent(1 - row["consistency"]),
        n=count(int(row["n_pairs"]), "pair"),
    )


def tier_note(result: JudgePublicResult) -> str:
    """With ``tier`` / ``sample``: what was kept and the interval half-width to expect at
    that size ("" for the full data)."""
    p = result.params
    if p.tier == "full" and p.sample is None:
        return ""
    sizes = []
    if result.prd is not None:
        sizes.append(("PRD items (strata: model pairs)", len(result.prd.llm_items)))
    if result.pandalm is not None:
        sizes.append(("PandaLM pairs (strata: human label)", len(result.pandalm.frame)))
    if result.mtbench is not None:
        sizes.append(("MT-Bench pair judgments (strata: category)", len(result.mtbench.pairs)))
    kept = "; ".join(
        display.fill(
            "{n} {what}, ±{hw:.3f}", n=n, what=what, hw=expected_half_width(n, p.confidence_level)
        )
        for what, n in sizes
    )
    size = subset_label(p.tier, p.sample)
    return (
        display.banner(
            f"SUBSAMPLE — {size} (seeded by sample_seed {p.sample_seed}, stratified, nested): the "
            "published numbers are not reproduced on a subsample."
        )
        + display.fill(
            "<p>Kept, with the expected {lvl:.0%} half-width of an agreement near 50%: ",
            lvl=p.confidence_level,
        )
        + kept
        + ".</p>"
    )


def sources_table(result: JudgePublicResult) -> str:
    """Each section's files: repository @ commit, license, number of files."""
    return display.table_block(result.sources, "Sources (repository @ commit, license)")


# --------------------------------------------------------------------------- PRD


def prd_humans(result: JudgePublicResult) -> str:
    """How many reviewer items lack a human majority, and how far two MTurk workers agree."""
    prd, p = result.prd, result.params
    if prd is None:
        return _not_run("prd")
    raters = prd.raters
    return display.fill(
        "<p>{nm} of the {n} reviewer items have three different votes (no majority) and are "
        "{pol}.</p><p><b>Human inter-rater agreement for scale</b> ({ni} triple-voted items "
        "over all 28 human-rated pairs, guanaco models included): two workers agree on {wt:.1%} "
        "of (item, worker pair)s with ties and {wo:.1%} without ties; Fleiss' kappa {fk:.3f}, "
        "Krippendorff's alpha {ka:.3f}. MTurk votes on this task are noisy, which caps any "
        "judge's agreement with them.</p>",
        nm=int(prd.llm_items["human"].isna().sum()), n=len(prd.llm_items),
        pol="left out" if p.human_no_majority == "drop" else "counted as ties",
        ni=raters["n_items"], wt=raters["with_ties"], wo=raters["without_ties"],
        fk=raters["fleiss_kappa"], ka=raters["krippendorff_alpha"],
    )  # fmt: skip


PRD_AGREEMENT_COLUMNS = [
    "reviewer", "n", "n_dropped", "with_ties", "with_ties_all", "n_decisive", "without_ties",
    "kappa", "single_order",
]  # fmt: skip
"""The columns of the PRD agreement table, in order."""


def prd_agreement_table(result: JudgePublicResult) -> str:
    """How a reviewer's verdict is resolved, then its agreement with the humans (table)."""
    p, level = result.params, _level(result)
    if result.prd is None:
        return ""
    note = display.fill(
        "<p>Dotted lines: human–human agreement (blue with ties, orange without). A reviewer's "
        "verdict is its two orders resolved ({pol}); <i>single_order</i> scores each order's "
        "verdict on its own, both counted; <i>with_ties_all</i> counts a dropped verdict as a "
        "miss.</p>",
        pol="inconsistent → tie" if p.inconsistent_policy == "tie" else "inconsistent → dropped",
    )  # fmt: skip
    folded = display.fold_intervals(
        result.prd.table, ["with_ties", "without_ties", "kappa", "single_order"]
    )
    caption = (
        f"PRD reviewers vs human majority: agreement (Wilson) and Cohen's kappa over x/y/tie "
        f"(bootstrap, {p.bootstrap_rounds} rounds); {level:.0%} intervals; with_ties_all = "
        "agreement with ties over every item with a human majority"
    )
    return note + display.table_block(folded[PRD_AGREEMENT_COLUMNS], caption)


PRD_BIAS_COLUMNS = [
    "reviewer", "n_pairs", "consistency", "n_inconsistent", "first_preference",
    "first_win_rate", "n_longer", "p_longer",
]  # fmt: skip
"""The columns of the PRD position and length table, in order."""


def prd_bias_table(result: JudgePublicResult) -> str:
    """Position consistency, first-position preference and P(longer wins) per reviewer."""
    prd, level = result.prd, _level(result)
    if prd is None:
        return ""
    folded = display.fold_intervals(prd.table, ["consistency", "first_win_rate", "p_longer"])
    h = prd.human_longer
    caption = (
        "PRD position and length bias: consistency = same verdict in both orders; "
        "first_preference = share of inconsistent pairs favouring the first-shown answer; "
        "first_win_rate over all single-order verdicts; P(longer wins) over decisive verdicts "
        f"(humans: {h['p_longer']:.3f} [{h['p_longer_low']:.3f}, {h['p_longer_high']:.3f}]); "
        f"{level:.0%} Wilson"
    )
    return display.table_block(folded[PRD_BIAS_COLUMNS], caption)


def prd_rerun(result: JudgePublicResult) -> str:
    """The sentence on a reviewer's second run (``""`` when PRD ships none)."""
    rerun = None if result.prd is None else result.prd.rerun
    if rerun is None:
        return ""
    return display.fill(
        "<p><b>Rerun:</b> PRD ships a second run of {r} on {p} (both orders, {n} verdicts): the "
        "two runs give the same verdict {e:.1%} of the time ({lvl:.0%} Wilson {lo:.1%}–{hi:.1%}), "
        "Cohen's kappa {k:.2f} ({klo:.2f} to {khi:.2f}).</p>",
        r=rerun["reviewer"], p=rerun["pair"], n=rerun["n"], e=rerun["exact"],
        lvl=_level(result), lo=rerun["exact_low"], hi=rerun["exact_high"], k=rerun["kappa"],
        klo=rerun["kappa_low"], khi=rerun["kappa_high"],
    )  # fmt: skip


def prd_against_papers(result: JudgePublicResult) -> str:
    """GPT-4 here beside MT-Bench's published agreement (``""`` when GPT-4 is not reviewed)."""
    prd = result.prd
    if prd is None or "gpt4" not in set(prd.table["reviewer"]):
        return ""
    gpt4 = prd.table.set_index("reviewer").loc["gpt4"]
    return display.fill(
        "<p>Here, on a different question set and with MTurk workers instead of experts, GPT-4 "
        "agrees with the MTurk majority {wt:.1%} / {wo:.1%} (with / without ties), while two "
        "MTurk workers agree {hw:.1%} / {ho:.1%}: without ties GPT-4 is close to MT-Bench's "
        "figure; with ties it is lower, as ties are frequent and noisy here. GPT-4's position "
        "consistency here is {c:.1%}.</p>",
        wt=gpt4["with_ties"], wo=gpt4["without_ties"], hw=prd.raters["with_ties"],
        ho=prd.raters["without_ties"], c=gpt4["consistency"],
    )  # fmt: skip


# --------------------------------------------------------------------------- PandaLM


def pandalm_setup(result: JudgePublicResult) -> str:
    """Pairs, items without a majority, GPT-3.5's unusable verdicts, and the paper check."""
    panda, p = result.pandalm, result.params
    if panda is None:
        return _not_run("pandalm")
    same = reproduces_published(panda.comparison)
    verdict = (
        "our accuracy, precision, recall and F1 reproduce PandaLM's published numbers to four "
        "decimals, and the annotators' kappas and label counts match its README."
        if same
        else "our numbers differ from the published ones (published_* columns); with "
        "pandalm_garbage: drop the GPT-3.5 row no longer follows PandaLM's protocol."
    )
    return display.fill(
        "<p>{n} pairs of responses; {nm} items without a majority of the three annotators "
        "are left out. GPT-3.5 wrote an unusable verdict {g} times: here it counts as "
        "<b>{gp}</b>.</p><p><b>Against the paper:</b> {v}</p>",
        n=len(panda.frame), nm=int(panda.frame["human"].isna().sum()),
        g=int(panda.frame["gpt-3.5-turbo_garbage"].sum()),
        gp="a tie (PandaLM's convention)" if p.pandalm_garbage == "tie"
        else "unscored (left out)",
        v=verdict,
    )  # fmt: skip


PANDALM_COLUMNS = [
    "judge", "n", "garbage", "accuracy", "accuracy_all", "precision", "recall", "f1", "kappa",
    "without_ties",
]  # fmt: skip
"""The columns of the PandaLM judges table, in order."""


def pandalm_judges_table(result: JudgePublicResult) -> str:
    """Accuracy (answered and all items), macro P/R/F1, kappa and agreement without ties."""
    if result.pandalm is None:
        return ""
    folded = display.fold_intervals(result.pandalm.judges, ["accuracy", "kappa"])
    caption = (
        "PandaLM judges vs the human majority: accuracy (Wilson) over the n pairs with a "
        "verdict, accuracy_all over every pair with a human majority (an unscored verdict "
        "counts as a miss), macro precision/recall/F1, Cohen's kappa (bootstrap), agreement "
        f"without ties; {_level(result):.0%} intervals"
    )
    return display.table_block(folded[PANDALM_COLUMNS], caption)


def pandalm_published_tables(result: JudgePublicResult) -> str:
    """Ours vs the paper's metrics, the README's annotator kappas and label counts."""
    panda = result.pandalm
    if panda is None:
        return ""
    published = panda.comparison.assign(difference=panda.comparison["difference"].round(4) + 0.0)
    return (
        display.table_block(
            published, "Ours vs PandaLM's published numbers (published to four decimals)", digits=4
        )
        + display.table_block(
            panda.annotators,
            "Inter-annotator Cohen's kappa (ours vs the README's IAA table) and raw agreement",
        )
        + display.table_block(panda.labels, "Human-majority label counts (ours vs the README)")
    )


def pandalm_longer_table(result: JudgePublicResult) -> str:
    """P(the longer response wins) per judge and for the humans (Wilson)."""
    if result.pandalm is None:
        return ""
    folded = display.fold_intervals(result.pandalm.longer, ["p_longer"])
    caption = (
        f"PandaLM: P(the longer response wins) among decisive verdicts "
        f"({_level(result):.0%} Wilson)"
    )
    return display.table_block(folded, caption)


# --------------------------------------------------------------------------- MT-Bench


def _estimate(by: dict[bool, Any], flag: bool) -> float:
    return by[flag].estimate if flag in by else np.nan


def mtbench_retest(result: JudgePublicResult) -> str:
    """GPT-4 grading two generations of the same answers: agreement, drift, length."""
    mt, level = result.mtbench, _level(result)
    if mt is None:
        return _not_run("mtbench")
    rt = mt.retest
    r, change, by = rt["retest"], rt["mean_change"], rt["mean_change_by_artifact"]
    slope = rt["change_vs_length"]
    return display.fill(
        "<p>{nj} GPT-4 grades in the file; {a1} of the first run's answers start with a leftover "
        "<code>assistant</code> chat-template token, {a2} of the second's.</p>"
        "<p>{n} triples with both grades scored ({u} unscored): same grade {ex:.1%} ({lvl:.0%} "
        "bootstrap {exlo:.1%}–{exhi:.1%}), within ±1 {w1:.1%} ({w1lo:.1%}–{w1hi:.1%}), Pearson r "
        "{pr:.2f} ({prlo:.2f}–{prhi:.2f}), quadratic kappa {qk:.2f}. The second generation is "
        "graded {mc:+.2f} points higher on average ({mclo:+.2f} to {mchi:+.2f}): {ma:+.2f} where "
        "the first answer had the artifact, {mn:+.2f} elsewhere. Spearman's rho between the "
        "grade change and the log length ratio of the two answers: {sl:+.2f} ({sllo:+.2f} to "
        "{slhi:+.2f}).</p>",
        nj=len(mt.single), a1=int(mt.regrades["artifact_1"].sum()),
        a2=int(mt.regrades["artifact_2"].sum()), n=r.n, u=rt["n_unscored"],
        ex=r.exact.estimate, lvl=level, exlo=r.exact.low, exhi=r.exact.high,
        w1=r.within_1.estimate, w1lo=r.within_1.low, w1hi=r.within_1.high,
        pr=r.pearson.estimate, prlo=r.pearson.low, prhi=r.pearson.high, qk=r.quadratic_kappa,
        mc=change.estimate, mclo=change.low, mchi=change.high, ma=_estimate(by, True),
        mn=_estimate(by, False), sl=slope.estimate, sllo=slope.low, slhi=slope.high,
    )  # fmt: skip


def mtbench_pairs(result: JudgePublicResult) -> str:
    """GPT-4's position consistency on the pairs, which side it leans to, P(longer wins)."""
    mt, level = result.mtbench, _level(result)
    if mt is None:
        return _not_run("mtbench")
    row = _all_pairs(result)
    lean = position_lean(row)
    return display.fill(
        "<p>{n} first-turn pairs, re-parsed here ({u} unscored). <b>Position consistency</b>: "
        "{c:.1%} ({lvl:.0%} Wilson {clo:.1%}–{chi:.1%}); {fp:.0%} of the {ni} inconsistent "
        "pairs favour the first-shown answer, so {bf:.1%} of pairs lean first and {bs:.1%} "
        "second. The longer answer wins {pl:.1%} of decisive verdicts ({nl}; Wilson "
        "{plo:.1%}–{phi:.1%}).</p>",
        n=len(mt.pairs), u=int(row["n_unscored"]), c=row["consistency"], lvl=level,
        clo=row["consistency_low"], chi=row["consistency_high"], fp=row["first_preference"],
        ni=int(row["n_inconsistent"]), bf=lean["first"], bs=lean["second"],
        pl=row["p_longer"], nl=int(row["n_longer"]), plo=row["p_longer_low"],
        phi=row["p_longer_high"],
    )  # fmt: skip


MTBENCH_PAIR_COLUMNS = [
    "category", "n_judged", "n_unscored", "consistency", "n_inconsistent", "first_preference",
    "first_win_rate", "n_longer", "p_longer",
]  # fmt: skip
"""The columns of the MT-Bench pair table, in order."""


def mtbench_pair_table(result: JudgePublicResult) -> str:
    """Position consistency and P(longer wins), all pairs and per category."""
    if result.mtbench is None:
        return ""
    folded = display.fold_intervals(
        result.mtbench.table, ["consistency", "first_win_rate", "p_longer"]
    )
    caption = (
        "MT-Bench GPT-4 pair judge: position consistency and P(longer wins) by category "
        f"({_level(result):.0%} Wilson)"
    )
    return display.table_block(folded[MTBENCH_PAIR_COLUMNS], caption)


# --------------------------------------------------------------------------- index


def headlines(result: JudgePublicResult) -> dict[str, Any]:
    """The index's numbers: the lead PRD reviewer's agreement with ties, PandaLM-7B's
    accuracy, GPT-4's MT-Bench position consistency (those of the sections run)."""
    heads: dict[str, Any] = {}
    if result.prd is not None:
        table = result.prd.table.set_index("reviewer")
        heads[f"PRD {result.prd.lead} vs human (with ties)"] = float(
            table.loc[result.prd.lead, "with_ties"]
        )
    if result.pandalm is not None:
        judges = result.pandalm.judges.set_index("judge")
        heads["PandaLM-7B accuracy"] = float(judges.loc["pandalm-7b", "accuracy"])
    if result.mtbench is not None:
        heads["MT-Bench GPT-4 position consistency"] = float(_all_pairs(result)["consistency"])
    return heads
