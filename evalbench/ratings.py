"""Battles and ratings: Bradley–Terry with bootstrap intervals, online Elo, win rates.

Pure rating math shared by the arena runner (:mod:`evalbench.arena`) and the published
ratings (:mod:`evalbench.arena_public`). **Battles** are a DataFrame ``model_a, model_b,
winner, weight, question_id`` (``winner`` in a, b, tie; :class:`evalbench.records.Battle`);
every constructor ends in :func:`validate_battles`, so a malformed row is an error naming it.

* **Bradley–Terry** (1952): ``P(i beats j) = 1 / (1 + base^((R_j - R_i)/scale))``, maximum
  likelihood on the pair counts (the sufficient statistics) by Newton's method. On the Elo
  scale this is what Arena-Hard (``compute_mle_elo``) and FastChat (``compute_bt``) fit with
  a logistic regression on one (or two) rows per battle.
* **Bootstrap**: resampling N battles with replacement = drawing each distinct (pair,
  outcome, weight) cell's count from ``Multinomial(N, count/N)``; each round refits from
  the point estimate (warm start).
* **Online Elo** (as FastChat ``compute_elo``) processes battles in the given order.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Literal, NamedTuple, cast

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.sparse.csgraph import connected_components
from scipy.special import expit

from evalbench.ratings_fast import group_cells, parse_battles, ratio_gradient, resampled
from evalbench.stats import (
    DEFAULT_LEVEL,
    DEFAULT_ROUNDS,
    Interval,
    percentile_interval,
    wilson_interval,
)

WINNERS = ("a", "b", "tie")
BATTLE_COLUMNS = ["model_a", "model_b", "winner", "weight", "question_id"]
Ties = Literal["half", "drop"]
Unscored = Literal["raise", "drop"]

_NEWTON_TOL = 1e-9  # natural-log-odds units: 1.7e-7 Elo points
_NEWTON_MAX_ITER = 100
_MAX_STEP = 4.0  # cap on one Newton step (log-odds) so far-from-optimum starts stay stable
_CHORD_MAX_ITER = 50
_SAFE_STEP = 0.5  # log-odds; smaller Newton steps are taken without a likelihood check
_CHUNK = 100  # bootstrap rounds fitted together (memory ~ 6 * chunk * n_models^2 floats)
_CHUNK_CELLS = 1_000_000  # ... but at most this many chunk * n_models^2 cells (8 MB arrays)


class ArenaError(ValueError):
    """Malformed battles or judgments (the message names the row); ``why``: the bare cause."""

    def __init__(self, message: str, why: str = ""):
        super().__init__(message)
        self.why = why or message


# --------------------------------------------------------------------------- battles


def validate_battles(battles: pd.DataFrame, *, source: str = "battles") -> pd.DataFrame:
    """Check a battles table and return a normalised copy.

    Args:
        battles: needs ``model_a, model_b, winner``; ``weight`` defaults to 1 and
            ``question_id`` to ``""``. Extra columns are kept after the standard five.
        source: how error messages name the input (e.g. a file name).

    Returns:
        A new DataFrame with ``BATTLE_COLUMNS`` first, ``weight`` as float.

    Raises:
        ArenaError: empty input, a missing column, a missing model name, an unknown winner,
            a model playing itself, or a weight that is NaN, infinite or negative; the
            message names the first offending row (by index label) and how many share it.
    """
    missing = [c for c in ("model_a", "model_b", "winner") if c not in battles.columns]
    if missing:
        raise ArenaError(f"{source}: missing column(s) {missing}; have {list(battles.columns)}")
    if len(battles) == 0:
        raise ArenaError(f"{source}: no battles (empty input)")
    out = battles.copy()
    if "question_id" not in out:
        out["question_id"] = ""
    raw_weight = out["weight"] if "weight" in out else pd.Series(1.0, index=out.index)
    out["weight"] = pd.to_numeric(raw_weight, errors="coerce").astype(float)
    _check_rows(out.assign(raw_weight=raw_weight), source)
    extra = [c for c in out.columns if c not in BATTLE_COLUMNS]
    return out[BATTLE_COLUMNS + extra]


def _check_rows(b: pd.DataFrame, source: str) -> None:
    for col in ("model_a", "model_b"):
        names = b[col]
        fail_first_row(
            b, names.isna() | (names.astype(str).str.len() == 0), source, f"{col} is empty"
        )
    winner = b["winner"]
    bad = ~winner.isin(WINNERS)
    fail_first_row(
        b, bad, source, lambda r: f"unknown winner {r['winner']!r} (expected a, b or tie)"
    )
    same = b["model_a"].to_numpy() == b["model_b"].to_numpy()
    fail_first_row(b, same, source, lambda r: f"model {r['model_a']!r} plays itself")
    w = b["weight"].to_numpy(dtype=float)
    bad_w = ~np.isfinite(w) | (w < 0)
    fail_first_row(b, bad_w, source, lambda r: f"weight {r['raw_weight']!r} is not a number >= 0")


def fail_first_row(
    b: pd.DataFrame,
    mask: object,
    source: str,
    message: str | Callable[[dict[str, object]], str],
) -> None:
    """Raise :class:`ArenaError` naming the first row where ``mask`` holds (if any).

    ``message`` is the text, or a function of the row (a dict) that makes it; the error
    names the row by index label (and ``question_id``) and counts the other rows.
    """
    mask = np.asarray(mask, dtype=bool)
    if not mask.any():
        return
    pos = int(np.argmax(mask))
    row = {str(k): _plain(v) for k, v in b.iloc[pos].items()}
    text = message(row) if callable(message) else message
    qid = row.get("question_id", "")
    where = f"row {_plain(b.index[pos])!r}" + (f" (question_id {qid!r})" if qid != "" else "")
    more = int(mask.sum()) - 1
    raise ArenaError(f"{source} {where}: {text}" + (f" (+{more} more rows)" if more else ""))


def _plain(value: object) -> object:
    """numpy scalars as Python ones, so messages read ``1.5`` rather than ``np.float64(1.5)``."""
    return value.item() if isinstance(value, np.generic) else value


def require_columns(df: pd.DataFrame, columns: Sequence[str], source: str) -> None:
    """Raise :class:`ArenaError` when ``df`` lacks one of ``columns`` or is empty."""
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ArenaError(f"{source}: missing column(s) {missing}; have {list(df.columns)}")
    if len(df) == 0:
        raise ArenaError(f"{source}: empty input")


# ------------------------------------------------------------------- pair counts


class PairCounts(NamedTuple):
    """The sufficient statistics of Bradley–Terry."""

    models: list[str]
    wins: np.ndarray
    """``wins[i, j]``: weight of battles model i won against model j (ties split per ``ties``)."""
    n_battles: np.ndarray
    """Battles (rows) each model played."""


class _Cells(NamedTuple):
    """Distinct (unordered pair, outcome, weight) battles and how often each occurs."""

    models: list[str]
    i: np.ndarray  # lower model index of the pair
    j: np.ndarray  # higher model index
    to_i: np.ndarray  # credit to i (i beat j) carried by one such battle
    to_j: np.ndarray
    n: np.ndarray  # how many battles fall in the cell
    n_battles: np.ndarray


def pair_counts(
    battles: pd.DataFrame, *, ties: Ties = "half", models: Sequence[str] | None = None
) -> PairCounts:
    """Aggregate battles into weighted win counts per ordered pair.

    Args:
        battles: a battles table (validated here).
        ties: ``"half"``: a tie is half a win each way; ``"drop"``: ties count for nothing.
        models: the model order (default: sorted names); must cover every battle.
    """
    cells = _cells(battles, ties, models)
    return PairCounts(cells.models, _wins(cells, cells.n[None, :])[0], cells.n_battles)


def _cells(battles: pd.DataFrame, ties: Ties, models: Sequence[str] | None) -> _Cells:
    if ties not in ("half", "drop"):
        raise ArenaError(f"ties must be 'half' or 'drop', got {ties!r}")
    parsed = parse_battles(battles, WINNERS)
    if parsed is None:  # something is wrong: the full check names the row
        b = validate_battles(battles)
        parsed = parse_battles(b, WINNERS)
        assert parsed is not None, "validate_battles accepted battles parse_battles refuses"
    codes, uniques, winner, weight = parsed
    names, a, c = _model_codes(codes, uniques, len(battles), models)
    i, j = np.minimum(a, c), np.maximum(a, c)
    kind = np.where(winner == 2, 2, np.where((winner == 0) == (a == i), 0, 1))
    i, j, kind, w, n = group_cells(len(names), i, j, kind, weight)
    tie_credit = 0.5 if ties == "half" else 0.0
    share_i = np.select([kind == 0, kind == 1], [1.0, 0.0], tie_credit)
    share_j = np.where(kind == 2, tie_credit, 1.0 - share_i)
    n_played = np.bincount(np.concatenate([a, c]), minlength=len(names))
    return _Cells(
        models=names,
        i=i,
        j=j,
        to_i=w * share_i,
        to_j=w * share_j,
        n=n,
        n_battles=n_played,
    )


def _model_codes(
    codes: np.ndarray, uniques: Any, n_battles: int, models: Sequence[str] | None
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Model names (sorted unless given) and the index of each battle's two models."""
    found = [str(m) for m in uniques]
    names = sorted(found) if models is None else list(models)
    unknown = set(found) - set(names)
    if unknown:
        raise ArenaError(f"battles name models outside `models`: {sorted(unknown)}")
    remap = pd.Index(names).get_indexer(found)
    both = remap[codes]
    return names, both[:n_battles], both[n_battles:]


