"""evalbench run folders read into outcomes, one study kind at a time. Every record written
here is first validated by the study's own declared record type, so the readers read the
format the studies write."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from evalbench.arena.records import ArenaBattle
from evalbench.bfcl.records import VerdictRecord
from evalbench.datagen.records import QualityRecord
from evalbench.importers import READERS, OutcomeError, read_outcomes
from evalbench.judge_golden.records import GoldenJudgmentRecord
from evalbench.studies import get_study


def run_folder(tmp_path: Path, kind: str, name: str, rows: list, record_type, params=None) -> Path:
    folder = tmp_path / "outputs" / f"{kind}_demo" / "r1"
    (folder / "records").mkdir(parents=True)
    for row in rows:
        record_type.model_validate(row)  # the study's declared type accepts every line
    (folder / "records" / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    manifest = {"study": f"{kind}_demo", "kind": kind, "run_id": "r1", "status": "ok",
                "params": params or {}, "models": [{"name": "judge", "provider": "sim"}]}  # fmt: skip
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return folder


def bfcl_row(system, item, category, valid, error_type=None):
    return {"system": system, "test_category": category, "id": item, "valid": valid,
            "error_type": error_type, "error": None, "decoded": None, "raw": "x", "params": []}  # fmt: skip


def test_bfcl_verdicts_with_a_failed_call(tmp_path):
    rows = [bfcl_row("s", "a_0", "simple_python", True),
            bfcl_row("s", "a_1", "simple_python", False, "evalbench:call_failed"),
            bfcl_row("s", "b_0", "multiple", False, "value_error:string")]  # fmt: skip
    run = read_outcomes(run_folder(tmp_path, "bfcl", "bfcl", rows, VerdictRecord))
    frame = run.outcomes.set_index("item_id")
    assert frame["value"].tolist() == [1.0, 0.0, 0.0]  # a failed call is invalid, as BFCL counts
    assert list(dict.fromkeys(run.outcomes["metric"])) == READERS["bfcl"].metrics({})
    assert frame.loc["a_1", "state"] == "error" and frame.loc["b_0", "state"] == "ok"
    assert run.slices == ("category",) and frame.loc["b_0", "category"] == "multiple"
    # the constant the reader uses is BFCL's own
    from evalbench.bfcl.schema import CALL_FAILED
    from evalbench.importers.outcomes import CALL_FAILED as READ

    assert READ == CALL_FAILED


def golden_row(judge, item, weighted, human, acc, human_acc, status="scored"):
    return {"judge": judge, "item": item, "replicate": 0, "rubric": "fine_grained",
            "status": status, "weighted_score": weighted, "human_weighted": human,
            "score_accuracy": acc, "human_accuracy": human_acc, "raw": ""}  # fmt: skip


def test_golden_judgments_within_tolerance_and_absolute_errors(tmp_path):
    rows = [golden_row("j", "i1", 8.0, 8.7, 8.0, 9.0),  # |8 − 9| = 1 <= 1: within
            golden_row("j", "i2", 6.2, 5.4, 5.0, 4.0),  # 1: within
            golden_row("j", "i3", 9.0, 5.0, 9.0, 5.0),  # 4: not within
            golden_row("j", "i4", None, 7.0, None, 7.0, status="unscored")]  # fmt: skip
    params = {"tolerance": 1, "headline": "accuracy"}
    run = read_outcomes(run_folder(tmp_path, "judge_golden", "golden_judgments", rows,
                                   GoldenJudgmentRecord, params))  # fmt: skip
    within = run.outcomes[run.outcomes["metric"] == "within ±1 (accuracy)"].set_index("item_id")
    assert within["value"].tolist()[:3] == [1.0, 1.0, 0.0] and math.isnan(within.loc["i4", "value"])
    assert within.loc["i4", "state"] == "unscored"
    weighted = run.outcomes[run.outcomes["metric"] == "abs error (weighted)"].set_index("item_id")
    assert weighted.loc["i1", "value"] == pytest.approx(0.7)  # |8.0 − 8.7|
    assert not weighted["higher_is_better"].any()  # an error: lower is better
    assert run.outcomes["metric"].iloc[0] == "within ±1 (accuracy)"  # the headline first
    # what the reader declares before a run (a sweep checks its metric against it): these
    # rows have one dimension of fine_grained's three; the declared list has all three
    declared = READERS["judge_golden"].metrics(params)
    assert declared == ["within ±1 (accuracy)", "abs error (weighted)", "abs error (accuracy)",
                        "abs error (completeness)", "abs error (clarity)"]  # fmt: skip
    assert list(dict.fromkeys(run.outcomes["metric"])) == declared[:3]


def test_arena_battles_become_each_systems_share_of_points_per_prompt(tmp_path):
    rows = [
        {"dataset": "demo", "model_a": "x", "model_b": "y", "winner": "a", "question_id": "q1"},
        {"dataset": "demo", "model_a": "x", "model_b": "z", "winner": "tie", "question_id": "q1"},
        {"dataset": "demo", "model_a": "y", "model_b": "z", "winner": "b", "question_id": "q1"},
    ]
    run = read_outcomes(run_folder(tmp_path, "arena", "battles", rows, ArenaBattle))
    share = run.outcomes.set_index("system")["value"]
    # x: win + tie = 1.5 of 2; y: loss + loss = 0 of 2; z: tie + win = 1.5 of 2
    assert share.to_dict() == {"x": 0.75, "y": 0.0, "z": 0.75}
    assert list(dict.fromkeys(run.outcomes["metric"])) == READERS["arena"].metrics({})


def hle_row(item, status, correct=None, state="answered"):
    return {"id": item, "system": "s", "category": "Math", "answer_type": "exactMatch",
            "correct_answer": "1", "state": state, "status": status, "correct": correct,
            "error": "http_500" if state == "error" else None}  # fmt: skip


def test_hle_counts_as_the_official_accuracy_does(tmp_path):
    from evalbench.hle.records import HleRecord

    rows = [hle_row("q1", "scored", True), hle_row("q2", "scored", False),
            hle_row("q3", "unscored"), hle_row("q4", "no_response", state="error"),
            hle_row("q5", "no_response", state="missing")]  # fmt: skip
    run = read_outcomes(run_folder(tmp_path, "hle", "hle", rows, HleRecord))
    frame = run.outcomes.set_index("item_id")
    # official: correct / every question asked -> 1 of 5; the other states counted apart
    assert frame["value"].tolist() == [1.0, 0.0, 0.0, 0.0, 0.0]
    assert frame["state"].tolist() == ["ok", "ok", "unscored", "error", "no_answer"]
    assert list(dict.fromkeys(run.outcomes["metric"])) == READERS["hle"].metrics({})


def test_generated_items_do_not_pair(tmp_path):
    rows = [{"judge": "j", "problem_id": "gen_0001", "case_id": "gen_0001@ab", "replicate": 0,
             "rubric": "aime_quality", "status": "scored", "weighted_score": 4.5}]  # fmt: skip
    folder = run_folder(tmp_path, "datagen", "quality", rows, QualityRecord,
                        {"generator": {"name": "gen-sim"}})  # fmt: skip
    run = read_outcomes(folder)
    assert run.systems == ["gen-sim"] and run.pairable is False
    assert list(dict.fromkeys(run.outcomes["metric"])) == READERS["datagen"].metrics({})


def test_every_reader_is_for_a_registered_study_whose_records_it_reads():
    files = {"gaia": "gaia", "bfcl": "bfcl", "judge_golden": "golden_judgments",
             "arena": "battles", "arena_public": "battles", "datagen": "quality",
             "hle": "hle"}  # fmt: skip
    assert set(READERS) == set(files)
    for kind, name in files.items():
        assert name in get_study(kind).records, (kind, name)


def test_a_bad_line_names_the_file_line_and_field(tmp_path):
    folder = run_folder(tmp_path, "bfcl", "bfcl", [bfcl_row("s", "a", "multiple", True)],
                        VerdictRecord)  # fmt: skip
    with open(folder / "records" / "bfcl.jsonl", "a") as fh:
        fh.write('{"system": "s", "id": "b", "test_category": "multiple"}\n')
    with pytest.raises(OutcomeError, match=r"bfcl\.jsonl:2: valid: missing field"):
        read_outcomes(folder)
    with pytest.raises(OutcomeError, match="has no per-item outcomes"):
        manifest = json.loads((folder / "manifest.json").read_text())
        (folder / "manifest.json").write_text(json.dumps(manifest | {"kind": "judge_public"}))
        read_outcomes(folder)


def _append(folder: Path, name: str, line: str) -> None:
    with open(folder / "records" / f"{name}.jsonl", "a") as fh:
        fh.write(line + "\n")


def test_non_finite_and_non_numeric_values_name_file_line_and_field(tmp_path):
    """A number that is not finite (or not a number) in a record is bad input; NaN and null
    stay what evalbench writes for "no value" (unscored)."""
    ok = golden_row("j", "i1", 8.0, 8.7, 8.0, 9.0)
    folder = run_folder(tmp_path / "g", "judge_golden", "golden_judgments", [ok],
                        GoldenJudgmentRecord, {"tolerance": 1})  # fmt: skip
    _append(folder, "golden_judgments", json.dumps(ok | {"item": "i2"}).replace("8.7", "Infinity"))
    with pytest.raises(OutcomeError, match=r"golden_judgments\.jsonl:2: human_weighted: "
                                           r"Infinity is not a finite number"):  # fmt: skip
        read_outcomes(folder)
    row = {"judge": "j", "problem_id": "p1", "case_id": "p1@ab", "replicate": 0,
           "rubric": "aime_quality", "status": "scored", "weighted_score": "4.5"}  # fmt: skip
    folder = run_folder(tmp_path / "d", "datagen", "quality", [], QualityRecord)
    _append(folder, "quality", json.dumps(row))
    with pytest.raises(OutcomeError, match=r"quality\.jsonl:1: weighted_score: \"4\.5\" is not"):
        read_outcomes(folder)
    battle = {"dataset": "d", "model_a": "x", "model_b": "y", "winner": "a", "question_id": "q"}
    folder = run_folder(tmp_path / "a", "arena", "battles", [battle], ArenaBattle)
    _append(folder, "battles", json.dumps(battle | {"weight": "heavy"}))
    with pytest.raises(OutcomeError, match=r"battles\.jsonl:2: weight: \"heavy\" is not"):
        read_outcomes(folder)


def test_a_verdict_that_is_not_true_false_or_null_is_refused(tmp_path):
    """``"correct": "no"`` was read as right (``bool("no")``): a string is not a verdict."""
    folder = run_folder(tmp_path, "bfcl", "bfcl", [bfcl_row("s", "a", "multiple", True)],
                        VerdictRecord)  # fmt: skip
    _append(folder, "bfcl", json.dumps(bfcl_row("s", "b", "multiple", "false")))
    with pytest.raises(OutcomeError, match=r"bfcl\.jsonl:2: valid: expected true or false, "
                                           r"got \"false\""):  # fmt: skip
        read_outcomes(folder)
