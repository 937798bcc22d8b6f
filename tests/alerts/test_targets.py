"""Notify targets: each one is itself (two webhooks on one host, or two equal URLs, each get
their notifications), and a literal webhook URL, a secret, is never shown: not in a target's
label (a query or fragment right after the host), not as a ``-p`` override."""

from __future__ import annotations

import pytest
from alerts.helpers import closed_port_url

from evalbench import publish
from evalbench.alerts import AlertsSpec, NotifyTarget
from evalbench.alerts.check import check_run, redeliver, status_note
from evalbench.cli import main
from evalbench.index import build_index
from evalbench.settings import get_settings

DROP = {"metric": "accuracy", "drop_more_than": 0.05}  # fires: 1.0 -> 0.25 on 40 tasks
COST = {"cost_usd_more_than": 1.25}  # fires: 0.01 -> 0.02 per task


@pytest.fixture
def now(costed_runs):
    """A run that dropped and costs twice as much per task as its pinned baseline."""
    return costed_runs[1]


def _spec(*webhooks: str, rules=(DROP,)) -> AlertsSpec:
    return AlertsSpec.model_validate(
        {"rules": list(rules), "notify": [{"webhook": url, "attempts": 1} for url in webhooks]}
    )


def test_two_webhooks_on_one_host_each_get_their_own_notification(now, hook):
    host = hook.url.removesuffix("/hooks/SECRET-TOKEN")  # Slack: hooks.slack.com/services/...
    spec = _spec(f"{host}/services/chanA", f"{host}/services/chanB")
    assert spec.notify[0].label() == spec.notify[1].label()  # the label hides the path
    record = check_run(now, spec)
    assert sorted(hook.paths) == ["/services/chanA", "/services/chanB"]
    assert [(d["ok"], d["target_index"]) for d in record["deliveries"]] == [(True, 0), (True, 1)]


def test_two_equal_webhook_urls_are_two_targets_each_delivered(now, hook):
    record = check_run(now, _spec(hook.url, hook.url))
    assert hook.paths == ["/hooks/SECRET-TOKEN"] * 2
    assert [d["ok"] for d in record["deliveries"]] == [True, True]


def test_a_failing_webhook_does_not_hold_back_another_on_its_host(now, hook):
    host = hook.url.removesuffix("/hooks/SECRET-TOKEN")
    hook.gone.add("/services/chanA")  # 404: chanA fails (and is not tried for the 2nd rule)
    spec = _spec(f"{host}/services/chanA", f"{host}/services/chanB", rules=(DROP, COST))
    a1, a2, b1, b2 = check_run(now, spec)["deliveries"]
    assert (a1["ok"], a1["error"], a2["ok"], a2["attempts"]) == (False, "HTTP 404 (not "
                                                                 "retried)", False, 0)  # fmt: skip
    assert b1["ok"] and b2["ok"] and hook.paths == ["/services/chanB"] * 2
    hook.gone.clear()  # chanA is back: the retry sends chanA's two, and only those
    (done,) = redeliver(now.parent, spec)
    assert (done.tried, done.failed) == (2, 0)
    assert hook.paths == ["/services/chanB"] * 2 + ["/services/chanA"] * 2


def test_a_pending_delivery_finds_its_own_target_after_notify_is_reordered(now, hook):
    # Before: a pending delivery named its target by position (checked by its label only,
    # which two webhooks on one host share): chanB's failed notification went to chanA once
    # the two were swapped, and chanB never got it.
    host = hook.url.removesuffix("/hooks/SECRET-TOKEN")
    a, b = f"{host}/services/chanA", f"{host}/services/chanB"
    hook.gone.add("/services/chanB")
    record = check_run(now, _spec(a, b))
    assert [d["ok"] for d in record["deliveries"]] == [True, False]
    assert all(d["target_key"] and "chan" not in d["target_key"] for d in record["deliveries"])
    hook.gone.clear()
    (done,) = redeliver(now.parent, _spec(b, a))  # reordered
    assert (done.tried, done.failed) == (1, 0)
    assert hook.paths == ["/services/chanA", "/services/chanB"]


def test_a_moved_target_is_still_a_target_and_a_removed_one_is_not(now, hook, tmp_path):
    hook.gone.add("/hooks/SECRET-TOKEN")
    check_run(now, _spec(hook.url))
    hook.gone.clear()
    moved = AlertsSpec.model_validate({"rules": [DROP], "notify": [
        {"file": "first.jsonl"}, {"webhook": hook.url, "attempts": 1}]})  # fmt: skip
    (done,) = redeliver(now.parent, moved)
    assert (done.tried, done.failed) == (1, 0) and hook.paths == ["/hooks/SECRET-TOKEN"]
    hook.gone.add("/hooks/SECRET-TOKEN")
    check_run(now, _spec(hook.url))  # fails again; then the target leaves notify:
    (gone,) = redeliver(now.parent, _spec(f"{hook.url}-other"))
    (failure,) = gone.failures
    assert failure["error"].endswith("not retried: no longer a notify target")
    assert failure["retry"] is False and hook.paths == ["/hooks/SECRET-TOKEN"]


