"""The simulation's truth of "the same answer" (the seed's cases: 42 / 四十二 / 42.0, units,
lists in another order), the equivalent forms a simulated assistant writes, and the simulated
semantic judge (known accuracy and malformed rate, parsed by the real parsers)."""

from __future__ import annotations

import numpy as np
import pytest

from evalbench import gaia
from evalbench.gaia import equivalence as E
from evalbench.gaia.scoring import question_scorer
from evalbench.gaia.sim import equivalent_variant, semantic_reply, sim_answer
from evalbench.judge.matching import match_messages, parse_match
from evalbench.models import ChatRequest, SimSpec

# ----------------------------------------------------------------------------- the truth


@pytest.mark.parametrize("answer", ["42", "42.0", "四十二", "forty-two", "Forty Two", "４２",
                                    "42.00", "$42", "4.2e1"])  # fmt: skip
def test_the_seeds_numbers_are_one_answer(answer):
    assert E.equivalent(answer, "42")
    assert E.equivalent("42", answer)


@pytest.mark.parametrize("answer", ["43", "四十三", "forty-three", "42.5", "4 2", "four two",
                                    "二十四", "", "answer"])  # fmt: skip
def test_other_numbers_are_other_answers(answer):
    assert not E.equivalent(answer, "42")


def test_the_official_scorer_already_accepts_42_0_but_not_the_words_or_the_hanzi():
    assert question_scorer("42.0", "42")
    assert not question_scorer("四十二", "42") and not question_scorer("forty-two", "42")


@pytest.mark.parametrize(
    ("answer", "gold", "same"),
    [
        ("5 km", "5000 m", True),  # 5 × 1000 m = 5000 × 1 m
        ("5000 m", "5 km", True),
        ("5 kilometres", "5000 meters", True),
        ("3.5 h", "210 min", True),  # 3.5 × 3600 s = 210 × 60 s = 12600 s
        ("5 km", "5 m", False),
        ("5 km", "5 kg", False),  # another kind of unit
        ("76.7 kilometers per hour", "76.7 km/h", True),
        ("76.7", "76.7 km/h", True),  # a bare number: the benefit of the doubt
        ("76.8 km/h", "76.7 km/h", False),
    ],
)
def test_units_are_converted_within_their_kind(answer, gold, same):
    assert E.equivalent(answer, gold) is same


def test_a_gold_number_without_a_unit_is_in_the_unit_the_question_names():
    question = "How many seconds are there in 3.5 hours?"
    assert E.question_unit(question) == "seconds"  # the first unit named
    assert E.equivalent("3.5 hours", "12600", question)  # 3.5 × 3600 = 12600 s
    assert E.equivalent("12600 s", "12600", question)
    assert not E.equivalent("3.5 hours", "12600")  # no unit in the question: 3.5 ≠ 12600


@pytest.mark.parametrize(
    ("question", "same"),
    [
        ("Which fruits are in the basket? Comma separated.", True),
        ("List the fruits in alphabetical order, comma separated.", False),
        ("Sort the fruits by weight.", False),
        ("Give the first two fruits you see.", False),
    ],
)
def test_a_list_in_another_order_is_the_same_answer_only_when_no_order_is_asked(question, same):
    assert E.equivalent("pear, apple", "apple, pear", question) is same
    assert E.equivalent("apple, pear", "apple, pear", question)  # the same order always is


def test_lists_compare_element_by_element_and_by_length():
    assert E.equivalent("one; two; three", "1, 2, 3", "in order")
    assert not E.equivalent("1, 2", "1, 2, 3")
    assert not E.equivalent("1, 2, 2", "1, 2, 3")  # a multiset: 2 once, 3 once
    assert E.is_list("a, b") and not E.is_list("1,000") and not E.is_list("$1,352,000")
    assert E.equivalent("1000", "1,000")  # one number, not a list


@pytest.mark.parametrize(
    ("answer", "gold", "same"),
    [
        ("19 July 2024", "2024-07-19", True),
        ("July 19, 2024", "2024-07-19", True),
        ("Jul 19 2024", "2024-07-19", True),
        ("20 July 2024", "2024-07-19", False),
        ("Wed", "Wednesday", True),
        ("wed.", "Wednesday", True),
        ("Thu", "Wednesday", False),
        ("The Payment-Gateway", "payment gateway", True),  # case, article, punctuation
        ("USA", "United States", True),
        ("payment", "payment gateway", False),
    ],
)
def test_dates_text_and_abbreviations(answer, gold, same):
    assert E.equivalent(answer, gold) is same


@pytest.mark.parametrize(
    ("n", "words", "hanzi"),
    [
        (0, "zero", "零"),
        (12, "twelve", "十二"),
        (42, "forty-two", "四十二"),
        (105, "one hundred five", "一百零五"),
        (110, "one hundred ten", "一百一十"),
        (1050, "one thousand fifty", "一千零五十"),
        (10012, "ten thousand twelve", "一万零一十二"),
        (1352000, "one million three hundred fifty-two thousand", "一百三十五万二千"),
    ],
)
def test_numbers_in_words_and_chinese_numerals_both_ways(n, words, hanzi):
    assert (E.to_words(n), E.to_chinese(n)) == (words, hanzi)
    assert E.number_value(words) == n and E.number_value(hanzi) == n


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("two thousand and twenty-four", 2024),
        ("minus three", -3),
        ("five point five", 5.5),
        ("二〇二四", 2024),  # digit by digit, as years are written
        ("两千", 2000),
        ("五点五", 5.5),
        ("负三", -3),
        ("1,352,000", 1352000),
        ("12 600", 12600),
        ("36%", 36),
    ],
)
def test_number_readings(text, value):
    assert E.number_value(text) == value


