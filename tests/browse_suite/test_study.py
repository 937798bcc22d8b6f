"""The browse-suite study end to end: the demo suite, the reference agent in the real browser
(loopback model server), and a hanging agent cut at its time limit beside a user's own agent."""

from __future__ import annotations

import json

import pytest
from browse_suite.helpers import chromium_or_skip, tasks_file, write_params
from loopback import Reply
from studyfiles import CANARY_KEY, KEY_ENV

from evalbench import browse_suite
from evalbench.browse_suite.study import STUDY
from evalbench.records import read_jsonl
from evalbench.studies import open_run

ENTRY = "tests.browse_suite.example_agents"
VIRTUAL = "cove.evalbench.test"


def _run(path):
    run = open_run(path)
    return run, browse_suite.run(run)


def _records(run, name):
    return read_jsonl(run.dir / "records" / f"{name}.jsonl")


def _validate(run):
    for name, record_type in STUDY.records.items():
        path = run.dir / "records" / f"{name}.jsonl"
        if path.exists():
            for row in read_jsonl(path):
                record_type.model_validate(row)


@pytest.mark.slow  # over ~1 s
def test_the_demo_suite_runs_offline_and_counts_every_state(tmp_path):
    run, result = _run("params/browse_suite_demo.yaml")
    assert len(result.site) == 30 and set(result.site["status"]) == {200}
    overall = result.levels[result.levels["level"] == "all"].set_index("system")
    for system, row in overall.iterrows():
        assert row["tasks"] == 30, system
        assert row["answered"] + row["timeout"] + row["step_limit"] + row["error"] == 30
    assert overall.loc["browse-sim-careful", "timeout"] > 0  # its knobs make level-4 timeouts
    assert overall.loc["no-browse-chat", "error"] > 0  # and the chat model's API errors
    # the "all" row of the by-type table is the same computation: one bootstrap, one interval
    kinds = result.kind_scores[result.kind_scores["kind"] == "all"].set_index("system")
    assert kinds.drop(columns="kind").equals(overall.drop(columns="level"))
    records = _records(run, "suite")
    assert len(records) == 90 and {r["state"] for r in records} >= {"answered", "timeout", "error"}
    assert all(r["score"] is None for r in records if r["state"] != "answered")
    scores = [r["score"] for r in records if r["status"] == "scored"]
    assert any(0 < s < 1 for s in scores)  # partial answers, not all-or-nothing
    _validate(run)
    again = [r for r in _records(open_run("params/browse_suite_demo.yaml"), "suite")]
    assert again == records  # resumable and deterministic: nothing re-asked, nothing changed


@pytest.mark.browser
def test_the_reference_agent_solves_a_level_1_and_a_level_3_task_in_the_browser(
    tmp_path, loopback, monkeypatch
):
    chromium_or_skip()
    monkeypatch.setenv(KEY_ENV, CANARY_KEY)
    tasks = tasks_file(tmp_path, lambda t: t["id"] in {"L1-library-hours", "L3-shop-hinges"})
    session = f"http://{VIRTUAL}/s/react.L3-shop-hinges.0/"
    loopback.enqueue(
        Reply(tool_calls=[{"name": "browser", "arguments": '{"url": "library/index.html"}'}]),
        Reply(
            tool_calls=[
                {
                    "name": "final_answer",
                    "arguments": json.dumps(
                        {"answer": '{"wednesday_hours": "09:00–20:00", "phone": "01632 960 418"}'}
                    ),
                }
            ]
        ),
        Reply(
            tool_calls=[
                {"name": "browser", "arguments": json.dumps({"url": session + "shop/catalog.html"})}
            ]
        ),
        Reply(
            tool_calls=[
                {
                    "name": "final_answer",
                    "arguments": json.dumps({"answer": '{"price_gbp": 6.80, "stock": 14}'}),
                }
            ]
        ),
    )
    system = {
        "name": "react",
        "provider": "agent",
        "model": "m",
        "base_url": loopback.base_url,
        "api_key_env": KEY_ENV,
        "tools": ["browser", "open_url"],
        "max_concurrency": 1,
    }
    path = write_params(tmp_path, systems=[system], tasks=str(tasks))
    run, result = _run(path)
    rows = result.records.set_index("task_id")
    assert list(rows["state"]) == ["answered", "answered"]
    assert rows.loc["L1-library-hours", "score"] == 1.0 and rows.loc["L3-shop-hinges", "success"]
    first = loopback.requests[0]["messages"][1]["content"]
    assert f"Start at: http://{VIRTUAL}/s/react.L1-library-hours.0/library/index.html" in first
    steps = {(s["task_id"], s["step"]): s for s in _records(run, "steps")}
    catalog = steps[("L3-shop-hinges", 1)]
    assert (
        catalog["tool"] == "browser" and "Brass Hinge Set (pair) | £6.80 | 14" in catalog["result"]
    )
    assert (
        loopback.requests[3]["messages"][-1]["content"] == catalog["result"]
    )  # what the model saw


@pytest.mark.slow
def test_a_hanging_agent_is_cut_at_max_time_seconds_and_counted_as_a_timeout(tmp_path):
    tasks = tasks_file(
        tmp_path, lambda t: t["id"] in {"L1-library-hours", "L1-shop-delivery"}, max_time_seconds=1
    )
    systems = [
        {"name": "stuck", "provider": "python", "entrypoint": f"{ENTRY}:hang"},
        {"name": "mine", "provider": "python", "entrypoint": f"{ENTRY}:library_hours"},
    ]
    path = write_params(tmp_path, systems=systems, tasks=str(tasks))
    run, result = _run(path)  # ends: "stuck" hangs forever, stopped at max_time_s (below)
    levels = result.levels.set_index(["system", "level"])
    stuck = levels.loc[("stuck", "all")]
    assert (stuck["tasks"], stuck["timeout"], stuck["answered"], stuck["successes"]) == (2, 2, 0, 0)
    assert stuck["score_all"] == 0.0 and stuck["score_answered"] != stuck["score_answered"]  # NaN
    by = {(r["system"], r["task_id"]): r for r in _records(run, "suite")}
    cut = by[("stuck", "L1-library-hours")]
    assert cut["state"] == "timeout" and cut["status"] == "not answered" and cut["score"] is None
    assert "max_time_s=1" in cut["detail"]
    # a user's own agent fetched its start page (a real 127.0.0.1 URL) and answered from it
    assert by[("mine", "L1-library-hours")]["score"] == 1.0


def test_a_chat_answer_records_the_batch_price():
    from evalbench.agents import SystemSpec
    from evalbench.browse_suite.study import _chat_row
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

    import evalbench.browse_suite as package

    assert sorted(package.__all__) == [
        "BrowseSuiteParams",
        "BrowseSuiteResult",
        "LocalWeb",
        "SuiteTask",
        "load_suite",
        "run",
    ]
    doc = str(package.__doc__)
    assert all(
        re.search(rf"\b{name}\b", doc) and hasattr(package, name) for name in package.__all__
    )


def test_a_params_file_with_a_suite_section_is_one_line_saying_what_moved(tmp_path):
    from evalbench.params import ParamsError
    from evalbench.studies import load_params

    path = write_params(
        tmp_path, systems=[{"name": "s", "provider": "sim"}], suite={"site": "demo"}
    )
    with pytest.raises(ParamsError, match=r"suite: its fields go at the top level now \(tasks, "):
        load_params(path)
