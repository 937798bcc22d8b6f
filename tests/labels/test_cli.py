"""`evalbench label` refusals: one line on stderr, exit 2, nothing written or served."""

from __future__ import annotations

import json

import pytest
from labels.helpers import write_tasks

from evalbench.cli import main
from evalbench.labels import LabelStore, load_tasks
from evalbench.labels.views import parse_label

RUBRIC = [{"item": "q1", "question": "Q1", "answer": "A1"},
          {"item": "q2", "question": "Q2", "answer": "A2"}]  # fmt: skip
PROBLEM = {"id": "g1", "problem": "P", "answer": "1", "solution": "S"}


def _items(folder, *rows: dict | str):
    path = folder / "items.jsonl"
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def _one_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize(
    ("kind", "row", "rubric", "message"),
    [("rubric", RUBRIC[0], "nope", "--rubric: unknown rubric 'nope'; known: aime_quality, "
      "fine_grained, hle, single_rating"),
     ("pairwise", {"item": "p", "question": "Q", "system_x": "a", "answer_x": "1",
                   "system_y": "b", "answer_y": "2"}, "nope", "unknown rubric 'nope'"),
     ("verification", PROBLEM, "hle", "--rubric: verification scores the aime_quality dimensions")],
)  # fmt: skip
def test_init_refuses_a_rubric_that_serve_would_refuse(
    tmp_path, capsys, kind, row, rubric, message
):
    out = tmp_path / "t.yaml"
    argv = ["label", "init", kind, str(_items(tmp_path, row)), "-o", str(out), "--rubric", rubric]
    assert main(argv) == 2
    assert message in _one_line(capsys)
    assert not out.exists()


def test_init_refuses_a_repeated_annotator_naming_it(tmp_path, capsys):
    out = tmp_path / "t.yaml"
    argv = ["label", "init", "rubric", str(_items(tmp_path, RUBRIC[0])), "-o", str(out),
            "--annotator", "alice", "--annotator", "bob", "--annotator", "alice"]  # fmt: skip
    assert main(argv) == 2
    assert _one_line(capsys) == "evalbench label: --annotator: 'alice' is given twice\n"
    assert not out.exists()
    assert main([*argv[:6], "--annotator", "a/b"]) == 2
    assert "--annotator: annotator names must match" in _one_line(capsys)


@pytest.fixture
def served(monkeypatch):
    """``serve`` replaced by a recorder: the refusals happen before any socket is bound."""
    calls: list = []
    monkeypatch.setattr("evalbench.labels.app.serve", lambda tasks, **kw: calls.append(tasks))
    return calls


def test_serve_refuses_a_name_repeated_on_its_command_line(tmp_path, capsys, served):
    tasks = write_tasks(tmp_path, "rubric", RUBRIC, annotators=["alice"])
    argv = ["label", "serve", str(tasks.path), "--annotator", "bob", "--annotator", "bob"]
    assert main(argv) == 2
    assert _one_line(capsys) == "evalbench label: --annotator: 'bob' is given twice\n"
    assert served == []


def test_serve_adds_annotators_and_a_name_already_in_the_tasks_file_is_no_repeat(
    tmp_path, capsys, served
):
    tasks = write_tasks(tmp_path, "rubric", RUBRIC, annotators=["alice"])
    argv = ["label", "serve", str(tasks.path), "--annotator", "alice", "--annotator", "bob"]
    assert main(argv) == 0
    assert [t.spec.annotators for t in served] == [["alice", "bob"]]


def _torn(tmp_path):
    tasks = write_tasks(tmp_path, "rubric", RUBRIC, annotators=["alice", "bob"])
    record = parse_label(tasks, tasks.items[0], "alice", 0, {"scores": {"accuracy": 7,
                         "completeness": 5, "clarity": 9}})  # fmt: skip
    LabelStore(tasks.labels_dir).append(record)
    path = tasks.labels_dir / "alice.jsonl"
    with open(path, "a") as fh:
        fh.write('{"task": "tasks", "kind": "rub')  # a crash mid-write: never acknowledged
    return tasks, path


