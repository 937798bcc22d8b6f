"""Several annotators on a golden set: their agreement, the reference, judges against it.

Pure functions over the annotations (:func:`~.data.load_annotations`: one row per item and
annotator) and the judgments. The statistics among annotators are
:mod:`evalbench.labels.agreement`'s (Krippendorff's alpha, pairwise exact / ±k / kappas);
the judges are compared with the human reference by the study's policy with the same
:func:`~.metrics.golden_agreement` the single-annotator path uses, and the primary judge
with each annotator's own agreement with the others (leave one annotator out).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from evalbench.judge import Rubric
from evalbench.labels import (
    Policy,
    annotator_agreement,
    leave_one_out,
    pairwise_agreement_table,
    wide,
)

from .data import dimension_names, golden_from_annotations
from .metrics import golden_agreement, golden_long
from .scoring import scale_labels, score_column


def annotator_table(
    annotations: pd.DataFrame,
    rubric: Rubric,
    *,
    tolerance: float,
    rng: np.random.Generator,
    rounds: int,
    level: float,
) -> pd.DataFrame:
    """Agreement among the annotators per dimension.

    Returns:
        One row per dimension: ``dimension, n_items, n_annotators, alpha, alpha_low,
        alpha_high`` (Krippendorff, interval level, bootstrap over items),
        ``alpha_ordinal, exact, within_k, kappa, qwk`` (means over annotator pairs,
        weighted by the items each pair shares).
    """
    rows = []
    for dim in dimension_names(rubric):
        stats = annotator_agreement(
            wide(annotations, f"human_{dim}"), numeric=True, scale=scale_labels(rubric, dim),
            tolerance=tolerance, rng=rng, rounds=rounds, level=level,
        )  # fmt: skip
        stats.pop("pairs")
        rows.append({"dimension": dim, **stats})
    return pd.DataFrame(rows)


def annotator_pairs(
    annotations: pd.DataFrame, rubric: Rubric, *, dimension: str, tolerance: float
) -> pd.DataFrame:
    """Every pair of annotators on ``dimension``: ``n, exact, within_k, kappa, qwk``."""
    table = wide(annotations, f"human_{dimension}")
    return pairwise_agreement_table(
        table, scale=scale_labels(rubric, dimension), tolerance=tolerance
    )


def every_pair(annotations: pd.DataFrame, rubric: Rubric, *, tolerance: float) -> pd.DataFrame:
    """:func:`annotator_pairs` on every dimension: ``dimension`` first, then its columns."""
    tables = [
        annotator_pairs(annotations, rubric, dimension=d, tolerance=tolerance).assign(dimension=d)
        for d in dimension_names(rubric)
    ]
    table = pd.concat(tables, ignore_index=True)
    return table[["dimension", *table.columns[:-1]]]


def reference_golden(
    golden: pd.DataFrame, annotations: pd.DataFrame, rubric: Rubric, policy: Policy
) -> pd.DataFrame:
    """The golden items with their human scores replaced by the annotators' reference.

    Items without a reference (``majority`` without one) or without annotations are left
    out (listed in ``attrs["no_reference"]`` / ``attrs["unannotated"]``).
    """
    ref = golden_from_annotations(annotations, rubric, policy).set_index("item")
    keep = [i for i in golden["item"] if i in ref.index]
    cols = [f"human_{d}" for d in [*dimension_names(rubric), "weighted"]]
    out = golden.set_index("item").loc[keep]
    out = out.drop(columns=[*cols, "n_annotators"], errors="ignore")
    out = out.join(ref[[*cols, "n_annotators"]]).reset_index()
    out.attrs["no_reference"] = list(ref.attrs.get("no_reference", []))
    out.attrs["unannotated"] = [
        i for i in golden["item"] if i not in ref.index and i not in out.attrs["no_reference"]
    ]
    return out


def judges_vs_reference(
    judgments: pd.DataFrame,
    reference: pd.DataFrame,
    rubric: Rubric,
    *,
    tolerance: float,
    rng: np.random.Generator,
    rounds: int,
    level: float,
) -> pd.DataFrame:
    """Every judge against the human reference (first replicate), as
    :func:`~.metrics.golden_agreement` on the items that have one."""
    part = judgments[judgments["item"].isin(set(reference["item"]))]
    long = golden_long(part, reference, rubric)
    return golden_agreement(long, rubric, tolerance=tolerance, rng=rng, rounds=rounds, level=level)


def judge_among_annotators(
    annotations: pd.DataFrame,
    judgments: pd.DataFrame,
    *,
    judge: str,
    dimension: str,
    policy: Policy,
    tolerance: float,
) -> pd.DataFrame:
    """Leave one annotator out: each annotator and ``judge`` against the others' reference.

    Returns:
        :func:`evalbench.labels.leave_one_out` rows (``annotator, n, human_within_k,
        human_mae, judge_within_k, judge_mae``) and a last row ``mean`` over annotators.
    """
    first = judgments[(judgments["judge"] == judge) & (judgments["replicate"] == 0)]
    scores = first.set_index("item")[score_column(dimension)].astype(float)
    table = wide(annotations, f"human_{dimension}")
    rows = leave_one_out(table, policy, tolerance=tolerance, judge=scores)
    mean = {"annotator": "mean", "n": int(rows["n"].sum())}
    mean.update({c: float(rows[c].mean()) for c in rows.columns if c not in ("annotator", "n")})
    return pd.concat([rows, pd.DataFrame([mean])], ignore_index=True)


def reference_counts(annotations: pd.DataFrame) -> dict[str, Any]:
    """Annotators, items, labels and how many annotators scored each item."""
    per_item = annotations.groupby("item")["annotator"].nunique()
    return {
        "annotators": sorted(annotations["annotator"].unique()),
        "items": int(per_item.size),
        "labels": len(annotations),
        "per_item": per_item.value_counts().sort_index().to_dict(),
        "simulated": bool(annotations.get("simulated", pd.Series([False])).all()),
    }
