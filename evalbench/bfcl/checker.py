"""The BFCL AST checker: official verdicts and error types for one decoded output.

Reimplements (does not import or copy) ``bfcl_eval/eval_checker/ast_eval/ast_checker.py``
and the single-entry evaluation of ``eval_runner.py`` (``_evaluate_single_ast_entry``,
``_evaluate_single_relevance_entry``) of ``bfcl-eval`` 2026.3.23 (gorilla commit 6ea5797).
Error types keep the official names (``simple_function_checker:missing_required``, ...).
The oracle test checks every item of three public result sets and agrees with the official
checker on every verdict. One deliberate deviation: inputs on which the official checker
raises (e.g. a non-dict element in a list-of-dict parameter) fail the item instead of the
whole run.

This is the hot path of scoring (``tests/bench_bfcl.py`` measures it): plain tuples, exact
``type(...) is`` checks, no pydantic.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, NamedTuple

from .decode import DECODER_FAILED, Decoded
from .schema import NESTED_TYPES, PYTHON, PYTHON_TYPES, RELEVANCE_CATEGORIES, Call, Item

_STANDARDIZE = re.compile(r"[ ,./\-_*^]")


class _ParamFields(NamedTuple):
    function: str
    param: str
    type: str
    called: bool
    """The expected function was called (so the parameter could be checked at all)."""
    correct: bool


class ParamOutcome(_ParamFields):
    """Whether one expected parameter was right (a diagnostic; not part of the official score).

    Fields: ``function``, ``param``, ``type``, ``called`` (the expected function was called,
    so the parameter could be checked at all), ``correct``.
    """

    __slots__ = ()

    def _asdict(self) -> dict[str, Any]:
        # a dict literal: ~10k verdicts × a few parameters each are turned into records
        return {"function": self[0], "param": self[1], "type": self[2], "called": self[3],
                "correct": self[4]}  # fmt: skip


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


class Failure(NamedTuple):
    """A failed check: the official error type and the first message."""

    error_type: str
    message: str | None


class Typed(NamedTuple):
    """The outcome of :func:`type_check`."""

    valid: bool
    is_variable: bool
    """The accepted values are typed unlike the doc: a variable name passed as a string (the
    value check then skips its special cases)."""
    fail: Failure | None


_TYPED = {False: Typed(True, False, None), True: Typed(True, True, None)}  # the passes
_KNOWN = frozenset(PYTHON)


_Memo = dict[tuple[int, int], "Failure | None"]
"""One item's checks: of a parameter by (id of the value, id of its accepted values, which
name the parameter and its function), of a call by (id of the call, id of the answer). The
official check and the per-parameter diagnostic ask the same questions about the same
objects; the ids cannot collide (a value, an accepted list, a call and an answer are
distinct objects alive during the check)."""


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
    if item.category not in _KNOWN:
        raise ValueError(f"{item.id}: category {item.category!r} is not one of {PYTHON}")
    if item.category in RELEVANCE_CATEGORIES:
        return _check_relevance(item.category, decoded)
    if not item.possible_answer:
        raise ValueError(f"{item.id}: a {item.category} item needs its possible answer")
    memo: _Memo = {}
    if decoded.calls is None:
        params = _param_outcomes(item, decoded, underscore_to_dot, memo)
        error = decoded.error
        if decoded.error_type == DECODER_FAILED:
            error = f"Invalid syntax. Failed to decode AST. {decoded.error}"
        return Check(False, decoded.error_type, error, params)
    fail = _ast_check(item, list(decoded.calls), underscore_to_dot, memo)
    if fail is None:
        error_type = _valid_error_type(item, decoded.calls[0])
        return Check(True, error_type, None, _passed_outcomes(item))
    params = _param_outcomes(item, decoded, underscore_to_dot, memo)
    return Check(False, fail.error_type, fail.message, params)


def _passed_outcomes(item: Item) -> tuple[ParamOutcome, ...]:
    """:func:`_param_outcomes` of an output that passed the official check, without checking
    again: the official check matched every answer to a call the diagnostic pairs it with
    too (both take, answer by answer, the first unused call that passes), so a parameter is
    right exactly when its function's doc has it (given, it passed; left out, it may be).
    A function of the item alone, so kept per item: several systems score the same items."""
    cached = _PASSED.get(id(item))
    if cached is not None and cached[0] is item:  # the item is held, so its id is its own
        return cached[1]
    out = []
    for answer in item.possible_answer or []:
        name, accepted = next(iter(answer.items()))
        props = find_doc(item.functions, name)["parameters"]["properties"]
        for param in accepted:
            spec = props.get(param)
            kind = spec["type"] if spec else "unknown"
            out.append(_new_outcome(ParamOutcome, (name, param, kind, True, spec is not None)))
    if len(_PASSED) >= 100_000:
        _PASSED.clear()
    _PASSED[id(item)] = (item, tuple(out))
    return _PASSED[id(item)][1]


_PASSED: dict[int, tuple[Item, tuple[ParamOutcome, ...]]] = {}


def _valid_error_type(item: Item, call: Call) -> str | None:
    """The error type the official checker leaves on a *valid* verdict.

    ``simple_function_checker`` starts from ``error_type="simple_function_checker:unclear"``
    and returns that dict when valid, unless a string/list/dict value check replaced it
    (those return a fresh ``{"valid": True}``); parallel checkers return a fresh dict.
    """
    if "parallel" in item.category or not item.possible_answer:
        return None
    name, accepted = next(iter(item.possible_answer[0].items()))
    doc = find_doc(item.functions, name) if "multiple" in item.category else item.functions[0]
    props = doc["parameters"]["properties"]
    for param in call.args:
        if _is_special(props[param], accepted[param]):
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


def _ast_check(
    item: Item, calls: list[Call], underscore_to_dot: bool, memo: _Memo
) -> Failure | None:
    answers = item.possible_answer or []
    if "parallel" in item.category:
        return _parallel_no_order(item.functions, calls, answers, underscore_to_dot, memo)
    if "multiple" in item.category:
        if len(calls) != len(answers):
            return Failure("multiple_function_checker:wrong_count", "Wrong number of functions.")
        doc = find_doc(item.functions, next(iter(answers[0])))
        return _simple(doc, calls[0], answers[0], underscore_to_dot, memo)
    if len(calls) != 1:
        return Failure("simple_function_checker:wrong_count", "Wrong number of functions.")
    return _simple(item.functions[0], calls[0], answers[0], underscore_to_dot, memo)


def _parallel_no_order(
    docs: list[dict[str, Any]],
    calls: list[Call],
    answers: list[dict[str, dict[str, list[Any]]]],
    underscore_to_dot: bool,
    memo: _Memo,
) -> Failure | None:
    if len(calls) != len(answers):
        return Failure(
            "parallel_function_checker_no_order:wrong_count", "Wrong number of functions."
        )
    matched: set[int] = set()
    for i, answer in enumerate(answers):
        doc = find_doc(docs, next(iter(answer)))
        index = next(
            (
                k
                for k, call in enumerate(calls)
                if k not in matched and _matches(doc, call, answer, underscore_to_dot, memo)
            ),
            None,
        )
        if index is None:
            left = [k for k in range(len(calls)) if k not in matched]
            message = (
                f"Could not find a matching function among index {left} of model output "
                f"for index {i} of possible answers."
            )
            return Failure("parallel_function_checker_no_order:cannot_find_match", message)
        matched.add(index)
    return None


def find_doc(docs: list[dict[str, Any]], name: str) -> dict[str, Any]:
    """The function doc named ``name`` among ``docs``.

    Raises:
        StopIteration: no doc has that name.
    """
    for doc in docs:
        if doc["name"] == name:
            return doc
    raise StopIteration(name)


def convert_name(name: str, underscore_to_dot: bool) -> str:
    """The function name the checker looks for (official ``convert_func_name``)."""
    return name.replace(".", "_") if underscore_to_dot and "." in name else name


def name_and_required(doc: dict[str, Any], call: Call, underscore_to_dot: bool) -> Failure | None:
    """The first two checks of the official ``simple_function_checker`` (any language): the
    function's name (official ``convert_func_name``), then every required parameter given."""
    name = convert_name(doc["name"], underscore_to_dot)
    if call.name != name:
        return Failure(
            "simple_function_checker:wrong_func_name",
            f"Function name {name!r} not found in model output.",
        )
    for param in doc["parameters"].get("required", []):
        if param not in call.args:
            return Failure(
                "simple_function_checker:missing_required",
                f"Missing required parameter: {param!r}.",
            )
    return None


