"""Compare sentences with numbers, captions, display tables and the index headlines.

Every function takes the study's :class:`~evalbench.compare.study.CompareResult` and returns
escaped HTML (:func:`evalbench.display.fill`) or a table/caption the display helpers escape.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from evalbench import display
from evalbench.findings import Findings, percent, signed
from evalbench.history import gate_blockers

from . import metrics
from .records import CompareResult

MDD_FORMULA = (
    "minimum detectable difference (MDD): the smallest true change a two-sided test at "
    "{alpha:g} would detect with {power:.0%} power at this n. Binary outcomes: Connor (1987, "
    "Biometrics 43:207–211), n = [z_a √ψ + z_b √(ψ − δ²)]² / δ² solved for δ, with ψ the "
    "observed share of discordant items, but at least δ (a change δ needs that many "
    "discordant items); scores: (z_a + z_b)·sd(differences)/√n. 'inf' = no change is "
    "detectable at this n, '—' = unknown (no spread of the differences). Computed for one "
    "test: after Holm over many rows the resolution is coarser."
)


def headlines(result: CompareResult) -> dict[str, Any]:
    """Index headlines: regressions, significant improvements, the largest overall change."""
    tests = result.comparison.tests
    improved = int((tests["verdict"] == "improvement").sum())
    heads: dict[str, Any] = {
        "regressions (Holm)": len(result.regressions),
        "improvements (Holm)": improved,
    }
    top = metrics.overall(tests).dropna(subset=["improvement"])
    if len(top):
        row = top.loc[top["improvement"].abs().idxmax()]
        names = dict(zip([r.label for r in result.runs], result.labels, strict=True))
        heads["largest overall change"] = (
            f"{row['system_b']} {row['metric']} {row['difference']:+.3f} "
            f"({names.get(row['candidate'], row['candidate'])} vs {result.labels[0]})"
        )
    return heads


SIMULATORS = {
    "evalbench": "evalbench's offline sim provider",
    "inspect_ai": "inspect_ai's mockllm model (canned outputs)",
    "lm_eval": "lm-evaluation-harness's dummy model (random answers)",
}
"""What produced a simulated system, by the harness whose run it is."""


def simulated_notice(result: CompareResult) -> str:
    """A banner naming the simulated systems of the compared runs and what produced each
    ("" when none)."""
    made: dict[tuple[str, str], list[str]] = {}
    for label, run in zip(result.labels, result.runs, strict=True):
        for name in sorted(run.simulated):
            made.setdefault((name, SIMULATORS.get(run.source, run.source)), []).append(label)
    if not made:
        return ""
    parts = "; ".join(f"{name} ({', '.join(runs)}): {by}" for (name, by), runs in made.items())
    return display.banner(
        f"SIMULATED — not real models: {parts}. The comparison shows the method, not real models."
    )


def created_note(result: CompareResult) -> str:
    """Which input runs this study rendered first ("" when none)."""
    if not result.created:
        return ""
    return display.fill(
        "<p>Rendered first (they had not been run): {runs}.</p>", runs="; ".join(result.created)
    )


def key_result(result: CompareResult) -> str:
    """For each candidate and system pair: the overall change of the headline metric, its
    interval, test and verdict, and the resolution at this n."""
    params = result.params
    rows = metrics.overall(result.comparison.tests)
    first = rows.drop_duplicates(["candidate", "system_a", "system_b"])
    parts = [_key_sentence(row, result) for row in first.itertuples()]
    head = display.fill(
        "<p><b>Key result.</b> Paired by item, {level:.0%} paired bootstrap intervals, "
        "Holm-adjusted p over each candidate's {k} tests; verdicts at {alpha:g}.</p>",
        level=params.confidence_level,
        alpha=params.alpha,
        k=int((result.comparison.tests["candidate"] == rows["candidate"].iloc[0]).sum())
        if len(rows)
        else 0,
    )
    return head + "<ul>" + "".join(parts) + "</ul>"


VERDICT_WORDS = {
    "improvement": "a real improvement",
    "regression": "a real regression",
    "no significant change": "no change beyond chance",
}
"""Each verdict in plain words."""


def findings(result: CompareResult) -> Findings:
    """What the comparison found (the report's opening, the summary's key result): each
    system's headline metric before and after, the change in words with its interval and
    whether it is beyond chance; caveats: what "no change" can and cannot say at this n,
    simulated runs; regressions as risks."""
    rows = metrics.overall(result.comparison.tests)
    first = rows.drop_duplicates(["candidate", "system_a", "system_b"])
    names = dict(zip([r.label for r in result.runs], result.labels, strict=True))
    by_pair: dict[tuple[str, str], list[str]] = {}
    for row in first.itertuples():
        pair = (names.get(row.candidate, row.candidate), names.get(row.baseline, row.baseline))
        by_pair.setdefault(pair, []).append(_change_words(row))
    key = " ".join(
        display.fill("{c} vs {b}, item by item: ", c=c, b=b) + "; ".join(parts) + "."
        for (c, b), parts in by_pair.items()
    )
    caveats = [_no_change_caveat(first), _simulated_caveat(result)]
    risks = [_regression_risk(r) for r in first.itertuples() if r.verdict == "regression"]
    return Findings(
        key or "No system was compared.",
        tuple(c for c in caveats if c),
        tuple(risks),
        detail=key_result(result),
    )


def _value(value: float, kind: str) -> str:
    return percent(value) if kind == "binary" else f"{value:.2f}"


def _change(value: float, kind: str) -> str:
    return signed(value) if kind == "binary" else f"{value:+.2f}"


def _change_words(row: Any) -> str:
    system = row.system_a if row.system_a == row.system_b else f"{row.system_a} → {row.system_b}"
    before, after = _value(row.mean_a, row.kind), _value(row.mean_b, row.kind)
    moved = f"stayed at {before}" if row.difference == 0 else f"went from {before} to {after}"
    return display.fill(
        "{s} {m} {moved} ({d}{u}, likely between {lo} and {hi}): {v}",
        s=system,
        m=row.metric,
        moved=moved,
        d=_change(row.difference, row.kind),
        u=" points" if row.kind == "binary" else "",
        lo=_change(row.low, row.kind),
        hi=_change(row.high, row.kind),
        v=VERDICT_WORDS.get(row.verdict, row.verdict),
    )


def _no_change_caveat(rows: pd.DataFrame) -> str:
    same = rows[rows["verdict"] == "no significant change"]
    if not len(same):
        return ""
    n = int(same["n"].max())
    each = "; ".join(
        display.fill("{s} {mdd}", s=r.system_b, mdd=_mdd(r.mdd)) for r in same.itertuples()
    )
    return (
        display.fill(
            "“No change” is not proof of none: with {n} paired items, changes smaller than "
            "these were unlikely to be seen: ",
            n=n,
        )
        + each
        + "."
    )


def _simulated_caveat(result: CompareResult) -> str:
    if not any(run.simulated for run in result.runs):
        return ""
    return "The compared runs are simulated: the comparison shows the method, not real models."


def _regression_risk(row: Any) -> str:
    return display.fill(
        "<b>{s} got worse</b>: {m} from {a} to {b} on {n} paired items, beyond chance.",
        s=row.system_b,
        m=row.metric,
        a=_value(row.mean_a, row.kind),
        b=_value(row.mean_b, row.kind),
        n=int(row.n),
    )


def _key_sentence(row: Any, result: CompareResult) -> str:
    names = dict(zip([r.label for r in result.runs], result.labels, strict=True))
    system = row.system_a if row.system_a == row.system_b else f"{row.system_a} → {row.system_b}"
    text = display.fill(
        "<li><b>{cand}</b> vs <b>{base}</b>, {system} {metric} ({direction}): {a:.3f} → {b:.3f}, "
        "change {d:+.3f} [{lo:+.3f}, {hi:+.3f}] on {n} paired items; {test} p = {p:.3g}, "
        "Holm p = {ph:.3g}: <b>{verdict}</b>",
        cand=names.get(row.candidate, row.candidate),
        base=names.get(row.baseline, row.baseline),
        system=system,
        metric=row.metric,
        direction="higher is better" if row.higher_is_better else "lower is better",
        a=row.mean_a,
        b=row.mean_b,
        d=row.difference,
        lo=row.low,
        hi=row.high,
        n=row.n,
        test=row.test,
        p=row.p,
        ph=row.p_holm,
        verdict=row.verdict,
    )
    if row.verdict == "no significant change":
        text += display.fill(
            "; changes smaller than {mdd} were unlikely to be seen at this n", mdd=_mdd(row.mdd)
        )
    return text + ".</li>"


def _mdd(value: float) -> str:
    if math.isnan(value):
        return "— (unknown)"
    return "any (none detectable)" if math.isinf(value) else f"{value:.3f}"


def runs_caption(result: CompareResult) -> str:
    """Caption of the runs table."""
    return (
        f"The compared runs: {result.labels[0]} is the baseline, every other run is compared "
        "with it. commit = code revision (dirty: uncommitted changes); params_hash names the "
        "run folder."
    )


def summaries_table(result: CompareResult) -> pd.DataFrame:
    """Each run's per-system numbers over all its items, estimate and interval folded."""
    table = result.summaries.rename(columns={"low": "estimate_low", "high": "estimate_high"})
    table = display.fold_intervals(table, ["estimate"])
    return table.drop(columns=["kind", "higher_is_better"])


