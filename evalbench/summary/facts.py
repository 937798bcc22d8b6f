"""What a run's one-page summary says, as plain data (:func:`summary_facts`).

The numbers are the full report's: each system's headline is the study's headline metric
(the first metric its outcome reader lists, or an arena's ratings from
``records/ratings.jsonl``) with the interval the report states (Wilson for a share at the
run's level; ratings with the study's bootstrap). The change since the baseline is the
paired comparison of ``evalbench compare`` (same defaults), against the same baseline the
alert check uses (:func:`evalbench.history.runs.check_baseline`). Studies without per-item
outcomes show their manifest's headlines, as the index does.
"""

from __future__ import annotations

import html
import math
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from evalbench.findings import Findings, marked_pair
from evalbench.findings import from_row as findings_from_row
from evalbench.history import compare_runs, read_ratings, summarize_outcomes
from evalbench.history.runs import check_baseline
from evalbench.importers import READERS, OutcomeError, RunOutcomes, read_outcomes
from evalbench.importers.outcomes import iter_lines, simulated_names
from evalbench.measured import Measured, from_rows, no_result_text
from evalbench.runs import PUBLISHED_STATUSES, current_manifest


class Headline(NamedTuple):
    """One system's headline number."""

    system: str
    metric: str
    kind: str
    """``binary`` (a share), ``score``, ``rating`` or ``text`` (a manifest headline as is)."""
    higher_is_better: bool
    estimate: float
    low: float
    high: float
    n: int
    text: str = ""
    """For ``text``: the value as the study wrote it."""


class Change(NamedTuple):
    """One system's headline now next to the baseline (items paired by id)."""

    system: str
    metric: str
    kind: str
    higher_is_better: bool
    before: float
    after: float
    change: float
    low: float
    high: float
    real: bool
    """The paired test's Holm-adjusted p is below 0.05: not a chance difference."""
    n: int


class Risk(NamedTuple):
    """A failure kind or risk, with one example."""

    title: str
    detail: str
    example: str
    hits: int
    marked: str = ""
    """The example as escaped HTML with the characters where the answer and the expected
    answer differ in ``<mark>`` ("" when it has no such pair)."""


class Facts(NamedTuple):
    """Everything the summary page shows."""

    title: str
    description: str
    study: str
    run_id: str
    kind: str
    items: int
    systems: list[str]
    """The systems the study measured (those its params list, or its results name)."""
    judges: list[str]
    """Also called, but not measured: the judges and graders (in the usage, not a system)."""
    simulated: frozenset[str]
    level: float
    headlines: list[Headline]
    baseline: str | None
    baseline_is: str
    changes: list[Change]
    change_problem: str
    costs: list[tuple[str, float | None, float]]
    """Per system: cost per task (``None`` without tasks) and total cost (USD)."""
    risks: list[Risk]
    alerts: list[dict[str, Any]]
    tier: str
    measured: list[Measured]
    """Per system, the items its headline stands on (:mod:`evalbench.measured`)."""
    truncated: list[tuple[str, int, int]]
    """Per system or judge with calls: outputs cut at ``max_tokens``, and its calls."""
    no_result: str
    """Why the run has no result at all ("" when it has one)."""
    findings: Findings | None
    """What the study found, in its own words (its report's opening; ``None`` for a run
    written before studies stated them)."""


