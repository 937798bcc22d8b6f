"""Browse-suite sentences with numbers, captions, display tables and the index headlines.

Every function takes a :class:`~.records.BrowseSuiteResult` and returns escaped HTML
(:func:`evalbench.display.fill`) or a table / plain caption (the table helpers escape them).
Nothing here computes a statistic the metrics do not.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from evalbench import display
from evalbench.agents.view import trajectories_html
from evalbench.findings import Findings, count, percent, size_caveat
from evalbench.measured import by_system, headline
from evalbench.tiers import expected_half_width, subset_label

from . import metrics
from .data import LEVEL_NAMES
from .records import BrowseSuiteResult

_HEADLINES = 3


def system_kind(result: BrowseSuiteResult, name: str) -> str:
    """``simulated agent``, ``simulated``, ``agent (<provider>)`` or ``real model``."""
    spec = next(s for s in result.params.systems if s.name == name)
    return display.system_kind(name, result.simulated, spec.provider if spec.is_agent else None)


def headlines(result: BrowseSuiteResult) -> dict[str, str]:
    """Up to three index headlines: the success rate of each system over all tasks."""
    overall = result.levels[result.levels["level"] == "all"]
    measured = by_system(metrics.measured_systems(result.records))
    out = {
        f"suite success {row.system}": headline(
            display.percent(row.success_rate), measured.get(str(row.system))
        )
        for row in overall.itertuples()
    }
    return dict(list(out.items())[:_HEADLINES])


def notes(result: BrowseSuiteResult) -> list[str]:
    """Short remarks for the index: timeouts, errors and unscored tasks."""
    rec = result.records
    timeouts, errors = int((rec["state"] == "timeout").sum()), int((rec["state"] == "error").sum())
    unscored = int((rec["status"] == "unscored").sum())
    timed_out, failed = display.count(timeouts, "timeout"), display.count(errors, "error")
    return [f"{timed_out}, {failed}, {unscored} unscored"]


def key_result(result: BrowseSuiteResult) -> str:
    """The key sentence: success (Wilson) and mean scores per system over all tasks."""
    level = result.params.confidence_level
    head = display.fill(
        "<p><b>Offline suite.</b> Success over all {n} tasks ({lvl:.0%} Wilson intervals; a "
        "timeout or error is an unsuccessful task) and mean score over answered tasks / over "
        "all tasks (not answered = 0): ",
        n=len(result.tasks),
        lvl=level,
    )
    rows = result.levels[result.levels["level"] == "all"].to_dict("records")
    sentences = [
        display.fill(
            "{name} ({kind}) success {s:.1%} [{lo:.1%}, {hi:.1%}], score {a:.2f} answered / "
            "{b:.2f} all, {t}, {e}",
            name=r["system"],
            kind=system_kind(result, r["system"]),
            s=r["success_rate"],
            lo=r["success_low"],
            hi=r["success_high"],
            a=_num(r["score_answered"]),
            b=_num(r["score_all"]),
            t=display.count(r["timeout"], "timeout"),
            e=display.count(r["error"], "error"),
        )
        for r in rows
    ]
    return head + "; ".join(sentences) + ".</p>"


def _num(value: float) -> float:
    return float("nan") if value is None else float(value)


def findings(result: BrowseSuiteResult) -> Findings:
    """What the study found (the report's opening, the summary's key result): each system's
    share of tasks done in words with its interval; caveats: the web is evalbench's own, a
    timeout or error counts as not done, the suite's size."""
    rows = result.levels[result.levels["level"] == "all"].to_dict("records")
    n = len(result.tasks)
    scored = {m.system for m in metrics.measured_systems(result.records) if m.scored}
    # a system none of whose tasks was measured has no number (evalbench.findings.honest
    # names it among the caveats, with why)
    key = display.fill("Share of the {n} done (success): ", n=count(n, "task")) + "; ".join(
        display.fill(
            "{s} ({k}) about {a}, likely between {lo} and {hi}",
            s=r["system"],
            k=system_kind(result, r["system"]),
            a=percent(r["success_rate"]),
            lo=percent(r["success_low"]),
            hi=percent(r["success_high"]),
        )
        for r in rows
        if str(r["system"]) in scored
    )
    caveats = [
        "The web is evalbench's own small invented one (served on 127.0.0.1), not BrowseComp "
        "or the open web: the numbers say how agents browse these pages.",
        _stopped_caveat(rows),
        size_caveat(n, "task", result.params.confidence_level),
    ]
    return Findings(key + ".", tuple(c for c in caveats if c), detail=key_result(result))


def _stopped_caveat(rows: list[dict[str, Any]]) -> str:
    stopped = [r for r in rows if r["timeout"] or r["error"]]
    if not stopped:
        return ""
    each = "; ".join(
        display.fill(
            "{s} {t} and {e}",
            s=r["system"],
            t=count(int(r["timeout"]), "timeout"),
            e=count(int(r["error"]), "error"),
        )
        for r in stopped
    )
    return "A task that timed out or failed counts as not done: " + each + "."


def demo_notice(result: BrowseSuiteResult) -> str:
    """A banner saying the web is evalbench's own invented one, not BrowseComp."""
    return display.banner(
        "OFFLINE SUITE — evalbench's own small invented web (served on 127.0.0.1), not "
        "BrowseComp. Its numbers say how agents browse these pages, nothing about the open web."
    )


