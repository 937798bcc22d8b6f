"""Replay function calls against the official multi-turn backends, never calling ``eval``.

The official checker (``bfcl_eval/eval_checker/multi_turn_eval/multi_turn_utils.py``,
``execute_multi_turn_func_call``, bfcl-eval 2026.3.23) turns each decoded call into a
Python string, prefixes every backend method name followed by ``(`` with the name of a
global instance (a regular expression over the whole string, string literals included),
and ``eval``-s it; the result becomes a string (``str`` as is, ``dict`` through
``json.dumps``, anything else ``str``), an exception ``"Error during execution: <e>"``.

:class:`Side` reproduces that with the same backend classes but without ``eval``:

- a call whose arguments are known (decoded from JSON or from a parsed Python call) and
  whose string holds no other ``(`` is invoked directly (the fast path: the official
  string would ``eval`` to exactly that invocation);
- any other string gets the official prefixing with the official instance names (so a
  method name inside a string literal changes as officially) and is parsed with ``ast``;
  calls of instance methods, literals, containers and unary operators are evaluated, a
  bare name is the official ``NameError``, and any other expression (which the official
  ``eval`` would run: builtins, arithmetic, attribute access...) is not evaluated: it
  gives an ``Error during execution: evalbench does not evaluate ...`` result and is
  listed in :attr:`Side.unsupported` (it never equals a ground-truth result, so it can only
  change a verdict when the official evaluation of such code happened to produce one).
"""

from __future__ import annotations

import ast
import builtins
import json
import keyword
import math
import operator
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any, NamedTuple

from . import backends

ERROR_PREFIX = "Error during execution: "
BLOCKED = frozenset({"kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run"})
"""Function names the official executor refuses ("Function call <name> is not allowed.")."""
METHOD_CALL = re.compile(r"\b([a-zA-Z_]\w*)\s*(?=\()")
"""The official pattern of a function name in a call string (``_process_method_calls``)."""
_OFFICIAL_GLOBALS = frozenset(dir(builtins)) | {
    "copy",
    "importlib",
    "inspect",
    "json",
    "re",
    "CLASS_FILE_PATH_MAPPING",
    "STATELESS_CLASSES",
    "execute_multi_turn_func_call",
    "is_empty_execute_response",
    "_process_method_calls",
}
"""Names defined where the official checker ``eval``-s (its module and the builtins): a
call string naming one would run it there; evalbench does not."""
_UNARY: dict[type, Callable[[Any], Any]] = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Not: operator.not_,
    ast.Invert: operator.invert,
}


class ExecCall(NamedTuple):
    """One call of a step, as the official executor receives it."""

    source: str
    """The official execution string, e.g. ``cd(folder='temp')``."""
    name: str | None = None
    """The function name, when the arguments are known."""
    kwargs: dict[str, Any] | None = None
    """The keyword arguments exactly as the string would ``eval`` them; None: parse
    ``source``."""
    args: tuple[Any, ...] = ()
    """Positional arguments (ground-truth strings have them, e.g. ``sort('a.pdf')``)."""
    shared: bool = False
    """The arguments are reused (a cached parse): copied before every call, since a backend
    may keep or change what it is given."""


class _Unsupported(Exception):
    """An expression evalbench does not evaluate (see the module docstring)."""


# --------------------------------------------------------------------------- call strings


def fc_call(name: str, kwargs: dict[str, Any]) -> ExecCall:
    """A function-calling model's call -> its official string (``convert_to_function_call``:
    ``name(k=repr(v),...)``), with the arguments kept when the string evaluates to them."""
    source = f"{name}({','.join(f'{k}={v!r}' for k, v in kwargs.items())})"
    return ExecCall(source, name, kwargs if _evaluates_to_itself(source, kwargs) else None)


def prompt_call(name: str, kwargs: dict[str, Any]) -> ExecCall:
    """A prompting model's decoded call -> its official string
    (``decoded_output_to_execution_list`` / ``parse_nested_value``: a dict whose values are
    all dicts is written as a nested call, any other dict as ``{'k': v}``).

    Raises:
        IndexError: an empty dict argument (officially the whole step fails to decode).
    """
    source = f"{name}({', '.join(f'{k}={_nested(v)}' for k, v in kwargs.items())})"
    plain = not any(type(v) is dict for v in kwargs.values())
    return ExecCall(
        source, name, kwargs if plain and _evaluates_to_itself(source, kwargs) else None
    )


