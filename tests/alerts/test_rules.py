"""Alert rules against a pinned or an unpinned baseline, on run folders written by hand:
a real drop fires, a reseeded same system and an unchanged rerun do not; cost, failed calls
and latency by hand."""

from __future__ import annotations

import pytest
from alerts.helpers import outcomes_from, seeded, write_run

from evalbench.alerts import AlertRule
from evalbench.alerts.rules import evaluate, read_numbers
from evalbench.history import pin_baseline
from evalbench.history.runs import check_baseline
from evalbench.settings import get_settings

DROP = AlertRule(metric="accuracy", drop_more_than=0.05)


@pytest.fixture
def outputs():
    path = get_settings().outputs_dir
    path.mkdir(parents=True, exist_ok=True)
    return path


def _check(rules, base, now):
    return evaluate(rules, read_numbers(base), read_numbers(now))


def test_a_real_drop_fires_overall_and_in_each_level(outputs):
    # 40 tasks (L1 = even, L2 = odd), all right in the baseline; 30 wrong now (t00..t29):
    # 30 discordant items, all one way: exact McNemar p = 2 * 0.5**30 = 1.86e-9 overall; L1
    # and L2 have 15 each: p = 2 * 0.5**15 = 6.10e-5. Holm over the 3 rows: x3, x2, x1.
    base = write_run(outputs, "base", {"a": outcomes_from([True] * 40)})
    now = write_run(outputs, "now", {"a": outcomes_from([False] * 30 + [True] * 10)},
                    started_at="2026-01-02T00:00:00+00:00")  # fmt: skip
    found = _check([DROP], base, now)
    assert found.problems == []
    rows = {f.slice: f for f in found.findings}
    assert set(rows) == {"overall", "level=L1", "level=L2"}
    overall = rows["overall"]
    assert (overall.baseline, overall.now, overall.n) == (1.0, 0.25, 40)
    assert overall.change == pytest.approx(-0.75)
    assert overall.p_holm == pytest.approx(3 * 2 * 0.5**30)
    assert rows["level=L1"].p_holm == pytest.approx(2 * 2 * 0.5**15)
    assert overall.low <= -0.75 <= overall.high < 0


def test_a_drop_that_is_small_or_not_real_does_not_fire(outputs):
    # 8 tasks, 3 now wrong: a drop of 0.375 > 0.05, but McNemar p = 2 * 0.5**3 = 0.25
    base = write_run(outputs, "base", {"a": outcomes_from([True] * 8)})
    now = write_run(outputs, "now", {"a": outcomes_from([False] * 3 + [True] * 5)})
    assert _check([DROP], base, now).findings == []
    # 400 tasks, 20 now wrong: p tiny, but the drop is 20/400 = 0.05, not more than 0.1
    base = write_run(outputs, "b2", {"a": outcomes_from([True] * 400)})
    now = write_run(outputs, "n2", {"a": outcomes_from([False] * 20 + [True] * 380)})
    assert _check([AlertRule(drop_more_than=0.1)], base, now).findings == []
    assert len(_check([AlertRule(drop_more_than=0.04)], base, now).findings) >= 1


@pytest.mark.slow
def test_a_reseeded_same_system_does_not_fire(outputs):
    # the same system (70% right) drawn afresh: only chance differs between the two runs
    base = write_run(outputs, "base", {"a": seeded(0.7, 200, seed=1)})
    for seed in range(2, 7):
        now = write_run(outputs, f"seed{seed}", {"a": seeded(0.7, 200, seed=seed)})
        assert _check([DROP], base, now).findings == [], seed


def test_an_unchanged_rerun_does_not_fire(outputs):
    same = seeded(0.6, 50, seed=3)
    base = write_run(outputs, "base", {"a": same, "b": same})
    now = write_run(outputs, "now", {"a": same, "b": same})
    found = _check([DROP, AlertRule(drop_more_than=0.0)], base, now)
    assert found.findings == [] and found.problems == []


def test_a_rule_for_a_metric_the_run_lacks_is_a_problem_not_silence(outputs):
    base = write_run(outputs, "base", {"a": outcomes_from([True] * 8)})
    found = _check([AlertRule(metric="acuracy", drop_more_than=0.05)], base, base)
    assert found.problems == [
        "acuracy drop_more_than 0.05: not checked: no metric 'acuracy' in watched/base "
        "(it has: accuracy)"
    ]


def test_systems_limits_a_rule_to_those_systems(outputs):
    right, wrong = outcomes_from([True] * 40), outcomes_from([False] * 40)
    base = write_run(outputs, "base", {"a": right, "b": right})
    now = write_run(outputs, "now", {"a": wrong, "b": wrong})
    found = _check([AlertRule(drop_more_than=0.05, systems=["b"])], base, now)
    assert {f.system for f in found.findings} == {"b"}


