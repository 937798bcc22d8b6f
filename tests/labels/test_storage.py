"""Label files: append-only, flushed per label, locked, torn lines, edits, bad lines."""

from __future__ import annotations

import json
import multiprocessing
from datetime import datetime, timezone

import pytest

from evalbench.labels import LabelFileError, LabelRecord, LabelStore, current_labels, read_labels
from evalbench.labels.storage import labels_frame, stale_labels


def _record(item: str, annotator: str = "alice", score: float = 5, **extra) -> LabelRecord:
    return LabelRecord(
        task="t", kind="rubric", item=item, item_digest="d", annotator=annotator,
        time=datetime(2026, 1, 1, tzinfo=timezone.utc), position=0,
        scores={"accuracy": score}, **extra,
    )  # fmt: skip


def test_appends_are_on_disk_one_line_each_and_edits_get_the_next_revision(tmp_path):
    store = LabelStore(tmp_path)
    assert store.append(_record("q1", score=3)).revision == 1
    assert store.append(_record("q2")).revision == 1
    assert store.append(_record("q1", score=8)).revision == 2
    lines = (tmp_path / "alice.jsonl").read_text().splitlines()
    assert [json.loads(x)["revision"] for x in lines] == [1, 1, 2]
    current = {r.item: r.scores["accuracy"] for r in current_labels(store.read("alice"))}
    assert current == {"q1": 8, "q2": 5}
    assert store.annotators() == ["alice"]


def test_a_torn_last_line_is_skipped_and_cut_before_the_next_append(tmp_path):
    store = LabelStore(tmp_path)
    store.append(_record("q1"))
    with open(tmp_path / "alice.jsonl", "a") as fh:
        fh.write('{"task": "t", "kind": "rub')  # a crash mid-write: never acknowledged
    assert [r.item for r in store.read("alice")] == ["q1"]
    store.append(_record("q2"))
    lines = (tmp_path / "alice.jsonl").read_text().splitlines()
    assert [json.loads(x)["item"] for x in lines] == ["q1", "q2"]


def test_a_bad_line_names_the_file_line_and_field(tmp_path):
    store = LabelStore(tmp_path)
    store.append(_record("q1"))
    with open(tmp_path / "alice.jsonl", "a") as fh:
        fh.write(json.dumps({**_record("q2").model_dump(mode="json"), "status": "maybe"}) + "\n")
    with pytest.raises(LabelFileError, match=r"alice.jsonl:2: field 'status'"):
        read_labels(tmp_path)
    (tmp_path / "bob.jsonl").write_text("\n[1, 2]\n")
    with pytest.raises(LabelFileError, match=r"bob.jsonl:2: field '\(line\)'"):
        read_labels(tmp_path / "bob.jsonl")


def test_an_annotator_name_cannot_escape_the_folder(tmp_path):
    with pytest.raises(ValueError, match="annotator name"):
        LabelStore(tmp_path).read("../x")
    with pytest.raises(ValueError):
        _record("q1", annotator="../x")


def _hammer(folder: str, worker: int) -> None:
    store = LabelStore(folder)
    for k in range(25):
        store.append(_record(f"q{k % 3}", score=worker * 100 + k))


@pytest.mark.slow
def test_two_processes_appending_to_one_file_lose_nothing(tmp_path):
    """Two servers on one folder (or two tabs): the file lock keeps every line whole."""
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_hammer, args=(str(tmp_path), w)) for w in (1, 2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert all(p.exitcode == 0 for p in procs)
    labels = read_labels(tmp_path)
    assert sorted(r.scores["accuracy"] for r in labels) == sorted(
        w * 100 + k for w in (1, 2) for k in range(25))  # fmt: skip
    for item in ("q0", "q1", "q2"):
        revs = sorted(r.revision for r in labels if r.item == item)
        assert revs == list(range(1, len(revs) + 1))  # 17 + 16 + 17 lines, no repeats


def test_stale_labels_and_the_frame(tmp_path):
    labels = [_record("q1"), _record("q2", annotator="bob", comment="hm")]
    assert stale_labels(labels, {"q1": "d", "q2": "other"}) == [labels[1]]
    frame = labels_frame(labels)
    assert list(frame["score_accuracy"]) == [5, 5] and list(frame["comment"]) == ["", "hm"]


@pytest.mark.parametrize("target", ["a file with lines", "an empty file", "no file yet"])
def test_a_label_file_that_is_a_link_is_refused_and_what_it_names_is_untouched(tmp_path, target):
    # a labels folder from elsewhere (an archive, a share) with a planted link: an append, or
    # the cut of a "torn" last line, wrote through it into the file it names
    outside = tmp_path / "outside.txt"
    body = {"a file with lines": b"precious\nno newline at end", "an empty file": b""}
    if target in body:
        outside.write_bytes(body[target])
    folder = tmp_path / "labels"
    folder.mkdir()
    (folder / "alice.jsonl").symlink_to(outside)
    store = LabelStore(folder)
    with pytest.raises(
        LabelFileError,
        match=r"alice\.jsonl: a symbolic link; labels are read "
        r"and written only in the labels folder itself",
    ):
        store.append(_record("q1"))
    with pytest.raises(LabelFileError, match="a symbolic link"):
        store.read("alice")
    with pytest.raises(LabelFileError, match="a symbolic link"):
        read_labels(folder)
    assert outside.read_bytes() == body[target] if target in body else not outside.exists()


def test_a_folder_named_like_a_label_file_is_one_line_naming_it(tmp_path):
    (tmp_path / "dave.jsonl").mkdir()
    LabelStore(tmp_path).append(_record("q1"))
    with pytest.raises(LabelFileError, match=r"dave\.jsonl: a folder, not a label file"):
        read_labels(tmp_path)
    with pytest.raises(LabelFileError, match=r"dave\.jsonl: a folder, not a label file"):
        LabelStore(tmp_path).append(_record("q1", annotator="dave"))
