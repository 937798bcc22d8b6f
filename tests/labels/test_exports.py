"""Exports to the studies' formats, the status table and the `evalbench label` commands."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from labels.helpers import write_tasks

from evalbench.cli import main
from evalbench.labels import LabelStore, export_labels, label_status, load_tasks
from evalbench.labels.views import parse_label

RUBRIC = [{"item": "q1", "question": "Q1", "answer": "=cmd()", "reference": "R1"},
          {"item": "q2", "question": "Q2", "answer": "A2"}]  # fmt: skip
PAIRS = [{"item": "p1", "question_id": "qid1", "question": "Q", "system_x": "sx",
          "answer_x": "x", "system_y": "sy", "answer_y": "y"}]  # fmt: skip


def _label(tasks, annotator: str, item_index: int, body: dict) -> None:
    record = parse_label(tasks, tasks.items[item_index], annotator, item_index, body)
    LabelStore(tasks.labels_dir).append(record)


def _scores(a: int, c: int, d: int) -> dict:
    return {"scores": {"accuracy": a, "completeness": c, "clarity": d}}


def test_rubric_labels_export_as_a_golden_set_with_an_annotator_column(tmp_path):
    tasks = write_tasks(tmp_path, "rubric", RUBRIC)
    _label(tasks, "bob", 1, _scores(4, 4, 4))
    _label(tasks, "alice", 0, _scores(7, 5, 9))
    _label(tasks, "alice", 0, _scores(8, 5, 9))  # an edit: only the current label exports
    done = export_labels(tasks, tmp_path / "golden.jsonl")
    rows = [json.loads(x) for x in done.path.read_text().splitlines()]
    assert (done.rows, done.stale, done.annotators) == (2, 0, ["alice", "bob"])
    assert [(r["item"], r["annotator"], r["human_accuracy"]) for r in rows] == [
        ("q1", "alice", 8), ("q2", "bob", 4)]  # fmt: skip
    assert rows[0]["question"] == "Q1" and rows[0]["reference"] == "R1"
    assert isinstance(rows[0]["human_accuracy"], int)  # whole scale points stay whole
    export_labels(tasks, tmp_path / "golden.csv")
    with open(tmp_path / "golden.csv", newline="") as fh:
        first = next(csv.DictReader(fh))
    assert first["answer"] == "'=cmd()"  # no spreadsheet formula from model text


def test_pairwise_labels_export_as_battles_in_item_terms(tmp_path):
    tasks = write_tasks(tmp_path, "pairwise", PAIRS)
    _label(tasks, "ann", 0, {"choice": "left", "comment": "clearer"})
    row = json.loads(export_labels(tasks, tmp_path / "b.jsonl").path.read_text())
    left = row["shown_left"]
    assert (row["model_a"], row["model_b"], row["question_id"]) == ("sx", "sy", "qid1")
    assert row["winner"] == ("a" if left == "x" else "b") and row["reason"] == "clearer"


def test_an_edited_item_makes_its_labels_stale_and_they_are_left_out(tmp_path):
    tasks = write_tasks(tmp_path, "rubric", RUBRIC)
    _label(tasks, "alice", 0, _scores(7, 5, 9))
    _label(tasks, "alice", 1, _scores(6, 6, 6))
    changed = [dict(RUBRIC[0], answer="edited"), RUBRIC[1]]
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in changed))
    tasks = load_tasks(tasks.path)
    done = export_labels(tasks, tmp_path / "g.jsonl")
    assert (done.rows, done.stale) == (1, 1)
    status = label_status(tasks).set_index("annotator").loc["alice"]
    assert (status["done"], status["stale"], status["total"]) == (1, 1, 2)


def test_verification_labels_export_as_reviews(tmp_path):
    items = [{"id": "gen_1", "problem": "P", "answer": "1", "solution": "S"}]
    tasks = write_tasks(tmp_path, "verification", items)
    scores = {"correctness": 5, "clarity": 4, "difficulty_match": 3, "completeness": 4}
    _label(tasks, "rev", 0, {"scores": scores, "status": "needs_revision", "comment": "typo"})
    row = json.loads(export_labels(tasks, tmp_path / "r.jsonl").path.read_text())
    assert row["problem_id"] == "gen_1" and row["reviewer"] == "rev"
    assert row["total_score"] == (5 + 4 + 3 + 4) / 4 and row["status"] == "needs_revision"


def test_the_label_commands_init_status_and_export(tmp_path, capsys):
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps(r) + "\n" for r in RUBRIC))
    out = tmp_path / "tasks" / "support.yaml"
    assert main(["label", "init", "rubric", str(items), "-o", str(out),
                 "--annotator", "alice", "--annotator", "bob"]) == 0  # fmt: skip
    tasks = load_tasks(out)
    assert tasks.spec.annotators == ["alice", "bob"] and len(tasks.items) == 2
    assert main(["label", "init", "rubric", str(items), "-o", str(out)]) == 2  # no overwrite
    _label(tasks, "alice", 0, _scores(7, 5, 9))
    assert main(["label", "status", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "alice" in printed and "1 / 2" in printed and "0 / 2" in printed
    assert main(["label", "export", str(out), str(tmp_path / "golden.jsonl")]) == 0
    assert "1 rows from 1 annotator" in capsys.readouterr().out
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: rubric\ntitle: T\nitems: nowhere.jsonl\n")
    assert main(["label", "export", str(bad), str(tmp_path / "x.jsonl")]) == 2
    assert "nowhere.jsonl: items file not found" in capsys.readouterr().err


def test_init_from_a_run_folder_finds_the_study_file(tmp_path: Path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "generated.jsonl").write_text(
        json.dumps({"id": "gen_1", "problem": "P", "answer": "1", "solution": "S"}) + "\n"
    )
    assert main(["label", "init", "verification", str(run), "-o", str(tmp_path / "v.yaml")]) == 0
    assert load_tasks(tmp_path / "v.yaml").items[0].id == "gen_1"
    assert main(["label", "init", "rubric", str(run), "-o", str(tmp_path / "r.yaml")]) == 2


def test_two_tasks_sharing_a_labels_folder_keep_and_export_their_own_labels(tmp_path):
    # Before: task B's label of item 0 by alice was taken for task A's too (current labels
    # keyed by annotator and item only): A's server showed it done, A's status counted one
    # label and A's export wrote 0 rows, without a word; revisions counted across tasks.
    import yaml

    write_tasks(tmp_path, "rubric", RUBRIC)
    for name in ("A", "B"):
        body = {"kind": "rubric", "title": name, "items": "items.jsonl", "labels": "shared",
                "item_order": "fixed"}  # fmt: skip
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(body))
    a, b = load_tasks(tmp_path / "A.yaml"), load_tasks(tmp_path / "B.yaml")
    assert a.labels_dir == b.labels_dir and a.name != b.name
    _label(a, "alice", 0, _scores(7, 7, 7))
    _label(b, "alice", 0, _scores(2, 2, 2))
    assert [r.revision for r in LabelStore(a.labels_dir).read("alice")] == [1, 1]
    done = export_labels(a, tmp_path / "a.jsonl")
    rows = [json.loads(x) for x in done.path.read_text().splitlines()]
    assert done.rows == 1 and rows[0]["human_accuracy"] == 7
    status = label_status(a).set_index("annotator")
    assert (status.loc["alice", "done"], status.loc["alice", "edits"]) == (1, 0)
    assert [
        json.loads(x)["human_accuracy"]
        for x in export_labels(b, tmp_path / "b.jsonl").path.read_text().splitlines()
    ] == [2]


def test_unwritable_outputs_and_a_bad_port_are_one_line(tmp_path, capsys):
    # Before: a traceback each (FileExistsError for /dev/full/x, OverflowError for the port),
    # and a CSV export cut by a full disk replaced the last good one with half a file
    tasks = write_tasks(tmp_path, "rubric", RUBRIC)
    _label(tasks, "alice", 0, _scores(7, 5, 9))
    for argv in (["label", "export", str(tasks.path), "/dev/full/x.jsonl"],
                 ["label", "init", "rubric", str(tmp_path / "items.jsonl"), "-o",
                  "/dev/full/x.yaml"]):  # fmt: skip
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("evalbench label: /dev/full/x.") and err.count("\n") == 1, err
    with pytest.raises(SystemExit) as caught:
        main(["label", "serve", str(tasks.path), "--port", "99999"])
    assert caught.value.code == 2 and "99999 is no port" in capsys.readouterr().err


def test_a_csv_export_is_written_whole_or_not_at_all(tmp_path, monkeypatch):
    from evalbench.labels import exports

    tasks = write_tasks(tmp_path, "rubric", RUBRIC)
    _label(tasks, "alice", 0, _scores(7, 5, 9))
    out = export_labels(tasks, tmp_path / "golden.csv").path
    good = out.read_text()

    def full(*args, **kw):
        raise OSError(27, "File too large")

    monkeypatch.setattr(exports, "write_atomic", full)
    _label(tasks, "bob", 1, _scores(4, 4, 4))
    with pytest.raises(OSError):
        export_labels(tasks, out)
    assert out.read_text() == good
