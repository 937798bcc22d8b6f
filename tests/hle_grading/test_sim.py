"""The expert-grading simulator: the rubric judge's confidence tracks its own error, its
flaws are unscored, and a simulated answer's true scores follow accuracy and difficulty."""

from __future__ import annotations

import json

import numpy as np
import pytest

from evalbench.agreement import spearman
from evalbench.hle_grading import sim
from evalbench.hle_grading.data import DIMENSIONS
from evalbench.judge import parse_rubric_output
from evalbench.models import ChatRequest, SimSpec

REQUEST = ChatRequest(messages=[{"role": "user", "content": "q"}])


def test_the_rubric_judge_confidence_tracks_its_error():
    truth = dict.fromkeys(DIMENSIONS, 60.0)
    knobs = SimSpec(noise=10.0)
    rng = np.random.default_rng(4)
    confidence, error = [], []
    for _ in range(400):
        result = parse_rubric_output("hle", sim.judge_reply(REQUEST, knobs, rng,
                                                                   truth=truth).text)  # fmt: skip
        assert result.status == "scored"
        confidence.append(result.extras["confidence"])
        error.append(abs(result.weighted_score - 60.0))
    assert spearman(confidence, error).estimate < -0.2


def test_rubric_judge_flaws_are_unscored():
    truth = dict.fromkeys(DIMENSIONS, 60.0)
    kinds = set()
    for seed in range(60):
        reply = sim.judge_reply(REQUEST, SimSpec(malformed_rate=1.0),
                                       np.random.default_rng(seed), truth=truth)  # fmt: skip
        result = parse_rubric_output("hle", reply.text)
        assert result.status == "unscored"
        kinds.add(result.unscored_kind)
    assert len(kinds) >= 3


def test_a_simulated_answer_follows_accuracy_and_difficulty():
    knobs = SimSpec(accuracy={"Physics": 0.7, "default": 0.5})
    easy = [np.mean(list(sim.answer_truth(knobs, "Physics", "easy", np.random.default_rng(s))
                         .values())) for s in range(200)]  # fmt: skip
    expert = [np.mean(list(sim.answer_truth(knobs, "Physics", "expert", np.random.default_rng(s))
                           .values())) for s in range(200)]  # fmt: skip
    assert np.mean(easy) == pytest.approx(70 + 12, abs=1.5)
    assert np.mean(expert) == pytest.approx(70 - 14, abs=1.5)
    payload = json.loads(sim.judge_reply(REQUEST, SimSpec(), np.random.default_rng(0),
                                                truth=sim.default_truth("hard")).text)  # fmt: skip
    assert set(payload["scores"]) == set(DIMENSIONS)
