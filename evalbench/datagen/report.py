"""What the datagen report says: sentences with numbers, captions, tables, index headlines.

Every function is pure and returns escaped HTML (built with :func:`evalbench.display.fill`)
or a DataFrame; the notebook shows them with ``display.show`` / ``display.table``. Each
system is labelled simulated or real on its own (``result.simulated``), and failed calls
are stated next to the numbers they affect. The figures are :mod:`~.figures`'.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from evalbench import display, tiers
from evalbench.findings import Findings, count, percent

from . import metrics
from .metrics import AnswerSummary, StudySummary, answer_comparison
from .records import DatagenResult
from .reviewers import CONSENSUS_POLICY, reviewer_counts

# --------------------------------------------------------------------------- the index


def finish_headlines(summary: StudySummary) -> dict[str, float]:
    """Two or three headline numbers for the index: judge mean, win rate, a pass rate."""
    out: dict[str, float] = {}
    if summary.judge is not None:
        out["judge mean (1-5)"] = float(summary.judge.metrics.loc["mean_score", "estimate"])
    if summary.win is not None:
        out["win rate vs real"] = float(summary.win.table.loc["win_rate", "estimate"])
    if summary.human is not None:
        out["human pass rate"] = float(summary.human.approved_rate.estimate)
    elif summary.judge is not None:
        out["judge pass rate"] = float(summary.judge.metrics.loc["pass_rate", "estimate"])
    return out


def headlines(result: DatagenResult) -> dict[str, float]:
    """The index headlines of a run (see :func:`finish_headlines`)."""
    return finish_headlines(result.summary)


# --------------------------------------------------------------------------- key results


def system_label(name: str, simulated: frozenset[str] | set[str]) -> str:
    """``"<b>name</b> (simulated)"`` or ``"<b>name</b> (real model)"``, escaped."""
    return display.fill(
        "<b>{name}</b> ({kind})", name=name, kind=display.system_kind(name, simulated)
    )


def _failed(result: DatagenResult, name: str) -> str:
    failed = display.failed_calls(result.usage, name)
    return display.fill("; {f}", f=failed) if failed else ""


def key_results(result: DatagenResult) -> str:
    """The key-result paragraph: problems, judge, win rate, human pass rate, criteria met."""
    p, summary = result.params, result.summary
    parts = [
        display.fill(
            "{k} valid problems of {n} requested from generator ", k=len(result.problems),
            n=p.n_problems,
        )
        + system_label(p.generator.name, result.simulated)
        + _failed(result, p.generator.name)
    ]  # fmt: skip
    if summary.judge is not None:
        parts.append(_judge_part(result))
    if summary.win is not None:
        parts.append(_win_part(result))
    if summary.human is not None:
        parts.append(_human_part(result))
    met = summary.conclusion.table["met"]
    tail = display.fill(
        ". Intervals: {lvl:.0%} (bootstrap for the mean score and win rate, Wilson for rates). "
        "{k} of {t} quality criteria met (see the Conclusion).",
        lvl=p.confidence_level,
        k=int(met.eq(True).sum()),
        t=int(met.notna().sum()),
    )
    return "<p><b>Key results.</b> " + "; ".join(parts) + tail + "</p>"


def findings(result: DatagenResult) -> Findings:
    """What the study found (the report's opening, the summary's key result): the valid
    problems, the judge's mean score and pass rate, the win rate against real problems and
    the human pass rate, in words with their intervals, and the criteria met; caveats: no
    human review, or simulated reviews; risks: near-copies of real problems, criteria not
    met."""
    p, summary = result.params, result.summary
    kind = display.system_kind(p.generator.name, result.simulated)
    parts = [
        display.fill(
            "{k} valid problems of {n} requested from generator {g} ({kind})",
            k=len(result.problems),
            n=p.n_problems,
            g=p.generator.name,
            kind=kind,
        )
    ]
    if summary.judge is not None:
        parts.append(_judge_words(result))
    if summary.win is not None:
        parts.append(_win_words(result))
    if summary.human is not None:
        parts.append(_human_words(result))
    met = summary.conclusion.table["met"]
    tail = display.fill(
        ". {k} of {t} quality criteria met.", k=int(met.eq(True).sum()), t=int(met.notna().sum())
    )
    return Findings(
        "; ".join(parts) + tail,
        tuple(c for c in [_review_caveat(result)] if c),
        tuple(r for r in [_duplicates_risk(result), *_unmet_risks(result)] if r),
        detail=key_results(result),
    )


def _judge_words(result: DatagenResult) -> str:
    judge = result.summary.judge
    assert judge is not None
    m, name = judge.metrics, result.params.judge.name
    return display.fill(
        "the judge {j} ({k}) gave them a mean score of about {e:.1f} of 5, likely between "
        "{lo:.1f} and {hi:.1f}, and passed about {p} ({s} of {n} problems scored)",
        j=name,
        k=display.system_kind(name, result.simulated),
        e=m.loc["mean_score", "estimate"],
        lo=m.loc["mean_score", "low"],
        hi=m.loc["mean_score", "high"],
        p=percent(m.loc["pass_rate", "estimate"]),
        s=judge.n_scored,
        n=judge.n_items,
    )


def _win_words(result: DatagenResult) -> str:
    win = result.summary.win
    assert win is not None
    w = win.table.loc["win_rate"]
    return display.fill(
        "against real AIME problems they win about {e} of {n}, likely between {lo} and {hi} "
        "(50% = parity)",
        e=percent(w["estimate"]),
        n=count(win.n, "pair"),
        lo=percent(w["low"]),
        hi=percent(w["high"]),
    )


def _human_words(result: DatagenResult) -> str:
    human = result.summary.human
    assert human is not None
    a = human.approved_rate
    who = "a simulated reviewer" if result.human.simulated else "human reviewers"
    return display.fill(
        "{who} approved about {e} of {n}, likely between {lo} and {hi}",
        who=who,
        e=percent(a.estimate),
        n=count(human.n, "problem"),
        lo=percent(a.low),
        hi=percent(a.high),
    )


def _review_caveat(result: DatagenResult) -> str:
    if result.summary.human is None:
        return "No person reviewed the problems: their quality is an LLM judge's opinion."
    if result.human.simulated:
        return (
            "The reviews are simulated (written from each problem's hidden quality), not by people."
        )
    return ""


def _duplicates_risk(result: DatagenResult) -> str:
    flagged, n = len(result.duplicates.flagged_ids()), len(result.problems)
    if not flagged:
        return ""
    return display.fill(
        "<b>{k} of {n} generated problems nearly copy a real one</b> (similarity ≥ {t}): they "
        "may be remembered, not made, and a model may have seen them in training.",
        k=flagged,
        n=n,
        t=result.duplicates.threshold,
    )


def _unmet_risks(result: DatagenResult) -> list[str]:
    table = result.summary.conclusion.table
    unmet = table[table["met"].eq(False)]
    return [
        display.fill(
            "<b>Not met: {c}</b>: {v} (threshold {t}).",
            c=r.criterion,
            v=_criterion_value(r.criterion, r.value),
            t=_criterion_value(r.criterion, r.threshold),
        )
        for r in unmet.itertuples()
    ]


def _criterion_value(criterion: str, value: float) -> str:
    return f"{value:.1f}" if "score (1-5)" in criterion else percent(value)


def _judge_part(result: DatagenResult) -> str:
    judge = result.summary.judge
    assert judge is not None
    m = judge.metrics
    return (
        "judge "
        + system_label(result.params.judge.name, result.simulated)
        + display.fill(
            " mean score {e:.2f} [{lo:.2f}, {hi:.2f}] of 5, judge pass rate {pe:.1%} "
            "[{plo:.1%}, {phi:.1%}] (n = {s} scored of {n} problems",
            e=m.loc["mean_score", "estimate"],
            lo=m.loc["mean_score", "low"],
            hi=m.loc["mean_score", "high"],
            pe=m.loc["pass_rate", "estimate"],
            plo=m.loc["pass_rate", "low"],
            phi=m.loc["pass_rate", "high"],
            s=judge.n_scored,
            n=judge.n_items,
        )
        + _failed(result, result.params.judge.name)
        + ")"
    )


def _win_part(result: DatagenResult) -> str:
    win = result.summary.win
    assert win is not None
    w = win.table
    return display.fill(
        "win rate against real AIME problems {e:.1%} [{lo:.1%}, {hi:.1%}] (ties half, "
        "n = {n} pairs; 50% = parity)",
        e=w.loc["win_rate", "estimate"],
        lo=w.loc["win_rate", "low"],
        hi=w.loc["win_rate", "high"],
        n=win.n,
    )


def _human_part(result: DatagenResult) -> str:
    human = result.summary.human
    assert human is not None
    a = human.approved_rate
    who = "simulated reviewer" if result.human.simulated else "human reviewers"
    return display.fill(
        "human pass rate {e:.1%} [{lo:.1%}, {hi:.1%}] (n = {n}, {who})",
        e=a.estimate,
        lo=a.low,
        hi=a.high,
        n=human.n,
        who=who,
    )


# ---------------------------------------------------------------- reference and generation


def reference_note(result: DatagenResult) -> str:
    """How many distinct real problems, and whether the two sources disagree on answers."""
    return display.fill(
        "<p>{n} distinct real problems (a problem held by both sources counts once, MathArena's "
        "text preferred); {m} problems have different answers in the two sources.</p>",
        n=len(result.real),
        m=len(result.mismatches),
    )


def reference_table(result: DatagenResult) -> pd.DataFrame:
    """Reference rows by source and year (:func:`~.metrics.reference_counts`)."""
    return metrics.reference_counts(result.reference)


REFERENCE_CAPTION = "Reference rows by source and year"
"""Caption of :func:`reference_table`."""

BASIC_INFO_CAPTION = "Basic information"
"""Caption of :func:`basic_info` (shown with 3 digits)."""


def basic_info(result: DatagenResult) -> pd.DataFrame:
    """The report's first table: what was asked, what came back, what it was checked on."""
    gen, problems = result.generation, result.generation.problems
    attempts = problems["attempts"].astype(float)
    mismatched = int((problems["topic"] != problems["requested_topic"]).sum())
    rows = [
        ("problems requested", len(gen.slots)),
        ("valid problems", len(problems)),
        ("slots left unfilled (all attempts invalid)", len(gen.unfilled)),
        ("generator calls", gen.calls),
        ("invalid outputs", len(gen.invalid)),
        ("invalid share of outputs", len(gen.invalid) / gen.calls if gen.calls else np.nan),
        ("mean attempts per valid problem", attempts.mean() if len(attempts) else np.nan),
        ("declared topic differs from the requested one", mismatched),
        ("real problems (unique)", len(result.real)),
        ("reference rows (all sources)", len(result.reference)),
    ]
    return pd.DataFrame(
        {"item": [r[0] for r in rows], "value": pd.Series([r[1] for r in rows], dtype=object)}
    )


