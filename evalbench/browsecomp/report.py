"""BrowseComp sentences with numbers, captions, display tables and the index headlines.

Every function takes the study's :class:`~evalbench.browsecomp.study.BrowseCompResult` and
returns escaped HTML (:func:`evalbench.display.fill`) or a table / plain caption (the table
helpers escape them). Nothing here computes a statistic the metrics do not.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import pandas as pd

from evalbench import display
from evalbench.agents.view import trajectories_html
from evalbench.tiers import expected_half_width, subset_label

from . import metrics
from .data import LEVEL_NAMES

if TYPE_CHECKING:
    from .study import BrowseCompResult

_HEADLINES = 3


def _pct(value: float) -> str:
    return (
        "—" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.1%}"
    )


def system_kind(result: BrowseCompResult, name: str) -> str:
    """``simulated agent``, ``simulated``, ``agent (<provider>)`` or ``real model``."""
    spec = next(s for s in result.params.systems if s.name == name)
    return display.system_kind(name, result.simulated, spec.provider if spec.is_agent else None)


def headlines(result: BrowseCompResult) -> dict[str, str]:
    """Up to three index headlines: suite success rate per system (all tasks), then official
    accuracy over graded questions."""
    out: dict[str, str] = {}
    if result.suite is not None:
        overall = result.suite.levels[result.suite.levels["level"] == "all"]
        for row in overall.itertuples():
            out[f"suite success {row.system}"] = _pct(row.success_rate)
    if result.official is not None:
        for row in result.official.accuracy.itertuples():
            out[f"{result.official.style} accuracy {row.system}"] = _pct(row.accuracy)
    return dict(list(out.items())[:_HEADLINES])


def notes(result: BrowseCompResult) -> list[str]:
    """Short remarks for the index (timeouts, errors, unscored; the reference grader)."""
    out = []
    if result.suite is not None:
        rec = result.suite.records
        out.append(
            f"suite: {int((rec['state'] == 'timeout').sum())} timeouts, "
            f"{int((rec['state'] == 'error').sum())} errors, "
            f"{int((rec['status'] == 'unscored').sum())} unscored"
        )
    if result.official is not None and result.official.style == "browsecomp":
        best = result.official.accuracy["reference_accuracy"].max()
        out.append(f"the published simple-evals grader would score {best:.0%} (group(0) bug)")
    return out


def key_result(result: BrowseCompResult) -> str:
    """The key sentence(s): suite success and scores per system; official accuracy."""
    parts = []
    if result.suite is not None:
        parts.append(_suite_key(result))
    if result.official is not None:
        parts.append(_official_key(result))
    return "".join(parts)


def _suite_key(result: BrowseCompResult) -> str:
    assert result.suite is not None
    level = result.params.confidence_level
    head = display.fill(
        "<p><b>Offline suite.</b> Success over all {n} tasks ({lvl:.0%} Wilson intervals; a "
        "timeout or error is an unsuccessful task) and mean score over answered tasks / over "
        "all tasks (not answered = 0): ",
        n=len(result.suite.tasks),
        lvl=level,
    )
    rows = result.suite.levels[result.suite.levels["level"] == "all"].to_dict("records")
    sentences = [
        display.fill(
            "{name} ({kind}) success {s:.1%} [{lo:.1%}, {hi:.1%}], score {a:.2f} answered / "
            "{b:.2f} all, {t} timeouts, {e} errors",
            name=r["system"],
            kind=system_kind(result, r["system"]),
            s=r["success_rate"],
            lo=r["success_low"],
            hi=r["success_high"],
            a=_num(r["score_answered"]),
            b=_num(r["score_all"]),
            t=r["timeout"],
            e=r["error"],
        )
        for r in rows
    ]
    return head + "; ".join(sentences) + ".</p>"


def _num(value: float) -> float:
    return float("nan") if value is None else float(value)


def _official_key(result: BrowseCompResult) -> str:
    assert result.official is not None
    o = result.official
    zh = o.style == "browsecomp_zh"
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
        for r in o.accuracy.to_dict("records")
    ]
    return head + "; ".join(sentences) + ".</p>"


def demo_notice(result: BrowseCompResult) -> str:
    """A banner for the invented offline web ("" without the suite)."""
    if result.suite is None:
        return ""
    return display.banner(
        "OFFLINE SUITE — evalbench's own small invented web (served on 127.0.0.1), not "
        "BrowseComp. Its numbers say how agents browse these pages, nothing about the open web."
    )


# ------------------------------------------------------------------ suite


def tasks_table(result: BrowseCompResult) -> pd.DataFrame:
    """Tasks per level and task type, with the level's description and its limits."""
    assert result.suite is not None
    rows = [
        {
            "level": t.level,
            "what": LEVEL_NAMES[t.level],
            "kind": t.kind,
            "max_steps": t.max_steps,
            "max_time_s": t.max_time_seconds,
            "criteria": ", ".join(sorted({c.type for c in t.criteria})),
        }
        for t in result.suite.tasks
    ]
    frame = pd.DataFrame(rows)
    grouped = frame.groupby(["level", "what", "kind"], sort=True).agg(
        tasks=("kind", "size"),
        max_steps=("max_steps", "max"),
        max_time_s=("max_time_s", "max"),
        criteria=("criteria", _union),
    )
    return grouped.reset_index()


