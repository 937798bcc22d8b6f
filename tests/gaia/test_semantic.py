"""Semantic answer matching in the GAIA study: the record fields, the agreement and accuracy
arithmetic (by hand), the report sections, and whole runs with a simulated judge."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from gaia.cases import wilson_by_hand

from evalbench import gaia
from evalbench.gaia import metrics, report, scoring
from evalbench.gaia.records import ScoredRecord
from evalbench.judge.matching import MatchVerdict
from evalbench.params import params_hash
from evalbench.publish import run_study
from evalbench.records import read_jsonl
from evalbench.studies import open_run

ROOT = Path(__file__).resolve().parents[2]

# ----------------------------------------------------------------------------- record fields


def _row(**extra):
    base = {"system": "A", "task_id": "t", "attempt": 0, "expected": "42",
            "extracted_answer": "四十二", "error": None, "correct": False}  # fmt: skip
    return base | extra


def test_semantic_fields_for_each_kind_of_record():
    yes = MatchVerdict(True)
    got = scoring.semantic_fields(_row(), "j", yes, truth=True)
    assert got == {"correct_semantic": True, "semantic_judge": "j", "semantic_status": "scored",
                   "semantic_reason": None, "semantic_truth": True}  # fmt: skip
    unread = scoring.semantic_fields(_row(), "j", MatchVerdict(None, "no 'correct:' line"))
    assert (unread["correct_semantic"], unread["semantic_status"]) == (None, "unscored")
    assert unread["semantic_reason"] == "no 'correct:' line"
    failed = scoring.semantic_fields(_row(), "j", None, error="http_500: boom")
    assert failed["correct_semantic"] is None
    assert failed["semantic_reason"] == "the judge call failed: http_500: boom"
    for nothing in (_row(extracted_answer=None), _row(error="timeout"), _row(state="timeout"),
                    _row(state="step_limit")):  # fmt: skip
        assert not scoring.semantic_judgeable(nothing)
        fields = scoring.semantic_fields(nothing, "j", yes)
        assert (fields["correct_semantic"], fields["semantic_status"]) == (False, "no_answer")
    hidden = scoring.semantic_fields(_row(expected=None), "j", yes)
    assert hidden == dict.fromkeys(scoring.SEMANTIC_COLUMNS)  # test split: not judged


def test_with_semantic_keeps_none_as_none_and_checks_the_length():
    frame = pd.DataFrame([_row(), _row(task_id="u")])
    fields = [scoring.semantic_fields(_row(), "j", MatchVerdict(True)),
              scoring.semantic_fields(_row(), "j", MatchVerdict(None, "?"))]  # fmt: skip
    out = scoring.with_semantic(frame, fields)
    assert out["correct_semantic"].tolist() == [True, None]
    with pytest.raises(ValueError, match="1 field rows for 2 records"):
        scoring.with_semantic(frame, fields[:1])


def test_the_semantic_judge_gets_the_items_question_and_gold():
    (item,) = gaia.load("demo", task_ids=["demo-l1-01"])
    (message,) = scoring.semantic_messages("equality_checker", item, "三百九十一")
    assert message["content"].endswith("Expression 1: 391\n    Expression 2: 三百九十一")


# ----------------------------------------------------------------------------- metrics


def _hand_records() -> pd.DataFrame:
    """System A, 8 items: 6 scored (official T T F F F F, semantic T T T T F F), 1 with no
    answer (wrong under both), 1 unscored (official right, no semantic verdict)."""
    rows = []
    official = [True, True, False, False, False, False]
    semantic = [True, True, True, True, False, False]
    for i, (o, s) in enumerate(zip(official, semantic, strict=True)):
        rows.append({"task_id": f"t{i}", "correct": o, "correct_semantic": s,
                     "semantic_status": "scored", "extracted_answer": f"a{i}"})  # fmt: skip
    rows.append({"task_id": "t6", "correct": False, "correct_semantic": False,
                 "semantic_status": "no_answer", "extracted_answer": None})  # fmt: skip
    rows.append({"task_id": "t7", "correct": True, "correct_semantic": None,
                 "semantic_status": "unscored", "extracted_answer": "a7",
                 "semantic_reason": "no 'correct:' line"})  # fmt: skip
    frame = pd.DataFrame(rows).assign(system="A", level=1, attempt=0, expected="g",
                                      no_answer=False, error=None, semantic_judge="j")  # fmt: skip
    frame["semantic_truth"] = None
    frame["correct_semantic"] = frame["correct_semantic"].astype(object)
    return frame


def test_agreement_table_and_kappa_by_hand():
    table = metrics.semantic_agreement(_hand_records(), rng=np.random.default_rng(0), rounds=200)
    row = table.iloc[0]
    counts = row[["scored", "both_right", "official_only", "semantic_only", "both_wrong"]]
    assert counts.tolist() == [6, 2, 0, 2, 2]
    assert row["agreement"] == pytest.approx(4 / 6)
    # p_o = 4/6; marginals official right 2/6, semantic right 4/6;
    # p_e = 2/6·4/6 + 4/6·2/6 = 16/36; kappa = (4/6 − 16/36) / (1 − 16/36) = (8/36) / (20/36)
    assert row["kappa"] == pytest.approx(8 / 20)
    assert row["kappa_low"] <= row["kappa"] <= row["kappa_high"]
    assert (row["unscored"], row["no_answer"]) == (1, 1)


def test_accuracy_under_each_scorer_and_the_exact_mcnemar_by_hand():
    table = metrics.semantic_accuracy(_hand_records(), rng=np.random.default_rng(0), rounds=200)
    row = table.iloc[0]
    assert (row["items"], row["unscored"], row["n"]) == (8, 1, 7)  # the no-answer item counts
    assert row["official"] == pytest.approx(2 / 7) and row["semantic"] == pytest.approx(4 / 7)
    assert (row["official_low"], row["official_high"]) == pytest.approx(wilson_by_hand(2, 7))
    assert (row["semantic_low"], row["semantic_high"]) == pytest.approx(wilson_by_hand(4, 7))
    assert row["difference"] == pytest.approx(4 / 7 - 2 / 7)
    assert (row["only_official"], row["only_semantic"]) == (0, 2)
    # exact McNemar on 0 vs 2 discordant items: 2 · P[Binom(2, 1/2) <= 0] = 2 · 1/4
    assert row["mcnemar_p"] == pytest.approx(0.5)


def test_no_item_with_both_verdicts_is_no_result_not_zero():
    recs = _hand_records()
    recs = recs.assign(semantic_status="unscored", correct_semantic=None)
    row = metrics.semantic_accuracy(recs, rng=np.random.default_rng(0)).iloc[0]
    assert row["n"] == 0 and math.isnan(row["semantic"]) and math.isnan(row["mcnemar_p"])
    kappa = metrics.semantic_agreement(recs, rng=np.random.default_rng(0)).iloc[0]["kappa"]
    assert math.isnan(kappa)


def test_a_judge_that_scored_no_answer_has_no_result_even_with_no_answer_items():
    # SmolLM2 with the HLE grader prompt: every output unreadable. The one item with no answer
    # is wrong under both scorers, but 0 of 1 is not a measurement of the judge.
    recs = _hand_records()
    scored = recs["semantic_status"] == "scored"
    recs.loc[scored, "semantic_status"] = "unscored"
    recs.loc[scored, "correct_semantic"] = None
    row = metrics.semantic_accuracy(recs, rng=np.random.default_rng(0)).iloc[0]
    assert (row["items"], row["unscored"], row["n"]) == (8, 7, 1)
    assert math.isnan(row["official"]) and math.isnan(row["semantic"])
    assert math.isnan(row["mcnemar_p"])
    html = report.semantic_section(_result(recs))
    assert "<b>A</b>: no result (the judge scored none of its answers; 7 unscored)" in html
    assert "7 of 7 judgments unscored" in html


def test_a_judge_that_says_yes_to_everything_is_called_out():
    # SmolLM2 with the equality checker: "Yes" to all 90 answers, kappa 0
    recs = _hand_records()
    scored = recs["semantic_status"] == "scored"
    recs.loc[scored, "correct_semantic"] = True
    html = report.semantic_section(_result(recs))
    assert "The judge said yes to every one of the 6 answers it scored" in html
    assert "said yes to every" not in report.semantic_section(_result(_hand_records()))


def test_disagreements_are_the_scored_answers_whose_verdicts_differ():
    rows = metrics.semantic_disagreements(_hand_records())
    assert rows["task_id"].tolist() == ["t2", "t3"]  # official wrong, semantic right
    assert "semantic_truth" not in rows  # a real judge: no truth


def test_the_truth_check_counts_both_scorers_against_the_simulations_truth():
    recs = _hand_records()
    recs["semantic_truth"] = [True, True, True, False, False, False, None, None]
    table = metrics.semantic_truth_check(recs).set_index("case")
    # scored: t0,t1 same (truth T, official T); t2 variant (T, F); t3..t5 different (truth F)
    assert table.loc["all", ["n", "judge_right", "official_right"]].tolist() == [6, 5, 5]
    assert table.loc["variant", ["n", "judge_right", "official_right"]].tolist() == [1, 1, 0]
    assert table.loc["different", ["n", "judge_right"]].tolist() == [3, 2]  # t3: judge says T
    assert metrics.semantic_truth_check(_hand_records()) is None


def test_no_semantic_judge_no_summary():
    recs = _hand_records().drop(columns=["semantic_status"])
    assert metrics.semantic_summary(recs, rng=np.random.default_rng(0)) is None


# ----------------------------------------------------------------------------- report


def _result(recs: pd.DataFrame, *, judge: dict | None = None) -> gaia.GaiaResult:
    judge = judge or {"name": "j", "prompt": "equality_checker"}
    params = gaia.GaiaParams(title="t", systems=[{"name": "A"}], semantic_judge=judge)
    rng = np.random.default_rng(0)
    return gaia.GaiaResult(
        params=params, items=[], records=recs,
        summary=metrics.summarize(recs, rng=rng, rounds=20), scorers=None, pair=None,
        comparison=None, submission=Path("/s.jsonl"), submission_system="A",
        usage=pd.DataFrame(), simulated=frozenset({"A", "j"}),
        semantic=metrics.semantic_summary(recs, rng=rng, rounds=50),
    )  # fmt: skip


def test_semantic_section_writes_out_the_numbers():
    html = report.semantic_section(_result(_hand_records()))
    assert "Semantic judge <b>j</b> (simulated), prompt <code>equality_checker</code>" in html
    # official 2/7 = 28.6%, semantic 4/7 = 57.1%, difference +28.6%
    assert "<b>A</b> official 28.6% vs semantic 57.1% on 7 items, difference +28.6%" in html
    assert "only semantic right: 2, only official right: 0; exact McNemar p = 0.5" in html
    assert "0.400 [" in html  # kappa 8/20 with its interval
    assert "1 unscored judgment" in html and "no &#x27;correct:&#x27; line" in html
    assert "the simulation&#x27;s truth" not in html  # no truth column: no truth table


def test_the_disagreements_are_all_listed_escaped_and_clipped():
    recs = _hand_records()
    recs.loc[recs.task_id == "t2", "extracted_answer"] = "<script>alert(1)</script>"
    recs.loc[recs.task_id == "t3", "extracted_answer"] = "x" * 1000
    html = report.semantic_disagreements_section(_result(recs))
    assert "Every disagreement (2)" in html
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "x" * 300 + " … [700 more chars]" in html and "x" * 301 not in html
    agree = recs.assign(correct_semantic=recs["correct"].astype(object))
    assert "agree on every scored answer" in report.semantic_disagreements_section(_result(agree))


def test_without_a_judge_both_sections_say_it_is_off():
    recs = _hand_records().drop(columns=["semantic_status"])
    result = _result(recs)._replace(semantic=None)
    assert report.semantic_section(result) == report.SEMANTIC_OFF
    assert report.semantic_disagreements_section(result) == report.SEMANTIC_OFF


# ----------------------------------------------------------------------------- params


def _params(**extra) -> gaia.GaiaParams:
    return gaia.GaiaParams(title="t", systems=[{"name": "a"}], **extra)


def test_the_params_hash_includes_the_judge_and_is_unchanged_without_one():
    plain = _params()
    judged = _params(semantic_judge={"name": "j"})
    other = _params(semantic_judge={"name": "j", "prompt": "equality_checker"})
    assert len({params_hash(plain), params_hash(judged), params_hash(other)}) == 3
    assert "semantic_judge" not in plain.model_dump()  # old run folders keep their names
    assert params_hash(_params(semantic_judge=None)) == params_hash(plain)
    assert [s.name for s in judged.model_specs()] == ["a", "j"]  # in the manifest, sim badge


def test_bad_semantic_params_are_clear_errors():
    with pytest.raises(ValueError, match="a system is named like the judge: 'a'"):
        _params(semantic_judge={"name": "a"})
    with pytest.raises(ValueError, match="prompt"):
        _params(semantic_judge={"name": "j", "prompt": "vibes"})
    with pytest.raises(ValueError, match="sim_variant_rate applies to simulated chat models"):
        gaia.GaiaParams(title="t", systems=[{"name": "a", "provider": "openai", "model": "m",
                                             "sim_variant_rate": 0.5}])  # fmt: skip
    with pytest.raises(ValueError, match="Extra inputs are not permitted"):
        _params(semantic_judge={"name": "j", "promt": "hle_grader"})


# ----------------------------------------------------------------------------- whole runs


def _study(
    tmp_path: Path, judge: dict | None, *, variant: bool = True, name: str = "gaia", **extra
) -> Path:
    data = yaml.safe_load((ROOT / "params" / "gaia_demo.yaml").read_text())
    data.pop("alerts")
    data.update(dataset=str(ROOT / "evalbench" / "demo" / "gaia"), limit_per_level=4,
                bootstrap_rounds=20, semantic_judge=judge, **extra)  # fmt: skip
    if not variant:
        data["systems"] = [s for s in data["systems"] if s["name"] != "variant-sim"]
    path = tmp_path / f"{name}.yaml"  # the file's name names the study's folder
    path.write_text(yaml.safe_dump(data))
    return path


def _judge(**sim) -> dict:
    return {"name": "judge-sim", "provider": "sim", "sim": {"accuracy": 0.95, **sim}}


@pytest.mark.slow
def test_a_run_stores_a_semantic_verdict_on_every_record_and_resumes(tmp_path):
    run = open_run(_study(tmp_path, _judge(malformed_rate=0.1)))
    result = gaia.run(run)
    run.finish(result)
    lines = read_jsonl(run.dir / "records" / "gaia.jsonl")
    assert len(lines) == 3 * 12 * 3  # systems × items × attempts
    for line in lines:
        ScoredRecord.model_validate(line)
        status = line["semantic_status"]
        assert line["semantic_judge"] == "judge-sim" and status in {"scored", "unscored",
                                                                     "no_answer"}  # fmt: skip
        assert (line["correct_semantic"] is None) == (status == "unscored")
        assert (line["semantic_truth"] is None) == (status == "no_answer")
    asked = read_jsonl(run.dir / "records" / "semantic.jsonl")
    assert len(asked) == sum(line["semantic_status"] != "no_answer" for line in lines)
    assert result.semantic is not None and result.semantic.judge == "judge-sim"
    again = open_run(_study(tmp_path, _judge(malformed_rate=0.1)))
    gaia.run(again)
    calls = again.ledger.frame().set_index("system")["calls"]
    assert calls.get("judge-sim", 0) == 0  # every judgment read back, none asked again
    again.finish()


@pytest.mark.slow
def test_a_judge_whose_calls_all_fail_leaves_every_answer_unscored(tmp_path):
    run = open_run(_study(tmp_path, _judge(error_rate=1.0), max_error_rate=1.0))
    result = gaia.run(run)
    recs = result.records
    asked = recs[recs["semantic_status"] != "no_answer"]
    assert len(asked) and (asked["semantic_status"] == "unscored").all()
    assert asked["correct_semantic"].isna().all()  # never 0/1
    assert asked["semantic_reason"].str.startswith("the judge call failed: sim_error").all()
    # only the first-attempt items with nothing to judge have both verdicts, and those do not
    # measure the judge: no result for every system, never 0%
    first = recs[recs["attempt"] == 0]
    nothing = (first["semantic_status"] == "no_answer").groupby(first["system"]).sum()
    table = result.semantic.accuracy.set_index("system")
    assert table["n"].to_dict() == nothing.to_dict() and (table["scored"] == 0).all()
    assert table["semantic"].isna().all() and table["mcnemar_p"].isna().all()
    assert "no result (the judge scored none of its answers;" in report.semantic_section(result)
    run.finish(result)


@pytest.mark.slow
def test_the_judge_and_the_variant_system_change_no_official_verdict_of_the_others(tmp_path):
    columns = list(scoring.RECORD_COLUMNS)
    plain = gaia.run(open_run(_study(tmp_path, None, variant=False, name="plain")))
    judged = gaia.run(open_run(_study(tmp_path, _judge(), name="judged")))
    before = plain.records[columns]
    after = judged.records[judged.records["system"] != "variant-sim"][columns]
    pd.testing.assert_frame_equal(before.reset_index(drop=True), after.reset_index(drop=True))
    assert "correct_semantic" not in plain.records and plain.semantic is None


@pytest.mark.slow
def test_the_demo_renders_the_semantic_section_with_the_records_numbers():
    done = run_study(ROOT / "params" / "gaia_demo.yaml", warm=True)
    assert done.status == "ok", done.reason
    html = (done.run_dir / "report.html").read_text()
    assert "Official vs semantic matching" in html and "<script" not in html
    assert "judge <b>semantic-judge-sim</b> (simulated), prompt <code>hle_grader</code>" in html
    for column in ("both_right", "semantic_only", "kappa", "mcnemar_p", "judge_accuracy"):
        assert f">{column}</th>" in html, column
    lines = pd.DataFrame(read_jsonl(done.run_dir / "records" / "gaia.jsonl"))
    first = lines[(lines["attempt"] == 0) & (lines["semantic_status"] == "scored")]
    differ = first[first["correct"] != first["correct_semantic"].astype(bool)]
    assert f"Every disagreement ({len(differ)})" in html
    variant = first[first["system"] == "variant-sim"]
    only = int((~variant["correct"] & variant["correct_semantic"].astype(bool)).sum())
    assert only > 0 and f"only semantic right: {only}," in html
