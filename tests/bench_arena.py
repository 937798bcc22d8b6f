"""Benchmark: Bradley–Terry fit + 1,000 bootstrap rounds on 1,000,000 synthetic battles of
100 models, side by side with the public arena code timed in the same run.

Run ``python tests/bench_arena.py`` (not collected by pytest). Writes JSON to
``$EVALBENCH_OUTPUTS/bench/arena.json`` (default ``outputs/bench/arena.json``) and prints it.

Rows:

- ``ours``: :func:`evalbench.ratings.bootstrap_bt` (point fit included) and its cell-count
  draws alone, two ways: numpy's ``rng.multinomial`` of every round (a binomial per cell,
  one after another; what evalbench drew before) and evalbench's exact Poisson-split
  ``multinomial_rounds`` on one stream (evalbench draws two streams in threads beside the
  refits). Target ≤ 1.5 s (every timed run), peak RSS ≤ 500 MB.
- ``fastchat``: FastChat's ``compute_bt`` and ``compute_bootstrap_bt`` (multinomial cell
  weights, one L-BFGS fit per round in a ``multiprocessing`` pool of every core), file
  ``fastchat/serve/monitor/rating_systems.py`` @0e6d3e4, run in full.
- ``arena_hard``: Arena-Hard v0.1's ``compute_mle_elo`` (a scikit-learn logistic regression
  on two rows per battle) and ``get_bootstrap_result`` (``battles.sample`` + refit per
  round), file ``utils_math.py`` @efc012e; a few rounds timed (``--peer-rounds``), the
  rest extrapolated and labelled so.

Each peer runs in a process of its own (its memory apart from ours) from the files
``tests/bench_peers.py arena`` puts in its ``PEERS`` folder; without them the row says
how to get them and is skipped. Every method fits the same battles; the point ratings are
compared with ours.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import scipy

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_peers import PEERS  # noqa: E402

from evalbench import ratings  # noqa: E402
from evalbench.records import to_json, write_atomic  # noqa: E402

OUTPUTS = Path(os.environ.get("EVALBENCH_OUTPUTS") or ROOT / "outputs")
PEER_FILES = {"fastchat": "fastchat_rating_systems.py", "arena_hard": "arena_hard_utils_math.py"}


def synthetic_battles(
    n_battles: int, n_models: int, rng: np.random.Generator, tie_rate: float = 0.1
) -> tuple[pd.DataFrame, pd.Series]:
    """Uniformly drawn pairs; outcomes from BT with seeded true ratings (sd 150).

    A battle ties with probability ``τ = 2·tie_rate·min(p, 1 - p)`` and A wins with
    ``p - τ/2``, so the expected score with ties as half is exactly the BT ``p`` and the
    half-tie MLE is consistent for the true ratings.
    """
    names = np.array([f"model-{i:03d}" for i in range(n_models)])
    true = pd.Series(rng.normal(1000, 150, n_models), index=names)
    a = rng.integers(0, n_models, n_battles)
    b = (a + rng.integers(1, n_models, n_battles)) % n_models
    p_a = 1 / (1 + 10 ** ((true.to_numpy()[b] - true.to_numpy()[a]) / 400))
    tau = 2 * tie_rate * np.minimum(p_a, 1 - p_a)
    u = rng.random(n_battles)
    winner = np.where(u < p_a - tau / 2, "a", np.where(u < p_a + tau / 2, "tie", "b"))
    battles = pd.DataFrame({"model_a": names[a], "model_b": names[b], "winner": winner})
    return battles, true


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_ours(battles: pd.DataFrame, rounds: int, seed: int, repeats: int) -> dict:
    """Time our point fit and the full bootstrap (validation and its own fit included),
    ``repeats`` times, and the bootstrap's multinomial draws alone."""
    start = time.perf_counter()
    point = ratings.fit_bt(battles)
    fit_s = time.perf_counter() - start
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        boot = ratings.bootstrap_bt(battles, rng=np.random.default_rng(seed), rounds=rounds)
        table = ratings.ratings_table(boot)
        seconds.append(time.perf_counter() - start)
    return {
        "point": point,
        "table": table,
        "fit_seconds": fit_s,
        "fit_plus_bootstrap_seconds": seconds,
        "draws_alone_seconds": draws_alone(battles, rounds, seed),
        "degenerate_rounds": int(table["degenerate_rounds"].iloc[0]),
        "peak_rss_mb": peak_rss_mb(),
    }