def generation_note(result: DatagenResult) -> str:
    """Who generated and judged, the attempts allowed, where the dataset is."""
    p = result.params
    return (
        "<p>Generator "
        + system_label(p.generator.name, result.simulated)
        + ", judge "
        + system_label(p.judge.name, result.simulated)
        + display.fill(
            "; up to {a} attempts per problem. The dataset is written to "
            "<code>generated.jsonl</code> in the run folder.",
            a=p.max_attempts,
        )
        + "</p>"
    )


def invalid_reasons(result: DatagenResult) -> pd.DataFrame:
    """Why outputs were invalid, with counts and shares (:func:`~.metrics.invalid_reasons`)."""
    return metrics.invalid_reasons(result.generation.invalid)


def invalid_examples(result: DatagenResult) -> list[dict[str, Any]]:
    """The first three invalid outputs (shown with their :data:`INVALID_FIELDS`)."""
    return result.generation.invalid.head(3).to_dict("records")


INVALID_FIELDS = ["id", "attempt", "reason", "raw"]
"""The fields of each invalid output shown."""


def invalid_caption(result: DatagenResult) -> str:
    """Caption of the invalid-reasons table."""
    return (
        f"Why outputs were invalid ({len(result.generation.invalid)} invalid outputs; an output "
        "can fail several checks, so shares may add up to more than 1)"
    )


