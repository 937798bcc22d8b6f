"""The HLE study: params, the one answering function (chat and imported predictions), a judge
on the loopback server with a scripted structured reply, image messages, the record of each
judgment state, a whole offline run (records that validate, official files that give back
the official numbers, resume) and a notebook without section guards."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
import yaml
from hle.cases import IMAGE, row, write_jsonl
from loopback import Reply
from studyfiles import CANARY_KEY, KEY_ENV

from evalbench import calibration
from evalbench.hle import data, metrics, report, scoring, study
from evalbench.hle.data import HleItem
from evalbench.hle.records import HleParams
from evalbench.records import read_jsonl
from evalbench.studies import open_run

ROOT = Path(__file__).resolve().parents[2]
SIM_JUDGE = {"name": "judge", "provider": "sim", "sim": {"accuracy": 1.0}}


def _params(**extra) -> HleParams:
    data = {"title": "t", "systems": [{"name": "a"}], "judge": SIM_JUDGE, **extra}
    return HleParams.model_validate(data)


# ----------------------------------------------------------------------------- params


def test_a_predictions_entry_needs_no_provider_and_asks_nothing(tmp_path):
    path = data.write_predictions(tmp_path / "hle_m.json", {})
    params = _params(systems=[{"name": "a"}, {"name": "imported", "predictions": str(path)}])
    assert params.systems[1].provider == "predictions" and not params.systems[1].simulated
    assert [s.name for s in params.model_specs()] == ["a", "judge"]  # no key asked for it


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"systems": [{"name": "a"}, {"name": "a"}]}, "names must be unique"),
        ({"systems": [{"name": "judge"}]}, "may not be named like the judge"),
        ({"systems": [{"name": "a", "provider": "predictions"}]}, "'predictions' goes with"),
        ({"systems": [{"name": "a", "provider": "openai", "model": "m",
                       "sim_confidence": {"style": "overconfident"}}]}, "provider 'sim' only"),
        ({"expert": {"judge": {"name": "rubric"}}}, "expert"),  # grading is hle_grading now
        ({"judge": {**SIM_JUDGE, "structured": "maybe"}}, "structured"),
    ],
)  # fmt: skip
def test_bad_params_say_what_is_wrong(extra, message):
    with pytest.raises(ValueError, match=message):
        _params(**extra)


# ----------------------------------------------------------------------------- answering


class _Run:
    """Just enough of a Run for :func:`answer_items` with imported predictions only."""

    def ask(self, *args, **kwargs):  # pragma: no cover - must never be called
        raise AssertionError("an imported predictions file asks no model")


def test_imported_predictions_are_answers_and_a_missing_id_is_missing(tmp_path):
    path = data.write_predictions(tmp_path / "hle_m.json", {"a": {
        "model": "m", "response": "Answer: 4", "usage": {"prompt_tokens": 7}}})  # fmt: skip
    params = _params(systems=[{"name": "imp", "predictions": str(path)}])
    items = data.load(write_jsonl(tmp_path / "q.jsonl", [row("a"), row("b")]))
    rows = study.answer_items(_Run(), params, items)
    assert [(r["id"], r["state"]) for r in rows] == [("a", "answered"), ("b", "missing")]
    assert rows[0]["response"] == "Answer: 4" and rows[0]["prompt_tokens"] == 7
    assert rows[1]["error"] == "missing_prediction: 'b' is not in hle_m.json"


def test_a_record_keeps_every_state_apart():
    item = HleItem(id="q1", question="Q?", answer="4", answer_type="exactMatch", category="Math")
    missing = {"id": "q1", "system": "s", "state": "missing", "error": "missing_prediction"}
    rec = study.score_record(item, missing, judge="j", judgment=None)
    assert (rec.status, rec.correct, rec.judge) == ("no_response", None, None)
    answered = {"id": "q1", "system": "s", "state": "answered", "response": "Answer: 4"}
    failed = study.score_record(item, answered, judge="j", judgment=None, judge_error="http_500: x")
    assert failed.status == "unscored" and "http_500" in failed.unscored_reason
    yes = scoring.parse_judgment("correct: yes")
    ok = study.score_record(item, answered, judge="j", judgment=yes)
    assert (ok.status, ok.correct, ok.judge) == ("scored", True, "j")


# ----------------------------------------------------------------------------- loopback


def _loop(loopback, name, **extra):
    return {"name": name, "provider": "openai", "model": "m", "base_url": loopback.base_url,
            "api_key_env": KEY_ENV, "max_retries": 0, "max_concurrency": 1, **extra}  # fmt: skip


def _write_params(tmp_path, name="hle_small", **data):
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"study": "hle", "title": "t", "bootstrap_rounds": 50, **data}))
    return path


def test_a_real_judge_with_structured_output_and_an_image_question(tmp_path, loopback, monkeypatch):
    monkeypatch.setenv(KEY_ENV, CANARY_KEY)
    dataset = write_jsonl(tmp_path / "q.jsonl", [row("a", answer="4"),
                                                 row("b", answer="7", image=IMAGE)])  # fmt: skip
    answers = [Reply(text="Explanation: e\nAnswer: 4\nConfidence: 85%"),
               Reply(text="Explanation: e\nAnswer: 6\nConfidence: 40%")]  # fmt: skip
    verdicts = [
        Reply(text=json.dumps({"extracted_final_answer": "4", "reasoning": "same",
                               "correct": "yes", "confidence": 85, "strict": True})),
        Reply(text=json.dumps({"extracted_final_answer": "6", "reasoning": "differs",
                               "correct": "no", "confidence": 40, "strict": True})),
    ]  # fmt: skip
    loopback.enqueue(*answers, *verdicts)
    path = _write_params(tmp_path, dataset=str(dataset), systems=[_loop(loopback, "sys")],
                         judge=_loop(loopback, "real-judge", structured=True))  # fmt: skip
    run = open_run(path)
    result = study.run(run)
    run.finish(result)
    asked, judged = loopback.requests[:2], loopback.requests[2:]
    assert loopback.count == 4
    assert asked[0]["messages"][0] == {"role": "system", "content": scoring.SYSTEM_PROMPT}
    assert asked[1]["messages"][1]["content"] == [
        {"type": "text", "text": "Question b?"},
        {"type": "image_url", "image_url": {"url": IMAGE}},
    ]
    for request, (qid, answer, response) in zip(
        judged, [("a", "4", answers[0].text), ("b", "7", answers[1].text)], strict=True
    ):
        assert request["response_format"] == scoring.JUDGE_RESPONSE_FORMAT
        prompt = scoring.JUDGE_PROMPT.format(question=f"Question {qid}?", correct_answer=answer,
                                         response=response)  # fmt: skip
        assert request["messages"] == [{"role": "user", "content": prompt}]
    records = result.records.set_index("id")
    assert records.loc["a", "correct"] and not records.loc["b", "correct"]
    assert records["parse_method"].tolist() == ["json", "json"]
    assert records["confidence"].tolist() == [85.0, 40.0]
    row_ = result.summary.systems.iloc[0]
    assert (row_.official_pct, row_.wald_pct) == (50.0, round(1.96 * (50 * 50 / 2) ** 0.5, 2))
    assert "undefined" in row_.calib_official_note  # 2 judged items < 100


def test_a_failed_judge_call_is_unscored_and_shown(tmp_path, loopback, monkeypatch):
    from loopback import Fault

    monkeypatch.setenv(KEY_ENV, CANARY_KEY)
    dataset = write_jsonl(tmp_path / "q.jsonl", [row("a")])
    loopback.enqueue(Reply(text="Answer: 4\nConfidence: 90%"), Fault("401"))
    path = _write_params(tmp_path, dataset=str(dataset), systems=[_loop(loopback, "sys")],
                         judge=_loop(loopback, "real-judge"))  # fmt: skip
    run = open_run(path)
    result = study.run(run)
    record = result.records.iloc[0]
    assert record.status == "unscored" and record.judge_error.startswith("http_401")
    assert result.summary.systems.iloc[0].accuracy == 0.0  # counted wrong, and counted apart
    assert result.summary.systems.iloc[0].unscored == 1


# ----------------------------------------------------------------------------- a whole run


def _demo_file(tmp_path, **extra):
    params = yaml.safe_load((ROOT / "params" / "hle_demo.yaml").read_text())
    params["systems"][2]["predictions"] = str(data.demo_path() / "predictions_demo.json")
    return _write_params(tmp_path, "hle_demo_test", **{**params, "bootstrap_rounds": 50, **extra})


@pytest.mark.slow
def test_a_whole_offline_run_writes_valid_records_and_official_files(tmp_path):
    run = open_run(_demo_file(tmp_path))
    result = study.run(run)
    run.finish(result)
    for name, record_type in study.STUDY.records.items():
        if name in ("agent_runs", "steps"):  # no agent in the demo
            assert not (run.dir / "records" / f"{name}.jsonl").exists()
            continue
        lines = read_jsonl(run.dir / "records" / f"{name}.jsonl")
        assert lines, name
        for line in lines:
            record_type.model_validate(line)
    assert len(read_jsonl(run.dir / "records" / "hle.jsonl")) == 3 * len(result.items)
    counts = study.counts(result)
    assert counts["items"] == len(result.items) and counts["excluded_images"] == 0
    assert counts["scored"] + counts["unscored"] + counts["no_response"] == 3 * len(result.items)
    assert counts["no_response"] >= 20  # the imported file leaves 20 questions out
    assert set(report.headlines(result)) == {
        "accuracy calibrated-sim", "calibration error (corrected) calibrated-sim",
        "accuracy overconfident-sim"}  # fmt: skip
    _official_files_give_the_official_numbers(result)
    # 255 questions: two bins of the official calibration error, [0, 100) and [100, n)
    assert "make 2 bins; the official loop skips the last and counts 100 items" in (
        report.calibration_sentence(result)
    )
    failed = int(result.usage["errors"].sum())
    again = open_run(_demo_file(tmp_path))
    study.run(again)
    # a rerun resumes: every answer is read back; only the failed calls are asked again
    assert 0 < failed == int(again.ledger.frame()["calls"].sum())


def _official_files_give_the_official_numbers(result):
    """The judged files, read like the official dump_metrics reads them, give our numbers."""
    n = len(result.items)
    folder = result.official_files[0].parent
    for row_ in result.summary.systems.to_dict("records"):
        judged = json.loads((folder / f"judged_hle_{row_['system']}.json").read_text())
        correct = [v["judge_response"]["correct"] == "yes" for v in judged.values()]
        confidence = np.array([v["judge_response"]["confidence"] for v in judged.values()]) / 100
        assert metrics.official_accuracy(sum(correct), n) == row_["official_pct"]
        official = calibration.calib_err_official(confidence, np.array(correct))
        assert official.percent == row_["calib_official_pct"]


@pytest.mark.slow
def test_the_quick_tier_keeps_every_category_and_the_official_error_is_undefined(tmp_path):
    run = open_run(_demo_file(tmp_path, tier="quick"))
    result = study.run(run)
    categories = {it.category for it in data.load("demo")}
    assert {it.category for it in result.items} == categories
    assert len(result.items) < 40
    assert result.summary.systems["calib_official_pct"].isna().all()  # < 100 judged items
    assert result.summary.systems["calib_corrected_pct"].notna().all()
    assert any("official calibration error undefined" in n for n in report.notes(result))


def test_exclude_images_on_a_local_file_is_counted(tmp_path):
    dataset = write_jsonl(tmp_path / "q.jsonl", [row("a"), row("b", image=IMAGE), row("c")])
    path = _write_params(tmp_path, dataset=str(dataset), exclude_images=True,
                         systems=[{"name": "s", "provider": "sim"}], judge=SIM_JUDGE)  # fmt: skip
    run = open_run(path)
    result = study.run(run)
    assert [it.id for it in result.items] == ["a", "c"] and result.excluded_images == 1
    sentence = report.data_sentence(result)
    assert "Questions with an image excluded (exclude_images: true): 1." in sentence
    assert "2 questions (2 exactMatch, 0 multipleChoice) in 1 category" in sentence


@pytest.mark.slow
def test_an_agent_system_answers_and_is_judged_like_a_chat_model(tmp_path, loopback, monkeypatch):
    # the agent gets the official response format with the question; its final answer is
    # the response the judge reads; a real judge on the loopback server grades it
    monkeypatch.setenv(KEY_ENV, CANARY_KEY)
    dataset = write_jsonl(tmp_path / "q.jsonl", [row("a", answer="4"), row("b", answer="7")])
    verdicts = [
        Reply(text=json.dumps({"extracted_final_answer": "4", "reasoning": "same",
                               "correct": "yes", "confidence": 90, "strict": True})),
        Reply(text=json.dumps({"extracted_final_answer": "4", "reasoning": "differs",
                               "correct": "no", "confidence": 90, "strict": True})),
    ]  # fmt: skip
    loopback.enqueue(*verdicts)
    agent = {"name": "my-agent", "provider": "python",
             "entrypoint": "tests.agents.example_agent:hle_answer"}  # fmt: skip
    path = _write_params(tmp_path, dataset=str(dataset), systems=[agent],
                         judge=_loop(loopback, "real-judge"))  # fmt: skip
    run = open_run(path)
    result = study.run(run)
    assert loopback.count == 2  # only the judge asked the server
    prompt = loopback.requests[0]["messages"][0]["content"]
    assert "Exact Answer: 4" in prompt and "Question a?" in prompt
    records = result.records.set_index("id")
    assert records.loc["a", "correct"] and not records.loc["b", "correct"]
    runs = read_jsonl(run.dir / "records" / "agent_runs.jsonl")
    assert [r["state"] for r in runs] == ["answered", "answered"]


def test_the_notebook_reads_top_to_bottom_without_section_guards():
    notebook = json.loads((ROOT / "notebooks" / "hle.ipynb").read_text())
    code = ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]
    guards = [line for cell in code for line in cell.splitlines() if line.startswith("if ")]
    assert not guards and not any("expert" in cell for cell in code)


def test_the_package_exports_what_its_docstring_lists():
    import evalbench.hle as package

    assert sorted(package.__all__) == ["HleParams", "HleResult", "load", "parse_judgment",
                                       "read_predictions", "run", "write_predictions"]  # fmt: skip
    doc = package.__doc__ or ""
    assert all(re.search(rf"\b{n}\b", doc) and hasattr(package, n) for n in package.__all__)


def test_a_batch_mode_system_records_the_batch_price():
    from evalbench.hle.records import HleSystem
    from evalbench.records import ResponseRecord

    prices = {"price_input_per_mtok": 2.0, "price_output_per_mtok": 8.0}
    system = HleSystem(name="b", provider="openai", model="m", batch=True, **prices)
    item = HleItem(id="q", question="?", answer="4", answer_type="exactMatch", category="Math")
    answer = ResponseRecord(
        system="b", key="q", request_key="r", text="4", prompt_tokens=1000, completion_tokens=500
    )
    # (1000 × 2 + 500 × 8) / 1e6 = 0.006 USD at the standard price, half of it in batch mode,
    # as the usage table (core token_cost) counts it
    assert study._answer_row(system, item, answer)["cost_usd"] == pytest.approx(0.003)
    standard = system.model_copy(update={"batch": False})
    assert study._answer_row(standard, item, answer)["cost_usd"] == pytest.approx(0.006)
