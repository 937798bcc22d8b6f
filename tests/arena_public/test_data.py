"""Readers of published battles (evalbench.published) and the study's public datasets."""

from __future__ import annotations

import pandas as pd
import pytest

from evalbench import arena_public, ratings
from evalbench.arena_public.data import public_license
from evalbench.published import alpaca_eval, arena_hard
from evalbench.published.alpaca_eval import ALPACA_MODELS
from evalbench.ratings import ArenaError


def judgments(**columns: list) -> pd.DataFrame:
    base = {"question_id": ["q1", "q2"], "model_a": ["X", "X"], "model_b": ["Y", "Y"]}
    return pd.DataFrame({**base, **columns})


def test_pairwise_each_order_is_a_battle_strong_weighs_more():
    j = judgments(
        verdict_ab=["a", "b"], verdict_ba=["a", "tie"], strength_ab=["strong", None],
        strength_ba=["weak", "strong"],
    )  # fmt: skip
    b = arena_hard.battles_from_pairwise(j, strong_weight=3)
    assert b["winner"].tolist() == ["a", "a", "b", "tie"]
    assert b["weight"].tolist() == [3.0, 1.0, 1.0, 1.0]  # a strong tie is just a tie
    assert b["position"].tolist() == ["ab", "ba", "ab", "ba"]


def test_pairwise_combined_inconsistent_orders_tie():
    j = judgments(verdict_ab=["a", "a"], verdict_ba=["b", "tie"])
    b = arena_hard.battles_from_pairwise(j, combine=True)
    # q1: +1 - 1 = 0 -> tie (position-inconsistent); q2: +1 + 0 > 0 -> a
    assert b["winner"].tolist() == ["tie", "a"]
    assert b["weight"].tolist() == [1.0, 1.0]


def test_pairwise_unscored_raises_or_is_counted():
    j = judgments(verdict_ab=["a", None], verdict_ba=["b", "a"])
    with pytest.raises(ArenaError, match=r"row 1 .*unscored"):
        arena_hard.battles_from_pairwise(j)
    b = arena_hard.battles_from_pairwise(j, unscored="drop")
    assert len(b) == 3 and b.attrs["unscored"] == 1
    with pytest.raises(ArenaError, match="verdict_ab not in"):
        arena_hard.battles_from_pairwise(judgments(verdict_ab=["A>B", "a"], verdict_ba=["a", "a"]))


def test_arena_hard_games_swap_positions():
    rows = pd.DataFrame(
        {
            "question_id": ["q1", "q2", "q3"],
            "model": ["m", "m", "m"],
            "games": [
                [{"score": "A>>B"}, {"score": "A>B"}],  # baseline strongly; then m (shown as A)
                [{"score": "B>A"}, {"score": "A=B"}],  # m (shown as B); then a tie
                [{"score": None}, {"score": "B>>A"}],  # unscored; baseline strongly (as B)
            ],
        }
    )
    b = arena_hard.battles_from_arena_hard(rows, baseline="base", unscored="drop")
    assert b.attrs["unscored"] == 1
    assert (b["model_a"] == "base").all() and (b["model_b"] == "m").all()
    assert b["winner"].tolist() == ["a", "b", "b", "tie", "a"]
    assert b["weight"].tolist() == [3.0, 1.0, 1.0, 1.0, 3.0]
    repeated = arena_hard.battles_from_arena_hard(
        rows, baseline="base", repeat_strong=True, unscored="drop"
    )
    assert repeated["winner"].tolist() == ["a"] * 3 + ["b", "b", "tie"] + ["a"] * 3
    bad = rows.assign(games=[[{"score": "A>>>B"}, {"score": "A>B"}]] * 3)
    with pytest.raises(ArenaError, match="row 0: game 1 score 'A>>>B'"):
        arena_hard.battles_from_arena_hard(bad, baseline="base")


def test_fastchat_winner_labels():
    rec = pd.DataFrame(
        {
            "model_a": ["x", "x", "x", "x"],
            "model_b": ["y", "y", "y", "y"],
            "winner": ["model_a", "model_b", "tie", "tie (bothbad)"],
        }
    )
    assert arena_hard.battles_from_fastchat(rec)["winner"].tolist() == ["a", "b", "tie", "tie"]
    with pytest.raises(ArenaError, match="row 2: unknown winner 'draw'"):
        arena_hard.battles_from_fastchat(rec.assign(winner=["model_a", "tie", "draw", "tie"]))