@pytest.mark.parametrize("text", ["five five", "twenty twelve", "hundred", "thousand one",
                                  "一二三x", "9" * 400, "1e999", "point five"])  # fmt: skip
def test_what_is_not_one_number_reads_as_none(text):
    assert E.number_value(text) is None


def test_huge_inputs_stay_fast_and_unequal():
    big = "1, " * 20_000
    assert not E.equivalent(big, "1, 2")
    assert not E.equivalent("九" * 50_000, "9")  # read digit by digit: a huge integer
    assert not E.equivalent("x" * 100_000, "y")


def test_cases_of_an_answer_by_its_truth_and_the_official_verdict():
    assert E.semantic_case(True, True) == "same"
    assert E.semantic_case(True, False) == "variant"
    assert E.semantic_case(False, True) == E.semantic_case(False, False) == "different"


# ----------------------------------------------------------------------------- other forms


def test_equivalent_forms_of_the_demo_answers():
    assert E.equivalent_forms("391") == ["three hundred ninety-one", "三百九十一"]
    forms = E.equivalent_forms("12600", "How many seconds are there in 3.5 hours?")
    assert {"12600 seconds", "3.5 hours", "210 minutes"} <= set(forms)
    assert E.equivalent_forms("2024-07-19") == ["19 July 2024", "July 19, 2024"]
    assert E.equivalent_forms("West, 78.1", "Which region grew most, by how much?") == [
        "78.1, West"
    ]
    assert E.equivalent_forms("k, o", "in alphabetical order") == []  # order asked: none
    assert E.equivalent_forms("Wednesday") == ["Wed"]


def test_every_demo_form_is_equivalent_and_the_variant_prefers_what_the_official_rejects():
    rng = np.random.default_rng(0)
    for item in gaia.load("demo"):
        gold = str(item.final_answer)
        forms = E.equivalent_forms(gold, item.question)
        assert all(E.equivalent(f, gold, item.question) for f in forms), item.task_id
        variant = equivalent_variant(gold, item.question, rng)
        rejected = [f for f in forms if not question_scorer(f, gold)]
        assert variant in (rejected or forms or [gold]), item.task_id


def test_an_assistant_without_variants_draws_exactly_what_it_always_did():
    request = ChatRequest(messages=[{"role": "user", "content": "q"}])
    knobs = SimSpec(accuracy=0.6, malformed_rate=0.1)
    for seed in range(50):
        old = sim_answer(request, knobs, np.random.default_rng(seed), expected="391", level=1)
        new = sim_answer(request, knobs, np.random.default_rng(seed), expected="391", level=1,
                         question="What is 17 multiplied by 23?", variant_rate=0.0)  # fmt: skip
        assert old == new


def test_an_assistant_with_variants_writes_its_right_answers_in_another_form():
    request = ChatRequest(messages=[{"role": "user", "content": "q"}])
    knobs = SimSpec(accuracy=1.0)
    reply = sim_answer(request, knobs, np.random.default_rng(0), expected="391", level=1,
                       question="What is 17 multiplied by 23?", variant_rate=1.0)  # fmt: skip
    answer = gaia.extract_answer(reply.text)
    assert answer in ("three hundred ninety-one", "三百九十一")
    assert not question_scorer(answer, "391")


# ----------------------------------------------------------------------------- the judge


def _judge(prompt, knobs, seed, answer="四十二", expected="42", question="How many?"):
    request = ChatRequest(messages=match_messages(prompt, question, expected, answer))
    reply = semantic_reply(request, knobs, np.random.default_rng(seed), prompt=prompt,
                           answer=answer, expected=expected, question=question)  # fmt: skip
    return parse_match(prompt, reply.text)


@pytest.mark.parametrize("prompt", ["hle_grader", "equality_checker"])
def test_a_perfect_sim_judge_gives_the_truth_in_a_format_its_parser_reads(prompt):
    perfect = SimSpec(accuracy=1.0)
    assert _judge(prompt, perfect, 0).correct is True  # 四十二 = 42
    assert _judge(prompt, perfect, 0, answer="43").correct is False
    assert _judge(prompt, perfect, 0, answer="42.0").correct is True
    assert _judge(prompt, perfect, 0, answer="5000 m", expected="5 km").correct is True
    assert _judge(prompt, perfect, 0, answer="5 m", expected="5 km").correct is False
    assert _judge(prompt, perfect, 0, answer="pear, apple", expected="apple, pear").correct
    ordered = "List them in alphabetical order."
    assert not _judge(prompt, perfect, 0, answer="pear, apple", expected="apple, pear",
                      question=ordered).correct  # fmt: skip


@pytest.mark.parametrize("prompt", ["hle_grader", "equality_checker"])
def test_a_malformed_sim_judgment_is_always_unscored(prompt):
    broken = SimSpec(accuracy=1.0, malformed_rate=1.0)
    reasons = {_judge(prompt, broken, seed).reason for seed in range(60)}
    assert None not in reasons and len(reasons) == 3  # prose, "maybe", both verdicts


def test_the_sim_judge_is_right_with_its_set_accuracy_per_case():
    # accuracy 0.8 on variants: over 1000 seeds, the share of true verdicts has standard error
    # sqrt(0.8 · 0.2 / 1000) = 0.0126, so it lies within 0.8 ± 0.051 (4 s.e.)
    knobs = SimSpec(accuracy={"variant": 0.8, "same": 1.0, "different": 1.0})
    right = [_judge("hle_grader", knobs, seed).correct for seed in range(1000)]
    assert abs(np.mean(right) - 0.8) < 0.051
    same = [_judge("hle_grader", knobs, seed, answer="42").correct for seed in range(200)]
    assert all(same)  # accuracy 1.0 on answers the official scorer also accepts
