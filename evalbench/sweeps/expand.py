"""A ``sweep:`` block -> its cells, each validated like a ``-p`` override, before anything runs.

Configurations are every combination of the ``grid`` lists (the first key varies slowest)
crossed with the positions of the ``zip`` lists; each configuration runs once per seed.
Any mistake is one :class:`~evalbench.params.ParamsError` line naming the file, the sweep
key or the cell and what is wrong: nothing to sweep, an empty list, zip lists of different
lengths, a key swept twice, a seed key listed twice, swept, or naming no integer seed, more
than :data:`~.records.MAX_CELLS` cells (counted from the lists' lengths before any value is
looked at; every later check is one pass), a repeated value, a baseline that is no
configuration (numbers match by value: ``2.0`` is ``2``), a cell whose params do not validate
(a bad key or value, named as ``-p`` names it), or a ranking metric the cells will not have.
"""

from __future__ import annotations

import copy
import itertools
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evalbench.importers import READERS
from evalbench.params import (
    MAX_DEPTH,
    ParamsError,
    StudyParams,
    apply_overrides,
    override_text,
    params_hash,
    shown_override,
    validate_params,
)

from .records import MAX_CELLS, MAX_KEYS, Cell, SweepSpec

RESERVED = ("study", "sweep")
"""Top-level keys a sweep may not vary: the study kind and the sweep itself."""


