"""The BrowseComp study (``study: browsecomp``): the official BrowseComp or BrowseComp-ZH.

``run(run)`` decrypts the set in memory (tier stratified by topic), asks every system with the
official prompt (a chat model through ``run.ask``; an agent gets it as its task, its web tools
limited to ``allowed_hosts``), grades every response with the official grader prompt, parses
the verdict (unscored is a state) beside the reference behaviours, writes
``records/official.jsonl`` (ids, verdicts, confidences; no question or answer text) and
summarizes. Notebook: ``browsecomp.ipynb``.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from evalbench.agents import (
    AgentRunRecord,
    AgentTask,
    StepRecord,
    TaskInput,
    backend_for,
    run_agents,
)
from evalbench.agents.metrics import count_tools
from evalbench.agents.tools.web import web_scope
from evalbench.models import ChatRequest, Job, ModelSpec, SimTask
from evalbench.models.usage import answer_cost
from evalbench.records import Record, ResponseRecord
from evalbench.runs import Run
from evalbench.studies import Study
from evalbench.tiers import apply_tier

from . import metrics, report, sim
from .data import OfficialItem, load_official, topic_counts
from .records import BrowseCompParams, BrowseCompResult, BrowseCompSystem, Grader, OfficialRecord
from .scoring import (
    GRADE_SCHEMA,
    Style,
    agent_question,
    grader_messages,
    parse_grade,
    query_messages,
    reference_grade_sample,
    reference_grade_sample_pr93,
    reference_is_correct,
    zh_reference_confidence,
    zh_reference_fields,
    zh_reference_verdict,
)


def chat_rows(
    run: Run[BrowseCompParams], spec: BrowseCompSystem, style: Style, items: Sequence[OfficialItem]
) -> list[dict[str, Any]]:
    """A chat model answers every question with the official prompt (resumable)."""
    jobs = []
    for item in items:
        respond = partial(
            sim.official_answer,
            answer=item.answer,
            topic=item.topic,
            shift=spec.sim_confidence_shift,
        )
        request = ChatRequest(messages=query_messages(style, item.question))
        jobs.append(Job(item.id, request, SimTask(respond, item.id, item.answer)))
    answers = run.ask(spec, jobs, desc=f"official {spec.name}")
    return [_chat_row(spec, item.id, answers[item.id]) for item in items]


def _chat_row(spec: ModelSpec, key: str, answer: ResponseRecord) -> dict[str, Any]:
    return {
        "system": spec.name,
        "id": key,
        "state": "error" if answer.error else "answered",
        "response": answer.text,
        "error": answer.error,
        "steps": None,
        "search_calls": None,
        "pages_opened": None,
        "cost_usd": answer_cost(spec, answer),
    }


class _AgentTruth(NamedTuple):
    """A simulated agent's right response (``str``) and the answer inside it."""

    answer: str
    response: str

    def __str__(self) -> str:
        return self.response


def agent_rows(
    run: Run[BrowseCompParams], spec: BrowseCompSystem, style: Style, items: Sequence[OfficialItem]
) -> list[dict[str, Any]]:
    """An agent works on every question as a task, its web tools limited to the allowed
    hosts (resumable)."""
    tasks = []
    for item in items:
        rng = run.rng("official-agent", spec.name, item.id)
        truth = _AgentTruth(
            item.answer, sim.agent_response(item.answer, rng, spec.sim_confidence_shift, True)
        )
        task = AgentTask(
            id=item.id,
            question=agent_question(style, item.question),
            limits=spec.limits,
            metadata={"topic": item.topic},
        )
        tasks.append(TaskInput(task=task, files={}, level=item.topic, truth=truth))

    def wrong(truth: _AgentTruth, rng: np.random.Generator) -> str:
        return sim.agent_response(truth.answer, rng, spec.sim_confidence_shift, False)

    hosts = frozenset({"127.0.0.1", "localhost", "::1", *run.params.allowed_hosts})
    backend = backend_for(run, spec, wrong_answer=wrong)
    done = run_agents(run, spec, tasks, backend=_hosts_scoped(backend, hosts))
    return [_agent_row(spec, done[task_input.key]) for task_input in tasks]


def _hosts_scoped(backend: Any, hosts: frozenset[str]) -> Any:
    """``backend`` with the browsing tools limited to ``hosts`` (no local site)."""

    async def run_task(item: Any, recorder: Any, workdir: Path) -> Any:
        with web_scope(None, allowed_hosts=hosts):
            return await backend(item, recorder, workdir)

    if hasattr(backend, "aclose"):
        run_task.aclose = backend.aclose  # type: ignore[attr-defined]
    return run_task


def _agent_row(spec: BrowseCompSystem, record: AgentRunRecord) -> dict[str, Any]:
    searches, pages = count_tools(record.tool_counts)
    return {
        "system": spec.name,
        "id": record.task_id,
        "state": record.state,
        "response": record.answer,
        "error": record.error,
        "steps": record.steps,
        "search_calls": searches,
        "pages_opened": pages,
        "cost_usd": record.cost_usd,
    }


