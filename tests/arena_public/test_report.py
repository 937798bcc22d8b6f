"""The published-ratings notebook's sentences: numbers and escaping, checked by hand."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

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
