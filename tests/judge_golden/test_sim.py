"""evalbench.judge_golden.sim: the simulated judges' expected statistics, by hand and by Monte Carlo."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from evalbench import judge as J
from evalbench import judge_golden as G
from evalbench.judge_golden import scoring as S
from evalbench.judge_golden import sim as GS
from evalbench.models import ModelSpec, SimSpec


def test_sim_expectations_by_hand_without_noise() -> None:
    rubric = J.get_rubric("fine_grained")
    golden = pd.DataFrame(
        {"answer": ["x" * 10] * 3, "human_accuracy": [5.0, 9.0, 10.0]}
    )  # equal lengths: the length term is 0
    spec = ModelSpec(name="s", sim=SimSpec(noise=0.0, leniency=2.0))
    got = GS.sim_expectations(golden, rubric, spec, dimension="accuracy", tolerance=1, typical=10)
    # scores 7, 10 (11 clipped), 10 -> differences 2, 1, 0
    assert got["within_k"] == pytest.approx(2 / 3)
    assert got["bias"] == pytest.approx((2 + 1 + 0) / 3)
    assert got["retest_exact"] == pytest.approx(1.0)  # no noise: a rerun repeats itself
    assert math.isnan(
        GS.sim_expectations(golden, rubric, spec, dimension="weighted", tolerance=1, typical=10)[
            "within_k"
        ]
    )


def test_sim_expectations_match_monte_carlo() -> None:
    rubric = J.get_rubric("fine_grained")
    golden = G.load_golden("demo").head(20)
    typical = S.typical_length(golden)
    spec = ModelSpec(name="s", sim=SimSpec(noise=1.2, leniency=0.4, length_bias=0.5))
    expected = GS.sim_expectations(
        golden, rubric, spec, dimension="clarity", tolerance=1, typical=typical
    )
    rng = np.random.default_rng(7)
    hits, diffs, same = [], [], []
    for _ in range(150):
        for row in golden.itertuples():
            truth = {d: getattr(row, f"human_{d}") for d in ("accuracy", "completeness", "clarity")}
            kwargs = {
                "noise": 1.2,
                "leniency": 0.4,
                "length_bias": 0.5,
                "answer_length": len(row.answer),
                "reference_length": typical,
            }
            one = J.sim_rubric_scores(rubric, truth, rng=rng, **kwargs)["clarity"]
            two = J.sim_rubric_scores(rubric, truth, rng=rng, **kwargs)["clarity"]
            hits.append(abs(one - truth["clarity"]) <= 1)
            diffs.append(one - truth["clarity"])
            same.append(one == two)
    n = len(hits)  # 3000 draws: each mean is within 4 standard errors of its expectation
    assert np.mean(hits) == pytest.approx(expected["within_k"], abs=4 * math.sqrt(0.25 / n))
    assert np.mean(same) == pytest.approx(expected["retest_exact"], abs=4 * math.sqrt(0.25 / n))
    assert np.mean(diffs) == pytest.approx(expected["bias"], abs=4 * np.std(diffs) / math.sqrt(n))


def test_expected_pair_consistency_by_hand() -> None:
    task = J.PairTask("p", "q", "x", "aaaa", "y", "bbbb", quality_x=1.0, quality_y=1.0)
    fair = ModelSpec(name="s", sim=SimSpec(noise=0.0))
    # equal quality, equal length, no bias: Δ = 0 <= tie margin 0.5 -> a tie in both orders
    assert GS.expected_pair_consistency([task], fair) == pytest.approx(1.0)
    biased = ModelSpec(name="s", sim=SimSpec(noise=0.0, position_bias=1.0))
    # Δ = +1 for whichever answer is shown first -> A wins both orders -> inconsistent
    assert GS.expected_pair_consistency([task], biased) == pytest.approx(0.0)
    noisy = ModelSpec(name="s", sim=SimSpec(noise=1.0))
    p_a, p_tie, p_b = J.sim_pairwise_probabilities(1.0, 1.0)
    assert GS.expected_pair_consistency([task], noisy) == pytest.approx(
        p_a * p_b + p_b * p_a + p_tie**2
    )


def test_with_expectations_only_for_simulated_judges() -> None:
    rubric = J.get_rubric("fine_grained")
    golden = pd.DataFrame({"answer": ["x" * 10] * 2, "human_accuracy": [5.0, 9.0]})
    agreement = pd.DataFrame({"judge": ["sim", "real"], "dimension": ["accuracy", "accuracy"]})
    judges = [
        ModelSpec(name="sim", sim=SimSpec(noise=0.0, leniency=1.0)),
        ModelSpec(name="real", provider="openai", model="m"),
    ]
    got = GS.with_expectations(agreement, golden, rubric, judges, tolerance=1, typical=10)
    # sim: scores 6 and 10 against 5 and 9 -> both within 1, bias +1
    assert got["expected_within_k"].tolist()[0] == pytest.approx(1.0)
    assert got["expected_bias"].tolist()[0] == pytest.approx(1.0)
    assert math.isnan(got["expected_within_k"].iloc[1]) and math.isnan(got["expected_bias"].iloc[1])
