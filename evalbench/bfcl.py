"""BFCL v4: load, decode, AST checker, category metrics, result-file import/export.

The Berkeley Function Calling Leaderboard (Patil et al., "The Berkeley Function Calling
Leaderboard (BFCL): From Tool Use to Agentic Evaluation of Large Language Models",
ICML 2025) scores single-turn function calls by comparing the *abstract syntax tree* of a
model's calls with a list of accepted values per parameter. This module covers the eleven
single-turn Python categories (:data:`CATEGORIES`).

The decoder and checker reimplement (they do not import or copy) the official semantics of
``bfcl-eval`` 2026.3.23 (gorilla commit 6ea5797): ``bfcl_eval/eval_checker/ast_eval/
ast_checker.py``, ``eval_runner.py`` (``_evaluate_single_ast_entry``,
``_evaluate_single_relevance_entry``), ``bfcl_eval/utils.py``
(``is_function_calling_format_output``, ``is_empty_output``) and the handlers' ``decode_ast``
(``model_handler/utils.py``: ``default_decode_ast_prompting``/``ast_parse``/
``resolve_ast_by_type`` for prompting models; ``json.loads`` of each call's argument string
for function-calling models). Error types keep the official names
(``ast_decoder:decoder_failed``, ``simple_function_checker:missing_required``, ...).
The oracle test scores every item of three public result sets and agrees with the official
checker on every verdict.

The study (``study: bfcl``, :class:`BfclParams`, notebook ``bfcl_categories.ipynb``) scores
result sets (public or local result files) and live systems asked here in prompt mode (the
leaderboard's default system prompt, Python call syntax) or tools mode (OpenAI ``tools``),
writes live outputs as official result files, and compares aggregates with the published
score tables. The ``sim`` responder (:func:`sim_respond`) answers from the possible answer and
injects known mistakes (:data:`MISTAKES`) so the checker can be checked against the truth.

Deliberate deviations, all on inputs the public data never contains: arithmetic
(``ast.BinOp``) is never evaluated (the official decoder calls ``eval`` on it), so ``f(x=2*3)``
is a decode failure here; outputs longer than :data:`MAX_OUTPUT_CHARS` or nested deeper than
:data:`MAX_DEPTH` are decode failures; inputs on which the official checker raises (e.g. a
non-dict element in a list-of-dict parameter) fail the item instead of the whole run.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import re
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Annotated, Any, Literal, NamedTuple, TypeVar

import numpy as np
import pandas as pd
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    model_validator,
)

from evalbench import sources
from evalbench.models import (
    ChatRequest,
    Job,
    ModelSpec,
    SimReply,
    SimSpec,
    SimTask,
    ToolCall,
    sim_rng,
)
from evalbench.params import StudyParams, data_path
from evalbench.records import Record, ResponseRecord
from evalbench.stats import DEFAULT_LEVEL, wilson_interval

VERSION_PREFIX = "BFCL_v4"
NON_LIVE = ("simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance")
LIVE = (
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
    "live_relevance",
    "live_irrelevance",
)
CATEGORIES = NON_LIVE + LIVE
"""The single-turn Python categories this module loads and scores, in leaderboard order."""
RELEVANCE_CATEGORIES = frozenset({"irrelevance", "live_irrelevance", "live_relevance"})
"""Categories scored on *whether* a call was made; they have no possible-answer file."""
GROUPS = {"all": CATEGORIES, "non_live": NON_LIVE, "live": LIVE}
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
}
"""Items per category in the pinned v4 data (the leaderboard weights live categories by these)."""
PUBLIC_SYSTEMS = {
    "glyphh-ada-1.1": "fc",
    "gemma4-e4b-toolcall-v02": "prompt",
    "AIREV-Agent-0.8B": "prompt",
}
"""Registered public result sets (``bfcl/result/<model>/<category>``) and their decode style."""
STYLES = ("auto", "prompt", "fc")
MAX_OUTPUT_CHARS = 100_000  # public outputs are < 4k characters; parse time stays in ms
MAX_DEPTH = 100  # nesting levels of a decoded value
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

DECODER_FAILED = "ast_decoder:decoder_failed"
WRONG_FORMAT = "ast_decoder:decoder_wrong_output_format"
_WRONG_FORMAT_MESSAGE = (
    "Did not output in the specified format. Note: the model_result is wrapped in a string "
    "to ensure json serializability."
)
_RESULT_FILE = re.compile(rf"^{VERSION_PREFIX}_(?P<category>\w+)_result\.json$")
_STANDARDIZE = re.compile(r"[ ,./\-_*^]")
_FENCE = re.compile(r"```[A-Za-z_]*[ \t]*\n?(.*?)```", re.DOTALL)
_ARG_KEYS = ("arguments", "parameters", "args")
_Row = TypeVar("_Row", bound=BaseModel)


class BfclDataError(ValueError):
    """A BFCL question, answer or result file is malformed; the message names file and line."""


# --------------------------------------------------------------------------- records


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


class Decoded(NamedTuple):
    """What the decoder made of one raw model output."""

    calls: tuple[Call, ...] | None
    """The calls in output order; None when decoding failed."""
    error_type: str | None = None
    """``ast_decoder:decoder_failed`` or ``ast_decoder:decoder_wrong_output_format``."""
    error: str | None = None
    """Why decoding failed (the exception text, as the official runner reports it)."""


class ParamOutcome(NamedTuple):
    """Whether one expected parameter was right (a diagnostic; not part of the official score)."""

    function: str
    param: str
    type: str
    called: bool
    """The expected function was called (so the parameter could be checked at all)."""
    correct: bool


class Check(NamedTuple):
    """The checker's verdict on one item."""

    valid: bool
    error_type: str | None
    """Official error type of a failure. A *valid* simple/multiple verdict keeps
    ``simple_function_checker:unclear`` when the official checker returns it (see
    :func:`check`); count errors on failures only."""
    error: str | None
    """The first official-style error message."""
    params: tuple[ParamOutcome, ...] = ()


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


class Verdict(NamedTuple):
    """One scored item (a row of the verdict frame).

    :class:`VerdictRecord` is the same row validated at the file boundary; scoring builds
    plain tuples because validating ~10k rows through pydantic doubles its time.
    """

    system: str
    test_category: str
    id: str
    valid: bool
    error_type: str | None
    error: str | None
    decoded: list[dict[str, Any]] | None
    raw: Any
    params: list[dict[str, Any]]
    latency: Any = None
    input_token_count: Any = None
    output_token_count: Any = None
    mode: str = ""
    injected: str | None = None


class VerdictRecord(Record):
    """A verdict as written to a run's ``records/`` folder."""

    system: str
    """The system (model) that produced the output."""
    test_category: str
    """BFCL category, e.g. ``live_multiple``."""
    id: str
    """BFCL item id."""
    valid: bool
    """The official checker's verdict."""
    error_type: str | None
    """Official error type of a failure (a valid simple/multiple verdict may keep the
    official checker's ``simple_function_checker:unclear``)."""
    error: str | None
    """First error message of a failure."""
    decoded: list[dict[str, Any]] | None
    """Decoded calls ``[{name: {param: value}}]``; ``None`` when decoding failed."""
    raw: Any
    """The raw model output as in the result file."""
    params: list[dict[str, Any]]
    """Per expected parameter: function, param, type, called, correct."""
    latency: Any = None
    """Seconds, when the result file has it."""
    input_token_count: Any = None
    """Prompt tokens, when known."""
    output_token_count: Any = None
    """Completion tokens, when known."""
    mode: str = ""
    """How the output was produced: ``prompt`` / ``tools`` (asked live) or ``results`` (a
    result file)."""
    injected: str | None = None
    """Simulated systems only: the mistake the simulator injected (``none`` = answered
    correctly); the checker never sees it."""


class Summary(NamedTuple):
    """The tables :func:`summarize` computes from a verdict frame."""

    categories: pd.DataFrame
    overall: pd.DataFrame
    errors: pd.DataFrame
    params: pd.DataFrame
    systems: pd.DataFrame


class _Fail(NamedTuple):
    error_type: str
    message: str | None


class _Typed(NamedTuple):
    valid: bool
    is_variable: bool
    fail: _Fail | None


class _DecodeError(Exception):
    """Raised inside the decoders; becomes a :class:`Decoded` failure."""


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
) -> list[Item]:
    """Load BFCL v4 items with their possible answers.

    Args:
        categories: category names, a group (``"all"``, ``"non_live"``, ``"live"``) or None
            for all of :data:`CATEGORIES`.
        source: where the files come from: ``"registry"`` (the pinned files of
            ``sources.tsv``, gorilla@6ea5797), ``"package"`` (the data folder of an installed
            ``bfcl-eval``) or the path of a gorilla checkout
            (``<root>/berkeley-function-call-leaderboard/bfcl_eval/data``).

    Returns:
        Items in file order, category by category.

    Raises:
        BfclDataError: an unknown category, a missing file, or a malformed line (the message
            names the file and line).
    """
    cats = resolve_categories(categories)
    locate = _locator(source)
    items: list[Item] = []
    for cat in cats:
        question_path, answer_path = locate(cat)
        items.extend(_read_category(cat, question_path, answer_path))
    return items


def resolve_categories(categories: str | Iterable[str] | None) -> tuple[str, ...]:
    """Category names (or a group name, or None for all) -> validated category tuple."""
    if categories is None:
        return CATEGORIES
    names = [categories] if isinstance(categories, str) else list(categories)
    out: list[str] = []
    for name in names:
        if name in GROUPS:
            out.extend(GROUPS[name])
        elif name in CATEGORIES:
            out.append(name)
        else:
            known = ", ".join((*GROUPS, *CATEGORIES))
            raise BfclDataError(f"unknown BFCL category {name!r}; known: {known}")
    return tuple(dict.fromkeys(out))


def _locator(source: str | Path) -> Callable[[str], tuple[Path, Path | None]]:
    if isinstance(source, str) and source == "registry":
        return _registry_paths
    if isinstance(source, str) and source == "package":
        data = _package_data_dir()
    else:
        root = Path(source)
        data = root / "berkeley-function-call-leaderboard" / "bfcl_eval" / "data"
        if not data.is_dir():
            raise BfclDataError(
                f"{root} is not a gorilla checkout: no folder {data} "
                "(source must be 'registry', 'package' or a gorilla checkout path)"
            )
    return lambda cat: _local_paths(data, cat)


def _registry_paths(cat: str) -> tuple[Path, Path | None]:
    question = sources.fetch(f"bfcl/question/{cat}", progress=False)
    if cat in RELEVANCE_CATEGORIES:
        return question, None
    return question, sources.fetch(f"bfcl/possible_answer/{cat}", progress=False)


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


def _read_jsonl(path: Path, model: type[_Row]) -> Iterator[tuple[int, _Row]]:
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
                raise BfclDataError(f"{path}:{number}: {_first_error(exc)}") from exc


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(part) for part in err["loc"]) or "line"
    return f"field {where!r}: {err['msg']}"


def _read_category(cat: str, question_path: Path, answer_path: Path | None) -> list[Item]:
    answers = _read_answers(answer_path) if answer_path is not None else {}
    items, seen = [], set()
    for number, row in _read_jsonl(question_path, _QuestionRow):
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
    for number, row in _read_jsonl(path, _AnswerRow):
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


