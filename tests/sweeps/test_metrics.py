"""The sweep's statistics by hand: Pareto fronts, Holm/BH over the family, seed spread and the
seeds needed, main effects and interactions, the best configuration against the others."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from evalbench.importers import RunOutcomes, outcome_frame
from evalbench.sweeps.metrics import (
    best_vs_others,
    config_frame,
    effects,
    interactions,
    separation,
)
from evalbench.sweeps.records import Cell
from evalbench.sweeps.scoring import adjust, not_separated, pareto_front


def test_pareto_front() -> None:
    # (quality, cost): the third is worse and dearer than both others; the first two each win
    # at something; a tie on both is on the front twice (neither beats the other)
    front = pareto_front([0.8, 0.7, 0.6, 0.7, 0.9], [2.0, 1.0, 3.0, 1.0, math.nan], True)
    assert front.tolist() == [True, True, False, True, False]
    # lower is better (an error): 0.1 at cost 5 and 0.3 at cost 1 are both on it; 0.4 at 2 not
    assert pareto_front([0.1, 0.3, 0.4], [5.0, 1.0, 2.0], False).tolist() == [True, True, False]


def test_holm_and_bh_span_every_test_of_the_sweep() -> None:
    tests = pd.DataFrame({"p": [0.01, 0.04, 0.03, math.nan]})
    out = adjust(tests)
    # m = 3 (NaN is no test). Holm: sorted 0.01, 0.03, 0.04 -> 3*0.01, max(.03, 2*.03), max(.06, .04)
    assert out["p_holm"].tolist()[:3] == pytest.approx([0.03, 0.06, 0.06])
    # BH: 3*0.04/3 = 0.04, min(3*0.03/2, .04) = 0.04, 3*0.01/1 = 0.03
    assert out["p_bh"].tolist()[:3] == pytest.approx([0.03, 0.04, 0.04])
    assert math.isnan(out["p_holm"].iloc[3]) and math.isnan(out["p_bh"].iloc[3])


def _cells(configs: int, seeds: int) -> list[Cell]:
    return [Cell(c * seeds + s, c, s, {"k": c}, (f"k={c}",), c == 0)
            for c in range(configs) for s in range(seeds)]  # fmt: skip


def _estimates(values: dict[int, list[float]], seeds: int) -> pd.DataFrame:
    """Cell estimates of config -> per-seed values, each with a ±0.1 interval."""
    rows = [{"cell": c * seeds + s, "system": "x", "metric": "accuracy", "higher_is_better": True,
             "n": 32, "estimate": v, "low": v - 0.1, "high": v + 0.1}
            for c, per_seed in values.items() for s, v in enumerate(per_seed)]  # fmt: skip
    return pd.DataFrame(rows)


def test_seed_spread_and_the_seeds_needed_to_separate_the_top_two() -> None:
    cells = _cells(2, 3)
    estimates = _estimates({0: [0.5, 0.7, 0.6], 1: [0.6, 0.7, 0.8]}, 3)
    usage = pd.DataFrame(columns=["cell", "system", "prompt_tokens", "completion_tokens",
                                  "cost_usd", "latency_s"])  # fmt: skip
    configs = config_frame(cells, estimates, usage, "accuracy")
    second, first = configs.iloc[0], configs.iloc[1]
    assert first["estimate"] == pytest.approx(0.7) and second["estimate"] == pytest.approx(0.6)
    assert first["seed_sd"] == pytest.approx(0.1)  # 0.6, 0.7, 0.8 around 0.7
    assert first["half_width"] == pytest.approx(0.1)
    found = separation(cells, estimates, configs, metric="accuracy", higher_is_better=True,
                       alpha=0.05, power=0.8)  # fmt: skip
    # per seed: 0.6-0.5, 0.7-0.7, 0.8-0.6 = 0.1, 0.0, 0.2: mean 0.1, SD 0.1; with
    # z = 1.95996 + 0.84162 = 2.80158: n = (2.80158 * 0.1 / 0.1)^2 = 7.85 -> 8 seeds
    assert found["first"]["config"] == 1 and found["second"]["config"] == 0
    assert found["difference"] == pytest.approx(0.1) and found["sd"] == pytest.approx(0.1)
    assert found["seeds"] == 8 and found["shared_seeds"] == 3


def test_main_effects_and_interactions_of_a_two_by_two() -> None:
    levels = pd.DataFrame({"system": "x", "estimate": [0.2, 0.4, 0.5, 0.9],
                           "a": ["a0", "a0", "a1", "a1"], "b": ["b0", "b1", "b0", "b1"]})  # fmt: skip
    main = effects(levels, ["a", "b"], seed=0, rounds=50, level=0.95).set_index(["factor", "value"])
    # grand mean 0.5; a0 = (0.2 + 0.4) / 2 = 0.3, a1 = 0.7; b0 = 0.35, b1 = 0.65
    assert main.loc[("a", "a0"), "mean"] == pytest.approx(0.3)
    assert main.loc[("a", "a1"), "effect"] == pytest.approx(0.2)
    assert main.loc[("b", "b0"), "effect"] == pytest.approx(-0.15)
    inter = interactions(levels, ["a", "b"]).set_index(["value_a", "value_b"])["residual"]
    # residual = mean_ab - mean_a - mean_b + grand: (a1, b1) 0.9 - 0.7 - 0.65 + 0.5 = 0.05; the
    # interaction contrast (0.9 - 0.5) - (0.4 - 0.2) = 0.2 is four times it
    assert inter[("a1", "b1")] == pytest.approx(0.05) and inter[("a0", "b1")] == pytest.approx(
        -0.05
    )
    additive = levels.assign(estimate=[0.2, 0.4, 0.6, 0.8])  # b adds 0.2 whatever a is
    assert interactions(additive, ["a", "b"])["residual"].abs().max() == pytest.approx(0.0)


def _run(cell: int, right: list[int], n: int = 10) -> RunOutcomes:
    rows = [{"item_id": f"t{i}", "system": "x", "metric": "accuracy", "kind": "binary",
             "higher_is_better": True, "value": float(i in right), "state": "ok"}
            for i in range(n)]  # fmt: skip
    return RunOutcomes(f"s/{cell}", "gaia", "evalbench", None, outcome_frame(rows), (),
                       frozenset(), {})  # fmt: skip


def test_the_best_against_the_others_pools_items_over_seeds() -> None:
    cells = _cells(3, 2)
    # config 1 is right on items 0-7 at both seeds; config 0 on 0-4; config 2 on 0-6 at seed 0
    # and 0-7 at seed 1
    runs = {0: _run(0, range(5)), 1: _run(1, range(5)), 2: _run(2, range(8)), 3: _run(3, range(8)),
            4: _run(4, range(7)), 5: _run(5, range(8))}  # fmt: skip
    configs = pd.DataFrame({"config": [0, 1, 2], "system": "x", "estimate": [0.5, 0.8, 0.75]})
    table = best_vs_others(cells, runs, configs, metric="accuracy", higher_is_better=True,
                           seed=0, rounds=200, level=0.95, alpha=0.05)  # fmt: skip
    by = table.set_index("config")
    assert set(table["best_config"]) == {1}
    # vs config 0: 20 pairs, 6 discordant (items 5-7 at each seed) all for the best: the change
    # is -6 / 20 = -0.3 and exact McNemar gives 2 * 0.5^6 = 0.03125
    assert by.loc[0, "n"] == 20 and by.loc[0, "difference"] == pytest.approx(-0.3)
    assert by.loc[0, "p"] == pytest.approx(2 * 0.5**6)
    # vs config 2: 1 discordant pair: p = 1; Holm over the 2: min(1, 2 * 0.03125) = 0.0625
    assert by.loc[2, "p"] == pytest.approx(1.0)
    assert by.loc[0, "p_holm"] == pytest.approx(0.0625)
    # at 0.05 after Holm neither difference is significant: both are "not separated"
    assert sorted(not_separated(table, 0.05)["config"]) == [0, 2]
