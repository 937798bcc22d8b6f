"""The published-judges study (``study: judge_public``): published judges vs humans.

``run(run)`` re-analyses published judgments against real human labels, with no model
call, for each section of ``params.sections``:

* **PRD Vicuna-80** (Li, Patel & Du, 2023, arXiv:2307.02762; bcdnlp/PRD, MIT): five LLM
  reviewers judged every answer pair of five models in both orders; MTurk workers gave three
  votes per (question, pair) (one for the pairs with Claude).
* **PandaLM test set** (Wang et al., 2023, arXiv:2306.05087; WeOpenML/PandaLM, Apache-2.0):
  999 pairs, three annotators, GPT-3.5 and PandaLM-7B verdicts; the accuracy, precision,
  recall and F1 reproduce the published numbers.
* **MT-Bench** (Zheng et al., 2023, arXiv:2306.05685; FastChat ``llm_judge`` format) GPT-4
  judgments shared in forks of FastChat: single-answer grades with one model graded twice,
  and pair judgments in both orders.

It returns a :class:`~.records.JudgePublicResult` with everything
``notebooks/judge_public.ipynb`` shows, and writes no records (the inputs are the pinned
published files).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from evalbench.judge.tables import longer_summary, stack_confusions
from evalbench.measured import Measured
from evalbench.runs import Run
from evalbench.studies import Study
from evalbench.tiers import apply_tier

from . import metrics as M
from . import report
from .data import (
    load_mtbench_pairs,
    load_mtbench_single,
    load_pandalm,
    load_prd,
    public_sources,
)
from .records import (
    JudgePublicParams,
    JudgePublicResult,
    MtBenchResult,
    PandalmResult,
    PrdResult,
)
from .scoring import prd_human_items, prd_merged, prd_orders, reviewed_items, with_lengths


def is_tiered(params: JudgePublicParams) -> bool:
    """Whether ``tier`` / ``sample`` asks for a subsample."""
    return params.tier != "full" or params.sample is not None


def tiered(
    frame: pd.DataFrame, params: JudgePublicParams, key: list[str], stratum: list[str]
) -> pd.DataFrame:
    """The rows of ``frame`` whose item (a distinct ``key``) the tier keeps, strata by the
    ``stratum`` columns (:func:`evalbench.tiers.apply_tier`: seeded, nested)."""
    if not is_tiered(params):
        return frame
    units = list(frame[key + stratum].drop_duplicates().itertuples(index=False, name=None))
    kept = apply_tier(
        units,
        params,
        item_id=lambda u: "|".join(map(str, u[: len(key)])),
        stratum=lambda u: u[len(key) :],
    )
    keep = {u[: len(key)] for u in kept}
    rows = frame[key].itertuples(index=False, name=None)
    return frame[[tuple(r) in keep for r in rows]]


def _same_pairs(frame: pd.DataFrame, kept: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``frame`` on a (question, unordered model pair) that ``kept`` has."""

    def keys(f: pd.DataFrame) -> list[tuple[Any, frozenset[Any]]]:
        rows = f[["question_id", "model_x", "model_y"]].itertuples(index=False, name=None)
        return [(q, frozenset((x, y))) for q, x, y in rows]

    wanted = set(keys(kept))
    return frame[[k in wanted for k in keys(frame)]]


def run_prd(run: Run[JudgePublicParams]) -> PrdResult:
    """PRD Vicuna-80: the reviewers' verdicts against the MTurk majority (``run.rng("prd")``,
    the rerun ``run.rng("prd-rerun")``)."""
    p = run.params
    rounds, level = p.bootstrap_rounds, p.confidence_level
    files = load_prd(p.prd_reviewers)
    pair = ["model_x", "model_y"]
    human = tiered(files.human, p, ["question_id", *pair], pair)
    files = files._replace(human=human, reviews=_same_pairs(files.reviews, human))
    items = prd_human_items(
        files.human, min_raters=p.prd_min_human_raters, no_majority=p.human_no_majority
    )
    plain = prd_orders(files.reviews, p.inconsistent_policy)
    orders = with_lengths(plain, files.lengths)
    llm_items = reviewed_items(items, orders, files.lengths)
    table = M.prd_reviewer_table(orders, items, rng=run.rng("prd"), rounds=rounds, level=level)
    reviewers = set(table["reviewer"])
    return PrdResult(
        human=files.human, orders=orders, items=items, llm_items=llm_items,
        raters=M.prd_human_agreement(files.human), table=table,
        confusions=stack_confusions(M.prd_confusions(prd_merged(orders, items))),
        human_longer=longer_summary(
            llm_items["human"], llm_items["len_x"], llm_items["len_y"], level
        ),
        rerun=M.prd_rerun(plain, rng=run.rng("prd-rerun"), rounds=rounds, level=level),
        lead="gpt4" if "gpt4" in reviewers else str(table["reviewer"].iloc[0]),
    )  # fmt: skip


