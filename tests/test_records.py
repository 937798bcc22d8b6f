"""The append-only record store: flush per record, resume, torn tails, atomic rewrites."""

from __future__ import annotations

import json

import pytest

from evalbench.records import Battle, CorruptRecords, RecordStore, read_jsonl, write_jsonl


def test_append_flushes_each_record_and_a_reopened_store_resumes(tmp_path):
    path = tmp_path / "records" / "r.jsonl"
    store = RecordStore(path, ["system", "id"])
    store.append({"system": "a", "id": 1, "x": 0.5})
    # flushed: another reader sees the line before the store is closed or dropped
    assert json.loads(path.read_text().splitlines()[0]) == {"system": "a", "id": 1, "x": 0.5}
    store.append(
        Battle(model_a="m1", model_b="m2", winner="a").model_dump() | {"system": "b", "id": 2}
    )
    again = RecordStore(path, ["system", "id"])
    assert len(again) == 2 and again.done_keys() == {("a", 1), ("b", 2)}


def test_a_key_is_written_at_most_once(tmp_path):
    store = RecordStore(tmp_path / "r.jsonl", ["id"])
    store.append({"id": "q1"})
    with pytest.raises(ValueError, match="already written"):
        store.append({"id": "q1", "other": 1})
    assert len(RecordStore(tmp_path / "r.jsonl", ["id"])) == 1


def test_a_torn_last_line_is_dropped_on_resume(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"id": 1}\n{"id": 2}\n{"id": 3, "tex')  # killed mid-write
    store = RecordStore(path, ["id"])
    assert [r["id"] for r in store.rows()] == [1, 2]
    assert path.read_text() == '{"id": 1}\n{"id": 2}\n'  # truncated to the last full line
    store.append({"id": 3})
    assert [r["id"] for r in read_jsonl(path)] == [1, 2, 3]


def test_a_last_line_torn_inside_a_character_is_dropped_on_resume(tmp_path):
    # Before: a kill -9 that cut a record's "é" (2 bytes in UTF-8) in half left a file every
    # later resume failed on with UnicodeDecodeError: the run could never be resumed
    path = tmp_path / "r.jsonl"
    whole = '{"id": 2, "text": "café"}'.encode()
    path.write_bytes(
        b'{"id": 1, "text": "\xc3\xa9t\xc3\xa9"}\n' + whole[: whole.index(b"\xc3") + 1]
    )
    store = RecordStore(path, ["id"])
    assert [r["text"] for r in store.rows()] == ["été"]
    assert path.read_bytes() == b'{"id": 1, "text": "\xc3\xa9t\xc3\xa9"}\n'
    store.append({"id": 2, "text": "café"})
    assert [r["text"] for r in read_jsonl(path)] == ["été", "café"]


def test_a_whole_line_that_is_not_utf8_is_an_error_naming_line_and_offset(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'{"id": 1}\n{"id": 2, "t": "caf\xe9"}\n{"id": 3}\n')
    with pytest.raises(CorruptRecords) as err:
        RecordStore(path, ["id"])
    assert str(err.value) == f"{path}:2: not UTF-8: byte 0xe9 at offset 29"
    assert path.read_bytes().index(b"\xe9") == 29  # nothing truncated: not the last line


def test_a_corrupt_line_in_the_middle_is_an_error_naming_the_line(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"id": 1}\nnot json\n{"id": 3}\n')
    with pytest.raises(CorruptRecords, match=r"r\.jsonl:2: not JSON"):
        RecordStore(path, ["id"])
    with pytest.raises(CorruptRecords, match=r"r\.jsonl:2"):
        read_jsonl(path)


def test_drop_where_rewrites_atomically_and_frees_the_keys(tmp_path):
    path = tmp_path / "r.jsonl"
    store = RecordStore(path, ["id"])
    store.extend([{"id": i, "error": "boom" if i % 2 else None} for i in range(5)])
    assert store.drop_where(lambda r: r["error"] is not None) == 2  # ids 1 and 3
    assert [r["id"] for r in read_jsonl(path)] == [0, 2, 4]
    store.append({"id": 1, "error": None})  # the retried call
    assert sorted(r["id"] for r in RecordStore(path, ["id"]).rows()) == [0, 1, 2, 4]


def test_list_valued_keys_are_hashable(tmp_path):
    store = RecordStore(tmp_path / "r.jsonl", ["k"])
    store.append({"k": [1, {"a": 2}]})
    assert ((1, (("a", 2),)),) in store


def test_write_jsonl_leaves_no_temporary_file(tmp_path):
    out = write_jsonl(
        tmp_path / "out.jsonl", [{"a": 1}, Battle(model_a="x", model_b="y", winner="tie")]
    )
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]
    assert read_jsonl(out)[1]["winner"] == "tie"


def test_battle_rejects_an_unknown_winner():
    with pytest.raises(ValueError, match="winner"):
        Battle(model_a="x", model_b="y", winner="draw")


def test_a_file_two_writers_appended_to_is_read_once_per_key(tmp_path):
    # Before run folders were locked, two runs of one study appended the same keys: each
    # key counts once (the last written), so usage and cost are not doubled.
    path = tmp_path / "r.jsonl"
    rows = [{"system": "s", "key": "a", "v": 1}, {"system": "s", "key": "b", "v": 1},
            {"system": "s", "key": "a", "v": 2}]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    store = RecordStore(path, ("system", "key"))
    assert store.rows() == [rows[1], rows[2]] and store.duplicates == 1


