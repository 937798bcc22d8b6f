"""The official multi-turn and memory backends: the API classes of an installed ``bfcl-eval``.

BFCL's multi-turn categories execute every call against stateful Python classes (a file
system, messaging, posting, tickets, trading, travel, vehicle control, math); live memory
conversations against a key-value or a recursive-summary memory. evalbench uses the
official classes themselves (``bfcl_eval/eval_checker/multi_turn_eval/func_source_code`` of
``bfcl-eval`` 2026.3.23), installed *without* the package's dependencies
(``pip install --no-deps bfcl-eval==2026.3.23`` plus ``mpmath``, ``rank-bm25``,
``overrides`` and ``filelock``, evalbench's own dependencies; ``make setup`` does it): these
ten modules need nothing else. Only they are imported, never the package's model handlers,
its vector memory (which loads an embedding model from the Hugging Face hub when imported:
:data:`VECTOR_REFUSAL`) or its web-search backend (a search API).

A memory instance's state comes in and goes out as data (:func:`new_instance`,
:func:`memory_state`): the official classes read it from and write it to snapshot files
(``_prepare_snapshot``, ``_flush_memory_to_local_file``); evalbench passes the same content
instead, so a conversation can run anywhere and only the driver writes files.

Everything around the classes (which instance answers which call, copying the initial
configuration, comparing states) is evalbench's own, in :mod:`.replay` and
:mod:`.multi_turn`.
"""

from __future__ import annotations

import decimal
import importlib
import inspect
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from functools import cache
from importlib import metadata
from typing import Any

PINNED_VERSION = "2026.3.23"
"""The ``bfcl-eval`` release the verdicts are checked against (oracle test)."""
PACKAGE = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code"
BACKENDS = {
    "GorillaFileSystem": "gorilla_file_system",
    "MathAPI": "math_api",
    "MessageAPI": "message_api",
    "TwitterAPI": "posting_api",
    "TicketAPI": "ticket_api",
    "TradingBot": "trading_bot",
    "TravelAPI": "travel_booking",
    "VehicleControlAPI": "vehicle_control",
}
"""Class name -> module (and function-doc file) of the multi-turn backends (official
``CLASS_FILE_PATH_MAPPING`` / ``MULTI_TURN_FUNC_DOC_FILE_MAPPING``, without the memory and
web-search classes, which the multi-turn categories never involve)."""
MEMORY_BACKENDS = {"MemoryAPI_kv": "memory_kv", "MemoryAPI_rec_sum": "memory_rec_sum"}
"""The memory backends evalbench converses with (the vector one is refused)."""
MEMORY_STATE = {
    "MemoryAPI_kv": ("core_memory", "archival_memory"),
    "MemoryAPI_rec_sum": ("memory",),
}
"""A memory class's state: the attributes its official snapshot file holds."""
VECTOR_REFUSAL = (
    "memory_vector cannot be asked of live systems: its official backend loads the "
    "all-MiniLM-L6-v2 embedding model from the Hugging Face hub when imported (and needs "
    "torch, sentence-transformers and faiss, about 1 GB), which evalbench does not install; "
    "its result files are scored (no embedding is needed for that)"
)
"""Why live systems are not asked ``memory_vector`` (one line, shown where it applies)."""
STATELESS = frozenset({"MathAPI"})
"""Classes created without an initial configuration (official ``STATELESS_CLASSES``)."""
INSTALL_HINT = (
    f"pip install --no-deps bfcl-eval=={PINNED_VERSION} mpmath rank-bm25 overrides filelock "
    "(make setup does it)"
)


class BackendUnavailable(RuntimeError):
    """The official backend classes cannot be imported (``bfcl-eval`` or ``mpmath`` missing)."""


def version() -> str | None:
    """The installed ``bfcl-eval`` version, or None when it is not installed."""
    try:
        return metadata.version("bfcl-eval")
    except metadata.PackageNotFoundError:
        return None


def available() -> bool:
    """Whether every backend class imports."""
    try:
        for name in BACKENDS:
            backend_class(name)
    except BackendUnavailable:
        return False
    return True


