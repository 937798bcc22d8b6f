"""evalbench.judge_golden.scoring: judge tasks from golden items, pair tasks, the human preference."""

from __future__ import annotations

import pandas as pd
import pytest

from evalbench import judge as J
from evalbench import judge_golden as G
from evalbench.judge_golden import data as D
from evalbench.judge_golden import scoring as S


def test_demo_golden_set_is_labelled_and_complete() -> None:
    frame = G.load_golden("demo")
    assert len(frame) == 60 and frame["question"].nunique() == 30
    first = frame.iloc[0]
    assert first["human_weighted"] == pytest.approx(0.5 * 9 + 0.3 * 8 + 0.2 * 9)
    assert "SYNTHETIC" in (D.demo_golden_path().parent / "README.md").read_text()
    pairs = S.golden_pair_tasks(frame)
    assert len(pairs) == 30  # two answers per question -> one pair each
    # the better answer is x for some questions and y for others (position is not confounded)
    prefs = [S.human_preference(p.quality_x - p.quality_y, 0) for p in pairs]  # type: ignore[operator]
    assert {"a", "b"} <= set(prefs)


def test_golden_task_ids_change_when_an_item_is_edited() -> None:
    rubric = J.get_rubric("fine_grained")
    frame = G.load_golden("demo").head(2)
    before = S.golden_tasks(frame, rubric)
    edited = frame.assign(answer=["changed", frame["answer"].iloc[1]])
    after = S.golden_tasks(edited, rubric)
    assert before[0].case_id != after[0].case_id and before[1].case_id == after[1].case_id
    assert S.item_of(before[0].case_id) == "demo-q01-a"
    assert before[0].truth == {"accuracy": 9.0, "completeness": 8.0, "clarity": 9.0}


def test_confusion_dimension_falls_back_to_an_integer_scale() -> None:
    rubric = J.get_rubric("fine_grained")
    assert S.scale_labels(rubric, "accuracy") == list(range(1, 11))
    assert S.scale_labels(rubric, "weighted") is None
    assert S.confusion_dimension(rubric, "clarity") == "clarity"
    assert S.confusion_dimension(rubric, "weighted") == "accuracy"  # the first integer scale
    assert S.score_column("weighted") == "weighted_score"
    assert S.score_column("clarity") == "score_clarity"


def test_typical_length_is_the_median_answer_length() -> None:
    golden = pd.DataFrame({"answer": ["", "abc", "abcdefgh"]})  # lengths 1 (floor), 3, 8
    assert S.typical_length(golden) == 3.0
