"""BFCL v4: the Berkeley Function Calling Leaderboard's single-turn Python categories, and
(``more_categories``) its multi-turn, Java/JavaScript and web-search categories.

Patil et al., "The Berkeley Function Calling Leaderboard (BFCL): From Tool Use to Agentic
Evaluation of Large Language Models", ICML 2025. A model's function calls are scored by
comparing their *abstract syntax tree* with a list of accepted values per parameter. The
decoder and checker reimplement (they do not import or copy) the official semantics of
``bfcl-eval`` 2026.3.23 (gorilla commit 6ea5797); every verdict on three public result sets
equals the official checker's (oracle test).

The names most callers need::

    items = bfcl.load()                                      # questions + possible answers
    verdict = bfcl.check(items[0], bfcl.decode(raw, "prompt"))  # one output, official rules
    lines = bfcl.fetch_results("glyphh-ada-1.1")              # a public result set
    verdicts = bfcl.score_results(items, lines, system="g", style="fc")
    summary = bfcl.summarize(verdicts)                       # categories, overall, errors...
    result = bfcl.run(run)                                   # the whole study (notebook)

Also exported: :class:`BfclParams`, :class:`BfclResult`, :data:`PUBLIC_SYSTEMS` (the
registered result sets and their decoder styles), :data:`RELEVANCE_CATEGORIES` and
:data:`EXAMPLE_FIELDS` (the fields of a failure example the notebook shows).

Modules: ``schema`` (categories, items, calls), ``data`` (question/answer/result files,
published score tables), ``decode`` and ``checker`` (the official decoder and AST checker),
``scoring`` (prompts, tools, item scoring), ``metrics`` (tables over verdicts), ``records``
(params, the verdict record, the result), ``study`` (``run``), ``report`` (sentences,
tables, headlines), ``figures``, ``sim`` (simulated systems with known mistakes; only the
study uses it). Beyond single-turn Python: ``more_schema`` / ``more_data`` / ``more_scoring``
(items, files, scoring of the other categories), ``backends`` (the official multi-turn API
classes of an installed ``bfcl-eval``), ``replay`` and ``multi_turn`` (executing calls and the
official multi-turn check), ``conversation`` (live multi-turn), ``java_js``, ``web_search``,
``leaderboard`` (every column of the official score tables) and ``more_metrics`` (multi-turn
diagnostics beyond the official score).
"""

from __future__ import annotations

from .checker import check
from .data import fetch_results, load
from .decode import decode
from .metrics import EXAMPLE_FIELDS, summarize
from .records import BfclParams, BfclResult
from .schema import PUBLIC_SYSTEMS, RELEVANCE_CATEGORIES
from .scoring import score_results
from .study import run

__all__ = [
    "EXAMPLE_FIELDS",
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
