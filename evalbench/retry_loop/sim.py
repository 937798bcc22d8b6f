"""The simulated retry loop: a generator whose answers have a known true score per round.

Each item's first answer has a true score ``q0 ~ N(start, spread)`` (every rubric dimension);
retry k of an arm adds ``g_k ~ N(mean_k, gain_noise)``, with the means of
:class:`~.records.RetrySimulation` (``gains`` with the suggestion, ``control_gains``
without). The simulated judges (:mod:`evalbench.judge.sim`) grade that truth with their noise
and leniency; the loop judge adds ``self_preference`` to answers written to its own
suggestions. The answers' texts are placeholders: only their true scores matter.

:func:`simulate_loop` draws the same loop directly (no model calls, one generator for all):
fast enough for power analyses and for checking the statistics against the truth.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from evalbench.judge import Rubric, sim_rubric_score_matrix
from evalbench.models import ChatRequest, SimReply, SimSpec

from .records import RetrySimulation
from .scoring import round_outcome


def true_scores(
    sim: RetrySimulation, rounds: int, arms: Sequence[str], rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """One item's true score after each round ``0..rounds``, per arm (the same round 0).

    Draws, in order: ``q0``, then each arm's ``rounds`` gains.
    """
    start = rng.normal(sim.start, sim.spread)
    out = {}
    for arm in arms:
        means = np.asarray(sim.gains if arm == "suggestion" else sim.control_gains, float)
        steps = rng.normal(means[:rounds], sim.gain_noise)
        out[arm] = start + np.concatenate([[0.0], np.cumsum(steps)])
    return out


def loop_judge_truth(truth: float, arm: str, round: int, sim: RetrySimulation) -> float:
    """What the loop judge grades: the truth, plus ``self_preference`` on an answer written to
    its own suggestion (the suggestion arm's retries)."""
    return truth + (sim.self_preference if arm == "suggestion" and round > 0 else 0.0)


def sim_answer(
    request: ChatRequest, knobs: SimSpec, rng: np.random.Generator, *, label: str
) -> SimReply:
    """The simulated generator's placeholder answer (its true score is known apart)."""
    words = int(rng.integers(25, 45) * knobs.verbosity)
    filler = " ".join(["detail"] * max(words, 1))
    return SimReply(f"Simulated answer ({label}): {filler}.")


def simulate_loop(
    sim: RetrySimulation,
    rubric: Rubric,
    judge: SimSpec,
    *,
    n_items: int,
    rounds: int,
    threshold: float | None,
    arms: Sequence[str],
    rng: np.random.Generator,
) -> pd.DataFrame:
    """The retry loop drawn directly: round records as the study writes them (the columns
    :mod:`~.metrics` reads), without calls, costs or malformed outputs.

    The judge's scores are :func:`evalbench.judge.sim_rubric_score_matrix` of the loop
    judge's truth (:func:`loop_judge_truth`) with ``judge``'s noise and leniency; stops
    follow :func:`~.scoring.round_outcome`. Draws, in order: every item's first true score,
    each arm's true gains (items × rounds), then every judgment, drawn for every round
    whether the item's loop reaches it or not.
    """
    start = rng.normal(sim.start, sim.spread, n_items)
    truth = {}
    for arm in arms:
        means = np.asarray(sim.gains if arm == "suggestion" else sim.control_gains, float)
        steps = rng.normal(means[:rounds], sim.gain_noise, (n_items, rounds))
        truth[arm] = start[:, None] + np.hstack([np.zeros((n_items, 1)), np.cumsum(steps, 1)])
    weights = np.array([d.weight for d in rubric.dimensions]) / sum(
        d.weight for d in rubric.dimensions
    )

    def judged(truths: np.ndarray) -> np.ndarray:
        scores = sim_rubric_score_matrix(rubric, truths.ravel(), rng=rng, noise=judge.noise,
                                         leniency=judge.leniency)  # fmt: skip
        return (scores @ weights).reshape(truths.shape)

    first = judged(start)
    bonus = np.r_[0.0, np.full(rounds, sim.self_preference)]
    scores = {arm: judged(truth[arm] + (bonus if arm == "suggestion" else 0.0)) for arm in arms}
    rows: list[dict[str, object]] = []
    for arm in arms:
        scores[arm][:, 0] = first
        for i in range(n_items):
            rows += _arm_rows(f"item-{i}", arm, truth[arm][i], scores[arm][i], rounds, threshold)
    return pd.DataFrame(rows)


def _arm_rows(
    item: str, arm: str, truth: np.ndarray, scores: np.ndarray, rounds: int,
    threshold: float | None,
) -> list[dict[str, object]]:  # fmt: skip
    rows: list[dict[str, object]] = []
    for r in range(rounds + 1):
        stopped = round_outcome(status="scored", weighted=float(scores[r]), suggestion="simulated",
                                round=r, rounds=rounds, threshold=threshold, arm=arm)  # fmt: skip
        rows.append({"item": item, "arm": arm, "round": r, "status": "scored",
                     "weighted_score": float(scores[r]), "stopped": stopped,
                     "truth": float(truth[r]), "prompt_tokens": 0, "completion_tokens": 0,
                     "cost_usd": 0.0})  # fmt: skip
        if stopped is not None:
            break
    return rows
