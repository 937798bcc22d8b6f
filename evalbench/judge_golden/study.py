"""The golden-set judge study (``study: judge_golden``): how far to trust a judge on your data.

``run(run)`` loads a golden set (items with human scores per rubric dimension), asks every
rubric judge to grade every item (resumable, through :func:`evalbench.judge.judge_rubric`),
asks the primary judge a second time for a test–retest comparison, and, with a
``pairwise_judge``, compares the two answers to each question in both orders
(:func:`evalbench.judge.judge_pairs`). It writes ``records/golden_judgments.jsonl`` and
``records/golden_pairs.jsonl`` (with several annotators also ``annotator_agreement.jsonl``
and ``annotator_pairs.jsonl``: their agreement per dimension and per pair) and returns a
:class:`JudgeGoldenResult` with everything ``notebooks/judge_golden.ipynb`` shows: ±k
agreement per judge and dimension, bias, confusion, answer-length bias, the worst
disagreements, the unscored outputs, a panel of the judges, the retest and the pairwise
position check. Offline it uses ``sim`` judges whose
truth is the human score, so every estimate is checked against its known expectation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal, NamedTuple

import pandas as pd
from pydantic import AfterValidator, Field, ValidationInfo, create_model, model_validator

from evalbench.agreement import RetestAgreement
from evalbench.judge import (
    RUBRICS,
    SIDE_TO_VERDICT,
    InconsistentPolicy,
    OrderOutcome,
    PairJudgment,
    Rubric,
    VerdictFormat,
    get_rubric,
    judge_pairs,
    judge_rubric,
    known_rubric,
)
from evalbench.judge.tables import json_rows
from evalbench.labels import Policy
from evalbench.models import ModelSpec
from evalbench.params import StudyParams, data_path
from evalbench.records import Record, ResponseRecord
from evalbench.stats import Interval
from evalbench.studies import Study
from evalbench.tiers import apply_tier

from . import humans as H
from . import metrics as M
from . import report
from .data import GoldenSetError, dimension_names, has_annotators, load_annotations, load_golden
from .scoring import (
    confusion_dimension,
    golden_pair_tasks,
    golden_tasks,
    human_preference,
    item_of,
    typical_length,
)
from .sim import expected_pair_consistency, sim_expectations, with_expectations

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

    @model_validator(mode="after")
    def _check(self) -> JudgeGoldenParams:
        names = [s.name for s in self.model_specs()]
        if len(set(names)) != len(names):
            raise ValueError(f"judges and pairwise_judge need unique names (got {names})")
        dims = dimension_names(get_rubric(self.rubric))
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


# --------------------------------------------------------------------------- records


class _GoldenJudgmentBase(Record):
    judge: str
    """The rubric judge."""
    item: str
    """The golden item id."""
    replicate: int
    """0 for every judge; 1 for the primary judge's retest."""
    rubric: str
    status: Literal["scored", "unscored"]
    """``scored`` or ``unscored`` (never a default score)."""
    weighted_score: float | None = None
    """``sum(w·s) / sum(w)`` of the judge's scores (``None`` when unscored)."""
    passed: bool | None = None
    excellent: bool | None = None
    parse_method: str | None = None
    unscored_kind: str | None = None
    """Short cause when unscored (``call_error`` for a failed call)."""
    unscored_reason: str | None = None
    raw: str = ""
    """The judge's text, verbatim."""
    error: str | None = None
    """Why the judge call failed (an unscored row, never a score)."""
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


# --------------------------------------------------------------------------- asking


def load_study_golden(params: JudgeGoldenParams) -> pd.DataFrame:
    """The study's golden set: ``params.golden`` (several annotators' scores combined by
    ``human_reference``), its first ``params.limit`` items, then the ``tier`` / ``sample``
    subsample of its questions (every answer of a kept question stays, so the pairwise
    check keeps its pairs; stratified by a ``category`` column when there is one)."""
    golden = load_golden(params.golden, params.rubric_obj(), params.human_reference)
    dropped = list(golden.attrs.get("no_reference", []))
    golden = golden.head(params.limit) if params.limit else golden
    firsts = golden.drop_duplicates("question")
    categories = firsts["category"] if "category" in firsts else ["all"] * len(firsts)
    strata = dict(zip(firsts["question"], categories, strict=True))
    first_item = dict(zip(firsts["question"], firsts["item"], strict=True))
    kept = apply_tier(
        list(first_item), params, item_id=lambda q: first_item[q], stratum=lambda q: strata[q]
    )
    golden = golden[golden["question"].isin(set(kept))].reset_index(drop=True)
    golden.attrs["no_reference"] = dropped
    return golden


