"""Sweeps end to end: cells computed in worker processes, then compared and summarized.

- the sweep's paired tests are ``evalbench compare``'s on the same cell folders (the same
  table, printed by the same function), and its Holm/BH span all cells (by hand);
- identical requests across cells are paid once (the loopback server counts them);
- a sweep killed mid-cell resumes: one record per item per cell, nothing asked twice;
- a failed and a hung cell are shown as failed (the sweep is ``degraded``, still published),
  the index lists the sweep once;
- two sweeps that share cells at once compute each shared cell once.

Real worker processes and servers: slow by nature (each test 3-15 s).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml
from studyfiles import CANARY_KEY, KEY_ENV, gaia_dataset, openai_system

from evalbench.cli import main
from evalbench.history.cli import format_tests
from evalbench.publish import build_index, run_study
from evalbench.records import read_jsonl
from evalbench.settings import get_settings
from evalbench.studies import open_run
from evalbench.sweeps import report
from evalbench.sweeps import run as run_sweep

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


DRIVER = """
import sys
from evalbench.studies import open_run
from evalbench.sweeps import run
r = open_run(sys.argv[1], sys.argv[2:])
result = run(r)
r.finish(result)
"""


def write_params(tmp_path: Path, name: str, sweep: dict, **study) -> Path:
    """A GAIA sweep params file (50 bootstrap rounds: fast)."""
    data = {"study": "gaia", "title": f"sweep {name}", "bootstrap_rounds": 50, **study,
            "sweep": sweep}  # fmt: skip
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def sweep_in_process(path: Path, overrides: list[str] | None = None):
    """Run a sweep without its notebook (what its setup cell does), ended like a notebook."""
    run = open_run(path, overrides or [])
    result = run_sweep(run)
    run.finish(result)
    return run, result


def cell_folder(result, cell: int) -> Path:
    row = result.cells.set_index("cell").loc[cell]
    return result.folder / str(row["run_id"])


def records_per_key(folder: Path, name: str = "gaia") -> dict[tuple, int]:
    counts: dict[tuple, int] = {}
    for row in read_jsonl(folder / "records" / f"{name}.jsonl"):
        key = (row["system"], row["task_id"], row["attempt"])
        counts[key] = counts.get(key, 0) + 1
    return counts


# --------------------------------------------------------------------- same numbers as compare


def test_the_sweeps_paired_numbers_are_evalbench_compares(tmp_path: Path, capsys) -> None:
    systems = [{"name": "a", "provider": "sim", "sim": {"accuracy": 0.6}},
               {"name": "b", "provider": "sim", "sim": {"accuracy": 0.4}}]  # fmt: skip
    sweep = {"grid": {"systems.0.sim.accuracy": [0.6, 0.9]}, "seeds": [1, 2], "max_parallel": 2}
    path = write_params(tmp_path, "sweep_cmp", sweep, dataset="demo", systems=systems)
    run, result = sweep_in_process(path)
    cells = result.cells
    assert list(cells["status"]) == ["ok"] * 4 and list(cells["config"]) == [0, 0, 1, 1]
    # system a at 0.9 is the best entry (a configuration and a system: two systems here)
    assert report.headlines(result)["best accuracy"].startswith("config 1 · a: ")
    assert "Best by accuracy: <b>config 1 · a</b> (systems.0.sim.accuracy = 0.9; " in (
        report.key_result(result)
    )
    assert len(read_jsonl(run.dir / "records" / "cells.jsonl")) == 4
    tests = result.comparisons
    for cell, base in [(2, 0), (3, 1)]:  # each cell against the baseline cell of its seed
        mine = tests[tests["cell"] == cell].rename(
            columns={"p_holm_pair": "p_holm", "p_bh_pair": "p_bh"}
        )
        assert set(mine["baseline_cell"]) == {base}
        capsys.readouterr()
        code = main(["compare", str(cell_folder(result, base)), str(cell_folder(result, cell)),
                     "--seed", "0", "--rounds", "50", "--no-report"])  # fmt: skip
        printed = capsys.readouterr().out
        assert code == 0
        letters = {mine["candidate"].iloc[0]: "B"}
        assert format_tests(mine, letters) in printed  # every row, number for number
    # Holm over the whole sweep, by hand: sorted p ascending, adj_(i) = max_(j<=i) min(1, (m-j+1) p_(j))
    p = list(tests["p"])
    order = sorted(range(len(p)), key=lambda i: p[i])
    m, running, holm = len(p), 0.0, [0.0] * len(p)
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        holm[i] = running
    assert list(tests["p_holm"]) == pytest.approx(holm)
    assert (tests["p_holm"] >= tests["p_holm_pair"] - 1e-12).all()  # a larger family
    # BH by hand: adj_(i) = min_(j>=i) min(1, m p_(j) / j)
    bh = [min(min(1.0, m * p[j] / (rank_j + 1)) for rank_j, j in enumerate(order) if rank_j >= rank)
          for rank, _ in enumerate(order)]  # fmt: skip
    assert [tests["p_bh"].iloc[i] for i in order] == pytest.approx(bh)


# --------------------------------------------------------------------- the response cache


def _study(tmp_path: Path, loopback, items: int = 4) -> dict:
    dataset = gaia_dataset(tmp_path, [str(i) for i in range(items)])
    fixed = openai_system(loopback, name="fixed", max_concurrency=1)
    tuned = openai_system(loopback, name="tuned", max_concurrency=1)
    return {"dataset": str(dataset), "systems": [fixed, tuned]}


def _distinct(loopback) -> set[str]:
    return {json.dumps([r.get(k) for k in ("model", "temperature", "seed", "messages")])
            for r in loopback.requests}  # fmt: skip


def test_identical_requests_across_cells_are_paid_once(
    tmp_path: Path, loopback, monkeypatch
) -> None:
    monkeypatch.setenv(KEY_ENV, CANARY_KEY)
    # 2 temperatures of "tuned" x 2 seeds = 4 cells x 2 systems x 4 items = 32 answers. The
    # study seed does not reach a real system's requests, "fixed" never changes, and "tuned" at
    # temperature 0.0 asks exactly what "fixed" asks (same endpoint, model, messages, settings):
    # 4 requests at temperature 0.0 + 4 at 0.5 are all there is to pay for
    sweep = {"grid": {"systems.1.temperature": [0.0, 0.5]}, "seeds": [0, 1], "max_parallel": 2}
    path = write_params(tmp_path, "sweep_cache", sweep, **_study(tmp_path, loopback))
    _, result = sweep_in_process(path)
    assert list(result.cells["status"]) == ["ok"] * 4
    assert loopback.count == 8 == len(_distinct(loopback))
    for cell in range(4):
        assert set(records_per_key(cell_folder(result, cell)).values()) == {1}


# --------------------------------------------------------------------- kill and resume


def test_a_sweep_killed_mid_cell_resumes_every_cell(tmp_path: Path, loopback, monkeypatch) -> None:
    monkeypatch.setenv(KEY_ENV, CANARY_KEY)
    loopback.latency = 0.25  # a cell's 4 calls take ~1 s: time to kill it mid-cell
    # one system, each seed sent with its requests: every cell asks 4 of its own (16 in all),
    # so what the rerun asks is exactly what the cells had not recorded
    seeds = {"seeds": [0, 1], "seed_keys": ["seed", "systems.0.seed"]}
    sweep = {"grid": {"systems.0.temperature": [0.0, 0.5]}, **seeds, "max_parallel": 2}
    study = _study(tmp_path, loopback)
    # priced so that one call (10 prompt + 5 completion tokens) costs 10 × 1000 / 10^6 +
    # 5 × 2000 / 10^6 = 0.02 USD
    study["systems"] = [study["systems"][0] | {"price_input_per_mtok": 1000.0,
                                               "price_output_per_mtok": 2000.0}]  # fmt: skip
    path = write_params(tmp_path, "sweep_kill", sweep, **study)
    outputs = get_settings().outputs_dir
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", DRIVER, str(path)], env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 90
        while loopback.count < 3 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert loopback.count >= 3, "the sweep never reached its cells"
        os.killpg(proc.pid, signal.SIGKILL)  # the sweep; its workers die with it
    finally:
        proc.wait(30)
    before = loopback.count
    folders = list((outputs / "cells" / "gaia").glob("*/records/responses.jsonl"))
    recorded = sum(len(read_jsonl(f)) for f in folders)  # answers kept: not asked again
    assert 0 < recorded < 16 and before <= recorded + 2, "killed too late, or lost answers"
    loopback.latency = 0.0
    run, _ = sweep_in_process(path)  # the same command again: the same sweep folder
    cells = read_jsonl(run.dir / "records" / "cells.jsonl")
    assert [c["status"] for c in cells] == ["ok"] * 4
    for cell in cells:  # one record per item and system in every cell, none twice
        counts = records_per_key(outputs / "cells" / "gaia" / cell["run_id"])
        assert len(counts) == 4 and set(counts.values()) == {1}
    # the rerun asked exactly what the cells had not recorded (a request in flight at the kill,
    # at most one per cell running, was paid and is asked again)
    assert len(_distinct(loopback)) == 16 and loopback.count - before == 16 - recorded
    # the cells that were cut short say so, and count the requests they had sent and not
    # recorded: asked again, so paid twice (a request noted as sent an instant before the kill
    # may not have reached the server: at most one more per cell running, 2)
    assert any(c["resumed"] for c in cells) and not any(c["reused"] for c in cells)
    assert all(c["reasked"] == 0 for c in cells if not c["resumed"])
    reasked, paid_twice = sum(c["reasked"] for c in cells), loopback.count - 16
    assert paid_twice <= reasked <= paid_twice + 2
    # the cells' costs: the 16 answers recorded, plus each re-asked request's earlier payment
    assert sum(c["cost_usd"] for c in cells) == pytest.approx((16 + reasked) * 0.02)


# --------------------------------------------------------------------- failures and the index


def _silent_port() -> tuple[socket.socket, int]:
    """A port that accepts connections and never answers (a hung endpoint)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    return server, server.getsockname()[1]


