"""The check of one run: rules that need no baseline are checked without one, a pin that
leads out of the study is no baseline, and the manifest is written once per target (plus
once before anything is sent), however many notifications there are."""

from __future__ import annotations

import json

import pytest
from alerts.helpers import outcomes_from, write_run

from evalbench.alerts import AlertsSpec
from evalbench.alerts import check as check_module
from evalbench.alerts.check import alert_exit, check_run, redeliver, status_note
from evalbench.runs import read_manifest
from evalbench.settings import get_settings

DROP = {"metric": "accuracy", "drop_more_than": 0.05}
ERRORS = {"error_rate_more_than": 0.1}


def _spec(*rules, notify=({"file": "alerts.jsonl"},)) -> AlertsSpec:
    return AlertsSpec.model_validate({"rules": list(rules), "notify": list(notify)})


def _sent() -> list[dict]:
    path = get_settings().outputs_dir / "alerts.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_an_error_rate_rule_is_checked_on_a_first_run_without_a_baseline():
    # 40 of 40 calls failed: 40 / 40 = 1.0 > 0.1, whatever an earlier run did
    outputs = get_settings().outputs_dir
    run = write_run(outputs, "first", {"a": outcomes_from([False] * 40)},
                    usage={"a": {"calls": 40, "errors": 40, "cost_usd": 0.0}})  # fmt: skip
    record = check_run(run, _spec(DROP, ERRORS))
    assert record["baseline"] is None
    assert record["checked"] == ["error_rate_more_than 0.1"]  # the drop needs a baseline
    ((finding),) = record["fired"]
    assert (finding["rule"], finding["now"], finding["n"]) == ("error_rate_more_than 0.1", 1.0, 40)
    assert alert_exit(record) == 1
    assert status_note(record) == (
        "ALERT: 1 rule(s) fired: a share of calls that failed overall: — → 1.000; 1 rule(s) "
        "not checked (no earlier ok run of this configuration and no pinned baseline)"
    )
    (sent,) = _sent()
    assert sent["evalbench"]["baseline"] is None and "this run" in sent["text"]


def test_an_alert_without_a_baseline_that_failed_is_delivered_on_the_retry(hook, monkeypatch):
    outputs = get_settings().outputs_dir
    run = write_run(outputs, "first", {"a": outcomes_from([False] * 40)},
                    usage={"a": {"calls": 40, "errors": 40, "cost_usd": 0.0}})  # fmt: skip
    spec = _spec(ERRORS, notify=[{"webhook_env": "LATER_HOOK"}])
    (failed,) = check_run(run, spec)["deliveries"]  # the variable is not set yet
    assert failed["retry"] and hook.requests == 0
    monkeypatch.setenv("LATER_HOOK", hook.url)
    (done,) = redeliver(run.parent, spec)
    assert (done.tried, done.failed) == (1, 0)
    (body,) = hook.bodies
    assert body["evalbench"]["baseline"] is None and body["evalbench"]["findings"][0]["now"] == 1


def test_a_record_made_before_targets_had_positions_is_still_delivered(hook, monkeypatch):
    outputs = get_settings().outputs_dir
    run = write_run(outputs, "first", {"a": outcomes_from([False] * 40)},
                    usage={"a": {"calls": 40, "errors": 40, "cost_usd": 0.0}})  # fmt: skip
    spec = _spec(ERRORS, notify=[{"webhook_env": "LATER_HOOK"}])
    record = check_run(run, spec)
    record["deliveries"][0].pop("target_index")  # as an older evalbench wrote it
    check_module.update_manifest(run, alerts=record)
    monkeypatch.setenv("LATER_HOOK", hook.url)
    (done,) = redeliver(run.parent, spec)
    assert (done.tried, done.failed) == (1, 0) and len(hook.bodies) == 1


