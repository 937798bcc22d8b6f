"""The HLE study (``study: hle``): official exact-answer accuracy and calibration error.

``run(run)``:

1. loads the questions (:class:`~.records.HleParams`: dataset, revision, categories, the
   image switch, then the tier, stratified by category);
2. gets every system's answer to every question through :func:`answer_items` (chat models
   through ``run.ask``, resumable; agents as tasks; imported official predictions files);
3. asks the judge with the official judge prompt (structured output when
   ``judge.structured``), parses every output (unscored is its own state), writes
   ``records/hle.jsonl`` and the official-format files (``official/``);
4. summarizes (:mod:`.metrics`) into an :class:`~.records.HleResult`, which the notebook
   ``hle.ipynb`` shows.

HLE-style expert grading is its own study, ``hle_grading`` (:mod:`evalbench.hle_grading`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import JsonValue

from evalbench.agents import (
    AgentRunRecord,
    AgentTask,
    StepRecord,
    TaskInput,
    backend_for,
    run_agents,
)
from evalbench.models import ChatRequest, Job, SimTask, sim_rng
from evalbench.models.usage import answer_cost
from evalbench.records import ResponseRecord
from evalbench.runs import Run
from evalbench.studies import Study
from evalbench.tiers import apply_tier

from . import report, sim
from .data import (
    HleDataError,
    HleItem,
    Prediction,
    load,
    read_predictions,
    safe_name,
    split_images,
    write_predictions,
)
from .metrics import measured_systems, summarize
from .records import HleJudge, HleParams, HleRecord, HleResult, HleSystem, Status
from .scoring import (
    JUDGE_RESPONSE_FORMAT,
    SYSTEM_PROMPT,
    Judgment,
    build_messages,
    judge_messages,
    judge_response_entry,
    parse_judgment,
)

Answer = dict[str, Any]
"""One system's answer to one question: ``id, system, state`` (answered | error |
missing), ``response, error, prompt_tokens, completion_tokens, cost_usd, latency_s`` and,
for simulated systems, ``truth``."""


def load_study_items(params: HleParams) -> tuple[list[HleItem], int]:
    """The questions studied and how many image questions were excluded (before the tier)."""
    items = load(params.dataset, revision=params.revision, categories=params.categories)
    items, excluded = split_images(items, params.exclude_images)
    items = apply_tier(items, params, item_id=lambda it: it.id, stratum=lambda it: it.category)
    if not items:
        raise HleDataError("no question left (after the category filter and exclude_images)")
    return items, excluded


# ---------------------------------------------------------------------------- answering


def answer_items(run: Run[HleParams], params: HleParams, items: Sequence[HleItem]) -> list[Answer]:
    """Every system's answer to every question: the one place that asks systems.

    A chat model answers through ``run.ask`` (cached, checkpointed in
    ``records/responses.jsonl``), an agent as one task per question, and an imported
    predictions file is looked up by id; each gives :data:`Answer` rows.
    """
    rows: list[Answer] = []
    for system in params.systems:
        if system.provider == "predictions":
            rows += _imported(system, items)
        elif system.is_agent:
            rows += _agent_rows(run, system, items)
        else:
            rows += _asked(run, system, items, params.seed)
    return rows


def _agent_rows(run: Run[HleParams], system: HleSystem, items: Sequence[HleItem]) -> list[Answer]:
    """An agent answers each question as one task: the official response format followed by
    the question; its final answer is the response the judge reads. A task past a limit is a
    missing answer (counted wrong, with the reason)."""
    tasks = []
    for item in items:
        meta: dict[str, JsonValue] = {"category": item.category}
        if item.image:
            meta["image"] = item.image
        task = AgentTask(id=item.id, question=f"{SYSTEM_PROMPT}\n\n{item.question}",
                         limits=system.limits, metadata=meta)  # fmt: skip
        tasks.append(TaskInput(task=task, files={}, level=item.category, truth=item.answer))
    done = run_agents(run, system, tasks, backend=backend_for(run, system))
    return [_agent_row(system, item, done[f"{item.id}#0"]) for item in items]


def _agent_row(system: HleSystem, item: HleItem, record: AgentRunRecord) -> Answer:
    state = {"answered": "answered", "error": "error"}.get(record.state, "missing")
    if state == "answered" and not record.answer:
        state = "missing"
    detail = record.error or (f"{record.state}: {record.detail}" if state == "missing" else None)
    return {
        "id": item.id, "system": system.name, "state": state,
        "response": record.answer if state == "answered" else None, "error": detail,
        "prompt_tokens": record.prompt_tokens, "completion_tokens": record.completion_tokens,
        "cost_usd": record.cost_usd, "latency_s": record.wall_s,
    }  # fmt: skip


def _asked(
    run: Run[HleParams], system: HleSystem, items: Sequence[HleItem], seed: int
) -> list[Answer]:
    seed = system.seed if system.seed is not None else seed
    built = [_job(system, item, seed) for item in items]
    answers = run.ask(system, [job for job, _ in built], desc=f"HLE {system.name}")
    rows = []
    for item, (job, truth) in zip(items, built, strict=True):
        answer = answers[job.key]
        row = _answer_row(system, item, answer)
        if truth is not None:
            text = answer.text if answer.error is None else None
            row["truth"] = sim.response_truth(text, item.answer, truth["p_correct"])
        rows.append(row)
    return rows


def _job(system: HleSystem, item: HleItem, seed: int) -> tuple[Job, dict[str, Any] | None]:
    """The chat job of one question (with its simulation and hidden truth for ``sim``)."""
    request = ChatRequest(messages=build_messages(item.question, item.image, model=system.model))
    if not system.simulated:
        return Job(item.id, request), None
    rng = sim_rng(seed, system.name, f"latent:{item.id}")
    outcome = sim.draw_outcome(system.sim, system.sim_confidence, item.category, rng)
    text = item.answer
    if not outcome.correct:
        text = sim.wrong_answer(item.answer, item.answer_type, item.question, rng)
    respond = partial(sim.answer_reply, answer=text, stated=outcome.stated)
    truth = {"p_correct": outcome.p_correct, "answer": text, "stated": outcome.stated}
    return Job(item.id, request, SimTask(respond, item.id, truth)), truth


def _answer_row(system: HleSystem, item: HleItem, answer: ResponseRecord) -> Answer:
    failed = answer.error is not None or answer.text is None
    return {
        "id": item.id,
        "system": system.name,
        "state": "error" if failed else "answered",
        "response": answer.text,
        "error": answer.error or ("no text in the reply" if failed else None),
        "prompt_tokens": answer.prompt_tokens,
        "completion_tokens": answer.completion_tokens,
        "cost_usd": answer_cost(system, answer),
        "latency_s": None if answer.error else answer.latency_s,  # no answer: no latency
    }


def _imported(system: HleSystem, items: Sequence[HleItem]) -> list[Answer]:
    assert system.predictions is not None
    predictions = read_predictions(system.predictions)
    return [_imported_row(system, item, predictions.get(item.id)) for item in items]


def _imported_row(system: HleSystem, item: HleItem, found: Prediction | None) -> Answer:
    row: Answer = {"id": item.id, "system": system.name}
    if found is None:
        name = Path(system.predictions or "").name
        return row | {
            "state": "missing",
            "response": None,
            "error": f"missing_prediction: {item.id!r} is not in {name}",
        }
    usage = found.usage
    return row | {
        "state": "answered",
        "response": found.response,
        "error": None,
        "prompt_tokens": usage.get("prompt_tokens"),
        "completion_tokens": usage.get("completion_tokens"),
    }


# ---------------------------------------------------------------------------- judging


def judge_answers(
    run: Run[HleParams], params: HleParams, items: Sequence[HleItem], answers: Sequence[Answer]
) -> list[HleRecord]:
    """Ask the judge about every answer (official prompt; resumable) and build the records.

    A failed judge call or an unparseable output is ``unscored``; an item without an answer
    is ``no_response`` and is not sent to the judge (as the official script judges only the
    predictions it has).
    """
    judge = params.judge
    by_id = {item.id: item for item in items}
    jobs = {}
    for row in answers:
        if row["state"] == "answered":
            jobs[(row["system"], row["id"])] = _judge_job(judge, by_id[row["id"]], row)
    replies = (
        run.ask(judge, list(jobs.values()), store="judgments", desc=f"judge {judge.name}")
        if jobs
        else {}
    )
    records = []
    for row in answers:
        job = jobs.get((row["system"], row["id"]))
        reply = replies[job.key] if job is not None else None
        failed = reply is not None and reply.error is not None
        judgment = parse_judgment(reply.text) if reply is not None and not failed else None
        record = score_record(
            by_id[row["id"]],
            row,
            judge=judge.name,
            judgment=judgment,
            judge_error=reply.error if reply else None,
            judge_raw=reply.text if reply else None,
        )
        records.append(record)
    return records


def _judge_job(judge: HleJudge, item: HleItem, row: Answer) -> Job:
    key = f"{row['system']}|{item.id}"
    response = row["response"] or ""
    request = ChatRequest(
        messages=judge_messages(item.question, item.answer, response),
        response_format=JUDGE_RESPONSE_FORMAT if judge.structured else None,
    )
    respond = partial(sim.judge_reply, correct_answer=item.answer, response=response)
    return Job(key, request, SimTask(respond, key, {"answer": item.answer, "response": response}))


def score_record(
    item: HleItem,
    answer: Mapping[str, Any],
    *,
    judge: str | None,
    judgment: Judgment | None,
    judge_error: str | None = None,
    judge_raw: str | None = None,
) -> HleRecord:
    """The record of one (system, question): its :data:`Answer` row and the judge's parsed
    output (``judgment`` ``None``: no answer, or the judge call failed with ``judge_error``)."""
    if answer["state"] != "answered":
        status: Status = "no_response"
        fields: dict[str, Any] = {}
    elif judgment is None:
        status, fields = "unscored", {"unscored_reason": f"the judge call failed: {judge_error}"}
    else:
        status = judgment.status
        fields = judgment.model_dump(exclude={"status", "notes"})
    truth = answer.get("truth") or {}
    return HleRecord(
        id=item.id, system=answer["system"], category=item.category,
        raw_subject=item.raw_subject, answer_type=item.answer_type, has_image=item.has_image,
        correct_answer=item.answer, state=answer["state"], response=answer.get("response"),
        error=answer.get("error"), judge=judge if status != "no_response" else None,
        judge_error=judge_error, status=status, judge_raw=judge_raw, **fields,
        prompt_tokens=answer.get("prompt_tokens"),
        completion_tokens=answer.get("completion_tokens"), cost_usd=answer.get("cost_usd"),
        latency_s=answer.get("latency_s"), truth_correct=truth.get("correct"),
        truth_p_correct=truth.get("p_correct"), truth_stated=truth.get("stated"),
    )  # fmt: skip


def records_frame(records: Sequence[HleRecord]) -> pd.DataFrame:
    """The records as a DataFrame: one row each, every declared column (also when empty)."""
    return pd.DataFrame([r.model_dump() for r in records], columns=list(HleRecord.model_fields))


# ---------------------------------------------------------------------------- the study


def run(run: Run[HleParams]) -> HleResult:
    """Load, answer, judge and summarize an HLE study; write its records and official files."""
    params = run.params
    with run.timed("load"):
        items, excluded = load_study_items(params)
    answers = answer_items(run, params, items)
    records = judge_answers(run, params, items, answers)
    run.write_records("hle", records)
    frame = records_frame(records)
    summary = summarize(frame, level=params.confidence_level, beta=params.calibration_bin_size,
                        reliability_bins=params.reliability_bins)  # fmt: skip
    return HleResult(
        params=params,
        items=items,
        excluded_images=excluded,
        records=frame,
        summary=summary,
        official_files=export_official(run.dir / "official", params, records),
        usage=run.recorded_usage(),
        simulated=run.simulated_names,
        imported=[s.name for s in params.systems if s.provider == "predictions"],
    )


def export_official(folder: Path, params: HleParams, records: Sequence[HleRecord]) -> list[Path]:
    """Per system, ``hle_<name>.json`` (its answers) and ``judged_hle_<name>.json`` (with the
    official ``judge_response`` where the official script would have stored one), in the
    official tooling's format, so its ``run_judge_results.py`` metrics can be rerun on them."""
    paths = []
    models = {s.name: s.model or s.name for s in params.systems}
    for system in models:
        mine = [r for r in records if r.system == system and r.state == "answered"]
        answered = {
            r.id: {"model": models[system], "response": r.response, "usage": _usage(r)}
            for r in mine
        }
        judged = {}
        for r in mine:
            entry = judge_response_entry(_judgment_of(r), r.correct_answer)
            if entry is not None:
                judged[r.id] = {**answered[r.id], "judge_response": entry}
        name = safe_name(system)
        paths.append(write_predictions(folder / f"hle_{name}.json", answered))
        paths.append(write_predictions(folder / f"judged_hle_{name}.json", judged))
    return paths


