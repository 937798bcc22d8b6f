"""evalbench.judge.sim: the simulated judges against their generative model."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from evalbench import judge as J


def test_sim_rubric_is_deterministic_per_seed() -> None:
    def draw(seed: int) -> list[str]:
        rng = np.random.default_rng(seed)
        return [
            J.sim_rubric_output("fine_grained", 6, rng=rng, malformed_rate=0.3) for _ in range(20)
        ]

    assert draw(1) == draw(1)
    assert draw(1) != draw(2)


def test_sim_rubric_valid_text_parses_to_the_simulated_scores() -> None:
    kwargs = {"noise": 1.0, "leniency": 0.5}
    scores = J.sim_rubric_scores("hle", 50, rng=np.random.default_rng(3), **kwargs)
    text = J.sim_rubric_output("hle", 50, rng=np.random.default_rng(3), **kwargs)
    result = J.parse_rubric_output("hle", text)
    assert result.status == "scored" and result.scores == scores
    assert result.extras["overall"] == float(np.rint(J.weighted_score(J.get_rubric("hle"), scores)))
    assert result.extras["confidence"] == (0 + 100) / 2


@pytest.mark.slow
def test_sim_rubric_mean_is_near_true_plus_leniency() -> None:
    rng = np.random.default_rng(7)
    n, noise, leniency, truth = 3000, 1.5, 1.0, {"accuracy": 5, "completeness": 4, "clarity": 6}
    results = [
        J.parse_rubric_output(
            "fine_grained",
            J.sim_rubric_output("fine_grained", truth, rng=rng, noise=noise, leniency=leniency),
        )
        for _ in range(n)
    ]
    assert {r.status for r in results} == {"scored"}
    # rounding adds at most a uniform(-0.5, 0.5) error: variance noise² + 1/12
    tolerance = 4 * math.sqrt(noise**2 + 1 / 12) / math.sqrt(n)
    for dim, true in truth.items():
        mean = np.mean([r.scores[dim] for r in results])
        assert mean == pytest.approx(true + leniency, abs=tolerance), dim


def test_sim_rubric_length_bias_shifts_by_log_ratio() -> None:
    rng = np.random.default_rng(11)
    n, noise = 2000, 1.0
    scores = [
        J.sim_rubric_scores(
            "aime_quality",
            3,
            rng=rng,
            noise=noise,
            length_bias=0.5,
            answer_length=math.e * 300,
            reference_length=300,
        )["clarity"]
        for _ in range(n)
    ]
    tolerance = 4 * math.sqrt(noise**2 + 1 / 12) / math.sqrt(n)
    assert np.mean(scores) == pytest.approx(3 + 0.5 * math.log(math.e), abs=tolerance)  # 3.5


@pytest.mark.slow
def test_sim_rubric_malformed_rate() -> None:
    rng = np.random.default_rng(5)
    n, rate = 4000, 0.2
    texts = [J.sim_rubric_output("fine_grained", 6, rng=rng, malformed_rate=rate) for _ in range(n)]
    results = [J.parse_rubric_output("fine_grained", t) for t in texts]
    counts = Counter(r.unscored_kind for r in results if r.status == "unscored")
    unscored = sum(counts.values())
    assert unscored / n == pytest.approx(rate, abs=4 * math.sqrt(rate * (1 - rate) / n))
    assert set(counts) == {"no_score", "missing_dimension", "out_of_range", "not_finite"}
    assert any('"accuracy": 11' in t for t in texts)


def test_sim_rubric_argument_errors() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="true_scores keys"):
        J.sim_rubric_output("fine_grained", {"accuracy": 5}, rng=rng)
    with pytest.raises(ValueError, match="malformed_rate must be in"):
        J.sim_rubric_output("fine_grained", 5, rng=rng, malformed_rate=1.5)
    with pytest.raises(ValueError, match="answer_length must be a finite number > 0"):
        J.sim_rubric_output("fine_grained", 5, rng=rng, answer_length=0)


def test_sim_pairwise_probabilities_by_hand() -> None:
    def sigmoid(x: float) -> float:
        return 1 / (1 + math.exp(-x))

    # Δ = 0.5 - 0 + position 0.3 + length 0.2 (A is longer) = 1.0; t = 0.5
    p_a, p_tie, p_b = J.sim_pairwise_probabilities(
        0.5, 0.0, noise=1.0, position_bias=0.3, length_bias=0.2, len_a=200, len_b=100
    )
    assert p_a == pytest.approx(sigmoid(1.0 - 0.5))
    assert p_b == pytest.approx(sigmoid(-1.0 - 0.5))
    assert p_tie == pytest.approx(1 - sigmoid(0.5) - sigmoid(-1.5))
    # plain Bradley–Terry at noise 1, no tie band, no biases
    assert J.sim_pairwise_probabilities(1.0, 0.0, tie_margin=0)[0] == pytest.approx(sigmoid(1.0))
    assert J.sim_pairwise_probabilities(1.0, 0.0, noise=0) == (1.0, 0.0, 0.0)


def test_sim_pairwise_frequencies_match_probabilities() -> None:
    rng = np.random.default_rng(13)
    n = 4000
    kwargs = {"noise": 1.0, "position_bias": 0.3, "length_bias": 0.2, "len_a": 200, "len_b": 100}
    verdicts = [
        J.parse_pairwise_output(J.sim_pairwise_output(0.5, 0.0, rng=rng, **kwargs))
        for _ in range(n)
    ]
    counts = Counter(v.winner for v in verdicts)
    expected = J.sim_pairwise_probabilities(0.5, 0.0, **kwargs)
    for label, p in zip(("A", "tie", "B"), expected, strict=True):
        assert counts[label] / n == pytest.approx(p, abs=4 * math.sqrt(p * (1 - p) / n)), label


def test_sim_pairwise_arena_style_strength_and_determinism() -> None:
    def draw(seed: int) -> list[str]:
        rng = np.random.default_rng(seed)
        return [
            J.sim_pairwise_output(3.0, 0.0, rng=rng, noise=0.5, style="arena_hard")
            for _ in range(200)
        ]

    assert draw(4) == draw(4)
    labels = Counter(J.parse_pairwise_output(t).label for t in draw(4))
    # d = 3 + 0.5·logistic: strong (d > 2) with P = σ((3 - 2)/0.5) = σ(2) ≈ 0.88
    assert set(labels) <= {"A>>B", "A>B", "A=B", "B>A", "B>>A"}
    assert labels["A>>B"] / 200 == pytest.approx(1 / (1 + math.exp(-2)), abs=0.1)


def test_sim_pairwise_malformed_rate_and_position_only_bias() -> None:
    rng = np.random.default_rng(17)
    n, rate = 4000, 0.15
    verdicts = [
        J.parse_pairwise_output(
            J.sim_pairwise_output(0.0, 0.0, rng=rng, position_bias=1.0, malformed_rate=rate)
        )
        for _ in range(n)
    ]
    unscored = sum(v.status == "unscored" for v in verdicts)
    assert unscored / n == pytest.approx(rate, abs=4 * math.sqrt(rate * (1 - rate) / n))
    scored = [v for v in verdicts if v.status == "scored"]
    p_a = 1 / (1 + math.exp(-(1.0 - 0.5)))  # equal quality: A wins only through position
    share_a = sum(v.winner == "A" for v in scored) / len(scored)
    assert share_a == pytest.approx(p_a, abs=4 * math.sqrt(p_a * (1 - p_a) / len(scored)))


def test_sim_rubric_score_matrix_equals_one_call_per_row() -> None:
    # the vectorised draw is the sequential one: row i is the i-th call's scores, same rng
    truths, rubric = np.array([5.3, 9.8, 1.2, 6.0]), J.get_rubric("fine_grained")
    matrix = J.sim_rubric_score_matrix(
        rubric, truths, rng=np.random.default_rng(4), noise=1.3, leniency=0.4
    )
    rng = np.random.default_rng(4)
    calls = [J.sim_rubric_scores(rubric, t, rng=rng, noise=1.3, leniency=0.4) for t in truths]
    assert matrix.tolist() == [[c[d.name] for d in rubric.dimensions] for c in calls]
    assert matrix.shape == (4, 3) and matrix.min() >= 1 and matrix.max() <= 10
