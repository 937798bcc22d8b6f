"""Expert-grading statistics: six-dimension scores by category × difficulty, against humans.

Pure functions over the grade records (:class:`~.records.GradeRecord` rows: one graded
answer per source and item). A source is ``dataset`` (the set's own answers, which may carry
human baseline scores) or a system. Unscored judgments (unparseable output, failed call) and
answers that never came are counted and left out of every mean. Intervals: seeded percentile
bootstrap over items (fewer than two items: no interval); agreement with the human baseline
uses :mod:`evalbench.agreement` (±k agreement, mean signed error = bias, MAE, Spearman).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from evalbench import agreement as ag
from evalbench.measured import Measured, failed_call, judgment_state, measured
from evalbench.stats import DEFAULT_LEVEL, DEFAULT_ROUNDS, bootstrap_mean

from .data import DIFFICULTIES, DIMENSIONS, ExpertItem

STATES = ("scored", "unscored", "no_response")
SCORED_DIMENSIONS = (*DIMENSIONS, "overall")
"""The six rubric dimensions and the computed overall (their mean)."""


def item_counts(items: Sequence[ExpertItem]) -> pd.DataFrame:
    """Questions per category and difficulty: ``category``, one column per difficulty,
    ``total, with_answer, with_human`` (a ``total`` row last)."""
    frame = pd.DataFrame(
        {"category": it.category, "difficulty": it.difficulty, "with_answer": it.answer is not None,
         "with_human": it.answer is not None and it.human_scores is not None} for it in items
    )  # fmt: skip
    table = pd.crosstab(frame["category"], frame["difficulty"])
    table = table.reindex(columns=[d for d in DIFFICULTIES if d in table.columns])
    table["total"] = table.sum(axis=1)
    table[["with_answer", "with_human"]] = frame.groupby("category")[
        ["with_answer", "with_human"]
    ].sum()
    table.loc["total"] = table.sum()
    return table.reset_index().rename_axis(columns=None)


def scored_sources(sources: Sequence[str], long: pd.DataFrame) -> list[str]:
    """The ``sources`` (in order) with at least one scored answer in :func:`long_scores`."""
    scored = set(long["source"]) if len(long) else set()
    return [s for s in sources if s in scored]


def state_table(records: pd.DataFrame) -> pd.DataFrame:
    """Graded answers per source: ``source, answers, scored, unscored, no_response,
    with_human`` (scored answers that have a human baseline)."""
    rows = []
    for source, part in records.groupby("source", sort=False):
        states = part["status"].value_counts()
        rows.append(
            {
                "source": source,
                "answers": len(part),
                **{s: int(states.get(s, 0)) for s in STATES},
                "with_human": int(
                    (part["status"].eq("scored") & part["human_overall"].notna()).sum()
                ),
            }
        )
    return pd.DataFrame(rows)


def cell_counts(records: pd.DataFrame) -> pd.DataFrame:
    """Graded answers per source, category and difficulty, every cell that has one:
    ``source, category, difficulty, answers, scored, unscored, no_response`` (sources in
    order of appearance, difficulties easy → expert)."""
    keys = ["source", "category", "difficulty"]
    states = pd.crosstab([records[k] for k in keys], records["status"])
    states = states.reindex(columns=list(STATES), fill_value=0)
    states.insert(0, "answers", states.sum(axis=1))
    rank = {"source": {s: i for i, s in enumerate(dict.fromkeys(records["source"]))},
            "difficulty": {d: i for i, d in enumerate(DIFFICULTIES)}}  # fmt: skip
    return (
        states.rename_axis(columns=None)
        .reset_index()
        .sort_values(keys, key=lambda c: c.map(rank[c.name]) if c.name in rank else c)
        .reset_index(drop=True)
    )


def long_scores(records: pd.DataFrame) -> pd.DataFrame:
    """One row per scored answer and dimension (six + ``overall``): ``source, id, category,
    difficulty, dimension, score, human`` (NaN without a baseline), ``diff`` (score − human),
    ``judge_confidence``."""
    scored = records[records["status"] == "scored"]
    parts = []
    for dim in SCORED_DIMENSIONS:
        part = scored[["source", "id", "category", "difficulty", "judge_confidence"]].copy()
        part["dimension"] = dim
        part["score"] = scored[f"score_{dim}"].astype(float)
        part["human"] = scored[f"human_{dim}"].astype(float)
        parts.append(part)
    long = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    long["diff"] = long["score"] - long["human"]
    return long


def _interval(
    values: np.ndarray, rng: np.random.Generator, rounds: int, level: float
) -> tuple[float, float, float]:
    if values.size < 2:
        return (float(values.mean()) if values.size else math.nan), math.nan, math.nan
    est = bootstrap_mean(values, rng=rng, rounds=rounds, level=level)
    return est.estimate, est.low, est.high


def cell_means(
    long: pd.DataFrame,
    *,
    rng: np.random.Generator,
    rounds: int = DEFAULT_ROUNDS,
    level: float = DEFAULT_LEVEL,
) -> pd.DataFrame:
    """Mean score per source, category, difficulty and dimension with a bootstrap interval.

    Columns: ``source, category, difficulty, dimension, n, mean, ci_low, ci_high`` (no
    interval for a cell of one answer). Difficulties in the order easy → expert.
    """
    rows = []
    keys = ["source", "category", "difficulty", "dimension"]
    for key, part in long.groupby(keys, sort=False):
        values = part["score"].to_numpy(float)
        mean, low, high = _interval(values, rng, rounds, level)
        rows.append(
            dict(zip(keys, key, strict=True))
            | {"n": values.size, "mean": mean, "ci_low": low, "ci_high": high}
        )
    frame = pd.DataFrame(rows, columns=[*keys, "n", "mean", "ci_low", "ci_high"])
    order = {d: i for i, d in enumerate(DIFFICULTIES)}
    return frame.sort_values(
        ["source", "category", "difficulty"], key=_ordering(order), kind="stable"
    ).reset_index(drop=True)


def _ordering(order: dict[str, int]) -> Any:
    def key(column: pd.Series) -> pd.Series:
        return column.map(order) if column.name == "difficulty" else column

    return key


def heatmap_matrix(cells: pd.DataFrame, source: str, dimension: str = "overall") -> pd.DataFrame:
    """Category × difficulty matrix of mean scores (NaN where a cell has no scored answer)."""
    part = cells[(cells["source"] == source) & (cells["dimension"] == dimension)]
    matrix = part.pivot_table(index="category", columns="difficulty", values="mean", sort=True)
    matrix = matrix.reindex(columns=[d for d in DIFFICULTIES])
    matrix.columns.name, matrix.index.name = "difficulty", "category"
    return matrix


def dimension_means(
    long: pd.DataFrame,
    *,
    rng: np.random.Generator,
    rounds: int = DEFAULT_ROUNDS,
    level: float = DEFAULT_LEVEL,
    by: str | None = None,
) -> pd.DataFrame:
    """Mean score per source and dimension (optionally also per ``by``: ``category`` or
    ``difficulty``) with bootstrap intervals: ``source, [by,] dimension, n, mean, ci_low,
    ci_high``."""
    keys = ["source", *([by] if by else []), "dimension"]
    rows = []
    for key, part in long.groupby(keys, sort=False):
        mean, low, high = _interval(part["score"].to_numpy(float), rng, rounds, level)
        rows.append(
            dict(zip(keys, key, strict=True))
            | {"n": len(part), "mean": mean, "ci_low": low, "ci_high": high}
        )
    return pd.DataFrame(rows, columns=[*keys, "n", "mean", "ci_low", "ci_high"])


def overall_distribution(long: pd.DataFrame) -> pd.DataFrame:
    """Distribution of the overall score per source (and of the human overall): ``who, n,
    mean, std, min, 25%, 50%, 75%, max``."""
    overall = long[long["dimension"] == "overall"]
    series = {f"judge: {s}": part["score"] for s, part in overall.groupby("source", sort=False)}
    human = overall.dropna(subset=["human"])
    if len(human):
        series["human baseline"] = human.drop_duplicates("id")["human"]
    rows = [
        {"who": who, **values.describe().drop("count").to_dict(), "n": int(values.size)}
        for who, values in series.items()
    ]
    columns = ["who", "n", "mean", "std", "min", "25%", "50%", "75%", "max"]
    return pd.DataFrame(rows).reindex(columns=columns)


def agreement_table(
    long: pd.DataFrame,
    *,
    tolerance: float,
    rng: np.random.Generator,
    rounds: int = DEFAULT_ROUNDS,
    level: float = DEFAULT_LEVEL,
) -> pd.DataFrame:
    """The judge against the human baseline per dimension (answers with both scores).

    Columns: ``dimension, n``, ``within_k`` (share with |judge − human| <= tolerance) and
    ``bias`` (mean judge − human; positive = the judge is more lenient), ``mae``, and
    ``spearman``, each with a bootstrap ``_low``/``_high`` (:mod:`evalbench.agreement`).
    """
    both = long.dropna(subset=["score", "human"])
    rows = []
    for dim in SCORED_DIMENSIONS:
        part = both[both["dimension"] == dim]
        j, h = part["score"].to_numpy(float), part["human"].to_numpy(float)
        stats = {
            "within_k": ag.within_k_agreement(j, h, tolerance, rng=rng, rounds=rounds, level=level),
            "bias": ag.mean_signed_error(j, h, rng=rng, rounds=rounds, level=level),
            "mae": ag.mean_absolute_error(j, h, rng=rng, rounds=rounds, level=level),
            "spearman": ag.spearman(j, h, rng=rng, rounds=rounds, level=level),
        }
        row: dict[str, Any] = {"dimension": dim, "n": len(part)}
        for name, interval in stats.items():
            row |= {
                name: interval.estimate,
                f"{name}_low": interval.low,
                f"{name}_high": interval.high,
            }
        rows.append(row)
    return pd.DataFrame(rows)


CONFIDENCE_EDGES = (0, 60, 70, 80, 90, 101)


def confidence_gap(long: pd.DataFrame) -> tuple[pd.DataFrame, float]:
    """The judge's confidence against its gap to the human overall score.

    Returns:
        A table per confidence band (``[0, 60)``, ``[60, 70)`` … ``[90, 100]``): ``band, n,
        mean_abs_gap, mean_gap`` (judge − human overall), and Spearman's rho between the
        confidence and |gap| over all answers with both (negative: a confident judge is
        closer to the humans; NaN with fewer than two).
    """
    part = long[(long["dimension"] == "overall")].dropna(subset=["human", "judge_confidence"])
    gap = part["diff"].to_numpy(float)
    conf = part["judge_confidence"].to_numpy(float)
    rows = []
    for low, high in itertools.pairwise(CONFIDENCE_EDGES):
        inside = (conf >= low) & (conf < high)
        label = f"{low}-{min(high, 100)}"
        rows.append(
            {
                "band": label,
                "n": int(inside.sum()),
                "mean_abs_gap": float(np.abs(gap[inside]).mean()) if inside.any() else math.nan,
                "mean_gap": float(gap[inside].mean()) if inside.any() else math.nan,
            }
        )
    rho = ag.spearman(conf, np.abs(gap)).estimate if conf.size >= 2 else math.nan
    return pd.DataFrame(rows), float(rho)


class GradingSummary(NamedTuple):
    """The expert-grading tables (:func:`summarize`)."""

    states: pd.DataFrame
    cell_counts: pd.DataFrame
    long: pd.DataFrame
    cells: pd.DataFrame
    dimensions: pd.DataFrame
    distribution: pd.DataFrame
    agreement: pd.DataFrame
    confidence_bands: pd.DataFrame
    confidence_rho: float


def summarize(
    records: pd.DataFrame,
    *,
    tolerance: float,
    rng: np.random.Generator,
    rounds: int = DEFAULT_ROUNDS,
    level: float = DEFAULT_LEVEL,
) -> GradingSummary:
    """Every expert-grading table (see each function)."""
    long = long_scores(records)
    bands, rho = confidence_gap(long)
    return GradingSummary(
        states=state_table(records),
        cell_counts=cell_counts(records),
        long=long,
        cells=cell_means(long, rng=rng, rounds=rounds, level=level),
        dimensions=dimension_means(long, rng=rng, rounds=rounds, level=level),
        distribution=overall_distribution(long),
        agreement=agreement_table(long, tolerance=tolerance, rng=rng, rounds=rounds, level=level),
        confidence_bands=bands,
        confidence_rho=rho,
    )


def grade_state(row: Any) -> str | None:
    """Why one answer has no grade (``None``: graded): the source's failed call or missing
    answer, the judge's failed call, or its unparsed output."""
    if row.status == "no_response":
        return failed_call(row.error) if isinstance(row.error, str) and row.error else "no answer"
    judge_error = row.judge_error if isinstance(row.judge_error, str) else None
    if judge_error:
        return failed_call(judge_error, "judge")
    return judgment_state(row.status, None, row.unscored_kind)


def measured_sources(records: pd.DataFrame) -> list[Measured]:
    """Per source of answers (in record order): answers the judge graded, and why the
    others have no grade (:func:`grade_state`)."""
    return [
        measured(str(source), [grade_state(r) for r in rows.itertuples()], "answer")
        for source, rows in records.groupby("source", sort=False)
    ]
