"""Benchmark: Bradley–Terry fit + 1,000 bootstrap rounds on 1,000,000 synthetic battles.

Run ``python tests/bench_arena.py`` (not collected by pytest). Writes JSON to
``$EVALBENCH_OUTPUTS/bench/arena.json`` (default ``outputs/bench/arena.json`` under the
repository root) and prints it.

Side by side: the common baseline, a logistic regression on one design row per battle as
the public arena code does (Arena-Hard ``compute_mle_elo``: every battle duplicated so a
tie is one win each way, a dense ``rows x models`` design with ``±ln 10``, no intercept,
no penalty, ``tol=1e-8``; bootstrap = resample rows, rebuild, refit). It runs only a few
bootstrap rounds and extrapolates to the requested number, labelled ``extrapolated``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import scipy
from scipy import optimize, sparse
from scipy.special import expit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evalbench import arena  # noqa: E402


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


def run_ours(battles: pd.DataFrame, rounds: int, seed: int) -> dict:
    """Time our point fit and the full bootstrap (which includes validation and its own fit)."""
    start = time.perf_counter()
    point = arena.fit_bt(battles)
    fit_s = time.perf_counter() - start
    start = time.perf_counter()
    boot = arena.bootstrap_bt(battles, rng=np.random.default_rng(seed), rounds=rounds)
    table = arena.ratings_table(boot)
    boot_s = time.perf_counter() - start
    return {
        "point": point,
        "table": table,
        "fit_seconds": fit_s,
        "fit_plus_bootstrap_seconds": boot_s,
        "degenerate_rounds": int(table["degenerate_rounds"].iloc[0]),
        "peak_rss_mb": peak_rss_mb(),
    }


def design(battles: pd.DataFrame, models: pd.Index) -> tuple[np.ndarray, np.ndarray]:
    """Arena-Hard's design: battles twice, a tie = an A win in copy 1 and a B win in copy 2."""
    a = models.get_indexer(battles["model_a"])
    b = models.get_indexer(battles["model_b"])
    n = len(battles)
    x = np.zeros((2 * n, len(models)))
    rows = np.arange(2 * n)
    x[rows, np.concatenate([a, a])] = math.log(10)
    x[rows, np.concatenate([b, b])] = -math.log(10)
    winner = battles["winner"].to_numpy()
    y = np.concatenate([(winner == "a") | (winner == "tie"), winner == "a"]).astype(float)
    return x, y


def logistic_coefficients(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Unpenalised logistic regression without intercept (sklearn if importable, else scipy)."""
    try:
        from sklearn.linear_model import LogisticRegression
    except ImportError:
        return _scipy_logistic(x, y)
    model = LogisticRegression(fit_intercept=False, C=np.inf, tol=1e-8, max_iter=1000)
    return model.fit(x, y).coef_[0]


def _scipy_logistic(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    xs = sparse.csr_matrix(x)

    def loss(beta: np.ndarray) -> tuple[float, np.ndarray]:
        z = xs @ beta
        value = float(np.sum(np.logaddexp(0, z) - y * z))
        return value, xs.T @ (expit(z) - y)

    result = optimize.minimize(loss, np.zeros(x.shape[1]), jac=True, method="L-BFGS-B", tol=1e-12)
    return result.x


def baseline_ratings(battles: pd.DataFrame, models: pd.Index) -> pd.Series:
    """Elo-scale ratings as ``compute_mle_elo``: 400·coef + 1000 (no anchor model here)."""
    x, y = design(battles, models)
    return pd.Series(400 * logistic_coefficients(x, y) + 1000, index=models)


def run_baseline(battles: pd.DataFrame, rounds: int, measured: int, seed: int) -> dict:
    """Point fit plus ``measured`` row-resampling bootstrap rounds, extrapolated to ``rounds``."""
    models = pd.Index(sorted(set(battles["model_a"]) | set(battles["model_b"])))
    start = time.perf_counter()
    point = baseline_ratings(battles, models)
    fit_s = time.perf_counter() - start
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    for _ in range(measured):
        rows = rng.integers(0, len(battles), len(battles))
        baseline_ratings(battles.iloc[rows], models)
    per_round = (time.perf_counter() - start) / max(measured, 1)
    return {
        "point": point,
        "fit_seconds": fit_s,
        "measured_rounds": measured,
        "seconds_per_round": per_round,
        "fit_plus_bootstrap_seconds_extrapolated": fit_s + per_round * rounds,
        "peak_rss_mb": peak_rss_mb(),
    }


def output_path() -> Path:
    """``$EVALBENCH_OUTPUTS/bench/arena.json``, default under the repository's ``outputs/``."""
    base = os.environ.get("EVALBENCH_OUTPUTS") or ROOT / "outputs"
    return Path(base) / "bench" / "arena.json"


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
    return {
        "method": "BT MLE by Newton on pair counts; multinomial cell bootstrap, warm start",
        "fit_seconds": round(ours["fit_seconds"], 3),
        "fit_plus_bootstrap_seconds": round(ours["fit_plus_bootstrap_seconds"], 3),
        "degenerate_rounds": ours["degenerate_rounds"],
        "peak_rss_mb": round(ours["peak_rss_mb"], 1),
        "median_ci_width": round(float((table["ci_high"] - table["ci_low"]).median()), 2),
        "max_abs_error_vs_true_ratings": round(float(error.abs().max()), 2),
        "ci_coverage_of_true_ratings": float(covered.mean()),
    }


def baseline_summary(base: dict) -> dict:
    """The baseline's timings; the bootstrap total is extrapolated from a few rounds."""
    return {
        "method": "logistic regression on 2 dense rows per battle (Arena-Hard compute_mle_elo)",
        "fit_seconds": round(base["fit_seconds"], 3),
        "measured_bootstrap_rounds": base["measured_rounds"],
        "seconds_per_bootstrap_round": round(base["seconds_per_round"], 3),
        "fit_plus_bootstrap_seconds_extrapolated": round(
            base["fit_plus_bootstrap_seconds_extrapolated"], 1
        ),
        "peak_rss_mb_process": round(base["peak_rss_mb"], 1),
    }


def main() -> None:
    """Generate the battles, time both methods, compare, write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--battles", type=int, default=1_000_000)
    parser.add_argument("--models", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--baseline-rounds", type=int, default=3, help="at least 1")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    battles, true = synthetic_battles(args.battles, args.models, np.random.default_rng(args.seed))
    rss_data = peak_rss_mb()
    ours = run_ours(battles, args.rounds, args.seed + 1)
    measured = max(1, args.baseline_rounds)
    base = run_baseline(battles, args.rounds, measured, args.seed + 2)
    gap = float((ours["point"] - base["point"].reindex(ours["point"].index)).abs().max())
    extrapolated = base["fit_plus_bootstrap_seconds_extrapolated"]
    result = {
        "setup": setup_info(args, battles),
        "peak_rss_mb_after_data": round(rss_data, 1),
        "ours": ours_summary(ours, true),
        "baseline": baseline_summary(base),
        "point_ratings_max_abs_difference": gap,
        "point_ratings_agree_within_0.01": gap <= 0.01,
        "speedup_fit_plus_bootstrap_extrapolated": round(
            extrapolated / ours["fit_plus_bootstrap_seconds"], 1
        ),
        "target_under_10_seconds": ours["fit_plus_bootstrap_seconds"] < 10,
    }
    path = output_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))
    print(f"written to {path}")


if __name__ == "__main__":
    main()