def test_a_first_run_with_no_failed_call_says_what_was_checked():
    outputs = get_settings().outputs_dir
    run = write_run(outputs, "first", {"a": outcomes_from([True] * 40)})
    note = status_note(check_run(run, _spec(DROP, ERRORS)))
    assert note == ("alerts: none fired; 1 rule(s) not checked (no earlier ok run of this "
                    "configuration and no pinned baseline)")  # fmt: skip
    only_drop = status_note(check_run(run, _spec(DROP)))
    assert only_drop == ("alerts: not checked (no earlier ok run of this configuration and "
                         "no pinned baseline)")  # fmt: skip
    assert _sent() == []


def test_a_pin_that_leads_to_another_study_is_no_baseline():
    outputs = get_settings().outputs_dir
    other = write_run(outputs, "0c90ef4502af", {"a": outcomes_from([True] * 40)}, study="g2")
    run = write_run(outputs, "now", {"a": outcomes_from([False] * 40)}, study="g1",
                    started_at="2026-01-02T00:00:00+00:00")  # fmt: skip
    pin = {"study": "g1", "run_id": f"../g2/{other.name}", "pinned_at": "", "note": ""}
    (outputs / "g1" / "baseline.json").write_text(json.dumps(pin))
    record = check_run(run, _spec(DROP))
    assert record["baseline"] is None and record["fired"] == [] and _sent() == []
    (problem,) = record["problems"]
    assert problem.endswith(f"baseline.json: run_id: '../g2/{other.name}' is not a run of g1 "
                            f"(a folder name in {outputs / 'g1'})")  # fmt: skip
    assert alert_exit(record) == 1


@pytest.fixture
def dropped():
    """A run that fell from 40 of 40 to 0 of 40 and costs twice as much (two rules fire)."""
    outputs = get_settings().outputs_dir
    usage = {"calls": 40, "errors": 0}
    write_run(outputs, "base", {"a": outcomes_from([True] * 40)},
              usage={"a": {**usage, "cost_usd": 0.40}})  # fmt: skip
    return write_run(outputs, "now", {"a": outcomes_from([False] * 40)},
                     usage={"a": {**usage, "cost_usd": 0.80}},
                     started_at="2026-01-02T00:00:00+00:00")  # fmt: skip


def test_the_manifest_is_written_once_per_target_not_once_per_delivery(dropped, monkeypatch):
    writes = []
    real = check_module.update_manifest

    def counted(run_dir, **fields):
        writes.append([d["ok"] for d in fields["alerts"]["deliveries"]])
        return real(run_dir, **fields)

    monkeypatch.setattr(check_module, "update_manifest", counted)
    files = ({"file": "alerts.jsonl"}, {"file": "more/alerts.jsonl"})
    record = check_run(dropped, _spec(DROP, {"cost_usd_more_than": 1.25}, notify=files))
    assert record["notifications"] == 2 and len(record["deliveries"]) == 2 * 2
    # 1 write before anything is sent, then 1 per target (each with its 2 notifications)
    assert writes == [[False] * 4, [True, True, False, False], [True] * 4]
    assert read_manifest(dropped)["alerts"] == record


def test_ctrl_c_within_a_target_keeps_the_deliveries_it_made(dropped, monkeypatch):
    real = check_module.deliver_one
    calls = []

    def second_interrupted(target, payload, outputs):
        calls.append(payload)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(target, payload, outputs)

    monkeypatch.setattr(check_module, "deliver_one", second_interrupted)
    spec = _spec(DROP, {"cost_usd_more_than": 1.25})
    with pytest.raises(KeyboardInterrupt):
        check_run(dropped, spec)
    first, second = read_manifest(dropped)["alerts"]["deliveries"]
    assert (first["ok"], first["retry"]) == (True, False)
    assert (second["ok"], second["retry"]) == (False, True)
    assert second["error"] == "interrupted by SIGINT during the delivery"
    monkeypatch.setattr(check_module, "deliver_one", real)
    (done,) = redeliver(dropped.parent, spec)
    assert (done.tried, done.failed) == (1, 0)
    assert [s["evalbench"]["rule"] for s in _sent()] == ["accuracy drop_more_than 0.05",
                                                         "cost_usd_more_than 1.25"]  # fmt: skip


