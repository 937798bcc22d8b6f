"""AlpacaEval 2 lengths, P(prefer longer), star ratings and the study's table."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from evalbench import arena_public, ratings
from evalbench.arena_public.metrics import alpaca_eval_length_bias, star_bootstrap
from evalbench.published import alpaca_eval
from evalbench.published.alpaca_eval import ALPACA_MODELS


@pytest.mark.parametrize("model", ALPACA_MODELS)
def test_alpaca_lengths_and_prefer_longer(alpaca_leaderboard, model):
    annotations = alpaca_eval.load_alpaca_eval_annotations(model)
    model_len = alpaca_eval.answer_lengths(alpaca_eval.load_alpaca_eval_outputs(model))
    base_len = alpaca_eval.answer_lengths(alpaca_eval.load_alpaca_eval_outputs("gpt4_1106_preview"))
    # the outputs files hold the very answers that were judged
    judged = model_len.reindex(annotations["instruction"]).to_numpy()
    np.testing.assert_array_equal(judged, annotations["output_2"].str.len())
    bias = alpaca_eval_length_bias(annotations, model_len, base_len)
    # the leaderboard's avg_length is the mean character length, truncated
    assert int(bias.avg_length) == alpaca_leaderboard.loc[model, "avg_length"]
    if model == "gpt4_1106_preview":  # the baseline against itself: equal lengths everywhere
        assert bias.n_compared == 0 and math.isnan(bias.prefer_longer)
    else:
        assert bias.n_compared > 700 and 0.0 <= bias.prefer_longer <= 1.0


def test_alpaca_length_bias_counts_only_items_it_averages():
    annotations = pd.DataFrame(
        {"instruction": ["q1", "q2", "q3"], "preference": [1.9, np.nan, 1.2]}
    )
    model = pd.Series({"q1": 30, "q2": 30, "q3": 5})  # output 2 (the model's)
    base = pd.Series({"q1": 10, "q2": 10, "q3": 5})  # q3: equal lengths
    bias = alpaca_eval_length_bias(annotations, model, base)
    # q2's preference is missing: only q1 counts (output 2 longer, share 1.9 - 1)
    assert bias.n_compared == 1 and bias.prefer_longer == pytest.approx(1.9 - 1)


def test_star_bootstrap_closed_form_equals_bt_on_soft_battles():
    prefs = [2.0, 1.5, 1.75, 1.0, 0.0]  # 0 is an old draw (1.5)
    boot = star_bootstrap({"m": prefs}, "base", rng=np.random.default_rng(0), rounds=300)
    w = (1 + 0.5 + 0.75 + 0 + 0.5) / 5
    expected = 1000 + 400 * math.log10(w / (1 - w))
    assert boot.models == ["base", "m"]
    assert boot.ratings.tolist() == pytest.approx([1000.0, expected])
    annotations = pd.DataFrame(
        {
            "generator_1": "base",
            "generator_2": "m",
            "preference": prefs,
            "instruction": list("abcde"),
        }
    )
    soft = alpaca_eval.battles_from_alpaca_eval(annotations)
    assert ratings.fit_bt(soft, anchor="base")["m"] == pytest.approx(expected, abs=1e-6)
    assert boot.n_battles.tolist() == [5, 5]
    assert (boot.replicates[:, 0] == 1000.0).all()
    # a resample of only the 2.0 item (w = 1) has no finite rating: a NaN row
    assert np.isnan(boot.replicates).any(axis=1).sum() == pytest.approx(300 * 0.2**5, abs=3)


def test_alpaca_eval_study_matches_the_leaderboard(alpaca_leaderboard):
    study = arena_public.alpaca_eval_study(ALPACA_MODELS, rng=np.random.default_rng(0), rounds=200)
    table = study.table.set_index("model")
    assert (table["difference"] == 0).all()  # bit-for-bit equal win rates
    official = alpaca_leaderboard.loc[list(ALPACA_MODELS), "win_rate"]
    assert table["leaderboard_win_rate"].tolist() == official.tolist()
    assert (table["avg_length"].astype(int) == table["leaderboard_avg_length"]).all()
    others = table.drop(index="gpt4_1106_preview")
    assert ((others["prefer_longer_low"] <= others["prefer_longer"])
            & (others["prefer_longer"] <= others["prefer_longer_high"])).all()  # fmt: skip
    # star ratings: 1000 + 400·log10(w / (1 - w)) with w the leaderboard win rate
    ratings = pd.Series(study.boot.ratings, index=study.boot.models)
    w = alpaca_leaderboard.loc["alpaca-7b", "win_rate"] / 100
    assert ratings["alpaca-7b"] == pytest.approx(1000 + 400 * math.log10(w / (1 - w)))
    assert ratings["gpt4_1106_preview"] == 1000.0
    assert set(study.battles["model_b"]) == set(ALPACA_MODELS) - {"gpt4_1106_preview"}