def _union(column: pd.Series) -> str:
    return ", ".join(sorted({kind for cell in column for kind in cell.split(", ")}))


def tasks_caption(result: BrowseCompResult) -> str:
    """Caption of :func:`tasks_table`: the tier and the local web's check."""
    assert result.suite is not None
    p, n = result.params, len(result.suite.tasks)
    caption = (
        f"Tasks per level and type ({n} tasks; every start page served status 200 "
        f"before the run; the local web answered {result.suite.served} requests)"
    )
    if p.tier != "full" or p.sample is not None:
        width = expected_half_width(n, p.confidence_level)
        caption += (
            f"; {subset_label(p.tier, p.sample)}: a seeded "
            f"subsample stratified by level; a rate near 50% over {n} tasks has a "
            f"{p.confidence_level:.0%} interval of about ±{width:.1%}"
        )
    return caption


LEVEL_COLUMNS = [
    "system",
    "level",
    "tasks",
    "answered",
    "timeout",
    "step_limit",
    "error",
    "unscored",
    "successes",
    "success_rate",
    "score_answered",
    "score_all",
]


def levels_display(result: BrowseCompResult, by: str = "level") -> pd.DataFrame:
    """The level (or task-type) table with intervals folded in."""
    assert result.suite is not None
    table = result.suite.levels if by == "level" else result.suite.kind_scores
    folded = display.fold_intervals(
        table.rename(columns={"success_rate": "success"}),
        ["success", "score_answered", "score_all"],
    )
    columns = [by if c == "level" else c for c in LEVEL_COLUMNS]
    return folded.rename(columns={"success": "success_rate"})[columns]


def levels_caption(result: BrowseCompResult) -> str:
    """Caption of :func:`levels_display`."""
    p = result.params
    return (
        f"By level: end states (answered, timeout, step_limit, error), unscored (a judge "
        f"criterion could not be graded; left out of rates and means), success = score ≥ "
        f"{p.suite.success_threshold if p.suite else 1:g} over tasks not unscored "
        f"[{p.confidence_level:.0%} Wilson]; score_answered = mean over answered tasks, "
        f"score_all = mean over all tasks with not answered = 0 "
        f"[{p.confidence_level:.0%} bootstrap, {p.bootstrap_rounds} rounds]"
    )


def success_plot_frame(result: BrowseCompResult) -> pd.DataFrame:
    """Success rate by level (numbered levels only) for the interval bars."""
    assert result.suite is not None
    levels = result.suite.levels
    return levels[levels["level"] != "all"].assign(level=lambda f: "L" + f["level"].astype(str))


def effort_caption(result: BrowseCompResult) -> str:
    """Caption of the effort table."""
    simulated = any(s.is_agent and s.name in result.simulated for s in result.params.systems)
    return (
        "Steps (model and tool calls), tool calls and wall time per task by level "
        "(mean, median), tokens and cost per task; every task counts whatever its end "
        "state" + ("; simulated agents report simulated times" if simulated else "")
    )


def criteria_caption(result: BrowseCompResult) -> str:
    """Caption of the criteria breakdown."""
    return (
        "Criteria of answered tasks by type: mean score, full marks, zero marks, missing "
        "fields (the answer lacked the key) and unscored (judge reply unreadable or call "
        "failed). exact = normalised field match; numeric = within tolerance; set = coverage × "
        "precision; dynamic = a changing value in the right format that the page showed; judge "
        "= the judge's 0–10 grade / 10"
    )


def judge_sentence(result: BrowseCompResult) -> str:
    """Who graded the judge criteria, and how many could not be graded."""
    assert result.suite is not None and result.params.suite is not None
    judge = result.params.suite.judge
    crit = result.suite.criteria
    judged = crit[crit["type"] == "judge"]
    failed = display.failed_calls(result.usage, judge.name)
    return display.fill(
        "<p>The judge criteria were graded by <b>{name}</b> ({kind}): {n} graded, {u} "
        "unscored{failed}.</p>",
        name=judge.name,
        kind="simulated" if judge.simulated else "real model",
        n=int(judged["score"].notna().sum()),
        u=int(judged["score"].isna().sum()),
        failed=f" ({failed})" if failed else "",
    )


def failures_html(result: BrowseCompResult) -> str:
    """Trajectories of the failed agent tasks (collapsible, escaped)."""
    assert result.suite is not None and result.params.suite is not None
    agents = {s.name for s in result.params.systems if s.is_agent}
    failed = metrics.failures(result.suite.records)
    failed = failed[failed["system"].isin(agents)]
    expected = {t.id: t.expected for t in result.suite.tasks}
    questions = {t.id: t.question for t in result.suite.tasks}
    tasks = [
        {**row, "expected": expected[row["task_id"]], "question": questions[row["task_id"]]}
        for row in failed.to_dict("records")
    ]
    return trajectories_html(tasks, result.suite.steps, limit=result.params.suite.failures_shown)


