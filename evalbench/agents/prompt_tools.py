"""Tool calling in the prompt (``tool_mode: prompt``), for servers that ignore ``tools``.

llama-cpp-python's default chat format renders every message as it is (tool results too)
but leaves ``tools`` out of the prompt; its ``chatml-function-calling`` format reads
``tools`` but HTML-escapes every message and drops ``role: tool`` ones (measured, see the
README). In prompt mode the reference agent describes its tools in the system prompt and
reads calls from the reply's text, in the format of Hermes function calling
(NousResearch/Hermes-Function-Calling) that Qwen2.5's and SmolLM2's tool prompts also use:
schemas inside ``<tools></tools>``, calls as JSON ``{"name", "arguments"}`` (or a list of
them, as SmolLM2 writes) inside ``<tool_call></tool_call>``, and each result returned as
``<tool_response>{"name", "content"}</tool_response>`` in a user message (Qwen2.5's chat
template renders ``role: tool`` messages exactly so).
"""

from __future__ import annotations

import json
import re
from typing import Any

from evalbench.models import ToolCall

_CALL = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)

INSTRUCTIONS = """

You can call these tools (JSON schemas):
<tools>
{schemas}
</tools>

To call tools, write one or more calls as JSON inside tool_call tags, and nothing after them:
<tool_call>[{{"name": "tool_name", "arguments": {{"argument": "value"}}}}]</tool_call>
Each result comes back inside tool_response tags."""


def tools_prompt(schemas: list[dict[str, Any]]) -> str:
    """What prompt mode adds to the system prompt: the tools' schemas and the call format."""
    functions = [tool["function"] for tool in schemas]
    return INSTRUCTIONS.format(schemas=json.dumps(functions, ensure_ascii=False))


def parse_calls(text: str | None) -> tuple[list[ToolCall], list[str]]:
    """The tool calls in a reply's text, and why any ``<tool_call>`` could not be read.

    Each ``<tool_call>`` holds one call ``{"name", "arguments"}`` or a list of them; a last
    one the reply ended inside (cut off) counts too. ``arguments`` may be an object or an
    already-encoded JSON string (kept as it is, like a native call's).
    """
    calls: list[ToolCall] = []
    problems: list[str] = []
    for block in _CALL.findall(text or ""):
        try:
            found = json.loads(block)
        except (ValueError, RecursionError) as exc:
            problems.append(f"a <tool_call> is not JSON ({_reason(exc)}): {block[:200]!r}")
            continue
        for call in found if isinstance(found, list) else [found]:
            parsed = _call(call)
            if isinstance(parsed, str):
                problems.append(parsed)
            else:
                calls.append(parsed)
    return calls, problems


def _call(value: Any) -> ToolCall | str:
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return f'a tool call needs a "name" and "arguments": {json.dumps(value)[:200]}'
    arguments = value.get("arguments", {})
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return ToolCall(name=value["name"], arguments=arguments)


def _reason(exc: Exception) -> str:
    return "nested too deeply" if isinstance(exc, RecursionError) else str(exc)


def results_message(results: list[tuple[str, str]]) -> dict[str, Any]:
    """The user message that returns tool results ``(name, content)``, in call order."""
    blocks = (
        "<tool_response>\n"
        + json.dumps({"name": name, "content": content}, ensure_ascii=False)
        + "\n</tool_response>"
        for name, content in results
    )
    return {"role": "user", "content": "\n".join(blocks)}


__all__ = ["INSTRUCTIONS", "parse_calls", "results_message", "tools_prompt"]
