"""Notifications of triggered rules to a webhook receiver on 127.0.0.1 started here and to a
file: the payload's fields, one per triggered rule, none when nothing fires, retries, and a
failure that is reported (status line, manifest, exit status), never dropped."""

from __future__ import annotations

import json
import re

import pytest
from alerts.helpers import (
    Receiver,
    Redirector,
    Trickler,
    closed_port_url,
    outcomes_from,
    write_run,
)

from evalbench.alerts import AlertsSpec, NotifyTarget
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


def _spec(*notify, rules=RULES):
    return AlertsSpec.model_validate({"rules": rules, "notify": list(notify)})


def test_one_notification_per_triggered_rule_with_its_facts(costed_runs, hook):
    base, now = costed_runs
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


def test_nothing_triggered_sends_nothing(costed_runs, hook):
    same = write_run(get_settings().outputs_dir, "same", {"a": outcomes_from([True] * 40)},
                     usage={"a": {"calls": 40, "errors": 0, "cost_usd": 0.40}})  # fmt: skip
    record = check_run(same, _spec({"webhook_env": "TEST_WEBHOOK_URL"}, {"file": "alerts.jsonl"}))
    assert hook.requests == 0 and record["fired"] == [] and record["deliveries"] == []
    assert not (get_settings().outputs_dir / "alerts.jsonl").exists()
    assert alert_exit(record) == 0
    assert status_note(record) == "alerts: none fired vs watched/base (pinned baseline)"


def test_a_failing_receiver_is_retried_with_backoff(costed_runs, hook):
    _, now = costed_runs
    hook.fail_next = 2  # 503, 503, then 200
    target = {"webhook_env": "TEST_WEBHOOK_URL", "attempts": 3, "backoff_s": 0.01}
    record = check_run(now, _spec(target, rules=RULES[:1]))
    assert hook.requests == 3 and len(hook.bodies) == 1
    assert record["deliveries"] == [{"target": "webhook_env TEST_WEBHOOK_URL",
                                     "rule": "accuracy drop_more_than 0.05", "ok": True,
                                     "attempts": 3, "error": None, "retry": False,
                                     "rounds": 1, "target_index": 0,
                                     "target_key": NotifyTarget(**target).key()}]  # fmt: skip


def test_a_receiver_that_is_down_is_retried_then_reported(costed_runs, monkeypatch):
    _, now = costed_runs
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


def test_a_client_error_is_not_retried_and_an_unset_variable_is_reported(costed_runs, hook):
    _, now = costed_runs
    hook.fail_next, hook.fail_status = 5, 404
    target = {"webhook_env": "TEST_WEBHOOK_URL", "attempts": 3, "backoff_s": 0.01}
    record = check_run(now, _spec(target, {"webhook_env": "UNSET_HOOK_VAR"}, rules=RULES[:1]))
    first, second = record["deliveries"]
    assert (first["ok"], first["attempts"], first["error"]) == (False, 1,
                                                                "HTTP 404 (not retried)")  # fmt: skip
    assert hook.requests == 1
    assert second["error"] == "the environment variable UNSET_HOOK_VAR is not set"


def test_without_a_baseline_only_the_error_rate_is_checked_and_the_line_says_why(costed_runs, hook):
    base, _ = costed_runs
    record = check_run(base, _spec({"webhook_env": "TEST_WEBHOOK_URL"}))
    assert record["baseline"] is None and hook.requests == 0
    assert record["checked"] == ["error_rate_more_than 0.5"]  # needs no baseline: quiet here
    assert status_note(record) == ("alerts: none fired; 2 rule(s) not checked (this run is the "
                                   "study's pinned baseline)")  # fmt: skip
    assert alert_exit(record) == 0


# ------------------------------------------------------------------------------ attacks

