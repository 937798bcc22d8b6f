"""GAIA metrics: accuracy by level, drops between levels, pass@k, usage, paired comparison.

Pure functions over the records of :func:`~evalbench.gaia.scoring.score` (a DataFrame,
one row per system, item and attempt). Accuracy uses each item's first attempt; a failed
call (error) or an output without an answer counts as wrong and is also counted apart,
and accuracy over the items without an error (failed calls left out) is reported beside it.
Every interval states its level; every bootstrap takes an explicit ``rng``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from evalbench.agents import metrics as agent_metrics
from evalbench.agreement import kappa_interval
from evalbench.findings import near_miss
from evalbench.measured import Measured, failed_call, identical_attempts, identical_flags, measured
from evalbench.stats import (
    DEFAULT_LEVEL,
    DEFAULT_ROUNDS,
    PairedComparison,
    mean_replicates,
    paired_comparison,
    percentile_interval,
    wilson_interval,
)

from .data import LEVELS, GaiaDataError, GaiaItem, first_attempts, require_columns
from .equivalence import SEMANTIC_CASES, semantic_case
from .scoring import USAGE_COLUMNS


class GaiaSummary(NamedTuple):
    """Everything :func:`summarize` computes, one DataFrame per table."""

    accuracy: pd.DataFrame
    drops: pd.DataFrame
    usage: pd.DataFrame
    pass_at_k: pd.DataFrame | None


def level_accuracy(records: pd.DataFrame, *, confidence: float = DEFAULT_LEVEL) -> pd.DataFrame:
    """Overall and per-level accuracy per system, with Wilson intervals and n.

    Uses each item's first attempt. Columns: ``system, level`` (``"all"``, ``"L1"``..),
    ``n, correct, accuracy, ci_low, ci_high, no_answer, no_answer_rate, errors,
    error_rate, no_error, accuracy_no_error``. No-answer and error records count as wrong
    and are also counted apart; ``accuracy_no_error = correct / no_error`` leaves the failed
    calls out (``no_error = n - errors``; NaN when no call succeeded). "Answered" is kept for
    the end state (:mod:`evalbench.agents`): a timed-out task is not answered, yet no error.
    """
    recs = _scored(first_attempts(records))
    rows = []
    for system, group in recs.groupby("system", sort=True):
        for label, part in _level_parts(group):
            rows.append({"system": system, "level": label, **_accuracy_cells(part, confidence)})
    return pd.DataFrame(rows)


def _accuracy_cells(part: pd.DataFrame, confidence: float) -> dict[str, Any]:
    n = len(part)
    hits = int(part["correct"].astype(bool).sum())
    wilson = wilson_interval(hits, n, confidence)
    no_answer, errors = int(part["no_answer"].sum()), int(part["error"].notna().sum())
    return {
        "n": n,
        "correct": hits,
        "accuracy": wilson.estimate,
        "ci_low": wilson.low,
        "ci_high": wilson.high,
        "no_answer": no_answer,
        "no_answer_rate": no_answer / n if n else math.nan,
        "errors": errors,
        "error_rate": errors / n if n else math.nan,
        "no_error": n - errors,
        "accuracy_no_error": hits / (n - errors) if n - errors else math.nan,
    }


def drop_rates(
    records: pd.DataFrame,
    *,
    rng: np.random.Generator,
    rounds: int = DEFAULT_ROUNDS,
    confidence: float = DEFAULT_LEVEL,
) -> pd.DataFrame:
    """Accuracy drops L1→L2 and L2→L3 per system, with stratified bootstrap intervals.

    ``relative_drop = 1 - acc(to)/acc(from)`` (NaN when ``acc(from) = 0``) and
    ``absolute_drop = acc(from) - acc(to)``. Each bootstrap round resamples items with
    replacement within each level separately (level sizes are fixed by design); rounds
    where ``acc(from) = 0`` leave the relative drop undefined and are ignored.
    """
    recs = _scored(first_attempts(records))
    rows = []
    for system, group in recs.groupby("system", sort=True):
        correct = {lv: group.loc[group["level"] == lv, "correct"].to_numpy(bool) for lv in LEVELS}
        reps = {lv: mean_replicates(correct[lv], rng=rng, rounds=rounds) for lv in LEVELS}
        for low, high in ((1, 2), (2, 3)):
            head = {"system": system, "transition": f"L{low}→L{high}"}
            pair = (correct[low], correct[high])
            rows.append(head | _drop_cells(pair, (reps[low], reps[high]), confidence))
    return pd.DataFrame(rows)


def _drop_cells(
    correct: tuple[np.ndarray, np.ndarray],
    reps: tuple[np.ndarray, np.ndarray],
    confidence: float,
) -> dict[str, Any]:
    acc_from, acc_to = (float(c.mean()) if c.size else math.nan for c in correct)
    relative = relative_drop(acc_from, acc_to)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel_reps = np.where(reps[0] > 0, 1 - reps[1] / reps[0], np.nan)
    rel = percentile_interval(relative, rel_reps, confidence)
    absolute = percentile_interval(acc_from - acc_to, reps[0] - reps[1], confidence)
    return {
        "n_from": int(correct[0].size),
        "n_to": int(correct[1].size),
        "acc_from": acc_from,
        "acc_to": acc_to,
        "relative_drop": relative,
        "relative_low": rel.low,
        "relative_high": rel.high,
        "absolute_drop": acc_from - acc_to,
        "absolute_low": absolute.low,
        "absolute_high": absolute.high,
    }


def relative_drop(acc_from: float, acc_to: float) -> float:
    """``1 - acc_to / acc_from``: the share of accuracy lost; NaN when ``acc_from`` is 0."""
    if not acc_from or math.isnan(acc_from):
        return math.nan
    return 1 - acc_to / acc_from


def usage_by_level(records: pd.DataFrame) -> pd.DataFrame:
    """Mean and total of the optional usage columns per system and level (all attempts).

    Columns present among :data:`USAGE_COLUMNS` (steps, tool calls, tokens, cost,
    latency) get ``<col>_mean`` (over records that report it) and ``<col>_total``; a
    system that reports none of them still gets its ``n``.
    """
    present = [c for c in USAGE_COLUMNS if c in records.columns]
    rows = []
    for system, group in records.groupby("system", sort=True):
        for label, part in _level_parts(group):
            row: dict[str, Any] = {"system": system, "level": label, "n": len(part)}
            for column in present:
                values = pd.to_numeric(part[column], errors="coerce")
                row[f"{column}_mean"] = float(values.mean()) if values.notna().any() else math.nan
                row[f"{column}_total"] = float(values.sum())
            rows.append(row)
    return pd.DataFrame(rows)


def compare_systems(
    records: pd.DataFrame,
    system_a: str,
    system_b: str,
    *,
    rng: np.random.Generator,
    rounds: int = DEFAULT_ROUNDS,
    levels: Iterable[int] | None = None,
) -> PairedComparison:
    """``system_a`` vs ``system_b`` on the same first attempts (``levels``: all if None):
    exact McNemar and a paired bootstrap of the accuracy difference
    (:func:`evalbench.stats.paired_comparison`).

    Raises:
        GaiaDataError: a system has no records, or the two item sets differ.
    """
    recs = _scored(first_attempts(records))
    if levels is not None:
        recs = recs[recs["level"].isin(list(levels))]
    a, b = (_correct_by_task(recs, name) for name in (system_a, system_b))
    only_a, only_b = sorted(set(a.index) - set(b.index)), sorted(set(b.index) - set(a.index))
    if only_a or only_b:
        raise GaiaDataError(
            f"compare_systems: item sets differ: {len(only_a)} only in {system_a!r} "
            f"{only_a[:3]}, {len(only_b)} only in {system_b!r} {only_b[:3]}"
        )
    b = b.reindex(a.index)
    return paired_comparison(a.to_numpy(bool), b.to_numpy(bool), rng=rng, rounds=rounds)


def _correct_by_task(recs: pd.DataFrame, system: str) -> pd.Series:
    part = recs[recs["system"] == system]
    if part.empty:
        raise GaiaDataError(f"compare_systems: no records for system {system!r}")
    return part.set_index("task_id")["correct"].astype(bool)


def pass_at_k_estimate(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for one item with ``n`` attempts of which ``c`` are correct.

    ``1 - C(n-c, k) / C(n, k)`` (Chen et al., 2021, "Evaluating Large Language Models
    Trained on Code", arXiv:2107.03374), computed as ``1 - prod(1 - k/i, i=n-c+1..n)``
    to avoid huge binomials.
    """
    if not (0 <= c <= n and 1 <= k <= n):
        raise ValueError(
            f"pass_at_k_estimate: need 0 <= c <= n and 1 <= k <= n, got {n=} {c=} {k=}"
        )
    if n - c < k:
        return 1.0
    return float(1 - np.prod(1 - k / np.arange(n - c + 1, n + 1)))


