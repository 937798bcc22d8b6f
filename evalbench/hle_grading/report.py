"""What the expert-grading notebook says: sentences with numbers, tables with captions, the
index headlines.

Sentences are escaped HTML (:func:`evalbench.display.fill`), captions and titles plain text;
nothing here computes a number :mod:`.metrics` does not. The figures are :mod:`~.figures`'.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from evalbench import display
from evalbench.findings import Findings, about, count, percent
from evalbench.measured import by_system, headline
from evalbench.records import plain_rows
from evalbench.tiers import subset_label

from .data import DEMO_NOTE, DIMENSIONS
from .metrics import item_counts, measured_sources, scored_sources
from .records import DATASET_SOURCE, HleGradingResult

STATES = ("scored", "unscored", "no_response")


def _kind(result: HleGradingResult, source: str) -> str:
    if source == DATASET_SOURCE:
        return "the set's own answers"
    return display.system_kind(source, result.simulated)


def _overall(result: HleGradingResult) -> pd.DataFrame:
    dims = result.summary.dimensions
    return dims[dims["dimension"] == "overall"].set_index("source")


def _agreement(result: HleGradingResult) -> pd.Series | None:
    """The overall row of the agreement table, or ``None`` without a human baseline."""
    rows = result.summary.agreement.set_index("dimension")
    if not len(rows) or not rows.loc["overall", "n"]:
        return None
    return rows.loc["overall"]


def headlines(result: HleGradingResult) -> dict[str, Any]:
    """The index headlines: the first source's mean overall score, and the judge's agreement
    with the human baseline (within ±k, bias) on the overall score."""
    overall = _overall(result)
    measured = by_system(measured_sources(result.records))
    out: dict[str, Any] = {}
    if len(overall):
        first = overall.index[0]
        out[f"mean overall {first}"] = headline(
            float(overall.loc[first, "mean"]), measured.get(str(first))
        )
    row, k = _agreement(result), f"{result.params.tolerance:g}"
    out[f"within ±{k} of humans"] = "undefined" if row is None else float(row["within_k"])
    out["bias vs humans (points)"] = "undefined" if row is None else float(row["bias"])
    return out


def notes(result: HleGradingResult) -> list[str]:
    """Short remarks for the index: unscored judgments, no human baseline."""
    out = []
    unscored = int((result.records["status"] == "unscored").sum())
    if unscored:
        out.append(f"{unscored} of {len(result.records)} judgments unscored")
    if _agreement(result) is None:
        out.append("no scored answer has a human baseline")
    return out


def demo_notice(result: HleGradingResult) -> str:
    """A banner when the expert set is the demo ("" otherwise)."""
    if result.params.dataset != "demo":
        return ""
    return display.banner(
        f"{DEMO_NOTE} — the expert set is evalbench's demo: questions, answers and the "
        "'human' scores were written for evalbench (synthetic, not human data)."
    )


def key_result(result: HleGradingResult) -> str:
    """Each source's mean overall score with its interval and how many answers were scored;
    then the judge's agreement with the human baseline."""
    level = result.params.confidence_level
    overall = _overall(result)
    states = result.summary.states.set_index("source")
    parts = []
    for source in result.sources:
        scored, answers = int(states.loc[source, "scored"]), int(states.loc[source, "answers"])
        if source not in overall.index:
            parts.append(display.fill("<b>{s}</b> ({k}) no scored answer of {a}",
                                      s=source, k=_kind(result, source), a=answers))  # fmt: skip
            continue
        row = overall.loc[source]
        parts.append(display.fill(
            "<b>{s}</b> ({k}) {m:.1f} [{lo:.1f}, {hi:.1f}] ({n} of {a} answers scored)",
            s=source, k=_kind(result, source), m=row["mean"], lo=row["ci_low"],
            hi=row["ci_high"], n=scored, a=answers,
        ))  # fmt: skip
    head = display.fill(
        "<p><b>Key result.</b> Mean overall score (0–100: the mean of the six dimensions) per "
        "source over its scored answers, {level:.0%} bootstrap interval: ",
        level=level,
    )
    return head + "; ".join(parts) + ". " + agreement_sentence(result).removeprefix("<p>")


def findings(result: HleGradingResult) -> Findings:
    """What the study found (the report's opening, the summary's key result): each source's
    mean overall score and the judge's agreement with the human scores, each named and in
    words with its interval; caveats (no human baseline, a synthetic demo set, unscored
    gradings) and the judge's bias as a risk."""
    key = "Mean overall score (0 to 100: the mean of the six rubric dimensions) the judge gave: "
    key += "; ".join(_source_words(result, source) for source in result.sources) + "."
    row = _agreement(result)
    if row is not None:
        key += " " + _agreement_words(result, row)
    caveats = [_no_human_caveat(result), _demo_caveat(result), _unscored_caveat(result)]
    risks = tuple(r for r in [_bias_risk(result)] if r)
    return Findings(key, tuple(c for c in caveats if c), risks, detail=key_result(result))


