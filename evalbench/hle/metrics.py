"""HLE metrics: the official accuracy, Wald half-width and calibration error, quirks and all,
with a corrected calibration error, Wilson intervals, categories and reliability beside them.

The official numbers reproduce ``dump_metrics`` and ``calib_err`` of
``hle_eval/run_judge_results.py`` in centerforaisafety/hle @
26dca2e253b405105b4c3d8c2f5af06f86f90c66 (``calib_err`` is hendrycks/outlier-exposure
``utils/calibration_tools.py`` @ e6ede98a5474a0620d9befa50b38eaf584df4401):

- accuracy = ``round(100 · correct / n, 2)`` in percent, ``n`` = every question asked: a
  missing answer, a failed call or an unscored judgment counts as wrong;
- Wald half-width = ``round(1.96 · sqrt(acc · (100 − acc) / n), 2)`` on the *rounded*
  accuracy, in percent (always 95%);
- calibration error: the judged items (those with a confidence number; the official
  script has no others) sorted by confidence with ``np.argsort`` (unstable on ties), cut
  into ``n // 100`` bins of 100 with the last bin stretched to the end, then
  ``sqrt(Σ |bin|/n · (mean conf − accuracy)²)`` over every bin **but the last** (the weights
  do not sum to 1), reported as ``100 · round(x, 2)``. With fewer than 100 items the
  official function raises ``IndexError`` (here: undefined, with that reason); with 100-199
  it is exactly 0 (its one bin is skipped).

The **corrected** calibration error uses the same bins but counts every one (weights sum to
1), sorts stably, is defined for any n ≥ 1 (one bin below 100 items) and is not rounded.
Pure functions over arrays and the records DataFrame (:class:`~.records.HleRecord` rows).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from evalbench.calibration import (
    BIN_SIZE,
    as_arrays,
    bin_edges,
    calib_err_corrected,
    calib_err_official,
    reliability_table,
)
from evalbench.measured import Measured, failed_call, measured, unparsed
from evalbench.stats import DEFAULT_LEVEL, wilson_interval

OFFICIAL_Z = 1.96


# ---------------------------------------------------------------------------- official numbers


def official_accuracy(correct: int, n: int) -> float | None:
    """``round(100 · correct / n, 2)``, in percent; ``None`` when ``n == 0`` (the official
    script would divide by zero)."""
    return round(100 * correct / n, 2) if n else None


def official_half_width(accuracy_pct: float | None, n: int) -> float | None:
    """The official Wald 95% half-width in percent: ``round(1.96 · sqrt(a (100 − a) / n), 2)``
    with ``a`` the already-rounded accuracy in percent."""
    if accuracy_pct is None or not n:
        return None
    return round(OFFICIAL_Z * math.sqrt(accuracy_pct * (100 - accuracy_pct) / n), 2)


def calibration_bins(
    confidence: Sequence[float] | np.ndarray,
    correct: Sequence[bool] | np.ndarray,
    *,
    beta: int = BIN_SIZE,
) -> pd.DataFrame:
    """The equal-mass bins (stable sort) with what each contributes.

    Columns: ``bin, first, last`` (0-based sorted positions, last inclusive), ``n,
    mean_confidence, accuracy, gap`` (mean confidence − accuracy; positive = overconfident),
    ``weight`` (``n / N``), ``official`` (whether the official loop counts it).
    """
    conf, hits = as_arrays(confidence, correct)
    order = np.argsort(conf, kind="stable")
    conf, hits = conf[order], hits[order]
    edges = bin_edges(conf.size, beta) or ([(0, conf.size)] if conf.size else [])
    rows = []
    for index, (start, end) in enumerate(edges):
        mean_conf, acc = float(conf[start:end].mean()), float(hits[start:end].mean())
        rows.append(
            {
                "bin": index + 1,
                "first": start,
                "last": end - 1,
                "n": end - start,
                "mean_confidence": mean_conf,
                "accuracy": acc,
                "gap": mean_conf - acc,
                "weight": (end - start) / conf.size,
                "official": index < len(edges) - 1 and conf.size >= beta,
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "bin",
            "first",
            "last",
            "n",
            "mean_confidence",
            "accuracy",
            "gap",
            "weight",
            "official",
        ],
    )


# ---------------------------------------------------------------------------- record tables

STATUSES = ("scored", "unscored", "no_response")


def official_items(part: pd.DataFrame) -> pd.DataFrame:
    """The items the official calibration uses: scored, with a confidence number (unclipped)."""
    return part[(part["status"] == "scored") & part["confidence_official"].notna()]


def calibration_items(part: pd.DataFrame) -> pd.DataFrame:
    """The items of every corrected statistic: scored, with a valid 0-100 confidence."""
    return part[(part["status"] == "scored") & part["confidence"].notna()]


def accuracy_cells(
    part: pd.DataFrame, *, level: float = DEFAULT_LEVEL, beta: int = BIN_SIZE
) -> dict[str, Any]:
    """Every accuracy and calibration number of one group of records (a system, a category).

    ``n`` = questions asked; ``scored / unscored / no_response`` = judgment states
    (no_response: the system gave no answer, so nothing was judged); ``correct`` = "yes"
    verdicts; ``accuracy`` = correct / n with its Wilson interval (``ci_low, ci_high``);
    ``accuracy_scored`` = correct / scored (Wilson ``scored_low, scored_high``);
    ``official_pct`` and ``wald_pct`` = the official accuracy and half-width in percent;
    ``calib_official_pct`` / ``calib_official_note`` and ``calib_corrected_pct`` (over
    ``n_calibration`` items) in percent; ``mean_confidence`` and ``overconfidence`` (mean
    confidence − accuracy over those items, as fractions); ``confidence_missing`` /
    ``confidence_out_of_range`` = scored items left out of the calibration.
    """
    n = len(part)
    states = part["status"].value_counts()
    scored = int(states.get("scored", 0))
    hits = int((part["status"].eq("scored") & part["correct"].eq(True)).sum())
    wilson, wilson_scored = wilson_interval(hits, n, level), wilson_interval(hits, scored, level)
    official_pct = official_accuracy(hits, n)
    cal = calibration_items(part)
    off = official_items(part)
    official = calib_err_official(
        off["confidence_official"] / 100, off["correct"].astype(bool), beta=beta
    )
    corrected = calib_err_corrected(cal["confidence"] / 100, cal["correct"].astype(bool), beta=beta)
    mean_conf = float(cal["confidence"].mean() / 100) if len(cal) else math.nan
    acc_cal = float(cal["correct"].astype(bool).mean()) if len(cal) else math.nan
    notes = part.loc[part["status"] == "scored", "confidence_note"].value_counts()
    return {
        "n": n,
        "scored": scored,
        "unscored": int(states.get("unscored", 0)),
        "no_response": int(states.get("no_response", 0)),
        "correct": hits,
        "accuracy": wilson.estimate,
        "ci_low": wilson.low,
        "ci_high": wilson.high,
        "accuracy_scored": wilson_scored.estimate,
        "scored_low": wilson_scored.low,
        "scored_high": wilson_scored.high,
        "official_pct": _nan(official_pct),
        "wald_pct": _nan(official_half_width(official_pct, n)),
        "calib_official_pct": _nan(official.percent),
        "calib_official_note": official.reason,
        "n_calibration_official": official.n,
        "calib_corrected_pct": _nan(corrected.percent),
        "n_calibration": corrected.n,
        "mean_confidence": mean_conf,
        "overconfidence": mean_conf - acc_cal,
        "confidence_missing": int(notes.get("missing", 0) + notes.get("unparseable", 0)),
        "confidence_out_of_range": int(notes.get("out_of_range", 0)),
    }


def _nan(value: float | None) -> float:
    return math.nan if value is None else float(value)


def system_table(
    records: pd.DataFrame, *, level: float = DEFAULT_LEVEL, beta: int = BIN_SIZE
) -> pd.DataFrame:
    """:func:`accuracy_cells` per system (rows in the order systems first appear)."""
    rows = [
        {"system": system, **accuracy_cells(part, level=level, beta=beta)}
        for system, part in records.groupby("system", sort=False)
    ]
    return pd.DataFrame(rows)


def category_table(
    records: pd.DataFrame, *, level: float = DEFAULT_LEVEL, beta: int = BIN_SIZE
) -> pd.DataFrame:
    """:func:`accuracy_cells` per system and category (categories in name order; the official
    formulas applied per category, which the official script itself never does)."""
    rows = []
    for system, part in records.groupby("system", sort=False):
        for category, group in part.groupby("category", sort=True):
            rows.append(
                {
                    "system": system,
                    "category": category,
                    **accuracy_cells(group, level=level, beta=beta),
                }
            )
    return pd.DataFrame(rows)


def reliability_frame(
    records: pd.DataFrame, *, bins: int = 10, level: float = DEFAULT_LEVEL
) -> pd.DataFrame:
    """:func:`evalbench.calibration.reliability_table` of every system's scored items with a
    valid confidence (as a fraction): fixed-width bins, Wilson intervals, empty bins left out."""
    cal = calibration_items(records)
    frame = pd.DataFrame({"system": cal["system"], "confidence": cal["confidence"] / 100,
                          "correct": cal["correct"].astype(bool)})  # fmt: skip
    return reliability_table(frame, bins=bins, level=level)


def bins_by_system(records: pd.DataFrame, *, beta: int = BIN_SIZE) -> pd.DataFrame:
    """:func:`calibration_bins` of every system's valid confidences (``system`` first)."""
    parts = []
    for system, part in records.groupby("system", sort=False):
        cal = calibration_items(part)
        table = calibration_bins(cal["confidence"] / 100, cal["correct"].astype(bool), beta=beta)
        parts.append(table.assign(system=system))
    frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    return frame[["system", *[c for c in frame.columns if c != "system"]]] if parts else frame


