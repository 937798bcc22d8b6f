"""Params, generation with retries and resume, the judges and the whole study (study)."""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from datagen.cases import (
    REF_ROW,
    SETTINGS,
    edit_csv,
    gen_output,
    made_up_reference,
    params_file,
    review_of,
)

from evalbench.datagen import (
    metrics,
    report,
    scoring,
    sim,
    study,
    verification,
)
from evalbench.datagen.records import DatagenParams
from evalbench.measured import NoResult
from evalbench.records import read_jsonl
from evalbench.runs import Run
from evalbench.studies import open_run


class _CrashAfter:
    """A run whose generator progress callback raises after ``k`` answers (a crash)."""

    def __init__(self, run: Run, k: int):
        self.run, self.left = run, k

    def __getattr__(self, name: str) -> object:
        return getattr(self.run, name)

    def ask(self, spec: object, jobs: object, **kw: object) -> object:
        inner = kw["postfix"]

        def postfix(job: object, response: object) -> object:
            self.left -= 1
            if self.left < 0:
                raise RuntimeError("simulated crash")
            return inner(job, response)

        return self.run.ask(spec, jobs, **{**kw, "postfix": postfix})


def _calls(run: Run, system: str) -> int:
    frame = run.ledger.frame().set_index("system")
    return int(frame.loc[system, "calls"]) if system in frame.index else 0


def test_params_validate_topics_names_and_verification_paths(tmp_path: Path) -> None:
    from evalbench.params import ParamsError
    from evalbench.studies import load_params

    params = load_params(params_file(tmp_path, topics=["Number Theory", "geometry"]))
    assert isinstance(params, DatagenParams)
    assert params.topics == ["number_theory", "geometry"]
    assert [s.name for s in params.model_specs()] == ["gen", "judge"] and params.simulated
    assert params.thresholds.model_dump() == metrics.THRESHOLDS
    with pytest.raises(ParamsError, match=r"topics: .*subset of algebra.*\['calculus'\]"):
        load_params(params_file(tmp_path, topics=["algebra", "calculus"]))
    with pytest.raises(ParamsError, match=r"generator and judge need different names"):
        load_params(params_file(tmp_path, judge__name="gen"))
    with pytest.raises(ParamsError, match=r"thresholds.win_rat: unknown key"):
        load_params(params_file(tmp_path, thresholds={"win_rat": 0.5}))
    with pytest.raises(ParamsError, match=r"verifications: data path not found"):
        load_params(params_file(tmp_path, verifications="nope_verifications.json"))
    with pytest.raises(ParamsError, match=r"simulated reviews need a simulated generator"):
        load_params(
            params_file(tmp_path, generator={"name": "g", "provider": "openai", "model": "m"})
        )
    (tmp_path / "mine_verifications.json").write_text("{}")
    found = load_params(params_file(tmp_path, verifications="mine_verifications.json"))
    assert found.verifications == str(tmp_path / "mine_verifications.json")


def test_demo_params_load() -> None:
    from evalbench.studies import load_params

    root = Path(__file__).resolve().parents[2]
    params = load_params(root / "params" / "datagen_demo.yaml")
    assert isinstance(params, DatagenParams) and params.simulated
    assert params.verifications == "simulated" and params.n_problems == 60


def test_slots_are_balanced_and_attempts_draw_their_own_reference() -> None:
    slots = study.problem_slots(9, np.random.default_rng(0), ["algebra", "geometry"])
    assert [s.id for s in slots][:2] == ["gen_0001", "gen_0002"] and len(slots) == 9
    assert sorted(Counter(s.topic for s in slots).values()) == [4, 5]  # 9 = 2·4 + 1
    ref = made_up_reference()
    first = study.generation_job(slots[0], 1, ref, seed=3)
    again = study.generation_job(slots[0], 1, ref, seed=3)
    assert first.job.key == "gen:gen_0001#1" and first.job.request == again.job.request
    expected = int(study.attempt_rng(3, "gen_0001", 1).integers(len(ref)))
    assert first.reference_id == ref["id"][expected]
    assert f"Problem: {ref['problem'][expected]}" in first.job.request.messages[1]["content"]
    assert first.job.request.seed is None and first.job.request.response_format is None
    retry = study.generation_job(slots[0], 2, ref, seed=3, json_mode=True)
    assert retry.job.key == "gen:gen_0001#2" and retry.job.request.seed == 2
    assert retry.job.request.response_format == {"type": "json_object"}
    picks = {study.generation_job(slots[0], a, ref, seed=3).reference_id for a in range(1, 30)}
    assert len(picks) == len(ref)  # 29 attempts see every one of the 6 references


