"""The summary page carries the study's own findings (run folders written by hand): the key
result and top caveat first, the study's risks before the generic failure kinds, systems
apart from the judges that graded them, an anchor rating shown as fixed, a wrong answer's
differing characters marked, a sweep's cost from its cells, and nothing from a manifest
that could run as HTML."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
from alerts.helpers import outcomes_from, write_run

from evalbench.findings import Findings
from evalbench.settings import get_settings
from evalbench.summary import write_summary

FOUND = Findings(
    "strong answered <b>about 66%</b> of 32 tasks right, likely between 48% and 80%.",
    ("Only 32 tasks: &lt;intervals&gt; are wide.", "second caveat"),
    ("<b>The judge favours the longer answer</b> in 83% of pairs.",),
)


@pytest.fixture
def outputs() -> Path:
    path = get_settings().outputs_dir
    path.mkdir(parents=True, exist_ok=True)
    return path


def _page(run_dir: Path) -> str:
    write_summary(run_dir)
    return (run_dir / "summary.html").read_text().split("<main>")[1]


def _text(page: str) -> str:
    page = re.sub(r"</(?:li|p|h1|h2|div)>", " ", page)
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", page)))


def _edit(run_dir: Path, **fields: Any) -> None:
    path = run_dir / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest.update(fields)
    path.write_text(json.dumps(manifest))


def test_the_key_result_and_top_caveat_open_the_page(outputs):
    run = write_run(outputs, "r", {"strong": outcomes_from([True, False])})
    _edit(run, findings=FOUND.as_row())
    page = _page(run)
    text = _text(page)
    found = text.index("What the study found")
    assert found < text.index("What was measured")
    assert "strong answered about 66% of 32 tasks right, likely between 48% and 80%." in text
    assert "<b>about 66%</b>" in page  # the study's own emphasis kept
    assert "Read with care: Only 32 tasks: <intervals> are wide." in text
    assert "&lt;intervals&gt;" in page  # still escaped
    assert "second caveat" in text
    risks = text[text.index("Top risks") :]
    assert risks.index("The judge favours the longer answer in 83% of pairs") < risks.index(
        "Wrong answers"
    )
    assert "No failures" not in text


def test_a_manifest_edited_to_hold_html_shows_it_as_text(outputs):
    run = write_run(outputs, "r", {"a": outcomes_from([True])})
    evil = {
        "key_result": "<script>alert(1)</script><b onclick=x>y</b><mark>open",
        "caveats": ["<img src=x onerror=alert(1)>"],
        "risks": [],
        "cost": "",
    }
    _edit(run, findings=evil)
    page = _page(run)
    assert "<script>" not in page and "<img" not in page and "<b onclick" not in page
    assert "&lt;script&gt;" in page and "<mark>open</mark>" in page  # closed, not left open


def test_judges_are_named_apart_from_the_systems(outputs):
    run = write_run(outputs, "r", {"a": outcomes_from([True]), "b": outcomes_from([False])})
    usage = [{"system": s, "calls": 1, "errors": 0, "cost_usd": 0.0} for s in ("a", "b", "j")]
    _edit(
        run, usage=usage, params={"systems": [{"name": "a"}, {"name": "b"}], "judge": {"name": "j"}}
    )
    text = _text(_page(run))
    assert "2 systems: a, b." in text
    assert "Judges and graders (not rated): j." in text


def test_an_anchor_rating_reads_fixed_not_an_interval(outputs):
    run = write_run(outputs, "r", {"a": outcomes_from([True])})
    rows = [  # records/ratings.jsonl as the arena writes it; base is its anchor
        {
            "dataset": "demo",
            "model": "strong",
            "rating": 1142.2,
            "ci_low": 1099.0,
            "ci_high": 1190.4,
            "n_battles": 113,
        },
        {
            "dataset": "demo",
            "model": "base",
            "rating": 1000.0,
            "ci_low": 1000.0,
            "ci_high": 1000.0,
            "n_battles": 117,
        },
    ]
    (run / "records" / "ratings.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    text = _text(_page(run))
    assert "strong — rating (demo): about 1142, likely between 1099 and 1190" in text
    assert "base — rating (demo): fixed at 1000, the anchor the other ratings are measured " in text
    assert "between 1000 and 1000" not in text


def test_a_wrong_answer_marks_the_characters_that_differ(outputs):
    run = write_run(outputs, "r", {"a": outcomes_from([False])})
    path = run / "records" / "gaia.jsonl"
    row = json.loads(path.read_text())
    row.update(model_answer="kramhnceb", extracted_answer="kramhnceb", expected="kramhcneb")
    path.write_text(json.dumps(row) + "\n")
    page = _page(run)
    assert "answered “kramh<mark>nc</mark>eb”; expected “kramh<mark>cn</mark>eb”" in page


def test_a_cost_the_study_states_replaces_no_calls_recorded(outputs):
    run = write_run(outputs, "r", {"a": outcomes_from([True])})
    cost = "per cell $0.03 to $0.69, $2.10 in all (12 cells)"
    _edit(run, usage=[], findings=Findings("k", cost=cost).as_row())
    text = _text(_page(run))
    assert f"Cost {cost}" in text and "No model calls were recorded" not in text


def test_a_run_without_findings_keeps_the_generic_page(outputs):
    run = write_run(outputs, "r", {"a": outcomes_from([True])})
    text = _text(_page(run))
    assert "What the study found" not in text and "a — accuracy: about 100%" in text


def test_a_later_failed_attempt_keeps_the_published_findings(outputs):
    # the published attempt found "strong answered about 66%"; a later attempt failed after
    # its finish() wrote other findings: the page shows what was published
    run = write_run(outputs, "r", {"strong": outcomes_from([True, False])})
    manifest = json.loads((run / "manifest.json").read_text())
    published = {**manifest["published"], "findings": FOUND.as_row()}
    _edit(run, status="failed", published=published,
          findings=Findings("an unpublished attempt's sentence").as_row())  # fmt: skip
    text = _text(_page(run))
    assert "strong answered about 66% of 32 tasks right" in text
    assert "unpublished attempt" not in text


def test_a_sweep_names_the_cells_that_failed_and_never_says_no_failure(outputs):
    # Before: every cell timed out (no_result), and the sweep's summary said "No failures of
    # any kind were recorded"; with cells that had failed calls inside it said the same
    run = write_run(outputs, "r", {"a": outcomes_from([True])})
    _edit(run, kind="sweep", counts={"cells": 4, "ok": 1, "not_ok": 3, "reused": 0})
    text = _text(_page(run))
    assert "Cells that did not end ok: 3 counted in this run" in text
    measured = [{"system": "configuration 0", "scored": 2, "total": 2, "unscored": {},
                 "unit": "cell"}]  # fmt: skip
    _edit(
        run,
        counts={"cells": 4, "ok": 4, "not_ok": 0, "reused": 0},
        measured=measured,
        headlines={"cells": "4 (4 ok)", "best accuracy": "config 0 · a: 0.609"},
    )
    text = _text(_page(run))
    assert "No failures of any kind" not in text
    assert ("Every cell ended ok; what failed inside a cell (calls, answers) is in that cell's "
            "own report.") in text  # fmt: skip
