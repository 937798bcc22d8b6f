"""The browse-suite study (``study: browse_suite``): browsing agents on evalbench's offline web.

``run(run)`` loads the tasks (levels, tier stratified by level), starts the local web
(:class:`~.site.LocalWeb`, a free port on 127.0.0.1, stopped at the end), checks that every
start page serves, runs every system on every task (agents through
:func:`evalbench.agents.run_agents` under each task's ``max_steps`` and ``max_time_seconds``,
each task in a fresh web session; a chat model answers each task in one ``run.ask`` call,
without browsing: the no-browsing baseline), scores the typed criteria (the judge grades
``judge`` criteria), writes ``records/suite.jsonl`` and ``records/suite_criteria.jsonl`` and
summarizes by level and task type. Notebook: ``browse_suite.ipynb``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd

from evalbench.agents import (
    AgentLimits,
    AgentRunRecord,
    AgentTask,
    StepRecord,
    SystemSpec,
    TaskInput,
    backend_for,
    run_agents,
)
from evalbench.agents.metrics import count_tools
from evalbench.models import ChatRequest, Job, ModelSpec, SimTask
from evalbench.models.usage import answer_cost
from evalbench.records import Record, ResponseRecord
from evalbench.runs import Run
from evalbench.studies import Study
from evalbench.tiers import apply_tier

from . import metrics, report, sim
from . import scoring as crit
from .data import DEMO_DIR, SuiteTask, load_suite
from .records import (
    BrowseSuiteParams,
    BrowseSuiteResult,
    CriteriaJudge,
    CriterionRecord,
    SuiteRecord,
)
from .site import LocalWeb, scoped, session_for, site_check


def start_url(web: LocalWeb, spec: SystemSpec, task: SuiteTask, virtual: bool) -> str:
    """The URL an agent starts at (virtual host for evalbench's agents, else the real one)."""
    return web.root_for(session_for(spec.name, task.id), virtual) + task.start


def agent_rows(
    run: Run[BrowseSuiteParams], spec: SystemSpec, tasks: Sequence[SuiteTask], web: LocalWeb
) -> list[dict[str, Any]]:
    """Run an agent on every task (resumable); one answer row per task."""
    virtual = spec.provider in ("agent", "sim")
    items = [
        TaskInput(
            task=AgentTask(
                id=t.id,
                question=t.prompt(start_url(web, spec, t, virtual)),
                limits=AgentLimits(
                    max_steps=t.max_steps,
                    max_time_s=t.max_time_seconds,
                    max_tokens=spec.limits.max_tokens,
                ),
                metadata={
                    "level": t.level,
                    "kind": t.kind,
                    "start_url": start_url(web, spec, t, virtual),
                },
            ),
            files={},
            level=t.level,
            truth=json.dumps(t.expected, ensure_ascii=False),
        )
        for t in tasks
    ]
    backend = backend_for(run, spec, wrong_answer=sim.suite_wrong_answer)
    done = run_agents(run, spec, items, backend=scoped(backend, web, spec.name, virtual))
    return [_agent_row(spec, done[item.key]) for item in items]


def _agent_row(spec: SystemSpec, record: AgentRunRecord) -> dict[str, Any]:
    searches, pages = count_tools(record.tool_counts)
    return {
        "system": spec.name,
        "task_id": record.task_id,
        "state": record.state,
        "answer": record.answer,
        "error": record.error,
        "detail": record.detail,
        "steps": record.steps,
        "tool_calls": record.tool_calls,
        "search_calls": searches,
        "pages_opened": pages,
        "wall_s": record.wall_s,
        "prompt_tokens": record.prompt_tokens,
        "completion_tokens": record.completion_tokens,
        "cost_usd": record.cost_usd,
    }


def chat_rows(
    run: Run[BrowseSuiteParams], spec: SystemSpec, tasks: Sequence[SuiteTask], web: LocalWeb
) -> list[dict[str, Any]]:
    """A chat model (no browsing) answers every task in one call (resumable)."""
    jobs = []
    for t in tasks:
        truth = json.dumps(t.expected, ensure_ascii=False)
        prompt = t.prompt(start_url(web, spec, t, virtual=True))
        respond = partial(sim.suite_chat_answer, truth=truth, level=t.level)
        jobs.append(
            Job(
                t.id,
                ChatRequest(messages=[{"role": "user", "content": prompt}]),
                SimTask(respond, t.id, truth),
            )
        )
    answers = run.ask(spec, jobs, desc=f"suite {spec.name}")
    return [_chat_row(spec, t.id, answers[t.id]) for t in tasks]


def _chat_row(spec: ModelSpec, key: str, answer: ResponseRecord) -> dict[str, Any]:
    return {
        "system": spec.name,
        "task_id": key,
        "state": "error" if answer.error else "answered",
        "answer": answer.text,
        "error": answer.error,
        "detail": None,
        "steps": 0,
        "tool_calls": 0,
        "search_calls": 0,
        "pages_opened": 0,
        "wall_s": answer.latency_s,
        "prompt_tokens": answer.prompt_tokens,
        "completion_tokens": answer.completion_tokens,
        "cost_usd": answer_cost(spec, answer),
    }


def judge_criteria(
    run: Run[BrowseSuiteParams],
    judge: CriteriaJudge,
    tasks: dict[str, SuiteTask],
    rows: Sequence[dict[str, Any]],
) -> dict[str, float | None]:
    """Ask the judge for every ``judge`` criterion of every answered task (resumable);
    ``system|task|index`` -> its score in [0, 1] (``None``: unscored)."""
    jobs = []
    for row in rows:
        if row["state"] != "answered":
            continue
        task, fields = tasks[row["task_id"]], crit.parse_answer(row["answer"])
        for index, c in enumerate(task.criteria):
            if isinstance(c, crit.JudgeCriterion) and crit.needs_judge(c, row["answer"], fields):
                text = str(crit.field_value(row["answer"], fields, c.field))
                jobs.append(_judge_job(judge, f"{row['system']}|{task.id}|{index}", task, c, text))
    if not jobs:
        return {}
    answers = run.ask(judge, jobs, store="judge", desc=f"criteria judge {judge.name}")
    return {
        key: (None if a.error else crit.parse_judge_score(a.text)) for key, a in answers.items()
    }


def _judge_job(
    judge: CriteriaJudge, key: str, task: SuiteTask, c: crit.JudgeCriterion, text: str
) -> Job:
    request = ChatRequest(
        messages=crit.judge_messages(task.question, c, text),
        response_format=crit.JUDGE_SCHEMA if judge.structured else None,
    )
    respond = partial(sim.suite_judge, reference=c.reference, text=text)
    return Job(key, request, SimTask(respond, key, c.reference))


def score_rows(
    rows: Sequence[dict[str, Any]],
    tasks: dict[str, SuiteTask],
    judged: dict[str, float | None],
    threshold: float,
    simulated: frozenset[str],
) -> tuple[list[SuiteRecord], list[CriterionRecord]]:
    """Criteria scores and task records (see :mod:`.scoring` for the semantics)."""
    records, details = [], []
    for row in rows:
        task = tasks[row["task_id"]]
        status, score = "not answered", None
        if row["state"] == "answered":
            scored, found = _criteria(row, task, judged)
            details += found
            score = crit.task_score(scored, [c.weight for c in task.criteria])
            status = "unscored" if score is None else "scored"
        success = (
            None if status == "unscored" else bool(score is not None and score >= threshold - 1e-9)
        )
        records.append(
            SuiteRecord(
                **row,
                level=task.level,
                kind=task.kind,
                status=status,
                score=score,
                success=success,
                simulated=row["system"] in simulated,
            )
        )
    return records, details


def _criteria(
    row: dict[str, Any], task: SuiteTask, judged: dict[str, float | None]
) -> tuple[list[crit.Scored], list[CriterionRecord]]:
    """Every criterion of one answered task: its score and its record."""
    fields = crit.parse_answer(row["answer"])
    scored, details = [], []
    for index, c in enumerate(task.criteria):
        key = f"{row['system']}|{task.id}|{index}"
        result = crit.score_criterion(c, row["answer"], fields, judged.get(key))
        scored.append(result)
        details.append(
            CriterionRecord(
                system=row["system"],
                task_id=task.id,
                level=task.level,
                index=index,
                type=c.type,
                field=c.field,
                weight=c.weight,
                score=result.score,
                note=result.note,
            )
        )
    return scored, details


def _steps(run: Run[BrowseSuiteParams], names: set[str]) -> tuple[dict[str, Any], ...]:
    if not names:
        return ()
    store = run.store("steps", ("system", "task_id", "attempt", "step"))
    return tuple(r for r in store.rows() if r["system"] in names)


def _answers(
    run: Run[BrowseSuiteParams], params: BrowseSuiteParams, tasks: list[SuiteTask], root: Path
) -> tuple[pd.DataFrame, list[dict[str, Any]], int]:
    """Every system on every task on the local web: (site check, answer rows, requests)."""
    with LocalWeb(root / "site", root / "data") as web:
        site = pd.DataFrame(site_check(web, tasks))
        rows = []
        for spec in params.systems:
            answer = agent_rows if spec.is_agent else chat_rows
            rows += answer(run, spec, tasks, web)
        return site, rows, len(web.log)


def run(run: Run[BrowseSuiteParams]) -> BrowseSuiteResult:
    """The whole study (see the module docstring).

    Args:
        run: the open :class:`evalbench.runs.Run` of a ``browse_suite`` study.
    """
    params = run.params
    root = DEMO_DIR if params.site == "demo" else Path(params.site)
    tasks = [t for t in load_suite(params.tasks, root / "data") if t.level in params.levels]
    tasks = apply_tier(tasks, params, item_id=lambda t: t.id, stratum=lambda t: t.level)
    by_id = {t.id: t for t in tasks}
    site, rows, served = _answers(run, params, tasks, root)
    judged = judge_criteria(run, params.judge, by_id, rows)
    records, details = score_rows(
        rows, by_id, judged, params.success_threshold, run.simulated_names
    )
    run.write_records("suite", [r.model_dump() for r in records])
    run.write_records("suite_criteria", [d.model_dump() for d in details])
    frame = pd.DataFrame([r.model_dump() for r in records])
    criteria = pd.DataFrame(
        [d.model_dump() for d in details], columns=list(CriterionRecord.model_fields)
    )
    levels, kind_scores = metrics.success_tables(
        frame, rng=run.rng("suite"), rounds=params.bootstrap_rounds, level=params.confidence_level
    )
    return BrowseSuiteResult(
        params=params,
        tasks=tasks,
        site=site,
        records=frame,
        criteria=criteria,
        levels=levels,
        kinds=metrics.kind_states(frame),
        kind_scores=kind_scores,
        effort=metrics.effort_by_level(frame),
        criteria_types=metrics.criteria_table(criteria),
        steps=_steps(run, {s.name for s in params.systems if s.is_agent}),
        served=served,
        usage=run.recorded_usage(),
        simulated=run.simulated_names,
    )


def counts(result: BrowseSuiteResult) -> dict[str, int]:
    """Tasks, records and their non-result states, for the manifest."""
    rec = result.records
    return {
        "tasks": len(result.tasks),
        "records": len(rec),
        "timeouts": int((rec["state"] == "timeout").sum()),
        "errors": int((rec["state"] == "error").sum()),
        "unscored": int((rec["status"] == "unscored").sum()),
    }


_RECORDS: dict[str, type[Record]] = {
    "suite": SuiteRecord,
    "suite_criteria": CriterionRecord,
    "responses": ResponseRecord,
    "judge": ResponseRecord,
    "agent_runs": AgentRunRecord,
    "steps": StepRecord,
}

STUDY = Study(
    kind="browse_suite",
    params=BrowseSuiteParams,
    run=run,
    notebook="browse_suite.ipynb",
    records=_RECORDS,
    optional_records=frozenset({"responses", "judge", "agent_runs", "steps"}),
    headlines=report.headlines,
    findings=report.findings,
    counts=counts,
    measured=lambda result: metrics.measured_systems(result.records),
    notes=report.notes,
)
