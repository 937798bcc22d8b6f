"""evalbench.judge_golden.study: params validation, records, and a resumable end-to-end run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from evalbench import judge_golden as G
from evalbench.judge_golden import records, report, study
from evalbench.judge_golden import scoring as S
from evalbench.params import ParamsError
from evalbench.records import read_jsonl
from evalbench.studies import load_params

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "params" / "judge_golden_demo.yaml"


def _params_file(tmp_path: Path, **changes: object) -> Path:
    data = yaml.safe_load(DEMO.read_text())
    data.update(changes)
    path = tmp_path / "golden.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_params_validate_names_headline_and_golden_path(tmp_path: Path) -> None:
    params = load_params(DEMO)
    assert [s.name for s in params.model_specs()][-1] == "pairwise-sim"
    with pytest.raises(ParamsError, match="headline: 'tone' is not a dimension"):
        load_params(_params_file(tmp_path, headline="tone"))
    dup = [{"name": "j", "provider": "sim"}, {"name": "j", "provider": "sim"}]
    with pytest.raises(ParamsError, match="unique names"):
        load_params(_params_file(tmp_path, judges=dup))
    with pytest.raises(ParamsError, match="golden: data path not found"):
        load_params(_params_file(tmp_path, golden="nope.csv"))
    with pytest.raises(ParamsError, match="rubric: unknown rubric 'nope'"):
        load_params(_params_file(tmp_path, rubric="nope"))


def test_public_params_ask_no_model() -> None:
    # (from the shared judge_study tests: the public kind's params ask no model)
    public = load_params(ROOT / "params" / "judge_public.yaml")
    assert public.model_specs() == [] and not public.simulated


def test_golden_study_end_to_end_resumes_without_new_calls(tmp_path: Path) -> None:
    from evalbench.studies import open_run

    judges = [  # no simulated API errors: those are retried on a rerun, by design
        {"name": "a", "provider": "sim", "sim": {"malformed_rate": 0.2}},
        {"name": "b", "provider": "sim", "sim": {"leniency": -1}},
        {"name": "c", "provider": "sim", "sim": {"noise": 2}},
    ]
    path = _params_file(tmp_path, limit=12, bootstrap_rounds=50, judges=judges)
    run = open_run(path)
    golden = study.load_study_golden(run.params)
    judgments = study.run_golden(run, golden)
    pairs = study.run_golden_pairs(run, golden)
    # 3 judges x 12 items + a retest of the primary judge
    assert len(judgments) == 4 * 12 and set(judgments["item"]) == set(golden["item"])
    assert pairs is not None and len(pairs) == 6  # 12 items = 6 questions x 2 answers
    records = (run.dir / "records" / "golden_judgments.jsonl").read_text().splitlines()
    assert len(records) == 48 and "human_accuracy" in json.loads(records[0])
    assert (judgments["status"] == "unscored").sum() > 0  # judge a's malformed outputs
    first = run.ledger.frame()["requests"].sum()
    assert first == 4 * 12 + 2 * 6  # rubric calls + both orders of every pair
    again = open_run(path)
    study.run_golden(again, golden)
    study.run_golden_pairs(again, golden)
    assert again.ledger.frame().empty or again.ledger.frame()["requests"].sum() == 0


@pytest.mark.slow
def test_run_writes_records_of_the_declared_types_and_matches_its_parts(tmp_path: Path) -> None:
    from evalbench.studies import open_run

    run = open_run(_params_file(tmp_path, limit=12, bootstrap_rounds=50))
    result = G.run(run)
    for name, record_type in study.STUDY.records.items():
        rows = read_jsonl(run.dir / "records" / f"{name}.jsonl")
        assert rows, name
        for row in rows:
            record_type.model_validate(row)
    # the headline row is the primary judge on the headline dimension
    assert (result.head["judge"], result.head["dimension"]) == ("judge-sim", "accuracy")
    assert study.counts(result) == {
        "items": 12,
        "judgments": 4 * 12,  # three judges and the primary judge's retest
        "unscored": int((result.judgments["status"] != "scored").sum()),
        "call_errors": int(result.judgments["error"].notna().sum()),
        "pairs": 6,
        "annotators": 3,  # the demo's simulated annotators, on the 12 items studied
        "annotations": 3 * 12,
        "anchored_judgments": 3 * 12,  # the demo's anchors: every judge grades again
        "anchored_unscored": int((result.anchors.judgments["status"] != "scored").sum()),
    }
    heads = report.headlines(result)
    assert list(heads) == [
        "within ±1 on accuracy (judge-sim; 95% Wilson)",
        "panel within ±1 (mean)",
        "retest exact (judge-sim)",
    ]
    assert heads["retest exact (judge-sim)"] == result.retest.stats.exact.estimate
    assert result.simulated == {
        "judge-sim",
        "judge-sim-strict",
        "judge-sim-erratic",
        "pairwise-sim",
    }


@pytest.mark.slow
def test_run_without_retest_or_pairwise_judge(tmp_path: Path) -> None:
    from evalbench.studies import open_run

    judges = [{"name": "only", "provider": "sim"}]
    path = _params_file(
        tmp_path, limit=6, bootstrap_rounds=20, judges=judges, retest=False, pairwise_judge=None
    )
    result = G.run(open_run(path))
    assert result.retest is None and result.pairs is None
    assert len(result.judgments) == 6
    assert list(report.headlines(result)) == [
        "within ±1 on accuracy (only; 95% Wilson)",
        "panel within ±1 (mean)",
    ]
    assert "No retest" in report.retest_sentence(result)
    assert "No pairwise judge" in report.pairs_sentence(result)


def test_judgment_record_accepts_rubric_columns_only() -> None:
    row = {
        "judge": "j", "item": "i", "replicate": 0, "rubric": "hle", "status": "scored",
        "human_weighted": 50.0, "score_timeliness": 40.0, "human_timeliness": 50.0,
        "extra_confidence": 80.0, "extra_reason": "ok",
    }  # fmt: skip
    records.GoldenJudgmentRecord.model_validate(row)
    with pytest.raises(ValueError, match="score_tone"):
        records.GoldenJudgmentRecord.model_validate({**row, "score_tone": 3.0})


@pytest.mark.slow
def test_a_golden_set_where_only_some_items_have_a_reference_runs(tmp_path: Path) -> None:
    """Issue 23, defect 13's reproducer: two golden rows, one with "reference": "R1", one
    without. The rubric judges and the pairwise check both ran into JudgeCase /
    PairTask(reference=nan); now the one without a reference is asked without one."""
    from evalbench.studies import open_run

    base = {"question": "Capital of France?", "human_accuracy": 9, "human_completeness": 8,
            "human_clarity": 7}  # fmt: skip
    golden = tmp_path / "golden.jsonl"
    golden.write_text(
        json.dumps({"item": "q1", "answer": "Paris", "reference": "R1", **base}) + "\n"
        + json.dumps({"item": "q2", "answer": "Lyon", **base}) + "\n"
    )  # fmt: skip
    data = yaml.safe_load(DEMO.read_text())
    data.pop("annotations")
    data.update(golden=str(golden), bootstrap_rounds=20)
    path = tmp_path / "golden.yaml"
    path.write_text(yaml.safe_dump(data))
    run = open_run(path)
    golden_set = study.load_study_golden(run.params)
    tasks = {t.case_id.split("~")[0]: t.case.reference for t in S.golden_tasks(golden_set,
             run.params.rubric_obj())}  # fmt: skip
    assert tasks == {"q1": "R1", "q2": None}
    assert [t.reference for t in S.golden_pair_tasks(golden_set)] == ["R1"]
    result = G.run(run)
    run.finish(result)
    judged = read_jsonl(run.dir / "records" / "golden_judgments.jsonl")
    assert {r["item"] for r in judged} == {"q1", "q2"}
    assert len(read_jsonl(run.dir / "records" / "golden_pairs.jsonl")) == 1


def test_judgment_record_is_a_rubric_judgment_with_its_own_fields_only() -> None:
    """The fields every rubric judgment has are declared once, in evalbench.judge."""
    from evalbench.judge import RubricJudgment

    record = records.GoldenJudgmentRecord
    assert issubclass(record, RubricJudgment)
    own = {n for c in record.__mro__[: record.__mro__.index(RubricJudgment)]
           for n in getattr(c, "__annotations__", {})}  # fmt: skip
    assert not own & set(RubricJudgment.model_fields)
    assert {"item", "human_weighted"} <= own


def test_the_package_exports_what_its_docstring_lists() -> None:
    import re

    assert sorted(G.__all__) == [
        "GoldenSetError",
        "JudgeGoldenParams",
        "JudgeGoldenResult",
        "golden_from_annotations",
        "load_annotations",
        "load_golden",
        "run",
    ]
    doc = str(G.__doc__)
    assert all(re.search(rf"\b{name}\b", doc) and hasattr(G, name) for name in G.__all__)
