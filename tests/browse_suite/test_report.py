"""Report sentences: numbers from the metrics, untrusted names escaped."""

from __future__ import annotations

import pytest
from browse_suite.helpers import tasks_file, write_params

from evalbench import browse_suite, display
from evalbench.browse_suite import report
from evalbench.studies import open_run

EVIL = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    """One simulated agent named like a script on the six level-1 tasks (run once)."""
    tmp = tmp_path_factory.mktemp("suite_report")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("EVALBENCH_CACHE", str(tmp / "cache"))
        env.setenv("EVALBENCH_OUTPUTS", str(tmp / "outputs"))
        tasks = tasks_file(tmp, lambda t: t["level"] == 1)
        system = {
            "name": EVIL,
            "provider": "sim",
            "sim": {"accuracy": 0.5},
            "sim_agent": {"mean_steps": {"default": 2}},
        }
        return browse_suite.run(open_run(write_params(tmp, systems=[system], tasks=str(tasks))))


def test_sentences_escape_names_and_state_their_denominators(result):
    key = report.key_result(result)
    assert EVIL not in key and "&lt;script&gt;" in key
    row = result.levels[result.levels["level"] == "all"].iloc[0]
    assert f"success {row['success_rate']:.1%}" in key and "(simulated agent)" in key
    assert "not answered = 0" in key
    assert report.headlines(result) == {f"suite success {EVIL}": f"{row['success_rate']:.1%}"}
    assert EVIL not in report.failures_html(result)


def test_each_table_caption_names_its_own_grouping(result):
    assert report.levels_caption(result).startswith("By level: end states")
    assert report.levels_caption(result, by="kind").startswith("By task type: end states")


def test_counts_in_the_key_sentence_agree_with_their_noun(result):
    levels = result.levels.copy()
    overall = levels["level"] == "all"
    levels.loc[overall, ["timeout", "error"]] = [1, 2]
    key = report.key_result(result._replace(levels=levels))
    assert "1 timeout, 2 errors" in key
    levels.loc[overall, ["timeout", "error"]] = [0, 1]
    key = report.key_result(result._replace(levels=levels))
    assert "0 timeouts, 1 error." in key


def test_the_tasks_table_shows_whole_seconds_as_whole_numbers(result):
    table = report.tasks_table(result)
    assert table["max_time_s"].tolist() == [60] and table["max_time_s"].dtype.kind == "i"
    html = display.table_html(table)
    assert ">60<" in html and "60.000" not in html


def test_findings_give_the_success_share_in_words_and_the_offline_web_first(result):
    row = result.levels[result.levels["level"] == "all"].iloc[0]
    found = report.findings(result)
    assert (
        f"&lt;script&gt;alert(1)&lt;/script&gt; (simulated agent) about "
        f"{row['success_rate'] * 100:.0f}%, likely between {row['success_low'] * 100:.0f}% and "
        f"{row['success_high'] * 100:.0f}%"
    ) in found.key_result
    assert "Share of the 6 tasks done" in found.key_result
    assert found.caveats[0].startswith("The web is evalbench's own small invented one")
    assert EVIL not in " ".join(found.caveats)