def own_annotations(params: JudgeGoldenParams) -> bool:
    """Whether the golden set itself holds several annotators (an ``annotator`` column)."""
    return params.golden != "demo" and has_annotators(Path(params.golden))


def load_study_annotations(params: JudgeGoldenParams, golden: pd.DataFrame) -> pd.DataFrame | None:
    """Several annotators' scores of the studied items (``None`` without any).

    Raises:
        GoldenSetError: both the golden set and ``annotations`` hold annotators, or the
            annotations name an item the golden set does not have.
    """
    own = own_annotations(params)
    if own and params.annotations:
        raise GoldenSetError(
            f"{params.golden}: has an annotator column; leave `annotations:` out (or use a "
            "golden set with one score per item)"
        )
    source = params.golden if own else params.annotations
    if source is None:
        return None
    annotations = load_annotations(source, params.rubric_obj(), texts=own)
    known = set(load_golden(params.golden, params.rubric_obj(), "mean")["item"])
    stray = annotations[~annotations["item"].isin(known)]
    if len(stray):
        row = stray.iloc[0]
        raise GoldenSetError(
            f"{source}:{row['line']}: column 'item': {row['item']!r} is not in the golden set"
        )
    return annotations[annotations["item"].isin(set(golden["item"]))].reset_index(drop=True)


def run_golden(run: Any, golden: pd.DataFrame) -> pd.DataFrame:
    """Ask every judge to grade every golden item (resumable; retest and pairs excluded).

    Also asks the primary judge again (replicate 1) when ``params.retest``. Writes
    ``records/golden_judgments.jsonl`` (one row per judge, item and replicate, with the human
    scores beside the judge's).

    Returns:
        The :func:`evalbench.judge.judge_rubric` columns with ``item`` instead of ``case_id``.
    """
    params: JudgeGoldenParams = run.params
    rubric, typical = params.rubric_obj(), typical_length(golden)
    tasks = golden_tasks(golden, rubric)
    frames = [judge_rubric(run, s, rubric, tasks, typical_length=typical) for s in params.judges]
    if params.retest:
        again = golden_tasks(golden, rubric, replicate=1)
        frames.append(judge_rubric(run, params.judges[0], rubric, again, typical_length=typical))
    judgments = pd.concat(frames, ignore_index=True).rename(columns={"case_id": "item"})
    judgments["item"] = judgments["item"].map(item_of)
    humans = golden[["item", *[f"human_{d}" for d in dimension_names(rubric)], "human_weighted"]]
    run.write_records("golden_judgments", json_rows(judgments.merge(humans, on="item")))
    return judgments


def run_golden_pairs(run: Any, golden: pd.DataFrame) -> pd.DataFrame | None:
    """The pairwise position check (both orders), or ``None`` without a ``pairwise_judge``.

    Writes ``records/golden_pairs.jsonl``: the :func:`evalbench.judge.judge_pairs` columns
    plus ``first_verdict, second_verdict, verdict`` (a/b/tie, a = model x) and ``human``.
    """
    params: JudgeGoldenParams = run.params
    tasks = golden_pair_tasks(golden)
    if params.pairwise_judge is None or not tasks:
        return None
    pairs = judge_pairs(
        run, params.pairwise_judge, tasks, verdict_format=params.verdict_format,
        policy=params.inconsistent_policy, store="pairwise",
    )  # fmt: skip
    weighted = golden.set_index("item")["human_weighted"]
    delta = weighted.loc[pairs["model_x"]].to_numpy() - weighted.loc[pairs["model_y"]].to_numpy()
    pairs["human"] = [human_preference(d) for d in delta]
    for column, source in (
        ("first_verdict", "first"),
        ("second_verdict", "second"),
        ("verdict", "final"),
    ):
        pairs[column] = [
            SIDE_TO_VERDICT.get(v) if isinstance(v, str) else None for v in pairs[source]
        ]
    run.write_records("golden_pairs", json_rows(pairs))
    return pairs


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


