"""BFCL v4 memory: the questions, the prerequisite conversations, the prompts and the check.

Reimplements (does not import or copy) the memory parts of ``bfcl-eval`` 2026.3.23 (gorilla
commit 6ea5797) around the official key-value and recursive-summary classes, which run the
memory tools (:mod:`.backends`; the vector memory is not run: :data:`~.backends.VECTOR_REFUSAL`):

- **Items** (``load_dataset_entry`` / ``process_memory_test_case`` of ``bfcl_eval/utils.py``):
  the 155 questions of ``BFCL_v4_memory.json`` are asked once per memory category, their ids
  renamed ``memory_<n>-...`` -> ``memory_kv_<n>-...``; each scenario's prerequisite
  conversations (``memory_prereq_conversation/memory_<scenario>.json``) become
  ``memory_kv_prereq_<n>-...``, each depending on all earlier ones of its scenario.
- **Conversations** (``inference_multi_turn_FC`` / ``_prompting`` of
  ``model_handler/base_handler.py``, ``add_memory_instruction_system_prompt`` of
  ``model_handler/utils.py``): the backend's tools and, first, a system prompt holding the
  scenario's setting and the memory's content at the start (the official
  ``_dump_core_memory_to_context``, called on the official instance); a question's system
  prompt ends with the answer-format prompt of every agentic question. The first
  prerequisite conversation of a scenario starts with an empty memory, each next one with
  the memory the previous one left, every question with the memory the last one left
  (officially through the snapshot files ``<scenario>_final.json``; :func:`snapshot_paths`
  gives their official places). A prerequisite conversation that failed leaves no memory:
  the next one starts from the one before, as officially (no flush without a result).
- **Check** (``_evaluate_single_agentic_entry`` of ``eval_checker/eval_runner.py``): exactly
  the web-search check (:func:`~.web_search.check_answer`): a result of one turn whose last
  step that is not a call holds one accepted answer as a whole word. Results pair with the
  questions by id; officially by position after sorting both by index, which is the same
  pairing for every file the official runner accepts.

Known quirks, reproduced: the check reads the whole last message, not the ``answer`` field
the answer-format prompt asks for (a message listing many candidates passes); the official
``standardize_string`` says it removes whitespace but keeps it ("thirty five" does not match
"thirty-five"); and its ``\\b`` boundaries cannot match an answer that starts or ends with a
non-word character after a space ("$49.99" in "it was $49.99"): the corrected variant
(:data:`~.web_search.CORRECTED`) is recorded beside the official verdict.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict

from evalbench.records import write_atomic

from . import backends
from .checker import Check
from .files import DEMO, data_file, function_docs, read_jsonl
from .schema import (
    MEMORY,
    MEMORY_SCENARIOS,
    BfclDataError,
    MemoryItem,
    MemoryPrereq,
    MultiTurnItem,
    category_of,
)
from .web_search import check_answer

AGENTIC_PROMPT = (
    "For your final answer to the user, you must respond in this format: {'answer': A short "
    "and precise answer to the question, 'context': A brief explanation of how you arrived at "
    "this answer or why it is correct}. If you do not know the answer, respond with "
    "{'answer': 'I do not know', 'context': 'I do not know'}. If you think the question "
    "cannot be properly answered, response with {'answer': 'I cannot answer this question', "
    "'context': A short reason explaining why this question cannot be answered}.\n"
)
"""Official ``ADDITIONAL_SYSTEM_PROMPT_FOR_AGENTIC_RESPONSE_FORMAT`` (every memory question)."""
SCENARIO_SETTINGS = {
    "student": "You are an academic-support assistant for college student. Remember key "
    "personal and academic details discussed across sessions, and draw on them to answer "
    "questions or give guidance.",
    "customer": "You are a general customer support assistant for an e-commerce platform. "
    "Your task is to understand and remember information that can be used to provide "
    "information about user inquiries, preferences, and offer consistent, helpful assistance "
    "over multiple interactions.",
    "finance": "You are a high-level executive assistant supporting a senior finance "
    "professional. Retain and synthesize both personal and professional information including "
    "facts, goals, prior decisions, and family life across sessions to provide strategic, "
    "context-rich guidance and continuity.",
    "healthcare": "You are a healthcare assistant supporting a patient across appointments. "
    "Retain essential medical history, treatment plans, and personal preferences to offer "
    "coherent, context-aware guidance and reminders.",
    "notetaker": "You are a personal organization assistant. Capture key information from "
    "conversations, like tasks, deadlines, and preferences, and use it to give reliable "
    "reminders and answers in future sessions.",
}
"""Official ``MEMORY_AGENT_SETTINGS``."""
CORE_ARCHIVAL_PROMPT = (
    "{scenario_setting}\n\nYou have access to an advanced memory system, consisting of two "
    "memory types 'Core Memory' and 'Archival Memory'. Both type of memory is persistent "
    "across multiple conversations with the user, and can be accessed in a later interactions. "
    "You should actively manage your memory data to keep track of important information, "
    "ensure that it is up-to-date and easy to retrieve to provide personalized responses to "
    "the user later.\n\nThe Core memory is limited in size, but always visible to you in "
    "context. The Archival Memory has a much larger capacity, but will be held outside of "
    "your immediate context due to its size.\n\nHere is the content of your Core Memory from "
    "previous interactions:\n{memory_content}\n"
)
"""Official ``MEMORY_BACKEND_INSTRUCTION_CORE_ARCHIVAL`` (key-value and vector memory)."""
UNIFIED_PROMPT = (
    "{scenario_setting}\n\nYou have access to an advanced memory system, which is persistent "
    "across multiple conversations with the user, and can be accessed in a later interactions. "
    "You should actively manage your memory data to keep track of important information, "
    "ensure that it is up-to-date and easy to retrieve to provide personalized responses to "
    "the user later.\n\nHere is the content of your memory system from previous "
    "interactions:\n{memory_content}\n"
)
"""Official ``MEMORY_BACKEND_INSTRUCTION_UNIFIED`` (recursive summary)."""
LIVE_MEMORY = ("memory_kv", "memory_rec_sum")
"""The memory categories live systems are asked (not ``memory_vector``:
:data:`~.backends.VECTOR_REFUSAL`)."""


def backend_of(category: str) -> str:
    """The official backend class of a memory category (``memory_kv`` -> ``MemoryAPI_kv``)."""
    return f"MemoryAPI_{category.removeprefix('memory_')}"


# --------------------------------------------------------------------------- loading


class _Question(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str
    question: list[list[dict[str, Any]]]
    scenario: str


class _Answer(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str
    ground_truth: list[str]
    source: str = ""


class _Prereq(_Question):
    topic: str = ""


def load_memory(category: str, source: str | Path = "registry") -> list[MemoryItem]:
    """The questions of one memory category with their answers, in file order: the 155 of
    the pinned files, or with ``source="demo"`` those of evalbench's demo suite
    (:func:`~.files.demo_path`).

    Raises:
        BfclDataError: not a memory category, or a malformed or inconsistent file (naming
            file and line).
    """
    if category not in MEMORY:
        raise BfclDataError(f"{category!r} is not a memory category ({', '.join(MEMORY)})")
    suite = _suite(source)
    backend = backend_of(category)
    answers, docs = _answers(suite), function_docs(backend, suite)
    items = []
    for row in _questions(suite):
        answer = answers[row.id]
        item_id = row.id.replace("memory", category)
        question, functions = copy.deepcopy(row.question), copy.deepcopy(docs)
        items.append(MemoryItem(item_id, category, question, functions, list(answer.ground_truth),
                                row.scenario, backend, answer.source))  # fmt: skip
    return items


def _suite(source: str | Path) -> str:
    """Memory files come from the demo suite or the pinned files (``package`` and gorilla
    checkouts apply to the Python categories only)."""
    return DEMO if source == DEMO else "registry"


@cache
def _questions(suite: str) -> tuple[_Question, ...]:
    path = data_file("bfcl/question/memory", suite)
    rows = []
    for number, row in read_jsonl(path, _Question):
        if category_of(row.id) != "memory" or row.scenario not in MEMORY_SCENARIOS:
            raise BfclDataError(f"{path}:{number}: {row.id!r} is not a memory question id "
                                f"of a known scenario ({', '.join(MEMORY_SCENARIOS)})")  # fmt: skip
        if len(row.question) != 1:
            raise BfclDataError(f"{path}:{number}: a memory question has one turn")
        rows.append(row)
    if len({row.id for row in rows}) != len(rows):
        raise BfclDataError(f"{path}: duplicate ids")
    return tuple(rows)


@cache
def _answers(suite: str) -> dict[str, _Answer]:
    path = data_file("bfcl/possible_answer/memory", suite)
    answers = {row.id: row for _, row in read_jsonl(path, _Answer)}
    missing = [row.id for row in _questions(suite) if not answers.get(row.id, _NO).ground_truth]
    if missing:
        raise BfclDataError(f"{path}: no answer for {missing[:3]}")
    return answers


_NO = _Answer(id="", ground_truth=[])


def load_prereqs(
    category: str, scenario: str, source: str | Path = "registry"
) -> list[MemoryPrereq]:
    """The prerequisite conversations of one scenario, in the order they are held (``source``
    as in :func:`load_memory`).

    Raises:
        BfclDataError: an unknown scenario or a malformed file (naming file and line).
    """
    if scenario not in MEMORY_SCENARIOS:
        raise BfclDataError(f"unknown memory scenario {scenario!r}")
    prereqs = []
    for row in _prereq_rows(scenario, _suite(source)):
        prereq_id, question = row.id.replace("memory", category), copy.deepcopy(row.question)
        prereqs.append(MemoryPrereq(prereq_id, f"{category}_prereq", question, row.scenario,
                                    row.topic))  # fmt: skip
    return prereqs


@cache
def _prereq_rows(scenario: str, suite: str) -> tuple[_Prereq, ...]:
    path = data_file(f"bfcl/memory_prereq/{scenario}", suite)
    rows = []
    for number, row in read_jsonl(path, _Prereq):
        if row.scenario != scenario or category_of(row.id) != "memory_prereq":
            raise BfclDataError(f"{path}:{number}: {row.id!r} is not a {scenario} prerequisite")
        if not row.question or any(len(turn) != 1 for turn in row.question):
            raise BfclDataError(f"{path}:{number}: every turn must be one user message")
        rows.append(row)
    return tuple(rows)


# --------------------------------------------------------------------------- conversations


def memory_text(backend: str, state: dict[str, Any]) -> str:
    """What the system prompt shows of a memory (the official instance's
    ``_dump_core_memory_to_context``: the core memory as indented JSON, or the summary).

    Raises:
        BackendUnavailable: the official memory classes are not installed.
    """
    instance = backends.new_instance(backend, {backend: state}, False)
    text: str = instance._dump_core_memory_to_context()
    return text


def system_prompt(category: str, scenario: str, state: dict[str, Any]) -> str:
    """The memory system prompt of a conversation that starts with memory ``state``."""
    template = UNIFIED_PROMPT if "rec_sum" in category else CORE_ARCHIVAL_PROMPT
    memory = memory_text(backend_of(category.removesuffix("_prereq")), state)
    return template.format(scenario_setting=SCENARIO_SETTINGS[scenario], memory_content=memory)


def _with_system(question: list[list[dict[str, Any]]], prompt: str) -> list[list[dict[str, Any]]]:
    """``prompt`` first in the first turn; a first system message is appended to it."""
    turns = copy.deepcopy(question)
    first = turns[0]
    if first and first[0]["role"] == "system":
        first[0]["content"] = f"{prompt}\n\n{first[0]['content']}"
    else:
        first.insert(0, {"role": "system", "content": prompt})
    return turns


def conversation_item(
    entry: MemoryItem | MemoryPrereq, state: dict[str, Any], source: str | Path = "registry"
) -> MultiTurnItem:
    """One memory conversation as a multi-turn item (played by
    :class:`~.conversation.Conversation`): the system prompt for memory ``state`` in its
    first turn (after the answer-format prompt, for a question), the backend's tools (a
    prerequisite's from ``source``, as in :func:`load_memory`), and the memory's starting
    state as the backend's initial configuration. Its ground truth is empty: a memory
    conversation is checked by its answer (:func:`check_memory`)."""
    category = entry.category.removesuffix("_prereq")
    backend = backend_of(category)
    question = entry.question
    if isinstance(entry, MemoryItem):
        question = _with_system(question, AGENTIC_PROMPT)
    turns = _with_system(question, system_prompt(category, entry.scenario, state))
    docs = entry.functions if isinstance(entry, MemoryItem) else function_docs(backend, source)
    return MultiTurnItem(entry.id, entry.category, turns, docs, {backend: state}, [backend],
                         [[] for _ in turns], {})  # fmt: skip


def check_memory(item: MemoryItem, result: Any, *, style: str = "fc") -> Check:
    """Score one memory result with the official semantics (see the module docstring)."""
    return check_answer(item.answers, result, style=style).check


def check_memory_corrected(item: MemoryItem, result: Any, *, style: str = "fc") -> bool:
    """The verdict with answer boundaries corrected (:data:`~.web_search.CORRECTED`)."""
    return check_answer(item.answers, result, style=style, corrected=True).check.valid


# --------------------------------------------------------------------------- snapshots


class Snapshot(NamedTuple):
    """A memory after one prerequisite conversation, as the official files hold it."""

    category: str
    scenario: str
    prereq: str
    """The prerequisite conversation's id."""
    state: dict[str, Any]


