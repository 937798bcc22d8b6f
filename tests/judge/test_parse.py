"""evalbench.judge.parse: every path a rubric judge reply is parsed by, and every way it is unscored."""

from __future__ import annotations

import json

import pytest
from judge.cases import fine as _fine
from judge.cases import scores_json as _json

from evalbench import judge as J


@pytest.mark.parametrize(
    ("text", "method"),
    [
        ("Here you go:\n```json\n" + _json(8) + "\n```\nThanks.", "json"),
        ("My verdict: " + _json(8) + " -- end", "json"),
        ('{"accuracy": "8/10", "completeness": "6", "clarity": 9.0}', "json"),
        (
            '{"scores": {"accuracy": {"score": 8}, "completeness": "6 out of 10", "clarity": 9}}',
            "json",
        ),
        ("Accuracy: 8\n**Completeness**: 6/10\nclarity = 9", "dimension_text"),
        ('{"scores": {"accuracy": 8, "completeness": 6, "clarity": 9', "dimension_text"),
    ],
)
def test_parse_paths_fine_grained(text: str, method: str) -> None:
    result = J.parse_rubric_output("fine_grained", text)
    assert result.status == "scored", result.unscored_reason
    assert result.scores == {"accuracy": 8.0, "completeness": 6.0, "clarity": 9.0}
    assert result.weighted_score == pytest.approx(0.5 * 8 + 0.3 * 6 + 0.2 * 9)
    assert result.parse_method == method
    assert result.raw == text


def test_parse_json_with_latex_backslashes_and_extras() -> None:
    text = (
        '{"error_analysis": "The step \\frac{1}{2}\\cdot\\pi is wrong", '
        '"scores": {"accuracy": 4, "completeness": 5, "clarity": 7}, '
        '"reason": "uses \\alpha wrongly", "suggestion": "fix \\beta"}'
    )
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)  # \c and \p are invalid JSON escapes: the repair is needed
    result = J.parse_rubric_output("fine_grained", text)
    assert result.status == "scored"
    assert result.extras["error_analysis"] == "The step \\frac{1}{2}\\cdot\\pi is wrong"
    assert result.extras["reason"] == "uses \\alpha wrongly"
    assert result.passed is False  # accuracy 4 < 7


@pytest.mark.parametrize(
    ("text", "method"),
    [
        ("The answer is solid.\n\nRating: [[7]]", "bracket"),
        ("[[ 7 ]]", "bracket"),
        ("Rating: 7", "labelled"),
        ("Overall score: 7/10.", "labelled"),
        ("Score = 7", "labelled"),
        ('{"explanation": "ok", "scores": {"rating": 7}}', "json"),
        ('{"explanation": "ok", "rating": "7"}', "json"),
    ],
)
def test_parse_paths_single_score(text: str, method: str) -> None:
    result = J.parse_rubric_output("single_rating", text)
    assert (result.status, result.scores, result.parse_method) == (
        "scored",
        {"rating": 7.0},
        method,
    )


MALFORMED = {
    "prose": ("The answer is decent but I will not give a number.", "no_score"),
    "truncated": (
        '{"error_analysis": "x", "scores": {"accuracy": 8, "completeness": ',
        "missing_dimension",
    ),
    "eleven": (_json(11), "out_of_range"),
    "nan": ('{"scores": {"accuracy": NaN, "completeness": 6, "clarity": 9}}', "not_finite"),
    "nan_string": (_json("NaN"), "not_finite"),
    "infinity": (
        '{"scores": {"accuracy": Infinity, "completeness": 6, "clarity": 9}}',
        "not_finite",
    ),
    "empty": ("", "empty"),
    "whitespace": ("  \n", "empty"),
    "boolean": (_json(True), "boolean"),
    "missing": ('{"scores": {"accuracy": 8, "clarity": 9}}', "missing_dimension"),
    "wrong_scale": (_json("8/5"), "ambiguous_scale"),
    "range_string": (_json("7-8"), "not_a_number"),
    "list": (_json([8]), "not_a_number"),
    "negative": (_json(-1), "out_of_range"),
    "two_values": ("accuracy: 8\naccuracy: 3\ncompleteness: 6\nclarity: 9", "ambiguous"),
    "json_without_dimensions": ('{"verdict": "good"}', "no_score"),
}


def test_malformed_outputs_are_unscored_and_counted() -> None:
    results = [J.parse_rubric_output("fine_grained", text) for text, _ in MALFORMED.values()]
    for (name, (text, kind)), result in zip(MALFORMED.items(), results, strict=True):
        assert result.status == "unscored", name
        assert result.unscored_kind == kind, (name, result.unscored_reason)
        assert result.unscored_reason, name
        assert result.raw == text, name  # raw text kept
        assert result.scores == {} and result.weighted_score is None and result.passed is None
    frame = J.results_frame(results)
    assert frame["status"].value_counts().to_dict() == {"unscored": len(MALFORMED)}
    assert frame["unscored_kind"].value_counts()["not_finite"] == 3
    # no output parsed: with its rubric, the frame still has a score column per dimension
    # (all missing), which judge_golden's tables index (it crashed: KeyError 'score_accuracy')
    rubric = J.get_rubric("fine_grained")
    scored = J.results_frame(results, rubric)
    columns = [f"score_{d.name}" for d in rubric.dimensions]
    assert set(columns) <= set(scored.columns) and scored[columns].isna().all(axis=None)


def test_single_score_malformed() -> None:
    cases = {
        "Rating: [[11]]": "out_of_range",
        "Rating: [[7]] ... on reflection [[8]]": "ambiguous",
        "rating: 7 but the final answer is [[8]]": "ambiguous",
        "Rating: [[8/5]]": "ambiguous_scale",
        "Great answer, ten out of ten!": "no_score",
        '{"explanation": "fine", "scores": {"rating": false}}': "boolean",
    }
    kinds = {t: J.parse_rubric_output("single_rating", t).unscored_kind for t in cases}
    assert kinds == cases


def test_multi_dimension_rubric_ignores_single_score_patterns() -> None:
    result = J.parse_rubric_output("fine_grained", "Rating: [[7]]")
    assert result.status == "unscored" and result.unscored_kind == "no_score"


def test_extra_number_fields_are_checked_but_not_fatal() -> None:
    dims = ("accuracy", "completeness", "relevance", "coherence", "depth", "timeliness")
    payload = {"scores": dict.fromkeys(dims, 70), "overall": 95, "confidence": "very"}
    result = J.parse_rubric_output("hle", json.dumps(payload))
    assert result.status == "scored"
    assert result.weighted_score == pytest.approx(70.0)  # computed, the model's 95 is not used
    assert result.extras["overall"] == 95.0
    assert result.extras["confidence"] is None
    assert result.notes == ["confidence: 'very' is not a number (extra field kept as null)"]


def test_required_output_field() -> None:
    rubric = _fine().model_copy(deep=True)
    rubric.output_fields[1].required = True  # reason
    assert J.parse_rubric_output(rubric, _json(8, reason="ok")).status == "scored"
    missing = J.parse_rubric_output(rubric, _json(8))
    assert (missing.status, missing.unscored_kind) == ("unscored", "missing_field")
