"""Pair two runs item by item and test every metric, overall and per slice.

Items pair by id; :func:`compare_runs` tests every metric overall and per slice: exact
McNemar and a paired bootstrap interval for binary outcomes, Wilcoxon signed-rank and a
paired bootstrap interval for scores, Holm and Benjamini–Hochberg adjusted p-values over one
comparison's tests, and the minimum detectable difference at that n. Items in only one run
and unscored items are counted, never paired. :func:`regressions` is the gate's rule.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence
from typing import Any, Literal, NamedTuple

import numpy as np
import pandas as pd
from scipy.special import ndtri

from evalbench import measured as measure
from evalbench.importers import OutcomeError, RunOutcomes
from evalbench.runs import read_manifest
from evalbench.stats import bootstrap_mean, mcnemar_exact

ErrorPolicy = Literal["as_study", "exclude"]


# ------------------------------------------------------------------------------ statistics


def rng_for(seed: int, *labels: Any) -> np.random.Generator:
    """A generator seeded by ``seed`` and ``labels`` (one stream per row: order-independent)."""
    words = [seed & 0xFFFFFFFF]
    words += [
        int.from_bytes(hashlib.sha256(str(x).encode()).digest()[:4], "little") for x in labels
    ]
    return np.random.default_rng(np.random.SeedSequence(words))


def holm(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values (family-wise error; Holm, 1979).

    Sorted ascending ``p_(1) <= ... <= p_(m)``: ``adj_(i) = max_{j<=i} min(1, (m-j+1) p_(j))``.
    NaN p-values (no test) are left out of the family and stay NaN.
    """
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    if ok.size:
        order = ok[np.argsort(p[ok], kind="stable")]
        m = order.size
        steps = np.minimum(1.0, (m - np.arange(m)) * p[order])
        out[order] = np.maximum.accumulate(steps)
    return out


