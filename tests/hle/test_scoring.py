"""HLE scoring: the official prompts byte for byte, the messages, the judge-output parser
(yes / no / ``Yes.`` / missing fields / confidence rules) and the official judge entry."""

from __future__ import annotations

import hashlib
import json

import pytest

from evalbench.hle import scoring
from evalbench.hle.scoring import judge_response_entry

# ----------------------------------------------------------------------------- prompts


def test_the_prompts_are_the_official_bytes():
    # SHA-256 of the literals in centerforaisafety/hle @ 26dca2e (hle_eval/*.py), as pinned.
    for name, text in (
        ("SYSTEM_PROMPT", scoring.SYSTEM_PROMPT),
        ("JUDGE_PROMPT", scoring.JUDGE_PROMPT),
    ):
        assert hashlib.sha256(text.encode()).hexdigest() == scoring.PROMPT_SHA256[name], name
    assert len(scoring.JUDGE_PROMPT) == 1290 and len(scoring.SYSTEM_PROMPT) == 204
    assert "0|\\%| and 100|\\%|" in scoring.JUDGE_PROMPT  # the literal backslash is kept
    assert "if there if there is any inconsistency" in scoring.JUDGE_PROMPT
    assert "\n\n\nconfidence:" in scoring.JUDGE_PROMPT  # the double blank line


def test_the_judge_schema_is_the_official_model():
    schema = scoring.JUDGE_RESPONSE_FORMAT["json_schema"]
    assert schema["name"] == "ExtractedAnswer" and schema["strict"] is True
    props = schema["schema"]["properties"]
    assert list(props) == ["extracted_final_answer", "reasoning", "correct", "confidence", "strict"]
    assert props["correct"]["enum"] == ["yes", "no"] and props["confidence"]["type"] == "integer"
    assert schema["schema"]["required"] == list(props)


def test_answer_messages_text_only_with_an_image_and_for_o1():
    text = scoring.build_messages("What is 2+2?")
    assert text == [
        {"role": "system", "content": scoring.SYSTEM_PROMPT},
        {"role": "user", "content": [{"type": "text", "text": "What is 2+2?"}]},
    ]
    image = scoring.build_messages("Describe.", "data:image/png;base64,AAA")
    assert image[1]["content"] == [
        {"type": "text", "text": "Describe."},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAA"}},
    ]
    assert scoring.build_messages("q", model="o1-mini")[0]["role"] == "user"  # the official quirk
    assert scoring.build_messages("q", model="gpt-4o")[0]["role"] == "system"


def test_judge_messages_are_one_user_message_with_the_response_verbatim():
    response = "Answer: {braces} stay\nConfidence: 85%"
    messages = scoring.judge_messages("Q?", "42", response)
    assert len(messages) == 1 and messages[0]["role"] == "user"
    content = messages[0]["content"]
    assert content == scoring.JUDGE_PROMPT.format(
        question="Q?", correct_answer="42", response=response
    )
    assert "[response]: Answer: {braces} stay" in content and "[correct_answer]: 42" in content


# ----------------------------------------------------------------------------- the parser

TEXT = "extracted_final_answer: 42\nreasoning: It matches.\ncorrect: {verdict}\nconfidence: {conf}"


@pytest.mark.parametrize(
    ("verdict", "expected"),
    [("yes", True), ("no", False), ("Yes.", True), ("NO", False), ("**yes**", True),
     ("'no'", False), ("yes!", True)],
)  # fmt: skip
def test_a_yes_or_no_verdict_in_any_dress(verdict, expected):
    judgment = scoring.parse_judgment(TEXT.format(verdict=verdict, conf="85%"))
    assert judgment.status == "scored" and judgment.correct is expected
    assert judgment.parse_method == "text"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty"),
        ("I cannot judge this.", "no 'correct:' field"),
        (TEXT.format(verdict="maybe", conf="85"), "must be yes or no"),
        (TEXT.format(verdict="yes, mostly", conf="85"), "must be yes or no"),
        (TEXT.format(verdict="yes", conf="85") + "\ncorrect: no", "several different"),
        ('{"extracted_final_answer": "4", "correct": true, "confidence": 85}', "must be yes or no"),
        ('{"extracted_final_answer": "4", "reasoning": "r", "confidence": 85}', "no 'correct:'"),
    ],
)
def test_an_unreadable_verdict_is_unscored_never_no(text, reason):
    judgment = scoring.parse_judgment(text)
    assert judgment.status == "unscored" and judgment.correct is None
    assert reason in judgment.unscored_reason