def pass_at_k(records: pd.DataFrame, ks: Sequence[int] = (1,)) -> pd.DataFrame:
    """pass@k per system and level, averaging :func:`pass_at_k_estimate` over items.

    Every item must have at least ``k`` attempts (rows with distinct ``attempt``).
    Columns: ``system, level, k, n_items, identical_attempts, pass_at_k``;
    ``identical_attempts``: items whose attempts all gave the same raw answer (at
    temperature 0 pass@k of those items is pass@1: :func:`evalbench.measured.identical_flags`).
    """
    recs = _scored(records if "attempt" in records else records.assign(attempt=0))
    per_item = (
        recs.groupby(["system", "task_id", "level"], sort=True)["correct"]
        .agg(n="size", c=lambda s: int(s.astype(bool).sum()))
        .reset_index()
    )
    same = pd.Series(dtype=bool)  # records without answers (hand-made tables) have none
    if "model_answer" in recs:
        same = identical_flags(recs, keys=("system", "task_id"), output="model_answer")
    pairs = zip(per_item["system"], per_item["task_id"], strict=True)
    per_item["identical"] = [bool(same.get(key, False)) for key in pairs]
    rows = []
    for system, group in per_item.groupby("system", sort=True):
        for k in ks:
            _require_attempts(group, k, str(system))
            estimates = group.assign(
                p=[pass_at_k_estimate(n, c, k) for n, c in zip(group.n, group.c, strict=True)]
            )
            for label, part in _level_parts(estimates):
                mean = float(part["p"].mean()) if len(part) else math.nan
                rows.append(
                    {
                        "system": system,
                        "level": label,
                        "k": k,
                        "n_items": len(part),
                        "identical_attempts": int(part["identical"].sum()),
                        "pass_at_k": mean,
                    }
                )
    return pd.DataFrame(rows)


