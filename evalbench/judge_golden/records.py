"""The golden-set study's types: its params, the records it writes and its result.

``records/golden_judgments.jsonl`` holds :data:`GoldenJudgmentRecord` lines,
``golden_pairs.jsonl`` :class:`GoldenPairRecord`, with ``anchors`` ``golden_anchored.jsonl``
(:data:`GoldenJudgmentRecord` lines of the anchored judgments), and with several annotators
``annotator_agreement.jsonl`` / ``annotator_pairs.jsonl`` :class:`AnnotatorAgreementRecord` /
:class:`AnnotatorPairRecord`; :class:`JudgeGoldenResult` is what :func:`~.study.run` returns.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, NamedTuple

import pandas as pd
from pydantic import AfterValidator, Field, ValidationInfo, create_model, model_validator

from evalbench.agreement import RetestAgreement
from evalbench.judge import (
    RUBRICS,
    CalibrationExample,
    InconsistentPolicy,
    OrderOutcome,
    PairJudgment,
    Rubric,
    RubricJudgment,
    VerdictFormat,
    anchor_problems,
    get_rubric,
    known_rubric,
    with_anchors,
)
from evalbench.labels import Policy
from evalbench.models import ModelSpec
from evalbench.params import StudyParams, data_path
from evalbench.records import Record
from evalbench.stats import Interval

from .data import dimension_names

Verdict = Literal["a", "b", "tie"]

# --------------------------------------------------------------------------- params


def _golden_source(value: str, info: ValidationInfo) -> str:
    return value if value == "demo" else str(data_path(value, info))


def _annotations_source(value: str | None, info: ValidationInfo) -> str | None:
    return value if value in (None, "demo") else str(data_path(str(value), info))


class JudgeGoldenParams(StudyParams):
    """Parameters of a golden-set judge-agreement study (``study: judge_golden``)."""

    study: Literal["judge_golden"] = "judge_golden"
    golden: Annotated[str, AfterValidator(_golden_source)] = "demo"
    """``demo`` (the shipped synthetic demo set, not human data) or a ``.csv``/``.jsonl`` golden
    set (relative to the params file); schema in :func:`~.data.load_golden`."""
    rubric: Annotated[str, AfterValidator(known_rubric)] = "fine_grained"
    """Built-in rubric the human scores and the judges use (``evalbench.judge.RUBRICS``)."""
    judges: list[ModelSpec] = Field(min_length=1)
    """Rubric judges; the first is the primary judge (confusion, worst cases, retest), all of
    them form the panel."""
    headline: str = "accuracy"
    """The dimension of the headline ±k agreement, or ``weighted`` for the weighted score."""
    tolerance: float = Field(default=1.0, ge=0)
    """k of the ±k agreement (|judge − human| <= k)."""
    panel_method: Literal["mean", "median"] = "mean"
    """How the panel's consensus score is aggregated."""
    outlier_distance: float = Field(default=2.0, ge=0)
    """A panel judge is an outlier on an item when it is further than this from the median of
    the other judges (needs at least three judges)."""
    retest: bool = True
    """Also ask the primary judge a second time (replicate 1) for a test–retest comparison."""
    pairwise_judge: ModelSpec | None = None
    """A pairwise judge for the position-bias check on pairs of answers to the same question
    (``None``: skip the check)."""
    verdict_format: VerdictFormat = "mt_bench"
    """Pairwise verdict format: ``mt_bench`` ([[A]]/[[B]]/[[C]]) or ``arena_hard``."""
    inconsistent_policy: InconsistentPolicy = "tie"
    """A pair whose two orders disagree: a tie, or dropped."""
    worst: int = Field(default=8, ge=0, le=100)
    """How many of the worst disagreements to show."""
    limit: int | None = Field(default=None, ge=1)
    """Use only the first N golden items (quick runs)."""
    annotations: Annotated[str | None, AfterValidator(_annotations_source)] = Field(
        default=None, exclude_if=lambda v: v is None
    )
    """Several annotators' scores of the golden items: a ``.jsonl``/``.csv`` of ``item,
    annotator, human_<dimension>`` (relative to the params file), or ``demo`` (the
    *simulated* three-annotator file of the demo set). Not needed when the golden set itself
    has an ``annotator`` column (``evalbench label export`` writes one)."""
    human_reference: Policy = Field(default="median", exclude_if=lambda v: v == "median")
    """Several annotators: the human reference of an item is the ``mean``, the ``median``
    or the ``majority`` (the score more than half gave; items without one are left out)."""
    anchors: list[CalibrationExample] = Field(default_factory=list, exclude_if=lambda v: not v)
    """Few-shot anchors (graded example answers, e.g. a fabricated one labelled 2): every
    rubric judge grades every item a second time with these in its prompt, and the report
    compares the two arms item by item. Empty: no comparison."""

    @model_validator(mode="after")
    def _check(self) -> JudgeGoldenParams:
        names = [s.name for s in self.model_specs()]
        if len(set(names)) != len(names):
            raise ValueError(f"judges and pairwise_judge need unique names (got {names})")
        dims = dimension_names(get_rubric(self.rubric))
        problems = anchor_problems(get_rubric(self.rubric), self.anchors)
        if problems:
            raise ValueError("; ".join(problems))
        if self.headline not in [*dims, "weighted"]:
            raise ValueError(
                f"headline: {self.headline!r} is not a dimension of rubric {self.rubric!r} "
                f"({', '.join(dims)}) or 'weighted'"
            )
        return self

    def model_specs(self) -> list[ModelSpec]:
        """The rubric judges and the pairwise judge."""
        return [*self.judges, *([self.pairwise_judge] if self.pairwise_judge else [])]

    def rubric_obj(self) -> Rubric:
        """The rubric, as an object."""
        return get_rubric(self.rubric)

    def anchored_rubric(self) -> Rubric:
        """The rubric with :attr:`anchors` as its few-shot anchors."""
        return with_anchors(self.rubric, self.anchors)


