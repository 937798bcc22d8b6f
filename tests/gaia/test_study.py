"""The GAIA study: params, jobs, one system's predictions, the simulator, and a whole run
in-process (records that validate, counts, headlines, resume with no new call)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml
from gaia.cases import row, write_jsonl

from evalbench import gaia
from evalbench.gaia import scoring, study
from evalbench.gaia.sim import plausible_wrong, sim_answer
from evalbench.models import ChatRequest, ModelSpec, SimSpec
from evalbench.records import ResponseRecord, read_jsonl
from evalbench.studies import open_run


def _params(**extra) -> gaia.GaiaParams:
    systems = extra.pop("systems", [{"name": "a"}, {"name": "b"}])
    return gaia.GaiaParams(title="t", systems=systems, **extra)


# ----------------------------------------------------------------------------- params


def test_params_check_names_levels_and_the_pair():
    assert _params().comparison() == ("a", "b")  # the first two by default
    assert _params(compare=("b", "a")).comparison() == ("b", "a")
    assert _params(systems=[{"name": "a"}]).comparison() is None
    assert _params(levels=[3, 1, 3]).levels == [1, 3]
    for bad, message in [
        ({"systems": [{"name": "a"}, {"name": "a"}]}, "names must be unique"),
        ({"compare": ("a", "z")}, "unknown system 'z'"),
        ({"submission_system": "z"}, "unknown system 'z'"),
        ({"levels": [4]}, "levels must be a non-empty subset of 1, 2, 3"),
        ({"levels": []}, "levels must be a non-empty subset of 1, 2, 3"),
    ]:
        with pytest.raises(ValueError, match=message):
            _params(**bad)


def test_load_study_items_keeps_the_first_n_of_each_level():
    items = study.load_study_items(_params(levels=[1, 3], limit_per_level=2))
    assert [it.task_id for it in items] == ["demo-l1-01", "demo-l1-02", "demo-l3-01", "demo-l3-02"]


def test_answer_jobs_one_per_item_and_attempt_with_the_attempt_as_seed():
    items = gaia.load("demo", task_ids=["demo-l1-01", "demo-l2-01"])
    jobs = study.answer_jobs(items, _params(attempts=3))
    assert [j.key for j in jobs] == [f"{t}#{a}" for t in ("demo-l1-01", "demo-l2-01")
                                     for a in range(3)]  # fmt: skip
    assert [j.request.seed for j in jobs[:3]] == [None, 1, 2]  # attempt 0 keeps the default
    assert jobs[0].request.messages == scoring.build_messages(items[0])
    assert jobs[3].sim.truth == {"expected": items[1].final_answer, "level": 2}


def test_a_prediction_costs_its_tokens_at_the_systems_prices_unless_cached():
    spec = ModelSpec(name="m", provider="openai", model="x", price_input_per_mtok=2.0,
                     price_output_per_mtok=8.0)  # fmt: skip
    answer = ResponseRecord(system="m", key="t1#2", text="FINAL ANSWER: 1", prompt_tokens=1000,
                            completion_tokens=500, latency_s=0.5)  # fmt: skip
    got = study._prediction(spec, "t1#2", answer)
    # (1000 * 2 + 500 * 8) / 1e6 = 0.006 USD
    assert got["cost_usd"] == pytest.approx(0.006)
    assert (got["task_id"], got["attempt"], got["output"]) == ("t1", 2, "FINAL ANSWER: 1")
    cached = answer.model_copy(update={"cached": True})
    assert study._prediction(spec, "t1#2", cached)["cost_usd"] is None
    failed = ResponseRecord(system="m", key="t1#0", error="http_500: boom")
    assert study._prediction(spec, "t1#0", failed)["cost_usd"] is None
    # and no latency: before, its 0.0 was averaged into the usage table's latency per answer
    # (one 1.0 s answer and one failed call read 0.5 s)
    assert study._prediction(spec, "t1#0", failed)["latency_s"] is None
    assert study._prediction(spec, "t1#2", answer)["latency_s"] == 0.5


# ----------------------------------------------------------------------------- simulator


def test_the_simulated_assistant_is_right_wrong_or_forgets_the_template():
    request = ChatRequest(messages=[{"role": "user", "content": "q"}])
    right = sim_answer(request, SimSpec(accuracy=1.0), np.random.default_rng(0),
                       expected="391", level=1)  # fmt: skip
    assert gaia.extract_answer(right.text) == "391"
    wrong = sim_answer(request, SimSpec(accuracy=0.0), np.random.default_rng(0),
                       expected="391", level=1)  # fmt: skip
    assert not gaia.question_scorer(gaia.extract_answer(wrong.text), "391")
    mute = sim_answer(request, SimSpec(malformed_rate=1.0), np.random.default_rng(0),
                      expected="391", level=1)  # fmt: skip
    assert gaia.extract_answer(mute.text) is None


def test_a_plausible_wrong_answer_is_always_wrong_for_the_official_scorer():
    rng = np.random.default_rng(1)
    for item in gaia.load("demo"):
        for _ in range(5):
            assert not gaia.question_scorer(plausible_wrong(item.final_answer, rng),
                                            item.final_answer), item.task_id  # fmt: skip


# ----------------------------------------------------------------------------- a whole run


def _study_file(tmp_path, **extra):
    data = {"study": "gaia", "title": "t", "dataset": "demo", "limit_per_level": 2, "attempts": 2,
            "bootstrap_rounds": 50, "systems": [
                {"name": "good", "sim": {"accuracy": 0.9}},
                {"name": "flaky", "sim": {"accuracy": 0.5, "error_rate": 0.2}}], **extra}  # fmt: skip
    path = tmp_path / "gaia_small.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.slow
def test_a_whole_run_writes_valid_records_counts_and_headlines(tmp_path):
    run = open_run(_study_file(tmp_path))
    result = gaia.run(run)
    run.finish(result)
    lines = read_jsonl(run.dir / "records" / "gaia.jsonl")
    assert len(lines) == 2 * 6 * 2  # systems × items (2 per level) × attempts
    for line in lines:
        study.ScoredRecord.model_validate(line)
    counts = study.counts(result)
    assert counts["items"] == 6 and counts["records"] == 24
    assert counts["errors"] == sum(line["error"] is not None for line in lines)
    overall = result.summary.accuracy.set_index(["system", "level"])["accuracy"]
    manifest = json.loads((run.dir / "manifest.json").read_text())
    assert manifest["headlines"] == {
        "accuracy flaky": overall[("flaky", "all")],
        "accuracy good": overall[("good", "all")],
    }
    assert result.simulated == {"good", "flaky"} and result.submission.exists()
    assert result.pair == ("good", "flaky") and result.comparison.n == 6
    again = open_run(_study_file(tmp_path))  # same params: the same folder, resumed
    gaia.run(again)
    # every answer read back; only the calls that failed are asked again
    assert again.ledger.frame()["calls"].sum() == counts["errors"] >= 1
    again.finish()


def test_bad_data_stops_the_run_with_a_gaia_data_error_naming_the_field(tmp_path):
    write_jsonl(tmp_path, [row("t1", 1, "1"), row("t2", 7, "2")])
    run = open_run(_study_file(tmp_path, dataset=str(tmp_path), limit_per_level=None))
    with pytest.raises(gaia.GaiaDataError, match="field 'Level' must be 1, 2 or 3, got 7"):
        gaia.run(run)
    run.finish()


def test_a_quick_tier_keeps_a_stratified_nested_subsample(tmp_path):
    # the demo suite: 32 items, levels of 12, 12 and 8 → quick keeps ceil(10%) = 2, 2, 1
    from evalbench.gaia.study import GaiaParams, load_study_items

    base = {"study": "gaia", "title": "t", "systems": [{"name": "s"}]}
    quick = load_study_items(GaiaParams(**base, tier="quick"))
    standard = load_study_items(GaiaParams(**base, tier="standard"))
    assert [it.level for it in quick].count(1) == 2 and len(quick) == 2 + 2 + 1
    assert {it.task_id for it in quick} <= {it.task_id for it in standard}
    assert len(standard) == 4 + 4 + 3  # ceil(0.3 × 12, 12, 8)