def _nested(value: Any) -> str:
    if isinstance(value, dict):
        if all(isinstance(v, dict) for v in value.values()):
            if not value:
                raise IndexError("list index out of range")  # the official decoder fails here
            name = next(iter(value))
            inner = ", ".join(f"{k}={_nested(v)}" for k, v in value[name].items())
            return f"{name}({inner})"
        return "{" + ", ".join(f"'{k}': {_nested(v)}" for k, v in value.items()) + "}"
    return repr(value)


def _evaluates_to_itself(source: str, kwargs: Mapping[str, Any]) -> bool:
    """Whether ``eval`` of the official string would call ``name`` with exactly ``kwargs``:
    no other ``(`` (no nested call, nothing for the name prefixing to touch inside a
    string), keywords that are identifiers, and no non-finite float (``inf`` does not
    ``eval``)."""
    if source.count("(") != 1:
        return False
    if any(not k.isidentifier() or keyword.iskeyword(k) for k in kwargs):
        return False
    return not (("inf" in source or "nan" in source) and _has_non_finite(kwargs.values()))


def _has_non_finite(values: Iterable[Any]) -> bool:
    for value in values:
        if type(value) is float and not math.isfinite(value):
            return True
        if isinstance(value, dict) and _has_non_finite(value.values()):
            return True
        if isinstance(value, (list, tuple, set)) and _has_non_finite(value):
            return True
    return False


@lru_cache(maxsize=65_536)
def source_call(source: str) -> ExecCall:
    """A call string (ground truth) with its arguments parsed when they are plain literals
    and the string has no other ``(``; else just the string (evaluated at replay)."""
    if source.count("(") != 1:
        return ExecCall(source)
    try:
        compile(source, "<string>", "eval")  # a string eval refuses runs as an error result
        node = ast.parse(source, mode="eval").body
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
            return ExecCall(source)
        args = tuple(ast.literal_eval(a) for a in node.args)
        kwargs = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg}
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        return ExecCall(source)
    if len(kwargs) != len(node.keywords):
        return ExecCall(source)
    return ExecCall(source, node.func.id, kwargs, args, shared=True)


# --------------------------------------------------------------------------- execution


def stringify(result: Any) -> str:
    """An official execution result: ``str`` as is, ``dict`` as JSON (``str`` when it does
    not serialize), anything else ``str``."""
    if type(result) is str:
        return result
    if type(result) is dict:
        try:
            return json.dumps(result)
        except Exception:  # the official bare except: any failure falls back to str
            return str(result)
    return str(result)


