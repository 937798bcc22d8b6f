"""The HLE simulator: calibrated and overconfident systems, wrong answers that are wrong,
judges whose outputs parse back to the truth (or fail the way they should)."""

from __future__ import annotations

import numpy as np
import pytest

from evalbench.hle import data, scoring, sim
from evalbench.hle.records import ConfidenceKnob
from evalbench.models import ChatRequest, SimSpec

REQUEST = ChatRequest(messages=[{"role": "user", "content": "q"}])
STRUCTURED = ChatRequest(messages=REQUEST.messages, response_format=scoring.JUDGE_RESPONSE_FORMAT)


def test_a_calibrated_system_is_right_as_often_as_it_says():
    rng, knobs = np.random.default_rng(0), SimSpec(accuracy=0.4)
    draws = [sim.draw_outcome(knobs, ConfidenceKnob(), "Math", rng) for _ in range(20_000)]
    stated = np.array([d.stated for d in draws]) / 100
    right = np.array([d.correct for d in draws])
    assert right.mean() == pytest.approx(0.4, abs=0.015)  # Beta mean = the accuracy knob
    for low in (0.1, 0.3, 0.5, 0.7):
        inside = (stated >= low) & (stated < low + 0.2)
        assert right[inside].mean() == pytest.approx(stated[inside].mean(), abs=0.03)


def test_an_overconfident_system_states_p_plus_shift_times_the_rest():
    knob = ConfidenceKnob(style="overconfident", shift=0.6)
    outcome = sim.draw_outcome(SimSpec(accuracy=0.3), knob, "Math", np.random.default_rng(1))
    assert outcome.stated == round(100 * (outcome.p_correct + 0.6 * (1 - outcome.p_correct)))
    assert outcome.stated >= 100 * outcome.p_correct


def test_wrong_answers_are_wrong_and_choices_stay_choices():
    rng = np.random.default_rng(2)
    for item in data.load("demo"):
        wrong = sim.wrong_answer(item.answer, item.answer_type, item.question, rng)
        assert not sim.is_right(wrong, item.answer), item.id
        if item.answer_type == "multipleChoice":
            assert f"\n{wrong}. " in item.question, item.id


def test_a_response_in_the_official_format_and_its_flaws():
    text = sim.answer_reply(REQUEST, SimSpec(), np.random.default_rng(0), answer="42", stated=85)
    assert sim.stated_answer(text.text) == "42" and sim.stated_confidence(text.text) == 85
    flawed = [
        sim.answer_reply(REQUEST, SimSpec(malformed_rate=1.0), np.random.default_rng(s),
                         answer="42", stated=85).text
        for s in range(20)
    ]  # fmt: skip
    assert all(sim.stated_confidence(t) is None or sim.stated_answer(t) is None for t in flawed)
    assert {sim.stated_answer(t) for t in flawed} == {"42", None}  # both flaws occur
    truth = sim.response_truth("Answer: 42", "42", 0.3)
    assert truth == {"correct": True, "p_correct": 0.3, "stated": 100.0}  # none stated → 100


@pytest.mark.parametrize("request_", [REQUEST, STRUCTURED], ids=["text", "structured"])
def test_a_perfect_sim_judge_parses_back_to_the_truth(request_):
    response = "Explanation: e\nAnswer: 42\nConfidence: 85%"
    for seed in range(30):
        for correct_answer, right in (("42", True), ("41", False)):
            reply = sim.judge_reply(request_, SimSpec(accuracy=1.0), np.random.default_rng(seed),
                                    correct_answer=correct_answer, response=response)  # fmt: skip
            judgment = scoring.parse_judgment(reply.text)
            assert judgment.status == "scored" and judgment.correct is right
            assert judgment.confidence == 85 and judgment.extracted_final_answer == "42"
            expected = "json" if request_ is STRUCTURED else "text"
            assert judgment.parse_method == expected


def test_the_sim_judge_flips_at_its_error_rate_and_puts_100_without_a_confidence():
    flipped = [
        scoring.parse_judgment(sim.judge_reply(REQUEST, SimSpec(accuracy=0.0),
                                           np.random.default_rng(s), correct_answer="42",
                                           response="Answer: 42").text)
        for s in range(10)
    ]  # fmt: skip
    assert all(j.correct is False and j.confidence == 100 for j in flipped)


def test_every_sim_judge_flaw_parses_as_designed():
    outcomes = set()
    for seed in range(300):
        reply = sim.judge_reply(STRUCTURED if seed % 2 else REQUEST, SimSpec(malformed_rate=1.0),
                                np.random.default_rng(seed), correct_answer="42",
                                response="Answer: 42\nConfidence: 85%")  # fmt: skip
        judgment = scoring.parse_judgment(reply.text)
        outcomes.add(judgment.status if judgment.status == "unscored" else judgment.confidence_note)
    # prose / no verdict / "maybe" → unscored; 850 → out_of_range; 0.85 → fraction
    assert outcomes == {"unscored", "out_of_range", "fraction"}
