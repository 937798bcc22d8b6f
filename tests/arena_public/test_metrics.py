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


@pytest.mark.slow
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


@pytest.mark.slow
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


# --------------------------------------------------------------------------- style and length


def test_answered_battles_keep_battles_with_both_answers_and_their_counts():
    from evalbench.arena_public.metrics import answered_battles

    battles = pd.DataFrame({"model_a": ["x", "x", "y"], "model_b": ["y", "z", "x"],
                            "winner": ["a", "b", "tie"], "question_id": [1, 1, 2]})  # fmt: skip
    answers = pd.DataFrame({"model": ["x", "y", "x", "y", "z"], "question_id": [1, 1, 2, 2, 3],
                            "text": ["# T\n- a", "plain", "**b**", "- 1\n- 2", "z"]})  # fmt: skip
    styled = answered_battles(battles, answers)
    # battle 1 (x vs z on q1): z has no answer to q1; the others keep their index
    assert list(styled.index) == [0, 2]
    assert styled.loc[0, ["headers_a", "lists_a", "headers_b", "lists_b"]].tolist() == [1, 1, 0, 0]
    assert styled.loc[2, ["lists_a", "bold_b"]].tolist() == [2, 1]  # y's two items, x's bold


def test_alpaca_answers_once_each_and_conflicting_baselines_refused():
    from evalbench.arena_public.metrics import alpaca_answers
    from evalbench.ratings import ArenaError
    from evalbench.ratings_style import answer_style_counts, battles_with_style

    def annotations(model: str, baseline_text: str) -> pd.DataFrame:
        return pd.DataFrame({"instruction": ["q"], "generator_1": ["base"],
                             "output_1": [baseline_text], "generator_2": [model],
                             "output_2": [f"{model} says"], "preference": [1.5]})  # fmt: skip

    same = alpaca_answers({"m1": annotations("m1", "B"), "m2": annotations("m2", "B")})
    assert sorted(zip(same["model"], same["text"], strict=True)) == [("base", "B"), ("m1", "m1 says"),
                                                        ("m2", "m2 says")]  # fmt: skip
    differ = alpaca_answers({"m1": annotations("m1", "B"), "m2": annotations("m2", "B2")})
    battles = pd.DataFrame({"model_a": ["base"], "model_b": ["m1"], "winner": ["tie"],
                            "question_id": ["q"]})  # fmt: skip
    with pytest.raises(ArenaError, match="more than one answer for \\('base', 'q'\\)"):
        battles_with_style(battles, answer_style_counts(differ))


@pytest.mark.slow  # two GLMs with their cross-validation
def test_alpaca_length_controlled_table_beside_the_leaderboard():
    from evalbench.arena_public.metrics import alpaca_length_controlled

    rng = np.random.default_rng(0)
    base = ["x" * n for n in rng.integers(100, 900, 12)]

    def annotations(model: str, prefs: np.ndarray) -> pd.DataFrame:
        return pd.DataFrame({"instruction": [f"q{i}" for i in range(12)], "generator_1": "base",
                             "output_1": base, "generator_2": model, "preference": prefs,
                             "output_2": ["y" * n for n in rng.integers(100, 900, 12)]})  # fmt: skip

    frames = {"m1": annotations("m1", rng.uniform(1, 2, 12)),
              "m2": annotations("m2", np.r_[0.0, rng.uniform(1, 2, 11)]),  # 0: an old draw
              "base": annotations("base", np.full(12, 1.5))}  # fmt: skip
    board = pd.DataFrame({"length_controlled_winrate": [60.0, 40.0, 50.0]},
                         index=["m1", "m2", "base"])  # fmt: skip
    table = alpaca_length_controlled(frames, board, "base").set_index("model")
    # the baseline: 50 by construction, as the official function returns for it
    assert table.loc["base", ["win_rate", "lc_win_rate", "lc_standard_error"]].tolist() == [
        50.0, 50.0, 0.0]  # fmt: skip
    # m2's first preference 0 counts as 1.5: its win rate is the mean of (p − 1) over all 12
    m2 = np.r_[1.5, frames["m2"]["preference"][1:]] - 1
    assert table.loc["m2", "win_rate"] == pytest.approx(m2.mean() * 100)
    assert table.loc["m1", "lc_difference"] == pytest.approx(table.loc["m1", "lc_win_rate"] - 60)
    assert table.loc["m2", "leaderboard_lc_win_rate"] == 40.0 and table["n"].tolist() == [12] * 3
