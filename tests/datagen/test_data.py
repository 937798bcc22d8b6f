"""The reference problems: real AIME (pinned files, Hugging Face tables) and evalbench's own
demo problems (evalbench.datagen.data)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalbench.datagen import data, sim
from evalbench.datagen.duplicates import near_duplicates


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


@pytest.mark.slow
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


@pytest.mark.slow
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


# --------------------------------------------------------------------------- the demo problems

DEMO_ANSWERS = {
    1: 2 * 143,  # n = 2, 4 (mod 7): 143 of each in 1..1000
    2: 5**3 - 3 * 5,  # (x + 1/x)^3 - 3(x + 1/x)
    3: 12 * 10,  # BNNS in 4!/2! orders, the three A's in C(5, 3) of the 5 gaps
    4: (34**2 - 26**2) // 2,  # 2lw = (l + w)^2 - (l^2 + w^2)
    5: 3 + 10,  # C(4,2) C(6,1) / C(10,3) = 36/120 = 3/10
    6: (2**32 + 1) % 1000,  # a_k - 1 = 2^(2^(k-1))
    7: 2**7 - 1,  # (2^7 - 1) / (2 - 1)
    8: (99 * 100 // 2) ** 2 % 1000,
    9: (1 * 4 + 1 * 7 + 4 * 7) + 1 * 4 * 7,  # roots 1, 4, 7
    10: 924 - 20 * 20,  # C(12,6) - C(6,3)^2
    11: 85 + 8,  # R = 9*10*17 / (4*36) = 85/8
    12: 9 + 64,  # 144 / 1024
    13: 599074575 % 1000,  # t_42 - t_2
    14: 4**3 - 2**3,  # cube exponents {0,3,6,9}, of which sixth powers {0,6}
    15: 12 * (8 * 9 // 2),  # n = 12, 24, ..., 96
    16: 6**2 + 6**2,  # inradius (20 + 21 - 29) / 2 = 6
    17: 126,  # C(9, 5)
    18: 161,  # counted column by column below
    19: 125,  # 124! ends in 24 + 4 = 28 zeros, 125! in 25 + 5 + 1 = 31
    20: 153 + 400,  # 400 - 100 - 196 + 49 = 153, gcd(153, 400) = 1
    21: 2 * (3**6 - 1) // 2,  # a_1 = 2, r = 3
    22: 5 * 5,  # ((1 + 2i)(1 - 2i))^2
    23: 75 + 3,  # equilateral, side 10 sqrt 3: 75 sqrt 3
    24: 89,  # t_k = t_(k-1) + t_(k-2), t_1 = 1, t_2 = 2
    25: 13 * (37 + 961) // 2 % 1000,  # n = 37 (mod 77)
    26: 2 * 7,  # 0 < (x - 15)^2 < 50
    27: 42,  # E = 1 + 5/6 E + 1/6 (1 + 5/6 E)
    28: 12,  # k = 2, 3 (mod 5) for 2 <= k <= 31
    29: 243 + 4,  # area^2 = 3/16 * 18^2
    30: 6 * 8,  # |z|^2 + 4 = 8 each; the real parts cancel
}
"""Each demo answer by hand (the comment says how)."""


@pytest.fixture
def _no_pinned_file(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(name: str, **kwargs: object) -> Path:
        raise AssertionError(f"the demo reference read the pinned file {name}")

    monkeypatch.setattr(data, "fetch", refuse)


@pytest.mark.usefixtures("_no_pinned_file")
def test_the_demo_problems_are_thirty_with_unique_answers_each_recomputed() -> None:
    ref = data.load_reference(["demo"], years=[2024])  # years do not filter the demo
    assert len(ref) == 30 and ref["id"].is_unique and (ref["source"] == "demo").all()
    assert ref["id"].tolist()[:2] == ["demo:p01", "demo:p02"]
    assert ref["answer"].is_unique and ref["answer"].between(0, 999).all()
    assert dict(zip(ref["number"], ref["answer"], strict=True)) == DEMO_ANSWERS
    lattice = sum(2 * math.isqrt(50 - x * x) + 1 for x in range(-7, 8))
    assert lattice == DEMO_ANSWERS[18]
    assert ref["solution"].str.len().gt(40).all() and ref["year"].isna().all()
    assert len(data.unique_reference(ref)) == 30  # no year: every row is its own problem


@pytest.mark.slow
@pytest.mark.usefixtures("_no_pinned_file")
def test_light_copies_of_demo_problems_are_flagged_and_fresh_sim_problems_are_not() -> None:
    ref = data.load_reference(["demo"])
    apart = near_duplicates(ref, ref)  # each against the others
    assert not apart.top["flagged"].any()
    for seed in range(10):
        rng = np.random.default_rng(seed)
        copies = ref.assign(id=[f"copy{i}" for i in range(len(ref))],
                            problem=[sim.lightly_edit(p, rng) for p in ref["problem"]])  # fmt: skip
        found = near_duplicates(copies, ref).top
        assert found["flagged"].all() and (found["reference_id"] == ref["id"]).all()
    rng = np.random.default_rng(0)
    fresh = [make(rng)[0] for make in sim._SIM_TEMPLATES.values() for _ in range(20)]
    generated = pd.DataFrame({"id": [f"g{i}" for i in range(len(fresh))], "problem": fresh})
    assert not near_duplicates(generated, ref).top["flagged"].any()


def test_the_demo_problems_are_not_near_copies_of_real_aime_problems(mirror: Path) -> None:
    demo, real = data.load_reference(["demo"]), data.load_reference()
    assert not near_duplicates(demo, real).top["flagged"].any()