def _closed_port() -> int:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return port


def test_failed_and_hung_cells_are_shown_and_the_index_lists_the_sweep_once(
    tmp_path: Path, loopback, monkeypatch
) -> None:
    monkeypatch.setenv(KEY_ENV, CANARY_KEY)
    hung, port = _silent_port()
    try:
        study = _study(tmp_path, loopback, items=3)
        study["systems"] = study["systems"][:1]
        urls = [loopback.base_url, f"http://127.0.0.1:{port}/v1",
                f"http://127.0.0.1:{_closed_port()}/v1"]  # fmt: skip
        sweep = {"zip": {"systems.0.base_url": urls, "systems.0.max_retries": [1, 0, 0]},
                 "cell_timeout_s": 2, "max_parallel": 3}  # fmt: skip
        path = write_params(tmp_path, "sweep_fail", sweep, **study)
        result = run_study(path, warm=True)
    finally:
        hung.close()
    assert result.status == "degraded", result.reason
    assert "2 of 3 cells did not end ok" in result.reason
    cells = {c["cell"]: c for c in read_jsonl(result.run_dir / "records" / "cells.jsonl")}
    assert cells[0]["status"] == "ok"
    assert cells[1]["status"] == "failed" and "timed out after 2 s" in cells[1]["reason"]
    assert cells[2]["status"] == "failed" and "3 of 3 calls failed" in cells[2]["reason"]
    html = (result.run_dir / "report.html").read_text()
    assert "2 cells did not end ok" in html and "timed out after 2 s" in html
    index = build_index().read_text()
    assert index.count("'id'>sweep_fail/") == 1  # one row: the sweep, linking its report
    assert not any(cell["run_id"] in index for cell in cells.values())  # no row per cell
    assert "cells: <b>3 (1 ok)</b>" in index


