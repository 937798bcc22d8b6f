"""The published-ratings notebook's sentences: numbers and escaping, checked by hand."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from evalbench import ratings
from evalbench.arena_public import report
from evalbench.arena_public.metrics import winner_counts
from evalbench.arena_public.records import ArenaPublicParams, ArenaPublicResult, RatedDataset
from evalbench.ratings import rate_battles


def result(**changes) -> ArenaPublicResult:
    """Arena-Hard-like battles: m beats base 30 times of 40 (10 of them ties split)."""
    rows = [("base", "m", "b")] * 25 + [("base", "m", "a")] * 5 + [("base", "m", "tie")] * 10
    battles = pd.DataFrame(rows, columns=["model_a", "model_b", "winner"])
    p = ArenaPublicParams.model_validate(
        {
            "study": "arena_public",
            "title": "t",
            "public": ["arena_hard_pr44"],
            "bootstrap_rounds": 50,
        }
    )
    rated = rate_battles(battles, rng=np.random.default_rng(0), rounds=50)
    base = ArenaPublicResult(
        params=p, rated={"arena_hard_pr44": RatedDataset(battles, rated)}, alpaca=None,
        alpaca_ratings=None, licenses={"arena_hard_pr44": "<i>MIT</i>"},
        usage=pd.DataFrame(), simulated=frozenset(),
    )  # fmt: skip
    return base._replace(**changes)


def test_winner_counts_and_the_battle_sentence():
    battles = result().rated["arena_hard_pr44"].battles
    assert winner_counts(battles) == {"a": 5, "b": 25, "tie": 10}
    assert report.battle_counts(battles) == (
        "<p>40 battles: model A won 5, model B won 25, 10 ties.</p>"
    )


def test_key_result_gives_the_top_two_with_intervals():
    text = report.key_result(result())
    # m: 25 wins + 10 ties/2 = 30 of 40 -> a gap of 400·log10(3) = 190.8 around the mean 1000
    gap = 400 * math.log10(3)
    top = round(1000 + gap / 2)
    assert top == 1095
    assert f"Arena-Hard PR #44: LLM-judge battles (mean 1000): m {top} [" in text
    assert f"base {round(1000 - gap / 2)} [" in text  # 905
    assert "(top two of 2, 40 battles)" in text
    assert "no model was asked" in text and "AlpacaEval" not in text


def test_headlines_and_a_dataset_left_out():
    r = result()
    assert report.headlines(r) == {"arena_hard_pr44 top: m": pytest.approx(1095.4, abs=0.05)}
    assert math.isnan(report.max_leaderboard_gap(r))
    assert "Not rated in this run" in report.dataset_section(r, "prd_human")
    assert "Not rated in this run" in report.alpaca_section(r)
    assert report.alpaca_ratings(r) == ""


def test_sections_escape_the_source_text():
    text = report.dataset_section(result(), "arena_hard_pr44")
    assert "License: &lt;i&gt;MIT&lt;/i&gt;." in text  # file metadata is shown as text
    assert "Bradley–Terry ratings (mean 1000), 95% bootstrap intervals (50 rounds)" in text
    assert "online Elo (K=4, file order)" in text


# --------------------------------------------------------------------------- style and length


def styled_result():
    """prd_human with a style control on 40 battles (three models, the longer answer wins
    often), arena_hard_pr44 without answers."""
    from evalbench.arena_public.data import PUBLIC_DATASETS
    from evalbench.arena_public.records import PublicStyle
    from evalbench.ratings_style import style_control

    rng = np.random.default_rng(1)
    pairs = [("x", "y"), ("y", "z"), ("x", "z")] * 14
    rows = [(a, b, rng.choice(["a", "b", "tie"]), int(rng.integers(5, 50)),
             int(rng.integers(5, 50)), int(rng.integers(0, 3)), 0) for a, b in pairs[:40]]  # fmt: skip
    battles = pd.DataFrame(rows, columns=["model_a", "model_b", "winner", "tokens_a", "tokens_b",
                                          "lists_a", "lists_b"])  # fmt: skip
    battles = battles.assign(headers_a=0, headers_b=0, bold_a=0, bold_b=0, weight=1.0)
    raw = ratings.fit_bt(battles)
    control = style_control(battles, raw, rng=np.random.default_rng(0), rounds=30)
    r = result()
    p = r.params.model_copy(update={"public": ["prd_human", "arena_hard_pr44"]})
    hard = r.rated["arena_hard_pr44"]
    no_answers = PublicStyle(
        None, hard.battles.iloc[:0], PUBLIC_DATASETS["arena_hard_pr44"].answers
    )
    rated = {"prd_human": RatedDataset(pd.concat([battles] * 2), hard.ratings,
                                       PublicStyle(control, battles, "")),
             "arena_hard_pr44": hard._replace(style=no_answers)}  # fmt: skip
    return r._replace(params=p, rated=rated), control


def test_style_section_says_which_battles_and_shows_both_ratings():
    r, control = styled_result()
    text = report.style_section(r, "prd_human")
    # 40 of the 80 battles carry both answers; the raw ratings are refitted on those 40
    assert "40 of the 80 battles compare two of them" in text
    assert "PRD Vicuna-80, 40 battles with both answers: Raw and style-controlled" in text
    assert "Never varied, left out: headers, bold" in text
    moved = control.table[control.table["rank_change"] != 0]
    for row in moved.itertuples():
        assert f"{row.model} {int(row.rank_change):+d}" in text


def test_no_answers_is_one_sentence_and_the_key_names_it():
    r, control = styled_result()
    assert report.style_section(r, "arena_hard_pr44") == (
        "<p>No style control: the battle file carries no answers, answer lengths or markdown "
        "counts, and no Arena-Hard model answer file of these four models (where Arena-Hard&#x27;s"
        " own style control reads token_len and the markdown counts) is in the data mirror.</p>"
    )
    key = report.style_key(r)
    tokens = control.coefficients.set_index("feature").loc["tokens"]
    assert f"prd_human (40 battles with both answers): length {tokens.coefficient:+.2f}" in key
    assert "No style control for arena_hard_pr44 (no answers)." in key
    assert "Not rated in this run" in report.style_section(r, "alpaca_eval")


def test_lc_section_and_the_documented_difference():
    lc = pd.DataFrame({"model": ["m1", "base", "m2"], "win_rate": [70.0, 50.0, 9.0],
                       "lc_win_rate": [70.5, 50.0, 13.0], "lc_standard_error": [1.2, 0.0, 0.8],
                       "length_weight": [-0.2, np.nan, -1.3], "C": [2.8, np.nan, 2.8],
                       "n": [805] * 3, "note": ["", "the baseline", ""],
                       "leaderboard_lc_win_rate": [70.2, 50.0, 19.3]})  # fmt: skip
    lc["lc_difference"] = lc["lc_win_rate"] - lc["leaderboard_lc_win_rate"]
    r = result()._replace(alpaca_lc=lc)
    r = r._replace(params=r.params.model_copy(update={"alpaca_baseline": "base"}))
    text = report.lc_section(r)
    # |13.0 − 19.3| = 6.3 is the largest gap; ours 70.5 > 50 > 13 as the leaderboard's order
    assert report.max_lc_gap(r) == pytest.approx(6.3)
    assert "differ by up to 6.30 points; the order of the models is the leaderboard&#x27;s" in text
    assert "m1 70.0% raw, 70.5% ± 1.2 length-controlled, m2 9.0% raw" in text
    assert "base 50.0% raw" not in text  # the baseline's own row is in the table only
    swapped = lc.assign(leaderboard_lc_win_rate=[40.0, 50.0, 19.3])
    assert "not the leaderboard" in report.lc_difference_note(r._replace(alpaca_lc=swapped))
    assert "Not computed" in report.lc_section(result())


def test_findings_give_each_datasets_top_two_in_words():
    found = report.findings(result())
    table = result().rated["arena_hard_pr44"].ratings.table.set_index("model")
    m_low, m_high = table.loc["m", "ci_low"], table.loc["m", "ci_high"]
    assert (  # the gap of the key-result test: m 1095, base 905 around the mean 1000
        f"Arena-Hard PR #44: LLM-judge battles: m about 1095, likely between {m_low:.0f} and "
        f"{m_high:.0f}, then base about 905"
    ) in found.key_result
    assert "(top two of 2, 40 battles)" in found.key_result
    two = result(rated={**result().rated, "prd_human": result().rated["arena_hard_pr44"]})
    assert (
        report.findings(two)
        .caveats[0]
        .startswith(
            "Each dataset's ratings are on their own scale (mean 1000): compare models within a "
            "dataset, not across"
        )
    )


def test_findings_say_when_style_control_changes_the_order():
    r, control = styled_result()
    assert report.findings(r).caveats[-1] == (
        "Controlled for answer length and formatting (style control), the order stays the "
        "same on PRD Vicuna-80: human pairwise votes; not checked on Arena-Hard PR #44: "
        "LLM-judge battles (no answers published)."
    )
    # y (1st) and z (2nd) swap once style is controlled
    table = control.table.assign(style_rank=[2, 1, 3], rank_change=[-1, 1, 0])
    moved = control._replace(table=table)
    style = r.rated["prd_human"].style._replace(control=moved)
    rated = {**r.rated, "prd_human": r.rated["prd_human"]._replace(style=style)}
    assert report.findings(r._replace(rated=rated)).caveats[0] == (
        "The order changes once answer length and formatting are controlled (style control): "
        "on PRD Vicuna-80: human pairwise votes, y from 1st to 2nd and z from 2nd to 1st."
    )


def test_findings_say_when_length_control_changes_the_alpacaeval_order():
    lc = pd.DataFrame({"model": ["a", "b", "base"], "win_rate": [60.0, 55.0, 50.0],
                       "lc_win_rate": [52.0, 58.0, 50.0], "lc_difference": [0.1, 0.2, 0.0],
                       "note": ["", "", "the baseline"]})  # fmt: skip
    found = report.findings(result(alpaca_lc=lc))
    assert found.caveats[0] == (
        "The AlpacaEval order changes once answer length is controlled: by raw win rate a 60% "
        "then b 55%; length-controlled b 58% then a 52%."
    )
    same = lc.assign(lc_win_rate=[58.0, 52.0, 50.0])
    assert report.findings(result(alpaca_lc=same)).caveats[-1] == (
        "AlpacaEval's length-controlled win rates keep the raw order: a 60% → 58%, b 55% → 52%."
    )