def _matches(
    doc: dict[str, Any],
    call: Call,
    answer: dict[str, dict[str, list[Any]]],
    underscore_to_dot: bool,
    memo: _Memo,
) -> bool:
    """Whether ``call`` passes the official check against ``answer`` (each pair once)."""
    key = (id(call), id(answer))
    try:
        return memo[key] is None
    except KeyError:
        fail = memo[key] = _simple(doc, call, answer, underscore_to_dot, memo)
        return fail is None


def _simple(
    doc: dict[str, Any],
    call: Call,
    answer: dict[str, dict[str, list[Any]]],
    underscore_to_dot: bool,
    memo: _Memo,
) -> Failure | None:
    accepted = next(iter(answer.values()))
    fail = name_and_required(doc, call, underscore_to_dot)
    if fail is not None:
        return fail
    props = doc["parameters"]["properties"]
    for param, value in call.args.items():
        if param not in props or param not in accepted:
            return Failure(
                "simple_function_checker:unexpected_param", f"Unexpected parameter: {param!r}."
            )
        fail = _check_param(param, value, props[param], accepted[param], memo)
        if fail is not None:
            return fail
    return missing_optional(call, accepted)


def _check_param(
    param: str, value: Any, spec: dict[str, Any], accepted: list[Any], memo: _Memo
) -> Failure | None:
    key = (id(value), id(accepted))
    try:
        return memo[key]
    except KeyError:
        result = memo[key] = check_param(param, value, spec, accepted)
        return result