# --------------------------------------------------------------------- two sweeps at once


def test_a_cell_keeps_its_folders_lock_until_its_verdict_is_written(
    tmp_path: Path, loopback, monkeypatch
) -> None:
    # finish() let go of the cell's folder before the cell's verdict was written: a second
    # sweep waiting for the folder took it in between, found the cell unfinished and computed
    # it again, and the first read the folder mid-way and called the cell failed (seen once,
    # in the two-sweeps test below, in a full `make test`).
    from evalbench.runs import _HELD
    from evalbench.sweeps import study as sweep_study

    monkeypatch.setenv(KEY_ENV, CANARY_KEY)
    held: list[bool] = []
    end = sweep_study._end

    def spy(job, study_s: float) -> None:
        held.append(job.folder.resolve() in _HELD)
        end(job, study_s)

    monkeypatch.setattr(sweep_study, "_end", spy)
    sweep = {"grid": {"systems.1.temperature": [0.0]}, "max_parallel": 1}
    path = write_params(tmp_path, "sweep_lock", sweep, **_study(tmp_path, loopback, items=1))
    (job,) = sweep_study.cell_jobs(open_run(path, []))
    summary = sweep_study.compute_cell(job)  # in this process, as a worker computes it
    assert held == [True] and summary.status == "ok"
    assert job.folder.resolve() not in _HELD  # let go once the cell is ended