def test_status_names_a_torn_line_it_skipped(tmp_path, capsys):
    tasks, path = _torn(tmp_path)
    assert main(["label", "status", str(tasks.path)]) == 0
    out = capsys.readouterr().out
    assert f"1 torn line skipped in {path}" in out
    assert out.count("torn line") == 1  # bob has no file, so nothing torn
    assert "alice" in out and "    1 / 2" in out  # the whole line before it still counts


def test_export_names_a_torn_line_it_skipped(tmp_path, capsys):
    tasks, path = _torn(tmp_path)
    assert main(["label", "export", str(tasks.path), str(tmp_path / "golden.jsonl")]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"wrote {tmp_path / 'golden.jsonl'}: 1 rows from 1 annotator(s)")
    assert f"; 1 torn line skipped in {path}" in out


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_init_refuses_a_non_finite_item_id_naming_file_and_line(tmp_path, capsys, value):
    items = _items(tmp_path, RUBRIC[0], f'{{"item": {value}, "question": "Q", "answer": "A"}}')
    out = tmp_path / "t.yaml"
    assert main(["label", "init", "rubric", str(items), "-o", str(out)]) == 2
    shown = {"1e999": "Infinity"}.get(value, value)  # JSON reads 1e999 as infinity
    assert _one_line(capsys) == (
        f"evalbench label: {items}:2: field 'item': expected text or a finite number, got {shown}\n"
    )
    assert not out.exists()


def test_text_and_number_ids_load_as_before(tmp_path):
    rows = [{**RUBRIC[0], "item": 7}, {**RUBRIC[1], "item": 2.5}, {**RUBRIC[1], "item": "NaN"}]
    tasks = write_tasks(tmp_path, "rubric", rows)
    assert [it.id for it in tasks.items] == ["7", "2.5", "NaN"]  # the text "NaN" is a name


def test_an_items_file_that_is_not_utf8_is_one_line_at_init_and_status(tmp_path, capsys):
    items = tmp_path / "items.jsonl"
    items.write_bytes(b'{"item": "q\xff"}\n')
    assert main(["label", "init", "rubric", str(items), "-o", str(tmp_path / "t.yaml")]) == 2
    assert f"{items}:1: not UTF-8: byte 0xff at offset 11" in _one_line(capsys)
    (tmp_path / "t.yaml").write_text("kind: rubric\ntitle: T\nitems: items.jsonl\n")
    assert main(["label", "status", str(tmp_path / "t.yaml")]) == 2
    assert f"{items}:1: not UTF-8: byte 0xff at offset 11" in _one_line(capsys)


def test_a_tasks_file_with_a_repeated_annotator_names_it(tmp_path):
    write_tasks(tmp_path, "rubric", RUBRIC)
    (tmp_path / "tasks.yaml").write_text(
        "kind: rubric\ntitle: T\nitems: items.jsonl\nannotators: [alice, alice]\n"
    )
    with pytest.raises(ValueError, match=r"tasks.yaml: annotators: 'alice' is given twice"):
        load_tasks(tmp_path / "tasks.yaml")


@pytest.mark.parametrize("target", ["alice's label file", "a new file in the labels folder",
                                    "the items file", "the tasks file"])  # fmt: skip
def test_export_never_writes_over_the_tasks_items_or_label_files(tmp_path, capsys, target):
    # `label export tasks.yaml labels/alice.jsonl` replaced alice's labels (and their edit
    # history) with the export, and every later status and serve failed on its first line
    tasks, alice = _torn(tmp_path)
    items = tasks.path.parent / tasks.spec.items
    out = {"alice's label file": alice, "a new file in the labels folder":
           tasks.labels_dir / "golden.jsonl", "the items file": items,
           "the tasks file": tasks.path.with_suffix(".jsonl")}[target]  # fmt: skip
    if target == "the tasks file":  # a .yaml is refused by its suffix; the same file by link
        out.symlink_to(tasks.path)
    before = {p: p.read_bytes() for p in (alice, items, tasks.path)}
    assert main(["label", "export", str(tasks.path), str(out)]) == 2
    err = _one_line(capsys)
    assert f"evalbench label: {out}: " in err and "export to a file outside" in err, err
    assert {p: p.read_bytes() for p in before} == before
    assert target != "a new file in the labels folder" or not out.exists()
