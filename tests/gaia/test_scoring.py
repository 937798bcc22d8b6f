"""GAIA scoring: the official scorer's quirks, the lenient diagnostic, extraction, the
prompt, and predictions scored into records."""

from __future__ import annotations

import math

import pytest
from gaia.cases import pred, row, write_jsonl

from evalbench import gaia
from evalbench.gaia import scoring

# ----------------------------------------------------------------------------- scorer

# (model_answer, ground_truth, verdict, why). Every row is a behaviour of the official
# leaderboard scorer (spaces/gaia-benchmark/leaderboard, scorer.py), reproduced on purpose.
OFFICIAL_CASES = [
    # --- ground truth parses as a float: numeric comparison
    ("1000", "1000", True, "identical number"),
    ("1,000", "1000", True, "commas are stripped from the answer"),
    ("$5", "5", True, "dollar signs are stripped"),
    ("5%", "5", True, "percent signs are stripped"),
    ("$1,234.50", "1234.5", True, "all three strippers at once, then float equality"),
    ("5.0", "5", True, "compared as floats, not as text"),
    ("0.1", "0.10", True, "trailing zero in the truth does not matter"),
    ("1e3", "1000", True, "float() accepts scientific notation"),
    (" 5 ", "5", True, "float() ignores surrounding whitespace"),
    ("1_000", "1000", True, "float() accepts digit underscores (Python >= 3.6)"),
    ("1000", "1_000", True, "... in the ground truth too: '1_000' is a float"),
    ("4.6", "+4.6", True, "a leading plus sign still parses"),
    ("5 m", "5", False, "any unit other than $ and % makes float() fail: wrong"),
    ("five", "5", False, "number words are not numbers"),
    ("1 000", "1000", False, "an inner space makes float() fail"),
    ("−5", "-5", False, "the Unicode minus sign is not accepted by float()"),
    ("5.01", "5", False, "no tolerance: exact float equality"),
    ("", "5", False, "an empty answer is unparseable, so wrong"),
    (None, "5", False, "None becomes the string 'None': unparseable"),
    # the official unparseable-answer sentinel is +inf, hence these two quirks:
    ("banana", "inf", True, "QUIRK: any unparseable answer equals float('inf')"),
    ("", "inf", True, "QUIRK: even an empty answer matches an 'inf' ground truth"),
    ("nan", "nan", False, "QUIRK: nan never equals nan, so a 'nan' truth is unreachable"),
    # --- ground truth with ',' or ';' (and not a float): a list
    ("1000", "1,000", False, "QUIRK: '1,000' is not a float, so it is a 2-element list"),
    ("1,000", "1,000", True, "... compared element-wise: 1 == 1 and 000 == 0"),
    ("1,0", "1,000", True, "QUIRK: '0' equals '000' as numbers inside lists"),
    ("a;b", "a, b", True, "',' and ';' are interchangeable separators"),
    ("a, b", "a;b", True, "... in both directions"),
    ("b, a", "a, b", False, "order matters"),
    ("a, b, c", "a, b", False, "lengths must agree"),
    ("a, b,", "a, b", False, "a trailing separator adds an empty element"),
    ("A,B", "a, b", True, "elements lose whitespace and case"),
    ("2, $3", "2, 3", True, "numeric ground-truth elements are compared as numbers"),
    ("2, 3.0", "2, 3", True, "... as floats"),
    ("St. Louis, Paris", "St. Louis, Paris", True, "identical list"),
    ("St.Louis, paris", "St. Louis, Paris", True, "whitespace and case do not matter"),
    ("st louis, Paris", "St. Louis, Paris", False, "punctuation is KEPT inside list elements"),
    ("St. Louis, Paris.", "St. Louis, Paris", False, "... including a trailing period"),
    ("West, 78.10", "West, 78.1", True, "mixed list: string then number"),
    # --- otherwise: a string (whitespace, case and ASCII punctuation removed)
    ("st louis", "St. Louis", True, "punctuation removed for plain strings"),
    ("sea gull", "seagull", True, "all whitespace removed"),
    ("Paris!", "paris", True, "trailing punctuation removed"),
    ("2024-07-19", "2024/07/19", True, "both reduce to 20240719"),
    ("76.7 km/h", "76.7 km/h", True, "a number with a unit is a string"),
    ("76.7", "76.7 km/h", False, "... so the bare number is wrong"),
    ("The Beatles", "Beatles", False, "articles are not removed"),
    ("Paris’", "paris", False, "non-ASCII punctuation (’) is not removed"),
    (None, "None", True, "QUIRK: a None answer is the string 'None'"),
    ("", "Paris", False, "empty answer"),
]


