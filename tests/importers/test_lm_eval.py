"""lm-evaluation-harness outputs: the files lm_eval 0.4.13 wrote (``data/lm_eval_dummy``, its
``dummy`` model on two 2-item tasks) and small files in the documented format."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from evalbench.history import compare_runs
from evalbench.importers import OutcomeError, detect, read_outcomes
from evalbench.importers.lm_eval import date_id, task_of

DUMMY = Path(__file__).parent / "data" / "lm_eval_dummy"
DATE = "2026-11-23T19-55-15.106249"


def test_the_real_output_folder_reads_into_outcomes():
    run = read_outcomes(DUMMY)
    assert detect(DUMMY) == "lm_eval" and run.source == "lm_eval"
    assert run.benchmark == "lm_eval:evalbench_gen,evalbench_mc"
    assert run.systems == ["i82qcls7"]  # lm-eval's random model_name for --model dummy
    assert run.simulated == {"i82qcls7"}  # the dummy model answers "lol" / random log-probs
    frame = run.outcomes.set_index(["item_id", "metric"])
    assert frame.loc[("evalbench_gen/0", "exact_match"), "value"] == 0.0
    assert frame.loc[("evalbench_mc/1", "acc"), "task"] == "evalbench_mc"
    assert len(frame) == 4 and run.slices == ("task",)
    assert run.meta["run_id"] == DATE and run.meta["started_at"].startswith("2026-11-23T")


def test_a_results_file_or_a_samples_file_names_the_same_run():
    results = read_outcomes(DUMMY / f"results_{DATE}.json")
    assert len(results.outcomes) == 4
    one = read_outcomes(DUMMY / f"samples_evalbench_mc_{DATE}.jsonl")
    assert one.benchmark == "lm_eval:evalbench_mc" and len(one.outcomes) == 2
    assert task_of(DUMMY / f"samples_evalbench_mc_{DATE}.jsonl") == "evalbench_mc"
    assert date_id(DUMMY / f"results_{DATE}.json") == DATE


def write_run(
    folder: Path, model: str, exact: list[float], date: str = "2026-01-01T00-00-00.1"
) -> Path:
    """An lm-eval output folder: gsm8k-style generation with two filters and a corpus metric."""
    folder.mkdir(parents=True)
    results = {
        "results": {"toy": {"name": "toy", "alias": "toy", "sample_len": len(exact)}},
        "higher_is_better": {"toy": {"exact_match": True, "bleu": True}},
        "config": {"model": "hf", "model_args": {"pretrained": model}},
        "model_name": model, "date": 1767225600.0, "git_hash": "abc1234",
    }  # fmt: skip
    (folder / f"results_{date}.json").write_text(json.dumps(results))
    lines = []
    for doc_id, value in enumerate(exact):
        for flt, v in (("strict-match", value), ("flexible-extract", 1.0)):
            lines.append({
                "doc_id": doc_id, "doc": {"q": doc_id}, "target": "1", "arguments": {},
                "resps": [["1"]], "filtered_resps": ["1"], "filter": flt,
                "metrics": ["exact_match", "bleu"], "exact_match": v,
                "bleu": [["ref"], "pred"],  # corpus-level: (references, prediction)
                "doc_hash": "h", "prompt_hash": "h", "target_hash": "h",
            })  # fmt: skip
    (folder / f"samples_toy_{date}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return folder


def test_filters_are_metrics_and_corpus_metrics_are_left_out_with_a_note(tmp_path):
    run = read_outcomes(write_run(tmp_path / "m", "org/model-a", [1.0, 0.0, 1.0]))
    assert set(run.outcomes["metric"]) == {
        "exact_match,strict-match",
        "exact_match,flexible-extract",
    }
    assert any("bleu" in note and "corpus-level" in note for note in run.notes)
    assert run.systems == ["org/model-a"] and run.simulated == frozenset()
    assert run.meta["commit"] == "abc1234"


def test_two_lm_eval_runs_compare_item_by_item(tmp_path):
    a = read_outcomes(write_run(tmp_path / "a", "org/model-a", [1, 0, 1, 1, 0, 1, 1, 1]))
    b = read_outcomes(write_run(tmp_path / "b", "org/model-b", [0, 0, 0, 1, 0, 0, 0, 1]))
    found = compare_runs([a, b], metrics=["exact_match,strict-match"], rounds=100)
    row = found.tests.iloc[0]
    # one system in each run: model-a (A) vs model-b (B); right only in A: docs 0, 2, 5, 6
    assert (row.system_a, row.system_b) == ("org/model-a", "org/model-b")
    assert (row.discordant_a, row.discordant_b) == (4, 0)
    assert row.p == pytest.approx(2 / 16)  # 2 × 2^-4
    assert any("one system in each run" in note for note in found.notes)


def test_bad_lines_and_missing_samples_are_one_line_each(tmp_path):
    folder = write_run(tmp_path / "bad", "m", [1.0])
    samples = next(folder.glob("samples_*.jsonl"))
    samples.write_text(samples.read_text() + '{"doc_id": 9, "filter": "none"}\n')
    with pytest.raises(OutcomeError, match=r"samples_toy_.*\.jsonl:3: metrics: missing field"):
        read_outcomes(folder)
    samples.unlink()
    with pytest.raises(OutcomeError, match="--log_samples"):
        read_outcomes(folder / "results_2026-01-01T00-00-00.1.json")


@pytest.mark.parametrize(
    ("text", "shown"),
    [("Infinity", "Infinity"), ("-Infinity", "-Infinity"), ("NaN", "NaN"),
     ('"yes"', '"yes"'), ("null", "null"), ('"0.5"', '"0.5"')],
)  # fmt: skip
def test_a_malformed_per_sample_value_names_file_line_and_metric(tmp_path, text, shown):
    """Not a number and not a corpus metric's pieces (a list): bad input, never a silent
    drop blamed on a corpus-level metric, never a number (lm-eval has no unscored value)."""
    folder = write_run(tmp_path / "m", "m", [1.0, 0.0])
    samples = next(folder.glob("samples_*.jsonl"))
    lines = samples.read_text().splitlines()
    lines[2] = lines[2].replace('"exact_match": 0.0', f'"exact_match": {text}')
    samples.write_text("\n".join(lines) + "\n")
    pattern = rf"samples_toy_.*\.jsonl:3: exact_match: {re.escape(shown)} is not a per-item number"
    with pytest.raises(OutcomeError, match=pattern):
        read_outcomes(folder)