@pytest.mark.parametrize("tail", ["?token=SEKRETQ2", "#SEKRET6", "/x?token=SEKRET7",
                                  "?token=SEKRET8/with/a/slash"])  # fmt: skip
def test_a_webhook_label_shows_scheme_host_and_port_only(tail):
    target = NotifyTarget(webhook=f"http://127.0.0.1:18009{tail}")
    assert target.label() == "webhook http://127.0.0.1:18009/…"


@pytest.mark.parametrize("host", ["hooks.slack.com;SEKRET", "hooks.slack.com%2FSEKRET",
                                  "hooks.slack.com\\SEKRET"])  # fmt: skip
def test_a_host_that_is_not_a_plain_name_is_not_shown(host):
    # Before: "webhook https://hooks.slack.com;SEKRET/…" (only ?, # and / ended the host)
    assert NotifyTarget(webhook=f"https://{host}/x").label() == "webhook https://(host not shown)/…"
    assert NotifyTarget(webhook="https://[::1]:8080/x").label() == "webhook https://[::1]:8080/…"


def test_a_query_after_the_host_is_never_shown_by_a_failed_delivery(now, capsys):
    url = closed_port_url().removesuffix("/hooks/SECRET-TOKEN") + "?token=SEKRETQ2"
    record = check_run(now, _spec(url))
    (failed,) = record["deliveries"]
    assert not failed["ok"] and failed["target"].endswith("/…")
    index = build_index()
    shown = [status_note(record), (now / "manifest.json").read_text(), index.read_text(),
             str(capsys.readouterr())]  # fmt: skip
    assert "NOTIFICATION FAILED: webhook http://127.0.0.1:" in shown[0]
    assert not [text for text in shown if "SEKRET" in text]


def _params(tmp_path):
    import yaml

    path = tmp_path / "watched.yaml"
    path.write_text(yaml.safe_dump({
        "study": "gaia", "title": "Watched", "dataset": "demo",
        "systems": [{"name": "a", "provider": "sim"}],
        "alerts": {"rules": [DROP], "notify": [{"webhook": "https://hooks.example/x"}]},
    }))  # fmt: skip
    return path


@pytest.mark.parametrize("override", [
    "alerts.notify.0.webhook=http://127.0.0.1:18001/x?token=SEKRETOVR",
    "alerts.notify=[{webhook: 'http://127.0.0.1:18001/SEKRETOVR'}]",
    "alerts={rules: [{drop_more_than: 0.1}], notify: [{webhook: http://h/SEKRETOVR}]}",
    'alerts.notify.0={"web\\x68ook": "http://127.0.0.1:18001/SEKRETOVR"}',  # YAML escapes
    # a URL where none is taken: the refusal of the value used to quote it
    "alerts.notify.0.webhook_env=https://hooks.slack.com/services/T0/B0/SEKRETOVR",
    "alerts.notify.0.webhook.x=https://hooks.slack.com/services/T0/B0/SEKRETOVR",
    "alerts.notify.0={webhook: https://hooks.slack.com/services/T0/B0/SEKRETOVR",  # not YAML
])  # fmt: skip
@pytest.mark.parametrize("command", ["run", "watch"])
def test_a_literal_webhook_given_with_p_is_refused_in_one_line(
    tmp_path, monkeypatch, capsys, command, override
):
    def never(*args, **kw):
        raise AssertionError("the study ran")

    monkeypatch.setattr(publish, "run_study", never)
    assert main([command, str(_params(tmp_path)), "-p", override]) == 2
    out, err = capsys.readouterr()
    assert err.startswith("evalbench: override ") and err.count("\n") == 1
    assert "webhook_env" in err and "SEKRET" not in out + err
    assert not (get_settings().outputs_dir / "watched").exists()


def test_a_webhook_env_given_with_p_is_accepted(tmp_path, monkeypatch):
    ran = []
    monkeypatch.setattr(publish, "run_study", lambda *a, **kw: ran.append(a) or
                        publish.StudyResult(a[0], "failed", None, 0.0, "stop here"))  # fmt: skip
    get_settings().outputs_dir.mkdir(parents=True)
    assert main(["run", str(_params(tmp_path)), "-p", "alerts.notify=[{webhook_env: B}]"]) == 1
    assert ran


def test_only_a_literal_webhook_in_the_alerts_block_is_refused():
    from evalbench.alerts.spec import override_problem

    assert override_problem("alerts.notify.0.webhook_env", "SLACK_URL") is None
    assert override_problem("alerts.notify", [{"webhook_env": "SLACK_URL"}]) is None
    assert override_problem("alerts.rules.0.systems", ["webhook"]) is None  # a value, no key
    assert override_problem("systems.0.webhook", "x") is None  # not the alerts block
    assert override_problem("alerts.notify.0.webhook", "") is not None
