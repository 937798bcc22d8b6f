"""The judge_public study's types: its params and the result the notebook shows.

The study writes no records (its inputs are the pinned published files); its result is
:class:`JudgePublicResult`. The params live here, beside the result that holds them, so
that :mod:`~.report` and :mod:`~.figures` read both without importing :mod:`~.study`.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

import pandas as pd
from pydantic import Field, model_validator

from evalbench.judge import InconsistentPolicy
from evalbench.params import StudyParams
from evalbench.published.prd import PRD_REVIEWERS, PrdReviewer

from .data import SECTIONS, Section


class JudgePublicParams(StudyParams):
    """Parameters of the published-judges study (``study: judge_public``).

    No model is called: the study re-analyses published judgments against human labels.
    """

    study: Literal["judge_public"] = "judge_public"
    sections: list[Section] = Field(default_factory=lambda: list(SECTIONS))
    """Which public data sets to analyse (``prd``, ``pandalm``, ``mtbench``)."""
    prd_reviewers: list[PrdReviewer] = Field(default_factory=lambda: list(PRD_REVIEWERS))
    """PRD's LLM reviewers to compare with the human majority."""
    prd_min_human_raters: Literal[1, 3] = 1
    """1: every PRD item (the four pairs with Claude have a single human vote); 3: only
    items with three MTurk votes."""
    human_no_majority: Literal["drop", "tie"] = "drop"
    """An item whose human votes have no majority (three different votes): left out, or a tie."""
    inconsistent_policy: InconsistentPolicy = "tie"
    """A judge's two orders disagree: the pair counts as a tie (MT-Bench) or is dropped."""
    pandalm_garbage: Literal["tie", "drop"] = "tie"
    """GPT-3.5's unusable PandaLM verdicts: a tie (PandaLM's convention, reproduces its
    numbers) or unscored."""

    @model_validator(mode="after")
    def _check_lists(self) -> JudgePublicParams:
        for name, values in (("sections", self.sections), ("prd_reviewers", self.prd_reviewers)):
            if len(set(values)) != len(values) or not values:
                raise ValueError(f"{name}: must be a non-empty list without repeats (got {values})")
        return self


class PrdResult(NamedTuple):
    """PRD Vicuna-80: the LLM reviewers against the MTurk majority."""

    human: pd.DataFrame
    """Every MTurk vote (:func:`evalbench.published.prd.load_prd_ratings`)."""
    orders: pd.DataFrame
    """Each reviewer's two orders and resolved verdict, with answer lengths."""
    items: pd.DataFrame
    """The human items (:func:`~.scoring.prd_human_items`)."""
    llm_items: pd.DataFrame
    """The human items of the pairs the reviewers judged, with lengths."""
    raters: dict[str, float]
    """Human–human agreement (:func:`~.metrics.prd_human_agreement`)."""
    table: pd.DataFrame
    """One row per reviewer (:func:`~.metrics.prd_reviewer_table`)."""
    confusions: pd.DataFrame
    """Row shares of each reviewer's verdict per human verdict, stacked."""
    human_longer: dict[str, Any]
    """P(longer wins) of the human majority (:func:`evalbench.judge.tables.longer_summary`)."""
    rerun: dict[str, Any] | None
    """A reviewer's second run (:func:`~.metrics.prd_rerun`); None when PRD has none."""
    lead: str
    """The reviewer of the key result and the headline (``gpt4`` when it is reviewed)."""


class PandalmResult(NamedTuple):
    """The PandaLM test set: GPT-3.5 and PandaLM-7B against three annotators."""

    frame: pd.DataFrame
    """:func:`evalbench.published.pandalm.load_pandalm`."""
    judges: pd.DataFrame
    """:func:`~.metrics.pandalm_judge_table`."""
    comparison: pd.DataFrame
    """Ours vs published (:func:`~.metrics.pandalm_comparison`)."""
    annotators: pd.DataFrame
    """Inter-annotator kappas (:func:`~.metrics.pandalm_annotator_table`)."""
    labels: pd.DataFrame
    """Label counts (:func:`~.metrics.pandalm_label_table`)."""
    confusions: pd.DataFrame
    """Row shares of each judge's verdict per human verdict, stacked."""
    longer: pd.DataFrame
    """P(the longer response wins) per judge and for the humans."""


class MtBenchResult(NamedTuple):
    """MT-Bench GPT-4 judgments: one model graded twice, pairs judged in both orders."""

    single: pd.DataFrame
    """Every single-answer grade (:func:`evalbench.published.mtbench.load_mtbench_single`)."""
    regrades: pd.DataFrame
    """Triples graded twice (:func:`~.metrics.mtbench_regrades`)."""
    retest: dict[str, Any]
    """:func:`~.metrics.mtbench_retest`."""
    pairs: pd.DataFrame
    """Every pair judgment (:func:`evalbench.published.mtbench.load_mtbench_pairs`)."""
    table: pd.DataFrame
    """Position consistency and P(longer wins), all pairs then per category."""


class JudgePublicResult(NamedTuple):
    """Everything the notebook shows; a section not in ``params.sections`` is None."""

    params: JudgePublicParams
    sources: pd.DataFrame
    """:func:`~.data.public_sources` of the sections."""
    prd: PrdResult | None
    pandalm: PandalmResult | None
    mtbench: MtBenchResult | None
    usage: pd.DataFrame
    """:meth:`evalbench.runs.Run.recorded_usage` (empty: no model is asked)."""
    simulated: frozenset[str]
    """Simulated systems (none: every judgment is published)."""

    def prd_part(self) -> PrdResult:
        """The PRD section (``ValueError`` when ``prd`` is not in this run's sections)."""
        if self.prd is None:
            raise ValueError("prd is not in this run's sections")
        return self.prd

    def pandalm_part(self) -> PandalmResult:
        """The PandaLM section (``ValueError`` when it is not in this run's sections)."""
        if self.pandalm is None:
            raise ValueError("pandalm is not in this run's sections")
        return self.pandalm

    def mtbench_part(self) -> MtBenchResult:
        """The MT-Bench section (``ValueError`` when it is not in this run's sections)."""
        if self.mtbench is None:
            raise ValueError("mtbench is not in this run's sections")
        return self.mtbench
