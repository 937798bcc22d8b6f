"""The expert-grading study (``study: hle_grading``): HLE-style six-dimension grading of
research answers by category × difficulty, against a human baseline.

``run(run)`` loads the expert set (tiered by category × difficulty), asks every system for
its answer to each question (chat models through ``run.ask``, resumable; agents as tasks),
asks the ``hle`` rubric judge about the set's own answers and the systems' (an unreadable
reply or a failed call is unscored), writes ``records/grades.jsonl`` and summarizes
(:mod:`.metrics`) into an :class:`~.records.HleGradingResult`, which ``hle_grading.ipynb``
shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import pandas as pd

from evalbench.agents import (
    AgentRunRecord,
    AgentTask,
    StepRecord,
    SystemSpec,
    TaskInput,
    backend_for,
    run_agents,
)
from evalbench.models import ChatRequest, Job, SimTask, sim_rng
from evalbench.records import ResponseRecord
from evalbench.runs import Run
from evalbench.studies import Study
from evalbench.tiers import apply_tier

from . import report, sim
from .data import DIMENSIONS, ExpertItem, GradingDataError, load
from .metrics import measured_sources, summarize
from .records import DATASET_SOURCE, GradeRecord, HleGradingParams, HleGradingResult
from .scoring import ANSWER_PROMPT, answer_messages, judge_messages, judgment_fields

Answer = dict[str, Any]
"""One source's answer to one item: ``id, system, state`` (answered | error | missing),
``response, error`` and ``truth`` (the sim judge's true scores)."""
NEUTRAL_TRUTH = dict.fromkeys(DIMENSIONS, 50.0)
"""A sim judge's truth for an answer whose quality is unknown (a real system's)."""


def load_items(params: HleGradingParams) -> list[ExpertItem]:
    """The expert questions, tiered by category × difficulty.

    Raises:
        GradingDataError: a bad expert set, or nothing to grade (no answer in the set and no
            system).
    """
    items = apply_tier(load(params.dataset), params, item_id=lambda it: it.id,
                       stratum=lambda it: (it.category, it.difficulty))  # fmt: skip
    if not params.systems and not any(it.answer for it in items):
        raise GradingDataError(
            f"nothing to grade: the expert set {params.dataset} has no 'answer' and no "
            "system is listed under systems"
        )
    return items


def _key(item: ExpertItem) -> str:
    return f"expert:{item.id}"


# ---------------------------------------------------------------------------- answering


def answer_items(
    run: Run[HleGradingParams], params: HleGradingParams, items: Sequence[ExpertItem]
) -> list[Answer]:
    """Every system's answer to every item (:data:`Answer` rows, systems in params order)."""
    rows: list[Answer] = []
    for system in params.systems:
        if system.is_agent:
            rows += _agent_answers(run, system, items)
        else:
            rows += _chat_answers(run, system, items, params.seed)
    return rows


def _chat_answers(
    run: Run[HleGradingParams], system: SystemSpec, items: Sequence[ExpertItem], seed: int
) -> list[Answer]:
    seed = system.seed if system.seed is not None else seed
    jobs = [_job(system, item, seed) for item in items]
    replies = run.ask(system, jobs, desc=f"answers {system.name}")
    rows = []
    for item, job in zip(items, jobs, strict=True):
        reply = replies[job.key]
        failed = reply.error is not None or reply.text is None
        rows.append({"id": item.id, "system": system.name,
                     "state": "error" if failed else "answered", "response": reply.text,
                     "error": reply.error or ("no text in the reply" if failed else None),
                     "truth": job.sim.truth if job.sim else None})  # fmt: skip
    return rows


def _job(system: SystemSpec, item: ExpertItem, seed: int) -> Job:
    key = _key(item)
    request = ChatRequest(messages=answer_messages(item.question))
    if not system.simulated:
        return Job(key, request)
    rng = sim_rng(seed, system.name, f"latent:{key}")
    truth = sim.answer_truth(system.sim, item.category, item.difficulty, rng)
    return Job(key, request, SimTask(sim.research_reply, key, truth))


def _agent_answers(
    run: Run[HleGradingParams], system: SystemSpec, items: Sequence[ExpertItem]
) -> list[Answer]:
    """Each item is one task (the answering prompt, then the question); a task past a limit
    or without a final answer is a missing answer, with the reason."""
    tasks = [TaskInput(task=AgentTask(id=_key(item), question=f"{ANSWER_PROMPT}\n\n{item.question}",
                                      limits=system.limits, metadata={"category": item.category}),
                       files={}, level=item.category, truth=None) for item in items]  # fmt: skip
    done = run_agents(run, system, tasks, backend=backend_for(run, system))
    return [_agent_answer(system, item, done[f"{_key(item)}#0"]) for item in items]


def _agent_answer(system: SystemSpec, item: ExpertItem, record: AgentRunRecord) -> Answer:
    state = {"answered": "answered", "error": "error"}.get(record.state, "missing")
    if state == "answered" and not record.answer:
        state = "missing"
    detail = record.error or (f"{record.state}: {record.detail}" if state == "missing" else None)
    response = record.answer if state == "answered" else None
    return {"id": item.id, "system": system.name, "state": state, "response": response,
            "error": detail, "truth": None}  # fmt: skip


# ---------------------------------------------------------------------------- grading


def grade(
    run: Run[HleGradingParams],
    params: HleGradingParams,
    items: Sequence[ExpertItem],
    answers: Sequence[Answer],
) -> list[GradeRecord]:
    """Ask the rubric judge about the set's own answers, then each system's (resumable).

    The sim judge's truth is the human baseline where there is one (else
    :func:`~.sim.default_truth`) for the set's answers, and the simulated system's true
    scores for its answers.
    """
    graded = _to_grade(items, answers)
    jobs = {}
    for source, item, row in graded:
        if row["state"] == "answered":
            key = f"expert|{source}|{item.id}"
            request = ChatRequest(messages=judge_messages(item, row["response"]))
            respond = partial(sim.judge_reply, truth=row["truth"])
            jobs[(source, item.id)] = Job(key, request, SimTask(respond, key, row["truth"]))
    judge = params.judge
    replies = (
        run.ask(judge, list(jobs.values()), store="judgments", desc=f"judge {judge.name}")
        if jobs
        else {}
    )
    records = []
    for source, item, row in graded:
        job = jobs.get((source, item.id))
        records.append(_record(judge.name, source, item, row, replies[job.key] if job else None))
    return records


def _to_grade(
    items: Sequence[ExpertItem], answers: Sequence[Answer]
) -> list[tuple[str, ExpertItem, Answer]]:
    """``(source, item, answer)`` to grade: the set's own answers, then each system's."""
    graded: list[tuple[str, ExpertItem, Answer]] = []
    for item in items:
        if item.answer is not None:
            truth = item.human_scores or sim.default_truth(item.difficulty)
            row = {"state": "answered", "response": item.answer,
                   "truth": {d: truth[d] for d in DIMENSIONS}}  # fmt: skip
            graded.append((DATASET_SOURCE, item, row))
    by_id = {item.id: item for item in items}
    for answer in answers:
        row = {**answer, "truth": answer["truth"] or NEUTRAL_TRUTH}
        graded.append((answer["system"], by_id[answer["id"]], row))
    return graded


def _record(
    judge: str, source: str, item: ExpertItem, row: Answer, reply: ResponseRecord | None
) -> GradeRecord:
    human = {f"human_{d}": item.human(d) for d in (*DIMENSIONS, "overall")}
    human = {k: v for k, v in human.items() if v == v} if source == DATASET_SOURCE else {}
    base: dict[str, Any] = {"id": item.id, "source": source, "category": item.category,
                            "difficulty": item.difficulty, "answer": row.get("response"),
                            **human}  # fmt: skip
    if reply is None:
        return GradeRecord(**base, status="no_response", error=row.get("error"))
    return GradeRecord(**base, judge=judge, **judgment_fields(reply.text, reply.error))


def records_frame(records: Sequence[GradeRecord]) -> pd.DataFrame:
    """The records as a DataFrame: one row each, every declared column (also when empty)."""
    return pd.DataFrame([r.model_dump() for r in records], columns=list(GradeRecord.model_fields))


# ---------------------------------------------------------------------------- the study


def run(run: Run[HleGradingParams]) -> HleGradingResult:
    """Load, answer, grade and summarize an expert-grading study; write its records."""
    params = run.params
    with run.timed("load"):
        items = load_items(params)
    records = grade(run, params, items, answer_items(run, params, items))
    run.write_records("grades", records)
    frame = records_frame(records)
    summary = summarize(frame, tolerance=params.tolerance, rng=run.rng("expert"),
                        rounds=params.bootstrap_rounds, level=params.confidence_level)  # fmt: skip
    sources = list(dict.fromkeys(frame["source"]))
    return HleGradingResult(params, items, frame, summary, sources, run.recorded_usage(),
                            run.simulated_names)  # fmt: skip


def counts(result: HleGradingResult) -> dict[str, int]:
    """Questions, graded answers and their states."""
    states = result.records["status"].value_counts()
    return {
        "items": len(result.items),
        "answers": len(result.records),
        **{s: int(states.get(s, 0)) for s in ("scored", "unscored", "no_response")},
    }


STUDY = Study(
    kind="hle_grading",
    params=HleGradingParams,
    run=run,
    notebook="hle_grading.ipynb",
    records={
        "grades": GradeRecord,
        "responses": ResponseRecord,
        "judgments": ResponseRecord,
        "agent_runs": AgentRunRecord,
        "steps": StepRecord,
    },
    headlines=report.headlines,
    findings=report.findings,
    counts=counts,
    measured=lambda result: measured_sources(result.records),
    notes=report.notes,
    optional_records=frozenset({"responses", "judgments", "agent_runs", "steps"}),
)
