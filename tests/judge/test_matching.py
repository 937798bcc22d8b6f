"""Answer-matching judges: the two published prompts, byte for byte, and the strict parsers
(an unreadable output is unscored, never a verdict)."""

from __future__ import annotations

import hashlib
import json

import pytest

from evalbench.judge import matching as M
from evalbench.judge.official import EXTRACTED_ANSWER_GRADER


def test_the_equality_template_is_simple_evals_byte_for_byte():
    # sha256 of simple-evals' EQUALITY_TEMPLATE after .strip() (common.py @ ee3b0318), computed
    # from the official file; the placeholders are %-format, as check_equality fills them
    digest = hashlib.sha256(M.EQUALITY_TEMPLATE.encode()).hexdigest()
    assert digest == M.PROMPT_SHA256["EQUALITY_TEMPLATE"]
    assert M.EQUALITY_TEMPLATE.startswith("Look at the following two expressions")
    assert M.EQUALITY_TEMPLATE.endswith("Expression 2: %(expression2)s")


def test_the_equality_checker_gets_the_gold_as_expression_1_and_no_question():
    (message,) = M.match_messages("equality_checker", "How many?", "42", "四十二")
    assert message["role"] == "user"
    assert message["content"].endswith("    Expression 1: 42\n    Expression 2: 四十二")
    assert "How many?" not in message["content"]
    (tricky,) = M.match_messages("equality_checker", "q", "50%", "%(expression1)s 100%%")
    assert tricky["content"].endswith("Expression 1: 50%\n    Expression 2: %(expression1)s 100%%")


def test_the_hle_grader_gets_question_response_and_correct_answer_verbatim():
    (message,) = M.match_messages("hle_grader", "Q {x}?", "5 km", "5000 m")
    assert message == {
        "role": "user",
        "content": EXTRACTED_ANSWER_GRADER.format(
            question="Q {x}?", correct_answer="5 km", response="5000 m"
        ),
    }
    assert "[question]: Q {x}?\n" in message["content"]  # braces in data are not placeholders
    assert "[correct_answer]: 5 km\n" in message["content"]


def test_an_unknown_prompt_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown answer-matching prompt 'other'"):
        M.match_messages("other", "q", "g", "a")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown answer-matching prompt 'other'"):
        M.parse_match("other", "Yes")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("Yes", True),
        ("No", False),
        ("yes\n", True),
        ("Yes.", True),  # simple-evals reads this as "not equal" (== "yes" fails)
        ("**No**", False),
        ('"Yes"', True),
        ("No, they differ.", False),
    ],
)
def test_the_equality_checker_reads_a_plain_yes_or_no(text, verdict):
    assert M.parse_match("equality_checker", text) == M.MatchVerdict(verdict)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("Maybe", "does not start with yes or no"),
        ("I think yes", "does not start with yes or no"),
        ("Yes or No", "says both yes and no"),
        ("No. Well, yes.", "says both yes and no"),
        ("y" * 200_001, "200,001 characters"),
    ],
)
def test_an_unreadable_equality_reply_is_unscored_with_its_reason(text, reason):
    got = M.parse_match("equality_checker", text)
    assert got.correct is None and reason in str(got.reason)


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("extracted_final_answer: 5000 m\n\nreasoning: same.\n\ncorrect: yes\n\nconfidence: 100", True),
        ("reasoning: differs\ncorrect: no", False),
        ("**correct:** Yes.", True),
        ("- correct: `no`", False),
        ("correct: yes\ncorrect: YES", True),  # repeated, but one verdict
        ('{"extracted_final_answer": "x", "correct": "no", "confidence": 90}', False),
        ("correct:\nyes", True),
    ],
)  # fmt: skip
def test_the_hle_grader_reads_the_correct_line_or_json_field(text, verdict):
    assert M.parse_match("hle_grader", text) == M.MatchVerdict(verdict)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("The answers match.", "no 'correct:' line"),
        ("incorrect: yes", "no 'correct:' line"),  # not a correct: line
        ("correct: maybe", "must be yes or no"),
        ("correct: yes\ncorrect: no", "several different 'correct:' values (no, yes)"),
        ('{"correct": true}', "must be yes or no, got true"),  # a JSON boolean is not a word
        ("", "empty"),
    ],
)
def test_an_unreadable_grader_reply_is_unscored_with_its_reason(text, reason):
    got = M.parse_match("hle_grader", text)
    assert got.correct is None and reason in str(got.reason)


def test_an_unscored_reason_quotes_at_most_60_characters_of_the_reply():
    got = M.parse_match("equality_checker", "Perhaps " + "x" * 500)
    quoted = str(got.reason).split(": ", 1)[1]
    assert json.loads(quoted) == ("Perhaps " + "x" * 500)[:60]
