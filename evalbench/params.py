"""Study parameters: YAML files validated by pydantic models with ``extra="forbid"``.

Every params file names its study kind in ``study:``; the registry
(:data:`evalbench.studies.STUDY_KINDS`) maps the kind to its study, whose ``params`` is
the pydantic model (in the benchmark's own ``records.py``). Reading
(:func:`read_params_data`) and validating (:func:`validate_params`, called by
:func:`evalbench.studies.load_params`) turn any
mistake (missing file, YAML syntax, unknown key, wrong type, missing data file, bad ``-p``
override) into one :class:`ParamsError` line that names the file, the field path and what
was expected.

Params files (and ``-p`` values) are read with the YAML 1.2 core schema, the schema of
YAML 1.2 and JSON, not YAML 1.1's (PyYAML's default):

- booleans: ``true``/``false`` (any case) only; ``yes``/``no``/``on``/``off`` are text;
- integers: decimal, ``0o17`` (octal, 15), ``0x1F`` (hex, 31); ``1_000``, ``1:20`` (base
  60) and ``0b101`` are text, and so, as in JSON, is a number with a leading zero (``017``,
  ``0800``: a code or an id; the core schema would read 17, YAML 1.1 octal 15);
- floats: ``1.5``, ``.5``, ``2.``, ``1e3``, ``-1.5E-3``; ``.inf``/``-.inf``/``.nan`` are
  numbers too, and refused: every params number is finite;
- quote a value to keep it text (``'017'``). Anchors, aliases, duplicate keys, keys that are
  lists or mappings, and nesting deeper than :data:`MAX_DEPTH` are refused.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import yaml
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from evalbench.alerts.spec import AlertsSpec, override_problem
from evalbench.manifest_shape import LARGEST
from evalbench.models import CacheMode, ModelSpec, local
from evalbench.records import decode_utf8
from evalbench.textparse import BIDI_CONTROLS, TERMINAL_CONTROLS


class ParamsError(ValueError):
    """A params file or override is invalid; the message is one line saying where and why."""


def _date_text(value: Any) -> Any:
    """A date YAML read from ``tag=2026-05-01`` (or a time) as its ISO text."""
    return value.isoformat() if isinstance(value, dt.date) else value


MAX_SEED = 2**32 - 1
"""The largest seed: pandas' and numpy's legacy samplers (``DataFrame.sample``) take seeds
from 0 to 2**32 - 1; a seed outside it failed a report's examples after the whole run."""