def missing_optional(call: Call, accepted: dict[str, list[Any]]) -> Failure | None:
    """The official last check of a call: every accepted parameter the call left out must
    be optional (``""`` among its accepted values)."""
    for param, values in accepted.items():
        if param not in call.args and "" not in values:
            return Failure(
                "simple_function_checker:missing_optional",
                f"Optional parameter {param!r} not provided and not marked as optional.",
            )
    return None


def check_param(
    param: str, value: Any, spec: dict[str, Any], accepted: list[Any]
) -> Failure | None:
    """Official type and value check of one parameter (None when ``value`` is accepted).

    Args:
        param: the parameter name (for the message).
        value: the decoded value.
        spec: the parameter's schema in the function doc (``type``, ``items``).
        accepted: the possible answer's accepted values (``""`` = may be omitted).
    """
    desc = spec["type"]
    expected = PYTHON_TYPES[desc]
    nested = PYTHON_TYPES[spec["items"]["type"]] if desc in NESTED_TYPES else None
    if desc == "tuple" and type(value) is tuple:
        value = list(value)
    if desc == "float" and type(value) is int:
        value = _as_float(value)
    typed = type_check(param, value, accepted, desc, expected, nested)
    if not typed.valid:
        return typed.fail
    return value_check(param, value, accepted, expected, nested, typed.is_variable)


