"""A GAIA study rendered for real, as the README's walkthrough does it: a good run, pinned as
the baseline, then a rerun with a lower accuracy. Its summary.html holds the full report's
numbers, the alert fires end to end (status line, manifest, notification file, exit status,
``evalbench watch``), the index links report, summary and trends, and Chromium shows the
summary without horizontal scroll at 1280 px.

The three renders (about 2-3 s each with the warm kernel) are shared by the module's tests.
"""

from __future__ import annotations

import html as html_module
import json
import re
import shutil
import subprocess
from functools import partial
from pathlib import Path
from typing import NamedTuple

import pytest
import yaml

from evalbench import publish
from evalbench.cli import main
from evalbench.history import pin_baseline
from evalbench.publish import StudyResult, build_index, run_study
from evalbench.runs import read_manifest
from evalbench.settings import ENV_CACHE, ENV_OUTPUTS

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("summary_rendered")]

LOW = "systems.0.sim.accuracy=0.2"
LONG = "https://example.com/" + "averylongunbrokentoken" * 15  # no place to break
PARAMS = {
    "study": "gaia",
    "title": "Alert demo <b>bold?</b>",
    "description": f"The GAIA demo suite with one simulated assistant. See {LONG}",
    "dataset": "demo",
    "bootstrap_rounds": 50,
    "systems": [{"name": "strong-sim", "provider": "sim", "sim": {"accuracy": 0.9}}],
    "alerts": {
        "rules": [{"metric": "accuracy", "drop_more_than": 0.05}],
        "notify": [{"file": "alerts.jsonl"}],
    },
}


class Demo(NamedTuple):
    outputs: Path
    params: Path
    good: StudyResult
    worse: StudyResult


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    base = tmp_path_factory.mktemp("rendered")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(ENV_OUTPUTS, str(base / "outputs"))
        patch.setenv(ENV_CACHE, str(base / "cache"))
        params = base / "watched.yaml"
        params.write_text(yaml.safe_dump(PARAMS, allow_unicode=True))
        good = run_study(params, warm=True)
        assert good.status == "ok", good.reason
        pin_baseline(good.run_dir, base / "outputs")
        worse = run_study(params, [LOW], warm=True)
        assert worse.status == "ok", worse.reason
        build_index()
    return Demo(base / "outputs", params, good, worse)


@pytest.fixture
def here(demo: Demo, monkeypatch: pytest.MonkeyPatch) -> Demo:
    """The demo's outputs as this test's outputs (for the command line and the index)."""
    monkeypatch.setenv(ENV_OUTPUTS, str(demo.outputs))
    monkeypatch.setenv(ENV_CACHE, str(demo.outputs.parent / "cache"))
    return demo


KEY_RESULT = re.compile(
    r"strong-sim \(simulated\) ([\d.]+)% \[([\d.]+)%, ([\d.]+)%\], (\d+) of (\d+)"
)


def _report_numbers(run_dir: Path) -> tuple[float, float, float, int]:
    text = html_module.unescape(re.sub(r"<[^>]+>", " ", (run_dir / "report.html").read_text()))
    found = KEY_RESULT.search(re.sub(r"\s+", " ", text))
    assert found, "the report's key result sentence"
    estimate, low, high, _, n = found.groups()
    return float(estimate), float(low), float(high), int(n)


def _summary_numbers(run_dir: Path) -> tuple[float, float, float, int, str]:
    page = (run_dir / "summary.html").read_text()
    item = re.search(r'<li class="headline" ([^>]*)>(.*?)</li>', page)
    assert item, "a headline in the summary"
    attrs = dict(re.findall(r'data-(\w+)="([^"]*)"', item.group(1)))
    words = html_module.unescape(re.sub(r"<[^>]+>", "", item.group(2)))
    return (float(attrs["estimate"]), float(attrs["low"]), float(attrs["high"]),
            int(attrs["n"]), words)  # fmt: skip


def test_the_summary_has_the_full_reports_numbers(demo: Demo):
    for result in (demo.good, demo.worse):
        report = _report_numbers(result.run_dir)
        estimate, low, high, n, words = _summary_numbers(result.run_dir)
        # the report: 1 decimal of a percentage; the summary: the exact value and whole percents
        assert (round(estimate * 100, 1), round(low * 100, 1), round(high * 100, 1), n) == report
        assert f"about {estimate * 100:.0f}%, likely between {low * 100:.0f}% and" in words
        assert f"{round(report[0])}%" in words and f"({n} tasks)" in words


