"""The expert set: its human baseline, one-line errors naming file:line and the field, and
the demo set covering category × difficulty."""

from __future__ import annotations

import re

import pytest
from hle_grading.cases import item, write_jsonl

from evalbench.hle_grading import data
from evalbench.judge import get_rubric


def test_the_expert_set_and_its_human_baseline(tmp_path):
    scores = dict.fromkeys(data.DIMENSIONS, 60.0)
    path = write_jsonl(tmp_path / "e.jsonl", [item(human_scores=scores),
                                             item(id="e2", answer=None, criteria=None)])  # fmt: skip
    first, second = data.load(path)
    assert first.human("accuracy") == 60.0 and first.human("overall") == 60.0  # mean of six
    assert first.criteria == ("says because",) and second.criteria == ()
    assert second.answer is None and second.human_scores is None
    assert second.human("overall") != second.human("overall")  # NaN: no baseline
    with_overall = data.load(write_jsonl(tmp_path / "f.jsonl", [item(
        human_scores={**scores, "overall": 70})]))  # fmt: skip
    assert with_overall[0].human("overall") == 70.0  # a given overall is used as given


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"difficulty": "very hard"},
         "field 'difficulty': Input should be 'easy', 'medium', 'hard' or 'expert'"),
        ({"criteria": "one string"}, "field 'criteria': must be a list of non-empty strings"),
        ({"criteria": ["ok", " "]}, "field 'criteria': must be a list of non-empty strings"),
        ({"human_scores": {"accuracy": 50}}, "field 'human_scores': needs all six dimensions"),
        ({"human_scores": dict.fromkeys(data.DIMENSIONS, 101)},
         "field 'human_scores': accuracy must be a number 0-100, got 101"),
        ({"human_scores": dict.fromkeys(data.DIMENSIONS, True)},
         "field 'human_scores': accuracy must be a number 0-100, got True"),
        ({"answer": ""}, "field 'answer': must be a non-empty string"),
        ({"question": 3}, "field 'question': Input should be a valid string"),
        ({"reference_answer": None}, "field 'reference_answer': Input should be a valid string"),
    ],
)  # fmt: skip
def test_a_bad_line_names_file_line_and_field(tmp_path, bad, message):
    path = write_jsonl(tmp_path / "e.jsonl", [item(id="ok"), item(**bad)])
    with pytest.raises(data.GradingDataError, match=re.escape(f"{path}:2: {message}")):
        data.load(path)


def test_missing_fields_broken_lines_duplicates_and_empty_files(tmp_path):
    path = write_jsonl(tmp_path / "e.jsonl", [{k: v for k, v in item().items() if k != "id"}])
    with pytest.raises(
        data.GradingDataError, match=re.escape(f"{path}:1: field 'id': Field required")
    ):
        data.load(path)
    path.write_text('{"id": "e1"\n')
    with pytest.raises(data.GradingDataError, match=re.escape(f"{path}:1: not JSON")):
        data.load(path)
    write_jsonl(path, [item(), item()])
    with pytest.raises(data.GradingDataError, match=re.escape(f"{path}:2: duplicate id 'e1'")):
        data.load(path)
    path.write_text("\n")
    with pytest.raises(data.GradingDataError, match="is empty"):
        data.load(path)
    with pytest.raises(data.GradingDataError, match="does not exist"):
        data.load(tmp_path / "nowhere.jsonl")


def test_the_dimensions_are_the_hle_rubrics():
    assert tuple(d.name for d in get_rubric("hle").dimensions) == data.DIMENSIONS


def test_the_demo_expert_set_covers_category_by_difficulty():
    items = data.load("demo")
    cells = {(it.category, it.difficulty) for it in items}
    assert len(cells) == len({it.category for it in items}) * len(data.DIFFICULTIES)
    assert sum(it.human_scores is not None for it in items) == 26
    assert all(it.answer for it in items) and len(items) == 32