def value_check(
    param: str,
    value: Any,
    accepted: list[Any],
    expected: type,
    nested: type | None,
    is_variable: bool,
) -> Failure | None:
    """Official value check of a typed value: dicts, lists of dicts, strings and lists by
    their special rules (standardized strings, ...), anything else must be accepted as is.

    Args:
        param: the parameter name (for the message).
        value: the value (already converted: Python, or Java/JavaScript source read by type).
        accepted: the possible answer's accepted values.
        expected: the Python type the doc's type maps to; ``nested``: its element type.
        is_variable: :attr:`Typed.is_variable` (a variable skips the special checks).
    """
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
        return Failure(
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


def type_check(
    param: str,
    value: Any,
    accepted: list[Any],
    desc: str,
    expected: type,
    nested: type | None,
) -> Typed:
    """Official ``type_checker``: exact types, one nesting level, variables as strings.

    Args:
        param: the parameter name (for the message).
        value: the value to check.
        accepted: the possible answer's accepted values.
        desc: the doc's type name (for the message); ``expected``: its Python type;
            ``nested``: the element type of a list (None otherwise).
    """
    answer_type = _answer_type(accepted)
    # An answer whose type differs from the doc's marks a variable name passed as a string.
    is_variable = answer_type is not None and answer_type is not expected
    nested_fail = None
    exact = type(value) is expected  # exact: bool is not an int, a tuple is not a list
    if exact:
        if nested is None or _nested_ok(param, value, accepted, nested):
            return _TYPED[is_variable]
        nested_fail = Failure(
            "type_error:nested",
            f"Nested type checking failed for parameter {param!r}. Expected outer type {desc} "
            f"with inner type {nested}. Parameter value: {value!r}.",
        )
    if answer_type is not None and type(value) is answer_type:
        return Typed(nested_fail is None, True, nested_fail)
    first = (
        nested_fail.message
        if nested_fail
        else (
            f"Incorrect type for parameter {param!r}. Expected type {desc}, got "
            f"{type(value).__name__}. Parameter value: {value!r}."
        )
    )
    return Typed(False, False, Failure("type_error:simple", first))


def _nested_ok(param: str, value: list[Any], accepted: list[Any], nested: type) -> bool:
    for answer in accepted:
        # An accepted value that is not a list ("" for optional) passes without looking.
        if type(answer) is not list or all(
            type_check(param, element, answer, str(nested), nested, None).valid for element in value
        ):
            return True
    return False


def standardize(text: str) -> str:
    """Official string normalisation: drop spaces and ``,./-_*^``, lowercase, ``'`` -> ``"``."""
    return _STANDARDIZE.sub("", text).lower().replace("'", '"')


def _std(value: Any) -> Any:
    return standardize(value) if type(value) is str else value


def as_options(value: Any) -> Iterable[Any]:
    """Accepted values as an iterable: lists (or "" for optional); anything else matches none."""
    return value if isinstance(value, (list, str)) else ()


def _string_check(param: str, value: str, accepted: list[Any]) -> Failure | None:
    wanted = standardize(value)
    for answer in accepted:  # the first match decides: no need to standardize the rest
        if type(answer) is str and standardize(answer) == wanted:
            return None
    return Failure(
        "value_error:string",
        f"Invalid value for parameter {param!r}: {value!r}. Expected one of {accepted}. "
        "Case insensitive.",
    )


def _list_check(param: str, value: list[Any], accepted: list[Any]) -> Failure | None:
    # Only top-level strings are standardized; "" (optional) becomes [] and so accepts [].
    options = [[_std(a) for a in as_options(answer)] for answer in accepted]
    if [_std(v) for v in value] in options:
        return None
    return Failure(
        "value_error:list/tuple",
        f"Invalid value for parameter {param!r}: {value!r}. Expected one of {accepted}.",
    )


def _dict_check(value: Any, accepted: list[Any]) -> Failure | None:
    fail = Failure("dict_checker:unclear", None)
    for answer in accepted:
        if answer == "":
            continue
        fail = _dict_against(value, answer)  # type: ignore[assignment]
        if fail is None:
            return None
    return fail


def _dict_against(value: Any, answer: Any) -> Failure | None:
    if not isinstance(value, dict) or not isinstance(answer, dict):
        return Failure("value_error:dict_value", f"Expected a dict, got {value!r}.")
    errors: list[tuple[str, str]] = []
    for key, item in value.items():
        if key not in answer:
            errors.append(("value_error:dict_key", f"Unexpected dict key parameter: '{key}'."))
            break
        options = [_std(a) for a in as_options(answer[key])]
        if _std(item) not in options:
            message = f"Invalid value for parameter {key!r}: {item!r}. Expected one of {options}."
            errors.append(("value_error:dict_value", message))
            break
    # Officially this second pass runs even after a failure, and its error type wins.
    for key, options in answer.items():
        if key not in value and "" not in as_options(options):
            errors.append(("value_error:dict_key", f"Missing dict key parameter: '{key}'."))
            break
    return Failure(errors[-1][0], errors[0][1]) if errors else None


def _list_dict_check(value: list[Any], accepted: list[Any]) -> Failure | None:
    fail: Failure | None = Failure("list_dict_checker:unclear", None)
    for answer in accepted:
        answer = list(as_options(answer))
        if len(value) != len(answer):
            fail = Failure(
                "value_error:list_dict_count", "Wrong number of dictionaries in the list."
            )
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
    item: Item, decoded: Decoded, underscore_to_dot: bool, memo: _Memo
) -> tuple[ParamOutcome, ...]:
    """Per expected parameter: was it given correctly?

    Each expected call is paired with a decoded call of the same name: first every call
    that passes the official check pairs with its answer, then the rest pair in order.
    """
    calls = list(decoded.calls or ())
    answers = item.possible_answer or []
    docs = [find_doc(item.functions, next(iter(answer))) for answer in answers]
    pairs = _pair_calls(docs, answers, calls, underscore_to_dot, memo)
    out: list[ParamOutcome] = []
    for i, (doc, answer) in enumerate(zip(docs, answers, strict=True)):
        call = calls[pairs[i]] if i in pairs else None
        out.extend(_outcomes_for(doc, call, next(iter(answer.values())), memo))
    return tuple(out)


