"""HLE report sentences: the numbers they quote are the metrics' numbers, names are escaped,
undefined official values say why, and the expert sentences read the agreement table."""

from __future__ import annotations

import pytest
import yaml
from hle.cases import row, write_jsonl

from evalbench import hle
from evalbench.hle import report
from evalbench.runs import open_run


@pytest.fixture
def result(tmp_path):
    dataset = write_jsonl(tmp_path / "q.jsonl", [row(f"q{i}", answer=str(i)) for i in range(30)])
    data = {"study": "hle", "title": "t", "bootstrap_rounds": 50, "dataset": str(dataset),
            "systems": [{"name": "<b>sys</b>", "sim": {"accuracy": 0.5}}],
            "judge": {"name": "judge", "sim": {"accuracy": 1.0}},
            "expert": {"judge": {"name": "rubric", "sim": {"noise": 5}}}}  # fmt: skip
    path = tmp_path / "hle_report.yaml"
    path.write_text(yaml.safe_dump(data))
    run = open_run(path)
    return hle.run(run)


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


def test_expert_sentences_read_the_agreement_table(result):
    agreement = result.expert.summary.agreement.set_index("dimension").loc["overall"]
    text = report.agreement_sentence(result)
    assert f"{agreement.within_k:.0%} of {int(agreement.n)} answers" in text
    assert f"bias of {agreement.bias:+.1f} points" in text
    rho = result.expert.summary.confidence_rho
    assert f"{rho:.2f}" in report.confidence_sentence(result)
    wide = report.cells_wide(result, "dataset")
    assert list(wide.columns) == ["category", "difficulty", "n", *hle.DIMENSIONS, "overall"]
    assert report.heatmap_sources(result)[0] == "dataset"
