"""Notifications of triggered rules to a webhook receiver on 127.0.0.1 started here and to a
file: the payload's fields, one per triggered rule, none when nothing fires, retries, and a
failure that is reported (status line, manifest, exit status), never dropped."""

from __future__ import annotations

import json

import pytest
from alerts.helpers import Receiver, closed_port_url, outcomes_from, write_run

from evalbench.alerts import AlertsSpec
from evalbench.alerts.check import alert_exit, check_run, status_note
from evalbench.history import pin_baseline
from evalbench.runs import read_manifest
from evalbench.settings import get_settings

RULES = [
    {"metric": "accuracy", "drop_more_than": 0.05},  # fires: 1.0 -> 0.25 on 40 tasks
    {"cost_usd_more_than": 1.25},  # fires: 0.01 -> 0.02 per task
    {"error_rate_more_than": 0.5},  # quiet: no failed call
]


@pytest.fixture(scope="module")
def receiver():
    server = Receiver().start()
    yield server
    server.stop()


@pytest.fixture
def hook(receiver, monkeypatch):
    receiver.reset()
    monkeypatch.setenv("TEST_WEBHOOK_URL", receiver.url)
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)  # 127.0.0.1 directly
    return receiver


@pytest.fixture
def runs():
    """A pinned baseline and a run that dropped and costs twice as much per task."""
    outputs = get_settings().outputs_dir
    usage = {"calls": 40, "errors": 0}
    base = write_run(outputs, "base", {"a": outcomes_from([True] * 40)},
                     usage={"a": {**usage, "cost_usd": 0.40}})  # fmt: skip
    now = write_run(outputs, "now", {"a": outcomes_from([False] * 30 + [True] * 10)},
                    usage={"a": {**usage, "cost_usd": 0.80}},
                    started_at="2026-01-02T00:00:00+00:00")  # fmt: skip
    pin_baseline(base, outputs)
    return base, now


def _spec(*notify, rules=RULES):
    return AlertsSpec.model_validate({"rules": rules, "notify": list(notify)})


def test_one_notification_per_triggered_rule_with_its_facts(runs, hook):
    base, now = runs
    record = check_run(now, _spec({"webhook_env": "TEST_WEBHOOK_URL"}, {"file": "alerts.jsonl"}))
    assert [b["evalbench"]["rule"] for b in hook.bodies] == [
        "accuracy drop_more_than 0.05", "cost_usd_more_than 1.25"
    ]  # fmt: skip
    drop = hook.bodies[0]["evalbench"]
    assert (drop["study"], drop["run"], drop["baseline"]) == ("watched", "watched/now",
                                                               "watched/base")  # fmt: skip
    assert drop["baseline_is"] == "pinned baseline"
    assert drop["report"] == (now / "report.html").resolve().as_uri()
    assert drop["baseline_report"] == (base / "report.html").resolve().as_uri()
    assert drop["summary"] == (now / "summary.html").resolve().as_uri()
    overall = next(f for f in drop["findings"] if f["slice"] == "overall")
    assert (overall["system"], overall["metric"], overall["baseline"], overall["now"]) == (
        "a", "accuracy", 1.0, 0.25)  # fmt: skip
    assert overall["change"] == pytest.approx(-0.75)
    assert overall["p_holm"] == pytest.approx(3 * 2 * 0.5**30)  # McNemar, Holm x3
    assert overall["low"] <= -0.75 <= overall["high"]
    assert "a accuracy overall: 1.000 → 0.250 (-0.750" in hook.bodies[0]["text"]  # Slack text
    cost = hook.bodies[1]["evalbench"]["findings"]
    assert [(f["system"], f["change"]) for f in cost] == [("a", 2.0)]  # 0.02 / 0.01 per task
    lines = (get_settings().outputs_dir / "alerts.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in lines] == hook.bodies  # strict JSON, the same facts
    assert record["notifications"] == 2 and len(record["deliveries"]) == 4
    assert all(d["ok"] and d["attempts"] == 1 for d in record["deliveries"])
    assert read_manifest(now)["alerts"] == record
    assert alert_exit(record) == 1  # --fail-on-alert: fired
    assert status_note(record).startswith("ALERT: 2 rule(s) fired vs watched/base: a accuracy")


def test_nothing_triggered_sends_nothing(runs, hook):
    same = write_run(get_settings().outputs_dir, "same", {"a": outcomes_from([True] * 40)},
                     usage={"a": {"calls": 40, "errors": 0, "cost_usd": 0.40}})  # fmt: skip
    record = check_run(same, _spec({"webhook_env": "TEST_WEBHOOK_URL"}, {"file": "alerts.jsonl"}))
    assert hook.requests == 0 and record["fired"] == [] and record["deliveries"] == []
    assert not (get_settings().outputs_dir / "alerts.jsonl").exists()
    assert alert_exit(record) == 0
    assert status_note(record) == "alerts: none fired vs watched/base (pinned baseline)"


def test_a_failing_receiver_is_retried_with_backoff(runs, hook):
    _, now = runs
    hook.fail_next = 2  # 503, 503, then 200
    target = {"webhook_env": "TEST_WEBHOOK_URL", "attempts": 3, "backoff_s": 0.01}
    record = check_run(now, _spec(target, rules=RULES[:1]))
    assert hook.requests == 3 and len(hook.bodies) == 1
    assert record["deliveries"] == [{"target": "webhook_env TEST_WEBHOOK_URL",
                                     "rule": "accuracy drop_more_than 0.05", "ok": True,
                                     "attempts": 3, "error": None}]  # fmt: skip


def test_a_receiver_that_is_down_is_retried_then_reported(runs, monkeypatch):
    _, now = runs
    monkeypatch.setenv("TEST_WEBHOOK_URL", closed_port_url())
    target = {"webhook_env": "TEST_WEBHOOK_URL", "attempts": 3, "backoff_s": 0.01}
    record = check_run(now, _spec(target, rules=RULES[:1]))
    (failed,) = record["deliveries"]
    assert (failed["ok"], failed["attempts"]) == (False, 3)
    assert "refused" in failed["error"].lower()
    note = status_note(record)
    assert "NOTIFICATION FAILED: webhook_env TEST_WEBHOOK_URL after 3 attempt(s)" in note
    assert alert_exit(record) == 1
    manifest = (now / "manifest.json").read_text()
    assert "SECRET-TOKEN" not in manifest + note  # the URL (a secret) is written nowhere


def test_a_client_error_is_not_retried_and_an_unset_variable_is_reported(runs, hook):
    _, now = runs
    hook.fail_next, hook.fail_status = 5, 404
    target = {"webhook_env": "TEST_WEBHOOK_URL", "attempts": 3, "backoff_s": 0.01}
    record = check_run(now, _spec(target, {"webhook_env": "UNSET_HOOK_VAR"}, rules=RULES[:1]))
    first, second = record["deliveries"]
    assert (first["ok"], first["attempts"], first["error"]) == (False, 1,
                                                                "HTTP 404 (not retried)")  # fmt: skip
    assert hook.requests == 1
    assert second["error"] == "the environment variable UNSET_HOOK_VAR is not set"


def test_without_a_baseline_nothing_is_checked_and_the_line_says_why(runs, hook):
    base, _ = runs
    record = check_run(base, _spec({"webhook_env": "TEST_WEBHOOK_URL"}))
    assert record["baseline"] is None and hook.requests == 0
    assert status_note(record) == "alerts: not checked (this run is the study's pinned baseline)"
    assert alert_exit(record) == 0
