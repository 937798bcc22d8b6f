"""Simulated research answers and rubric judges for expert grading (the offline ``sim``
provider), with known truth.

- A simulated **system**'s research answer has true scores per dimension around
  ``100·a + shift(difficulty)`` (``a``: its ``sim.accuracy`` for the item's category); the
  text itself carries no quality (it lives in the job's truth).
- A simulated **rubric judge** scores ``true + leniency + noise·m·z`` with an item-level
  noise multiplier ``m ~ LogNormal(0, 0.5)`` and states a confidence that falls as ``m``
  grows (so its confidence carries information about its error), with ``sim.malformed_rate``
  of unreadable outputs (prose, truncated JSON, a score of 101 or NaN).

Only :mod:`.study` uses this module.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import numpy as np

from evalbench.models import ChatRequest, SimReply, SimSpec

from .data import DIFFICULTIES, DIMENSIONS

_RUBRIC_FLAWS = ("prose", "truncated", "out_of_range", "nan")
DIFFICULTY_SHIFT = {"easy": 12.0, "medium": 4.0, "hard": -6.0, "expert": -14.0}
"""Points added to a simulated research answer's true scores by difficulty."""


def default_truth(difficulty: str) -> dict[str, float]:
    """True scores the sim rubric judge assumes for a set answer without human scores."""
    return {d: 70.0 + DIFFICULTY_SHIFT[difficulty] for d in DIMENSIONS}


def answer_truth(
    knobs: SimSpec, category: str, difficulty: str, rng: np.random.Generator
) -> dict[str, float]:
    """True scores of a simulated system's research answer: per dimension
    ``clip(rint(100·a + shift(difficulty) + N(0, 6)), 0, 100)``. Draws six normals."""
    if difficulty not in DIFFICULTIES:
        raise ValueError(f"difficulty must be one of {DIFFICULTIES}, got {difficulty!r}")
    base = 100 * knobs.accuracy_for(category) + DIFFICULTY_SHIFT[difficulty]
    draws = rng.standard_normal(len(DIMENSIONS))
    return {
        d: float(np.clip(np.rint(base + 6 * z), 0, 100))
        for d, z in zip(DIMENSIONS, draws, strict=True)
    }


def research_reply(request: ChatRequest, knobs: SimSpec, rng: np.random.Generator) -> SimReply:
    """A simulated research answer (text only; its quality lives in the job's truth)."""
    paragraphs = max(1, round(knobs.verbosity * (2 + int(rng.integers(0, 3)))))
    return SimReply(
        "\n\n".join(f"Simulated research paragraph {i + 1}." for i in range(paragraphs))
    )


def judge_reply(
    request: ChatRequest, knobs: SimSpec, rng: np.random.Generator, *, truth: Mapping[str, float]
) -> SimReply:
    """A simulated ``hle``-rubric judge's JSON (see the module docstring). Draws: one
    lognormal, six normals, two normals, one uniform, one integer."""
    m = float(rng.lognormal(0.0, 0.5))
    z = rng.standard_normal(len(DIMENSIONS))
    scores = {
        d: int(np.clip(np.rint(truth[d] + knobs.leniency + knobs.noise * m * zi), 0, 100))
        for d, zi in zip(DIMENSIONS, z, strict=True)
    }
    overall = int(
        np.clip(np.rint(np.mean(list(scores.values())) + 2 * rng.standard_normal()), 0, 100)
    )
    confidence = int(np.clip(np.rint(100 - 18 * m + 3 * rng.standard_normal()), 0, 100))
    payload = {
        "scores": scores,
        "overall": overall,
        "confidence": confidence,
        "reason": "simulated reason",
    }
    if rng.random() >= knobs.malformed_rate:
        _ = int(rng.integers(len(_RUBRIC_FLAWS)))  # keep the draw count fixed
        return SimReply(json.dumps(payload))
    flaw = _RUBRIC_FLAWS[int(rng.integers(len(_RUBRIC_FLAWS)))]
    if flaw == "prose":
        return SimReply("The answer has strengths and weaknesses; I will not give numbers.")
    text = json.dumps(payload)
    if flaw == "truncated":
        return SimReply(text[: text.index('"timeliness"')])
    bad = float("nan") if flaw == "nan" else 101
    return SimReply(json.dumps({**payload, "scores": {**scores, "accuracy": bad}}))
