"""summary.html on run folders written by hand: the numbers by hand, the change and whether it
is real, cost per task, the top risks with an example, studies without per-item outcomes, a
compare study, escaping, and a run whose records cannot be read."""

from __future__ import annotations

import html
import json
import re

import pytest
from alerts.helpers import outcomes_from, write_run

from evalbench.history import pin_baseline
from evalbench.settings import get_settings
from evalbench.stats import wilson_interval
from evalbench.summary import summary_facts, write_summary


@pytest.fixture
def outputs():
    path = get_settings().outputs_dir
    path.mkdir(parents=True, exist_ok=True)
    return path


def _text(run_dir) -> str:
    page = (run_dir / "summary.html").read_text().split("<main>")[1]
    page = re.sub(r"</(?:li|p|h1|h2|div)>", " ", page)  # blocks apart, inline tags away
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", page)))


def test_tasks_an_agent_stopped_at_its_limit_are_not_called_wrong_answers(outputs):
    # Before: every task of an agent timed out (no answer at all) and the summary said "Wrong
    # answers: 2 of 2 answers — the system gave an answer, and it was wrong"
    now = write_run(outputs, "now", {"a": {"t1": ("timeout", 1), "t2": ("timeout", 1),
                                           "t3": (False, 1), "t4": (True, 1)}})  # fmt: skip
    risks = {r.title: r.detail for r in summary_facts(now).risks}
    assert risks["Tasks stopped at a limit"] == (
        "2 of 4 answers — the agent reached its time or step limit before it answered, so the "
        "task counts as not done (a: 2)"
    )
    assert risks["Wrong answers"].startswith("1 of 4 answers — the system gave an answer")


def test_headline_change_cost_and_risks_by_hand(outputs):
    # 40 tasks: the baseline gets all right; now 30 right, 8 wrong, 2 failed calls
    now_outcomes = outcomes_from([True] * 30 + [False] * 10)
    now_outcomes["t30"] = now_outcomes["t31"] = ("error", 1)
    base = write_run(outputs, "base", {"a": outcomes_from([True] * 40)})
    usage = {"a": {"calls": 40, "errors": 2, "cost_usd": 0.40}}
    now = write_run(outputs, "now", {"a": now_outcomes}, usage=usage,
                    started_at="2026-01-02T00:00:00+00:00")  # fmt: skip
    pin_baseline(base, outputs)
    facts = summary_facts(now)
    (head,) = facts.headlines
    expected = wilson_interval(30, 40, 0.95)  # the full report's interval for a share
    assert (head.estimate, head.low, head.high, head.n) == (0.75, expected.low, expected.high, 40)
    (change,) = facts.changes
    assert (change.before, change.after, change.real) == (1.0, 0.75, True)  # 10 discordant
    assert facts.costs == [("a", 0.01, 0.40)]  # $0.40 over 40 tasks
    assert [r.title for r in facts.risks] == [
        "a got worse since the baseline", "Wrong answers", "Calls that failed"
    ]  # fmt: skip
    assert facts.risks[1].detail.startswith("8 of 40 answers")
    assert facts.risks[2].example == "t30, level L1 (a): error: http_500: boom; expected “x”"
    written = write_summary(now)
    assert written.problem == ""
    text = _text(now)
    assert "a — accuracy: about 75%, likely between 60% and 86% (40 tasks)" in text
    assert f"{expected.low:.3f}" == "0.598" and f"{expected.high:.3f}" == "0.858"  # 60%, 86%
    assert "down 25 points (worse), from 100% to 75% on 40 tasks" in text
    assert "Real: a change this large is not chance." in text
    assert "a: $0.0100 per task, $0.40 in all" in text


def test_the_weakest_slice_is_over_measured_answers_only(outputs):
    """Before: failed calls counted as wrong answers in the weakest-level risk: with every
    call failed it read "Weakest on level L1: 0% right over all systems on 24 answers"; with
    one system failing, its failed calls were pooled in with the other's answers."""
    failing = {f"t{i}": ("error", 1 + i % 2) for i in range(8)}
    only_failed = write_run(outputs, "dead", {"f": failing})
    assert not any(r.title.startswith("Weakest") for r in summary_facts(only_failed).risks)
    # ok: level 1 right on 3 of 4, level 2 on 1 of 4; f failed everything
    ok = {f"t{i}": (i in (0, 2, 4, 1), 1 + i % 2) for i in range(8)}
    mixed = write_run(outputs, "mixed", {"f": failing, "ok": ok},
                      started_at="2026-01-02T00:00:00+00:00")  # fmt: skip
    (weakest,) = [r for r in summary_facts(mixed).risks if r.title.startswith("Weakest")]
    assert weakest.title == "Weakest on level L2"
    assert weakest.detail.startswith("25% right over all systems on 4 answers")  # ok's only


