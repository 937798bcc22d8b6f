"""Expert-grading sentences and tables: the numbers they quote are the metrics' numbers, every
graded cell keeps its row with its answers and scored count (n, as the caption says), names
are escaped, and a set without human scores says there is no agreement."""

from __future__ import annotations

from hle_grading.cases import grade, result_of

from evalbench.hle_grading import report

ROWS = [
    grade("dataset", "a1", "Physics", "easy", 60.0, human=70.0),
    grade("dataset", "a2", "Physics", "easy", None, human=50.0),  # unscored
    grade("<i>sys</i>", "a1", "Physics", "easy", 40.0),
    grade("<i>sys</i>", "a2", "Physics", "easy", None, status="no_response"),
    grade("<i>sys</i>", "a3", "Physics", "hard", None),  # the cell's only answer: unscored
]


def test_a_cell_shows_its_answers_and_n_scored_as_the_caption_says():
    # Physics/easy had two dataset answers, one unscored: n (scored answers) is 1, and the
    # cell's two answers are shown beside it
    result = result_of(ROWS, systems=["<i>sys</i>"])
    wide = report.cells_wide(result, "dataset").set_index(["category", "difficulty"])
    assert wide.loc[("Physics", "easy"), ["answers", "n"]].tolist() == [2, 1]
    assert wide.loc[("Physics", "easy"), "overall"].startswith("60 ")
    caption = report.cells_caption(result, "dataset")
    assert "n = scored answers" in caption and "answers = answers graded" in caption


def test_a_cell_without_a_scored_answer_keeps_its_row():
    result = result_of(ROWS, systems=["<i>sys</i>"])
    wide = report.cells_wide(result, "<i>sys</i>").set_index(["category", "difficulty"])
    assert list(wide.index) == [("Physics", "easy"), ("Physics", "hard")]
    assert wide.loc[("Physics", "hard"), ["answers", "n"]].tolist() == [1, 0]
    assert wide.loc[("Physics", "hard"), "overall"] == "—"
    assert list(wide.columns[:2]) == ["answers", "n"]


def test_the_key_result_quotes_the_tables_and_escapes_names():
    result = result_of(ROWS, systems=["<i>sys</i>"])
    text = report.key_result(result)
    assert "<b>dataset</b> (the set&#x27;s own answers) 60.0 [" in text
    assert "(1 of 2 answers scored)" in text
    assert "&lt;i&gt;sys&lt;/i&gt;" in text and "<i>sys</i>" not in text
    assert "within ±10 points of the human baseline on 100% of 1 answers" in text  # |60 − 70|
    assert report.headlines(result) == {"mean overall dataset": 60.0,
                                        "within ±10 of humans": 1.0,
                                        "bias vs humans (points)": -10.0}  # fmt: skip
    assert report.notes(result) == ["2 of 5 judgments unscored"]


def test_without_a_human_baseline_there_is_no_agreement_and_no_nan():
    rows = [grade("dataset", "a1", "Physics", "easy", 60.0)]
    result = result_of(rows)
    assert "No scored answer has a human baseline" in report.agreement_sentence(result)
    heads = report.headlines(result)
    assert heads["within ±10 of humans"] == "undefined"  # never NaN in the manifest
    assert report.notes(result) == ["no scored answer has a human baseline"]
    assert "Too few answers" in report.confidence_sentence(result)


def test_findings_name_each_metric_with_its_interval_in_words():
    result = result_of(ROWS, systems=["<i>sys</i>"])
    found = report.findings(result)
    # dataset: one scored answer (60) of two: no interval from one value
    assert (
        "Mean overall score (0 to 100: the mean of the six rubric dimensions) the judge "
        "gave: the set&#x27;s own answers about 60.0 (1 of 2 answers scored)"
    ) in found.key_result
    assert "&lt;i&gt;sys&lt;/i&gt; (simulated) about 40.0" in found.key_result
    # |60 − 70| = 10 <= 10: within ±10 on 1 of 1; judge − human = −10 points
    assert (
        "Against the human scores, the judge's overall score is within ±10 points on "
        "about 100% of 1 answer"
    ) in found.key_result
    assert "and on average 10.0 points lower" in found.key_result
    assert found.caveats[-1] == (
        "2 of 5 gradings could not be scored (an unreadable verdict or a failed call): those "
        "answers are left out of the means."
    )


def test_findings_without_a_human_baseline_say_so_and_show_no_nan():
    rows = [grade("dataset", "a1", "Physics", "easy", 60.0)]
    found = report.findings(result_of(rows, systems=[]))
    assert "nan" not in " ".join([found.key_result, *found.caveats]).lower()
    assert found.caveats[0] == (
        "No scored answer has a human score: nothing here says how close the judge is to experts."
    )