def test_cost_per_task_against_the_baseline(outputs):
    tasks = outcomes_from([True] * 10)
    base = write_run(outputs, "base", {"a": tasks, "b": tasks, "c": tasks},
                     usage={"a": {"calls": 10, "errors": 0, "cost_usd": 0.25},
                            "b": {"calls": 10, "errors": 0, "cost_usd": 0.25},
                            "c": {"calls": 10, "errors": 0, "cost_usd": 0.0}})  # fmt: skip
    now = write_run(outputs, "now", {"a": tasks, "b": tasks, "c": tasks},
                    usage={"a": {"calls": 10, "errors": 0, "cost_usd": 0.40},
                           "b": {"calls": 10, "errors": 0, "cost_usd": 0.30},
                           "c": {"calls": 10, "errors": 0, "cost_usd": 0.10}})  # fmt: skip
    found = _check([AlertRule(cost_usd_more_than=1.25)], base, now)
    # a: 0.040 / 0.025 per task = 1.6 > 1.25; b: 0.030 / 0.025 = 1.2 (not more)
    assert [(f.system, round(f.change, 6)) for f in found.findings] == [("a", 1.6)]
    assert found.findings[0].baseline == pytest.approx(0.025)
    assert found.notes == ["cost_usd_more_than 1.25: c: the baseline cost nothing "
                           "(unpriced or cached): no ratio"]  # fmt: skip


def test_share_of_failed_calls(outputs):
    tasks = outcomes_from([True] * 10)
    base = write_run(outputs, "base", {"a": tasks, "b": tasks})
    now = write_run(outputs, "now", {"a": tasks, "b": tasks},
                    usage={"a": {"calls": 100, "errors": 3, "cost_usd": 0.0},
                           "b": {"calls": 100, "errors": 2, "cost_usd": 0.0}})  # fmt: skip
    found = _check([AlertRule(error_rate_more_than=0.02)], base, now)
    # a: 3/100 = 0.03 > 0.02; b: 2/100 = 0.02 is not more than 0.02; baseline: 0/10
    assert [(f.system, f.now, f.baseline) for f in found.findings] == [("a", 0.03, 0.0)]


def test_latency_p95_against_the_baseline(outputs):
    tasks = outcomes_from([True] * 10)
    before = [0.1] * 19 + [0.2]  # numpy's p95 of 20 values: 0.1 + 0.05 * (0.2 - 0.1) = 0.105
    base = write_run(outputs, "base", {"a": tasks, "b": tasks},
                     latencies={"a": before, "b": before[:10]})  # fmt: skip
    now = write_run(outputs, "now", {"a": tasks, "b": tasks},
                    latencies={"a": [0.3] * 20, "b": [0.3] * 10})  # fmt: skip
    found = _check([AlertRule(latency_p95_more_than=1.5)], base, now)
    assert [f.system for f in found.findings] == ["a"]
    assert found.findings[0].baseline == pytest.approx(0.105)
    assert found.findings[0].change == pytest.approx(0.3 / 0.105)
    assert found.notes == ["latency_p95_more_than 1.5: b: fewer than 20 timed calls "
                           "(10 vs 10): not compared"]  # fmt: skip


# ------------------------------------------------------------------------------ baselines


def test_the_pinned_baseline_comes_first(outputs):
    first = write_run(outputs, "first", {"a": outcomes_from([True] * 4)})
    later = write_run(outputs, "later", {"a": outcomes_from([True] * 4)},
                      started_at="2026-01-02T00:00:00+00:00")  # fmt: skip
    pin_baseline(first, outputs)
    assert check_baseline(later) == (first, "pinned baseline")
    assert check_baseline(first) == (None, "this run is the study's pinned baseline")


def test_unpinned_the_previous_ok_run_of_the_same_configuration(outputs):
    tasks = {"a": outcomes_from([True] * 4)}

    def run(run_id, day, overrides=(), status="ok"):
        return write_run(outputs, run_id, tasks, overrides=overrides, status=status,
                         started_at=f"2026-01-0{day}T00:00:00+00:00")  # fmt: skip

    plain = run("plain", 1)
    run("other", 2, ["seed=2"])  # another configuration: never the baseline of a plain run
    run("failed", 3, status="failed")
    day4 = run("day4", 4, ["tag=2026-01-04"])  # watch's tag is not a change of setup
    day5 = run("day5", 5, ["tag=2026-01-05"])
    assert check_baseline(day4) == (plain, "previous ok run of this configuration")
    assert check_baseline(day5) == (day4, "previous ok run of this configuration")
    assert check_baseline(plain) == (
        None, "no earlier ok run of this configuration and no pinned baseline"
    )  # fmt: skip
