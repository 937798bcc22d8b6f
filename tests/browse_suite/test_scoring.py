"""Each criterion type scored by hand, the answer parser, the task score."""

from __future__ import annotations

import pytest

from evalbench.browse_suite import scoring as c


def _exact(**kw):
    return c.ExactCriterion(field="f", weight=1.0, **kw)


def test_exact_after_normalisation():
    crit = _exact(expected="09:00–20:00")  # an en dash
    assert c.score_exact(crit, "09:00 - 20:00").score == 1.0  # hyphen, spaces around it
    assert c.score_exact(crit, "09:00-21:00") == c.Scored(0.0, "got '09:00-21:00'")
    assert c.score_exact(_exact(expected="Priya Valdés"), "  priya VALDES. ").score == 1.0
    assert (
        c.score_exact(_exact(expected="01632 960 418", normalize="digits"), "(01632) 960-418").score
        == 1.0
    )
    assert c.score_exact(_exact(expected="FIC MAR 3", normalize="alnum"), "fic-mar-3").score == 1.0
    assert (
        c.score_exact(
            _exact(expected="Millbrook Tool Market", aliases=["Millbrook"]), "millbrook"
        ).score
        == 1.0
    )
    assert c.score_exact(_exact(expected="x"), None) == c.Scored(0.0, "missing")


def test_numeric_within_the_larger_tolerance():
    crit = c.NumericCriterion(field="f", weight=1.0, expected=4.95, tolerance=0.005)
    assert c.score_numeric(crit, "£4.95").score == 1.0
    assert c.score_numeric(crit, 4.956).score == 0.0  # off by 0.006 > 0.005
    rel = c.NumericCriterion(field="f", weight=1.0, expected=1066, tolerance=1, relative=0.01)
    assert c.score_numeric(rel, "1,076 mm").score == 1.0  # |1076 − 1066| = 10 ≤ 0.01 × 1066 = 10.66
    assert c.score_numeric(rel, "1,077").note == "off by 11"
    assert c.score_numeric(crit, "about five").note == "no number"
    minus = c.NumericCriterion(field="f", weight=1.0, expected=-14.2, tolerance=0.05)
    assert c.score_numeric(minus, "−14.2 °C").score == 1.0  # a Unicode minus


def test_set_is_coverage_times_precision():
    crit = c.SetCriterion(
        field="f", weight=1.0, expected=[["Tuesday", "Tue"], "Thursday", "Saturday"]
    )
    assert c.score_set(crit, ["tue", "Thursday"]).score == pytest.approx(
        2 / 3
    )  # 2 of 3, no penalty
    strict = crit.model_copy(update={"penalize_extra": True})
    # found 3 of 3 (coverage 1), 3 of the 4 given match (precision 3/4)
    assert c.score_set(
        strict, ["Tuesday", "Thursday", "Saturday", "Friday"]
    ).score == pytest.approx(0.75)
    # 2 of 3 found, and 2 of 2 given match: 2/3 × 1
    assert c.score_set(strict, "Tuesday and Thursday").score == pytest.approx(2 / 3)
    any_two = c.SetCriterion(field="f", weight=1.0, expected=["a", "b", "c"], need=2)
    assert c.score_set(any_two, ["c", "a"]).score == 1.0  # min(2, 2) / 2
    contains = c.SetCriterion(
        field="f", weight=1.0, expected=[["claw hammer", "hammer"]], match="contains"
    )
    assert c.score_set(contains, ["Claw Hammer (16 oz)"]).score == 1.0
    assert c.score_set(crit, []).note == "empty"
    with pytest.raises(ValueError, match="need=4 is more than the 3 expected items"):
        c.SetCriterion(field="f", weight=1.0, expected=["a", "b", "c"], need=4)


def test_dynamic_needs_the_format_and_a_value_the_page_showed():
    crit = c.DynamicCriterion(
        field="f", weight=1.0, pattern=r"TL-\d{5}", allowed=["TL-20931", "TL-20947"]
    )
    assert c.score_dynamic(crit, " TL-20947 ") == c.Scored(1.0, "match")
    assert c.score_dynamic(crit, "TL-20932") == c.Scored(0.0, "not shown")  # right format
    assert c.score_dynamic(crit, "TL-2093") == c.Scored(0.0, "format")
    anything = crit.model_copy(update={"allowed": []})
    assert c.score_dynamic(anything, "TL-99999").score == 1.0


def test_judge_criteria_are_unscored_without_a_grade_and_zero_without_a_text():
    crit = c.JudgeCriterion(field="a", weight=1.0, rubric="r", reference="ref")
    assert c.score_criterion(crit, "{}", {"a": "text"}, 0.7) == c.Scored(0.7, "judged")
    assert c.score_criterion(crit, "{}", {"a": "text"}, None) == c.Scored(None, "unscored")
    assert c.score_criterion(crit, "{}", {}, None) == c.Scored(0.0, "missing")
    assert not c.needs_judge(crit, "{}", {"a": "  "})
    assert c.parse_judge_score('{"score": 7, "reason": "ok"}') == 0.7
    assert c.parse_judge_score('```json\n{"score": 10.0}\n```') == 1.0
    for bad in ('{"score": 11}', '{"score": 6.5}', '{"score": "7"}', '{"score": true}', "seven"):
        assert c.parse_judge_score(bad) is None, bad


def test_the_answer_parser_reads_json_or_key_value_lines():
    assert c.parse_answer('Here: ```json\n{"Peak Month": "October", "total": 137}\n```') == {
        "peak_month": "October",
        "total": 137,
    }
    assert c.parse_answer("peak_month: October\ntotal: 137") == {
        "peak_month": "October",
        "total": "137",
    }
    assert c.parse_answer("I could not find it.") is None


def test_the_task_score_is_the_weighted_sum_and_none_when_unscored():
    scores = [c.Scored(1.0, ""), c.Scored(0.5, ""), c.Scored(0.0, "")]
    assert c.task_score(scores, [0.5, 0.3, 0.2]) == pytest.approx(0.5 * 1 + 0.3 * 0.5 + 0)  # 0.65
    assert c.task_score([c.Scored(1.0, ""), c.Scored(None, "unscored")], [0.5, 0.5]) is None
