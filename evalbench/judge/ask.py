"""Asking judges through a run: rubric and pairwise chat jobs, resumable, parsed to frames.

:func:`judge_rubric` and :func:`judge_pairs` build the chat jobs (with a simulated reply
for the ``sim`` provider when the task carries its truth), ask them through
:meth:`evalbench.runs.Run.ask` (cached, checkpointed) and parse every reply. A failed call
is an unscored row with its error, never a score.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any, Literal, NamedTuple

import numpy as np
import pandas as pd

from evalbench.models import ChatRequest, Job, ModelSpec, SimTask
from evalbench.records import Record
from evalbench.runs import Run

from .pairwise import (
    InconsistentPolicy,
    OrderResolution,
    PairwiseVerdict,
    parse_pairwise_output,
    position_to_model,
    resolve_order,
)
from .parse import RubricResult, parse_rubric_output, results_frame
from .prompts import VerdictFormat, build_pairwise_messages, build_rubric_messages
from .rubrics import JudgeCase, Rubric, as_rubric
from .sim import pair_reply, rubric_reply


class RubricTask(NamedTuple):
    """One rubric judgment to obtain.

    ``truth`` is only for the offline ``sim`` judge: the true score per dimension (or one
    number for all), from which it simulates noise, leniency and length bias.
    """

    case_id: str
    case: JudgeCase
    truth: Mapping[str, float] | float | None = None
    replicate: int = 0


class PairTask(NamedTuple):
    """Two answers to one question, to be compared (in both orders by default).

    ``quality_x``/``quality_y`` are only for the ``sim`` judge: latent qualities on the
    log-odds scale (P(x beats y) = σ(quality_x − quality_y) for an unbiased judge).
    """

    pair_id: str
    question: str
    model_x: str
    answer_x: str
    model_y: str
    answer_y: str
    reference: str | None = None
    quality_x: float | None = None
    quality_y: float | None = None


def rubric_key(rubric: Rubric, case_id: str, replicate: int = 0) -> str:
    """The job key of a rubric judgment (``records/<store>.jsonl`` keys it with the judge's
    name): ``rubric:<name>[+anchors]:<case_id>#<replicate>``."""
    name = f"{rubric.name}+anchors" if rubric.anchors else rubric.name
    return f"rubric:{name}:{case_id}#{replicate}"


def rubric_jobs(
    rubric: Rubric | str, tasks: Sequence[RubricTask], *, typical_length: float | None = None
) -> list[Job]:
    """Chat jobs for rubric judgments (replicates differ by their request seed).

    Args:
        rubric: the rubric (or a built-in name).
        tasks: what to judge.
        typical_length: answer length the sim judge's length bias is relative to
            (default: the median answer length of ``tasks``).
    """
    rubric = as_rubric(rubric)
    lengths = [len(t.case.answer) for t in tasks]
    typical = typical_length or (float(np.median(lengths)) if lengths else 1.0)
    # anchored judgments of a case are other requests with keys of their own (a study can keep
    # both in one store); a sim judge draws the same noise for both, its error on an item
    # being its own, so the anchors move only its leniency (sim_leniency)
    jobs = []
    for task in tasks:
        key = rubric_key(rubric, task.case_id, task.replicate)
        sim_key = f"rubric:{rubric.name}:{task.case_id}#{task.replicate}"
        request = ChatRequest(
            messages=build_rubric_messages(rubric, task.case), seed=task.replicate or None
        )
        sim = None
        if task.truth is not None:
            respond = partial(
                rubric_reply,
                rubric=rubric,
                truth=task.truth,
                answer_length=max(1.0, float(len(task.case.answer))),
                reference_length=max(1.0, typical),
            )
            truth = {"truth": task.truth, "typical": typical}
            sim = SimTask(
                respond,
                sim_key,
                truth | ({"anchors": len(rubric.anchors)} if rubric.anchors else {}),
            )
        jobs.append(Job(key, request, sim))
    return jobs


def judge_rubric(
    run: Run,
    judge: ModelSpec,
    rubric: Rubric | str,
    tasks: Sequence[RubricTask],
    *,
    store: str = "judgments",
    typical_length: float | None = None,
) -> pd.DataFrame:
    """Ask ``judge`` for every rubric judgment (resumable) and parse the replies.

    A failed call is an **unscored** row (``unscored_kind="call_error"``) with the error,
    never a score.

    Args:
        run: the open :class:`evalbench.runs.Run` (its ``ask`` caches and checkpoints).
        judge: the judge model.
        rubric: a ``Rubric`` or the name of a built-in one.
        tasks: what to judge.
        store: the run's response store (``records/<store>.jsonl``).
        typical_length: as :func:`rubric_jobs`.

    Returns:
        :func:`results_frame` columns plus ``judge, case_id, replicate, error``.
    """
    rubric = as_rubric(rubric)
    jobs = rubric_jobs(rubric, tasks, typical_length=typical_length)
    answers = run.ask(judge, jobs, store=store, desc=f"judge {judge.name} ({rubric.name})")
    results = [_rubric_from_answer(rubric, answers[job.key]) for job in jobs]
    frame = results_frame(results, rubric)
    frame.insert(0, "judge", judge.name)
    frame.insert(1, "case_id", [t.case_id for t in tasks])
    frame.insert(2, "replicate", [t.replicate for t in tasks])
    frame["error"] = [answers[job.key].error for job in jobs]
    return frame