def draws_alone(battles: pd.DataFrame, rounds: int, seed: int) -> dict[str, float]:
    """Seconds for the bootstrap's cell-count draws by themselves, numpy's multinomial and
    evalbench's Poisson split (same cells, one stream each)."""
    from evalbench.ratings import _cells
    from evalbench.ratings_fast import multinomial_rounds

    cells = _cells(battles, "half", None)
    n_total = int(cells.n.sum())
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    rng.multinomial(n_total, cells.n / n_total, size=rounds)
    numpy_s = time.perf_counter() - start
    start = time.perf_counter()
    for size in [100] * (rounds // 100) + [rounds % 100] * bool(rounds % 100):
        multinomial_rounds(cells.n, size, rng)
    split_s = time.perf_counter() - start
    return {"numpy_multinomial": round(numpy_s, 3), "poisson_split_one_stream": round(split_s, 3)}


def output_path() -> Path:
    """``$EVALBENCH_OUTPUTS/bench/arena.json``, default under the repository's ``outputs/``."""
    return OUTPUTS / "bench" / "arena.json"


def setup_info(args: argparse.Namespace, battles: pd.DataFrame) -> dict:
    """What was run, and on what."""
    return {
        "battles": args.battles,
        "models": args.models,
        "bootstrap_rounds": args.rounds,
        "seed": args.seed,
        "tie_rate": 0.1,
        "tie_share": round(float((battles["winner"] == "tie").mean()), 4),
        "cpus": os.cpu_count(),
        "load_average_1min_at_end": round(os.getloadavg()[0], 2),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "pandas": pd.__version__,
    }


def ours_summary(ours: dict, true: pd.Series) -> dict:
    """Our timings plus a check against the true ratings (error, interval coverage)."""
    table = ours["table"].set_index("model")
    centred = true - true.mean() + 1000  # our ratings are mean-centred at 1000
    error = ours["point"] - centred.reindex(ours["point"].index)
    truth = centred.reindex(table.index)
    covered = (table["ci_low"] <= truth) & (truth <= table["ci_high"])
    seconds = sorted(ours["fit_plus_bootstrap_seconds"])
    return {
        "method": "BT MLE by Newton on pair counts; multinomial cell bootstrap (exact "
        "Poisson split, two streams) drawn in threads beside warm-started refits",
        "fit_seconds": round(ours["fit_seconds"], 3),
        "fit_plus_bootstrap_seconds": {"median": round(seconds[len(seconds) // 2], 3),
                                       "min": round(seconds[0], 3),
                                       "max": round(seconds[-1], 3), "runs": len(seconds)},
        "draws_alone_seconds": ours["draws_alone_seconds"],
        "target_seconds": 1.5,
        "meets_target": seconds[-1] <= 1.5,
        "degenerate_rounds": ours["degenerate_rounds"],
        "peak_rss_mb": round(ours["peak_rss_mb"], 1),
        "target_peak_rss_mb": 500,
        "median_ci_width": round(float((table["ci_high"] - table["ci_low"]).median()), 2),
        "max_abs_error_vs_true_ratings": round(float(error.abs().max()), 2),
        "ci_coverage_of_true_ratings": float(covered.mean()),
    }  # fmt: skip


def run_peer_process(name: str, args: argparse.Namespace) -> dict:
    """Run one peer in a fresh process (``--peer``); a missing peer file is a skipped row."""
    path = PEERS / PEER_FILES[name]
    if not path.exists():
        how = f"not run: {path} is missing; get it with `python tests/bench_peers.py arena`"
        print(f"bench_arena: {name} {how}", file=sys.stderr)
        return {"skipped": how}
    command = [sys.executable, __file__, "--peer", name, "--battles", str(args.battles),
               "--models", str(args.models), "--rounds", str(args.rounds),
               "--peer-rounds", str(args.peer_rounds), "--seed", str(args.seed)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=7200)
    if done.returncode != 0:
        raise RuntimeError(f"{name} failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def peer_main(args: argparse.Namespace) -> None:
    """In the peer's own process: generate the same battles, time the peer, print JSON."""
    battles, _ = synthetic_battles(args.battles, args.models, np.random.default_rng(args.seed))
    df = battles.assign(winner=battles["winner"].map({"a": "model_a", "b": "model_b",
                                                      "tie": "tie"}))  # fmt: skip
    spec = importlib.util.spec_from_file_location(args.peer, PEERS / PEER_FILES[args.peer])
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[args.peer] = module  # its pool pickles functions by module name
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    out = fastchat(module, df, args) if args.peer == "fastchat" else arena_hard(module, df, args)
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    out.update(peak_rss_mb=round(peak_rss_mb(), 1), peak_rss_mb_pool_worker=round(children, 1))
    print(json.dumps(out))


def fastchat(module: object, df: pd.DataFrame, args: argparse.Namespace) -> dict:
    """FastChat: compute_bt, then compute_bootstrap_bt in full (a pool of every core)."""
    start = time.perf_counter()
    point = module.compute_bt(df)  # type: ignore[attr-defined]
    fit_s = time.perf_counter() - start
    start = time.perf_counter()
    module.compute_bootstrap_bt(df, num_round=args.rounds)  # type: ignore[attr-defined]
    boot_s = time.perf_counter() - start
    return {"method": "FastChat rating_systems.compute_bt + compute_bootstrap_bt "
            f"(@0e6d3e4; L-BFGS per round, multiprocessing pool of {os.cpu_count()})",
            "fit_seconds": round(fit_s, 3), "bootstrap_seconds": round(boot_s, 2),
            "fit_plus_bootstrap_seconds": round(fit_s + boot_s, 2), "extrapolated": False,
            "point": point.to_dict()}  # fmt: skip


def arena_hard(module: object, df: pd.DataFrame, args: argparse.Namespace) -> dict:
    """Arena-Hard v0.1: compute_mle_elo, then a few get_bootstrap_result rounds (extrapolated)."""
    start = time.perf_counter()
    point = module.compute_mle_elo(df)  # type: ignore[attr-defined]
    fit_s = time.perf_counter() - start
    rounds = max(1, args.peer_rounds)
    start = time.perf_counter()
    module.get_bootstrap_result(df, module.compute_mle_elo, rounds)  # type: ignore[attr-defined]
    per_round = (time.perf_counter() - start) / rounds
    return {"method": "Arena-Hard v0.1 utils_math.compute_mle_elo + get_bootstrap_result "
            "(@efc012e; scikit-learn logistic regression on 2 dense rows per battle)",
            "fit_seconds": round(fit_s, 3), "measured_bootstrap_rounds": rounds,
            "seconds_per_bootstrap_round": round(per_round, 2),
            "fit_plus_bootstrap_seconds": round(fit_s + per_round * args.rounds, 1),
            "extrapolated": True, "point": point.to_dict()}  # fmt: skip


def compare(ours: dict, peer: dict) -> dict:
    """A peer row with its point ratings compared with ours, and our speedup."""
    if "point" not in peer:
        return peer
    theirs = pd.Series(peer.pop("point"))
    gap = float((ours["point"] - theirs.reindex(ours["point"].index)).abs().max())
    ours_s = sorted(ours["fit_plus_bootstrap_seconds"])[
        len(ours["fit_plus_bootstrap_seconds"]) // 2
    ]
    return {**peer, "point_ratings_max_abs_difference_vs_ours": gap,
            "ours_faster_by": round(peer["fit_plus_bootstrap_seconds"] / ours_s, 1)}  # fmt: skip


def main() -> None:
    """Generate the battles, time ours and the peers, compare, write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--battles", type=int, default=1_000_000)
    parser.add_argument("--models", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of ours")
    parser.add_argument(
        "--peer-rounds",
        type=int,
        default=3,
        help="Arena-Hard bootstrap rounds timed (the rest extrapolated)",
    )
    parser.add_argument("--peers", default="fastchat,arena_hard", help="'' for none")
    parser.add_argument("--peer", choices=sorted(PEER_FILES), help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.peer:
        peer_main(args)
        return

    battles, true = synthetic_battles(args.battles, args.models, np.random.default_rng(args.seed))
    rss_data = peak_rss_mb()
    ours = run_ours(battles, args.rounds, args.seed + 1, max(1, args.repeats))
    peers = {name: compare(ours, run_peer_process(name, args))
             for name in filter(None, args.peers.split(","))}  # fmt: skip
    result = {
        "setup": setup_info(args, battles),
        "peak_rss_mb_after_data": round(rss_data, 1),
        "ours": ours_summary(ours, true),
        **peers,
    }
    path = write_atomic(output_path(), to_json(result, indent=2) + "\n")
    print(to_json(result, indent=2))
    print(f"written to {path}")


if __name__ == "__main__":
    main()