class StudyParams(BaseModel):
    """Fields every study has. Each study kind subclasses this with ``study: Literal[...]``."""

    model_config = ConfigDict(extra="forbid")

    study: str
    """The study kind (a key of :data:`evalbench.studies.STUDY_KINDS`)."""
    title: str = Field(min_length=1)
    """Shown on the report and the index."""
    description: str = ""
    """One paragraph shown under the title."""
    seed: int = Field(default=0, ge=0, le=MAX_SEED)
    """Seeds every random choice of the study (sampling, bootstrap, simulation)."""
    cache: CacheMode = "use"
    """Response cache mode: use, refresh, off, or replay (cache only, no API key needed)."""
    bootstrap_rounds: int = Field(default=1000, ge=10, le=100_000)
    """Rounds for every bootstrap interval."""
    confidence_level: float = Field(default=0.95, gt=0.5, lt=1.0)
    """Level of every interval in the report."""
    # Fields added after the first release are left out of dumps at their defaults, so the
    # params hash (the run folder's name) of existing studies does not change with them.
    max_error_rate: float = Field(default=0.0, ge=0.0, le=1.0, exclude_if=lambda v: v == 0.0)
    """Highest share of failed model calls (per system or judge) for the run to be ``ok``;
    above it the run is ``failed`` (or ``degraded`` with ``allow_degraded``) and
    ``evalbench run`` / ``make report`` exit non-zero."""
    tier: Literal["quick", "standard", "full"] = Field(
        default="full", exclude_if=lambda v: v == "full"
    )
    """Study a seeded stratified subsample: ``quick`` keeps 10% of every stratum (level,
    category ...), ``standard`` 30%, ``full`` everything; nested, so tiers are comparable
    (see :mod:`evalbench.tiers`)."""
    sample: int | None = Field(default=None, ge=1, exclude_if=lambda v: v is None)
    """Instead of ``tier``: keep about this many items (rounded up per stratum)."""
    sample_seed: int = Field(default=0, ge=0, le=MAX_SEED, exclude_if=lambda v: v == 0)
    """Seed of the subsample (not ``seed``: runs with different seeds study the same items)."""
    allow_degraded: bool = Field(default=False, exclude_if=lambda v: v is False)
    """Publish a run above ``max_error_rate`` as ``degraded`` (report linked, marked) instead
    of ``failed`` (previous report kept). The exit status is non-zero either way."""
    tag: Annotated[str, BeforeValidator(_date_text)] = Field(
        default="", max_length=64, pattern=r"^[A-Za-z0-9._:+-]*$", exclude_if=lambda v: v == ""
    )
    """Names a run without changing what it studies (``evalbench watch`` sets the date): a new
    tag is a new run folder, so a scheduled run is a new point in the study's history."""
    alerts: AlertsSpec | None = Field(default=None, exclude=True)
    """Rules checked at the end of every run against the study's baseline, and where their
    notifications go (:mod:`evalbench.alerts`). Not part of the run's identity: editing them
    never makes a new run folder."""

    @field_validator("alerts")
    @classmethod
    def _alerts_can_fire(cls, alerts: AlertsSpec | None, info: ValidationInfo) -> Any:
        """A rule that can never fire on this study kind is refused here, before any call."""
        why = None if alerts is None else alerts.problem_for(str(info.data.get("study")))
        if why:
            raise ValueError(why)
        return alerts

    def model_specs(self) -> list[ModelSpec]:
        """Every system and judge the study asks (for the manifest and the sim badge)."""
        return []

    @property
    def simulated(self) -> bool:
        """Whether any system or judge of the study is simulated."""
        return any(spec.simulated for spec in self.model_specs())


P = TypeVar("P", bound=StudyParams)


def data_path(value: str | Path, info: ValidationInfo) -> Path:
    """Validator for a local data file/folder named in params (use with ``AfterValidator``).

    Relative paths are resolved against the params file's folder; a missing path is an
    error that says which path was tried.
    """
    base = Path((info.context or {}).get("base_dir", "."))
    path = (base / Path(value).expanduser()).resolve()
    if not path.exists():
        raise ValueError(
            f"data path not found: {path} (relative paths are resolved against {base})"
        )
    return path


def read_params_data(path: Path | str, overrides: Sequence[str] = ()) -> dict[str, Any]:
    """A params file's mapping with the ``-p`` overrides applied, not yet validated
    (:func:`evalbench.studies.load_params` validates it with its study's model).

    Args:
        path: the YAML file.
        overrides: ``key=value`` strings; dotted keys reach nested fields and list items
            (``systems.0.model=gpt-4o``); values are parsed as YAML (``seed=7`` is an int).

    Raises:
        ParamsError: one line naming the file, the field path and what was expected.
    """
    path = Path(path)
    data = apply_overrides(_read_yaml(path), overrides, path)
    for where, text in _leaves(data, keys=True):
        if isinstance(text, str) and (char := BIDI_CONTROLS.search(text)):
            raise ParamsError(f"{path}: {where}: a bidirectional control character "
                              f"(U+{ord(char.group()):04X}): a page showing it reorders what "
                              "follows it; remove it")  # fmt: skip
        if isinstance(text, str) and (char := TERMINAL_CONTROLS.search(text)):
            code = f"U+{ord(char.group()):04X}"
            raise ParamsError(f"{path}: {where}: a control character ({code}): a terminal "
                              "showing it takes it as a command; remove it")  # fmt: skip
    return data