@cache
def backend_class(name: str) -> type:
    """The official class ``name`` (imported once).

    Raises:
        KeyError: not a multi-turn or memory backend class.
        BackendUnavailable: ``bfcl-eval`` (or a module it imports) is not installed.
    """
    module_name = f"{PACKAGE}.{(BACKENDS | MEMORY_BACKENDS)[name]}"
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise BackendUnavailable(
            f"the BFCL backends need bfcl-eval and its modules ({exc}); {INSTALL_HINT}"
        ) from exc
    cls = getattr(module, name)
    assert isinstance(cls, type)
    return cls


@cache
def method_names(name: str) -> tuple[str, ...]:
    """The public methods of class ``name``, as the official checker lists them.

    The official ``execute_multi_turn_func_call`` calls ``inspect.getmembers(instance,
    ismethod)`` at every step; instance attributes are data, so the list is the class's and
    is computed once here (that call was about 40 % of the official checker's time).
    """
    instance = backend_class(name)()
    members = inspect.getmembers(instance, predicate=inspect.ismethod)
    return tuple(n for n, _ in members if not n.startswith("_"))


@cache
def method_table(classes: tuple[str, ...]) -> dict[str, str]:
    """Method name -> class name over ``classes``; a later class wins a shared name (as
    officially: the mapping is filled class by class). Cached: do not modify."""
    return {method: cls for cls in classes for method in method_names(cls)}


def memory_available() -> bool:
    """Whether the key-value and recursive-summary memory classes import."""
    try:
        for name in MEMORY_BACKENDS:
            backend_class(name)
    except BackendUnavailable:
        return False
    return True


def new_instance(name: str, initial_config: Mapping[str, Any], long_context: bool) -> Any:
    """A fresh instance of class ``name`` loaded with its part of ``initial_config``.

    As officially: stateless classes get no scenario; the others get a copy of
    ``initial_config[name]`` (``{}`` when absent) and the ``long_context`` flag. A memory
    class's part is its state (:data:`MEMORY_STATE`; absent fields keep the empty start),
    set as the official ``_load_scenario`` sets it from a snapshot file.
    """
    instance = backend_class(name)()
    if name in MEMORY_STATE:
        state = initial_config.get(name, {})
        for field in MEMORY_STATE[name]:
            if field in state:
                setattr(instance, field, copy_json(state[field]))
    elif name not in STATELESS:
        instance._load_scenario(copy_json(initial_config.get(name, {})), long_context=long_context)
    return instance


def memory_state(name: str, instance: Any) -> dict[str, Any]:
    """A memory instance's state (what its official snapshot file holds), copied."""
    return {field: copy_json(getattr(instance, field)) for field in MEMORY_STATE[name]}


def copy_json(value: Any) -> Any:
    """A deep copy of JSON-shaped data (dicts, lists, tuples, scalars); other objects are shared.

    Equal to ``copy.deepcopy`` on data loaded from JSON (which shares no sub-object) and
    several times faster; the initial configuration is copied twice per item.
    """
    if type(value) is dict:
        return {k: copy_json(v) for k, v in value.items()}
    if type(value) is list:
        return [copy_json(v) for v in value]
    if type(value) is tuple:
        return tuple(copy_json(v) for v in value)
    return value


def public_state(instance: Any) -> dict[str, Any]:
    """The attributes the official state check compares: those not starting with ``_``."""
    return {k: v for k, v in vars(instance).items() if not k.startswith("_")}


@contextmanager
def isolated_numerics() -> Iterator[None]:
    """Run a backend call without leaking its global numeric settings.

    ``MathAPI.square_root`` sets the decimal context's precision and ``MathAPI.logarithm``
    sets ``mpmath.mp.dps``, process-wide; both set them before every use, so restoring them
    afterwards changes no official result and keeps the rest of the process unaffected.
    """
    import mpmath

    dps = mpmath.mp.dps
    try:
        with decimal.localcontext():
            yield
    finally:
        mpmath.mp.dps = dps


def keyword_arguments(
    classes: tuple[str, ...], method: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]
) -> dict[str, Any]:
    """A call's arguments all by keyword, as the method's signature names them (ground-truth
    strings pass some positionally: ``sort('a.pdf')`` -> ``{"file_name": "a.pdf"}``).

    Raises:
        KeyError: ``method`` is not a method of ``classes``.
        TypeError: the arguments do not fit the signature.
    """
    function = getattr(backend_class(method_table(classes)[method]), method)
    bound = inspect.signature(function).bind(None, *args, **kwargs)
    return {k: v for k, v in bound.arguments.items() if k != "self"}
