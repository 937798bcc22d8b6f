"""A system that measured nothing (every call failed, or its run's manifest says nothing was
scored) has no number on the history side: no point on the trends page, "no result" on the
scorecard and its system page, and the regression gate has nothing to decide on for it
(exit 2), never a drop to 0."""

from __future__ import annotations

import math
import re

import pytest

from evalbench.cli import main
from evalbench.history import (
    compare_runs,
    gate_blockers,
    regressions,
    scorecard,
    summarize_outcomes,
)
from evalbench.importers import OutcomeError, read_outcomes
from evalbench.index import build_index, system_page_name

ITEMS = [f"t{i}" for i in range(10)]
RIGHT = dict.fromkeys(ITEMS, True)
FAILED = dict.fromkeys(ITEMS, "error")
HALF = {t: i % 2 == 0 for i, t in enumerate(ITEMS)}  # 5 of 10 right


def test_a_system_whose_every_call_failed_has_no_estimate(gaia_run):
    run = gaia_run("g", "r1", {"s": HALF, "w": FAILED})
    table = summarize_outcomes(read_outcomes(run).outcomes).set_index("system")
    assert table.loc["s", "estimate"] == 0.5 and table.loc["s", "measured"] == 10
    # w: GAIA counts its 10 failed calls wrong (n = 10 valued items), but none was measured
    assert table.loc["w", ["n", "errors", "measured"]].tolist() == [10, 10, 0]
    assert all(math.isnan(table.loc["w", c]) for c in ("estimate", "low", "high"))


def test_trends_scorecard_and_system_page_say_no_result(gaia_run, outputs):
    gaia_run("g", "r1", {"s": HALF, "w": RIGHT}, started_at="2026-01-01T00:00:00+00:00")
    gaia_run("g", "r2", {"s": HALF, "w": FAILED}, started_at="2026-01-02T00:00:00+00:00")
    build_index(outputs)
    index = (outputs / "index.html").read_text()
    card = index.split('id="scorecard"')[1]
    row = re.findall(r'<tr class="system"><td><a[^>]*>w</a>.*?</tr>', card)[0]
    assert "no result" in row and "0.000" not in row
    page = (outputs / "systems" / system_page_name("w", "g")).read_text()
    assert "no result" in page and "<b>0.000</b>" not in page
    trends = (outputs / "g" / "trends.html").read_text()
    svg = re.findall(r"<svg viewBox=.*?</svg>", trends, re.S)[0]
    tips = re.findall(r"<title>(w · [^<]*)</title>", svg)
    assert len(tips) == 1 and "run r1: 100%" in tips[0]  # r1's point only, no 0% for r2
    assert "w accuracy: no result" in trends and "w accuracy: 0%" not in trends


def test_the_manifest_says_what_the_outcomes_cannot(gaia_run, outputs):
    # BFCL's "never called a function": ordinary wrong answers in the records; only the
    # manifest's measured rows say that w's headline stands on nothing
    measured = [
        {"system": "s", "scored": 10, "total": 10},
        {"system": "w", "scored": 0, "total": 10, "unscored": {"never called": 10}},
    ]
    gaia_run("g", "r1", {"s": HALF, "w": dict.fromkeys(ITEMS, False)}, measured=measured)
    cells = scorecard(outputs).cells.set_index("system")
    assert cells.loc["s", "estimate"] == 0.5 and math.isnan(cells.loc["w", "estimate"])


def test_the_gate_has_nothing_to_decide_on_for_a_system_that_measured_nothing(gaia_run, capsys):
    base = gaia_run("g", "base", {"s": HALF, "w": RIGHT})
    cand = gaia_run("g", "cand", {"s": HALF, "w": FAILED})
    found = compare_runs([read_outcomes(base), read_outcomes(cand)])
    # w would be 1.000 -> 0.000 on 10 discordant items (McNemar p = 2 × 2^-10): not a test
    assert set(found.tests["system_a"]) == {"s"} and not len(regressions(found.tests))
    (line,) = gate_blockers(found)
    assert "g/cand vs g/base, w: nothing measured in g/cand" in line
    code = main(["compare", "--baseline", str(base), "--fail-on-regression", "--no-report",
                 str(cand)])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 2 and "REGRESSION" not in out and "no regression" not in out
    assert (
        err.startswith("evalbench: g/cand vs g/base, w: nothing measured") and err.count("\n") == 1
    )
    assert main(["compare", str(base), str(cand), "--no-report"]) == 0  # without the gate
    out = capsys.readouterr().out
    assert "note: g/cand vs g/base, w: nothing measured in g/cand" in out
    assert not re.search(r"^\s+B\s+w\s", out, re.M)  # no row of w in the table


def test_a_run_whose_only_system_measured_nothing_compares_nothing(gaia_run):
    base = gaia_run("g", "base", {"w": RIGHT})
    cand = gaia_run("g", "cand", {"w": FAILED})
    with pytest.raises(OutcomeError, match="nothing compared: w: nothing measured in g/cand"):
        compare_runs([read_outcomes(base), read_outcomes(cand)])


def test_a_regression_of_one_system_is_not_hidden_by_another_that_measured_nothing(
    gaia_run, capsys
):
    # Before: the gate exited 2 ("w: nothing measured … cannot decide") and printed no
    # REGRESSION line, though s dropped from 40 of 40 to 0 of 40 (Holm p ~ 1e-12).
    many = [f"t{i}" for i in range(40)]
    base = gaia_run("g", "base", {"s": dict.fromkeys(many, True), "w": dict.fromkeys(many, True)})
    cand = gaia_run(
        "g", "cand", {"s": dict.fromkeys(many, False), "w": dict.fromkeys(many, "error")}
    )
    code = main(["compare", "--baseline", str(base), "--fail-on-regression", "--no-report",
                 str(cand)])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 1
    assert re.search(r"^REGRESSION .*\bs\b.*accuracy", out, re.M), out
    assert err.startswith("evalbench: also: g/cand vs g/base, w: nothing measured"), err
