"""The suite's task file: the demo's 30 tasks, a bad task in one line, and every expected
answer scoring full marks against its own criteria."""

from __future__ import annotations

import json

import pytest

from evalbench.browse_suite.data import load_suite
from evalbench.browse_suite.scoring import parse_answer, score_criterion, task_score
from evalbench.params import ParamsError


def test_the_demo_suite_has_30_tasks_six_per_level_with_weights_summing_to_one():
    tasks = load_suite()
    assert len(tasks) == 30
    assert sorted(t.level for t in tasks) == [lv for lv in range(1, 6) for _ in range(6)]
    for task in tasks:
        assert sum(c.weight for c in task.criteria) == pytest.approx(1.0)
    types = {c.type for t in tasks for c in t.criteria}
    assert types == {"exact", "numeric", "set", "dynamic", "judge"}
    queue = next(t for t in tasks if t.id == "L5-shop-queue")
    assert queue.criteria[0].allowed[:2] == ["TL-20931", "TL-20947"]  # from changing.json


BAD_TASK = """tasks:
  - id: ok
    level: 1
    kind: static
    start: library/index.html
    question: q
    expected: {a: 1}
    max_steps: 5
    max_time_seconds: 10
    criteria: [{type: numeric, field: a, expected: 1, weight: 1.0}]
  - id: bad
    level: 1
    kind: static
    start: library/index.html
    question: q
    expected: {a: 1, b: 2}
    max_steps: 5
    max_time_seconds: 10
    criteria:
      - {type: numeric, field: a, expected: 1, weight: 0.5}
      - {type: numeric, field: b, expected: 2, weight: 0.4}
"""


def test_a_bad_task_is_one_line_naming_file_line_and_field(tmp_path):
    path = tmp_path / "tasks.yaml"
    path.write_text(BAD_TASK)
    with pytest.raises(
        ParamsError, match=r"tasks\.yaml:11: task bad: task: .*weights sum to 0\.9, not 1"
    ):
        load_suite(path)
    path.write_text(BAD_TASK.replace("field: b", "field: c").replace("0.4}", "0.5}"))
    with pytest.raises(ParamsError, match=r"tasks\.yaml:11: task bad: .*field\(s\) \['c'\]"):
        load_suite(path)
    path.write_text(BAD_TASK.replace("type: numeric, field: b", "type: fuzzy, field: b"))
    with pytest.raises(ParamsError, match=r"tasks\.yaml:11: task bad: criteria\.1"):
        load_suite(path)


def test_every_expected_answer_scores_full_marks_against_its_own_criteria():
    for task in load_suite():
        text = json.dumps(task.expected, ensure_ascii=False)
        scores = [score_criterion(c, text, parse_answer(text), 1.0) for c in task.criteria]
        assert task_score(scores, [c.weight for c in task.criteria]) == pytest.approx(1.0), task.id
