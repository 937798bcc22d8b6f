"""Hand-made rows, judge results, reviews and a tiny reference set shared by the datagen tests
(``from datagen.cases import ...``)."""

from __future__ import annotations

import csv
import json
from datetime import datetime
from pathlib import Path

import numpy as np
import pandas as pd

from evalbench.datagen import scoring, verification

REF_ROW = {
    "id": "ref:1",
    "problem": "Find the number of ordered pairs $(x,y)$ of positive integers with $x+y=10$.",
    "answer": 9,
}


def gen_output(**fields: object) -> str:
    """A valid generator output as JSON, with ``fields`` changed."""
    return json.dumps(
        {"problem": "x" * 40, "answer": 7, "solution": "s", "topic": "algebra", **fields}
    )


def judge_frame() -> pd.DataFrame:
    """Rubric results of four problems: three scored (4, 3, 5), one unscored."""
    return pd.DataFrame(
        {
            "problem_id": ["p1", "p2", "p3", "p4"],
            "status": ["scored", "scored", "scored", "unscored"],
            "weighted": [4.0, 3.0, 5.0, np.nan],
            "correctness": [4, 2, 5, np.nan],
            "clarity": [4, 4, 5, np.nan],
            "difficulty_match": [4, 3, 5, np.nan],
            "completeness": [4, 3, 5, np.nan],
        }
    )


def review_of(
    pid: str, scores: tuple[int, int, int, int], status: str, when: str
) -> verification.Verification:
    """A review of ``pid`` with the four ``scores`` (in ``DIMENSIONS`` order), stamped ``when``."""
    return verification.make_verification(
        pid,
        dict(zip(scoring.DIMENSIONS, scores, strict=True)),
        status,
        "ok",
        verified_at=datetime.fromisoformat(when),
    )


def sample_problems() -> pd.DataFrame:
    """Three generated problems (one with a newline, one with HTML, one formula-like)."""
    return pd.DataFrame(
        {
            "id": ["gen_1", "gen_2", "gen_3"],
            "topic": ["algebra", "geometry", "probability"],
            "problem": ["Line one\nline two of problem 1", "Problem <b>2</b>", "Problem 3"],
            "answer": [12, 34, 56],
            "solution": ["s1", "s2", '=HYPERLINK("http://x")'],
        }
    )


def edit_csv(path: Path, edits: dict[str, dict[str, str]]) -> None:
    """Fill in cells of an exported review CSV, as a reviewer would (by problem id), and
    save it as a spreadsheet's "CSV UTF-8" does (with a BOM)."""
    with open(path, encoding="utf-8-sig", newline="") as fh:
        rows = list(csv.DictReader(fh))
    for row in rows:
        row.update(edits.get(row["problem_id"], {}))
    with open(path, "w", encoding="utf-8-sig", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


SETTINGS = (
    "Find the number of ordered pairs of positive integers whose sum is a multiple of seven.",
    "A circle of radius five is inscribed in a right triangle with integer side lengths.",
    "Let the sequence of real numbers satisfy a recurrence relation with two initial terms.",
    "Determine the remainder when the product of the first twenty odd primes is divided by.",
    "There exist complex numbers whose modulus and argument satisfy the following equations.",
    "A fair coin is tossed repeatedly until the pattern heads tails heads first appears here.",
)


def made_up_reference() -> pd.DataFrame:
    """Six made-up 'real' problems (no mirror needed) in the reference layout."""
    return pd.DataFrame(
        {
            "id": [f"demo:2000-I-{i + 1}" for i in range(6)],
            "source": "demo",
            "year": 2000,
            "contest": "I",
            "number": range(1, 7),
            "problem": list(SETTINGS),
            "answer": [12, 345, 6, 789, 10, 111],
            "solution": None,
        }
    )


def params_file(tmp_path: Path, name: str = "dg", **changes: object) -> Path:
    """A small simulated study's params file; ``a__b=v`` sets nested key ``a.b``."""
    data: dict[str, object] = {
        "study": "datagen",
        "title": "test",
        "n_problems": 14,
        "win_rate_pairs": 10,
        "bootstrap_rounds": 50,
        "verifications": "simulated",
        "human_sample": 8,
        "generator": {
            "name": "gen",
            "provider": "sim",
            "sim": {"quality": 4.0, "malformed_rate": 0.3, "copy_rate": 0.1},
        },
        "judge": {"name": "judge", "provider": "sim", "sim": {"noise": 0.5}},
    }
    for key, value in changes.items():
        target = data
        *path, last = key.split("__")
        for part in path:
            target = target[part]
        target[last] = value
    path = tmp_path / f"{name}.yaml"
    path.write_text(json.dumps(data))  # JSON is YAML
    return path
