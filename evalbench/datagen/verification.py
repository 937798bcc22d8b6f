"""Human verification files: the review record, its JSON file and the CSV round trip (I/O).

A reviewer scores the four rubric dimensions (1–5) of a generated problem and decides
``approved``, ``rejected`` or ``needs_revision``. Reviews live in
``<data>_verifications.json`` next to the dataset (the layout of Hello-Agents ch. 12.4),
keyed by problem id; :func:`save_verifications` merges and writes atomically, so a form
(:mod:`evalbench.datagen.review`) and a spreadsheet round trip
(:func:`export_verification_csv` / :func:`import_verification_csv`) can share one file.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from evalbench.records import (
    JsonTooDeep,
    iter_csv,
    parse_json,
    read_utf8,
    to_json,
    write_atomic,
)

from .scoring import DIMENSIONS, VERIFICATION_STATUSES, parse_answer


class Verification(BaseModel):
    """One human review of one generated problem."""

    model_config = ConfigDict(extra="forbid")

    problem_id: str
    """The reviewed problem."""
    scores: dict[str, int]
    """Integer 1–5 per dimension in ``DIMENSIONS``."""
    total_score: float
    """Mean of the four scores."""
    status: Literal["approved", "rejected", "needs_revision"]
    """The reviewer's decision."""
    comments: str = ""
    """Free text."""
    verified_at: datetime
    """When (UTC; a timestamp without zone is read as UTC)."""

    @field_validator("scores")
    @classmethod
    def _check_scores(cls, scores: dict[str, int]) -> dict[str, int]:
        if set(scores) != set(DIMENSIONS):
            raise ValueError(f"scores need exactly {list(DIMENSIONS)}, got {sorted(scores)}")
        for dim, value in scores.items():
            if isinstance(value, bool) or not 1 <= value <= 5:
                raise ValueError(f"score {dim}={value!r} is not an integer 1-5")
        return {d: scores[d] for d in DIMENSIONS}

    @field_validator("verified_at")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        if value.tzinfo is None:
            return value.replace(tzinfo=timezone.utc)
        return value.astimezone(timezone.utc)

    @model_validator(mode="after")
    def _check_total(self) -> Verification:
        expected = sum(self.scores.values()) / len(self.scores)
        if abs(self.total_score - expected) > 1e-6:
            raise ValueError(f"total_score {self.total_score} is not the mean of scores {expected}")
        return self


def make_verification(
    problem_id: str,
    scores: Mapping[str, int],
    status: str,
    comments: str = "",
    *,
    verified_at: datetime | None = None,
) -> Verification:
    """A :class:`Verification` with ``total_score`` computed and the time stamped (UTC now).

    Args:
        problem_id: the reviewed problem.
        scores: an integer 1-5 per dimension of :data:`DIMENSIONS`.
        status: ``approved``, ``rejected`` or ``needs_revision``.
        comments: free text.
        verified_at: the time stamp (default: now, UTC).

    Raises:
        pydantic.ValidationError: a score, the status or the dimensions are invalid.
    """
    return Verification(
        problem_id=problem_id,
        scores=dict(scores),
        total_score=sum(scores.values()) / len(scores) if scores else 0.0,
        status=status,  # type: ignore[arg-type]
        comments=comments,
        verified_at=verified_at or datetime.now(timezone.utc),
    )


def verifications_path(data_path: Path | str) -> Path:
    """``problems.json`` -> ``problems_verifications.json`` (next to the data file)."""
    path = Path(data_path)
    return path.with_name(f"{path.stem}_verifications.json")


def load_verifications(path: Path | str) -> dict[str, Verification]:
    """The verifications saved at ``path`` keyed by problem id (``{}`` if there is no file).

    Raises:
        ValueError: the file is not a JSON object of verifications (naming file and key).
    """
    path = Path(path)
    if not path.exists():
        return {}
    try:
        data = parse_json(read_utf8(path, error=ValueError))
    except JsonTooDeep as exc:
        raise ValueError(f"{path}: not JSON ({exc.msg})") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not JSON ({exc.msg}, line {exc.lineno})") from exc
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object keyed by problem id")
    out = {}
    for key, entry in data.items():
        try:
            out[key] = Verification.model_validate({"problem_id": key, **entry})
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{path}: verification {key!r}: {_first_error(exc)}") from exc
    return out