def run_pandalm(run: Run[JudgePublicParams]) -> PandalmResult:
    """PandaLM: both judges against the annotators' majority (``run.rng("pandalm")``)."""
    p = run.params
    frame = tiered(load_pandalm(p.pandalm_garbage), p, ["idx"], ["human"])
    judges = M.pandalm_judge_table(
        frame, rng=run.rng("pandalm"), rounds=p.bootstrap_rounds, level=p.confidence_level
    )
    return PandalmResult(
        frame=frame, judges=judges, comparison=M.pandalm_comparison(judges),
        annotators=M.pandalm_annotator_table(frame), labels=M.pandalm_label_table(frame),
        confusions=M.pandalm_confusions(frame),
        longer=M.pandalm_longer(frame, p.confidence_level),
    )  # fmt: skip


def run_mtbench(run: Run[JudgePublicParams]) -> MtBenchResult:
    """MT-Bench: GPT-4's pair judgments and its regrades (``run.rng("mtbench-retest")``)."""
    p = run.params
    pair_keys = ["question_id", "model_1", "model_2"]
    pairs = tiered(load_mtbench_pairs(p.inconsistent_policy), p, pair_keys, ["category"])
    single = tiered(load_mtbench_single(), p, ["question_id", "model", "turn"], ["model"])
    regrades = M.mtbench_regrades(single)
    retest = M.mtbench_retest(
        regrades, rng=run.rng("mtbench-retest"), rounds=p.bootstrap_rounds,
        level=p.confidence_level,
    )  # fmt: skip
    table = M.mtbench_pair_table(pairs, p.confidence_level)
    return MtBenchResult(single, regrades, retest, pairs, table)


def run(run: Run[JudgePublicParams]) -> JudgePublicResult:
    """Analyse every section of ``params.sections`` (no model call, no records written)."""
    p = run.params
    return JudgePublicResult(
        params=p,
        sources=public_sources(p.sections),
        prd=run_prd(run) if "prd" in p.sections else None,
        pandalm=run_pandalm(run) if "pandalm" in p.sections else None,
        mtbench=run_mtbench(run) if "mtbench" in p.sections else None,
        usage=run.recorded_usage(),
        simulated=run.simulated_names,
    )


def counts(result: JudgePublicResult) -> dict[str, int]:
    """Items per section: PRD reviewer items, PandaLM pairs, MT-Bench regrades both scored."""
    out: dict[str, int] = {}
    if result.prd is not None:
        out["prd_items"] = len(result.prd.llm_items)
    if result.pandalm is not None:
        out["pandalm_items"] = len(result.pandalm.frame)
    if result.mtbench is not None:
        out["mtbench_regrades"] = int(result.mtbench.retest["retest"].n)
    return out


def measured(result: JudgePublicResult) -> list[Measured]:
    """Per section run: the published items it read (published verdicts have no failed call;
    an empty table measures nothing)."""
    counts_ = counts(result)
    names = {"prd_items": "PRD reviewers", "pandalm_items": "PandaLM",
             "mtbench_regrades": "MT-Bench regrades"}  # fmt: skip
    return [Measured(names[k], n, n, unit="item") for k, n in counts_.items()]


STUDY = Study(
    kind="judge_public",
    params=JudgePublicParams,
    run=run,
    notebook="judge_public.ipynb",
    records={},
    headlines=report.headlines,
    findings=report.findings,
    counts=counts,
    measured=measured,
)
