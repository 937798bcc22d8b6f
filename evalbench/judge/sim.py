"""Simulated judges: seeded rubric and pairwise judges with known truth (the ``sim`` provider).

A simulated rubric judge scores ``true + leniency + length_bias·ln(length ratio) + noise``
(rounded, clipped), keeping half its leniency when its rubric has few-shot anchors
(:data:`ANCHORED_LENIENCY`); a simulated pairwise judge follows Bradley–Terry with a tie band, a
position bias and a length bias. Each can write malformed text at a set rate, which the
parsers must turn into unscored results. Kept apart from the parsers and scorers: nothing
outside :mod:`evalbench.judge.ask` (which wires them into chat jobs) and the tests calls them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy.special import expit

from evalbench.models import ChatRequest, SimReply, SimSpec

from .prompts import VERDICT_INSTRUCTIONS, VerdictFormat
from .rubrics import OutputField, Rubric, as_rubric, plain_number, weighted_score

_RUBRIC_MALFORMED = ("prose", "truncated", "out_of_range", "nan")
_PAIRWISE_MALFORMED = ("prose", "conflicting", "truncated")
_SIM_PROSE = (
    "I read the answer carefully. It has clear strengths and some weaknesses, and on "
    "balance I would rather not commit to a number here."
)


def _check_sim_args(noise: float, malformed_rate: float, **lengths: float) -> None:
    if not (math.isfinite(noise) and noise >= 0):
        raise ValueError(f"noise must be a finite number >= 0, got {noise}")
    if not 0 <= malformed_rate <= 1:
        raise ValueError(f"malformed_rate must be in [0, 1], got {malformed_rate}")
    for name, value in lengths.items():
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be a finite number > 0, got {value}")


def sim_rubric_scores(
    rubric: Rubric | str,
    true_scores: Mapping[str, float] | float,
    *,
    rng: np.random.Generator,
    noise: float = 1.0,
    leniency: float = 0.0,
    length_bias: float = 0.0,
    answer_length: float = 1.0,
    reference_length: float = 1.0,
) -> dict[str, float]:
    """The scores a simulated judge gives (the generative model of ``sim_rubric_output``).

    For every dimension independently::

        s = clip(rint(true + leniency + length_bias·ln(answer_length / reference_length)
                      + noise·z), scale_min, scale_max),   z ~ N(0, 1)

    ``rint`` rounds half to even. Away from the scale ends, the mean of ``s`` over draws is
    ``true + leniency + length_bias·ln(answer_length / reference_length)``.

    Args:
        rubric: a ``Rubric`` or a built-in name.
        true_scores: the true score per dimension, or one number for every dimension.
        rng: the random generator (one normal draw per dimension).
        noise: standard deviation of the judge's noise (scale units).
        leniency: constant shift (positive = lenient judge).
        length_bias: shift per unit of log length ratio (positive = favours long answers).
        answer_length: length of the graded answer (any unit, > 0).
        reference_length: reference length in the same unit (> 0).
    """
    rubric = as_rubric(rubric)
    _check_sim_args(noise, 0.0, answer_length=answer_length, reference_length=reference_length)
    truth = _true_score_map(rubric, true_scores)
    shift = leniency + length_bias * math.log(answer_length / reference_length)
    z = rng.standard_normal(len(rubric.dimensions))
    return {
        d.name: float(
            np.clip(np.rint(truth[d.name] + shift + noise * zi), d.scale_min, d.scale_max)
        )
        for d, zi in zip(rubric.dimensions, z, strict=True)
    }


def sim_rubric_score_matrix(
    rubric: Rubric | str,
    truths: np.ndarray,
    *,
    rng: np.random.Generator,
    noise: float = 1.0,
    leniency: float = 0.0,
) -> np.ndarray:
    """:func:`sim_rubric_scores` for many answers at once (no length bias): row i is what the
    i-th of ``len(truths)`` calls with the same ``rng`` would give, one true score per row
    for every dimension (columns in the rubric's order). For fast simulations of a study."""
    rubric = as_rubric(rubric)
    _check_sim_args(noise, 0.0)
    z = rng.standard_normal((len(truths), len(rubric.dimensions)))
    raw = np.rint(np.asarray(truths, float)[:, None] + leniency + noise * z)
    low = np.array([d.scale_min for d in rubric.dimensions])
    high = np.array([d.scale_max for d in rubric.dimensions])
    return np.clip(raw, low, high)


def _true_score_map(rubric: Rubric, true_scores: Mapping[str, float] | float) -> dict[str, float]:
    if not isinstance(true_scores, Mapping):
        return {d.name: float(true_scores) for d in rubric.dimensions}
    names = [d.name for d in rubric.dimensions]
    if set(true_scores) != set(names):
        raise ValueError(f"true_scores keys {sorted(true_scores)} must be the dimensions {names}")
    return {n: float(true_scores[n]) for n in names}


def sim_rubric_output(
    rubric: Rubric | str,
    true_scores: Mapping[str, float] | float,
    *,
    rng: np.random.Generator,
    noise: float = 1.0,
    leniency: float = 0.0,
    length_bias: float = 0.0,
    answer_length: float = 1.0,
    reference_length: float = 1.0,
    malformed_rate: float = 0.0,
) -> str:
    """The text a simulated rubric judge writes (seeded; pure given ``rng``'s state).

    Scores follow ``sim_rubric_scores``. The text is one JSON object in the rubric's key
    order, except with probability ``malformed_rate``, when it is one of four failures
    chosen uniformly: prose with no score, JSON truncated before the last dimension, the
    first dimension set to ``scale_max + 1`` (e.g. 11), or the first dimension ``NaN``. Every
    failure parses as unscored and every valid text parses to exactly the simulated scores,
    so the unscored rate estimates ``malformed_rate``.

    Text fields say "simulated"; a number field named ``overall`` holds the rounded
    weighted score (clipped to its range), other number fields the middle of their range.

    Each call draws, in order: one normal per dimension, one uniform, one integer.

    Args:
        rubric: a ``Rubric`` or a built-in name.
        true_scores: the true score per dimension, or one number for every dimension.
        rng: the random generator.
        noise: as :func:`sim_rubric_scores`.
        leniency: as :func:`sim_rubric_scores`.
        length_bias: as :func:`sim_rubric_scores`.
        answer_length: as :func:`sim_rubric_scores`.
        reference_length: as :func:`sim_rubric_scores`.
        malformed_rate: probability of a malformed (unscored) text, in [0, 1].
    """
    rubric = as_rubric(rubric)
    _check_sim_args(noise, malformed_rate)
    scores = sim_rubric_scores(
        rubric,
        true_scores,
        rng=rng,
        noise=noise,
        leniency=leniency,
        length_bias=length_bias,
        answer_length=answer_length,
        reference_length=reference_length,
    )
    malformed = rng.random() < malformed_rate
    kind = _RUBRIC_MALFORMED[int(rng.integers(len(_RUBRIC_MALFORMED)))]
    payload = _sim_payload(rubric, scores)
    if not malformed:
        return json.dumps(payload)
    return _malformed_rubric_text(rubric, payload, kind)


def _sim_payload(rubric: Rubric, scores: Mapping[str, float]) -> dict[str, Any]:
    def field(f: OutputField) -> str | int | float:
        if f.kind == "text":
            return f"simulated {f.name.replace('_', ' ')}"
        low, high = float(f.scale_min), float(f.scale_max)  # type: ignore[arg-type]
        value = weighted_score(rubric, scores) if f.name == "overall" else (low + high) / 2
        return plain_number(float(np.clip(np.rint(value), low, high)))

    payload: dict[str, Any] = {
        f.name: field(f) for f in rubric.output_fields if f.position == "before_scores"
    }
    payload["scores"] = {name: plain_number(v) for name, v in scores.items()}
    payload.update({f.name: field(f) for f in rubric.output_fields if f.position == "after_scores"})
    return payload


def _malformed_rubric_text(rubric: Rubric, payload: dict[str, Any], kind: str) -> str:
    first, last = rubric.dimensions[0], rubric.dimensions[-1]
    if kind == "prose":
        return _SIM_PROSE
    if kind == "truncated":
        text = json.dumps(payload)
        return text[: text.index(f'"{last.name}": ', text.index('"scores"'))]
    bad = float("nan") if kind == "nan" else plain_number(first.scale_max + 1)
    payload = {**payload, "scores": {**payload["scores"], first.name: bad}}
    return json.dumps(payload)


def sim_pairwise_latent(
    quality_a: float,
    quality_b: float,
    *,
    position_bias: float = 0.0,
    length_bias: float = 0.0,
    len_a: float = 1.0,
    len_b: float = 1.0,
) -> float:
    """The noiseless latent preference for A.

    ``Δ = quality_a − quality_b + position_bias + length_bias·sign(len_a − len_b)``: position
    A gets ``position_bias`` and the longer answer gets ``length_bias`` (none when equal).

    Args:
        quality_a: latent quality (log-odds) of the answer shown first.
        quality_b: latent quality of the answer shown second.
        position_bias: log-odds added for position A.
        length_bias: log-odds added for the longer answer.
        len_a: length of answer A (any unit, > 0).
        len_b: length of answer B (same unit, > 0).
    """
    _check_sim_args(0.0, 0.0, len_a=len_a, len_b=len_b)
    return quality_a - quality_b + position_bias + length_bias * float(np.sign(len_a - len_b))


def sim_pairwise_probabilities(
    quality_a: float,
    quality_b: float,
    *,
    noise: float = 1.0,
    position_bias: float = 0.0,
    length_bias: float = 0.0,
    len_a: float = 1.0,
    len_b: float = 1.0,
    tie_margin: float = 0.5,
) -> tuple[float, float, float]:
    """``(P(A wins), P(tie), P(B wins))`` under the model of ``sim_pairwise_output``.

    With latent ``Δ`` (``sim_pairwise_latent``) and logistic noise of scale ``noise``:
    ``P(A) = σ((Δ − t)/noise)``, ``P(B) = σ((−Δ − t)/noise)``, ``P(tie) = 1 − P(A) − P(B)``
    with ``t = tie_margin`` — Bradley–Terry (``P(A) = σ(qa − qb)`` at ``noise=1``, ``t=0``,
    no biases) extended with a tie band, in the spirit of Rao & Kupper (1967). With
    ``noise = 0`` the outcome is deterministic.

    Args:
        quality_a: as :func:`sim_pairwise_latent`.
        quality_b: as :func:`sim_pairwise_latent`.
        noise: scale of the logistic noise (0 = deterministic).
        position_bias: as :func:`sim_pairwise_latent`.
        length_bias: as :func:`sim_pairwise_latent`.
        len_a: as :func:`sim_pairwise_latent`.
        len_b: as :func:`sim_pairwise_latent`.
        tie_margin: half-width ``t`` of the tie band.
    """
    delta = sim_pairwise_latent(
        quality_a,
        quality_b,
        position_bias=position_bias,
        length_bias=length_bias,
        len_a=len_a,
        len_b=len_b,
    )
    if noise == 0:
        p_a, p_b = float(delta > tie_margin), float(delta < -tie_margin)
    else:
        p_a = float(expit((delta - tie_margin) / noise))
        p_b = float(expit((-delta - tie_margin) / noise))
    return p_a, 1.0 - p_a - p_b, p_b


def sim_pairwise_output(
    quality_a: float,
    quality_b: float,
    *,
    rng: np.random.Generator,
    noise: float = 1.0,
    position_bias: float = 0.0,
    length_bias: float = 0.0,
    len_a: float = 1.0,
    len_b: float = 1.0,
    malformed_rate: float = 0.0,
    style: VerdictFormat = "mt_bench",
    tie_margin: float = 0.5,
    strong_margin: float = 2.0,
) -> str:
    """The text a simulated pairwise judge writes (seeded; pure given ``rng``'s state).

    Generative model: ``d = Δ + noise·ε`` with ``ε ~ Logistic(0, 1)`` and ``Δ`` from
    ``sim_pairwise_latent`` (position A gets ``position_bias``, the longer answer gets
    ``length_bias``). ``d > t`` → A wins, ``d < −t`` → B wins, else tie (``t = tie_margin``);
    the probabilities are ``sim_pairwise_probabilities``. In the ``arena_hard`` style a win
    is strong (``>>``) when ``|d| > strong_margin``; ``mt_bench`` writes ``[[A]]/[[B]]/[[C]]``.

    With probability ``malformed_rate`` the text is one of three failures chosen uniformly
    (prose with no verdict, two conflicting verdicts, a verdict cut off before ``]]``), all
    of which parse as unscored. Each call draws one logistic, one uniform, one integer.

    Args:
        quality_a: as :func:`sim_pairwise_latent`.
        quality_b: as :func:`sim_pairwise_latent`.
        rng: the random generator.
        noise: scale of the logistic noise.
        position_bias: as :func:`sim_pairwise_latent`.
        length_bias: as :func:`sim_pairwise_latent`.
        len_a: as :func:`sim_pairwise_latent`.
        len_b: as :func:`sim_pairwise_latent`.
        malformed_rate: probability of a malformed (unscored) text, in [0, 1].
        style: ``mt_bench`` or ``arena_hard`` verdict labels.
        tie_margin: half-width ``t`` of the tie band.
        strong_margin: ``|d|`` beyond which an ``arena_hard`` win is strong.
    """
    _check_sim_args(noise, malformed_rate)
    if not 0 <= tie_margin <= strong_margin:
        raise ValueError(
            f"need 0 <= tie_margin <= strong_margin, got {tie_margin}, {strong_margin}"
        )
    if style not in VERDICT_INSTRUCTIONS:
        raise ValueError(f"style must be one of {sorted(VERDICT_INSTRUCTIONS)}, got {style!r}")
    delta = sim_pairwise_latent(
        quality_a,
        quality_b,
        position_bias=position_bias,
        length_bias=length_bias,
        len_a=len_a,
        len_b=len_b,
    )
    d = delta + noise * float(rng.logistic())
    malformed = rng.random() < malformed_rate
    kind = _PAIRWISE_MALFORMED[int(rng.integers(len(_PAIRWISE_MALFORMED)))]
    if malformed:
        return _malformed_pairwise_text(kind)
    label = _sim_label(d, tie_margin, strong_margin, style)
    return f"Simulated comparison of the two answers.\n\nFinal verdict: [[{label}]]"


def _sim_label(d: float, tie_margin: float, strong_margin: float, style: str) -> str:
    if abs(d) <= tie_margin:
        return "C" if style == "mt_bench" else "A=B"
    winner, loser = ("A", "B") if d > 0 else ("B", "A")
    if style == "mt_bench":
        return winner
    return f"{winner}{'>>' if abs(d) > strong_margin else '>'}{loser}"


def _malformed_pairwise_text(kind: str) -> str:
    if kind == "prose":
        return "Both answers have merits; I cannot pick one."
    if kind == "conflicting":
        return "Assistant A is better: [[A]]. On reflection assistant B is better: [[B]]"
    return "Simulated comparison of the two answers.\n\nFinal verdict: [[A"


# --------------------------------------------------------------------------- sim provider replies

ANCHORED_LENIENCY = 0.5
"""The share of its leniency a simulated rubric judge keeps when its rubric has few-shot
anchors (:func:`~evalbench.judge.rubrics.with_anchors`): the known effect a study of anchors
should measure (less inflation for a lenient judge, less deflation for a strict one; noise
and length bias unchanged)."""


def sim_leniency(leniency: float, rubric: Rubric) -> float:
    """A simulated judge's leniency under ``rubric``: ``leniency``, times
    :data:`ANCHORED_LENIENCY` when the rubric has anchors (e.g. +0.8 → +0.4)."""
    return leniency * ANCHORED_LENIENCY if rubric.anchors else leniency


def rubric_reply(
    request: ChatRequest,
    knobs: SimSpec,
    rng: np.random.Generator,
    *,
    rubric: Rubric,
    truth: Mapping[str, float] | float,
    answer_length: float,
    reference_length: float,
) -> SimReply:
    """The ``sim`` provider's answer to a rubric job: :func:`sim_rubric_output` with the
    judge's knobs (``knobs``; the leniency as :func:`sim_leniency`) and the task's truth and
    lengths (bound by the job)."""
    text = sim_rubric_output(
        rubric,
        truth,
        rng=rng,
        noise=knobs.noise,
        leniency=sim_leniency(knobs.leniency, rubric),
        length_bias=knobs.length_bias,
        answer_length=answer_length,
        reference_length=reference_length,
        malformed_rate=knobs.malformed_rate,
    )
    return SimReply(text)


def pair_reply(
    request: ChatRequest,
    knobs: SimSpec,
    rng: np.random.Generator,
    *,
    quality_a: float,
    quality_b: float,
    len_a: float,
    len_b: float,
    style: VerdictFormat,
) -> SimReply:
    """The ``sim`` provider's answer to a pairwise job: :func:`sim_pairwise_output` with the
    judge's knobs (``knobs``) and the pair's qualities and lengths in this order."""
    text = sim_pairwise_output(
        quality_a,
        quality_b,
        rng=rng,
        noise=knobs.noise,
        position_bias=knobs.position_bias,
        length_bias=knobs.length_bias,
        len_a=len_a,
        len_b=len_b,
        malformed_rate=knobs.malformed_rate,
        style=style,
    )
    return SimReply(text)