def test_generation_retries_invalid_outputs_and_keeps_their_reasons(tmp_path: Path) -> None:
    run = open_run(params_file(tmp_path, n_problems=40))
    gen = study.generate_problems(run, made_up_reference())
    problems, invalid = gen.problems, gen.invalid
    assert problems["id"].is_unique and len(problems) + len(gen.unfilled) == 40
    assert gen.calls == len(problems) + len(invalid)  # every call is valid or invalid
    # a problem that needed k attempts left k - 1 invalid records, numbered 1 .. k - 1
    for row in problems.itertuples():
        tried = invalid[invalid["id"] == row.id]["attempt"].tolist()
        assert tried == list(range(1, row.attempts)), (row.id, tried)
    for slot in gen.unfilled:
        assert invalid[invalid["id"] == slot]["attempt"].tolist() == [1, 2, 3]
    assert invalid["reason"].str.len().gt(0).all() and invalid["raw"].str.len().gt(0).all()
    assert 0.15 < len(invalid) / gen.calls < 0.45  # malformed_rate 0.3
    assert (problems["topic"] == problems["requested_topic"]).all()
    np.testing.assert_allclose(
        problems["true_quality"], [sim.sim_true_quality(p) for p in problems["problem"]]
    )
    stored = read_jsonl(run.dir / "records" / "problems.jsonl")
    assert [r["id"] for r in stored] == problems["id"].tolist()
    dataset = read_jsonl(run.dir / "generated.jsonl")
    assert list(dataset[0]) == [
        "id", "topic", "problem", "answer", "solution", "reference_id", "attempts"
    ]  # fmt: skip
    assert len(read_jsonl(run.dir / "records" / "invalid.jsonl")) == len(invalid)


def test_slots_that_never_validate_are_left_unfilled(tmp_path: Path) -> None:
    path = params_file(tmp_path, n_problems=5, max_attempts=2, generator__sim={"malformed_rate": 1})
    gen = study.generate_problems(open_run(path), made_up_reference())
    assert gen.problems.empty and len(gen.unfilled) == 5
    assert len(gen.invalid) == gen.calls == 5 * 2  # two attempts per slot, all recorded
    run = open_run(path)
    # no problem to judge: the study stops with no result, its manifest saying why
    text = "no result: 0 of 5 problems scored — invalid generator output (all 2 attempts) × 5"
    with pytest.raises(NoResult, match=re.escape(text)):
        study.run_study(run, made_up_reference())
    manifest = json.loads((run.dir / "manifest.json").read_text())
    assert manifest["headlines"] == {"result": text} and manifest["no_result"] == text


@pytest.mark.slow
def test_an_interrupted_generation_resumes_without_losing_or_repeating(tmp_path: Path) -> None:
    path = params_file(tmp_path, n_problems=30)
    with pytest.raises(RuntimeError, match="simulated crash"):
        study.generate_problems(_CrashAfter(open_run(path), 12), made_up_reference())
    store = open_run(path).dir / "records" / "generations.jsonl"
    # the 13th answer was written before its callback raised; answers already in flight
    # (8 at a time) may have been written too, the rest were never asked
    stored = len(read_jsonl(store))
    assert 13 <= stored < 30
    resumed_run = open_run(path)
    resumed = study.generate_problems(resumed_run, made_up_reference())
    whole = study.generate_problems(
        open_run(params_file(tmp_path, "uninterrupted", n_problems=30)), made_up_reference()
    )
    assert _calls(resumed_run, "gen") == whole.calls - stored  # nothing asked twice
    keys = [r["key"] for r in read_jsonl(store)]
    assert len(keys) == len(set(keys)) == whole.calls
    pd.testing.assert_frame_equal(resumed.problems, whole.problems)  # nothing lost
    pd.testing.assert_frame_equal(resumed.invalid, whole.invalid)
    assert resumed.problems["id"].is_unique