def category_of(item_id: str) -> str:
    """The category encoded in a BFCL id (``live_simple_3-2-0`` -> ``live_simple``)."""
    return item_id.split(":")[0].rsplit("_", 1)[0]


# --------------------------------------------------------------------------- decoding


def decode(raw: Any, style: str = "auto", *, max_chars: int = MAX_OUTPUT_CHARS) -> Decoded:
    """Decode a model output into calls, never evaluating it (``ast`` literals only).

    Styles:
        ``"prompt"``: exactly the official prompting decoder (``default_decode_ast_prompting``):
            strip backticks/newlines/spaces, wrap in ``[...]``, parse Python calls
            (``[f(a=1), m.g(b='x')]``, also without brackets). Values are literals, negative
            numbers, lists, dicts and tuples (kept as tuples, as officially); a bare name
            becomes its identifier string (``true`` -> ``"true"``); a call without keywords
            becomes its source text; any unary operator negates its literal operand (an
            official quirk: ``+5`` -> ``-5``).
        ``"fc"``: exactly the official function-calling decoder: ``[{name: "<JSON args>"}]``,
            each argument string ``json.loads``-ed.
        ``"auto"``: lenient, for new model outputs: a list/dict is read as JSON calls; text
            has its first fenced code block extracted, is read as JSON when it parses
            (``[{"name", "arguments"}]``, ``{"function": {...}}``, ``[{name: {args}}]``, the FC
            result format), and as Python calls otherwise.

    Args:
        raw: the output (string, or the FC result list).
        style: one of :data:`STYLES`.
        max_chars: outputs larger than this are rejected before parsing.

    Returns:
        The calls, or a failure with the official error type.
    """
    if style not in _DECODERS:
        raise ValueError(f"unknown decode style {style!r}; use one of {STYLES}")
    if _exceeds(raw, max_chars):
        return Decoded(None, DECODER_FAILED, f"output longer than {max_chars} characters")
    try:
        calls = _DECODERS[style](raw)
    except _DecodeError as exc:
        return Decoded(None, DECODER_FAILED, str(exc))
    except (RecursionError, MemoryError) as exc:
        return Decoded(None, DECODER_FAILED, f"{type(exc).__name__}: input too deeply nested")
    if any(type(call.args) is not dict for call in calls):
        return Decoded(None, WRONG_FORMAT, _WRONG_FORMAT_MESSAGE)
    return Decoded(calls)


def _exceeds(raw: Any, limit: int) -> bool:
    """Whether ``raw`` holds more than ``limit`` characters (strings plus container items)."""
    total, stack = 0, [raw]
    while stack:
        value = stack.pop()
        if isinstance(value, (str, dict, list, tuple)):
            total += len(value)
            if total > limit:
                return True  # checked before a huge container is walked
        if isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, (list, tuple)):
            stack.extend(value)
    return False


def _decode_prompt(raw: Any) -> tuple[Call, ...]:
    if not isinstance(raw, str):
        raise _DecodeError(f"'{type(raw).__name__}' object has no attribute 'strip'")
    text = raw.strip("`\n ")
    if not text.startswith("["):
        text = "[" + text
    if not text.endswith("]"):
        text = text + "]"
    return _parse_python_calls(text.strip().strip("'"))


def _parse_python_calls(text: str) -> tuple[Call, ...]:
    try:
        with warnings.catch_warnings():
            # "\D" in a model's string is an invalid escape: a warning, never a decode error
            warnings.simplefilter("ignore", (DeprecationWarning, SyntaxWarning))
            body = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError) as exc:  # ValueError: null bytes, int digit limit
        raise _DecodeError(str(exc)) from exc
    nodes: list[ast.expr]
    if isinstance(body, ast.Call):
        nodes = [body]
    elif isinstance(body, (ast.List, ast.Tuple, ast.Set)):
        nodes = body.elts
    else:
        raise _DecodeError(f"'{type(body).__name__}' object has no attribute 'elts'")
    calls = []
    for node in nodes:
        if not isinstance(node, ast.Call):
            raise _DecodeError(f"not a function call: {type(node).__name__}")
        calls.append(_resolve_call(node, 0))
    return tuple(calls)


def _resolve_call(node: ast.Call, depth: int) -> Call:
    parts, func = [], node.func
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
    args = {kw.arg: _resolve_value(kw.value, depth + 1) for kw in node.keywords}
    return Call(".".join(reversed(parts)), args)


