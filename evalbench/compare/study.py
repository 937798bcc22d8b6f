"""The compare study (``study: compare``): is B better than A, where, and how sure are we?

``run(run)`` locates the runs of ``runs:`` (the first is the baseline), renders the ones a
params reference names that have not been rendered yet, reads each into per-item outcomes
(evalbench runs, inspect_ai logs, lm-eval outputs), pairs items by id and tests every metric
overall and per slice (:func:`evalbench.history.compare_runs`), marks regressions with the
gate's rule, follows the baseline's study over time, and measures on simulated runs how often
the gate fires on noise and how often it sees a change as large as the minimum detectable
difference. It writes ``records/comparison.jsonl`` and ``records/pairing.jsonl``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalbench.history import Comparison, compare_runs, headline_series, history_frame, rng_for
from evalbench.history.runs import params_run_dir
from evalbench.importers import OutcomeError, RunOutcomes, input_files
from evalbench.params import ParamsError
from evalbench.runs import Run, update_manifest
from evalbench.settings import get_settings
from evalbench.stats import mcnemar_exact
from evalbench.studies import Study

from . import metrics, report, scoring, sim
from .data import labels, locate, read
from .records import (
    CompareParams,
    CompareResult,
    ComparisonRecord,
    InputRun,
    PairingRecord,
    RunRef,
)

__all__ = ["CompareParams", "CompareResult", "ComparisonRecord", "PairingRecord", "RunRef", "run"]


def _ensure(inputs: list[InputRun]) -> tuple[list[InputRun], list[str]]:
    """Render the params runs that have not been rendered (one ``run_study`` each)."""
    from evalbench.publish import PUBLISHED, run_study

    done, created = [], []
    for item in inputs:
        file = item.params_file
        if item.path is None and file is not None:
            result = run_study(file, item.overrides, warm=True)  # one nested kernel for all
            if result.status not in PUBLISHED or result.run_dir is None:
                raise OutcomeError(
                    f"runs.{item.position}: rendering {file.name} "
                    f"{item.overrides} ended {result.status}: {result.reason}"
                )
            item = item._replace(path=result.run_dir)
            created.append(f"{item.label}: {file.name} {' '.join(item.overrides)}")
        done.append(item)
    return done, created


def load_inputs(params: CompareParams, base: Path) -> tuple[list[InputRun], list[str]]:
    """Locate every run of ``params.runs`` (rendering the missing params runs)."""
    outputs = get_settings().outputs_dir
    inputs = [locate(ref, i, base=base, outputs=outputs) for i, ref in enumerate(params.runs)]
    labels(inputs)
    return _ensure(inputs)


def compare(params: CompareParams, runs: list[RunOutcomes]) -> Comparison:
    """The paired comparison with verdicts (see :func:`evalbench.history.compare_runs`)."""
    found = compare_runs(
        runs,
        pairs=params.pairs,
        metrics=params.metrics,
        errors=params.errors,
        seed=params.seed,
        rounds=params.bootstrap_rounds,
        level=params.confidence_level,
        alpha=params.alpha,
        power=params.power,
    )
    tests = scoring.with_verdicts(found.tests, alpha=params.alpha, min_drop=params.min_drop)
    return found._replace(tests=tests)


def study_history(
    run: RunOutcomes, params: CompareParams
) -> tuple[pd.DataFrame | None, pd.DataFrame | None]:
    """The baseline's study over time (``None, None`` for an imported run)."""
    if run.source != "evalbench":
        return None, None
    study = str(run.meta["study"])
    series = headline_series(study, level=params.confidence_level, rounds=params.bootstrap_rounds)
    return history_frame(study), series


# ------------------------------------------------------------------------------ calibration


def calibrate(tests: pd.DataFrame, base: RunOutcomes, params: CompareParams) -> pd.DataFrame:
    """How the gate behaves at this n, on simulated runs that mimic the baseline.

    For every binary metric of every system pair (the overall rows of the first
    candidate): a simulated system with the baseline's accuracy per slice answers the same
    number of items per slice. ``false_alarm``: share of ``calibration_repeats`` pairs of
    runs of that same simulated system (different seeds, no true difference) in which the
    gate's rule (:func:`~.scoring.gate_fires_on`: Holm over all these rows and their
    slices) fires. ``detected_at_mdd``: share of simulated pairings of the row's n items,
    with the row's discordant share (at least the MDD) split so that the true change equals
    the row's minimum detectable difference (Connor's model), in which one exact McNemar
    test at ``alpha`` (unadjusted) sees it — the formula promises about ``power`` (it is a
    normal approximation; the exact test is a little conservative).
    """
    rows = tests[(tests["slice"] == "all") & (tests["kind"] == "binary")]
    rows = rows[rows["candidate"] == rows["candidate"].iloc[0]] if len(rows) else rows
    if not len(rows) or not params.calibration_repeats:
        return pd.DataFrame()
    slice_name = base.slices[0] if base.slices else None
    setup = [
        (
            row,
            metrics.slice_accuracy(base.outcomes, row.system_a, row.metric, slice_name),
            metrics.slice_sizes(base.outcomes, row.system_a, row.metric, slice_name),
        )
        for row in rows.itertuples()
    ]
    fired = [_null_fires(setup, params, r) for r in range(params.calibration_repeats)]
    null = metrics.rate(fired, params.confidence_level)
    return pd.DataFrame(
        [
            metrics.calibration_row(
                row.system_a, row.metric, row.n, row.mdd, null, _detection(row, params)
            )
            for row, acc, sizes in setup
        ]
    )