def _pair_calls(
    docs: list[dict[str, Any]],
    answers: list[dict[str, dict[str, list[Any]]]],
    calls: list[Call],
    underscore_to_dot: bool,
    memo: _Memo,
) -> dict[int, int]:
    """Answer index -> call index: calls passing the official check first, then by name."""
    pairs: dict[int, int] = {}
    # With one call and one answer the exact pass cannot change the pairing.
    passes = (True, False) if len(calls) > 1 or len(answers) > 1 else (False,)
    for exact in passes:
        for i, (doc, answer) in enumerate(zip(docs, answers, strict=True)):
            if i in pairs:
                continue
            used = set(pairs.values())
            index = _pick_call(doc, calls, answer, used, exact, underscore_to_dot, memo)
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
    memo: _Memo,
) -> int | None:
    name = convert_name(doc["name"], underscore_to_dot)
    for k, call in enumerate(calls):
        if k in used or call.name != name:
            continue
        if not exact or _matches(doc, call, answer, underscore_to_dot, memo):
            return k
    return None


def _outcomes_for(
    doc: dict[str, Any], call: Call | None, accepted: dict[str, list[Any]], memo: _Memo
) -> list[ParamOutcome]:
    props = doc["parameters"]["properties"]
    name, called = doc["name"], call is not None
    args = call.args if call is not None else {}
    out = []
    for param, values in accepted.items():
        spec = props.get(param)
        if not called or spec is None:
            correct = False
        elif param not in args:
            correct = "" in values
        else:
            correct = _check_param(param, args[param], spec, values, memo) is None
        kind = spec["type"] if spec else "unknown"
        out.append(_new_outcome(ParamOutcome, (name, param, kind, called, correct)))
    return out


_new_outcome = tuple.__new__  # ParamOutcome without the keyword-argument __new__ (hot path)