def test_a_change_that_could_be_chance_says_so(outputs):
    base = write_run(outputs, "base", {"a": outcomes_from([True] * 10)})
    now = write_run(outputs, "now", {"a": outcomes_from([False] + [True] * 9)})
    pin_baseline(base, outputs)
    write_summary(now)
    assert "Could be chance: two runs of an unchanged system can differ this much." in _text(now)


def test_names_and_texts_are_escaped(outputs):
    evil = "<img src=x onerror=alert(1)>"
    run = write_run(outputs, "evil", {evil: outcomes_from([True, False])})
    write_summary(run)
    page = (run / "summary.html").read_text()
    assert evil not in page and html.escape(evil) in page
    assert "<i>title</i>" not in page  # the title, escaped


def test_a_study_without_per_item_outcomes_shows_its_headlines_and_counts(outputs):
    run = outputs / "bc" / "r1"
    run.mkdir(parents=True)
    manifest = {
        "study": "bc", "kind": "browsecomp", "title": "BrowseComp", "status": "ok",
        "headlines": {"accuracy s (95% Wilson)": "36.1%", "regressions (Holm)": 0},
        "counts": {"questions": 289, "unscored": 14, "not_answered": 20, "errors": 0},
        "usage": [{"system": "s", "calls": 289, "errors": 0, "cost_usd": 2.89}],
        "params": {},
    }  # fmt: skip
    (run / "manifest.json").write_text(json.dumps(manifest))
    write_summary(run)
    text = _text(run)
    assert "accuracy s: 36.1%" in text and "regressions: 0" in text  # test names left out
    assert "Wilson" not in text and "Holm" not in text
    assert text.index("Not answered: 20") < text.index("Unscored: 14")  # most first
    assert "s: $0.0100 per task, $2.89 in all" in text  # per call without per-item outcomes


def test_a_compare_study_shows_its_overall_changes(outputs):
    run = outputs / "cmp" / "r1"
    (run / "records").mkdir(parents=True)
    row = {"baseline": "A", "candidate": "B", "system_a": "s", "system_b": "s",
           "metric": "accuracy", "kind": "binary", "higher_is_better": True, "slice": "all",
           "slice_value": "all", "n": 32, "mean_a": 0.25, "mean_b": 0.875, "difference": 0.625,
           "low": 0.47, "high": 0.78, "p": 1e-6, "p_holm": 4e-6}  # fmt: skip
    level = {**row, "slice": "level", "slice_value": "L1", "p_holm": 0.5}
    (run / "records" / "comparison.jsonl").write_text(json.dumps(row) + "\n" + json.dumps(level))
    manifest = {"study": "cmp", "kind": "compare", "title": "cmp", "status": "ok",
                "headlines": {"regressions (Holm)": 0}, "params": {}}  # fmt: skip
    (run / "manifest.json").write_text(json.dumps(manifest))
    write_summary(run)
    text = _text(run)
    assert "s — accuracy: up 62 points (better), from 25% to 88% on 32 tasks" in text
    assert "(the change is likely between +47 points and +78 points)" in text
    assert text.count("Real: a change this large is not chance.") == 1  # overall row only


def test_records_that_cannot_be_read_give_a_page_that_says_so(outputs):
    run = write_run(outputs, "broken", {"a": outcomes_from([True])})
    (run / "records" / "gaia.jsonl").write_text("{not json\n")
    written = write_summary(run)
    assert written.problem.startswith("summary.html: the run's records could not be summarized")
    assert "gaia.jsonl:1" in written.problem
    assert "Summary not available" in (run / "summary.html").read_text()


def test_numbers_in_words():
    from evalbench.summary.facts import number

    assert [number(0.65625, "binary"), number(1142.17, "rating"), number(4.066, "score"),
            number(0.434, "score"), number(float("nan"), "score")] == [
        "66%", "1142", "4.1", "0.43", "—"]  # fmt: skip