def _require_attempts(group: pd.DataFrame, k: int, system: str) -> None:
    short = group[group["n"] < k]
    if not short.empty:
        first = short.iloc[0]
        raise GaiaDataError(
            f"pass_at_k: system {system!r} has {first['n']} attempt(s) for task "
            f"{first['task_id']!r}, fewer than k={k} ({len(short)} items short)"
        )


def summarize(
    records: pd.DataFrame,
    *,
    rng: np.random.Generator,
    rounds: int = DEFAULT_ROUNDS,
    confidence: float = DEFAULT_LEVEL,
    ks: Sequence[int] = (1,),
) -> GaiaSummary:
    """Accuracy by level, drop rates and usage of :func:`~.scoring.score`'s records, and
    pass@k for ``ks`` when some item has several attempts; every interval at ``confidence``."""
    several = "attempt" in records and records.groupby(["system", "task_id"]).size().max() > 1
    return GaiaSummary(
        accuracy=level_accuracy(records, confidence=confidence),
        drops=drop_rates(records, rng=rng, rounds=rounds, confidence=confidence),
        usage=usage_by_level(records),
        pass_at_k=pass_at_k(records, ks) if several else None,
    )


def _scored(records: pd.DataFrame) -> pd.DataFrame:
    require_columns(records, ("system", "task_id", "level", "correct"))
    hidden = records["correct"].isna()
    if hidden.any():
        raise GaiaDataError(
            f"records: {int(hidden.sum())} record(s) have no verdict (hidden test answers, "
            f"e.g. task {records.loc[hidden, 'task_id'].iloc[0]!r}); only the leaderboard "
            "can score them: use export_submission"
        )
    return records


