"""The compare study's types: its params, the record types of ``records/comparison.jsonl``
and ``records/pairing.jsonl``, a located input run and the :class:`CompareResult` the notebook
shows (report.py and figures.py read these, never the study)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal, NamedTuple

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, model_validator

from evalbench.history import Comparison
from evalbench.history.paired import repeated_pair
from evalbench.importers import RunOutcomes
from evalbench.params import StudyParams
from evalbench.records import Record


class RunRef(BaseModel):
    """One compared run."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(min_length=1)
    """A run folder, ``<study>/<run id>`` under outputs, a study name, a params file
    (relative to this params file), or an inspect_ai / lm-eval log."""
    overrides: list[str] = Field(default_factory=list)
    """For a params file: ``key=value`` overrides (the run of exactly these params)."""
    label: str | None = None
    """Name in tables (default ``A``, ``B`` ...)."""
    create: bool = True
    """For a params file: render its run first when it has none (else: the run of its
    current content when published, or the study's latest published run)."""
    slices: list[str] = Field(default_factory=list)
    """For an inspect_ai log: sample metadata keys to slice by."""
    max_log_mb: int | None = Field(default=None, ge=1, exclude_if=lambda v: v is None)
    """For an inspect_ai log: the most it may expand to, in MiB (default 256: it is read
    whole into memory)."""


class CompareParams(StudyParams):
    """Parameters of a run comparison (``study: compare``)."""

    study: Literal["compare"] = "compare"
    runs: list[RunRef] = Field(min_length=2)
    """The runs to compare; the first is the baseline, every other is compared with it."""
    pairs: list[tuple[str, str]] = Field(default_factory=list)
    """``[baseline system, candidate system]`` pairs (default: the same names)."""
    metrics: list[str] | None = None
    """Metrics to compare (default: every metric of the benchmark)."""
    errors: Literal["as_study", "exclude"] = "as_study"
    """Failed calls: counted as the study counts them (e.g. wrong for GAIA), or left out of
    the pairs (counted apart)."""
    alpha: float = Field(default=0.05, gt=0.0, lt=0.5)
    """Level of every test (Holm-adjusted for verdicts and the gate)."""
    power: float = Field(default=0.8, gt=0.5, lt=1.0)
    """Power of the minimum detectable difference."""
    min_drop: float = Field(default=0.0, ge=0.0)
    """A regression must also drop by more than this (in the metric's units)."""
    calibration_repeats: int = Field(default=200, ge=0, le=20_000)
    """Simulated run pairs for the gate's false-alarm rate and the power check (0: skip)."""

    @model_validator(mode="after")
    def _check_labels(self) -> CompareParams:
        names = [r.label for r in self.runs if r.label]
        if len(set(names)) != len(names):
            raise ValueError(f"runs: labels must be unique (got {names})")
        if twice := repeated_pair(self.pairs):
            raise ValueError(f"pairs: [{', '.join(twice)}] is given twice (the same tests "
                             "twice would weaken every Holm-adjusted p)")  # fmt: skip
        return self


class ComparisonRecord(Record):
    """A line of ``records/comparison.jsonl``: one metric of one system pair, overall or in
    one slice, candidate vs baseline."""

    baseline: str
    candidate: str
    system_a: str
    """The system in the baseline run."""
    system_b: str
    """The system in the candidate run."""
    metric: str
    kind: Literal["binary", "score"]
    higher_is_better: bool
    slice: str
    """``all`` or the slice column (``level``, ``category`` ...)."""
    slice_value: str
    n: int
    """Items paired (both runs have a value)."""
    mean_a: float | None
    mean_b: float | None
    difference: float | None
    """mean_b − mean_a."""
    low: float | None
    high: float | None
    """Paired percentile bootstrap interval of the difference."""
    test: str
    p: float | None
    p_holm: float | None
    """Holm-adjusted over the candidate's whole comparison."""
    p_bh: float | None
    """Benjamini–Hochberg-adjusted over the same family."""
    discordant_a: int
    """Binary: right only in A; scores: items where B is lower."""
    discordant_b: int
    errors_a: int
    """Paired items whose call failed in A (counted as the study counts them)."""
    errors_b: int
    mdd: float | None
    """Minimum detectable difference at this n (null when ``mdd_status`` is not ``ok``)."""
    mdd_status: Literal["ok", "unknown", "none detectable"]
    """``none detectable``: no change is detectable at this n (the MDD is infinite);
    ``unknown``: no spread of the differences to compute it from."""
    improvement: float | None
    """The difference in the metric's better direction."""
    verdict: str


class PairingRecord(Record):
    """A line of ``records/pairing.jsonl``: how one system pair's items paired, per metric."""

    baseline: str
    candidate: str
    system_a: str
    system_b: str
    metric: str
    paired: int
    only_a: int
    """Items only the baseline has (never silently dropped: counted here)."""
    only_b: int
    unscored: int
    """Items both have but one side without a value (unscored, hidden truth ...)."""
    excluded_errors: int


class InputRun(NamedTuple):
    """One compared run, located."""

    position: int
    """Its index in ``runs:`` (0 = the baseline)."""
    label: str
    """``A``, ``B`` ... or the ``label:`` given."""
    path: Path | None
    """The run folder or log; ``None`` for a params run not rendered yet."""
    params_file: Path | None
    """The params file of a params reference."""
    overrides: list[str]
    slices: list[str]
    """Sample metadata keys to slice an inspect_ai log by."""
    max_log_mb: int | None = None
    """For an inspect_ai log: the most it may expand to (default: the importer's limit)."""


class CompareResult(NamedTuple):
    """Everything a comparison computed (what ``compare.ipynb`` shows)."""

    params: CompareParams
    inputs: list[InputRun]
    runs: list[RunOutcomes]
    labels: list[str]
    comparison: Comparison
    """Tests (with a ``verdict`` column), pairing counts and notes."""
    runs_table: pd.DataFrame
    summaries: pd.DataFrame
    regressions: pd.DataFrame
    history: pd.DataFrame | None
    """Every run of the baseline's study (evalbench runs only)."""
    series: pd.DataFrame | None
    """Each published run's per-system numbers with intervals."""
    calibration: pd.DataFrame
    simulated: frozenset[str]
    created: list[str]
    """Input runs this study rendered first."""
