"""JSON nested deeper than the parser's recursion limit in a record file or a run manifest:
one error naming file:line, never a RecursionError traceback."""

from __future__ import annotations

import pytest

from evalbench.records import CorruptRecords, RecordStore, read_jsonl
from evalbench.runs import current_manifest, read_manifest

DEEP = "[" * 100_000 + "]" * 100_000
TOO_DEEP = "nested too deeply to read (JSON deeper than the parser's recursion limit)"


def test_a_deep_record_line_is_an_error_naming_its_line(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"id": 1}\n\n{"id": ' + DEEP + "}\n" + '{"id": 3}\n')
    with pytest.raises(CorruptRecords) as err:
        read_jsonl(path)
    assert str(err.value) == f"{path}:3: {TOO_DEEP}"  # line 3: the blank line 2 counts
    with pytest.raises(CorruptRecords, match=r"r\.jsonl:3: nested too deeply"):
        RecordStore(path, ["id"])


def test_a_deep_manifest_names_its_file_and_is_a_failed_run(tmp_path):
    (tmp_path / "manifest.json").write_text('{"status": ' + DEEP + "}")
    with pytest.raises(ValueError) as err:
        read_manifest(tmp_path)
    assert str(err.value) == f"{tmp_path / 'manifest.json'}:1: not JSON ({TOO_DEEP})"
    found = current_manifest(tmp_path)
    assert found == {"status": "failed", "reason": f"unreadable manifest: {err.value}"}


def test_a_broken_manifest_names_its_file_and_line(tmp_path):
    (tmp_path / "manifest.json").write_text('{\n  "a": 1,\n  "b": oops\n}')
    with pytest.raises(ValueError, match=r"manifest\.json:3: not JSON \(Expecting"):
        read_manifest(tmp_path)


def _label_file(tmp_path):
    from evalbench.labels import read_labels

    (tmp_path / "alice.jsonl").write_text('{"item": ' + DEEP + "}\n")
    return lambda: read_labels(tmp_path), r"alice\.jsonl:1: not JSON \(nested too deeply"


def _hle_lines(tmp_path):
    from evalbench.hle.data import jsonl_rows

    (tmp_path / "q.jsonl").write_text('{"id": "a"}\n{"id": ' + DEEP + "}\n")
    return lambda: list(jsonl_rows(tmp_path / "q.jsonl")), r"q\.jsonl:2: not valid JSON \(nested"


def _hle_predictions(tmp_path):
    from evalbench.hle.data import read_predictions

    (tmp_path / "p.json").write_text('{"q1": ' + DEEP + "}")
    return lambda: read_predictions(tmp_path / "p.json"), r"p\.json:1: not valid JSON \(nested"


def _gaia_metadata(tmp_path):
    from evalbench.gaia.data import _rows

    (tmp_path / "metadata.jsonl").write_text('{"task_id": ' + DEEP + "}\n")
    return lambda: list(_rows(tmp_path / "metadata.jsonl")), r"metadata\.jsonl:1: not valid JSON"


def _verifications(tmp_path):
    from evalbench.datagen.verification import load_verifications

    (tmp_path / "v.json").write_text('{"p1": ' + DEEP + "}")
    return lambda: load_verifications(tmp_path / "v.json"), r"v\.json: not JSON \(nested too"


def _batch_log(tmp_path):
    from evalbench.models.batch import BatchLog

    (tmp_path / "batches.jsonl").write_text('{"event": ' + DEEP + "}\n")
    return lambda: BatchLog(tmp_path, "s").entries(), r"batches\.jsonl:1: not a JSON line"


READERS = {"label file": _label_file, "hle jsonl": _hle_lines, "hle predictions":
           _hle_predictions, "gaia metadata": _gaia_metadata, "datagen verifications":
           _verifications, "batch log": _batch_log}  # fmt: skip


@pytest.mark.parametrize("kind", READERS)
def test_every_reader_of_a_json_file_names_it_when_it_nests_too_deeply(tmp_path, kind):
    read, message = READERS[kind](tmp_path)
    with pytest.raises(ValueError, match=message):
        read()