def _resolve_value(node: ast.AST | None, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise _DecodeError(f"value nested deeper than {MAX_DEPTH} levels")
    handler = _VALUE_HANDLERS.get(type(node))
    if handler is None:
        raise _DecodeError(f"Unsupported AST type: {type(node)}")
    return handler(node, depth)


def _constant(node: Any, depth: int) -> Any:
    return "..." if node.value is Ellipsis else node.value


def _unary(node: Any, depth: int) -> Any:
    # Officially `-node.operand.value` for every unary operator, so only a literal operand
    # decodes, and `+5`, `~5`, `not 5` all come out negated.
    if not isinstance(node.operand, ast.Constant):
        raise _DecodeError(f"unary operator on a {type(node.operand).__name__}, not a literal")
    operand: Any = node.operand.value
    try:
        return -operand
    except TypeError as exc:
        raise _DecodeError(str(exc)) from exc


def _dict_value(node: Any, depth: int) -> dict[Any, Any]:
    out = {}
    for key_node, value_node in zip(node.keys, node.values, strict=True):
        key = _resolve_value(key_node, depth + 1)
        try:
            hash(key)
        except TypeError as exc:
            raise _DecodeError(str(exc)) from exc
        out[key] = _resolve_value(value_node, depth + 1)
    return out


def _nested_call(node: Any, depth: int) -> Any:
    if not node.keywords:
        return ast.unparse(node)
    call = _resolve_call(node, depth)
    return {call.name: call.args}


def _refuse(node: Any, depth: int) -> Any:
    # The official decoder eval()s arithmetic; we never evaluate model output.
    raise _DecodeError(f"{type(node).__name__} expressions are not evaluated")


_VALUE_HANDLERS: dict[type, Callable[[Any, int], Any]] = {
    ast.Constant: _constant,
    ast.UnaryOp: _unary,
    ast.List: lambda node, depth: [_resolve_value(e, depth + 1) for e in node.elts],
    ast.Tuple: lambda node, depth: tuple(_resolve_value(e, depth + 1) for e in node.elts),
    ast.Dict: _dict_value,
    ast.Name: lambda node, depth: node.id,
    ast.Call: _nested_call,
    ast.Subscript: lambda node, depth: f"{ast.unparse(node.value)}[{ast.unparse(node.slice)}]",
    ast.BinOp: _refuse,
    ast.Lambda: _refuse,
}


def _decode_fc(raw: Any) -> tuple[Call, ...]:
    if isinstance(raw, (str, dict)) and not raw:
        return ()  # iterating an empty string or dict yields no calls
    if not isinstance(raw, list):
        raise _DecodeError(
            f"expected a list of {{function: JSON arguments}}, got {type(raw).__name__}"
        )
    return tuple(_fc_call(element) for element in raw)


def _fc_call(element: Any) -> Call:
    if not isinstance(element, dict) or not element:
        raise _DecodeError(f"expected {{function: JSON arguments}}, got {element!r:.80}")
    name = next(iter(element))
    value = element[name]
    if not isinstance(value, str):
        raise _DecodeError(f"the JSON object must be str, not {type(value).__name__}")
    return Call(name, _json_loads(value))


def _json_loads(text: str) -> Any:
    try:
        value = json.loads(text)
    except ValueError as exc:  # JSONDecodeError, and the int digit limit
        raise _DecodeError(str(exc)) from exc
    if _depth(value) > MAX_DEPTH:
        raise _DecodeError(f"value nested deeper than {MAX_DEPTH} levels")
    return value


def _depth(value: Any) -> int:
    """Nesting depth of lists/dicts, computed without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        if isinstance(node, dict):
            stack.extend((v, level + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, level + 1) for v in node)
    return deepest


def _decode_auto(raw: Any) -> tuple[Call, ...]:
    if isinstance(raw, (list, dict)):
        return _json_calls(raw)
    if not isinstance(raw, str):
        raise _DecodeError(f"cannot decode a {type(raw).__name__}")
    fenced = _FENCE.search(raw)
    text = (fenced.group(1) if fenced else raw).strip()
    if text[:1] in ("[", "{"):
        try:
            return _json_calls(json.loads(text))
        except (ValueError, _DecodeError):
            pass  # not JSON calls: read it as Python calls
    return _decode_prompt(text)


def _json_calls(value: Any) -> tuple[Call, ...]:
    if _depth(value) > MAX_DEPTH:
        raise _DecodeError(f"value nested deeper than {MAX_DEPTH} levels")
    elements = [value] if isinstance(value, dict) else value
    if not isinstance(elements, list):
        raise _DecodeError(f"expected a list of calls, got {type(value).__name__}")
    return tuple(_json_call(element) for element in elements)


def _json_call(element: Any) -> Call:
    if not isinstance(element, dict):
        raise _DecodeError(f"expected a call object, got {element!r:.80}")
    if isinstance(element.get("function"), dict):
        element = element["function"]  # OpenAI tool-call shape
    if isinstance(element.get("name"), str):
        name = element["name"]
        args: Any = next((element[k] for k in _ARG_KEYS if k in element), {})
    elif len(element) == 1:
        name, args = next(iter(element.items()))
    else:
        raise _DecodeError(f"not a call object: {sorted(map(str, element))}")
    return Call(name, _json_loads(args) if isinstance(args, str) else args)


_DECODERS: dict[str, Callable[[Any], tuple[Call, ...]]] = {
    "prompt": _decode_prompt,
    "fc": _decode_fc,
    "auto": _decode_auto,
}


# --------------------------------------------------------------------------- checking


def check(item: Item, decoded: Decoded, *, underscore_to_dot: bool = False) -> Check:
    """Score one decoded output with the official BFCL semantics.

    Relevance categories: ``irrelevance``/``live_irrelevance`` are correct when *no* call
    was decoded; a decode failure or an empty/wrongly shaped decode counts as correct
    abstention, exactly as the official ``_evaluate_single_relevance_entry`` (an exception in
    ``decode_ast`` sets ``contain_func_call = False``; ``is_empty_output`` treats ``[]`` and
    non-call shapes as empty). The oracle data confirms it: AIREV-Agent-0.8B's
    ``irrelevance_0`` answer "No function matches the user's request." fails to decode and
    is officially valid. ``live_relevance`` is correct when at least one call was decoded.

    AST categories (official ``ast_checker``): a decode failure fails the item with the
    decoder's error type; ``parallel*`` match calls to answers in any order; ``multiple*``
    need exactly the expected number of calls and check the first against the expected
    function; other categories need exactly one call. A valid simple/multiple verdict
    carries ``error_type="simple_function_checker:unclear"`` exactly when the official
    ``ast_checker`` returns it: its result starts with that type and only a string, list or
    dict value check replaces it with a fresh ``{"valid": True}``.

    Args:
        item: the test entry.
        decoded: :func:`decode` of the model output.
        underscore_to_dot: the model config flag of the official checker: compare against
            the function name with dots replaced by underscores (for APIs that forbid dots).

    Returns:
        The verdict, with the per-parameter diagnostic for AST categories.

    Raises:
        ValueError: an item of another category, or an AST item without possible answer.
    """
    if item.category not in CATEGORIES:
        raise ValueError(f"{item.id}: category {item.category!r} is not one of {CATEGORIES}")
    if item.category in RELEVANCE_CATEGORIES:
        return _check_relevance(item.category, decoded)
    if not item.possible_answer:
        raise ValueError(f"{item.id}: a {item.category} item needs its possible answer")
    params = _param_outcomes(item, decoded, underscore_to_dot)
    if decoded.calls is None:
        error = decoded.error
        if decoded.error_type == DECODER_FAILED:
            error = f"Invalid syntax. Failed to decode AST. {decoded.error}"
        return Check(False, decoded.error_type, error, params)
    fail = _ast_check(item, list(decoded.calls), underscore_to_dot)
    if fail is None:
        return Check(True, _valid_error_type(item, decoded.calls[0]), None, params)
    return Check(False, fail.error_type, fail.message, params)


def _valid_error_type(item: Item, call: Call) -> str | None:
    """The error type the official checker leaves on a *valid* verdict.

    ``simple_function_checker`` starts from ``error_type="simple_function_checker:unclear"``
    and returns that dict when valid, unless a string/list/dict value check replaced it
    (those return a fresh ``{"valid": True}``); parallel checkers return a fresh dict.
    """
    if "parallel" in item.category or not item.possible_answer:
        return None
    name, accepted = next(iter(item.possible_answer[0].items()))
    doc = _find_doc(item.functions, name) if "multiple" in item.category else item.functions[0]
    props = doc["parameters"]["properties"]
    if any(_is_special(props[p], accepted[p]) for p in call.args):
        return None
    return "simple_function_checker:unclear"


def _is_special(spec: dict[str, Any], accepted: list[Any]) -> bool:
    expected = PYTHON_TYPES[spec["type"]]
    answer_type = _answer_type(accepted)
    is_variable = answer_type is not None and answer_type is not expected
    return not is_variable and expected in (dict, list, str)


def _check_relevance(category: str, decoded: Decoded) -> Check:
    has_call = bool(decoded.calls)
    if "irrelevance" in category:
        if not has_call:
            return Check(True, None, None)
        message = "Valid syntax. Successfully decode AST when it should not."
        return Check(False, "irrelevance_error:decoder_success", message)
    if has_call:
        return Check(True, None, None)
    detail = decoded.error if decoded.error_type == DECODER_FAILED else None
    message = f"Invalid syntax. Failed to decode AST when it should have. {detail}"
    return Check(False, "relevance_error:decoder_failed", message)


def _ast_check(item: Item, calls: list[Call], underscore_to_dot: bool) -> _Fail | None:
    answers = item.possible_answer or []
    if "parallel" in item.category:
        return _parallel_no_order(item.functions, calls, answers, underscore_to_dot)
    if "multiple" in item.category:
        if len(calls) != len(answers):
            return _Fail("multiple_function_checker:wrong_count", "Wrong number of functions.")
        doc = _find_doc(item.functions, next(iter(answers[0])))
        return _simple(doc, calls[0], answers[0], underscore_to_dot)
    if len(calls) != 1:
        return _Fail("simple_function_checker:wrong_count", "Wrong number of functions.")
    return _simple(item.functions[0], calls[0], answers[0], underscore_to_dot)


def _parallel_no_order(
    docs: list[dict[str, Any]],
    calls: list[Call],
    answers: list[dict[str, dict[str, list[Any]]]],
    underscore_to_dot: bool,
) -> _Fail | None:
    if len(calls) != len(answers):
        return _Fail("parallel_function_checker_no_order:wrong_count", "Wrong number of functions.")
    matched: set[int] = set()
    for i, answer in enumerate(answers):
        doc = _find_doc(docs, next(iter(answer)))
        index = next(
            (
                k
                for k, call in enumerate(calls)
                if k not in matched and _simple(doc, call, answer, underscore_to_dot) is None
            ),
            None,
        )
        if index is None:
            left = [k for k in range(len(calls)) if k not in matched]
            message = (
                f"Could not find a matching function among index {left} of model output "
                f"for index {i} of possible answers."
            )
            return _Fail("parallel_function_checker_no_order:cannot_find_match", message)
        matched.add(index)
    return None


def _find_doc(docs: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(doc for doc in docs if doc["name"] == name)


def convert_name(name: str, underscore_to_dot: bool) -> str:
    """The function name the checker looks for (official ``convert_func_name``)."""
    return name.replace(".", "_") if underscore_to_dot and "." in name else name


def _simple(
    doc: dict[str, Any],
    call: Call,
    answer: dict[str, dict[str, list[Any]]],
    underscore_to_dot: bool,
) -> _Fail | None:
    accepted = next(iter(answer.values()))
    name = convert_name(doc["name"], underscore_to_dot)
    if call.name != name:
        return _Fail(
            "simple_function_checker:wrong_func_name",
            f"Function name {name!r} not found in model output.",
        )
    props = doc["parameters"]["properties"]
    for param in doc["parameters"].get("required", []):
        if param not in call.args:
            return _Fail(
                "simple_function_checker:missing_required",
                f"Missing required parameter: {param!r}.",
            )
    for param, value in call.args.items():
        if param not in props or param not in accepted:
            return _Fail(
                "simple_function_checker:unexpected_param", f"Unexpected parameter: {param!r}."
            )
        fail = _check_param(param, value, props[param], accepted[param])
        if fail is not None:
            return fail
    return _missing_optional(call, accepted)


def _missing_optional(call: Call, accepted: dict[str, list[Any]]) -> _Fail | None:
    for param, values in accepted.items():
        if param not in call.args and "" not in values:
            return _Fail(
                "simple_function_checker:missing_optional",
                f"Optional parameter {param!r} not provided and not marked as optional.",
            )
    return None


def _check_param(param: str, value: Any, spec: dict[str, Any], accepted: list[Any]) -> _Fail | None:
    desc = spec["type"]
    expected = PYTHON_TYPES[desc]
    nested = PYTHON_TYPES[spec["items"]["type"]] if desc in NESTED_TYPES else None
    if desc == "tuple" and type(value) is tuple:
        value = list(value)
    if desc == "float" and type(value) is int:
        value = _as_float(value)
    typed = _type_check(param, value, accepted, desc, expected, nested)
    if not typed.valid:
        return typed.fail
    return _value_check(param, value, accepted, expected, nested, typed.is_variable)


def _value_check(
    param: str,
    value: Any,
    accepted: list[Any],
    expected: type,
    nested: type | None,
    is_variable: bool,
) -> _Fail | None:
    # A variable (accepted values typed unlike the doc) skips the special checks.
    if not is_variable:
        if expected is dict:
            return _dict_check(value, accepted)
        if expected is list and nested is dict:
            return _list_dict_check(value, accepted)
        if expected is str:
            return _string_check(param, value, accepted)
        if expected is list:
            return _list_check(param, value, accepted)
    if value not in accepted:
        return _Fail(
            "value_error:others",
            f"Invalid value for parameter {param!r}: {value!r}. Expected one of {accepted}.",
        )
    return None


def _as_float(value: int) -> float | int:
    try:
        return float(value)
    except OverflowError:
        return value  # too large for a float: it stays an int and fails the type check


def _answer_type(accepted: Iterable[Any]) -> type | None:
    """Type of the first accepted value other than "" (the optional marker)."""
    for answer in accepted:
        if type(answer) is not str or answer:
            return type(answer)
    return None


def _type_check(
    param: str,
    value: Any,
    accepted: list[Any],
    desc: str,
    expected: type,
    nested: type | None,
) -> _Typed:
    """Official ``type_checker``: exact types, one nesting level, variables as strings."""
    answer_type = _answer_type(accepted)
    # An answer whose type differs from the doc's marks a variable name passed as a string.
    is_variable = answer_type is not None and answer_type is not expected
    nested_fail = None
    exact = type(value) is expected  # exact: bool is not an int, a tuple is not a list
    if exact:
        if nested is None or _nested_ok(param, value, accepted, nested):
            return _Typed(True, is_variable, None)
        nested_fail = _Fail(
            "type_error:nested",
            f"Nested type checking failed for parameter {param!r}. Expected outer type {desc} "
            f"with inner type {nested}. Parameter value: {value!r}.",
        )
    if answer_type is not None and type(value) is answer_type:
        return _Typed(nested_fail is None, True, nested_fail)
    first = (
        nested_fail.message
        if nested_fail
        else (
            f"Incorrect type for parameter {param!r}. Expected type {desc}, got "
            f"{type(value).__name__}. Parameter value: {value!r}."
        )
    )
    return _Typed(False, False, _Fail("type_error:simple", first))


def _nested_ok(param: str, value: list[Any], accepted: list[Any], nested: type) -> bool:
    for answer in accepted:
        # An accepted value that is not a list ("" for optional) passes without looking.
        if type(answer) is not list or all(
            _type_check(param, element, answer, str(nested), nested, None).valid
            for element in value
        ):
            return True
    return False


def standardize(text: str) -> str:
    """Official string normalisation: drop spaces and ``,./-_*^``, lowercase, ``'`` -> ``"``."""
    return _STANDARDIZE.sub("", text).lower().replace("'", '"')


def _std(value: Any) -> Any:
    return standardize(value) if type(value) is str else value


def _seq(value: Any) -> Iterable[Any]:
    # Accepted values are lists (or "" for optional); anything else cannot match.
    return value if isinstance(value, (list, str)) else ()


def _string_check(param: str, value: str, accepted: list[Any]) -> _Fail | None:
    if standardize(value) in [standardize(a) for a in accepted if type(a) is str]:
        return None
    return _Fail(
        "value_error:string",
        f"Invalid value for parameter {param!r}: {value!r}. Expected one of {accepted}. "
        "Case insensitive.",
    )


def _list_check(param: str, value: list[Any], accepted: list[Any]) -> _Fail | None:
    # Only top-level strings are standardized; "" (optional) becomes [] and so accepts [].
    options = [[_std(a) for a in _seq(answer)] for answer in accepted]
    if [_std(v) for v in value] in options:
        return None
    return _Fail(
        "value_error:list/tuple",
        f"Invalid value for parameter {param!r}: {value!r}. Expected one of {accepted}.",
    )


def _dict_check(value: Any, accepted: list[Any]) -> _Fail | None:
    fail = _Fail("dict_checker:unclear", None)
    for answer in accepted:
        if answer == "":
            continue
        fail = _dict_against(value, answer)  # type: ignore[assignment]
        if fail is None:
            return None
    return fail


def _dict_against(value: Any, answer: Any) -> _Fail | None:
    if not isinstance(value, dict) or not isinstance(answer, dict):
        return _Fail("value_error:dict_value", f"Expected a dict, got {value!r}.")
    errors: list[tuple[str, str]] = []
    for key, item in value.items():
        if key not in answer:
            errors.append(("value_error:dict_key", f"Unexpected dict key parameter: '{key}'."))
            break
        options = [_std(a) for a in _seq(answer[key])]
        if _std(item) not in options:
            message = f"Invalid value for parameter {key!r}: {item!r}. Expected one of {options}."
            errors.append(("value_error:dict_value", message))
            break
    # Officially this second pass runs even after a failure, and its error type wins.
    for key, options in answer.items():
        if key not in value and "" not in _seq(options):
            errors.append(("value_error:dict_key", f"Missing dict key parameter: '{key}'."))
            break
    return _Fail(errors[-1][0], errors[0][1]) if errors else None


def _list_dict_check(value: list[Any], accepted: list[Any]) -> _Fail | None:
    fail: _Fail | None = _Fail("list_dict_checker:unclear", None)
    for answer in accepted:
        answer = list(_seq(answer))
        if len(value) != len(answer):
            fail = _Fail("value_error:list_dict_count", "Wrong number of dictionaries in the list.")
            continue
        fail = next(
            (
                f
                for f in (_dict_check(v, [a]) for v, a in zip(value, answer, strict=True))
                if f is not None
            ),
            None,
        )
        if fail is None:
            return None
    return fail


def _param_outcomes(
    item: Item, decoded: Decoded, underscore_to_dot: bool
) -> tuple[ParamOutcome, ...]:
    """Per expected parameter: was it given correctly?

    Each expected call is paired with a decoded call of the same name: first every call
    that passes the official check pairs with its answer, then the rest pair in order.
    """
    calls = list(decoded.calls or ())
    answers = item.possible_answer or []
    docs = [_find_doc(item.functions, next(iter(answer))) for answer in answers]
    pairs = _pair_calls(docs, answers, calls, underscore_to_dot)
    out: list[ParamOutcome] = []
    for i, (doc, answer) in enumerate(zip(docs, answers, strict=True)):
        call = calls[pairs[i]] if i in pairs else None
        out.extend(_outcomes_for(doc, call, next(iter(answer.values()))))
    return tuple(out)


def _pair_calls(
    docs: list[dict[str, Any]],
    answers: list[dict[str, dict[str, list[Any]]]],
    calls: list[Call],
    underscore_to_dot: bool,
) -> dict[int, int]:
    """Answer index -> call index: calls passing the official check first, then by name."""
    pairs: dict[int, int] = {}
    # With one call and one answer the exact pass cannot change the pairing.
    passes = (True, False) if len(calls) > 1 or len(answers) > 1 else (False,)
    for exact in passes:
        for i, (doc, answer) in enumerate(zip(docs, answers, strict=True)):
            if i in pairs:
                continue
            index = _pick_call(doc, calls, answer, set(pairs.values()), exact, underscore_to_dot)
            if index is not None:
                pairs[i] = index
    return pairs


def _pick_call(
    doc: dict[str, Any],
    calls: list[Call],
    answer: dict[str, dict[str, list[Any]]],
    used: set[int],
    exact: bool,
    underscore_to_dot: bool,
) -> int | None:
    name = convert_name(doc["name"], underscore_to_dot)
    for k, call in enumerate(calls):
        if k in used or call.name != name:
            continue
        if not exact or _simple(doc, call, answer, underscore_to_dot) is None:
            return k
    return None


def _outcomes_for(
    doc: dict[str, Any], call: Call | None, accepted: dict[str, list[Any]]
) -> list[ParamOutcome]:
    props = doc["parameters"]["properties"]
    out = []
    for param, values in accepted.items():
        spec = props.get(param)
        if call is None or spec is None:
            correct = False
        elif param not in call.args:
            correct = "" in values
        else:
            correct = _check_param(param, call.args[param], spec, values) is None
        kind = spec["type"] if spec else "unknown"
        out.append(ParamOutcome(doc["name"], param, kind, call is not None, correct))
    return out


# --------------------------------------------------------------------------- scoring


def score_item(
    item: Item,
    raw: Any,
    *,
    system: str,
    style: str = "auto",
    underscore_to_dot: bool = False,
) -> Verdict:
    """Decode and check one raw output; the verdict carries the decoded calls and raw output.

    Args:
        item: the test entry.
        raw: the model output as in a result file.
        system: the system name recorded in the verdict.
        style: the decoder (:func:`decode`).
        underscore_to_dot: the official model-config flag (see :func:`check`).
    """
    decoded = decode(raw, style)
    result = check(item, decoded, underscore_to_dot=underscore_to_dot)
    return Verdict(
        system=system,
        test_category=item.category,
        id=item.id,
        valid=result.valid,
        error_type=result.error_type,
        error=result.error,
        decoded=None if decoded.calls is None else calls_json(decoded.calls),
        raw=raw,
        params=[p._asdict() for p in result.params],
    )


def score_results(
    items: Sequence[Item],
    results: Iterable[ResultLine],
    *,
    system: str,
    style: str = "auto",
    underscore_to_dot: bool = False,
    allow_missing: bool = False,
) -> pd.DataFrame:
    """Score result lines against their items (matched by id, as the official runner sorts).

    Every item of a category that has at least one result must have a result, unless
    ``allow_missing`` (the official ``--partial-eval``); items of other categories are
    ignored.

    Args:
        items: the loaded items.
        results: result lines (:func:`read_results`, :func:`fetch_results`...).
        system: the system name recorded in the verdicts.
        style: the decoder (:func:`decode`).
        underscore_to_dot: the official model-config flag (see :func:`check`).
        allow_missing: skip items of a covered category that have no result.

    Returns:
        The verdict frame, one row per scored item in item order (columns of :class:`Verdict`).

    Raises:
        BfclDataError: a result id that is not an item (naming file and line), or missing
            results.
    """
    by_id = _index_results(items, results)
    covered = {line.category for line in by_id.values()}
    rows = []
    for item in items:
        if item.category not in covered:
            continue
        line = by_id.get(item.id)
        if line is None:
            if allow_missing:
                continue
            raise BfclDataError(f"{system}: no result for {item.id!r} ({item.category})")
        verdict = score_item(
            item, line.result, system=system, style=style, underscore_to_dot=underscore_to_dot
        )
        rows.append(
            verdict._replace(
                latency=line.latency,
                input_token_count=line.input_token_count,
                output_token_count=line.output_token_count,
            )
        )
    return verdict_frame(rows)


def verdict_frame(verdicts: Iterable[Verdict]) -> pd.DataFrame:
    """Verdicts -> the verdict frame (object columns, so a missing value stays ``None``)."""
    frame = pd.DataFrame(list(verdicts), columns=Verdict._fields, dtype=object)
    return frame.astype({"valid": bool})


def _index_results(items: Sequence[Item], results: Iterable[ResultLine]) -> dict[str, ResultLine]:
    known = {item.id for item in items}
    by_id: dict[str, ResultLine] = {}
    for line in results:
        where = f"{line.source or 'results'}:{line.line}" if line.line else line.source or "results"
        if line.id not in known:
            raise BfclDataError(f"{where}: unknown id {line.id!r} (not among the loaded items)")
        if line.id in by_id:
            raise BfclDataError(f"{where}: duplicate result for {line.id!r}")
        by_id[line.id] = line
    return by_id


def calls_json(calls: Iterable[Call]) -> list[dict[str, Any]]:
    """Calls in the official decoded shape ``[{name: {param: value}}]``, JSON-safe."""
    return [{call.name: _jsonable(call.args)} for call in calls]


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k if isinstance(k, str) else str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)  # bytes, complex: as the official make_json_serializable


