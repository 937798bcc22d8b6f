"""BFCL files of the multi-turn, Java/JavaScript and web-search categories (the I/O edge).

Questions, possible answers and the multi-turn function docs come from the pinned files of
``sources.tsv`` (gorilla commit 6ea5797); result files are the official
``BFCL_v4_<category>_result.json`` JSON Lines (a multi-turn ``result`` is a list of turns,
each a list of steps, each the model's output of that step). Every malformed line is a
:class:`~.schema.BfclDataError` naming its file and line.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from evalbench import sources
from evalbench.records import to_json, write_atomic

from . import backends
from .data import _read_jsonl, _result_json, result_filename
from .more_schema import (
    JAVA_JS,
    MULTI_TURN,
    WEB_SEARCH,
    MultiTurnItem,
    WebSearchItem,
    resolve_more,
)
from .schema import BfclDataError, Item, ResultLine, category_of

JAVA_TYPES = frozenset(
    {"byte", "short", "integer", "float", "double", "long", "boolean", "char", "Array",
     "ArrayList", "Set", "HashMap", "Hashtable", "Queue", "Stack", "String", "any"}
)  # fmt: skip
"""Type names of the Java function docs (official ``JAVA_TYPE_CONVERSION``)."""
JS_TYPES = frozenset({"String", "integer", "float", "Bigint", "Boolean", "dict", "array", "any"})
"""Type names of the JavaScript function docs (official ``JS_TYPE_CONVERSION``)."""
WEB_SEARCH_CLASS = "WebSearchAPI"


class _Row(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str
    question: list[list[dict[str, Any]]]


class _MultiTurnRow(_Row):
    initial_config: dict[str, Any]
    involved_classes: list[str]
    missed_function: dict[str, list[str]] = {}


class _AstRow(_Row):
    function: list[dict[str, Any]]


class _Answer(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str
    ground_truth: list[Any]


class _ResultRow(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str
    result: Any
    input_token_count: Any = None
    output_token_count: Any = None
    latency: Any = None


def load_more(categories: str | Iterable[str] | None = None) -> list[Any]:
    """Load items of the multi-turn, Java/JavaScript and web-search categories.

    Args:
        categories: names or groups (``more``, ``multi_turn``, ``java_js``, ``web_search``);
            None for all of :data:`~.more_schema.MORE_CATEGORIES`.

    Returns:
        Items in file order, category by category: :class:`~.more_schema.MultiTurnItem`,
        :class:`~.schema.Item` (Java/JavaScript) or :class:`~.more_schema.WebSearchItem`.

    Raises:
        BfclDataError: an unknown category or a malformed line (naming file and line).
    """
    items: list[Any] = []
    for cat in resolve_more(categories):
        if cat in MULTI_TURN:
            items.extend(_multi_turn(cat))
        elif cat in JAVA_JS:
            items.extend(_java_js(cat))
        else:
            items.extend(_web_search(cat))
    return items


def _answers(name: str) -> tuple[Path, dict[str, tuple[int, list[Any]]]]:
    path = sources.fetch(f"bfcl/possible_answer/{name}", progress=False)
    out: dict[str, tuple[int, list[Any]]] = {}
    for number, row in _read_jsonl(path, _Answer):
        if row.id in out:
            raise BfclDataError(f"{path}:{number}: duplicate id {row.id!r}")
        out[row.id] = (number, row.ground_truth)
    return path, out


def _truth(answers: dict[str, tuple[int, list[Any]]], path: Path, item_id: str) -> list[Any]:
    if item_id not in answers:
        raise BfclDataError(f"{path}: no possible answer for id {item_id!r}")
    return answers[item_id][1]


def _multi_turn(cat: str) -> list[MultiTurnItem]:
    question = sources.fetch(f"bfcl/question/{cat}", progress=False)
    answer_path, answers = _answers(cat)
    items = []
    for number, row in _read_jsonl(question, _MultiTurnRow):
        where = f"{question}:{number}"
        if category_of(row.id) != cat:
            raise BfclDataError(f"{where}: id {row.id!r} is not a {cat} id")
        truth = _truth(answers, answer_path, row.id)
        if len(truth) != len(row.question) or not all(
            isinstance(turn, list) and all(isinstance(c, str) for c in turn) for turn in truth
        ):
            raise BfclDataError(
                f"{answer_path}:{answers[row.id][0]}: ground_truth must be one list of call "
                f"strings per turn ({len(row.question)} turns)"
            )
        unknown = [c for c in row.involved_classes if c not in backends.BACKENDS]
        if unknown:
            raise BfclDataError(f"{where}: unknown involved classes {unknown}")
        missed = {int(turn): names for turn, names in row.missed_function.items()}
        docs = [doc for cls in row.involved_classes for doc in function_docs(cls)]
        items.append(
            MultiTurnItem(
                row.id,
                cat,
                row.question,
                docs,
                row.initial_config,
                row.involved_classes,
                truth,
                missed,
            )
        )
    return items


def _java_js(cat: str) -> list[Item]:
    question = sources.fetch(f"bfcl/question/{cat}", progress=False)
    answer_path, answers = _answers(cat)
    known = JAVA_TYPES if cat == "simple_java" else JS_TYPES
    items = []
    for number, row in _read_jsonl(question, _AstRow):
        where = f"{question}:{number}"
        if category_of(row.id) != cat:
            raise BfclDataError(f"{where}: id {row.id!r} is not a {cat} id")
        for doc in row.function:
            _check_doc(doc, known, where)
        truth = _truth(answers, answer_path, row.id)
        items.append(Item(row.id, cat, row.question, row.function, truth))
    return items


def _check_doc(doc: dict[str, Any], known: frozenset[str], where: str) -> None:
    props = doc.get("parameters", {}).get("properties")
    if not isinstance(doc.get("name"), str) or not isinstance(props, dict):
        raise BfclDataError(f"{where}: a function doc needs 'name' and 'parameters.properties'")
    for name, spec in props.items():
        kind = spec.get("type") if isinstance(spec, dict) else None
        if kind not in known:
            raise BfclDataError(
                f"{where}: function {doc['name']!r} parameter {name!r}: unknown type {kind!r}"
            )


def _web_search(cat: str) -> list[WebSearchItem]:
    question = sources.fetch("bfcl/question/web_search", progress=False)
    answer_path, answers = _answers("web_search")
    docs = function_docs(WEB_SEARCH_CLASS)
    items = []
    for number, row in _read_jsonl(question, _Row):
        if category_of(row.id) != "web_search":
            raise BfclDataError(f"{question}:{number}: id {row.id!r} is not a web_search id")
        truth = _truth(answers, answer_path, row.id)
        if not truth or not all(isinstance(a, str) for a in truth):
            raise BfclDataError(f"{answer_path}: ground_truth of {row.id!r} must be strings")
        # both categories ask the same questions; the id names the category (official)
        item_id = row.id.replace("web_search", cat)
        items.append(WebSearchItem(item_id, cat, row.question, docs, truth))
    return items


@cache
def _docs(cls: str) -> tuple[dict[str, Any], ...]:
    name = backends.BACKENDS.get(cls) or {WEB_SEARCH_CLASS: "web_search"}[cls]
    path = sources.fetch(f"bfcl/func_doc/{name}", progress=False)
    return tuple(row.model_dump() for _, row in _read_jsonl(path, _Doc))


class _Doc(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str
    description: str
    parameters: dict[str, Any]


def function_docs(cls: str) -> list[dict[str, Any]]:
    """The function docs of one backend class (``multi_turn_func_doc``), in file order."""
    return [dict(doc) for doc in _docs(cls)]


# --------------------------------------------------------------------------- result files


def read_more_results(path: Path | str, category: str) -> list[ResultLine]:
    """Read an official result file of one of these categories.

    Raises:
        BfclDataError: a bad JSON line, a missing field, an id of another category or a
            duplicated id (naming file and line).
    """
    path = Path(path)
    lines: list[ResultLine] = []
    seen: dict[str, int] = {}
    for number, row in _read_jsonl(path, _ResultRow):
        if category_of(row.id) != category:
            raise BfclDataError(f"{path}:{number}: id {row.id!r} is not a {category} id")
        if row.id in seen:
            raise BfclDataError(f"{path}:{number}: duplicate id {row.id!r} (line {seen[row.id]})")
        seen[row.id] = number
        lines.append(
            ResultLine(
                row.id,
                category,
                row.result,
                row.input_token_count,
                row.output_token_count,
                row.latency,
                str(path),
                number,
            )
        )
    return lines


def fetch_more_results(
    model: str, categories: str | Iterable[str] | None = None
) -> list[ResultLine]:
    """Read a registered public result set's files of these categories.

    Raises:
        BfclDataError: a named category without a registered file for ``model``.
    """
    registered = {n.rsplit("/", 1)[1] for n in sources.names(f"bfcl/result/{model}/")}
    wanted = resolve_more(categories)
    if categories is None:
        wanted = tuple(c for c in wanted if c in registered)
    missing = [c for c in wanted if c not in registered]
    if missing:
        raise BfclDataError(f"no registered result file for {model} in {missing}")
    lines: list[ResultLine] = []
    for cat in wanted:
        lines.extend(
            read_more_results(sources.fetch(f"bfcl/result/{model}/{cat}", progress=False), cat)
        )
    return lines


def read_more_result_dir(folder: Path | str, categories: Iterable[str]) -> list[ResultLine]:
    """Read these categories' result files from a model's result folder (searched
    recursively, like the official runner); each category needs exactly one file."""
    folder = Path(folder)
    lines: list[ResultLine] = []
    for cat in resolve_more(categories):
        paths = sorted(folder.rglob(result_filename(cat)))
        if len(paths) != 1:
            raise BfclDataError(f"{folder}: {len(paths) or 'no'} result files for category {cat!r}")
        lines.extend(read_more_results(paths[0], cat))
    return lines


GROUP_FOLDERS = {
    **dict.fromkeys(MULTI_TURN, "multi_turn"),
    **dict.fromkeys(JAVA_JS, "non_live"),
    **dict.fromkeys(WEB_SEARCH, "agentic/web_search"),
}
"""Category -> the official result sub-folder (``result/<model>/<folder>/``)."""


def write_more_results(lines: Iterable[ResultLine], folder: Path | str, model: str) -> list[Path]:
    """Write result lines of these categories as official result files (strict JSON).

    Files go to ``<folder>/<model>/<multi_turn|non_live|agentic/web_search>/`` (see
    :data:`GROUP_FOLDERS`; ``/`` in the model name becomes ``_``), where ``bfcl evaluate``
    finds them (it searches the model folder recursively).

    Returns:
        The files written.
    """
    by_category: dict[str, list[ResultLine]] = {}
    for line in lines:
        by_category.setdefault(line.category, []).append(line)
    written = []
    for cat, rows in by_category.items():
        path = Path(folder) / model.replace("/", "_") / GROUP_FOLDERS[cat] / result_filename(cat)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, (to_json(_result_json(row)) + "\n" for row in rows))
        written.append(path)
    return written