def test_the_summary_is_plain_escaped_and_links_the_report(demo: Demo):
    page = (demo.worse.run_dir / "summary.html").read_text()
    assert "<b>bold?</b>" not in page and "&lt;b&gt;bold?&lt;/b&gt;" in page
    assert '<a href="report.html">' in page and "<script" not in page and "http" not in (
        page.replace(LONG, "")
    )  # offline: no external resource  # fmt: skip
    visible = re.sub(r"<[^>]+>", " ", page.split("<main>")[1]).replace(PARAMS["description"], "")
    for word in ("Holm", "Wilson", "McNemar", "bootstrap", "p-value", "p =", "significan",
                 "confidence interval", "MDD"):  # fmt: skip
        assert word.lower() not in visible.lower(), word


def test_a_drop_fires_the_alert_end_to_end(demo: Demo):
    good_id = demo.good.run_dir.name
    assert demo.worse.reason.startswith(f"ALERT: 1 rule(s) fired vs watched/{good_id}: strong-sim")
    record = read_manifest(demo.worse.run_dir)["alerts"]
    overall = next(f for f in record["fired"] if f["slice"] == "overall")
    estimate, *_ = _summary_numbers(demo.good.run_dir)
    assert overall["baseline"] == pytest.approx(estimate)  # the baseline's headline
    assert overall["p_holm"] < 0.05 and overall["change"] < -0.05
    (line,) = (demo.outputs / "alerts.jsonl").read_text().splitlines()  # one rule fired
    assert json.loads(line)["evalbench"]["run"] == f"watched/{demo.worse.run_dir.name}"
    summary = html_module.unescape((demo.worse.run_dir / "summary.html").read_text())
    assert "Real: a change this large is not chance." in summary
    assert "strong-sim got worse since the baseline" in summary
    assert "Alerts fired (" in summary
    assert read_manifest(demo.good.run_dir)["alerts"]["baseline"] is None  # nothing to compare


def test_fail_on_alert_and_the_summary_audience(here: Demo, capsys: pytest.CaptureFixture):
    assert main(["run", str(here.params), "-p", LOW, "--fail-on-alert"]) == 1  # up to date
    assert main(["run", str(here.params), "--fail-on-alert"]) == 0
    assert main(["run", str(here.params), "-p", LOW]) == 0  # without the flag: the run's status
    capsys.readouterr()
    assert main(["report", str(here.params), "--audience", "summary"]) == 0
    assert f"summary: {here.good.run_dir / 'summary.html'}" in capsys.readouterr().out


def test_the_index_links_report_summary_and_trends_and_marks_the_alert(here: Demo):
    index = (here.outputs / "index.html").read_text()
    worse = f"watched/{here.worse.run_dir.name}"
    for page in ("report.html", "summary.html"):
        assert f'<a href="{worse}/{page}">' in index
    assert '<a href="watched/trends.html">trends</a>' in index
    fired = read_manifest(here.worse.run_dir)["alerts"]["fired"]
    assert f"ALERT: {len(fired)} fired vs watched/{here.good.run_dir.name}</div>" in index
    trends = (here.outputs / "watched" / "trends.html").read_text()
    assert trends.count('class="alerted"') == 1  # the worse run's point, ringed
    assert trends.count('class="alert"') == 1  # one run with alerts
    assert trends.count('class="setup"') == 1  # the override starts a new setup
    assert "&lt;b&gt;bold?&lt;/b&gt;" in trends and "<b>bold?</b>" not in trends


@pytest.mark.browser
def test_chromium_shows_the_summary_without_horizontal_scroll_at_1280(demo: Demo, tmp_path):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("needs Debian chromium (apt-get install chromium)")
    page = (demo.worse.run_dir / "summary.html").read_text()
    probe = """<script>window.onload = () => { document.body.dataset.m = JSON.stringify({
      page: document.documentElement.scrollWidth, width: innerWidth}); };</script></body>"""
    (tmp_path / "probe.html").write_text(page.replace("</body>", probe))  # the page has none
    dom = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp_path / 'chrome'}", "--window-size=1280,900",
         "--virtual-time-budget=3000", "--dump-dom", (tmp_path / "probe.html").as_uri()],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip
    m = json.loads(html_module.unescape(re.search(r'data-m="([^"]*)"', dom).group(1)))
    assert m["width"] == 1280
    assert m["page"] <= m["width"]  # no horizontal scroll, even with a 300-character token


def test_watch_runs_checks_and_exits_with_the_alert_status(
    here: Demo, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
):
    monkeypatch.setattr(publish, "run_study", partial(run_study, warm=True))  # the warm kernel
    code = main(["watch", str(here.params), "--tier", "full", "--tag", "2026-05-01", "-p", LOW])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "ALERT accuracy drop_more_than 0.05: strong-sim accuracy overall:" in out
    run_dir = Path(re.search(r"^report: (.*)/report\.html$", out, re.M).group(1))
    assert read_manifest(run_dir)["overrides"] == [LOW, "tier=full", "tag=2026-05-01",
                                                   "cache=refresh"]  # fmt: skip
    assert len((here.outputs / "alerts.jsonl").read_text().splitlines()) == 2