class RubricJudgment(Record):
    """The fields every study records for one rubric judgment (a row of
    :func:`judge_rubric`); studies subclass it with their item ids and score columns."""

    judge: str
    replicate: int
    """0 for every judge; 1 for a retest of the same case."""
    rubric: str
    status: Literal["scored", "unscored"]
    """Never a default score: an unreadable or failed judgment is ``unscored``."""
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


def _rubric_from_answer(rubric: Rubric, answer: Any) -> RubricResult:
    if answer.error is not None:
        return RubricResult(
            rubric=rubric.name,
            status="unscored",
            unscored_kind="call_error",
            unscored_reason=f"the judge call failed: {answer.error}",
        )
    return parse_rubric_output(rubric, answer.text)


def pairwise_jobs(
    tasks: Sequence[PairTask],
    *,
    verdict_format: VerdictFormat = "mt_bench",
    both_orders: bool = True,
) -> list[Job]:
    """Chat jobs for pairwise judgments: order 1 shows x as A, order 2 shows y as A."""
    jobs = []
    for task in tasks:
        orders = [(1, task.answer_x, task.answer_y)]
        if both_orders:
            orders.append((2, task.answer_y, task.answer_x))
        for order, first, second in orders:
            key = _pair_key(task, order)
            messages = build_pairwise_messages(
                task.question, first, second, verdict_format=verdict_format,
                reference=task.reference,
            )  # fmt: skip
            jobs.append(
                Job(
                    key, ChatRequest(messages=messages), _pair_sim(task, order, key, verdict_format)
                )
            )
    return jobs


def _pair_key(task: PairTask, order: int) -> str:
    return f"pair:{task.pair_id}:{task.model_x}|{task.model_y}#{order}"


def _pair_sim(task: PairTask, order: int, key: str, style: VerdictFormat) -> SimTask | None:
    if task.quality_x is None or task.quality_y is None:
        return None
    qa, qb = (task.quality_x, task.quality_y) if order == 1 else (task.quality_y, task.quality_x)
    la, lb = (len(task.answer_x), len(task.answer_y))
    if order == 2:
        la, lb = lb, la
    respond = partial(
        pair_reply, quality_a=qa, quality_b=qb, len_a=max(la, 1), len_b=max(lb, 1), style=style
    )
    return SimTask(respond, key, {"qa": qa, "qb": qb, "la": la, "lb": lb, "style": style})


def judge_pairs(
    run: Run,
    judge: ModelSpec,
    tasks: Sequence[PairTask],
    *,
    verdict_format: VerdictFormat = "mt_bench",
    both_orders: bool = True,
    policy: InconsistentPolicy = "tie",
    store: str = "judgments",
) -> pd.DataFrame:
    """Ask ``judge`` to compare every pair (both orders by default) and resolve the orders.

    Args:
        run: the open :class:`evalbench.runs.Run` (its ``ask`` caches and checkpoints).
        judge: the judge model.
        tasks: the pairs to compare.
        verdict_format: ``mt_bench`` or ``arena_hard`` labels.
        both_orders: also ask with the answers swapped (needed for position consistency).
        policy: what an inconsistent pair becomes (:func:`combine_orders`).
        store: the run's response store (``records/<store>.jsonl``).

    Returns:
        One row per pair: ``judge, pair_id, model_x, model_y, len_x, len_y, label_1,
        label_2`` (position verdicts), ``first, second`` (model-level: x/y/tie),
        ``consistent, final, outcome, policy, strength_1, strength_2, error``. A failed
        call or an unparseable verdict makes the pair ``unscored`` (``final`` is ``None``).
    """
    jobs = pairwise_jobs(tasks, verdict_format=verdict_format, both_orders=both_orders)
    answers = run.ask(judge, jobs, store=store, desc=f"judge {judge.name} (pairwise)")
    rows = []
    for task in tasks:
        one = _verdict_from_answer(answers[_pair_key(task, 1)])
        two = _verdict_from_answer(answers[_pair_key(task, 2)]) if both_orders else None
        rows.append(_pair_row(judge.name, task, one, two, policy, answers))
    return pd.DataFrame(rows)


def _verdict_from_answer(answer: Any) -> PairwiseVerdict:
    if answer.error is not None:
        return PairwiseVerdict(status="unscored", unscored_reason=f"call failed: {answer.error}")
    return parse_pairwise_output(answer.text)


def _pair_row(
    judge: str,
    task: PairTask,
    one: PairwiseVerdict,
    two: PairwiseVerdict | None,
    policy: InconsistentPolicy,
    answers: Mapping[str, Any],
) -> dict[str, Any]:
    if two is None:
        first = position_to_model(one, "A")
        resolution = OrderResolution(
            first=first, second=None, consistent=None, final=first,
            outcome="unscored" if first is None else "consistent", policy=policy,
        )  # fmt: skip
    else:
        resolution = resolve_order(one, two, policy=policy)
    errors = [answers[_pair_key(task, o)].error for o in ((1, 2) if two else (1,))]
    reasons = [v.unscored_reason for v in (one, two) if v is not None and v.unscored_reason]
    return {
        "judge": judge,
        "pair_id": task.pair_id,
        "model_x": task.model_x,
        "model_y": task.model_y,
        "len_x": len(task.answer_x),
        "len_y": len(task.answer_y),
        "label_1": one.label,
        "label_2": two.label if two else None,
        "strength_1": one.strength,
        "strength_2": two.strength if two else None,
        **resolution.model_dump(),
        "unscored_reason": "; ".join(reasons) or None,
        "error": "; ".join(e for e in errors if e) or None,
    }