def _agreement(run: Any, long: pd.DataFrame, golden: pd.DataFrame, typical: float) -> pd.DataFrame:
    params: JudgeGoldenParams = run.params
    rubric, level, rounds = params.rubric_obj(), params.confidence_level, params.bootstrap_rounds
    table = M.golden_agreement(
        long, rubric, tolerance=params.tolerance, rng=run.rng("golden-agreement"), rounds=rounds,
        level=level,
    )  # fmt: skip
    return with_expectations(
        table, golden, rubric, params.judges, tolerance=params.tolerance, typical=typical
    )


def _slope(run: Any, long: pd.DataFrame, dimension: str, typical: float) -> Interval:
    params: JudgeGoldenParams = run.params
    return M.length_slope(
        long, judge=params.judges[0].name, dimension=dimension, typical=typical,
        rng=run.rng("length-slope"), rounds=params.bootstrap_rounds,
        level=params.confidence_level,
    )  # fmt: skip


def _panel(
    params: JudgeGoldenParams, judgments: pd.DataFrame, golden: pd.DataFrame,
    long: pd.DataFrame, agreement: pd.DataFrame,
) -> PanelResult:  # fmt: skip
    panel = M.golden_panel(
        judgments, golden, dimension=params.headline, method=params.panel_method,
        outlier_distance=params.outlier_distance, tolerance=params.tolerance,
    )  # fmt: skip
    summary = M.panel_summary(panel, params.confidence_level)
    label = f"panel ({params.panel_method} of {len(params.judges)})"
    versus = M.panel_versus(agreement, panel, summary, dimension=params.headline, label=label)
    matrix = M.judge_vs_judge(long, dimension=params.headline, tolerance=params.tolerance)
    return PanelResult(panel, summary, versus, matrix, M.outlier_items(panel))


def _retest(
    run: Any, long: pd.DataFrame, golden: pd.DataFrame, dimension: str, typical: float
) -> RetestResult | None:
    params: JudgeGoldenParams = run.params
    if not params.retest:
        return None
    primary, rubric = params.judges[0], params.rubric_obj()
    stats = M.golden_retest(
        long, rubric, judge=primary.name, dimension=dimension, rng=run.rng("retest"),
        rounds=params.bootstrap_rounds, level=params.confidence_level,
    )  # fmt: skip
    expected = None
    if primary.simulated:
        expected = sim_expectations(
            golden, rubric, primary, dimension=dimension, tolerance=params.tolerance,
            typical=typical,
        )["retest_exact"]  # fmt: skip
    return RetestResult(stats, M.retest_table(stats), expected)


def _pairs(run: Any, golden: pd.DataFrame) -> PairsResult | None:
    params: JudgeGoldenParams = run.params
    pairs = run_golden_pairs(run, golden)
    if pairs is None:
        return None
    summary = M.golden_pair_summary(
        pairs, rng=run.rng("pairs"), rounds=params.bootstrap_rounds, level=params.confidence_level
    )
    spec = params.pairwise_judge
    expected = None
    if spec is not None and spec.simulated:
        expected = expected_pair_consistency(golden_pair_tasks(golden), spec)
    return PairsResult(pairs, summary, M.pair_measures(summary), expected)


def _whole(scores: pd.Series) -> bool:
    """Whether every human score is a scale point (a mean of annotators may not be)."""
    return bool((scores.astype(float) % 1 == 0).all())


def _humans(
    run: Any, golden: pd.DataFrame, judgments: pd.DataFrame, dimension: str
) -> HumansResult | None:
    params: JudgeGoldenParams = run.params
    annotations = load_study_annotations(params, golden)
    if annotations is None:
        return None
    rubric, policy, k = params.rubric_obj(), params.human_reference, params.tolerance
    stats: dict[str, Any] = {"rounds": params.bootstrap_rounds, "level": params.confidence_level}
    reference = H.reference_golden(golden, annotations, rubric, policy)
    result = HumansResult(
        annotations=annotations, policy=policy, counts=H.reference_counts(annotations),
        agreement=H.annotator_table(
            annotations, rubric, tolerance=k, rng=run.rng("annotators"), **stats
        ),
        dimension=dimension,
        pairs=H.annotator_pairs(annotations, rubric, dimension=dimension, tolerance=k),
        reference=reference,
        versus=H.judges_vs_reference(
            judgments, reference, rubric, tolerance=k, rng=run.rng("judges-vs-reference"),
            **stats,
        ),
        among=H.judge_among_annotators(
            annotations, judgments, judge=params.judges[0].name, dimension=dimension,
            policy=policy, tolerance=k,
        ),
    )  # fmt: skip
    _write_agreement(run, result)
    return result