# --------------------------------------------------------------------------- records


class _GoldenJudgmentBase(RubricJudgment):
    item: str
    """The golden item id (``replicate`` 1 is the primary judge's retest)."""
    human_weighted: float
    """The human scores' weighted score."""


def _rubric_columns() -> dict[str, Any]:
    columns: dict[str, Any] = {}
    for name in sorted(RUBRICS):
        rubric = get_rubric(name)
        for dim in rubric.dimensions:
            columns[f"score_{dim.name}"] = (float | None, None)
            columns[f"human_{dim.name}"] = (float | None, None)
        for out in rubric.output_fields:
            columns[f"extra_{out.name}"] = ((str if out.kind == "text" else float) | None, None)
    return columns


GoldenJudgmentRecord = create_model(
    "GoldenJudgmentRecord",
    __base__=_GoldenJudgmentBase,
    __doc__="A line of ``records/golden_judgments.jsonl``: one judgment of one golden item, "
    "with the human scores beside the judge's. Besides the fixed fields, ``score_<dim>`` "
    "(judge), ``human_<dim>`` (golden) and ``extra_<field>`` (the judge's other output "
    "fields) of the study's rubric; the allowed ones are those of every built-in rubric "
    "(params accept only built-in rubrics).",
    **_rubric_columns(),
)


class GoldenPairRecord(PairJudgment):
    """A line of ``records/golden_pairs.jsonl``: two answers to one question, both orders
    (x, y = the golden items shown as A in order 1 and order 2)."""

    outcome: OrderOutcome
    human: Verdict
    """The human preference: the higher golden weighted score (tie within 0.5)."""
    first_verdict: Verdict | None = None
    """``first`` as an agreement verdict (a = item x)."""
    second_verdict: Verdict | None = None
    verdict: Verdict | None = None
    """``final`` as an agreement verdict."""


class AnnotatorAgreementRecord(Record):
    """A line of ``records/annotator_agreement.jsonl``: agreement among the annotators on one
    rubric dimension (:func:`~.humans.annotator_table`), at full precision; ``null`` where a
    statistic is undefined (no shared item, or no variation for the chance-corrected ones)."""

    dimension: str
    n_items: int
    """Items scored by at least two annotators (the pairable ones)."""
    n_annotators: int
    alpha: float | None
    """Krippendorff's alpha (``alpha_level``, interval for scores)."""
    alpha_low: float | None
    alpha_high: float | None
    """Percentile bootstrap interval of ``alpha`` over items, at ``level``."""
    alpha_level: Literal["interval", "nominal"]
    level: float
    alpha_ordinal: float | None
    """Krippendorff's alpha at the ordinal level (point estimate)."""
    exact: float | None
    within_k: float | None
    """Within ±``tolerance``. This, ``exact``, ``kappa`` and ``qwk``: means over the annotator
    pairs weighted by the items each pair shares."""
    kappa: float | None
    """Cohen's kappa over the dimension's scale points."""
    qwk: float | None
    """Quadratic weighted kappa."""
    tolerance: float
    simulated: bool
    """The annotations were written by a simulator, not by people."""


class AnnotatorPairRecord(Record):
    """A line of ``records/annotator_pairs.jsonl``: two annotators on one dimension, on the
    items both scored (:func:`~.humans.every_pair`)."""

    dimension: str
    annotator_1: str
    annotator_2: str
    n: int
    exact: float | None
    within_k: float | None
    kappa: float | None
    qwk: float | None
    tolerance: float


# --------------------------------------------------------------------------- the result


