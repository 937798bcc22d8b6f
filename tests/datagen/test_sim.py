"""The simulated generator and reviewer (evalbench.datagen.sim)."""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from datagen.cases import (
    REF_ROW,
    made_up_reference,
)

from evalbench.datagen import (
    data,
    duplicates,
    scoring,
    sim,
)


def test_sim_output_is_deterministic_for_a_seed() -> None:
    def run(seed: int) -> list[sim.SimGeneration]:
        rng = np.random.default_rng(seed)
        return [
            sim.sim_generation_output(REF_ROW, t, rng=rng, malformed_rate=0.2, copy_rate=0.1)
            for t in scoring.assign_topics(50, np.random.default_rng(seed))
        ]

    first, again = run(3), run(3)
    assert [g[:4] for g in first] == [g[:4] for g in again]  # text, kind, detail, answer
    np.testing.assert_array_equal([g.true_quality for g in first], [g.true_quality for g in again])
    assert [g.text for g in first] != [g.text for g in run(4)]


@pytest.mark.slow
def test_sim_validity_rates_answers_and_hidden_quality() -> None:
    n, malformed, copies = 1400, 0.2, 0.1
    rng = np.random.default_rng(11)
    out = [
        sim.sim_generation_output(
            REF_ROW,
            scoring.TOPICS[i % 7],
            rng=rng,
            quality=3.5,
            malformed_rate=malformed,
            copy_rate=copies,
        )
        for i in range(n)
    ]
    parsed = [scoring.parse_generated(g.text, id=f"g{i}") for i, g in enumerate(out)]
    kinds = Counter(g.kind for g in out)
    sd = math.sqrt(malformed * (1 - malformed) / n)  # binomial standard error of the share
    assert abs(kinds["malformed"] / n - malformed) < 4 * sd
    assert abs(kinds["copy"] / n - copies) < 4 * math.sqrt(copies * (1 - copies) / n)
    for g, p in zip(out, parsed, strict=True):
        assert isinstance(p, scoring.InvalidGeneration) == (g.kind == "malformed"), (g, p)
        if g.kind == "valid":
            assert isinstance(p, scoring.GeneratedProblem) and p.answer == g.answer
            assert sim.sim_true_quality(p.problem) == pytest.approx(g.true_quality)
    details = Counter(g.detail for g in out)
    assert sum(v for k, v in details.items() if k.endswith("+raw_latex")) > 100
    assert {"answer_1000", "missing_solution", "prose"} <= set(details)
    valid = [g.true_quality for g in out if g.kind == "valid"]
    assert abs(np.mean(valid) - 3.5) < 0.15 and min(valid) >= 1.0 and max(valid) <= 5.0


def test_sim_answers_are_correct_for_each_template() -> None:
    rng = np.random.default_rng(2)
    for topic in scoring.TOPICS:
        for _ in range(20):
            g = sim.sim_generation_output(REF_ROW, topic, rng=rng)
            p = scoring.parse_generated(g.text, id="g")
            assert isinstance(p, scoring.GeneratedProblem) and p.topic == topic
            assert str(p.answer) in p.solution  # the worked solution ends at the answer
    # recompute one template's answer by hand from the problem text alone
    p = scoring.parse_generated(
        sim.sim_generation_output(REF_ROW, "probability", rng=rng).text, id="g"
    )
    assert isinstance(p, scoring.GeneratedProblem)
    sides = int(p.problem.split("fair ")[1].split("-sided")[0])
    total = int(p.problem.split("sum of the two numbers rolled is $")[1].split("$")[0])
    ways = sum(1 for a in range(1, sides + 1) for b in range(1, sides + 1) if a + b == total)
    prob = Fraction(ways, sides * sides)
    assert p.answer == prob.numerator + prob.denominator


