"""One live multi-turn conversation, turn by turn and step by step, as the official runner
holds it (pure: no model call here; the study asks the model and hands back its reply).

Follows ``inference_multi_turn_FC`` / ``inference_multi_turn_prompting`` of
``bfcl_eval/model_handler/base_handler.py`` with the OpenAI handler's message shapes
(bfcl-eval 2026.3.23):

- **tools** mode: the question's messages and OpenAI ``tools``; a reply's tool calls are
  the step's output ``[{name: "<JSON args>"}]``, each result goes back as a ``tool``
  message; **prompt** mode: the leaderboard's system prompt with the function docs, the
  reply's text is the output (Python call syntax), the results go back as one ``user``
  message ``repr([{"role": "tool", "name": <call>, "content": <result>}, ...])``;
- a step whose output does not decode to calls (plain text, or nothing) ends the turn;
  otherwise its calls run in the item's backends (kept across turns) and the model is
  asked again; after more than :data:`MAX_STEPS` steps in one turn the conversation is
  force-quit (its result then has fewer turns than the ground truth: officially
  ``multi_turn:force_terminated``);
- a held-out function (``miss_func``) joins the tools at its turn, whose user message is
  the official "I have updated some more functions..." prompt (in prompt mode preceded by
  the new docs);
- a memory conversation (:mod:`.memory`) is one like the others whose backend is a memory
  class; when it ends its memory's state is handed on (:attr:`Finished.state`).
"""

from __future__ import annotations

import copy
from typing import Any, NamedTuple

from . import backends
from .multi_turn import Step, decode_step
from .replay import Side
from .schema import MemoryItem, MultiTurnItem
from .scoring import PYTHON_HINT, system_prompt, to_openai_tools

MAX_STEPS = 20
"""Official ``MAXIMUM_STEP_LIMIT``: a turn may execute this many steps, one more force-quits."""
ADDED_FUNCTIONS_PROMPT = "I have updated some more functions you can choose from. What about now?"
"""Official ``DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC``."""
CLIP = 500  # characters of a text or result kept in a step record


class ToolCallReply(NamedTuple):
    """One native tool call of a reply (its endpoint id is not kept: see ``_call_id``)."""

    name: str
    arguments: str


class Reply(NamedTuple):
    """What the model answered to one request."""

    text: str | None
    tool_calls: tuple[ToolCallReply, ...] = ()
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float = 0.0


class Finished(NamedTuple):
    """A conversation that ended: what is scored and recorded of it."""

    item: MultiTurnItem | MemoryItem
    """The item played (a memory question's conversation is scored as its question)."""
    result: list[list[Any]]
    """Per turn, each step's output (the official result-file ``result``)."""
    events: list[dict[str, Any]]
    """``records/steps.jsonl`` rows without ``system``."""
    error: str | None = None
    """It failed (a model call, or the agent raised): an error record, not scored."""
    usage: tuple[Any, Any, Any] = (None, None, None)
    """Input and output tokens and latency per turn and step, as the result file has them."""
    state: dict[str, Any] | None = None
    """A memory conversation's memory at its end (:func:`~.backends.memory_state`); None for
    other items."""


