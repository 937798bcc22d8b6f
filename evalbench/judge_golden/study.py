"""The golden-set judge study (``study: judge_golden``): how far to trust a judge on your data.

``run(run)`` loads a golden set (items with human scores per rubric dimension), asks every
rubric judge to grade every item (resumable, through :func:`evalbench.judge.judge_rubric`),
asks the primary judge a second time for a test–retest comparison, and, with a
``pairwise_judge``, compares the two answers to each question in both orders
(:func:`evalbench.judge.judge_pairs`). It writes the records :mod:`~.records` declares and
returns a :class:`~.records.JudgeGoldenResult` with everything ``judge_golden.ipynb`` shows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from evalbench.judge import SIDE_TO_VERDICT, judge_pairs, judge_rubric
from evalbench.judge.tables import json_rows
from evalbench.records import ResponseRecord
from evalbench.runs import Run
from evalbench.stats import Interval
from evalbench.studies import Study
from evalbench.tiers import apply_tier

from . import humans as H
from . import metrics as M
from . import report
from .data import GoldenSetError, dimension_names, has_annotators, load_annotations, load_golden
from .records import (
    AnchorsResult,
    AnnotatorAgreementRecord,
    AnnotatorPairRecord,
    GoldenJudgmentRecord,
    GoldenPairRecord,
    HumansResult,
    JudgeGoldenParams,
    JudgeGoldenResult,
    PairsResult,
    PanelResult,
    RetestResult,
)
from .scoring import (
    confusion_dimension,
    golden_pair_tasks,
    golden_tasks,
    human_preference,
    item_of,
    typical_length,
)
from .sim import (
    expected_pair_consistency,
    sim_expectations,
    with_anchor_expectations,
    with_expectations,
)

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


def run_golden(run: Run[JudgeGoldenParams], golden: pd.DataFrame) -> pd.DataFrame:
    """Ask every judge to grade every golden item (resumable; retest and pairs excluded).

    Also asks the primary judge again (replicate 1) when ``params.retest``. Writes
    ``records/golden_judgments.jsonl`` (one row per judge, item and replicate, with the human
    scores beside the judge's).

    Returns:
        The :func:`evalbench.judge.judge_rubric` columns with ``item`` instead of ``case_id``.
    """
    params = run.params
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


def run_anchored(run: Run[JudgeGoldenParams], golden: pd.DataFrame) -> pd.DataFrame | None:
    """Every rubric judge grades every item again with the few-shot ``anchors`` in its prompt
    (resumable; ``records/anchored.jsonl``), or ``None`` without anchors.

    Writes ``records/golden_anchored.jsonl`` (as ``golden_judgments.jsonl``).
    """
    params = run.params
    if not params.anchors:
        return None
    rubric, typical = params.anchored_rubric(), typical_length(golden)
    tasks = golden_tasks(golden, rubric)
    frames = [
        judge_rubric(run, spec, rubric, tasks, store="anchored", typical_length=typical)
        for spec in params.judges
    ]
    judgments = pd.concat(frames, ignore_index=True).rename(columns={"case_id": "item"})
    judgments["item"] = judgments["item"].map(item_of)
    humans = golden[["item", *[f"human_{d}" for d in dimension_names(rubric)], "human_weighted"]]
    run.write_records("golden_anchored", json_rows(judgments.merge(humans, on="item")))
    return judgments


def run_golden_pairs(run: Run[JudgeGoldenParams], golden: pd.DataFrame) -> pd.DataFrame | None:
    """The pairwise position check (both orders), or ``None`` without a ``pairwise_judge``.

    Writes ``records/golden_pairs.jsonl``: the :func:`evalbench.judge.judge_pairs` columns
    plus ``first_verdict, second_verdict, verdict`` (a/b/tie, a = model x) and ``human``.
    """
    params = run.params
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


def _agreement(
    run: Run[JudgeGoldenParams], long: pd.DataFrame, golden: pd.DataFrame, typical: float
) -> pd.DataFrame:
    params = run.params
    rubric, level, rounds = params.rubric_obj(), params.confidence_level, params.bootstrap_rounds
    table = M.golden_agreement(
        long, rubric, tolerance=params.tolerance, rng=run.rng("golden-agreement"), rounds=rounds,
        level=level,
    )  # fmt: skip
    return with_expectations(
        table, golden, rubric, params.judges, tolerance=params.tolerance, typical=typical
    )


def _slope(
    run: Run[JudgeGoldenParams], long: pd.DataFrame, dimension: str, typical: float
) -> Interval:
    params = run.params
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
    run: Run[JudgeGoldenParams],
    long: pd.DataFrame,
    golden: pd.DataFrame,
    dimension: str,
    typical: float,
) -> RetestResult | None:
    params = run.params
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


def _pairs(run: Run[JudgeGoldenParams], golden: pd.DataFrame) -> PairsResult | None:
    params = run.params
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


def _anchors(
    run: Run[JudgeGoldenParams], golden: pd.DataFrame, long: pd.DataFrame, typical: float
) -> AnchorsResult | None:
    params = run.params
    judgments = run_anchored(run, golden)
    if judgments is None:
        return None
    rubric = params.anchored_rubric()
    comparison = M.anchor_comparison(
        long, M.golden_long(judgments, golden, rubric), rubric, tolerance=params.tolerance,
        rng=run.rng("anchors"), rounds=params.bootstrap_rounds, level=params.confidence_level,
    )  # fmt: skip
    comparison = with_anchor_expectations(
        comparison, golden, rubric, params.judges, tolerance=params.tolerance, typical=typical
    )
    return AnchorsResult(judgments, comparison)


def _whole(scores: pd.Series) -> bool:
    """Whether every human score is a scale point (a mean of annotators may not be)."""
    return bool((scores.astype(float) % 1 == 0).all())


def _humans(
    run: Run[JudgeGoldenParams],
    golden: pd.DataFrame,
    annotations: pd.DataFrame | None,
    judgments: pd.DataFrame,
    dimension: str,
) -> HumansResult | None:
    params = run.params
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


def _write_agreement(run: Run[JudgeGoldenParams], humans: HumansResult) -> None:
    """``records/annotator_agreement.jsonl`` and ``annotator_pairs.jsonl`` (write_records
    writes NaN as null and floats at full precision)."""
    params = run.params
    k, simulated = params.tolerance, humans.counts["simulated"]
    table = humans.agreement.assign(level=params.confidence_level, tolerance=k, simulated=simulated)
    run.write_records("annotator_agreement", table.to_dict(orient="records"))
    pairs = H.every_pair(humans.annotations, params.rubric_obj(), tolerance=k)
    run.write_records("annotator_pairs", pairs.assign(tolerance=k).to_dict(orient="records"))


def run(run: Run[JudgeGoldenParams]) -> JudgeGoldenResult:
    """Ask the judges, compare them with the golden scores, write the records, summarize."""
    params = run.params
    rubric, primary, headline = params.rubric_obj(), params.judges[0].name, params.headline
    with run.timed("load"):  # the annotations too: a bad file fails before any judge is paid
        golden = load_study_golden(params)
        annotations = load_study_annotations(params, golden)
    typical = typical_length(golden)
    judgments = run_golden(run, golden)
    pairs = _pairs(run, golden)
    long = M.golden_long(judgments, golden, rubric)
    anchors = _anchors(run, golden, long, typical)  # before usage: its calls count there too
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
        humans=_humans(run, golden, annotations, judgments, shown), anchors=anchors,
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
    if result.anchors is not None:
        anchored = result.anchors.judgments
        out["anchored_judgments"] = len(anchored)
        out["anchored_unscored"] = int((anchored["status"] != "scored").sum())
    return out


STUDY = Study(
    kind="judge_golden",
    params=JudgeGoldenParams,
    run=run,
    notebook="judge_golden.ipynb",
    records={
        "judgments": ResponseRecord,
        "pairwise": ResponseRecord,
        "anchored": ResponseRecord,
        "golden_judgments": GoldenJudgmentRecord,
        "golden_pairs": GoldenPairRecord,
        "golden_anchored": GoldenJudgmentRecord,
        "annotator_agreement": AnnotatorAgreementRecord,
        "annotator_pairs": AnnotatorPairRecord,
    },
    headlines=report.headlines,
    findings=report.findings,
    counts=counts,
    measured=lambda result: M.measured_judges(result.judgments),
    # one annotator; no anchors
    optional_records=frozenset(
        {"annotator_agreement", "annotator_pairs", "anchored", "golden_anchored"}
    ),
)