def summaries_caption(result: CompareResult) -> str:
    """Caption of :func:`summaries_table`."""
    level = result.params.confidence_level
    return (
        f"Every run on its own (all its items, unpaired): estimate [{level:.0%} interval: "
        "Wilson for binary metrics, bootstrap for scores]; n = items with a value, unscored = "
        "items without one, errors = failed calls, measured = items with a value that are not "
        "failed calls (none: no result, whatever the study counts a failed call as)"
    )


def pairing_table(result: CompareResult) -> pd.DataFrame:
    """Pairing counts with the runs' short labels."""
    return _labelled(result, result.comparison.pairing)


def pairing_sentence(result: CompareResult) -> str:
    """Items that did not pair, counted (never silently dropped)."""
    pairing = result.comparison.pairing
    only = int((pairing["only_a"] + pairing["only_b"]).sum())
    unscored = int(pairing["unscored"].sum())
    excluded = int(pairing["excluded_errors"].sum())
    text = display.fill(
        "<p>{paired} (item, metric) pairs; {only} outcomes of items present in only one run "
        "and {unscored} of items without a value on one side (unscored) are left out of the "
        "tests and counted here",
        paired=int(pairing["paired"].sum()),
        only=only,
        unscored=unscored,
    )
    if result.params.errors == "exclude":
        text += display.fill(
            "; {k} pairs with a failed call on either side were excluded", k=excluded
        )
    else:
        text += "; failed calls count as their study counts them (e.g. wrong for GAIA)"
    notes = "".join(f"<li>{display.escape(n)}</li>" for n in _notes(result))
    return text + ".</p>" + (f"<ul>{notes}</ul>" if notes else "")