BAD_URLS = {
    "space": ("http://127.0.0.1:9/hooks/SECRET TOKEN", "it has a space or a control character"),
    "crlf": ("http://127.0.0.1:9/hooks/SECRET\r\nX: 1", "it has a space or a control character"),
    "port": ("http://127.0.0.1:SECRET/hooks/x", "its port is not a number from 1 to 65535"),
    "bracket": ("http://[::1/hooks/SECRET", "it cannot be parsed"),
    "garbage": ("SECRET" * 1000, "it is not an http:// or https:// URL"),
    "userinfo": (
        "http://user:SECRET@127.0.0.1:9/x",
        "it has a user or password before the host (put the token in the path)",
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize(("url", "why"), BAD_URLS.values(), ids=BAD_URLS.keys())
def test_an_unusable_webhook_url_fails_alone_and_is_never_shown(costed_runs, hook, monkeypatch,
                                                                 capsys, url, why):  # fmt: skip
    _, now = costed_runs
    monkeypatch.setenv("BAD_HOOK", url)
    spec = _spec({"webhook_env": "BAD_HOOK"}, {"file": "alerts.jsonl"},
                 {"webhook_env": "TEST_WEBHOOK_URL"}, rules=RULES[:1])  # fmt: skip
    record = check_run(now, spec)
    bad, file, good = record["deliveries"]
    assert (bad["ok"], bad["attempts"], bad["retry"]) == (False, 0, True)
    assert bad["error"] == f"the URL in BAD_HOOK is not a webhook URL: {why}"
    assert file["ok"] and good["ok"] and len(hook.bodies) == 1  # every other target delivered
    assert read_manifest(now)["alerts"] == record
    assert alert_exit(record) == 1
    shown = status_note(record) + (now / "manifest.json").read_text() + str(capsys.readouterr())
    assert "SECRET" not in shown


def test_the_undelivered_notifications_are_retried_and_only_those(costed_runs, hook, monkeypatch):
    from evalbench.alerts.check import redeliver

    _, now = costed_runs
    monkeypatch.setenv("BAD_HOOK", "http://127.0.0.1:SECRET/x")
    spec = _spec({"webhook_env": "BAD_HOOK"}, {"file": "alerts.jsonl"}, rules=RULES[:1])
    check_run(now, spec)

    def retry():
        return [(r.run, r.tried, r.failed) for r in redeliver(now.parent, spec)]

    assert retry() == [("watched/now", 1, 1)]  # tried 1, still failed 1
    monkeypatch.setenv("BAD_HOOK", hook.url)  # fixed
    assert retry() == [("watched/now", 1, 0)]
    assert [b["evalbench"]["rule"] for b in hook.bodies] == ["accuracy drop_more_than 0.05"]
    assert len((get_settings().outputs_dir / "alerts.jsonl").read_text().splitlines()) == 1
    record = read_manifest(now)["alerts"]
    bad, file = record["deliveries"]
    assert (bad["ok"], bad["retry"], bad["rounds"], bad["error"]) == (True, False, 3, None)
    assert (file["ok"], file["rounds"]) == (True, 1)
    assert alert_exit(record) == 1  # still: a rule fired
    assert retry() == []  # nothing left to deliver
    assert len(hook.bodies) == 1


def test_a_redirect_is_a_failed_delivery_never_followed(costed_runs, hook, monkeypatch):
    _, now = costed_runs
    for location in (hook.url, "ftp://127.0.0.1/x"):
        redirector = Redirector(location).start()
        try:
            monkeypatch.setenv("REDIRECTING_HOOK", redirector.url)
            target = {"webhook_env": "REDIRECTING_HOOK", "attempts": 3, "backoff_s": 0.01}
            (delivery,) = check_run(now, _spec(target, rules=RULES[:1]))["deliveries"]
        finally:
            redirector.stop()
        assert redirector.requests == 1  # not retried: a redirect is final
        assert (delivery["ok"], delivery["attempts"], delivery["retry"]) == (False, 1, True)
        assert delivery["error"] == "HTTP 302: a redirect (not followed)"
    assert hook.requests == 0


@pytest.fixture
def trickler():
    server = Trickler(every_s=0.1, max_bytes=60).start()  # a whole answer after 6 s
    yield server
    server.stop()


def test_a_trickling_receiver_is_cut_at_the_total_deadline(costed_runs, trickler, monkeypatch):
    _, now = costed_runs
    monkeypatch.setenv("SLOW_HOOK", trickler.url)
    target = {"webhook_env": "SLOW_HOOK", "attempts": 1, "timeout_s": 0.5}
    (delivery,) = check_run(now, _spec(target, rules=RULES[:1]))["deliveries"]
    assert (delivery["ok"], delivery["retry"]) == (False, True)
    assert delivery["error"] == "no whole answer within timeout_s (0.5 s for the request)"


@pytest.mark.slow
def test_a_target_that_failed_is_not_tried_again_for_the_next_notification(costed_runs, trickler,
                                                                           monkeypatch):  # fmt: skip
    _, now = costed_runs
    monkeypatch.setenv("SLOW_HOOK", trickler.url)
    target = {"webhook_env": "SLOW_HOOK", "attempts": 1, "timeout_s": 0.5}
    first, second = check_run(now, _spec(target))["deliveries"]  # two rules fired
    assert "timeout_s" in first["error"]
    assert (second["ok"], second["attempts"], second["retry"]) == (False, 0, True)
    assert second["error"] == "not tried: this target failed for an earlier notification"


def test_slack_text_escapes_what_it_quotes_and_keeps_its_own_links(hook):
    outputs = get_settings().outputs_dir
    evil = "<!channel>&<https://evil.example|click>"
    base = write_run(outputs, "base", {evil: outcomes_from([True] * 40)})
    now = write_run(outputs, "now", {evil: outcomes_from([False] * 40)},
                    started_at="2026-01-02T00:00:00+00:00")  # fmt: skip
    pin_baseline(base, outputs)
    spec = AlertsSpec.model_validate({
        "rules": [{"drop_more_than": 0.05, "systems": [evil]}],
        "notify": [{"webhook_env": "TEST_WEBHOOK_URL"}],
        "report_url": "https://ci.example.com/runs/a|b<c>&d",
    })  # fmt: skip
    check_run(now, spec, title=f"{evil} title")
    text = hook.bodies[0]["text"]
    # Slack reads <...> as a link or a mention: only evalbench's two links are left, their
    # URLs percent-encoded (| < > inside a URL) and & written &amp; (Slack's escaping)
    links = re.findall(r"<([^>]*)>", text)
    assert links == [
        "https://ci.example.com/runs/a%7Cb%3Cc%3E&amp;d/watched/now/report.html|this run",
        "https://ci.example.com/runs/a%7Cb%3Cc%3E&amp;d/watched/base/report.html|pinned baseline",
    ]
    quoted = "&lt;!channel&gt;&amp;&lt;https://evil.example|click&gt;"
    assert text.startswith(f"*evalbench alert* — {quoted} title: ")
    assert f"• {quoted} accuracy overall: 1.000 → 0.000" in text
    assert hook.bodies[0]["evalbench"]["title"] == f"{evil} title"  # the facts stay as they are


@pytest.mark.slow
def test_a_target_that_fails_a_retry_is_not_tried_for_the_other_runs(costed_runs, trickler,
                                                                     monkeypatch):  # fmt: skip
    from evalbench.alerts.check import redeliver

    _, now = costed_runs
    later = write_run(get_settings().outputs_dir, "later",
                      {"a": outcomes_from([False] * 30 + [True] * 10)},
                      started_at="2026-01-03T00:00:00+00:00")  # fmt: skip
    monkeypatch.setenv("SLOW_HOOK", "garbage")
    spec = _spec({"webhook_env": "SLOW_HOOK", "attempts": 1, "timeout_s": 0.5}, rules=RULES[:1])
    check_run(now, spec)
    check_run(later, spec)
    monkeypatch.setenv("SLOW_HOOK", trickler.url)  # answers too slowly: one deadline, not two
    first, second = redeliver(now.parent, spec)
    assert (first.run, first.failed, second.run, second.failed) == ("watched/later", 1,
                                                                    "watched/now", 1)  # fmt: skip
    assert first.failures[0]["error"].startswith("no whole answer within timeout_s")
    assert second.failures[0]["error"] == "not tried: this target failed for an earlier " \
                                          "notification"  # fmt: skip
    assert trickler.connections == 1
