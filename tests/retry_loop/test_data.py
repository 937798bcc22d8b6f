"""evalbench.retry_loop.data: the demo questions and a user's file, errors naming the line."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalbench.retry_loop.data import DEMO_ITEMS, RetryDataError, load_items


def test_demo_items() -> None:
    items = load_items("demo")
    assert len(items) == len(DEMO_ITEMS) == 32 and items["item"].is_unique
    assert items.iloc[0].tolist() == ["demo-01", *DEMO_ITEMS[0]]


def test_jsonl_and_csv_files(tmp_path: Path) -> None:
    jsonl = tmp_path / "q.jsonl"
    jsonl.write_text('{"item": "a", "question": "Q1?", "reference": "R1"}\n\n'
                     '{"id": 7, "question": "Q2?"}\n')  # fmt: skip
    assert load_items(str(jsonl)).to_dict("records") == [
        {"item": "a", "question": "Q1?", "reference": "R1"},
        {"item": "7", "question": "Q2?", "reference": None},
    ]
    csv = tmp_path / "q.csv"
    csv.write_text("item,question,reference\nb,Q3?,\n")
    assert load_items(str(csv)).to_dict("records") == [
        {"item": "b", "question": "Q3?", "reference": None}
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"item": "a", "question": "Q?"}\nnot json\n', r"q\.jsonl:2: not JSON"),
        ('{"item": "a"}\n', r"q\.jsonl:1: column 'question': missing or empty"),
        ('{"item": "", "question": "Q?"}\n', r"q\.jsonl:1: column 'item': missing or empty"),
        ('{"item": "a", "question": "Q?"}\n{"item": "a", "question": "Q?"}\n',
         r"q\.jsonl:2: column 'item': 'a' is used twice"),
        ("[1, 2]\n", r"q\.jsonl:1: expected a JSON object"),
        ("\n", r"q\.jsonl: no question in the file"),
    ],
)  # fmt: skip
def test_malformed_files_name_the_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(text)
    with pytest.raises(RetryDataError, match=message):
        load_items(str(path))
    with pytest.raises(RetryDataError, match=r"q\.txt: expected a \.jsonl or \.csv"):
        load_items(str(tmp_path / "q.txt"))