def _notes(result: CompareResult) -> list[str]:
    notes = list(result.comparison.notes)
    for label, run in zip(result.labels, result.runs, strict=True):
        notes += [f"{label}: {n}" for n in run.notes]
    return notes


def tests_table(tests: pd.DataFrame, result: CompareResult) -> pd.DataFrame:
    """A comparison table for display: labels, folded interval, p-values, MDD, verdict."""
    shown = _labelled(result, tests).rename(
        columns={"difference": "change", "low": "change_low", "high": "change_high"}
    )
    shown = display.fold_intervals(shown, ["change"])
    shown["mdd"] = [_mdd(v) for v in shown["mdd"]]
    for column in ("p", "p_holm", "p_bh"):
        shown[column] = [_p(v) for v in shown[column]]
    keep = [
        "candidate",
        "system_b",
        "metric",
        "slice",
        "slice_value",
        "n",
        "mean_a",
        "mean_b",
        "change",
        "test",
        "p",
        "p_holm",
        "p_bh",
        "mdd",
        "errors_a",
        "errors_b",
        "verdict",
    ]
    return shown[keep].rename(columns={"system_b": "system", "slice_value": "value"})


def _p(value: float) -> str:
    if math.isnan(value):
        return "—"
    return f"{value:.3f}" if value >= 0.001 else f"{value:.1e}"


def _labelled(result: CompareResult, frame: pd.DataFrame) -> pd.DataFrame:
    names = dict(zip([r.label for r in result.runs], result.labels, strict=True))
    out = frame.copy()
    for column in ("baseline", "candidate"):
        out[column] = [names.get(v, v) for v in out[column]]
    return out


def forest_frame(result: CompareResult, tests: pd.DataFrame) -> pd.DataFrame:
    """Rows for a forest plot of changes: ``label`` (candidate, system, metric, slice),
    ``difference``, ``low``, ``high``."""
    shown = _labelled(result, tests)
    where = [
        "" if s == "all" else f" [{v}]"
        for s, v in zip(shown["slice"], shown["slice_value"], strict=True)
    ]
    shown["label"] = [
        f"{c}: {sys} {m}{w}"
        for c, sys, m, w in zip(
            shown["candidate"], shown["system_b"], shown["metric"], where, strict=True
        )
    ]
    return shown[["label", "difference", "low", "high"]]


def forest_title(result: CompareResult) -> str:
    """Title of the forest plot of changes."""
    return (
        f"Change vs {result.labels[0]} (B − A), {result.params.confidence_level:.0%} paired "
        "bootstrap intervals"
    )


