"""Report sentences: numbers from the metrics, the reference grader named beside them."""

from __future__ import annotations

from browsecomp.helpers import write_csv, write_params

from evalbench import browsecomp
from evalbench.browsecomp import report
from evalbench.studies import open_run


def test_the_key_sentence_names_the_reference_grader(tmp_path):
    data = write_csv(tmp_path / "bc.csv", [("q1", "a1", "t"), ("q2", "a2", "t")])
    systems = [{"name": "s", "provider": "sim", "sim": {"accuracy": 1.0}}]
    grader = {"name": "g", "provider": "sim", "sim": {"accuracy": 1.0}}
    params = write_params(tmp_path, systems=systems, dataset=str(data), grader=grader, examples=1)
    result = browsecomp.run(open_run(params))
    key = report.key_result(result)
    assert "100.0% [" in key and "the published simple-evals grader 0.0%" in key
    assert report.notes(result) == [
        "the published simple-evals grader would score 0% (group(0) bug)"
    ]
    assert len(result.examples) == 1 and "q1" in report.examples_html(result)


def test_the_effort_caption_says_when_no_system_is_an_agent(tmp_path):
    data = write_csv(tmp_path / "bc.csv", [("q1", "a1", "t")])
    systems = [{"name": "chat", "provider": "sim", "sim": {"accuracy": 1.0}}]
    grader = {"name": "g", "provider": "sim"}
    result = browsecomp.run(
        open_run(write_params(tmp_path, systems=systems, dataset=str(data), grader=grader))
    )
    assert report.effort_display(result).empty
    assert report.effort_caption(result).endswith("no system in this run is an agent")


def test_findings_give_the_graded_share_in_words_and_the_published_graders_reading(tmp_path):
    data = write_csv(tmp_path / "bc.csv", [("q1", "a1", "t"), ("q2", "a2", "t")])
    systems = [{"name": "s", "provider": "sim", "sim": {"accuracy": 1.0}}]
    grader = {"name": "g", "provider": "sim", "sim": {"accuracy": 1.0}}
    params = write_params(tmp_path, systems=systems, dataset=str(data), grader=grader)
    found = report.findings(browsecomp.run(open_run(params)))
    # 2 of 2 right: Wilson 95% [0.342, 1.0]
    assert "s (simulated) about 100% of 2 graded questions, likely between 34% and 100%" in (
        found.key_result
    )
    assert found.caveats[0] == (
        "The published simple-evals grader would report s 0% on the same verdicts: it compares "
        "the whole matched line (match.group(0)) with “yes”, so it counts a correct verdict "
        "wrong whenever the grader follows the format."
    )