@pytest.mark.slow
def test_sim_copies_are_caught_and_fresh_problems_are_not(mirror: Path) -> None:
    ref = data.unique_reference(data.load_reference())
    rng = np.random.default_rng(7)
    rows = []
    for i in range(300):
        ref_row = ref.iloc[i % len(ref)]
        g = sim.sim_generation_output(ref_row, scoring.TOPICS[i % 7], rng=rng, copy_rate=0.2)
        p = scoring.parse_generated(g.text, id=f"g{i}", reference_id=ref_row["id"])
        assert isinstance(p, scoring.GeneratedProblem)
        rows.append({**p.model_dump(), "kind": g.kind})
    problems = pd.DataFrame(rows)
    report = duplicates.near_duplicates(problems, ref)
    flagged = problems["id"].isin(report.flagged_ids())
    assert (flagged == (problems["kind"] == "copy")).all()
    copies = report.top[flagged.to_numpy()]
    assert (
        copies["reference_id"].to_numpy() == problems.loc[flagged, "reference_id"].to_numpy()
    ).all()


def test_sim_generate_reads_its_knobs() -> None:
    from evalbench.models import ChatRequest, SimSpec

    request = ChatRequest(messages=[])
    ref = made_up_reference().iloc[0]

    def outputs(**knobs: float) -> list[scoring.GeneratedProblem | scoring.InvalidGeneration]:
        rng = np.random.default_rng(0)
        return [
            scoring.parse_generated(
                sim.sim_generate(
                    request,
                    SimSpec(**knobs),
                    rng,
                    reference_problem=ref["problem"],
                    reference_answer=int(ref["answer"]),
                    topic="algebra",
                ).text,
                id="g",
            )
            for _ in range(40)
        ]

    assert all(isinstance(o, scoring.InvalidGeneration) for o in outputs(malformed_rate=1.0))
    copies = outputs(copy_rate=1.0)
    assert all(isinstance(c, scoring.GeneratedProblem) and c.answer == 12 for c in copies)
    assert all(
        duplicates.similarity_matrix([c.problem], [ref["problem"]])[0, 0] > 0.6 for c in copies
    )
    good = [o for o in outputs(quality=2.0) if isinstance(o, scoring.GeneratedProblem)]
    assert len(good) == 40 and np.mean([sim.sim_true_quality(g.problem) for g in good]) < 2.5


@pytest.mark.parametrize(
    ("quality", "scores", "status"),
    [
        (4.4, 4, "approved"),  # mean 4 >= 3.5, no score below 3
        (3.5, 4, "approved"),  # rint(3.5) = 4 (half to even)
        (3.2, 3, "needs_revision"),  # mean 3 < 3.5
        (2.4, 2, "rejected"),  # mean 2 < 2.5
    ],
)
def test_sim_review_status_follows_the_scores(quality: float, scores: int, status: str) -> None:
    review = sim.sim_review("p", quality, np.random.default_rng(0), noise=0.0)
    assert review.scores == dict.fromkeys(scoring.DIMENSIONS, scores) and review.status == status
    assert review.total_score == scores and review.verified_at == sim.SIM_REVIEW_TIME


def test_sim_review_mixed_scores_need_revision_and_noise_averages_out() -> None:
    class Fixed:
        def standard_normal(self, n: int) -> np.ndarray:
            return np.array([1.0, 1.0, 1.0, -2.0])

    review = sim.sim_review("p", 4.0, Fixed(), noise=1.0)
    assert list(review.scores.values()) == [5, 5, 5, 2]  # mean 4.25, but one score below 3
    assert review.status == "needs_revision"
    rng = np.random.default_rng(1)
    totals = [sim.sim_review("p", 3.0, rng).total_score for _ in range(400)]
    assert abs(np.mean(totals) - 3.0) < 0.05  # unbiased away from the scale ends


def test_sim_verifications_sample_n_problems() -> None:
    problems = pd.DataFrame(
        {"id": [f"g{i}" for i in range(10)], "true_quality": np.linspace(1, 5, 10)}
    )
    picked = sim.sim_verifications(problems, 4, np.random.default_rng(0))
    assert len(picked) == 4 and set(picked) <= set(problems["id"])
    assert picked == sim.sim_verifications(problems, 4, np.random.default_rng(0))
    assert len(sim.sim_verifications(problems, 50, np.random.default_rng(0))) == 10