def to_records(verdicts: pd.DataFrame) -> list[VerdictRecord]:
    """Verdict frame -> validated records for a run's ``records/`` folder."""
    return [VerdictRecord.model_validate(row) for row in verdicts.to_dict("records")]


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
    for number, row in _read_jsonl(path, _ResultRow):
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

    With ``categories`` None, every result file of a known category is read (others, e.g.
    ``simple_java``, are skipped); named categories must each have exactly one file.
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
    registered = _registered_categories(model)
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


def _registered_categories(model: str) -> set[str]:
    """The categories of a registered public result set (empty when none is registered)."""
    return {n.rsplit("/", 1)[1] for n in sources.names(f"bfcl/result/{model}/")}


def write_results(lines: Iterable[ResultLine], folder: Path | str, model: str) -> list[Path]:
    """Write result lines as official result files, ready for ``bfcl evaluate``.

    Files go to ``<folder>/<model>/<non_live|live>/BFCL_v4_<category>_result.json`` (``/`` in
    the model name becomes ``_``, the official folder convention; the official runner
    searches the model folder recursively). For ``bfcl evaluate`` the model name must be
    one the installed ``bfcl-eval`` knows, and ``--result-dir`` must point at ``folder``.

    Returns:
        The files written.
    """
    by_category: dict[str, list[ResultLine]] = {}
    for line in lines:
        by_category.setdefault(line.category, []).append(line)
    written = []
    for cat, rows in by_category.items():
        group = "non_live" if cat in NON_LIVE else "live"
        path = Path(folder) / model.replace("/", "_") / group / result_filename(cat)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            for row in rows:
                fh.write(json.dumps(_result_json(row), ensure_ascii=False) + "\n")
        written.append(path)
    return written


def _result_json(line: ResultLine) -> dict[str, Any]:
    out: dict[str, Any] = {"id": line.id, "result": line.result}
    for key in ("input_token_count", "output_token_count", "latency"):
        value = getattr(line, key)
        if value is not None:
            out[key] = value
    return out


def fc_result(calls: Iterable[tuple[str, Any]]) -> list[dict[str, str]]:
    """Tool calls ``(name, arguments)`` -> the official FC result ``[{name: "<JSON args>"}]``.

    ``arguments`` may be a dict or an already-encoded JSON string (kept as is).
    """
    return [{name: args if isinstance(args, str) else json.dumps(args)} for name, args in calls]


# --------------------------------------------------------------------------- metrics


def category_table(verdicts: pd.DataFrame, *, level: float = DEFAULT_LEVEL) -> pd.DataFrame:
    """Accuracy per system and category with Wilson intervals.

    Returns:
        Columns ``system, test_category, n, correct, accuracy, ci_low, ci_high``.
    """
    rows = []
    for (system, cat), valid in verdicts.groupby(["system", "test_category"], sort=False)["valid"]:
        ci = wilson_interval(int(valid.sum()), int(valid.size), level)
        rows.append(
            {
                "system": system,
                "test_category": cat,
                "n": int(valid.size),
                "correct": int(valid.sum()),
                "accuracy": ci.estimate,
                "ci_low": ci.low,
                "ci_high": ci.high,
            }
        )
    frame = pd.DataFrame(
        rows, columns=["system", "test_category", "n", "correct", "accuracy", "ci_low", "ci_high"]
    )
    return _sort_categories(frame)


def _sort_categories(frame: pd.DataFrame) -> pd.DataFrame:
    order = {cat: i for i, cat in enumerate(CATEGORIES)}
    key = frame["test_category"].map(lambda c: order.get(c, len(order)))
    return (
        frame.assign(_order=key)
        .sort_values(["system", "_order"], kind="stable")
        .drop(columns="_order")
        .reset_index(drop=True)
    )


