"""The length-controlled win rate against AlpacaEval's ``get_length_controlled_winrate``
(``lc_oracle.json``, made by ``make_lc_oracle.py`` with alpaca_eval 0.6.6 in a throwaway
virtualenv), and its parts by hand.

With liblinear solved to ``tol=1e-12`` the official LC win rates, standard errors and GLM
weights equal evalbench's to 1e-9 (``length_controlled_v1`` with the gamed baselines and
``length_controlled_noreg``); as shipped (``tol=1e-4``) liblinear stops within 0.01 points.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from evalbench import ratings_lc as lc
from evalbench.ratings import ArenaError

ORACLE = json.loads(Path(__file__).with_name("lc_oracle.json").read_text())
GLMS = ["length_controlled_v1", "length_controlled_noreg"]


def mine(model: str, glm: str) -> lc.LCWinRate:
    m, g = ORACLE["models"][model], ORACLE["gamed"]
    pref = np.array(m["preference"], dtype=float)
    p = np.where(pref == 0, 1.5, pref) - 1  # AlpacaEval's scale: 1 baseline, 2 model, 0 draw
    gamed = lc.GamedRows(np.array(g["preference"]), np.array(g["std_delta_len"]),
                         np.array(g["instruction_difficulty"]))  # fmt: skip
    return lc.length_controlled_win_rate(
        p, m["length"], ORACLE["baseline_length"], ORACLE["difficulty"],
        gamed=gamed if glm == "length_controlled_v1" else None,
    )  # fmt: skip


@pytest.mark.slow  # 0.2-1 s each: 50 L1 fits for the cross-validation
@pytest.mark.parametrize("glm", GLMS)
@pytest.mark.parametrize("model", ["long", "short", "even"])
def test_lc_win_rate_equals_alpaca_eval(model, glm):
    ours = mine(model, glm)
    tight = ORACLE["official"][model][f"{glm}/tight"]
    assert ours.win_rate == pytest.approx(tight["win_rate"], abs=1e-9)
    assert ours.lc_win_rate == pytest.approx(tight["length_controlled_winrate"], abs=1e-9)
    assert ours.lc_standard_error == pytest.approx(tight["lc_standard_error"], abs=1e-9)
    for name, value in tight["weights"].items():
        assert ours.weights[name] == pytest.approx(value, abs=1e-9)
    shipped = ORACLE["official"][model][f"{glm}/default"]["length_controlled_winrate"]
    assert abs(ours.lc_win_rate - shipped) < 0.01  # liblinear's tol=1e-4 stop


def test_group_folds_as_sklearn_group_kfold():
    # 7 groups of two rows: taken 6, 5, ..., 0, each to the lightest (first) fold
    assert lc.group_folds(7).tolist() == [1, 0, 4, 3, 2, 1, 0]
    with pytest.raises(ArenaError, match="4 instructions, fewer than the 5"):
        lc.group_folds(4)


def test_design_by_hand():
    x, p = lc.design([0.5, 1.0, np.nan], [10, 30, 20], [20, 20, 20], [0.1, -0.2, 0.3])
    # deltas 10, -10, 0: sample sd 10 -> tanh(1), tanh(-1), 0; a NaN preference is kept
    np.testing.assert_allclose(x[:, 0], [np.tanh(1), np.tanh(-1), 0.0])
    np.testing.assert_allclose(x[:, 1:], [[0.1, 1], [-0.2, 1], [0.3, 1]])
    assert np.isnan(p[2])
    same, _ = lc.design([0.5] * 2, [5, 5], [5, 5], [0, 0])
    assert (same[:, 0] == 0).all()  # no length spread: feature 0 (the official divides by 0)


def test_fit_l1_meets_the_optimality_conditions():
    rng = np.random.default_rng(0)
    x = np.column_stack([rng.normal(size=40), rng.normal(size=40), np.ones(40)])
    p = expit(x @ [0.8, 0.0, -0.3] + rng.normal(0, 0.5, 40))
    s, c = np.ones(40), 0.5
    w = lc.fit_l1(x, p, s, c)
    grad = c * x.T @ (s * (expit(x @ w) - p))
    # at the optimum: grad_j = -sign(w_j) where w_j != 0, |grad_j| <= 1 where w_j == 0
    nz = w != 0
    np.testing.assert_allclose(grad[nz], -np.sign(w[nz]), atol=1e-9)
    assert (np.abs(grad[~nz]) <= 1 + 1e-9).all()


@pytest.mark.parametrize(("pref", "message"), [([1.2] * 6, "outside"), ([np.inf] * 6, "outside")])
def test_bad_preferences_are_refused(pref, message):
    with pytest.raises(ArenaError, match=message):
        lc.length_controlled_win_rate(pref, [1] * 6, [2] * 6, [0] * 6)


def test_fitted_difficulty_orders_instructions_by_how_often_models_lose():
    scores = pd.DataFrame({"model": ["m1", "m2"] * 3, "question_id": ["a", "a", "b", "b", "c", "c"],
                           "preference": [1, 1, 0.5, 0.5, 0, 0]})  # fmt: skip
    d = lc.fitted_difficulty(scores)
    assert d["c"] > d["b"] > d["a"] and abs(d.sum()) < 1e-9
    assert d["b"] == pytest.approx(0.0, abs=1e-9)  # symmetric: the middle one is average


def _three_models() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    rows = []
    for model, quality in (("m1", 0.5), ("m2", -0.5), ("m3", 0.0)):
        hard = rng.normal(size=12)
        rows.append(pd.DataFrame({
            "model": model, "question_id": [f"q{i}" for i in range(12)],
            "preference": np.clip(expit(quality - hard) + rng.normal(0, 0.1, 12), 0, 1),
            "len_model": rng.integers(100, 900, 12), "len_baseline": rng.integers(100, 900, 12),
        }))  # fmt: skip
    return pd.concat(rows, ignore_index=True)


@pytest.mark.slow  # 4 GLMs with their cross-validation
@pytest.mark.parametrize("how", ["others", "all"])
def test_lc_win_rates_use_the_difficulty_they_name(how):
    scores = _three_models()
    table = lc.lc_win_rates(scores, difficulty=how).set_index("model")
    for model in ("m1", "m3"):
        part = scores[scores["model"] == model]
        # others: fitted without the model's own outcomes; all: one vector from every model's
        fitted_on = scores[scores["model"] != model] if how == "others" else scores
        d = lc.fitted_difficulty(fitted_on).reindex(part["question_id"]).to_numpy()
        one = lc.length_controlled_win_rate(part["preference"], part["len_model"],
                                            part["len_baseline"], d)  # fmt: skip
        assert table.loc[model, "lc_win_rate"] == one.lc_win_rate
        assert table.loc[model, "win_rate"] == pytest.approx(part["preference"].mean() * 100)


def test_lc_win_rates_name_why_a_model_has_none():
    few = _three_models().groupby("model").head(4)  # 4 questions: fewer than the 5 folds
    table = lc.lc_win_rates(few)
    assert table["lc_win_rate"].isna().all() and list(table["n"]) == [4, 4, 4]
    assert table["note"].str.contains("4 instructions, fewer than the 5").all()


@pytest.mark.parametrize("seed", range(6))
def test_exact_prox_step_equals_coordinate_descent_and_meets_its_conditions(seed):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(3, 3))
    hess = a @ a.T * rng.choice([0.01, 1.0, 100.0]) + 1e-12 * np.eye(3)
    w, grad = rng.normal(size=3), rng.normal(size=3) * rng.choice([0.5, 3.0])
    v = lc._prox_step(w, grad, hess)
    np.testing.assert_allclose(v, lc._prox_coordinate_descent(w, grad, hess), atol=1e-9)
    # optimality: grad + H(v − w) = −sign(v_j) where v_j != 0, and lies in [−1, 1] where 0
    g = grad + hess @ (v - w)
    nz = v != 0
    np.testing.assert_allclose(g[nz], -np.sign(v[nz]), atol=1e-9)
    assert (np.abs(g[~nz]) <= 1 + 1e-9).all()


def test_difficulty_newton_step_equals_the_dense_one():
    rng = np.random.default_rng(7)
    m_idx, q_idx = rng.integers(0, 3, 40), rng.integers(0, 9, 40)  # repeats included
    y, reg = rng.uniform(size=40), 0.7
    gamma, delta = rng.normal(size=3), rng.normal(size=9)
    # the dense Newton step: X has +1 at the battle's model, −1 at its instruction
    x = np.zeros((40, 12))
    x[np.arange(40), m_idx], x[np.arange(40), 3 + q_idx] = 1.0, -1.0
    theta, penalty = np.r_[gamma, delta], np.r_[np.full(3, reg / 100), np.full(9, reg)]
    q = expit(x @ theta)
    hess = (x.T * (q * (1 - q))) @ x + np.diag(penalty)
    dense = np.linalg.solve(hess, x.T @ (q - y) + penalty * theta)
    step_m, step_q = lc._difficulty_step(gamma, delta, m_idx, q_idx, y, reg)
    np.testing.assert_allclose(np.r_[step_m, step_q], dense, atol=1e-12)