def _first_error(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        first = errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        return f"{where}: {first.get('msg')}" if where else str(first.get("msg"))
    return str(exc)


def merge_verifications(
    old: Mapping[str, Verification], new: Mapping[str, Verification]
) -> dict[str, Verification]:
    """All verifications of both; for a problem in both, the newer review wins.

    A re-imported review with unchanged scores, status and comments keeps its original
    time stamp (so exporting and re-importing a CSV does not re-date everything).
    """
    merged = dict(old)
    for key, review in new.items():
        before = merged.get(key)
        if before is not None and _same_review(before, review):
            continue
        if before is None or review.verified_at >= before.verified_at:
            merged[key] = review
    return merged


def _same_review(a: Verification, b: Verification) -> bool:
    return (a.scores, a.status, a.comments) == (b.scores, b.status, b.comments)


def save_verifications(
    path: Path | str, verifications: Mapping[str, Verification] | Iterable[Verification]
) -> dict[str, Verification]:
    """Merge ``verifications`` into the file at ``path`` and write it atomically.

    Earlier reviews of other problems are kept (see :func:`merge_verifications`). The
    file is written to a temporary file in the same folder and renamed over the old one,
    so a crash never leaves a half-written file.

    Returns:
        Everything now in the file.
    """
    path = Path(path)
    items = verifications.values() if isinstance(verifications, Mapping) else verifications
    merged = merge_verifications(load_verifications(path), {v.problem_id: v for v in items})
    payload = {k: v.model_dump(mode="json") for k, v in sorted(merged.items())}
    write_atomic(path, to_json(payload, indent=2) + "\n")
    return merged


_CSV_INFO = ["problem_id", "topic", "answer", "problem", "solution"]
_CSV_REVIEW = [*DIMENSIONS, "status", "comments"]


def export_verification_csv(
    problems: pd.DataFrame,
    path: Path | str,
    existing: Mapping[str, Verification] | None = None,
) -> Path:
    """Write a CSV template for offline review: one row per problem.

    Columns ``problem_id, topic, answer, problem, solution`` (read only) then
    ``correctness, clarity, difficulty_match, completeness`` (1–5), ``status``
    (approved / rejected / needs_revision) and ``comments``, prefilled from ``existing``.
    Generated text starting with ``= + - @`` gets a leading ``'`` so a spreadsheet shows
    it instead of running it as a formula. UTF-8 with a BOM, as spreadsheets read it.
    """
    path = Path(path)
    existing = existing or {}
    rows = []
    for p in problems.to_dict("records"):
        pid = str(p["id"])
        review = existing.get(pid)
        filled = (
            {**review.scores, "status": review.status, "comments": review.comments}
            if review
            else {}
        )
        info = {"problem_id": pid, **{k: _csv_safe(p.get(k, "")) for k in _CSV_INFO[1:]}}
        rows.append({**info, **{k: filled.get(k, "") for k in _CSV_REVIEW}})
    text = io.StringIO(newline="")
    writer = csv.DictWriter(text, fieldnames=[*_CSV_INFO, *_CSV_REVIEW])
    writer.writeheader()
    writer.writerows(rows)
    # a BOM first: a spreadsheet then reads the file as UTF-8 (without it Excel takes its
    # own code page); written whole or not at all (a full disk keeps the last template)
    return write_atomic(path, "\ufeff" + text.getvalue())


def _csv_safe(value: Any) -> Any:
    # Model-written text opened in a spreadsheet must not become a formula (CSV injection).
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@"):
        return "'" + value
    return value


def import_verification_csv(
    path: Path | str, *, verified_at: datetime | None = None
) -> dict[str, Verification]:
    """Read a reviewed CSV (see :func:`export_verification_csv`), validating every row.

    A row whose four scores and status are all blank is not reviewed yet and is skipped;
    any other row must be complete: scores integers 1–5 (``4`` or ``4.0``), a known status.

    Args:
        path: the edited CSV (UTF-8, a spreadsheet's BOM is fine).
        verified_at: time stamp for the imported reviews (default: now, UTC).

    Raises:
        ValueError: ``<file>:<line>: <what is wrong>``, naming the line where the bad row
            starts, or a missing column.
    """
    path = Path(path)
    stamp = verified_at or datetime.now(timezone.utc)
    out: dict[str, Verification] = {}
    lines: dict[str, int] = {}
    header, rows = iter_csv(path, error=ValueError)
    missing = [c for c in ["problem_id", *_CSV_REVIEW] if c not in header]
    if missing:
        raise ValueError(f"{path}:1: missing column(s) {missing}")
    for line, row in rows:
        review = _csv_review(row, where=f"{path}:{line}", stamp=stamp)
        if review is None:
            continue
        if review.problem_id in lines:
            raise ValueError(
                f"{path}:{line}: problem {review.problem_id!r} already reviewed on line "
                f"{lines[review.problem_id]}"
            )
        lines[review.problem_id] = line
        out[review.problem_id] = review
    return out


def _csv_review(row: dict[str, Any], *, where: str, stamp: datetime) -> Verification | None:
    cells = {k: (row.get(k) or "").strip() for k in ["problem_id", *_CSV_REVIEW]}
    if not any(cells[k] for k in [*DIMENSIONS, "status"]):
        return None
    if not cells["problem_id"]:
        raise ValueError(f"{where}: problem_id is empty")
    scores = {}
    for dim in DIMENSIONS:
        score = _csv_score(cells[dim])
        if score is None:
            raise ValueError(f"{where}: {dim} must be an integer 1-5, got {cells[dim]!r}")
        scores[dim] = score
    if cells["status"] not in VERIFICATION_STATUSES:
        raise ValueError(
            f"{where}: status must be one of {', '.join(VERIFICATION_STATUSES)}, "
            f"got {cells['status']!r}"
        )
    return make_verification(
        cells["problem_id"], scores, cells["status"], cells["comments"], verified_at=stamp
    )


def _csv_score(text: str) -> int | None:
    value = parse_answer(text) if re.fullmatch(r"\d+(?:\.0*)?", text) else None
    return value if value is not None and 1 <= value <= 5 else None


def verifications_frame(verifications: Mapping[str, Verification]) -> pd.DataFrame:
    """One row per review: ``problem_id``, the four scores, ``total_score, status, comments,
    verified_at``."""
    rows = [
        {
            "problem_id": v.problem_id,
            **v.scores,
            "total_score": v.total_score,
            "status": v.status,
            "comments": v.comments,
            "verified_at": v.verified_at,
        }
        for v in verifications.values()
    ]
    columns = ["problem_id", *DIMENSIONS, "total_score", "status", "comments", "verified_at"]
    return pd.DataFrame(rows, columns=columns)
