"""Java and JavaScript AST checking with the official type conversions.

Reimplements (does not import or copy) the Java/JavaScript branches of
``simple_function_checker`` in ``bfcl_eval/eval_checker/ast_eval/ast_checker.py`` and the
converters ``type_convertor/java_type_converter.py`` and ``js_type_converter.py`` of
``bfcl-eval`` 2026.3.23 (gorilla commit 6ea5797). Every argument must be a *string* of Java
or JavaScript source (``type_error:java`` / ``type_error:js`` otherwise); it is converted by
the parameter's declared type with the official regular expressions (a string that does
not match stays a string, so a wrong literal fails the type check), then checked like a
Python value (:mod:`.checker`). Official quirks kept: a Java ``char`` is never converted
(its pattern cannot match), ``new ArrayList<>(Arrays.asList(...))`` elements split on
every comma, a JavaScript 2-D array is read by the first pattern that matches.

One deviation: the official converters raise for ``Set``, ``Hashtable``, ``Queue`` and
``Stack`` (no pinned item declares them); here that fails the item (``type_error:java``)
instead of the whole run. Outputs are decoded as function-calling results (``fc``): the
official prompt-mode decoder for these languages is a tree-sitter parser evalbench does
not reimplement.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .checker import (
    Check,
    Failure,
    missing_optional,
    name_and_required,
    type_check,
    value_check,
)
from .decode import DECODER_FAILED, Decoded
from .schema import JAVA_TYPES, JS_TYPES, Call, Item

NESTED = frozenset({"Array", "ArrayList", "array"})
"""Types whose element type (``items.type``) is converted and checked too."""

_INT = re.compile(r"^-?\d+$")
_JAVA_FLOAT = re.compile(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?[fF]$")
_JAVA_DOUBLE = re.compile(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?$")
_JAVA_LONG = re.compile(r"^-?\d+[lL]$")
_JAVA_CHAR = re.compile(r"^\'.$\'")  # sic: cannot match, so a char stays as written
_AS_LIST = re.compile(r"new\s+ArrayList<\w*>\(Arrays\.asList\((.+?)\)\)")
_ADDS = re.compile(r"new\s+ArrayList<\w*>\(\)\s*\{\{\s*(.+?)\s*\}\}", re.DOTALL)
_ADD = re.compile(r"add\((.+?)\)")
_EMPTY_LIST = re.compile(r"new\s+ArrayList<\w*>\(\)")
_ARRAY = re.compile(r"new\s+\w+\[\]\s*\{(.*?)\}")
_HASHMAP = re.compile(r"new\s+HashMap<.*?>\s*\(\)\s*\{\s*\{?\s*(.*?)\s*\}?\s*\}", re.DOTALL)
_PUT = re.compile(r"put\(\"(.*?)\",\s*(.*?)\)")
_EMPTY_MAP = re.compile(r"new\s+HashMap<.*?>\s*\(\)")
_JS_FLOAT = re.compile(r"^-?\d+(\.\d+)?$")
_JS_BIGINT = re.compile(r"^-?\d+n$")
_JS_2D = re.compile(
    r"\[\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\]|\bnew\s+Array\(\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\)"
)
_JS_1D = re.compile(r"\[(.*?)\]|\bnew\s+Array\((.*?)\)")
_BRACKETS = re.compile(r"\[(.*?)\]")
_JS_OBJECT = re.compile(r"\{(.*?)\}")
_JS_PAIR = re.compile(r"([^:]+):\s*(.*?)(?:,\s*(?=[^,]+:)|$)")


class _Unconvertible(Exception):
    """A declared type the official converter raises on."""


# --------------------------------------------------------------------------- Java


def java_value(text: str, kind: str, nested: str | None = None) -> Any:
    """Official ``java_type_converter``: Java source text -> a Python value by declared type."""
    if kind in ("byte", "short", "integer"):
        return int(text) if _INT.match(text) else text
    if kind == "float":
        return float(re.sub(r"[fF]$", "", text)) if _JAVA_FLOAT.match(text) else text
    if kind == "double":
        return float(text) if _JAVA_DOUBLE.match(text) else text
    if kind == "long":
        return int(re.sub(r"[lL]$", "", text)) if _JAVA_LONG.match(text) else text
    if kind == "boolean":
        return text == "true" if text in ("true", "false") else text
    if kind in ("char", "String", "any"):
        return text
    if kind == "ArrayList":
        return _java_arraylist(text, nested)
    if kind == "Array":
        return _java_array(text, nested)
    if kind == "HashMap":
        return _java_hashmap(text)
    if kind in ("Set", "Hashtable", "Queue", "Stack"):
        raise _Unconvertible(f"{kind} conversion is not implemented")
    raise ValueError(f"Unsupported type: {kind}")


def _java_element(text: str, nested: str | None) -> Any:
    if nested in ("char", "String"):
        return text[1:-1]  # drops the quotes
    return java_value(text, nested) if nested else java_literal(text)


def _java_arraylist(text: str, nested: str | None) -> Any:
    match = _AS_LIST.search(text)
    if match:
        return [_java_element(e.strip(), nested) for e in match.group(1).split(",")]
    match = _ADDS.search(text)
    if match:
        return [_java_element(a.strip(), nested) for a in _ADD.findall(match.group(1))]
    return [] if _EMPTY_LIST.search(text) else text


def _java_array(text: str, nested: str | None) -> Any:
    match = _ARRAY.search(text)
    if not match:
        return text
    parts = [x.strip() for x in match.group(1).split(",") if x.strip()]
    return [java_value(x, nested) if nested else java_literal(x) for x in parts]


def _java_hashmap(text: str) -> Any:
    match = _HASHMAP.search(text)
    if match:
        puts = match.group(1)
        if not puts.strip():
            return {}
        return {key: java_literal(value.strip()) for key, value in _PUT.findall(puts)}
    return {} if _EMPTY_MAP.search(text) else text


def java_literal(text: str) -> Any:
    """Official ``parse_java_value``: a Java literal without a declared type."""
    if text in ("true", "false"):
        return text == "true"
    if text.startswith('"') and text.endswith('"'):
        return text[1:-1]
    if _JAVA_LONG.match(text):
        return int(text[:-1])
    if _JAVA_FLOAT.match(text):
        return float(re.sub(r"[fF]$", "", text))
    return _number_or_text(text)


def _number_or_text(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


# --------------------------------------------------------------------------- JavaScript


def js_value(text: str, kind: str, nested: str | None = None) -> Any:
    """Official ``js_type_converter``: JavaScript source text -> a Python value by type."""
    if kind == "String":
        quoted = (text.startswith('"') and text.endswith('"')) or (
            text.startswith("'") and text.endswith("'")
        )
        return text[1:-1] if quoted else text
    if kind == "integer":
        return int(text) if _INT.match(text) else text
    if kind == "float":
        return float(text) if _JS_FLOAT.match(text) else text
    if kind == "Bigint":
        return int(text[:-1]) if _JS_BIGINT.match(text) else text
    if kind == "Boolean":
        return text == "true" if text in ("true", "false") else text
    if kind == "dict":
        return _js_object(text.strip())
    if kind == "array":
        return _js_array(text.strip(), nested)
    if kind == "any":
        return text
    raise ValueError(f"Unsupported type: {kind}")


def _js_array(code: str, nested: str | None) -> Any:
    try:
        grid = _JS_2D.match(code)
        if grid:
            rows = []
            for index, inner in enumerate(_BRACKETS.findall(grid.group(0))):
                inner = inner.strip()
                if index == 0 and inner.startswith("["):
                    inner = inner[1:]
                rows.append([js_literal(e.strip()) for e in inner.split(",")])
            return rows
        match = _JS_1D.match(code)
        if not match:
            return code
        body = match.group(1) if match.group(1) is not None else match.group(2)
        elements = body.strip().split(",") if body is not None and body.strip() else []
        if nested:
            return [js_value(e.strip(), nested) for e in elements]
        return [js_literal(e.strip()) for e in elements]
    except Exception:  # official: a bare except returns the text unconverted
        return code


def _js_object(code: str) -> Any:
    if code == "{}":
        return {}
    match = _JS_OBJECT.match(code)
    if not match:
        return code
    try:
        out: dict[str, Any] = {}
        for key, value in _JS_PAIR.findall(match.group(1)):
            key, value = key.strip().strip("'\""), value.strip()
            if value.startswith("[") and value.endswith("]"):
                out[key] = _js_array(value, None)
            elif value.startswith("{") and value.endswith("}"):
                out[key] = _js_object(value)
            else:
                out[key] = js_literal(value.strip("'\""))
        return out
    except Exception:  # official: any failure returns the text unconverted
        return code


def js_literal(text: str) -> Any:
    """Official ``parse_js_value``: a JavaScript literal without a declared type."""
    text = text.strip()
    if text in ("true", "false"):
        return text == "true"
    if (text.startswith('"') and text.endswith('"')) or (
        text.startswith("'") and text.endswith("'")
    ):
        return text[1:-1]
    return _number_or_text(text)


# --------------------------------------------------------------------------- checking

_LANGUAGES: dict[str, tuple[dict[str, type], Callable[..., Any], str, str]] = {
    "simple_java": (JAVA_TYPES, java_value, "type_error:java", "Java"),
    "simple_javascript": (JS_TYPES, js_value, "type_error:js", "JavaScript"),
}


def check_java_js(item: Item, decoded: Decoded, *, underscore_to_dot: bool = False) -> Check:
    """Score one decoded Java/JavaScript output with the official semantics.

    As for Python simple items: a decode failure fails with the decoder's error type,
    exactly one call is expected (``simple_function_checker:wrong_count``), then the
    official simple-function check with the language's conversion of every argument. A
    valid verdict keeps ``simple_function_checker:unclear`` when the official checker does
    (no string, list or dict value check ran).

    Raises:
        ValueError: not a Java/JavaScript item, or no possible answer.
    """
    if item.category not in _LANGUAGES or not item.possible_answer:
        raise ValueError(f"{item.id}: not a Java/JavaScript item with a possible answer")
    if decoded.calls is None:
        error = decoded.error
        if decoded.error_type == DECODER_FAILED:
            error = f"Invalid syntax. Failed to decode AST. {decoded.error}"
        return Check(False, decoded.error_type, error)
    if len(decoded.calls) != 1:
        return Check(False, "simple_function_checker:wrong_count", "Wrong number of functions.")
    outcome = _simple(item, decoded.calls[0], underscore_to_dot)
    if isinstance(outcome, Failure):
        return Check(False, outcome.error_type, outcome.message)
    return Check(True, None if outcome else "simple_function_checker:unclear", None)


def _simple(item: Item, call: Call, underscore_to_dot: bool) -> Failure | bool:
    """The official check of one call: a Failure, or whether a special value check ran."""
    doc = item.functions[0]
    _, accepted = next(iter((item.possible_answer or [])[0].items()))
    failure = name_and_required(doc, call, underscore_to_dot)
    if failure is not None:
        return failure
    props = doc["parameters"]["properties"]
    special = False
    for param, value in call.args.items():
        if param not in props or param not in accepted:
            return Failure(
                "simple_function_checker:unexpected_param", f"Unexpected parameter: {param!r}."
            )
        outcome = _check_value(item.category, param, value, props[param], accepted[param])
        if isinstance(outcome, Failure):
            return outcome
        special = special or outcome
    return missing_optional(call, accepted) or special


def _check_value(
    category: str, param: str, value: Any, spec: dict[str, Any], accepted: list[Any]
) -> Failure | bool:
    types, convert, type_error, _ = _LANGUAGES[category]
    kind = spec["type"]
    expected = types[kind]
    if type(value) is not str:
        return Failure(
            type_error,
            f"Incorrect type for parameter {param!r}. Expected type String, got "
            f"{type(value).__name__}. Parameter value: {value!r}.",
        )
    nested_kind = spec["items"]["type"] if kind in NESTED else None
    nested = types[nested_kind] if nested_kind is not None else None
    try:
        value = convert(value, kind, nested_kind) if nested_kind else convert(value, kind)
    except _Unconvertible as exc:
        return Failure(type_error, f"{exc} (the official checker raises here)")
    typed = type_check(param, value, accepted, kind, expected, nested)
    if not typed.valid:
        assert typed.fail is not None
        return typed.fail
    fail = value_check(param, value, accepted, expected, nested, typed.is_variable)
    if fail is not None:
        return fail
    return not typed.is_variable and expected in (dict, list, str)