def tests_caption(result: CompareResult, scope: str) -> str:
    """Caption of a :func:`tests_table` (``scope``: overall / per slice)."""
    p = result.params
    return (
        f"{scope}: mean_a / mean_b over the paired items, change = B − A [{p.confidence_level:.0%}"
        " paired bootstrap interval]; p from the exact McNemar test (binary) or the Wilcoxon "
        "signed-rank test (scores); p_holm (family-wise) and p_bh (false discovery rate) are "
        "adjusted over all rows of the candidate; mdd = minimum detectable difference (below)"
    )


def mdd_note(result: CompareResult) -> str:
    """How the minimum detectable difference is computed (with the study's level and power)."""
    p = result.params
    return (
        "<p><small>"
        + display.escape(MDD_FORMULA.format(alpha=p.alpha, power=p.power))
        + "</small></p>"
    )


def regressions_sentence(result: CompareResult) -> str:
    """The gate's verdict: every regression in one line, or none."""
    params = result.params
    rule = display.fill(
        "A regression: Holm-adjusted p below {alpha:g} and a drop (in the metric's better "
        "direction) larger than {drop:g}. ",
        alpha=params.alpha,
        drop=params.min_drop,
    )
    blockers = gate_blockers(result.comparison, result.runs)
    if blockers:
        lines = "".join(f"<li>{display.escape(line)}</li>" for line in blockers)
        return (
            "<p>"
            + rule
            + "<b>The gate cannot decide</b>: <code>evalbench compare --fail-on-regression"
            f"</code> would exit 2:</p><ul>{lines}</ul>"
        )
    if not len(result.regressions):
        return (
            "<p>"
            + rule
            + "<b>No regression</b>: <code>evalbench compare --fail-on-regression</code> "
            "would exit 0.</p>"
        )
    lines = "".join(
        display.fill(
            "<li>{system} {metric} {where}: {a:.3f} → {b:.3f} ({d:+.3f}, Holm p = {p:.3g})</li>",
            system=r.system_b,
            metric=r.metric,
            where="overall" if r.slice == "all" else f"{r.slice} {r.slice_value}",
            a=r.mean_a,
            b=r.mean_b,
            d=r.difference,
            p=r.p_holm,
        )
        for r in result.regressions.itertuples()
    )
    return (
        "<p>"
        + rule
        + display.fill("<b>{k} regressions</b> (the gate would exit 1):", k=len(result.regressions))
        + f"</p><ul>{lines}</ul>"
    )


def history_table(result: CompareResult) -> pd.DataFrame | None:
    """The baseline study's runs, newest last (``None`` for an imported baseline)."""
    if result.history is None:
        return None
    return result.history.drop(columns=["report"])


def history_caption(result: CompareResult) -> str:
    """Caption of the history table."""
    study = result.runs[0].meta.get("study")
    return (
        f"Every run of {study} from its manifests: time, status, code commit (dirty = "
        "uncommitted changes), params hash, overrides, systems and headline numbers; pinned = "
        "the study's pinned baseline (evalbench compare --pin RUN)"
    )


def calibration_table(result: CompareResult) -> pd.DataFrame:
    """The calibration rows, rates and intervals folded (a one-row note without them:
    ``calibration_repeats: 0`` skips the simulations; before, the report failed on it)."""
    if result.calibration.empty:
        return pd.DataFrame({"calibration": ["not simulated (calibration_repeats: 0)"]})
    table = display.fold_intervals(result.calibration, ["false_alarm", "detected_at_mdd"])
    table["mdd"] = [_mdd(v) for v in table["mdd"]]
    return table


def calibration_caption(result: CompareResult) -> str:
    """Caption of :func:`calibration_table`."""
    p = result.params
    if result.calibration.empty:
        return ("The gate's false-alarm rate and power at the MDD were not simulated "
                "(calibration_repeats: 0)")  # fmt: skip
    return (
        f"{p.calibration_repeats} simulations per rate ({p.confidence_level:.0%} Wilson "
        "intervals). false_alarm: how often the gate fired when both runs came from the same "
        "simulated system (the baseline's accuracy and number of items per slice, different "
        f"seeds; all rows tested together) — the target is at most the gate's level {p.alpha:g}. "
        "detected_at_mdd: how often one exact McNemar test saw a true change equal to the MDD "
        "on this n with this share of discordant items (Connor's model); the formula promises "
        f"about {p.power:.0%} — it is a normal approximation and the exact test is a little "
        "conservative"
    )


def history_note(result: CompareResult) -> str:
    """Why there is no history ("" for an evalbench baseline)."""
    if result.history is not None:
        return ""
    run = result.runs[0]
    return display.fill(
        "<p>The baseline is an imported {source} log ({label}): evalbench keeps no history of "
        "it.</p>",
        source=run.source,
        label=run.label,
    )