def test_two_sweeps_sharing_cells_compute_each_cell_once(
    tmp_path: Path, loopback, monkeypatch
) -> None:
    monkeypatch.setenv(KEY_ENV, CANARY_KEY)
    loopback.latency = 0.05
    sweep = {"grid": {"systems.1.temperature": [0.0, 0.5]}, "max_parallel": 1}
    path = write_params(tmp_path, "sweep_two", sweep, **_study(tmp_path, loopback))
    # two sweeps (the second names the study's seed 0 explicitly: another sweep folder, the
    # same cells), started together; their workers lock each cell's folder
    runs = [open_run(path, []), open_run(path, ["sweep.seeds=[0]"])]
    assert runs[0].dir != runs[1].dir
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(run_sweep, runs))
    for run, result in zip(runs, results, strict=True):
        run.finish(result)
    first, second = (r.cells.to_dict(orient="records") for r in results)
    assert [c["run_id"] for c in first] == [c["run_id"] for c in second]
    for a, b in zip(first, second, strict=True):  # computed by one sweep, read by the other
        assert a["status"] == b["status"] == "ok", (a.get("reason"), b.get("reason"))
        assert sorted([a["reused"], b["reused"]]) == [False, True]
    assert loopback.count == 8 == len(_distinct(loopback))


def test_a_sweep_in_which_no_cell_ends_ok_is_published_saying_so(
    tmp_path: Path, loopback, monkeypatch
) -> None:
    # one cell's endpoint refuses every connection, the other's never answers (stopped at
    # cell_timeout_s): no cell ends ok, and the sweep says so, with each reason, and exits 1
    monkeypatch.setenv(KEY_ENV, CANARY_KEY)
    hung, port = _silent_port()
    try:
        study = _study(tmp_path, loopback, items=2)
        study["systems"] = [study["systems"][0] | {"max_retries": 0}]
        urls = [f"http://127.0.0.1:{_closed_port()}/v1", f"http://127.0.0.1:{port}/v1"]
        sweep = {"grid": {"systems.0.base_url": urls}, "cell_timeout_s": 2, "max_parallel": 2}
        path = write_params(tmp_path, "sweep_none", sweep, **study)
        result = run_study(path, warm=True)
    finally:
        hung.close()
    assert result.status == "no_result", result.reason  # published (exit 1), not ok
    assert result.reason.startswith("no result: 0 of 2 cells scored — cell failed ("), result.reason
    cells = read_jsonl(result.run_dir / "records" / "cells.jsonl")
    assert [(c["cell"], c["status"]) for c in cells] == [(0, "failed"), (1, "failed")]
    assert "2 of 2 calls failed" in cells[0]["reason"]
    assert "timed out after 2 s" in cells[1]["reason"]
    manifest = json.loads((result.run_dir / "manifest.json").read_text())
    assert manifest["headlines"] == {"result": result.reason}  # no number at all
    assert "2 of 2 calls failed" in result.reason and "timed out after 2 s" in result.reason
    html = (result.run_dir / "report.html").read_text()
    assert "No cell ended ok: nothing to rank" in html and "timed out after 2 s" in html
    # the timed-out cell's own manifest says how it ended (its worker was killed mid-run)
    cell_dir = get_settings().outputs_dir / "cells" / "gaia" / cells[1]["run_id"]
    stopped = json.loads((cell_dir / "manifest.json").read_text())
    assert stopped["status"] == "failed" and "timed out after 2 s" in stopped["reason"]


