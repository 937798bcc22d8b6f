"""Oracles: evalbench.ratings on published battles vs the official implementations' outputs.

Bradley–Terry vs lm-sys/arena-hard-auto ``compute_mle_elo`` and FastChat ``compute_bt``,
online Elo vs FastChat ``compute_elo`` (reference values in the oracle folder).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalbench import ratings
from evalbench.arena_public.data import battles_from_prd_votes, load_prd_votes
from evalbench.published import arena_hard


def reference(oracles: Path) -> dict:
    return json.loads((oracles / "ratings" / "rating_reference_values.json").read_text())


def assert_ratings_close(mine: pd.Series, official: dict[str, float], tol: float = 0.5) -> None:
    expected = pd.Series(official)
    assert sorted(mine.index) == sorted(expected.index)
    gap = (mine.reindex(expected.index) - expected).abs()
    assert gap.max() <= tol, gap.to_dict()


@pytest.fixture
def pr44(mirror: Path) -> pd.DataFrame:
    return arena_hard.load_fastchat_battles("arena_hard/pr44_battles")


@pytest.fixture
def prd_human(mirror: Path) -> pd.DataFrame:
    return battles_from_prd_votes(load_prd_votes("human"))


@pytest.mark.parametrize("official", ["arena_hard_compute_mle_elo", "fastchat_compute_bt"])
def test_bt_equals_official_on_pr44_battles(pr44, oracles, official):
    ref = reference(oracles)["pr44_arena_hard_battles"]
    assert len(pr44) == ref["n_battles"]
    counts = pr44["winner"].map({"a": "model_a", "b": "model_b", "tie": "tie"}).value_counts()
    assert counts.to_dict() == ref["winner_counts"]
    assert_ratings_close(ratings.fit_bt(pr44), ref[official])


def test_online_elo_equals_fastchat_on_pr44_battles(pr44, oracles):
    ref = reference(oracles)["pr44_arena_hard_battles"]["fastchat_compute_elo_online"]
    assert_ratings_close(ratings.online_elo(pr44, k=4), ref)


@pytest.mark.parametrize("official", ["arena_hard_compute_mle_elo", "fastchat_compute_bt"])
def test_bt_equals_official_on_prd_human_votes(prd_human, oracles, official):
    ref = reference(oracles)["prd_vicuna80_human_votes"]
    assert len(prd_human) == ref["n_battles"]
    counts = prd_human["winner"].map({"a": "model_a", "b": "model_b", "tie": "tie"}).value_counts()
    assert counts.to_dict() == ref["winner_counts"]
    assert_ratings_close(ratings.fit_bt(prd_human), ref[official])


def test_online_elo_equals_fastchat_on_prd_human_votes(prd_human, oracles):
    ref = reference(oracles)["prd_vicuna80_human_votes"]["fastchat_compute_elo_online"]
    assert_ratings_close(ratings.online_elo(prd_human, k=4), ref)


def test_prd_bootstrap_table(prd_human):
    boot = ratings.bootstrap_bt(prd_human, rng=np.random.default_rng(0))
    table = ratings.ratings_table(boot)
    assert table["model"].iloc[0] in {"gpt4", "claude"} and table["model"].iloc[-1] == "bard"
    assert (table["degenerate_rounds"] == 0).all() and (table["rounds"] == 1000).all()
    assert table["n_battles"].sum() == 2 * 7040  # every battle has two players


def test_rate_battles_on_pr44_matches_official_bt_and_online_elo(pr44, oracles):
    ref = reference(oracles)["pr44_arena_hard_battles"]
    report = ratings.rate_battles(pr44, rng=np.random.default_rng(0), rounds=100)
    table = report.table.set_index("model")
    assert_ratings_close(table["rating"], ref["arena_hard_compute_mle_elo"])
    assert_ratings_close(table["online_elo"], ref["fastchat_compute_elo_online"])
