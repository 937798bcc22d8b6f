"""What the simulated judges should measure: their statistics, exactly, from their knobs.

The simulated judges themselves are :mod:`evalbench.judge.sim`'s (their truth is the
golden score). Offline, every estimate of this study can be checked against its known
expectation: the ±k agreement and bias of a sim rubric judge, its exact test–retest
agreement, what few-shot anchors change (its leniency halves), and the position consistency
of a sim pairwise judge. Only ``study.py`` uses this module.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.special import ndtr

from evalbench import agreement as ag
from evalbench.judge import PairTask, Rubric, sim_pairwise_probabilities
from evalbench.judge.sim import sim_leniency
from evalbench.models import ModelSpec

from .metrics import ANCHOR_MEASURES
from .scoring import scale_labels


def sim_score_distribution(
    golden: pd.DataFrame, rubric: Rubric, spec: ModelSpec, *, dimension: str, typical: float
) -> tuple[np.ndarray, np.ndarray]:
    """P(sim judge gives score s) per item on an integer-scale dimension (exact, no sampling).

    Under :func:`evalbench.judge.sim_rubric_scores` the score is
    ``clip(rint(t + leniency + length_bias·ln(len/typical) + noise·z))``, so
    ``P(s) = Φ((s + ½ − μ)/σ) − Φ((s − ½ − μ)/σ)`` with the outer cells open-ended.

    Args:
        golden: :func:`~.data.load_golden` (the human scores are the sim judge's truth).
        rubric: the rubric.
        spec: the sim judge (its ``sim`` knobs).
        dimension: a dimension with an integer scale.
        typical: the length-bias reference length (:func:`~.scoring.typical_length`).

    Returns:
        ``(scale, probabilities)``: the integer scale and an items × scale matrix.
    """
    labels = scale_labels(rubric, dimension)
    if labels is None:
        raise ValueError(f"sim_score_distribution: {dimension!r} has no integer scale")
    scale = np.array(labels, dtype=float)
    chars = np.maximum(golden["answer"].str.len().to_numpy(float), 1.0)
    knobs = spec.sim
    mu = golden[f"human_{dimension}"].to_numpy(float) + knobs.leniency
    mu = mu + knobs.length_bias * np.log(chars / typical)
    edges = np.concatenate([[-np.inf], scale[:-1] + 0.5, [np.inf]])
    if knobs.noise == 0:
        cdf = (edges[None, :] >= mu[:, None]).astype(float)
    else:
        cdf = ndtr((edges[None, :] - mu[:, None]) / knobs.noise)  # the normal cdf
    return scale, np.diff(cdf, axis=1)


def sim_expectations(
    golden: pd.DataFrame,
    rubric: Rubric,
    spec: ModelSpec,
    *,
    dimension: str,
    tolerance: float,
    typical: float,
) -> dict[str, float]:
    """What a sim judge's statistics should be, from its knobs (the "sim truth").

    Expected ±k agreement, bias and exact agreement over scored items, and expected exact
    test–retest agreement (two independent draws: ``Σ_s P(s)²``), averaged over items; NaN for a
    dimension without an integer scale (e.g. ``weighted``). Unscored (malformed) outputs are
    independent of the score, so they do not change these expectations.

    Args:
        golden: :func:`~.data.load_golden` (the human scores are the sim judge's truth).
        rubric: the rubric.
        spec: the sim judge (its ``sim`` knobs).
        dimension: a rubric dimension or ``weighted``.
        tolerance: k of the ±k agreement.
        typical: the length-bias reference length (:func:`~.scoring.typical_length`).
    """
    if scale_labels(rubric, dimension) is None:
        return dict.fromkeys(("within_k", "bias", "exact", "retest_exact"), math.nan)
    scale, probs = sim_score_distribution(
        golden, rubric, spec, dimension=dimension, typical=typical
    )
    truth = golden[f"human_{dimension}"].to_numpy(float)
    near = np.abs(scale[None, :] - truth[:, None]) <= tolerance + ag.DISTANCE_SLACK
    return {
        "within_k": float((probs * near).sum(axis=1).mean()),
        "bias": float((probs @ scale - truth).mean()),
        "exact": float((probs * (scale[None, :] == truth[:, None])).sum(axis=1).mean()),
        "retest_exact": float((probs**2).sum(axis=1).mean()),
    }


def with_expectations(
    agreement: pd.DataFrame,
    golden: pd.DataFrame,
    rubric: Rubric,
    judges: Sequence[ModelSpec],
    *,
    tolerance: float,
    typical: float,
) -> pd.DataFrame:
    """``agreement`` plus ``expected_within_k`` and ``expected_bias`` per (judge, dimension):
    :func:`sim_expectations` for a simulated judge, NaN for a real one."""
    specs = {s.name: s for s in judges}
    truth = [
        sim_expectations(
            golden, rubric, specs[r.judge], dimension=r.dimension, tolerance=tolerance,
            typical=typical,
        )
        if specs[r.judge].simulated
        else {"within_k": np.nan, "bias": np.nan}
        for r in agreement.itertuples()
    ]  # fmt: skip
    out = agreement.copy()
    out["expected_within_k"] = [t["within_k"] for t in truth]
    out["expected_bias"] = [t["bias"] for t in truth]
    return out


def anchored_spec(spec: ModelSpec, anchored: Rubric) -> ModelSpec:
    """The sim judge ``spec`` as it grades with the anchored rubric: its leniency as
    :func:`evalbench.judge.sim.sim_leniency` (halved), every other knob unchanged."""
    leniency = sim_leniency(spec.sim.leniency, anchored)
    return spec.model_copy(update={"sim": spec.sim.model_copy(update={"leniency": leniency})})


def with_anchor_expectations(
    comparison: pd.DataFrame,
    golden: pd.DataFrame,
    anchored: Rubric,
    judges: Sequence[ModelSpec],
    *,
    tolerance: float,
    typical: float,
) -> pd.DataFrame:
    """``comparison`` (:func:`~.metrics.anchor_comparison`) plus ``expected_<m>_diff`` for
    each measure: a sim judge's :func:`sim_expectations` with the anchors minus without
    (e.g. bias: half its leniency, less where the scale's ends clip), NaN for a real judge."""
    specs, out = {s.name: s for s in judges}, comparison.copy()
    for measure in ANCHOR_MEASURES:
        out[f"expected_{measure}_diff"] = math.nan
    for i, row in enumerate(comparison.itertuples()):
        spec = specs[str(row.judge)]
        if not spec.simulated:
            continue
        arms = [
            sim_expectations(
                golden, anchored, s, dimension=str(row.dimension), tolerance=tolerance,
                typical=typical,
            )
            for s in (spec, anchored_spec(spec, anchored))
        ]  # fmt: skip
        for measure in ANCHOR_MEASURES:
            out.loc[out.index[i], f"expected_{measure}_diff"] = arms[1][measure] - arms[0][measure]
    return out


def expected_pair_consistency(tasks: Sequence[PairTask], spec: ModelSpec) -> float:
    """Expected position consistency of the sim pairwise judge over ``tasks`` (exact).

    Order 1 shows x as A, order 2 shows y as A; with the probabilities of
    :func:`evalbench.judge.sim_pairwise_probabilities` per order, a pair is consistent with
    probability ``P1(A)·P2(B) + P1(B)·P2(A) + P1(tie)·P2(tie)``.
    """
    knobs, total = spec.sim, 0.0
    common = {
        "noise": knobs.noise,
        "position_bias": knobs.position_bias,
        "length_bias": knobs.length_bias,
    }
    for t in tasks:
        lx, ly = max(len(t.answer_x), 1), max(len(t.answer_y), 1)
        one = sim_pairwise_probabilities(t.quality_x, t.quality_y, len_a=lx, len_b=ly, **common)  # type: ignore[arg-type]
        two = sim_pairwise_probabilities(t.quality_y, t.quality_x, len_a=ly, len_b=lx, **common)  # type: ignore[arg-type]
        total += one[0] * two[2] + one[2] * two[0] + one[1] * two[1]
    return total / len(tasks) if tasks else math.nan


# --------------------------------------------------------------------------- annotators

SIM_ANNOTATORS: tuple[tuple[str, float, float], ...] = (
    ("sim-annotator-1", 0.7, 0.0),
    ("sim-annotator-2", 1.0, 0.5),
    ("sim-annotator-3", 1.3, -0.4),
)
"""The demo's simulated annotators: (name, noise sd in points, bias in points)."""
SIM_ANNOTATOR_SEED = 18
"""Seed of the shipped demo annotations (``evalbench/demo/golden/annotators_demo.jsonl``)."""


def sim_annotations(
    golden: pd.DataFrame,
    rubric: Rubric,
    annotators: Sequence[tuple[str, float, float]] = SIM_ANNOTATORS,
    *,
    rng: np.random.Generator,
) -> pd.DataFrame:
    """Simulated annotators scoring every golden item: the golden score is their truth.

    Annotator *a* gives ``clip(rint(truth + bias_a + noise_a·z), scale)`` on every integer
    dimension, ``z`` standard normal, drawn item by item, annotator by annotator, dimension
    by dimension from ``rng``. Rows are marked ``simulated``.

    Returns:
        ``item, annotator, human_<dim>..., simulated`` (one row per item and annotator).
    """
    rows = []
    for item in golden.to_dict("records"):
        for name, noise, bias in annotators:
            row: dict[str, object] = {"item": item["item"], "annotator": name}
            for dim in rubric.dimensions:
                score = float(item[f"human_{dim.name}"]) + bias + noise * rng.standard_normal()
                row[f"human_{dim.name}"] = int(
                    np.clip(np.rint(score), dim.scale_min, dim.scale_max)
                )
            rows.append({**row, "simulated": True})
    return pd.DataFrame(rows)