def _level_parts(group: pd.DataFrame) -> Iterator[tuple[str, pd.DataFrame]]:
    yield "all", group
    for lv in LEVELS:
        yield f"L{lv}", group[group["level"] == lv]


def items_per_level(items: Sequence[GaiaItem]) -> pd.DataFrame:
    """Items per level present in ``items``: columns ``level`` (``"L1"``..) and ``items``."""
    counts = pd.Series([it.level for it in items], name="level").value_counts().sort_index()
    return pd.DataFrame({"level": [f"L{lv}" for lv in counts.index], "items": counts.to_list()})


def scorer_comparison(records: pd.DataFrame) -> pd.DataFrame | None:
    """Official vs lenient accuracy per system (first attempts); ``None`` without lenient.

    Columns ``system, n, official, lenient, no_error, official_no_error,
    lenient_no_error``: the shares of all ``n`` items, then of the ``no_error`` ones
    (failed calls left out; NaN when none succeeded).
    """
    if "correct_lenient" not in records:
        return None
    rows = []
    for system, group in first_attempts(records).groupby("system", sort=True):
        official, lenient = group["correct"].astype(bool), group["correct_lenient"].astype(bool)
        ok = group["error"].isna()
        rows.append(
            {
                "system": system,
                "n": len(group),
                "official": official.mean(),
                "lenient": lenient.mean(),
                "no_error": int(ok.sum()),
                "official_no_error": _share(official[ok]),
                "lenient_no_error": _share(lenient[ok]),
            }
        )
    return pd.DataFrame(rows)


def _share(flags: pd.Series) -> float:
    return float(flags.mean()) if len(flags) else math.nan


def lenient_only(records: pd.DataFrame) -> int:
    """First-attempt answers wrong for the official scorer but right for the lenient one."""
    first = first_attempts(records)
    return int((first["correct_lenient"].astype(bool) & ~first["correct"].astype(bool)).sum())


# ---------------------------------------------------------------------- semantic matching


class SemanticSummary(NamedTuple):
    """Official vs semantic matching, first attempt of every item (:func:`semantic_summary`)."""

    judge: str
    """The semantic judge's name."""
    agreement: pd.DataFrame
    """Per system, over the answers the judge scored: the 2×2 table, agreement and kappa."""
    accuracy: pd.DataFrame
    """Per system: accuracy under each scorer with Wilson intervals, the paired test."""
    disagreements: pd.DataFrame
    """Every scored answer on which the two verdicts differ."""
    unscored: pd.DataFrame
    """Every answer whose judgment is unscored, with the reason."""
    truth: pd.DataFrame | None
    """Simulated judge only: both scorers against the simulation's truth, by case."""


def semantic_summary(
    records: pd.DataFrame,
    *,
    rng: np.random.Generator,
    rounds: int = DEFAULT_ROUNDS,
    confidence: float = DEFAULT_LEVEL,
) -> SemanticSummary | None:
    """:class:`SemanticSummary` of the records, or ``None`` when no record was judged."""
    if "semantic_status" not in records or records["semantic_status"].isna().all():
        return None
    first = first_attempts(records)
    judge = records["semantic_judge"].dropna()
    return SemanticSummary(
        judge=str(judge.iloc[0]) if len(judge) else "",
        agreement=semantic_agreement(first, rng=rng, rounds=rounds, confidence=confidence),
        accuracy=semantic_accuracy(first, rng=rng, rounds=rounds, confidence=confidence),
        disagreements=semantic_disagreements(first),
        unscored=first[first["semantic_status"] == "unscored"][
            ["system", "task_id", "level", "extracted_answer", "expected", "semantic_reason"]
        ],
        truth=semantic_truth_check(first),
    )