def judge_table(records: pd.DataFrame) -> pd.DataFrame:
    """What the judge's outputs were, per system: states, parse paths, confidence notes.

    Columns: ``system, judged`` (outputs asked for), ``scored, unscored, json, text,
    confidence_ok, fraction, out_of_range, missing, unparseable, judge_errors``.
    """
    rows = []
    for system, part in records.groupby("system", sort=False):
        asked = part[part["status"] != "no_response"]
        scored = asked[asked["status"] == "scored"]
        notes = scored["confidence_note"].fillna("ok").value_counts()
        methods = scored["parse_method"].value_counts()
        rows.append(
            {
                "system": system,
                "judged": len(asked),
                "scored": len(scored),
                "unscored": int((asked["status"] == "unscored").sum()),
                "json": int(methods.get("json", 0)),
                "text": int(methods.get("text", 0)),
                "confidence_ok": int(notes.get("ok", 0)),
                **{
                    k: int(notes.get(k, 0))
                    for k in ("fraction", "out_of_range", "missing", "unparseable")
                },
                "judge_errors": int(asked["judge_error"].notna().sum()),
            }
        )
    return pd.DataFrame(rows)


TRUTH_COLUMNS = ["system", "n", "true_accuracy", "expected_accuracy", "measured_accuracy",
                 "judge_agreement", "true_calibration", "corrected", "official",
                 "true_overconfidence", "measured_overconfidence"]  # fmt: skip


