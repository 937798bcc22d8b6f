"""The arena simulator: hidden quality, answers, and the truth it is checked against."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evalbench import arena
from evalbench.arena import sim
from evalbench.ratings import ArenaError


def sim_spec(name: str, **knobs: float):
    from evalbench.models import ModelSpec

    return ModelSpec(name=name, provider="sim", sim=knobs)


def test_hidden_quality_statistics_follow_the_knobs():
    from evalbench.judge import get_rubric

    rubric = get_rubric("fine_grained")
    spec = sim_spec("s", strength=0.7, noise=0.5)
    effect = {"accuracy": 1.2, "completeness": 0.8}
    draws = [
        sim.hidden_quality(spec, f"q{k}", seed=3, rubric=rubric, with_documents=True,
                             document_effect=effect)
        for k in range(4000)
    ]  # fmt: skip
    acc = np.array([d["accuracy"] for d in draws])
    clarity = np.array([d["clarity"] for d in draws])
    # q_d = strength + effect_d + noise·z: mean 0.7 + 1.2, sd 0.5; clarity has no effect
    assert acc.mean() == pytest.approx(0.7 + 1.2, abs=0.03) and acc.std() == pytest.approx(
        0.5, rel=0.05
    )
    assert clarity.mean() == pytest.approx(0.7, abs=0.03)
    again = sim.hidden_quality(spec, "q0", seed=3, rubric=rubric, with_documents=True,
                                 document_effect=effect)  # fmt: skip
    assert again == draws[0]  # a pure function of (seed, system, question)
    # expected overall quality: 0.7 + (0.5·1.2 + 0.3·0.8 + 0.2·0) / 1
    expected = 0.7 + 0.5 * 1.2 + 0.3 * 0.8
    assert sim.true_strength(
        spec, rubric=rubric, with_documents=True, document_effect=effect
    ) == pytest.approx(expected)
    overall = np.mean([sim.overall_quality(d, rubric) for d in draws])
    assert overall == pytest.approx(expected, abs=0.03)


def test_true_dimension_scores_map_log_odds_to_the_scale():
    from evalbench.judge import get_rubric

    rubric = get_rubric("fine_grained")
    scores = sim.true_dimension_scores(
        {"accuracy": 0.0, "completeness": math.log(3), "clarity": -50}, rubric
    )
    # 1 + 9·σ(q): σ(0) = 1/2, σ(ln 3) = 3/4, σ(-50) ≈ 0
    assert scores["accuracy"] == pytest.approx(1 + 9 / 2)
    assert scores["completeness"] == pytest.approx(1 + 9 * 3 / 4)
    assert scores["clarity"] == pytest.approx(1.0)


def test_sim_answer_length_follows_verbosity_and_documents_are_cited():
    from evalbench.models import ChatRequest, SimSpec

    prompt = arena.load_prompts("demo")[0]
    request = ChatRequest(messages=[])

    def sentences(verbosity: float, seed: int) -> int:
        reply = sim.sim_answer(
            request, SimSpec(verbosity=verbosity), np.random.default_rng(seed),
            prompt=prompt, with_documents=False,
        )  # fmt: skip
        return reply.text.count(".")  # the opening ends in ':', each filler sentence in '.'

    # n = round(verbosity·(2 + U{0,1,2})): mean (2 + 3 + 4) / 3 = 3 at verbosity 1, 6 at 2
    assert np.mean([sentences(1.0, s) for s in range(300)]) == pytest.approx(3, abs=0.15)
    assert np.mean([sentences(2.0, s) for s in range(300)]) == pytest.approx(6, abs=0.3)
    cited = sim.sim_answer(
        request, SimSpec(), np.random.default_rng(0), prompt=prompt, with_documents=True
    )
    assert cited.text.startswith("According to the reference documents:")
    assert "[1]" in cited.text or "[2]" in cited.text


def test_true_ratings_elo_scale_and_anchor():
    strengths = {"x": 1.0, "y": 0.0, "z": -1.0}
    mean_centred = sim.true_ratings(strengths)
    # σ(1) = 1 / (1 + 10^(-d/400))  =>  d = 400·1/ln(10) = 173.7
    assert mean_centred["x"] - mean_centred["y"] == pytest.approx(400 / math.log(10))
    assert mean_centred.mean() == pytest.approx(1000.0)
    anchored = sim.true_ratings(strengths, anchor="z", anchor_rating=900)
    assert anchored["z"] == 900 and anchored["x"] == pytest.approx(900 + 800 / math.log(10))
    with pytest.raises(ArenaError, match="anchor model 'w'"):
        sim.true_ratings(strengths, anchor="w")
