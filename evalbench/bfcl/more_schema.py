"""The BFCL v4 categories beyond the eleven single-turn Python ones, and their item shapes.

Multi-turn (four categories of 200), Java and JavaScript AST (100 and 50) and web search
(two categories of 100 sharing one question file), as in the pinned data (gorilla commit
6ea5797). Java and JavaScript items are :class:`~.schema.Item`; the others have their own
types here. Nothing here reads a file.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

from .schema import BfclDataError

MULTI_TURN = (
    "multi_turn_base",
    "multi_turn_miss_func",
    "multi_turn_miss_param",
    "multi_turn_long_context",
)
JAVA_JS = ("simple_java", "simple_javascript")
WEB_SEARCH = ("web_search_base", "web_search_no_snippet")
MORE_CATEGORIES = JAVA_JS + MULTI_TURN + WEB_SEARCH
"""The categories this module family scores, in leaderboard order."""
MORE_GROUPS = {
    "more": MORE_CATEGORIES,
    "multi_turn": MULTI_TURN,
    "java_js": JAVA_JS,
    "web_search": WEB_SEARCH,
}
MORE_SIZES = {
    "simple_java": 100,
    "simple_javascript": 50,
    **dict.fromkeys(MULTI_TURN, 200),
    **dict.fromkeys(WEB_SEARCH, 100),
}
"""Items per category in the pinned data."""
NOT_SCORED = {
    "memory_kv": "needs the memory backends (faiss, sentence-transformers) and their "
    "prerequisite conversations",
    "memory_vector": "needs the memory backends (faiss, sentence-transformers) and their "
    "prerequisite conversations",
    "memory_rec_sum": "needs the memory backends and their prerequisite conversations",
    "format_sensitivity": "its 26 prompt formats are asked live; no public result set has them",
}
"""BFCL v4 categories evalbench does not score, and why."""


class MultiTurnItem(NamedTuple):
    """One multi-turn test entry with its ground truth."""

    id: str
    category: str
    question: list[list[dict[str, Any]]]
    """User messages per turn; an empty turn is where a held-out function comes back
    (``miss_func``)."""
    functions: list[dict[str, Any]]
    """The docs of every involved class, in the official order (held-out ones included)."""
    initial_config: dict[str, Any]
    involved_classes: list[str]
    ground_truth: list[list[str]]
    """Per turn, the ground-truth call strings (e.g. ``cd(folder='temp')``)."""
    missed_function: dict[int, list[str]]
    """Turn -> functions held out until that turn (``miss_func``; else empty)."""

    @property
    def long_context(self) -> bool:
        """The official backend flag (``long_context`` in the category)."""
        return "long_context" in self.category


class WebSearchItem(NamedTuple):
    """One web-search test entry (multi-hop question; the answer is a short string)."""

    id: str
    category: str
    question: list[list[dict[str, Any]]]
    functions: list[dict[str, Any]]
    answers: list[str]
    """Accepted answers (any one, found as a whole word, passes)."""


def resolve_more(categories: str | Iterable[str] | None) -> tuple[str, ...]:
    """Category names or groups (``more``, ``multi_turn``, ``java_js``, ``web_search``) ->
    validated categories; None is all of :data:`MORE_CATEGORIES`."""
    if categories is None:
        return MORE_CATEGORIES
    names = [categories] if isinstance(categories, str) else list(categories)
    out: list[str] = []
    for name in names:
        if name in MORE_GROUPS:
            out.extend(MORE_GROUPS[name])
        elif name in MORE_CATEGORIES:
            out.append(name)
        else:
            known = ", ".join((*MORE_GROUPS, *MORE_CATEGORIES))
            raise BfclDataError(f"unknown BFCL category {name!r}; known: {known}")
    return tuple(dict.fromkeys(out))
