"""The trends page of a study (``outputs/<study>/trends.html``, written with the index): one
line per system and setup, a new setup where the overrides (other than ``tag=``) or the commit
change, the alerts that fired marked, everything escaped."""

from __future__ import annotations

import json
import re

from evalbench.index import build_index


def _add_alert(run_dir, system):
    manifest = json.loads((run_dir / "manifest.json").read_text())
    manifest["alerts"] = {"baseline": "s/r1", "fired": [{
        "rule": "accuracy drop_more_than 0.05", "system": system, "metric": "accuracy",
        "slice": "overall", "baseline": 1.0, "now": 0.0, "change": -1.0, "low": -1.0,
        "high": -1.0, "p_holm": 0.001, "n": 4}]}  # fmt: skip
    (run_dir / "manifest.json").write_text(json.dumps(manifest))


def test_setups_are_separate_lines_and_alerts_are_marked(gaia_run, outputs):
    right, wrong = dict.fromkeys("abcd", True), dict.fromkeys("abcd", False)
    evil = "<b>sys</b>"

    def run(run_id, day, outcomes, **kw):
        return gaia_run("s", run_id, {evil: outcomes},
                        started_at=f"2026-01-0{day}T00:00:00+00:00", **kw)  # fmt: skip

    run("r1", 1, right, commit="aaaaaaaaaa11")
    run("r2", 2, right, commit="aaaaaaaaaa11", overrides=["tag=2026-01-02"])  # same setup
    run("r3", 3, right, commit="bbbbbbbbbb22")  # new code: a new setup
    _add_alert(run("r4", 4, wrong, commit="bbbbbbbbbb22", overrides=["seed=2"]), evil)
    build_index(outputs)
    page = (outputs / "s" / "trends.html").read_text()
    # lines: (sys, as written · aaaaaaaaaa) joins r1 and r2; r3 and r4 are one point each
    assert page.count('class="series"') == 1
    assert re.findall(r'<polyline points="([^"]*)"', page)[0].count(",") == 2  # two points
    assert page.count('class="setup"') == 2  # r2 -> r3 (commit), r3 -> r4 (overrides)
    legend = re.findall(r'<ul class="legend">(.*?)</ul>', page)[0]
    assert legend.count("<li>") == 3
    assert "as written · aaaaaaaaaa" in legend and "seed=2 · bbbbbbbbbb" in legend
    assert page.count('class="alerted"') == 1 and page.count('class="alert"') == 1
    assert evil not in page and "&lt;b&gt;sys&lt;/b&gt;" in page
    index = (outputs / "index.html").read_text()
    assert index.count('<a href="s/trends.html">trends</a>') == 4  # every run of the study
    assert "ALERT: 1 fired vs s/r1" in index
