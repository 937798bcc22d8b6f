"""The official prompts (byte-exact), the reference grader's bug pinned, evalbench's parser,
BrowseComp-ZH's own reading."""

from __future__ import annotations

import hashlib
import json

import pytest

from evalbench.browsecomp import scoring as sc

# What a grader that follows the official format writes.
GRADED_YES = """extracted_final_answer: Sydney Harbour Bridge
reasoning: The extracted answer matches the correct answer.
correct: yes
confidence: 85"""


def test_the_official_templates_are_byte_exact():
    for name, digest in sc.PROMPT_SHA256.items():
        assert hashlib.sha256(getattr(sc, name).encode()).hexdigest() == digest, name
    assert "0|\\%| and 100|\\%|" in sc.GRADER_TEMPLATE  # the literal backslash, kept
    assert "if there if there" in sc.GRADER_TEMPLATE


def test_the_query_renders_the_doubled_braces():
    text = sc.QUERY_TEMPLATE.format(Question="Q?")
    assert text.startswith("Q?\n\nYour response should be in the following format:\n")
    assert text.endswith("Confidence: {your confidence score between 0% and 100% for your answer}")


def test_message_layouts_follow_each_official_script():
    assert sc.query_messages("browsecomp", "Q?") == [
        {"role": "user", "content": sc.QUERY_TEMPLATE.format(Question="Q?")}
    ]
    assert sc.query_messages("browsecomp_zh", "问？") == [
        {"role": "system", "content": sc.SYSTEM_PROMPT_CN},
        {"role": "user", "content": "问？"},
    ]
    bc = sc.grader_messages("browsecomp", "Q?", "R", "A")
    assert bc[0] == {"role": "system", "content": "You are a helpful assistant."}
    assert bc[1]["content"].startswith("Judge whether the following [response] to [question]")
    assert "[question]: Q?\n\n[response]: R\n" in bc[1]["content"]
    zh = sc.grader_messages("browsecomp_zh", "Q?", "R", "A")
    assert zh[0] == {"role": "system", "content": "you are a helpful assistant!"}
    assert "[question]:  Q?\n\n[response]:  R\n" in zh[1]["content"]  # two spaces, as upstream


def test_the_reference_grader_returns_the_whole_match_and_never_scores_right():
    grade = sc.reference_grade_sample(GRADED_YES)
    assert grade == "correct: yes"  # match.group(0)
    assert not sc.reference_is_correct(grade)  # "correct: yes" != "yes": the bug
    assert sc.reference_grade_sample("no verdict here") == "no"  # the default
    assert sc.reference_grade_sample_pr93(GRADED_YES) == "yes"  # group(1): the proposed fix
    # ... which an "incorrect: yes" in the reasoning still fools (first match wins)
    tricky = "reasoning: the answer is incorrect: yes it differs\ncorrect: no\nconfidence: 40"
    assert sc.reference_grade_sample_pr93(tricky) == "yes"
    assert sc.parse_grade(tricky).verdict == "no"


@pytest.mark.parametrize(
    ("reply", "verdict", "confidence", "note"),
    [
        (GRADED_YES, "yes", 85.0, "ok"),
        (GRADED_YES.replace("correct: yes", "**Correct:** Yes"), "yes", 85.0, "ok"),
        (GRADED_YES.replace("correct: yes", 'correct: "no"'), "no", 85.0, "ok"),
        (GRADED_YES.replace("confidence: 85", "confidence: 85%"), "yes", 85.0, "ok"),
        (GRADED_YES.replace("confidence: 85", "confidence: 85.5 %"), "yes", 85.5, "ok"),
        (
            GRADED_YES.replace("confidence: 85", "confidence: 850"),
            "yes",
            None,
            "confidence out of range",
        ),
        (
            GRADED_YES.replace("confidence: 85", "confidence: high"),
            "yes",
            None,
            "confidence unreadable",
        ),
        (GRADED_YES.replace("\nconfidence: 85", ""), "yes", None, "confidence missing"),
        (GRADED_YES.replace("correct: yes", "correct: maybe"), None, 85.0, "no verdict"),
        (GRADED_YES + "\ncorrect: no", None, 85.0, "conflicting verdicts"),
        ("The answer looks right to me.", None, None, "no verdict"),
        ("", None, None, "empty reply"),
    ],
)
def test_parse_grade(reply, verdict, confidence, note):
    grade = sc.parse_grade(reply)
    assert (grade.verdict, grade.confidence, grade.note) == (verdict, confidence, note)


def test_a_line_starting_incorrect_is_not_a_verdict():
    grade = sc.parse_grade("incorrect: yes\nconfidence: 10")
    assert grade.verdict is None and grade.note == "no verdict"


def test_structured_output_is_read_from_json():
    reply = json.dumps(
        {"extracted_final_answer": "x", "reasoning": "r", "correct": "no", "confidence": 30}
    )
    grade = sc.parse_grade(reply)
    assert (grade.verdict, grade.confidence, grade.extracted, grade.note) == (
        "no",
        30.0,
        "x",
        "structured",
    )
    bad = sc.parse_grade(json.dumps({"correct": True, "confidence": 30}))
    assert bad.verdict is None and bad.note == "structured: correct=true"


def test_browsecomp_zh_reading_reproduced():
    zh = "extracted_final_answer: 北京队\nreasoning: 一致\ncorrect: yes\nconfidence: 85%"
    assert sc.zh_reference_fields(zh) == ("北京队", "一致", "yes", "85%")
    assert sc.zh_reference_verdict("Yes") == "yes"
    assert sc.zh_reference_confidence("85%") == 85
    # Markdown around the verdict: the regex captures "** yes", which is neither yes nor no
    marked = zh.replace("correct: yes", "**correct:** yes")
    assert sc.zh_reference_fields(marked)[2] == "** yes"
    assert sc.zh_reference_verdict("** yes") == "none" and sc.parse_grade(marked).verdict == "yes"
    # fields out of order or missing: four empty strings, confidence 0
    assert sc.zh_reference_fields("correct: yes") == ("", "", "", "")
    for text, value in [("85.5%", 0), ("**85%**", 0), ("", 0), ("100", 100), ("-5%", -5)]:
        assert sc.zh_reference_confidence(text) == value, text
