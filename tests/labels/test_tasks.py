"""Tasks files and items: validation with file:line, per-annotator order and sides."""

from __future__ import annotations

import json

import pytest
from labels.helpers import write_tasks

from evalbench.cli import main
from evalbench.labels import LabelTaskError, annotator_order, left_side, load_tasks
from evalbench.labels.views import LabelRejected, item_sections, parse_label, task_view

RUBRIC = [{"item": f"q{i}", "question": f"Q{i}", "answer": f"A{i}"} for i in range(20)]
PAIRS = [
    {"item": f"p{i}", "question": "Q", "system_x": "sx", "answer_x": "ax", "system_y": "sy",
     "answer_y": "ay"}
    for i in range(20)
]  # fmt: skip


def test_each_annotator_has_a_seeded_order_that_a_reload_repeats(tmp_path):
    tasks = write_tasks(tmp_path, "rubric", RUBRIC)
    a, b = annotator_order(tasks, "alice"), annotator_order(tasks, "bob")
    assert sorted(a) == sorted(b) == sorted(r["item"] for r in RUBRIC)
    assert a != b and a == annotator_order(load_tasks(tasks.path), "alice")
    fixed = write_tasks(tmp_path / "f", "rubric", RUBRIC, item_order="fixed")
    assert annotator_order(fixed, "alice") == [r["item"] for r in RUBRIC]


def test_pairwise_sides_are_balanced_enough_and_differ_between_annotators(tmp_path):
    tasks = write_tasks(tmp_path, "pairwise", PAIRS)
    sides = {n: [left_side(tasks, n, f"p{i}") for i in range(20)] for n in ("ann", "ben")}
    for seen in sides.values():
        assert 5 <= seen.count("x") <= 15  # 20 fair coin flips: 5..15 has p > 0.98
    assert sides["ann"] != sides["ben"]


def test_the_pairwise_choice_maps_back_to_the_item_sides(tmp_path):
    tasks = write_tasks(tmp_path, "pairwise", PAIRS[:1])
    item = tasks.items[0]
    left = left_side(tasks, "ann", "p0")
    sections = item_sections(tasks, item, "ann")
    assert [s["title"] for s in sections] == ["Question", "Answer A", "Answer B"]
    assert sections[1]["html"] == f"<p>a{left}</p>\n"
    for choice, expected in (("left", "a" if left == "x" else "b"),
                             ("right", "b" if left == "x" else "a"), ("tie", "tie")):  # fmt: skip
        record = parse_label(tasks, item, "ann", 0, {"choice": choice})
        assert (record.preference, record.left, record.system_x) == (expected, left, "sx")
    with pytest.raises(LabelRejected, match="choice"):
        parse_label(tasks, item, "ann", 0, {"choice": "x"})


def test_verification_asks_the_four_dimensions_and_a_status(tmp_path):
    items = [{"id": "gen_1", "problem": "Find $x$.", "answer": "7", "solution": "x = 7"}]
    tasks = write_tasks(tmp_path, "verification", items)
    view = task_view(tasks)
    assert [d["name"] for d in view["dimensions"]] == [
        "correctness", "clarity", "difficulty_match", "completeness"]  # fmt: skip
    assert view["statuses"] == ["approved", "rejected", "needs_revision"]
    scores = {"correctness": 5, "clarity": 4, "difficulty_match": 3, "completeness": 5}
    with pytest.raises(LabelRejected, match="status"):
        parse_label(tasks, tasks.items[0], "rev", 0, {"scores": scores})
    record = parse_label(tasks, tasks.items[0], "rev", 0, {"scores": scores, "status": "approved"})
    assert record.status == "approved" and record.scores["clarity"] == 4


def test_hle_rubric_scores_on_its_0_to_100_scale(tmp_path):
    tasks = write_tasks(tmp_path, "rubric", [{**RUBRIC[0], "reference": "R"}], rubric="hle")
    dims = task_view(tasks)["dimensions"]
    assert len(dims) == 6 and {(d["min"], d["max"]) for d in dims} == {(0, 100)}
    scores = {d["name"]: 55 for d in dims}
    assert parse_label(tasks, tasks.items[0], "a", 0, {"scores": scores}).scores == {
        d["name"]: 55.0 for d in dims}  # fmt: skip


