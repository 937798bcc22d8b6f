"""The sweep study's types: the ``sweep:`` block, the sweep's params, one cell, the record
types of ``records/cells.jsonl`` and ``records/comparisons.jsonl``, and the
:class:`SweepResult` the notebook shows (report.py and figures.py read these, never the study).

Words used throughout: a **configuration** is one combination of the swept values (a point of
``grid`` × ``zip``); a **cell** is one configuration at one seed, computed as a run of the
swept study with its own run folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, NamedTuple

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, JsonValue, PrivateAttr

from evalbench.models import ModelSpec
from evalbench.params import StudyParams
from evalbench.records import Record

from .data import CellData

MAX_CELLS = 1000
"""The most cells one sweep may have (configurations × seeds). Each cell is a run: at the
demo's ≈ 0.2 s per simulated cell a 1,000-cell sweep takes minutes, with real models hours;
10,000 is refused before anything runs (split the sweep, or shrink the grid)."""
MAX_KEYS = 100
"""The most keys one sweep may vary (grid and zip together): with :data:`MAX_CELLS` cells,
at most 9 keys can have two values each; each key is checked against the cells' params."""
DAY_S = 86_400.0


class SweepSpec(BaseModel):
    """The ``sweep:`` block of a params file: which settings to vary, and how."""

    model_config = ConfigDict(extra="forbid")

    grid: dict[str, list[JsonValue]] = Field(default_factory=dict)
    """Dotted keys (as ``-p``: ``systems.0.temperature``) -> values: every combination is a
    configuration."""
    zip: dict[str, list[JsonValue]] = Field(default_factory=dict)
    """Dotted keys whose values vary together (lists of one length): one more dimension of
    the grid, e.g. a model and its price."""
    seeds: list[int] | None = Field(default=None, min_length=1)
    """Repeats of every configuration, one cell per seed (default: the study's own seed)."""
    seed_keys: list[str] = Field(
        default_factory=lambda: ["seed"], min_length=1, max_length=MAX_KEYS
    )
    """Where each seed goes: ``seed`` (the study seed: simulated systems, bootstrap); add a
    real system's ``systems.0.seed`` so its repeats are new requests, not cache hits."""
    baseline: dict[str, JsonValue] | None = None
    """The configuration every other is compared with, as swept key -> value (keys not given
    take the first value of their list); default: the first configuration."""
    metric: str | None = None
    """The metric that ranks configurations (default: the swept study's first, e.g. GAIA's
    accuracy)."""
    alpha: float = Field(default=0.05, gt=0.0, lt=0.5)
    """Level of the tests (Holm- and BH-adjusted over all cells)."""
    max_parallel: int = Field(default=2, ge=1, le=64, exclude=True)
    """Cells computed at once, each in a worker process (not part of the sweep's identity)."""
    cell_timeout_s: float = Field(
        default=DAY_S, gt=0, le=30 * DAY_S, exclude_if=lambda v: v == DAY_S
    )
    """A cell still running after this long is stopped and shown as failed (timed out); at
    most 30 days (a longer wait is none: it overflowed the clock of the workers' wait)."""
    power: float = Field(default=0.8, gt=0.5, lt=1.0, exclude_if=lambda v: v == 0.8)
    """Power of the "seeds needed to separate the top two" estimate."""


class Cell(NamedTuple):
    """One cell: a configuration at one seed."""

    id: int
    config: int
    seed: int
    settings: dict[str, Any]
    """Swept key -> value (grid and zip keys, in the sweep block's order)."""
    overrides: tuple[str, ...]
    """``key=value`` texts applied to the swept study's params (settings, then seeds), as
    ``-p`` would apply them."""
    baseline: bool
    """Whether the cell's configuration is the baseline."""


class SweepParams(StudyParams):
    """A sweep over another study's params (a params file with a ``sweep:`` block; loaded by
    :func:`evalbench.sweeps.study.load`, which also validates every cell)."""

    study: Literal["sweep"] = "sweep"
    swept: str = Field(min_length=1)
    """The study kind swept (the params file's ``study:``)."""
    sweep: SweepSpec
    base: dict[str, JsonValue]
    """The swept study's params as resolved (the file and its ``-p`` overrides, without the
    ``sweep:`` block); each cell applies its overrides to these."""
    _cells: list[tuple[Cell, StudyParams]] = PrivateAttr(default_factory=list)
    _metric: str = PrivateAttr(default="")

    @property
    def cells(self) -> list[tuple[Cell, StudyParams]]:
        """Every cell with its validated params (set when the sweep is loaded)."""
        if not self._cells:
            raise ValueError("sweep params without cells: load them with evalbench.studies")
        return self._cells

    @property
    def metric(self) -> str:
        """The ranking metric: ``sweep.metric``, else the swept study's first (checked against
        every cell's metrics when the sweep is loaded)."""
        if not self._metric:
            raise ValueError("sweep params without a metric: load them with evalbench.studies")
        return self._metric

    def model_specs(self) -> list[ModelSpec]:
        """The systems and judges of every cell, once per name, provider and endpoint."""
        found: dict[tuple[Any, ...], ModelSpec] = {}
        for _, params in self._cells:
            for spec in params.model_specs():
                key = (spec.name, spec.provider, spec.api_key_env, spec.base_url, spec.base_url_env)
                found.setdefault(key, spec)
        return list(found.values())


CellStatus = Literal["ok", "degraded", "no_result", "failed", "skipped", "interrupted"]


