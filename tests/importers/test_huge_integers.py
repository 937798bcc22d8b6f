"""Integers past a float's range in the files the importers read. JSON sets no limit on an
integer; a float stops near 1.8e308, so ``float(int("9" * 400))`` raises OverflowError. Such a
value is refused in one line naming where, as ``1e400`` (read as Infinity) already was; before,
a traceback (found by attack: ``evalbench compare`` on lm-eval samples)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from evalbench.cli import main
from evalbench.importers import OutcomeError, read_outcomes
from evalbench.importers.inspect_logs import read_inspect_samples, score_values, to_float
from evalbench.importers.outcomes import shown

HUGE = int("9" * 400)  # 10**400 - 1 > 1.8e308, the largest float
SHOWN = "99999999999999999999… (400 digits)"  # its first 20 digits, then how many there are
DATE = "2024-01-01T00-00-00"


def _lm_eval(folder: Path, values: list[int], date: object = None) -> Path:
    """An lm-eval output folder: task ``t``, one ``acc`` per sample (line i + 1 is doc i)."""
    folder.mkdir(parents=True)
    results = {"results": {"t": {"acc,none": 0.5}}, "model_name": "m", "config": {"model": "m"},
               "higher_is_better": {"t": {"acc": True}}}  # fmt: skip
    if date is not None:
        results["date"] = date
    (folder / f"results_{DATE}.json").write_text(json.dumps(results))
    lines = [{"doc_id": i, "doc": {}, "target": "x", "filter": "none", "metrics": ["acc"],
              "acc": v} for i, v in enumerate(values)]  # fmt: skip
    (folder / f"samples_t_{DATE}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return folder


@pytest.mark.parametrize("sign", [1, -1])
def test_an_lm_eval_value_past_a_floats_range_names_file_line_and_metric(tmp_path, sign):
    folder = _lm_eval(tmp_path / "b", [1, 0, 1, 1, 0, 1, 1, sign * HUGE, 0, 1])  # doc 7: line 8
    shown = SHOWN if sign > 0 else f"-{SHOWN}"
    pattern = re.escape(f"samples_t_{DATE}.jsonl:8: acc: {shown} is not a per-item number")
    with pytest.raises(OutcomeError, match=pattern):
        read_outcomes(folder)


def test_compare_on_it_is_one_line_and_exit_2(tmp_path, capsys):
    base = _lm_eval(tmp_path / "a", [1, 0] * 5)
    cand = _lm_eval(tmp_path / "b", [1, 0, 1, 1, 0, 1, 1, HUGE, 0, 1])
    assert main(["compare", "--no-report", str(base), str(cand)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == (
        f"evalbench: {cand}/samples_t_{DATE}.jsonl:8: acc: {SHOWN} is not a per-item number "
        "(a finite number, or a corpus metric's list)\n"
    )


@pytest.mark.parametrize(
    ("date", "shown"),
    [(HUGE, SHOWN), (1e300, "1e+300"), (math.nan, "NaN")],
    ids=["int", "float", "nan"],
)
def test_an_lm_eval_date_no_clock_reaches_names_the_results_file(tmp_path, date, shown):
    """lm-eval writes ``date`` as seconds since 1970 (``time.time()``); a timestamp holds
    years 1677-2262, so 1e300 s (about 3e292 years) is no time either."""
    folder = _lm_eval(tmp_path / "b", [1, 0], date=date)
    pattern = re.escape(f"results_{DATE}.json: date: {shown} is not a time (seconds since 1970)")
    with pytest.raises(OutcomeError, match=pattern):
        read_outcomes(folder)


def test_an_inspect_score_past_a_floats_range_is_infinite_and_refused():
    """inspect keeps the integer (its ``Score.value`` may be an int); as a float it is ±inf,
    as ``float("1e400")`` is, and an infinite score is refused naming where."""
    assert to_float(HUGE) == math.inf and to_float(-HUGE) == -math.inf
    with pytest.raises(OutcomeError, match=re.escape(f"x.eval: grade: {SHOWN} is not a finite")):
        score_values("grade", HUGE, "x.eval: ")
    with pytest.raises(OutcomeError, match=re.escape(f"grade/acc: -{SHOWN} is not a finite")):
        score_values("grade", {"acc": -HUGE})


@pytest.mark.slow
@pytest.mark.xdist_group("inspect_ai")
@pytest.mark.filterwarnings("ignore:The 'initial' parameter is deprecated")
def test_an_inspect_log_with_it_names_the_log_sample_and_scorer(hand_log, tmp_path):
    path = hand_log(tmp_path / "huge.json", {"s1": 1, "s2": HUGE})  # inspect's own writer
    pattern = re.escape(f"huge.json: sample 's2' epoch 1: grade: {SHOWN} is not a finite number")
    with pytest.raises(OutcomeError, match=pattern):
        read_outcomes(path)
    assert read_inspect_samples(path)["value"].tolist() == [1.0, math.inf]


def test_an_evalbench_record_with_it_names_file_line_and_field(tmp_path):
    folder = tmp_path / "outputs" / "datagen_demo" / "r1"
    (folder / "records").mkdir(parents=True)
    manifest = {"study": "datagen_demo", "kind": "datagen", "run_id": "r1", "status": "ok",
                "params": {}, "models": [{"name": "judge", "provider": "sim"}]}  # fmt: skip
    (folder / "manifest.json").write_text(json.dumps(manifest))
    row = {"judge": "j", "problem_id": "p1", "case_id": "p1@ab", "replicate": 0,
           "rubric": "aime_quality", "status": "scored", "weighted_score": HUGE}  # fmt: skip
    (folder / "records" / "quality.jsonl").write_text(json.dumps(row) + "\n")
    pattern = re.escape(f"quality.jsonl:1: weighted_score: {SHOWN} is not a finite number")
    with pytest.raises(OutcomeError, match=pattern):
        read_outcomes(folder)


def test_a_message_shows_a_long_integer_by_its_length():
    """Cut to 40 characters, 400 nines would read as a plain 40-digit number; and Python
    prints no integer past 4,300 digits (ValueError: json and pydantic refuse to read one,
    but a message must never fail on it)."""
    assert shown(HUGE) == SHOWN and shown(-HUGE) == f"-{SHOWN}"
    assert shown(10**39) == "1" + "0" * 39  # 40 digits: as JSON writes it
    assert shown(10**5000) == "an integer of over 4300 digits"
