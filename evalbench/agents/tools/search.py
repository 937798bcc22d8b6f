"""The reference agent's offline search tools over a :class:`~.documents.DocumentIndex`:
``search`` (BM25 hits with snippets) and ``open_page`` (a document a page at a time)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .base import Tool, ToolContext, ToolError, function_schema, page, page_size
from .documents import DocumentIndex, Hit, UnknownDocument


def format_hits(query: str, hits: Sequence[Hit]) -> str:
    """The search tool's text: one numbered entry per hit."""
    if not hits:
        return f"no documents match {query!r}"
    noun = "result" if len(hits) == 1 else "results"
    lines = [f"{len(hits)} {noun} for {query!r} (open one with open_page):"]
    for rank, hit in enumerate(hits, start=1):
        lines.append(f"{rank}. id: {hit.id} | {hit.title} (score {hit.score:.3f})")
        lines.append(f"   {hit.snippet}")
    return "\n".join(lines)


def _documents(ctx: ToolContext) -> DocumentIndex:
    if ctx.documents is None:
        raise ToolError("no document collection is configured for this task")
    return ctx.documents


def _run_search(arguments: dict[str, Any], ctx: ToolContext) -> str:
    query = arguments["query"]
    return format_hits(query, _documents(ctx).search(query, arguments.get("k", 5)))


def _run_open_page(arguments: dict[str, Any], ctx: ToolContext) -> str:
    try:
        doc = _documents(ctx).get(arguments["id"])
    except UnknownDocument as error:
        raise ToolError(str(error)) from None
    label = f"{doc.id} | {doc.title}" + (f" | {doc.url}" if doc.url else "")
    again = f"open_page with id={doc.id!r} and start={{end}}"
    return page(label, doc.text, arguments.get("start", 0), page_size(ctx, None), again)


SEARCH = Tool(
    name="search",
    schema=function_schema(
        "search",
        "Search the document collection (BM25 keyword search). Returns ranked document "
        "ids, titles and snippets; read a document with open_page.",
        {
            "query": {"type": "string", "description": "keywords to search for"},
            "k": {"type": "integer", "minimum": 1, "description": "how many results (default 5)"},
        },
        ["query"],
    ),
    run=_run_search,
)
OPEN_PAGE = Tool(
    name="open_page",
    schema=function_schema(
        "open_page",
        "Read a document of the collection by its id (from search), a page at a time: "
        "the result says how many characters remain and which start to ask for next.",
        {
            "id": {"type": "string", "description": "the document id from search"},
            "start": {
                "type": "integer",
                "minimum": 0,
                "description": "first character (default 0)",
            },
        },
        ["id"],
    ),
    run=_run_open_page,
)