class PanelResult(NamedTuple):
    """The rubric judges as a panel on the headline dimension."""

    panel: pd.DataFrame
    """:func:`~.metrics.golden_panel`: one row per item."""
    summary: dict[str, Any]
    """:func:`~.metrics.panel_summary`."""
    versus: pd.DataFrame
    """Each judge's ±k agreement and the panel's (:func:`~.metrics.panel_versus`)."""
    matrix: pd.DataFrame
    """Judge × judge ±k agreement (:func:`~.metrics.judge_vs_judge`)."""
    outliers: pd.DataFrame
    """Items with an outlier judge (:func:`~.metrics.outlier_items`)."""


class RetestResult(NamedTuple):
    """The primary judge graded twice."""

    stats: RetestAgreement
    """:func:`~.metrics.golden_retest` on the confusion dimension."""
    table: pd.DataFrame
    """:func:`~.metrics.retest_table`."""
    expected_exact: float | None
    """A simulated judge's expected exact agreement of two draws (``None`` when real)."""


class PairsResult(NamedTuple):
    """The pairwise judge on pairs of answers to the same question, in both orders."""

    pairs: pd.DataFrame
    """:func:`run_golden_pairs` rows."""
    summary: dict[str, Any]
    """:func:`~.metrics.golden_pair_summary`."""
    measures: pd.DataFrame
    """:func:`~.metrics.pair_measures`."""
    expected_consistency: float | None
    """A simulated judge's expected position consistency (``None`` when real)."""


class HumansResult(NamedTuple):
    """Several annotators: their agreement, the reference, the judges against it."""

    annotations: pd.DataFrame
    """One row per item and annotator (:func:`load_study_annotations`)."""
    policy: Policy
    """How the reference is formed (``params.human_reference``)."""
    counts: dict[str, Any]
    """:func:`~.humans.reference_counts` (annotators, items, labels, simulated)."""
    agreement: pd.DataFrame
    """Among the annotators, per dimension (:func:`~.humans.annotator_table`)."""
    dimension: str
    """The dimension of the pairwise table and the leave-one-out comparison."""
    pairs: pd.DataFrame
    """Every pair of annotators on ``dimension`` (:func:`~.humans.annotator_pairs`)."""
    reference: pd.DataFrame
    """The golden items with the annotators' reference as human scores."""
    versus: pd.DataFrame
    """Every judge against the reference (:func:`~.humans.judges_vs_reference`)."""
    among: pd.DataFrame
    """The primary judge among the annotators (:func:`~.humans.judge_among_annotators`)."""


class AnchorsResult(NamedTuple):
    """Every rubric judge graded again with few-shot anchors in its prompt."""

    judgments: pd.DataFrame
    """:func:`~.study.run_anchored` (the judgments with the anchors)."""
    comparison: pd.DataFrame
    """:func:`~.metrics.anchor_comparison` per judge and dimension, with the sim judges'
    expected differences (``expected_<measure>_diff``; NaN for a real judge)."""


class JudgeGoldenResult(NamedTuple):
    """Everything a golden-set study computed (what the notebook shows)."""

    params: JudgeGoldenParams
    rubric: Rubric
    golden: pd.DataFrame
    """The golden items studied (:func:`load_study_golden`)."""
    typical: float
    """Median answer length: the length-bias reference."""
    judgments: pd.DataFrame
    """:func:`run_golden`."""
    long: pd.DataFrame
    """:func:`~.metrics.golden_long`."""
    agreement: pd.DataFrame
    """:func:`~.metrics.golden_agreement` with the sim judges' expected values."""
    head: pd.Series
    """The agreement row of the primary judge on the headline dimension."""
    shown: str
    """The dimension of the confusion, length bias and retest (integer scale)."""
    confusion: pd.DataFrame | None
    """:func:`~.metrics.score_confusion` of the primary judge on ``shown`` (``None`` when the
    human reference has fractional scores, e.g. the mean of two annotators)."""
    slope: Interval
    """:func:`~.metrics.length_slope` of the primary judge on ``shown``."""
    length: pd.DataFrame
    """:func:`~.metrics.length_points` (the scatter)."""
    worst: pd.DataFrame
    """:func:`~.metrics.worst_disagreements` of the primary judge on the headline."""
    unscored: pd.DataFrame
    """:func:`~.metrics.unscored_outputs`."""
    panel: PanelResult
    retest: RetestResult | None
    """``None`` with ``retest: false``."""
    pairs: PairsResult | None
    """``None`` without a ``pairwise_judge``."""
    usage: pd.DataFrame
    """Model calls per judge over the whole study (:meth:`~evalbench.runs.Run.recorded_usage`)."""
    simulated: frozenset[str]
    """Names of the simulated judges."""
    humans: HumansResult | None = None
    """Several annotators (``None``: one score per item and no ``annotations``)."""
    anchors: AnchorsResult | None = None
    """The judges with few-shot anchors (``None`` without ``anchors`` in params)."""
