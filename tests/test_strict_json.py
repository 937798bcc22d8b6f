"""Every JSON file evalbench writes outside the record store is strict JSON too: a missing
number (NaN, ±Infinity) is ``null``, never the ``NaN`` literal no other parser reads."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from labels.helpers import write_tasks

from evalbench.bfcl.data import write_results
from evalbench.bfcl.schema import ResultLine
from evalbench.history.cli import _request_file
from evalbench.hle.data import write_predictions
from evalbench.labels import LabelStore, export_labels
from evalbench.labels.views import parse_label
from evalbench.models.batch import _chunks
from evalbench.models.types import ChatRequest, ModelSpec
from evalbench.params import parse_yaml

NAN = math.nan


def strict(text: str) -> Any:
    """Parse JSON, refusing the NaN / Infinity literals (as JSON.parse and jq do)."""

    def refuse(literal: str) -> Any:
        raise ValueError(f"not strict JSON: {literal}")

    return json.loads(text, parse_constant=refuse)


def _label(tmp_path: Path) -> Any:
    tasks = write_tasks(
        tmp_path / "task", "rubric", [{"item": "q1", "question": "Q", "answer": "A"}]
    )
    body = {"scores": {"accuracy": 7, "completeness": 5, "clarity": 9}}
    record = parse_label(tasks, tasks.items[0], "alice", 0, body)
    return tasks, record.model_copy(update={"scores": {"accuracy": NAN, "clarity": 9.0}})


def label_file(tmp_path: Path) -> tuple[str, Any]:
    _, record = _label(tmp_path)
    store = LabelStore(tmp_path / "labels")
    store.append(record)
    line = (tmp_path / "labels" / "alice.jsonl").read_text(encoding="utf-8")
    return line, lambda row: row["scores"]["accuracy"]


def label_export(tmp_path: Path) -> tuple[str, Any]:
    tasks, record = _label(tmp_path)
    done = export_labels(tasks, tmp_path / "golden.jsonl", labels=[record])
    return done.path.read_text(encoding="utf-8"), lambda row: row["human_accuracy"]


def bfcl_result_file(tmp_path: Path) -> tuple[str, Any]:
    line = ResultLine(id="simple_0", category="simple", result="f(x=1)", latency=NAN)
    (path,) = write_results([line], tmp_path, "m")
    return path.read_text(encoding="utf-8"), lambda row: row["latency"]


def hle_predictions(tmp_path: Path) -> tuple[str, Any]:
    entries = {"q1": {"model": "m", "response": "r", "usage": {"cost": NAN}}}
    text = write_predictions(tmp_path / "preds.json", entries).read_text(encoding="utf-8")
    return text, lambda doc: doc["q1"]["usage"]["cost"]


def batch_input_line(tmp_path: Path) -> tuple[str, Any]:
    spec = ModelSpec(name="s", provider="openai", model="m", base_url="http://127.0.0.1:9")
    request = ChatRequest(messages=[{"role": "user", "content": "hi"}], temperature=NAN)
    ((_, data),) = next(_chunks(["k1"], {"k1": request}, spec))
    return data.decode(), lambda row: row["body"]["temperature"]


WRITERS: dict[str, Callable[[Path], tuple[str, Any]]] = {
    "label file": label_file,
    "label export": label_export,
    "bfcl result file": bfcl_result_file,
    "hle predictions": hle_predictions,
    "batch input line": batch_input_line,
}


@pytest.mark.parametrize("kind", WRITERS)
def test_a_nan_is_written_as_null(tmp_path, kind):
    text, where = WRITERS[kind](tmp_path)
    docs = (
        [strict(x) for x in text.splitlines() if x.strip()]
        if kind != "hle predictions"
        else [strict(text)]
    )
    assert len(docs) == 1 and where(docs[0]) is None


def test_a_compare_request_reads_back_as_written(tmp_path, monkeypatch):
    """Names YAML 1.1 leaves bare but the core schema reads as numbers stay text."""
    from types import SimpleNamespace

    monkeypatch.setenv("EVALBENCH_OUTPUTS", str(tmp_path / "out"))
    run = SimpleNamespace(label="1e3", path=tmp_path / "a", source="evalbench")
    args = SimpleNamespace(
        seed=0, rounds=100, pair=[("1e3", "-.5")], metric=["0o17"], errors="wrong",
        alpha=0.05, min_drop=0.0, slice=None, max_log_mb=None,
    )  # fmt: skip
    path = _request_file(args, [run, run])
    params = parse_yaml(path.read_text(encoding="utf-8"), str(path))
    assert params["pairs"] == [["1e3", "-.5"]] and params["metrics"] == ["0o17"]