def test_a_torn_response_store_is_repaired_and_refilled(tmp_path: Path) -> None:
    path = params_file(tmp_path, n_problems=12)
    before = study.generate_problems(open_run(path), made_up_reference())
    store = open_run(path).dir / "records" / "generations.jsonl"
    lines = store.read_text().splitlines(keepends=True)
    store.write_text("".join(lines[:-3]) + lines[-3][: len(lines[-3]) // 2])  # crash mid-write
    run = open_run(path)
    after = study.generate_problems(run, made_up_reference())
    assert _calls(run, "gen") == 3  # the two lost answers and the torn one
    pd.testing.assert_frame_equal(after.problems, before.problems)
    assert len(read_jsonl(store)) == len(lines)


def test_progress_postfix_shows_topic_and_answer() -> None:
    from evalbench.models import ChatRequest, ChatResponse, Job

    job = Job("gen:gen_0001#1", ChatRequest(messages=[]))
    ok = ChatResponse(system="g", text=gen_output(answer=42, topic="Geometry"))
    assert study.progress_postfix(job, ok) == {"topic": "geometry", "answer": 42}
    failed = ChatResponse(system="g", error="timeout")
    assert study.progress_postfix(job, failed) == {"topic": "-", "answer": "invalid"}


def test_pair_plan_uses_each_problem_before_repeating() -> None:
    problems = pd.DataFrame({"id": ["a", "b", "c"], "problem": ["A?", "B?", "C?"]})
    plan = study.pair_plan(problems, made_up_reference(), 7, np.random.default_rng(0))
    assert plan["pair_id"].str.split("@").str[0].tolist() == [f"w{k:04d}" for k in range(1, 8)]
    first = plan.iloc[0]
    texts = problems.set_index("id")["problem"], made_up_reference().set_index("id")["problem"]
    assert first["pair_id"] == scoring.content_key(
        "w0001", texts[0][first["generated_id"]], texts[1][first["reference_id"]]
    )
    counts = Counter(plan["generated_id"])
    assert sorted(counts.values()) == [2, 2, 3]  # 7 = 3 + 3 + 1 in fresh permutations
    assert set(plan["generated_id"][:3]) == {"a", "b", "c"}
    assert set(plan["reference_id"]) <= set(made_up_reference()["id"])
    assert study.pair_plan(problems, made_up_reference(), 0, np.random.default_rng(0)).empty


def test_pairwise_truth_maps_quality_to_log_odds() -> None:
    # one quality point below a real problem: P(win) = σ(-1) for an unbiased, tie-free judge
    delta = sim.quality_logit(3.5) - sim.quality_logit(sim.REAL_TRUE_QUALITY)
    assert delta == pytest.approx(-1.0 * sim.LOGIT_PER_POINT)
    from evalbench.judge import sim_pairwise_probabilities

    p_win, p_tie, _ = sim_pairwise_probabilities(
        sim.quality_logit(3.5), sim.quality_logit(4.5), tie_margin=0.0
    )
    assert p_win == pytest.approx(1 / (1 + math.exp(1))) and p_tie == pytest.approx(0.0)
    problems = pd.DataFrame(
        {"id": ["g"], "problem": [REF_ROW["problem"]], "answer": [9], "solution": ["s"]}
    )
    plan = pd.DataFrame(
        {"pair_id": ["w1"], "generated_id": ["g"], "reference_id": ["demo:2000-I-2"]}
    )
    (task,) = study.pair_tasks(plan, problems, made_up_reference())
    assert task.answer_x == f"Problem: {REF_ROW['problem']}\n\nAnswer: 9"  # no solution shown
    assert task.answer_y == f"Problem: {SETTINGS[1]}\n\nAnswer: 345"
    assert task.quality_x == pytest.approx(sim.sim_true_quality(REF_ROW["problem"]) - 3.0)
    assert task.quality_y == pytest.approx(4.5 - 3.0)


def test_study_reads_a_reviewers_file_from_the_run_folder(tmp_path: Path) -> None:
    run = open_run(params_file(tmp_path, n_problems=6, verifications=None))
    gen = study.generate_problems(run, made_up_reference())
    empty = study.study_verifications(run, gen.problems)
    assert empty.verifications == {} and empty.path is None and not empty.simulated
    # a reviewer's round trip: generated.jsonl -> CSV -> edited -> generated_verifications.json
    data = run.dir / "generated.jsonl"
    problems = scoring.problems_frame(read_jsonl(data))
    first, second = problems["id"].iloc[:2]
    csv_path = verification.export_verification_csv(problems, tmp_path / "review.csv")
    scores = {"correctness": "5", "clarity": "4", "difficulty_match": "4", "completeness": "5"}
    edit_csv(
        csv_path,
        {
            first: {**scores, "status": "approved"},
            second: {**scores, "correctness": "1", "status": "rejected", "comments": "wrong"},
        },
    )
    path = verification.verifications_path(data)
    assert path == run.dir / "generated_verifications.json"
    verification.save_verifications(path, verification.import_verification_csv(csv_path))
    verification.save_verifications(
        path, [review_of("gen_9999", (1, 1, 1, 1), "rejected", "2025-01-10T12:00:00+00:00")]
    )
    human = study.study_verifications(run, gen.problems)
    assert sorted(human.verifications) == sorted([first, second])
    assert human.unknown_ids == ["gen_9999"] and human.path == path and not human.simulated
    assert human.verifications[second].total_score == pytest.approx((1 + 4 + 4 + 5) / 4)
    summary = metrics.human_summary(human.verifications)
    assert summary.approved_rate.estimate == pytest.approx(1 / 2)  # one approved of two


def test_simulated_verifications_need_a_simulated_generator(tmp_path: Path) -> None:
    run = open_run(params_file(tmp_path))
    problems = pd.DataFrame({"id": ["g1"], "true_quality": [None]})
    with pytest.raises(ValueError, match="simulated needs a simulated generator"):
        study.study_verifications(run, problems)


@pytest.mark.slow
def test_the_whole_study_on_a_small_run(tmp_path: Path) -> None:
    run = open_run(params_file(tmp_path, n_problems=21, generator__sim={"copy_rate": 0.3}))
    result = study.run_study(run, made_up_reference())
    problems, verdicts = result.generation.problems, result.verdicts
    assert verdicts is not None and len(verdicts) == 10
    assert (
        verdicts["order_outcome"]
        .isin(["consistent", "inconsistent_tie", "inconsistent_dropped", "unscored"])
        .all()
    )
    assert verdicts["outcome"].tolist() == [scoring.pairwise_outcome(f) for f in verdicts["final"]]
    judged = result.judge_results
    assert judged["problem_id"].tolist() == problems["id"].tolist()
    assert result.summary.judge is not None and result.summary.judge.n_items == len(problems)
    assert result.human.simulated and len(result.human.verifications) == 8
    assert result.human.path == run.dir / "simulated_verifications.json"
    flagged = result.duplicates.flagged_ids()
    assert flagged  # copy_rate 0.3 of 21: some copies of the six references
    win = result.summary.win
    assert win is not None
    dup_rows = verdicts[verdicts["generated_id"].isin(flagged) & verdicts["outcome"].notna()]
    assert win.duplicate_comparisons == len(dup_rows)
    records = {p.stem for p in (run.dir / "records").iterdir()}
    assert {"problems", "invalid", "quality", "pairwise", "duplicates"} <= records
    assert set(report.finish_headlines(result.summary)) == {
        "judge mean (1-5)", "win rate vs real", "human pass rate"
    }  # fmt: skip
    info = report.basic_info(result).set_index("item")["value"]
    assert info["valid problems"] == len(problems) and info["real problems (unique)"] == 6
    assert info["generator calls"] == result.generation.calls
    again = study.run_study(
        open_run(params_file(tmp_path, n_problems=21, generator__sim={"copy_rate": 0.3})),
        made_up_reference(),
    )
    assert again.summary.conclusion.table.equals(result.summary.conclusion.table)  # reproducible


@pytest.mark.usefixtures("offline")
def test_the_real_aime_study_is_skipped_without_the_reference_data() -> None:
    from evalbench.sources import DataUnavailable
    from evalbench.studies import load_params

    root = Path(__file__).resolve().parents[2]
    params = load_params(root / "params" / "datagen_aime.yaml")
    assert params.reference.sources == ["matharena", "qwen25math"]
    with pytest.raises(DataUnavailable, match="evalbench fetch"):
        study.load_study_reference(params)


@pytest.mark.usefixtures("offline")
def test_the_demo_study_reads_only_evalbench_s_demo_problems_offline() -> None:
    from evalbench.studies import load_params

    root = Path(__file__).resolve().parents[2]
    params = load_params(root / "params" / "datagen_demo.yaml")
    reference = study.load_study_reference(params)
    assert len(reference) == 30 and set(reference["source"]) == {"demo"}
    assert "not AIME" in params.title and "not AIME" in params.description


def test_judgments_are_keyed_by_content_so_a_changed_problem_is_judged_again(
    tmp_path: Path,
) -> None:
    path = params_file(tmp_path, n_problems=5, generator__sim={"malformed_rate": 0})
    problems = study.generate_problems(open_run(path), made_up_reference()).problems
    first = study.judge_problems(open_run(path), problems)
    assert first["problem_id"].tolist() == problems["id"].tolist()
    assert first["case_id"][0] == scoring.content_key(
        problems["id"][0], scoring.problem_card(problems.iloc[0], with_solution=True)
    )
    changed = problems.copy()
    changed.loc[0, "problem"] = changed.loc[0, "problem"] + " Give the answer as an integer."
    run = open_run(path)
    again = study.judge_problems(run, changed)
    assert _calls(run, "judge") == 1  # only the changed problem; the stored four are reused
    assert again["case_id"][0] != first["case_id"][0]
    assert again["case_id"][1:].tolist() == first["case_id"][1:].tolist()


def test_every_record_file_the_study_declares_validates_against_its_type(tmp_path: Path) -> None:
    # malformed judge outputs give unscored rows and pairs: their missing values are null
    path = params_file(tmp_path, n_problems=21, judge__sim={"malformed_rate": 0.3})
    run = open_run(path)
    result = study.run_study(run, made_up_reference())
    assert result.summary.judge is not None and result.summary.judge.n_unscored > 0
    for name, record_type in study.STUDY.records.items():
        text = (run.dir / "records" / f"{name}.jsonl").read_text()
        assert "NaN" not in text, name
        rows = read_jsonl(run.dir / "records" / f"{name}.jsonl")
        assert rows, name
        for row in rows:
            record_type.model_validate(row)
    assert study.counts(result)["judge_unscored"] == result.summary.judge.n_unscored
    assert study.notes(result) == ["simulated reviews"]
    assert result.usage.set_index("system").loc["judge", "calls"] == len(result.problems) + 2 * 10


def test_the_package_exports_what_its_docstring_lists():
    import re

    import evalbench.datagen as package

    assert sorted(package.__all__) == [
        "DatagenParams",
        "DatagenResult",
        "export_verification_csv",
        "import_verification_csv",
        "load_verifications",
        "problems_frame",
        "run",
        "save_verifications",
        "verification_form",
        "verifications_path",
    ]
    doc = str(package.__doc__)
    assert all(
        re.search(rf"\b{name}\b", doc) and hasattr(package, name) for name in package.__all__
    )


def test_quality_record_is_a_rubric_judgment_with_its_own_fields_only() -> None:
    """The fields every rubric judgment has are declared once, in evalbench.judge."""
    from evalbench.datagen.records import QualityRecord
    from evalbench.judge import RubricJudgment

    assert issubclass(QualityRecord, RubricJudgment)
    own = set(QualityRecord.__annotations__)
    assert not own & set(RubricJudgment.model_fields)
    assert {"problem_id", "case_id", "score_correctness", "extra_reason"} <= own