class Conversation:
    """One item asked of one system: the chat history, the backends, the official result.

    Args:
        item: the multi-turn item.
        mode: ``tools`` or ``prompt``.
        model_name: names the backend instances as the official runner would (it only
            shows where a method name inside a string argument is rewritten).
        max_steps: steps per turn before the conversation is force-quit.
    """

    def __init__(
        self, item: MultiTurnItem, mode: str, *, model_name: str = "evalbench",
        max_steps: int = MAX_STEPS,
    ) -> None:  # fmt: skip
        if mode not in ("tools", "prompt"):
            raise ValueError(f"unknown mode {mode!r}; use 'tools' or 'prompt'")
        self.item, self.mode, self.max_steps = item, mode, max_steps
        held = {name for names in item.missed_function.values() for name in names}
        self._docs = [doc for doc in item.functions if doc["name"] not in held]
        self._side = Side(
            item.involved_classes, item.initial_config, item.long_context,
            f"{model_name}_{item.id}",
        )  # fmt: skip
        self.messages: list[dict[str, Any]] = []
        self.result: list[list[Any]] = []
        """Per turn, each step's output: the official result-file ``result``."""
        self.usage: dict[str, list[list[Any]]] = {
            "input_token_count": [], "output_token_count": [], "latency": [],
        }  # fmt: skip
        self.turn, self.step = -1, 0
        self.force_quit = False
        self.error: str | None = None
        self.events: list[dict[str, Any]] = []
        """One dict per model step and per call (``records/steps.jsonl`` rows, no system)."""
        self._next_turn()

    @property
    def done(self) -> bool:
        """Whether the conversation is over (every turn played, force-quit or failed)."""
        return self.error is not None or self.force_quit or self.turn >= len(self.item.question)

    @property
    def key(self) -> str:
        """The id of the next request (unique within the conversation)."""
        return f"{self.item.id}/turn{self.turn}/step{self.step}"

    def request(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
        """The next request: a copy of the chat history, and the tools (tools mode)."""
        tools = self._tools() if self.mode == "tools" else None
        return copy.deepcopy(self.messages), tools

    def docs(self) -> list[dict[str, Any]]:
        """The function docs offered in the current turn (copies; held-out ones join at
        their turn)."""
        return copy.deepcopy(self._docs)

    def fail(self, error: str) -> None:
        """The model call failed for good: the conversation ends without a result."""
        self.error = error

    def stop(self, reason: str) -> None:
        """End the conversation where it is, as the step limit does (an agent's time or
        token budget ran out): the turns played so far are its result (officially
        ``multi_turn:force_terminated``); ``reason`` is recorded as a model step."""
        if self.done:
            return
        self.force_quit = True
        self._event("model", None, None, f"(stopped: {reason})")
        if self.turn > 0 and not self.result[-1]:  # a turn not started is not played
            self.result.pop()
            for values in self.usage.values():
                values.pop()

    def tokens(self) -> int:
        """Prompt and completion tokens of the replies so far (unknown counts as 0)."""
        counts = (*self.usage["input_token_count"], *self.usage["output_token_count"])
        return sum(n or 0 for turn in counts for n in turn)

    def receive(self, reply: Reply) -> None:
        """Take the model's reply to :meth:`request`: record it, run its calls, move on."""
        output = self._output(reply)
        self.result[-1].append(output)
        for name, value in (("input_token_count", reply.prompt_tokens),
                            ("output_token_count", reply.completion_tokens),
                            ("latency", round(reply.latency_s, 4))):  # fmt: skip
            self.usage[name][-1].append(value)
        self._history(reply)
        calls = decode_step(output, "fc" if self.mode == "tools" else "prompt")
        self._event("model", None, None, reply.text, reply)
        if calls is None:
            self._next_turn()
            return
        results = self._side.run(calls)
        for call, result in zip(calls, results, strict=True):
            self._event("tool", call.name or call.source.split("(", 1)[0], call.source, result)
        self._results(calls, results, reply)
        self.step += 1
        if self.step > self.max_steps:
            self.force_quit = True

    def result_line(self) -> dict[str, Any]:
        """The official result-file line of this conversation."""
        return {"id": self.item.id, "result": self.result, **self.usage}

    def finished(self) -> Finished:
        """What is scored and recorded of this conversation (once :attr:`done`)."""
        usage = (self.usage["input_token_count"], self.usage["output_token_count"],
                 self.usage["latency"])  # fmt: skip
        return Finished(self.item, self.result, self.events, self.error, usage, self.memory())

    def memory(self) -> dict[str, Any] | None:
        """The memory backend's state now (None when the item involves no memory class); a
        conversation that made no call leaves the state it started with."""
        memory = [cls for cls in self.item.involved_classes if cls in backends.MEMORY_STATE]
        if not memory:
            return None
        cls = memory[0]
        instance = self._side.instances.get(cls) or backends.new_instance(
            cls, self.item.initial_config, False
        )
        return backends.memory_state(cls, instance)

    # ----------------------------------------------------------------------- internals

    def _next_turn(self) -> None:
        self.turn, self.step = self.turn + 1, 0
        if self.turn >= len(self.item.question):
            return
        held = self.item.missed_function.get(self.turn, [])
        if held:
            docs = [doc for doc in self.item.functions if doc["name"] in held]
            self._docs += docs
            prefix = "" if self.mode == "tools" else f"{docs}\n"
            messages = [{"role": "user", "content": prefix + ADDED_FUNCTIONS_PROMPT}]
        else:
            messages = [{"role": m["role"], "content": m["content"]}
                        for m in self.item.question[self.turn]]  # fmt: skip
        if self.turn == 0 and self.mode == "prompt":
            messages = _with_system_prompt(messages, self._docs)
        self.messages.extend(messages)
        self.result.append([])
        for values in self.usage.values():
            values.append([])

    def _tools(self) -> list[dict[str, Any]]:
        """OpenAI tools; held-out docs join without the Python hint, as officially (the
        hint is added when the entry is loaded, before they are set aside)."""
        held = {name for names in self.item.missed_function.values() for name in names}
        tools = to_openai_tools(self._docs)
        for tool in tools:
            function = tool["function"]
            if function["name"] in held:
                function["description"] = function["description"].removesuffix(PYTHON_HINT)
        return tools

    def _call_id(self, index: int) -> str:
        """The id a tool call gets in the history: the endpoint's own ids are not stored
        with an answer, and the same id on a rerun keeps the next request (and its cached
        answer) the same."""
        return f"call_{self.turn}_{self.step}_{index}"

    def _output(self, reply: Reply) -> Any:
        if self.mode == "tools" and reply.tool_calls:
            return [{call.name: call.arguments} for call in reply.tool_calls]
        return reply.text if reply.text is not None else ""

    def _history(self, reply: Reply) -> None:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text}
        if self.mode == "tools" and reply.tool_calls:
            message["tool_calls"] = [
                {
                    "id": self._call_id(i),
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for i, c in enumerate(reply.tool_calls)
            ]
        self.messages.append(message)

    def _results(self, calls: Step, results: list[str], reply: Reply) -> None:
        if self.mode == "tools":
            # as officially: results pair with the reply's calls (zip stops at the shorter)
            for i, (result, _) in enumerate(zip(results, reply.tool_calls, strict=False)):
                self.messages.append(
                    {"role": "tool", "content": result, "tool_call_id": self._call_id(i)}
                )
            return
        shown = [
            {"role": "tool", "name": c.source, "content": r}
            for c, r in zip(calls, results, strict=True)
        ]
        self.messages.append({"role": "user", "content": repr(shown)})

    def _event(
        self, kind: str, tool: str | None, arguments: str | None, text: str | None,
        reply: Reply | None = None,
    ) -> None:  # fmt: skip
        event = {"id": self.item.id, "turn": self.turn, "step": self.step, "kind": kind,
                 "tool": tool, "arguments": arguments,
                 "result": None if text is None else text[:CLIP]}  # fmt: skip
        if kind == "model" and reply is not None:
            event["tool"] = ", ".join(c.name for c in reply.tool_calls) or None
            event["prompt_tokens"] = reply.prompt_tokens
            event["completion_tokens"] = reply.completion_tokens
            event["latency_s"] = reply.latency_s
        self.events.append(event)


def _with_system_prompt(
    messages: list[dict[str, Any]], docs: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Prompt mode: the leaderboard's system prompt first; a question's own system message
    is appended to it (official ``system_prompt_pre_processing_chat_model``)."""
    prompt = system_prompt(docs)
    if messages and messages[0]["role"] == "system":
        return [
            {"role": "system", "content": f"{prompt}\n\n{messages[0]['content']}"},
            *messages[1:],
        ]
    return [{"role": "system", "content": prompt}, *messages]
