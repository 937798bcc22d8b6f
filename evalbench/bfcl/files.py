"""Reading the pinned BFCL files: JSON Lines rows, and the backends' function docs.

The lowest layer of the package's I/O: :mod:`.data` and :mod:`.memory` read their files
through it. Every malformed line is a :class:`~.schema.BfclDataError` naming its file and line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from evalbench import sources

from . import backends
from .schema import BfclDataError

Row = TypeVar("Row", bound=BaseModel)
WEB_SEARCH_CLASS = "WebSearchAPI"
DOC_FILES = {
    **backends.BACKENDS,
    **backends.MEMORY_BACKENDS,
    "MemoryAPI_vector": "memory_vector",
    WEB_SEARCH_CLASS: "web_search",
}
"""Class -> its function-doc file ``bfcl/func_doc/<name>`` (official
``MULTI_TURN_FUNC_DOC_FILE_MAPPING``)."""


def read_jsonl(path: Path, model: type[Row]) -> Iterator[tuple[int, Row]]:
    """``(line number, validated row)`` for every non-blank line of ``path``.

    Raises:
        BfclDataError: a line that is not JSON or not a ``model`` (naming file and line).
    """
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except (json.JSONDecodeError, RecursionError) as exc:
                raise BfclDataError(f"{path}:{number}: not a valid JSON line ({exc})") from exc
            try:
                yield number, model.model_validate(data)
            except ValidationError as exc:
                raise BfclDataError(f"{path}:{number}: {first_error(exc)}") from exc


def first_error(exc: ValidationError) -> str:
    """The first validation error as ``field 'a.b': message``."""
    err = exc.errors()[0]
    where = ".".join(str(part) for part in err["loc"]) or "line"
    return f"field {where!r}: {err['msg']}"


class _Doc(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str
    description: str
    parameters: dict[str, Any]


@cache
def _docs(cls: str) -> tuple[dict[str, Any], ...]:
    path = sources.fetch(f"bfcl/func_doc/{DOC_FILES[cls]}", progress=False)
    return tuple(row.model_dump() for _, row in read_jsonl(path, _Doc))


def function_docs(cls: str) -> list[dict[str, Any]]:
    """The function docs of one backend class (``multi_turn_func_doc``), in file order."""
    return [dict(doc) for doc in _docs(cls)]