def summary_facts(run_dir: Path) -> Facts:
    """The facts of the run in ``run_dir`` (a published run folder).

    Raises:
        OutcomeError: the run's per-item records cannot be read (file:line).
    """
    manifest = current_manifest(run_dir)
    params = manifest.get("params") or {}
    has_outcomes = str(manifest.get("kind")) in READERS  # else: its manifest's headlines
    run = _outcomes(run_dir, manifest) if has_outcomes else None
    level = float(params.get("confidence_level") or 0.95)
    measured = from_rows(manifest.get("measured"))
    heads = headlines(run, run_dir, level) if run is not None else text_headlines(manifest)
    heads = no_result_headlines(heads, measured)
    baseline, how = _baseline(run_dir)
    changes, problem = changes_since(baseline, run, run_dir)
    systems = _systems(heads, changes, params)
    return Facts(
        title=str(manifest.get("title") or run_dir.parent.name),
        description=str(params.get("description") or ""),
        study=run_dir.parent.name,
        run_id=run_dir.name,
        kind=str(manifest.get("kind") or ""),
        items=_items(run, manifest),
        systems=systems,
        judges=sorted(set(_usage(manifest)) - set(systems) - {""}),
        simulated=simulated_names(manifest) | (run.simulated if run else frozenset()),
        level=level,
        headlines=heads,
        baseline=f"{baseline.parent.name}/{baseline.name}" if baseline else None,
        baseline_is=how,
        changes=changes,
        change_problem=problem,
        costs=costs(run, manifest),
        risks=risks(run, run_dir, manifest, changes),
        alerts=list((manifest.get("alerts") or {}).get("fired") or []),
        tier=str(params.get("tier") or "full"),
        measured=measured,
        truncated=truncated(manifest),
        no_result=str(manifest.get("no_result") or ""),
        findings=findings_from_row(_shown(manifest).get("findings")),
    )


def _outcomes(run_dir: Path, manifest: dict[str, Any]) -> RunOutcomes | None:
    """The run's per-item outcomes; none for a study that stopped with nothing measured
    before writing them (its manifest's headline says why)."""
    try:
        return read_outcomes(run_dir)
    except OutcomeError:
        if manifest.get("no_result"):
            return None
        raise


def no_result_headlines(heads: list[Headline], measured: list[Measured]) -> list[Headline]:
    """Each system that scored nothing reads "no result ..." (with why), never a number."""
    empty = {m.system: m for m in measured if not m.scored}
    return [
        h._replace(kind="text", text=no_result_text([empty[h.system]]))
        if h.system in empty else h
        for h in heads
    ]  # fmt: skip


def truncated(manifest: dict[str, Any]) -> list[tuple[str, int, int]]:
    """Per system or judge with calls: (name, outputs cut at ``max_tokens``, model outputs:
    one per call, an agent task's model steps; calls for runs made before outputs were kept)."""
    usage = [u for u in manifest.get("usage") or [] if isinstance(u, dict) and u.get("calls")]
    return [(str(u["system"]), int(u.get("truncated") or 0),
             int(u["outputs"] if u.get("outputs") is not None else u["calls"]))  # older runs
            for u in usage]  # fmt: skip


def _systems(heads: list[Headline], changes: list[Change], params: dict[str, Any]) -> list[str]:
    """The systems measured: those the params list and those the results name (an imported
    predictions file); a judge or grader is not one (:attr:`Facts.judges`)."""
    listed = params.get("systems")
    listed = listed if isinstance(listed, list) else []
    named = {str(s.get("name")) for s in listed if isinstance(s, dict) and s.get("name")}
    named |= {h.system for h in heads} | {c.system for c in changes}
    return sorted(named - {""})


def _baseline(run_dir: Path) -> tuple[Path | None, str]:
    try:
        return check_baseline(run_dir)
    except OutcomeError as exc:
        return None, f"the pinned baseline cannot be read ({exc})"


def _items(run: RunOutcomes | None, manifest: dict[str, Any]) -> int:
    if run is not None and len(run.outcomes):
        return int(run.outcomes["item_id"].nunique())
    counts = manifest.get("counts") or {}
    return int(counts.get("items") or 0) if isinstance(counts.get("items"), int) else 0


