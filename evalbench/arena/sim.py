"""The arena simulator: sim systems' hidden answer quality, their answers, and the truth.

A sim system's answer has a hidden per-dimension quality (:func:`hidden_quality`:
strength + document effect + seeded noise) that both the answer simulator (its length
follows ``verbosity``) and the sim judge's truth derive from; :func:`truth_table` and
:func:`true_dimension_means` give the truth the report sets the recovered ratings against.
Only :mod:`evalbench.arena.study` imports this module.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Protocol

import numpy as np
import pandas as pd
from scipy.special import expit

from evalbench.judge import Rubric, get_rubric
from evalbench.models import ChatRequest, ModelSpec, SimReply, SimSpec, sim_rng
from evalbench.ratings import ArenaError

from .data import ArenaPrompt


class SimSettings(Protocol):
    """What the simulator reads from the study's params (:class:`~evalbench.arena.ArenaParams`)."""

    seed: int
    rubric: str
    systems: list[ModelSpec]
    retrieval_systems: list[str]
    document_effect: dict[str, float]
    anchor_rating: float

    def rating_anchor(self) -> str | None: ...


_FILLER = (
    "This is a common question, and the short answer rests on a few basic principles.",
    "In everyday terms, the effect comes from how the parts of the system interact.",
    "Several factors contribute, and their relative importance depends on the conditions.",
    "Simplified explanations like this one leave out some of the details.",
    "The main idea has been studied for a long time and is well established.",
    "A useful picture is a balance between influences that pull in different directions.",
    "Examples from daily life make the mechanism easier to see.",
)


def system_quality(params: SimSettings, spec: ModelSpec, question_id: str) -> dict[str, float]:
    """A sim system's hidden per-dimension quality on one prompt (see :func:`hidden_quality`)."""
    return hidden_quality(
        spec, question_id, seed=params.seed, rubric=get_rubric(params.rubric),
        with_documents=spec.name in params.retrieval_systems,
        document_effect=params.document_effect,
    )  # fmt: skip


def hidden_quality(
    spec: ModelSpec,
    question_id: str,
    *,
    seed: int,
    rubric: Rubric,
    with_documents: bool,
    document_effect: Mapping[str, float],
) -> dict[str, float]:
    """Hidden quality (log-odds) of a sim system's answer on each rubric dimension.

    ``q_d = strength + with_documents·document_effect_d + noise·z_d``, ``z_d ~ N(0, 1)``
    seeded by (the spec's seed, else ``seed``; system; question) alone, so the answer
    simulator and the judge's truth agree.
    """
    rng = sim_rng(spec.seed if spec.seed is not None else seed, spec.name, f"quality:{question_id}")
    z = rng.standard_normal(len(rubric.dimensions))
    effect = 1.0 if with_documents else 0.0
    return {
        d.name: spec.sim.strength + effect * document_effect.get(d.name, 0.0) + spec.sim.noise * zd
        for d, zd in zip(rubric.dimensions, z, strict=True)
    }


def overall_quality(quality: Mapping[str, float], rubric: Rubric) -> float:
    """The rubric-weighted mean of per-dimension qualities (what a pairwise sim judge sees)."""
    total = sum(d.weight for d in rubric.dimensions)
    return sum(d.weight * quality[d.name] for d in rubric.dimensions) / total


def true_strength(
    spec: ModelSpec, *, rubric: Rubric, with_documents: bool, document_effect: Mapping[str, float]
) -> float:
    """Expected overall quality: ``strength`` plus the weighted document effect if used."""
    if not with_documents:
        return spec.sim.strength
    return spec.sim.strength + overall_quality(
        {d.name: document_effect.get(d.name, 0.0) for d in rubric.dimensions}, rubric
    )


def true_dimension_scores(quality: Mapping[str, float], rubric: Rubric) -> dict[str, float]:
    """True rubric scores: ``scale_min + (scale_max − scale_min)·σ(q_d)`` per dimension."""
    return {
        d.name: d.scale_min + (d.scale_max - d.scale_min) * float(expit(quality[d.name]))
        for d in rubric.dimensions
    }