def test_an_error_rate_rule_on_a_run_that_records_no_call_is_not_checked():
    # Before: a sweep (its calls are its cells') said "alerts: none fired", the rule listed
    # as checked, while its cells had 5.2% of failed calls against a threshold of 1%
    outputs = get_settings().outputs_dir
    run = write_run(outputs, "sweep", {"a": outcomes_from([True] * 4)})
    manifest = json.loads((run / "manifest.json").read_text())
    (run / "manifest.json").write_text(json.dumps(manifest | {"usage": []}))
    record = check_run(run, _spec(ERRORS))
    assert record["checked"] == [] and record["fired"] == []
    assert record["problems"] == [
        "error_rate_more_than 0.1: this run records no call of its own (a sweep's calls are "
        "its cells'; put the rule in the swept study's own runs)"
    ]
    assert alert_exit(record) == 1


@pytest.mark.slow
def test_a_run_failed_for_its_failed_calls_still_checks_its_error_rate_rules(tmp_path):
    """A run above ``max_error_rate`` fails and is not published; before, its alert check
    never ran, so ``error_rate_more_than`` could not fire on the very runs it is for (an
    expired key: every call failing). Now its error-rate rules are checked on its own calls
    (the other rules need a published run, and say so)."""
    from studyfiles import gaia_dataset, gaia_params

    from evalbench.publish import run_study

    systems = [{"name": "good", "provider": "sim"},
               {"name": "broken", "provider": "sim", "sim": {"error_rate": 1.0}}]  # fmt: skip
    path = gaia_params(tmp_path, gaia_dataset(tmp_path, list("123456")), systems,
                       max_error_rate=0.1, alerts={"rules": [DROP, ERRORS],
                                                   "notify": [{"file": "alerts.jsonl"}]})  # fmt: skip
    result = run_study(path, warm=True)
    assert result.status == "failed"
    assert "ALERT: 1 rule(s) fired: broken share of calls that failed overall: — → 1.000" in (
        result.reason
    )
    assert "1 rule(s) not checked (a failed run:" in result.reason
    (sent,) = _sent()
    assert sent["evalbench"]["findings"][0]["system"] == "broken"
    # "this run" is the failed attempt's notebook: it has no report or summary of its own
    assert sent["evalbench"]["report"].endswith("/notebook.failed.ipynb")
    assert (result.run_dir / "notebook.failed.ipynb").is_file()
    assert sent["evalbench"]["summary"] is None
    record = read_manifest(result.run_dir)["alerts"]
    assert record["checked"] == ["error_rate_more_than 0.1"] and record["baseline"] is None


@pytest.mark.parametrize(
    "rule", [{**DROP, "systems": ["a_typo"]}, {**ERRORS, "systems": ["a_typo"]}]
)
def test_a_rule_for_a_system_the_run_does_not_have_is_a_problem_not_silence(rule):
    """Before: ``systems: [strong_sim_typo]`` checked nothing and said "none fired" (exit 0)
    while strong-sim fell from 0.656 to 0.000."""
    outputs = get_settings().outputs_dir
    base = write_run(outputs, "0c90ef4502af", {"a": outcomes_from([True] * 40)})
    run = write_run(outputs, "now", {"a": outcomes_from([False] * 40)},
                    started_at="2026-01-02T00:00:00+00:00",
                    usage={"a": {"calls": 40, "errors": 40, "cost_usd": 0.0}})  # fmt: skip
    pin = {"study": "watched", "run_id": base.name, "pinned_at": "", "note": ""}
    (outputs / "watched" / "baseline.json").write_text(json.dumps(pin))
    record = check_run(run, _spec(rule))
    assert record["fired"] == [] and alert_exit(record) == 1
    (problem,) = record["problems"]
    assert problem.endswith("not checked: no system 'a_typo' in watched/now (it has: a)")
    assert "alert rule problem: " in status_note(record)
