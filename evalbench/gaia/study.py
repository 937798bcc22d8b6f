"""The GAIA study (``study: gaia``): level-wise accuracy of chat models and agents.

:func:`run` loads the items, asks every system every item (resumable: chat models through
``run.ask``, agents through :func:`evalbench.agents.run_agents`), scores the answers with the
official scorer, writes ``records/gaia.jsonl`` (:class:`~.records.ScoredRecord`), summarizes,
compares two systems item by item and writes the leaderboard submission.
"""

from __future__ import annotations

from collections import Counter
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
from evalbench.judge.matching import parse_match
from evalbench.models import ChatRequest, Job, ModelSpec, SimTask, token_cost
from evalbench.records import ResponseRecord
from evalbench.runs import Run
from evalbench.stats import PairedComparison
from evalbench.studies import Study
from evalbench.tiers import apply_tier

from . import report
from .data import GaiaItem, export_submission, load
from .equivalence import equivalent
from .metrics import (
    AgentSummary,
    agent_summary,
    compare_systems,
    measured_systems,
    scorer_comparison,
    semantic_summary,
    summarize,
)
from .records import GaiaParams, GaiaResult, GaiaSystem, ScoredRecord, SemanticJudge
from .scoring import (
    build_messages,
    score,
    semantic_fields,
    semantic_judgeable,
    semantic_messages,
    with_semantic,
)
from .sim import plausible_wrong, semantic_reply, sim_answer


def load_study_items(params: GaiaParams) -> list[GaiaItem]:
    """The items of a study: its dataset, levels, tier (a seeded stratified subsample by
    level, :mod:`evalbench.tiers`) and per-level limit."""
    items = load(params.dataset, levels=params.levels, split=params.split, revision=params.revision)
    items = apply_tier(items, params, item_id=lambda it: it.task_id, stratum=lambda it: it.level)
    if params.limit_per_level is None:
        return items
    seen: Counter[int] = Counter()
    kept = []
    for item in items:
        seen[item.level] += 1
        if seen[item.level] <= params.limit_per_level:
            kept.append(item)
    return kept


def answer_jobs(
    items: Sequence[GaiaItem], params: GaiaParams, *, variant_rate: float = 0.0
) -> list[Job]:
    """One chat job per (item, attempt); attempts differ by their request seed
    (``variant_rate``: a simulated system's ``sim_variant_rate``)."""
    jobs = []
    for item in items:
        messages = build_messages(item, attachment_chars=params.attachment_chars)
        truth: dict[str, Any] = {"expected": item.final_answer, "level": item.level}
        if variant_rate:  # only then, so the cache keys of every other system stay the same
            truth |= {"variant_rate": variant_rate, "question": item.question}
        respond = partial(sim_answer, expected=item.final_answer, level=item.level,
                          question=item.question, variant_rate=variant_rate)  # fmt: skip
        for attempt in range(params.attempts):
            key = f"{item.task_id}#{attempt}"
            request = ChatRequest(messages=messages, seed=attempt if attempt else None)
            jobs.append(Job(key, request, SimTask(respond, key, truth)))
    return jobs


def ask_system(
    run: Run[GaiaParams], spec: GaiaSystem, jobs: Sequence[Job], items: Sequence[GaiaItem]
) -> list[dict[str, Any]]:
    """One system's predictions for every job, as :func:`~.scoring.score` takes them: a chat
    model through ``run.ask``, an agent through :func:`agent_predictions` (both resumable)."""
    if spec.is_agent:
        return agent_predictions(run, spec, items, run.params.attempts)
    if spec.sim_variant_rate:
        jobs = answer_jobs(items, run.params, variant_rate=spec.sim_variant_rate)
    answers = run.ask(spec, jobs, desc=f"GAIA {spec.name}")
    return [_prediction(spec, job.key, answers[job.key]) for job in jobs]


