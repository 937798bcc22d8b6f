"""Length-controlled win rate: AlpacaEval 2.0's GLM (Dubois et al. 2024, "Length-Controlled
AlpacaEval: A Simple Way to Debias Automatic Evaluators", arXiv:2404.04475).

Reproduces ``alpaca_eval.metrics.glm_winrate.get_length_controlled_winrate`` (alpaca_eval
0.6.6) for one model against the baseline:

* per instruction, ``preference`` = P(the model's answer wins) in [0, 1] (a tie 0.5) and
  ``std_delta_len = (len_baseline − len_model) / sd`` (lengths in characters, ``sd`` the
  sample standard deviation of the differences);
* the GLM ``logit P = θ_len·tanh(std_delta_len) + θ_diff·difficulty + θ_model`` (patsy
  ``np.tanh(std_delta_len) + instruction_difficulty + not_gamed_baseline.astype(float) - 1``),
  fitted with continuous targets as two weighted rows per instruction (label 1 with weight
  ``p``, label 0 with ``1 − p``) by L1-penalised logistic regression (liblinear's objective
  ``C·Σ wᵢ·lossᵢ + ‖θ‖₁``), ``C`` chosen among ``logspace(−4, 4, 10)`` by 5-fold ``GroupKFold``
  (both rows of an instruction in one fold) on the continuous log loss, then refitted;
* the LC win rate is the mean predicted P with the length term set to 0, × 100; its standard
  error the ``sem`` of those predictions × 100.

``length_controlled_v1`` (the leaderboard's) also trains on annotations of the baseline made
verbose and concise (``gamed``: their own ``std_delta_len``, no model term, weight
``λ/2 = 0.1`` each); without them it is ``length_controlled_noreg``. Both need AlpacaEval's
per-instruction ``instruction_difficulty``, which the official code downloads from the
Hugging Face hub; offline, :func:`fitted_difficulty` estimates one from the run's own battles.

Differences from the official code: each ``C`` is solved to the optimum (proximal Newton to
1e-12) where liblinear stops at ``tol=1e-4``; identical lengths everywhere (``sd = 0``, a
division by zero there) give a length feature of 0 here.
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import Literal, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy.special import expit, log_expit

from evalbench.ratings import ArenaError

CS = np.logspace(-4, 4, 10)
"""``LogisticRegressionCV(Cs=10)``'s grid."""
N_SPLITS = 5
GAMED_LAMBDA = 0.2
"""``regularize_to_baseline_lambda`` of ``length_controlled_v1``."""
FEATURES = ["np.tanh(std_delta_len)", "instruction_difficulty", "not_gamed_baseline.astype(float)"]
"""The GLM's columns, in the official (patsy) order and names."""
_TOL = 1e-12
_MAX_ITER = 200
_EXACT_PROX = 6  # coordinates up to which the proximal step is solved exactly (3^6 systems)
_RESOLVED = 1e-13  # relative objective change below which a comparison is rounding noise


class GamedRows(NamedTuple):
    """Annotations of the gamed baselines (``df_gamed.csv``): the GLM's regularizer."""

    preference: np.ndarray
    std_delta_len: np.ndarray
    difficulty: np.ndarray


class LCWinRate(NamedTuple):
    """One model's length-controlled win rate against the baseline."""

    win_rate: float
    """Raw: mean preference × 100."""
    lc_win_rate: float
    lc_standard_error: float
    weights: dict[str, float]
    """The GLM's coefficients by official column name."""
    C: float
    """The chosen inverse regularization strength."""
    n: int
    """Instructions with a preference (the LC win rate averages over all of them)."""


# ---------------------------------------------------------------------------- data


def design(
    preference: ArrayLike,
    len_model: ArrayLike,
    len_baseline: ArrayLike,
    difficulty: ArrayLike,
) -> tuple[np.ndarray, np.ndarray]:
    """The rows ``(X, p)`` of one model (official ``_get_featurized_data``), every instruction
    (a NaN preference too: the official code predicts on it; training leaves it out)."""
    p = np.asarray(preference, dtype=float)
    delta = np.asarray(len_baseline, dtype=float) - np.asarray(len_model, dtype=float)
    diff = np.asarray(difficulty, dtype=float)
    if not len(p) == len(delta) == len(diff):
        raise ArenaError("length-controlled win rate: inputs of different lengths")
    if not (np.isfinite(delta).all() and np.isfinite(diff).all()):
        raise ArenaError("length-controlled win rate: a length or difficulty is not finite")
    bad = np.isfinite(p) & ((p < 0) | (p > 1))
    if bad.any() or np.isinf(p).any():
        raise ArenaError("length-controlled win rate: a preference outside [0, 1]")
    sd = float(np.std(delta, ddof=1)) if len(delta) > 1 else 0.0
    scaled = delta / sd if sd > 0 else np.zeros_like(delta)
    return np.column_stack([np.tanh(scaled), diff, np.ones_like(diff)]), p