def validity_note(result: DatagenResult) -> str:
    """The "every output was valid" note, or the slots left unfilled (empty when neither)."""
    gen = result.generation
    if gen.invalid.empty:
        return "<p>Every generator output was valid.</p>"
    if not gen.unfilled:
        return ""
    return display.fill(
        "<p>{n} had no valid output after {a} attempts and {are} missing from the "
        "dataset: {ids}.</p>",
        n=display.count(len(gen.unfilled), "slot"),
        are="is" if len(gen.unfilled) == 1 else "are",
        a=result.params.max_attempts,
        ids=", ".join(gen.unfilled),
    )


def topics_table(result: DatagenResult) -> pd.DataFrame:
    """Topic counts and shares of the valid problems."""
    return result.summary.topics.reset_index()


TOPICS_CAPTION = "Topic counts and shares of valid problems"
"""Caption of :func:`topics_table`."""


# --------------------------------------------------------------------------- answers


def answer_sanity(result: DatagenResult) -> pd.DataFrame:
    """Generated and real answer statistics, one row each (for display)."""
    sanity = answer_comparison(result.summary.answers, result.real_answers).T
    sanity = sanity.astype({"n": int, "min": int, "max": int})
    sanity["median"] = sanity["median"].map("{:g}".format)
    return sanity.rename_axis(index="answers", columns=None).reset_index()


