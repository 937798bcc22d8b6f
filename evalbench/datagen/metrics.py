"""Summaries and statistics of a generated dataset (pure functions over DataFrames).

Three evaluation methods, after the AIME case study of Datawhale's *Hello-Agents*,
chapter 12.4 (github.com/datawhalechina/hello-agents, ``code/chapter12/data_generation``):
the rubric judge (:func:`judge_summary`: mean score, pass ≥ 3.5, excellent ≥ 4.5), the
win rate against real problems (:func:`win_rate`, ideal near 50%) and human verification
(:func:`human_summary`, :func:`human_judge_agreement`); then the topic and answer
distributions and the conclusion against fixed thresholds (:func:`conclusion`).
Means get percentile-bootstrap intervals (seeded ``rng``), rates Wilson intervals.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, NamedTuple

import numpy as np
import pandas as pd

from evalbench import agreement, stats
from evalbench.measured import Measured, failed_call, judgment_state, measured

from .duplicates import DuplicateReport
from .scoring import (
    DIMENSIONS,
    EXCELLENT_SCORE,
    OUTCOMES,
    PASS_SCORE,
    SCORE_SLACK,
    TOPICS,
    VERIFICATION_STATUSES,
)
from .verification import Verification, verifications_frame

THRESHOLDS: dict[str, float] = {
    "judge_mean": 4.0,
    "win_rate": 0.45,
    "judge_pass_rate": 0.80,
    "human_pass_rate": 0.90,
}
"""Criteria the conclusion checks (judge mean on 1–5, rates as fractions)."""


# --------------------------------------------------------------------------- quality


class JudgeSummary(NamedTuple):
    """Rubric-judge results over generated problems."""

    metrics: pd.DataFrame
    """Rows ``mean_score, pass_rate, excellent_rate`` and one per dimension mean, with
    columns ``estimate, low, high, n``."""
    n_items: int
    n_scored: int
    n_unscored: int
    unscored_by_status: dict[str, int]


def judge_summary(
    results: pd.DataFrame,
    *,
    rng: np.random.Generator,
    dimensions: Sequence[str] = DIMENSIONS,
    scored_status: str = "scored",
    rounds: int = stats.DEFAULT_ROUNDS,
    level: float = stats.DEFAULT_LEVEL,
) -> JudgeSummary:
    """Average weighted score, pass / excellent rates and per-dimension means.

    A problem passes at ``weighted >= 3.5`` and is excellent at ``>= 4.5`` (Hello-Agents
    ch. 12.4). Means get percentile-bootstrap intervals (``rng``), rates Wilson intervals,
    all over the scored problems. Rows whose ``status`` is not ``scored_status`` are
    unscored: counted (by status), never turned into a number. The column names of
    :func:`evalbench.judge.results_frame` are accepted too (see :func:`judge_columns`).

    Args:
        results: columns ``problem_id, status, weighted`` and one per dimension.
        rng: randomness for the bootstrap.
        dimensions: the rubric dimension columns.
        scored_status: the status value of a successfully scored row.
        rounds: bootstrap resamples.
        level: confidence level of every interval.
    """
    results = judge_columns(results, dimensions)
    _require_columns(results, ["problem_id", "status", "weighted", *dimensions], "judge results")
    scored = results[results["status"] == scored_status]
    bad = scored[~np.isfinite(scored["weighted"].astype(float))]
    if len(bad):
        raise ValueError(
            f"judge results: problem {bad['problem_id'].iloc[0]!r} is scored but its "
            "weighted score is missing"
        )
    unscored = results[results["status"] != scored_status]
    w = scored["weighted"].astype(float).to_numpy()
    rows = {
        "mean_score": stats.bootstrap_mean(w, rng=rng, rounds=rounds, level=level),
        "pass_rate": stats.wilson_interval(
            int((w >= PASS_SCORE - SCORE_SLACK).sum()), len(w), level
        ),
        "excellent_rate": stats.wilson_interval(
            int((w >= EXCELLENT_SCORE - SCORE_SLACK).sum()), len(w), level
        ),
    }
    for dim in dimensions:
        values = scored[dim].astype(float).dropna()
        rows[dim] = stats.bootstrap_mean(values, rng=rng, rounds=rounds, level=level)
    counts = {dim: int(scored[dim].notna().sum()) for dim in dimensions}
    metrics = _interval_table(rows, {**dict.fromkeys(rows, len(w)), **counts})
    by_status = {str(k): int(v) for k, v in unscored["status"].value_counts(dropna=False).items()}
    return JudgeSummary(metrics, len(results), len(scored), len(unscored), by_status)


def judge_columns(results: pd.DataFrame, dimensions: Sequence[str] = DIMENSIONS) -> pd.DataFrame:
    """Accept :func:`evalbench.judge.results_frame` names: ``weighted_score`` -> ``weighted``,
    ``score_<dim>`` -> ``<dim>`` (only where the plain name is absent)."""
    renames = {"weighted_score": "weighted", **{f"score_{d}": d for d in dimensions}}
    usable = {k: v for k, v in renames.items() if k in results.columns and v not in results.columns}
    return results.rename(columns=usable)


def _interval_table(rows: Mapping[str, stats.Interval], n: Mapping[str, int]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"metric": k, "estimate": v.estimate, "low": v.low, "high": v.high, "n": n[k]}
            for k, v in rows.items()
        ]
    ).set_index("metric")


def _require_columns(df: pd.DataFrame, columns: Iterable[str], what: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"{what}: missing column(s) {missing}; have {list(df.columns)}")


class WinRateSummary(NamedTuple):
    """Generated-vs-real pairwise results."""

    table: pd.DataFrame
    """Rows ``win_rate`` (ties as half; bootstrap interval), ``wins, losses, ties`` (Wilson)."""
    n: int
    wins: int
    losses: int
    ties: int
    unscored: int
    duplicate_policy: str
    duplicate_comparisons: int
    """Comparisons whose generated problem is a flagged near-duplicate."""
    duplicate_wins_changed: int
    """Of those, how many were wins or ties (turned into losses, or dropped)."""


def win_rate(
    verdicts: pd.DataFrame,
    *,
    rng: np.random.Generator,
    duplicate_ids: Iterable[str] = (),
    duplicate_policy: Literal["loss", "exclude"] = "loss",
    rounds: int = stats.DEFAULT_ROUNDS,
    level: float = stats.DEFAULT_LEVEL,
) -> WinRateSummary:
    """Win / loss / tie rates of generated problems against real ones.

    The headline win rate counts a tie as half a win, ``(W + T/2) / n``; parity with the
    real problems is 50%. A generated problem flagged as a near-duplicate of a real one
    never counts as a win: with ``duplicate_policy="loss"`` (default) its wins and ties
    become losses, because copying a real problem is a failure of the generator and
    dropping it would flatter the rate; ``"exclude"`` drops its comparisons instead.
    Either way the summary reports how many comparisons were affected.

    Args:
        verdicts: columns ``generated_id`` and ``outcome`` (``win``/``loss``/``tie`` from
            the generated problem's side, after any position-swap reconciliation); any
            other outcome (``None``, ``unscored``...) is counted as unscored.
        rng: randomness for the bootstrap interval of the headline rate.
        duplicate_ids: generated ids flagged by :func:`~.duplicates.near_duplicates`.
        duplicate_policy: ``"loss"`` or ``"exclude"``.
        rounds: bootstrap resamples.
        level: confidence level of every interval.
    """
    _require_columns(verdicts, ["generated_id", "outcome"], "pairwise verdicts")
    if duplicate_policy not in ("loss", "exclude"):
        raise ValueError(f"duplicate_policy must be 'loss' or 'exclude', got {duplicate_policy!r}")
    scored = verdicts[verdicts["outcome"].isin(OUTCOMES)].copy()
    is_dup = scored["generated_id"].astype(str).isin({str(i) for i in duplicate_ids})
    changed = int((is_dup & scored["outcome"].isin(["win", "tie"])).sum())
    if duplicate_policy == "loss":
        scored.loc[is_dup, "outcome"] = "loss"
    else:
        scored = scored[~is_dup]
    counts = scored["outcome"].value_counts()
    w, lo, t = (int(counts.get(k, 0)) for k in OUTCOMES)
    n = w + lo + t
    points = scored["outcome"].map({"win": 1.0, "tie": 0.5, "loss": 0.0}).to_numpy(dtype=float)
    rows = {
        "win_rate": stats.bootstrap_mean(points, rng=rng, rounds=rounds, level=level),
        "wins": stats.wilson_interval(w, n, level),
        "losses": stats.wilson_interval(lo, n, level),
        "ties": stats.wilson_interval(t, n, level),
    }
    table = _interval_table(rows, dict.fromkeys(rows, n))
    unscored = len(verdicts) - int(verdicts["outcome"].isin(OUTCOMES).sum())
    return WinRateSummary(
        table, n, w, lo, t, unscored, duplicate_policy, int(is_dup.sum()), changed
    )


def topic_distribution(problems: pd.DataFrame, topics: Sequence[str] = TOPICS) -> pd.DataFrame:
    """Count and share of each topic (every topic listed, zeros included), plus others.

    Returns:
        Index ``topic``; columns ``count, share``. Topics outside ``topics`` appear after
        them (they should not, for validated problems).
    """
    counts = problems["topic"].value_counts()
    order = list(topics) + sorted(str(t) for t in counts.index if t not in topics)
    table = pd.DataFrame({"count": [int(counts.get(t, 0)) for t in order]}, index=order)
    table.index.name = "topic"
    total = table["count"].sum()
    table["share"] = table["count"] / total if total else np.nan
    return table


class AnswerSummary(NamedTuple):
    """Sanity statistics of integer answers (AIME answers are 0–999)."""

    n: int
    min: float
    max: float
    median: float
    share_below_100: float
    share_below_10: float
    most_common: list[tuple[int, int]]
    """Up to five ``(answer, count)`` pairs, most frequent first."""
    last_digit_counts: list[int]
    """How many answers end in 0, 1, ..., 9."""
    last_digit_chi2: float
    last_digit_p: float
    """Chi-square test of the last digit against uniform (9 df). With fewer than 50
    answers (expected count < 5 per digit) the approximation is rough."""


def answer_distribution(answers: Iterable[int] | pd.Series) -> AnswerSummary:
    """Range, small-answer shares, most common answers and a last-digit uniformity test.

    A generator that mostly answers small numbers, repeats a few favourite answers, or
    ends its answers in 0 or 5 betrays a bias real AIME answers do not have.
    """
    a = np.asarray(list(answers), dtype=np.int64)
    if a.size == 0:
        nan = float("nan")
        return AnswerSummary(0, nan, nan, nan, nan, nan, [], [0] * 10, nan, nan)
    digits = np.bincount(np.abs(a) % 10, minlength=10)
    from scipy import stats as sps  # here: importing scipy.stats costs ~0.5 s per process

    test = sps.chisquare(digits)
    common = Counter(a.tolist()).most_common(5)
    return AnswerSummary(
        n=int(a.size),
        min=float(a.min()),
        max=float(a.max()),
        median=float(np.median(a)),
        share_below_100=float((a < 100).mean()),
        share_below_10=float((a < 10).mean()),
        most_common=[(int(k), int(v)) for k, v in common],
        last_digit_counts=[int(d) for d in digits],
        last_digit_chi2=float(test.statistic),
        last_digit_p=float(test.pvalue),
    )


class HumanSummary(NamedTuple):
    """Human verification results."""

    n: int
    status_counts: dict[str, int]
    approved_rate: stats.Interval
    """Share approved by the reviewer: the headline human pass rate."""
    score_pass_rate: stats.Interval
    """Share with mean score (``total_score``) >= 3.5: the rubric rule, for comparison."""
    dimension_means: pd.Series


def human_summary(
    verifications: Mapping[str, Verification], *, level: float = stats.DEFAULT_LEVEL
) -> HumanSummary:
    """Human pass rates and mean scores.

    The headline *human pass rate* is the approved share: the reviewer's explicit
    decision, which can reject a problem with good average scores (e.g. a wrong answer).
    The rubric rule (mean of the four scores >= 3.5, as for the judge) is reported
    alongside. Both with Wilson intervals.
    """
    df = verifications_frame(verifications)
    n = len(df)
    counts = {s: int((df["status"] == s).sum()) for s in VERIFICATION_STATUSES}
    return HumanSummary(
        n=n,
        status_counts=counts,
        approved_rate=stats.wilson_interval(counts["approved"], n, level),
        score_pass_rate=stats.wilson_interval(
            int((df["total_score"] >= PASS_SCORE - SCORE_SLACK).sum()), n, level
        ),
        dimension_means=df[list(DIMENSIONS)].astype(float).mean(),
    )


def paired_human_judge(
    verifications: Mapping[str, Verification],
    judge_results: pd.DataFrame,
    *,
    scored_status: str = "scored",
) -> pd.DataFrame:
    """Human and judge scores of the same problems, long format.

    Returns:
        Columns ``problem_id, dimension, human, judge`` for problems both scored
        (unscored judge rows are left out); dimension ``total`` pairs the human mean
        with the judge's ``weighted`` score.
    """
    human = verifications_frame(verifications).rename(columns={"total_score": "total"})
    judge = judge_columns(judge_results)
    judge = judge[judge["status"] == scored_status].rename(columns={"weighted": "total"})
    both = human.merge(judge, on="problem_id", suffixes=("_human", "_judge"))
    parts = [
        pd.DataFrame(
            {
                "problem_id": both["problem_id"],
                "dimension": d,
                "human": both[f"{d}_human"].astype(float),
                "judge": both[f"{d}_judge"].astype(float),
            }
        )
        for d in [*DIMENSIONS, "total"]
    ]
    return pd.concat(parts, ignore_index=True)


def human_judge_agreement(
    verifications: Mapping[str, Verification],
    judge_results: pd.DataFrame,
    *,
    scored_status: str = "scored",
) -> pd.DataFrame:
    """Agreement between human reviewers and the judge, per dimension.

    Uses :mod:`evalbench.agreement` on the pairs from :func:`paired_human_judge`.

    Returns:
        One row per dimension (and ``total``): ``n``, ``within_1`` (share with
        ``|judge - human| <= 1``), ``bias`` (mean judge − human), ``pearson``,
        ``spearman``, and for the 1–5 dimensions ``exact`` agreement and quadratic-weighted
        kappa ``qwk`` over the labels 1–5 (judge scores rounded).
    """
    pairs = paired_human_judge(verifications, judge_results, scored_status=scored_status)
    rows = []
    for dim, group in pairs.groupby("dimension", sort=False):
        h, j = group["human"].to_numpy(), group["judge"].to_numpy()
        rows.append({"dimension": dim, "n": len(group), **_agreement_stats(h, j, dim)})
    return pd.DataFrame(rows).set_index("dimension")


def _agreement_stats(human: np.ndarray, judge: np.ndarray, dim: str) -> dict[str, float]:
    out = {
        "within_1": agreement.within_k_agreement(judge, human, k=1).estimate,
        "bias": agreement.mean_signed_error(judge, human).estimate,
        "pearson": agreement.pearson(judge, human).estimate,
        "spearman": agreement.spearman(judge, human).estimate,
        "exact": float("nan"),
        "qwk": float("nan"),
    }
    if dim != "total":  # scores on the 1-5 scale; a fractional judge score is rounded
        rounded = np.clip(np.rint(judge), 1, 5).astype(int)
        out["exact"] = agreement.exact_agreement(rounded, human.astype(int)).estimate
        out["qwk"] = agreement.weighted_kappa(
            rounded, human.astype(int), "quadratic", labels=range(1, 6)
        )
    return {k: float(v) for k, v in out.items()}


# --------------------------------------------------------------------------- conclusion


class Conclusion(NamedTuple):
    """The study's verdict against :data:`THRESHOLDS`."""

    table: pd.DataFrame
    """Columns ``criterion, value, threshold, met``; with no data ``value`` is NaN and
    ``met`` is ``None``."""
    next_steps: list[str]


_CRITERIA = {
    "judge_mean": "judge mean score (1-5)",
    "win_rate": "win rate vs real problems",
    "judge_pass_rate": "judge pass rate (score >= 3.5)",
    "human_pass_rate": "human pass rate (approved)",
}
_ADVICE = {
    "judge_mean": "Raise the judge mean: look at the lowest-scoring dimension and add its "
    "requirement to the generation prompt (e.g. ask for a checked, complete solution).",
    "win_rate": "Close the gap to real problems: read lost comparisons' reasons, and "
    "consider a stronger generator or a self-check step before accepting a problem.",
    "judge_pass_rate": "Filter or regenerate: drop problems the judge scores below 3.5 "
    "and regenerate their slots, then re-evaluate.",
    "human_pass_rate": "Review the rejected problems' comments and fix the commonest "
    "failure (often a wrong answer) with an answer-verification step.",
}


def conclusion(
    values: Mapping[str, float | None],
    *,
    thresholds: Mapping[str, float] = THRESHOLDS,
    duplicate_rate: float | None = None,
    invalid_rate: float | None = None,
) -> Conclusion:
    """Compare results with thresholds and suggest next steps.

    Args:
        values: by criterion name (``judge_mean, win_rate, judge_pass_rate,
            human_pass_rate``; rates as fractions); a missing, ``None`` or NaN value
            means no data, and its ``met`` is ``None``.
        thresholds: the bar per criterion (met when ``value >= threshold``).
        duplicate_rate: share of generated problems flagged as near-duplicates (advice only).
        invalid_rate: share of generator outputs that failed validation (advice only).
    """
    rows, steps = [], []
    for key, bar in thresholds.items():
        value = values.get(key)
        has = value is not None and math.isfinite(value)
        met = bool(value >= bar) if has else None  # type: ignore[operator]
        rows.append(
            {
                "criterion": _CRITERIA.get(key, key),
                "value": float(value) if has else float("nan"),  # type: ignore[arg-type]
                "threshold": bar,
                "met": met,
            }
        )
        if met is None:
            steps.append(f"No data for {_CRITERIA.get(key, key)}: run that evaluation.")
        elif not met:
            steps.append(_ADVICE.get(key, f"Improve {key}."))
    steps.extend(_rate_advice(duplicate_rate, invalid_rate))
    if not steps:
        steps.append("All criteria met: scale up generation and spot-check a fresh sample by hand.")
    return Conclusion(pd.DataFrame(rows, columns=["criterion", "value", "threshold", "met"]), steps)


def _rate_advice(duplicate_rate: float | None, invalid_rate: float | None) -> list[str]:
    steps = []
    if duplicate_rate is not None and duplicate_rate > 0:
        steps.append(
            f"{duplicate_rate:.0%} of generated problems nearly copy a real one: drop them, "
            "and insist in the prompt that the reference is for style only."
        )
    if invalid_rate is not None and invalid_rate > 0.05:
        steps.append(
            f"{invalid_rate:.0%} of generator outputs were invalid: see the reasons, and "
            "use JSON mode or retries for the commonest one."
        )
    return steps


class StudySummary(NamedTuple):
    """Everything the report shows, each part ``None`` when its data is missing."""

    judge: JudgeSummary | None
    win: WinRateSummary | None
    topics: pd.DataFrame
    answers: AnswerSummary
    human: HumanSummary | None
    conclusion: Conclusion


def summarize(
    problems: pd.DataFrame,
    *,
    rng: np.random.Generator,
    judge_results: pd.DataFrame | None = None,
    verdicts: pd.DataFrame | None = None,
    duplicates: DuplicateReport | None = None,
    verifications: Mapping[str, Verification] | None = None,
    n_invalid: int = 0,
    thresholds: Mapping[str, float] = THRESHOLDS,
    duplicate_policy: Literal["loss", "exclude"] = "loss",
    topics: Sequence[str] = TOPICS,
    rounds: int = stats.DEFAULT_ROUNDS,
    level: float = stats.DEFAULT_LEVEL,
) -> StudySummary:
    """All summaries of a run and the conclusion (see the individual functions).

    Args:
        problems: the valid generated problems (columns ``id, topic, answer``).
        rng: randomness for bootstrap intervals.
        judge_results: rubric results (see :func:`judge_summary`).
        verdicts: pairwise outcomes (see :func:`win_rate`).
        duplicates: near-duplicate report; flagged problems never count as wins.
        verifications: human reviews.
        n_invalid: generator outputs that failed validation (for the advice).
        thresholds: the bars of :func:`conclusion`.
        duplicate_policy: how flagged problems' comparisons count (see :func:`win_rate`).
        topics: the topics listed in the topic table (see :func:`topic_distribution`).
        rounds: bootstrap resamples.
        level: confidence level of every interval.
    """
    judge = None
    if judge_results is not None:
        judge = judge_summary(judge_results, rng=rng, rounds=rounds, level=level)
    dup_ids = duplicates.flagged_ids() if duplicates is not None else set()
    win = None
    if verdicts is not None:
        win = win_rate(
            verdicts,
            rng=rng,
            duplicate_ids=dup_ids,
            duplicate_policy=duplicate_policy,
            rounds=rounds,
            level=level,
        )
    human = human_summary(verifications, level=level) if verifications else None
    values = _criterion_values(judge, win, human)
    n, total = len(problems), len(problems) + n_invalid
    dup_rate = len(dup_ids) / n if duplicates is not None and n else None
    verdict = conclusion(
        values,
        thresholds=thresholds,
        duplicate_rate=dup_rate,
        invalid_rate=n_invalid / total if total else None,
    )
    answers = answer_distribution(problems["answer"])
    return StudySummary(judge, win, topic_distribution(problems, topics), answers, human, verdict)


def _criterion_values(
    judge: JudgeSummary | None, win: WinRateSummary | None, human: HumanSummary | None
) -> dict[str, float | None]:
    return {
        "judge_mean": judge.metrics.loc["mean_score", "estimate"] if judge else None,
        "win_rate": win.table.loc["win_rate", "estimate"] if win else None,
        "judge_pass_rate": judge.metrics.loc["pass_rate", "estimate"] if judge else None,
        "human_pass_rate": human.approved_rate.estimate if human else None,
    }


# --------------------------------------------------------------------------- report tables


def reference_counts(reference: pd.DataFrame) -> pd.DataFrame:
    """Reference rows per source and year (columns ``source, year, problems``); rows
    without a year (evalbench's demo problems) are counted with the year missing."""
    counts = reference.groupby(["source", "year"], dropna=False).size().rename("problems")
    return counts.reset_index()


def invalid_reasons(invalid: pd.DataFrame) -> pd.DataFrame:
    """How often each validation failure occurred (an output can fail for several).

    Returns:
        Columns ``reason, count, share`` (share of invalid outputs), most frequent first.
    """
    if invalid.empty:
        return pd.DataFrame(columns=["reason", "count", "share"])
    parts = invalid["reason"].astype(str).str.split("; ").explode()
    counts = parts.value_counts()
    table = pd.DataFrame({"reason": counts.index, "count": counts.to_numpy()})
    table["share"] = table["count"] / len(invalid)
    return table


def answer_comparison(generated: AnswerSummary, real: AnswerSummary) -> pd.DataFrame:
    """The answer-sanity statistics of generated and real problems side by side."""
    fields = ["n", "min", "max", "median", "share_below_100", "share_below_10", "last_digit_p"]
    table = pd.DataFrame(
        {
            "generated": [getattr(generated, f) for f in fields],
            "real": [getattr(real, f) for f in fields],
        },
        index=fields,
    )
    table.index.name = "statistic"
    return table


def duplicate_examples(
    report: DuplicateReport, problems: pd.DataFrame, reference: pd.DataFrame
) -> list[dict[str, Any]]:
    """Flagged pairs with both texts (for display), most similar first."""
    gen = problems.set_index(problems["id"].astype(str))["problem"]
    ref = reference.set_index(reference["id"].astype(str))["problem"]
    top = report.top[report.top["flagged"]].sort_values("similarity", ascending=False)
    return [
        {
            "generated_id": row.generated_id,
            "reference_id": row.reference_id,
            "similarity": f"{row.similarity:.3f}",
            "generated problem": gen.get(row.generated_id),
            "real problem": ref.get(row.reference_id),
        }
        for row in top.itertuples(index=False)
    ]


def judge_vs_truth(judge_results: pd.DataFrame, problems: pd.DataFrame) -> pd.DataFrame:
    """Judge weighted scores beside the simulated problems' hidden true quality.

    Returns:
        Columns ``problem_id, true_quality, judge`` for scored problems with a truth.
    """
    scored = judge_columns(judge_results)
    scored = scored[scored["status"] == "scored"][["problem_id", "weighted"]]
    truth = problems[["id", "true_quality"]].rename(columns={"id": "problem_id"})
    both = truth.merge(scored, on="problem_id").rename(columns={"weighted": "judge"})
    return both.dropna(subset=["true_quality"]).reset_index(drop=True)


def order_consistency(verdicts: pd.DataFrame) -> pd.DataFrame:
    """How the two presentation orders of each pair resolved (consistent, inconsistent,
    unscored), with shares of all pairs."""
    counts = verdicts["order_outcome"].value_counts()
    table = pd.DataFrame({"resolution": counts.index, "pairs": counts.to_numpy()})
    table["share"] = table["pairs"] / max(1, len(verdicts))
    return table


GENERATOR_FAILED = "generator call failed: "
"""How :class:`~.scoring.InvalidGeneration` words a failed generator call."""


def slot_state(reason: str, attempts: int) -> str:
    """Why a slot has no problem: the last attempt's failed call, or invalid outputs."""
    if reason.startswith(GENERATOR_FAILED):
        return failed_call(reason.removeprefix(GENERATOR_FAILED))
    return f"invalid generator output (all {attempts} attempts)"


def measured_generator(
    generator: str,
    slots: Sequence[str],
    invalid: pd.DataFrame,
    quality: pd.DataFrame | None,
    attempts: int,
) -> list[Measured]:
    """The generator's slots (``slots``: their ids) whose problem the judge scored, and why
    the others have no quality score: no valid problem (:func:`slot_state`), or the judge's
    failed call or unparsed output (``quality``: the judge's rows, ``problem_id, status,
    error[, unscored_kind]``; ``None`` when nothing was judged)."""
    last = dict(zip(invalid["id"].astype(str), invalid["reason"].astype(str), strict=True))
    judged: dict[str, str | None] = {}
    for row in (quality if quality is not None else pd.DataFrame()).itertuples():
        if getattr(row, "replicate", 0) == 0:
            kind = getattr(row, "unscored_kind", None)
            judged[str(row.problem_id)] = judgment_state(row.status, row.error, kind, "judge")
    states = [
        judged[slot] if slot in judged else slot_state(last.get(slot, "no output"), attempts)
        for slot in slots
    ]
    return [measured(generator, states, "problem")]
