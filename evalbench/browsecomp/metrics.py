"""BrowseComp statistics: pure functions over the ``official`` records (one row per system
and question).

- accuracy over the **graded** questions (Wilson interval) and over **all** questions (the
  official denominator: an ungraded, unanswered or failed question counts wrong);
- the reference grader's accuracy (``match.group(0)``: 0 whenever the grader follows the
  format) beside it;
- HLE's official calibration error and a corrected variant (:mod:`evalbench.calibration`),
  reported as the official script does, ``100 * round(x, 2)``;
- :func:`zh_calibration_error`: BrowseComp-ZH's ``run_acc_calibration_error.py``: five
  fixed-width bins of 20 points (``min(conf // 20, 4)``; 100 in the last), over **every**
  record (an unparsed confidence is 0, a verdict other than yes/no is wrong), L1 gap weighted
  by bin size, ×100;
- per-topic accuracy, search calls and pages opened per question (from the trajectories).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from evalbench.calibration import calib_err_corrected, calib_err_official, reliability_table
from evalbench.measured import Measured, failed_call, measured, unparsed
from evalbench.stats import DEFAULT_LEVEL, DEFAULT_ROUNDS, bootstrap_mean, wilson_interval

ANSWERED = "answered"


def official_accuracy(records: pd.DataFrame, level: float = DEFAULT_LEVEL) -> pd.DataFrame:
    """Per system: questions, answered, graded, unscored, correct; accuracy over the graded
    questions and over all questions (Wilson); over all questions, the reference grader's
    accuracy (``group(0)``), that of its proposed fix (``group(1)``, PR #93) and
    BrowseComp-ZH's reading (its regex; ``yes`` / every record)."""
    rows = []
    for system, part in records.groupby("system", sort=False):
        n, graded = len(part), part[part["status"] == "scored"]
        correct = int(graded["correct"].astype(bool).sum())
        scored_iv, all_iv = (
            wilson_interval(correct, len(graded), level),
            wilson_interval(correct, n, level),
        )
        rows.append(
            {
                "system": system,
                "questions": n,
                "answered": int((part["state"] == ANSWERED).sum()),
                "graded": len(graded),
                "unscored": int((part["status"] == "unscored").sum()),
                "correct": correct,
                "accuracy": scored_iv.estimate,
                "accuracy_low": scored_iv.low,
                "accuracy_high": scored_iv.high,
                "accuracy_all": all_iv.estimate,
                "accuracy_all_low": all_iv.low,
                "accuracy_all_high": all_iv.high,
                "reference_accuracy": float(part["reference_correct"].astype(bool).mean()),
                "pr93_accuracy": float(part["pr93_correct"].astype(bool).mean()),
                "zh_accuracy": float((part["zh_verdict"] == "yes").mean()),
            }
        )
    return pd.DataFrame(rows)


def topic_accuracy(records: pd.DataFrame, level: float = DEFAULT_LEVEL) -> pd.DataFrame:
    """Per system and topic: questions, graded, correct and the accuracy over the graded
    questions (Wilson); topics by size."""
    rows = []
    for (system, topic), part in records.groupby(["system", "topic"], sort=False):
        graded = part[part["status"] == "scored"]
        correct = int(graded["correct"].astype(bool).sum())
        iv = wilson_interval(correct, len(graded), level)
        rows.append(
            {
                "system": system,
                "topic": topic,
                "questions": len(part),
                "graded": len(graded),
                "correct": correct,
                "accuracy": iv.estimate,
                "accuracy_low": iv.low,
                "accuracy_high": iv.high,
            }
        )
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    size = frame.groupby("topic")["questions"].transform("max")
    return (
        frame.assign(_n=size)
        .sort_values(["system", "_n", "topic"], ascending=[True, False, True], kind="stable")
        .drop(columns="_n")
    )


def hle_calibration_error(
    confidence_pct: Sequence[float], correct: Sequence[bool], beta: int
) -> float:
    """As the HLE script reports it (:func:`evalbench.calibration.calib_err_official`):
    ``100 * round(calib_err(conf / 100, correct), 2)``; NaN below ``beta`` items."""
    result = calib_err_official(np.asarray(confidence_pct, float) / 100, correct, beta=beta)
    return math.nan if result.percent is None else result.percent


def calibration_error_all_bins(
    confidence_pct: Sequence[float], correct: Sequence[bool], beta: int
) -> float:
    """The corrected variant in percent (:func:`evalbench.calibration.calib_err_corrected`):
    every bin counted, stable sort, weights summing to 1; NaN without items."""
    result = calib_err_corrected(np.asarray(confidence_pct, float) / 100, correct, beta=beta)
    return math.nan if result.percent is None else result.percent


def zh_calibration_error(confidences: Sequence[int], verdicts: Sequence[str]) -> float:
    """BrowseComp-ZH's calibration error (module docstring), in percent; NaN for no records.

    Args:
        confidences: the official integer confidences (0 where unparsed).
        verdicts: ``yes`` / ``no`` / ``none`` per record.
    """
    total = len(confidences)
    if total == 0:
        return math.nan
    bins = [{"n": 0, "correct": 0, "conf": 0} for _ in range(5)]
    for confidence, verdict in zip(confidences, verdicts, strict=True):
        b = bins[min(confidence // 20, 4)]  # a negative value indexes from the end, as there
        b["n"] += 1
        b["conf"] += confidence
        b["correct"] += verdict == "yes"
    error = sum(
        b["n"] / total * abs(b["correct"] / b["n"] - b["conf"] / b["n"] / 100)
        for b in bins
        if b["n"]
    )
    return error * 100


class Calibration(NamedTuple):
    """Calibration errors of one system (percent)."""

    system: str
    with_confidence: int
    """Graded questions whose confidence could be read (the HLE-style errors use these)."""
    hle_official: float
    """HLE's ``calib_err`` as its script reports it (NaN below ``beta`` items)."""
    all_bins: float
    """The corrected equal-mass variant."""
    zh_fixed_bins: float
    """BrowseComp-ZH's five fixed-width bins over every record."""


def calibration_table(records: pd.DataFrame, beta: int) -> pd.DataFrame:
    """Per system: the three calibration errors (see :class:`Calibration`)."""
    rows = []
    for system, part in records.groupby("system", sort=False):
        usable = part[(part["status"] == "scored") & part["confidence"].notna()]
        conf, hit = usable["confidence"].to_numpy(float), usable["correct"].astype(bool).to_numpy()
        rows.append(
            Calibration(
                system,
                len(usable),
                hle_calibration_error(conf, hit, beta),
                calibration_error_all_bins(conf, hit, beta),
                zh_calibration_error(
                    part["zh_confidence"].astype(int).tolist(),
                    part["zh_verdict"].astype(str).tolist(),
                ),
            )._asdict()
        )
    return pd.DataFrame(rows)


def reliability(
    records: pd.DataFrame, bins: int = 10, level: float = DEFAULT_LEVEL
) -> pd.DataFrame:
    """:func:`evalbench.calibration.reliability_table` of the graded questions with a stated
    confidence (percent in the records, fractions there)."""
    usable = records[(records["status"] == "scored") & records["confidence"].notna()]
    frame = pd.DataFrame(
        {
            "system": usable["system"],
            "confidence": usable["confidence"].astype(float) / 100,
            "correct": usable["correct"].astype(bool),
        }
    )
    return reliability_table(frame, bins=bins, level=level)


def browsing_effort(
    records: pd.DataFrame,
    *,
    rng: np.random.Generator,
    rounds: int = DEFAULT_ROUNDS,
    level: float = DEFAULT_LEVEL,
) -> pd.DataFrame:
    """Per agent system: search calls and pages opened per question (means with bootstrap
    intervals) and the share of questions answered (agents only: rows with steps)."""
    rows = []
    agents = records[records["steps"].notna()]
    for system, part in agents.groupby("system", sort=False):
        row: dict[str, Any] = {"system": system, "questions": len(part)}
        for name in ("search_calls", "pages_opened", "steps"):
            est = bootstrap_mean(part[name].to_numpy(float), rng=rng, rounds=rounds, level=level)
            row |= {name: est.estimate, f"{name}_low": est.low, f"{name}_high": est.high}
        row["answered_share"] = float((part["state"] == ANSWERED).mean())
        rows.append(row)
    return pd.DataFrame(rows)


def question_state(row: Any) -> str | None:
    """Why one question has no grade (``None``: graded): the system's failed call or missing
    answer, the grader's failed call, or its unparsed output."""
    error = row.error if isinstance(row.error, str) and row.error else None
    if row.status == "scored":
        return None
    if row.status == "not answered":
        return failed_call(error) if row.state == "error" else f"no answer ({error or row.state})"
    return failed_call(error, "grader") if error else unparsed()


def measured_systems(records: pd.DataFrame) -> list[Measured]:
    """Per system (in record order): questions the grader graded, and why the others have
    no grade (:func:`question_state`)."""
    return [
        measured(str(system), [question_state(r) for r in rows.itertuples()], "answer")
        for system, rows in records.groupby("system", sort=False)
    ]