def _source_words(result: HleGradingResult, source: str) -> str:
    overall = _overall(result)
    states = result.summary.states.set_index("source")
    scored, answers = int(states.loc[source, "scored"]), int(states.loc[source, "answers"])
    if source not in overall.index:
        return display.fill(
            "{s} ({k}): no scored answer of {a}", s=source, k=_kind(result, source), a=answers
        )
    row = overall.loc[source]
    name = "the set's own answers" if source == DATASET_SOURCE else source
    kind = "" if source == DATASET_SOURCE else f" ({_kind(result, source)})"
    return display.fill(
        "{s}{k} {about} ({n} of {a} answers scored)",
        s=name,
        k=kind,
        n=scored,
        a=answers,
        about=about(row["mean"], row["ci_low"], row["ci_high"], "score"),
    )


def _agreement_words(result: HleGradingResult, row: pd.Series) -> str:
    bias = float(row["bias"])
    side = (
        "the same as the humans"
        if not bias
        else f"{abs(bias):.1f} points " + ("higher" if bias > 0 else "lower")
    )
    return display.fill(
        "Against the human scores, the judge's overall score is within ±{k:g} points on about "
        "{w} of {n} (likely between {wlo} and {whi}), and on average {side} (likely between "
        "{lo:+.1f} and {hi:+.1f} points).",
        k=result.params.tolerance,
        w=percent(row["within_k"]),
        n=count(int(row["n"]), "answer"),
        wlo=percent(row["within_k_low"]),
        whi=percent(row["within_k_high"]),
        side=side,
        lo=row["bias_low"],
        hi=row["bias_high"],
    )


def _no_human_caveat(result: HleGradingResult) -> str:
    if _agreement(result) is not None:
        return ""
    return (
        "No scored answer has a human score: nothing here says how close the judge is to experts."
    )


def _demo_caveat(result: HleGradingResult) -> str:
    if result.params.dataset != "demo":
        return ""
    return (
        "The expert set is evalbench's demo: its questions, answers and “human” scores "
        "were written for evalbench, not given by experts, so the agreement shows how the "
        "method works, not how good the judge is."
    )


def _unscored_caveat(result: HleGradingResult) -> str:
    unscored = int((result.records["status"] == "unscored").sum())
    if not unscored:
        return ""
    return display.fill(
        "{u} of {n} could not be scored (an unreadable verdict or a failed call): those "
        "answers are left out of the means.",
        u=unscored,
        n=count(len(result.records), "grading"),
    )


def _bias_risk(result: HleGradingResult) -> str:
    """The judge is more lenient or stricter than the humans beyond chance ("" if not)."""
    row = _agreement(result)
    if row is None or not (row["bias_low"] > 0 or row["bias_high"] < 0):
        return ""
    side = "more lenient" if row["bias"] > 0 else "stricter"
    return display.fill(
        "<b>The judge is {side} than the humans</b>: {b:+.1f} points on the overall score on "
        "average (likely between {lo:+.1f} and {hi:+.1f}), so its scores read {way} than an "
        "expert's would.",
        side=side,
        b=row["bias"],
        lo=row["bias_low"],
        hi=row["bias_high"],
        way="higher" if row["bias"] > 0 else "lower",
    )


def data_sentence(result: HleGradingResult) -> str:
    """How many questions in how many categories, with answers and human scores."""
    items = result.items
    params = result.params
    text = display.fill(
        "<p>{n} expert questions in {c} categories × {d} difficulties (dataset: {ds}); {a} "
        "with the set's own answer, {h} of them with human scores; graded besides: {systems}.",
        n=len(items),
        c=len({it.category for it in items}),
        d=len({it.difficulty for it in items}),
        ds=params.dataset,
        a=sum(it.answer is not None for it in items),
        h=sum(it.answer is not None and it.human_scores is not None for it in items),
        systems=", ".join(s.name for s in params.systems) or "no system",
    )
    if params.sample is not None or params.tier != "full":
        text += display.fill(" Subsample ({h}), stratified by category × difficulty.",
                             h=subset_label(params.tier, params.sample))  # fmt: skip
    return text + "</p>"


def items_table(result: HleGradingResult) -> pd.DataFrame:
    """Questions per category and difficulty (:func:`~.metrics.item_counts`)."""
    return item_counts(result.items)


def items_caption() -> str:
    """Caption of :func:`items_table`."""
    return (
        "Expert questions per category and difficulty; with_answer = questions with the set's "
        "own answer to grade, with_human = those with human scores"
    )


def states_caption() -> str:
    """Caption of the graded-answers table."""
    return (
        "Answers graded per source (dataset = the set's own answers; otherwise a system's "
        "answers to the expert questions): scored / unscored (judge output unparseable or its "
        "call failed) / no_response (no answer to grade); with_human = scored answers that have "
        "a human baseline"
    )


def sources(result: HleGradingResult) -> list[str]:
    """The sources with at least one scored answer (a heatmap and a table each)."""
    return scored_sources(result.sources, result.summary.long)