def tasks_table(result: BrowseSuiteResult) -> pd.DataFrame:
    """Tasks per level and task type, with the level's description and its limits."""
    rows = [
        {
            "level": t.level,
            "what": LEVEL_NAMES[t.level],
            "kind": t.kind,
            "max_steps": t.max_steps,
            "max_time_s": t.max_time_seconds,
            "criteria": ", ".join(sorted({c.type for c in t.criteria})),
        }
        for t in result.tasks
    ]
    grouped = (
        pd.DataFrame(rows)
        .groupby(["level", "what", "kind"], sort=True)
        .agg(
            tasks=("kind", "size"),
            max_steps=("max_steps", "max"),
            max_time_s=("max_time_s", "max"),
            criteria=("criteria", _union),
        )
    )
    seconds = grouped["max_time_s"]
    if (seconds % 1 == 0).all():  # whole seconds read as 60, not 60.000
        grouped = grouped.assign(max_time_s=seconds.astype(int))
    return grouped.reset_index()


def _union(column: pd.Series) -> str:
    return ", ".join(sorted({kind for cell in column for kind in cell.split(", ")}))


def tasks_caption(result: BrowseSuiteResult) -> str:
    """Caption of :func:`tasks_table`: the tier and the local web's check."""
    p, n = result.params, len(result.tasks)
    caption = (
        f"Tasks per level and type ({n} tasks; every start page served status 200 "
        f"before the run; the local web answered {result.served} requests)"
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


def levels_display(result: BrowseSuiteResult, by: str = "level") -> pd.DataFrame:
    """The level (or task-type, ``by="kind"``) table with intervals folded in."""
    table = result.levels if by == "level" else result.kind_scores
    folded = display.fold_intervals(
        table.rename(columns={"success_rate": "success"}),
        ["success", "score_answered", "score_all"],
    )
    columns = [by if c == "level" else c for c in LEVEL_COLUMNS]
    return folded.rename(columns={"success": "success_rate"})[columns]


def levels_caption(result: BrowseSuiteResult, by: str = "level") -> str:
    """Caption of :func:`levels_display` (``by``: ``level`` or ``kind``)."""
    p, grouping = result.params, "level" if by == "level" else "task type"
    return (
        f"By {grouping}: end states (answered, timeout, step_limit, error), unscored (a judge "
        f"criterion could not be graded; left out of rates and means), success = score ≥ "
        f"{p.success_threshold:g} over tasks not unscored "
        f"[{p.confidence_level:.0%} Wilson]; score_answered = mean over answered tasks, "
        f"score_all = mean over all tasks with not answered = 0 "
        f"[{p.confidence_level:.0%} bootstrap, {p.bootstrap_rounds} rounds]"
    )


def effort_caption(result: BrowseSuiteResult) -> str:
    """Caption of the effort table."""
    simulated = any(s.is_agent and s.name in result.simulated for s in result.params.systems)
    return (
        "Steps (model and tool calls), tool calls and wall time per task by level "
        "(mean, median), tokens and cost per task; every task counts whatever its end "
        "state" + ("; simulated agents report simulated times" if simulated else "")
    )


def criteria_caption(result: BrowseSuiteResult) -> str:
    """Caption of the criteria breakdown."""
    return (
        "Criteria of answered tasks by type: mean score, full marks, zero marks, missing "
        "fields (the answer lacked the key) and unscored (judge reply unreadable or call "
        "failed). exact = normalised field match; numeric = within tolerance; set = coverage × "
        "precision; dynamic = a changing value in the right format that the page showed; judge "
        "= the judge's 0–10 grade / 10"
    )


def judge_sentence(result: BrowseSuiteResult) -> str:
    """Who graded the judge criteria, and how many could not be graded."""
    judge = result.params.judge
    judged = result.criteria[result.criteria["type"] == "judge"]
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


def failures_html(result: BrowseSuiteResult) -> str:
    """Trajectories of the failed agent tasks (collapsible, escaped)."""
    agents = {s.name for s in result.params.systems if s.is_agent}
    failed = metrics.failures(result.records)
    failed = failed[failed["system"].isin(agents)]
    expected = {t.id: t.expected for t in result.tasks}
    questions = {t.id: t.question for t in result.tasks}
    tasks = [
        {**row, "expected": expected[row["task_id"]], "question": questions[row["task_id"]]}
        for row in failed.to_dict("records")
    ]
    return trajectories_html(tasks, result.steps, limit=result.params.failures_shown)


def cost_caption(result: BrowseSuiteResult) -> str:
    """Caption of :func:`cost_per_task`."""
    sim = "; simulated systems have no price" if result.simulated else ""
    return (
        "Mean cost (USD) per task by system, at the configured prices (— where none is set; "
        f"judge calls are in the table below){sim}"
    )


def cost_per_task(result: BrowseSuiteResult) -> pd.DataFrame:
    """Mean cost per task by system (NaN where no price is configured)."""
    rows: list[dict[str, Any]] = []
    for system, group in result.records.groupby("system", sort=False):
        cost = group["cost_usd"]
        rows.append(
            {
                "system": system,
                "tasks": len(group),
                "cost_usd_mean": cost.mean() if cost.notna().any() else math.nan,
            }
        )
    return pd.DataFrame(rows)
