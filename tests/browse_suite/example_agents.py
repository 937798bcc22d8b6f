"""Agents for the browse-suite study tests (``provider: python`` entrypoints)."""

from __future__ import annotations

import asyncio
import json
import re
import urllib.request
from typing import Any


async def hang(task: dict[str, Any]) -> str:
    """Never answers in time (the runner cuts it at the task's max_time_seconds)."""
    await asyncio.sleep(120)
    return "{}"


def library_hours(task: dict[str, Any]) -> dict[str, Any]:
    """A user's own agent: reads its start page over plain HTTP and answers from it."""
    url = task["metadata"]["start_url"]
    with urllib.request.urlopen(url, timeout=10) as resp:
        page = resp.read().decode()
    hours = re.search(r"Wednesday</td><td>([^<]+)</td>", page)
    phone = re.search(r"Telephone ([\d ]+)\.", page)
    answer = {
        "wednesday_hours": hours.group(1) if hours else None,
        "phone": phone.group(1) if phone else None,
    }
    return {
        "answer": json.dumps(answer),
        "steps": [{"kind": "tool", "tool": "http_get", "arguments": url}],
    }