def _write_agreement(run: Any, humans: HumansResult) -> None:
    """``records/annotator_agreement.jsonl`` and ``annotator_pairs.jsonl`` (write_records
    writes NaN as null and floats at full precision)."""
    params: JudgeGoldenParams = run.params
    k, simulated = params.tolerance, humans.counts["simulated"]
    table = humans.agreement.assign(level=params.confidence_level, tolerance=k, simulated=simulated)
    run.write_records("annotator_agreement", table.to_dict(orient="records"))
    pairs = H.every_pair(humans.annotations, params.rubric_obj(), tolerance=k)
    run.write_records("annotator_pairs", pairs.assign(tolerance=k).to_dict(orient="records"))


def run(run: Any) -> JudgeGoldenResult:
    """Ask the judges, compare them with the golden scores, write the records, summarize.

    Args:
        run: the open :class:`evalbench.runs.Run` of a ``judge_golden`` study.
    """
    params: JudgeGoldenParams = run.params
    rubric, primary, headline = params.rubric_obj(), params.judges[0].name, params.headline
    with run.timed("load"):
        golden = load_study_golden(params)
    typical = typical_length(golden)
    judgments = run_golden(run, golden)
    pairs = _pairs(run, golden)
    long = M.golden_long(judgments, golden, rubric)
    agreement = _agreement(run, long, golden, typical)
    head = agreement[(agreement["judge"] == primary) & (agreement["dimension"] == headline)]
    shown = confusion_dimension(rubric, headline)
    where = {"judge": primary, "dimension": shown}
    return JudgeGoldenResult(
        params=params, rubric=rubric, golden=golden, typical=typical, judgments=judgments,
        long=long, agreement=agreement, head=head.iloc[0], shown=shown,
        confusion=M.score_confusion(long, rubric, **where)
        if _whole(golden[f"human_{shown}"]) else None,
        slope=_slope(run, long, shown, typical),
        length=M.length_points(long, **where, typical=typical, rng=run.rng("jitter")),
        worst=M.worst_disagreements(
            judgments, golden, judge=primary, dimension=headline, n=params.worst
        ),
        unscored=M.unscored_outputs(judgments),
        panel=_panel(params, judgments, golden, long, agreement),
        retest=_retest(run, long, golden, shown, typical), pairs=pairs,
        usage=run.recorded_usage(), simulated=run.simulated_names,
        humans=_humans(run, golden, judgments, shown),
    )  # fmt: skip


def counts(result: JudgeGoldenResult) -> dict[str, int]:
    """Items, judgments, unscored judgments, failed calls, pairs (and annotators and their
    labels), for the manifest."""
    judgments = result.judgments
    out = {
        "items": len(result.golden),
        "judgments": len(judgments),
        "unscored": int((judgments["status"] != "scored").sum()),
        "call_errors": int(judgments["error"].notna().sum()),
        "pairs": 0 if result.pairs is None else len(result.pairs.pairs),
    }
    if result.humans is not None:
        out["annotators"] = len(result.humans.counts["annotators"])
        out["annotations"] = result.humans.counts["labels"]
    return out


STUDY = Study(
    kind="judge_golden",
    params=JudgeGoldenParams,
    run=run,
    notebook="judge_golden.ipynb",
    records={
        "judgments": ResponseRecord,
        "pairwise": ResponseRecord,
        "golden_judgments": GoldenJudgmentRecord,
        "golden_pairs": GoldenPairRecord,
        "annotator_agreement": AnnotatorAgreementRecord,
        "annotator_pairs": AnnotatorPairRecord,
    },
    headlines=report.headlines,
    counts=counts,
    optional_records=frozenset({"annotator_agreement", "annotator_pairs"}),  # one annotator
)
