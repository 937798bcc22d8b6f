"""The arena notebook's sentences: numbers, labels and escaping, checked by hand."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from evalbench.agreement import PositionBias
from evalbench.arena import report
from evalbench.arena.records import ArenaParams, ArenaResult
from evalbench.ratings import rate_battles, win_rate_vs
from evalbench.stats import Interval

X = "<b>x</b>"  # a system name with markup: must come out escaped


def params(**extra) -> ArenaParams:
    return ArenaParams.model_validate({
        "study": "arena", "title": "t", "bootstrap_rounds": 50,
        "systems": [{"name": X, "provider": "sim"}, {"name": "y", "provider": "sim"}],
        "judge": {"name": "j", "provider": "sim"}, **extra,
    })  # fmt: skip


def result(**changes) -> ArenaResult:
    """x beats y 30 times of 40 (the pair in both seats), y pinned at 1000."""
    rows = [(X, "y", "a"), ("y", X, "b"), (X, "y", "a"), (X, "y", "b")] * 10
    battles = pd.DataFrame(rows, columns=["model_a", "model_b", "winner"])
    p = params(pairing="vs_baseline", baseline="y")
    rated = rate_battles(battles, rng=np.random.default_rng(0), rounds=50, anchor="y")
    usage = pd.DataFrame({
        "system": [X, "j", "y"], "calls": [40, 80, 40], "errors": [2, 0, 0],
        "error_reasons": [{"http_500": 2}, {}, {}],
    })  # fmt: skip
    base = ArenaResult(
        params=p, prompts=[], answers=pd.DataFrame(), judgments=pd.DataFrame(), battles=battles,
        counts={}, anchor="y", ratings=rated, table=rated.table, truth=None,
        versus=win_rate_vs(battles, "y"), position=None, longer=None, means=None, usage=usage,
        simulated=frozenset({"y", "j"}),
    )  # fmt: skip
    return base._replace(**changes)


def test_key_result_rates_each_system_with_its_own_label_and_failed_calls():
    text = report.key_result(result())
    # 30 wins of 40: x = 1000 + 400·log10(30/10) = 1190.8 -> "1191"
    assert 1000 + 400 * math.log10(3) == pytest.approx(1190.85, abs=0.01)
    assert "&lt;b&gt;x&lt;/b&gt; (real; 2 of 40 calls failed: http_500 × 2) 1191 [" in text
    assert "y (simulated) 1000." in text  # the anchor: fixed, so no interval
    assert "from 40 battles judged by j (simulated); y fixed at 1000:" in text
    assert "<b>x</b>" not in text


def test_system_label_is_per_system():
    r = result()
    assert report.system_label(r, "y") == "simulated"
    assert report.system_label(r, X) == "real; 2 of 40 calls failed: http_500 × 2"


def test_headlines_round_and_keep_the_first_three():
    bias = PositionBias(n=4, consistency=2 / 3, n_inconsistent=1, first_preference=1.0,
                        first_position_win_rate=0.5)  # fmt: skip
    heads = report.headlines(result(position=bias))
    # 2/3 -> 0.667; x's win rate vs y: (30 wins + 0 ties) / 40 = 0.75; top rating 1190.85 -> 1190.8
    assert heads == {
        "position consistency": 0.667,
        f"{X} win rate vs y": 0.75,
        f"top: {X}": 1190.8,
    }


def test_pairwise_judge_sentence_shows_the_percentages():
    bias = PositionBias(n=4, consistency=0.5, n_inconsistent=2, first_preference=0.5,
                        first_position_win_rate=3 / 8)  # fmt: skip
    text = report.pairwise_judge(result(position=bias, longer=(Interval(0.25, 0.1, 0.5, 0.95), 4)))
    assert "<b>50.0%</b> of 4 pairs" in text and "of the 2 inconsistent pairs, 50.0%" in text
    assert "won 37.5% of all verdicts" in text  # 3 of 8 verdicts
    assert "= <b>25.0%</b> (95% Wilson interval 10.0%–50.0%, 4 decisive pairs" in text
    assert report.pairwise_judge(result()).startswith("<p>Not used in this run")


def test_ratings_intro_and_versus_table():
    r = result()
    assert "40 battles (per pair" in report.ratings_intro(r)
    assert "anchored at y = 1000; online Elo uses K=4" in report.ratings_intro(r)
    centred = report.ratings_intro(result(anchor=None, params=params(prior=0.5)))
    assert "centred at 1000, with 0.5 pseudo-ties added per pair (prior)" in centred
    versus = report.versus_table(r)
    assert "Win rate against y (ties = ½), 95% Wilson intervals" in versus
    assert '<td style="text-align:right">0.750</td>' in versus
    assert "Not used in this run" in report.versus_table(result(versus=None))


def test_ratings_table_shows_only_present_columns_and_notes_need_truth():
    r = result()
    html = report.ratings_table(r)
    assert "true_rating" not in html and "online_elo" in html
    assert report.truth_note(r) == ""  # pairwise without a truth table: nothing to say


# --------------------------------------------------------------------------- findings


def test_findings_rate_the_systems_and_mark_the_anchor_fixed():
    found = report.findings(result())
    rated = result().table.set_index("model")
    low, high = rated.loc[X, "ci_low"], rated.loc[X, "ci_high"]
    assert (
        f"&lt;b&gt;x&lt;/b&gt; (real) about 1191, likely between {low:.0f} and {high:.0f}"
        in found.key_result
    )  # 1000 + 400·log10(30/10) = 1190.8
    assert "y (simulated) is the anchor, fixed at 1000" in found.key_result
    assert "from 40 battles judged by j (simulated)" in found.key_result
    assert "j" not in [r.split(" ")[0] for r in found.key_result.split("; ")]  # no judge rating


def test_the_judges_position_and_length_bias_are_the_top_risks_with_their_numbers():
    # 20 pairs in both orders, 10 inconsistent (consistency 50%), 8 of them for the first shown
    bias = PositionBias(
        n=20, consistency=0.5, n_inconsistent=10, first_preference=0.8, first_position_win_rate=0.6
    )
    longer = (Interval(0.83, 0.70, 0.91, 0.95), 30)
    found = report.findings(result(position=bias, longer=longer))
    assert found.caveats[0] == (
        "These ratings are what one judge, j (simulated), prefers, not a measure of correctness: "
        "its biases (the risks below) move them."
    )
    position, length = found.risks
    assert position.startswith("<b>The judge is position-inconsistent</b>: in 10 of 20 pairs")
    assert "(50%) its verdict changed when the two answers swapped places" in position
    assert "counted as ties" in position  # the default policy: inconsistent -> tie
    assert length.startswith("<b>The judge prefers the longer answer</b>: its verdict")
    assert "favoured the longer one in about 83% of 30 decisive pairs" in length
    assert "likely between 70% and 91%; 50% would be no preference" in length


def test_a_judge_without_a_clear_bias_is_no_risk():
    bias = PositionBias(
        n=20, consistency=0.95, n_inconsistent=1, first_preference=1.0, first_position_win_rate=0.5
    )
    longer = (Interval(0.55, 0.40, 0.69, 0.95), 30)  # 50% inside the interval
    assert report.findings(result(position=bias, longer=longer)).risks == ()


def test_a_ranking_that_changes_once_length_is_controlled_is_the_top_caveat():
    lc = pd.DataFrame(
        {
            "model": ["a", "b"],
            "win_rate": [70.0, 60.0],
            "lc_win_rate": [52.0, 58.0],
            "lc_standard_error": [1.0, 1.0],
            "note": ["", ""],
        }
    )
    found = report.findings(result(lc=lc))
    assert found.caveats[0] == (
        "The order changes once answer length is controlled, to b then a (win rates against "
        "y, raw → controlled for answer length (AlpacaEval 2.0's length-controlled win rate): "
        "a 70% → 52%, b 60% → 58%)."
    )
    same = lc.assign(lc_win_rate=[62.0, 58.0])
    found = report.findings(result(lc=same))
    assert found.caveats[0].startswith("These ratings are what one judge")  # nothing moved
    assert found.caveats[-1].endswith("a 70% → 62%, b 60% → 58%; the order stays the same.")
