"""evalbench.judge_golden.data: golden sets load, and every malformed one fails naming file, line and column."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from evalbench.judge_golden import data as D


def _write_csv(path: Path, rows: list[dict[str, object]]) -> Path:
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


GOOD = {
    "item": "q1",
    "question": "Capital of France?",
    "answer": "Paris",
    "human_accuracy": 9,
    "human_completeness": 8,
    "human_clarity": 7,
}


def test_load_golden_csv_and_jsonl(tmp_path: Path) -> None:
    second = {**GOOD, "item": "q2", "answer": "Lyon", "reference": "Paris", "human_accuracy": 2}
    csv_path = _write_csv(tmp_path / "g.csv", [GOOD, second])
    jsonl = tmp_path / "g.jsonl"
    jsonl.write_text("\n".join(json.dumps(r) for r in [GOOD, second]) + "\n\n")
    for path in (csv_path, jsonl):
        frame = D.load_golden(path)
        assert frame["item"].tolist() == ["q1", "q2"]
        assert frame["reference"].iloc[0] is None or pd.isna(frame["reference"].iloc[0])
        assert frame["human_weighted"].tolist() == pytest.approx(
            [0.5 * 9 + 0.3 * 8 + 0.2 * 7, 0.5 * 2 + 0.3 * 8 + 0.2 * 7]
        )
    assert D.load_golden(jsonl)["line"].tolist() == [1, 2]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"human_accuracy": 11}, r"column 'human_accuracy': 11 is outside the accuracy scale 1-10"),
        ({"human_clarity": "high"}, r"column 'human_clarity': 'high' is not a number"),
        ({"human_clarity": None}, r"column 'human_clarity': missing human score"),
        ({"answer": ""}, r"column 'answer': empty"),
        ({"human_tone": 5}, r"column 'human_tone': not a dimension of rubric 'fine_grained'"),
        ({"human_accuracy": float("nan")}, r"column 'human_accuracy': nan is outside"),
        # a fractional score used to load, then fail after every judge call (issue 12)
        ({"human_accuracy": 7.5}, r"column 'human_accuracy': 7.5 is not a whole number"),
        ({"human_accuracy": "7.0"}, None),  # a whole number written as text or float is fine
    ],
)
def test_golden_errors_name_file_line_and_column(
    tmp_path: Path, change: dict[str, object], message: str | None
) -> None:
    path = tmp_path / "g.jsonl"
    rows = [GOOD, {**GOOD, "item": "q2", **change}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    if message is None:
        assert D.load_golden(path)["human_accuracy"].tolist() == [9, 7]
        return
    with pytest.raises(D.GoldenSetError, match=rf"^{re.escape(str(path))}:2: {message}"):
        D.load_golden(path)


def test_a_golden_csv_as_excel_writes_it_loads_and_unreadable_bytes_are_one_line(
    tmp_path: Path,
) -> None:
    """Before: a BOM (Excel's "CSV UTF-8") read the first column as '\\ufeffitem' ("column
    'item': missing"); latin-1 bytes were a UnicodeDecodeError; a 300,000-character answer the
    csv module's bare "field larger than field limit (131072)"."""
    header = "item,question,answer,human_accuracy,human_completeness,human_clarity\n"
    bom = tmp_path / "bom.csv"
    bom.write_text(header + "i1,q,a,5,6,7\n", encoding="utf-8-sig")
    assert D.load_golden(bom)["item"].tolist() == ["i1"]
    latin = tmp_path / "latin.csv"
    latin.write_bytes(header.encode() + b"i1,caf\xe9,a,5,6,7\n")
    at = len(header) + len("i1,caf")  # the é, a latin-1 byte: 75
    with pytest.raises(D.GoldenSetError, match=rf"^{re.escape(str(latin))}:2: not UTF-8: byte "
                       rf"0xe9 at offset {at}$"):  # fmt: skip
        D.load_golden(latin)
    big = tmp_path / "big.csv"
    big.write_text(header + "i1,q," + "x" * 300_000 + ",5,6,7\n")
    with pytest.raises(D.GoldenSetError, match=rf"^{re.escape(str(big))}:2: a field over "
                       "131,072 characters$"):  # fmt: skip
        D.load_golden(big)


def test_golden_structural_errors(tmp_path: Path) -> None:
    csv_path = _write_csv(tmp_path / "g.csv", [GOOD, GOOD])
    repeat = rf"{re.escape(str(csv_path))}:3: column 'item': 'q1' repeats line 2"
    with pytest.raises(D.GoldenSetError, match=repeat):
        D.load_golden(csv_path)
    missing = _write_csv(tmp_path / "m.csv", [{k: v for k, v in GOOD.items() if k != "question"}])
    with pytest.raises(D.GoldenSetError, match=r"m.csv:2: column 'question': missing"):
        D.load_golden(missing)
    bad = tmp_path / "b.jsonl"
    bad.write_text(json.dumps(GOOD) + "\n{not json\n")
    with pytest.raises(D.GoldenSetError, match=r"b.jsonl:2: not JSON"):
        D.load_golden(bad)
    text = tmp_path / "g.txt"
    text.write_text("x")
    with pytest.raises(D.GoldenSetError, match=r"must be .csv or .jsonl"):
        D.load_golden(text)


def _mixed_references(tmp_path: Path, suffix: str, **extra: object) -> Path:
    """Two answers to one question, only the first with a reference (issue 23, defect 13)."""
    rows = [
        {**GOOD, "reference": "R1", **extra},
        {**GOOD, "item": "q2", "answer": "Lyon", "reference": None, **extra},
    ]
    path = tmp_path / f"g{suffix}"
    if suffix == ".csv":
        return _write_csv(path, rows)  # the missing reference is an empty cell
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))  # "reference": null
    return path


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_a_missing_reference_next_to_a_given_one_is_none_not_nan(tmp_path, suffix) -> None:
    """pandas 3 turned the missing text into NaN (a str column), where the docstring promises
    None, and JudgeCase(reference=nan) then failed the whole run."""
    frame = D.load_golden(_mixed_references(tmp_path, suffix))
    assert frame["reference"].tolist() == ["R1", None]
    assert [row.reference for row in frame.itertuples()] == ["R1", None]


def test_label_exports_with_optional_references_load_as_none(tmp_path) -> None:
    """`evalbench label export` writes one row per annotator and "reference": null."""
    rows = [
        {**GOOD, "annotator": name, "reference": ref, "item": item}
        for name in ("alice", "bob")
        for item, ref in (("q1", "R1"), ("q2", None))
    ]
    path = tmp_path / "export.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert D.load_annotations(path)["reference"].tolist() == ["R1", None, "R1", None]
    assert D.load_golden(path)["reference"].tolist() == ["R1", None]


def test_metadata_text_missing_on_some_rows_is_none(tmp_path) -> None:
    rows = [{**GOOD, "category": "geo"}, {**GOOD, "item": "q2"}]
    path = tmp_path / "g.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    frame = D.load_golden(path)
    assert frame["category"].tolist() == ["geo", None]
    assert frame["human_accuracy"].tolist() == [9.0, 9.0]  # numbers stay numbers