def _usage(record: HleRecord) -> dict[str, Any]:
    p, c = record.prompt_tokens, record.completion_tokens
    if p is None and c is None:
        return {}
    return {"prompt_tokens": p, "completion_tokens": c, "total_tokens": (p or 0) + (c or 0)}


def _judgment_of(record: HleRecord) -> Judgment:
    if record.status != "scored":
        return Judgment(status="unscored")
    return Judgment(
        status="scored",
        correct=record.correct,
        extracted_final_answer=record.extracted_final_answer,
        reasoning=record.reasoning,
        confidence=record.confidence,
        confidence_official=record.confidence_official,
    )


def counts(result: HleResult) -> dict[str, int]:
    """Questions, excluded image questions, and records by state."""
    states = result.records["status"].value_counts()
    return {
        "items": len(result.items),
        "excluded_images": result.excluded_images,
        "records": len(result.records),
        **{s: int(states.get(s, 0)) for s in ("scored", "unscored", "no_response")},
    }


STUDY = Study(
    kind="hle",
    params=HleParams,
    run=run,
    notebook="hle.ipynb",
    records={
        "hle": HleRecord,
        "responses": ResponseRecord,
        "judgments": ResponseRecord,
        "agent_runs": AgentRunRecord,
        "steps": StepRecord,
    },
    headlines=report.headlines,
    findings=report.findings,
    counts=counts,
    measured=lambda result: measured_systems(result.records),
    notes=report.notes,
    optional_records=frozenset({"responses", "judgments", "agent_runs", "steps"}),
)