@pytest.mark.parametrize(("answer", "truth", "verdict", "why"), OFFICIAL_CASES)
def test_question_scorer_matches_the_leaderboard(answer, truth, verdict, why):
    assert gaia.question_scorer(answer, truth) is verdict, why


def test_official_helpers_pin_normalisations():
    assert scoring.official_number("$1,234.5%") == 1234.5
    assert scoring.official_number("12 km") == math.inf  # the official sentinel
    assert scoring.official_text(" St. Louis ", keep_punctuation=True) == "st.louis"
    assert scoring.official_text(" St. Louis ", keep_punctuation=False) == "stlouis"
    assert scoring.official_split("a, b;c,") == ["a", " b", "c", ""]


LENIENT_CASES = [
    ("5.004", "5", True, "within 1% relative tolerance"),
    ("5.1", "5", False, "2% off is outside the default tolerance"),
    ("5 m", "5", True, "a trailing unit is allowed"),
    ("1000", "1,000", True, "'1,000' is one number here, not a list"),
    ("b, a", "a, b", True, "lists are unordered"),
    ("b, b", "a, b", False, "... but still a multiset"),
    ("the Beatles", "Beatles", True, "articles dropped"),
    ("True", "Yes", True, "yes synonyms"),
    ("incorrect", "no", True, "no synonyms"),
    (None, "None", False, "no answer is never right (unlike the official quirk)"),
    ("banana", "inf", False, "no sentinel quirk"),
]


@pytest.mark.parametrize(("answer", "truth", "verdict", "why"), LENIENT_CASES)
def test_lenient_scorer_is_a_separate_forgiving_diagnostic(answer, truth, verdict, why):
    assert scoring.lenient_scorer(answer, truth) is verdict, why


def test_lenient_never_replaces_official_in_records(tmp_path):
    items = gaia.load(write_jsonl(tmp_path, [row("t1", 1, "5")]))
    recs = gaia.score(items, [pred("A", "t1", "FINAL ANSWER: 5 m")], with_lenient=True)
    # the official verdict stays in `correct`; the lenient one is only an extra column
    assert recs["correct"].dtype == bool and not recs.loc[0, "correct"]
    assert bool(recs.loc[0, "correct_lenient"]) is True


# ----------------------------------------------------------------------------- extraction

EXTRACTION_CASES = [
    ("Thoughts.\nFINAL ANSWER: 42", "42", "the official template"),
    ("FINAL ANSWER: 41\nWait, recheck.\nFINAL ANSWER: 42", "42", "last occurrence wins"),
    ("**FINAL ANSWER:** **Paris**.", "Paris", "markdown bold and trailing period stripped"),
    ("**Final Answer**: Paris", "Paris", "bold around the marker, any case"),
    ("final answer: st. louis, paris.", "st. louis, paris", "inner punctuation kept"),
    ("FINAL ANSWER：42", "42", "full-width colon"),
    ("FINAL ANSWER: [42]", "42", "the template's brackets are removed"),
    ("FINAL ANSWER: `x`", "x", "backticks removed"),
    ('FINAL ANSWER: "Paris"', "Paris", "surrounding quotes removed"),
    ("FINAL ANSWER: \\boxed{17}", "17", "a boxed wrapper is removed"),
    ("FINAL ANSWER: 42\n\nHope this helps!", "42", "the answer ends at a blank line"),
    ("FINAL ANSWER: apples,\nbananas", "apples, bananas", "wrapped lines are joined"),
    ("FINAL ANSWER:\n- apples\n- bananas", "apples, bananas", "a bullet list becomes a list"),
    ("FINAL ANSWER:\n\n  7  ", "7", "answer on a later line"),
    ("Use FINAL ANSWER: [YOUR FINAL ANSWER].\nFINAL ANSWER: 9", "9", "template echo ignored"),
    ("Final answer - 7", "7", "fallback: dash form"),
    ("The final answer is 12.", "12", "fallback: 'final answer is'"),
    ("The final answer is: 12.", "12", "fallback with a colon after 'is'"),
    ("FINAL ANSWER: 3\nso the final answer is 4", "3", "the official template beats fallbacks"),
    ("So \\boxed{\\frac{1}{2}} and \\boxed{7}", "7", "fallback: the last boxed{}"),
    ("\\boxed{\\text{a}{b}}", "\\text{a}{b}", "boxed with nested braces"),
]


@pytest.mark.parametrize(("text", "expected", "why"), EXTRACTION_CASES)
def test_extract_answer(text, expected, why):
    assert gaia.extract_answer(text) == expected, why