_SIMPLE_AST = ("simple_python", "simple_java", "simple_javascript")
_NON_LIVE_AST = ("multiple", "parallel", "parallel_multiple")
_LIVE_AST = ("live_simple", "live_multiple", "live_parallel", "live_parallel_multiple")
_MULTI_TURN = (
    "multi_turn_base",
    "multi_turn_miss_func",
    "multi_turn_miss_param",
    "multi_turn_long_context",
)
_WEB_SEARCH = ("web_search_base", "web_search_no_snippet")
_MEMORY = ("memory_kv", "memory_vector", "memory_rec_sum")
OVERALL_WEIGHTS = {"non_live": 10, "live": 10, "irrelevance": 10, "multi_turn": 30, "agentic": 40}
"""Weights of the v4 overall accuracy (``calculate_percentage_weighted_accuracy``)."""


def overall_table(categories: pd.DataFrame) -> pd.DataFrame:
    """The leaderboard's aggregate accuracies per system.

    Formula of ``generate_leaderboard_csv`` in ``bfcl_eval/eval_checker/eval_runner_helper.py``
    (bfcl-eval 2026.3.23; checked against the published glyphh-ada-1.1 score CSVs):

    - ``non_live`` = unweighted mean of [simple AST, multiple, parallel, parallel_multiple],
      where simple AST = unweighted mean of [simple_python, simple_java, simple_javascript];
    - ``live`` = mean of live_simple, live_multiple, live_parallel, live_parallel_multiple
      *weighted by item count*;
    - ``irrelevance`` ("Irrelevance Detection") = unweighted mean of [irrelevance,
      live_irrelevance]; ``relevance`` = live_relevance;
    - ``multi_turn`` = unweighted mean of its four categories; ``agentic`` = unweighted mean
      of [web search (mean of base, no_snippet), memory (mean of kv, vector, rec_sum)];
    - ``overall`` = (10·non_live + 10·live + 10·irrelevance + 30·multi_turn + 40·agentic)/100.

    As officially, a category with no score counts as accuracy 0 (with its full item count
    in weighted means); such categories are listed in ``missing`` (the leaderboard shows
    N/A for the sub-scores that contain them). Rows for categories this module does not
    run (Java, multi-turn, ...) may be added to ``categories`` by hand.

    Args:
        categories: columns ``system, test_category, accuracy`` and optionally ``n``.

    Returns:
        One row per system: ``non_live, live, irrelevance, relevance, multi_turn, agentic,
        overall, missing``.
    """
    rows = []
    for system, group in categories.groupby("system", sort=False):
        sizes = group["test_category"].map(CATEGORY_SIZES)
        n = (group["n"].fillna(sizes) if "n" in group else sizes).fillna(0)
        scores = {
            c: (float(a), float(k))
            for c, a, k in zip(group["test_category"], group["accuracy"], n, strict=True)
        }
        rows.append({"system": system, **_aggregate(scores)})
    columns = [
        "system",
        "non_live",
        "live",
        "irrelevance",
        "relevance",
        "multi_turn",
        "agentic",
        "overall",
        "missing",
    ]
    return pd.DataFrame(rows, columns=columns)


def _aggregate(scores: Mapping[str, tuple[float, float]]) -> dict[str, Any]:
    missing: list[str] = []

    def acc(cat: str) -> float:
        if cat not in scores:
            missing.append(cat)
        return scores.get(cat, (0.0, 0.0))[0]

    def mean(cats: Iterable[str]) -> float:
        values = [acc(c) for c in cats]
        return sum(values) / len(values)

    out: dict[str, Any] = {
        "non_live": (mean(_SIMPLE_AST) + sum(acc(c) for c in _NON_LIVE_AST)) / 4,
        "live": _weighted(scores, _LIVE_AST, missing),
        "irrelevance": mean(("irrelevance", "live_irrelevance")),
        "relevance": acc("live_relevance"),
        "multi_turn": mean(_MULTI_TURN),
        "agentic": (mean(_WEB_SEARCH) + mean(_MEMORY)) / 2,
    }
    total = sum(OVERALL_WEIGHTS.values())
    out["overall"] = sum(w * out[k] for k, w in OVERALL_WEIGHTS.items()) / total
    out["missing"] = sorted(set(missing))
    return out


def _weighted(
    scores: Mapping[str, tuple[float, float]], cats: Sequence[str], missing: list[str]
) -> float:
    pairs = []
    for cat in cats:
        if cat not in scores:
            missing.append(cat)
        pairs.append(scores.get(cat, (0.0, float(CATEGORY_SIZES.get(cat, 0)))))
    count = sum(k for _, k in pairs)
    return sum(a * k for a, k in pairs) / count if count else 0.0


