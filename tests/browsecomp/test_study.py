"""The BrowseComp study end to end: loopback systems and grader on a small CSV, simulated
systems and an agent on a small BrowseComp-ZH file."""

from __future__ import annotations

import json

import pytest
from browsecomp.helpers import write_csv, write_params, write_xlsx
from loopback import Reply
from studyfiles import CANARY_KEY, KEY_ENV

from evalbench import browsecomp
from evalbench.browsecomp import scoring
from evalbench.browsecomp.study import STUDY
from evalbench.records import read_jsonl
from evalbench.studies import open_run


def _run(path):
    run = open_run(path)
    return run, browsecomp.run(run)


def _records(run, name):
    return read_jsonl(run.dir / "records" / f"{name}.jsonl")


def _validate(run):
    for name, record_type in STUDY.records.items():
        path = run.dir / "records" / f"{name}.jsonl"
        if path.exists():
            for row in read_jsonl(path):
                record_type.model_validate(row)


def test_loopback_system_and_grader_on_a_small_csv(tmp_path, loopback, monkeypatch):
    monkeypatch.setenv(KEY_ENV, CANARY_KEY)
    data = write_csv(
        tmp_path / "bc.csv",
        [("Which bridge?", "Sydney Harbour Bridge", "Geo"), ("How many?", "3", "Math")],
    )
    loopback.enqueue(
        Reply(text="Explanation: e\nExact Answer: Sydney Harbour Bridge\nConfidence: 90%"),
        Reply(text="Explanation: e\nExact Answer: 4\nConfidence: 20%"),
        Reply(
            text="extracted_final_answer: Sydney Harbour Bridge\nreasoning: same\ncorrect: yes\nconfidence: 90"
        ),
        Reply(text="The answer 4 does not match 3."),  # no verdict line: unscored
    )
    common = {
        "base_url": loopback.base_url,
        "api_key_env": KEY_ENV,
        "max_retries": 0,
        "max_concurrency": 1,
    }
    systems = [{"name": "loop", "provider": "openai", "model": "m", **common}]
    grader = {"name": "grader", "provider": "openai", "model": "g", "temperature": 0.5, **common}
    path = write_params(tmp_path, systems=systems, dataset=str(data), grader=grader)
    run, result = _run(path)
    asked = loopback.requests[0]["messages"]
    assert asked == [
        {"role": "user", "content": scoring.QUERY_TEMPLATE.format(Question="Which bridge?")}
    ]
    graded = loopback.requests[2]
    assert graded["messages"][0] == {"role": "system", "content": "You are a helpful assistant."}
    assert "[correct_answer]: Sydney Harbour Bridge" in graded["messages"][1]["content"]
    assert graded["temperature"] == 0.5 and "response_format" not in graded  # free text
    rows = {r["id"]: r for r in _records(run, "official")}
    first, second = rows["bc-0000"], rows["bc-0001"]
    assert (first["status"], first["correct"], first["confidence"]) == ("scored", True, 90.0)
    assert first["reference_grade"] == "correct: yes" and not first["reference_correct"]
    assert second["status"] == "unscored" and second["correct"] is None
    acc = result.accuracy.iloc[0]
    assert (acc["accuracy"], acc["accuracy_all"], acc["reference_accuracy"]) == (1.0, 0.5, 0.0)
    assert "Sydney" not in json.dumps(_records(run, "official"))  # no decrypted text in records
    _validate(run)


def test_simulated_systems_and_an_agent_on_a_small_zh_file(tmp_path):
    rows = [(f"话题{i % 3}", f"问题{i}？", f"答案{i}") for i in range(40)]
    data = write_xlsx(tmp_path / "zh.xlsx", rows)
    systems = [
        {"name": "sim-chat", "provider": "sim", "sim": {"accuracy": 0.5}},
        {
            "name": "sim-agent",
            "provider": "sim",
            "sim": {"accuracy": 0.5},
            "sim_agent": {
                "mean_steps": {"default": 4},
                "tool_mix": {"search": 0.5, "open_url": 0.5},
            },
        },
    ]
    grader = {
        "name": "grader-sim",
        "provider": "sim",
        "sim": {"accuracy": 1.0, "malformed_rate": 0.2},
    }
    run, o = _run(
        write_params(
            tmp_path, systems=systems, dataset=str(data), grader=grader, calibration_bin_size=10
        )
    )
    assert o.style == "browsecomp_zh" and o.topics == {"话题0": 14, "话题1": 13, "话题2": 13}
    records = o.records
    assert (records["status"] == "unscored").sum() > 0  # the malformed grader replies
    assert set(o.calibration["system"]) == {"sim-chat", "sim-agent"}
    assert o.calibration["hle_official"].notna().all()  # 40 items, beta 10
    effort = o.effort.set_index("system")
    assert list(effort.index) == ["sim-agent"] and effort.loc["sim-agent", "search_calls"] > 0
    assert set(o.topic_accuracy["topic"]) == {"话题0", "话题1", "话题2"}
    _validate(run)


def test_a_chat_answer_records_the_batch_price():
    from evalbench.agents import SystemSpec
    from evalbench.browsecomp.study import _chat_row
    from evalbench.records import ResponseRecord

    prices = {"price_input_per_mtok": 2.0, "price_output_per_mtok": 8.0}
    spec = SystemSpec(name="b", provider="openai", model="m", batch=True, **prices)
    answer = ResponseRecord(
        system="b", key="q", request_key="r", prompt_tokens=1000, completion_tokens=500
    )
    # (1000 × 2 + 500 × 8) / 1e6 = 0.006 USD, half of it in batch mode (core answer_cost)
    assert _chat_row(spec, "q", answer)["cost_usd"] == pytest.approx(0.003)


def test_the_package_exports_what_its_docstring_lists():
    import re

    import evalbench.browsecomp as package

    assert sorted(package.__all__) == [
        "BrowseCompParams",
        "BrowseCompResult",
        "encrypt",
        "load_official",
        "run",
    ]
    doc = str(package.__doc__)
    assert all(
        re.search(rf"\b{name}\b", doc) and hasattr(package, name) for name in package.__all__
    )


def test_a_params_file_in_the_old_two_part_shape_is_one_line_saying_what_moved(tmp_path):
    from evalbench.params import ParamsError
    from evalbench.studies import load_params

    grader = {"name": "g", "provider": "sim"}
    systems = [{"name": "s", "provider": "sim"}]
    suite = write_params(tmp_path, "suite", systems=systems, suite={"judge": grader})
    with pytest.raises(ParamsError, match=r"suite: the offline browse suite is now its own study"):
        load_params(suite)
    official = write_params(
        tmp_path, "official", systems=systems, official={"dataset": "browsecomp", "grader": grader}
    )
    with pytest.raises(ParamsError, match=r"official: its fields go at the top level now"):
        load_params(official)