@pytest.mark.parametrize(
    "text",
    [
        None,
        "",
        "I could not find it.",
        "FINAL ANSWER:",
        "FINAL ANSWER: [YOUR FINAL ANSWER]",
        "FINAL ANSWER: **.**",
        "\\boxed{unclosed",
    ],
)
def test_extract_answer_none_when_nothing_extractable(text):
    assert gaia.extract_answer(text) is None


# ----------------------------------------------------------------------------- prompting


def test_system_prompt_is_the_papers():
    p = scoring.SYSTEM_PROMPT
    assert p.startswith("You are a general AI assistant. I will ask you a question.")
    assert "FINAL ANSWER: [YOUR FINAL ANSWER]." in p
    assert "don't use comma to write your number neither use units such as $ or percent" in p
    assert p.endswith("whether the element to be put in the list is a number or a string.")


def test_build_messages_inlines_and_clips_text_attachments(tmp_path):
    (tmp_path / "notes.txt").write_text("x" * 50 + "```" + "y" * 50, encoding="utf-8")
    (tmp_path / "pic.png").write_bytes(b"\x89PNG" + b"\0" * 96)
    rows = [row("t1", 1, "1", file_name="notes.txt"), row("t2", 1, "1", file_name="pic.png")]
    items = gaia.load(write_jsonl(tmp_path, rows))
    system, user = scoring.build_messages(items[0], attachment_chars=60)
    assert system == {"role": "system", "content": scoring.SYSTEM_PROMPT}
    assert user["role"] == "user" and user["content"].startswith(
        "Q t1?\n\nAttached file: notes.txt"
    )
    assert "x" * 50 + "```" + "y" * 7 in user["content"]  # 50 + 3 + 7 = 60 characters shown
    assert "y" * 8 not in user["content"]
    assert "````" in user["content"]  # the fence outgrows the file's own ```
    assert "[clipped: the first 60 of 103 characters are shown]" in user["content"]
    named = scoring.build_messages(items[1])[1]["content"]
    assert "Attached file: pic.png (100 bytes). Its content is not included" in named


def test_build_messages_without_attachment_is_the_question():
    item = gaia.load("demo", task_ids=["demo-l1-01"])[0]
    assert scoring.build_messages(item)[1]["content"] == "What is 17 multiplied by 23?"


# ----------------------------------------------------------------------------- records


def test_score_builds_records_with_errors_and_no_answers(tmp_path):
    items = gaia.load(
        write_jsonl(tmp_path, [row("a", 1, "1,000"), row("b", 2, "Paris"), row("c", 3, "?")])
    )
    preds = [
        pred("S", "a", "Thinking...\nFINAL ANSWER: 1,000", steps=4),
        pred("S", "b", "It is Paris, I think."),  # no template: no answer
        pred("T", "a", None, error="HTTP 500 after 3 retries"),
        pred("T", "b", "FINAL ANSWER: paris"),
        pred("T", "c", "FINAL ANSWER: 3"),  # hidden truth: no verdict
    ]
    recs = gaia.score(items, preds)
    assert list(recs.columns) == [*scoring.RECORD_COLUMNS, "steps"]
    by = {(r.system, r.task_id): r for r in recs.itertuples()}
    assert (
        by["S", "a"].correct
        and by["S", "a"].extracted_answer == "1,000"
        and by["S", "a"].steps == 4
    )
    assert not by["S", "b"].correct and by["S", "b"].no_answer and by["S", "b"].error is None
    assert not by["T", "a"].correct and not by["T", "a"].no_answer
    assert by["T", "a"].error == "HTTP 500 after 3 retries" and by["T", "a"].model_answer is None
    assert by["T", "b"].correct and by["T", "b"].level == 2
    assert by["T", "c"].correct is None and by["T", "c"].expected is None
    with pytest.raises(gaia.GaiaDataError, match="hidden test answers"):
        gaia.level_accuracy(recs)


@pytest.mark.parametrize(
    ("preds", "message"),
    [
        ([pred("S", "zz", "x")], r"unknown task ids \['zz'\]"),
        ([pred("S", "a", "x"), pred("S", "a", "y")], r"duplicate \(system, task_id, attempt\)"),
        ([{"system": "S", "task_id": "a"}], r"missing column\(s\) \['output'\]"),
    ],
)
def test_score_rejects_bad_predictions(tmp_path, preds, message):
    items = gaia.load(write_jsonl(tmp_path, [row("a", 1, "1")]))
    with pytest.raises(gaia.GaiaDataError, match=message):
        gaia.score(items, preds)
