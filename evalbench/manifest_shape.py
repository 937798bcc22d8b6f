"""Whether a parsed ``manifest.json`` has the shape evalbench writes (:func:`manifest_shape_error`).

A manifest is read by many (the index, ``history``, ``compare``, the trends and summary
pages, alerts): a hand edit, a damaged archive or another version's file that puts another
type in a field they read (``environment`` a string, a 400-digit ``wall_time_s``) made each of
them fail in its own way, with a traceback. Checked once where manifests are read
(:func:`evalbench.runs.read_manifest`), such a file is unreadable like one that is not JSON:
its run shows ``failed`` with the reason, and the readers go on.
"""

from __future__ import annotations

from typing import Any

_TEXT, _OBJECT, _LIST = "a string", "an object", "a list"
_NUMBER, _INTEGER, _BOOL = "a number", "an integer", "true or false"
# The fields readers of a manifest use, and what evalbench writes in each (null: any of them).
_FIELDS = {
    **dict.fromkeys(("status", "started_at", "reason", "study", "kind", "title", "run_id",
                     "params_file", "params_hash", "executed_at", "ended_at", "notebook",
                     "report", "cache_failed", "no_result"), _TEXT),
    **dict.fromkeys(("params", "seeds", "environment", "executor", "headlines", "counts",
                     "findings", "usage_this_session", "errors_by_system", "data_files",
                     "records", "phases", "timing", "published", "inputs", "alerts"), _OBJECT),
    **dict.fromkeys(("overrides", "simulated_names", "notes", "models", "measured", "usage",
                     "local_servers"), _LIST),
    **dict.fromkeys(("cost_usd", "wall_time_s"), _NUMBER),
    **dict.fromkeys(("pid", "kernel_pid"), _INTEGER),
    "simulated": _BOOL,
}  # fmt: skip
_ITEMS = {"overrides": _TEXT, "simulated_names": _TEXT, "models": _OBJECT, "usage": _OBJECT}
_NESTED = {("environment", "git"): _OBJECT, ("alerts", "fired"): _LIST}
LARGEST = 1e300  # a number past it (a 400-digit integer) is no measurement, and breaks format()


_CLASSES: dict[str, type | tuple[type, ...]] = {
    _TEXT: str, _OBJECT: dict, _LIST: list, _BOOL: bool, _INTEGER: int, _NUMBER: (int, float),
}  # fmt: skip


def _is(value: Any, kind: str) -> bool:
    """``value`` is null or of ``kind`` (a bool is no number)."""
    if value is None:
        return True
    return isinstance(value, _CLASSES[kind]) and (kind == _BOOL or not isinstance(value, bool))


def manifest_shape_error(manifest: dict[str, Any]) -> str:
    """What makes a parsed manifest unusable (``""``: nothing): a field evalbench reads that
    holds another type than evalbench writes there (``environment`` a string, ``overrides``
    not a list of strings, ``alerts.fired`` not a list of objects ...), or a number that is
    not finite or past 1e300 anywhere in what the run measured or wrote (not in the params
    the user gave: :data:`_GIVEN`). Its ``published`` copy is checked alike."""
    for name, kind in _FIELDS.items():
        value = manifest.get(name)
        if not _is(value, kind):
            return f"field {name!r} is {_kind_of(value)}, not {kind}"
        item = _ITEMS.get(name)
        if item and any(x is None or not _is(x, item) for x in value or []):
            return f"field {name!r} holds an item that is not {item}"
    for (outer, inner), kind in _NESTED.items():
        value = (manifest.get(outer) or {}).get(inner)
        if not _is(value, kind):
            return f"field '{outer}.{inner}' is {_kind_of(value)}, not {kind}"
    fired = (manifest.get("alerts") or {}).get("fired") or []
    if any(not isinstance(x, dict) for x in fired):
        return "field 'alerts.fired' holds an item that is not an object"
    published = manifest.get("published")
    inner = manifest_shape_error(published) if published else ""
    measured = {k: v for k, v in manifest.items() if k not in _GIVEN}
    return _bad_number(measured) or (f"field 'published': {inner}" if inner else "")


def _kind_of(value: Any) -> str:
    """``value``'s JSON type, in words."""
    return next((k for k in (_BOOL, _TEXT, _OBJECT, _LIST, _INTEGER, _NUMBER)
                 if isinstance(value, _CLASSES[k])), type(value).__name__)  # fmt: skip


_GIVEN = ("params", "seeds", "overrides")
"""What the user gave, as given: a seed of 305 digits is a valid seed (numpy takes any
non-negative integer), never formatted as a measurement; the number check leaves it alone."""


def _bad_number(value: Any) -> str:
    """The first number in ``value`` (nested) that is not finite or past :data:`LARGEST`."""
    todo = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, dict):
            todo.extend(item.values())
        elif isinstance(item, list):
            todo.extend(item)
        elif isinstance(item, int | float) and not abs(item) <= LARGEST:  # NaN, inf, 10**400
            return f"it holds a number that is not finite or past 1e300 ({str(item)[:20]}…)"
    return ""