def agent_tasks(spec: SystemSpec, items: Sequence[GaiaItem], attempts: int) -> list[TaskInput]:
    """One agent task per (item, attempt): the question, the attachment, the limits."""
    return [
        TaskInput(
            task=AgentTask(
                id=item.task_id,
                question=item.question,
                limits=spec.limits,
                metadata={"level": item.level, "attempt": attempt},
            ),
            files={item.file_name: item.attachment} if item.attachment else {},
            attempt=attempt,
            level=item.level,
            truth=item.final_answer,
        )
        for item in items
        for attempt in range(attempts)
    ]


def agent_predictions(
    run: Run[GaiaParams], spec: SystemSpec, items: Sequence[GaiaItem], attempts: int
) -> list[dict[str, Any]]:
    """Run an agent on every task (resumable) and return its prediction rows."""
    backend = backend_for(run, spec, wrong_answer=plausible_wrong)
    tasks = agent_tasks(spec, items, attempts)
    done = run_agents(run, spec, tasks, backend=backend)
    return [_agent_prediction(spec, done[task.key]) for task in tasks]


def _agent_prediction(spec: SystemSpec, record: AgentRunRecord) -> dict[str, Any]:
    return {
        "system": spec.name,
        "task_id": record.task_id,
        "attempt": record.attempt,
        "output": record.answer,
        "final": True,
        "error": record.error,
        "state": record.state,
        "steps": record.steps,
        "tool_calls": record.tool_calls,
        "prompt_tokens": record.prompt_tokens,
        "completion_tokens": record.completion_tokens,
        "cost_usd": record.cost_usd,
        "wall_s": record.wall_s,
    }


def run_study(run: Run[GaiaParams], items: Sequence[GaiaItem]) -> pd.DataFrame:
    """Ask every system every item (resumable), score, and write ``records/gaia.jsonl``;
    returns the scored records (:func:`~.scoring.score`, with the usage columns)."""
    params = run.params
    jobs = answer_jobs(items, params)
    predictions = [row for spec in params.systems for row in ask_system(run, spec, jobs, items)]
    records = score(items, predictions, with_lenient=params.lenient)
    if params.semantic_judge is not None:
        records = judge_semantic(run, params.semantic_judge, items, records)
    run.write_records("gaia", records)
    return records


def judge_semantic(
    run: Run[GaiaParams], judge: SemanticJudge, items: Sequence[GaiaItem], records: pd.DataFrame
) -> pd.DataFrame:
    """Ask the semantic judge about every record with an answer (resumable, cached like every
    judge call: ``records/semantic.jsonl``) and add its verdicts
    (:func:`~.scoring.semantic_fields`); a failed call or an unreadable output is unscored."""
    by_id = {item.task_id: item for item in items}
    rows = records.to_dict("records")
    jobs = {i: _semantic_job(judge, by_id[str(row["task_id"])], row)
            for i, row in enumerate(rows) if semantic_judgeable(row)}  # fmt: skip
    replies = run.ask(judge, list(jobs.values()), store="semantic",
                      desc=f"semantic judge {judge.name}") if jobs else {}  # fmt: skip
    fields = []
    for i, row in enumerate(rows):
        reply = replies[jobs[i].key] if i in jobs else None
        failed = reply is not None and reply.error is not None
        verdict = parse_match(judge.prompt, reply.text) if reply and not failed else None
        truth = _truth(judge, by_id[str(row["task_id"])], row) if i in jobs else None
        error = reply.error if reply is not None else None
        fields.append(semantic_fields(row, judge.name, verdict, error=error, truth=truth))
    return with_semantic(records, fields)


def _semantic_job(judge: SemanticJudge, item: GaiaItem, row: dict[str, Any]) -> Job:
    key = f"{row['system']}|{item.task_id}#{row['attempt']}"
    answer = str(row["extracted_answer"])
    request = ChatRequest(messages=semantic_messages(judge.prompt, item, answer))
    respond = partial(semantic_reply, prompt=judge.prompt, answer=answer,
                      expected=str(item.final_answer), question=item.question)  # fmt: skip
    truth = {"expected": item.final_answer, "answer": answer, "question": item.question}
    return Job(key, request, SimTask(respond, key, truth))


def _truth(judge: SemanticJudge, item: GaiaItem, row: dict[str, Any]) -> bool | None:
    if not judge.simulated or item.final_answer is None:
        return None
    return equivalent(str(row["extracted_answer"]), item.final_answer, item.question)