def _wins(cells: _Cells, counts: np.ndarray) -> np.ndarray:
    """Win matrices ``(rounds, n, n)`` for cell counts ``(rounds, n_cells)``."""
    n = len(cells.models)
    rows = np.concatenate([np.arange(len(cells.i))] * 2)
    cols = np.concatenate([cells.i * n + cells.j, cells.j * n + cells.i])
    vals = np.concatenate([cells.to_i, cells.to_j])
    credit = sparse.csr_matrix((vals, (rows, cols)), shape=(len(cells.i), n * n))
    flat = np.asarray(credit.T @ counts.T.astype(float)).T
    return flat.reshape(len(counts), n, n)


# ------------------------------------------------------------------ Bradley–Terry


class BootstrapBT(NamedTuple):
    """Bradley–Terry point ratings and bootstrap replicates (Elo scale)."""

    models: list[str]
    ratings: np.ndarray
    """Point estimate per model."""
    replicates: np.ndarray
    """``(rounds, n_models)``; a row of NaN = a resample whose MLE does not exist."""
    n_battles: np.ndarray
    """Battles (rows) each model played."""


def fit_bt(
    battles: pd.DataFrame,
    *,
    ties: Ties = "half",
    anchor: str | None = None,
    anchor_rating: float = 1000.0,
    init_rating: float = 1000.0,
    base: float = 10.0,
    scale: float = 400.0,
    prior: float = 0.0,
) -> pd.Series:
    """Bradley–Terry maximum-likelihood ratings on the Elo scale.

    Args:
        battles: a battles table (weights multiply a battle's count).
        ties: ``"half"`` (a tie = half a win each way) or ``"drop"``.
        anchor: model pinned at ``anchor_rating``; without one the ratings are
            mean-centred at ``init_rating`` (what the public arena code reports when its
            anchor model is absent).
        anchor_rating: rating of ``anchor``.
        init_rating: mean rating when there is no anchor.
        base: logistic base (10 on the Elo scale).
        scale: rating points per factor ``base`` in odds (400 on the Elo scale).
        prior: pseudo-battles: ``prior`` ties added between every pair of models, which
            makes the estimate exist even when a model never loses (0 = pure MLE).

    Returns:
        Ratings by model, highest first.

    Raises:
        ArenaError: no maximum likelihood (a group of models never loses, or never wins).
    """
    cells = _cells(battles, ties, None)
    theta = _point_fit(cells, prior).theta
    elo = _to_elo(theta[None, :], cells.models, anchor, anchor_rating, init_rating, base, scale)
    return pd.Series(elo[0], index=cells.models, name="rating").sort_values(ascending=False)