def _strict(constant):
    raise ValueError(f"{constant} is not JSON")


def test_records_are_strict_json_and_a_float_field_reads_null_back_as_nan(tmp_path):
    import math

    import numpy as np
    import pandas as pd

    from evalbench.records import Rating, to_json

    frame = pd.DataFrame({"tokens": [120, None], "x": [np.inf, -np.inf]})  # NaN for the gap
    write_jsonl(tmp_path / "a.jsonl", frame.to_dict(orient="records"))
    store = RecordStore(tmp_path / "b.jsonl", ["k"])
    store.append({"k": 1, "v": np.float32("nan"), "w": [np.float64(2.5), math.nan]})
    lines = [*(tmp_path / "a.jsonl").read_text().splitlines(),
             *(tmp_path / "b.jsonl").read_text().splitlines()]  # fmt: skip
    rows = [json.loads(line, parse_constant=_strict) for line in lines]
    assert rows == [{"tokens": 120.0, "x": None}, {"tokens": None, "x": None},
                    {"k": 1, "v": None, "w": [2.5, None]}]  # fmt: skip
    assert to_json({"n": np.int64(3), "a": np.array([1.0, np.nan])}) == '{"n": 3, "a": [1.0, null]}'
    fields = dict(dataset="d", model="m", rating=1.0, ci_low=0.0, ci_high=2.0, n_battles=3,
                  level=0.95, rounds=10, degenerate_rounds=0)  # fmt: skip
    back = Rating.model_validate(json.loads(to_json({**fields, "online_elo": math.nan})))
    assert math.isnan(back.online_elo)  # "NaN where battles have no order", as before


@pytest.mark.slow
def test_two_writers_replacing_one_file_never_fail_or_mix(tmp_path):
    # e.g. two `evalbench run` of different studies rebuilding outputs/index.html at once
    import threading

    from evalbench.records import write_atomic

    target, failures, torn = tmp_path / "index.json", [], []

    def write(who: str) -> None:
        for i in range(300):
            try:
                write_atomic(target, json.dumps({"who": who, "i": i, "pad": "x" * 50_000}))
                json.loads(target.read_text())  # what a reader sees at any moment
            except OSError as exc:
                failures.append(exc)
            except ValueError as exc:
                torn.append(exc)

    threads = [threading.Thread(target=write, args=(who,)) for who in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures and not torn, (failures[:2], torn[:2])
    assert [p.name for p in tmp_path.iterdir()] == ["index.json"]  # no temp file left


@pytest.mark.parametrize("target_text", [None, "ssh-ed25519 AAAA me@host"])
def test_a_record_file_that_is_a_link_is_refused_and_its_target_left_alone(tmp_path, target_text):
    # A run folder from elsewhere (an archive) whose records/x.jsonl links out of it. Before:
    # a target without a final newline was read as one torn record and emptied, then
    # appended to; a missing target was created outside the run folder.
    target = tmp_path / "authorized_keys"
    if target_text is not None:
        target.write_text(target_text)
    link = tmp_path / "run" / "records" / "x.jsonl"
    link.parent.mkdir(parents=True)
    link.symlink_to(target)
    with pytest.raises(CorruptRecords) as caught:
        RecordStore(link, ["key"]).append({"key": 1})
    assert str(caught.value) == (
        f"{link}: a symbolic link; records are read and written only in the run folder "
        "itself (delete the link, then run again)"
    )
    assert (target.read_text() if target_text is not None else target.exists()) == (
        target_text if target_text is not None else False
    )


def test_a_records_folder_that_is_a_link_is_refused(tmp_path):
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "records").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    path = tmp_path / "run" / "records" / "x.jsonl"
    with pytest.raises(CorruptRecords, match="a symbolic link"):
        RecordStore(path, ["key"]).append({"key": 1})
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_the_sweep_readers_of_a_killed_cell_skip_a_line_torn_inside_a_character(tmp_path):
    # a cell killed mid-write: its records and its in-flight note end inside an "é"; the
    # readers that count its calls at resume skip that line as they skip any torn one
    from evalbench.sweeps.data import IN_FLIGHT, recorded_tokens, unanswered

    call = {"system": "s", "key": "k1", "request_key": "r1", "prompt_tokens": 3,
            "completion_tokens": 4, "text": "café"}  # fmt: skip
    torn = json.dumps({**call, "key": "k2", "request_key": "r2"}, ensure_ascii=False).encode()
    (tmp_path / "records").mkdir()
    (tmp_path / "records" / "responses.jsonl").write_bytes(
        json.dumps(call, ensure_ascii=False).encode() + b"\n" + torn[: torn.index(b"\xc3") + 1]
    )
    note = json.dumps({"system": "s", "key": "r9", "q": "é"}, ensure_ascii=False).encode()
    (tmp_path / IN_FLIGHT).write_bytes(b'{"system": "s", "key": "r3"}\n' + note[:-3])
    assert recorded_tokens(tmp_path) == {"r1": (3, 4)}
    assert unanswered(tmp_path, lambda key: False) == [["s", "r3"]]
    # a failed run's usage, read from its records: a file whose only line is torn is no call
    from evalbench.runs import recorded_calls

    (tmp_path / "records" / "answers.jsonl").write_bytes(torn[: torn.index(b"\xc3") + 1])
    assert recorded_calls(tmp_path)["calls"].tolist() == [1]