def apply_overrides(data: dict[str, Any], overrides: Sequence[str], path: Path) -> dict[str, Any]:
    """Apply ``key=value`` overrides to a params mapping in place, as ``-p`` does, and return it
    (a sweep applies each cell's overrides to its resolved params this way).

    Raises:
        ParamsError: an override that is not ``key=value`` or names no place in ``data``.
    """
    for override in overrides:
        _apply_override(data, override, path)
    return data


def validate_params(cls: type[P], data: dict[str, Any], path: Path) -> P:
    """``data`` validated by ``cls`` (relative data paths resolved against the file's folder).

    Raises:
        ParamsError: one line naming the file, the field path and what was expected; a
            NaN or infinity anywhere.
    """
    try:
        params = cls.model_validate(data, context={"base_dir": path.resolve().parent})
    except ValidationError as exc:
        raise ParamsError(f"{path}: {format_validation_error(exc)}") from None
    for where, value in _leaves(params.model_dump()):
        if not isinstance(value, float) or (math.isfinite(value) and abs(value) <= LARGEST):
            continue
        if math.isfinite(value):  # a manifest holding it would be refused (manifest_shape)
            raise ParamsError(f"{path}: {where}: {value:g} is past 1e300 (no setting is that "
                              "large)")  # fmt: skip
        raise ParamsError(f"{path}: {where}: expected a finite number, got {value}")
    for where, flag in _flags_read_as_numbers(data, params):
        raise ParamsError(f"{path}: {where}: expected a number, got {str(flag).lower()}")
    return params


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _flags_read_as_numbers(given: Any, value: Any, where: str = "") -> list[tuple[str, bool]]:
    """(field path, flag) of every YAML ``true``/``false`` in ``given`` (the params as written)
    that validation turned into a number in ``value`` (the validated params): pydantic reads
    a bool as 1 or 0 (``-p seed=true`` ran seed 1, ``sample: true`` studied one item)."""
    if isinstance(given, bool):
        return [(where or "(top level)", given)] if _is_number(value) else []
    pairs: list[tuple[Any, Any, Any]] = []
    if isinstance(given, dict) and isinstance(value, BaseModel):
        fields = type(value).model_fields
        pairs = [(k, v, getattr(value, k)) for k, v in given.items() if k in fields]
    elif isinstance(given, dict) and isinstance(value, dict):
        keys = [(k, k if k in value else str(k)) for k in given]  # a level key 1 is read "1"
        pairs = [(k, given[k], value[key]) for k, key in keys if key in value]
    elif isinstance(given, list) and isinstance(value, (list, tuple)):
        if len(given) == len(value):
            pairs = list(zip(range(len(given)), given, value, strict=True))
        elif any(_is_number(v) for v in value) and not any(isinstance(v, bool) for v in value):
            # folded by its validator (``levels`` sorted and deduplicated): its flags are numbers
            return [(f"{where}.{i}", g) for i, g in enumerate(given) if isinstance(g, bool)]
    return [hit for key, item, got in pairs
            for hit in _flags_read_as_numbers(item, got, f"{where}.{key}".lstrip("."))]  # fmt: skip


