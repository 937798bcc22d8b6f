"""The retry loop's statistics recover the simulation's true per-round gains.

The loop is drawn directly (:func:`evalbench.retry_loop.sim.simulate_loop`: the study's own
stop rule and the simulated judge's score model, no calls) 60 times with seeds 0..59, 30
items, 3 rounds, both arms, no threshold (every item every round, so the mean judged gain of
round r is the mean true gain: the judge's leniency cancels in a difference and rounding
with noise 1 adds nothing measurable). Each repeat gives 9 intervals at 95%: the gain of
rounds 1-3 in each arm (:func:`~evalbench.retry_loop.metrics.round_gains`) and the
suggestion's own effect in each round (:func:`~evalbench.retry_loop.metrics.suggestion_effect`).

Exact binomial argument: if each interval holds its truth with probability p >= 0.93 (95%
nominal; percentile bootstraps of a mean of 30 run a little short), the 540 intervals hold
theirs at least 486 times (90%) except with probability P(Bin(540, 0.93) < 486) ~ 0.003 were
they independent (intervals of one repeat share items; the count's spread stays of that
order), and each of the 9 quantities is covered in at least 48 of 60 repeats (80%) except
with probability 9 · P(Bin(60, 0.93) < 48) ~ 0.008. A biased statistic fails: the same
intervals against truths shifted by 0.6 points (about 3 standard errors) cover under half.
Runs in about 2 s (60 loops and their bootstraps): the least that makes the argument hold.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from evalbench.judge import get_rubric
from evalbench.models import SimSpec
from evalbench.retry_loop import metrics as M
from evalbench.retry_loop.records import RetrySimulation
from evalbench.retry_loop.sim import simulate_loop

SIM = RetrySimulation(start=4.5, spread=1.0, gains=[1.0, 0.5, 0.0],
                      control_gains=[0.3, 0.0, 0.0], gain_noise=0.5)  # fmt: skip
JUDGE = SimSpec(noise=1.0, leniency=0.3)
REPEATS, ITEMS, ROUNDS, BOOT = 60, 30, 3, 400
TRUTH = np.r_[SIM.gains, SIM.control_gains, np.subtract(SIM.gains, SIM.control_gains)]


def _intervals(seed: int) -> np.ndarray:
    """9 × (low, high): suggestion gains, control gains, the suggestion's round effects."""
    rng = np.random.default_rng(seed)
    rounds = simulate_loop(SIM, get_rubric("fine_grained"), JUDGE, n_items=ITEMS, rounds=ROUNDS,
                           threshold=None, arms=["suggestion", "control"], rng=rng)  # fmt: skip
    paths = {arm: M.score_paths(rounds, arm, ROUNDS) for arm in ("suggestion", "control")}
    parts = [
        M.round_gains(paths[arm], arm=arm, rng=rng, rounds=BOOT, level=0.95)[["gain_low", "gain_high"]]
        for arm in ("suggestion", "control")
    ]  # fmt: skip
    effect = M.suggestion_effect(paths["suggestion"], paths["control"], rng=rng, rounds=BOOT,
                                 level=0.95)  # fmt: skip
    parts.append(effect[["round_effect_low", "round_effect_high"]])
    return np.vstack([p.to_numpy() for p in parts])


@pytest.fixture(scope="module")
def intervals() -> np.ndarray:
    return np.stack([_intervals(seed) for seed in range(REPEATS)])  # repeats × 9 × 2


def _covered(intervals: np.ndarray, truth: np.ndarray) -> np.ndarray:
    return (intervals[..., 0] <= truth) & (truth <= intervals[..., 1])


def test_the_binomial_argument_by_hand() -> None:
    assert stats.binom.cdf(486 - 1, 540, 0.93) < 0.005
    assert 9 * stats.binom.cdf(48 - 1, 60, 0.93) < 0.01


@pytest.mark.slow
def test_intervals_hold_the_true_per_round_gains(intervals: np.ndarray) -> None:
    covered = _covered(intervals, TRUTH)
    assert covered.mean() >= 0.90, covered.mean(axis=0)
    assert (covered.mean(axis=0) >= 0.80).all(), covered.mean(axis=0)


@pytest.mark.slow
def test_a_biased_statistic_would_fail(intervals: np.ndarray) -> None:
    assert _covered(intervals, TRUTH + 0.6).mean() < 0.5