class _Point(NamedTuple):
    """The full-data fit a bootstrap starts from."""

    wins: np.ndarray  # (n, n), prior included
    theta: np.ndarray  # natural log-odds, sum zero
    h_inv: np.ndarray  # inverse gauge-fixed negative Hessian at theta


def _point_fit(cells: _Cells, prior: float) -> _Point:
    wins = _with_prior(_wins(cells, cells.n[None, :]), prior)
    _require_connected(wins[0], cells.models)
    theta = _newton(wins, np.zeros((1, len(cells.models))))
    if not np.isfinite(theta).all():
        raise ArenaError("fit_bt: Newton's method did not converge")
    curv = _gradient(wins, wins + wins.transpose(0, 2, 1), theta)[1]
    return _Point(wins[0], theta[0], np.linalg.inv(_hessian(curv)[0]))


def _with_prior(wins: np.ndarray, prior: float) -> np.ndarray:
    if prior < 0:
        raise ArenaError(f"prior must be >= 0, got {prior}")
    if prior == 0:
        return wins
    n = wins.shape[-1]
    return wins + (prior / 2) * (1 - np.eye(n))


def _strongly_connected(wins: np.ndarray) -> tuple[int, np.ndarray]:
    n_comp, labels = connected_components(
        sparse.csr_matrix(wins > 0), directed=True, connection="strong"
    )
    return int(n_comp), labels


