"""What the judges are asked: one rubric task per golden item, one pair task per answer pair.

The rubric prompts, the parsers and the pairwise protocol are :mod:`evalbench.judge`'s;
this module turns golden items into its tasks, with job keys that change when an item's
text or human scores change, and defines the human side of a pair (the higher human
weighted score, a tie within :data:`PAIR_TIE_MARGIN`).
"""

from __future__ import annotations

import hashlib
import json
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from evalbench.judge import JudgeCase, PairTask, Rubric, RubricTask

from .data import dimension_names

PAIR_TIE_MARGIN = 0.5
"""Two answers whose human weighted scores differ by at most this are a human tie."""
PAIR_QUALITY_PER_POINT = 0.5
"""Sim pairwise judge only: latent quality (log-odds) per point of human weighted score."""


def _digest(*parts: Any) -> str:
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:10]


def golden_tasks(golden: pd.DataFrame, rubric: Rubric, replicate: int = 0) -> list[RubricTask]:
    """One rubric task per golden item; the sim judge's truth is the human score per dimension.

    The task's ``case_id`` is ``<item>~<digest>`` with a digest of the item's text and scores:
    the run's record store is keyed by job key, so an item edited in place gets a new key and
    is asked again instead of reusing a judgment of its old text (see :func:`item_of`).
    """
    tasks = []
    for row in golden.itertuples(index=False):
        case = JudgeCase(question=row.question, answer=row.answer, reference=row.reference)
        truth = {d: float(getattr(row, f"human_{d}")) for d in dimension_names(rubric)}
        case_id = f"{row.item}~{_digest(case.model_dump(), truth)}"
        tasks.append(RubricTask(case_id, case, truth, replicate))
    return tasks


def item_of(case_id: str) -> str:
    """The golden item id of a :func:`golden_tasks` case id (drops the ``~digest``)."""
    return case_id.rsplit("~", 1)[0]


def golden_pair_tasks(golden: pd.DataFrame) -> list[PairTask]:
    """Every pair of golden answers to the same question, for a pairwise position check.

    The sim pairwise judge's latent qualities are the human weighted scores times
    :data:`PAIR_QUALITY_PER_POINT`.
    """
    tasks = []
    for number, (question, group) in enumerate(golden.groupby("question", sort=False)):
        for (_, x), (_, y) in combinations(group.iterrows(), 2):
            tasks.append(
                PairTask(
                    pair_id=f"q{number}~{_digest(question, x.to_dict(), y.to_dict())}",
                    question=str(question),
                    model_x=str(x["item"]),
                    answer_x=str(x["answer"]),
                    model_y=str(y["item"]),
                    answer_y=str(y["answer"]),
                    reference=x["reference"] or y["reference"],  # either may have none
                    quality_x=PAIR_QUALITY_PER_POINT * float(x["human_weighted"]),
                    quality_y=PAIR_QUALITY_PER_POINT * float(y["human_weighted"]),
                )
            )
    return tasks


def human_preference(delta: float, margin: float = PAIR_TIE_MARGIN) -> str:
    """Human verdict from ``Δ = weighted_x − weighted_y``: a, b, or tie when ``|Δ| <= margin``."""
    if delta > margin:
        return "a"
    return "b" if delta < -margin else "tie"


def typical_length(golden: pd.DataFrame) -> float:
    """The median answer length (characters): the sim judges' length-bias reference."""
    return float(np.median([max(1, len(a)) for a in golden["answer"]]))


def scale_labels(rubric: Rubric, dimension: str) -> list[int] | None:
    """The integer scale of ``dimension`` (e.g. 1..10); None for ``weighted`` or a float scale."""
    if dimension == "weighted":
        return None
    dim = rubric.dimension(dimension)
    if not (float(dim.scale_min).is_integer() and float(dim.scale_max).is_integer()):
        return None
    return list(range(int(dim.scale_min), int(dim.scale_max) + 1))


def confusion_dimension(rubric: Rubric, headline: str) -> str:
    """The dimension shown as a score confusion and retested: ``headline`` if it has an
    integer scale, else the rubric's first dimension that has one."""
    if scale_labels(rubric, headline):
        return headline
    return next(d for d in dimension_names(rubric) if scale_labels(rubric, d))


def score_column(dimension: str) -> str:
    """The judgment column of ``dimension``: ``score_<dim>`` or ``weighted_score``."""
    return "weighted_score" if dimension == "weighted" else f"score_{dimension}"
