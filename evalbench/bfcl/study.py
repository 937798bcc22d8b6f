"""The BFCL study (``study: bfcl``): result sets and live systems, decoded and checked.

``run(run)`` scores *result sets* (official result files: the registered public ones or a
local folder) on the studied categories they have, and asks *live systems* every Python item,
in prompt mode (the leaderboard's default system prompt, Python call syntax) or tools mode
(OpenAI ``tools``), and converses with them on the multi-turn items, through the response
cache (resumable). Live outputs are also written as official result files for
``bfcl evaluate``. It writes ``records/bfcl.jsonl`` (one :class:`~.records.VerdictRecord` per
system and item; ``records/steps.jsonl`` for conversations) and returns a
:class:`~.records.BfclResult` with every table the notebook ``bfcl_categories.ipynb`` shows.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from evalbench.agents import AgentConfigError, load_entrypoint
from evalbench.agents.backends import resolve_argv
from evalbench.agents.types import SystemSpec
from evalbench.models import ChatRequest, Job, ModelSpec, SimTask, sim_rng
from evalbench.models.client import run_sync
from evalbench.models.progress import STOP
from evalbench.records import ResponseRecord
from evalbench.runs import Run
from evalbench.settings import get_settings
from evalbench.studies import Study
from evalbench.tiers import apply_tier

from . import remote, report
from .conversation import MAX_STEPS, Conversation, Finished, Reply, ToolCallReply
from .data import (
    fetch_results,
    load,
    load_format_items,
    read_result_dir,
    registered_categories,
    result_file_counts,
    write_results,
)
from .format_sensitivity import Case, cases
from .format_sensitivity import messages as format_messages
from .memory import LIVE_MEMORY, converse_memory, prereq_row, write_snapshots
from .metrics import (
    failure_examples,
    injected_vs_detected,
    measured_systems,
    silent_tools,
    summarize,
)
from .multi_turn_metrics import DETAIL_COLUMNS
from .published import leaderboard_comparison, official_tables, published_extras, system_sources
from .records import (
    AgentConversationRecord,
    BfclParams,
    BfclResult,
    FormatVerdictRecord,
    MemoryPrereqRecord,
    ResultSet,
    TurnStepRecord,
    VerdictRecord,
)
from .schema import (
    CALL_FAILED,
    FORMAT_SENSITIVITY,
    PYTHON,
    AnyItem,
    Item,
    MemoryItem,
    MultiTurnItem,
    ResultLine,
)
from .scoring import (
    Scores,
    Verdict,
    request_parts,
    response_result,
    score,
    score_format_case,
    score_results,
    verdict_frame,
)
from .sim import (
    MemoryPlan,
    MultiTurnPlan,
    plan_memory,
    plan_mistake,
    plan_multi_turn,
    sim_format_respond,
    sim_memory_respond,
    sim_multi_turn_respond,
    sim_respond,
)


def load_study_items(params: BfclParams) -> list[AnyItem]:
    """The study's items: its categories, each cut to ``limit_per_category``, then the
    ``tier`` / ``sample`` subsample (seeded, nested, stratified by category)."""
    items = limit_items(load(params.categories, source=params.data), params.limit_per_category)
    return apply_tier(items, params, item_id=lambda it: it.id, stratum=lambda it: it.category)


def is_subset(params: BfclParams) -> bool:
    """Whether the study scores only some items of its categories (limit or tier)."""
    return (
        params.limit_per_category is not None or params.tier != "full" or params.sample is not None
    )


def limit_items(items: Iterable[AnyItem], limit: int | None) -> list[AnyItem]:
    """The first ``limit`` items of each category (all when ``limit`` is None)."""
    seen: dict[str, int] = {}
    kept = []
    for item in items:
        seen[item.category] = seen.get(item.category, 0) + 1
        if limit is None or seen[item.category] <= limit:
            kept.append(item)
    return kept


def build_request(item: Item, mode: str) -> ChatRequest:
    """The chat request for one item: prompt mode (docs in the system prompt, Python call
    syntax expected) or tools mode (OpenAI ``tools``; none when the item offers no function)."""
    messages, tools = request_parts(item, mode)
    return ChatRequest(messages=messages, tools=tools)


def answer_jobs(items: Sequence[Item], spec: ModelSpec, mode: str, *, seed: int) -> list[Job]:
    """One chat job per item (key = item id); simulated systems get their planned mistake.

    Args:
        items: the items to ask.
        spec: the live system.
        mode: ``prompt`` or ``tools``.
        seed: the study seed (a spec's own ``seed`` wins, as in the model client).
    """
    sim_seed = spec.seed if spec.seed is not None else seed
    jobs = []
    for item in items:
        request = build_request(item, mode)
        sim = None
        if spec.simulated:
            rng = sim_rng(sim_seed, spec.name, f"plan:{item.id}")
            mistake = plan_mistake(item, spec.sim, mode, rng)
            respond = partial(sim_respond, item=item, mode=mode, mistake=mistake)
            truth = {"mistake": mistake, "mode": mode, "answer": item.possible_answer}
            sim = SimTask(respond, item.id, truth)
        jobs.append(Job(item.id, request, sim))
    return jobs


def read_result_set(result_set: ResultSet, categories: Sequence[str]) -> list[ResultLine]:
    """The result lines of a result set for the study's ``categories``.

    Raises:
        BfclDataError: a malformed file (naming file and line), or a category the set must
            cover (``categories`` of the set) without a result file.
    """
    if result_set.categories is not None:
        wanted = [c for c in result_set.categories if c in categories]
        if result_set.model is not None:
            return fetch_results(result_set.model, wanted)
        return read_result_dir(str(result_set.folder), wanted)
    if result_set.model is not None:
        registered = registered_categories(result_set.model)
        return fetch_results(result_set.model, [c for c in categories if c in registered])
    return [line for line in read_result_dir(str(result_set.folder)) if line.category in categories]


def score_result_set(
    result_set: ResultSet, items: Sequence[AnyItem], known_ids: set[str] | None = None
) -> Scores:
    """Read and score one result set on ``items`` (the categories it has).

    Args:
        result_set: the set.
        items: the (possibly limited) study items.
        known_ids: every id of the loaded categories when ``items`` is a subset: results of
            known items outside the subset are skipped, unknown ids stay errors.
    """
    categories = tuple(dict.fromkeys(item.category for item in items))
    lines = read_result_set(result_set, categories)
    if known_ids is not None:
        wanted = {item.id for item in items}
        lines = [line for line in lines if line.id in wanted or line.id not in known_ids]
    scores = score(
        items,
        lines,
        system=result_set.name,
        style=result_set.decode_style,
        underscore_to_dot=result_set.underscore_to_dot,
        model_name=result_set.model or result_set.name,
    )
    return scores._replace(verdicts=scores.verdicts.assign(mode="results"))


def asked_model(spec: SystemSpec) -> ModelSpec:
    """The chat model a live system's requests go to: its own, or the reference agent's."""
    return spec.chat_spec() if spec.provider == "agent" else spec


def run_live_system(run: Run[BfclParams], spec: SystemSpec, items: Sequence[Item]) -> pd.DataFrame:
    """Ask one live system every item (resumable), write its official result files, score.

    Result files go to ``<run>/bfcl_results/<system>/<non_live|live>/`` (see
    :func:`write_results`). Items whose call failed are not written and score as
    :data:`CALL_FAILED`. The reference agent answers with its model in tools mode.
    """
    params = run.params
    mode = params.mode_of(spec.name)
    jobs = answer_jobs(items, asked_model(spec), mode, seed=params.seed)
    answers = run.ask(asked_model(spec), jobs, desc=f"BFCL {spec.name} ({mode})")
    lines = [
        _result_line(item, answers[item.id], mode) for item in items if not answers[item.id].error
    ]
    write_results(lines, run.dir / "bfcl_results", spec.name)
    scored = score_results(
        items,
        lines,
        system=spec.name,
        style="fc" if mode == "tools" else "prompt",
        underscore_to_dot=mode == "tools",
        allow_missing=True,
    )
    by_id = {row.id: Verdict(*row) for row in scored.itertuples(index=False)}
    injected = {job.key: job.sim.truth["mistake"] for job in jobs if job.sim is not None}
    rows = [
        (
            by_id.get(item.id) or _failed_verdict(spec.name, item, str(answers[item.id].error))
        )._replace(mode=mode, injected=injected.get(item.id))
        for item in items
    ]
    verdicts = verdict_frame(rows)
    _warn_silent_tools(verdicts)
    return verdicts


def _warn_silent_tools(verdicts: pd.DataFrame) -> None:
    """Say on stderr, at once, when no tools-mode answer called a function (the report
    says it too: :func:`~.report.key_result`)."""
    for name, answers in silent_tools(verdicts).items():
        print(f"evalbench: BFCL system {name!r} (tools mode): 0 of {answers} answers called a "
              "function; the endpoint may leave the tools out of the prompt (check its chat "
              "format and tool_choice) or the model cannot call them (try mode: prompt)",
              file=sys.stderr, flush=True)  # fmt: skip


def _result_line(item: Item, answer: ResponseRecord, mode: str) -> ResultLine:
    return ResultLine(
        item.id,
        item.category,
        response_result(answer, mode),
        answer.prompt_tokens,
        answer.completion_tokens,
        round(answer.latency_s, 4),
    )


def _failed_verdict(system: str, item: Item, error: str) -> Verdict:
    return Verdict(system, item.category, item.id, False, CALL_FAILED, error, None, None, [])


# --------------------------------------------------------------------------- format sensitivity


def load_format_cases(params: BfclParams) -> list[Case]:
    """The format-sensitivity cases when ``categories`` names ``format_sensitivity``: its
    items (each category cut to ``format_limit_per_category``, else ``limit_per_category``,
    then the tier subsample) in the 26 formats; else none. A subset keeps the official case
    ids (their index counts all 200 items × 26 formats), so ``bfcl evaluate --partial-eval``
    matches its result file."""
    if FORMAT_SENSITIVITY not in params.categories:
        return []
    every = load_format_items(source=params.data)
    limit = params.format_limit_per_category or params.limit_per_category
    chosen = apply_tier(limit_items(every, limit), params, item_id=lambda it: it.id,
                        stratum=lambda it: it.category)  # fmt: skip
    kept = {item.id for item in chosen}
    return [case for case in cases(every) if case.item.id in kept]


def run_formats(run: Run[BfclParams], cases_: Sequence[Case]) -> pd.DataFrame | None:
    """Ask every live system in prompt mode every case (store ``bfcl_format_sensitivity``,
    resumable), write its official result file, score; None without a case or a prompting
    system. Systems in tools mode and agents are not asked (the formats are system prompts of
    prompting models)."""
    prompting = [s for s in run.params.systems if run.params.mode_of(s.name) == "prompt"]
    if not cases_ or not prompting:
        return None
    frame = pd.concat([_ask_formats(run, spec, cases_) for spec in prompting], ignore_index=True)
    run.write_records("format_sensitivity", frame)
    return frame


def _ask_formats(run: Run[BfclParams], spec: SystemSpec, cases_: Sequence[Case]) -> pd.DataFrame:
    jobs = [_format_job(case, spec, run.params.seed) for case in cases_]
    answers = run.ask(spec, jobs, store="bfcl_format_sensitivity",
                      desc=f"BFCL {spec.name} (format sensitivity)")  # fmt: skip
    lines = [ResultLine(c.id, FORMAT_SENSITIVITY, answers[c.id].text or "",
                        answers[c.id].prompt_tokens, answers[c.id].completion_tokens,
                        round(answers[c.id].latency_s, 4))
             for c in cases_ if not answers[c.id].error]  # fmt: skip
    write_results(lines, run.dir / "bfcl_results", spec.name)
    rows = [_format_verdict(case, answers[case.id], spec.name) for case in cases_]
    injected = {job.key: job.sim.truth["mistake"] for job in jobs if job.sim is not None}
    return verdict_frame(rows).assign(
        injected=[injected.get(case.id) for case in cases_],
        config=[case.config for case in cases_],
        item_id=[case.item.id for case in cases_],
        item_category=[case.item.category for case in cases_],
    )


def _format_verdict(case: Case, answer: ResponseRecord, system: str) -> Verdict:
    if answer.error:
        verdict = Verdict(system, FORMAT_SENSITIVITY, case.id, False, CALL_FAILED,
                          str(answer.error), None, None, [])  # fmt: skip
    else:
        verdict = score_format_case(case, answer.text or "", system=system)
    return verdict._replace(mode="prompt", latency=answer.latency_s,
                            input_token_count=answer.prompt_tokens,
                            output_token_count=answer.completion_tokens)  # fmt: skip


def _format_job(case: Case, spec: SystemSpec, seed: int) -> Job:
    sim = None
    if spec.simulated:
        rng = sim_rng(spec.seed if spec.seed is not None else seed, spec.name, f"plan:{case.id}")
        mistake = plan_mistake(case.item, spec.sim, "prompt", rng)
        respond = partial(sim_format_respond, item=case.item, config=case.config,
                          mistake=mistake)  # fmt: skip
        sim = SimTask(respond, case.id, {"mistake": mistake, "config": case.config})
    return Job(case.id, ChatRequest(messages=format_messages(case)), sim)


# --------------------------------------------------------------------------- live multi-turn


class LiveMultiTurn(NamedTuple):
    """A live system's multi-turn conversations, scored."""

    verdicts: pd.DataFrame
    details: pd.DataFrame
    steps: list[dict[str, Any]]
    """``records/steps.jsonl`` rows (:class:`~.records.TurnStepRecord`)."""
    prereqs: tuple[dict[str, Any], ...] = ()
    """Memory: the prerequisite conversations held (:class:`~.records.MemoryPrereqRecord`)."""


def run_live_multi_turn(
    run: Run[BfclParams], spec: SystemSpec, items: Sequence[MultiTurnItem]
) -> LiveMultiTurn:
    """Converse with one live system on every multi-turn item, turn by turn; write its
    official result files; score them like result files.

    Chat models and the reference agent: all conversations advance together, each round
    asking the next step of every conversation still going (one batch through the response
    cache, so a rerun replays the stored answers and resumes where it stopped); the
    reference agent converses in tools mode with its ``limits.max_steps`` steps per turn and
    its ``limits.max_tokens`` per conversation. A user's Python or command agent plays each
    turn itself (:mod:`~.python_agents`, :mod:`~.command_agents`). A conversation that fails
    for good scores :data:`CALL_FAILED` and is left out of the result files.
    """
    if spec.provider in ("python", "command"):
        return _score_talks(run, spec, run_user_agent(run, spec, items), {})
    plans = _sim_plans(spec, items, run.params.seed)
    talks = _chat_conversations(run, spec, items, partial(_multi_turn_sim, plans))
    injected = {k: f"{p.mistake}@turn{p.turn}" if p.turn is not None else p.mistake
                for k, p in plans.items()}  # fmt: skip
    return _score_talks(run, spec, [talk.finished() for talk in talks], injected)


def run_user_agent(
    run: Run[BfclParams], spec: SystemSpec, items: Sequence[MultiTurnItem]
) -> list[Finished]:
    """Converse with a user's Python or command agent on every item not done yet (each
    conversation is appended to ``records/agent_conversations.jsonl`` as it ends; a rerun
    keeps those that did not fail and plays the others again). Each conversation is played
    here or, with the Ray executor, on a worker of the cluster (:mod:`~.remote`). Returns
    every item's conversation, in order."""
    store = run.store("agent_conversations", ("system", "id"))
    ids = {item.id for item in items}
    store.drop_where(lambda r: r["system"] == spec.name and r["id"] in ids and r["error"])
    done = {r["id"] for r in store.rows() if r["system"] == spec.name}
    todo = [item for item in items if item.id not in done]

    def record(talk: Finished) -> None:
        store.append(AgentConversationRecord(system=spec.name, id=talk.item.id,
                     result=talk.result, events=talk.events, error=talk.error,
                     state=talk.state))  # fmt: skip

    if todo:
        play = remote.player(run.executor, spec, user_agent(spec), STOP)
        run_sync(remote.play_all(play, spec, todo, record, STOP))
    rows = {r["id"]: r for r in store.rows() if r["system"] == spec.name}
    return [Finished(item, rows[item.id]["result"], rows[item.id]["events"],
                     rows[item.id]["error"], state=rows[item.id].get("state"))
            for item in items]  # fmt: skip


def user_agent(spec: SystemSpec) -> remote.Agent:
    """A command agent's ``argv`` (:func:`command_argv`) or a Python agent's function.

    Raises:
        AgentConfigError: its program is not found, or its entrypoint does not import.
    """
    if spec.provider == "command":
        return command_argv(spec)
    return load_entrypoint(spec.entrypoint or "")


def command_argv(spec: SystemSpec) -> list[str]:
    """A command agent's ``argv`` with paths from the project root (as for other studies).

    Raises:
        AgentConfigError: its program is not found.
    """
    argv = resolve_argv(list(spec.argv or []), get_settings().project_root)
    if shutil.which(argv[0]) is None and not Path(argv[0]).is_file():
        raise AgentConfigError(f"system {spec.name!r}: program {argv[0]!r} not found")
    return argv


SimOf = Callable[[Conversation], SimTask]
"""How a simulated system answers a conversation's next request."""


def _chat_conversations(
    run: Run[BfclParams], spec: SystemSpec, items: Sequence[MultiTurnItem], sim_of: SimOf
) -> list[Conversation]:
    mode, asked = run.params.mode_of(spec.name), asked_model(spec)
    agent = spec.provider == "agent"
    steps = spec.limits.max_steps if agent else MAX_STEPS
    budget = spec.limits.max_tokens if agent else None
    talks = [Conversation(item, mode, model_name=spec.name, max_steps=steps) for item in items]
    turns = sum(len(item.question) for item in items)
    for _ in range(turns * (steps + 2)):  # a bound, never reached
        going = [talk for talk in talks if not talk.done]
        if not going:
            break
        jobs = {talk.key: (talk, _turn_job(talk, asked, sim_of)) for talk in going}
        answers = run.ask(asked, [job for _, job in jobs.values()], store="bfcl_multi_turn",
                          desc=f"BFCL multi-turn {spec.name} ({mode})", progress=False)  # fmt: skip
        for key, (talk, _) in jobs.items():
            _hand_back(talk, answers[key])
            if budget is not None and talk.tokens() > budget:
                talk.stop(f"{talk.tokens()} tokens > max_tokens={budget}")
    return talks


def _sim_plans(
    spec: ModelSpec, items: Sequence[MultiTurnItem], seed: int
) -> dict[str, MultiTurnPlan]:
    if not spec.simulated:
        return {}
    sim_seed = spec.seed if spec.seed is not None else seed
    rngs = {item.id: sim_rng(sim_seed, spec.name, f"plan:{item.id}") for item in items}
    return {item.id: plan_multi_turn(item, spec.sim, rngs[item.id]) for item in items}


def _turn_job(talk: Conversation, spec: ModelSpec, sim_of: SimOf) -> Job:
    messages, tools = talk.request()
    sim = sim_of(talk) if spec.simulated else None
    return Job(talk.key, ChatRequest(messages=messages, tools=tools), sim)


def _multi_turn_sim(plans: Mapping[str, MultiTurnPlan], talk: Conversation) -> SimTask:
    plan = plans[talk.item.id]
    respond = partial(sim_multi_turn_respond, item=talk.item, plan=plan, turn=talk.turn,
                      step=talk.step, mode=talk.mode)  # fmt: skip
    return SimTask(respond, talk.key, {"plan": plan._asdict(), "mode": talk.mode})


def _hand_back(talk: Conversation, answer: ResponseRecord) -> None:
    if answer.error:
        talk.fail(answer.error)
        return
    calls = tuple(ToolCallReply(c["name"], str(c["arguments"])) for c in answer.tool_calls)
    talk.receive(Reply(answer.text, calls, answer.prompt_tokens, answer.completion_tokens,
                       answer.latency_s))  # fmt: skip


def _score_talks(
    run: Run[BfclParams], spec: SystemSpec, talks: Sequence[Finished],
    injected: Mapping[str, str],
) -> LiveMultiTurn:  # fmt: skip
    mode = run.params.mode_of(spec.name)
    lines = [_talk_line(talk) for talk in talks if talk.error is None]
    write_results(lines, run.dir / "bfcl_results", spec.name)
    items = [talk.item for talk in talks]
    verdicts, details = score(
        items, lines, system=spec.name, style="prompt" if mode == "prompt" else "fc",
        model_name=spec.name, allow_missing=True,
    )  # fmt: skip
    failed = [
        Verdict(spec.name, t.item.category, t.item.id, False, CALL_FAILED, t.error, None, None, [])
        for t in talks
        if t.error
    ]
    verdicts = pd.concat([verdicts, verdict_frame(failed)], ignore_index=True)
    verdicts = verdicts.assign(mode=mode, injected=verdicts["id"].map(injected))
    details = details.assign(injected=details["id"].map(injected))
    steps = [{"system": spec.name, **event} for talk in talks for event in talk.events]
    return LiveMultiTurn(verdicts, details, steps)


def _talk_line(talk: Finished) -> ResultLine:
    return ResultLine(talk.item.id, talk.item.category, talk.result, *talk.usage)


# --------------------------------------------------------------------------- live memory


def run_live_memory(
    run: Run[BfclParams], spec: SystemSpec, items: Sequence[MemoryItem]
) -> LiveMultiTurn:
    """Hold one live system's memory conversations (:func:`~.memory.converse_memory`): the
    prerequisite conversations the questions need, then each question, all with the memory
    backend's tools, played as multi-turn conversations are (chat models, the reference
    agent, users' agents); write the official result files and memory snapshots
    (``bfcl_results/<system>/agentic/memory/<backend>/``) and score the answers.
    ``memory_vector`` is never asked (:data:`~.backends.VECTOR_REFUSAL`)."""
    plans = _memory_plans(spec, items, run.params.seed)
    play = partial(_play_memory, run, spec, plans)
    prereqs, questions, snapshots = converse_memory(items, play, run.params.data)
    write_snapshots(run.dir / "bfcl_results" / spec.name.replace("/", "_"), snapshots)
    write_results([_talk_line(t) for t in prereqs if t.error is None],
                  run.dir / "bfcl_results", spec.name)  # fmt: skip
    asked = [talk._replace(item=item) for talk, item in zip(questions, items, strict=True)]
    scored = _score_talks(run, spec, asked, {k: p.mistake for k, p in plans.items()})
    steps = [{"system": spec.name, **event} for talk in prereqs for event in talk.events]
    held = tuple(prereq_row(spec.name, talk) for talk in prereqs)
    return scored._replace(steps=steps + scored.steps, prereqs=held)


def _memory_plans(spec: ModelSpec, items: Sequence[MemoryItem], seed: int) -> dict[str, MemoryPlan]:
    if not spec.simulated:
        return {}
    sim_seed = spec.seed if spec.seed is not None else seed
    rngs = {item.id: sim_rng(sim_seed, spec.name, f"plan:{item.id}") for item in items}
    return {item.id: plan_memory(item, spec.sim, rngs[item.id]) for item in items}


def _play_memory(
    run: Run[BfclParams], spec: SystemSpec, plans: Mapping[str, MemoryPlan],
    batch: list[MultiTurnItem],
) -> list[Finished]:  # fmt: skip
    if spec.provider in ("python", "command"):
        return run_user_agent(run, spec, batch)
    talks = _chat_conversations(run, spec, batch, partial(_memory_sim, plans))
    return [talk.finished() for talk in talks]


def _memory_sim(plans: Mapping[str, MemoryPlan], talk: Conversation) -> SimTask:
    plan = plans.get(talk.item.id, MemoryPlan("remember"))  # a prerequisite conversation
    respond = partial(sim_memory_respond, item=talk.item, plan=plan, turn=talk.turn,
                      step=talk.step, mode=talk.mode)  # fmt: skip
    return SimTask(respond, talk.key, {"plan": plan._asdict(), "mode": talk.mode})


class Scored(NamedTuple):
    """What :func:`run_study` scored."""

    verdicts: pd.DataFrame
    """One row per system and item (see :class:`VerdictRecord`)."""
    multi_turn: pd.DataFrame
    """The multi-turn replay's diagnostics."""
    memory_prereqs: pd.DataFrame | None
    """The prerequisite conversations live systems held (None when none was)."""


def run_study(run: Run[BfclParams], items: Sequence[AnyItem]) -> Scored:
    """Score every result set and live system on ``items``; write ``records/bfcl.jsonl``
    (and ``records/steps.jsonl``, ``records/memory_prereqs.jsonl`` when live systems
    conversed).

    Result sets are scored on the categories they have; live systems answer the Python
    items and converse on the multi-turn and memory ones (:func:`run_live_memory`).

    Args:
        run: the open :class:`evalbench.runs.Run` of a ``bfcl`` study.
        items: from :func:`load_study_items`.
    """
    params = run.params
    known = None
    if is_subset(params) and params.result_sets:
        known = {item.id for item in load(params.categories, source=params.data)}
    scored = [score_result_set(rs, items, known) for rs in params.result_sets]
    python = [it for it in items if isinstance(it, Item) and it.category in PYTHON]
    # users' agents converse on the multi-turn and memory items only (single-turn: not asked)
    answering = [spec for spec in params.systems if spec.provider not in ("python", "command")]
    live = [run_live_system(run, spec, python) for spec in answering if python]
    conversations = converse_all(run, items)
    frames = [*(s.verdicts for s in scored), *live, *(c.verdicts for c in conversations)]
    verdicts = pd.concat(frames, ignore_index=True) if frames else verdict_frame([])
    # The frame's columns are exactly VerdictRecord's fields and hold JSON types already;
    # validating ~10k records through pydantic would double the study's scoring time.
    run.write_records("bfcl", verdicts)
    details = [frame for frame in (*(s.multi_turn for s in scored),
               *(c.details for c in conversations)) if len(frame)]  # fmt: skip
    empty = pd.DataFrame(columns=DETAIL_COLUMNS)
    prereqs = [row for talk in conversations for row in talk.prereqs]
    held = pd.DataFrame(prereqs) if prereqs else None
    return Scored(verdicts, pd.concat(details, ignore_index=True) if details else empty, held)


def converse_all(run: Run[BfclParams], items: Sequence[AnyItem]) -> list[LiveMultiTurn]:
    """Every live system's multi-turn and memory conversations (``memory_vector`` is not
    asked: :data:`~.backends.VECTOR_REFUSAL`); writes their steps and prerequisite
    conversations."""
    systems = run.params.systems
    talked = [it for it in items if isinstance(it, MultiTurnItem)]
    memory = [it for it in items if isinstance(it, MemoryItem) and it.category in LIVE_MEMORY]
    conversations = [run_live_multi_turn(run, spec, talked) for spec in systems if talked]
    conversations += [run_live_memory(run, spec, memory) for spec in systems if memory]
    if conversations:
        run.write_records("steps", [step for talk in conversations for step in talk.steps])
    prereqs = [row for talk in conversations for row in talk.prereqs]
    if prereqs:
        run.write_records("memory_prereqs", prereqs)
    return conversations


def to_records(verdicts: pd.DataFrame) -> list[VerdictRecord]:
    """Verdict frame -> validated records for a run's ``records/`` folder."""
    return [VerdictRecord.model_validate(row) for row in verdicts.to_dict("records")]


# --------------------------------------------------------------------------- the study


def run(run: Run[BfclParams]) -> BfclResult:
    """Score every result set and live system, write ``records/bfcl.jsonl``, summarize.

    Args:
        run: the open :class:`evalbench.runs.Run` of a ``bfcl`` study.
    """
    params = run.params
    with run.timed("load"):
        items = load_study_items(params)
        format_cases = load_format_cases(params)
    verdicts, multi_turn, memory_prereqs = run_study(run, items)
    formats = run_formats(run, format_cases)
    scored = set(verdicts["test_category"])
    summary = summarize(
        verdicts, level=params.confidence_level, extra_categories=published_extras(params, scored)
    )
    single = verdicts[verdicts["test_category"].isin(PYTHON)]
    injected = single["injected"].notna().any()
    return BfclResult(
        params=params,
        items=items,
        verdicts=verdicts,
        summary=summary,
        order=list(verdicts["system"].unique()),
        sources=system_sources(params),
        comparison=leaderboard_comparison(summary, params),
        truth=injected_vs_detected(single) if injected else None,
        examples=failure_examples(
            single,
            items,
            per_system=params.examples_per_system,
            seed=params.seed,
        ),
        result_files=result_file_counts(run.dir / "bfcl_results") if params.systems else None,
        usage=run.recorded_usage(),
        simulated=run.simulated_names,
        multi_turn=multi_turn if len(multi_turn) else None,
        formats=formats,
        tables=official_tables(params, verdicts),
        memory_prereqs=memory_prereqs,
    )


def counts(result: BfclResult) -> dict[str, int]:
    """Items, records, failed verdicts and failed model calls, for the manifest."""
    verdicts = result.verdicts
    return {
        "items": len(result.items),
        "records": len(verdicts),
        "failed": int((~verdicts["valid"]).sum()),
        "call_errors": int((verdicts["error_type"] == CALL_FAILED).sum()),
    }


STUDY = Study(
    kind="bfcl",
    params=BfclParams,
    run=run,
    notebook="bfcl_categories.ipynb",
    records={
        "bfcl": VerdictRecord,
        "steps": TurnStepRecord,
        "agent_conversations": AgentConversationRecord,
        "format_sensitivity": FormatVerdictRecord,
        "memory_prereqs": MemoryPrereqRecord,
    },
    headlines=report.headlines,
    findings=report.findings,
    counts=counts,
    measured=lambda result: measured_systems(result.verdicts),
    # live multi-turn conversations only; users' Python agents only
    optional_records=frozenset(
        {"steps", "agent_conversations", "format_sensitivity", "memory_prereqs"}
    ),
)