def _verdicts(part: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    return part["correct"].to_numpy(bool), part["correct_semantic"].to_numpy(bool)


def semantic_agreement(
    first: pd.DataFrame,
    *,
    rng: np.random.Generator,
    rounds: int = DEFAULT_ROUNDS,
    confidence: float = DEFAULT_LEVEL,
) -> pd.DataFrame:
    """The official and the semantic verdicts of the answers the judge scored, per system.

    Columns ``system, scored, both_right, official_only, semantic_only, both_wrong,
    agreement`` (share of equal verdicts), ``kappa, kappa_low, kappa_high`` (Cohen's kappa
    over right/wrong with a percentile bootstrap interval, NaN when undefined),
    ``unscored, no_answer`` (not in the table: no verdict, or nothing to judge).
    """
    rows = []
    for system, group in first.groupby("system", sort=True):
        scored = group[group["semantic_status"] == "scored"]
        official, semantic = _verdicts(scored)
        kappa = kappa_interval(official, semantic, (False, True), rng=rng, rounds=rounds,
                               level=confidence)  # fmt: skip
        rows.append({
            "system": system, "scored": len(scored),
            "both_right": int((official & semantic).sum()),
            "official_only": int((official & ~semantic).sum()),
            "semantic_only": int((~official & semantic).sum()),
            "both_wrong": int((~official & ~semantic).sum()),
            "agreement": _share(pd.Series(official == semantic)),
            "kappa": kappa.estimate, "kappa_low": kappa.low, "kappa_high": kappa.high,
            "unscored": int((group["semantic_status"] == "unscored").sum()),
            "no_answer": int((group["semantic_status"] == "no_answer").sum()),
        })  # fmt: skip
    return pd.DataFrame(rows)


def semantic_accuracy(
    first: pd.DataFrame,
    *,
    rng: np.random.Generator,
    rounds: int = DEFAULT_ROUNDS,
    confidence: float = DEFAULT_LEVEL,
) -> pd.DataFrame:
    """Accuracy under each scorer over the items with both verdicts, and the paired test.

    Per system: ``items, unscored, scored`` (answers the judge scored), ``n`` (= items −
    unscored: the scored answers plus those with nothing to judge, wrong under both),
    ``official, semantic`` with Wilson intervals (``_low``/``_high``), ``difference`` =
    semantic − official with a paired bootstrap interval, ``only_official, only_semantic``
    (the discordant items) and the exact McNemar ``mcnemar_p``
    (:func:`evalbench.stats.paired_comparison`). No result (NaN) when the judge scored no
    answer: items with nothing to judge alone do not measure it.
    """
    rows = []
    for system, group in first.groupby("system", sort=True):
        both = group[group["semantic_status"].isin(["scored", "no_answer"])]
        scored = int((group["semantic_status"] == "scored").sum())
        official, semantic = _verdicts(both if scored else both.iloc[:0])
        head = {"system": system, "items": len(group), "unscored": len(group) - len(both),
                "scored": scored, "n": len(both)}  # fmt: skip
        rows.append(head | _paired_cells(official, semantic, rng, rounds, confidence))
    return pd.DataFrame(rows)


def _paired_cells(
    official: np.ndarray, semantic: np.ndarray, rng: np.random.Generator, rounds: int, level: float
) -> dict[str, Any]:
    cells: dict[str, Any] = {}
    for name, flags in (("official", official), ("semantic", semantic)):
        wilson = wilson_interval(int(flags.sum()), flags.size, level)
        cells |= {name: wilson.estimate, f"{name}_low": wilson.low, f"{name}_high": wilson.high}
    if not official.size:
        nan = math.nan
        return cells | {"difference": nan, "difference_low": nan, "difference_high": nan,
                        "only_official": 0, "only_semantic": 0, "mcnemar_p": nan}  # fmt: skip
    cmp = paired_comparison(semantic, official, rng=rng, rounds=rounds, level=level)
    return cells | {
        "difference": cmp.difference.estimate,
        "difference_low": cmp.difference.low,
        "difference_high": cmp.difference.high,
        "only_official": cmp.only_b,
        "only_semantic": cmp.only_a,
        "mcnemar_p": cmp.mcnemar_p,
    }


SEMANTIC_DISAGREEMENT_COLUMNS = ("system", "task_id", "level", "extracted_answer", "expected",
                                 "correct", "correct_semantic")  # fmt: skip
"""The columns of :func:`semantic_disagreements` (plus ``semantic_truth`` when simulated)."""


def semantic_disagreements(first: pd.DataFrame) -> pd.DataFrame:
    """Every scored answer whose official and semantic verdicts differ, by system, level and
    task; with ``semantic_truth`` when the judge is simulated."""
    scored = first[first["semantic_status"] == "scored"]
    differ = scored[scored["correct"].astype(bool) != scored["correct_semantic"].astype(bool)]
    columns = list(SEMANTIC_DISAGREEMENT_COLUMNS)
    if differ["semantic_truth"].notna().any():
        columns.append("semantic_truth")
    return differ.sort_values(["system", "level", "task_id"])[columns].reset_index(drop=True)


def semantic_truth_check(
    first: pd.DataFrame, confidence: float = DEFAULT_LEVEL
) -> pd.DataFrame | None:
    """Both scorers against the simulation's truth (scored answers that carry one), per
    system and case (:func:`~.equivalence.semantic_case`, and ``all``): ``n``,
    ``judge_right`` (judge verdict = truth) with its Wilson interval, ``official_right``
    (official verdict = truth); ``None`` when no answer carries a truth (a real judge)."""
    scored = first[(first["semantic_status"] == "scored") & first["semantic_truth"].notna()]
    if scored.empty:
        return None
    truth = scored["semantic_truth"].astype(bool)
    cases = [semantic_case(t, o) for t, o in zip(truth, scored["correct"].astype(bool),
                                                 strict=True)]  # fmt: skip
    frame = scored.assign(truth=truth, case=cases)
    rows = []
    for system, group in frame.groupby("system", sort=True):
        parts = [("all", group), *((c, group[group["case"] == c]) for c in SEMANTIC_CASES)]
        for case, part in parts:
            judge_right = int((part["correct_semantic"].astype(bool) == part["truth"]).sum())
            wilson = wilson_interval(judge_right, len(part), confidence)
            rows.append({"system": system, "case": case, "n": len(part),
                         "judge_right": judge_right, "judge_accuracy": wilson.estimate,
                         "judge_low": wilson.low, "judge_high": wilson.high,
                         "official_right": int((part["correct"].astype(bool) == part["truth"])
                                               .sum())})  # fmt: skip
    return pd.DataFrame(rows)


def degenerate_drops(drops: pd.DataFrame) -> pd.DataFrame:
    """Rows of :func:`drop_rates` where a level has no correct answer (a zero-width interval)."""
    return drops[(drops["acc_to"] == 0) | (drops["acc_from"] == 0)]


def failure_sample(records: pd.DataFrame, n: int, *, seed: int) -> pd.DataFrame:
    """Up to ``n`` wrong first-attempt answers, drawn with ``seed``; a missing extracted
    answer reads ``(no answer extracted)``."""
    first = first_attempts(records)
    wrong = first[~first["correct"].astype(bool)]
    sample = wrong.sample(min(n, len(wrong)), random_state=seed) if len(wrong) else wrong
    shown = sample["extracted_answer"].fillna("").replace("", "(no answer extracted)")
    return sample.assign(extracted_answer=shown)


def pass_at_k_wide(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`pass_at_k` with one ``pass@<k>`` column per k (rows: system, level, n_items,
    identical_attempts)."""
    wide = table.pivot_table(
        index=["system", "level", "n_items", "identical_attempts"], columns="k",
        values="pass_at_k", sort=False,
    )  # fmt: skip
    wide.columns = [f"pass@{k}" for k in wide.columns]
    return wide.reset_index()


class AgentSummary(NamedTuple):
    """Trajectory statistics of the agent systems (first attempt of every task)."""

    states: pd.DataFrame
    """Tasks per end state, timeout and error rates with Wilson intervals, by system × level."""
    effort: pd.DataFrame
    """Mean (bootstrap interval) and median steps and tool calls, wall time, tokens and cost
    per task, tool-call error share, by system × level."""
    tools: pd.DataFrame
    """Share of tool calls per tool, by system × level."""
    by_steps: pd.DataFrame
    """Accuracy of tasks binned by steps taken, per system."""
    failures: pd.DataFrame
    """First-attempt tasks the agents got wrong (with level, question, expected)."""


def agent_summary(
    runs: pd.DataFrame,
    records: pd.DataFrame,
    items: Sequence[GaiaItem],
    *,
    rng: np.random.Generator,
    rounds: int,
    confidence: float = DEFAULT_LEVEL,
) -> AgentSummary:
    """Join the agents' task records with the scored records and summarize per level
    (and over all levels as ``level = "all"``)."""
    first = runs[runs["attempt"] == 0]
    scored = records[["system", "task_id", "attempt", "correct", "level", "expected"]]
    tasks = first.merge(scored, on=["system", "task_id", "attempt"], how="left")
    tasks["level"] = "L" + tasks["level"].astype(int).astype(str)
    both = pd.concat([tasks, tasks.assign(level="all")], ignore_index=True)
    by = ["system", "level"]
    questions = {it.task_id: it.question for it in items}
    failed = tasks[~tasks["correct"].fillna(False).astype(bool)]
    return AgentSummary(
        states=agent_metrics.state_table(both, by, confidence),
        effort=agent_metrics.effort_table(both, by, rng=rng, rounds=rounds, level=confidence),
        tools=agent_metrics.tool_mix(both, by),
        by_steps=agent_metrics.accuracy_by_steps(tasks),
        failures=failed.assign(question=failed["task_id"].map(questions)),
    )


def measured_systems(records: pd.DataFrame) -> list[Measured]:
    """Per system (in record order): first-attempt answers whose call or agent task did not
    fail (a missing FINAL ANSWER, a timeout or the step limit is a measured miss), and the
    items whose attempts were all identical (with several attempts)."""
    same = {}  # records without answers (hand-made tables) say nothing of their attempts
    if "model_answer" in records:
        same = identical_attempts(records, item="task_id", output="model_answer")
    out = []
    for system, rows in first_attempts(records).groupby("system", sort=False):
        states = [None if pd.isna(e) else failed_call(e) for e in rows["error"]]
        identical, repeated = same.get(str(system), (None, 0))
        out.append(measured(str(system), states, "answer", identical=identical,
                            repeated=repeated))  # fmt: skip
    return out


def near_misses(records: pd.DataFrame) -> pd.DataFrame:
    """First-attempt wrong answers that are near misses of the expected answer (a character
    or two apart: :func:`evalbench.findings.near_miss`): system, task_id, extracted_answer,
    expected, in record order."""
    columns = ["system", "task_id", "extracted_answer", "expected"]
    if not {"extracted_answer", "expected"} <= set(records.columns):
        return pd.DataFrame(columns=columns)
    first = first_attempts(records)
    right = first["correct"].astype("boolean").fillna(False).astype(bool)
    wrong = first[~right & first["extracted_answer"].notna()]
    pairs = zip(wrong["extracted_answer"], wrong["expected"], strict=True)
    close = [near_miss(str(a), str(b)) for a, b in pairs]
    return wrong.loc[close, columns].reset_index(drop=True)
