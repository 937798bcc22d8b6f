"""The sweep's analysis and report over cells that did not all end ok, without running any:
the statistics and sentences are pure functions of the cells' summaries."""

from __future__ import annotations

from pathlib import Path

import yaml

from evalbench.studies import load_params
from evalbench.sweeps import report
from evalbench.sweeps.records import CellSummary
from evalbench.sweeps.study import analyse, cell_records

SIM = {"name": "a", "provider": "sim", "sim": {"accuracy": 0.5}}


def sweep_params(tmp_path: Path, sweep: dict, systems: list[dict] | None = None):
    """A loaded GAIA demo sweep (its cells listed and validated)."""
    data = {"study": "gaia", "title": "t", "dataset": "demo", "bootstrap_rounds": 50,
            "systems": systems or [dict(SIM)], "sweep": sweep}  # fmt: skip
    path = tmp_path / "sw.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return load_params(path)


def failed(cell: int, reason: str) -> CellSummary:
    """A cell whose worker gave up (no records read)."""
    return CellSummary(cell, "failed", reason, f"run{cell}", False, 2.0, {}, None,
                       {"total": 2.0}, {})  # fmt: skip


def test_a_sweep_in_which_no_cell_ended_ok_says_so_with_every_reason(tmp_path: Path) -> None:
    params = sweep_params(tmp_path, {"grid": {"systems.0.temperature": [0.0, 0.5]}})
    cells = [cell for cell, _ in params.cells]
    reasons = {0: "timed out after 2 s (sweep.cell_timeout_s); stopped",
               1: "dead: 32 of 32 calls failed: connection × 32"}  # fmt: skip
    result = analyse(params, cells, {c: failed(c, r) for c, r in reasons.items()}, tmp_path)
    rows = cell_records(result)
    assert [(r["cell"], r["status"], r["reason"]) for r in rows] == [
        (0, "failed", reasons[0]),
        (1, "failed", reasons[1]),
    ]
    assert all(r["metrics"] == [] for r in rows)
    # no number where nothing was measured: the cells, and that none ended ok
    assert report.headlines(result) == {
        "cells": "2 (0 ok)",
        "best accuracy": "no result (no cell ended ok)",
    }
    key = report.key_result(result)
    assert "2 cells (2 configurations × 1 seed); 0 of 2 ended ok." in key
    assert "No cell ended ok: nothing to rank" in key
    failures = report.failed_sentence(result)
    assert "2 cells did not end ok" in failures
    assert all(reason in failures for reason in reasons.values())
    for table in (
        report.cells_table,
        report.seeds_table,
        report.cost_table,
        report.best_table,
        report.effects_table,
        report.interactions_table,
        report.baseline_table,
    ):
        table(result)  # every table of the notebook renders (empty where nothing ended ok)
    assert "nothing to separate" in report.separation_sentence(result)
