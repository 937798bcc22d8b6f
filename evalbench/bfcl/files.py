"""Reading BFCL files: where each file is, JSON Lines rows, and the backends' function docs.

The lowest layer of the package's I/O: :mod:`.data` and :mod:`.memory` read their files
through it. A file is named as in ``sources.tsv`` (``bfcl/question/<category>``, ...) and read
from the pinned public files, or, with ``source="demo"``, from evalbench's own demo suite in
BFCL's format (:func:`demo_path`; not BFCL data). Every malformed line is a
:class:`~.schema.BfclDataError` naming its file and line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from evalbench import sources
from evalbench.records import text_lines

from . import backends
from .schema import (
    CATEGORIES,
    FORMAT_SENSITIVITY,
    MEMORY,
    VERSION_PREFIX,
    WEB_SEARCH,
    BfclDataError,
)

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
DEMO = "demo"
"""The ``source`` (params ``data: demo``) of evalbench's own demo suite (:func:`demo_path`)."""
_LAYOUT = {
    "question": f"{VERSION_PREFIX}_{{}}.json",
    "possible_answer": f"possible_answer/{VERSION_PREFIX}_{{}}.json",
    "func_doc": "multi_turn_func_doc/{}.json",
    "memory_prereq": "memory_prereq_conversation/memory_{}.json",
    "format_sensitivity": f"{VERSION_PREFIX}_format_sensitivity.json",
}
"""Registered name ``bfcl/<kind>/<name>`` -> its place in the official ``bfcl_eval/data``
layout, which the demo suite keeps."""


def demo_path() -> Path:
    """``evalbench/demo/bfcl``: evalbench's own demo suite in BFCL's file format (written for
    evalbench, not BFCL data; see its README), laid out as the official ``bfcl_eval/data``."""
    return Path(str(resources.files("evalbench").joinpath("demo").joinpath("bfcl")))


def data_file(name: str, source: str | Path = "registry") -> Path:
    """The file registered as ``name`` (e.g. ``bfcl/question/multi_turn_base``): the pinned
    public file (mirror, cache or download), or with ``source="demo"`` the demo suite's file
    of the same official name.

    Raises:
        BfclDataError: the demo suite has no such file (the message says which categories it
            holds).
        DataUnavailable: the pinned file is unreachable (:func:`evalbench.sources.fetch`).
    """
    if source != DEMO:
        return sources.fetch(name, progress=False)
    kind, _, rest = name.removeprefix("bfcl/").partition("/")
    relative = _LAYOUT[kind].format(rest) if kind in _LAYOUT else ""
    path = demo_path() / relative
    if not relative or not path.is_file():
        raise BfclDataError(
            f"evalbench's BFCL demo suite has no file for {name!r} (it holds "
            f"{', '.join(demo_categories())}); use data: registry for the pinned BFCL files"
        )
    sources.record_read(path, f"bfcl demo/{relative}")
    return path


def demo_categories() -> list[str]:
    """The categories the demo suite holds (those its files give items), in the order of
    :data:`~.schema.CATEGORIES`, then ``format_sensitivity`` when it has its selection."""
    prefix = f"{VERSION_PREFIX}_"
    files = {p.name.removeprefix(prefix).removesuffix(".json") for p in demo_path().glob("*.json")}
    docs = {p.stem for p in (demo_path() / "multi_turn_func_doc").glob("*.json")}
    files |= {cat for cat in MEMORY if "memory" in files and cat in docs}  # tools needed
    files |= set(WEB_SEARCH) if "web_search" in files else set()
    return [cat for cat in (*CATEGORIES, FORMAT_SENSITIVITY) if cat in files]


def read_jsonl(path: Path, model: type[Row]) -> Iterator[tuple[int, Row]]:
    """``(line number, validated row)`` for every non-blank line of ``path``.

    Raises:
        BfclDataError: a line that is not JSON or not a ``model`` (naming file and line).
    """
    for number, line in text_lines(path, error=BfclDataError):
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
def _docs(cls: str, source: str) -> tuple[dict[str, Any], ...]:
    path = data_file(f"bfcl/func_doc/{DOC_FILES[cls]}", source)
    return tuple(row.model_dump() for _, row in read_jsonl(path, _Doc))


def function_docs(cls: str, source: str | Path = "registry") -> list[dict[str, Any]]:
    """The function docs of one backend class (``multi_turn_func_doc``), in file order: the
    pinned ones, or the demo suite's with ``source="demo"`` (any other source: pinned)."""
    return [dict(doc) for doc in _docs(cls, DEMO if source == DEMO else "registry")]