def _null_fires(setup: list[Any], params: CompareParams, repeat: int) -> bool:
    pairs = []
    for row, acc, sizes in setup:
        rng = rng_for(params.seed, "null", repeat, row.system_a, row.metric)
        a, b = sim.draw(acc, sizes, rng), sim.draw(acc, sizes, rng)
        pairs.append((a, b))
    return scoring.gate_fires_on(pairs, alpha=params.alpha, min_drop=params.min_drop)


def _detection(row: Any, params: CompareParams) -> Any:
    if not np.isfinite(row.mdd) or not row.n:
        return None
    psi = max((row.discordant_a + row.discordant_b) / row.n, row.mdd)
    seen = []
    for r in range(params.calibration_repeats):
        rng = rng_for(params.seed, "power", r, row.system_a, row.metric)
        only_a, only_b = sim.discordant_pairs(row.n, psi, row.mdd, rng)
        seen.append(mcnemar_exact(only_a, only_b) < params.alpha)
    return metrics.rate(seen, params.confidence_level)


# ------------------------------------------------------------------------------ the study


def run(run: Run[CompareParams]) -> CompareResult:
    """Locate (and render when missing), read, pair, test, follow over time and calibrate.

    Args:
        run: the open :class:`evalbench.runs.Run` of a ``compare`` study.
    """
    params = run.params
    with run.timed("load"):
        inputs, created = load_inputs(params, run.params_file.parent)
        runs = [read(item) for item in inputs]
    names = labels(inputs)
    comparison = compare(params, runs)
    simulated = frozenset().union(*(r.simulated for r in runs))
    if simulated:  # the compared systems are simulated even though this study asks no model
        update_manifest(run.dir, simulated=True, simulated_names=sorted(simulated))
    history, series = study_history(runs[0], params)
    result = CompareResult(
        params=params,
        inputs=inputs,
        runs=runs,
        labels=names,
        comparison=comparison,
        runs_table=metrics.run_table(runs, names),
        summaries=metrics.run_summaries(
            runs,
            names,
            level=params.confidence_level,
            rounds=params.bootstrap_rounds,
            seed=params.seed,
        ),
        regressions=comparison.tests[comparison.tests["verdict"] == "regression"],
        history=history,
        series=series,
        calibration=calibrate(comparison.tests, runs[0], params),
        simulated=simulated,
        created=created,
    )
    run.write_records("comparison", _plain(comparison.tests))
    run.write_records("pairing", comparison.pairing)
    return result


def _plain(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows with NaN (no value) as ``None`` and the MDD's status beside it (strict JSON
    writes an infinite MDD as null too)."""
    mdd = frame["mdd"].to_numpy(float)
    status = np.where(np.isinf(mdd), "none detectable", np.where(np.isnan(mdd), "unknown", "ok"))
    clean = frame.assign(mdd_status=status).astype(object)
    return clean.where(clean.notna(), None).to_dict(orient="records")


def counts(result: CompareResult) -> dict[str, int]:
    """Runs, tests, paired items and items in only one run, for the manifest."""
    tests, pairing = result.comparison.tests, result.comparison.pairing
    return {
        "runs": len(result.runs),
        "tests": len(tests),
        "paired_items": int(pairing["paired"].sum()),
        "only_in_one_run": int((pairing["only_a"] + pairing["only_b"]).sum()),
        "regressions": len(result.regressions),
    }


def dependencies(params: CompareParams, base: Path | None = None) -> list[Path]:
    """The files a comparison's numbers depend on beyond code and params (freshness): each
    compared run's inputs and the manifests of the baseline study's runs (its history).

    A reference to a params file (``path: gaia_demo.yaml``, relative to ``base``, the compare
    params file's folder) depends on that file itself and on the inputs of the run it names
    (with its ``overrides``): editing ``gaia_demo.yaml`` makes the comparison stale (before,
    such references were not followed and a changed file's old comparison stayed current).
    Other references are followed when they name one place: an absolute path or
    ``<study>/<run id>`` under outputs (what ``evalbench compare`` writes); a study name is
    resolved when the study renders.
    """
    outputs = get_settings().outputs_dir
    files: list[Path] = []
    first: Path | None = None
    for ref in params.runs:
        raw = Path(ref.path)
        file = raw if raw.is_absolute() else (base or Path.cwd()) / raw
        if file.suffix in (".yaml", ".yml") and file.is_file():
            files.append(file.resolve())
            try:
                path = params_run_dir(file, ref.overrides, outputs)
            except (OutcomeError, ParamsError):
                continue  # the study itself says so when it renders
        elif ref.overrides:
            continue
        else:
            path = raw if raw.is_absolute() else outputs / raw
        first = path if first is None else first
        if path.exists():
            try:
                files += input_files(path)
            except OutcomeError:
                continue  # not a run: the study itself says so when it renders
    if first is not None and (first / "manifest.json").is_file():
        files += first.parent.glob("*/manifest.json")
    return sorted(set(files))


STUDY = Study(
    kind="compare",
    params=CompareParams,
    run=run,
    notebook="compare.ipynb",
    records={"comparison": ComparisonRecord, "pairing": PairingRecord},
    headlines=report.headlines,
    findings=report.findings,
    counts=counts,
    measured=lambda result: metrics.measured_pairs(
        result.runs, result.labels, result.comparison.tests
    ),
    dependencies=dependencies,
)
