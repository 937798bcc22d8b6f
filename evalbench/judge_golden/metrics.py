"""Judges against the golden scores: ±k agreement, bias, confusion, panel, retest, pairs.

Pure functions over the judgment frame (:func:`evalbench.judge.judge_rubric` columns with
``item``), the golden set (:func:`~.data.load_golden`) and their long form
(:func:`golden_long`). Unscored judgments are left out of every statistic and counted
(``within_k_strict`` counts them as misses). Intervals: Wilson for shares, seeded percentile
bootstrap over items otherwise, each at the level passed in.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any, Literal

import numpy as np
import pandas as pd

from evalbench import agreement as ag
from evalbench.judge import Rubric, aggregate_panel_scores
from evalbench.judge.tables import (
    interval_columns,
    longer_summary,
    position_summary,
    verdict_agreement,
    wilson_columns,
)
from evalbench.measured import Measured, judgment_state, measured
from evalbench.stats import Interval, bootstrap, percentile_interval

from .data import dimension_names
from .scoring import scale_labels, score_column

# --------------------------------------------------------------------------- the golden set


def human_summary(golden: pd.DataFrame, rubric: Rubric) -> pd.DataFrame:
    """Mean, standard deviation and quantiles of the human scores per dimension (and weighted).

    Returns:
        ``human score, items, mean, std, min, 25%, 50%, 75%, max``.
    """
    columns = [f"human_{d}" for d in [*dimension_names(rubric), "weighted"]]
    described = golden[columns].describe().T.astype({"count": int})
    return described.reset_index().rename(columns={"index": "human score", "count": "items"})


def status_counts(judgments: pd.DataFrame) -> pd.DataFrame:
    """Scored and unscored judgments per judge and replicate: ``judge, replicate, scored, ...``."""
    counts = (
        judgments.groupby(["judge", "replicate"])["status"].value_counts().unstack(fill_value=0)
    )
    counts.columns.name = None
    return counts.reset_index()


def golden_long(judgments: pd.DataFrame, golden: pd.DataFrame, rubric: Rubric) -> pd.DataFrame:
    """One row per (judge, item, replicate, dimension incl. ``weighted``) with both scores.

    Returns:
        ``judge, item, replicate, status, dimension, judge_score`` (NaN when unscored),
        ``human, diff`` (judge − human) and ``answer_chars``.
    """
    base = judgments[["judge", "item", "replicate", "status"]]
    chars = golden.set_index("item")["answer"].str.len()
    parts = []
    for dim in [*dimension_names(rubric), "weighted"]:
        part = base.copy()
        part["dimension"] = dim
        part["judge_score"] = judgments.get(score_column(dim), math.nan)
        part["human"] = golden.set_index("item")[f"human_{dim}"].loc[part["item"]].to_numpy()
        parts.append(part)
    long = pd.concat(parts, ignore_index=True)
    long["judge_score"] = long["judge_score"].astype(float)
    long["diff"] = long["judge_score"] - long["human"]
    long["answer_chars"] = chars.loc[long["item"]].to_numpy()
    return long


def _first_replicate(long: pd.DataFrame, judge: str, dimension: str) -> pd.DataFrame:
    return long[
        (long["judge"] == judge) & (long["dimension"] == dimension) & (long["replicate"] == 0)
    ]


# --------------------------------------------------------------------------- judge vs human


def _agreement_row(
    part: pd.DataFrame,
    labels: list[int] | None,
    k: float,
    rng: np.random.Generator,
    rounds: int,
    level: float,
) -> dict[str, Any]:
    scored = part.dropna(subset=["judge_score"])
    j, h = scored["judge_score"].to_numpy(), scored["human"].to_numpy()
    hits = int((np.abs(j - h) <= k + ag.DISTANCE_SLACK).sum())
    integer = labels is not None and bool(np.all(np.mod(np.concatenate([j, h]), 1) == 0))
    qwk = (
        ag.kappa_interval(j, h, labels, weights="quadratic", rng=rng, rounds=rounds, level=level)
        if integer else Interval(math.nan, math.nan, math.nan, level)
    )  # fmt: skip
    return {
        "n_items": len(part),
        "n_scored": len(scored),
        "n_unscored": len(part) - len(scored),
        **wilson_columns(hits, len(scored), level, "within_k"),
        "within_k_strict": hits / len(part) if len(part) else math.nan,
        "exact": float((j == h).mean()) if len(j) else math.nan,
        **interval_columns(
            ag.mean_absolute_error(j, h, rng=rng, rounds=rounds, level=level), "mae"
        ),
        **interval_columns(ag.mean_signed_error(j, h, rng=rng, rounds=rounds, level=level), "bias"),
        **interval_columns(qwk, "qwk"),
        "spearman": ag.spearman(j, h).estimate,
    }


def golden_agreement(
    long: pd.DataFrame,
    rubric: Rubric,
    *,
    tolerance: float,
    rng: np.random.Generator,
    rounds: int,
    level: float,
) -> pd.DataFrame:
    """Each judge against the human scores, per dimension (first replicate only).

    Per (judge, dimension): ``within_k`` = share of scored items with |judge − human| <= k
    (Williamson, Xi & Breyer, 2012, "adjacent agreement"; Wilson interval), and
    ``within_k_strict`` counting unscored items as misses; ``exact`` agreement; MAE and bias
    (mean judge − human; positive = lenient) with bootstrap intervals; quadratic weighted
    kappa (integer scales; bootstrap) and Spearman's rho.

    Args:
        long: :func:`golden_long`.
        rubric: the rubric (its integer scales are the kappa labels).
        tolerance: k of the ±k agreement.
        rng: the source of randomness of the bootstraps.
        rounds: bootstrap rounds.
        level: confidence level of every interval.
    """
    first = long[long["replicate"] == 0]
    rows = []
    for (judge, dim), part in first.groupby(["judge", "dimension"], sort=False):
        row = _agreement_row(part, scale_labels(rubric, dim), tolerance, rng, rounds, level)
        rows.append({"judge": judge, "dimension": dim, **row})
    return pd.DataFrame(rows)


def score_confusion(
    long: pd.DataFrame, rubric: Rubric, *, judge: str, dimension: str
) -> pd.DataFrame:
    """Counts of (human score, judge score) on an integer-scale dimension, full scale both ways."""
    labels = scale_labels(rubric, dimension)
    if labels is None:
        raise ValueError(f"score_confusion: {dimension!r} has no integer scale")
    part = _first_replicate(long, judge, dimension)
    table = ag.confusion_matrix(part["judge_score"], part["human"], labels)
    table.index.name, table.columns.name = "human score", f"{judge} score"
    return table


def worst_disagreements(
    judgments: pd.DataFrame, golden: pd.DataFrame, *, judge: str, dimension: str, n: int
) -> pd.DataFrame:
    """The ``n`` scored items where ``judge`` is furthest from the human score on ``dimension``.

    Ties in |difference| are broken by item id, so the selection is deterministic.

    Args:
        judgments: the judgments (``evalbench.judge_golden.study.run_golden``).
        golden: :func:`~.data.load_golden`.
        judge: the judge to show.
        dimension: a rubric dimension or ``weighted``.
        n: how many items.
    """
    col = score_column(dimension)
    rows = judgments[(judgments["judge"] == judge) & (judgments["replicate"] == 0)]
    rows = rows[rows["status"] == "scored"].merge(golden, on="item")
    rows = rows.assign(
        judge_score=rows[col],
        human=rows[f"human_{dimension}"],
        diff=rows[col] - rows[f"human_{dimension}"],
    )
    rows = rows.assign(gap=rows["diff"].abs()).sort_values(["gap", "item"], ascending=[False, True])
    keep = ["item", "question", "answer", "reference", "human", "judge_score", "diff"]
    keep += [c for c in ("extra_error_analysis", "extra_reason") if c in rows]
    return rows[keep].head(n).reset_index(drop=True)


def unscored_outputs(judgments: pd.DataFrame) -> pd.DataFrame:
    """Every unscored judgment (unparseable output or failed call) with its reason and raw text."""
    cols = ["judge", "item", "replicate", "unscored_kind", "unscored_reason", "error", "raw"]
    rows = judgments[judgments["status"] != "scored"]
    return rows.reindex(columns=cols).reset_index(drop=True)


def unscored_kinds(unscored: pd.DataFrame) -> pd.DataFrame:
    """Unscored judgments counted by judge and cause: ``judge, unscored_kind, count``."""
    return unscored.groupby(["judge", "unscored_kind"]).size().rename("count").reset_index()


# --------------------------------------------------------------------------- answer length


def length_slope(
    long: pd.DataFrame,
    *,
    judge: str,
    dimension: str,
    typical: float,
    rng: np.random.Generator,
    rounds: int,
    level: float,
) -> Interval:
    """OLS slope of (judge − human) on ln(answer length / typical), bootstrap interval.

    The sim judge adds ``length_bias · ln(length / typical)`` to every score, so the slope
    estimates its ``length_bias`` knob (attenuated by rounding and the scale's ends).

    Args:
        long: :func:`golden_long`.
        judge: the judge.
        dimension: a rubric dimension or ``weighted``.
        typical: the reference length (characters), e.g. :func:`~.scoring.typical_length`.
        rng: the source of randomness of the bootstrap.
        rounds: bootstrap rounds.
        level: confidence level.
    """
    part = _first_replicate(long, judge, dimension).dropna(subset=["diff"])
    x = np.log(np.maximum(part["answer_chars"].to_numpy(float), 1.0) / typical)
    y = part["diff"].to_numpy(float)

    def slope(xs: np.ndarray, ys: np.ndarray) -> float:
        return float(np.polyfit(xs, ys, 1)[0]) if np.ptp(xs) > 0 else math.nan

    return bootstrap(slope, x, y, rng=rng, rounds=rounds, level=level)


def length_points(
    long: pd.DataFrame, *, judge: str, dimension: str, typical: float, rng: np.random.Generator
) -> pd.DataFrame:
    """The points of the length-bias scatter: ``log_ratio`` = ln(length / typical), ``diff``
    (judge − human, scored items of the first replicate) and ``shown`` = ``diff`` plus a
    uniform jitter of ±0.12 drawn from ``rng`` (for display only).

    Args:
        long: :func:`golden_long`.
        judge: the judge.
        dimension: a rubric dimension or ``weighted``.
        typical: the reference length (characters).
        rng: the source of the jitter.
    """
    part = _first_replicate(long, judge, dimension).dropna(subset=["diff"])
    diff = part["diff"].to_numpy()
    return pd.DataFrame(
        {
            "log_ratio": np.log(part["answer_chars"] / typical).to_numpy(),
            "diff": diff,
            "shown": diff + rng.uniform(-0.12, 0.12, len(part)),
        }
    )


def length_fit(points: pd.DataFrame, slope: float, n: int = 20) -> pd.DataFrame:
    """The fitted line of the length-bias scatter: ``n`` evenly spaced ``log_ratio`` values
    over the range of :func:`length_points`, and ``fit``, the line of slope ``slope`` through
    the mean point (where an OLS line passes)."""
    grid = np.linspace(points["log_ratio"].min(), points["log_ratio"].max(), n)
    fit = points["diff"].mean() + slope * (grid - points["log_ratio"].mean())
    return pd.DataFrame({"log_ratio": grid, "fit": fit})


# --------------------------------------------------------------------------- panel


def golden_panel(
    judgments: pd.DataFrame,
    golden: pd.DataFrame,
    *,
    dimension: str,
    method: Literal["mean", "median"],
    outlier_distance: float,
    tolerance: float,
) -> pd.DataFrame:
    """The judges as a panel on ``dimension``: consensus, spread, outliers, and the human score.

    Uses :func:`evalbench.judge.aggregate_panel_scores` on the first replicate; adds
    ``human``, ``consensus_diff`` and ``within_k`` (|consensus − human| <= k).

    Args:
        judgments: the judgments (``evalbench.judge_golden.study.run_golden``).
        golden: :func:`~.data.load_golden`.
        dimension: a rubric dimension or ``weighted``.
        method: the consensus, ``mean`` or ``median``.
        outlier_distance: as :func:`evalbench.judge.aggregate_panel_scores`.
        tolerance: k of the ±k agreement with the human score.
    """
    frame = judgments[judgments["replicate"] == 0].rename(columns={"item": "item_id"})
    panel = aggregate_panel_scores(
        frame, score=score_column(dimension), method=method, outlier_distance=outlier_distance
    )
    panel["human"] = golden.set_index("item")[f"human_{dimension}"].loc[panel.index].to_numpy()
    panel["consensus_diff"] = panel["consensus"] - panel["human"]
    panel["within_k"] = (panel["consensus_diff"].abs() <= tolerance + ag.DISTANCE_SLACK).where(
        panel["consensus"].notna()
    )
    return panel


def panel_summary(panel: pd.DataFrame, level: float) -> dict[str, Any]:
    """The panel's ±k agreement with the humans (Wilson), disagreement and outlier counts."""
    scored = panel["within_k"].dropna().astype(bool)
    flagged = panel["outliers"].map(len) > 0
    counts = Counter(j for outliers in panel["outliers"] for j in outliers)
    return {
        "n_items": len(panel),
        **wilson_columns(int(scored.sum()), len(scored), level, "within_k"),
        "mean_range": float(panel["range"].mean()),
        "items_with_outlier": int(flagged.sum()),
        "outliers_by_judge": dict(sorted(counts.items())),
    }


def panel_versus(
    agreement: pd.DataFrame, panel: pd.DataFrame, summary: dict[str, Any], *, dimension: str,
    label: str,
) -> pd.DataFrame:  # fmt: skip
    """Each judge's ±k agreement on ``dimension`` and the panel's, one row each (``label``)."""
    single = agreement[agreement["dimension"] == dimension]
    cols = ["judge", "n_scored", "within_k", "within_k_low", "within_k_high"]
    row = {
        "judge": label,
        "n_scored": int(panel["within_k"].notna().sum()),
        **{k: summary[k] for k in ("within_k", "within_k_low", "within_k_high")},
    }
    return pd.concat([single[cols], pd.DataFrame([row])], ignore_index=True)


def outlier_items(panel: pd.DataFrame) -> pd.DataFrame:
    """The panel's items with at least one outlier judge, formatted for a table.

    Returns:
        ``item_id, n_scored, consensus, min, max, range, std, outliers`` (comma-joined),
        ``human``; scores written with ``:g``.
    """
    flagged = panel[panel["outliers"].map(len) > 0].reset_index()
    flagged["outliers"] = flagged["outliers"].map(", ".join)
    for col in ("min", "max", "range", "human"):
        flagged[col] = flagged[col].map("{:g}".format)
    return flagged[
        ["item_id", "n_scored", "consensus", "min", "max", "range", "std", "outliers", "human"]
    ]


def judge_vs_judge(long: pd.DataFrame, *, dimension: str, tolerance: float) -> pd.DataFrame:
    """Judge × judge ±k agreement on ``dimension`` (items both scored, first replicate)."""
    part = long[(long["dimension"] == dimension) & (long["replicate"] == 0)]
    wide = part.pivot(index="item", columns="judge", values="judge_score")
    judges = list(dict.fromkeys(part["judge"]))
    matrix = pd.DataFrame(
        index=pd.Index(judges, name="judge"), columns=pd.Index(judges, name="judge"), dtype=float
    )
    for a in judges:
        for b in judges:
            matrix.loc[a, b] = ag.within_k_agreement(wide[a], wide[b], tolerance).estimate
    return matrix


# --------------------------------------------------------------------------- retest, pairs


def golden_retest(
    long: pd.DataFrame,
    rubric: Rubric,
    *,
    judge: str,
    dimension: str,
    rng: np.random.Generator,
    rounds: int,
    level: float,
) -> ag.RetestAgreement:
    """Test–retest of ``judge`` on ``dimension``: replicate 0 against replicate 1.

    Args:
        long: :func:`golden_long` (with replicate 1 of ``judge``).
        rubric: the rubric (the dimension's integer scale is the kappa labels).
        judge: the judge asked twice.
        dimension: a rubric dimension or ``weighted``.
        rng: the source of randomness of the bootstraps.
        rounds: bootstrap rounds.
        level: confidence level of every interval.

    Raises:
        ValueError: ``judge`` has no replicate 1.
    """
    part = long[(long["judge"] == judge) & (long["dimension"] == dimension)]
    wide = part.pivot(index="item", columns="replicate", values="judge_score")
    if 1 not in wide:
        raise ValueError(f"golden_retest: {judge!r} has no replicate 1 (set retest: true)")
    return ag.retest_agreement(
        wide[0],
        wide[1],
        labels=scale_labels(rubric, dimension),
        rng=rng,
        rounds=rounds,
        level=level,
    )


def retest_table(retest: ag.RetestAgreement) -> pd.DataFrame:
    """The retest statistics as rows: ``statistic, estimate, low, high`` (kappas: no interval)."""
    rows = [
        (name, iv.estimate, iv.low, iv.high)
        for name, iv in [
            ("exact", retest.exact),
            ("within ±1", retest.within_1),
            ("Pearson r", retest.pearson),
            ("Spearman rho", retest.spearman),
        ]
    ]
    rows += [
        ("Cohen's kappa", retest.kappa, np.nan, np.nan),
        ("quadratic kappa", retest.quadratic_kappa, np.nan, np.nan),
    ]
    return pd.DataFrame(rows, columns=["statistic", "estimate", "low", "high"])


def golden_pair_summary(
    pairs: pd.DataFrame, *, rng: np.random.Generator, rounds: int, level: float
) -> dict[str, Any]:
    """Position consistency, P(longer wins) and agreement with the human preference.

    The human preference of a pair is :func:`~.scoring.human_preference` of the two
    answers' human weighted scores.
    """
    return {
        "n_pairs": len(pairs),
        "outcomes": pairs["outcome"].value_counts().to_dict(),
        "position": position_summary(pairs["first_verdict"], pairs["second_verdict"], level),
        "longer": longer_summary(pairs["verdict"], pairs["len_x"], pairs["len_y"], level),
        "human": verdict_agreement(
            pairs["verdict"], pairs["human"], rng=rng, rounds=rounds, level=level
        ),
    }


def pair_measures(summary: dict[str, Any]) -> pd.DataFrame:
    """The pairwise judge's shares with their Wilson intervals: ``measure, share, low, high``."""
    pos, lon, hum = summary["position"], summary["longer"], summary["human"]
    rows = [
        ("position consistency", pos, "consistency"),
        ("first position wins", pos, "first_win_rate"),
        ("longer answer wins", lon, "p_longer"),
        ("agrees with humans (with ties)", hum, "with_ties"),
        ("agrees with humans (no ties)", hum, "without_ties"),
    ]
    return pd.DataFrame(
        [(label, part[k], part[f"{k}_low"], part[f"{k}_high"]) for label, part, k in rows],
        columns=["measure", "share", "low", "high"],
    )


# --------------------------------------------------------------------------- few-shot anchors

ANCHOR_MEASURES = ("within_k", "bias", "exact")
"""What the anchor comparison measures per item: within ±k (0/1), judge − human, exact (0/1)."""


def anchor_comparison(
    plain: pd.DataFrame,
    anchored: pd.DataFrame,
    rubric: Rubric,
    *,
    tolerance: float,
    rng: np.random.Generator,
    rounds: int,
    level: float,
) -> pd.DataFrame:
    """Each judge without and with few-shot anchors, per rubric dimension, paired by item.

    Over the items a judge scored in both arms (first replicate): the share within ±k of the
    human score, the bias (mean judge − human; positive = inflation) and exact agreement in
    each arm, and the anchored − plain difference of each with a percentile bootstrap
    interval over items (one resample of the items serves all three).

    Args:
        plain: :func:`golden_long` of the judgments without anchors.
        anchored: :func:`golden_long` of the same judges with anchors.
        rubric: the rubric (its dimensions; ``weighted`` is left out).
        tolerance: k of the ±k agreement.
        rng: the source of randomness of the bootstraps.
        rounds: bootstrap rounds.
        level: confidence level.

    Returns:
        ``judge, dimension, n_paired, n_unpaired`` and, per measure m of
        :data:`ANCHOR_MEASURES`, ``m_plain, m_anchored, m_diff, m_diff_low, m_diff_high``.
    """
    keys = ["judge", "item", "dimension"]
    both = plain[plain["replicate"] == 0].merge(
        anchored[anchored["replicate"] == 0], on=keys, suffixes=("_p", "_a")
    )
    both = both[both["dimension"].isin(dimension_names(rubric))]
    rows = []
    for (judge, dim), part in both.groupby(["judge", "dimension"], sort=False):
        paired = part.dropna(subset=["diff_p", "diff_a"])
        measures = _anchor_measures(paired, tolerance)
        row = {"judge": judge, "dimension": dim, "n_paired": len(paired),
               "n_unpaired": len(part) - len(paired)}  # fmt: skip
        rows.append(row | _anchor_differences(measures, rng, rounds, level))
    return pd.DataFrame(rows)


def _anchor_measures(paired: pd.DataFrame, tolerance: float) -> np.ndarray:
    """items × (arm, measure): plain then anchored within ±k, judge − human, exact."""
    arms = []
    for suffix in ("_p", "_a"):
        diff = paired[f"diff{suffix}"].to_numpy(float)
        arms += [np.abs(diff) <= tolerance + ag.DISTANCE_SLACK, diff, diff == 0]
    return np.column_stack(arms).astype(float) if len(paired) else np.empty((0, 6))


def _anchor_differences(
    measures: np.ndarray, rng: np.random.Generator, rounds: int, level: float
) -> dict[str, float]:
    n, k = len(measures), len(ANCHOR_MEASURES)
    if n == 0:
        measures = np.full((1, 2 * k), math.nan)
    means = measures.mean(axis=0)
    diffs = measures[:, k:] - measures[:, :k]
    reps = diffs[rng.integers(0, n, size=(rounds, n))].mean(axis=1) if n else diffs
    row: dict[str, float] = {}
    for j, name in enumerate(ANCHOR_MEASURES):
        iv = percentile_interval(float(means[k + j] - means[j]), reps[:, j], level)
        row |= {f"{name}_plain": float(means[j]), f"{name}_anchored": float(means[k + j]),
                **interval_columns(iv, f"{name}_diff")}  # fmt: skip
    return row


def measured_judges(judgments: pd.DataFrame) -> list[Measured]:
    """Per rubric judge (in ``judgments`` order): golden items it scored (replicate 0), and
    why the others are unscored (a failed call, an unparsed output of some kind)."""
    first = judgments[judgments["replicate"] == 0]
    kinds = first["unscored_kind"] if "unscored_kind" in first else pd.Series(None, first.index)
    return [
        measured(str(judge), [judgment_state(s, e, k) for s, e, k in
                              zip(rows["status"], rows["error"], kinds[rows.index], strict=True)],
                 "judgment")
        for judge, rows in first.groupby("judge", sort=False)
    ]  # fmt: skip