class CellSummary(NamedTuple):
    """How one cell ended, as its worker reports it to the sweep."""

    cell: int
    status: CellStatus
    reason: str | None
    run_id: str
    reused: bool
    """Finished earlier with the same code, params and data: read, not run again."""
    wall_s: float | None
    headlines: dict[str, Any]
    data: CellData | None
    """Its outcomes, usage and latency (``None`` when it never finished)."""
    timing: dict[str, float]
    """Seconds (see :attr:`CellRecord.timing`)."""
    data_files: dict[str, Any]
    """The data files the cell read (name or path -> sha256), from its manifest."""
    resumed: bool = False
    """See :attr:`CellRecord.resumed`."""
    reasked: int = 0
    reasked_cost_usd: float = 0.0


class Estimate(BaseModel):
    """One metric of one system in one cell, over all its items."""

    model_config = ConfigDict(extra="forbid")

    system: str
    metric: str
    estimate: float | None
    low: float | None
    high: float | None
    """Wilson interval for a rate, a seeded bootstrap for a score (as ``evalbench compare``)."""
    n: int
    """Items with a value."""


class CellRecord(Record):
    """A line of ``records/cells.jsonl``: one cell, however it ended."""

    cell: int
    config: int
    seed: int
    baseline: bool
    settings: dict[str, JsonValue]
    """Swept key -> value."""
    overrides: list[str]
    """What ``-p`` would apply to the params file (with ``sweep=null``) for this cell."""
    status: CellStatus
    reason: str | None
    """Why the cell is not ``ok`` (its error, a timeout, failed calls)."""
    run_id: str
    """The cell's run folder (``outputs/cells/<study kind>/<run id>``): its params hash."""
    reused: bool
    """Finished earlier with the same code, params and data: read, not run again."""
    resumed: bool = False
    """Computed over more than one attempt: it went on from what an earlier one (interrupted,
    killed, failed or timed out) had recorded."""
    reasked: int = 0
    """Requests its earlier attempts had sent and not recorded when they stopped, asked again:
    paid twice (at most: one sent an instant before a kill may not have reached the endpoint).
    Counted from the cell's note of requests sent (``in_flight.jsonl``); not counted: requests
    sent from other processes (``processes`` > 1, agents on Ray)."""
    reasked_cost_usd: float = 0.0
    """What those requests cost when asked again (the earlier payment, estimated by it);
    included in :attr:`cost_usd`."""
    wall_s: float | None
    """Seconds the cell took (null when reused)."""
    timing: dict[str, float]
    """Seconds in its worker: ``wait`` (for another sweep computing it), ``start`` (opening
    its run), ``study`` (the study's run and finish), ``end`` (its verdict), ``total`` (with
    reading it back), ``cpu`` (the worker's CPU seconds of all that)."""
    headlines: dict[str, JsonValue]
    """The swept study's own index headlines of the cell."""
    metrics: list[Estimate]
    cost_usd: float | None
    """USD paid for the cell's calls (cache hits free), the requests lost in flight by earlier
    attempts included (:attr:`reasked_cost_usd`); null when no system is priced."""
    prompt_tokens: int
    completion_tokens: int
    latency_s: float | None
    """Mean seconds per call (agents: per task); null without calls."""


class ComparisonRecord(Record):
    """A line of ``records/comparisons.jsonl``: one test of a cell against the baseline cell
    of its seed (a row of ``evalbench compare BASELINE_CELL CELL``), adjusted over the sweep."""

    cell: int
    baseline_cell: int
    system_a: str
    system_b: str
    metric: str
    slice: str
    slice_value: str
    n: int
    mean_a: float | None
    mean_b: float | None
    difference: float | None
    low: float | None
    high: float | None
    test: str
    p: float | None
    p_holm_pair: float | None
    """Holm over this cell's comparison alone (what ``evalbench compare`` prints)."""
    p_bh_pair: float | None
    p_holm: float | None
    """Holm over every test of the sweep (all cells × systems × metrics × slices)."""
    p_bh: float | None
    """Benjamini–Hochberg over the same family."""
    mdd: float | None
    improvement: float | None


class SweepResult(NamedTuple):
    """Everything a sweep computed (what ``sweep.ipynb`` shows)."""

    params: SweepParams
    cells: pd.DataFrame
    """One row per cell (the fields of :class:`CellRecord`, ``metrics`` and settings
    flattened: a column per swept key)."""
    estimates: pd.DataFrame
    """Per cell, system and metric: estimate, low, high, n (ok cells)."""
    comparisons: pd.DataFrame
    """Every cell vs the baseline cell of its seed (:class:`ComparisonRecord` rows)."""
    configs: pd.DataFrame
    """Per configuration and system, on the ranking metric: mean over seeds, spreads, cost,
    tokens, latency, Pareto flags."""
    best: pd.DataFrame
    """The best configuration against every other, pooled over seeds (Holm)."""
    separation: dict[str, Any]
    """Seeds needed to separate the top two configurations (see :func:`~.metrics.separation`)."""
    effects: pd.DataFrame
    """Mean of the ranking metric per swept key and value (main effects)."""
    interactions: pd.DataFrame
    """Mean per pair of swept keys and pair of values, with the interaction residual."""
    metric: str
    """The ranking metric."""
    higher_is_better: bool
    factors: list[str]
    """The swept keys (a zip's keys as one factor, joined by " + ")."""
    notes: list[str]
    """What could not be computed, and why."""
    simulated: frozenset[str]
    folder: Path
    """Where the cells' run folders are."""