def _same(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _value(value: Any) -> str:
    """A value as the baseline matches it: its JSON text with every number a float (the
    baseline's ``2.0`` is the grid's ``2``; ``true`` stays no number)."""

    def numbers(v: Any) -> Any:
        if isinstance(v, int | float) and not isinstance(v, bool):
            return float(v)
        if isinstance(v, list):
            return [numbers(x) for x in v]
        if isinstance(v, dict):
            return {k: numbers(x) for k, x in v.items()}
        return v

    return _same(numbers(value))


ZIPPED = " (zip)"


def factors(spec: SweepSpec) -> list[str]:
    """The swept factors: each grid key, and the zip as one, named after its first key whose
    values all differ (``systems.0.model (zip)``), else after all its keys joined by " + "."""
    if not spec.zip:
        return list(spec.grid)
    distinct = [k for k, v in spec.zip.items() if len({_same(x) for x in v}) == len(v)]
    name = distinct[0] + ZIPPED if distinct else " + ".join(spec.zip)
    return [*spec.grid, name]


def value_text(value: Any) -> str:
    """A swept value as the override text writes it (``0.7``, ``small``, ``{'1': 0.8}``)."""
    return override_text("_", value).partition("=")[2]


def level_label(cell_settings: dict[str, Any], factor: str) -> str:
    """A cell's value of ``factor`` as text (a zip factor named by one key: that key's value;
    by all its keys: their values joined by " / ")."""
    keys = [factor.removesuffix(ZIPPED)] if factor.endswith(ZIPPED) else factor.split(" + ")
    return " / ".join(value_text(cell_settings[k]) for k in keys)


def cell_count(spec: SweepSpec) -> int:
    """Configurations × seeds, computed without listing them."""
    sizes = [len(v) for v in spec.grid.values()]
    zipped = len(next(iter(spec.zip.values()))) if spec.zip else 1
    return math.prod(sizes) * zipped * len(spec.seeds or [0])


def check_spec(spec: SweepSpec, path: Path) -> None:
    """The sweep block's own rules (see the module docstring): its keys, then the number of
    cells (counted from the lists' lengths alone), then each value, in time linear in the
    values.

    Raises:
        ParamsError: one line naming the file and the sweep key.
    """
    if not spec.grid and not spec.zip and spec.seeds is None:
        raise ParamsError(
            f"{path}: sweep: nothing to sweep (no grid, zip or seeds); add one, or drop the "
            "sweep block (-p sweep=null) to run the study once"
        )
    keys = len(spec.grid) + len(spec.zip)
    if keys > MAX_KEYS:
        raise ParamsError(
            f"{path}: sweep: {keys:,d} swept keys ({len(spec.grid):,d} in grid, "
            f"{len(spec.zip):,d} in zip); a sweep may vary at most {MAX_KEYS}"
        )
    _check_seed_keys(spec, path)
    for part, values in [("grid", spec.grid), ("zip", spec.zip)]:
        for key, listed in values.items():
            _check_key(key, f"sweep.{part}.{key}", spec, path)
            if not listed:
                raise ParamsError(
                    f"{path}: sweep.{part}.{key}: no values (a swept key needs at least one)"
                )
    _check_zip_lengths(spec, path)
    count = cell_count(spec)
    if count > MAX_CELLS:
        raise ParamsError(
            f"{path}: sweep: {count:,d} cells ({_shape(spec)}); a sweep may have at most "
            f"{MAX_CELLS:,d} (split it into several sweeps, or sweep fewer values)"
        )
    for key, listed in spec.grid.items():  # a zip's lists may repeat a value; its rows may not
        _no_repeats(listed, f"sweep.grid.{key}", path)
    rows = [list(row) for row in zip(*spec.zip.values(), strict=True)]
    if (index := _first_repeat(rows)) is not None:
        raise ParamsError(f"{path}: sweep.zip: position {index} repeats {_same(rows[index])}")
    if spec.seeds is not None:
        _no_repeats(spec.seeds, "sweep.seeds", path)


def check_overrides(spec: SweepSpec, overrides: Sequence[str], path: Path) -> None:
    """Refuse a ``-p`` of a key every cell sets (a swept key, a seed key with ``seeds``, or
    a key inside one): the cells' values replaced it without a word, in a new sweep folder.

    Raises:
        ParamsError: one line naming the override and the sweep part that sets the key.
    """
    seeded = "sweep.seeds, by sweep.seed_keys"
    sets = {**{k: "sweep.grid" for k in spec.grid}, **{k: "sweep.zip" for k in spec.zip}}
    if spec.seeds is not None:
        sets |= {k: seeded for k in spec.seed_keys}
    for text in overrides:
        key = text.partition("=")[0].strip()  # as params._apply_override reads it
        for name, part in sets.items():
            if key == name or key.startswith(name + "."):
                what = "it" if key == name else name
                fix = f" (-p '{part}.{name}=[...]')" if part != seeded else ""
                raise ParamsError(f"{path}: -p {key}: the sweep sets {what} in every cell "
                                  f"({part}); change the sweep instead{fix}")  # fmt: skip


def _check_key(key: str, where: str, spec: SweepSpec, path: Path) -> None:
    parts = key.split(".")
    if len(parts) > MAX_DEPTH:
        raise ParamsError(
            f"{path}: {where[:60]}...: a key nested deeper than {MAX_DEPTH} levels (as a "
            "params file may be)"
        )
    if not _dotted(parts):
        raise ParamsError(f"{path}: {where}: not a dotted key (as -p takes: systems.0.model)")
    if parts[0] in RESERVED:
        raise ParamsError(f"{path}: {where}: {parts[0]!r} cannot be swept")
    if key in spec.seed_keys:
        keys = ", ".join(spec.seed_keys)
        if spec.seeds is not None:
            raise ParamsError(f"{path}: {where}: also set by sweep.seeds (sweep.seed_keys: {keys})")
        raise ParamsError(
            f"{path}: {where}: a seed key (sweep.seed_keys: {keys}): list its values in "
            "sweep.seeds, each configuration then runs once per seed"
        )
    if key in spec.grid and key in spec.zip:
        raise ParamsError(f"{path}: {where}: in both sweep.grid and sweep.zip")


def _check_seed_keys(spec: SweepSpec, path: Path) -> None:
    """Each seed key once, a dotted key the sweep may set (:func:`check_seed_fields` checks,
    once the cells are validated, that each names an integer seed)."""
    seen: set[str] = set()
    for key in spec.seed_keys:
        if key in seen:
            raise ParamsError(f"{path}: sweep.seed_keys: {key} is listed twice")
        seen.add(key)
        parts = key.split(".")
        if not _dotted(parts):
            raise ParamsError(f"{path}: sweep.seed_keys: {key!r} is not a dotted key")
        if parts[0] in RESERVED:
            raise ParamsError(f"{path}: sweep.seed_keys: {parts[0]!r} cannot be set")
        if not _seed_name(parts[-1]):
            raise ParamsError(
                f"{path}: sweep.seed_keys: {key} is not a seed field (a seed key names an "
                f"integer seed: {SEED_FIELDS})"
            )


def _dotted(parts: list[str]) -> bool:
    """Parts of a key an override can write: none empty, none with ``=`` (it ends the key) or
    white space (stripped by ``-p``)."""
    return all(part and "=" not in part and part == "".join(part.split()) for part in parts)


def _seed_name(name: str) -> bool:
    return name == "seed" or name.endswith("_seed")


def _first_repeat(values: Sequence[Any]) -> int | None:
    """The position of the first value the same as an earlier one (:func:`_identity`), in one
    pass over a set."""
    keys = [_identity(value) for value in values]
    if len(set(keys)) == len(keys):
        return None
    seen: set[Any] = set()
    for index, key in enumerate(keys):
        if key in seen:
            return index
        seen.add(key)
    return None  # pragma: no cover (the set above was smaller: some key repeats)


def _identity(value: Any) -> Any:
    """What makes two swept values the same: their JSON text; for a scalar (quicker), its
    type and value (a float's repr: NaN is NaN, as in its text; True is not 1)."""
    kind = type(value)
    if kind is float:
        return kind, repr(value)
    if kind in (int, str, bool) or value is None:
        return kind, value
    return "json", _same(value)


def _no_repeats(values: Sequence[Any], where: str, path: Path) -> None:
    if (index := _first_repeat(values)) is not None:
        text = _same(values[index])
        raise ParamsError(f"{path}: {where}: {text} is listed twice (cells would repeat)")


def _check_zip_lengths(spec: SweepSpec, path: Path) -> None:
    lengths = {key: len(values) for key, values in spec.zip.items()}
    if len(set(lengths.values())) > 1:
        shown = ", ".join(f"{k}: {n}" for k, n in lengths.items())
        raise ParamsError(
            f"{path}: sweep.zip: lists of different lengths ({shown}); zipped "
            "keys vary together, one value of each per configuration"
        )


def _shape(spec: SweepSpec) -> str:
    sizes = [f"{len(v):,d}" for v in spec.grid.values()]
    if spec.zip:
        sizes.append(f"zip {len(next(iter(spec.zip.values()))):,d}")
    seeds = len(spec.seeds or [0])
    return f"{' × '.join(sizes) or '1'} configurations × {seeds:,d} seed{'s' * (seeds != 1)}"


def configurations(spec: SweepSpec) -> list[dict[str, Any]]:
    """Every configuration's settings (swept key -> value), in cell order."""
    grid = [
        dict(zip(spec.grid, combo, strict=True)) for combo in itertools.product(*spec.grid.values())
    ]
    zipped = [dict(zip(spec.zip, row, strict=True)) for row in zip(*spec.zip.values(), strict=True)]
    return [{**g, **z} for g in grid for z in (zipped or [{}])]


def baseline_config(spec: SweepSpec, configs: list[dict[str, Any]], path: Path) -> int:
    """Index of the baseline configuration (the first when ``baseline`` is not given).

    Raises:
        ParamsError: a baseline key that is not swept, or values that make no configuration.
    """
    wanted = spec.baseline or {}
    for key in wanted:
        if key not in configs[0]:
            raise ParamsError(
                f"{path}: sweep.baseline.{key}: not a swept key "
                f"(swept: {', '.join(configs[0]) or 'none'})"
            )
    first = {**configs[0], **wanted} if wanted else configs[0]
    target = {k: _value(v) for k, v in first.items()}
    for index, settings in enumerate(configs):
        if {k: _value(v) for k, v in settings.items()} == target:
            return index
    raise ParamsError(
        f"{path}: sweep.baseline: {_same(wanted)} is no configuration of the "
        "sweep (a zip's keys go together)"
    )


def expand(spec: SweepSpec, base_seed: int, path: Path) -> list[Cell]:
    """Every cell, configuration by configuration, each at every seed.

    Raises:
        ParamsError: a setting that cannot be written as an override, or a bad baseline.
    """
    configs = configurations(spec)
    baseline = baseline_config(spec, configs, path)
    seeds = spec.seeds if spec.seeds is not None else [base_seed]
    cells: list[Cell] = []
    for config, settings in enumerate(configs):
        try:
            texts = [override_text(key, value) for key, value in settings.items()]
        except ParamsError as exc:
            raise ParamsError(f"{path}: sweep: {exc}") from None
        for seed in seeds:
            seeded = [f"{key}={seed}" for key in spec.seed_keys] if spec.seeds is not None else []
            cells.append(
                Cell(len(cells), config, seed, settings, (*texts, *seeded), config == baseline)
            )
    return cells


def cell_params(
    model: type[StudyParams], base: dict[str, Any], cell: Cell, path: Path
) -> StudyParams:
    """The params of ``cell``: ``base`` with the cell's overrides, validated by ``model``.

    Raises:
        ParamsError: one line naming the cell, its overrides and what is wrong.
    """
    data = copy.deepcopy(base)
    try:
        apply_overrides(data, cell.overrides, path)
        return validate_params(model, data, path)
    except ParamsError as exc:
        what = str(exc).removeprefix(f"{path}: ")
        raise ParamsError(
            f"{path}: sweep cell {cell.id} (config {cell.config}, "
            f"{' '.join(shown_override(text) for text in cell.overrides)}): "
            f"{what}"
        ) from None


def validated_cells(
    model: type[StudyParams], base: dict[str, Any], cells: list[Cell], path: Path
) -> list[tuple[Cell, StudyParams]]:
    """Every cell with its params, refusing two cells whose params are the same run.

    Raises:
        ParamsError: a cell that does not validate, or two cells with identical params.
    """
    done = [(cell, cell_params(model, base, cell, path)) for cell in cells]
    seen: dict[str, Cell] = {}
    for cell, params in done:
        first = seen.setdefault(params_hash(params), cell)
        if first is not cell:
            raise ParamsError(
                f"{path}: sweep: cells {first.id} and {cell.id} have the same params "
                f"({' '.join(first.overrides)} | {' '.join(cell.overrides)}): a swept value "
                "that changes nothing"
            )
    return done


def ranking_metric(
    kind: str, cells: list[tuple[Cell, StudyParams]], wanted: str | None, path: Path
) -> str:
    """The metric that ranks the configurations: ``wanted`` (``sweep.metric``), else the
    swept study's first (its headline's), checked against the metrics every cell's outcomes
    will have (:attr:`evalbench.importers.outcomes.Reader.metrics`), before any cell runs.

    Raises:
        ParamsError: a metric the study kind does not have (the valid ones named), or one
            that some cell does not have (a swept setting renames it).
    """
    names = [(cell, READERS[kind].metrics(params.model_dump(mode="json")))
             for cell, params in cells]  # fmt: skip
    metric = wanted if wanted is not None else names[0][1][0]
    where = "sweep.metric" if wanted is not None else "sweep.metric (default: the study's first)"
    every = list(dict.fromkeys(name for _, found in names for name in found))
    if metric not in every:
        raise ParamsError(
            f"{path}: {where}: {metric!r} is no metric of study kind {kind} "
            f"(valid: {', '.join(every)})"
        )
    for cell, found in names:
        if metric not in found:
            raise ParamsError(
                f"{path}: {where}: {metric!r} is not a metric of every cell (cell {cell.id} "
                f"has: {', '.join(found)})"
            )
    return metric


def check_new_keys(
    model: type[StudyParams], base: dict[str, Any], spec: SweepSpec, cell: Cell, path: Path
) -> None:
    """Each swept key that lands in a free-form mapping (a table such as a simulator's
    accuracy per level) names a key that mapping has without the sweep: a new key is one
    the study never reads (a typo, a level that does not exist), and its configurations
    would be the same study ranked as if they differed.

    Each key is looked up in ``cell``'s params validated without that key's override (a
    mapping the file does not write has its default); when those do not validate, the key
    is needed to make them valid, and is not checked.

    Raises:
        ParamsError: a swept key the mapping does not have (its keys named).
    """
    for part, keys in [("grid", spec.grid), ("zip", spec.zip)]:
        for key in keys:
            others = [text for text in cell.overrides if not text.startswith(f"{key}=")]
            try:
                data = apply_overrides(copy.deepcopy(base), others, path)
                params = validate_params(model, data, path)
            except ParamsError:
                continue
            *parent, name = key.split(".")
            table = _field_at(params, parent)
            if isinstance(table, dict) and name not in table:
                raise ParamsError(
                    f"{path}: sweep.{part}.{key}: no key {name!r} in {'.'.join(parent)} (it has: "
                    f"{', '.join(map(str, table)) or 'none'}); a sweep varies settings that "
                    "exist: add it to the params file first"
                )


SEED_FIELDS = "seed, sample_seed, systems.0.seed"
"""Examples of integer seed fields, for the refusal of a seed key that is none."""


def check_seed_fields(spec: SweepSpec, cells: list[tuple[Cell, StudyParams]], path: Path) -> None:
    """Each seed key names an integer field once the cell's params are validated (its name,
    ``seed`` or ``*_seed``, was checked with the sweep block): a seed key landing on a
    probability or a step limit would make the "seeds" differ in something else.

    Raises:
        ParamsError: a seed key that is no such field (one line naming it).
    """
    if spec.seeds is None or not cells:
        return
    cell, params = cells[0]
    for key in spec.seed_keys:
        value = _field_at(params, key.split("."))
        if type(value) is not int:
            raise ParamsError(
                f"{path}: sweep.seed_keys: {key} is not a seed field (a seed key names an "
                f"integer seed: {SEED_FIELDS}); cell {cell.id} has {value!r} there"
            )


def _field_at(params: StudyParams, parts: list[str]) -> Any:
    """The value at a dotted path of validated params (``None`` where there is none)."""
    value: Any = params
    for part in parts:
        if isinstance(value, list):
            value = value[int(part)] if part.isdigit() and int(part) < len(value) else None
        elif isinstance(value, dict):
            value = value.get(part)
        else:
            value = getattr(value, part, None)
    return value
