"""A run that ends badly around its alert check loses no alert and names no missing page:
stopped after it was published but before its check (a signal, a write error), the next run
of the same command checks it; a manifest past the file size limit is one line; after a
delivery interrupted mid-way, the rerun writes the summary it names; killed in its second
target, each notification is delivered exactly once in all."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest
from alerts.helpers import (
    Trickler,
    in_delivery,
    interrupted_in_delivery,
    publishing,
    watched_params,
)
from studyfiles import gaia_dataset, gaia_params

from evalbench import publish
from evalbench.alerts import check as check_module
from evalbench.cli import main
from evalbench.history import pin_baseline
from evalbench.publish import OutputsUnwritable, StudyResult, run_study
from evalbench.runs import read_manifest
from evalbench.settings import get_settings

DROP = {"metric": "accuracy", "drop_more_than": 0.05}
RULE = "accuracy drop_more_than 0.05"


def _sent() -> list[dict]:
    path = get_settings().outputs_dir / "alerts.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.mark.slow
def test_a_run_stopped_before_its_check_is_checked_by_the_next_run(tmp_path, monkeypatch):
    dataset = gaia_dataset(tmp_path, [str(i) for i in range(40)])
    params = gaia_params(tmp_path, dataset, [{"name": "s", "sim": {"accuracy": 1.0}}],
                         alerts={"rules": [DROP], "notify": [{"file": "alerts.jsonl"}]})  # fmt: skip
    base = run_study(params, warm=True)
    assert base.status == "ok"
    pin_baseline(base.run_dir)
    worse = ["systems.0.sim.accuracy=0.0"]  # 40 of 40 right -> 0 of 40: the rule fires
    real = check_module.check_run

    def stopped(*args, **kw):  # SIGTERM right after the manifest said "ok"
        raise KeyboardInterrupt

    def too_large(*args, **kw):  # the manifest past a file size limit (prlimit --fsize)
        raise OSError(errno.EFBIG, os.strerror(errno.EFBIG))

    monkeypatch.setattr(check_module, "check_run", stopped)
    with pytest.raises(KeyboardInterrupt):
        run_study(params, worse, warm=True)
    monkeypatch.setattr(check_module, "check_run", too_large)
    with pytest.raises(OutputsUnwritable, match=r"\(File too large\)"):
        run_study(params, worse, warm=True)  # not "current": its check is still due
    assert _sent() == []
    monkeypatch.setattr(check_module, "check_run", real)
    checked = run_study(params, worse, warm=True)
    assert checked.status == "ok" and "ALERT: 1 rule(s) fired" in checked.reason
    assert [s["evalbench"]["rule"] for s in _sent()] == [RULE]
    assert run_study(params, worse, warm=True).status == "current"
    assert len(_sent()) == 1  # checked once: nothing sent again


def _params(tmp_path: Path, *notify: dict) -> Path:
    return watched_params(tmp_path, *notify)


@pytest.fixture
def now(runs):
    """A run that dropped from 40 of 40 to 0 of 40 against its pinned baseline."""
    return runs[1]


@pytest.fixture
def trickler(monkeypatch):
    server = Trickler(every_s=0.1, max_bytes=300).start()  # a whole answer after 30 s
    monkeypatch.setenv("SLOW_HOOK", server.url)
    yield server
    server.stop()


def _is_current(monkeypatch, run_dir: Path) -> None:
    def run_study(path, overrides=None, **kw):
        return StudyResult(Path(path), "current", run_dir, 0.0, "up to date")

    monkeypatch.setattr(publish, "run_study", run_study)


@pytest.mark.slow
def test_a_manifest_past_the_file_size_limit_is_one_line_not_a_traceback(tmp_path, now):
    manifest = read_manifest(now)
    manifest["notes"] = ["a note to make the manifest large"] * 5000
    (now / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    limit = (now / "manifest.json").stat().st_size + 200  # the alerts record does not fit
    process = publishing("run", _params(tmp_path, {"file": "alerts.jsonl"}), now, limit)
    try:
        out, err = process.communicate(timeout=120)
    finally:
        process.kill()
    assert process.returncode == 2, (out, err)
    assert err.startswith(f"evalbench: cannot write to {now} (File too large)")
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.slow
@pytest.mark.parametrize(("command", "code"), [("run", 0), ("watch", 1)])  # watch: it fired
def test_after_an_interrupted_delivery_the_rerun_writes_the_summary_it_names(
    tmp_path, now, hook, trickler, monkeypatch, capsys, command, code
):
    params = _params(tmp_path, {"webhook_env": "SLOW_HOOK", "attempts": 1, "timeout_s": 60})
    code_now, out, err = interrupted_in_delivery(command, params, now, trickler)
    assert code_now == 130, (out, err)
    assert not (now / "summary.html").exists()  # stopped before it was written
    monkeypatch.setenv("SLOW_HOOK", hook.url)
    _is_current(monkeypatch, now)
    assert main([command, str(params)]) == code
    out = capsys.readouterr().out
    assert "1 undelivered notification(s) now delivered" in out and len(hook.bodies) == 1
    assert f"summary: {now / 'summary.html'}\n" in out
    assert (now / "summary.html").exists()


@pytest.mark.slow
def test_killed_in_its_second_target_each_notification_is_delivered_exactly_once(
    tmp_path, now, hook, trickler, monkeypatch
):
    slow = {"webhook_env": "SLOW_HOOK", "attempts": 1, "timeout_s": 60}
    params = _params(tmp_path, {"file": "alerts.jsonl"}, slow)
    process = publishing("run", params, now)
    try:
        in_delivery(process, trickler)
        process.kill()  # kill -9 while the webhook is delivered: the file target is done
        process.communicate(timeout=60)
    finally:
        process.kill()
    written, killed = read_manifest(now)["alerts"]["deliveries"]
    assert (written["ok"], killed["ok"], killed["retry"]) == (True, False, True)
    monkeypatch.setenv("SLOW_HOOK", hook.url)
    _is_current(monkeypatch, now)
    assert main(["run", str(params)]) == 0
    assert main(["run", str(params)]) == 0
    assert [s["evalbench"]["rule"] for s in _sent()] == [RULE]
    assert [b["evalbench"]["rule"] for b in hook.bodies] == [RULE]
