"""``evalbench watch`` without rendering: its overrides, the refusal without an alerts: block,
and the exit status --fail-on-alert reads from a run's manifest."""

from __future__ import annotations

import argparse
import datetime as dt

import yaml
from alerts.helpers import outcomes_from, write_run

from evalbench.alerts.cli import alert_lines, fail_on_alert, watch_overrides
from evalbench.alerts.spec import AlertsSpec
from evalbench.cli import main
from evalbench.settings import get_settings


def _args(**kw):
    return argparse.Namespace(**{"tier": "quick", "tag": None, "overrides": [], **kw})


def test_a_scheduled_run_is_tagged_with_the_date_and_asks_afresh():
    day = dt.date(2026, 5, 1)
    assert watch_overrides(_args(), day) == ["tier=quick", "tag=2026-05-01", "cache=refresh"]
    args = _args(tier="standard", tag="nightly-7", overrides=["seed=2", "cache=use"])
    assert watch_overrides(args, day) == ["seed=2", "cache=use", "tier=standard", "tag=nightly-7"]


def test_watch_refuses_params_without_an_alerts_block(tmp_path, capsys):
    params = tmp_path / "x.yaml"
    params.write_text(yaml.safe_dump({"study": "gaia", "title": "t", "dataset": "demo",
                                      "systems": [{"name": "s", "provider": "sim"}]}))  # fmt: skip
    assert main(["watch", str(params)]) == 2
    assert "alerts: watch needs an alerts: block" in capsys.readouterr().err
    assert not get_settings().outputs_dir.exists()  # nothing ran


def test_fail_on_alert_reads_the_runs_manifest():
    from evalbench.alerts.check import check_run
    from evalbench.history import pin_baseline

    outputs = get_settings().outputs_dir
    base = write_run(outputs, "base", {"a": outcomes_from([True] * 40)})
    same = write_run(outputs, "same", {"a": outcomes_from([True] * 40)})
    worse = write_run(outputs, "worse", {"a": outcomes_from([False] * 40)})
    pin_baseline(base, outputs)
    spec = AlertsSpec.model_validate({"rules": [{"drop_more_than": 0.05}]})
    assert fail_on_alert([same, None]) == 0  # no alerts: block: nothing to fail on
    check_run(same, spec)
    check_run(worse, spec)
    assert fail_on_alert([same]) == 0
    assert fail_on_alert([same, worse]) == 1
    lines = alert_lines(_record(worse))
    assert lines[0].startswith("ALERT drop_more_than 0.05: a accuracy overall: 1.000 → 0.000")
    assert alert_lines(_record(same)) == ["no alert (vs watched/base: pinned baseline)"]


def _record(run_dir):
    from evalbench.runs import read_manifest

    return read_manifest(run_dir)["alerts"]
