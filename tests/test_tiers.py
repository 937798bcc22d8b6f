"""Tiers: nested, stratified, seeded subsamples, and the half-width they promise."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from evalbench import tiers
from evalbench.tiers import apply_tier, expected_half_width, fraction_for, subsample

# 3 levels of 50, 30 and 20 items
ITEMS = [(level, f"{level}-{i}") for level, n in ((1, 50), (2, 30), (3, 20)) for i in range(n)]


def _sample(fraction, seed=0):
    return subsample(ITEMS, item_id=lambda it: it[1], stratum=lambda it: it[0],
                     fraction=fraction, seed=seed)  # fmt: skip


def test_each_stratum_keeps_its_share_rounded_up():
    quick = _sample(0.1)
    per_level = {lvl: sum(1 for it in quick if it[0] == lvl) for lvl in (1, 2, 3)}
    assert per_level == {1: 5, 2: 3, 3: 2}  # ceil(0.1 × 50, 30, 20)
    standard = _sample(0.3)
    assert len(standard) == 15 + 9 + 6


def test_tiers_are_nested_and_keep_the_original_order():
    quick, standard, full = _sample(0.1), _sample(0.3), _sample(1.0)
    assert set(quick) <= set(standard) <= set(full) == set(ITEMS)
    assert quick == [it for it in ITEMS if it in set(quick)]


def test_the_sample_depends_on_sample_seed_only():
    assert _sample(0.1) == _sample(0.1)
    assert _sample(0.1, seed=1) != _sample(0.1)


def test_fraction_for_tiers_and_sizes():
    assert fraction_for("quick") == 0.1 and fraction_for("full") == 1.0
    assert fraction_for(sample=25, total=100) == 0.25
    assert fraction_for(sample=500, total=100) == 1.0


def test_apply_tier_reads_the_params():
    params = SimpleNamespace(tier="full", sample=None, sample_seed=0)
    assert apply_tier(ITEMS, params, item_id=lambda it: it[1], stratum=lambda it: it[0]) == ITEMS
    params = SimpleNamespace(tier="quick", sample=None, sample_seed=0)
    assert len(apply_tier(ITEMS, params, item_id=lambda it: it[1], stratum=lambda it: it[0])) == 10


def test_expected_half_width_arithmetic():
    # 1.959964 × sqrt(0.25 / 100) = 0.0979982
    assert expected_half_width(100) == pytest.approx(1.959964 * 0.05, abs=1e-6)
    assert expected_half_width(400, p=0.9) == pytest.approx(
        1.959964 * math.sqrt(0.09 / 400), abs=1e-6
    )
    assert math.isnan(expected_half_width(0))


def test_a_bad_fraction_is_refused():
    with pytest.raises(ValueError, match=r"fraction must be in \(0, 1\]"):
        _sample(0)


def test_reports_name_the_subset_one_way():
    assert tiers.subset_label("quick", None) == "tier quick"
    assert tiers.subset_label("full", 40) == "sample of about 40"  # strata round their share up


def test_size_sentence_states_n_label_and_half_width_by_hand():
    from types import SimpleNamespace

    p = SimpleNamespace(tier="quick", sample=None, confidence_level=0.95)
    # z = 1.959964, sqrt(0.25 / 100) = 0.05 -> ±9.8%
    assert tiers.size_sentence(100, "prompts", p, quantity="a win rate", caveat=", one battle") == (
        "100 prompts (tier quick). At this size a win rate near 50% is known to about ±9.8% "
        "(95%, normal approximation, one battle)."
    )
    p90 = SimpleNamespace(tier="full", sample=40, confidence_level=0.9)
    # z = 1.644854, sqrt(0.25 / 40) = 0.0790569 -> ±13.0%
    assert tiers.size_sentence(40, "slots", p90, detail="; by topic") == (
        "40 slots (sample of about 40; by topic). At this size a share near 50% is known to "
        "about ±13.0% (90%, normal approximation)."
    )
