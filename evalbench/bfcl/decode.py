"""Decode a raw model output into function calls, never evaluating it (``ast`` literals only).

Reimplements (does not import or copy) the handlers' ``decode_ast`` of ``bfcl-eval``
2026.3.23 (gorilla commit 6ea5797): ``model_handler/utils.py``
(``default_decode_ast_prompting``/``ast_parse``/``resolve_ast_by_type``) for prompting models
and ``json.loads`` of each call's argument string for function-calling models, plus a lenient
``auto`` style for new outputs. Deliberate deviations, on inputs the public data never
contains: arithmetic (``ast.BinOp``) is never evaluated (the official decoder calls ``eval``
on it), so ``f(x=2*3)`` is a decode failure here; outputs longer than
:data:`MAX_OUTPUT_CHARS` or nested deeper than :data:`MAX_DEPTH` are decode failures.
"""

from __future__ import annotations

import ast
import json
import keyword
import re
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

from .schema import Call

STYLES = ("auto", "prompt", "fc")
MAX_OUTPUT_CHARS = 100_000  # public outputs are < 4k characters; parse time stays in ms
MAX_DEPTH = 100  # nesting levels of a decoded value
DECODER_FAILED = "ast_decoder:decoder_failed"
WRONG_FORMAT = "ast_decoder:decoder_wrong_output_format"
WRONG_FORMAT_MESSAGE = (
    "Did not output in the specified format. Note: the model_result is wrapped in a string "
    "to ensure json serializability."
)
_FENCE = re.compile(r"```[A-Za-z_]*[ \t]*\n?(.*?)```", re.DOTALL)
_ARG_KEYS = ("arguments", "parameters", "args")


class Decoded(NamedTuple):
    """What the decoder made of one raw model output."""

    calls: tuple[Call, ...] | None
    """The calls in output order; None when decoding failed."""
    error_type: str | None = None
    """``ast_decoder:decoder_failed`` or ``ast_decoder:decoder_wrong_output_format``."""
    error: str | None = None
    """Why decoding failed (the exception text, as the official runner reports it)."""


class _DecodeError(Exception):
    """Raised inside the decoders; becomes a :class:`Decoded` failure."""


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
    for call in calls:
        if type(call.args) is not dict:
            return Decoded(None, WRONG_FORMAT, WRONG_FORMAT_MESSAGE)
    return Decoded(calls)


def _exceeds(raw: Any, limit: int) -> bool:
    """Whether ``raw`` holds more than ``limit`` characters (strings plus container items)."""
    if type(raw) is str:
        return len(raw) > limit
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


def parse_python_calls(text: str) -> tuple[Call, ...]:
    """Python call syntax (``[f(a=1), m.g(b='x')]`` or one call) -> calls, as the official
    ``ast_parse`` reads it (literals only, never evaluated).

    Raises:
        ValueError: the text is not a call or a list of calls.
    """
    try:
        return _parse_python_calls(text)
    except _DecodeError as exc:
        raise ValueError(str(exc)) from None


def _parse_python_calls(text: str) -> tuple[Call, ...]:
    fast = _simple_calls(text)
    return fast if fast is not None else _ast_calls(text)


def _ast_calls(text: str) -> tuple[Call, ...]:
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


# The common shape of a prompting model's answer, ``[f(a='x', b=2), m.g(c=[1, 2])]``, read by
# regular expressions instead of building Python's syntax tree (which takes most of the
# decoding time). Only text whose meaning is beyond doubt takes this path: ASCII names,
# quotes without backslashes or line breaks, decimal numbers without leading zeros,
# underscores or exponents, flat lists of those; anything else (and any name that is a
# Python keyword, a repeated keyword argument, a list without calls) goes to ``ast.parse``, so
# every result is the one ``ast`` gives (tests/bfcl compares both on every public output).
_WS = r"[ \t\n]*"
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_STRING = r"'[^'\\\n\r\x00\ud800-\udfff]*'|\"[^\"\\\n\r\x00\ud800-\udfff]*\""
_NUMBER = r"-?(?:0|[1-9][0-9]{0,3999})(?:\.[0-9]+)?(?![0-9A-Za-z_.])"
_SCALAR = f"(?:{_STRING}|{_NUMBER}|{_NAME})"
_LIST = rf"\[{_WS}(?:{_SCALAR}(?:{_WS},{_WS}{_SCALAR})*{_WS})?\]"
_ARG = rf"({_NAME}){_WS}={_WS}({_SCALAR}|{_LIST})"
_CALL = rf"({_NAME}(?:\.{_NAME})*){_WS}\({_WS}((?:{_ARG}(?:{_WS},{_WS}{_ARG})*)?){_WS}\)"
_TOP = re.compile(rf"\[{_WS}{_CALL}(?:{_WS},{_WS}{_CALL})*{_WS}\]")
# One pass over text the shape has been checked for: a call's name (then its arguments) or
# one argument; the values of each are consumed whole, so nothing inside a quote is read.
_PIECE = re.compile(rf"({_NAME}(?:\.{_NAME})*){_WS}\(|({_NAME}){_WS}={_WS}({_SCALAR}|{_LIST})")
_SCALAR_RE = re.compile(_SCALAR)
_CONSTANTS: dict[str, Any] = {"True": True, "False": False, "None": None}
_RESERVED = frozenset(keyword.kwlist) | {"__debug__"}  # ast refuses them as names
_NO = object()


def _simple_calls(text: str) -> tuple[Call, ...] | None:
    """The calls of ``text`` when it has the simple shape, else ``None`` (use ``ast``)."""
    if _TOP.fullmatch(text) is None:
        return None
    calls = []
    args: dict[str, Any] = {}
    for name, key, value in _PIECE.findall(text):
        if name:
            if not _RESERVED.isdisjoint(name.split(".")):
                return None
            args = {}
            calls.append(Call(name, args))
            continue
        parsed = _simple_value(value)
        if parsed is _NO or key in args or key in _RESERVED:
            return None  # a repeated keyword argument is a SyntaxError for ast
        args[key] = parsed
    return tuple(calls)


def _simple_value(text: str) -> Any:
    first = text[0]
    if first == "'" or first == '"':
        return text[1:-1]
    if first == "[":
        values = [_simple_value(m) for m in _SCALAR_RE.findall(text, 1)]
        return _NO if any(v is _NO for v in values) else values
    if first == "-" or "0" <= first <= "9":
        return float(text) if "." in text else int(text)
    if text in _CONSTANTS:
        return _CONSTANTS[text]
    return _NO if text in _RESERVED else text


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
    # no deeper than its opening brackets: only texts with many need the walk
    if text.count("[") + text.count("{") > MAX_DEPTH and _depth(value) > MAX_DEPTH:
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
