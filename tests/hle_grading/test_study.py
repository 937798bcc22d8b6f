"""The expert-grading study: params, nothing to grade is one line, a real rubric judge on the
loopback server grading the set's answer and agents' answers (scored, unscored, no answer),
a whole offline demo run (records that validate and give the tables, resume) and a notebook
without section guards."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from hle_grading.cases import item, write_jsonl
from loopback import Reply
from studyfiles import CANARY_KEY, KEY_ENV

from evalbench.hle_grading import data, report, study
from evalbench.hle_grading.records import HleGradingParams
from evalbench.records import read_jsonl
from evalbench.studies import open_run

ROOT = Path(__file__).resolve().parents[2]
JUDGE = {"name": "judge", "provider": "sim"}


def _params(**extra) -> HleGradingParams:
    return HleGradingParams.model_validate({"title": "t", "judge": JUDGE, **extra})


def _write_params(tmp_path: Path, name: str = "grading", **fields) -> Path:
    path = tmp_path / f"{name}.yaml"
    body = {"study": "hle_grading", "title": "t", "bootstrap_rounds": 50, **fields}
    path.write_text(yaml.safe_dump(body))
    return path


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"systems": [{"name": "a"}, {"name": "a"}]}, "names must be unique"),
        ({"systems": [{"name": "judge"}]}, "may not be named like the judge"),
        ({"systems": [{"name": "dataset"}]}, "'dataset'"),
        ({"tolerance": 101}, "tolerance"),
        ({"expert": {}}, "expert"),  # the old hle study's block: not a field here
    ],
)
def test_bad_params_say_what_is_wrong(extra, message):
    with pytest.raises(ValueError, match=message):
        _params(**extra)


def test_a_missing_expert_set_names_the_path(tmp_path):
    with pytest.raises(ValueError, match="data path not found"):
        HleGradingParams.model_validate(
            {"title": "t", "judge": JUDGE, "dataset": "nowhere.jsonl"},
            context={"base_dir": str(tmp_path)},
        )


def test_nothing_to_grade_is_one_line(tmp_path):
    expert = write_jsonl(tmp_path / "e.jsonl", [item(answer=None)])
    run = open_run(_write_params(tmp_path, dataset=str(expert), judge=JUDGE))
    with pytest.raises(data.GradingDataError, match=r"nothing to grade: the expert set .* has no"):
        study.run(run)


def _loop(loopback, name: str) -> dict:
    return {"name": name, "provider": "openai", "model": "m", "base_url": loopback.base_url,
            "api_key_env": KEY_ENV, "max_retries": 0, "max_concurrency": 1}  # fmt: skip


@pytest.mark.slow
def test_a_real_judge_grades_the_sets_answer_and_agents_answers(tmp_path, loopback, monkeypatch):
    monkeypatch.setenv(KEY_ENV, CANARY_KEY)
    scores = dict(zip(data.DIMENSIONS, [90, 80, 70, 60, 50, 40], strict=True))
    loopback.enqueue(Reply(text=json.dumps({"scores": scores, "overall": 70, "confidence": 80})),
                     Reply(text="A fine answer."))  # fmt: skip
    expert = write_jsonl(
        tmp_path / "e.jsonl", [item(human_scores=dict.fromkeys(data.DIMENSIONS, 60))]
    )
    agents = [{"name": "ok", "provider": "python", "entrypoint": "tests.agents.example_agent:async_answer"},
              {"name": "broken", "provider": "python", "entrypoint": "tests.agents.example_agent:crash"}]  # fmt: skip
    run = open_run(_write_params(tmp_path, dataset=str(expert), systems=agents,
                                 judge=_loop(loopback, "real-judge")))  # fmt: skip
    result = study.run(run)
    assert loopback.count == 2  # the set's answer and ok's; broken gave none
    asked = [r["messages"][-1]["content"] for r in loopback.requests]
    assert "Because." in asked[0] and "Since." in asked[0] and "says because" in asked[0]
    assert "42" in asked[1]
    records = result.records.set_index("source")
    assert records.loc["dataset", "status"] == "scored"
    assert records.loc["dataset", "score_overall"] == 65.0  # (90+80+70+60+50+40)/6, not 70
    assert records.loc["dataset", "human_overall"] == 60.0
    assert records.loc["ok", "status"] == "unscored" and records.loc["ok", "answer"] == "42"
    assert records.loc["broken", "status"] == "no_response"
    assert "cannot solve" in records.loc["broken", "error"]
    assert result.sources == ["dataset", "ok", "broken"]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo study as shipped (bootstrap rounds cut to 50), run once for the module in its
    own outputs and cache folders."""
    tmp_path = tmp_path_factory.mktemp("hle_grading_demo")
    fields = yaml.safe_load((ROOT / "params" / "hle_grading_demo.yaml").read_text())
    path = _write_params(tmp_path, "hle_grading_demo", **{**fields, "bootstrap_rounds": 50})
    with pytest.MonkeyPatch.context() as env:
        env.setenv("EVALBENCH_OUTPUTS", str(tmp_path / "outputs"))
        env.setenv("EVALBENCH_CACHE", str(tmp_path / "cache"))
        run = open_run(path)
        result = study.run(run)
        run.finish(result)
        again = open_run(path)
        study.run(again)
    return run, result, again


@pytest.mark.slow
def test_the_demo_writes_valid_records_that_give_the_tables(demo):
    run, result, _ = demo
    for name, record_type in study.STUDY.records.items():
        path = run.dir / "records" / f"{name}.jsonl"
        if name in study.STUDY.optional_records and not path.exists():
            continue
        for line in read_jsonl(path):
            record_type.model_validate(line)
    grades = read_jsonl(run.dir / "records" / "grades.jsonl")
    assert len(grades) == 32 * 3 == len(result.records)  # the set's answers + two systems
    states = result.summary.states.set_index("source")
    for source in ("dataset", "calibrated-sim", "overconfident-sim"):
        mine = [g["status"] for g in grades if g["source"] == source]
        assert states.loc[source, "answers"] == len(mine)
        assert states.loc[source, "scored"] == mine.count("scored")
    counts = study.counts(result)
    assert counts["scored"] + counts["unscored"] + counts["no_response"] == 96
    assert set(report.headlines(result)) == {
        "mean overall dataset", "within ±10 of humans", "bias vs humans (points)"}  # fmt: skip


@pytest.mark.slow
def test_a_rerun_resumes_and_asks_only_the_failed_calls(demo):
    _, result, again = demo
    failed = int(result.usage["errors"].sum())
    assert 0 < failed == int(again.ledger.frame()["calls"].sum())


def test_the_notebook_reads_top_to_bottom_without_section_guards():
    notebook = json.loads((ROOT / "notebooks" / "hle_grading.ipynb").read_text())
    code = ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]
    guards = [line for cell in code for line in cell.splitlines() if line.startswith("if ")]
    assert not guards


def test_the_package_exports_what_its_docstring_lists():
    import evalbench.hle_grading as package

    assert sorted(package.__all__) == [
        "ExpertItem", "HleGradingParams", "HleGradingResult", "load", "run"]  # fmt: skip
    doc = package.__doc__ or ""
    assert all(re.search(rf"\b{n}\b", doc) and hasattr(package, n) for n in package.__all__)
