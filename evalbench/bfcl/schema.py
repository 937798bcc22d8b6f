"""The BFCL v4 categories and the shapes every layer shares: items, calls, result lines.

Constants follow the pinned data (gorilla commit 6ea5797); nothing here reads a file.
The categories evalbench scores: the eleven single-turn Python ones (AST checker), Java and
JavaScript (AST with the official type conversions), the four multi-turn ones (calls
replayed in the official backends), the two web-search ones and the three memory ones
(answer check). Format sensitivity is the official non-scoring category.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

VERSION_PREFIX = "BFCL_v4"
PYTHON_NON_LIVE = ("simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance")
LIVE = (
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
    "live_relevance",
    "live_irrelevance",
)
PYTHON = PYTHON_NON_LIVE + LIVE
"""The eleven single-turn Python categories (the AST checker's), in leaderboard order."""
JAVA_JS = ("simple_java", "simple_javascript")
MULTI_TURN = (
    "multi_turn_base",
    "multi_turn_miss_func",
    "multi_turn_miss_param",
    "multi_turn_long_context",
)
WEB_SEARCH = ("web_search_base", "web_search_no_snippet")
MEMORY = ("memory_kv", "memory_vector", "memory_rec_sum")
"""The memory categories (official ``MEMORY_CATEGORY``): the same 155 questions asked after
the prerequisite conversations, with a key-value, a vector or a recursive-summary memory."""
MEMORY_SCENARIOS = ("student", "customer", "finance", "healthcare", "notetaker")
"""Official ``MEMORY_SCENARIO_NAME``, in the official order."""
CATEGORIES = PYTHON + JAVA_JS + MULTI_TURN + WEB_SEARCH + MEMORY
"""Every category evalbench scores, in the order its tables show them."""
FORMAT_SENSITIVITY = "format_sensitivity"
"""The official non-scoring category: 200 Python items asked in 26 prompt formats (live
systems in prompt mode only; not in ``all``, as officially not in ``all_scoring``)."""
FORMAT_SENSITIVITY_SIZE = 200
RELEVANCE_CATEGORIES = frozenset({"irrelevance", "live_irrelevance", "live_relevance"})
"""Categories scored on *whether* a call was made; they have no possible-answer file."""
GROUPS = {
    "all": CATEGORIES,
    "python": PYTHON,
    "single_turn": PYTHON + JAVA_JS,
    "non_live": PYTHON_NON_LIVE + JAVA_JS,
    "live": LIVE,
    "java_js": JAVA_JS,
    "multi_turn": MULTI_TURN,
    "web_search": WEB_SEARCH,
    "memory": MEMORY,
    "agentic": MEMORY + WEB_SEARCH,
}
"""Names of category groups (as the official ``--test-category`` collections, except that
``all`` is their ``all_scoring`` (format sensitivity is named on its own) and ``java_js`` is
their ``non_python``)."""
CATEGORY_SIZES = {
    "simple_python": 400,
    "multiple": 200,
    "parallel": 200,
    "parallel_multiple": 200,
    "irrelevance": 240,
    "live_simple": 258,
    "live_multiple": 1053,
    "live_parallel": 16,
    "live_parallel_multiple": 24,
    "live_relevance": 16,
    "live_irrelevance": 884,
    "simple_java": 100,
    "simple_javascript": 50,
    **dict.fromkeys(MULTI_TURN, 200),
    **dict.fromkeys(WEB_SEARCH, 100),
    **dict.fromkeys(MEMORY, 155),
}
"""Items per category in the pinned v4 data (the leaderboard weights live categories by these;
a memory category's count is its questions, as the official ``get_category_score``)."""
PUBLIC_SYSTEMS = {
    "glyphh-ada-1.1": "fc",
    "gemma4-e4b-toolcall-v02": "prompt",
    "AIREV-Agent-0.8B": "prompt",
}
"""Registered public result sets (``bfcl/result/<model>/<category>``) and their decode style."""
PYTHON_TYPES: dict[str, type] = {
    "string": str,
    "integer": int,
    "float": float,
    "boolean": bool,
    "array": list,
    "tuple": list,
    "dict": dict,
    "any": str,
}
"""JSON-schema type names of the function docs -> the Python type the checker requires."""
NESTED_TYPES = ("array", "tuple")
JAVA_TYPES: dict[str, type] = {
    "byte": int, "short": int, "integer": int, "float": float, "double": float, "long": int,
    "boolean": bool, "char": str, "Array": list, "ArrayList": list, "Set": set,
    "HashMap": dict, "Hashtable": dict, "Queue": list, "Stack": list, "String": str, "any": str,
}  # fmt: skip
"""Java type name -> the Python type its converted value must have (official
``JAVA_TYPE_CONVERSION``)."""
JS_TYPES: dict[str, type] = {
    "String": str, "integer": int, "float": float, "Bigint": int, "Boolean": bool,
    "dict": dict, "array": list, "any": str,
}  # fmt: skip
"""JavaScript type name -> Python type (official ``JS_TYPE_CONVERSION``)."""
CALL_FAILED = "evalbench:call_failed"
"""Error type of an item whose model call failed (an error record: counted wrong, shown apart,
left out of the written result files)."""


class BfclDataError(ValueError):
    """A BFCL question, answer or result file is malformed; the message names file and line."""


class Item(NamedTuple):
    """One BFCL test entry."""

    id: str
    category: str
    question: list[list[dict[str, Any]]]
    """Turns of ``{role, content}`` messages (single-turn categories have one turn)."""
    functions: list[dict[str, Any]]
    """The function docs offered to the model, as in the data file."""
    possible_answer: list[dict[str, dict[str, list[Any]]]] | None
    """``[{function: {param: [accepted values; "" = may be omitted]}}]``; None for relevance."""


class Call(NamedTuple):
    """One decoded function call: the name and the keyword arguments (positional are dropped)."""

    name: str
    args: dict[Any, Any]


class ResultLine(NamedTuple):
    """One line of an official ``BFCL_v4_<category>_result.json`` file."""

    id: str
    category: str
    result: Any
    """Prompting models: a string of Python calls; FC models: ``[{name: "<JSON args>"}]``."""
    input_token_count: Any = None
    output_token_count: Any = None
    latency: Any = None
    source: str = ""
    """The file it was read from ("" when built in memory), for error messages."""
    line: int = 0


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


class MemoryItem(NamedTuple):
    """One memory question (asked after its scenario's prerequisite conversations)."""

    id: str
    """Official id with the category, e.g. ``memory_kv_0-customer-0``."""
    category: str
    question: list[list[dict[str, Any]]]
    """The question's messages as in the data (one turn, one user message): the memory and
    answer-format system prompts are added when it is asked."""
    functions: list[dict[str, Any]]
    """The memory backend's function docs."""
    answers: list[str]
    """Accepted answers (any one, found as a whole word, passes)."""
    scenario: str
    backend: str
    """The official backend class, e.g. ``MemoryAPI_kv``."""
    source: str = ""
    """Where the answer is in the prerequisite conversations (the data's ``source``)."""


class MemoryPrereq(NamedTuple):
    """One prerequisite conversation: user turns whose facts the system should memorize."""

    id: str
    """Official id with the category, e.g. ``memory_kv_prereq_32-notetaker-0``."""
    category: str
    """``<memory category>_prereq`` (official: never scored)."""
    question: list[list[dict[str, Any]]]
    """One user message per turn."""
    scenario: str
    topic: str = ""


AnyItem = Item | MultiTurnItem | WebSearchItem | MemoryItem
"""An item of any scored category (Python, Java and JavaScript items are :class:`Item`)."""


def resolve_categories(categories: str | Iterable[str] | None) -> tuple[str, ...]:
    """Category names or group names (:data:`GROUPS`; None is ``all``) -> validated
    categories, each once, in the order given.

    Raises:
        BfclDataError: an unknown name.
    """
    if categories is None:
        return CATEGORIES
    names = [categories] if isinstance(categories, str) else list(categories)
    out: list[str] = []
    for name in names:
        if name in GROUPS:
            out.extend(GROUPS[name])
        elif name in CATEGORIES or name == FORMAT_SENSITIVITY:
            out.append(name)
        else:
            known = ", ".join((*GROUPS, *CATEGORIES, FORMAT_SENSITIVITY))
            raise BfclDataError(f"unknown BFCL category {name!r}; known: {known}")
    return tuple(dict.fromkeys(out))


def category_of(item_id: str) -> str:
    """The category encoded in a BFCL id (``live_simple_3-2-0`` -> ``live_simple``)."""
    return item_id.split(":")[0].rsplit("_", 1)[0]