def snapshot_paths(snapshot: Snapshot) -> tuple[Path, Path]:
    """Where the official runner writes it, under the model's result folder: the
    conversation's checkpoint and the scenario's latest memory (``_prepare_snapshot``)."""
    root = Path("agentic", "memory", snapshot.category.removeprefix("memory_"), "memory_snapshot")
    return (root / "prereq_checkpoints" / f"{snapshot.prereq}.json",
            root / f"{snapshot.scenario}_final.json")  # fmt: skip


def snapshot_json(snapshot: Snapshot) -> str:
    """The file's text, as officially written (``json.dump(..., indent=4)``)."""
    return json.dumps(snapshot.state, indent=4)


def write_snapshots(folder: Path, snapshots: Sequence[Snapshot]) -> None:
    """Write each snapshot where the official runner does under a model's result ``folder``
    (in order: the last of a scenario is its ``<scenario>_final.json``)."""
    for snapshot in snapshots:
        for path in snapshot_paths(snapshot):
            write_atomic(folder / path, [snapshot_json(snapshot)])


def prereq_row(system: str, played: Played) -> dict[str, Any]:
    """A held prerequisite conversation as a :class:`~.records.MemoryPrereqRecord` row."""
    item = played.item
    return {"system": system, "test_category": item.category.removesuffix("_prereq"),
            "scenario": item.id.split("-")[1], "id": item.id, "turns": len(played.result),
            "steps": sum(len(turn) for turn in played.result), "error": played.error}  # fmt: skip