def _training(
    x: np.ndarray, p: np.ndarray, gamed: GamedRows | None, lam: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows, targets and sample weights: the model's (weight 1) after the gamed ones."""
    if gamed is None:
        return x, p, np.ones(len(p))
    gx = np.column_stack([np.tanh(gamed.std_delta_len), gamed.difficulty,
                          np.zeros(len(gamed.preference))])  # fmt: skip
    rows = np.concatenate([gx, x])
    targets = np.concatenate([np.asarray(gamed.preference, dtype=float), p])
    weights = np.concatenate([np.full(len(gx), lam / 2), np.ones(len(p))])
    return rows, targets, weights


def group_folds(n_groups: int, n_splits: int = N_SPLITS) -> np.ndarray:
    """The fold of each group under sklearn's ``GroupKFold`` (1.9) when every group has two
    rows: groups taken last to first (stable sort by size, reversed), each to the lightest
    fold (first on ties), so group ``g`` lands in fold ``(n − 1 − g) mod n_splits``."""
    if n_groups < n_splits:
        raise ArenaError(
            f"length-controlled win rate: {n_groups} instructions, fewer than the "
            f"{n_splits} cross-validation folds"
        )
    return (n_groups - 1 - np.arange(n_groups)) % n_splits


# ------------------------------------------------------------------------------ fit


def _objective(w: np.ndarray, x: np.ndarray, p: np.ndarray, s: np.ndarray, c: float) -> float:
    z = x @ w
    loss = -(s * (p * log_expit(z) + (1 - p) * log_expit(-z))).sum()
    return float(c * loss + np.abs(w).sum())


def fit_l1(x: np.ndarray, p: np.ndarray, s: np.ndarray, c: float) -> np.ndarray:
    """``argmin C·Σ sᵢ·[−pᵢ log σ(xᵢθ) − (1−pᵢ) log σ(−xᵢθ)] + ‖θ‖₁`` (liblinear's L1 logistic
    objective on the two weighted rows per instruction), by proximal Newton: a quadratic
    model of the loss minimized with the L1 term (:func:`_prox_step`), then a line search."""
    w = np.zeros(x.shape[1])
    for _ in range(_MAX_ITER):
        q = expit(x @ w)
        grad = c * x.T @ (s * (q - p))
        hess = c * (x.T * (s * q * (1 - q))) @ x + 1e-12 * np.eye(len(w))
        step = _prox_step(w, grad, hess) - w
        if np.abs(step).max() < _TOL:
            break
        w = _line_search(w, step, grad, x, p, s, c)
    return w


def _prox_step(w: np.ndarray, grad: np.ndarray, hess: np.ndarray) -> np.ndarray:
    """``argmin_v grad·(v−w) + ½(v−w)ᵀH(v−w) + ‖v‖₁``, exactly.

    The minimizer's signs are one of the ``3ᵖ`` patterns in {−, 0, +}ᵖ; with the signs
    fixed the problem is a quadratic, solved by one linear system (the zero coordinates held
    at 0). The model is strictly convex, so its minimizer is among these candidates, and is
    the one with the lowest value of the model itself. Beyond :data:`_EXACT_PROX` coordinates
    (3ᵖ systems), coordinate descent.
    """
    n = len(w)
    if n > _EXACT_PROX:
        return _prox_coordinate_descent(w, grad, hess)
    signs = _sign_patterns(n)
    free = signs != 0
    # rows/columns of the zero coordinates replaced by the identity: v_j = 0 there
    system = np.where(free[:, :, None] & free[:, None, :], hess, np.eye(n))
    rhs = np.where(free, hess @ w - grad - signs, 0.0)
    v = np.linalg.solve(system, rhs[:, :, None])[:, :, 0]
    d = v - w
    model = d @ grad + 0.5 * np.einsum("ki,ij,kj->k", d, hess, d) + np.abs(v).sum(axis=1)
    return v[int(np.argmin(model))]


@functools.cache
def _sign_patterns(n: int) -> np.ndarray:
    return np.array(list(itertools.product((-1.0, 0.0, 1.0), repeat=n)))


def _prox_coordinate_descent(w: np.ndarray, grad: np.ndarray, hess: np.ndarray) -> np.ndarray:
    """:func:`_prox_step` by coordinate descent (many coordinates)."""
    v = w.copy()
    for _ in range(1000):
        before = v.copy()
        for j in range(len(v)):
            # gradient of the quadratic at v along j, without v_j's own curvature
            g = grad[j] + hess[j] @ (v - w) - hess[j, j] * v[j]
            v[j] = -np.sign(g) * max(abs(g) - 1.0, 0.0) / hess[j, j]
        if np.abs(v - before).max() < 1e-15:
            break
    return v


def _line_search(
    w: np.ndarray, step: np.ndarray, grad: np.ndarray, x: np.ndarray, p: np.ndarray,
    s: np.ndarray, c: float,
) -> np.ndarray:  # fmt: skip
    """Armijo backtracking on the full objective; the full step when the decrease the model
    predicts is below what the objective's floating point resolves (near the optimum, where
    the comparison is only rounding noise and Newton's full step is the right one)."""
    before = _objective(w, x, p, s, c)
    decrease = grad @ step + np.abs(w + step).sum() - np.abs(w).sum()
    if -decrease <= _RESOLVED * max(abs(before), 1.0):
        return w + step
    t = 1.0
    for _ in range(60):
        if _objective(w + t * step, x, p, s, c) <= before + 1e-4 * t * decrease:
            return w + t * step
        t /= 2
    return w + t * step


def _cv_log_loss(w: np.ndarray, x: np.ndarray, p: np.ndarray, s: np.ndarray | None) -> float:
    """``logloss_continuous`` over a test fold: the mean over its rows (both copies of each
    instruction) of ``−[p log q + (1−p) log(1−q)]``, times the sample weight when there is one."""
    q = np.clip(expit(x @ w), 1e-15, 1 - 1e-15)
    losses = p * np.log(q) + (1 - p) * np.log(1 - q)
    return float(-np.mean(losses if s is None else losses * s))


def choose_c(x: np.ndarray, p: np.ndarray, s: np.ndarray, weighted: bool) -> float:
    """The ``C`` of ``CS`` with the best summed fold score (first on ties)."""
    folds = group_folds(len(p))
    scores = np.zeros(len(CS))
    for f in range(N_SPLITS):
        test, train = folds == f, folds != f
        for k, c in enumerate(CS):
            w = fit_l1(x[train], p[train], s[train], c)
            scores[k] -= _cv_log_loss(w, x[test], p[test], s[test] if weighted else None)
    return float(CS[int(np.argmax(scores))])


def length_controlled_win_rate(
    preference: ArrayLike,
    len_model: ArrayLike,
    len_baseline: ArrayLike,
    difficulty: ArrayLike,
    *,
    gamed: GamedRows | None = None,
    lam: float = GAMED_LAMBDA,
) -> LCWinRate:
    """AlpacaEval 2.0's length-controlled win rate of one model against the baseline.

    Args:
        preference: per instruction, P(the model's answer is preferred), in [0, 1] (NaN:
            not annotated, left out).
        len_model, len_baseline: the two answers' lengths in characters.
        difficulty: the instruction's difficulty (AlpacaEval's published vector, or
            :func:`fitted_difficulty`).
        gamed: the gamed baselines' rows (``length_controlled_v1``); ``None``:
            ``length_controlled_noreg``.
        lam: ``regularize_to_baseline_lambda``.

    Raises:
        ArenaError: fewer than 5 instructions, or an input that is not a number in range.
    """
    x, p = design(preference, len_model, len_baseline, difficulty)
    known = np.isfinite(p)
    rows, targets, weights = _training(x[known], p[known], gamed, lam)
    c = choose_c(rows, targets, weights, weighted=gamed is not None)
    w = fit_l1(rows, targets, weights, c)
    # every instruction (annotated or not), the length term at 0: tanh(0) = 0
    predicted = expit(x[:, 1:] @ w[1:])
    sem = float(np.std(predicted, ddof=1) / math.sqrt(len(predicted)))
    return LCWinRate(
        win_rate=float(np.mean(p[known]) * 100), lc_win_rate=float(np.mean(predicted) * 100),
        lc_standard_error=sem * 100, weights=dict(zip(FEATURES, w.tolist(), strict=True)),
        C=c, n=int(known.sum()),
    )  # fmt: skip


# --------------------------------------------------------------------------- models


LC_COLUMNS = ["model", "win_rate", "lc_win_rate", "lc_standard_error", "length_weight", "C", "n",
              "note"]  # fmt: skip
"""Columns of :func:`lc_win_rates`."""


def lc_win_rates(
    scores: pd.DataFrame, *, difficulty: Literal["others", "all"] = "others"
) -> pd.DataFrame:
    """The length-controlled win rate of each model against the common baseline
    (``length_controlled_noreg``; instruction difficulty from :func:`fitted_difficulty`).

    Args:
        scores: one row per (model, question) met against the baseline: ``model, question_id,
            preference`` (P(the model's answer wins), ties 0.5, NaN unscored), ``len_model,
            len_baseline`` (answer lengths in characters).
        difficulty: ``others`` fits each model's difficulties on the *other* models'
            outcomes only (fitted on its own it explains them by construction; none: 0);
            ``all`` fits them once on every model's, the rated one included, as AlpacaEval
            fitted its published vector jointly on its leaderboard's models.

    Returns:
        :data:`LC_COLUMNS`: win rates in percent, ``length_weight`` the GLM's coefficient on
        tanh(standardized baseline − model length), ``C`` its chosen regularization; a model
        with fewer than 5 questions has NaN and ``note`` says why.
    """
    joint = fitted_difficulty(scores) if difficulty == "all" else None
    rows = []
    for model, part in scores.groupby("model", sort=True):
        others = scores[scores["model"] != model]
        fitted = joint if joint is not None else (fitted_difficulty(others) if len(others)
                                                   else None)  # fmt: skip
        d = (np.zeros(len(part)) if fitted is None else
             fitted.reindex(part["question_id"].astype(str)).fillna(0.0).to_numpy())  # fmt: skip
        try:
            lc = length_controlled_win_rate(part["preference"], part["len_model"],
                                            part["len_baseline"], d)  # fmt: skip
        except ArenaError as exc:
            rows.append({"model": model, "n": len(part), "note": str(exc)})
            continue
        rows.append({"model": model, "win_rate": lc.win_rate, "lc_win_rate": lc.lc_win_rate,
                     "lc_standard_error": lc.lc_standard_error,
                     "length_weight": lc.weights[FEATURES[0]], "C": lc.C, "n": lc.n,
                     "note": ""})  # fmt: skip
    return pd.DataFrame(rows).reindex(columns=LC_COLUMNS)


# ------------------------------------------------------------------------ difficulty


def fitted_difficulty(scores: pd.DataFrame, *, reg: float = 1.0) -> pd.Series:
    """Instruction difficulty from the run's own battles against the baseline.

    AlpacaEval's ``instruction_difficulty`` is a per-instruction term of a GLM fitted on
    the leaderboard's models; offline this fits the same kind of term on the models at hand:
    ``logit P(model beats baseline on i) = γ_model − δ_i`` with a ridge ``reg/2·Σδ²`` (few
    models per instruction; ``reg/200·Σγ²`` keeps a model that always wins finite), by
    Newton's method, and returns ``δ`` (higher = harder for every model), mean-centred.

    Args:
        scores: ``model, question_id, preference`` (P(model wins), ties 0.5).
        reg: the ridge on the difficulties.
    """
    if not reg > 0:
        raise ArenaError(f"fitted_difficulty: reg must be > 0, got {reg}")
    s = scores.dropna(subset=["preference"])
    if s.empty:
        raise ArenaError("fitted_difficulty: no battle against the baseline")
    models, m_idx = np.unique(s["model"].astype(str), return_inverse=True)
    items, q_idx = np.unique(s["question_id"].astype(str), return_inverse=True)
    y = s["preference"].to_numpy(dtype=float)
    gamma, delta = np.zeros(len(models)), np.zeros(len(items))
    for _ in range(100):
        step_m, step_q = _difficulty_step(gamma, delta, m_idx, q_idx, y, reg)
        gamma, delta = gamma - step_m, delta - step_q
        if max(np.abs(step_m).max(), np.abs(step_q).max()) < 1e-10:
            break
    return pd.Series(delta - delta.mean(), index=items, name="instruction_difficulty")


def _difficulty_step(
    gamma: np.ndarray, delta: np.ndarray, m_idx: np.ndarray, q_idx: np.ndarray, y: np.ndarray,
    reg: float,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """One Newton step of :func:`fitted_difficulty`'s fit. A battle touches one model and one
    instruction, so the Hessian's instruction block is diagonal: the step solves the small
    model block (its Schur complement) and then each instruction on its own."""
    nm, nq = len(gamma), len(delta)
    q = expit(gamma[m_idx] - delta[q_idx])
    r, c = q - y, q * (1 - q)
    grad_m = np.bincount(m_idx, r, nm) + reg / 100 * gamma
    grad_q = -np.bincount(q_idx, r, nq) + reg * delta
    diag_m = np.bincount(m_idx, c, nm) + reg / 100
    diag_q = np.bincount(q_idx, c, nq) + reg
    cross = np.zeros((nm, nq))  # ∂²/∂γ_m∂δ_i = −Σ c over the model's battles on i
    np.add.at(cross, (m_idx, q_idx), -c)
    schur = np.diag(diag_m) - (cross / diag_q) @ cross.T
    step_m = np.linalg.solve(schur, grad_m - cross @ (grad_q / diag_q))
    return step_m, (grad_q - cross.T @ step_m) / diag_q