def sim_answer(
    request: ChatRequest,
    knobs: SimSpec,
    rng: np.random.Generator,
    *,
    prompt: ArenaPrompt,
    with_documents: bool,
) -> SimReply:
    """A simulated system's answer text (its quality is hidden, see :func:`hidden_quality`).

    ``max(1, round(verbosity·(2 + U{0,1,2})))`` sentences: with documents, the prompt's
    document sentences with citations first, then generic filler sentences (never a
    repeat while the filler lasts). Only the length carries information (for a judge's
    length bias); the judge's truth is the hidden quality.
    """
    n = max(1, round(knobs.verbosity * (2 + int(rng.integers(0, 3)))))
    cited: list[str] = []
    opening = f'About the question "{prompt.question}":'
    if with_documents and prompt.documents:
        cited = [
            f"{sentence.strip().rstrip('.')}. [{k}]"
            for k, doc in enumerate(prompt.documents, 1)
            for sentence in re.split(r"(?<=\.)\s+", doc)
            if sentence.strip()
        ]
        opening = "According to the reference documents:"
    start = int(rng.integers(0, len(_FILLER)))
    filler = [_FILLER[(start + i) % len(_FILLER)] for i in range(max(0, n - len(cited)))]
    body = [*cited[:n], *filler]
    return SimReply(" ".join([opening, *body]))


def true_ratings(
    strengths: Mapping[str, float],
    *,
    anchor: str | None = None,
    anchor_rating: float = 1000.0,
    base: float = 10.0,
    scale: float = 400.0,
) -> pd.Series:
    """True strengths (natural log-odds) on the Elo scale, anchored like
    :func:`evalbench.ratings.fit_bt`: ``rating = scale·strength/ln(base) + offset``, the
    offset pinning ``anchor`` at ``anchor_rating`` (without an anchor: the mean)."""
    s = pd.Series(dict(strengths), dtype=float, name="true_rating")
    elo = s * (scale / math.log(base))
    if anchor is None:
        return elo - elo.mean() + anchor_rating
    if anchor not in s.index:
        raise ArenaError(f"anchor model {anchor!r} has no true strength")
    return elo - elo[anchor] + anchor_rating


def truth_table(params: SimSettings, *, rubric_name: str | None = None) -> pd.DataFrame | None:
    """The sim systems' true strengths and ratings (``None`` unless every system is sim).

    ``strength`` is the expected hidden overall quality (:func:`true_strength`),
    ``true_rating`` its Elo-scale value anchored like the fitted ratings.
    """
    if not params.systems or not all(s.simulated for s in params.systems):
        return None
    rubric = get_rubric(rubric_name or params.rubric)
    strengths = {
        s.name: true_strength(
            s, rubric=rubric, with_documents=s.name in params.retrieval_systems,
            document_effect=params.document_effect,
        )
        for s in params.systems
    }  # fmt: skip
    ratings = true_ratings(
        strengths, anchor=params.rating_anchor(), anchor_rating=params.anchor_rating
    )
    return pd.DataFrame({"model": list(strengths), "strength": list(strengths.values()),
                         "true_rating": ratings.to_numpy()})  # fmt: skip


def true_dimension_means(params: SimSettings, prompts: Sequence[ArenaPrompt]) -> pd.DataFrame:
    """Mean true per-dimension score of each sim system over the prompts (simulated truth)."""
    rubric = get_rubric(params.rubric)
    rows = []
    for spec in (s for s in params.systems if s.simulated):
        truths = [
            true_dimension_scores(system_quality(params, spec, p.id), rubric) for p in prompts
        ]
        rows += [
            (spec.name, d.name, float(np.mean([t[d.name] for t in truths])))
            for d in rubric.dimensions
        ]
    return pd.DataFrame(rows, columns=["system", "dimension", "true_mean"])


def sim_human_votes(
    params: SimSettings,
    pairs: Sequence[tuple[str, str]],
    prompts: Sequence[ArenaPrompt],
    annotators: Sequence[tuple[str, float]],
    *,
    rng: np.random.Generator,
    tie_band: float = 0.3,
) -> pd.DataFrame:
    """Simulated people voting on every pair of every prompt (for tests and demos).

    Annotator *a* sees ``d = q_x − q_y + noise_a·L`` (``q`` the answers' hidden overall
    quality, ``L`` standard logistic from ``rng``) and votes ``a`` when ``d > tie_band``,
    ``b`` when ``d < −tie_band``, else ``tie``. Rows are marked ``simulated``.

    Returns:
        ``model_a, model_b, winner, question_id, annotator, simulated`` (one vote per
        prompt, pair and annotator).
    """
    rubric = get_rubric(params.rubric)
    specs = {s.name: s for s in params.systems}
    rows = []
    for prompt in prompts:
        quality = {n: overall_quality(system_quality(params, s, prompt.id), rubric)
                   for n, s in specs.items()}  # fmt: skip
        for x, y in pairs:
            for name, noise in annotators:
                d = quality[x] - quality[y] + noise * rng.logistic()
                winner = "a" if d > tie_band else ("b" if d < -tie_band else "tie")
                vote = {"model_a": x, "model_b": y, "winner": winner, "question_id": prompt.id}
                rows.append({**vote, "annotator": name, "simulated": True})
    return pd.DataFrame(rows)