def truth_table(records: pd.DataFrame, *, beta: int = BIN_SIZE) -> pd.DataFrame:
    """Simulated systems only: every estimate beside the simulation's truth.

    Columns: ``system, n, true_accuracy`` (share of responses whose stated answer is right),
    ``expected_accuracy`` (mean latent P(correct)), ``measured_accuracy`` (judge, official
    denominator), ``judge_agreement`` (verdict = truth among scored), ``true_calibration``
    (``sqrt(mean((stated − p)²))`` over items with a valid stated confidence: the error with
    infinitely fine bins), ``corrected`` and ``official`` estimates (fractions; official NaN
    when undefined), ``true_overconfidence`` (``mean(stated − p)``) and ``measured_overconfidence``.
    """
    rows = []
    sims = records[records["truth_p_correct"].notna()]
    for system, part in sims.groupby("system", sort=False):
        cells = accuracy_cells(part, beta=beta)
        stated = part["truth_stated"].to_numpy(float) / 100
        p = part["truth_p_correct"].to_numpy(float)
        known = ~np.isnan(stated)
        scored = part[part["status"] == "scored"]
        agree = (scored["correct"].astype(bool) == scored["truth_correct"].astype(bool)).mean()
        rows.append(
            {
                "system": system,
                "n": len(part),
                "true_accuracy": float(part["truth_correct"].astype(bool).mean()),
                "expected_accuracy": float(p.mean()),
                "measured_accuracy": cells["accuracy"],
                "judge_agreement": float(agree) if len(scored) else math.nan,
                "true_calibration": float(np.sqrt(np.mean((stated[known] - p[known]) ** 2)))
                if known.any()
                else math.nan,
                "corrected": cells["calib_corrected_pct"] / 100,
                "official": cells["calib_official_pct"] / 100,
                "true_overconfidence": float(np.mean(stated[known] - p[known]))
                if known.any()
                else math.nan,
                "measured_overconfidence": cells["overconfidence"],
            }
        )
    return pd.DataFrame(rows, columns=TRUTH_COLUMNS)


class HleSummary(NamedTuple):
    """The exact-answer tables (:func:`summarize`)."""

    systems: pd.DataFrame
    categories: pd.DataFrame
    reliability: pd.DataFrame
    bins: pd.DataFrame
    judge: pd.DataFrame
    truth: pd.DataFrame


def summarize(
    records: pd.DataFrame,
    *,
    level: float = DEFAULT_LEVEL,
    beta: int = BIN_SIZE,
    reliability_bins: int = 10,
) -> HleSummary:
    """Every exact-answer table of a study (see each function)."""
    return HleSummary(
        systems=system_table(records, level=level, beta=beta),
        categories=category_table(records, level=level, beta=beta),
        reliability=reliability_frame(records, bins=reliability_bins, level=level),
        bins=bins_by_system(records, beta=beta),
        judge=judge_table(records),
        truth=truth_table(records, beta=beta),
    )


def answer_state(row: Any) -> str | None:
    """Why one record has no verdict (``None``: the judge's verdict was read): the system's
    failed call or missing answer, the judge's failed call, or its unparsed output."""
    if row.status == "scored":
        return None
    if row.status == "no_response":
        return failed_call(row.error) if row.state == "error" else "no answer"
    if isinstance(row.judge_error, str) and row.judge_error:
        return failed_call(row.judge_error, "judge")
    return unparsed()


def measured_systems(records: pd.DataFrame) -> list[Measured]:
    """Per system (in record order): questions whose answer the judge scored, and why the
    others have no verdict (:func:`answer_state`)."""
    return [
        measured(str(system), [answer_state(r) for r in rows.itertuples()], "answer")
        for system, rows in records.groupby("system", sort=False)
    ]