ANSWER_SANITY_CAPTION = (
    "Answer sanity: n answers, min, max, median, share of answers below 100 and below 10, and "
    "last_digit_p = p-value of the chi-square test of a uniform last digit"
)


def most_common_note(answers: AnswerSummary) -> str:
    """``Most common generated answers (answer × count): 10 × 2, ...``."""
    return display.fill(
        "<p>Most common generated answers (answer × count): {c}.</p>",
        c=", ".join(f"{a} × {k}" for a, k in answers.most_common),
    )


# --------------------------------------------------------------------------- judge


def judge_caption(result: DatagenResult) -> str:
    """Caption of the judge-results table."""
    judge, p = result.summary.judge, result.params
    n = judge.n_scored if judge else 0
    return (
        f"Judge results over {n} scored problems ({p.confidence_level:.0%} intervals, "
        f"{p.bootstrap_rounds} bootstrap rounds for means)"
    )


def judge_metrics(result: DatagenResult) -> pd.DataFrame:
    """The judge's metric table (``metric, estimate, low, high, n``)."""
    judge = result.summary.judge
    return judge.metrics.reset_index() if judge else pd.DataFrame()


def unscored_note(result: DatagenResult) -> str:
    """How many problems the judge scored, and the unscored ones by kind."""
    judge = result.summary.judge
    if judge is None:
        return ""
    frame = result.judge_results
    kinds = frame.loc[frame["status"] != "scored", "unscored_kind"].value_counts()
    return display.fill(
        "<p>{s} of {n} problems scored; unscored: {u} (by kind: {r}).</p>",
        s=judge.n_scored,
        n=judge.n_items,
        u=judge.n_unscored,
        r=", ".join(f"{k} {v}" for k, v in kinds.items()) or "none",
    )


def truth_note(result: DatagenResult) -> str:
    """The judge against the simulated problems' hidden quality (``""`` without truth)."""
    truth = result.judge_truth
    if not len(truth):
        return ""
    return display.fill(
        "<p><b>Simulated data:</b> every simulated problem has a known hidden quality, so the "
        "judge can be checked against it. Correlation {r:.2f}, mean judge − truth {b:+.2f} "
        "points over {n} problems.</p>",
        r=truth["judge"].corr(truth["true_quality"]),
        b=(truth["judge"] - truth["true_quality"]).mean(),
        n=len(truth),
    )


# --------------------------------------------------------------------------- win rate


def win_caption(result: DatagenResult) -> str:
    """Caption of the win-rate table."""
    win, level = result.summary.win, result.params.confidence_level
    n = win.n if win else 0
    return (
        f"Generated vs real ({n} scored pairs; win rate: {level:.0%} bootstrap interval, ties "
        f"count half; shares: {level:.0%} Wilson intervals)"
    )


def win_table(result: DatagenResult) -> pd.DataFrame:
    """Win rate and win/loss/tie shares with intervals (``ValueError`` without comparisons)."""
    if result.summary.win is None:
        raise ValueError("no comparisons in this run (win_rate_pairs: 0)")
    return result.summary.win.table.reset_index()


