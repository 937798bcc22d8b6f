"""The fast paths of the Bradley–Terry code give exactly the plain computations' numbers:
the battle checks on integer codes, the integer-key grouping, the bootstrap's draws in
threads beside the refits (bit for bit equal to a sequential loop), and the Poisson-split
multinomial draws (their distribution against the exact multinomial's)."""

from __future__ import annotations

import itertools
import math
import threading

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evalbench import ratings
from evalbench.ratings_fast import (
    group_cells,
    multinomial_rounds,
    parse_battles,
    ratio_gradient,
    resampled,
    stream_generators,
)


def _battles(n: int, models: int, seed: int, weights: bool = False) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, models, n)
    b = (a + rng.integers(1, models, n)) % models
    frame = pd.DataFrame({"model_a": [f"m{i}" for i in a], "model_b": [f"m{i}" for i in b],
                          "winner": rng.choice(["a", "b", "tie"], n, p=[0.45, 0.45, 0.1])})  # fmt: skip
    return frame.assign(weight=rng.choice([0.5, 1.0, 3.0], n)) if weights else frame


@pytest.mark.parametrize("weights", [False, True])
def test_grouping_equals_a_pandas_groupby(weights):
    b = _battles(5000, 12, 1, weights)
    codes, uniques, winner, weight = parse_battles(b, ratings.WINNERS)
    n = len(b)
    i, j = np.minimum(codes[:n], codes[n:]), np.maximum(codes[:n], codes[n:])
    kind = np.where(winner == 2, 2, np.where((winner == 0) == (codes[:n] == i), 0, 1))
    got = group_cells(len(uniques), i, j, kind, weight)
    frame = pd.DataFrame({"i": i, "j": j, "kind": kind, "w": weight})
    want = frame.groupby(["i", "j", "kind", "w"], sort=True).size().reset_index(name="n")
    for column, values in zip(("i", "j", "kind", "w", "n"), got, strict=True):
        assert np.array_equal(want[column].to_numpy(), values), column


def test_many_models_group_by_sorting_with_the_same_result():
    b = _battles(300, 3000, 2)  # 3000² · 3 cells would be a mostly empty table
    assert len(ratings.pair_counts(b).models) > 200
    cells = ratings._cells(b, "half", None)
    assert cells.n.sum() == 300 and (np.diff(cells.i * 10**6 + cells.j) >= 0).all()


@pytest.mark.parametrize(
    "change",
    [{"winner": "x"}, {"model_a": ""}, {"model_a": None}, {"weight": -1.0},
     {"weight": float("nan")}, {"model_b": "m_same"}],
)  # fmt: skip
def test_a_bad_row_falls_back_to_the_full_check_and_its_message(change):
    b = _battles(50, 4, 3).assign(weight=1.0)
    if change.get("model_b") == "m_same":
        b.loc[7, "model_b"] = b.loc[7, "model_a"]
    else:
        ((column, value),) = change.items()
        b[column] = b[column].astype(object)
        b.loc[7, column] = value
    assert parse_battles(b, ratings.WINNERS) is None
    with pytest.raises(ratings.ArenaError, match="row 7"):
        ratings.fit_bt(b)


