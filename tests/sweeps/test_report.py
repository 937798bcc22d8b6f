"""The sweep's analysis and report over cells that did not all end ok, without running any:
the statistics and sentences are pure functions of the cells' summaries."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

from evalbench.importers import RunOutcomes, outcome_frame
from evalbench.params import ParamsError
from evalbench.stats import wilson_interval
from evalbench.studies import load_params, open_run
from evalbench.sweeps import report
from evalbench.sweeps.data import CellData
from evalbench.sweeps.executor import Finished
from evalbench.sweeps.records import CellSummary
from evalbench.sweeps.study import _failed, analyse, cell_jobs, cell_records, settle_stopped

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


def ended_ok(cell: int, right: dict[str, range], n: int = 20) -> CellSummary:
    """A cell that ended ok: each system right on the items ``right[system]`` of ``n``."""
    rows = [{"item_id": f"t{i}", "system": system, "metric": "accuracy", "kind": "binary",
             "higher_is_better": True, "value": float(i in items), "state": "ok"}
            for system, items in right.items() for i in range(n)]  # fmt: skip
    run = RunOutcomes(f"s/{cell}", "gaia", "evalbench", tmp := Path(f"run{cell}"),
                      outcome_frame(rows), (), frozenset(), {})  # fmt: skip
    data = CellData(run, [], {})
    return CellSummary(cell, "ok", None, str(tmp), False, 1.0, {}, data, {}, {})


TWO = [dict(SIM), {"name": "b", "provider": "sim", "sim": {"accuracy": 0.5}}]


def test_the_best_is_claimed_better_only_than_what_it_was_compared_with(tmp_path: Path) -> None:
    # config 0 ended ok (system a right on 20 of 20 items, b on 2), config 1 failed: the best,
    # config 0 · a, was tested against config 0 · b only (18 discordant pairs, all for a:
    # exact McNemar p = 2 × 0.5^18 = 7.6e-6), never against config 1
    params = sweep_params(tmp_path, {"grid": {"systems.0.temperature": [0.0, 0.5]}}, TWO)
    cells = [cell for cell, _ in params.cells]
    summaries = {0: ended_ok(0, {"a": range(20), "b": range(2)}), 1: failed(1, "timed out")}
    result = analyse(params, cells, summaries, tmp_path)
    assert result.best["p"].tolist() == pytest.approx([2 * 0.5**18])
    sentence = report.best_sentence(result)
    assert "every other" not in sentence
    assert "significantly better than config 0 · b (Holm-adjusted p below 0.05" in sentence
    assert "Not compared: config 1 (no cell ended ok)." in sentence


def test_an_entry_without_a_seed_in_common_with_the_best_is_not_compared(tmp_path: Path) -> None:
    # config 0 ended ok at seed 0 only, config 1 at seed 1 only: no item is paired between
    # them, so the best is neither better than config 1 nor "not told apart" from it
    params = sweep_params(
        tmp_path, {"grid": {"systems.0.temperature": [0.0, 0.5]}, "seeds": [0, 1]}
    )
    cells = [cell for cell, _ in params.cells]  # cells 0, 1: config 0; 2, 3: config 1
    summaries = {0: ended_ok(0, {"a": range(15)}), 1: failed(1, "died"),
                 2: failed(2, "died"), 3: ended_ok(3, {"a": range(10)})}  # fmt: skip
    result = analyse(params, cells, summaries, tmp_path)
    sentence = report.best_sentence(result)
    assert "not significantly better" not in sentence and "every other" not in sentence
    assert "Not compared: config 1 (no seed at which both ended ok)." in sentence


def test_resumed_cells_are_named_with_the_requests_they_paid_twice(tmp_path: Path) -> None:
    params = sweep_params(tmp_path, {"grid": {"systems.0.temperature": [0.0, 0.5]}})
    cells = [cell for cell, _ in params.cells]
    # cell 1 went on from a killed attempt that had 2 requests in flight, each 0.02 USD when
    # asked again
    resumed = ended_ok(1, {"a": range(12)})._replace(resumed=True, reasked=2,
                                                      reasked_cost_usd=0.04)  # fmt: skip
    result = analyse(params, cells, {0: ended_ok(0, {"a": range(10)}), 1: resumed}, tmp_path)
    rows = {r["cell"]: r for r in cell_records(result)}
    assert (rows[1]["resumed"], rows[1]["reasked"], rows[1]["reasked_cost_usd"]) == (True, 2, 0.04)
    assert rows[1]["cost_usd"] == pytest.approx(0.04)  # no recorded usage here: 0 + 0.04
    assert (rows[0]["resumed"], rows[0]["reasked"]) == (False, 0)
    text = report.failed_sentence(result)
    assert "Every cell ended ok (0 read from an earlier run" in text
    assert (
        "1 cell went on from an earlier attempt that stopped (cell 1); 2 requests it had sent "
        "and not recorded were asked again: paid twice, 0.0400 USD (in the costs below)."
    ) in text


def test_a_stopped_cell_with_an_unreadable_manifest_does_not_stop_the_sweep(
    tmp_path: Path,
) -> None:
    # the driver reads a stopped cell's manifest (its earlier attempts, its final status): a
    # file that is not JSON is the cell's problem, shown as its reason, never the sweep's end
    sweep_params(tmp_path, {"grid": {"systems.0.temperature": [0.0, 0.5]}})
    run = open_run(tmp_path / "sw.yaml")
    job = cell_jobs(run)[0]
    job.folder.mkdir(parents=True)
    (job.folder / "manifest.json").write_text("{not json")
    summary = _failed(job, Finished(0, None, "its worker process died (exit code -9)", 1.0))
    assert summary.status == "failed" and summary.reason == "its worker process died (exit code -9)"
    settle_stopped(job.folder, "its worker process died (exit code -9)")
    assert (job.folder / "manifest.json").read_text() == "{not json"  # left as it was
    (job.folder / "manifest.json").write_text("[1, 2]")  # JSON, but no manifest
    assert _failed(job, Finished(0, None, "died", 1.0)).reason == "died"
    settle_stopped(job.folder, "died")
    assert (job.folder / "manifest.json").read_text() == "[1, 2]"


def test_a_stopped_cell_whose_folder_cannot_be_written_does_not_stop_the_sweep(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before: outputs/cells on a read-only mount failed the whole sweep with a raw OSError
    # (settle_stopped's lock_run made the folder), losing the finished cells' rows.
    from evalbench.sweeps import study

    sweep_params(tmp_path, {"grid": {"systems.0.temperature": [0.0, 0.5]}})
    run = open_run(tmp_path / "sw.yaml")
    job = cell_jobs(run)[0]

    def read_only(*_: object, **__: object) -> None:
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(study, "lock_run", read_only)
    settle_stopped(job.folder, "died")  # no error: the cell's row says why it failed
    assert not job.folder.exists()
    monkeypatch.undo()
    job.folder.mkdir(parents=True)
    (job.folder / "manifest.json").write_text('{"status": "running"}')
    monkeypatch.setattr(study, "update_manifest", read_only)
    settle_stopped(job.folder, "died")
    assert (job.folder / "manifest.json").read_text() == '{"status": "running"}'


def test_a_cell_a_reader_marked_interrupted_gets_the_drivers_reason(tmp_path: Path) -> None:
    """A worker that died leaves its cell's manifest ``running`` with a free lock; a reader
    of the folder (the driver's own) then wrote ``interrupted`` ("its process is gone"),
    which settle_stopped left alone: the cell's manifest disagreed with its row (failed)."""
    import json

    from evalbench.runs import current_manifest

    sweep_params(tmp_path, {"grid": {"systems.0.temperature": [0.0, 0.5]}})
    job = cell_jobs(open_run(tmp_path / "sw.yaml"))[0]
    job.folder.mkdir(parents=True)
    (job.folder / "manifest.json").write_text('{"status": "running", "pid": 1}')
    assert current_manifest(job.folder)["status"] == "interrupted"  # the reader's guess
    settle_stopped(job.folder, "its worker process died (exit code 3)")
    manifest = json.loads((job.folder / "manifest.json").read_text())
    assert (manifest["status"], manifest["reason"]) == (
        "failed", "its worker process died (exit code 3)")  # fmt: skip
    (job.folder / "manifest.json").write_text('{"status": "ok"}')  # a cell that ended: kept
    settle_stopped(job.folder, "died")
    assert json.loads((job.folder / "manifest.json").read_text()) == {"status": "ok"}


def test_a_sweep_stopped_at_once_marks_its_cells_under_way_interrupted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: a second Ctrl-C left the cells under way ``running`` for ever."""
    import json

    from evalbench.sweeps import study

    params = sweep_params(tmp_path, {"grid": {"systems.0.temperature": [0.0, 0.5]}})
    jobs = cell_jobs(open_run(tmp_path / "sw.yaml"))
    for job in jobs:
        job.folder.mkdir(parents=True)
        (job.folder / "manifest.json").write_text('{"status": "running"}')

    class Aborted:
        def run(self, *args: object, **kwargs: object):
            yield Finished(jobs[0].cell.id, ended_ok(0, {"a": range(3)}), None, 1.0)
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        study.execute(params, jobs, Aborted())
    second = json.loads((jobs[1].folder / "manifest.json").read_text())
    assert (second["status"], second["reason"]) == ("interrupted", study.CUT_SHORT)
    first = json.loads((jobs[0].folder / "manifest.json").read_text())
    assert first == {"status": "running"}  # it ended: its own process wrote (here: the fake's)


# ------------------------------------------------------------------ findings


def test_findings_name_the_cells_the_best_with_its_uncertainty_and_the_cost_per_cell(
    tmp_path: Path,
) -> None:
    params = sweep_params(tmp_path, {"grid": {"systems.0.temperature": [0.0, 0.5]}})
    cells = [cell for cell, _ in params.cells]
    # config 0: a right on 16 of 20, paid 0.03 USD; config 1: 10 of 20, paid 0.69 USD
    summaries = {
        0: ended_ok(0, {"a": range(16)})._replace(reasked_cost_usd=0.03),
        1: ended_ok(1, {"a": range(10)})._replace(reasked_cost_usd=0.69),
    }
    found = report.findings(analyse(params, cells, summaries, tmp_path))
    assert found.key_result.startswith("2 cells (2 configurations × 1 seed); 2 of 2 ended ok. ")
    # one seed: the best's uncertainty is its run's own Wilson interval, 16 of 20
    _, low, high, _ = wilson_interval(16, 20, 0.95)
    assert f"{low:.3f} {high:.3f}" == "0.584 0.919"
    assert (
        "Best by accuracy: <b>config 0</b> (systems.0.temperature = 0.0): about 80%, "
        "likely between 58% and 92% (one seed)"
    ) in found.key_result
    assert found.cost == "$0.03 to $0.69 per cell (mean $0.36), $0.72 in all over 2 cells."


def test_findings_put_the_cells_that_did_not_end_ok_first_among_the_caveats(
    tmp_path: Path,
) -> None:
    params = sweep_params(tmp_path, {"grid": {"systems.0.temperature": [0.0, 0.5]}})
    cells = [cell for cell, _ in params.cells]
    summaries = {0: ended_ok(0, {"a": range(16)}), 1: failed(1, "timed out <after> 2 s")}
    found = report.findings(analyse(params, cells, summaries, tmp_path))
    assert "1 of 2 ended ok" in found.key_result
    assert found.caveats[0] == (
        "1 of 2 cells did not end ok, so its numbers are left out: cell 1 (config 1, seed 0) "
        "failed: timed out &lt;after&gt; 2 s. Not compared with the best: config 1 (no cell "
        "ended ok)."
    )


def test_degraded_cells_are_said_to_be_kept_and_a_best_resting_on_them_says_so(
    tmp_path: Path,
) -> None:
    """Before: a degraded cell (more failed calls than max_error_rate, allowed by
    allow_degraded) was in every estimate and could be the best, while the report said
    "did not end ok, so their numbers are left out"."""
    params = sweep_params(tmp_path, {"grid": {"systems.0.temperature": [0.0, 0.5, 1.0]}})
    cells = [cell for cell, _ in params.cells]
    why = "a: 5 of 20 calls failed (above max_error_rate 0.1)"
    summaries = {0: ended_ok(0, {"a": range(10)}),
                 1: ended_ok(1, {"a": range(16)})._replace(status="degraded", reason=why),
                 2: failed(2, "timed out")}  # fmt: skip
    result = analyse(params, cells, summaries, tmp_path)
    found = report.findings(result)
    assert "1 of 3 ended ok, 1 degraded (kept). " in found.key_result
    assert "Best by accuracy: <b>config 1</b>" in found.key_result
    assert "(on degraded cells: 1 of its 1 cell had more failed calls than max_error_rate)" in (
        found.key_result
    )
    assert found.caveats[0].startswith(
        "1 of 3 cells did not end ok, so its numbers are left out: cell 2 (config 2, seed 0) "
        "failed: timed out."
    )
    assert found.caveats[1] == (
        "1 of 3 cells ended degraded (more failed calls than max_error_rate, allowed by "
        "allow_degraded), and its numbers are kept, its failed calls counted as the study "
        f"counts them: cell 1 (config 1, seed 0): {why}."
    )
    section = report.failed_sentence(result)
    assert "<b>1 cell did not end ok</b> (its numbers are left out" in section
    assert "<b>1 cell ended degraded</b> (its numbers are kept" in section


def test_main_effects_over_a_grid_with_a_missing_configuration_say_they_are_unbalanced(
    tmp_path: Path,
) -> None:
    """Before: with the (0.5, 200) corner of a 2 × 2 grid failed, the other key's values were
    averaged over unequal sets and showed an "effect" no setting made, with no word of it."""
    grid = {"systems.0.temperature": [0.0, 0.5], "systems.0.max_tokens": [100, 200]}
    params = sweep_params(tmp_path, {"grid": grid})
    cells = [cell for cell, _ in params.cells]
    summaries = {0: ended_ok(0, {"a": range(16)}), 1: ended_ok(1, {"a": range(16)}),
                 2: ended_ok(2, {"a": range(4)}), 3: failed(3, "timed out")}  # fmt: skip
    result = analyse(params, cells, summaries, tmp_path)
    _, caption = report.effects_table(result)
    assert caption.endswith(
        ". Unbalanced: config 3 (systems.0.temperature = 0.5, systems.0.max_tokens = 200) has "
        "no cell that ended ok, so each value is averaged over unequal sets of the other "
        "keys' values: an effect here can come from the missing cells, not the key"
    )
    whole = analyse(params, cells, {**summaries, 3: ended_ok(3, {"a": range(4)})}, tmp_path)
    assert "Unbalanced" not in report.effects_table(whole)[1]


def test_a_swept_url_with_credentials_is_refused_without_quoting_them(tmp_path: Path) -> None:
    secret = "http://user:hunter2@127.0.0.1:9/v1?key=SECRET#frag"
    system = {"name": "a", "provider": "openai", "model": "m", "api_key_env": "K"}
    with pytest.raises(ParamsError) as refused:
        sweep_params(
            tmp_path, {"grid": {"systems.0.base_url": [secret, "http://127.0.0.1:8/v1"]}}, [system]
        )
    line = str(refused.value)
    assert "sweep cell 0" in line and "systems.0.base_url=…" in line and "\n" not in line
    assert "hunter2" not in line and "SECRET" not in line and "frag" not in line


def test_a_best_over_cells_that_measured_different_items_says_so(tmp_path: Path) -> None:
    # Before: a grid over `levels` ([1, 2, 3] vs [1]) headlined "best accuracy=config 1 ·
    # strong-sim: 0.750": easier items, not a better configuration (on the 12 items both
    # cells had, the paired difference was +0.000)
    params = sweep_params(tmp_path, {"grid": {"systems.0.temperature": [0.0, 0.5]}})
    cells = [cell for cell, _ in params.cells]
    summaries = {0: ended_ok(0, {"a": range(10)}, n=20), 1: ended_ok(1, {"a": range(6)}, n=8)}
    result = analyse(params, cells, summaries, tmp_path)
    # config 1: 6 of 8 = 0.750, config 0: 10 of 20 = 0.500
    assert report.headlines(result)["best accuracy"] == (
        "config 1: 0.750 (cells over different items: 8 to 20)"
    )
    assert ("The cells measured different items (8 to 20 per cell): this ranking compares "
            "different tasks") in report.best_sentence(result)  # fmt: skip
    same = {0: ended_ok(0, {"a": range(10)}), 1: ended_ok(1, {"a": range(12)})}
    alike = analyse(params, cells, same, tmp_path)
    assert report.headlines(alike)["best accuracy"] == "config 1: 0.600"
    assert "different items" not in report.best_sentence(alike)


def test_the_analysis_does_not_depend_on_the_order_the_cells_finished(tmp_path: Path) -> None:
    # cells end in any order in parallel workers: a render gave the main effect of
    # max_steps = 5 as 0.229 [0.161, 0.302], the next of the same cells 0.229 [0.172, 0.297]
    # (the bootstrap resampled the cells' estimates in the order they had finished)
    params = sweep_params(
        tmp_path, {"grid": {"systems.0.temperature": [0.0, 0.5]}, "seeds": [0, 1, 2]}
    )
    cells = [cell for cell, _ in params.cells]
    summaries = {c.id: ended_ok(c.id, {"a": range(5 + 2 * c.id)}) for c in cells}
    forward = analyse(params, cells, summaries, tmp_path)
    backward = analyse(params, cells, dict(reversed(list(summaries.items()))), tmp_path)
    assert len(forward.effects) == 2 and forward.effects["low"].nunique() == 2
    pd.testing.assert_frame_equal(forward.effects, backward.effects)
    pd.testing.assert_frame_equal(forward.estimates, backward.estimates)
