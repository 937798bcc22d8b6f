"""BFCL v4: the Berkeley Function Calling Leaderboard's single-turn Python, Java/JavaScript,
multi-turn, web-search and memory categories, scored item by item as the official checker does.

Patil et al., "The Berkeley Function Calling Leaderboard (BFCL): From Tool Use to Agentic
Evaluation of Large Language Models", ICML 2025. A model's function calls are scored by
comparing their *abstract syntax tree* with a list of accepted values per parameter;
multi-turn conversations are replayed in the official backend classes and checked by the
resulting state and responses; web-search and memory answers by the final message (memory
questions are asked after prerequisite conversations that fill the memory). The decoders and
checkers reimplement (they do not import or copy) the official semantics of ``bfcl-eval``
2026.3.23 (gorilla commit 6ea5797); every verdict on the public result sets equals the
official checker's (oracle tests).

The names most callers need::

    items = bfcl.load("python")                              # questions + possible answers
    verdict = bfcl.check(items[0], bfcl.decode(raw, "prompt"))  # one output, official rules
    lines = bfcl.fetch_results("glyphh-ada-1.1", "python")    # a public result set
    verdicts = bfcl.score_results(items, lines, system="g", style="fc")
    summary = bfcl.summarize(verdicts)                       # categories, overall, errors...
    result = bfcl.run(run)                                   # the whole study (notebook)

Also exported: :class:`BfclParams`, :class:`BfclResult`, :data:`PUBLIC_SYSTEMS` (the
registered result sets and their decoder styles), :data:`GROUPS` (the category groups
``categories:`` accepts), :data:`RELEVANCE_CATEGORIES` and :data:`EXAMPLE_FIELDS` (the fields
of a failure example the notebook shows).

Modules: ``schema`` (categories and groups, items, calls), ``data`` (question/answer/result
files, published score tables), ``decode`` and ``checker`` (the official Python decoder and
AST checker), ``java_js`` (Java/JavaScript AST check), ``backends`` (the official multi-turn
API classes of an installed ``bfcl-eval``), ``replay`` and ``multi_turn`` (executing calls,
the official multi-turn check), ``web_search`` (answer check), ``memory`` (memory questions,
prerequisite conversations, prompts, the chains live systems hold), ``files`` (JSON Lines
rows, function docs), ``scoring`` (prompts, tools,
scoring result lines of any category), ``conversation`` (live multi-turn),
``python_agents`` and ``command_agents`` (users' Python functions and programs turn by
turn), ``format_sensitivity`` (the 26 official prompt formats), ``metrics``
(tables over verdicts), ``multi_turn_metrics`` (multi-turn diagnostics beyond the official
score), ``leaderboard`` (every column of the official score tables), ``records`` (params,
the verdict record, the result), ``study`` (``run``), ``report`` (sentences, tables,
headlines), ``figures``, ``sim`` (simulated systems with known mistakes; only the study
uses it).
"""

from __future__ import annotations

from .checker import check
from .data import fetch_results, load
from .decode import decode
from .metrics import EXAMPLE_FIELDS, summarize
from .records import BfclParams, BfclResult
from .schema import GROUPS, PUBLIC_SYSTEMS, RELEVANCE_CATEGORIES
from .scoring import score_results
from .study import run

__all__ = [
    "EXAMPLE_FIELDS",
    "GROUPS",
    "PUBLIC_SYSTEMS",
    "RELEVANCE_CATEGORIES",
    "BfclParams",
    "BfclResult",
    "check",
    "decode",
    "fetch_results",
    "load",
    "run",
    "score_results",
    "summarize",
]