def error_table(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Failures per system, category and official error type.

    Returns:
        Columns ``system, test_category, error_type, count, share`` (share of the category's
        items), most frequent first within each system and category.
    """
    sizes = verdicts.groupby(["system", "test_category"], sort=False).size().rename("items")
    failed = verdicts[~verdicts["valid"].astype(bool)]
    counts = failed.groupby(
        ["system", "test_category", "error_type"], sort=False, dropna=False
    ).size()
    frame = counts.rename("count").reset_index().join(sizes, on=["system", "test_category"])
    frame["share"] = frame["count"] / frame["items"]
    frame = frame.drop(columns="items").sort_values("count", ascending=False, kind="stable")
    return _sort_categories(frame)


def param_table(verdicts: pd.DataFrame) -> pd.DataFrame:
    """One row per expected parameter of every scored item (from the checker's details).

    Returns:
        Columns ``system, test_category, id, function, param, type, called, correct``.
    """
    rows = [
        {"system": v.system, "test_category": v.test_category, "id": v.id, **p}
        for v in verdicts.itertuples(index=False)
        for p in v.params
    ]
    columns = ["system", "test_category", "id", *ParamOutcome._fields]
    return pd.DataFrame(rows, columns=columns)


def param_accuracy(
    verdicts: pd.DataFrame, by: Sequence[str] = ("function", "param")
) -> pd.DataFrame:
    """Per-parameter accuracy: the share of items where the parameter was right.

    Args:
        verdicts: the verdict frame.
        by: grouping columns of :func:`param_table` besides ``system`` (e.g. ``("type",)``).

    Returns:
        Columns ``system, *by, n, correct, accuracy, called, accuracy_when_called`` (the last
        counts only items where the expected function was called).
    """
    table = param_table(verdicts)
    keys = ["system", *by]
    grouped = (
        table.groupby(keys, sort=False)
        .agg(n=("correct", "size"), correct=("correct", "sum"), called=("called", "sum"))
        .reset_index()
    )
    grouped["accuracy"] = grouped["correct"] / grouped["n"]
    grouped["accuracy_when_called"] = grouped["correct"] / grouped["called"].where(
        grouped["called"] > 0
    )
    return grouped[[*keys, "n", "correct", "accuracy", "called", "accuracy_when_called"]]


def systems_table(categories: pd.DataFrame) -> pd.DataFrame:
    """Systems × categories accuracy (categories in leaderboard order)."""
    table = categories.pivot(index="system", columns="test_category", values="accuracy")
    ordered = [c for c in CATEGORIES if c in table.columns]
    return table[ordered + [c for c in table.columns if c not in ordered]]


def summarize(
    verdicts: pd.DataFrame,
    *,
    level: float = DEFAULT_LEVEL,
    extra_categories: pd.DataFrame | None = None,
) -> Summary:
    """All BFCL tables from a verdict frame (pure).

    Args:
        verdicts: rows of :class:`Verdict` (from :func:`score_results`, several systems).
        level: confidence level of the Wilson intervals.
        extra_categories: scores of categories not run here (``system, test_category,
            accuracy[, n]``), included in the aggregates only.
    """
    categories = category_table(verdicts, level=level)
    combined = (
        categories
        if extra_categories is None
        else pd.concat([categories, extra_categories], ignore_index=True)
    )
    return Summary(
        categories=categories,
        overall=overall_table(combined),
        errors=error_table(verdicts),
        params=param_accuracy(verdicts),
        systems=systems_table(categories),
    )


# --------------------------------------------------------------------------- prompts and tools


PYTHON_HINT = " Note that the provided function is in Python 3 syntax."
"""Appended to every function description for Python categories, in both modes (official
``func_doc_language_specific_pre_processing``)."""
DEFAULT_SYSTEM_PROMPT = (
    "You are an expert in composing functions. You are given a question and a set of possible "
    "functions. Based on the question, you will need to make one or more function/tool calls "
    "to achieve the purpose.\n"
    "If none of the functions can be used, point it out. If the given question lacks the "
    "parameters required by the function, also point it out.\n"
    "You should only return the function calls in your response.\n\n"
    "If you decide to invoke any of the function(s), you MUST put it in the format of "
    "[func_name1(params_name1=params_value1, params_name2=params_value2...), func_name2(params)]"
    "\nYou SHOULD NOT include any other text in the response.\n\n"
    "At each turn, you should try your best to complete the tasks requested by the user within "
    "the current turn. Continue to output functions to call until you have fulfilled the "
    "user's request to the best of your ability. Once you have no more functions to call, the "
    "system will consider the current turn complete and proceed to the next turn or task.\n\n"
    "Here is a list of functions in JSON format that you can invoke.\n{functions}\n"
)
"""The leaderboard's default prompting system prompt (Apache-2.0): the text of
``_DEFAULT_SYSTEM_PROMPT`` in gorilla's ``bfcl_eval/constants/default_prompts.py`` (commit
bc64944), i.e. the default format ``ret_fmt=python&tool_call_tag=False&func_doc_fmt=json&
prompt_fmt=plaintext&style=classic``."""
OPENAI_TYPES = {
    "string": "string",
    "integer": "integer",
    "float": "number",
    "boolean": "boolean",
    "array": "array",
    "tuple": "array",
    "dict": "object",
    "any": "string",
}
"""BFCL type names -> JSON-schema types (the Python subset of gorilla's
``GORILLA_TO_OPENAPI``, ``bfcl_eval/constants/type_mappings.py``); unknown names -> string."""
MODES = ("prompt", "tools")


def hinted(functions: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Function docs with :data:`PYTHON_HINT` appended to each description (copies)."""
    return [
        {**doc, "description": str(doc.get("description", "")) + PYTHON_HINT} for doc in functions
    ]


def system_prompt(functions: Sequence[dict[str, Any]]) -> str:
    """The prompt-mode system prompt: instructions plus the function docs as JSON."""
    return DEFAULT_SYSTEM_PROMPT.format(functions=json.dumps(hinted(functions), indent=4))


def question_messages(item: Item) -> list[dict[str, str]]:
    """The item's chat messages (role and content only; single-turn: one turn)."""
    return [{"role": m["role"], "content": m["content"]} for turn in item.question for m in turn]


def prompt_messages(item: Item) -> list[dict[str, str]]:
    """Prompt mode: the system prompt first; a question's own system message is appended to
    it (official ``system_prompt_pre_processing_chat_model``)."""
    messages = question_messages(item)
    prompt = system_prompt(item.functions)
    if messages and messages[0]["role"] == "system":
        messages[0] = {"role": "system", "content": f"{prompt}\n\n{messages[0]['content']}"}
    else:
        messages.insert(0, {"role": "system", "content": prompt})
    return messages


def tool_name(name: str) -> str:
    """The name a tool gets in tools mode: OpenAI forbids dots (``math.sqrt`` -> ``math_sqrt``).

    The checker maps back by comparing with ``underscore_to_dot`` (official behaviour).
    """
    return name.replace(".", "_")


def to_openai_tools(functions: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """BFCL function docs -> OpenAI ``tools`` (official ``convert_to_tool``, OpenAI style).

    Names lose their dots (:func:`tool_name`); ``dict`` becomes ``object``, ``float`` becomes
    ``number`` with ``format: float`` and the official description note, ``tuple`` becomes
    ``array``, ``any`` becomes ``string``, recursively through ``properties`` and ``items``.
    """
    tools = []
    for doc in hinted(functions):
        parameters = {**_openai_schema(doc["parameters"]), "type": "object"}
        function = {"name": tool_name(doc["name"]), "description": doc["description"]}
        tools.append({"type": "function", "function": {**function, "parameters": parameters}})
    return tools


def _openai_schema(spec: Any) -> Any:
    if not isinstance(spec, dict):
        return spec
    out = dict(spec)
    kind = spec.get("type")
    out["type"] = OPENAI_TYPES.get(kind, "string") if isinstance(kind, str) else "string"
    if kind == "float":
        out["format"] = "float"
        out["description"] = str(spec.get("description", "")) + " This is a float type value."
    if isinstance(spec.get("properties"), dict):
        out["properties"] = {k: _openai_schema(v) for k, v in spec["properties"].items()}
    if isinstance(spec.get("items"), dict):
        out["items"] = _openai_schema(spec["items"])
    return out


def build_request(item: Item, mode: str) -> ChatRequest:
    """The chat request for one item: prompt mode (docs in the system prompt, Python call
    syntax expected) or tools mode (OpenAI ``tools``; none when the item offers no function)."""
    if mode == "tools":
        tools = to_openai_tools(item.functions) or None
        return ChatRequest(messages=question_messages(item), tools=tools)
    if mode != "prompt":
        raise ValueError(f"unknown mode {mode!r}; use one of {MODES}")
    return ChatRequest(messages=prompt_messages(item))


def response_result(response: ResponseRecord, mode: str) -> Any:
    """A model response -> the ``result`` of an official result-file line.

    Prompt mode: the text. Tools mode: ``[{name: "<JSON args>"}]`` when the model called
    tools, else its text (the official OpenAI FC handler does the same).
    """
    if mode == "tools" and response.tool_calls:
        return fc_result((c["name"], c["arguments"]) for c in response.tool_calls)
    return response.text or ""


# --------------------------------------------------------------------------- simulation


MISTAKES = (
    "wrong_value",
    "wrong_type",
    "missing_required",
    "extra_param",
    "wrong_function",
    "dropped_call",
    "hallucinated_call",
    "missed_call",
    "malformed",
)
"""Mistakes the simulator injects (``none`` = a correct answer)."""
_EXTRA_PARAMS = ("verbose", "debug", "timeout", "extra_option")
_PROSE = "None of the available functions can answer this question."


def correct_calls(item: Item) -> list[Call]:
    """A correct answer built from the possible answer: the first accepted value of each
    parameter, optional ones (accepting ``""``) left out unless the doc requires them."""
    calls = []
    for answer in item.possible_answer or []:
        name, accepted = next(iter(answer.items()))
        doc = _find_doc(item.functions, name)
        calls.append(Call(name, _correct_args(doc["parameters"], accepted)))
    return calls


def _correct_args(schema: dict[str, Any], accepted: Mapping[str, Any]) -> dict[str, Any]:
    props, required = schema.get("properties", {}), set(schema.get("required", []))
    args = {}
    for param, values in accepted.items():
        first = _first_option(values, param in required)
        if first is not _OMIT:
            args[param] = _correct_value(first, props.get(param) or {})
    return args


_OMIT = object()


def _first_option(values: Any, required: bool) -> Any:
    """The first accepted value; ``_OMIT`` for an optional one ("" accepted) or none left."""
    options = [v for v in _seq(values) if not (type(v) is str and v == "")]
    if not options or ("" in _seq(values) and not required):
        return _OMIT
    return options[0]


def _correct_value(value: Any, spec: dict[str, Any]) -> Any:
    # A dict answer maps each key to its accepted values; the checker looks one level deep.
    if spec.get("type") == "dict" and isinstance(value, dict):
        return _dict_answer(value)
    items = spec.get("items") or {}
    if spec.get("type") == "array" and items.get("type") == "dict" and isinstance(value, list):
        return [_dict_answer(v) if isinstance(v, dict) else v for v in value]
    return value


def _dict_answer(answer: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, values in answer.items():
        first = _first_option(values, required=False)
        if first is not _OMIT:
            out[key] = first
    return out


def applicable_mistakes(item: Item, mode: str) -> tuple[str, ...]:
    """The mistakes the simulator can make on ``item`` (besides ``malformed``)."""
    if item.category in ("irrelevance", "live_irrelevance"):
        # Without functions a tools-mode model has nothing to call.
        return ("hallucinated_call",) if item.functions or mode == "prompt" else ()
    if item.category == "live_relevance":
        return ("missed_call",)
    calls = correct_calls(item)
    kinds = []
    if _targets(item, calls, _near_miss):
        kinds.append("wrong_value")
    if _targets(item, calls, _as_string):
        kinds.append("wrong_type")
    if _required_targets(item, calls):
        kinds.append("missing_required")
    kinds.append("extra_param")
    if len({doc["name"] for doc in item.functions}) > 1:
        kinds.append("wrong_function")
    if len(calls) > 1:
        kinds.append("dropped_call")
    return tuple(kinds)


def plan_mistake(item: Item, knobs: SimSpec, mode: str, rng: np.random.Generator) -> str:
    """Which mistake a simulated system makes on ``item`` (``none`` when it answers right).

    Malformed output with probability ``knobs.malformed_rate``; otherwise a mistake with
    probability ``1 - knobs.accuracy_for(category)``, drawn uniformly from
    :func:`applicable_mistakes` (an item with none is answered right).
    """
    if rng.random() < knobs.malformed_rate:
        return "malformed"
    kinds = applicable_mistakes(item, mode)
    if rng.random() < knobs.accuracy_for(item.category) or not kinds:
        return "none"
    return str(kinds[int(rng.integers(len(kinds)))])


def sim_respond(
    request: ChatRequest,
    knobs: SimSpec,
    rng: np.random.Generator,
    *,
    item: Item,
    mode: str,
    mistake: str,
) -> SimReply:
    """A simulated function-calling model's reply to one BFCL item (the ``sim`` provider).

    Builds the correct calls from the possible answer, applies the planned ``mistake``
    (see :func:`plan_mistake`), and renders them as Python call syntax (prompt mode) or
    OpenAI tool calls with dot-free names (tools mode). No call means a prose answer.
    """
    calls = sim_calls(item, mistake, rng)
    if mistake == "malformed":
        return _malformed(calls or [_made_up_call(item)], mode)
    if not calls:
        return SimReply(_PROSE)
    if mode == "tools":
        tool_calls = tuple(
            ToolCall(id=f"call_{i}", name=tool_name(c.name), arguments=json.dumps(c.args))
            for i, c in enumerate(calls)
        )
        return SimReply(None, tool_calls, "tool_calls")
    return SimReply(render_calls(calls))


def render_calls(calls: Sequence[Call]) -> str:
    """Calls in the Python syntax prompt mode asks for: ``[f(a=1, b='x'), g()]``."""
    rendered = (
        f"{call.name}({', '.join(f'{k}={v!r}' for k, v in call.args.items())})" for call in calls
    )
    return f"[{', '.join(rendered)}]"


def sim_calls(item: Item, mistake: str, rng: np.random.Generator) -> list[Call]:
    """The calls a simulated system makes on ``item`` given its planned mistake."""
    if item.category in ("irrelevance", "live_irrelevance"):
        return [_made_up_call(item)] if mistake == "hallucinated_call" else []
    if item.category == "live_relevance":
        return [] if mistake == "missed_call" else [_made_up_call(item)]
    calls = correct_calls(item)
    apply = _APPLY.get(mistake)
    return apply(item, calls, rng) if apply else calls


def _made_up_call(item: Item) -> Call:
    """A plausible call of the first offered function with placeholder arguments."""
    if not item.functions:
        return Call("search", {"query": "answer"})
    doc = item.functions[0]
    props = doc["parameters"]["properties"]
    placeholders = {"integer": 1, "float": 1.0, "boolean": True, "array": [], "dict": {}}
    args = {
        p: placeholders.get(props.get(p, {}).get("type"), "example")
        for p in doc["parameters"].get("required", [])
    }
    return Call(doc["name"], args)


def _malformed(calls: Sequence[Call], mode: str) -> SimReply:
    if mode == "tools":
        broken = json.dumps(calls[0].args)[:-1]  # truncated JSON
        return SimReply(None, (ToolCall(name=tool_name(calls[0].name), arguments=broken),))
    return SimReply(f"Sure! {render_calls(calls)[1:-2]} should do it.")


_Target = tuple[int, str, Any]


def _targets(
    item: Item, calls: Sequence[Call], change: Callable[[Any, dict[str, Any]], list[Any]]
) -> list[_Target]:
    """(call index, parameter, new value) changes the checker rejects for that parameter."""
    answers = item.possible_answer or []
    out = []
    for i, (call, answer) in enumerate(zip(calls, answers, strict=True)):
        accepted = next(iter(answer.values()))
        props = _find_doc(item.functions, call.name)["parameters"]["properties"]
        for param, value in call.args.items():
            candidates = change(value, props[param]) if param in props else []
            bad = [v for v in candidates if _check_param(param, v, props[param], accepted[param])]
            if bad:
                out.append((i, param, bad[0]))
    return out


def _near_miss(value: Any, spec: dict[str, Any]) -> list[Any]:
    if type(value) is bool:
        return [not value]
    if type(value) is int:
        return [value + 1, value - 1]
    if type(value) is float:
        return [value + 1.0]
    if type(value) is str and value:
        middle = len(value) // 2
        swapped = value[: middle - 1] + value[middle] + value[middle - 1] + value[middle + 1 :]
        return [swapped if middle else value, value[:-1], value + "x"]
    return []


def _as_string(value: Any, spec: dict[str, Any]) -> list[Any]:
    if spec.get("type") not in ("integer", "float", "boolean"):
        return []  # only a number or boolean given as a string
    if type(value) is bool:
        return [str(value).lower()]
    return [str(value)] if type(value) in (int, float) else []


def _required_targets(item: Item, calls: Sequence[Call]) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    for i, call in enumerate(calls):
        required = _find_doc(item.functions, call.name)["parameters"].get("required", [])
        out.extend((i, p) for p in required if p in call.args)
    return out


def _pick(options: Sequence[Any], rng: np.random.Generator) -> Any:
    return options[int(rng.integers(len(options)))]


def _wrong_value(item: Item, calls: list[Call], rng: np.random.Generator) -> list[Call]:
    return _replace_arg(calls, _pick(_targets(item, calls, _near_miss), rng))


def _wrong_type(item: Item, calls: list[Call], rng: np.random.Generator) -> list[Call]:
    return _replace_arg(calls, _pick(_targets(item, calls, _as_string), rng))


def _replace_arg(calls: list[Call], target: _Target) -> list[Call]:
    i, param, value = target
    out = list(calls)
    out[i] = Call(calls[i].name, {**calls[i].args, param: value})
    return out


def _missing_required(item: Item, calls: list[Call], rng: np.random.Generator) -> list[Call]:
    i, param = _pick(_required_targets(item, calls), rng)
    out = list(calls)
    out[i] = Call(calls[i].name, {k: v for k, v in calls[i].args.items() if k != param})
    return out


def _extra_param(item: Item, calls: list[Call], rng: np.random.Generator) -> list[Call]:
    i = int(rng.integers(len(calls)))
    props = _find_doc(item.functions, calls[i].name)["parameters"]["properties"]
    name = next((p for p in _EXTRA_PARAMS if p not in props), "extra_option_2")
    out = list(calls)
    out[i] = Call(calls[i].name, {**calls[i].args, name: True})
    return out


def _wrong_function(item: Item, calls: list[Call], rng: np.random.Generator) -> list[Call]:
    i = int(rng.integers(len(calls)))
    others = [doc["name"] for doc in item.functions if doc["name"] != calls[i].name]
    out = list(calls)
    out[i] = Call(_pick(others, rng), calls[i].args)
    return out


def _dropped_call(item: Item, calls: list[Call], rng: np.random.Generator) -> list[Call]:
    i = int(rng.integers(len(calls)))
    return calls[:i] + calls[i + 1 :]


_APPLY: dict[str, Callable[[Item, list[Call], np.random.Generator], list[Call]]] = {
    "wrong_value": _wrong_value,
    "wrong_type": _wrong_type,
    "missing_required": _missing_required,
    "extra_param": _extra_param,
    "wrong_function": _wrong_function,
    "dropped_call": _dropped_call,
}


def expected_error_types(category: str, mistake: str) -> frozenset[str | None]:
    """The official error types the checker should give an injected mistake (``None`` = valid).

    Used to check the simulator against the checker; in parallel categories every call-level
    mistake surfaces as ``cannot_find_match`` (a dropped call as ``wrong_count``).
    """
    if mistake == "none":
        return frozenset({None})
    if category in ("irrelevance", "live_irrelevance"):
        # A malformed output is a (correct) abstention, as officially.
        return frozenset(
            {None} if mistake == "malformed" else {"irrelevance_error:decoder_success"}
        )
    if category == "live_relevance":
        return frozenset({"relevance_error:decoder_failed"})
    if mistake == "malformed":
        return frozenset({DECODER_FAILED})
    if "parallel" in category:
        if mistake == "dropped_call":
            return frozenset({"parallel_function_checker_no_order:wrong_count"})
        return frozenset({"parallel_function_checker_no_order:cannot_find_match"})
    return _SIMPLE_ERRORS[mistake]


_SIMPLE_ERRORS = {
    "wrong_value": frozenset(
        {
            "value_error:string",
            "value_error:others",
            "value_error:list/tuple",
            "value_error:dict_value",
            "value_error:dict_key",
        }
    ),
    "wrong_type": frozenset({"type_error:simple"}),
    "missing_required": frozenset({"simple_function_checker:missing_required"}),
    "extra_param": frozenset({"simple_function_checker:unexpected_param"}),
    "wrong_function": frozenset({"simple_function_checker:wrong_func_name"}),
}


# --------------------------------------------------------------------------- the study


def _categories_valid(value: str | list[str]) -> list[str]:
    try:
        return list(resolve_categories(value))
    except BfclDataError as exc:
        raise ValueError(str(exc)) from None


def _data_source(value: str, info: ValidationInfo) -> str:
    if value in ("registry", "package"):
        return value
    return str(data_path(value, info))


def _as_list(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


def _folder(value: str | None, info: ValidationInfo) -> str | None:
    return None if value is None else str(data_path(value, info))


class ResultSet(BaseModel):
    """Outputs a system already produced, in the official result-file format."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    """Label in tables and records (unique within the study)."""
    model: str | None = None
    """A registered public result set (``bfcl/result/<model>/...`` in ``sources.tsv``)."""
    folder: Annotated[str | None, AfterValidator(_folder)] = None
    """Or a local folder of ``BFCL_v4_<category>_result.json`` files (searched recursively;
    relative to the params file)."""
    style: Literal["auto", "prompt", "fc"] | None = None
    """Decoder: ``prompt`` (Python call strings), ``fc`` (``[{name: "<JSON args>"}]``) or
    ``auto`` (lenient); default: the registered style of a public model, else ``auto``."""
    underscore_to_dot: bool = False
    """Compare function names with dots replaced by underscores (the official flag for
    models whose API forbids dots in names)."""
    categories: Annotated[list[str] | None, BeforeValidator(_as_list)] = None
    """Categories this set must cover (a missing file is an error); default: every study
    category the set has (the others are reported as not submitted)."""
    leaderboard_model: str | None = None
    """The ``Model`` column of the registered published score tables
    (``bfcl/leaderboard/data_*``) for this system, to compare with our numbers."""

    @model_validator(mode="after")
    def _check_source(self) -> ResultSet:
        if (self.model is None) == (self.folder is None):
            raise ValueError(f"result set {self.name!r}: give exactly one of 'model', 'folder'")
        if self.model is not None and not sources.names(f"bfcl/result/{self.model}/"):
            known = ", ".join(PUBLIC_SYSTEMS)
            raise ValueError(f"no registered BFCL results for {self.model!r}; known: {known}")
        if self.categories is not None:
            self.categories = _categories_valid(self.categories)
        return self

    @property
    def decode_style(self) -> str:
        """The decoder used for this set."""
        if self.style is not None:
            return self.style
        return PUBLIC_SYSTEMS.get(self.model or "", "auto")


class BfclParams(StudyParams):
    """Parameters of a BFCL study (``study: bfcl``): result sets and/or live systems."""

    study: Literal["bfcl"] = "bfcl"
    data: Annotated[str, AfterValidator(_data_source)] = "registry"
    """Questions and answers: ``registry`` (pinned files, gorilla@6ea5797), ``package`` (an
    installed ``bfcl-eval``) or the path of a gorilla checkout."""
    categories: Annotated[
        list[str], BeforeValidator(_as_list), AfterValidator(_categories_valid)
    ] = Field(default_factory=lambda: ["all"])
    """Category names or groups (``all``, ``non_live``, ``live``)."""
    limit_per_category: int | None = Field(default=None, ge=1)
    """Keep the first N items of each category (demos); ``None`` keeps all."""
    result_sets: list[ResultSet] = Field(default_factory=list)
    """Systems scored from result files (public or local)."""
    systems: list[ModelSpec] = Field(default_factory=list)
    """Systems asked live (through the response cache; resumable)."""
    mode: Literal["prompt", "tools"] = "prompt"
    """How live systems are asked: ``prompt`` (function docs in the system prompt, Python call
    syntax) or ``tools`` (OpenAI native tools)."""
    system_modes: dict[str, Literal["prompt", "tools"]] = Field(default_factory=dict)
    """Per-system override of ``mode`` (system name -> mode)."""
    examples_per_system: int = Field(default=3, ge=0, le=50)
    """Failure examples shown per system (one per most frequent error type)."""

    @model_validator(mode="after")
    def _check_names(self) -> BfclParams:
        names = [r.name for r in self.result_sets] + [s.name for s in self.systems]
        if not names:
            raise ValueError("give at least one entry in 'result_sets' or 'systems'")
        if len(set(names)) != len(names):
            raise ValueError(f"system names must be unique across result_sets and systems: {names}")
        live = {s.name for s in self.systems}
        for name in self.system_modes:
            if name not in live:
                raise ValueError(
                    f"system_modes: unknown system {name!r} (live systems: {sorted(live)})"
                )
        for rs in self.result_sets:
            outside = set(rs.categories or ()) - set(self.categories)
            if outside:
                raise ValueError(
                    f"result set {rs.name!r}: categories {sorted(outside)} are not studied"
                )
        return self

    def model_specs(self) -> list[ModelSpec]:
        """The live systems (result sets call no model)."""
        return list(self.systems)

    def mode_of(self, name: str) -> str:
        """How the live system ``name`` is asked."""
        return self.system_modes.get(name, self.mode)


def load_study_items(params: BfclParams) -> list[Item]:
    """The study's items: its categories, each cut to ``limit_per_category``."""
    return limit_items(load(params.categories, source=params.data), params.limit_per_category)


def limit_items(items: Iterable[Item], limit: int | None) -> list[Item]:
    """The first ``limit`` items of each category (all when ``limit`` is None)."""
    seen: dict[str, int] = {}
    kept = []
    for item in items:
        seen[item.category] = seen.get(item.category, 0) + 1
        if limit is None or seen[item.category] <= limit:
            kept.append(item)
    return kept


def answer_jobs(items: Sequence[Item], spec: ModelSpec, mode: str, *, seed: int) -> list[Job]:
    """One chat job per item (key = item id); simulated systems get their planned mistake.

    Args:
        items: the items to ask.
        spec: the live system.
        mode: ``prompt`` or ``tools``.
        seed: the study seed (a spec's own ``seed`` wins, as in the model client).
    """
    sim_seed = spec.seed if spec.seed is not None else seed
    jobs = []
    for item in items:
        request = build_request(item, mode)
        sim = None
        if spec.simulated:
            rng = sim_rng(sim_seed, spec.name, f"plan:{item.id}")
            mistake = plan_mistake(item, spec.sim, mode, rng)
            respond = partial(sim_respond, item=item, mode=mode, mistake=mistake)
            truth = {"mistake": mistake, "mode": mode, "answer": item.possible_answer}
            sim = SimTask(respond, item.id, truth)
        jobs.append(Job(item.id, request, sim))
    return jobs


def read_result_set(result_set: ResultSet, categories: Sequence[str]) -> list[ResultLine]:
    """The result lines of a result set for the study's ``categories``.

    Raises:
        BfclDataError: a malformed file (naming file and line), or a category the set must
            cover (``categories`` of the set) without a result file.
    """
    if result_set.categories is not None:
        wanted = [c for c in result_set.categories if c in categories]
        if result_set.model is not None:
            return fetch_results(result_set.model, wanted)
        return read_result_dir(str(result_set.folder), wanted)
    if result_set.model is not None:
        registered = _registered_categories(result_set.model)
        return fetch_results(result_set.model, [c for c in categories if c in registered])
    return [line for line in read_result_dir(str(result_set.folder)) if line.category in categories]


def score_result_set(
    result_set: ResultSet, items: Sequence[Item], known_ids: set[str] | None = None
) -> pd.DataFrame:
    """Read and score one result set on ``items``.

    Args:
        result_set: the set.
        items: the (possibly limited) study items.
        known_ids: every id of the loaded categories when ``items`` is a subset: results of
            known items outside the subset are skipped, unknown ids stay errors.
    """
    categories = tuple(dict.fromkeys(item.category for item in items))
    lines = read_result_set(result_set, categories)
    if known_ids is not None:
        wanted = {item.id for item in items}
        lines = [line for line in lines if line.id in wanted or line.id not in known_ids]
    verdicts = score_results(
        items,
        lines,
        system=result_set.name,
        style=result_set.decode_style,
        underscore_to_dot=result_set.underscore_to_dot,
    )
    return verdicts.assign(mode="results")


CALL_FAILED = "evalbench:call_failed"
"""Error type of an item whose model call failed (an error record: counted wrong, shown apart,
left out of the written result files)."""


def run_live_system(run: Any, spec: ModelSpec, items: Sequence[Item]) -> pd.DataFrame:
    """Ask one live system every item (resumable), write its official result files, score.

    Result files go to ``<run>/bfcl_results/<system>/<non_live|live>/`` (see
    :func:`write_results`). Items whose call failed are not written and score as
    :data:`CALL_FAILED`.
    """
    params: BfclParams = run.params
    mode = params.mode_of(spec.name)
    jobs = answer_jobs(items, spec, mode, seed=params.seed)
    answers = run.ask(spec, jobs, desc=f"BFCL {spec.name} ({mode})")
    lines = [
        _result_line(item, answers[item.id], mode) for item in items if not answers[item.id].error
    ]
    write_results(lines, run.dir / "bfcl_results", spec.name)
    scored = score_results(
        items,
        lines,
        system=spec.name,
        style="fc" if mode == "tools" else "prompt",
        underscore_to_dot=mode == "tools",
        allow_missing=True,
    )
    by_id = {row.id: Verdict(*row) for row in scored.itertuples(index=False)}
    injected = {job.key: job.sim.truth["mistake"] for job in jobs if job.sim is not None}
    rows = [
        (
            by_id.get(item.id) or _failed_verdict(spec.name, item, str(answers[item.id].error))
        )._replace(mode=mode, injected=injected.get(item.id))
        for item in items
    ]
    return verdict_frame(rows)


def _result_line(item: Item, answer: ResponseRecord, mode: str) -> ResultLine:
    return ResultLine(
        item.id,
        item.category,
        response_result(answer, mode),
        answer.prompt_tokens,
        answer.completion_tokens,
        round(answer.latency_s, 4),
    )


def _failed_verdict(system: str, item: Item, error: str) -> Verdict:
    return Verdict(system, item.category, item.id, False, CALL_FAILED, error, None, None, [])


def run_study(run: Any, items: Sequence[Item]) -> pd.DataFrame:
    """Score every result set and live system on ``items``; write ``records/bfcl.jsonl``.

    Args:
        run: the open :class:`evalbench.runs.Run` of a ``bfcl`` study.
        items: from :func:`load_study_items`.

    Returns:
        The verdict frame (one row per system and item; see :class:`VerdictRecord`).
    """
    params: BfclParams = run.params
    known = None
    if params.limit_per_category is not None and params.result_sets:
        known = {item.id for item in load(params.categories, source=params.data)}
    frames = [score_result_set(rs, items, known) for rs in params.result_sets]
    frames += [run_live_system(run, spec, items) for spec in params.systems]
    verdicts = pd.concat(frames, ignore_index=True)
    # The frame's columns are exactly VerdictRecord's fields and hold JSON types already;
    # validating ~10k records through pydantic would double the study's scoring time.
    run.write_records("bfcl", verdicts)
    return verdicts


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
"""Aggregate (a column of :func:`overall_table`) -> its ``data_overall`` column."""


def published_row(table: str, model: str) -> dict[str, float]:
    """One model's row of a registered published score table, percentages as fractions.

    ``N/A`` becomes NaN.

    Raises:
        BfclDataError: the model is not in the table (the message lists those that are).
    """
    path = sources.fetch(f"bfcl/leaderboard/{table}", progress=False)
    frame = pd.read_csv(path, dtype=str)
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


def published_extras(params: BfclParams) -> pd.DataFrame | None:
    """Published scores of the categories this module does not run (Java, multi-turn,
    agentic...) for result sets with a ``leaderboard_model``, ready for
    ``summarize(extra_categories=...)`` so their overall matches the leaderboard's."""
    frames = []
    for rs in params.result_sets:
        if rs.leaderboard_model:
            scores = published_scores(rs.leaderboard_model)
            extra = scores[~scores["test_category"].isin(CATEGORIES) & scores["accuracy"].notna()]
            frames.append(extra.assign(system=rs.name))
    return pd.concat(frames, ignore_index=True) if frames else None


def leaderboard_comparison(summary: Summary, params: BfclParams) -> pd.DataFrame:
    """Our numbers beside the published ones, for result sets with a ``leaderboard_model``.

    Returns:
        Columns ``system, metric, ours, published, difference`` (fractions): every category
        we score, then the aggregates of :data:`PUBLISHED_AGGREGATES`.
    """
    rows = []
    for rs in params.result_sets:
        if not rs.leaderboard_model:
            continue
        published = published_scores(rs.leaderboard_model).set_index("test_category")["accuracy"]
        aggregates = published_row("data_overall", rs.leaderboard_model)
        ours = summary.categories[summary.categories["system"] == rs.name]
        for cat, acc in zip(ours["test_category"], ours["accuracy"], strict=True):
            rows.append((rs.name, cat, float(acc), float(published.get(cat, float("nan")))))
        overall = summary.overall.set_index("system").loc[rs.name]
        for key, column in PUBLISHED_AGGREGATES.items():
            rows.append((rs.name, key, float(overall[key]), aggregates.get(column, float("nan"))))
    frame = pd.DataFrame(rows, columns=["system", "metric", "ours", "published"])
    # Rounded so float noise does not print as -0.0000; published values have 4 decimals.
    return frame.assign(difference=(frame["ours"] - frame["published"]).round(9) + 0.0)


# --------------------------------------------------------------------------- report helpers


def accuracy_matrix(
    categories: pd.DataFrame, order: Sequence[str] | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Systems × categories accuracy and matching annotations ``acc`` / ``[low, high]``.

    Args:
        categories: :func:`category_table` output.
        order: system order of the rows (default: alphabetical).

    Returns:
        (values, labels): two frames of the same shape; labels are "" where not scored.
    """
    values = systems_table(categories)
    if order is not None:
        values = values.loc[[s for s in order if s in values.index]]
    labels = pd.DataFrame("", index=values.index, columns=values.columns)
    for row in categories.itertuples(index=False):
        labels.loc[row.system, row.test_category] = (
            f"{row.accuracy:.2f}\n[{row.ci_low:.2f}, {row.ci_high:.2f}]"
        )
    return values, labels


def error_matrix(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Failures per official error type (rows) and system (columns), all categories pooled."""
    failed = verdicts[~verdicts["valid"].astype(bool)]
    table = pd.crosstab(failed["error_type"].fillna("(none)"), failed["system"])
    order = table.sum(axis=1).sort_values(ascending=False).index
    return table.loc[order]


def injected_vs_detected(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Simulated systems: how the checker judged each injected mistake.

    Returns:
        Columns ``injected, verdict, items, as_expected``: the verdict is the official error
        type (``valid`` for a correct verdict); ``as_expected`` says whether it is one
        :func:`expected_error_types` allows (a failed call never is).
    """
    sim = verdicts[verdicts["injected"].notna()]
    valid = sim["valid"].astype(bool)
    verdict = sim["error_type"].where(~valid, "valid").fillna("(none)")
    counts = (
        pd.DataFrame(
            {"injected": sim["injected"], "verdict": verdict, "category": sim["test_category"]}
        )
        .groupby(["injected", "verdict", "category"], sort=True)
        .size()
        .rename("items")
        .reset_index()
    )
    counts["as_expected"] = [
        _as_expected(cat, mistake, v)
        for cat, mistake, v in zip(
            counts["category"], counts["injected"], counts["verdict"], strict=True
        )
    ]
    return (
        counts.groupby(["injected", "verdict", "as_expected"], sort=True)["items"]
        .sum()
        .reset_index()
    )


def _as_expected(category: str, mistake: str, verdict: str) -> bool:
    allowed = expected_error_types(category, mistake)
    return (None in allowed) if verdict == "valid" else verdict in allowed


def coverage_table(verdicts: pd.DataFrame, categories: Sequence[str]) -> pd.DataFrame:
    """Per system: items scored, categories scored and the studied categories not submitted."""
    rows = []
    for system, group in verdicts.groupby("system", sort=False):
        scored = set(group["test_category"])
        missing = [c for c in categories if c not in scored]
        rows.append(
            (system, str(group["mode"].iloc[0]), len(group), len(scored), ", ".join(missing))
        )
    return pd.DataFrame(rows, columns=["system", "mode", "items", "categories", "not submitted"])


def result_set_sources(params: BfclParams) -> pd.DataFrame:
    """Where each result set comes from: the registered URL (commit) and licence, or folder."""
    rows = []
    for rs in params.result_sets:
        if rs.model is None:
            rows.append((rs.name, str(rs.folder), "local files", rs.decode_style))
            continue
        first = sources.get(sources.names(f"bfcl/result/{rs.model}/")[0])
        folder = first.url.rsplit("/", 2)[0] + "/"
        rows.append((rs.name, folder, first.license, rs.decode_style))
    return pd.DataFrame(rows, columns=["system", "source", "license", "decoder"])


def failure_examples(
    verdicts: pd.DataFrame, items: Sequence[Item], *, per_system: int = 3, seed: int = 0
) -> list[dict[str, Any]]:
    """A few failures per system, one for each of its most frequent error types.

    Returns:
        Rows with ``system, test_category, id, error_type, question, expected, decoded, raw,
        error`` (untrusted text: show them escaped, e.g. with ``display.examples``).
    """
    by_id = {item.id: item for item in items}
    failed = verdicts[~verdicts["valid"].astype(bool)]
    rows = []
    for _, group in failed.groupby("system", sort=False):
        types = group["error_type"].fillna("").value_counts().index[:per_system]
        for kind in types:
            pick = group[group["error_type"].fillna("") == kind].sample(1, random_state=seed)
            rows.append(_example(pick.iloc[0], by_id[pick.iloc[0]["id"]]))
    return rows


def _example(row: pd.Series, item: Item) -> dict[str, Any]:
    if item.category in ("irrelevance", "live_irrelevance"):
        expected = "no function call (the functions cannot answer this)"
    elif item.category == "live_relevance":
        expected = "at least one function call"
    else:
        expected = json.dumps(item.possible_answer, ensure_ascii=False)
    question = next(
        (m["content"] for m in reversed(question_messages(item)) if m["role"] == "user"), ""
    )
    decoded = row["decoded"]
    return {
        "system": row["system"],
        "test_category": row["test_category"],
        "id": row["id"],
        "error_type": row["error_type"],
        "question": question,
        "expected": expected,
        "decoded": "(decoding failed)"
        if decoded is None
        else json.dumps(decoded, ensure_ascii=False),
        "raw": row["raw"]
        if isinstance(row["raw"], str)
        else json.dumps(row["raw"], ensure_ascii=False),
        "error": row["error"],
    }
