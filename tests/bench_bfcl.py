"""Benchmark: check every item of the three public BFCL result sets.

Loads the eleven categories from the pinned files, reads the registered result files of
glyphh-ada-1.1 (FC format), gemma4-e4b-toolcall-v02 and AIREV-Agent-0.8B (Python call
strings), decodes and checks every item, and builds the summary tables. Reports wall time
per phase, checked items per second (best of three scoring passes) and peak RSS.
Target: the whole public set in under 5 s.

Run as ``python tests/bench_bfcl.py``; needs the data (``EVALBENCH_DATA_MIRROR`` or the
download cache). Writes
``outputs/bench/bfcl.json`` (or ``$EVALBENCH_OUTPUTS/bench/bfcl.json``).
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REPEATS = 3


def main() -> None:
    from evalbench import bfcl

    start = time.perf_counter()
    items, load_s = _timed(bfcl.load)
    results, read_s = _timed(
        lambda: {model: bfcl.fetch_results(model) for model in bfcl.PUBLIC_SYSTEMS}
    )
    passes = [_timed(lambda: _score_all(bfcl, items, results)) for _ in range(REPEATS)]
    verdicts, score_s = passes[0][0], min(seconds for _, seconds in passes)
    summary, summarize_s = _timed(lambda: bfcl.summarize(verdicts))
    first_pass_wall = load_s + read_s + passes[0][1] + summarize_s
    report = {
        "items_checked": len(verdicts),
        "per_system": verdicts.groupby("system").size().to_dict(),
        "accuracy": verdicts.groupby("system")["valid"].mean().round(4).to_dict(),
        "load_s": round(load_s, 3),
        "read_results_s": round(read_s, 3),
        "score_s_best_of_3": round(score_s, 3),
        "summarize_s": round(summarize_s, 3),
        "items_per_s": round(len(verdicts) / score_s, 1),
        "wall_s_load_to_summary": round(first_pass_wall, 3),
        "target_wall_s": 5.0,
        "total_script_s": round(time.perf_counter() - start, 3),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "machine": f"{os.cpu_count()} cores, python {sys.version.split()[0]}",
    }
    out = Path(os.environ.get("EVALBENCH_OUTPUTS") or ROOT / "outputs") / "bench" / "bfcl.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    print(f"summary tables: {', '.join(summary._fields)}; wrote {out}")


def _score_all(bfcl, items, results):
    import pandas as pd

    frames = [
        bfcl.score_results(items, lines, system=model, style=bfcl.PUBLIC_SYSTEMS[model])
        for model, lines in results.items()
    ]
    return pd.concat(frames, ignore_index=True)


def _timed(fn):
    t0 = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - t0


if __name__ == "__main__":
    from evalbench.sources import DataUnavailable

    try:
        main()
    except DataUnavailable as exc:  # the public result files are not reachable here
        print(f"bench_bfcl skipped: {exc}", file=sys.stderr)