def _require_connected(wins: np.ndarray, models: list[str]) -> None:
    n_comp, labels = _strongly_connected(wins)
    if n_comp > 1:
        smallest = np.argmin(np.bincount(labels))
        group = [m for m, lab in zip(models, labels, strict=True) if lab == smallest]
        why = (
            f"the win graph splits into {n_comp} groups, e.g. {group} never beat (or never "
            "lose to) the others, so the Bradley–Terry MLE does not exist"
        )
        raise ArenaError(f"{why}; add battles or set prior > 0", why=why)


def _newton(wins: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Maximise the BT log-likelihood for a batch of win matrices ``(R, n, n)``.

    Natural log-odds, sum-zero gauge. Rows that do not converge come back as NaN.
    """
    theta = theta - theta.mean(axis=1, keepdims=True)
    total = wins + wins.transpose(0, 2, 1)
    done = np.zeros(len(wins), dtype=bool)
    for _ in range(_NEWTON_MAX_ITER):
        grad, curv = _gradient(wins, total, theta)
        step = np.linalg.solve(_hessian(curv), grad[:, :, None])[:, :, 0]
        step *= np.minimum(1.0, _MAX_STEP / np.abs(step).max(axis=1, keepdims=True).clip(1e-300))
        step[done] = 0.0
        size = np.abs(step).max(axis=1)
        theta = _backtrack(wins, theta, step)
        done |= size < _NEWTON_TOL
        if done.all():
            break
    theta[~done] = np.nan
    return theta


def _gradient(
    wins: np.ndarray, total: np.ndarray, theta: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Gradient of the log-likelihood and the pairwise curvature ``N_ij p_ij (1 - p_ij)``."""
    p = expit(theta[:, :, None] - theta[:, None, :])
    expected = total * p
    return (wins - expected).sum(axis=2), expected * (1 - p)


def _hessian(curv: np.ndarray) -> np.ndarray:
    """Negative Hessian (a graph Laplacian) plus 1·1ᵀ, which fixes the gauge.

    The gradient sums to 0, so the solution of ``(H + 1·1ᵀ) x = g`` sums to 0 too and is
    the Newton step within the sum-zero gauge.
    """
    hess = -curv
    idx = np.arange(curv.shape[1])
    hess[:, idx, idx] = curv.sum(axis=2)
    return hess + 1.0


def _loglik(wins: np.ndarray, theta: np.ndarray) -> np.ndarray:
    diff = theta[:, :, None] - theta[:, None, :]
    return -(wins * np.logaddexp(0.0, -diff)).sum(axis=(1, 2))


def _backtrack(wins: np.ndarray, theta: np.ndarray, step: np.ndarray) -> np.ndarray:
    """Halve the step of rounds whose likelihood would drop (Newton on a concave function)."""
    if np.abs(step).max() < _SAFE_STEP:
        return theta + step
    before = _loglik(wins, theta)
    for _ in range(30):
        after = _loglik(wins, theta + step)
        worse = after < before - 1e-12 * np.abs(before)
        if not worse.any():
            break
        step[worse] /= 2
    return theta + step


def _refit(wins: np.ndarray, theta0: np.ndarray, h_inv: np.ndarray) -> np.ndarray:
    """Refit resamples from ``theta0`` holding the point estimate's Hessian fixed.

    A resample's Hessian is close to the full data's, so the fixed-Hessian (chord)
    iteration converges fast at the cost of one matrix product per step instead of a
    linear solve per round. Rounds it does not settle get full Newton.
    """
    theta = np.repeat(theta0[None, :], len(wins), axis=0)
    total = wins + wins.transpose(0, 2, 1)
    won = wins.sum(axis=2)
    done = np.zeros(len(wins), dtype=bool)
    for _ in range(_CHORD_MAX_ITER):
        step = ratio_gradient(won, total, theta) @ h_inv
        step[done] = 0.0
        theta += step
        done |= np.abs(step).max(axis=1) < _NEWTON_TOL
        if done.all():
            break
    redo = ~done | ~np.isfinite(theta).all(axis=1)
    if redo.any():
        theta[redo] = _newton(wins[redo], np.repeat(theta0[None, :], redo.sum(), axis=0))
    return theta


def _to_elo(
    theta: np.ndarray,
    models: list[str],
    anchor: str | None,
    anchor_rating: float,
    init_rating: float,
    base: float,
    scale: float,
) -> np.ndarray:
    elo = theta * (scale / math.log(base))
    if anchor is None:
        return elo - elo.mean(axis=1, keepdims=True) + init_rating
    if anchor not in models:
        raise ArenaError(f"anchor model {anchor!r} is not among the battles' models")
    k = models.index(anchor)
    return elo - elo[:, [k]] + anchor_rating


def bootstrap_bt(
    battles: pd.DataFrame,
    *,
    rng: np.random.Generator,
    rounds: int = DEFAULT_ROUNDS,
    ties: Ties = "half",
    anchor: str | None = None,
    anchor_rating: float = 1000.0,
    init_rating: float = 1000.0,
    base: float = 10.0,
    scale: float = 400.0,
    prior: float = 0.0,
) -> BootstrapBT:
    """Bradley–Terry ratings with ``rounds`` bootstrap replicates (battles resampled).

    Each round draws how many copies of every distinct (pair, outcome, weight) battle it
    holds from ``Multinomial(N, count/N)`` (N = number of battles), which is exactly a
    resample of N rows with replacement (drawn by ``ratings_fast.multinomial_rounds`` in two
    seeded streams beside the refits; the numbers depend on ``rng`` only), then refits from
    the point estimate (Newton steps with the point estimate's Hessian, full Newton for
    rounds that do not settle). A round whose maximum likelihood does not exist (e.g. a
    model that never loses in that resample, with ``prior = 0``) is a NaN row;
    :func:`ratings_table` reports how many (if there are many, the intervals are too
    narrow: add battles or set ``prior``).

    Args:
        battles: a battles table.
        rng: the source of randomness (seed it for reproducible intervals).
        rounds: number of bootstrap resamples.
        ties, anchor, anchor_rating, init_rating, base, scale, prior: as :func:`fit_bt`.
    """
    if rounds < 1:
        raise ArenaError(f"bootstrap_bt: rounds must be >= 1, got {rounds}")
    cells = _cells(battles, ties, None)
    point = _point_fit(cells, prior)
    chunk = max(1, min(_CHUNK, _CHUNK_CELLS // len(cells.models) ** 2))
    sizes = [min(chunk, rounds - start) for start in range(0, rounds, chunk)]
    with contextlib.closing(resampled(cells.n, sizes, rng)) as chunks:
        reps = [_bootstrap_chunk(cells, point, counts, prior) for counts in chunks]
    theta = np.concatenate([point.theta[None, :], *reps])
    elo = _to_elo(theta, cells.models, anchor, anchor_rating, init_rating, base, scale)
    return BootstrapBT(cells.models, elo[0], elo[1:], cells.n_battles)


def _bootstrap_chunk(cells: _Cells, point: _Point, counts: np.ndarray, prior: float) -> np.ndarray:
    size = len(counts)
    wins = _with_prior(_wins(cells, counts), prior)
    # a resample keeping every edge of the (strongly connected) full win graph is too;
    # only the others need the graph check
    lost_edge = ((point.wins > 0) & (wins <= 0)).any(axis=(1, 2))
    ok = np.ones(size, dtype=bool)
    for k in np.flatnonzero(lost_edge):
        ok[k] = _strongly_connected(wins[k])[0] == 1
    theta = np.full((size, len(cells.models)), np.nan)
    if ok.any():
        theta[ok] = _refit(wins[ok], point.theta, point.h_inv)
    return theta


def ratings_table(boot: BootstrapBT, *, level: float = DEFAULT_LEVEL) -> pd.DataFrame:
    """The ratings with percentile bootstrap intervals, highest first.

    Returns:
        Columns ``model, rating, ci_low, ci_high, n_battles, level, rounds,
        degenerate_rounds`` (rounds whose resample had no finite MLE, left out of the
        interval).
    """
    rows = []
    degenerate = int(np.isnan(boot.replicates).any(axis=1).sum())
    for k, model in enumerate(boot.models):
        ci = percentile_interval(float(boot.ratings[k]), boot.replicates[:, k], level)
        rows.append((model, ci.estimate, ci.low, ci.high, int(boot.n_battles[k])))
    table = pd.DataFrame(rows, columns=["model", "rating", "ci_low", "ci_high", "n_battles"])
    table = table.assign(level=level, rounds=len(boot.replicates), degenerate_rounds=degenerate)
    return table.sort_values("rating", ascending=False, kind="stable").reset_index(drop=True)


def rank_distribution(boot: BootstrapBT) -> pd.DataFrame:
    """Share of bootstrap rounds in which each model takes each rank (1 = best).

    Ranks are competition ranks (1 + number of models rated strictly higher); rounds
    without a finite fit are left out. Rows follow the point ratings, highest first.
    """
    reps = boot.replicates[~np.isnan(boot.replicates).any(axis=1)]
    n = len(boot.models)
    if len(reps) == 0:
        raise ArenaError("rank_distribution: no bootstrap round has a finite fit")
    from scipy.stats import rankdata  # here: importing scipy.stats costs ~0.5 s per process

    ranks = rankdata(-reps, axis=1, method="min")
    share = np.stack([(ranks == r).mean(axis=0) for r in range(1, n + 1)], axis=1)
    table = pd.DataFrame(share, index=pd.Index(boot.models, name="model"), columns=range(1, n + 1))
    order = np.argsort(-boot.ratings, kind="stable")
    return table.iloc[order]


# ---------------------------------------------------------------------- online Elo


def online_elo(
    battles: pd.DataFrame,
    *,
    k: float = 4.0,
    base: float = 10.0,
    scale: float = 400.0,
    init_rating: float = 1000.0,
    ties: Ties = "half",
) -> pd.Series:
    """Online Elo, battles processed in the given order (as FastChat ``compute_elo``).

    Per battle: ``p = 1 / (1 + base^((R_b - R_a)/scale))``, ``R_a += k·w·(s - p)``,
    ``R_b -= k·w·(s - p)`` with ``s`` = 1 / 0 / 0.5 for an a win / b win / tie and ``w``
    the battle's weight; ``ties="drop"`` skips ties.

    Args:
        battles: a battles table, in the order the ratings are updated.
        k: the K factor.
        base: logistic base (10 on the Elo scale).
        scale: rating points per factor ``base`` in odds (400 on the Elo scale).
        init_rating: every model's starting rating.
        ties: ``"half"`` (a tie is half a win) or ``"drop"``.

    Returns:
        Ratings by model, highest first.
    """
    b = validate_battles(battles)
    if ties == "drop":
        b = b[b["winner"] != "tie"]
        if b.empty:
            raise ArenaError("online_elo: every battle is a tie and ties='drop': nothing to rate")
    codes, models = pd.factorize(pd.concat([b["model_a"], b["model_b"]]))
    n = len(b)
    outcome = b["winner"].map({"a": 1.0, "b": 0.0, "tie": 0.5}).to_numpy()
    ratings = _elo_loop(codes[:n], codes[n:], outcome, b["weight"].to_numpy(), k, base, scale)
    series = pd.Series(np.asarray(ratings) + init_rating, index=list(models), name="rating")
    return series.sort_values(ascending=False)


def _elo_loop(
    a: np.ndarray,
    b: np.ndarray,
    outcome: np.ndarray,
    weight: np.ndarray,
    k: float,
    base: float,
    scale: float,
) -> list[float]:
    alpha = math.log(base) / scale
    ratings = [0.0] * (max(a.max(), b.max()) + 1)
    for ia, ib, s, w in zip(a.tolist(), b.tolist(), outcome.tolist(), weight.tolist(), strict=True):
        p = 1.0 / (1.0 + math.exp(alpha * (ratings[ib] - ratings[ia])))
        update = k * w * (s - p)
        ratings[ia] += update
        ratings[ib] -= update
    return ratings


# ---------------------------------------------------------------------- win rates


def observed_win_rates(
    battles: pd.DataFrame, *, ties: Ties = "half", models: Sequence[str] | None = None
) -> pd.DataFrame:
    """Observed win share of the row model against the column model.

    ``(wins + ties/2) / battles`` between the two (weighted; ``ties="drop"`` leaves ties
    out of both). NaN on the diagonal and for pairs that never met.
    """
    counts = pair_counts(battles, ties=ties, models=models)
    wins = counts.wins
    played = wins + wins.T
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(played > 0, wins / played, np.nan)
    np.fill_diagonal(rate, np.nan)
    return _square(rate, counts.models)


def predicted_win_rates(
    ratings: pd.Series, *, base: float = 10.0, scale: float = 400.0
) -> pd.DataFrame:
    """Bradley–Terry probability that the row model beats the column model."""
    r = ratings.to_numpy(dtype=float)
    prob = 1.0 / (1.0 + base ** ((r[None, :] - r[:, None]) / scale))
    np.fill_diagonal(prob, np.nan)
    return _square(prob, list(ratings.index))


def _square(values: np.ndarray, models: list[str]) -> pd.DataFrame:
    return pd.DataFrame(
        values, index=pd.Index(models, name="model"), columns=pd.Index(models, name="opponent")
    )


def win_rate_vs(
    battles: pd.DataFrame,
    baseline: str,
    *,
    method: Literal["wilson", "bootstrap"] = "wilson",
    level: float = DEFAULT_LEVEL,
    rng: np.random.Generator | None = None,
    rounds: int = DEFAULT_ROUNDS,
) -> pd.DataFrame:
    """Each model's observed win rate against ``baseline`` (ties as half) with an interval.

    ``method="wilson"``: Wilson score interval at ``level`` with ``n`` = summed weight of
    the battles and ``successes`` = wins + ties/2 (fractional counts are fine in the
    formula). ``"bootstrap"``: percentile interval from ``rounds`` multinomial resamples of
    the battles drawn with ``rng`` (required).

    Returns:
        Columns ``model, win_rate, ci_low, ci_high, n_battles, weight`` (summed),
        ``level, method``.
    """
    b = validate_battles(battles)
    rows = []
    for model, score, weight in _versus(b, baseline):
        if method == "wilson":
            n = float(weight.sum())
            # the formula only needs p and n; ties make successes fractional
            ci = wilson_interval(cast(int, float(score @ weight)), cast(int, n), level)
        elif method == "bootstrap" and rng is not None:
            ci = _bootstrap_rate(score, weight, rng, rounds, level)
        else:
            raise ArenaError(f"win_rate_vs: method {method!r} (bootstrap needs rng)")
        rows.append((model, ci.estimate, ci.low, ci.high, len(score), float(weight.sum())))
    columns = ["model", "win_rate", "ci_low", "ci_high", "n_battles", "weight"]
    return pd.DataFrame(rows, columns=columns).assign(level=level, method=method)


def _versus(b: pd.DataFrame, baseline: str) -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
    """Per opponent of ``baseline``: its scores (1 win, 0.5 tie, 0 loss) and weights."""
    if baseline not in set(b["model_a"]) | set(b["model_b"]):
        raise ArenaError(f"win_rate_vs: baseline {baseline!r} played no battle")
    involved = b[(b["model_a"] == baseline) | (b["model_b"] == baseline)]
    as_a = involved["model_a"] == baseline
    opponent = np.where(as_a, involved["model_b"], involved["model_a"])
    points = involved["winner"].map({"a": 0.0, "b": 1.0, "tie": 0.5}).to_numpy()
    score = np.where(as_a, points, 1.0 - points)
    weight = involved["weight"].to_numpy()
    for model in sorted(set(opponent)):
        mask = opponent == model
        yield model, score[mask], weight[mask]


def _bootstrap_rate(
    score: np.ndarray, weight: np.ndarray, rng: np.random.Generator, rounds: int, level: float
) -> Interval:
    cells = pd.DataFrame({"s": score, "w": weight}).value_counts().reset_index(name="n")
    draws = rng.multinomial(len(score), cells["n"] / len(score), size=rounds)
    won = draws @ (cells["s"] * cells["w"]).to_numpy()
    total = draws @ cells["w"].to_numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        reps = won / total
    estimate = float(score @ weight / weight.sum())
    return percentile_interval(estimate, reps, level)


# ------------------------------------------------------------------ rating reports


class RatingReport(NamedTuple):
    """Everything a report shows about one set of battles."""

    table: pd.DataFrame
    """:func:`ratings_table` plus ``online_elo`` (battles in the given order)."""
    boot: BootstrapBT
    """Point ratings and bootstrap replicates."""
    observed: pd.DataFrame
    """:func:`observed_win_rates`, rows and columns in rating order."""
    predicted: pd.DataFrame
    """:func:`predicted_win_rates` of the point ratings, same order."""
    pairs: pd.DataFrame
    """:func:`win_rate_pairs`: observed and predicted win rate of every pair that met."""
    ranks: pd.DataFrame
    """:func:`rank_distribution`."""


def rate_battles(
    battles: pd.DataFrame,
    *,
    rng: np.random.Generator,
    rounds: int = DEFAULT_ROUNDS,
    level: float = DEFAULT_LEVEL,
    anchor: str | None = None,
    anchor_rating: float = 1000.0,
    elo_k: float = 4.0,
    prior: float = 0.0,
) -> RatingReport:
    """Bradley–Terry ratings with bootstrap intervals, online Elo and win-rate matrices.

    Args:
        battles: a battles table (online Elo reads it in the given order).
        rng: source of the bootstrap's randomness.
        rounds: bootstrap rounds.
        level: interval level.
        anchor: model pinned at ``anchor_rating`` (BT and online Elo); ``None``: both are
            mean-centred at ``anchor_rating`` (online Elo is zero-sum, so its mean stays
            at its initial rating).
        anchor_rating: the anchor's rating, or the mean rating without an anchor.
        elo_k: online Elo's K factor.
        prior: pseudo-ties between every pair (see :func:`fit_bt`; 0 = pure MLE).
    """
    boot = bootstrap_bt(
        battles, rng=rng, rounds=rounds, anchor=anchor, anchor_rating=anchor_rating,
        init_rating=anchor_rating, prior=prior,
    )  # fmt: skip
    table = ratings_table(boot, level=level)
    elo = online_elo(battles, k=elo_k, init_rating=anchor_rating)
    if anchor is not None:
        elo = elo - elo[anchor] + anchor_rating
    table.insert(5, "online_elo", table["model"].map(elo))
    order = list(table["model"])
    ratings = pd.Series(boot.ratings, index=boot.models).reindex(order)
    return RatingReport(
        table=table,
        boot=boot,
        observed=observed_win_rates(battles, models=order),
        predicted=predicted_win_rates(ratings),
        pairs=win_rate_pairs(battles, ratings),
        ranks=rank_distribution(boot),
    )


def win_rate_pairs(
    battles: pd.DataFrame, ratings: pd.Series, *, base: float = 10.0, scale: float = 400.0
) -> pd.DataFrame:
    """Observed vs Bradley–Terry-predicted win rate, one row per pair of models that met.

    Returns:
        ``model, opponent, observed`` (the row model's share, ties as half), ``predicted``
        and ``weight`` (summed weight of their battles); ``model`` is the higher rated.
    """
    counts = pair_counts(battles, models=list(ratings.index))
    played = counts.wins + counts.wins.T
    i, j = np.nonzero(np.triu(played > 0, k=1))
    r = ratings.to_numpy(dtype=float)
    return pd.DataFrame(
        {
            "model": [counts.models[k] for k in i],
            "opponent": [counts.models[k] for k in j],
            "observed": counts.wins[i, j] / played[i, j],
            "predicted": 1.0 / (1.0 + base ** ((r[j] - r[i]) / scale)),
            "weight": played[i, j],
        }
    )


def by_dataset(frames: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Stack tables from several datasets with a leading ``dataset`` column."""
    parts = [df.assign(dataset=name) for name, df in frames.items()]
    if not parts:
        return pd.DataFrame(columns=["dataset"])
    out = pd.concat(parts, ignore_index=True)
    return out[["dataset", *[c for c in out.columns if c != "dataset"]]]
