"""BFCL files: questions and possible answers, official result files, published score tables.

The I/O edge of the package. Questions and answers of the Python categories come from the
pinned files of ``sources.tsv`` (gorilla commit 6ea5797), an installed ``bfcl-eval`` or a
gorilla checkout; those of Java/JavaScript, multi-turn (with the backends' function docs),
web search and memory (:mod:`.memory`) from the pinned files. With ``source="demo"`` every
category comes from evalbench's own demo suite in BFCL's format (:func:`~.files.demo_path`:
written for evalbench, not BFCL data; the offline demo). Result files are the official
``BFCL_v4_<category>_result.json`` JSON Lines (a multi-turn ``result`` is a list of turns,
each a list of steps, each the model's output of that step), read from a folder, from the
registered public result sets, or written for ``bfcl evaluate``. Every malformed line is a
:class:`~.schema.BfclDataError` naming its file and line.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict

from evalbench import sources
from evalbench.records import to_json, write_atomic

from . import backends
from .files import DEMO, WEB_SEARCH_CLASS, data_file, function_docs, read_jsonl
from .memory import load_memory
from .schema import (
    CATEGORIES,
    FORMAT_SENSITIVITY,
    JAVA_JS,
    JAVA_TYPES,
    JS_TYPES,
    LIVE,
    MEMORY,
    MULTI_TURN,
    NESTED_TYPES,
    PUBLIC_SYSTEMS,
    PYTHON,
    PYTHON_TYPES,
    RELEVANCE_CATEGORIES,
    VERSION_PREFIX,
    WEB_SEARCH,
    AnyItem,
    BfclDataError,
    Item,
    MultiTurnItem,
    ResultLine,
    WebSearchItem,
    category_of,
    resolve_categories,
)

_RESULT_FILE = re.compile(rf"^{VERSION_PREFIX}_(?P<category>\w+)_result\.json$")


# --------------------------------------------------------------------------- file rows


class _Message(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: str
    content: str


class _QuestionRow(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str
    question: list[list[_Message]]
    function: list[dict[str, Any]]


class _AnswerRow(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str
    ground_truth: list[dict[str, dict[str, list[Any]]]]


class _EntryRow(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str
    question: list[list[dict[str, Any]]]


class _MultiTurnRow(_EntryRow):
    initial_config: dict[str, Any]
    involved_classes: list[str]
    missed_function: dict[str, list[str]] = {}


class _AstRow(_EntryRow):
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


# --------------------------------------------------------------------------- loading


def load(
    categories: str | Iterable[str] | None = None, *, source: str | Path = "registry"
) -> list[AnyItem]:
    """Load BFCL v4 items with their possible answers.

    Args:
        categories: category or group names (:data:`~.schema.GROUPS`) or None for all of
            :data:`~.schema.CATEGORIES`.
        source: where the Python categories' files come from: ``"registry"`` (the pinned
            files of ``sources.tsv``, gorilla@6ea5797), ``"package"`` (the data folder of an
            installed ``bfcl-eval``) or the path of a gorilla checkout
            (``<root>/berkeley-function-call-leaderboard/bfcl_eval/data``), the other
            categories then coming from the pinned files; or ``"demo"``: every category
            from evalbench's demo suite (:func:`~.files.demo_path`, not BFCL data).

    Returns:
        Items in file order, category by category: :class:`~.schema.Item` (Python, Java,
        JavaScript), :class:`~.schema.MultiTurnItem`, :class:`~.schema.WebSearchItem` or
        :class:`~.schema.MemoryItem`.

    Raises:
        BfclDataError: an unknown category, a missing file, or a malformed line (the message
            names the file and line).
    """
    cats = [cat for cat in resolve_categories(categories) if cat != FORMAT_SENSITIVITY]
    locate = _locator(source) if any(cat in PYTHON for cat in cats) else _registry_paths
    other = DEMO if source == DEMO else "registry"
    items: list[AnyItem] = []
    for cat in cats:
        if cat in PYTHON:
            items.extend(_read_category(cat, *locate(cat)))
        elif cat in MULTI_TURN:
            items.extend(_multi_turn(cat, other))
        elif cat in JAVA_JS:
            items.extend(_java_js(cat, other))
        elif cat in MEMORY:
            items.extend(load_memory(cat, other))
        else:
            items.extend(_web_search(cat, other))
    return items


def _locator(source: str | Path) -> Callable[[str], tuple[Path, Path | None]]:
    if isinstance(source, str) and source == "registry":
        return _registry_paths
    if isinstance(source, str) and source == DEMO:
        return lambda cat: _registry_paths(cat, DEMO)
    if isinstance(source, str) and source == "package":
        data = _package_data_dir()
    else:
        root = Path(source)
        data = root / "berkeley-function-call-leaderboard" / "bfcl_eval" / "data"
        if not data.is_dir():
            raise BfclDataError(
                f"{root} is not a gorilla checkout: no folder {data} "
                "(source must be 'registry', 'package', 'demo' or a gorilla checkout path)"
            )
    return lambda cat: _local_paths(data, cat)


def _registry_paths(cat: str, source: str = "registry") -> tuple[Path, Path | None]:
    question = data_file(f"bfcl/question/{cat}", source)
    if cat in RELEVANCE_CATEGORIES:
        return question, None
    return question, data_file(f"bfcl/possible_answer/{cat}", source)


def _package_data_dir() -> Path:
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is None or not spec.submodule_search_locations:
        raise BfclDataError(
            "bfcl-eval is not installed (no module 'bfcl_eval'); install it or use "
            "source='registry' for the pinned files"
        )
    data = Path(next(iter(spec.submodule_search_locations))) / "data"
    if not data.is_dir():
        raise BfclDataError(f"the installed bfcl_eval package has no data folder {data}")
    return data


def _local_paths(data: Path, cat: str) -> tuple[Path, Path | None]:
    question = data / f"{VERSION_PREFIX}_{cat}.json"
    answer = None if cat in RELEVANCE_CATEGORIES else data / "possible_answer" / question.name
    for path in (question, answer):
        if path is not None and not path.is_file():
            raise BfclDataError(f"missing BFCL file {path} (category {cat!r})")
        if path is not None:
            sources.record_read(path)
    return question, answer


def _read_category(cat: str, question_path: Path, answer_path: Path | None) -> list[Item]:
    answers = _read_answers(answer_path) if answer_path is not None else {}
    items, seen = [], set()
    for number, row in read_jsonl(question_path, _QuestionRow):
        where = f"{question_path}:{number}"
        if category_of(row.id) != cat:
            raise BfclDataError(f"{where}: id {row.id!r} is not a {cat} id")
        if row.id in seen:
            raise BfclDataError(f"{where}: duplicate id {row.id!r}")
        seen.add(row.id)
        _check_functions(row.function, where)
        answer = _answer_for(row.id, answers, answer_path, row.function, where)
        question = [[m.model_dump() for m in turn] for turn in row.question]
        items.append(Item(row.id, cat, question, row.function, answer))
    extra = set(answers) - seen
    if extra:
        raise BfclDataError(
            f"{answer_path}: answers for ids not in {question_path}: {sorted(extra)[:3]}"
        )
    return items


def _read_answers(path: Path) -> dict[str, tuple[int, list[dict[str, dict[str, list[Any]]]]]]:
    answers = {}
    for number, row in read_jsonl(path, _AnswerRow):
        if row.id in answers:
            raise BfclDataError(f"{path}:{number}: duplicate id {row.id!r}")
        if not row.ground_truth or any(len(call) != 1 for call in row.ground_truth):
            raise BfclDataError(
                f"{path}:{number}: ground_truth must be [{{function: {{...}}}}, ...]"
            )
        answers[row.id] = (number, row.ground_truth)
    return answers


def _answer_for(
    item_id: str,
    answers: Mapping[str, tuple[int, list[dict[str, dict[str, list[Any]]]]]],
    path: Path | None,
    functions: list[dict[str, Any]],
    where: str,
) -> list[dict[str, dict[str, list[Any]]]] | None:
    if path is None:
        return None
    if item_id not in answers:
        raise BfclDataError(f"{where}: no possible answer for id {item_id!r} in {path}")
    number, truth = answers[item_id]
    names = {f["name"] for f in functions}
    for call in truth:
        name = next(iter(call))
        if name not in names:
            raise BfclDataError(f"{path}:{number}: answer calls {name!r}, not among the functions")
    return truth


def _check_functions(functions: list[dict[str, Any]], where: str) -> None:
    for doc in functions:
        params = doc.get("parameters")
        if not isinstance(doc.get("name"), str) or not isinstance(params, dict):
            raise BfclDataError(f"{where}: a function doc needs 'name' and 'parameters'")
        props, required = params.get("properties"), params.get("required", [])
        if not isinstance(props, dict) or not isinstance(required, list):
            raise BfclDataError(f"{where}: function {doc['name']!r}: bad 'properties'/'required'")
        for name, spec in props.items():
            _check_type(spec, f"{where}: function {doc['name']!r} parameter {name!r}")


def _check_type(spec: Any, where: str) -> None:
    kind = spec.get("type") if isinstance(spec, dict) else None
    if kind not in PYTHON_TYPES:
        raise BfclDataError(f"{where}: unknown type {kind!r} (known: {', '.join(PYTHON_TYPES)})")
    items = spec.get("items") if kind in NESTED_TYPES else None
    # The checker looks one level deep only: the element type must be known.
    if kind in NESTED_TYPES and (
        not isinstance(items, dict) or items.get("type") not in PYTHON_TYPES
    ):
        raise BfclDataError(f"{where}: an {kind} needs 'items' with a known 'type'")


def load_format_items(*, source: str | Path = "registry") -> list[Item]:
    """The items the format-sensitivity category asks (the ids of
    ``BFCL_v4_format_sensitivity.json``, pinned; the demo suite's own with ``source="demo"``),
    in the official order: its categories as listed, each category's items in file order
    (``source`` as in :func:`load`).

    Raises:
        BfclDataError: a malformed selection, or an id not in its category's file.
    """
    path = data_file("bfcl/format_sensitivity", DEMO if source == DEMO else "registry")
    try:
        selection = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise BfclDataError(f"{path}: not JSON ({exc})") from exc
    if not isinstance(selection, dict):
        raise BfclDataError(f"{path}: expected an object of category -> ids")
    items: list[Item] = []
    for cat, ids in selection.items():
        if cat not in PYTHON or not isinstance(ids, list):
            raise BfclDataError(f"{path}: {cat!r} is not a Python category with a list of ids")
        found = [it for it in load(cat, source=source) if it.id in set(ids)]
        missing = sorted(set(ids) - {it.id for it in found})
        if missing:
            raise BfclDataError(f"{path}: ids not in the {cat} file: {missing[:3]}")
        items.extend(it for it in found if isinstance(it, Item))
    return items


# --------------------------------------------------------------------------- other categories


def _answers(name: str, source: str) -> tuple[Path, dict[str, tuple[int, list[Any]]]]:
    path = data_file(f"bfcl/possible_answer/{name}", source)
    out: dict[str, tuple[int, list[Any]]] = {}
    for number, row in read_jsonl(path, _Answer):
        if row.id in out:
            raise BfclDataError(f"{path}:{number}: duplicate id {row.id!r}")
        out[row.id] = (number, row.ground_truth)
    return path, out


def _truth(answers: dict[str, tuple[int, list[Any]]], path: Path, item_id: str) -> list[Any]:
    if item_id not in answers:
        raise BfclDataError(f"{path}: no possible answer for id {item_id!r}")
    return answers[item_id][1]


def _multi_turn(cat: str, source: str) -> list[MultiTurnItem]:
    question = data_file(f"bfcl/question/{cat}", source)
    answer_path, answers = _answers(cat, source)
    items = []
    for number, row in read_jsonl(question, _MultiTurnRow):
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
        docs = [doc for cls in row.involved_classes for doc in function_docs(cls, source)]
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


def _java_js(cat: str, source: str) -> list[Item]:
    question = data_file(f"bfcl/question/{cat}", source)
    answer_path, answers = _answers(cat, source)
    known = JAVA_TYPES if cat == "simple_java" else JS_TYPES
    items = []
    for number, row in read_jsonl(question, _AstRow):
        where = f"{question}:{number}"
        if category_of(row.id) != cat:
            raise BfclDataError(f"{where}: id {row.id!r} is not a {cat} id")
        for doc in row.function:
            _check_doc(doc, known, where)
        truth = _truth(answers, answer_path, row.id)
        items.append(Item(row.id, cat, row.question, row.function, truth))
    return items


def _check_doc(doc: dict[str, Any], known: Mapping[str, type], where: str) -> None:
    props = doc.get("parameters", {}).get("properties")
    if not isinstance(doc.get("name"), str) or not isinstance(props, dict):
        raise BfclDataError(f"{where}: a function doc needs 'name' and 'parameters.properties'")
    for name, spec in props.items():
        kind = spec.get("type") if isinstance(spec, dict) else None
        if kind not in known:
            raise BfclDataError(
                f"{where}: function {doc['name']!r} parameter {name!r}: unknown type {kind!r}"
            )


def _web_search(cat: str, source: str) -> list[WebSearchItem]:
    question = data_file("bfcl/question/web_search", source)
    answer_path, answers = _answers("web_search", source)
    docs = function_docs(WEB_SEARCH_CLASS, source)
    items = []
    for number, row in read_jsonl(question, _EntryRow):
        if category_of(row.id) != "web_search":
            raise BfclDataError(f"{question}:{number}: id {row.id!r} is not a web_search id")
        truth = _truth(answers, answer_path, row.id)
        if not truth or not all(isinstance(a, str) for a in truth):
            raise BfclDataError(f"{answer_path}: ground_truth of {row.id!r} must be strings")
        # both categories ask the same questions; the id names the category (official)
        item_id = row.id.replace("web_search", cat)
        items.append(WebSearchItem(item_id, cat, row.question, docs, truth))
    return items


# --------------------------------------------------------------------------- result files


def result_filename(category: str) -> str:
    """``BFCL_v4_<category>_result.json``, the official result file name."""
    return f"{VERSION_PREFIX}_{category}_result.json"


def read_results(path: Path | str, *, category: str | None = None) -> list[ResultLine]:
    """Read an official result file (JSON Lines of ``{id, result, ...}``).

    Args:
        path: a ``BFCL_v4_<category>_result.json`` file.
        category: the category, when the file name does not carry it.

    Raises:
        BfclDataError: an unknown category, a bad JSON line, a missing field, an id of
            another category or a duplicated id (naming file and line).
    """
    path = Path(path)
    cat = category or _category_of_file(path)
    lines: list[ResultLine] = []
    seen: dict[str, int] = {}
    for number, row in read_jsonl(path, _ResultRow):
        if category_of(row.id) != cat:
            raise BfclDataError(f"{path}:{number}: id {row.id!r} is not a {cat} id")
        if row.id in seen:
            raise BfclDataError(f"{path}:{number}: duplicate id {row.id!r} (line {seen[row.id]})")
        seen[row.id] = number
        lines.append(
            ResultLine(
                row.id,
                cat,
                row.result,
                row.input_token_count,
                row.output_token_count,
                row.latency,
                str(path),
                number,
            )
        )
    return lines


def _category_of_file(path: Path) -> str:
    match = _RESULT_FILE.match(path.name)
    if match is None or match["category"] not in CATEGORIES:
        raise BfclDataError(
            f"{path}: not a result file of a known category "
            f"(expected {result_filename('<category>')} with one of {', '.join(CATEGORIES)})"
        )
    return match["category"]


def read_result_dir(
    folder: Path | str, categories: str | Iterable[str] | None = None
) -> list[ResultLine]:
    """Read a model's result folder (searched recursively, like the official runner).

    With ``categories`` None, every result file of a scored category is read (others, e.g.
    ``memory_kv``, are skipped); named categories must each have exactly one file.
    """
    folder = Path(folder)
    found: dict[str, list[Path]] = {}
    for path in sorted(folder.rglob(f"{VERSION_PREFIX}_*_result.json")):
        match = _RESULT_FILE.match(path.name)
        if match and match["category"] in CATEGORIES:
            found.setdefault(match["category"], []).append(path)
    wanted = resolve_categories(categories) if categories is not None else tuple(found)
    lines: list[ResultLine] = []
    for cat in wanted:
        paths = found.get(cat, [])
        if len(paths) != 1:
            what = "no" if not paths else f"{len(paths)}"
            raise BfclDataError(f"{folder}: {what} result files for category {cat!r}")
        lines.extend(read_results(paths[0], category=cat))
    return lines


def fetch_results(model: str, categories: str | Iterable[str] | None = None) -> list[ResultLine]:
    """Read a registered public result set (``bfcl/result/<model>/<category>``).

    Raises:
        BfclDataError: an unregistered model, or a named category without a result file.
    """
    registered = registered_categories(model)
    if not registered:
        raise BfclDataError(
            f"no registered BFCL results for {model!r}; known: {', '.join(PUBLIC_SYSTEMS)}"
        )
    wanted = (
        resolve_categories(categories)
        if categories is not None
        else tuple(c for c in CATEGORIES if c in registered)
    )
    missing = [c for c in wanted if c not in registered]
    if missing:
        raise BfclDataError(f"no registered result file for {model} in {missing}")
    lines: list[ResultLine] = []
    for cat in wanted:
        lines.extend(read_results(sources.fetch(f"bfcl/result/{model}/{cat}", progress=False)))
    return lines


def registered_categories(model: str) -> set[str]:
    """The categories of a registered public result set (empty when none is registered)."""
    return {n.rsplit("/", 1)[1] for n in sources.names(f"bfcl/result/{model}/")}


def registered_source(model: str) -> tuple[str, str]:
    """Where a registered public result set comes from: its folder URL and licence."""
    first = sources.get(sources.names(f"bfcl/result/{model}/")[0])
    return first.url.rsplit("/", 2)[0] + "/", first.license


def result_group(category: str) -> str:
    """The official result sub-folder of a category: ``non_live``, ``live``, ``multi_turn``,
    ``agentic``, ``agentic/memory/<backend>`` (memory and its prerequisites) or
    ``format_sensitivity`` (official ``get_directory_structure_by_category``)."""
    memory = category.removesuffix("_prereq")
    if memory in MEMORY:
        return f"agentic/memory/{memory.removeprefix('memory_')}"
    if category in LIVE:
        return "live"
    if category in MULTI_TURN:
        return "multi_turn"
    if category == FORMAT_SENSITIVITY:
        return FORMAT_SENSITIVITY
    return "agentic" if category in WEB_SEARCH else "non_live"


def write_results(lines: Iterable[ResultLine], folder: Path | str, model: str) -> list[Path]:
    """Write result lines as official result files (strict JSON), ready for ``bfcl evaluate``.

    Files go to ``<folder>/<model>/<group>/BFCL_v4_<category>_result.json`` (group:
    :func:`result_group`; ``/`` in the model name becomes ``_``, the official folder
    convention; the official runner searches the model folder recursively). For ``bfcl
    evaluate`` the model name must be one the installed ``bfcl-eval`` knows, and
    ``--result-dir`` must point at ``folder``.

    Returns:
        The files written.
    """
    by_category: dict[str, list[ResultLine]] = {}
    for line in lines:
        by_category.setdefault(line.category, []).append(line)
    written = []
    for cat, rows in by_category.items():
        path = Path(folder) / model.replace("/", "_") / result_group(cat) / result_filename(cat)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, (to_json(_result_json(row)) + "\n" for row in rows))
        written.append(path)
    return written


def _result_json(line: ResultLine) -> dict[str, Any]:
    out: dict[str, Any] = {"id": line.id, "result": line.result}
    for key in ("input_token_count", "output_token_count", "latency"):
        value = getattr(line, key)
        if value is not None:
            out[key] = value
    return out


def result_file_counts(folder: Path) -> pd.DataFrame:
    """Result files written under ``folder`` (``<folder>/<system>/...``): count per system.

    Returns:
        Columns ``folder`` (``<folder name>/<system>/``) and ``result files``.
    """
    files = pd.Series(
        sorted(str(p.relative_to(folder.parent)) for p in folder.rglob("*.json")), dtype=str
    )
    per_system = files.str.split("/").str[1].value_counts(sort=False)
    return pd.DataFrame(
        {"folder": f"{folder.name}/" + per_system.index + "/", "result files": per_system.values}
    )


# --------------------------------------------------------------------------- published scores


PUBLISHED_COLUMNS = {
    "simple_python": ("data_non_live", "Python Simple AST"),
    "simple_java": ("data_non_live", "Java Simple AST"),
    "simple_javascript": ("data_non_live", "JavaScript Simple AST"),
    "multiple": ("data_non_live", "Multiple AST"),
    "parallel": ("data_non_live", "Parallel AST"),
    "parallel_multiple": ("data_non_live", "Parallel Multiple AST"),
    "irrelevance": ("data_non_live", "Irrelevance Detection"),
    "live_simple": ("data_live", "Python Simple AST"),
    "live_multiple": ("data_live", "Python Multiple AST"),
    "live_parallel": ("data_live", "Python Parallel AST"),
    "live_parallel_multiple": ("data_live", "Python Parallel Multiple AST"),
    "live_irrelevance": ("data_live", "Irrelevance Detection"),
    "live_relevance": ("data_live", "Relevance Detection"),
    "multi_turn_base": ("data_overall", "Multi Turn Base"),
    "multi_turn_miss_func": ("data_overall", "Multi Turn Miss Func"),
    "multi_turn_miss_param": ("data_overall", "Multi Turn Miss Param"),
    "multi_turn_long_context": ("data_overall", "Multi Turn Long Context"),
    "web_search_base": ("data_overall", "Web Search Base"),
    "web_search_no_snippet": ("data_overall", "Web Search No Snippet"),
    "memory_kv": ("data_overall", "Memory KV"),
    "memory_vector": ("data_overall", "Memory Vector"),
    "memory_rec_sum": ("data_overall", "Memory Recursive Summarization"),
}
"""Category -> (registered table ``bfcl/leaderboard/<table>``, column) of published scores."""
PUBLISHED_AGGREGATES = {
    "non_live": "Non-Live AST Acc",
    "live": "Live Acc",
    "irrelevance": "Irrelevance Detection",
    "relevance": "Relevance Detection",
    "multi_turn": "Multi Turn Acc",
    "overall": "Overall Acc",
}
"""Aggregate (a column of :func:`~.metrics.overall_table`) -> its ``data_overall`` column."""


def published_row(table: str, model: str) -> dict[str, float]:
    """One model's row of a registered published score table, percentages as fractions.

    ``N/A`` becomes NaN.

    Raises:
        BfclDataError: the model is not in the table (the message lists those that are).
    """
    path = sources.fetch(f"bfcl/leaderboard/{table}", progress=False)
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)  # "N/A" is a cell, not NaN
    rows = frame[frame["Model"] == model]
    if rows.empty:
        known = ", ".join(map(repr, frame["Model"]))
        raise BfclDataError(f"{path}: no model {model!r} (the table has {known})")
    out = {}
    for column, value in rows.iloc[0].items():
        text = str(value).strip()
        if text.endswith("%"):
            out[str(column)] = float(text.rstrip("%")) / 100
        elif text == "N/A":
            out[str(column)] = float("nan")
    return out


def published_scores(model: str) -> pd.DataFrame:
    """Published per-category accuracies of one leaderboard model.

    Returns:
        Columns ``test_category, accuracy`` (NaN where the table says N/A).
    """
    tables = {t: published_row(t, model) for t in {t for t, _ in PUBLISHED_COLUMNS.values()}}
    rows = [(cat, tables[t].get(col, float("nan"))) for cat, (t, col) in PUBLISHED_COLUMNS.items()]
    return pd.DataFrame(rows, columns=["test_category", "accuracy"])


def published_aggregates(model: str) -> dict[str, float]:
    """Published aggregate accuracies of one leaderboard model, keyed like the columns of
    :func:`~.metrics.overall_table` (the keys of :data:`PUBLISHED_AGGREGATES`; NaN where the
    table says N/A or has no such column)."""
    row = published_row("data_overall", model)
    return {key: row.get(column, float("nan")) for key, column in PUBLISHED_AGGREGATES.items()}
