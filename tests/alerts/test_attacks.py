"""The alert surfaces attacked: a check that fired in hundreds of places (the watch log, the
index, the trends page and the summary show a bounded list), numbers too large or not finite,
a run with no items, usage that is not a number."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest
from alerts.helpers import outcomes_from, write_run

from evalbench.alerts import AlertRule
from evalbench.alerts.cli import alert_lines
from evalbench.alerts.notify import finding_line
from evalbench.alerts.rules import Finding, evaluate, read_numbers
from evalbench.index import build_index
from evalbench.settings import get_settings
from evalbench.summary import write_summary

PLACES = 900


def _fired(count: int) -> list[dict]:
    return [
        {"rule": "drop_more_than 0.05", "system": f"s{i:04d}", "metric": "accuracy",
         "slice": "overall", "baseline": 1.0, "now": 0.0, "change": -1.0, "low": -1.0,
         "high": -1.0, "p_holm": 1e-9, "n": 40}
        for i in range(count)
    ]  # fmt: skip


def _alerted_run():
    """A run whose check fired in 900 places (300 systems x 3 slices, say) and failed to
    deliver 50 notifications."""
    outputs = get_settings().outputs_dir
    outputs.mkdir(parents=True, exist_ok=True)
    write_run(outputs, "base", {"s0000": outcomes_from([True] * 4)})
    now = write_run(outputs, "now", {"s0000": outcomes_from([False] * 4)},
                    started_at="2026-01-02T00:00:00+00:00")  # fmt: skip
    manifest = json.loads((now / "manifest.json").read_text())
    failed = [{"target": f"file f{i}.jsonl", "rule": "r", "ok": False, "attempts": 1,
               "error": "disk full", "retry": True, "rounds": 1} for i in range(50)]  # fmt: skip
    manifest["alerts"] = {"baseline": "watched/base", "baseline_is": "pinned baseline",
                          "fired": _fired(PLACES), "deliveries": failed, "problems": []}  # fmt: skip
    (now / "manifest.json").write_text(json.dumps(manifest))
    return outputs, now, manifest["alerts"]


def test_the_watch_log_lists_a_bounded_number_of_places(capsys):
    _, _, record = _alerted_run()
    lines = alert_lines(record)
    # 20 places, then one line for the other 880; 20 failed deliveries, one for the other 30
    assert len(lines) == 20 + 1 + 20 + 1
    assert lines[20] == "ALERT … and 880 more (every one in the run's manifest.json, alerts)"
    assert lines[-1] == ("NOTIFICATION FAILED … and 30 more (every one in the run's "
                         "manifest.json, alerts)")  # fmt: skip


def test_the_index_trends_and_summary_show_a_bounded_number_of_places():
    outputs, now, _ = _alerted_run()
    build_index(outputs)
    write_summary(now)
    index = (outputs / "index.html").read_text()
    assert "s0899" not in index and "… and 890 more" in index  # 10 shown of 900 (+50 failed)
    trends = (outputs / "watched" / "trends.html").read_text()
    assert "s0899" not in trends and "… and 890 more" in trends
    summary = (now / "summary.html").read_text()
    assert "Alerts fired (900)" in summary
    assert "s0899" not in summary and "… and 890 more" in summary


def test_finding_lines_with_numbers_too_large_or_not_finite_stay_short():
    huge = Finding("latency_p95_more_than 1.5", "a", "latency p95 (s)", "overall", 1e308,
                   1.7e308, 1.7, None, None, None, 20)  # fmt: skip
    assert finding_line(huge) == "a latency p95 (s) overall: 1e+308 → 1.7e+308 (×1.70)"
    gone = Finding("r", "a", "accuracy", "overall", None, math.nan, math.inf, None, math.nan,
                   None, 3)  # fmt: skip
    assert finding_line(gone) == "a accuracy overall: — → — (×inf)"
    drop = gone._replace(p_holm=0.01, low=-math.inf)
    assert finding_line(drop) == ("a accuracy overall: — → — (+inf, interval -inf to —; "
                                  "Holm-adjusted p 0.01; n=3)")  # fmt: skip


def test_a_run_without_items_gets_a_summary_and_no_crash():
    outputs = get_settings().outputs_dir
    outputs.mkdir(parents=True, exist_ok=True)
    empty = write_run(outputs, "empty", {"a": {}})
    written = write_summary(empty)
    page = written.path.read_text()
    assert "No results." in page and "None to show: nothing was measured." in page
    assert "No failures of any kind" not in page  # which would read as a clean result


def test_usage_that_is_not_a_number_is_a_note_not_a_crash():
    outputs = get_settings().outputs_dir
    outputs.mkdir(parents=True, exist_ok=True)
    tasks = {"a": outcomes_from([True] * 4)}
    base = write_run(outputs, "base", tasks, usage={"a": {"calls": 4, "errors": 0,
                                                          "cost_usd": 0.4}})  # fmt: skip
    now = write_run(outputs, "now", tasks)
    manifest = json.loads((now / "manifest.json").read_text())
    manifest["usage"] = manifest["published"]["usage"] = [
        {"system": "a", "calls": "many", "errors": None, "cost_usd": "NaN"}
    ]
    (now / "manifest.json").write_text(json.dumps(manifest))
    rules = [AlertRule(cost_usd_more_than=1.5), AlertRule(error_rate_more_than=0.1)]
    found = evaluate(rules, read_numbers(base), read_numbers(now))
    assert found.findings == []
    assert found.notes == [
        "cost_usd_more_than 1.5: a: no cost per task to compare (not a finite number in a "
        "manifest)",
        "error_rate_more_than 0.1: a: no share of failed calls to compare (not a finite number "
        "in a manifest)",
    ]


def test_a_file_target_that_is_a_named_pipe_fails_at_once_instead_of_blocking():
    import os
    import threading

    from evalbench.alerts import NotifyTarget
    from evalbench.alerts.notify import deliver_one

    outputs = get_settings().outputs_dir
    outputs.mkdir(parents=True, exist_ok=True)
    os.mkfifo(outputs / "alerts.jsonl")  # no reader: opening it to write would wait forever
    payload = {"text": "x", "evalbench": {"rule": "r"}}
    done = []

    def deliver():
        done.append(deliver_one(NotifyTarget(file="alerts.jsonl"), payload, outputs))

    worker = threading.Thread(target=deliver, daemon=True)
    worker.start()
    worker.join(timeout=60)
    if worker.is_alive():  # the old behaviour; let the thread go by giving the pipe a reader
        os.close(os.open(outputs / "alerts.jsonl", os.O_RDONLY | os.O_NONBLOCK))
    assert done, "the delivery blocked on the named pipe"
    (delivery,) = done
    assert (delivery.ok, delivery.retry) == (False, True)
    assert delivery.error == "alerts.jsonl: not a regular file"


@pytest.mark.parametrize("blocker", ["alerts", "alerts/deep"])
def test_a_file_where_the_targets_folder_should_be_is_named_in_one_line(blocker):
    """``file: alerts/deep/x.jsonl`` when ``alerts`` (or ``alerts/deep``) is a file: the line
    names it, not mkdir's bare "File exists"; the delivery is kept for a retry."""
    from evalbench.alerts import NotifyTarget
    from evalbench.alerts.notify import deliver_one

    outputs = get_settings().outputs_dir
    (outputs / blocker).parent.mkdir(parents=True, exist_ok=True)
    (outputs / blocker).write_text("not a folder\n")
    target = NotifyTarget(file="alerts/deep/x.jsonl")
    delivery = deliver_one(target, {"text": "x", "evalbench": {"rule": "r"}}, outputs)
    assert (delivery.ok, delivery.retry) == (False, True)
    assert delivery.error == f"alerts/deep/x.jsonl: {blocker} is a file, not a folder"
    assert (outputs / blocker).read_text() == "not a folder\n"


def test_a_file_target_hard_linked_to_a_file_elsewhere_is_not_written():
    """A hard link is no symlink: ``outputs/hl.jsonl`` linked to a file outside the outputs
    folder got the notification appended to that file."""
    import tempfile

    from evalbench.alerts import NotifyTarget
    from evalbench.alerts.notify import deliver_one

    outputs = get_settings().outputs_dir
    outputs.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=outputs.parent) as elsewhere:
        precious = Path(elsewhere) / "precious.txt"
        precious.write_text("precious\n")
        os.link(precious, outputs / "hl.jsonl")
        target = NotifyTarget(file="hl.jsonl")
        delivery = deliver_one(target, {"text": "x", "evalbench": {"rule": "r"}}, outputs)
        assert (delivery.ok, delivery.retry) == (False, True)
        assert delivery.error == "hl.jsonl: a hard link (another name of a file elsewhere)"
        assert precious.read_text() == "precious\n"
