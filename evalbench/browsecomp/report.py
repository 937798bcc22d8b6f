"""BrowseComp sentences with numbers, captions, display tables and the index headlines.

Every function takes a :class:`~.records.BrowseCompResult` and returns escaped HTML
(:func:`evalbench.display.fill`) or a table / plain caption (the table helpers escape them).
Nothing here computes a statistic the metrics do not.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from evalbench import display
from evalbench.agents.metrics import PAGE_TOOLS, SEARCH_TOOLS
from evalbench.findings import Findings, count, percent, size_caveat
from evalbench.measured import by_system, headline
from evalbench.tiers import expected_half_width

from . import metrics
from .records import BrowseCompResult

_HEADLINES = 3


def _num(value: float) -> float:
    return float("nan") if value is None else float(value)


def system_kind(result: BrowseCompResult, name: str) -> str:
    """``simulated agent``, ``simulated``, ``agent (<provider>)`` or ``real model``."""
    spec = next(s for s in result.params.systems if s.name == name)
    return display.system_kind(name, result.simulated, spec.provider if spec.is_agent else None)


def headlines(result: BrowseCompResult) -> dict[str, str]:
    """Up to three index headlines: accuracy over graded questions per system."""
    measured = by_system(metrics.measured_systems(result.records))
    out = {
        f"{result.style} accuracy {row.system}": headline(
            display.percent(row.accuracy), measured.get(str(row.system))
        )
        for row in result.accuracy.itertuples()
    }
    return dict(list(out.items())[:_HEADLINES])


def notes(result: BrowseCompResult) -> list[str]:
    """Short remarks for the index: what the published simple-evals grader would score."""
    if result.style != "browsecomp":
        return []
    best = result.accuracy["reference_accuracy"].max()
    return [f"the published simple-evals grader would score {best:.0%} (group(0) bug)"]


def key_result(result: BrowseCompResult) -> str:
    """The key sentence: accuracy per system over graded and over all questions, beside the
    reference reading (simple-evals' grader, or BrowseComp-ZH's parser)."""
    zh = result.style == "browsecomp_zh"
    other = "BrowseComp-ZH's own parser" if zh else "the published simple-evals grader"
    head = display.fill(
        "<p><b>{name}.</b> Accuracy over graded questions ({lvl:.0%} Wilson interval), over all "
        "questions (ungraded and unanswered count wrong), and what {other} would report: ",
        name="BrowseComp-ZH" if zh else "BrowseComp",
        lvl=result.params.confidence_level,
        other=other,
    )
    sentences = [
        display.fill(
            "{name} ({kind}) {a:.1%} [{lo:.1%}, {hi:.1%}] of {g} graded; {b:.1%} of all {n}; "
            "{other} {r:.1%}",
            name=r["system"],
            kind=system_kind(result, r["system"]),
            a=_num(r["accuracy"]),
            lo=_num(r["accuracy_low"]),
            hi=_num(r["accuracy_high"]),
            g=r["graded"],
            b=r["accuracy_all"],
            n=r["questions"],
            other=other,
            r=r["zh_accuracy"] if zh else r["reference_accuracy"],
        )
        for r in result.accuracy.to_dict("records")
    ]
    return head + "; ".join(sentences) + ".</p>"


REFERENCE_GAP = 0.01
"""The reference grader's reading is a caveat when it differs from the study's by more."""


def findings(result: BrowseCompResult) -> Findings:
    """What the study found (the report's opening, the summary's key result): each system's
    share of graded questions answered right, in words with its interval; caveats: what the
    published grader (or BrowseComp-ZH's parser) would report, the share over all questions
    when some were not graded, the sample's size."""
    rows = [r for r in result.accuracy.to_dict("records") if r["graded"]]
    key = "Share of graded questions answered right: " + "; ".join(
        display.fill(
            "{s} ({k}) about {a} of {g}, likely between {lo} and {hi}",
            s=r["system"],
            k=system_kind(result, r["system"]),
            a=percent(r["accuracy"]),
            g=count(int(r["graded"]), "graded question"),
            lo=percent(r["accuracy_low"]),
            hi=percent(r["accuracy_high"]),
        )
        for r in rows
    )
    n = max((int(r["questions"]) for r in rows), default=0)
    caveats = [_reference_caveat(result, rows), _all_questions_caveat(rows)]
    caveats.append(size_caveat(n, "question", result.params.confidence_level))
    return Findings(key + ".", tuple(c for c in caveats if c), detail=key_result(result))


def _reference_caveat(result: BrowseCompResult, rows: list[dict[str, Any]]) -> str:
    zh = result.style == "browsecomp_zh"
    column = "zh_accuracy" if zh else "reference_accuracy"
    apart = [r for r in rows if abs(float(r[column]) - float(r["accuracy_all"])) > REFERENCE_GAP]
    if not apart:
        return ""
    each = ", ".join(display.fill("{s} {r}", s=r["system"], r=percent(r[column])) for r in apart)
    if zh:
        return (
            "BrowseComp-ZH's own parser would report " + each + " on the same replies (it reads "
            "verdicts and confidences its own way; an unparsed verdict counts wrong)."
        )
    return (
        "The published simple-evals grader would report " + each + " on the same verdicts: it "
        "compares the whole matched line (match.group(0)) with “yes”, so it counts a correct "
        "verdict wrong whenever the grader follows the format."
    )


def _all_questions_caveat(rows: list[dict[str, Any]]) -> str:
    short = [r for r in rows if int(r["graded"]) < int(r["questions"])]
    if not short:
        return ""
    each = "; ".join(
        display.fill(
            "{s} {b} of all {n} ({u} not graded)",
            s=r["system"],
            b=percent(r["accuracy_all"]),
            n=int(r["questions"]),
            u=int(r["questions"]) - int(r["graded"]),
        )
        for r in short
    )
    return "Over every question (an ungraded or unanswered one counts wrong): " + each + "."


def data_sentence(result: BrowseCompResult) -> str:
    """What was loaded: the set, the questions per topic, the tier."""
    p = result.params
    n = sum(result.topics.values())
    name = (
        "BrowseComp-ZH (PALIN2018/BrowseComp-ZH @ 86abe635)"
        if result.style == "browsecomp_zh"
        else "BrowseComp (openai/simple-evals CSV; community SHA-256)"
    )
    text = display.fill(
        "<p>{name}: {n} questions decrypted in memory ({k} topics: {topics}). Only the "
        "{e} examples below are shown; records keep ids, verdicts and confidences.",
        name=name,
        n=n,
        k=len(result.topics),
        e=min(p.examples, n),
        topics=", ".join(f"{t} {c}" for t, c in result.topics.items()),
    )
    if p.tier != "full" or p.sample is not None:
        text += display.fill(
            " A seeded subsample stratified by topic: a 50% accuracy over {n} "
            "questions has an interval of about ±{w:.1%}.",
            n=n,
            w=expected_half_width(n, p.confidence_level),
        )
    return text + "</p>"


ACCURACY_COLUMNS = [
    "system",
    "questions",
    "answered",
    "graded",
    "unscored",
    "correct",
    "accuracy",
    "accuracy_all",
    "reference_accuracy",
    "pr93_accuracy",
    "zh_accuracy",
]


def accuracy_display(result: BrowseCompResult) -> pd.DataFrame:
    """The accuracy table with intervals folded in."""
    folded = display.fold_intervals(result.accuracy, ["accuracy", "accuracy_all"])
    return folded[ACCURACY_COLUMNS]


def accuracy_caption(result: BrowseCompResult) -> str:
    """Caption of :func:`accuracy_display`."""
    lvl = result.params.confidence_level
    return (
        f"accuracy = correct / graded [{lvl:.0%} Wilson]; accuracy_all = correct / all questions "
        "(ungraded, unanswered and failed count wrong, the official denominator); "
        "reference_accuracy = the published simple-evals grade_sample (match.group(0) compared "
        "with 'yes': never correct once the grader follows the format); pr93_accuracy = its "
        "proposed group(1) fix (unanchored: an 'incorrect: yes' in the reasoning fools it); "
        "zh_accuracy = BrowseComp-ZH's run.py reading (one regex needing the four fields in "
        "order; anything but yes/no, e.g. a Markdown '**correct:** yes', counts wrong)"
    )


def calibration_caption(result: BrowseCompResult) -> str:
    """Caption of the calibration table."""
    beta = result.params.calibration_bin_size
    return (
        f"Calibration error (%). hle_official = HLE's calib_err as its script reports it "
        f"(equal-mass bins of {beta}, the last bin left out, 100·round(x, 2); NaN below {beta} "
        "graded questions with a confidence); all_bins = the same bins with none left out; "
        "zh_fixed_bins = BrowseComp-ZH's five 20-point bins over every record (an unreadable "
        "confidence is 0, an unreadable verdict wrong). with_confidence = graded questions "
        "whose grader reported a readable confidence"
    )


def topic_display(result: BrowseCompResult) -> pd.DataFrame:
    """Per-topic accuracy with the interval folded in."""
    return display.fold_intervals(result.topic_accuracy, ["accuracy"])


def topic_caption(result: BrowseCompResult) -> str:
    """Caption of :func:`topic_display`."""
    return (
        f"Accuracy by topic over graded questions [{result.params.confidence_level:.0%} "
        "Wilson]; BrowseComp-ZH's own code has no per-topic breakdown (derived here from "
        "the decrypted Topic)"
    )


def effort_display(result: BrowseCompResult) -> pd.DataFrame:
    """Search calls and pages opened per question (agents), intervals folded."""
    if result.effort.empty:
        return result.effort
    return display.fold_intervals(result.effort, ["search_calls", "pages_opened", "steps"])


def effort_caption(result: BrowseCompResult) -> str:
    """Caption of :func:`effort_display` (saying so when no system is an agent)."""
    caption = (
        f"Agents only: search calls ({', '.join(sorted(SEARCH_TOOLS))}) and pages "
        f"opened ({', '.join(sorted(PAGE_TOOLS))}) per question, from the trajectories "
        f"[{result.params.confidence_level:.0%} bootstrap]; answered_share = questions whose "
        "task ended with an answer"
    )
    return caption + ("; no system in this run is an agent" if result.effort.empty else "")


def examples_html(result: BrowseCompResult) -> str:
    """The few decrypted examples (escaped), or a note when none is shown."""
    if not result.examples:
        return "<p><i>No example shown (examples: 0, or nothing graded).</i></p>"
    fields = [
        "system",
        "id",
        "topic",
        "question",
        "correct_answer",
        "response",
        "grader",
        "verdict",
    ]
    blocks = []
    for row in result.examples:
        items = "".join(
            f"<dt>{display.escape(f)}</dt><dd>{display.quote(row.get(f), limit=900)}</dd>"
            for f in fields
        )
        blocks.append(f"<dl>{items}</dl><hr/>")
    return "".join(blocks)


def cost_caption(result: BrowseCompResult) -> str:
    """Caption of :func:`cost_per_question`."""
    sim = "; simulated systems have no price" if result.simulated else ""
    return (
        "Mean cost (USD) per question by system, at the configured prices (— where none is "
        f"set; grader calls are in the table below){sim}"
    )


def cost_per_question(result: BrowseCompResult) -> pd.DataFrame:
    """Mean cost per question by system (NaN where no price is configured)."""
    rows: list[dict[str, Any]] = []
    for system, group in result.records.groupby("system", sort=False):
        cost = group["cost_usd"]
        rows.append(
            {
                "system": system,
                "questions": len(group),
                "cost_usd_mean": cost.mean() if cost.notna().any() else math.nan,
            }
        )
    return pd.DataFrame(rows)