def order_table(result: DatagenResult) -> pd.DataFrame:
    """How the two orders of each pair resolved (:func:`~.metrics.order_consistency`)."""
    if result.verdicts is None:
        raise ValueError("no comparisons in this run (win_rate_pairs: 0)")
    return metrics.order_consistency(result.verdicts)


def order_caption(result: DatagenResult) -> str:
    """Caption of the order-consistency table."""
    n = len(result.verdicts) if result.verdicts is not None else 0
    return f"How the two orders resolved ({n} pairs; policy: {result.params.inconsistent})"


def win_notes(result: DatagenResult) -> str:
    """Unscored pairs, near-duplicate comparisons and (simulated) the hidden qualities."""
    win = result.summary.win
    if win is None:
        return "<p>No comparisons (<code>win_rate_pairs: 0</code>).</p>"
    verb = "count as losses" if win.duplicate_policy == "loss" else "are left out"
    text = display.fill(
        "<p>{u} pairs unscored (a judge output without a verdict, or a failed call). {d} "
        "comparisons involved a near-duplicate of a real problem, {c} of them wins or ties; "
        "under <code>duplicate_policy: {p}</code> they {verb}.</p>",
        u=win.unscored,
        d=win.duplicate_comparisons,
        c=win.duplicate_wins_changed,
        p=win.duplicate_policy,
        verb=verb,
    )
    return text + _sim_quality_note(result)


def _sim_quality_note(result: DatagenResult) -> str:
    problems = result.problems
    if not len(problems) or not problems["true_quality"].notna().all():
        return ""
    facts = result.sim_facts
    return display.fill(
        "<p><b>Simulated data:</b> real problems have hidden quality {q} and the generated ones "
        "{m:.2f} on average (1–5); one quality point is {k} on the judge's log-odds scale.</p>",
        q=facts.real_quality,
        m=problems["true_quality"].mean(),
        k=facts.logit_per_point,
    )


# --------------------------------------------------------------------------- duplicates


def duplicates_note(result: DatagenResult) -> str:
    """How many generated problems nearly copy a real one."""
    flagged, n = len(result.duplicates.flagged_ids()), len(result.problems)
    return display.fill(
        "<p>{k} of {n} generated problems ({s:.1%}) are near-duplicates (similarity ≥ {t}).</p>",
        k=flagged,
        n=n,
        s=flagged / max(1, n),
        t=result.duplicates.threshold,
    )


def duplicate_examples(result: DatagenResult) -> list[dict[str, Any]]:
    """The flagged near-duplicates beside their real problems (:data:`DUPLICATE_FIELDS`)."""
    return metrics.duplicate_examples(result.duplicates, result.problems, result.reference)


DUPLICATE_FIELDS = ["generated_id", "reference_id", "similarity", "generated problem",
                    "real problem"]  # fmt: skip
"""The fields of each near-duplicate example shown."""


# --------------------------------------------------------------------------- human verification


def human_notice(result: DatagenResult) -> str:
    """The banner over simulated reviews (``""`` for real ones)."""
    if not result.human.simulated:
        return ""
    return display.banner(
        "SIMULATED REVIEWS — written by a simulated reviewer from each problem's hidden quality "
        f"(score noise sd {result.sim_facts.review_noise}), not by people."
    )


def human_note(result: DatagenResult) -> str:
    """Reviewed problems, the human pass rate and status counts (or where reviews go)."""
    human = result.summary.human
    if human is None:
        return (
            "<p>No human reviews yet: expected in <code>generated_verifications.json</code>. "
            "Review with the form or the CSV round trip above, then rerun.</p>"
        )
    text = display.fill(
        "<p>{n} reviewed problems: human pass rate (approved) {p:.1%} ({lvl:.0%} Wilson "
        "interval {lo:.1%} to {hi:.1%}); mean score ≥ 3.5 for {s:.1%}. Status counts: {c}.</p>",
        n=human.n,
        p=human.approved_rate.estimate,
        lo=human.approved_rate.low,
        hi=human.approved_rate.high,
        lvl=result.params.confidence_level,
        s=human.score_pass_rate.estimate,
        c=", ".join(f"{k} {v}" for k, v in human.status_counts.items()),
    )
    unknown = result.human.unknown_ids
    if unknown:
        text += display.fill(
            "<p>{k} reviews name problems that are not in this run and were ignored.</p>",
            k=len(unknown),
        )
    return text


