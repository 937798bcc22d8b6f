"""Reading a cell's run folder: its per-item outcomes, usage and latency (the I/O edge).

A cell folder is an ordinary run folder (``manifest.json`` + ``records/``), read the way
``evalbench compare`` reads runs (:func:`evalbench.importers.read_run_folder`), so a sweep's
paired numbers are ``compare``'s on the same folders.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from evalbench.importers import OutcomeError, RunOutcomes, read_run_folder
from evalbench.records import iter_jsonl, open_in_folder

CALL_FIELDS = frozenset({"system", "request_key", "prompt_tokens"})
"""The fields that make a record line a model call or an agent task (as usage counts them)."""


class CellData(NamedTuple):
    """What the sweep reads of one finished cell."""

    outcomes: RunOutcomes | None
    """Per-item outcomes (``None`` when they could not be read: ``problem`` says why)."""
    usage: list[dict[str, Any]]
    """Per system: calls, errors, tokens and cost of every call recorded (a failed cell's too)."""
    latency: dict[str, float]
    """Mean seconds per call (agents: per task) by system."""
    problem: str | None = None


def read_cell(folder: Path, usage: list[dict[str, Any]]) -> CellData:
    """A cell folder's outcomes and latency (from its records), with its ``usage`` rows."""
    latency = call_latency(folder)
    try:
        return CellData(read_run_folder(folder), usage, latency)
    except OutcomeError as exc:
        return CellData(None, usage, latency, str(exc))


def call_latency(folder: Path) -> dict[str, float]:
    """Mean ``latency_s`` (calls) or ``wall_s`` (agent tasks) per system over every record file
    of calls in ``records/`` (a file is one of calls when its first line has their fields)."""
    seconds: dict[str, list[float]] = defaultdict(list)
    for path in sorted((folder / "records").glob("*.jsonl")):
        if not _holds_calls(path):
            continue
        for _, row in iter_jsonl(path, error=OutcomeError):
            value = row.get("latency_s", row.get("wall_s"))
            if isinstance(value, int | float) and math.isfinite(value) and value >= 0:
                seconds[str(row["system"])].append(float(value))
    return {system: sum(v) / len(v) for system, v in seconds.items() if v}


def _holds_calls(path: Path) -> bool:
    with open(path, encoding="utf-8", errors="replace") as fh:  # torn by a kill: no call
        first = fh.readline()
    try:
        row = json.loads(first)
    except ValueError:
        return False
    return isinstance(row, dict) and set(row) >= CALL_FIELDS


IN_FLIGHT = "in_flight.jsonl"
"""A cell folder's note of every request it sent to a provider (a cache miss), one line each,
written before the request leaves: after a kill, the requests sent and never answered are
known (paid, most likely, and asked again when the cell resumes)."""


def note_sent(folder: Path, system: str, key: str) -> None:
    """Append ``(system, request key)`` to the cell's :data:`IN_FLIGHT` note."""
    with open_in_folder(folder / IN_FLIGHT, "a") as fh:
        fh.write(json.dumps({"system": system, "key": key}) + "\n")


def unanswered(folder: Path, cached: Callable[[str], bool]) -> list[list[str]]:
    """``[system, request key]`` of every request the cell's :data:`IN_FLIGHT` note says was
    sent but that no record of the folder holds and ``cached`` does not know (its answer never
    came back, or came back and was lost with the process). A line torn by a kill is a request
    that was not sent yet: skipped."""
    path = folder / IN_FLIGHT
    if not path.is_file():
        return []
    answered = recorded_tokens(folder)
    out = []
    with open(path, encoding="utf-8", errors="replace") as fh:  # a torn line: not JSON
        for line in fh:
            try:
                row = json.loads(line)
                system, key = str(row["system"]), str(row["key"])
            except (ValueError, TypeError, KeyError):
                continue
            if key not in answered and not cached(key):
                out.append([system, key])
    return out


def recorded_tokens(folder: Path) -> dict[str, tuple[int, int]]:
    """Request key -> (prompt, completion) tokens of every call recorded in ``records/``."""
    found: dict[str, tuple[int, int]] = {}
    for path in sorted((folder / "records").glob("*.jsonl")):
        if not _holds_calls(path):
            continue
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:  # a line torn by a kill (inside a character too) is no record
                try:
                    row = json.loads(line)
                    key = row.get("request_key")
                except (ValueError, AttributeError):
                    continue
                if key:
                    tokens = (row.get("prompt_tokens") or 0, row.get("completion_tokens") or 0)
                    found[str(key)] = (int(tokens[0]), int(tokens[1]))
    return found
