"""Style control of the published battles against FastChat's (``style_oracle.json``, made by
``make_style_oracle.py`` from FastChat @ 0e6d3e4 on the mirror's files).

* every published answer's style counts (PRD: 5 models x 80, AlpacaEval: the baseline and four
  models x 805) equal FastChat's ``count_markdown_elements(remove_pattern(...))`` and tokens;
* the battles the study fits are the oracle's, and the standardized features FastChat's;
* the ratings and coefficients equal the official objective's optimum to 1e-9 Elo / 1e-9
  log-odds (PRD: hard votes; AlpacaEval: the soft preference as FastChat's outcome, which
  evalbench fits as two weighted halves), and FastChat as shipped (L-BFGS-B, gtol 1e-6) stops
  within 0.01 Elo of it;
* PRD's answers have no header: FastChat divides by that zero spread (NaN); the oracle's fit
  leaves the column out, as evalbench does.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalbench import ratings_style as rs
from evalbench.arena_public.data import public_battles
from evalbench.arena_public.metrics import alpaca_answers, answered_battles
from evalbench.published.alpaca_eval import (
    ALPACA_MODELS,
    battles_from_alpaca_eval,
    load_alpaca_eval_annotations,
)
from evalbench.published.prd import load_prd_answers

ORACLE = json.loads(Path(__file__).with_name("style_oracle.json").read_text())
BASELINE = "gpt4_1106_preview"
pytestmark = pytest.mark.slow  # every test reads the mirror's answers and counts their tokens


@functools.cache
def _prd() -> tuple[pd.DataFrame, pd.DataFrame]:
    answers = load_prd_answers()
    return answers, answered_battles(public_battles("prd_human"), answers)


@functools.cache
def _alpaca() -> tuple[dict[str, pd.DataFrame], pd.DataFrame]:
    frames = {m: load_alpaca_eval_annotations(m) for m in ALPACA_MODELS if m != BASELINE}
    battles = pd.concat([battles_from_alpaca_eval(a) for a in frames.values()], ignore_index=True)
    answers = alpaca_answers(frames)
    return frames, rs.battles_with_style(battles, rs.answer_style_counts(answers))


@pytest.fixture
def prd(mirror):
    """PRD's answers and the battles between its answered models (read once per session)."""
    return _prd()


@pytest.fixture
def alpaca(mirror):
    """AlpacaEval's annotations and soft battles with style counts (read once per session)."""
    return _alpaca()


def elo_gap(fit: rs.StyleFit, theta: list[float], models: list[str]) -> float:
    """Largest difference of the two fits' ratings (400·θ, each shifted to mean 0)."""
    ours = pd.Series(400 * fit.theta, index=fit.models)
    theirs = pd.Series(400 * np.array(theta), index=models).reindex(ours.index)
    return float(((ours - ours.mean()) - (theirs - theirs.mean())).abs().max())


def official_theta(tight: dict) -> list[float]:
    """``polished`` records ``scale_and_offset`` ratings (400·θ + 1000, no anchor present)."""
    return [(v - 1000) / 400 for v in tight["ratings"].values()]


def test_prd_answer_counts_equal_fastchat(prd):
    answers, _ = prd
    official = {
        (a["model"], a["question_id"]): a["official"] for a in ORACLE["prd_human"]["answers"]
    }
    ours = rs.answer_style_counts(answers)
    got = {(r.model, r.question_id): [r.tokens, r.headers, r.lists, r.bold]
           for r in ours.itertuples()}  # fmt: skip
    assert len(got) == 400 and got == official


def test_alpaca_answer_counts_equal_fastchat(alpaca):
    frames, _ = alpaca
    first = next(iter(frames.values()))
    for model, counts in ORACLE["alpaca_eval"]["answers"].items():
        texts = first["output_1"] if model == BASELINE else frames[model]["output_2"]
        ours = [list(rs.style_counts(t).values()) for t in texts]
        assert len(ours) == 805 and ours == counts, model


def test_prd_battles_and_fit_equal_fastchat(prd):
    _, battles = prd
    recorded = pd.DataFrame(ORACLE["prd_human"]["battles"],
                            columns=["model_a", "model_b", "winner", "question_id"])  # fmt: skip
    assert len(battles) == 1760
    pd.testing.assert_frame_equal(
        battles[recorded.columns].reset_index(drop=True), recorded, check_dtype=False
    )
    official = ORACLE["prd_human"]["fastchat"]
    fit = rs.fit_style_bt(battles)
    assert fit.features.constant == ["headers"]  # FastChat: NaN; left out by both here
    assert official["kept_features"] == [True, False, True, True]
    np.testing.assert_allclose(fit.features.values[:20], official["first_features"], atol=1e-12)
    tight = official["tight"]
    assert tight["gradient"] < 1e-12
    assert elo_gap(fit, official_theta(tight), official["models"]) < 1e-9
    np.testing.assert_allclose(fit.coefs, tight["coefs"], rtol=0, atol=1e-9)
    shipped = elo_gap(fit, official["default"]["theta"], official["models"])
    assert shipped < 0.01  # L-BFGS-B's gtol=1e-6 stop


def test_alpaca_soft_battles_fit_equal_fastchat_soft_outcomes(alpaca):
    _, battles = alpaca
    official = ORACLE["alpaca_eval"]["fastchat"]
    fit = rs.fit_style_bt(battles)
    # 4 models x 805 annotations = 3,220 rows in FastChat's fit; here two weighted halves each
    # (a half of weight 0 dropped), the same log loss and the same weighted standardization
    assert fit.features.constant == [] and official["kept_features"] == [True] * 4
    first_half = ~battles.duplicated(["model_b", "question_id"]).to_numpy()
    np.testing.assert_allclose(fit.features.values[first_half][:20], official["first_features"],
                               atol=1e-12)  # fmt: skip
    tight = official["tight"]
    assert tight["gradient"] < 1e-12
    assert elo_gap(fit, official_theta(tight), official["models"]) < 1e-9
    np.testing.assert_allclose(fit.coefs, tight["coefs"], rtol=0, atol=1e-9)
    assert elo_gap(fit, official["default"]["theta"], official["models"]) < 0.01