def cells_wide(result: HleGradingResult, source: str) -> pd.DataFrame:
    """Per category × difficulty cell the source answered: ``answers`` graded, ``n`` scored
    and each dimension's mean [bootstrap interval] over the scored ones ("—" without one)."""
    cells = result.summary.cells
    part = cells[cells["source"] == source].rename(
        columns={"mean": "m", "ci_low": "m_low", "ci_high": "m_high"}
    )
    folded = display.fold_intervals(part, ["m"], digits=0)
    means = folded.pivot_table(index=["category", "difficulty"], columns="dimension",
                               values="m", aggfunc="first", sort=False)  # fmt: skip
    counts = result.summary.cell_counts
    counts = counts[counts["source"] == source].set_index(["category", "difficulty"])
    wide = means.reindex(index=counts.index, columns=[*DIMENSIONS, "overall"]).fillna("—")
    wide.insert(0, "answers", counts["answers"])
    wide.insert(1, "n", counts["scored"])
    wide.columns.name = None
    return wide.reset_index()


def cells_caption(result: HleGradingResult, source: str) -> str:
    """Caption of :func:`cells_wide`."""
    params = result.params
    return (
        f"{source}: mean score per dimension (0–100) by category × difficulty, with its "
        f"{params.confidence_level:.0%} percentile bootstrap interval over the answers in the "
        f"cell ({params.bootstrap_rounds} rounds; no interval for a cell of one answer); "
        "overall = mean of the six dimensions, computed here; answers = answers graded in the "
        "cell, n = scored answers (the means are over these; unscored and unanswered ones are "
        "in the table above)"
    )


def dimension_table(result: HleGradingResult) -> pd.DataFrame:
    """Mean per source and dimension over all categories, interval folded in."""
    dims = result.summary.dimensions.rename(columns={"ci_low": "mean_low", "ci_high": "mean_high"})
    return display.fold_intervals(dims, ["mean"], digits=1)


def dimension_caption(result: HleGradingResult) -> str:
    """Caption of :func:`dimension_table`."""
    return (
        f"Mean score per dimension over the n scored answers of each source (all "
        f"categories and difficulties), {result.params.confidence_level:.0%} bootstrap "
        "interval over answers"
    )


def distribution_caption() -> str:
    """Caption of the overall-distribution table."""
    return (
        "Distribution of the overall score (mean of six dimensions, 0–100) per source, "
        "judged, and of the human baseline's overall score"
    )


def agreement_table(result: HleGradingResult) -> pd.DataFrame:
    """The agreement table with every estimate and its interval folded into one column."""
    names = ["within_k", "bias", "mae", "spearman"]
    return display.fold_intervals(result.summary.agreement, names, digits=2)


def agreement_caption(result: HleGradingResult) -> str:
    """Caption of :func:`agreement_table`."""
    params = result.params
    return (
        f"The judge against the human baseline per dimension, over the n scored answers that "
        f"have one: within_k = share with |judge − human| ≤ {params.tolerance:g} points; bias = "
        "mean (judge − human), > 0 = the judge is more lenient; mae = mean |judge − human|; "
        f"spearman = rank correlation; each with a {params.confidence_level:.0%} percentile "
        f"bootstrap interval over answers ({params.bootstrap_rounds} rounds)"
    )


def agreement_sentence(result: HleGradingResult) -> str:
    """The overall agreement in one sentence (or why there is none)."""
    row = _agreement(result)
    if row is None:
        return "<p>No scored answer has a human baseline: no agreement to report.</p>"
    return display.fill(
        "<p>On the overall score, the judge is within ±{k:g} points of the human baseline on "
        "{w:.0%} of {n} answers, with a bias of {b:+.1f} points and Spearman ρ = {r:.2f}.</p>",
        k=result.params.tolerance,
        w=row["within_k"],
        n=int(row["n"]),
        b=row["bias"],
        r=row["spearman"],
    )


def confidence_caption() -> str:
    """Caption of the confidence-band table."""
    return (
        "The judge's stated confidence in its grading against its gap to the human overall "
        "score: n answers per confidence band, mean |judge − human| and mean (judge − human), "
        "in points"
    )


def confidence_sentence(result: HleGradingResult) -> str:
    """Spearman's rho between the judge's confidence and its absolute gap to the humans."""
    rho = result.summary.confidence_rho
    if math.isnan(rho):
        return "<p>Too few answers with a human baseline to relate confidence and gap.</p>"
    meaning = (
        "a more confident judge is closer to the humans"
        if rho < 0
        else "the judge's confidence does not mark its closer gradings"
    )
    return display.fill(
        "<p>Spearman ρ between the judge's confidence and |judge − human| on "
        "the overall score: {r:.2f} ({m}).</p>",
        r=rho,
        m=meaning,
    )


def unscored_examples(result: HleGradingResult) -> list[dict[str, Any]]:
    """The unscored judgments (reason and raw output), missing values as ``None``."""
    rows = result.records
    return plain_rows(rows[rows["status"] == "unscored"])


def unscored_fields() -> list[str]:
    """Fields shown for each unscored judgment."""
    return ["source", "id", "unscored_kind", "unscored_reason", "judge_raw"]
