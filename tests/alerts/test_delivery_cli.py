"""``evalbench run`` and ``watch`` around the alert check: a notification that was not
delivered makes the command fail and is retried by the next run or watch (only it); Ctrl-C or
``kill -9`` during a delivery keeps the check's record, the undelivered ones marked for retry.

The study runs are hand-written run folders; ``run_study`` is replaced by one that publishes
such a folder (the alert check and summary of :func:`evalbench.publish.after_publish`, as a
real run ends) or says it is ``current``, so no notebook is rendered."""

from __future__ import annotations

import fcntl
from pathlib import Path

import pytest
from alerts.helpers import (
    Trickler,
    in_delivery,
    interrupted_in_delivery,
    publishing,
    watched_params,
)

from evalbench import publish
from evalbench.alerts.check import redeliver
from evalbench.cli import main
from evalbench.publish import StudyResult
from evalbench.runs import read_manifest
from evalbench.settings import get_settings
from evalbench.studies import load_params

RULE = "accuracy drop_more_than 0.05"


def _params(tmp_path: Path, *notify: dict) -> Path:
    return watched_params(tmp_path, *notify)


def _publishes(monkeypatch, run_dir: Path) -> None:
    """``run_study`` ends by publishing ``run_dir`` (its alert check and summary)."""

    def run_study(path, overrides=None, **kw):
        result = StudyResult(Path(path), "ok", run_dir, 0.0, "")
        return publish.after_publish(result, load_params(path, overrides or []))

    monkeypatch.setattr(publish, "run_study", run_study)


def _is_current(monkeypatch, run_dir: Path) -> None:
    def run_study(path, overrides=None, **kw):
        return StudyResult(Path(path), "current", run_dir, 0.0, "up to date")

    monkeypatch.setattr(publish, "run_study", run_study)


@pytest.mark.slow
@pytest.mark.parametrize("command", ["run", "report"])  # evalbench run; make report
def test_an_undelivered_notification_fails_the_run_and_the_next_run_retries_it(
    tmp_path, runs, hook, monkeypatch, capsys, command
):
    _, now = runs
    params = _params(tmp_path, {"file": "alerts.jsonl"}, {"webhook_env": "RETRY_HOOK"})
    monkeypatch.setenv("RETRY_HOOK", "http://127.0.0.1:SECRET/hooks/x")  # port: not a number
    _publishes(monkeypatch, now)
    assert main([command, str(params)]) == 1
    out, err = capsys.readouterr()
    assert out.count("NOTIFICATION FAILED") == 1 and "SECRET" not in out + err
    alerts_file = get_settings().outputs_dir / "alerts.jsonl"
    assert len(alerts_file.read_text().splitlines()) == 1  # the file target still delivered

    _is_current(monkeypatch, now)  # the next run: nothing to render, the delivery retried
    assert main([command, str(params)]) == 1  # still not deliverable
    out, err = capsys.readouterr()
    assert "NOTIFICATION FAILED webhook_env RETRY_HOOK (accuracy drop_more_than 0.05) of " \
           "watched/now: the URL in RETRY_HOOK is not a webhook URL" in out  # fmt: skip
    assert "SECRET" not in out + err and hook.requests == 0

    monkeypatch.setenv("RETRY_HOOK", hook.url)  # fixed
    assert main([command, str(params)]) == 0
    assert "alerts of watched/now: 1 undelivered notification(s) now delivered" in (
        capsys.readouterr().out
    )
    assert [b["evalbench"]["rule"] for b in hook.bodies] == [RULE]
    assert len(alerts_file.read_text().splitlines()) == 1  # not sent again
    assert main([command, str(params)]) == 0 and len(hook.bodies) == 1  # nothing left


def test_a_run_another_process_holds_is_left_to_it(tmp_path, runs, hook, monkeypatch):
    _, now = runs
    monkeypatch.setenv("RETRY_HOOK", "http://127.0.0.1:SECRET/hooks/x")
    spec = load_params(_params(tmp_path, {"webhook_env": "RETRY_HOOK"})).alerts
    from evalbench.alerts.check import check_run

    check_run(now, spec)
    monkeypatch.setenv("RETRY_HOOK", hook.url)
    with open(now / ".lock", "a") as held:  # another watch of the same run, mid-way
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        (busy,) = redeliver(now.parent, spec)
    assert (busy.run, busy.tried, busy.failed) == ("watched/now", 0, 0)
    assert "in use by another process" in busy.note and hook.requests == 0
    (done,) = redeliver(now.parent, spec)  # released: this one delivers
    assert (done.tried, done.failed) == (1, 0) and len(hook.bodies) == 1


@pytest.mark.slow
@pytest.mark.parametrize("command", ["run", "watch"])
def test_ctrl_c_during_a_delivery_stops_at_once_and_keeps_the_record(
    tmp_path, runs, monkeypatch, command
):
    _, now = runs
    trickler = Trickler(every_s=0.1, max_bytes=300).start()  # a whole answer after 30 s
    monkeypatch.setenv("SLOW_HOOK", trickler.url)
    slow = {"webhook_env": "SLOW_HOOK", "attempts": 1, "timeout_s": 60}
    params = _params(tmp_path, {"file": "alerts.jsonl"}, slow)
    try:
        code, out, err = interrupted_in_delivery(command, params, now, trickler)
    finally:
        trickler.stop()
    assert code == 130, (out, err)
    assert "interrupted" in err and "SECRET" not in out + err
    record = read_manifest(now)["alerts"]
    assert record["fired"] and record["notifications"] == 1
    delivered, stopped = record["deliveries"]
    assert delivered["ok"] and delivered["target"] == "file alerts.jsonl"
    assert (stopped["ok"], stopped["retry"]) == (False, True)
    assert stopped["error"] == "interrupted by SIGINT during the delivery"


@pytest.mark.slow
def test_kill_9_during_a_delivery_leaves_it_to_be_retried(tmp_path, runs, hook, monkeypatch):
    _, now = runs
    trickler = Trickler(every_s=0.1, max_bytes=300).start()
    monkeypatch.setenv("SLOW_HOOK", trickler.url)
    params = _params(tmp_path, {"webhook_env": "SLOW_HOOK", "attempts": 1, "timeout_s": 60})
    process = publishing("run", params, now)
    try:
        in_delivery(process, trickler)
        process.kill()
        process.communicate(timeout=60)
    finally:
        trickler.stop()
    (pending,) = read_manifest(now)["alerts"]["deliveries"]
    assert (pending["ok"], pending["retry"]) == (False, True)
    assert pending["error"] == "not delivered yet (the process ended during the delivery)"
    monkeypatch.setenv("SLOW_HOOK", hook.url)
    (retried,) = redeliver(now.parent, load_params(params).alerts)
    assert (retried.tried, retried.failed) == (1, 0)
    assert [b["evalbench"]["rule"] for b in hook.bodies] == [RULE]
