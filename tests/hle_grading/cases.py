"""Hand-made expert items and grade records shared by the expert-grading tests
(``from hle_grading.cases``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalbench.hle_grading.data import DIMENSIONS
from evalbench.hle_grading.metrics import summarize
from evalbench.hle_grading.records import GradeRecord, HleGradingParams, HleGradingResult


def item(**extra: Any) -> dict[str, Any]:
    """One expert-set line."""
    return {"id": "e1", "category": "Physics", "difficulty": "hard", "question": "Why?",
            "reference_answer": "Because.", "criteria": ["says because"], "answer": "Since.",
            **extra}  # fmt: skip


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    """Write ``rows`` as one JSON object per line."""
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def grade(source: str, qid: str, category: str, difficulty: str, score: float | None,
          human: float | None = None, confidence: float | None = 80.0,
          status: str | None = None) -> dict[str, Any]:  # fmt: skip
    """One grade record with every dimension at ``score`` (``None``: unscored) and every human
    dimension at ``human``."""
    status = status or ("scored" if score is not None else "unscored")
    scores = {f"score_{d}": score for d in (*DIMENSIONS, "overall")} if status == "scored" else {}
    humans = {f"human_{d}": human for d in (*DIMENSIONS, "overall")} if human is not None else {}
    record = GradeRecord(id=qid, source=source, category=category, difficulty=difficulty,
                         status=status, judge_confidence=confidence if status == "scored" else None,
                         **scores, **humans)  # fmt: skip
    return record.model_dump()


def frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Records as the DataFrame the metrics take (every declared column)."""
    return pd.DataFrame(rows, columns=list(GradeRecord.model_fields))


def result_of(
    rows: list[dict[str, Any]], systems: tuple[str, ...] | list[str] = ()
) -> HleGradingResult:
    """A result built from hand-made grade records (tolerance 10, 50 bootstrap rounds)."""
    records = frame(rows)
    params = HleGradingParams(title="t", judge={"name": "judge"}, bootstrap_rounds=50,
                              systems=[{"name": s} for s in systems])  # fmt: skip
    summary = summarize(records, tolerance=10, rng=np.random.default_rng(0), rounds=50)
    sources = list(dict.fromkeys(records["source"]))
    return HleGradingResult(params, [], records, summary, sources, pd.DataFrame(),
                            frozenset(systems))  # fmt: skip
