"""A 64-cell sweep of the GAIA demo (simulated, 32 items per cell), report included, and the
per-cell overhead.

    python tests/bench_sweep.py [--values 4] [--seeds 4]   (writes outputs/bench/sweep.json,
                                                            or under $EVALBENCH_OUTPUTS)

1. End to end: ``evalbench run`` of params/gaia_demo.yaml with a sweep block of two keys ×
   ``--values`` values × ``--seeds`` seeds (4 × 4 × 4 = 64 cells, ``max_parallel: 2``), from
   empty outputs, in a fresh process: its wall time (target ≤ 60 s) and phases (kernel start,
   the notebook's cells — the cells' computation and the analysis —, HTML export).
2. Per cell: the seconds each cell took in its worker by phase (``records/cells.jsonl``:
   start, study, end, total, and the worker's CPU seconds), next to the seconds its simulated
   answers alone take (the same jobs answered by the same simulated systems in this process,
   nothing recorded); the difference is the cell's overhead: opening its run folder, records,
   scoring, summaries, manifest, verdict and reading it back (target ≤ 0.3 s, median), in
   wall seconds and, less sensitive to other work on the machine, in CPU seconds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
OUTPUTS = Path(os.environ.get("EVALBENCH_OUTPUTS") or ROOT / "outputs")  # before main() moves it
KEYS = ("systems.0.sim.malformed_rate", "systems.1.sim.error_rate")
VALUES = {KEYS[0]: [0.0, 0.05, 0.1, 0.2, 0.3, 0.4], KEYS[1]: [0.0, 0.01, 0.02, 0.03, 0.04, 0.05]}


def sweep_params(folder: Path, values: int, seeds: int) -> Path:
    """params/gaia_demo.yaml with the bench's sweep block."""
    data = yaml.safe_load((ROOT / "params" / "gaia_demo.yaml").read_text())
    data["sweep"] = {"grid": {key: VALUES[key][:values] for key in KEYS},
                     "seeds": list(range(seeds)), "max_parallel": 2}  # fmt: skip
    path = folder / "bench_sweep.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def end_to_end(path: Path) -> tuple[float, Path]:
    """``evalbench run`` in a fresh process: wall seconds and the sweep's run folder."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "evalbench.cli", "run", str(path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=900)  # fmt: skip
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"evalbench run failed ({done.returncode}): {done.stderr[-2000:]}")
    report = next(line for line in done.stdout.splitlines() if line.startswith("report: "))
    return wall, Path(report.removeprefix("report: ")).parent


def answer_seconds(path: Path, cells: list[int]) -> list[tuple[float, float]]:
    """Wall and CPU seconds the simulated answers of each of ``cells`` take alone (no records,
    no cache)."""
    from evalbench.gaia.study import answer_jobs, load_study_items
    from evalbench.models import ModelClient, generate
    from evalbench.studies import load_params

    sweep = load_params(path)
    out = []
    for cell in cells:
        params = sweep.cells[cell][1]
        items = load_study_items(params)
        jobs = answer_jobs(items, params)
        started, cpu = time.perf_counter(), time.process_time()
        for spec in params.systems:
            generate(ModelClient(spec, seed=params.seed), jobs, on_result=lambda j, r: None,
                     progress=False)  # fmt: skip
        out.append((time.perf_counter() - started, time.process_time() - cpu))
    return out


def _spread(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"median": round(statistics.median(ordered), 4),
            "p90": round(ordered[int(0.9 * (len(ordered) - 1))], 4),
            "min": round(ordered[0], 4), "max": round(ordered[-1], 4)}  # fmt: skip


def main() -> None:
    from evalbench.records import read_jsonl, to_json, write_atomic
    from evalbench.runs import read_manifest

    args = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    args.add_argument("--values", type=int, default=4, help="values per swept key (at most 6)")
    args.add_argument("--seeds", type=int, default=4)
    opts = args.parse_args()
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        os.environ["EVALBENCH_OUTPUTS"] = str(folder / "outputs")
        os.environ["EVALBENCH_CACHE"] = str(folder / "cache")
        path = sweep_params(folder, opts.values, opts.seeds)
        wall, run_dir = end_to_end(path)
        manifest = read_manifest(run_dir)
        cells = read_jsonl(run_dir / "records" / "cells.jsonl")
        sample = [c["cell"] for c in cells][:: max(1, len(cells) // 16)]
        answers = answer_seconds(path, sample)
    timing = {key: [c["timing"][key] for c in cells] for key in cells[0]["timing"]}
    overhead = [timing["total"][c] - a for c, (a, _) in zip(sample, answers, strict=True)]
    overhead_cpu = [timing["cpu"][c] - a for c, (_, a) in zip(sample, answers, strict=True)]
    result = {
        "setup": {"cells": len(cells), "items_per_cell": 32, "systems": 2, "attempts": 3,
                  "max_parallel": 2, "keys": list(KEYS), "seeds": opts.seeds,
                  "load_average_at_start": round(load, 2), "cpus": os.cpu_count()},
        "end_to_end_s": round(wall, 2),
        "status": manifest.get("status"),
        "phases_s": manifest.get("timing"),
        "cell_s": {key: _spread(values) for key, values in timing.items()},
        "sim_answers_s": _spread([a for a, _ in answers]),
        "sim_answers_cpu_s": _spread([a for _, a in answers]),
        "overhead_per_cell_s": _spread(overhead),
        "overhead_per_cell_cpu_s": _spread(overhead_cpu),
        "targets": {"end_to_end_s": 60.0, "overhead_per_cell_s": 0.3},
    }  # fmt: skip
    write_atomic(OUTPUTS / "bench" / "sweep.json", to_json(result, indent=2) + "\n")
    print(to_json(result, indent=2))


if __name__ == "__main__":
    main()
