"""HLE report sentences: the numbers they quote are the metrics' numbers, names are escaped,
undefined official values say why."""

from __future__ import annotations

import pandas as pd

from evalbench.hle import report


def test_the_key_result_quotes_the_tables_and_escapes_names(result):
    text = report.key_result(result)
    row_ = result.summary.systems.iloc[0]
    assert "&lt;b&gt;sys&lt;/b&gt;" in text and "<b>sys</b> (" not in text
    assert f"({row_.correct} of 30;" in text and f"{row_.accuracy:.1%}" in text
    assert f"official {row_.official_pct:.2f}% ± {row_.wald_pct:.2f}%" in text
    assert "calibration error official undefined (30 judged items &lt; 100)" in text
    assert f"corrected {row_.calib_corrected_pct:.1f}" in text
    assert "(simulated)" in text


def test_the_size_sentence_uses_the_studys_confidence_level(result):
    # it said "95%" (and used z = 1.96) whatever confidence_level was
    params = result.params.model_copy(update={"confidence_level": 0.9})
    data = report.data_sentence(result._replace(params=params))
    # 1.645·√(0.25/30) = 0.1502
    assert "a 90% half-width of about ±15.0%" in data and "95%" not in data


def test_official_calibration_text_for_each_case():
    base = {"n_calibration_official": 250, "calib_official_note": None}
    assert (
        report.official_calibration_text({**base, "calib_official_pct": 13.000000000000002}) == "13"
    )
    one_bin = {**base, "calib_official_pct": 0.0, "calib_official_note": "one bin"}
    assert report.official_calibration_text(one_bin) == "0 (one bin, skipped)"
    undefined = {"n_calibration_official": 42, "calib_official_pct": float("nan")}
    assert report.official_calibration_text(undefined) == "undefined (42 judged items < 100)"


def test_data_and_calibration_sentences(result):
    data = report.data_sentence(result)
    assert "30 questions (30 exactMatch, 0 multipleChoice) in 1 category" in data
    assert "Questions with an image: 0" in data
    # expected_half_width(30) = 1.96·√(0.25/30) = 0.1789
    assert "±17.9%" in data
    assert (
        "&lt;b&gt;sys&lt;/b&gt;: 30 judged items, fewer than 100, so the official function "
        "fails (undefined)" in report.calibration_sentence(result)
    )
    assert report.notes(result) == [
        "<b>sys</b>: official calibration error undefined (< 100 judged items)"
    ]  # the index escapes notes itself


def test_the_truth_section_says_why_it_is_empty(result):
    assert report.truth_note(result) == ""  # a simulated system: the table has its row
    assert result.summary.truth["system"].tolist() == ["<b>sys</b>"]
    empty = result.summary._replace(truth=result.summary.truth.iloc[:0])
    assert "No simulated system" in report.truth_note(result._replace(summary=empty))


def test_undefined_official_calibration_names_the_studys_bin_size(result):
    # it said "< 100" whatever calibration_bin_size was
    params = result.params.model_copy(update={"calibration_bin_size": 50})
    text = report.key_result(result._replace(params=params))
    assert "calibration error official undefined (30 judged items &lt; 50)" in text


def test_unscored_examples_take_turns_across_systems(result):
    # the first six in record order were all the first system's: the others' never showed
    rows = [{"system": "a", "id": f"a{i}", "status": "unscored"} for i in range(8)]
    rows += [{"system": "b", "id": "b0", "status": "scored"},
             {"system": "b", "id": "b1", "status": "unscored"}]  # fmt: skip
    records = pd.DataFrame(rows)
    shown = report.unscored_examples(result._replace(records=records), limit=4)
    assert [r["id"] for r in shown] == ["a0", "b1", "a1", "a2"]


def test_findings_state_each_accuracy_in_words_and_the_answers_counted_wrong(result):
    row_ = result.summary.systems.iloc[0]
    found = report.findings(result)
    assert (
        f"&lt;b&gt;sys&lt;/b&gt; (simulated) about {row_.accuracy * 100:.0f}% of 30 "
        f"questions, likely between {row_.ci_low * 100:.0f}% and {row_.ci_high * 100:.0f}%"
    ) in found.key_result
    # 30 questions: 1.96 · sqrt(0.25 / 30) = 0.179 -> ±18 points
    assert found.caveats[-1].startswith("Only 30 questions: each share is known to about ±18")
    lost = result.summary.systems.assign(unscored=[3], no_response=[1], scored=[26])
    found = report.findings(result._replace(summary=result.summary._replace(systems=lost)))
    assert found.caveats[0].startswith(
        "4 answers count as wrong without being judged right or wrong (the official "
        "denominator): &lt;b&gt;sys&lt;/b&gt; 3 unscored and 1 without an answer"
    )