@pytest.mark.parametrize(
    ("kind", "line", "message"),
    [("rubric", '{"item": "a", "question": "Q"}', "items.jsonl:1: field 'answer': missing"),
     ("rubric", '{"item": "a", "question": "Q", "answer": ["x"]}', "field 'answer': expected text"),
     ("rubric", "not json", "items.jsonl:1: not JSON"),
     ("pairwise", '{"item": "a", "question": "Q", "system_x": "s", "answer_x": "1", '
      '"system_y": "s", "answer_y": "2"}', "field 'system_y': the same system"),
     ("verification", '{"problem": "P", "answer": "1", "solution": "S"}', "field 'id': missing"),
     # JSON's NaN (pandas' missing value) is no text: it was shown to annotators as "nan"
     ("rubric", '{"item": "a", "question": "Q", "answer": NaN}', "items.jsonl:1: field 'answer': missing or empty"),
     ("rubric", '{"item": "a", "question": Infinity, "answer": "A"}',
      "items.jsonl:1: field 'question': expected text, got Infinity")],
)  # fmt: skip
def test_a_bad_item_is_one_line_naming_file_line_and_field(tmp_path, kind, line, message):
    (tmp_path / "items.jsonl").write_text(line + "\n")
    (tmp_path / "t.yaml").write_text(f"kind: {kind}\ntitle: T\nitems: items.jsonl\n")
    with pytest.raises(LabelTaskError, match=message.replace("(", r"\(").replace("[", r"\[")):
        load_tasks(tmp_path / "t.yaml")


def test_a_repeated_item_and_bad_task_fields_are_refused(tmp_path):
    rows = [RUBRIC[0], RUBRIC[1], RUBRIC[0]]
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "t.yaml").write_text("kind: rubric\ntitle: T\nitems: items.jsonl\n")
    with pytest.raises(LabelTaskError, match=r"items.jsonl:3: field 'item': 'q0' repeats line 1"):
        load_tasks(tmp_path / "t.yaml")
    for body, message in (("kind: rubric\ntitle: T\nitems: i.jsonl\ncolour: red\n", "colour: unknown key"),
                          ("kind: rubric\ntitle: T\nitems: i.jsonl\nannotators: [a/b]\n", "annotator names"),
                          ("kind: rubric\ntitle: T\nitems: i.jsonl\nrubric: nope\n", "unknown rubric")):  # fmt: skip
        (tmp_path / "t.yaml").write_text(body)
        with pytest.raises(LabelTaskError, match=message):
            load_tasks(tmp_path / "t.yaml")


def test_a_missing_optional_text_is_no_text_not_nan(tmp_path):
    (tmp_path / "items.jsonl").write_text(
        '{"item": "a", "question": "Q", "answer": "A", "reference": NaN}\n'
    )
    (tmp_path / "t.yaml").write_text("kind: rubric\ntitle: T\nitems: items.jsonl\n")
    assert load_tasks(tmp_path / "t.yaml").items[0].fields["reference"] is None


def test_csv_items_load_too(tmp_path):
    (tmp_path / "items.csv").write_text("item,question,answer,human_accuracy\nq1,Q?,A.,7\n")
    (tmp_path / "t.yaml").write_text("kind: rubric\ntitle: T\nitems: items.csv\n")
    tasks = load_tasks(tmp_path / "t.yaml")
    assert tasks.items[0].fields["question"] == "Q?"
    assert tasks.labels_dir == tmp_path / "t_labels"


BOMB = 'a: &a ["x","x","x","x","x","x","x","x","x","x"]\n' + "".join(
    f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n"
    for p, c in zip("abcdefgh", "bcdefghi", strict=True)
)


def test_a_tasks_file_is_read_as_strictly_as_a_params_file(tmp_path):
    """Hand-edited like params: an alias bomb (10^9 strings), a duplicate key or a YAML 1.1
    boolean must not be taken the way PyYAML's safe_load takes them."""
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps(RUBRIC[0]) + "\n")
    path = tmp_path / "t.yaml"
    path.write_text(BOMB + "kind: rubric\ntitle: T\nitems: items.jsonl\n")
    with pytest.raises(LabelTaskError, match=r"t.yaml:1:\d+: YAML anchor &a is not allowed"):
        load_tasks(path)
    path.write_text("kind: rubric\ntitle: T\ntitle: U\nitems: items.jsonl\n")
    with pytest.raises(LabelTaskError, match="duplicate key 'title'"):
        load_tasks(path)
    path.write_text("kind: rubric\ntitle: off\nitems: items.jsonl\n")
    assert load_tasks(path).spec.title == "off"  # YAML 1.1 read False: not a title


def test_init_writes_a_tasks_file_that_reads_back_the_same(tmp_path):
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps(RUBRIC[0]) + "\n")
    out = tmp_path / "t.yaml"
    assert main(["label", "init", "rubric", str(items), "-o", str(out), "--title", "1e3",
                 "--annotator", "0800"]) == 0  # fmt: skip
    spec = load_tasks(out).spec
    assert (spec.title, spec.annotators) == ("1e3", ["0800"])
