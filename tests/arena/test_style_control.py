"""Style control and the length-controlled win rate in the arena study, on the shipped demo
(simulated judge with a known length bias: +0.4 log-odds for the longer answer)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalbench import arena
from evalbench.arena import report

DEMO = Path(__file__).resolve().parents[2] / "params" / "arena_demo.yaml"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    from evalbench.settings import ENV_CACHE, ENV_OUTPUTS
    from evalbench.studies import open_run

    base = tmp_path_factory.mktemp("style")
    with pytest.MonkeyPatch.context() as mp:  # one demo run shared by the module's tests
        mp.setenv(ENV_CACHE, str(base / "cache"))
        mp.setenv(ENV_OUTPUTS, str(base / "outputs"))
        run = open_run(DEMO, [])
        return run, arena.run(run)


@pytest.mark.slow
def test_controlled_ratings_recover_the_truth_better_than_raw(demo):
    _, result = demo
    r = result.style.recovery
    # the demo's numbers (report.recovery_sentence): RMSE 24.6 -> 20.3 points, 21.9 -> 16.6
    # after the best line through the truth; the order of the four systems is right in both
    assert r["rmse_style"] < r["rmse_raw"] and r["shape_rmse_style"] < r["shape_rmse_raw"]
    assert r["spearman_raw"] == r["spearman_style"] == 1.0
    table = result.style.table.set_index("model")
    # the verbose system loses its length bonus, the terse weak one gets its penalty back
    assert table.loc["sim-verbose", "style_rating"] < table.loc["sim-verbose", "rating"]
    assert table.loc["sim-weak", "style_rating"] > table.loc["sim-weak", "rating"]


@pytest.mark.slow
def test_length_coefficient_positive_markdown_not_estimable(demo):
    _, result = demo
    coefs = result.style.coefficients.set_index("feature")
    assert coefs.loc["tokens", "ci_low"] > 0  # the judge's length bias, found
    assert not coefs.loc[["headers", "lists", "bold"], "estimable"].any()  # plain-text answers
    assert "Never varied, left out: headers, lists, bold" in report.style_intro(result)


@pytest.mark.slow
def test_length_controlled_win_rates_move_toward_the_truth(demo):
    _, result = demo
    lc = result.lc.set_index("model")
    assert list(lc.index) == ["sim-strong", "sim-verbose", "sim-weak"]
    # longer answers won more: the verbose system's LC win rate is below its raw one, the
    # terse weak system's above
    assert lc.loc["sim-verbose", "lc_win_rate"] < lc.loc["sim-verbose", "win_rate"]
    assert lc.loc["sim-weak", "lc_win_rate"] > lc.loc["sim-weak", "win_rate"]
    assert "length-controlled" in report.lc_sentence(result)


@pytest.mark.slow
def test_records_hold_style_ratings_coefficients_and_lc(demo):
    run, result = demo
    records = run.dir / "records"
    ratings = [json.loads(x) for x in (records / "ratings.jsonl").open()]
    by_model = {r["model"]: r for r in ratings}
    assert by_model["sim-verbose"]["rank_change"] == 0
    assert by_model["sim-verbose"]["lc_win_rate"] == pytest.approx(
        result.lc.set_index("model").loc["sim-verbose", "lc_win_rate"])  # fmt: skip
    coefs = [json.loads(x) for x in (records / "style_coefficients.jsonl").open()]
    assert [c["feature"] for c in coefs] == ["tokens", "headers", "lists", "bold"]
    battle = json.loads((records / "battles.jsonl").open().readline())
    assert battle["tokens_a"] > 0 and battle["headers_a"] == 0