def grade_rows(
    run: Run[BrowseCompParams],
    grader: Grader,
    style: Style,
    items: dict[str, OfficialItem],
    rows: Sequence[dict[str, Any]],
) -> dict[str, ResponseRecord]:
    """Ask the grader about every response (resumable): ``system|id`` -> its record."""
    jobs = []
    for row in rows:
        if row["state"] != "answered" or not (row["response"] or "").strip():
            continue
        item, key = items[row["id"]], f"{row['system']}|{row['id']}"
        request = ChatRequest(
            messages=grader_messages(style, item.question, row["response"], item.answer),
            response_format=GRADE_SCHEMA if grader.structured else None,
        )
        respond = partial(sim.official_grader, answer=item.answer, response=row["response"])
        jobs.append(Job(key, request, SimTask(respond, key, item.answer)))
    if not jobs:
        return {}
    return run.ask(grader, jobs, store="grader", desc=f"grader {grader.name}")


def official_record(
    row: dict[str, Any], item: OfficialItem, graded: ResponseRecord | None, simulated: bool
) -> OfficialRecord:
    """One question's record: evalbench's verdict beside the reference behaviours."""
    text = graded.text if graded is not None and graded.error is None else None
    grade = parse_grade(text)
    status = "not answered"
    error = row["error"] or (graded.error if graded is not None else None)
    if row["state"] == "answered":
        if not (row["response"] or "").strip():
            status, error = "not answered", error or "empty response"
        else:
            status = "scored" if grade.verdict is not None else "unscored"
    _, _, zh_correct, zh_conf = zh_reference_fields(text or "")
    reference = reference_grade_sample(text or "")
    return OfficialRecord(
        system=row["system"],
        id=item.id,
        topic=item.topic,
        state=row["state"],
        status=status,
        correct=None if status != "scored" else grade.verdict == "yes",
        confidence=grade.confidence if status == "scored" else None,
        grade_note=grade.note if text is not None else None,
        reference_grade=reference,
        reference_correct=reference_is_correct(reference),
        pr93_correct=reference_grade_sample_pr93(text or "") == "yes",
        zh_verdict=zh_reference_verdict(zh_correct),
        zh_confidence=zh_reference_confidence(zh_conf),
        error=error,
        steps=row.get("steps"),
        search_calls=row.get("search_calls"),
        pages_opened=row.get("pages_opened"),
        cost_usd=row.get("cost_usd"),
        simulated=simulated,
    )


def run(run: Run[BrowseCompParams]) -> BrowseCompResult:
    """The whole study (see the module docstring).

    Args:
        run: the open :class:`evalbench.runs.Run` of a ``browsecomp`` study.
    """
    params = run.params
    style, items = load_official(params.dataset)
    items = apply_tier(items, params, item_id=lambda i: i.id, stratum=lambda i: i.topic)
    by_id = {i.id: i for i in items}
    rows = []
    for spec in params.systems:
        answer = agent_rows if spec.is_agent else chat_rows
        rows += answer(run, spec, style, items)
    graded = grade_rows(run, params.grader, style, by_id, rows)
    records = [
        official_record(
            r,
            by_id[r["id"]],
            graded.get(f"{r['system']}|{r['id']}"),
            r["system"] in run.simulated_names,
        )
        for r in rows
    ]
    run.write_records("official", [r.model_dump() for r in records])
    frame = pd.DataFrame([r.model_dump() for r in records])
    level = params.confidence_level
    return BrowseCompResult(
        params=params,
        style=style,
        topics=topic_counts(items),
        records=frame,
        accuracy=metrics.official_accuracy(frame, level),
        topic_accuracy=metrics.topic_accuracy(frame, level),
        calibration=metrics.calibration_table(frame, params.calibration_bin_size),
        reliability=metrics.reliability(frame, params.reliability_bins, level),
        effort=metrics.browsing_effort(
            frame, rng=run.rng("official"), rounds=params.bootstrap_rounds, level=level
        ),
        examples=_examples(records, rows, by_id, graded, params.examples),
        usage=run.recorded_usage(),
        simulated=run.simulated_names,
    )


def _examples(
    records: Sequence[OfficialRecord],
    rows: Sequence[dict[str, Any]],
    items: dict[str, OfficialItem],
    graded: dict[str, ResponseRecord],
    limit: int,
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for record, row in zip(records, rows, strict=True):
        if len(out) >= limit:
            break
        grade = graded.get(f"{record.system}|{record.id}")
        if record.status != "scored" or grade is None:
            continue
        item = items[record.id]
        out.append(
            {
                "system": record.system,
                "id": record.id,
                "topic": item.topic,
                "question": item.question,
                "correct_answer": item.answer,
                "response": row["response"],
                "grader": grade.text,
                "verdict": "correct" if record.correct else "wrong",
            }
        )
    return out


def counts(result: BrowseCompResult) -> dict[str, int]:
    """Questions, records and their non-result states, for the manifest."""
    rec = result.records
    return {
        "questions": sum(result.topics.values()),
        "records": len(rec),
        "unscored": int((rec["status"] == "unscored").sum()),
        "not_answered": int((rec["status"] == "not answered").sum()),
    }


_RECORDS: dict[str, type[Record]] = {
    "official": OfficialRecord,
    "responses": ResponseRecord,
    "grader": ResponseRecord,
    "agent_runs": AgentRunRecord,
    "steps": StepRecord,
}

STUDY = Study(
    kind="browsecomp",
    params=BrowseCompParams,
    run=run,
    notebook="browsecomp.ipynb",
    records=_RECORDS,
    optional_records=frozenset({"responses", "grader", "agent_runs", "steps"}),
    headlines=report.headlines,
    findings=report.findings,
    counts=counts,
    measured=lambda result: metrics.measured_systems(result.records),
    notes=report.notes,
)