def _usage(manifest: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {str(u.get("system")): u for u in manifest.get("usage") or [] if isinstance(u, dict)}


# ------------------------------------------------------------------------------ headlines


def headlines(run: RunOutcomes, run_dir: Path, level: float) -> list[Headline]:
    """Each system's headline: an arena's ratings, else the first metric with its interval."""
    table = read_ratings(run_dir)
    if not len(table):
        if not len(run.outcomes):
            return []
        first = run.outcomes["metric"].iloc[0]
        table = summarize_outcomes(run.outcomes[run.outcomes["metric"] == first], level=level)
    return [_headline(r) for r in table.itertuples()]


def _headline(row: Any) -> Headline:
    numbers = (float(row.estimate), float(row.low), float(row.high), int(row.n))
    return Headline(str(row.system), str(row.metric), str(row.kind), bool(row.higher_is_better),
                    *numbers)  # fmt: skip


def _shown(manifest: dict[str, Any]) -> dict[str, Any]:
    """The published attempt's part of the manifest (a later attempt may have failed)."""
    if manifest.get("status") in PUBLISHED_STATUSES:
        return manifest
    published = manifest.get("published")
    return published if isinstance(published, dict) else {}


def text_headlines(manifest: dict[str, Any]) -> list[Headline]:
    """A study without per-item outcomes: its manifest's headlines, as the index shows them."""
    rows = []
    for label, value in (_shown(manifest).get("headlines") or {}).items():
        number = float(value) if isinstance(value, int | float) else math.nan
        text = f"{value:.3f}" if isinstance(value, float) else str(value)
        rows.append(Headline("", str(label), "text", True, number, math.nan, math.nan, 0, text))
    return rows


# ------------------------------------------------------------------------------ change


def changes_since(
    baseline: Path | None, run: RunOutcomes | None, run_dir: Path
) -> tuple[list[Change], str]:
    """The headline metric's change per system since ``baseline`` (a compare study: its own
    overall rows), with why there is none."""
    if (run_dir / "records" / "comparison.jsonl").exists():
        return compared_rows(run_dir), ""
    if baseline is None:
        return [], ""
    if run is None:
        return [], "this kind of study has no per-item results to compare"
    try:
        base = read_outcomes(baseline)
        tests = compare_runs([base, run]).tests
    except OutcomeError as exc:
        return [], str(exc)
    first = str(run.outcomes["metric"].iloc[0])
    rows = tests[(tests["slice"] == "all") & (tests["metric"] == first)]
    return [_change(r) for r in rows.itertuples()], ""


def _change(row: Any) -> Change:
    system = row.system_b if row.system_a == row.system_b else f"{row.system_a} → {row.system_b}"
    return Change(
        str(system), str(row.metric), str(row.kind), bool(row.higher_is_better),
        float(row.mean_a), float(row.mean_b), float(row.difference), float(row.low),
        float(row.high), bool(row.p_holm < 0.05), int(row.n),
    )  # fmt: skip


def compared_rows(run_dir: Path) -> list[Change]:
    """A compare study's overall rows (``records/comparison.jsonl``), as changes."""
    rows = [r for _, r in iter_lines(run_dir / "records" / "comparison.jsonl")]
    frame = pd.DataFrame(rows)
    if not len(frame):
        return []
    frame = frame[frame["slice"] == "all"].astype(object)
    frame = frame.where(frame.notna(), math.nan)
    frame["p_holm"] = frame["p_holm"].astype(float).fillna(1.0)
    return [_change(r) for r in frame.itertuples()]


# ------------------------------------------------------------------------------ cost


def costs(
    run: RunOutcomes | None, manifest: dict[str, Any]
) -> list[tuple[str, float | None, float]]:
    """Per system asked (simulated or real): cost per task and in all, in USD."""
    out = []
    frame = run.outcomes if run is not None else None
    for system, row in sorted(_usage(manifest).items()):
        total = float(row.get("cost_usd") or 0.0)
        if frame is not None and system in set(frame["system"]):
            count = int(frame.loc[frame["system"] == system, "item_id"].nunique())
        else:
            count = int(row.get("calls") or 0)
        out.append((system, total / count if count else None, total))
    return out


# ------------------------------------------------------------------------------ risks


FAILURE_KINDS = {
    "error": ("Calls that failed",
              "the request to the system failed, so the task counts as not done"),
    "no_answer": ("Answers in the wrong form",
                  "the system replied, but no answer could be read from its reply"),
    "limit": ("Tasks stopped at a limit", "the agent reached its time or step limit before "
              "it answered, so the task counts as not done"),
    "unscored": ("Answers that could not be graded",
                 "no grade could be given (e.g. the grader's verdict was unreadable)"),
    "wrong": ("Wrong answers", "the system gave an answer, and it was wrong"),
}  # fmt: skip
"""Outcome states as failure kinds: title and what it means, in plain words."""
NOT_MEASURED = ("error", "unscored")
"""Outcome states that measured nothing (a failed call, an ungraded answer): no rate counts
them as wrong."""
COUNT_RISKS = ("error", "unscored", "timeout", "failed", "not_answered", "no_answer", "invalid",
               "dropped", "no_response", "skipped", "not_ok")  # fmt: skip
"""Words that mark a manifest count as a failure kind (studies without per-item outcomes)."""


def risks(
    run: RunOutcomes | None, run_dir: Path, manifest: dict[str, Any], changes: list[Change]
) -> list[Risk]:
    """The top three risks: a real drop since the baseline first, then the failure kinds by
    how many items they hit, then the weakest slice."""
    found = [_drop_risk(c) for c in changes if c.real and _worse(c)]
    if run is None:
        found += _count_risks(manifest)
    elif len(run.outcomes):  # a run of no items has no failure kind or slice to show
        found += sorted(_failure_risks(run, run_dir), key=lambda r: -r.hits)
        found += _slice_risks(run)
    return found[:3]


def _worse(change: Change) -> bool:
    return (change.change < 0) == change.higher_is_better and change.change != 0


def _drop_risk(change: Change) -> Risk:
    return Risk(
        f"{change.system} got worse since the baseline",
        f"{change.metric} went from {number(change.before, change.kind)} to "
        f"{number(change.after, change.kind)} on the same {change.n} tasks; a change this "
        "large is not chance",
        "",
        change.n,
    )


def number(value: float, kind: str) -> str:
    """A value as the summary writes it: shares as whole percentages, ratings whole, scores
    to one decimal (two below 1): a score's interval is the summary's own seeded bootstrap
    (:func:`evalbench.history.summarize_outcomes`), which may differ from a study's own in the
    third digit."""
    if value != value:
        return "—"
    if kind == "binary":
        return f"{value * 100:.0f}%"
    if kind == "rating":
        return f"{value:.0f}"
    return f"{value:.1f}" if abs(value) >= 1 else f"{value:.2f}"


def _failure_risks(run: RunOutcomes, run_dir: Path) -> list[Risk]:
    frame = run.outcomes[run.outcomes["metric"] == run.outcomes["metric"].iloc[0]]
    states = frame["state"].where(
        ~((frame["state"] == "ok") & (frame["kind"] == "binary") & (frame["value"] == 0)), "wrong"
    )
    metric = str(frame["metric"].iloc[0])
    out = []
    for state, (title, meaning) in FAILURE_KINDS.items():
        hit = frame[states == state]
        if not len(hit):
            continue
        if state == "wrong" and metric != "accuracy":
            title, meaning = f"Misses on {metric}", f"the result did not meet {metric}"
        per_system = ", ".join(f"{s}: {k:,d}" for s, k in hit.groupby("system").size().items())
        first = hit.iloc[0]
        shown = Example(run_dir, str(first["item_id"]), str(first["system"]), first, run.slices)
        out.append(Risk(
            title, f"{len(hit):,d} of {len(frame):,d} answers — {meaning} ({per_system})",
            shown.text(), len(hit), shown.marked(),
        ))  # fmt: skip
    return out


def _slice_risks(run: RunOutcomes) -> list[Risk]:
    frame = run.outcomes[run.outcomes["metric"] == run.outcomes["metric"].iloc[0]]
    if not run.slices or frame["kind"].iloc[0] != "binary":
        return []
    frame = frame[~frame["state"].isin(NOT_MEASURED)]  # a failed call is no wrong answer
    name = run.slices[0]
    means = frame.groupby(name)["value"].agg(["mean", "count"]).dropna()
    if len(means) < 2:
        return []
    worst = means["mean"].idxmin()
    return [Risk(
        f"Weakest on {name} {worst}",
        f"{number(float(means.loc[worst, 'mean']), 'binary')} right over all systems on "
        f"{int(means.loc[worst, 'count'])} answers at {name} {worst}, the lowest of any {name}",
        "", 0,
    )]  # fmt: skip


def _count_risks(manifest: dict[str, Any]) -> list[Risk]:
    counts = manifest.get("counts") or {}
    hits = [
        (str(k), int(v)) for k, v in counts.items()
        if isinstance(v, int) and v > 0 and any(w in str(k) for w in COUNT_RISKS)
    ]  # fmt: skip
    hits.sort(key=lambda kv: -kv[1])
    return [Risk(COUNT_TITLES.get(k, k.replace("_", " ").capitalize()),
                 f"{v} counted in this run", "", v) for k, v in hits]  # fmt: skip


COUNT_TITLES = {"not_ok": "Cells that did not end ok"}
"""A manifest count's title where its name says too little (a sweep's ``not_ok``)."""


ID_FIELDS = ("task_id", "id", "item", "question_id", "problem_id")
SYSTEM_FIELDS = ("system", "judge", "model")
ANSWER_FIELDS = ("extracted_answer", "extracted_final_answer", "answer", "decoded", "response",
                 "model_answer")  # fmt: skip
EXPECTED_FIELDS = ("expected", "correct_answer", "ground_truth", "reference")
SHOWN_CHARS = 160


class Example:
    """One item in words: its id and slice, and from its record what the system answered,
    what was expected, or the error (each cut to :data:`SHOWN_CHARS`)."""

    def __init__(
        self, run_dir: Path, item: str, system: str, outcome: Any, slices: tuple[str, ...]
    ):
        where = "".join(f", {s} {outcome[s]}" for s in slices if s in outcome)
        self.head = f"{item}{where} ({system})"
        row = find_record(run_dir, item, system) or {}
        self.error = _cut(row["error"]) if row.get("error") not in (None, "") else None
        self.answer = _field(row, ANSWER_FIELDS)
        self.expected = _field(row, EXPECTED_FIELDS)

    def text(self) -> str:
        """``t30, level L1 (a): error: ...; answered “x”; expected “y”``."""
        parts = [f"error: {self.error}"] if self.error is not None else []
        if self.answer is not None:
            parts.append(f"answered “{self.answer}”")
        if self.expected is not None:
            parts.append(f"expected “{self.expected}”")
        return self.head + (": " + "; ".join(parts) if parts else "")

    def marked(self) -> str:
        """:meth:`text` as escaped HTML with the span where the answer and the expected
        answer differ in ``<mark>`` ("" without both)."""
        if self.answer is None or self.expected is None:
            return ""
        answer, expected = marked_pair(self.answer, self.expected)
        error = f"error: {html.escape(self.error)}; " if self.error is not None else ""
        return f"{html.escape(self.head)}: {error}answered “{answer}”; expected “{expected}”"


def _field(row: dict[str, Any], fields: tuple[str, ...]) -> str | None:
    value = next((row[f] for f in fields if row.get(f) not in (None, "")), None)
    return None if value is None else _cut(value)


def _cut(value: Any) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"


def find_record(run_dir: Path, item: str, system: str) -> dict[str, Any] | None:
    """The first-attempt record of ``item`` by ``system`` in the run's record files."""
    for path in sorted((run_dir / "records").glob("*.jsonl")):
        for _, row in iter_lines(path):
            if "request_key" in row:
                break  # a response-record file: no item ids
            ids = [row.get(f) for f in ID_FIELDS]
            who = [row.get(f) for f in SYSTEM_FIELDS]
            if item in ids and system in who and row.get("attempt", 0) in (0, None):
                return row
    return None
