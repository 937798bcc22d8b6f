"""How many alert lines a log or a page lists: a check may fire in hundreds of places (every
system × metric × slice), and the run's manifest keeps every one."""

from __future__ import annotations

from collections.abc import Sequence

MAX_SHOWN = 10
"""Lines a page (index, trends, summary) lists per run; ``evalbench watch`` lists twice as
many."""


def shown(lines: Sequence[str], limit: int = MAX_SHOWN, prefix: str = "") -> list[str]:
    """The first ``limit`` of ``lines``, then (``prefix`` first) one line saying how many
    more there are and where they all are."""
    if len(lines) <= limit:
        return list(lines)
    more = f"{prefix}… and {len(lines) - limit} more (every one in the run's manifest.json, alerts)"
    return [*lines[:limit], more]