def test_a_verdict_line_must_start_the_line():
    # "incorrect: yes" or a verdict mentioned in the reasoning is not the field
    text = (
        "extracted_final_answer: 4\nreasoning: so it is incorrect: yes\ncorrect: no\nconfidence: 9"
    )
    judgment = scoring.parse_judgment(text)
    assert judgment.correct is False and judgment.reasoning == "so it is incorrect: yes"


def test_markdown_bold_fields_and_multiline_reasoning():
    text = ("**extracted_final_answer:** 3.14\n\n**reasoning:** First line.\nSecond line.\n\n"
            "**correct:** Yes.\n\n**confidence:** 85%")  # fmt: skip
    judgment = scoring.parse_judgment(text)
    assert judgment.correct is True and judgment.extracted_final_answer == "3.14"
    assert judgment.reasoning == "First line.\nSecond line."
    assert judgment.confidence == 85


def test_a_structured_reply_is_read_as_json():
    reply = json.dumps({"extracted_final_answer": "42", "reasoning": "same", "correct": "no",
                        "confidence": 70, "strict": True})  # fmt: skip
    judgment = scoring.parse_judgment(reply)
    assert (judgment.status, judgment.correct, judgment.confidence) == ("scored", False, 70)
    assert judgment.parse_method == "json" and judgment.notes == []


@pytest.mark.parametrize(
    ("value", "valid", "official", "note"),
    [
        ("85%", 85.0, 85.0, None),
        ("85", 85.0, 85.0, None),
        ("85 %", 85.0, 85.0, None),
        (85, 85.0, 85.0, None),
        (85.5, 85.5, 85.5, None),
        (0.85, 85.0, 85.0, "fraction"),  # no % sign, strictly between 0 and 1: a share
        ("0.85", 85.0, 85.0, "fraction"),
        ("0.5%", 0.5, 0.5, None),  # with a % sign it is a percentage
        (1, 1.0, 1.0, None),  # 1 is 1%, not 100%
        (0, 0.0, 0.0, None),
        (100, 100.0, 100.0, None),
        (150, None, 150.0, "out_of_range"),  # the official script would use 1.5
        ("850%", None, 850.0, "out_of_range"),
        (-5, None, -5.0, "out_of_range"),
        ("high", None, None, "unparseable"),
        (True, None, None, "unparseable"),
        (None, None, None, "missing"),
    ],
)
def test_confidence_rules(value, valid, official, note):
    got = scoring.parse_confidence(value)
    assert (got.valid, got.official, got.note) == (valid, official, note)
    reply = json.dumps({"extracted_final_answer": "4", "reasoning": "r", "correct": "yes",
                        "confidence": value})  # fmt: skip
    judgment = scoring.parse_judgment(reply)
    assert judgment.status == "scored"  # a confidence problem never unscores the verdict
    assert (judgment.confidence, judgment.confidence_official) == (valid, official)


def test_missing_fields_are_noted_and_a_missing_confidence_is_not_invented():
    judgment = scoring.parse_judgment("correct: yes")
    assert judgment.status == "scored" and judgment.correct is True
    assert judgment.confidence is None and judgment.confidence_note == "missing"
    assert judgment.notes == ["missing field 'extracted_final_answer'", "missing field 'reasoning'"]


def test_the_official_judge_response_entry():
    judgment = scoring.parse_judgment(TEXT.format(verdict="Yes.", conf="150"))
    entry = judge_response_entry(judgment, "42")
    assert entry == {"correct_answer": "42", "model_answer": "42", "reasoning": "It matches.",
                     "correct": "yes", "confidence": 150}  # fmt: skip
    assert judge_response_entry(scoring.parse_judgment("correct: maybe"), "42") is None
    assert judge_response_entry(scoring.parse_judgment("correct: no"), "42") is None  # no number