def _prediction(spec: ModelSpec, key: str, answer: ResponseRecord) -> dict[str, Any]:
    task_id, _, attempt = key.rpartition("#")
    cost = None
    if answer.prompt_tokens is not None and not answer.cached:  # batch mode: the batch price
        cost = token_cost(spec, answer.prompt_tokens, answer.completion_tokens)
    return {
        "system": spec.name,
        "task_id": task_id,
        "attempt": int(attempt),
        "output": answer.text,
        "error": answer.error,
        "state": "error" if answer.error else "answered",
        "prompt_tokens": answer.prompt_tokens,
        "completion_tokens": answer.completion_tokens,
        "cost_usd": cost,
        # a failed call has no answer latency (its 0.0 was averaged into the usage table)
        "latency_s": None if answer.error else answer.latency_s,
    }


def _agents(
    run: Run[GaiaParams], records: pd.DataFrame, items: Sequence[GaiaItem]
) -> tuple[AgentSummary | None, tuple[dict[str, Any], ...]]:
    params = run.params
    names = {s.name for s in params.systems if s.is_agent}
    if not names:
        return None, ()
    runs = run.store("agent_runs", ("system", "key")).frame()
    steps = tuple(r for r in run.store("steps", ("system", "task_id", "attempt", "step")).rows()
                  if r["system"] in names)  # fmt: skip
    summary = agent_summary(
        runs[runs["system"].isin(names)], records, items, rng=run.rng("agents"),
        rounds=params.bootstrap_rounds, confidence=params.confidence_level,
    )  # fmt: skip
    return summary, steps


def run(run: Run[GaiaParams]) -> GaiaResult:
    """Load, ask, score and summarize a GAIA study; write its records and submission."""
    params = run.params
    with run.timed("load"):
        items = load_study_items(params)
    records = run_study(run, items)
    summary = summarize(
        records,
        rng=run.rng("summary"),
        rounds=params.bootstrap_rounds,
        confidence=params.confidence_level,
        ks=range(1, params.attempts + 1),
    )
    pair = params.comparison()
    system = params.submission_system or params.systems[0].name
    path = run.dir / "submission" / "gaia_submission.jsonl"
    agents, steps = _agents(run, records, items)
    semantic = semantic_summary(records, rng=run.rng("semantic"), rounds=params.bootstrap_rounds,
                                confidence=params.confidence_level)  # fmt: skip
    return GaiaResult(
        params=params,
        items=items,
        records=records,
        summary=summary,
        scorers=scorer_comparison(records),
        pair=pair,
        comparison=_paired(run, records, pair),
        submission=export_submission(records, path, system=system),
        submission_system=system,
        usage=run.recorded_usage(),
        simulated=run.simulated_names,
        agents=agents,
        steps=steps,
        semantic=semantic,
    )


def _paired(
    run: Run[GaiaParams], records: pd.DataFrame, pair: tuple[str, str] | None
) -> PairedComparison | None:
    if pair is None:
        return None
    rounds = run.params.bootstrap_rounds
    return compare_systems(records, *pair, rng=run.rng("paired"), rounds=rounds)


def counts(result: GaiaResult) -> dict[str, int]:
    """Items, records, answers without an extractable answer, and failed calls."""
    records = result.records
    return {
        "items": len(result.items),
        "records": len(records),
        "no_answer": int(records["no_answer"].sum()),
        "errors": int(records["error"].notna().sum()),
    }


STUDY = Study(
    kind="gaia",
    params=GaiaParams,
    run=run,
    notebook="gaia_levels.ipynb",
    records={
        "gaia": ScoredRecord,
        "responses": ResponseRecord,
        "agent_runs": AgentRunRecord,
        "steps": StepRecord,
        "semantic": ResponseRecord,
    },
    optional_records=frozenset({"responses", "agent_runs", "steps", "semantic"}),
    headlines=report.headlines,
    findings=report.findings,
    counts=counts,
    measured=lambda result: measured_systems(result.records),
)
