"""Simulated function-calling systems with known mistakes (the ``sim`` provider for BFCL).

A simulated system answers an item from its possible answer (:func:`~.scoring.correct_calls`)
and, with the probabilities of its :class:`~evalbench.models.SimSpec` knobs, injects one
known mistake (:data:`MISTAKES`): a wrong value or type, a missing or extra parameter, a
wrong function, a dropped or hallucinated call, a missed call, or malformed output. The
mistake is recorded (never shown to the checker), so the checker's verdicts can be compared
with the truth (:func:`~.metrics.injected_vs_detected`). The simulated multi-turn agent
(:func:`plan_multi_turn`, :func:`sim_multi_turn_respond`) follows the ground truth turn by
turn or makes one of :data:`MULTI_TURN_MISTAKES` at one turn. The simulated memory agent
(:func:`plan_memory`, :func:`sim_memory_respond`) stores each user message of the
prerequisite conversations with the backend's add tool, searches its memory before every
answer and answers from the truth, or says it does not know (:data:`MEMORY_MISTAKES`). Only
``study.py`` uses this module.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from evalbench.models import ChatRequest, SimReply, SimSpec, ToolCall

from .backends import keyword_arguments
from .checker import check_param, find_doc
from .format_sensitivity import render
from .replay import source_call
from .schema import Call, Item, MemoryItem, MultiTurnItem
from .scoring import correct_calls, render_calls, tool_name

MISTAKES = (
    "wrong_value",
    "wrong_type",
    "missing_required",
    "extra_param",
    "wrong_function",
    "dropped_call",
    "hallucinated_call",
    "missed_call",
    "malformed",
)
"""Mistakes the simulator injects (``none`` = a correct answer)."""
_EXTRA_PARAMS = ("verbose", "debug", "timeout", "extra_option")
_PROSE = "None of the available functions can answer this question."


def applicable_mistakes(item: Item, mode: str) -> tuple[str, ...]:
    """The mistakes the simulator can make on ``item`` (besides ``malformed``)."""
    if item.category in ("irrelevance", "live_irrelevance"):
        # Without functions a tools-mode model has nothing to call.
        return ("hallucinated_call",) if item.functions or mode == "prompt" else ()
    if item.category == "live_relevance":
        return ("missed_call",)
    calls = correct_calls(item)
    kinds = []
    if _targets(item, calls, _near_miss):
        kinds.append("wrong_value")
    if _targets(item, calls, _as_string):
        kinds.append("wrong_type")
    if _required_targets(item, calls):
        kinds.append("missing_required")
    kinds.append("extra_param")
    if len({doc["name"] for doc in item.functions}) > 1:
        kinds.append("wrong_function")
    if len(calls) > 1:
        kinds.append("dropped_call")
    return tuple(kinds)


def plan_mistake(item: Item, knobs: SimSpec, mode: str, rng: np.random.Generator) -> str:
    """Which mistake a simulated system makes on ``item`` (``none`` when it answers right).

    Malformed output with probability ``knobs.malformed_rate``; otherwise a mistake with
    probability ``1 - knobs.accuracy_for(category)``, drawn uniformly from
    :func:`applicable_mistakes` (an item with none is answered right).
    """
    if rng.random() < knobs.malformed_rate:
        return "malformed"
    kinds = applicable_mistakes(item, mode)
    if rng.random() < knobs.accuracy_for(item.category) or not kinds:
        return "none"
    return str(kinds[int(rng.integers(len(kinds)))])


def sim_respond(
    request: ChatRequest,
    knobs: SimSpec,
    rng: np.random.Generator,
    *,
    item: Item,
    mode: str,
    mistake: str,
) -> SimReply:
    """A simulated function-calling model's reply to one BFCL item (the ``sim`` provider).

    Builds the correct calls from the possible answer, applies the planned ``mistake``
    (see :func:`plan_mistake`), and renders them as Python call syntax (prompt mode) or
    OpenAI tool calls with dot-free names (tools mode). No call means a prose answer.
    """
    calls = sim_calls(item, mistake, rng)
    if mistake == "malformed":
        return _malformed(calls or [_made_up_call(item)], mode)
    if not calls:
        return SimReply(_PROSE)
    if mode == "tools":
        tool_calls = tuple(
            ToolCall(id=f"call_{i}", name=tool_name(c.name), arguments=json.dumps(c.args))
            for i, c in enumerate(calls)
        )
        return SimReply(None, tool_calls, "tool_calls")
    return SimReply(render_calls(calls))


def sim_format_respond(
    request: ChatRequest,
    knobs: SimSpec,
    rng: np.random.Generator,
    *,
    item: Item,
    config: str,
    mistake: str,
) -> SimReply:
    """A simulated prompting model's reply to one format-sensitivity case: the calls of
    :func:`sim_respond` written in the case's return format (with its ``<TOOLCALL>`` tags);
    a malformed answer has prose around a clipped rendering. The simulator has no format
    preference: its mistakes are planned per case with the same knobs in every format."""
    calls = sim_calls(item, mistake, rng)
    if mistake == "malformed":
        return SimReply(f"Sure! {render(calls or [_made_up_call(item)], config)[1:-2]} will do.")
    return SimReply(render(calls, config) if calls else _PROSE)


def sim_calls(item: Item, mistake: str, rng: np.random.Generator) -> list[Call]:
    """The calls a simulated system makes on ``item`` given its planned mistake."""
    if item.category in ("irrelevance", "live_irrelevance"):
        return [_made_up_call(item)] if mistake == "hallucinated_call" else []
    if item.category == "live_relevance":
        return [] if mistake == "missed_call" else [_made_up_call(item)]
    calls = correct_calls(item)
    apply = _APPLY.get(mistake)
    return apply(item, calls, rng) if apply else calls


def _made_up_call(item: Item) -> Call:
    """A plausible call of the first offered function with placeholder arguments."""
    if not item.functions:
        return Call("search", {"query": "answer"})
    doc = item.functions[0]
    props = doc["parameters"]["properties"]
    placeholders = {"integer": 1, "float": 1.0, "boolean": True, "array": [], "dict": {}}
    args = {
        p: placeholders.get(props.get(p, {}).get("type"), "example")
        for p in doc["parameters"].get("required", [])
    }
    return Call(doc["name"], args)


def _malformed(calls: Sequence[Call], mode: str) -> SimReply:
    if mode == "tools":
        broken = json.dumps(calls[0].args)[:-1]  # truncated JSON
        return SimReply(None, (ToolCall(name=tool_name(calls[0].name), arguments=broken),))
    return SimReply(f"Sure! {render_calls(calls)[1:-2]} should do it.")


_Target = tuple[int, str, Any]


def _targets(
    item: Item, calls: Sequence[Call], change: Callable[[Any, dict[str, Any]], list[Any]]
) -> list[_Target]:
    """(call index, parameter, new value) changes the checker rejects for that parameter."""
    answers = item.possible_answer or []
    out = []
    for i, (call, answer) in enumerate(zip(calls, answers, strict=True)):
        accepted = next(iter(answer.values()))
        props = find_doc(item.functions, call.name)["parameters"]["properties"]
        for param, value in call.args.items():
            candidates = change(value, props[param]) if param in props else []
            bad = [v for v in candidates if check_param(param, v, props[param], accepted[param])]
            if bad:
                out.append((i, param, bad[0]))
    return out


def _near_miss(value: Any, spec: dict[str, Any]) -> list[Any]:
    if type(value) is bool:
        return [not value]
    if type(value) is int:
        return [value + 1, value - 1]
    if type(value) is float:
        return [value + 1.0]
    if type(value) is str and value:
        middle = len(value) // 2
        swapped = value[: middle - 1] + value[middle] + value[middle - 1] + value[middle + 1 :]
        return [swapped if middle else value, value[:-1], value + "x"]
    return []


def _as_string(value: Any, spec: dict[str, Any]) -> list[Any]:
    if spec.get("type") not in ("integer", "float", "boolean"):
        return []  # only a number or boolean given as a string
    if type(value) is bool:
        return [str(value).lower()]
    return [str(value)] if type(value) in (int, float) else []


def _required_targets(item: Item, calls: Sequence[Call]) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    for i, call in enumerate(calls):
        required = find_doc(item.functions, call.name)["parameters"].get("required", [])
        out.extend((i, p) for p in required if p in call.args)
    return out


def _pick(options: Sequence[Any], rng: np.random.Generator) -> Any:
    return options[int(rng.integers(len(options)))]


def _wrong_value(item: Item, calls: list[Call], rng: np.random.Generator) -> list[Call]:
    return _replace_arg(calls, _pick(_targets(item, calls, _near_miss), rng))


def _wrong_type(item: Item, calls: list[Call], rng: np.random.Generator) -> list[Call]:
    return _replace_arg(calls, _pick(_targets(item, calls, _as_string), rng))


def _replace_arg(calls: list[Call], target: _Target) -> list[Call]:
    i, param, value = target
    out = list(calls)
    out[i] = Call(calls[i].name, {**calls[i].args, param: value})
    return out


def _missing_required(item: Item, calls: list[Call], rng: np.random.Generator) -> list[Call]:
    i, param = _pick(_required_targets(item, calls), rng)
    out = list(calls)
    out[i] = Call(calls[i].name, {k: v for k, v in calls[i].args.items() if k != param})
    return out


def _extra_param(item: Item, calls: list[Call], rng: np.random.Generator) -> list[Call]:
    i = int(rng.integers(len(calls)))
    props = find_doc(item.functions, calls[i].name)["parameters"]["properties"]
    name = next((p for p in _EXTRA_PARAMS if p not in props), "extra_option_2")
    out = list(calls)
    out[i] = Call(calls[i].name, {**calls[i].args, name: True})
    return out


def _wrong_function(item: Item, calls: list[Call], rng: np.random.Generator) -> list[Call]:
    i = int(rng.integers(len(calls)))
    others = [doc["name"] for doc in item.functions if doc["name"] != calls[i].name]
    out = list(calls)
    out[i] = Call(_pick(others, rng), calls[i].args)
    return out


def _dropped_call(item: Item, calls: list[Call], rng: np.random.Generator) -> list[Call]:
    i = int(rng.integers(len(calls)))
    return calls[:i] + calls[i + 1 :]


_APPLY: dict[str, Callable[[Item, list[Call], np.random.Generator], list[Call]]] = {
    "wrong_value": _wrong_value,
    "wrong_type": _wrong_type,
    "missing_required": _missing_required,
    "extra_param": _extra_param,
    "wrong_function": _wrong_function,
    "dropped_call": _dropped_call,
}


# --------------------------------------------------------------------------- multi-turn

MULTI_TURN_MISTAKES = (
    "wrong_order",
    "missing_call",
    "extra_call",
    "wrong_argument",
    "no_call",
    "holdout_call",
)
"""Mistakes the simulated multi-turn agent makes (``none`` = it follows the ground truth):
two calls of a turn in reverse order, a turn's last call left out, a turn's first call
repeated, a changed argument, a turn answered in text, and a call in a held-out turn (the
next turn's first call, guessing the missing function or parameter)."""
_ASK = "I cannot do that with what I have: which function or value should I use?"
_DONE = "Done."


class MultiTurnPlan(NamedTuple):
    """The simulated agent's plan for one item: one mistake (or none) at one turn."""

    mistake: str
    turn: int | None = None


def _turn_calls(item: MultiTurnItem, turn: int) -> list[Call]:
    classes = tuple(item.involved_classes)
    calls = []
    for source in item.ground_truth[turn]:
        parsed = source_call(source)
        if parsed.name is None or parsed.kwargs is None:
            continue  # a ground-truth string that is not a plain call is skipped
        kwargs = keyword_arguments(classes, parsed.name, parsed.args, parsed.kwargs)
        calls.append(Call(parsed.name, kwargs))
    return calls


def _mistake_turns(item: MultiTurnItem, mistake: str) -> list[int]:
    turns = range(len(item.ground_truth))
    if mistake == "holdout_call":
        return [t for t in turns if not item.ground_truth[t] and t + 1 < len(item.ground_truth)]
    if mistake == "wrong_order":
        return [t for t in turns if len({_name_of(c) for c in item.ground_truth[t]}) > 1]
    if mistake == "wrong_argument":
        return [t for t in turns if any(c.args for c in _turn_calls(item, t))]
    return [t for t in turns if item.ground_truth[t]]


def _name_of(source: str) -> str:
    return source.split("(", 1)[0]


def plan_multi_turn(item: MultiTurnItem, knobs: SimSpec, rng: np.random.Generator) -> MultiTurnPlan:
    """The simulated agent's plan: with probability ``accuracy_for(category)`` none, else
    one of :data:`MULTI_TURN_MISTAKES` that applies to the item, at a random turn where it
    can happen."""
    if rng.random() < knobs.accuracy_for(item.category):
        return MultiTurnPlan("none")
    options = [(m, t) for m in MULTI_TURN_MISTAKES for t in _mistake_turns(item, m)]
    kinds = sorted({m for m, _ in options}, key=MULTI_TURN_MISTAKES.index)
    if not kinds:
        return MultiTurnPlan("none")
    kind = _pick(kinds, rng)
    return MultiTurnPlan(kind, _pick([t for m, t in options if m == kind], rng))


def planned_calls(item: MultiTurnItem, plan: MultiTurnPlan, turn: int) -> list[Call]:
    """The calls the simulated agent makes in ``turn`` (its first step)."""
    calls = _turn_calls(item, turn)
    if plan.turn != turn:
        return calls
    if plan.mistake == "wrong_order":
        return calls[::-1]
    if plan.mistake == "missing_call":
        return calls[:-1]
    if plan.mistake == "extra_call":
        return [*calls, calls[0]]
    if plan.mistake == "no_call":
        return []
    if plan.mistake == "holdout_call":
        return _turn_calls(item, turn + 1)[:1]
    if plan.mistake == "wrong_argument":
        i = next(i for i, c in enumerate(calls) if c.args)
        param, value = next(iter(calls[i].args.items()))
        return [*calls[:i], Call(calls[i].name, {**calls[i].args, param: _changed(value)}),
                *calls[i + 1 :]]  # fmt: skip
    return calls


def _changed(value: Any) -> Any:
    if type(value) is bool:
        return not value
    if type(value) in (int, float):
        return value + 1
    if type(value) is str:
        return value + "_x"
    return [value] if not isinstance(value, list) else [*value, value[0] if value else "x"]


def sim_multi_turn_respond(
    request: ChatRequest,
    knobs: SimSpec,
    rng: np.random.Generator,
    *,
    item: MultiTurnItem,
    plan: MultiTurnPlan,
    turn: int,
    step: int,
    mode: str,
) -> SimReply:
    """The simulated multi-turn agent's reply at ``(turn, step)``: the turn's planned calls
    at its first step (text when there are none: it asks), then "Done." (ending the turn)."""
    calls = planned_calls(item, plan, turn) if step == 0 else []
    if not calls:
        return SimReply(_ASK if step == 0 else _DONE)
    if mode == "tools":
        tool_calls = tuple(
            ToolCall(id=f"call_{turn}_{i}", name=c.name, arguments=json.dumps(c.args))
            for i, c in enumerate(calls)
        )
        return SimReply(None, tool_calls, "tool_calls")
    return SimReply(render_calls(calls))


# --------------------------------------------------------------------------- memory


MEMORY_MISTAKES = ("forgot",)
"""The simulated memory agent's mistake: it answers "I do not know" (the official
don't-know answer), having searched its memory like a correct answer does."""
_NOTED = "Noted."
_CONTEXT = "From what you told me in our earlier conversations."
_STORE_CHARS = {"MemoryAPI_kv": 2000, "MemoryAPI_rec_sum": 60}
"""Characters of a user message the agent stores: a whole entry of the key-value memory
(its archival limit), a short line of the summary (whose limit is 10,000 in all)."""


class MemoryPlan(NamedTuple):
    """The simulated memory agent's plan for one conversation."""

    mistake: str
    """``remember`` (a prerequisite conversation), ``none`` or ``forgot`` (a question)."""
    answer: str | None = None
    """What a correct answer says (the question's first accepted answer)."""


def plan_memory(item: MemoryItem, knobs: SimSpec, rng: np.random.Generator) -> MemoryPlan:
    """With probability ``accuracy_for(category)`` a correct answer, else ``forgot``."""
    correct = rng.random() < knobs.accuracy_for(item.category)
    return MemoryPlan("none" if correct else "forgot", item.answers[0])


def memory_calls(item: MultiTurnItem, plan: MemoryPlan, turn: int) -> list[Call]:
    """The agent's calls at the first step of ``turn``: store the user's message (a
    prerequisite conversation; key-value keys ``note_<conversation>_<turn>``), or search the
    memory for the question."""
    backend = item.involved_classes[0]
    text = str(item.question[turn][-1]["content"])
    if plan.mistake == "remember" and backend == "MemoryAPI_kv":
        number = item.id.rsplit("_", 1)[1].split("-")[0]
        value = text[: _STORE_CHARS[backend]]
        return [Call("archival_memory_add", {"key": f"note_{number}_{turn}", "value": value})]
    if plan.mistake == "remember":
        return [Call("memory_append", {"text": text[: _STORE_CHARS[backend]] + "\n"})]
    if backend == "MemoryAPI_kv":
        return [Call("archival_memory_key_search", {"query": text})]
    return [Call("memory_retrieve", {})]


def sim_memory_respond(
    request: ChatRequest,
    knobs: SimSpec,
    rng: np.random.Generator,
    *,
    item: MultiTurnItem,
    plan: MemoryPlan,
    turn: int,
    step: int,
    mode: str,
) -> SimReply:
    """The simulated memory agent's reply at ``(turn, step)``: its calls at the first step
    (:func:`memory_calls`), then "Noted." (a prerequisite conversation) or its answer in the
    official answer format."""
    if step > 0:
        if plan.mistake == "remember":
            return SimReply(_NOTED)
        answer = plan.answer if plan.mistake == "none" else "I do not know"
        return SimReply(str({"answer": answer, "context": _CONTEXT}))
    calls = memory_calls(item, plan, turn)
    if mode == "tools":
        tool_calls = tuple(
            ToolCall(id=f"call_{turn}_{i}", name=c.name, arguments=json.dumps(c.args))
            for i, c in enumerate(calls)
        )
        return SimReply(None, tool_calls, "tool_calls")
    return SimReply(render_calls(calls))
