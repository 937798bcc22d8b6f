"""The tool interface of evalbench's reference agent, and the call path the loop uses.

A :class:`Tool` is a name, an OpenAI function schema and a ``run(arguments, ctx)``.
:func:`call_tool` is the one entry point for the agent loop: it parses the model's JSON
arguments, checks them against the schema, runs the tool and caps the result at
``ctx.char_budget``; a bad call becomes an ``"error: ..."`` result, never an exception.
:func:`prepare_workdir` makes the task's private working dir holding copies of its
attachments.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from evalbench import processes
from evalbench.records import parse_json

from .documents import DocumentIndex
from .sandbox import SandboxLimits

PAGE_NOTE_ROOM = 200  # characters of a page result kept free for its header and footer
JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


class ToolError(Exception):
    """A bad call (unknown file, bad arguments): the message goes back to the model."""


class ToolContext(NamedTuple):
    """What a tool may use while it answers one task."""

    workdir: Path  # the task's private temporary working dir
    attachments: dict[str, Path]  # attachment name -> its copy inside workdir
    documents: DocumentIndex | None  # for search/open_page (None when not configured)
    char_budget: int = 8000  # max characters any tool result returns
    python: SandboxLimits = SandboxLimits()


class Tool(NamedTuple):
    """One tool the model may call."""

    name: str
    schema: dict  # an OpenAI function tool: {"type": "function", "function": {...}}
    run: Callable[[dict[str, Any], ToolContext], str]  # raises ToolError for a bad call


def function_schema(
    name: str, description: str, properties: dict[str, dict], required: Sequence[str]
) -> dict:
    """An OpenAI function-tool schema that accepts only the listed properties."""
    parameters = {
        "type": "object",
        "properties": properties,
        "required": list(required),
        "additionalProperties": False,
    }
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


def call_tool(tool: Tool, arguments_json: str, ctx: ToolContext) -> tuple[str, str | None]:
    """Run one model tool call.

    Args:
        tool: the tool the model named.
        arguments_json: the call's arguments as the model wrote them (a JSON object).
        ctx: the task's context.

    Returns:
        ``(result, error)``: the text for the model (capped at ``ctx.char_budget``) and
        the error message when the call was bad (the result is then ``"error: ..."``).
    """
    try:
        arguments = parse_arguments(arguments_json)
        check_arguments(arguments, tool.schema["function"]["parameters"])
        result = tool.run(arguments, ctx)
    except ToolError as error:
        message = str(error)
        return truncate(f"error: {message}", ctx.char_budget), message
    return truncate(result, ctx.char_budget), None


def parse_arguments(arguments_json: str | None) -> dict[str, Any]:
    """The JSON object the model sent (empty input is no arguments)."""
    if arguments_json is None or not arguments_json.strip():
        return {}
    try:
        arguments = parse_json(arguments_json)
    except json.JSONDecodeError as error:
        raise ToolError(f"arguments are not valid JSON ({error})") from None
    if not isinstance(arguments, dict):
        raise ToolError(f"arguments must be a JSON object, got {type(arguments).__name__}")
    return arguments


def check_arguments(arguments: Mapping[str, Any], parameters: Mapping[str, Any]) -> None:
    """Required properties present, no unknown ones, and each of the declared type."""
    properties = parameters.get("properties", {})
    missing = [name for name in parameters.get("required", []) if name not in arguments]
    if missing:
        raise ToolError(f"missing required argument(s): {', '.join(missing)}")
    unknown = sorted(set(arguments) - set(properties))
    if unknown and parameters.get("additionalProperties") is False:
        known = ", ".join(properties) or "none"
        raise ToolError(f"unknown argument(s): {', '.join(unknown)} (known: {known})")
    for name, value in arguments.items():
        if name in properties:
            check_value(name, value, properties[name])


def check_value(name: str, value: Any, spec: Mapping[str, Any]) -> None:
    """One argument against its ``type`` and ``minimum`` (bool is not a number here)."""
    kind = spec.get("type")
    numeric = kind in ("integer", "number")
    wrong_type = kind in JSON_TYPES and not isinstance(value, JSON_TYPES[kind])
    if wrong_type or (numeric and isinstance(value, bool)):
        raise ToolError(f"argument {name!r} must be of type {kind}, got {json.dumps(value)}")
    if numeric and "minimum" in spec and value < spec["minimum"]:
        raise ToolError(f"argument {name!r} must be at least {spec['minimum']}, got {value}")


def truncate(text: str, budget: int) -> str:
    """``text`` cut to ``budget`` characters, saying how many were left out."""
    if len(text) <= budget:
        return text
    return f"{text[:budget]}… [{len(text) - budget} more characters]"


def page(label: str, text: str, start: int, max_chars: int, again: str) -> str:
    """A window of ``text`` from ``start`` with a header and a footer saying what remains.

    Args:
        label: what the text is (a file or document name), shown in the header.
        text: the whole text.
        start: the first character to show.
        max_chars: how many characters to show at most.
        again: how to ask for more; ``{end}`` becomes the next start (no other braces
            are interpreted, so names may hold any character).
    """
    if start > len(text) or (start == len(text) and text):
        raise ToolError(f"start={start} is past the end of {label} ({len(text)} characters)")
    end = min(len(text), start + max(max_chars, 1))
    header = f"[{label}: characters {start}-{end} of {len(text)}]"
    remaining = len(text) - end
    footer = (
        f"[{remaining} more characters: call {again.replace('{end}', str(end))}]"
        if remaining
        else "[end]"
    )
    return f"{header}\n{text[start:end]}\n{footer}"


def page_size(ctx: ToolContext, max_chars: int | None) -> int:
    """Characters a page may hold: what was asked, within the budget minus the notes."""
    room = max(ctx.char_budget - PAGE_NOTE_ROOM, 1)
    return room if max_chars is None else min(max_chars, room)


def safe_name(name: str) -> str:
    """A file name for ``name``: no path separators, no leading dots, never empty."""
    cleaned = re.sub(r"[/\\\x00]", "_", name).lstrip(".").strip()
    return cleaned or "attachment"


def prepare_workdir(
    attachments: Mapping[str, Path], root: Path | None = None
) -> tuple[Path, dict[str, Path]]:
    """A fresh temporary dir holding copies of the attachments, removed when this process
    ends however it ends (:func:`evalbench.processes.scratch_dir`; discard it when done).

    Args:
        attachments: attachment name -> the original file (never modified).
        root: where to create the dir (default: the system's temp dir).

    Returns:
        ``(workdir, {name: copy})``; each copy is ``workdir/<safe_name(name)>``.
    """
    names = {name: safe_name(name) for name in attachments}
    clashes = sorted(n for n in set(names.values()) if list(names.values()).count(n) > 1)
    if clashes:
        raise ValueError(f"attachment names collide once made safe: {clashes}")
    for name, source in attachments.items():
        if not Path(source).is_file():
            raise FileNotFoundError(f"attachment {name!r}: {source} is not a file")
    workdir = processes.scratch_dir("evalbench-task-", root)  # goes with this process
    copies = {}
    for name, source in attachments.items():
        copies[name] = workdir / names[name]
        shutil.copyfile(source, copies[name])
    return workdir, copies
