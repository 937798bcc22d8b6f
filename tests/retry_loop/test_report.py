"""evalbench.retry_loop.report and .figures on a small simulated loop: what they say matches
the result's numbers, names are escaped, and the parts a run did not compute say so."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pytest
import yaml
from figure_checks import legends_over_data
from matplotlib.figure import Figure

from evalbench import retry_loop as RL
from evalbench.retry_loop import figures, report
from evalbench.retry_loop.records import RetryLoopResult

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> RetryLoopResult:
    """8 demo items, 2 rounds, both arms and a second judge."""
    from evalbench.studies import open_run

    data = yaml.safe_load((ROOT / "params" / "retry_loop_demo.yaml").read_text())
    data.update(limit=8, rounds=2, bootstrap_rounds=50)
    data["generator"]["name"] = "gen <b>x</b>"
    path = tmp_path_factory.mktemp("loop") / "loop.yaml"
    path.write_text(yaml.safe_dump(data))
    return RL.run(open_run(path))


@pytest.mark.slow
def test_headlines_and_key_result_carry_the_numbers(result: RetryLoopResult) -> None:
    heads = report.headlines(result)
    last = result.gains[result.gains["arm"] == "suggestion"].iloc[-1]
    text = (
        f"{last['cumulative']:+.2f} [{last['cumulative_low']:+.2f}, {last['cumulative_high']:+.2f}]"
    )
    assert heads["gain after 2 rounds (suggestion arm)"] == text
    assert list(heads)[1:] == ["suggestion − control", "self-preference (gap difference)"]
    key = report.key_result(result)
    assert text in key and "(simulated)" in key


@pytest.mark.slow
def test_sentences_escape_names_and_say_what_is_simulated(result: RetryLoopResult) -> None:
    intro = report.intro(result)
    assert "gen &lt;b&gt;x&lt;/b&gt; (simulated)" in intro and "<b>x</b>" not in intro
    assert "8 items" in intro
    assert "SIMULATED LOOP" in report.simulated_notice(result)
    assert "self-preference (+0.5)" in report.gains_sentence(result)
    assert "regression to the mean" in report.selection_note(result)
    assert "Simulated: the loop judge adds +0.5" in report.self_preference_sentence(result)
    e = result.second.effect if result.second is not None else None
    assert e is not None
    second = f"{e['effect']:+.2f} [{e['effect_low']:+.2f}, {e['effect_high']:+.2f}]"
    assert f"the second judge puts the effect on the final answers at {second}" in (
        report.effect_sentence(result)
    )


@pytest.mark.slow
def test_tables_have_their_rows(result: RetryLoopResult) -> None:
    status, _ = report.status_table(result)
    assert status["answers"].sum() == len(result.rounds)
    assert status[["round", "arm"]].iloc[:2].values.tolist() == [[0, "suggestion"], [0, "control"]]
    gains, caption = report.gains_table(result)
    assert len(gains) == 2 * 2 and "true_gain" in gains and "Holm" in caption
    assert len(report.costs_table(result)[0]) == 2 * 3
    assert [len(t) for t, _ in report.effect_table(result)] == [2]
    assert [len(t) for t, _ in report.self_preference_table(result)] == [2]


@pytest.mark.slow
def test_figures_draw(result: RetryLoopResult) -> None:
    for figure in (figures.gains, figures.shares, figures.costs, figures.effect,
                   figures.self_preference):  # fmt: skip
        drawn = figures.drawn(figure, result)
        assert isinstance(drawn, Figure)
        assert legends_over_data(drawn) == [], figure.__name__
    labels = [t.get_text() for t in figures.self_preference(result).axes[0].get_yticklabels()]
    assert labels == ["suggestion arm gap", "control arm gap", "suggestion gap − control gap"]
    plt.close("all")


def test_parts_a_run_did_not_compute_say_so(result: RetryLoopResult) -> None:
    bare = result._replace(effect=None, second=None)
    assert "No control arm" in report.effect_sentence(bare) and report.effect_table(bare) == []
    assert "No second judge" in report.self_preference_sentence(bare)
    assert report.self_preference_table(bare) == []
    assert figures.drawn(figures.effect, bare) is None
    assert figures.drawn(figures.self_preference, bare) is None
    with pytest.raises(ValueError, match="no control arm"):
        figures.effect(bare)
    with pytest.raises(ValueError, match="no second judge"):
        figures.self_preference(bare)


def test_findings_give_the_gain_and_the_suggestions_effect_in_words(
    result: RetryLoopResult,
) -> None:
    found = report.findings(result)
    last = result.gains[result.gains["arm"] == "suggestion"].iloc[-1]
    eff = result.effect.iloc[-1] if result.effect is not None else None
    assert eff is not None
    assert (
        f"After 2 rounds, the answers retried with the judge's suggestion score about "
        f"{last['cumulative']:+.2f} points higher than the first answers (weighted score), "
        f"likely between {last['cumulative_low']:+.2f} and {last['cumulative_high']:+.2f}"
    ) in found.key_result
    assert f"the suggestion itself adds about {eff['effect']:+.2f}" in found.key_result
    # the demo's loop judge adds +0.5 to its own generator's retries: the second judge sees it
    d = result.second.difference if result.second is not None else None
    assert d is not None and d["difference_low"] > 0
    assert found.risks[0].startswith("<b>The loop judge favours the answers it helped write</b>")
    no_control = report.findings(result._replace(effect=None))
    assert no_control.caveats[0].startswith("No control arm: part of the gain is what any second")