@pytest.mark.parametrize("streams", [1, 2, 3])
def test_the_threaded_bootstrap_equals_a_sequential_loop(streams, monkeypatch):
    monkeypatch.setattr("evalbench.ratings_fast._STREAMS", streams)
    b = _battles(20000, 15, 4)
    boot = ratings.bootstrap_bt(b, rng=np.random.default_rng(9), rounds=250, prior=0.5)
    cells = ratings._cells(b, "half", None)
    point = ratings._point_fit(cells, 0.5)
    gens = stream_generators(np.random.default_rng(9), streams)
    chunk = max(1, min(ratings._CHUNK, ratings._CHUNK_CELLS // len(cells.models) ** 2))
    reps = [
        ratings._bootstrap_chunk(
            cells,
            point,
            multinomial_rounds(cells.n, min(chunk, 250 - s), gens[k % streams]),
            0.5,
        )
        for k, s in enumerate(range(0, 250, chunk))
    ]
    theta = np.concatenate([point.theta[None, :], *reps])
    elo = ratings._to_elo(theta, cells.models, None, 1000.0, 1000.0, 10.0, 400.0)
    assert np.array_equal(boot.replicates, elo[1:], equal_nan=True)  # bit for bit


def test_the_streams_are_seeded_from_the_callers_generator_only():
    a = [g.random() for g in stream_generators(np.random.default_rng(5), 2)]
    b = [g.random() for g in stream_generators(np.random.default_rng(5), 2)]
    c = [g.random() for g in stream_generators(np.random.default_rng(6), 2)]
    assert a == b and a != c and a[0] != a[1]
    rng = np.random.default_rng(5)
    assert stream_generators(rng, 1) == [rng]
    with pytest.raises(ValueError, match="streams must be >= 1"):
        stream_generators(rng, 0)


@pytest.mark.parametrize("counts", [[5, 0, 7, 1], [1], [0, 3], [250_000, 1, 0, 749_999]])
def test_poisson_split_draws_sum_to_n_and_keep_empty_cells_empty(counts):
    draws = multinomial_rounds(np.array(counts), 400, np.random.default_rng(0))
    assert draws.shape == (400, len(counts)) and draws.dtype == np.int64
    assert (draws.sum(axis=1) == sum(counts)).all() and (draws >= 0).all()
    assert (draws[:, np.array(counts) == 0] == 0).all()


def _chi2_pvalue(draws: np.ndarray, n: int, p: np.ndarray) -> float:
    """Goodness of fit of draws of 3 cells to Multinomial(n, p), over every outcome."""
    outcomes = [
        (a, b, n - a - b) for a, b in itertools.product(range(n + 1), repeat=2) if a + b <= n
    ]
    pmf = np.array([math.factorial(n) / math.prod(math.factorial(x) for x in o)
                    * math.prod(q**x for q, x in zip(p, o, strict=True)) for o in outcomes])  # fmt: skip
    index = {o: k for k, o in enumerate(outcomes)}
    seen = np.bincount([index[tuple(row)] for row in draws.tolist()], minlength=len(outcomes))
    expected = pmf * len(draws)
    keep = expected >= 5  # pool the rare outcomes into one cell
    observed = np.append(seen[keep], seen[~keep].sum())
    expected = np.append(expected[keep], expected[~keep].sum())
    return float(stats.chisquare(observed, expected, ddof=0).pvalue)


@pytest.mark.slow
@pytest.mark.parametrize("margin", [0.5, 1.0, 3.0, 100.0])
def test_poisson_split_draws_are_exactly_multinomial(margin):
    # n = 12 in cells 5:4:3: margin 0.5 and 1 redraw many rows (Poisson total over n) and
    # top up the rest; 3 draws mostly by Poisson; 100 (t = 0) every battle one by one
    counts, n = np.array([5, 4, 3]), 12
    draws = multinomial_rounds(counts, 60_000, np.random.default_rng(11), margin=margin)
    assert _chi2_pvalue(draws, n, counts / n) > 1e-3
    # the same check has the power to see a small error in the cell probabilities
    biased = np.random.default_rng(11).multinomial(n, [0.43, 0.33, 0.24], size=60_000)
    assert _chi2_pvalue(biased, n, counts / n) < 1e-6


def test_poisson_split_moments_match_the_multinomial_on_many_cells():
    counts = np.random.default_rng(3).integers(0, 60, 300)
    n = int(counts.sum())
    draws = multinomial_rounds(counts, 4000, np.random.default_rng(4))
    p = counts / n
    z_mean = (draws.mean(axis=0) - n * p)[p > 0] / np.sqrt(n * p * (1 - p) / 4000)[p > 0]
    assert np.abs(z_mean).max() < 5
    var_ratio = draws.var(axis=0)[p > 0] / (n * p * (1 - p))[p > 0]
    assert 0.9 < var_ratio.mean() < 1.1  # a Poisson without the total fixed: 1/(1 - p)
    cov = np.cov(draws[:, :2].T)[0, 1]  # Multinomial: -n p0 p1 (independent cells: 0)
    assert abs(cov - (-n * p[0] * p[1])) < 5 * math.sqrt(n * p[0] * n * p[1] / 4000) + 1


def test_a_failing_draw_is_raised_and_a_failing_consumer_stops_the_thread():
    class Broken:
        def __getattr__(self, name):
            raise RuntimeError("generator broke")

    with pytest.raises(RuntimeError, match="generator broke"):
        list(resampled(np.array([5, 5]), [10, 10], Broken(), streams=1))  # type: ignore[arg-type]
    before = threading.active_count()
    chunks = resampled(np.array([5, 5]), [1] * 50, np.random.default_rng(0))
    next(chunks)
    chunks.close()  # the consumer stops early (as when a refit raises)
    assert threading.active_count() == before


def test_the_refits_ratio_gradient_equals_the_logistic_one():
    rng = np.random.default_rng(8)
    wins = rng.poisson(20, size=(6, 9, 9)).astype(float) * (1 - np.eye(9))
    total = wins + wins.transpose(0, 2, 1)
    theta = rng.normal(0, 2, size=(6, 9))
    want = ratings._gradient(wins, total, theta)[0]
    got = ratio_gradient(wins.sum(axis=2), total, theta)
    assert np.allclose(got, want, rtol=1e-12, atol=1e-9)
    # ratings 2,000 log-odds apart underflow: NaN (handed to full Newton), never a number
    theta[0, 0] = 2000.0
    got = ratio_gradient(wins.sum(axis=2), total, theta)
    assert not np.isfinite(got[0]).all() and np.allclose(got[1:], want[1:], atol=1e-9)