# ------------------------------------------------------------------ official


def part_notice(result: BrowseCompResult, part: str) -> str:
    """A line saying the run has no ``suite`` / ``official`` part ("" when it has)."""
    if getattr(result, part) is not None:
        return ""
    what = "offline browse suite" if part == "suite" else "official BrowseComp part"
    return display.fill(
        "<p><i>This run has no {what} (the params file has no <code>{key}:"
        "</code> section); its sections below stay empty.</i></p>",
        what=what,
        key=part,
    )


def official_data_sentence(result: BrowseCompResult) -> str:
    """What was loaded: the set, the questions per topic, the tier."""
    assert result.official is not None
    o, p = result.official, result.params
    n = sum(o.topics.values())
    name = (
        "BrowseComp-ZH (PALIN2018/BrowseComp-ZH @ 86abe635)"
        if o.style == "browsecomp_zh"
        else "BrowseComp (openai/simple-evals CSV; community SHA-256)"
    )
    text = display.fill(
        "<p>{name}: {n} questions decrypted in memory ({k} topics: {topics}). Only the "
        "{e} examples below are shown; records keep ids, verdicts and confidences.",
        name=name,
        n=n,
        k=len(o.topics),
        e=min(p.official.examples if p.official else 0, n),
        topics=", ".join(f"{t} {c}" for t, c in o.topics.items()),
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
    """The official accuracy table with intervals folded in."""
    assert result.official is not None
    folded = display.fold_intervals(result.official.accuracy, ["accuracy", "accuracy_all"])
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
    beta = result.params.official.calibration_bin_size if result.params.official else 100
    return (
        f"Calibration error (%). hle_official = HLE's calib_err as its script reports it "
        f"(equal-mass bins of {beta}, the last bin left out, 100·round(x, 2); NaN below {beta} "
        "graded questions with a confidence); all_bins = the same bins with none left out; "
        "zh_fixed_bins = BrowseComp-ZH's five 20-point bins over every record (an unreadable "
        "confidence is 0, an unreadable verdict wrong). with_confidence = graded questions "
        "whose grader reported a readable confidence"
    )


def reliability_title(result: BrowseCompResult) -> str:
    """Title of the reliability diagram."""
    return "Stated confidence vs accuracy (graded questions, fixed-width bins)"


def topic_display(result: BrowseCompResult) -> pd.DataFrame:
    """Per-topic accuracy with the interval folded in."""
    assert result.official is not None
    return display.fold_intervals(result.official.topic_accuracy, ["accuracy"])


def topic_caption(result: BrowseCompResult) -> str:
    """Caption of :func:`topic_display`."""
    return (
        f"Accuracy by topic over graded questions [{result.params.confidence_level:.0%} "
        "Wilson]; BrowseComp-ZH's own code has no per-topic breakdown (derived here from "
        "the decrypted Topic)"
    )


def effort_display(result: BrowseCompResult) -> pd.DataFrame:
    """Search calls and pages opened per question (agents), intervals folded."""
    assert result.official is not None
    effort = result.official.effort
    if effort.empty:
        return effort
    return display.fold_intervals(effort, ["search_calls", "pages_opened", "steps"])


def effort_official_caption(result: BrowseCompResult) -> str:
    """Caption of :func:`effort_display`."""
    return (
        f"Agents only: search calls ({', '.join(sorted(metrics.SEARCH_TOOLS))}) and pages "
        f"opened ({', '.join(sorted(metrics.PAGE_TOOLS))}) per question, from the trajectories "
        f"[{result.params.confidence_level:.0%} bootstrap]; answered_share = questions whose "
        "task ended with an answer"
    )


def examples_html(result: BrowseCompResult) -> str:
    """The few decrypted examples (escaped), or a note when none is shown."""
    assert result.official is not None
    rows = result.official.examples
    if not rows:
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
    for row in rows:
        items = "".join(
            f"<dt>{display.escape(f)}</dt><dd>{display.quote(row.get(f), limit=900)}</dd>"
            for f in fields
        )
        blocks.append(f"<dl>{items}</dl><hr/>")
    return "".join(blocks)


def cost_caption(result: BrowseCompResult) -> str:
    """Caption of :func:`cost_per_item`."""
    sim = "; simulated systems have no price" if result.simulated else ""
    return (
        "Mean cost (USD) per task or question, by part and system, at the configured "
        f"prices (— where none is set; judge and grader calls are in the table below){sim}"
    )


def cost_per_item(result: BrowseCompResult) -> pd.DataFrame:
    """Mean cost per task / question by system (NaN where no price is configured)."""
    rows: list[dict[str, Any]] = []
    for part, frame in (
        ("suite", result.suite and result.suite.records),
        ("official", result.official and result.official.records),
    ):
        if frame is None or len(frame) == 0:
            continue
        for system, group in frame.groupby("system", sort=False):
            cost = group["cost_usd"]
            rows.append(
                {
                    "part": part,
                    "system": system,
                    "items": len(group),
                    "cost_usd_mean": cost.mean() if cost.notna().any() else math.nan,
                }
            )
    return pd.DataFrame(rows)
