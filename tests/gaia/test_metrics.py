"""GAIA metrics: accuracy by level with Wilson intervals, drops with a replayed bootstrap,
pass@k, the paired comparison and usage, each checked by hand."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from gaia.cases import SPEC, pred, records, wilson_by_hand

from evalbench import gaia
from evalbench.gaia import metrics

# ----------------------------------------------------------------------------- metrics


def test_level_accuracy_with_wilson_intervals_by_hand():
    recs = records(SPEC)
    recs.loc[recs.task_id == "L2-4", ["no_answer"]] = True
    recs.loc[recs.task_id == "L3-3", ["error"]] = "timeout"
    table = gaia.level_accuracy(recs).set_index("level")
    assert table.loc["all", "n"] == 14 and table.loc["all", "correct"] == 4 + 2 + 1
    assert table.loc["all", "accuracy"] == pytest.approx(7 / 14)
    assert table.loc["L1", "accuracy"] == pytest.approx(4 / 5)
    assert (table.loc["L1", "ci_low"], table.loc["L1", "ci_high"]) == pytest.approx(
        wilson_by_hand(4, 5)
    )
    assert (table.loc["L3", "ci_low"], table.loc["L3", "ci_high"]) == pytest.approx(
        wilson_by_hand(1, 4)
    )
    assert table.loc["L2", "no_answer_rate"] == pytest.approx(1 / 5)
    assert table.loc["all", "no_answer_rate"] == pytest.approx(1 / 14)
    assert table.loc["L3", "errors"] == 1 and table.loc["L3", "error_rate"] == pytest.approx(1 / 4)


def test_level_accuracy_uses_first_attempts():
    first = records({"A": {1: [True, False]}})
    second = first.assign(attempt=1, correct=[False, True])
    table = gaia.level_accuracy(pd.concat([second, first])).set_index("level")
    assert table.loc["L1", "accuracy"] == pytest.approx(1 / 2)  # attempt 0: True, False


def test_drop_rates_by_hand_and_bootstrap_replayed():
    recs = records(SPEC)
    table = metrics.drop_rates(recs, rng=np.random.default_rng(3), rounds=200)
    l12, l23 = table.iloc[0], table.iloc[1]
    assert l12.transition == "L1→L2" and l23.transition == "L2→L3"
    assert l12.relative_drop == pytest.approx(1 - 0.4 / 0.8)  # = 0.5
    assert l12.absolute_drop == pytest.approx(0.8 - 0.4)
    assert l23.relative_drop == pytest.approx(1 - 0.25 / 0.4)  # = 0.375
    assert l23.absolute_drop == pytest.approx(0.4 - 0.25)
    # Replay the bootstrap: items resampled within each level, levels drawn in order 1, 2, 3.
    rng = np.random.default_rng(3)
    acc = {}
    for level, marks in SPEC["A"].items():
        values = np.array(marks, dtype=float)
        acc[level] = values[rng.integers(0, values.size, size=(200, values.size))].mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(acc[1] > 0, 1 - acc[2] / acc[1], np.nan)
    low, high = np.quantile(rel[np.isfinite(rel)], [0.025, 0.975])
    assert (l12.relative_low, l12.relative_high) == pytest.approx((low, high))
    low, high = np.quantile(acc[2] - acc[3], [0.025, 0.975])
    assert (l23.absolute_low, l23.absolute_high) == pytest.approx((low, high))


def test_drop_rate_is_nan_when_the_easier_level_is_all_wrong():
    recs = records({"A": {1: [False, False], 2: [True], 3: [False]}})
    assert math.isnan(metrics.drop_rates(recs, rng=np.random.default_rng(0)).iloc[0].relative_drop)
    assert metrics.relative_drop(0.8, 0.4) == pytest.approx(0.5)


def test_pass_at_k_estimate_matches_the_formula():
    for n, c, k in [(5, 2, 2), (10, 3, 1), (10, 3, 5), (4, 0, 2), (3, 3, 3), (6, 5, 2)]:
        expected = 1 - math.comb(n - c, k) / math.comb(n, k)
        assert metrics.pass_at_k_estimate(n, c, k) == pytest.approx(expected)
    assert metrics.pass_at_k_estimate(5, 2, 2) == pytest.approx(1 - 3 / 10)
    with pytest.raises(ValueError, match="1 <= k <= n"):
        metrics.pass_at_k_estimate(2, 1, 3)


def test_pass_at_k_table_averages_items():
    # item L1-0: 3 attempts, 1 correct; item L1-1: 3 attempts, 0 correct.
    attempts = [
        records({"A": {1: [ok0, ok1]}}).assign(attempt=a)
        for a, (ok0, ok1) in enumerate([(True, False), (False, False), (False, False)])
    ]
    table = metrics.pass_at_k(pd.concat(attempts), ks=(1, 2)).set_index(["level", "k"])
    # pass@1 = mean(1/3, 0); pass@2 = mean(1 - C(2,2)/C(3,2), 0) = mean(2/3, 0)
    assert table.loc[("L1", 1), "pass_at_k"] == pytest.approx((1 / 3 + 0) / 2)
    assert table.loc[("L1", 2), "pass_at_k"] == pytest.approx((1 - 1 / 3 + 0) / 2)
    with pytest.raises(gaia.GaiaDataError, match="fewer than k=4"):
        metrics.pass_at_k(pd.concat(attempts), ks=(4,))


def test_compare_systems_on_a_hand_table():
    # 10 items: both right 4, only A 3, only B 1, both wrong 2.
    a = [True] * 4 + [True] * 3 + [False] * 1 + [False] * 2
    b = [True] * 4 + [False] * 3 + [True] * 1 + [False] * 2
    recs = records({"A": {1: a}, "B": {1: b}})
    result = metrics.compare_systems(recs, "A", "B", rng=np.random.default_rng(0), rounds=300)
    assert (result.n, result.only_a, result.only_b) == (10, 3, 1)
    assert result.accuracy_a - result.accuracy_b == pytest.approx((7 - 5) / 10)
    # exact McNemar: 2 * P[Binom(4, 1/2) <= 1] = 2 * (1 + 4) / 16
    assert result.mcnemar_p == pytest.approx(2 * (1 + 4) / 16)
    assert result.difference.low <= 0.2 <= result.difference.high
    with pytest.raises(gaia.GaiaDataError, match="item sets differ: 1 only in 'A'"):
        metrics.compare_systems(recs.iloc[:-1], "A", "B", rng=np.random.default_rng(0))
    with pytest.raises(gaia.GaiaDataError, match="no records for system 'C'"):
        metrics.compare_systems(recs, "A", "C", rng=np.random.default_rng(0))


def test_usage_by_level_and_summary():
    recs = records(SPEC)
    recs["steps"] = [2, 4, 6, 8, 10] + [1] * 5 + [None, 3, 3, 3]
    recs["cost_usd"] = 0.5
    summary = metrics.summarize(recs, rng=np.random.default_rng(0), rounds=50)
    usage = summary.usage.set_index("level")
    assert usage.loc["L1", "steps_mean"] == pytest.approx((2 + 4 + 6 + 8 + 10) / 5)
    assert usage.loc["L3", "steps_mean"] == pytest.approx((3 + 3 + 3) / 3)  # None not counted
    assert usage.loc["all", "cost_usd_total"] == pytest.approx(14 * 0.5)
    assert summary.pass_at_k is None  # a single attempt per item
    assert list(summary.accuracy["level"]) == ["all", "L1", "L2", "L3"]
    assert len(summary.drops) == 2


def test_demo_end_to_end_perfect_and_empty_systems():
    items = gaia.load("demo")
    preds = [pred("oracle", it.task_id, f"Done.\nFINAL ANSWER: {it.final_answer}") for it in items]
    preds += [pred("mute", it.task_id, "I am not sure.") for it in items]
    recs = gaia.score(items, preds)
    acc = gaia.level_accuracy(recs).set_index(["system", "level"])
    assert acc.loc[("oracle", "all"), "accuracy"] == 1.0
    assert acc.loc[("mute", "all"), "accuracy"] == 0.0
    assert acc.loc[("mute", "all"), "no_answer_rate"] == 1.0


# ----------------------------------------------------------------------------- items without an error


def test_accuracy_over_items_without_an_error_leaves_failed_calls_out():
    recs = records(SPEC)
    recs.loc[recs.task_id == "L3-3", ["error"]] = "timeout"  # a wrong item whose call failed
    table = gaia.level_accuracy(recs).set_index("level")
    # L3: 1 correct of 4 items; 3 without an error -> 1/3. All: 7 of 14; 13 without an error -> 7/13.
    assert table.loc["L3", "no_error"] == 4 - 1
    assert table.loc["L3", "accuracy_no_error"] == pytest.approx(1 / 3)
    assert table.loc["all", "accuracy_no_error"] == pytest.approx(7 / 13)
    # no failed call: both accuracies agree
    assert table.loc["L1", "accuracy_no_error"] == table.loc["L1", "accuracy"] == 4 / 5


def test_accuracy_over_items_without_an_error_is_nan_when_every_call_failed():
    recs = records({"A": {1: [False, False]}}, error="http_401")
    row = gaia.level_accuracy(recs).set_index("level").loc["L1"]
    assert (row["no_error"], row["accuracy"]) == (0, 0.0)
    assert math.isnan(row["accuracy_no_error"])


def test_scorer_comparison_official_lenient_and_no_error():
    # 4 items: official T F F F; lenient T T F F; the call of the last item failed.
    recs = records({"A": {1: [True, False, False, False]}})
    recs["correct_lenient"] = [True, True, False, False]
    recs.loc[3, "error"] = "timeout"
    row = metrics.scorer_comparison(recs).iloc[0]
    assert (row["n"], row["no_error"]) == (4, 3)
    assert row["official"] == pytest.approx(1 / 4) and row["lenient"] == pytest.approx(2 / 4)
    assert row["official_no_error"] == pytest.approx(1 / 3)
    assert row["lenient_no_error"] == pytest.approx(2 / 3)
    assert gaia.metrics.lenient_only(recs) == 1  # item 2: official wrong, lenient right
    assert metrics.scorer_comparison(records(SPEC)) is None  # no lenient column


def test_degenerate_drops_are_the_rows_with_a_level_at_zero():
    recs = records({"A": {1: [True], 2: [True, False], 3: [False, False]}})
    drops = metrics.drop_rates(recs, rng=np.random.default_rng(0), rounds=20)
    stuck = gaia.metrics.degenerate_drops(drops)
    assert list(stuck["transition"]) == ["L2→L3"]  # acc(L3) = 0
    assert stuck.iloc[0]["relative_high"] == stuck.iloc[0]["relative_low"] == 1.0


def test_failure_sample_draws_wrong_first_attempts_with_the_seed():
    recs = records(SPEC, extracted_answer=None)
    recs.loc[recs.task_id == "L1-4", "extracted_answer"] = "7"
    sample = metrics.failure_sample(recs, 3, seed=5)
    assert len(sample) == 3 and not sample["correct"].any()
    assert sample.equals(metrics.failure_sample(recs, 3, seed=5))  # the seed fixes the draw
    every = metrics.failure_sample(recs, 50, seed=0)  # 1 + 3 + 3 wrong items, all of them
    assert len(every) == 7
    shown = dict(zip(every["task_id"], every["extracted_answer"], strict=True))
    assert shown["L1-4"] == "7" and shown["L2-4"] == "(no answer extracted)"


def test_items_per_level_and_pass_at_k_wide():
    items = gaia.load("demo")
    table = metrics.items_per_level(items)
    assert table.to_dict("records") == [
        {"level": "L1", "items": 12},
        {"level": "L2", "items": 12},
        {"level": "L3", "items": 8},
    ]
    attempts = [records({"A": {1: [ok]}}).assign(attempt=a) for a, ok in enumerate([True, False])]
    wide = metrics.pass_at_k_wide(metrics.pass_at_k(pd.concat(attempts), ks=(1, 2)))
    # one item, 2 attempts, 1 correct: pass@1 = 1/2, pass@2 = 1 - C(1,2)/C(2,2) = 1
    assert list(wide.columns) == [
        "system", "level", "n_items", "identical_attempts", "pass@1", "pass@2"
    ]  # fmt: skip
    assert wide.iloc[0][["pass@1", "pass@2"]].tolist() == [0.5, 1.0]


def test_pass_at_k_counts_the_items_whose_attempts_were_identical():
    # L1-0: "4", "4", "4" (temperature 0: identical); L1-1: "4", "5", "4"; L1-2: "4", a
    # failed call, "4" (no repeat: a failed call is no try) -> 1 of the 3 items identical
    answers = [["4", "4", "4"], ["4", "5", "4"], ["4", None, "4"]]
    attempts = [
        records({"A": {1: [False, False, False]}}).assign(
            attempt=a, model_answer=[answers[i][a] for i in range(3)]
        )
        for a in range(3)
    ]
    table = metrics.pass_at_k(pd.concat(attempts), ks=(1, 3)).set_index(["level", "k"])
    assert table.loc[("L1", 3), "identical_attempts"] == 1
    assert table.loc[("L2", 3), "identical_attempts"] == 0  # no L2 item
    rows = metrics.measured_systems(pd.concat(attempts))
    assert (rows[0].identical, rows[0].repeated) == (1, 2)


def test_usage_by_level_averages_numbers_only():
    # `state` is passed through to the records with the usage columns, but it is text: a
    # state_mean column was all dashes in the report
    recs = records({"A": {1: [True, False]}}, state="answered", prompt_tokens=[100.0, 300.0])
    usage = metrics.usage_by_level(recs).set_index("level")
    assert not [c for c in usage.columns if c.startswith("state")]
    assert usage.loc["L1", "prompt_tokens_mean"] == (100 + 300) / 2
    assert usage.loc["L1", "prompt_tokens_total"] == 100 + 300
