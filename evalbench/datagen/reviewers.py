"""Several reviewers of generated problems: their label files, consensus and agreement.

Reviews written by the browser app (``evalbench label serve`` on a ``verification`` task)
or by the JupyterLab form given a labels folder (:func:`~.review.verification_form`) are
label records (:mod:`evalbench.labels.storage`): one ``<reviewer>.jsonl`` per reviewer. This
module reads them (each reviewer's current review of each problem), forms the per-problem
**consensus** the rest of the study uses, and measures how much the reviewers agree.

Consensus (the policy the report states): the status more than half of a problem's
reviewers chose — a problem without one is left out of the human pass rate and counted —
and per dimension the lower median of their scores (with an odd number of reviewers the
median; always a score one of them gave, so it stays on the 1–5 scale). A single reviewer's
reviews are used as they are.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from evalbench.agreement import majority_vote
from evalbench.labels import annotator_agreement, current_labels, read_labels, wide

from .scoring import DIMENSIONS
from .verification import Verification, make_verification

CONSENSUS_POLICY = (
    "per problem, the status more than half of its reviewers chose (problems without one are "
    "left out) and, per dimension, the lower median of their scores"
)
"""How several reviewers become one review per problem (stated in the report)."""


def is_label_source(path: Path | str) -> bool:
    """Whether ``path`` holds label records (a folder of them, existing or not yet, or a
    ``.jsonl``), not the single-reviewer ``<data>_verifications.json``."""
    path = Path(path)
    return path.is_dir() or path.suffix.lower() in (".jsonl", "")


def load_reviews(path: Path | str) -> pd.DataFrame:
    """Every reviewer's current review of every problem, from label files.

    Returns:
        ``problem_id, reviewer``, the four scores, ``total_score, status, comments,
        verified_at, simulated`` (one row per problem and reviewer).

    Raises:
        evalbench.labels.LabelFileError: a bad line (file:line and field).
        ValueError: a label that is not a verification (wrong task kind).
    """
    labels = current_labels(read_labels(path))
    rows = []
    for r in labels:
        if r.kind != "verification" or r.status is None or r.scores is None:
            raise ValueError(f"{path}: item {r.item!r} by {r.annotator!r} is not a verification")
        scores = {d: int(r.scores[d]) for d in DIMENSIONS}
        rows.append({
            "problem_id": r.item, "reviewer": r.annotator, **scores,
            "total_score": sum(scores.values()) / len(scores), "status": r.status,
            "comments": r.comment, "verified_at": r.time, "simulated": r.simulated,
        })  # fmt: skip
    columns = ["problem_id", "reviewer", *DIMENSIONS, "total_score", "status", "comments",
               "verified_at", "simulated"]  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


class Consensus(NamedTuple):
    """One review per problem from several reviewers."""

    verifications: dict[str, Verification]
    """The consensus review of each problem that has one."""
    no_majority: list[str]
    """Problems whose reviewers had no majority status (left out)."""


def consensus(reviews: pd.DataFrame) -> Consensus:
    """The consensus review of every problem (see :data:`CONSENSUS_POLICY`)."""
    out: dict[str, Verification] = {}
    missing = []
    for pid, group in reviews.groupby("problem_id", sort=True):
        status = majority_vote([list(group["status"])], strict=True)[0]
        if status is None:
            missing.append(str(pid))
            continue
        scores = {d: int(statistics.median_low(group[d].tolist())) for d in DIMENSIONS}
        comments = " | ".join(f"{r}: {c}" for r, c in zip(group["reviewer"], group["comments"],
                                                              strict=True) if c)  # fmt: skip
        out[str(pid)] = make_verification(
            str(pid), scores, status, comments, verified_at=max(group["verified_at"])
        )
    return Consensus(out, missing)


def single_reviewer(reviews: pd.DataFrame) -> dict[str, Verification]:
    """One reviewer's label-file reviews as :class:`Verification` objects."""
    return {
        str(r["problem_id"]): make_verification(
            str(r["problem_id"]), {d: int(r[d]) for d in DIMENSIONS}, r["status"],
            r["comments"], verified_at=r["verified_at"],
        )
        for r in reviews.to_dict("records")
    }  # fmt: skip


def reviewer_agreement(
    reviews: pd.DataFrame, *, rng: np.random.Generator, rounds: int, level: float
) -> pd.DataFrame:
    """How much the reviewers agree, on the status and on every score.

    Returns:
        One row per measure (``status``, the four dimensions, ``total``): ``n_items,
        n_annotators, alpha, alpha_low, alpha_high, alpha_level`` (nominal for the status,
        interval for scores; bootstrap over problems), ``exact, within_k`` (±1), ``kappa``
        (Cohen's, means over reviewer pairs weighted by shared problems).
    """
    long = reviews.rename(columns={"problem_id": "item", "reviewer": "annotator"})
    rows = []
    for measure in ["status", *DIMENSIONS, "total_score"]:
        numeric = measure != "status"
        scale: Any = range(1, 6) if measure in DIMENSIONS else None
        stats = annotator_agreement(
            wide(long, measure), numeric=numeric, scale=scale, tolerance=1.0, rng=rng,
            rounds=rounds, level=level,
        )  # fmt: skip
        stats.pop("pairs")
        rows.append({"measure": measure.replace("total_score", "total"), **stats})
    return pd.DataFrame(rows)


def reviewer_counts(reviews: pd.DataFrame) -> Mapping[str, Any]:
    """Reviewers, reviewed problems, reviews, problems reviewed by two or more."""
    per = reviews.groupby("problem_id")["reviewer"].nunique()
    return {
        "reviewers": sorted(reviews["reviewer"].unique()),
        "problems": int(per.size),
        "reviews": len(reviews),
        "shared": int((per >= 2).sum()),
    }


class ReviewerData(NamedTuple):
    """What a study reads from label files."""

    verifications: dict[str, Verification]
    """One review per problem (the consensus with several reviewers)."""
    reviews: pd.DataFrame
    """Every reviewer's review of this run's problems (:func:`load_reviews`)."""
    agreement: pd.DataFrame | None
    """:func:`reviewer_agreement` (``None`` with one reviewer)."""
    no_majority: list[str]
    """Problems left out: their reviewers had no majority status."""
    unknown_ids: list[str]
    """Reviewed ids that are not problems of this run (ignored)."""


def read_reviewers(
    path: Path | str, problem_ids: set[str], *, rng: np.random.Generator, rounds: int,
    level: float, every: pd.DataFrame | None = None,
) -> ReviewerData:  # fmt: skip
    """Label-file reviews of a run's problems, their consensus and the reviewers' agreement
    (``every``: :func:`load_reviews` of ``path``, when already read)."""
    every = load_reviews(path) if every is None else every
    unknown = sorted(set(every["problem_id"]) - problem_ids)
    reviews = every[every["problem_id"].isin(problem_ids)].reset_index(drop=True)
    if reviews["reviewer"].nunique() < 2:
        return ReviewerData(single_reviewer(reviews), reviews, None, [], unknown)
    agreed = consensus(reviews)
    table = reviewer_agreement(reviews, rng=rng, rounds=rounds, level=level)
    return ReviewerData(agreed.verifications, reviews, table, agreed.no_majority, unknown)
