"""The real AIME reference problems: pinned files and Hugging Face tables (evalbench.datagen.data)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from evalbench.datagen import (
    data,
)


def test_reference_has_30_plus_60_problems_and_2024_answers_agree(mirror: Path) -> None:
    ref = data.load_reference()
    assert ref["source"].value_counts().to_dict() == {"matharena": 60, "qwen25math": 30}
    assert ref["id"].is_unique and ref["answer"].between(0, 999).all()
    assert ref.groupby(["source", "year", "contest"]).size().eq(15).all()
    both = ref[ref.source == "qwen25math"].merge(
        ref[ref.source == "matharena"], on=["year", "contest", "number"]
    )
    assert len(both) == 30 and (both["answer_x"] == both["answer_y"]).all()
    assert data.answer_mismatches(ref).empty
    first = ref.set_index("id")
    assert first.loc["qwen25math:2024-I-1", "answer"] == 204  # Aya's walk: 204 minutes
    assert first.loc["matharena:2024-I-2", "answer"] == 25  # '025' in answers.csv
    assert first.loc["matharena:2025-I-1", "answer"] == 70  # bases b > 9 with 17_b | 97_b
    assert first.loc["qwen25math:2024-I-1", "solution"].startswith("$\\frac{9}{s} + t = 4$")
    assert len(data.unique_reference(ref)) == 60


def test_answer_mismatch_is_reported() -> None:
    ref = pd.DataFrame(
        [
            {"id": "a:1", "source": "a", "year": 2024, "contest": "I", "number": 1, "answer": 5},
            {"id": "b:1", "source": "b", "year": 2024, "contest": "I", "number": 1, "answer": 6},
            {"id": "b:2", "source": "b", "year": 2024, "contest": "I", "number": 2, "answer": 7},
        ]
    )
    bad = data.answer_mismatches(ref)
    assert bad[["id_x", "answer_x", "id_y", "answer_y"]].values.tolist() == [["a:1", 5, "b:1", 6]]


def test_hugging_face_columns_map_from_an_in_memory_dataset() -> None:
    datasets = pytest.importorskip("datasets")
    aime_1983_2025 = datasets.Dataset.from_dict(
        {
            "ID": ["1983-1", "2025-II-7"],
            "Year": [1983, 2025],
            "Problem Number": [1, 7],
            "Question": ["Let $x$, $y$ and $z$ all exceed $1$ ...", "Let $A$ be the set ..."],
            "Answer": ["60", "237"],
            "Part": [None, "II"],
        }
    )
    df = data.reference_from_rows(aime_1983_2025, source="TianHongZXY/aime-1983-2025")
    assert df[["id", "year", "number", "answer"]].values.tolist() == [
        ["TianHongZXY/aime-1983-2025:1983-1", 1983, 1, 60],
        ["TianHongZXY/aime-1983-2025:2025-II-7", 2025, 7, 237],
    ]
    assert df["contest"].tolist() == [None, "II"]  # 1983 had one contest
    aime25 = pd.DataFrame(
        {"id": ["0", "2025-I-13"], "problem": ["P0 ...", "P13 ..."], "answer": ["070", 490]}
    )
    df = data.reference_from_rows(aime25, source="math-ai/aime25")
    assert df["answer"].tolist() == [70, 490] and df["problem"].tolist() == ["P0 ...", "P13 ..."]
    assert df[["year", "contest", "number"]].iloc[1].tolist() == [2025, "I", 13]
    assert df["id"].tolist() == ["math-ai/aime25:0", "math-ai/aime25:2025-I-13"]


def test_load_hf_reference_takes_the_only_split(monkeypatch: pytest.MonkeyPatch) -> None:
    datasets = pytest.importorskip("datasets")
    table = datasets.Dataset.from_dict(
        {"id": ["2025-I-1"], "problem": ["Find ..."], "answer": [70]}
    )
    calls = []

    def fake_load_dataset(name: str, revision: str | None = None) -> object:
        calls.append((name, revision))
        return datasets.DatasetDict({"test": table})

    monkeypatch.setattr(datasets, "load_dataset", fake_load_dataset)
    df = data.load_hf_reference("math-ai/aime25", revision="abc")
    assert calls == [("math-ai/aime25", "abc")] and df["id"].tolist() == ["math-ai/aime25:2025-I-1"]
    monkeypatch.setattr(
        datasets, "load_dataset", lambda *a, **k: datasets.DatasetDict({"a": table, "b": table})
    )
    with pytest.raises(ValueError, match=r"several splits \['a', 'b'\]; pass split="):
        data.load_hf_reference("x/y")
    assert len(data.load_hf_reference("x/y", split="b")) == 1


def test_hugging_face_rows_with_bad_answers_or_no_problem_column_fail_loudly() -> None:
    with pytest.raises(ValueError, match=r"src row 1: answer '12/5' is not an integer 0-999"):
        data.reference_from_rows(
            pd.DataFrame({"problem": ["a", "b"], "answer": [1, "12/5"]}), source="src"
        )
    with pytest.raises(ValueError, match=r"no 'problem' column"):
        data.reference_from_rows(pd.DataFrame({"text": ["a"], "answer": [1]}), source="src")


def test_a_missing_solution_or_contest_next_to_a_given_one_is_none() -> None:
    """pandas 3 stored the missing text as NaN (a str column); a reader then met a float."""
    rows = pd.DataFrame([
        {"id": "2024-I-1", "problem": "P1", "answer": "5", "solution": "S1"},
        {"id": "7", "problem": "P2", "answer": "7", "solution": None},
    ])  # fmt: skip
    df = data.reference_from_rows(rows, source="src")
    assert df["solution"].tolist() == ["S1", None]
    assert df["contest"].tolist() == ["I", None]
    assert df["answer"].tolist() == [5, 7]