def scenarios_of(items: Sequence[MemoryItem]) -> list[tuple[str, str]]:
    """The ``(category, scenario)`` chains the questions need, in the official scenario
    order within each category."""
    needed = {(item.category, item.scenario) for item in items}
    categories = dict.fromkeys(item.category for item in items)
    return [(c, s) for c in categories for s in MEMORY_SCENARIOS if (c, s) in needed]


# --------------------------------------------------------------------------- the chains


class Ended(Protocol):
    """What :func:`converse_memory` reads of a played conversation
    (:class:`~.conversation.Finished`)."""

    @property
    def error(self) -> str | None: ...

    @property
    def state(self) -> dict[str, Any] | None: ...


class Played(Ended, Protocol):
    """What :func:`prereq_row` reads of a played conversation."""

    @property
    def item(self) -> MultiTurnItem | MemoryItem: ...

    @property
    def result(self) -> list[list[Any]]: ...


E = TypeVar("E", bound=Ended)


def converse_memory(
    items: Sequence[MemoryItem],
    play: Callable[[list[MultiTurnItem]], Sequence[E]],
    source: str | Path = "registry",
) -> tuple[list[E], list[E], list[Snapshot]]:
    """Hold the prerequisite conversations the questions need (read from ``source``, as in
    :func:`load_memory`), then the questions.

    Each ``(category, scenario)`` chain starts with an empty memory; its conversations are
    played in order, each from the memory the last one that did not fail left; chains advance
    together (``play`` gets the next conversation of every chain at once), and every question
    is asked from its chain's final memory, all at once. ``play`` returns one played
    conversation per item, in order.

    Returns:
        The played prerequisite conversations (chain by chain, in order), the played
        questions (in the order of ``items``) and the memory snapshots they left.
    """
    chains = {key: load_prereqs(*key, source) for key in scenarios_of(items)}
    states: dict[tuple[str, str], dict[str, Any]] = {key: {} for key in chains}
    prereqs: list[tuple[tuple[str, str], int, E]] = []
    snapshots = []
    for depth in range(max(map(len, chains.values()), default=0)):
        wave = [(key, chain[depth]) for key, chain in chains.items() if depth < len(chain)]
        ended = play([conversation_item(prereq, states[key], source) for key, prereq in wave])
        for (key, prereq), end in zip(wave, ended, strict=True):
            prereqs.append((key, depth, end))
            if end.error is None and end.state is not None:
                states[key] = end.state
                snapshots.append(Snapshot(*key, prereq.id, end.state))
    asked = [conversation_item(item, states[(item.category, item.scenario)]) for item in items]
    questions = list(play(asked)) if asked else []
    order = list(chains)
    prereqs.sort(key=lambda p: (order.index(p[0]), p[1]))
    return [end for _, _, end in prereqs], questions, snapshots