def test_alpaca_eval_win_rate_by_hand():
    result = alpaca_eval.alpaca_eval_win_rate([1.0, 2.0, 1.5, 1.25, 0.0, float("nan")])
    # 0 is an old draw (1.5); NaN dropped: p - 1 = 0, 1, .5, .25, .5
    assert result.win_rate == pytest.approx((0 + 1 + 0.5 + 0.25 + 0.5) / 5 * 100)
    assert (result.n_wins, result.n_wins_base, result.n_draws, result.n_total) == (1, 2, 2, 5)
    # discrete: 1.25 -> 1 (a loss); draws stay half
    assert result.discrete_win_rate == pytest.approx((0 + 1 + 0.5 + 0 + 0.5) / 5 * 100)


@pytest.mark.slow
@pytest.mark.parametrize("model", ALPACA_MODELS)
def test_alpaca_eval_win_rate_equals_leaderboard_exactly(alpaca_leaderboard, model):
    annotations = alpaca_eval.load_alpaca_eval_annotations(model)
    assert set(annotations["generator_1"]) == {"gpt4_1106_preview"}
    result = alpaca_eval.alpaca_eval_win_rate(annotations["preference"])
    official = alpaca_leaderboard.loc[model]
    # bit-for-bit: same parser (pandas' default JSON float parsing) and the same mean
    assert result.win_rate == official["win_rate"]
    assert result.standard_error == official["standard_error"]
    assert result.discrete_win_rate == pytest.approx(official["discrete_win_rate"], abs=1e-9)
    counts = (result.n_wins, result.n_wins_base, result.n_draws, result.n_total)
    assert counts == tuple(official[["n_wins", "n_wins_base", "n_draws", "n_total"]])


@pytest.mark.parametrize("model", ["alpaca-7b", "FuseChat-Gemma-2-9B-Instruct"])
def test_alpaca_soft_battles_give_the_leaderboard_win_rate(alpaca_leaderboard, model):
    b = alpaca_eval.battles_from_alpaca_eval(alpaca_eval.load_alpaca_eval_annotations(model))
    table = ratings.win_rate_vs(b, "gpt4_1106_preview").set_index("model")
    expected = alpaca_leaderboard.loc[model, "win_rate"] / 100
    assert table.loc[model, "win_rate"] == pytest.approx(expected, rel=1e-12)


def test_public_battles_and_license(mirror):
    assert len(arena_public.public_battles("prd_human")) == 7040
    assert public_license("prd_human") == "MIT"
    assert "model outputs: provider terms" in public_license("arena_hard_pr44")
    with pytest.raises(ArenaError, match="unknown dataset 'alpaca_eval'"):
        arena_public.public_battles("alpaca_eval")


def test_prd_publishes_the_answers_of_five_of_its_nine_models(mirror):
    from evalbench.arena_public.data import public_answers
    from evalbench.published.prd import load_prd_lengths, prd_answer_models

    assert prd_answer_models() == ["bard", "claude", "gpt35", "gpt4", "vicuna-13b"]
    answers = public_answers("prd_human")
    assert answers is not None and answers.groupby("model").size().tolist() == [80] * 5
    assert sorted(answers["question_id"].unique()) == list(range(1, 81))
    voted = set(arena_public.public_battles("prd_human")[["model_a", "model_b"]].stack())
    assert voted - set(answers["model"]) == {"guanaco-7b", "guanaco-13b", "guanaco-33b",
                                             "guanaco-65b"}  # fmt: skip
    lengths = load_prd_lengths(["gpt4"])  # the lengths the judge study reads, from the answers
    assert (
        lengths["chars"].tolist()
        == answers.loc[answers["model"] == "gpt4", "text"].str.len().tolist()
    )


def test_public_answers_none_where_unpublished_and_unknown_named():
    from evalbench.arena_public.data import PUBLIC_DATASETS, public_answers

    assert public_answers("arena_hard_pr44") is None
    assert PUBLIC_DATASETS["arena_hard_pr44"].answers.startswith("No style control")
    with pytest.raises(ArenaError, match="unknown dataset 'lmsys'"):
        public_answers("lmsys")


def test_a_prd_answer_without_text_is_refused(tmp_path, monkeypatch):
    from evalbench.published import prd

    bad = tmp_path / "answers.jsonl"
    bad.write_text('{"question_id": 1, "text": "ok"}\n{"question_id": 2, "text": null}\n')
    monkeypatch.setattr(prd.sources, "fetch", lambda name, progress=False: bad)
    with pytest.raises(ValueError, match="answer 2: need an int question_id and a string text"):
        prd.load_prd_answers(["gpt4"])