def _leaves(value: Any, where: str = "", keys: bool = False) -> Iterator[tuple[str, Any]]:
    """(field path, value) of every leaf of a params mapping, and with ``keys`` every key (at
    its own field's path): what the checks of every value read (NaN or infinity, which YAML
    reads ``.inf`` and ``.nan`` as; a bidirectional control character in a text)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if keys:
                yield f"{where}.{key}".lstrip("."), key
            yield from _leaves(item, f"{where}.{key}".lstrip("."), keys)
    elif isinstance(value, (list, tuple)):
        for number, item in enumerate(value):
            yield from _leaves(item, f"{where}.{number}".lstrip("."), keys)
    else:
        yield where or "(top level)", value


def params_hash(params: StudyParams) -> str:
    """First 12 hex digits of the sha256 of the fully resolved params (canonical JSON), with
    what changes a local model's answers beyond its params (its file's sha256, the engine's
    version: :func:`evalbench.models.local.fingerprint`) when a system is one."""
    resolved: Any = params.model_dump(mode="json")
    served = [local.fingerprint(s) for s in params.model_specs() if s.local is not None]
    if served:  # only then: the hash of every other study stays what it was
        resolved = {"params": resolved, "local_models": served}
    text = json.dumps(resolved, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:12]


SHOWN_ERRORS = 3
"""Mistakes named in one message; the rest are counted (a file of 60,000 unknown keys made a
1.2 MB line)."""


def format_validation_error(exc: ValidationError) -> str:
    """Pydantic errors as ``field.path: what was expected`` joined on one line (the first
    :data:`SHOWN_ERRORS`, then how many more)."""
    errors = exc.errors()
    shown = [_format_error(err) for err in errors[:SHOWN_ERRORS]]
    more = len(errors) - len(shown)
    return "; ".join(shown) + (f"; and {more:,d} more" if more else "")


def _format_error(err: Any) -> str:
    loc = ".".join(str(p) for p in err["loc"]) or "(top level)"
    kind, given = err["type"], err.get("input")
    if kind == "extra_forbidden":
        return f"{loc}: unknown key"
    if kind == "missing":
        return f"{loc}: missing required field"
    secret = bool(err["loc"]) and err["loc"][0] == "alerts" and "://" in repr(given)
    shown = "a URL, not shown: a webhook's URL holds its secret" if secret else None
    if kind == "literal_error":
        expected = err.get("ctx", {}).get("expected", "")
        return f"{loc}: expected one of {expected}, got {shown or repr(given)}"
    message = err["msg"].removeprefix("Value error, ")
    if kind == "value_error":  # a check of the whole study names its own field
        return message if not err["loc"] else f"{loc}: {message}"
    return f"{loc}: {message} (got {shown or _short(given)})"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


MAX_PARAMS_BYTES = 1_000_000
"""A params file is a page of settings; anything larger is refused before parsing."""


def _read_yaml(path: Path) -> dict[str, Any]:
    """Read a params file as untrusted input: bytes, strict UTF-8, strict YAML.

    Raises:
        ParamsError: missing file, too large, not UTF-8 (with the byte offset), YAML syntax
            (line:column), an anchor or alias (refused before anything is built: alias
            expansion is how a few hundred bytes become gigabytes), a duplicate key (with
            its line), a key that is a list or mapping, nesting deeper than
            :data:`MAX_DEPTH`, or a top level that is not a mapping.
    """
    if not path.is_file():
        raise ParamsError(f"{path}: params file not found")
    raw = path.read_bytes()
    if len(raw) > MAX_PARAMS_BYTES:
        raise ParamsError(f"{path}: {len(raw):,d} bytes; a params file may have at most "
                          f"{MAX_PARAMS_BYTES:,d}")  # fmt: skip
    data = parse_yaml(decode_utf8(raw, path, error=ParamsError), str(path))
    if not isinstance(data, dict):
        raise ParamsError(f"{path}: expected a mapping of keys to values at the top level")
    return data


MAX_DEPTH = 100
"""Deepest nesting of lists and mappings a params file may have (a page of settings is a
handful of levels; ten thousand ``[`` would exhaust the parser's recursion)."""


class _StrictLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` with the YAML 1.2 core schema's booleans and numbers that refuses
    anchors, aliases, duplicate keys, keys that are not plain values, and deep nesting."""

    _depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            kind = "alias" if isinstance(event, yaml.AliasEvent) else "anchor"
            sigil = "&" if kind == "anchor" else "*"
            message = f"YAML {kind} {sigil}{event.anchor} is not allowed in params files"
            raise _Refused(message + " (write the value out)", event.start_mark)
        if self._depth >= MAX_DEPTH:
            raise _Refused(f"nested deeper than {MAX_DEPTH} levels", event.start_mark)
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                shape = "a mapping" if isinstance(key_node, yaml.MappingNode) else "a list"
                raise _Refused(f"a mapping key must be text or a number, not {shape}",
                               key_node.start_mark)  # fmt: skip
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            if key in seen:
                raise _Refused(f"duplicate key {key!r} (first on line {seen[key]})",
                               key_node.start_mark)  # fmt: skip
            seen[key] = line
        return super().construct_mapping(node, deep=deep)


# The YAML 1.2 core schema's booleans and numbers. YAML 1.1 (PyYAML's default) also reads
# yes/no/on/off as booleans (`cache: off` would be False), 017 as octal 15, 1:20 as 80 (base
# 60) and 1_000 as 1000, and reads 1e3 as text. One departure from the core schema, as in
# JSON: a number with a leading zero (017, 0800) is text, not 17: PyYAML writes the strings
# "0800" or "01632 ..." unquoted, and a phone number, a code or an id must read back as text.
_DECIMAL = r"(?:0|[1-9][0-9]*)"
_CORE = {
    "bool": (r"true|True|TRUE|false|False|FALSE", "tTfF"),
    "int": (rf"[-+]?{_DECIMAL}|0o[0-7]+|0x[0-9a-fA-F]+", "-+0123456789"),
    "float": (
        rf"[-+]?(?:\.[0-9]+|{_DECIMAL}(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)",
        "-+.0123456789",
    ),
}
_StrictLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag.rsplit(":", 1)[-1] not in _CORE]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
for _name, (_pattern, _first) in _CORE.items():  # in this order: 17 is an int, not a float
    _StrictLoader.add_implicit_resolver(
        f"tag:yaml.org,2002:{_name}", re.compile(rf"^(?:{_pattern})$"), list(_first)
    )


def _core_int(loader: yaml.SafeLoader, node: Any) -> int:
    text = loader.construct_scalar(node)
    try:
        if text[:2] in ("0o", "0x"):
            return int(text[2:], 8 if text[1] == "o" else 16)
        return int(text, 10)  # an explicit !!int 017 is 17 (only implicit 017 is text)
    except ValueError:
        raise _Refused(f"!!int: {text!r} is not an integer", node.start_mark) from None


def _core_float(loader: yaml.SafeLoader, node: Any) -> float:
    text = str(loader.construct_scalar(node))
    special = {".inf": math.inf, "+.inf": math.inf, "-.inf": -math.inf, ".nan": math.nan}
    if text.lower() in special:
        return special[text.lower()]
    try:
        return float(text)
    except ValueError:
        raise _Refused(f"!!float: {text!r} is not a number", node.start_mark) from None


_StrictLoader.add_constructor("tag:yaml.org,2002:int", _core_int)
_StrictLoader.add_constructor("tag:yaml.org,2002:float", _core_float)


class _CoreDumper(yaml.SafeDumper):
    """Quotes exactly the text that :func:`parse_yaml` would read as something else (PyYAML's
    own dumper leaves ``1e3`` or ``-.5`` bare: numbers in the core schema), and writes a
    repeated value out in full (the reader refuses anchors and aliases)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


_CoreDumper.yaml_implicit_resolvers = _StrictLoader.yaml_implicit_resolvers


def dump_yaml(data: Any) -> str:
    """YAML text that :func:`parse_yaml` reads back as ``data`` (keys in their order)."""
    return yaml.dump(data, Dumper=_CoreDumper, sort_keys=False, allow_unicode=True)


def override_text(key: str, value: Any) -> str:
    """``key=value`` with ``value`` as one line of YAML that an override reads back as
    ``value`` (``systems.0.sim.accuracy={'1': 0.8}``, ``model='017'``).

    Raises:
        ParamsError: ``value`` does not read back as itself (no such one-line YAML text).
    """
    text = yaml.dump(value, Dumper=_CoreDumper, default_flow_style=True, width=2**31,
                     allow_unicode=True).strip()  # fmt: skip
    text = text.removesuffix("\n...").strip()  # a plain scalar's document end marker
    if "\n" in text or parse_yaml(text, key) != value:
        raise ParamsError(f"{key}: {value!r} cannot be written as a one-line override")
    return f"{key}={text}"


class _Refused(Exception):
    def __init__(self, message: str, mark: Any):
        super().__init__(message)
        self.message, self.mark = message, mark


def parse_yaml(text: str, where: str) -> Any:
    """Parse YAML text strictly (the core schema, see :class:`_StrictLoader`); errors name
    ``where:line:col``.

    Raises:
        ParamsError: syntax error, anchor/alias, duplicate or non-scalar key, deep nesting.
    """
    try:
        return yaml.load(text, Loader=_StrictLoader)  # a SafeLoader subclass: no tags that run code
    except _Refused as exc:
        message = exc.message if len(exc.message) <= 200 else f"{exc.message[:150]}…"
        raise ParamsError(f"{where}:{exc.mark.line + 1}:{exc.mark.column + 1}: {message}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f"{where}:{mark.line + 1}:{mark.column + 1}" if mark else where
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ParamsError(f"{at}: YAML syntax error: {problem}") from None


def shown_override(override: str) -> str:
    """An override as error messages quote it: its value left out when it is a URL (whose
    credentials, query or path may carry a token) or long (a line, whatever was given)."""
    key, sep, value = override.partition("=")
    if sep and ("://" in value or "@" in value or len(override) > 80):
        return f"{key[:80]}=…"
    return override if len(override) <= 80 else f"{override[:60]}…"


def _apply_override(data: dict[str, Any], given: str, path: Path) -> None:
    key, sep, raw = given.partition("=")
    override = shown_override(given)  # every message below quotes this
    if not sep or not key.strip():
        raise ParamsError(f"{path}: override {override!r}: expected key=value")
    try:
        value = parse_yaml(raw, f"{path}: override {override!r}") if raw.strip() else ""
    except ParamsError as exc:
        if "YAML syntax error" not in str(exc):
            raise
        value = raw  # not YAML: the plain string
    secret = override_problem(key, value)  # a literal webhook URL: kept in every run record
    if secret:
        raise ParamsError(f"{path}: {secret}")
    parts = key.strip().split(".")
    if len(parts) > MAX_DEPTH:  # it would build a mapping deeper than any params file may be
        raise ParamsError(
            f"{path}: override {override[:60]!r}: a key nested deeper than {MAX_DEPTH} levels"
        )
    target: Any = data
    for depth, part in enumerate(parts[:-1]):
        target = _step(target, part, ".".join(parts[: depth + 1]), override, path)
    _assign(target, parts[-1], value, override, path)


def _step(target: Any, part: str, where: str, override: str, path: Path) -> Any:
    if isinstance(target, list):
        return target[_index(target, part, where, override, path)]
    if not isinstance(target, dict):
        raise ParamsError(f"{path}: override {override!r}: {where} is not a mapping")
    return target.setdefault(part, {})


def _assign(target: Any, part: str, value: Any, override: str, path: Path) -> None:
    if isinstance(target, list):
        target[_index(target, part, part, override, path)] = value
    elif isinstance(target, dict):
        target[part] = value
    else:
        raise ParamsError(f"{path}: override {override!r}: cannot set {part!r} inside a value")


def _index(target: list[Any], part: str, where: str, override: str, path: Path) -> int:
    if not part.isdigit() or int(part) >= len(target):
        raise ParamsError(
            f"{path}: override {override!r}: {where}: expected a list index 0..{len(target) - 1}"
        )
    return int(part)


def discover_params(folder: Path) -> list[Path]:
    """Every ``*.yaml`` / ``*.yml`` file in ``folder``, sorted by name.

    Raises:
        ParamsError: ``folder`` is not a folder (run outside the project).
    """
    if not folder.is_dir():
        raise ParamsError(
            f"{folder}: no such folder (the project, a folder with params/ and notebooks/, is "
            "found from the current folder upward); run from your evalbench checkout, or set "
            "EVALBENCH_HOME to it"
        )
    return sorted(p for p in folder.iterdir() if p.suffix in {".yaml", ".yml"} and p.is_file())