def agreement_table(result: DatagenResult) -> pd.DataFrame:
    """The judge against the human reviews per dimension (:data:`AGREEMENT_CAPTION`)."""
    agreement = metrics.human_judge_agreement(result.human.verifications, result.judge_results)
    return agreement.reset_index()


AGREEMENT_CAPTION = (
    "Judge vs human per dimension (n: problems both scored; within_1: share with |judge − "
    "human| ≤ 1; bias: mean judge − human; exact and qwk on the 1-5 labels; point estimates, "
    "no intervals)"
)


# --------------------------------------------------------------------------- conclusion


CRITERIA_CAPTION = "Criteria"
"""Caption of ``result.summary.conclusion.table``."""


def next_steps(result: DatagenResult) -> str:
    """The conclusion's next steps as an escaped list."""
    steps = "".join(display.fill("<li>{s}</li>", s=s) for s in result.summary.conclusion.next_steps)
    return f"<p><b>Next steps</b></p><ul>{steps}</ul>"


# --------------------------------------------------------------------------- reviewers, size


def reviewers_note(result: DatagenResult) -> str:
    """Several reviewers: who, the consensus policy and their agreement (``""`` otherwise)."""
    got = result.human.reviewers
    if got is None or got.agreement is None:
        return ""
    counts = reviewer_counts(got.reviews)
    table = got.agreement.set_index("measure")
    status, total, p = table.loc["status"], table.loc["total"], result.params
    text = display.fill(
        "<p>{r} reviewers ({names}) wrote {n} reviews of {pr} problems ({sh} reviewed by two or "
        "more). One review per problem for the numbers above: {policy}{miss}. Agreement on the "
        "status: Krippendorff's alpha (nominal) {sa:.2f} ({lvl:.0%} bootstrap over problems "
        "{slo:.2f} to {shi:.2f}), same status {se:.1%} of the time (Cohen's kappa {sk:.2f}); on "
        "the mean score: alpha (interval) {ta:.2f} [{tlo:.2f}, {thi:.2f}], within ±1 on "
        "{tw:.1%}.</p>",
        r=len(counts["reviewers"]), names=", ".join(counts["reviewers"]), n=counts["reviews"],
        pr=counts["problems"], sh=counts["shared"], policy=CONSENSUS_POLICY,
        miss=f" ({display.count(len(got.no_majority), 'problem')} without a majority left out)"
        if got.no_majority else "",
        sa=status["alpha"], lvl=p.confidence_level, slo=status["alpha_low"],
        shi=status["alpha_high"], se=status["exact"], sk=status["kappa"], ta=total["alpha"],
        tlo=total["alpha_low"], thi=total["alpha_high"], tw=total["within_k"],
    )  # fmt: skip
    return text


def reviewers_table(result: DatagenResult) -> tuple[pd.DataFrame, str] | None:
    """The reviewers' agreement per measure, with its caption (``None`` with one reviewer)."""
    got = result.human.reviewers
    if got is None or got.agreement is None:
        return None
    shown = display.fold_intervals(got.agreement, ["alpha"])
    caption = (
        f"Agreement among reviewers: Krippendorff's alpha (nominal for the status, interval for "
        f"scores; {result.params.confidence_level:.0%} bootstrap over problems), ordinal alpha, "
        "and the means over reviewer pairs of exact agreement, ±1 agreement and Cohen's kappa"
    )
    return shown.drop(columns=["qwk"]), caption


def size_sentence(result: DatagenResult) -> str:
    """How many problem slots the study used (tier or sample) and what that size resolves."""
    p, n = result.params, len(result.generation.slots)
    how = tiers.subset_label(p.tier, p.sample)
    return display.fill(
        "<p>{n} problem slots ({how}; stratified by topic). At this size a share near 50% is "
        "known to about ±{hw:.1%} ({lvl:.0%}, normal approximation).</p>",
        n=n, how=how, hw=tiers.expected_half_width(n, p.confidence_level),
        lvl=p.confidence_level,
    )  # fmt: skip