class Side:
    """The backend instances of one side (the model's or the ground truth's) of one item.

    Instances are created from the item's initial configuration at the first call and keep
    their state across turns, as the official checker's global instances do.

    Args:
        classes: the item's ``involved_classes``, in order.
        initial_config: the item's ``initial_config``.
        long_context: the official flag (``long_context`` in the category name).
        instance_prefix: the official instance-name prefix (``<model>_eval_<id>`` or
            ``<model>_ground_truth_eval_<id>``); it only shows where a method name inside
            a string literal gets prefixed.
    """

    def __init__(
        self,
        classes: Sequence[str],
        initial_config: Mapping[str, Any],
        long_context: bool,
        instance_prefix: str,
    ) -> None:
        self.classes = tuple(classes)
        self.table = backends.method_table(self.classes)
        self._config = initial_config
        self._long_context = long_context
        self._prefix = instance_prefix
        self.instances: dict[str, Any] = {}
        self.unsupported: list[str] = []
        """Expressions not evaluated (see the module docstring)."""

    def run(self, calls: Iterable[ExecCall]) -> list[str]:
        """Execute one step's calls in order; one result string per call."""
        if not self.instances:
            for cls in self.classes:
                self.instances[cls] = backends.new_instance(cls, self._config, self._long_context)
        return [self._one(call) for call in calls]

    def _one(self, call: ExecCall) -> str:
        if call.kwargs is not None and call.name in self.table and call.name not in BLOCKED:
            args, kwargs = call.args, call.kwargs
            if call.shared:
                args, kwargs = backends.copy_json(args), backends.copy_json(kwargs)
            try:
                return stringify(self._invoke(call.name, args, kwargs))
            except Exception as exc:  # the official executor turns any exception into a result
                return f"{ERROR_PREFIX}{exc}"
        return self._run_source(call.source)

    def _invoke(self, method: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Any:
        cls = self.table[method]
        bound = getattr(self.instances[cls], method)
        if cls in backends.STATELESS:
            with backends.isolated_numerics():
                return bound(*args, **kwargs)
        return bound(*args, **kwargs)

    # ----------------------------------------------------------------------- the slow path

    def _variables(self) -> dict[str, str]:
        """Instance variable name -> class, named as officially."""
        return {
            re.sub(r"[-./:]", "_", f"{self._prefix}_{cls}_instance"): cls for cls in self.classes
        }

    def _run_source(self, source: str) -> str:
        variables = self._variables()
        by_class = {cls: var for var, cls in variables.items()}
        text = METHOD_CALL.sub(
            lambda m: f"{by_class[self.table[m[1]]]}.{m[1]}" if m[1] in self.table else m[1],
            source,
        )
        head = text.split("(")[0] if "(" in text else text
        if "." in head:
            head = head.split(".")[1]
        try:
            if head in BLOCKED:
                raise PermissionError(f"Function call {head} is not allowed.")
            compile(text, "<string>", "eval")  # every SyntaxError eval would raise, as it says it
            tree = ast.parse(text, mode="eval")
            return stringify(self._eval(tree.body, variables))
        except _Unsupported as exc:
            self.unsupported.append(str(exc))
            return f"{ERROR_PREFIX}evalbench does not evaluate {exc}"
        except Exception as exc:  # as officially: every failure is a result
            return f"{ERROR_PREFIX}{exc}"

    def _eval(self, node: ast.expr, variables: Mapping[str, str]) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Call):
            return self._eval_call(node, variables)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            values = [self._eval(e, variables) for e in _plain(node.elts, node)]
            kind: Callable[[list[Any]], Any] = {ast.List: list, ast.Tuple: tuple, ast.Set: set}[
                type(node)
            ]
            return kind(values)
        if isinstance(node, ast.Dict):
            out = {}
            for key, value in zip(node.keys, node.values, strict=True):
                if key is None:
                    raise _Unsupported(ast.unparse(node))
                k = self._eval(key, variables)
                out[k] = self._eval(value, variables)
            return out
        if isinstance(node, ast.UnaryOp):
            return _UNARY[type(node.op)](self._eval(node.operand, variables))
        if isinstance(node, ast.Name):
            _undefined(node.id, node)
        raise _Unsupported(ast.unparse(node))

    def _eval_call(self, node: ast.Call, variables: Mapping[str, str]) -> Any:
        func = node.func
        if not (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id in variables
        ):
            if isinstance(func, ast.Name):
                _undefined(func.id, node)  # Python looks the name up before the arguments
            raise _Unsupported(ast.unparse(node))
        if any(kw.arg is None for kw in node.keywords):
            raise _Unsupported(ast.unparse(node))
        args = [self._eval(a, variables) for a in _plain(node.args, node)]
        kwargs = {str(kw.arg): self._eval(kw.value, variables) for kw in node.keywords}
        instance = self.instances[variables[func.value.id]]
        bound = getattr(instance, func.attr)
        if variables[func.value.id] in backends.STATELESS:
            with backends.isolated_numerics():
                return bound(*args, **kwargs)
        return bound(*args, **kwargs)


def _plain(elements: list[ast.expr], parent: ast.expr) -> list[ast.expr]:
    if any(isinstance(e, ast.Starred) for e in elements):
        raise _Unsupported(ast.unparse(parent))
    return elements


def _undefined(name: str, node: ast.expr) -> None:
    """Raise what the official ``eval`` raises for a bare ``name``: a ``NameError`` unless
    the name exists where it evaluates (then it would run it: not evaluated here)."""
    if name in _OFFICIAL_GLOBALS or name.endswith("_instance"):
        raise _Unsupported(ast.unparse(node))
    raise NameError(f"name '{name}' is not defined")