def benjamini_hochberg(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Benjamini–Hochberg adjusted p-values (false discovery rate; BH, 1995).

    Sorted ascending: ``adj_(i) = min_{j>=i} min(1, m p_(j) / j)`` (as
    ``scipy.stats.false_discovery_control``). NaN p-values stay NaN, outside the family.
    """
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    if ok.size:
        order = ok[np.argsort(p[ok], kind="stable")]
        m = order.size
        scaled = np.minimum(1.0, m * p[order] / np.arange(1, m + 1))
        out[order] = np.minimum.accumulate(scaled[::-1])[::-1]
    return out


class SignedRank(NamedTuple):
    """A Wilcoxon signed-rank test."""

    statistic: float
    """The smaller of the positive and negative rank sums (scipy's two-sided statistic)."""
    p: float
    n: int
    """Non-zero differences (zeros are dropped: Wilcoxon's original zero method)."""
    method: str
    """``exact`` (n <= 50, no tied ranks), ``normal`` approximation, or ``none`` (n = 0)."""


def wilcoxon_signed_rank(differences: Sequence[float] | np.ndarray) -> SignedRank:
    """Two-sided Wilcoxon signed-rank test of paired differences (Wilcoxon, 1945).

    Zero differences are dropped (``zero_method="wilcox"``); the exact null distribution
    is used for up to 50 differences without tied ranks, else the normal approximation
    with the tie-corrected variance (``scipy.stats.wilcoxon``). No non-zero difference:
    no evidence of a difference, p = 1.
    """
    d = np.asarray(differences, dtype=float)
    d = d[~np.isnan(d) & (d != 0)]
    if d.size == 0:
        return SignedRank(0.0, 1.0, 0, "none")
    ties = np.unique(np.abs(d)).size < d.size
    method = "exact" if d.size <= 50 and not ties else "approx"
    from scipy import stats as sps  # here: importing scipy.stats costs ~0.5 s per process

    result = sps.wilcoxon(d, zero_method="wilcox", method=method)
    return SignedRank(
        float(result.statistic),
        float(result.pvalue),
        int(d.size),
        "exact" if method == "exact" else "normal",
    )


def _z(alpha: float, power: float) -> tuple[float, float]:
    return float(ndtri(1 - alpha / 2)), float(ndtri(power))


def mdd_paired_binary(
    n: int, discordant_rate: float, *, alpha: float = 0.05, power: float = 0.8
) -> float:
    """Smallest difference of two paired proportions a two-sided test at ``alpha`` detects
    with probability ``power`` on ``n`` items, given the share ψ of discordant items.

    Connor (1987), "Sample size for testing differences in proportions for the paired-sample
    design", Biometrics 43(1):207–211: ``n = [z_a √ψ + z_b √(ψ − δ²)]² / δ²`` with
    ``z_a = Φ⁻¹(1 − α/2)``, ``z_b = Φ⁻¹(power)``, solved for δ: the root of
    ``(n + z_b²) δ² − 2 z_a √(ψ n) δ + (z_a² − z_b²) ψ = 0``,
    ``δ = √ψ [z_a √n + z_b √(n + z_b² − z_a²)] / (n + z_b²)``.

    ψ is the observed discordant share, but at least δ: a difference δ needs at least a
    share δ of discordant items (all one way). When the root above exceeds the observed ψ
    (few discordant items, e.g. none), δ solves Connor's equation with ψ = δ,
    ``√(n δ) = z_a + z_b √(1 − δ)`` (by bisection) — the resolution when every discordant
    item goes one way, the most favourable case.

    Returns:
        δ; ``inf`` when no δ ≤ 1 is detectable (n < z_a², i.e. n <= 3 at 5%); NaN for n = 0.
    """
    psi = max(float(discordant_rate), 0.0)
    if n <= 0:
        return math.nan
    z_a, z_b = _z(alpha, power)
    inner = n + z_b * z_b - z_a * z_a
    if inner < 0:
        return math.inf
    delta = math.sqrt(psi) * (z_a * math.sqrt(n) + z_b * math.sqrt(inner)) / (n + z_b * z_b)
    if 0 < delta <= psi:
        return delta
    return _one_way_mdd(n, psi, z_a, z_b)


def _one_way_mdd(n: int, low: float, z_a: float, z_b: float) -> float:
    """The root of ``√(n δ) − z_a − z_b √(1 − δ)`` in [low, 1] (increasing in δ)."""

    def gap(d: float) -> float:
        return math.sqrt(n * d) - z_a - z_b * math.sqrt(max(0.0, 1.0 - d))

    if gap(1.0) < 0:
        return math.inf
    lo, hi = low, 1.0
    for _ in range(60):  # bisection: the interval halves each time (2^-60)
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if gap(mid) < 0 else (lo, mid)
    return hi


def mdd_paired_mean(n: int, sd: float, *, alpha: float = 0.05, power: float = 0.8) -> float:
    """Smallest mean paired difference detectable at ``alpha`` with ``power`` on ``n`` items
    whose differences have standard deviation ``sd`` (normal approximation of the paired
    test): ``(z_a + z_b) · sd / √n``; NaN for n < 2 or sd = 0 (every difference equal: the
    resolution is unknown)."""
    if n < 2 or not math.isfinite(sd) or sd == 0:
        return math.nan
    z_a, z_b = _z(alpha, power)
    return (z_a + z_b) * sd / math.sqrt(n)


# ------------------------------------------------------------------------------ pairing


class Pairing(NamedTuple):
    """Two systems' outcomes on the items both have, per metric."""

    paired: pd.DataFrame
    """``item_id, metric, kind, higher_is_better, value_a, value_b, state_a, state_b`` and
    the slice columns (the baseline's slice values)."""
    counts: pd.DataFrame
    """Per metric: ``paired``, ``only_a``, ``only_b``, ``unscored`` (an item both have but
    one side has no value), ``excluded_errors`` (``errors="exclude"``)."""


def pair_outcomes(
    a: pd.DataFrame,
    b: pd.DataFrame,
    system_a: str,
    system_b: str,
    *,
    slices: Sequence[str] = (),
    errors: ErrorPolicy = "as_study",
) -> Pairing:
    """Pair ``system_a`` in outcome frame ``a`` with ``system_b`` in ``b`` by item id.

    Items present in only one frame, items without a value on one side (unscored) and — with
    ``errors="exclude"`` — items whose call failed on either side are counted, never paired.
    """
    left = a[a["system"] == system_a]
    right = b[b["system"] == system_b]
    keep = ["item_id", "metric", "value", "state"]
    merged = left[[*keep, "kind", "higher_is_better", *slices]].merge(
        right[keep],
        on=["item_id", "metric"],
        how="outer",
        suffixes=("_a", "_b"),
        indicator=True,
    )
    if len(merged):
        meta = pd.concat([left, right]).drop_duplicates("metric").set_index("metric")
        merged["kind"] = merged["metric"].map(meta["kind"])
        merged["higher_is_better"] = merged["metric"].map(meta["higher_is_better"]).astype(bool)
    both = merged["_merge"] == "both"
    valued = both & merged["value_a"].notna() & merged["value_b"].notna()
    failed = (merged["state_a"] == "error") | (merged["state_b"] == "error")
    dropped = valued & failed if errors == "exclude" else valued & False
    rows = []
    for metric, part in merged.groupby("metric", sort=False):
        idx = part.index
        rows.append(
            {
                "metric": metric,
                "paired": int((valued & ~dropped)[idx].sum()),
                "only_a": int((part["_merge"] == "left_only").sum()),
                "only_b": int((part["_merge"] == "right_only").sum()),
                "unscored": int((both & ~valued)[idx].sum()),
                "excluded_errors": int(dropped[idx].sum()),
            }
        )
    order = {m: i for i, m in enumerate(dict.fromkeys([*left["metric"], *right["metric"]]))}
    paired = merged[valued & ~dropped].drop(columns="_merge")
    paired = paired.sort_values("metric", key=lambda s: s.map(order), kind="stable")
    counts = pd.DataFrame(
        rows, columns=["metric", "paired", "only_a", "only_b", "unscored", "excluded_errors"]
    )
    counts = counts.sort_values("metric", key=lambda s: s.map(order), kind="stable")
    return Pairing(paired.reset_index(drop=True), counts.reset_index(drop=True))


TEST_COLUMNS = [
    "metric",
    "kind",
    "higher_is_better",
    "slice",
    "slice_value",
    "n",
    "mean_a",
    "mean_b",
    "difference",
    "low",
    "high",
    "test",
    "p",
    "discordant_a",
    "discordant_b",
    "errors_a",
    "errors_b",
    "mdd",
]


def paired_tests(
    paired: pd.DataFrame,
    *,
    slices: Sequence[str] = (),
    seed: int = 0,
    rounds: int = 1000,
    level: float = 0.95,
    alpha: float = 0.05,
    power: float = 0.8,
    label: str = "",
) -> pd.DataFrame:
    """Every metric of a :class:`Pairing`, over all paired items and per slice value.

    ``difference = mean_b − mean_a`` with a paired percentile bootstrap interval (items
    resampled, each keeping both outcomes; ``rounds=0`` skips it). Binary metrics: exact
    McNemar on the discordant items (``discordant_a`` = right only in A). Scores: Wilcoxon
    signed-rank. ``mdd``: the minimum detectable difference at this n (80% power, 5% level by
    default; :func:`mdd_paired_binary` from the discordant rate, :func:`mdd_paired_mean`
    from the SD of the differences).
    """
    rows = []
    for metric, part in paired.groupby("metric", sort=False):
        groups: list[tuple[str, str, pd.DataFrame]] = [("all", "all", part)]
        for name in slices:
            groups += [(name, str(v), g) for v, g in part.groupby(name, sort=True)]
        for slice_name, value, group in groups:
            rng = rng_for(seed, label, metric, slice_name, value)
            cells = _test_cells(group, rng, rounds, level, alpha, power)
            rows.append(
                {
                    "metric": metric,
                    "kind": part["kind"].iloc[0],
                    "higher_is_better": bool(part["higher_is_better"].iloc[0]),
                    "slice": slice_name,
                    "slice_value": value,
                    **cells,
                }
            )
    return pd.DataFrame(rows, columns=TEST_COLUMNS)


def _test_cells(
    group: pd.DataFrame,
    rng: np.random.Generator,
    rounds: int,
    level: float,
    alpha: float,
    power: float,
) -> dict[str, Any]:
    a, b = group["value_a"].to_numpy(float), group["value_b"].to_numpy(float)
    n, d = a.size, b - a
    if rounds:
        interval = bootstrap_mean(d, rng=rng, rounds=rounds, level=level)
        low, high = interval.low, interval.high
    else:
        low = high = math.nan
    cells = {
        "n": n,
        "mean_a": a.mean() if n else math.nan,
        "mean_b": b.mean() if n else math.nan,
        "difference": d.mean() if n else math.nan,
        "low": low,
        "high": high,
        "errors_a": int((group["state_a"] == "error").sum()),
        "errors_b": int((group["state_b"] == "error").sum()),
    }
    if group["kind"].iloc[0] == "binary":
        only_a, only_b = int(((a == 1) & (b == 0)).sum()), int(((a == 0) & (b == 1)).sum())
        mdd = mdd_paired_binary(n, (only_a + only_b) / n if n else 0.0, alpha=alpha, power=power)
        return cells | {
            "test": "McNemar exact",
            "p": mcnemar_exact(only_a, only_b),
            "discordant_a": only_a,
            "discordant_b": only_b,
            "mdd": mdd,
        }
    signed = wilcoxon_signed_rank(d)
    sd = float(np.std(d, ddof=1)) if n > 1 else math.nan
    return cells | {
        "test": f"Wilcoxon signed-rank ({signed.method})",
        "p": signed.p,
        "discordant_a": int((d < 0).sum()),
        "discordant_b": int((d > 0).sum()),
        "mdd": mdd_paired_mean(n, sd, alpha=alpha, power=power),
    }


# ------------------------------------------------------------------------------ comparing runs


class SystemPair(NamedTuple):
    """A system in the baseline run and the system it is compared with in the candidate."""

    baseline: str
    candidate: str


def repeated_pair(named: Sequence[Sequence[str]]) -> tuple[str, str] | None:
    """The first system pair named twice, if any: its tests would join the Holm family twice
    (five repeats turned a gate's exit 1, Holm p = 0.017, into "no regression")."""
    seen: set[tuple[str, str]] = set()
    for x, y in named:
        if (pair := (str(x), str(y))) in seen:
            return pair
        seen.add(pair)
    return None


def system_pairs(
    a: RunOutcomes, b: RunOutcomes, named: Sequence[Sequence[str]] = ()
) -> tuple[list[SystemPair], list[str]]:
    """Which systems to compare: the ``named`` pairs, else every system name both runs have,
    else (one system in each) that pair. Returns the pairs and notes on what was left out.

    Raises:
        OutcomeError: a named system is missing from its run, or nothing can be paired.
    """
    if named:
        pairs = [SystemPair(str(x), str(y)) for x, y in named]
        for pair in pairs:
            for system, run in ((pair.baseline, a), (pair.candidate, b)):
                if system not in run.systems:
                    raise OutcomeError(f"{run.label}: no system {system!r} (has {run.systems})")
        return pairs, []
    common = [s for s in a.systems if s in set(b.systems)]
    notes = [
        f"{run.label}: {s} is not in the other run"
        for run, other in ((a, b), (b, a))
        for s in run.systems
        if s not in set(other.systems)
    ]
    if common:
        return [SystemPair(s, s) for s in common], notes
    if len(a.systems) == 1 and len(b.systems) == 1:
        note = f"one system in each run: {a.systems[0]} (A) vs {b.systems[0]} (B)"
        return [SystemPair(a.systems[0], b.systems[0])], [note]
    raise OutcomeError(
        f"{a.label} and {b.label} share no system name ({a.systems} vs {b.systems}); "
        "name the pairs to compare (--pair A_SYSTEM B_SYSTEM)"
    )


class Comparison(NamedTuple):
    """Every test of one or more candidate runs against a baseline run."""

    tests: pd.DataFrame
    """:data:`TEST_COLUMNS` with ``baseline, candidate, system_a, system_b`` in front and
    ``p_holm, p_bh`` (adjusted over each candidate's tests) and ``improvement`` (the
    difference in the better direction) after."""
    pairing: pd.DataFrame
    """Per candidate, system pair and metric: paired, only_a, only_b, unscored,
    excluded_errors."""
    notes: list[str]
    unmeasured: tuple[str, ...] = ()
    """The system pairs left out because one side measured nothing (:func:`unmeasured`),
    one line each (also in ``notes``): nothing to decide on, never a drop to 0."""


MEASURED_STATES = ("ok", "no_answer", "limit")
"""Outcome states that measured the system (a failed call or an unscored item did not)."""
_STATE_WORDS = {"error": "failed call", "unscored": "unscored"}


def unmeasured(run: RunOutcomes) -> dict[str, str]:
    """The systems of ``run`` that have numbers but measured nothing, each with why (``0 of
    32 items scored — failed call × 32``): every outcome with a value is a failed call (GAIA's
    official accuracy counts one wrong: 0 would be a number measured on nothing), or the
    run's manifest says the system scored nothing (its ``measured`` rows: e.g. a BFCL model
    that never called a function, whose records are ordinary wrong answers). A system with
    no value at all gives no number anyway (it pairs nothing: :func:`gate_blockers`).
    """
    frame = run.outcomes.drop_duplicates(["system", "item_id"])
    valued = frame["value"].notna()
    counted = valued & frame["state"].isin(MEASURED_STATES)
    flags = pd.DataFrame({"valued": valued, "counted": counted})
    anywhere = flags.groupby(frame["system"]).transform("any")  # per system, on every row
    out = {m.system: _why(m) for m in _measured_rows(run) if not m.scored}  # the study's words
    for system, part in frame[anywhere["valued"] & ~anywhere["counted"]].groupby("system"):
        states = [_STATE_WORDS.get(str(s), str(s).replace("_", " ")) for s in part["state"]]
        out.setdefault(str(system), _why(measure.measured(str(system), states, "item")))
    return {system: why for system, why in out.items() if system in set(frame["system"])}


def _why(row: measure.Measured) -> str:
    return measure.why(measure.no_result_text([row]))


def _measured_rows(run: RunOutcomes) -> list[measure.Measured]:
    """The ``measured`` rows of an evalbench run's manifest (none for other harnesses' logs)."""
    if run.source != "evalbench":
        return []
    try:
        return measure.from_rows(read_manifest(run.path).get("measured"))
    except (OSError, ValueError):
        return []


def check_comparable(runs: Sequence[RunOutcomes]) -> None:
    """Items pair only between runs of the same benchmark whose item ids name the same items.

    Raises:
        OutcomeError: naming the two runs or the run whose items do not pair.
    """
    first = runs[0]
    for run in runs:
        if not run.pairable:
            raise OutcomeError(
                f"{run.label}: items of a {run.benchmark} run do not pair with another run's "
                "(its items are generated afresh each run); compare their summaries instead"
            )
        if run.benchmark != first.benchmark:
            raise OutcomeError(
                f"{run.label} is a {run.benchmark} run, {first.label} a {first.benchmark} "
                "run: items pair only within one benchmark"
            )


def compare_runs(
    runs: Sequence[RunOutcomes],
    *,
    pairs: Sequence[Sequence[str]] = (),
    metrics: Iterable[str] | None = None,
    errors: ErrorPolicy = "as_study",
    seed: int = 0,
    rounds: int = 1000,
    level: float = 0.95,
    alpha: float = 0.05,
    power: float = 0.8,
) -> Comparison:
    """Compare every later run with the first (the baseline), system by system.

    The family for Holm and Benjamini–Hochberg is one candidate's comparison with the
    baseline: every system pair, metric and slice (overall included).

    Raises:
        OutcomeError: fewer than two runs, runs of different benchmarks, unpairable items,
            systems that cannot be paired, a metric asked for that neither run has, an
            infinite outcome, or a candidate that paired no item at all (nothing compared).
    """
    if len(runs) < 2:
        raise OutcomeError("compare needs at least two runs (the first is the baseline)")
    check_comparable(runs)
    for run in runs:
        if not len(run.outcomes):
            raise OutcomeError(f"{run.label}: no outcomes (its records hold no item): nothing "
                               "to compare")  # fmt: skip
        check_finite(run)
    wanted = set(metrics) if metrics else None
    tests, pairing, notes, skipped = [], [], [], []
    base = runs[0]
    slices = [s for s in base.slices if all(s in r.slices for r in runs)]
    empty_a = unmeasured(base)
    for run in runs[1:]:
        found, more = system_pairs(base, run, pairs)
        check_metrics(base, run, wanted)
        notes += more
        frames = []
        empty_b = unmeasured(run)
        empty = [(p, note) for p in found if (note := _empty(p, base, run, empty_a, empty_b))]
        if len(empty) == len(found):
            raise OutcomeError(f"{run.label} vs {base.label}: nothing compared: "
                               + "; ".join(note for _, note in empty))  # fmt: skip
        skipped += [f"{run.label} vs {base.label}, {note}" for _, note in empty]
        for pair in [p for p in found if p not in dict(empty)]:
            made = pair_outcomes(
                base.outcomes,
                run.outcomes,
                pair.baseline,
                pair.candidate,
                slices=slices,
                errors=errors,
            )
            if wanted is not None:
                made = Pairing(
                    made.paired[made.paired["metric"].isin(wanted)].reset_index(drop=True),
                    made.counts[made.counts["metric"].isin(wanted)].reset_index(drop=True),
                )
            paired = made.paired
            head = {
                "baseline": base.label,
                "candidate": run.label,
                "system_a": pair.baseline,
                "system_b": pair.candidate,
            }
            label = f"{_identity(run)}|{pair.baseline}|{pair.candidate}"
            frames.append(
                paired_tests(
                    paired,
                    slices=slices,
                    seed=seed,
                    rounds=rounds,
                    level=level,
                    alpha=alpha,
                    power=power,
                    label=label,
                ).assign(**head)
            )
            pairing.append(made.counts.assign(**head))
        if not sum(int(f["n"].sum()) for f in frames):
            raise OutcomeError(nothing_compared(base, run, found, wanted))
        tests.append(_adjust(pd.concat(frames, ignore_index=True)))
    front = ["baseline", "candidate", "system_a", "system_b"]
    table = pd.concat(tests, ignore_index=True)
    table = table[[*front, *TEST_COLUMNS, "p_holm", "p_bh", "improvement"]]
    counts = pd.concat(pairing, ignore_index=True)
    return Comparison(table, counts[[*front, *counts.columns.drop(front)]], notes + skipped,
                      tuple(skipped))  # fmt: skip


def _empty(
    pair: SystemPair, a: RunOutcomes, b: RunOutcomes, empty_a: dict[str, str],
    empty_b: dict[str, str],
) -> str:  # fmt: skip
    """Why ``pair`` is not compared (a side that measured nothing: :func:`unmeasured`), or ""."""
    system = pair.baseline if pair.baseline == pair.candidate else "->".join(pair)
    for name, run, empty in ((pair.baseline, a, empty_a), (pair.candidate, b, empty_b)):
        if name in empty:
            return f"{system}: nothing measured in {run.label} ({empty[name]}): not compared"
    return ""


def check_finite(run: RunOutcomes) -> None:
    """Refuse ±inf outcomes (NaN is "no value": unscored, counted apart).

    Raises:
        OutcomeError: naming the run, the first such item and its metric.
    """
    values = run.outcomes["value"].to_numpy(float)
    bad = np.flatnonzero(np.isinf(values))
    if bad.size:
        row = run.outcomes.iloc[bad[0]]
        raise OutcomeError(
            f"{run.label}: item {row['item_id']!r} {row['metric']} = {row['value']}: not a "
            "finite number (a mean over it has no meaning)"
        )


def check_metrics(a: RunOutcomes, b: RunOutcomes, wanted: set[str] | None) -> None:
    """Every metric asked for exists in one of the two runs (a typo compares nothing).

    Raises:
        OutcomeError: naming the first metric neither run has.
    """
    have = list(dict.fromkeys([*a.outcomes["metric"], *b.outcomes["metric"]]))
    missing = sorted((wanted or set()) - set(have))
    if missing:
        raise OutcomeError(
            f"metric {missing[0]!r}: not in {a.label} or {b.label} (they have: {', '.join(have)})"
        )


def nothing_compared(
    a: RunOutcomes, b: RunOutcomes, pairs: Sequence[SystemPair], wanted: set[str] | None
) -> str:
    """Why a candidate paired no item at all: no shared item id, or none valued on both sides."""

    def ids(run: RunOutcomes, systems: set[str]) -> set[str]:
        frame = run.outcomes[run.outcomes["system"].isin(systems)]
        if wanted is not None:
            frame = frame[frame["metric"].isin(wanted)]
        return set(frame["item_id"])

    ids_a = ids(a, {p.baseline for p in pairs})
    ids_b = ids(b, {p.candidate for p in pairs})
    head = f"{b.label} vs {a.label}: nothing compared: "
    if ids_a & ids_b:
        return head + (
            f"{len(ids_a & ids_b)} items in both runs, none with a value in both (unscored on "
            "one side)"
        )
    return head + (
        f"the runs share no item id ({a.label}: {_some(ids_a)}; {b.label}: {_some(ids_b)})"
    )


def _some(ids: set[str]) -> str:
    return f"{len(ids)} items, e.g. {min(ids)!r}" if ids else "no items"


def unfinished(run: RunOutcomes) -> str:
    """Why ``run`` may hold partial records ("" when it finished)."""
    if run.finished:
        return ""
    return (
        f"{run.label}: status {run.meta.get('status')} (not finished: its records may be partial)"
    )


def gate_blockers(comparison: Comparison, runs: Sequence[RunOutcomes] = ()) -> list[str]:
    """Why the regression gate cannot pass, one line each: a compared run that did not
    finish, a metric of a system pair that paired no item, or a test whose numbers are not
    finite (e.g. a mean that overflowed). The gate never says "no regression" over these."""
    lines = [f"{why}; the gate compares finished runs" for r in runs if (why := unfinished(r))]
    lines += [f"{line}; the gate cannot decide on it" for line in comparison.unmeasured]
    for row in comparison.pairing[comparison.pairing["paired"] == 0].itertuples():
        lines.append(
            f"{_pair_name(row)}: the gate compared nothing: 0 paired items (only in A "
            f"{row.only_a}, only in B {row.only_b}, unscored {row.unscored}); it cannot pass "
            "(restrict with --metric/--pair or fix the runs)"
        )
    tests = comparison.tests
    numbers = tests[["mean_a", "mean_b", "difference"]].to_numpy(float)
    for row in tests[~np.isfinite(numbers).all(axis=1)].itertuples():
        lines.append(
            f"{_pair_name(row)}: the compared numbers are not finite (mean A {row.mean_a:.3f}, "
            f"mean B {row.mean_b:.3f}, change {row.difference:+.3f}); the gate cannot pass"
        )
    return lines


def _identity(run: RunOutcomes) -> str:
    """What seeds a run's bootstrap streams: its study kind and run id (its params' hash), not
    where its folder is (a copy, a Ray worker's) nor its params file's name (a sweep cell is
    shared by every sweep file that has it, and keeps the name of the first), so the same
    runs give the same intervals anywhere."""
    run_id = run.meta.get("run_id")
    return f"{run.benchmark}/{run_id}" if run_id else run.label


def left_out(comparison: Comparison) -> list[str]:
    """One line per system pair and metric that left items out of its tests: items in one
    run only, items unscored in either, failed calls excluded (``--errors exclude``)."""
    lines = []
    for row in comparison.pairing.itertuples():
        counts = [(row.only_a, "only in A"), (row.only_b, "only in B"), (row.unscored,
                  "unscored"), (row.excluded_errors, "failed calls excluded")]  # fmt: skip
        if parts := [f"{int(n)} {what}" for n, what in counts if n]:
            paired = f"{int(row.paired)} paired item{'s' * (row.paired != 1)}"
            lines.append(f"{_pair_name(row)}: {paired}; left out: {', '.join(parts)}")
    return lines


def _pair_name(row: Any) -> str:
    system = row.system_a if row.system_a == row.system_b else f"{row.system_a}->{row.system_b}"
    return f"{row.candidate} vs {row.baseline}, {system} {row.metric}"


def _adjust(tests: pd.DataFrame) -> pd.DataFrame:
    tests = tests.copy()
    tests["p_holm"] = holm(tests["p"].to_numpy(float))
    tests["p_bh"] = benjamini_hochberg(tests["p"].to_numpy(float))
    sign = np.where(tests["higher_is_better"].astype(bool), 1.0, -1.0)
    tests["improvement"] = sign * tests["difference"].to_numpy(float)
    return tests


def regressions(tests: pd.DataFrame, *, min_drop: float = 0.0, alpha: float = 0.05) -> pd.DataFrame:
    """The tests where the candidate got significantly worse: Holm-adjusted p below
    ``alpha`` and a drop (in the metric's better direction) larger than ``min_drop``."""
    worse = (tests["p_holm"] < alpha) & (tests["improvement"] < -min_drop)
    return tests[worse].reset_index(drop=True)


def regression_line(row: Any) -> str:
    """One line per regression, for a terminal or a CI log."""
    where = "overall" if row.slice == "all" else f"{row.slice}={row.slice_value}"
    system = row.system_a if row.system_a == row.system_b else f"{row.system_a}->{row.system_b}"
    return (
        f"REGRESSION {row.candidate} vs {row.baseline}: {system} {row.metric} {where}: "
        f"{row.mean_a:.3f} -> {row.mean_b:.3f} ({row.difference:+.3f}, interval "
        f"{row.low:+.3f} to {row.high:+.3f}; {row.test} p={row.p:.3g}, Holm p={row.p_holm:.3g}; "
        f"n={row.n})"
    )