# --------------------------------------------------------------------- cells shared by hash


def test_the_same_sweep_under_another_name_reads_every_cell(tmp_path: Path) -> None:
    # a copy of a params file under another name is the same sweep: its cells are the same
    # runs (same params hash), computed once and read by the second
    sweep = {"grid": {"systems.0.sim.accuracy": [0.5, 0.9]}, "max_parallel": 1}
    study = {"dataset": "demo", "systems": [{"name": "a", "provider": "sim"}], "title": "same"}
    first = write_params(tmp_path, "sweep_name_a", sweep, **study)
    second = tmp_path / "sweep_name_b.yaml"
    second.write_text(first.read_text())
    _, one = sweep_in_process(first)
    _, two = sweep_in_process(second)
    assert one.folder == two.folder == get_settings().outputs_dir / "cells" / "gaia"
    assert list(one.cells["run_id"]) == list(two.cells["run_id"])
    assert list(one.cells["reused"]) == [False, False] and list(two.cells["reused"]) == [True, True]


def test_cells_in_the_old_per_file_folder_are_moved_and_still_readable_there(
    tmp_path: Path,
) -> None:
    # before: outputs/<params name>/cells/<hash>; a finished cell found there is moved to
    # outputs/cells/<kind>/<hash> (read, not rerun) and its old path is a link to it
    sweep = {"grid": {"systems.0.sim.accuracy": [0.5, 0.9]}, "max_parallel": 1}
    path = write_params(tmp_path, "sweep_old", sweep, dataset="demo",
                        systems=[{"name": "a", "provider": "sim"}])  # fmt: skip
    _, result = sweep_in_process(path)
    outputs = get_settings().outputs_dir
    legacy = outputs / "sweep_old" / "cells"
    legacy.mkdir(parents=True)
    for run_id in result.cells["run_id"]:  # as the previous version left them
        (outputs / "cells" / "gaia" / run_id).rename(legacy / run_id)
    _, again = sweep_in_process(path)
    assert list(again.cells["reused"]) == [True, True]
    for run_id in again.cells["run_id"]:
        moved = outputs / "cells" / "gaia" / run_id
        assert (moved / "manifest.json").is_file() and not moved.is_symlink()
        assert (legacy / run_id).is_symlink() and (legacy / run_id).resolve() == moved.resolve()
        assert json.loads((legacy / run_id / "manifest.json").read_text())["status"] == "ok"


def test_a_legacy_cells_folder_that_is_a_link_out_of_outputs_is_never_adopted(
    tmp_path: Path,
) -> None:
    # outputs/<params name>/cells is a symbolic link to a folder elsewhere holding a folder
    # named like a cell. Before: that folder was moved into outputs/cells/<kind>/ and a link
    # left in its place (a user's folder taken out of where it was).
    from evalbench.sweeps.study import adopt_legacy

    outputs = get_settings().outputs_dir
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "0123456789ab").mkdir(parents=True)
    (elsewhere / "0123456789ab" / "mine.txt").write_text("not a cell")
    (outputs / "sweep_old").mkdir(parents=True)
    (outputs / "sweep_old" / "cells").symlink_to(elsewhere, target_is_directory=True)
    target = outputs / "cells" / "gaia" / "0123456789ab"
    adopt_legacy(outputs / "sweep_old" / "cells" / "0123456789ab", target)
    assert sorted(p.name for p in (elsewhere / "0123456789ab").iterdir()) == ["mine.txt"]
    assert not (elsewhere / "0123456789ab").is_symlink() and not target.exists()
