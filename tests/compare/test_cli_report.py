"""``evalbench compare`` with its report: the same comparison twice reuses the up-to-date
report (exit codes keep their README meaning), a changed run renders it again, another
process rendering it is waited for, and a report that did not render is exit 3."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import evalbench.publish
from evalbench.cli import main
from evalbench.freshness import find_current
from evalbench.publish import StudyResult

ROOT = Path(__file__).resolve().parents[2]
N = 6


def _report_path(out: str) -> Path:
    found = re.search(r"^report: (\S+)", out, re.M)
    assert found, out
    return Path(found.group(1))


@pytest.mark.slow
def test_the_same_compare_twice_reuses_its_report_and_a_changed_run_does_not(
    gaia_run, outputs, capsys
):
    """One real render (papermill, about 5 s: the report is what this test is about)."""
    base = gaia_run("g", "a", {"s": {f"t{i}": i % 2 == 0 for i in range(N)}})
    cand = gaia_run("g", "b", {"s": {f"t{i}": i % 3 == 0 for i in range(N)}})
    assert main(["compare", str(base), str(cand)]) == 0
    first = capsys.readouterr()
    report = _report_path(first.out)
    rendered = report.stat().st_mtime_ns
    html = report.read_text()
    assert "<code>evalbench history PARAMS_FILE</code>" in html and "&amp;lt;" not in html
    assert first.out.index("McNemar exact") < first.out.index("report:")  # the table first
    assert main(["compare", str(base), str(cand)]) == 0
    second = capsys.readouterr()
    assert second.err == "" and _report_path(second.out) == report
    assert f"report: {report} (up to date: reused)" in second.out
    assert report.stat().st_mtime_ns == rendered  # not rendered again
    assert first.out.split("report:")[0] == second.out.split("report:")[0]  # the same table
    # a compared run changing (its records) makes the report stale: the next call renders
    params_file = Path(json.loads((report.parent / "manifest.json").read_text())["params_file"])
    assert find_current(outputs, ROOT / "notebooks", params_file, []) == report.parent
    records = cand / "records" / "gaia.jsonl"
    records.write_text(records.read_text().replace('"correct": false', '"correct": true', 1))
    assert find_current(outputs, ROOT / "notebooks", params_file, []) is None


def _results(monkeypatch, statuses: list[str]) -> list[str]:
    """``run_study`` answers ``statuses`` in turn (the report's folder is tmp-less: fake)."""
    calls: list[str] = []

    def fake(path, overrides=None, **kw):
        status = statuses[min(len(calls), len(statuses) - 1)]
        calls.append(status)
        run_dir = Path(path).parent
        return StudyResult(Path(path), status, run_dir, 0.0, f"{status} reason")

    monkeypatch.setattr(evalbench.publish, "run_study", fake)
    return calls


@pytest.fixture
def pair(gaia_run):
    base = gaia_run("g", "a", {"s": {f"t{i}": True for i in range(N)}})
    cand = gaia_run("g", "b", {"s": {f"t{i}": True for i in range(N)}})
    return [str(base), str(cand)]


def test_a_report_another_process_is_rendering_is_waited_for(pair, monkeypatch, capsys):
    import evalbench.history.cli as cli

    monkeypatch.setattr(cli, "BUSY_POLL_S", 0.01)
    calls = _results(monkeypatch, ["busy", "busy", "current"])
    assert main(["compare", *pair]) == 0
    assert calls == ["busy", "busy", "current"]
    assert "(up to date: reused)" in capsys.readouterr().out


def test_a_report_that_did_not_render_is_exit_3_or_the_gates_1(pair, gaia_run, monkeypatch, capsys):
    _results(monkeypatch, ["failed"])
    assert main(["compare", "--fail-on-regression", "--baseline", *pair]) == 3
    out, err = capsys.readouterr()
    assert "no regression" in out
    assert err == "evalbench: the compare report did not render (failed: failed reason)\n"
    good = gaia_run("g", "c", {"s": {f"t{i}": True for i in range(12)}})
    worse = gaia_run("g", "d", {"s": {f"t{i}": False for i in range(12)}})
    code = main(["compare", "--fail-on-regression", "--baseline", str(good), str(worse)])
    # 12 items right only in A: McNemar p = 2 × 2^-12 = 4.9e-4, Holm × 2 rows (all, L1)
    # = 9.8e-4 < 0.05: the regression's exit 1 stands, the report's failure is on stderr
    out, err = capsys.readouterr()
    assert code == 1 and "REGRESSION" in out and "did not render" in err


def test_a_busy_report_past_the_wait_is_exit_3(pair, monkeypatch, capsys):
    import evalbench.history.cli as cli

    monkeypatch.setattr(cli, "BUSY_POLL_S", 0.01)
    monkeypatch.setattr(cli, "BUSY_WAIT_S", 0.05)
    _results(monkeypatch, ["busy"])
    assert main(["compare", *pair]) == 3
    assert "did not render (busy: busy reason)" in capsys.readouterr().err
