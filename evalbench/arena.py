"""Pairwise battles, Bradley–Terry ratings with bootstrap intervals, online Elo, win rates.

The pure core of arena-style studies (Chatbot Arena, Arena-Hard, AlpacaEval, Auto-Arena).

* **Battles** are a DataFrame with columns ``model_a, model_b, winner, weight, question_id``
  (``winner`` in ``{"a", "b", "tie"}``), the DataFrame form of
  :class:`evalbench.records.Battle`. Constructors turn pairwise judgments in both orders,
  rubric scores, and the public FastChat / Arena-Hard / AlpacaEval / PRD files into battles;
  every constructor ends in :func:`validate_battles`, so a malformed row is an error naming
  the row.
* **Bradley–Terry** (Bradley & Terry, 1952): ``P(i beats j) = 1 / (1 + base^((R_j - R_i)/scale))``
  fitted by maximum likelihood on the aggregated pair counts (the sufficient statistics),
  with Newton's method on the ``n_models`` parameters. On the Elo scale (base 10, scale
  400) this is what Chatbot Arena and Arena-Hard report (``compute_mle_elo`` in
  lm-sys/arena-hard-auto, ``compute_bt`` in lm-sys/FastChat ``rating_systems.py``), which
  fit the same likelihood with a logistic regression on one (or two) rows per battle.
* **Bootstrap**: resampling N battles with replacement is the same as drawing the number
  of copies of each distinct battle from ``Multinomial(N, count/N)``; merging categories
  of a multinomial gives a multinomial, so it is enough to draw one count per distinct
  (pair, outcome, weight) cell. Each round then refits from the point estimate (warm start).
* **Online Elo** (as FastChat ``compute_elo``) processes battles in the given order.
* **AlpacaEval**: :func:`alpaca_eval_win_rate` reproduces the leaderboard's ``win_rate``
  (and its SE, counts and ``discrete_win_rate``) bit for bit. The length-controlled win
  rate is *not* computed: its GLM needs AlpacaEval's ``df_gamed.csv`` and instruction
  difficulties from the Hugging Face hub, which are not registered sources, so it could
  not be reproduced exactly.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Literal, NamedTuple, cast

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.sparse.csgraph import connected_components
from scipy.special import expit
from scipy.stats import rankdata

from evalbench import sources
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

FASTCHAT_WINNERS = {"model_a": "a", "model_b": "b", "tie": "tie", "tie (bothbad)": "tie"}
"""FastChat / Arena-Hard battle-file winner labels -> ours (both ties count as a tie)."""

ARENA_HARD_LABELS = {
    "A>>B": ("A", True),
    "A>B": ("A", False),
    "A=B": ("tie", False),
    "B=A": ("tie", False),
    "B>A": ("B", False),
    "B>>A": ("B", True),
    "A<B": ("B", False),
    "A<<B": ("B", True),
    "B<A": ("A", False),
    "B<<A": ("A", True),
}
"""Arena-Hard judge labels -> (preferred screen position, strong?)."""

PRD_SCORES = {1: "a", 2: "b", 3: "tie"}
"""PRD Vicuna-80 ``score``: 1 = the answer shown first is better, 2 = the second, 3 = tie."""

_NEWTON_TOL = 1e-9  # natural-log-odds units: 1.7e-7 Elo points
_NEWTON_MAX_ITER = 100
_MAX_STEP = 4.0  # cap on one Newton step (log-odds) so far-from-optimum starts stay stable
_CHORD_MAX_ITER = 50
_SAFE_STEP = 0.5  # log-odds; smaller Newton steps are taken without a likelihood check
_CHUNK = 100  # bootstrap rounds fitted together (memory ~ 6 * chunk * n_models^2 floats)
_CHUNK_CELLS = 1_000_000  # ... but at most this many chunk * n_models^2 cells (8 MB arrays)


class ArenaError(ValueError):
    """Malformed battles or judgments; the message names the row (or file and line)."""


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
        _fail_first(b, names.isna() | (names.astype(str).str.len() == 0), source, f"{col} is empty")
    winner = b["winner"]
    bad = ~winner.isin(WINNERS)
    _fail_first(b, bad, source, lambda r: f"unknown winner {r['winner']!r} (expected a, b or tie)")
    same = b["model_a"].to_numpy() == b["model_b"].to_numpy()
    _fail_first(b, same, source, lambda r: f"model {r['model_a']!r} plays itself")
    w = b["weight"].to_numpy(dtype=float)
    bad_w = ~np.isfinite(w) | (w < 0)
    _fail_first(b, bad_w, source, lambda r: f"weight {r['raw_weight']!r} is not a number >= 0")


def _fail_first(
    b: pd.DataFrame,
    mask: object,
    source: str,
    message: str | Callable[[dict[str, object]], str],
) -> None:
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


def battles_from_pairwise(
    judgments: pd.DataFrame,
    *,
    strong_weight: float = 1.0,
    combine: bool = False,
    unscored: Unscored = "raise",
) -> pd.DataFrame:
    """Battles from pairwise judgments made in both presentation orders.

    ``judgments`` has ``question_id, model_a, model_b, verdict_ab, verdict_ba``: the
    verdict when the judge saw A's answer first (``_ab``) and when it saw B's first
    (``_ba``), both already expressed in terms of the *models* (``"a"``, ``"b"``,
    ``"tie"``; None/NaN = unscored). Optional ``strength_ab`` / ``strength_ba`` hold
    ``"strong"`` or ``"weak"`` (missing = weak), e.g. Arena-Hard's ``A>>B`` vs ``A>B``.

    * ``combine=False`` (default, as Arena-Hard): each order is its own battle (column
      ``position`` says which); a strong win has weight ``strong_weight`` (Arena-Hard uses 3
      by repeating the row three times, the same likelihood), ties have weight 1.
    * ``combine=True``: one battle per judgment, weight 1; the winner is the sign of the
      sum of signed verdicts (``a`` = +w, ``b`` = -w, tie = 0, w = strength weight), so a
      position-inconsistent pair (A wins one order, B the other, same strength) is a tie.

    Args:
        judgments: one row per (question, pair) judged twice.
        strong_weight: weight of a strong win (1 = strength ignored).
        combine: one battle per judgment instead of one per order.
        unscored: ``"raise"`` on a missing verdict, or ``"drop"`` that order (or, with
            ``combine``, the whole judgment); the number dropped is in ``attrs["unscored"]``.

    Returns:
        Validated battles.
    """
    _require(judgments, ["model_a", "model_b", "verdict_ab", "verdict_ba"], "pairwise judgments")
    orders = [_one_order(judgments, o, strong_weight) for o in ("ab", "ba")]
    if combine:
        return _combined(judgments, orders, unscored)
    both = pd.concat(orders).sort_index(kind="stable")
    kept, n_unscored = _drop_unscored(both, unscored, "pairwise judgments")
    out = validate_battles(kept, source="pairwise judgments").reset_index(drop=True)
    out.attrs["unscored"] = n_unscored
    return out


def _require(df: pd.DataFrame, columns: Sequence[str], source: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ArenaError(f"{source}: missing column(s) {missing}; have {list(df.columns)}")
    if len(df) == 0:
        raise ArenaError(f"{source}: empty input")


def _one_order(j: pd.DataFrame, order: str, strong_weight: float) -> pd.DataFrame:
    verdict = j[f"verdict_{order}"]
    strength = j[f"strength_{order}"] if f"strength_{order}" in j else pd.Series(None, j.index)
    ok = verdict.isna() | verdict.isin(WINNERS)
    _fail_first(j, ~ok, "pairwise judgments", f"verdict_{order} not in a, b, tie or empty")
    ok_s = strength.isna() | strength.isin(["strong", "weak"])
    _fail_first(j, ~ok_s, "pairwise judgments", f"strength_{order} not strong, weak or empty")
    strong = (strength == "strong") & verdict.isin(["a", "b"])
    qid = j.get("question_id", "")
    return pd.DataFrame(
        {
            "model_a": j["model_a"],
            "model_b": j["model_b"],
            "winner": verdict,
            "weight": np.where(strong, strong_weight, 1.0),
            "question_id": qid,
            "position": order,
        },
        index=j.index,
    )


def _drop_unscored(b: pd.DataFrame, unscored: Unscored, source: str) -> tuple[pd.DataFrame, int]:
    missing = b["winner"].isna().to_numpy()
    if unscored == "raise":
        _fail_first(b, missing, source, "unscored verdict (pass unscored='drop' to skip it)")
    return b[~missing], int(missing.sum())


def _combined(j: pd.DataFrame, orders: list[pd.DataFrame], unscored: Unscored) -> pd.DataFrame:
    ab, ba = orders
    sign = {"a": 1.0, "b": -1.0, "tie": 0.0}
    total = ab["winner"].map(sign) * ab["weight"] + ba["winner"].map(sign) * ba["weight"]
    winner = np.sign(total).map({1.0: "a", -1.0: "b", 0.0: "tie"})  # NaN = unscored
    out = ab.drop(columns="position").assign(winner=winner, weight=1.0)
    kept, n_unscored = _drop_unscored(out, unscored, "pairwise judgments")
    result = validate_battles(kept, source="pairwise judgments")
    result.attrs["unscored"] = n_unscored
    return result


def battles_from_scores(
    scores: pd.DataFrame,
    *,
    score: str = "score",
    criteria: Mapping[str, float] | None = None,
    tie_margin: float = 0.0,
    baseline: str | None = None,
    unscored: Unscored = "raise",
) -> pd.DataFrame:
    """Battles from per-question rubric scores: on each question the higher score wins.

    Args:
        scores: one row per (``question_id``, ``model``) with a ``score`` column, or with
            the ``criteria`` columns to combine.
        score: name of the score column (ignored when ``criteria`` is given).
        criteria: criterion column -> weight; the score is the weighted sum.
        tie_margin: scores within this distance (``|s_a - s_b| <= tie_margin``) tie.
        baseline: if set, only battles against this model (as ``model_a``); otherwise
            every pair of models that both scored the question (``model_a < model_b``).
        unscored: ``"raise"`` on a missing score, or ``"drop"`` that (question, model);
            the number dropped is in ``attrs["unscored"]``.

    Returns:
        Validated battles, one per question and pair.
    """
    _require(scores, ["question_id", "model"], "scores")
    s = scores.assign(_score=_weighted_score(scores, score, criteria))
    dup = s.duplicated(["question_id", "model"]).to_numpy()
    _fail_first(s, dup, "scores", "duplicate (question_id, model)")
    missing = s["_score"].isna().to_numpy()
    if unscored == "raise":
        _fail_first(s, missing, "scores", "missing score (pass unscored='drop' to skip it)")
    pairs = _score_pairs(s[~missing], baseline)
    diff = pairs["_score_a"] - pairs["_score_b"]
    winner = np.select([diff > tie_margin, diff < -tie_margin], ["a", "b"], default="tie")
    out = pairs[["model_a", "model_b", "question_id"]].assign(winner=winner, weight=1.0)
    result = validate_battles(out.reset_index(drop=True), source="scores")
    result.attrs["unscored"] = int(missing.sum())
    return result


def _weighted_score(
    scores: pd.DataFrame, score: str, criteria: Mapping[str, float] | None
) -> pd.Series:
    if criteria is None:
        _require(scores, [score], "scores")
        return scores[score].astype(float)
    _require(scores, list(criteria), "scores")
    parts = [scores[c].astype(float) * w for c, w in criteria.items()]
    return cast(pd.Series, sum(parts))


def _score_pairs(s: pd.DataFrame, baseline: str | None) -> pd.DataFrame:
    slim = s[["question_id", "model", "_score"]]
    pairs = slim.merge(slim, on="question_id", suffixes=("_a", "_b"))
    if baseline is None:
        return pairs[pairs["model_a"] < pairs["model_b"]]
    if baseline not in set(s["model"]):
        raise ArenaError(f"scores: baseline {baseline!r} has no scores")
    return pairs[(pairs["model_a"] == baseline) & (pairs["model_b"] != baseline)]


# ------------------------------------------------------------------ public formats


def battles_from_fastchat(records: pd.DataFrame, *, source: str = "battle file") -> pd.DataFrame:
    """Battles from a FastChat / Arena-Hard battle table (``winner`` = ``model_a`` etc.).

    ``"tie"`` and ``"tie (bothbad)"`` both become a tie, as in FastChat and Arena-Hard.
    """
    _require(records, ["model_a", "model_b", "winner"], source)
    known = records["winner"].isin(list(FASTCHAT_WINNERS))
    _fail_first(records, ~known, source, lambda r: f"unknown winner {r['winner']!r}")
    out = records.assign(winner=records["winner"].map(FASTCHAT_WINNERS))
    return validate_battles(out, source=source)


def load_fastchat_battles(name: str = "arena_hard/pr44_battles") -> pd.DataFrame:
    """Battles from a registered FastChat-format battle file (JSON lines or a JSON list)."""
    path = sources.fetch(name)
    records = pd.read_json(path, lines=path.suffix == ".jsonl")
    return battles_from_fastchat(records, source=name)


def battles_from_arena_hard(
    judgments: pd.DataFrame,
    *,
    baseline: str,
    strong_weight: float = 3.0,
    repeat_strong: bool = False,
    unscored: Unscored = "raise",
) -> pd.DataFrame:
    """Battles from Arena-Hard pairwise judgment rows (``question_id, model, games``).

    Arena-Hard judges each question twice against the baseline: in game 1 the judge sees
    the baseline as A and the model as B, in game 2 the positions are swapped. Each game
    becomes one battle ``model_a = baseline, model_b = model`` (as Arena-Hard's
    ``show_result.py``); strong verdicts (``A>>B``) weigh ``strong_weight`` (Arena-Hard
    repeats them 3 times: ``repeat_strong=True`` does exactly that, which matters only for
    a row-resampling bootstrap). A game whose ``score`` is None is unscored (Arena-Hard
    skips it silently); a label outside :data:`ARENA_HARD_LABELS` is an error.
    """
    _require(judgments, ["question_id", "model", "games"], "arena-hard judgments")
    verdicts = [_arena_hard_game(judgments, k) for k in (0, 1)]
    pairwise = pd.DataFrame(
        {
            "question_id": judgments["question_id"],
            "model_a": baseline,
            "model_b": judgments["model"],
            "verdict_ab": verdicts[0][0],
            "strength_ab": verdicts[0][1],
            "verdict_ba": verdicts[1][0],
            "strength_ba": verdicts[1][1],
        }
    )
    out = battles_from_pairwise(pairwise, strong_weight=strong_weight, unscored=unscored)
    if repeat_strong:
        if strong_weight != int(strong_weight) or strong_weight < 1:
            raise ArenaError(f"repeat_strong needs a whole strong_weight >= 1, got {strong_weight}")
        n = out.attrs["unscored"]
        copies = np.repeat(np.arange(len(out)), out["weight"].round().astype(int))
        out = out.iloc[copies].assign(weight=1.0)
        out.attrs["unscored"] = n
    return out


def _arena_hard_game(j: pd.DataFrame, k: int) -> tuple[list[str | None], list[str | None]]:
    # game 1 shows the baseline (model_a) as A; game 2 shows the model (model_b) as A
    to_model = {"A": "a", "B": "b", "tie": "tie"} if k == 0 else {"A": "b", "B": "a", "tie": "tie"}
    winners: list[str | None] = []
    strengths: list[str | None] = []
    for label, games in zip(j.index, j["games"], strict=True):
        if not isinstance(games, list) or len(games) != 2:
            raise ArenaError(f"arena-hard judgments row {label!r}: games must be a list of 2")
        score = games[k].get("score") if isinstance(games[k], dict) else None
        if score is not None and score not in ARENA_HARD_LABELS:
            raise ArenaError(f"arena-hard judgments row {label!r}: game {k + 1} score {score!r}")
        side, strong = ARENA_HARD_LABELS[score] if score is not None else (None, False)
        winners.append(to_model[side] if side else None)
        strengths.append("strong" if strong else None)
    return winners, strengths


def load_arena_hard_single_scores(names: Sequence[str]) -> pd.DataFrame:
    """Per-question scores from registered Arena-Hard single-grading judgment files.

    The registered ``arena_hard/arena-bench-v1/judgment/<name>`` files hold GPT-4
    reference-guided single grades (``score`` 1-10; null = the judge's output was not
    parsed). Returns ``question_id, model, score`` (NaN = unscored) for
    :func:`battles_from_scores`.
    """
    frames = []
    for name in names:
        source = f"arena_hard/arena-bench-v1/judgment/{name}"
        rows = pd.read_json(sources.fetch(source), lines=True)
        _require(rows, ["question_id", "model", "score"], source)
        frames.append(rows[["question_id", "model", "score"]].astype({"score": float}))
    return pd.concat(frames, ignore_index=True)


def battles_from_prd_votes(votes: pd.DataFrame, *, source: str = "PRD votes") -> pd.DataFrame:
    """Battles from PRD Vicuna-80 votes (``question_id, model_1, model_2, score``).

    ``model_1`` was shown first and becomes ``model_a``; ``score`` 1 -> a, 2 -> b, 3 -> tie.
    """
    _require(votes, ["question_id", "model_1", "model_2", "score"], source)
    known = votes["score"].isin(list(PRD_SCORES))
    _fail_first(votes, ~known, source, lambda r: f"score {r['score']!r} not in 1, 2, 3")
    out = pd.DataFrame(
        {
            "model_a": votes["model_1"],
            "model_b": votes["model_2"],
            "winner": votes["score"].map(PRD_SCORES),
            "question_id": votes["question_id"],
        }
    )
    return validate_battles(out, source=source)


def load_prd_votes(reviewer: str = "human") -> pd.DataFrame:
    """All registered PRD Vicuna-80 votes of one reviewer, in registry (file-name) order.

    Each file ``prd/ratings/<reviewer>/answer_<m1>-vs-answer_<m2>-<reviewer>-reviewer...``
    holds one JSON line per vote (``question_id``, ``score``), in file order. Returns
    ``question_id, model_1, model_2, rating_seq, score`` (``rating_seq`` = the vote's
    position among the file's votes on that question, one per MTurk rater).
    """
    names = sources.names(f"prd/ratings/{reviewer}/")
    if not names:
        raise ArenaError(f"no registered PRD ratings for reviewer {reviewer!r}")
    pattern = re.compile(
        rf"answer[-_](?P<m1>.+?)-vs-answer[-_](?P<m2>.+)-{re.escape(reviewer)}-reviewer.*"
    )
    return pd.concat([_prd_file(n, pattern) for n in names], ignore_index=True)


def _prd_file(name: str, pattern: re.Pattern[str]) -> pd.DataFrame:
    match = pattern.fullmatch(name.rsplit("/", 1)[1])
    if match is None:
        raise ArenaError(f"{name}: file name does not say which models were compared")
    rows = []
    with open(sources.fetch(name), encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, start=1):
            try:
                vote = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ArenaError(f"{name} line {line_no}: not JSON ({exc.msg})") from exc
            if not isinstance(vote, dict) or "question_id" not in vote or "score" not in vote:
                raise ArenaError(f"{name} line {line_no}: needs question_id and score")
            rows.append((vote["question_id"], match["m1"], match["m2"], vote["score"]))
    votes = pd.DataFrame(rows, columns=["question_id", "model_1", "model_2", "score"])
    votes.insert(3, "rating_seq", votes.groupby("question_id").cumcount())
    return votes


# ---------------------------------------------------------------------- AlpacaEval


class AlpacaWinRate(NamedTuple):
    """AlpacaEval head-to-head metrics against the baseline (percentages where named so)."""

    win_rate: float
    standard_error: float
    n_wins: int
    n_wins_base: int
    n_draws: int
    n_total: int
    discrete_win_rate: float


def load_alpaca_eval_annotations(model: str) -> pd.DataFrame:
    """AlpacaEval 2 annotations of ``model`` vs the baseline (``generator_1``).

    Read with pandas' default JSON parser, like the official package: its float parsing
    differs from Python's in the last bits, and only it reproduces the leaderboard's
    ``win_rate`` bit for bit.
    """
    return pd.read_json(sources.fetch(f"alpaca_eval/annotations/{model}"))


def load_alpaca_eval_outputs(model: str) -> pd.DataFrame:
    """AlpacaEval 2 model outputs (``instruction, output, generator, dataset``)."""
    return pd.read_json(sources.fetch(f"alpaca_eval/model_outputs/{model}"))


def load_alpaca_eval_leaderboard() -> pd.DataFrame:
    """The official AlpacaEval 2 leaderboard (weighted GPT-4 Turbo annotator), by model."""
    return pd.read_csv(sources.fetch("alpaca_eval/leaderboard"), index_col=0)


def alpaca_eval_win_rate(preferences: Sequence[float] | np.ndarray | pd.Series) -> AlpacaWinRate:
    """AlpacaEval's win rate from preferences in [1, 2] (2 = the model, not the baseline).

    As ``alpaca_eval.metrics.get_winrate``: ``0`` is an old encoding of a draw (-> 1.5);
    values outside [1, 2] (and NaN) are dropped; ``win_rate = 100·mean(p - 1)`` (so an
    exact 1.5 counts half), ``standard_error`` = 100·SEM; ``n_wins``/``n_wins_base`` count
    ``p > 1.5`` / ``p < 1.5``; ``n_draws`` counts exact 1.5; ``discrete_win_rate`` rounds
    each non-draw preference to 1 or 2 first.
    """
    p = pd.Series(preferences, dtype=float).replace({0.0: 1.5})
    p = p[(p >= 1) & (p <= 2)] - 1
    if p.empty:
        raise ArenaError("alpaca_eval_win_rate: no preference in [1, 2]")
    draws = p == 0.5
    discrete = p.where(draws, p.round())
    return AlpacaWinRate(
        win_rate=float(p.mean() * 100),
        standard_error=float(p.sem() * 100),
        n_wins=int((p > 0.5).sum()),
        n_wins_base=int((p < 0.5).sum()),
        n_draws=int(draws.sum()),
        n_total=len(p),
        discrete_win_rate=float(discrete.mean() * 100),
    )


def battles_from_alpaca_eval(annotations: pd.DataFrame) -> pd.DataFrame:
    """Soft battles from AlpacaEval annotations: one item = one unit of weight.

    An item with preference ``p`` becomes two battles ``generator_1`` (the baseline) vs
    ``generator_2``: won by ``b`` with weight ``p - 1`` and by ``a`` with weight ``2 - p``
    (zero-weight halves are dropped), so the weighted win rate of ``b`` is AlpacaEval's
    ``win_rate``. NaN preferences are unscored and raise.
    """
    _require(annotations, ["generator_1", "generator_2", "preference"], "alpaca_eval annotations")
    p = annotations["preference"].astype(float).replace({0.0: 1.5})
    bad = p.isna() | (p < 1) | (p > 2)
    _fail_first(annotations, bad, "alpaca_eval annotations", "preference not in [1, 2]")
    qid = annotations.get("instruction", annotations.index)
    halves = [
        pd.DataFrame({"winner": w, "weight": weight, "question_id": qid})
        for w, weight in (("b", p - 1), ("a", 2 - p))
    ]
    out = pd.concat(halves).sort_index(kind="stable")
    out["model_a"] = annotations["generator_1"].reindex(out.index).to_numpy()
    out["model_b"] = annotations["generator_2"].reindex(out.index).to_numpy()
    out = out[out["weight"] > 0]
    return validate_battles(out, source="alpaca_eval annotations").reset_index(drop=True)


def answer_lengths(outputs: pd.DataFrame, *, column: str = "output") -> pd.Series:
    """Answer length in characters by instruction (AlpacaEval's ``avg_length`` unit)."""
    _require(outputs, ["instruction", column], "outputs")
    lengths = outputs.set_index("instruction")[column].str.len()
    if lengths.index.duplicated().any():
        raise ArenaError("outputs: duplicate instruction; lengths need one answer each")
    return lengths.astype(int)


def prefer_longer_probability(
    preference: Sequence[float] | np.ndarray,
    length_1: Sequence[float] | np.ndarray,
    length_2: Sequence[float] | np.ndarray,
) -> float:
    """P(the judge prefers the longer answer), over items whose answers differ in length.

    ``preference`` is AlpacaEval's (1 = output 1, 2 = output 2, continuous in between):
    the longer answer's share is ``p - 1`` when output 2 is longer, else ``2 - p``.
    """
    p = np.asarray(preference, dtype=float)
    l1, l2 = np.asarray(length_1, dtype=float), np.asarray(length_2, dtype=float)
    if not p.shape == l1.shape == l2.shape:
        raise ArenaError(f"prefer_longer_probability: lengths differ {p.shape, l1.shape, l2.shape}")
    if not (np.isfinite(l1).all() and np.isfinite(l2).all()):
        raise ArenaError("prefer_longer_probability: a length is missing (NaN)")
    keep = (l1 != l2) & np.isfinite(p)
    if not keep.any():
        return float("nan")
    share = np.where(l2 > l1, p - 1, 2 - p)[keep]
    return float(share.mean())


class LengthBias(NamedTuple):
    """Answer lengths (characters) and the judge's preference for the longer answer."""

    avg_length: float
    avg_length_baseline: float
    prefer_longer: float
    """P(the longer answer is preferred), over items whose lengths differ."""
    n_compared: int
    """Items whose two answers differ in length."""


def alpaca_eval_length_bias(
    annotations: pd.DataFrame, model_lengths: pd.Series, baseline_lengths: pd.Series
) -> LengthBias:
    """Lengths and P(prefer longer) for one model's AlpacaEval annotations.

    Args:
        annotations: the model's annotations (``instruction``, ``preference``; output 1 is
            the baseline's answer, output 2 the model's).
        model_lengths: :func:`answer_lengths` of the model's outputs.
        baseline_lengths: :func:`answer_lengths` of the baseline's outputs.
    """
    _require(annotations, ["instruction", "preference"], "alpaca_eval annotations")
    l1 = baseline_lengths.reindex(annotations["instruction"]).to_numpy(dtype=float)
    l2 = model_lengths.reindex(annotations["instruction"]).to_numpy(dtype=float)
    for lengths, who in ((l1, "baseline"), (l2, "model")):
        _fail_first(annotations, np.isnan(lengths), "alpaca_eval annotations", f"no {who} output")
    return LengthBias(
        avg_length=float(model_lengths.mean()),
        avg_length_baseline=float(baseline_lengths.mean()),
        prefer_longer=prefer_longer_probability(annotations["preference"], l1, l2),
        n_compared=int((l1 != l2).sum()),
    )


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
    b = validate_battles(battles)
    names, a, c = _model_codes(b, models)
    i, j = np.minimum(a, c), np.maximum(a, c)
    won_by_a = (b["winner"] == "a").to_numpy()
    kind = np.where(b["winner"] == "tie", 2, np.where(won_by_a == (a == i), 0, 1))
    key = pd.DataFrame({"i": i, "j": j, "kind": kind, "w": b["weight"].to_numpy()})
    grouped = key.groupby(["i", "j", "kind", "w"], sort=True).size().reset_index(name="n")
    tie_credit = 0.5 if ties == "half" else 0.0
    share_i = np.select([grouped["kind"] == 0, grouped["kind"] == 1], [1.0, 0.0], tie_credit)
    share_j = np.where(grouped["kind"] == 2, tie_credit, 1.0 - share_i)
    n_played = np.bincount(np.concatenate([a, c]), minlength=len(names))
    return _Cells(
        models=names,
        i=grouped["i"].to_numpy(),
        j=grouped["j"].to_numpy(),
        to_i=grouped["w"].to_numpy() * share_i,
        to_j=grouped["w"].to_numpy() * share_j,
        n=grouped["n"].to_numpy(),
        n_battles=n_played,
    )


def _model_codes(
    b: pd.DataFrame, models: Sequence[str] | None
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Model names (sorted unless given) and the index of each battle's two models."""
    codes, uniques = pd.factorize(pd.concat([b["model_a"], b["model_b"]], ignore_index=True))
    found = [str(m) for m in uniques]
    names = sorted(found) if models is None else list(models)
    unknown = set(found) - set(names)
    if unknown:
        raise ArenaError(f"battles name models outside `models`: {sorted(unknown)}")
    remap = pd.Index(names).get_indexer(found)
    both = remap[codes]
    return names, both[: len(b)], both[len(b) :]


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
        ArenaError: the maximum likelihood does not exist (some group of models never
            loses, or never wins, against the rest) and ``prior`` is 0.
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
    if n_comp == 1:
        return
    smallest = np.argmin(np.bincount(labels))
    group = [m for m, lab in zip(models, labels, strict=True) if lab == smallest]
    raise ArenaError(
        f"the Bradley–Terry MLE does not exist: the win graph splits into {n_comp} groups, "
        f"e.g. {group} never beat (or never lose to) the others; add battles or set prior > 0"
    )


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
    done = np.zeros(len(wins), dtype=bool)
    for _ in range(_CHORD_MAX_ITER):
        step = _gradient(wins, total, theta)[0] @ h_inv
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
    resample of N rows with replacement, then refits from the point estimate (Newton steps
    with the point estimate's Hessian, full Newton for rounds that do not settle). A round
    whose maximum likelihood does not exist (e.g. a model that never loses in that
    resample, with ``prior = 0``) is a NaN row; :func:`ratings_table` reports how many (if
    there are many, the intervals are too narrow: add battles or set ``prior``).

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
    reps = [
        _bootstrap_chunk(cells, point, min(chunk, rounds - start), rng, prior)
        for start in range(0, rounds, chunk)
    ]
    theta = np.concatenate([point.theta[None, :], *reps])
    elo = _to_elo(theta, cells.models, anchor, anchor_rating, init_rating, base, scale)
    return BootstrapBT(cells.models, elo[0], elo[1:], cells.n_battles)


def _bootstrap_chunk(
    cells: _Cells, point: _Point, size: int, rng: np.random.Generator, prior: float
) -> np.ndarray:
    n_total = int(cells.n.sum())
    counts = rng.multinomial(n_total, cells.n / n_total, size=size)
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

    Returns:
        Ratings by model, highest first.
    """
    b = validate_battles(battles)
    if ties == "drop":
        b = b[b["winner"] != "tie"]
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

    ``wilson``: Wilson score interval with ``n`` = summed weight of the battles and
    ``successes`` = wins + ties/2 (fractional counts are fine in the formula).
    ``bootstrap``: percentile interval from ``rounds`` multinomial resamples of the battles
    (needs ``rng``).

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
