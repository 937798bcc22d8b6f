"""The trends page of a study (``outputs/<study>/trends.html``, written with the index): one
line per system and setup, a new setup where the overrides (other than ``tag=``) or the commit
change, the alerts that fired marked, everything escaped."""

from __future__ import annotations

import itertools
import json
import math
import re

from evalbench.index import build_index
from evalbench.look import OKABE_ITO


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


def test_six_series_get_six_colours_and_markers_and_the_axis_shows_dates(gaia_run, outputs):
    # 2 systems × 3 setups (as written, seed=2, seed=3): six lines; they were drawn in two
    # colours (one per system), told apart only by dashes, under run hashes on the axis
    for day, overrides in [(1, []), (2, ["seed=2"]), (3, ["seed=3"]), (4, [])]:
        gaia_run("s", f"run{day}hash", {"a": {"t1": True}, "b": {"t1": False}},
                 started_at=f"2026-01-0{day}T1{day}:30:00+00:00", overrides=overrides)  # fmt: skip
    build_index(outputs)
    page = (outputs / "s" / "trends.html").read_text()
    svg = re.findall(r"<svg viewBox=.*?</svg>", page, re.S)[0]
    series = dict(re.findall(r'data-series="(\d+)" fill="([^"]+)" d="M', svg))
    shapes = {}
    for number, shape in re.findall(r'data-series="(\d+)"[^>]*data-marker="([^"]+)"', svg):
        shapes[number] = shape
    assert len(series) == 6 and len(set(series.values())) == 6  # a colour per series
    assert set(series.values()) <= {c.lower() for c in OKABE_ITO}
    assert len(set(shapes.values())) == 6  # and a marker per series
    labels = re.findall(r'<text[^>]*class="date"[^>]*>([^<]*)</text>', svg)
    assert labels == ["2026-01-01 11:30", "2026-01-02 12:30", "2026-01-03 13:30",
                      "2026-01-04 14:30"]  # fmt: skip
    assert "run1hash" not in svg.split("<title>")[0]  # no hash under the axis
    assert "run started (UTC)" in svg
    legend = re.findall(r'<ul class="legend">(.*?)</ul>', page)[0]
    assert legend.count("<li>") == 6 and len(set(re.findall(r'stroke="(#[0-9a-f]+)"', legend))) == 6


def test_the_strongest_drop_gets_its_ring_too(gaia_run, outputs):
    # an exact McNemar p of 0 (every discordant item one way, as far as floats go) was
    # read as "no p": the ring vanished for the strongest drops
    gaia_run("s", "r1", {"a": {"t1": True}}, started_at="2026-01-01T00:00:00+00:00")
    run = gaia_run("s", "r2", {"a": {"t1": False}}, started_at="2026-01-02T00:00:00+00:00")
    _add_alert(run, "a")
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["alerts"]["fired"][0]["p_holm"] = 0.0
    (run / "manifest.json").write_text(json.dumps(manifest))
    build_index(outputs)
    page = (outputs / "s" / "trends.html").read_text()
    assert page.count('class="alerted"') == 1


def test_two_hundred_runs_get_date_labels_that_do_not_overlap():
    from evalbench.history.trends import MAX_LABELS, Point, RunInfo, trends_page

    points = [Point(f"run{i:03d}", f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}+00:00", "t", "a",
                    "accuracy", "binary", 0.5, 0.4, 0.6) for i in range(200)]  # fmt: skip
    infos = {("s", p.run_id): RunInfo("as written · c", [], set(), False) for p in points}
    page = trends_page("s", points, infos)
    xs = [float(x) for x in re.findall(r'<text x="([\d.]+)"[^>]*class="date"', page)]
    assert len(xs) <= MAX_LABELS + 1 and xs[-1] == max(xs)  # the last run is labelled
    step = (900 - 64 - 16) / 200 * math.ceil(200 / MAX_LABELS)  # 15 runs apart at least
    assert min(b - a for a, b in itertools.pairwise(xs)) >= step - 0.2  # (drawn to 0.1 px)
