"""Pairing by item id: items in one run only, unscored items and failed calls are counted."""

from __future__ import annotations

import pytest

from evalbench.history import compare_runs, pair_outcomes, system_pairs
from evalbench.importers import OutcomeError, read_outcomes

A = {"s": {"t1": True, "t2": True, "t3": False, "t4": "error", "t5": None, "t6": True}}
B = {"s": {"t2": False, "t3": True, "t4": True, "t5": True, "t6": "none", "t7": True, "t8": True}}


def test_items_in_one_run_and_unscored_items_are_counted_never_paired(gaia_run):
    a = read_outcomes(gaia_run("g", "a", A))
    b = read_outcomes(gaia_run("g", "b", B))
    made = pair_outcomes(a.outcomes, b.outcomes, "s", "s")
    # t1 only in A; t7, t8 only in B; t5 has no value in A (hidden truth): unscored;
    # paired: t2, t3, t4 (A's failed call counts wrong, as GAIA counts it), t6
    counts = made.counts.iloc[0]
    assert (counts.paired, counts.only_a, counts.only_b, counts.unscored) == (4, 1, 2, 1)
    assert sorted(made.paired["item_id"]) == ["t2", "t3", "t4", "t6"]
    row = made.paired.set_index("item_id").loc["t4"]
    assert (row.value_a, row.state_a, row.value_b) == (0.0, "error", 1.0)


def test_excluding_failed_calls_counts_them_apart(gaia_run):
    a = read_outcomes(gaia_run("g", "a", A))
    b = read_outcomes(gaia_run("g", "b", B))
    made = pair_outcomes(a.outcomes, b.outcomes, "s", "s", errors="exclude")
    assert made.counts.iloc[0].excluded_errors == 1 and made.counts.iloc[0].paired == 3
    assert "t4" not in set(made.paired["item_id"])


def test_the_comparison_table_counts_and_tests(gaia_run):
    a = read_outcomes(gaia_run("g", "a", A))
    b = read_outcomes(gaia_run("g", "b", B))
    found = compare_runs([a, b], rounds=100)
    overall = found.tests.iloc[0]
    # paired t2 (1→0), t3 (0→1), t4 (0→1), t6 (1→0): 2 discordant each way, McNemar p = 1
    assert (overall.n, overall.discordant_a, overall.discordant_b) == (4, 2, 2)
    assert overall.p == 1.0 and overall.difference == 0.0
    assert (overall.errors_a, overall.errors_b) == (1, 0)
    pairing = found.pairing.iloc[0]
    assert (pairing.only_a, pairing.only_b, pairing.unscored) == (1, 2, 1)


def test_system_pairs_same_names_named_pairs_and_single_systems(gaia_run):
    two = read_outcomes(gaia_run("g", "a", {"x": {"t1": True}, "y": {"t1": False}}))
    other = read_outcomes(gaia_run("g", "b", {"x": {"t1": True}, "z": {"t1": True}}))
    pairs, notes = system_pairs(two, other)
    assert pairs == [("x", "x")] and any("y is not in the other run" in n for n in notes)
    assert system_pairs(two, other, [("y", "z")])[0] == [("y", "z")]
    with pytest.raises(OutcomeError, match="no system 'nope'"):
        system_pairs(two, other, [("nope", "z")])
    lone_a = read_outcomes(gaia_run("g", "c", {"old": {"t1": True}}))
    lone_b = read_outcomes(gaia_run("g", "d", {"new": {"t1": True}}))
    assert system_pairs(lone_a, lone_b)[0] == [("old", "new")]


def test_runs_of_different_benchmarks_do_not_pair(gaia_run, outputs):
    gaia = read_outcomes(gaia_run("g", "a", A))
    other = read_outcomes(gaia_run("g", "b", B))
    other = other._replace(benchmark="bfcl", label="bfcl_demo/x")
    with pytest.raises(OutcomeError, match="items pair only within one benchmark"):
        compare_runs([gaia, other])
    with pytest.raises(OutcomeError, match="do not pair"):
        compare_runs([gaia, gaia._replace(pairable=False)])


def test_the_printed_table_says_which_items_were_left_out(gaia_run, capsys):
    # Before: A had 3 items, B 1: the table showed n=1 and "mean A 1.000" (A's one paired
    # item) with no word of the 2 items only in A; the gate (--no-report) said nothing either
    from evalbench.cli import main

    base = gaia_run("g", "a", {"s": {"t1": True, "t2": False, "t3": None}})
    cand = gaia_run("g", "b", {"s": {"t1": True, "t4": True}})
    assert main(["compare", str(base), str(cand), "--no-report"]) == 0
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("note:")]
    assert (
        "note: g/b vs g/a, s accuracy: 1 paired item; left out: 2 only in A, 1 only in B" in notes
    )
