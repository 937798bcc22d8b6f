"""GAIA sentences with numbers, tables with their captions, and the index headlines.

Every function takes the study's :class:`~.records.GaiaResult`: sentences come as escaped
HTML (:func:`evalbench.display.fill`), captions as plain text (the table helpers escape
them), tables as the DataFrames the notebook shows. A section the run may lack (lenient
scoring, pass@k, agents) is one function returning its HTML, or one line saying why it is
empty. Nothing here computes a number the metrics do not; figures are :mod:`~.figures`'.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from evalbench import display
from evalbench.agents.view import trajectories_html
from evalbench.findings import (
    Findings,
    marked_pair,
    percent,
    signed,
    signed_points,
    size_caveat,
)
from evalbench.measured import by_system, headline, identical_text
from evalbench.tiers import expected_half_width, subset_label

from . import metrics
from .records import GaiaResult

_HEADLINES = 3
_PER_ANSWER = ("prompt_tokens", "completion_tokens", "total_tokens", "cost_usd", "latency_s")
ACCURACY_COLUMNS = ["system", "level", "n", "correct", "accuracy", "ci_low", "ci_high",
                    "no_answer", "errors", "no_error", "accuracy_no_error"]  # fmt: skip
"""The columns of the accuracy-by-level table the notebook shows."""


def _overall(result: GaiaResult) -> pd.DataFrame:
    acc = result.summary.accuracy
    return acc[acc["level"] == "all"]


def headlines(result: GaiaResult) -> dict[str, Any]:
    """The index headlines: ``"accuracy <system>"`` -> first-attempt accuracy over all items
    (official scorer), for the first three systems in name order; "no result ..." for a
    system none of whose answers was measured (every call failed)."""
    overall = _overall(result).set_index("system")["accuracy"]
    rows = by_system(metrics.measured_systems(result.records))
    return {
        f"accuracy {name}": headline(float(value), rows.get(str(name)))
        for name, value in list(overall.items())[:_HEADLINES]
    }


def system_kind(result: GaiaResult, name: str) -> str:
    """``simulated``, ``simulated agent``, ``real model`` or ``agent``: each system labelled
    on its own."""
    agent = next((s.provider for s in result.params.systems if s.name == name and s.is_agent), None)
    return display.system_kind(name, result.simulated, agent)


def key_result(result: GaiaResult) -> str:
    """Each system's accuracy over all items with its Wilson interval, labelled simulated or
    real, with its failed calls and its accuracy over the items without an error beside."""
    level = result.params.confidence_level
    rows = _overall(result).to_dict("records")
    head = display.fill(
        "<p><b>Key result.</b> Accuracy over all items, first attempt, official GAIA scorer "
        "({level:.0%} Wilson intervals): ",
        level=level,
    )
    scored = _scored(result)
    return head + "; ".join(_system_sentence(row, result, scored) for row in rows) + ".</p>"


def _scored(result: GaiaResult) -> set[str]:
    """The systems some of whose first answers were measured (the others have no result)."""
    return {m.system for m in metrics.measured_systems(result.records) if m.scored}


def _system_sentence(row: dict[str, Any], result: GaiaResult, scored: set[str]) -> str:
    failed = display.failed_calls(result.usage, row["system"])
    if str(row["system"]) not in scored:  # the official table's 0.0% is its misses, no result
        name = row["system"]
        text = display.fill("{name} ({kind}): no result, every first call failed", name=name,
                            kind=system_kind(result, name))  # fmt: skip
        if failed:
            text += display.fill(" — {failed} (every attempt counted)", failed=failed)
        return text
    text = display.fill(
        "{name} ({kind}) {acc:.1%} [{low:.1%}, {high:.1%}], {k} of {n}",
        name=row["system"],
        kind=system_kind(result, row["system"]),
        acc=row["accuracy"],
        low=row["ci_low"],
        high=row["ci_high"],
        k=row["correct"],
        n=row["n"],
    )
    if failed:
        text += display.fill(" — {failed} (every attempt counted)", failed=failed)
    if not row["errors"]:
        return text
    if math.isnan(row["accuracy_no_error"]):
        return text + " — every first call failed"
    return text + display.fill(
        "; {acc:.1%} of the {k} whose first call succeeded",
        acc=row["accuracy_no_error"],
        k=display.count(row["no_error"], "item"),
    )


def findings(result: GaiaResult) -> Findings:
    """What the study found (the report's opening, the summary's key result): each system's
    accuracy in words with its interval; the caveats (what the semantic judge reads
    differently, the sample's size) and the near misses as a risk."""
    rows = _overall(result).to_dict("records")
    n = int(max((r["n"] for r in rows), default=0))
    # a system none of whose answers was measured has no number here: its failed calls are
    # the official accuracy's misses, but "about 0%" would read as measured (the caveat
    # evalbench.findings.honest adds says "no result for ..." and why)
    scored = {m.system for m in metrics.measured_systems(result.records) if m.scored}
    systems = "; ".join(
        display.fill(
            "{name} ({kind}) answered about {est} of {n} right, likely between {lo} and {hi}",
            name=r["system"],
            kind=system_kind(result, r["system"]),
            est=percent(r["accuracy"]),
            n=display.count(r["n"], "task"),
            lo=percent(r["ci_low"]),
            hi=percent(r["ci_high"]),
        )
        for r in rows
        if r["accuracy"] == r["accuracy"] and str(r["system"]) in scored
    )
    key = "First attempt, official GAIA scorer: " + systems + "."
    caveats = [_semantic_caveat(result), size_caveat(n, "task", result.params.confidence_level)]
    risks = [_near_miss_risk(result)]
    return Findings(
        key, tuple(c for c in caveats if c), tuple(r for r in risks if r), detail=key_result(result)
    )


def _semantic_caveat(result: GaiaResult) -> str:
    """What the semantic judge reads differently (``""`` without one)."""
    summary = result.semantic
    if summary is None:
        return ""
    rows = [r for r in summary.accuracy.to_dict("records") if r["scored"]]
    moved = [r for r in rows if r["difference_low"] > 0 or r["difference_high"] < 0]
    judge = display.fill(
        "the semantic judge {j} ({k})",
        j=summary.judge,
        k=display.system_kind(summary.judge, result.simulated),
    )
    if not moved:
        return (
            "The official scorer accepts exact matches only (after its normalisation); "
            + judge
            + ", which also accepts equivalent forms, changes no system's accuracy "
            "beyond chance."
        )
    each = "; ".join(
        display.fill(
            "{s} about {m} right where the official scorer says {o}, on the {n} it judged "
            "({d}, likely between {lo} and {hi} points)",
            s=r["system"],
            m=percent(r["semantic"]),
            o=percent(r["official"]),
            n=display.count(r["n"], "answer"),
            d=signed_points(r["difference"]),
            lo=signed(r["difference_low"]),
            hi=signed(r["difference_high"]),
        )
        for r in moved
    )
    return (
        "The official scorer accepts exact matches only (after its normalisation): "
        + judge
        + ", which also accepts answers written in another, equivalent form, "
        "reads " + each + "."
    )


def _near_miss_risk(result: GaiaResult, shown: int = 2) -> str:
    """Wrong answers a character or two from the expected one, with the difference marked
    (``""`` without any): typos, or a format the official scorer does not accept."""
    near = metrics.near_misses(result.records)
    if not len(near):
        return ""
    examples = []
    for row in near.head(shown).itertuples():
        answer, expected = marked_pair(str(row.extracted_answer), str(row.expected))
        examples.append(
            display.fill("{s} on {t} answered ", s=row.system, t=row.task_id)
            + f"“{answer}” for “{expected}”"
        )
    count = display.count(len(near), "wrong answer")
    verb = "is a near miss" if len(near) == 1 else "are near misses"
    head = display.fill(
        "<b>{c} {v}</b> of the expected answer (a character or two apart): a typo, or a "
        "format the official scorer does not accept; e.g. ",
        c=count,
        v=verb,
    )
    return head + "; ".join(examples) + "."


def demo_notice(result: GaiaResult) -> str:
    """A banner when the questions are the offline demo suite, not GAIA ("" otherwise)."""
    if result.params.dataset != "demo":
        return ""
    return display.banner(
        "DEMO SUITE — the questions are evalbench's own GAIA-format demo, not GAIA. "
        "Set dataset: hf in params (gated, needs HF_TOKEN) or a local copy for real GAIA."
    )


def items_table(result: GaiaResult) -> pd.DataFrame:
    """Items per level (:func:`~.metrics.items_per_level`)."""
    return metrics.items_per_level(result.items)


def items_caption(result: GaiaResult) -> str:
    """Caption of the items-per-level table: the dataset, the split and the tier (with the
    interval half-width an accuracy has at that size)."""
    p = result.params
    caption = f"Items per level (dataset: {p.dataset}, split: {p.split}"
    if p.tier != "full" or p.sample is not None:
        size = subset_label(p.tier, p.sample)
        width = expected_half_width(len(result.items), p.confidence_level)
        items = display.count(len(result.items), "item")
        caption += (
            f"; {size}: a seeded stratified subsample by level, nested across tiers "
            f"(sample_seed {p.sample_seed}); an accuracy near 50% over "
            f"{items} has a {p.confidence_level:.0%} interval of "
            f"about ±{width:.1%}"
        )
    return caption + ")"


def accuracy_table(result: GaiaResult) -> pd.DataFrame:
    """Accuracy by level (:data:`ACCURACY_COLUMNS` of :func:`~.metrics.level_accuracy`); a
    system none of whose answers was measured has its counts and no rate."""
    rates = ["accuracy", "ci_low", "ci_high", "accuracy_no_error"]
    return _no_result_blank(result, result.summary.accuracy[ACCURACY_COLUMNS], rates)


def _no_result_blank(result: GaiaResult, frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """``frame`` with ``columns`` blank (``—``) for the systems with no result (nothing of
    theirs measured): a rate over failed calls alone is no measurement."""
    out = frame.copy()
    gone = ~out["system"].isin(_scored(result))
    for column in columns if gone.any() else []:
        out[column] = out[column].astype(object).where(~gone, None)
    return out


def accuracy_caption(result: GaiaResult) -> str:
    """Caption of :func:`accuracy_table`."""
    return (
        "Accuracy by level, first attempt of each item (official scorer). n = items, "
        f"ci_low–ci_high = {result.params.confidence_level:.0%} Wilson interval, no_answer = "
        "no FINAL ANSWER extracted, errors = failed calls (both counted wrong); "
        "no_error = n − errors, the items whose call (or agent task) did not fail, including "
        "agent tasks that timed out or hit the step limit; accuracy_no_error = correct / "
        "no_error; — = no result: none of its answers was measured"
    )


def drops_table(result: GaiaResult) -> pd.DataFrame:
    """The drop table with each estimate and its interval folded into one column."""
    drops = result.summary.drops.rename(
        columns={"relative_drop": "relative", "absolute_drop": "absolute"}
    )
    folded = display.fold_intervals(drops, ["relative", "absolute"])
    return _no_result_blank(result, folded, ["acc_from", "acc_to", "relative", "absolute"])


def drops_caption(result: GaiaResult) -> str:
    """Caption of :func:`drops_table`."""
    params = result.params
    return (
        f"Drop rates: estimate [{params.confidence_level:.0%} bootstrap interval] "
        f"({params.bootstrap_rounds} rounds); n_from / n_to = items at the easier / harder "
        "level; — = no result: none of its answers was measured"
    )


def degenerate_drops_note(result: GaiaResult) -> str:
    """Why a drop interval has zero width when a level has no correct answer ("" if none)."""
    stuck = metrics.degenerate_drops(result.summary.drops)
    if not len(stuck):
        return ""
    return display.fill(
        "<p>{rows}: a level with no correct answer gives the same relative drop in every "
        "bootstrap round, so that interval has zero width — it reflects the few items, not "
        "certainty; the level's Wilson interval in the accuracy table is the honest "
        "statement.</p>",
        rows=", ".join(f"{r.system} {r.transition}" for r in stuck.itertuples()),
    )


def scorers_section(result: GaiaResult) -> str:
    """Official vs lenient accuracy per system and how many answers only the lenient scorer
    accepts; one line when ``lenient: false``."""
    if result.scorers is None:
        return (
            "<p>Lenient scoring is off (<code>lenient: false</code>): official verdicts only.</p>"
        )
    caption = (
        "Accuracy over n items (first attempt): official scorer vs the lenient diagnostic; "
        "no_error = items whose call did not fail; the _no_error columns are the shares of "
        "those items"
    )
    n = metrics.lenient_only(result.records)
    only = display.fill(
        "<p>{n} {verb} wrong for the official scorer but right for the lenient one.</p>",
        n=display.count(n, "answer"),
        verb="is" if n == 1 else "are",
    )
    rates = ["official", "lenient", "official_no_error", "lenient_no_error"]
    shown = _no_result_blank(result, result.scorers, rates)
    return display.table_block(shown, caption + "; — = no result") + only


# ------------------------------------------------------------------ semantic matching

SEMANTIC_OFF = (
    "<p>Semantic matching is off (<code>semantic_judge: null</code>): official verdicts only.</p>"
)
"""What the semantic sections show without a semantic judge."""
_CLIP = 300


def semantic_section(result: GaiaResult) -> str:
    """Official vs semantic matching: who judged, a sentence per system (accuracy under each
    scorer, the paired test), the agreement table with kappa, the accuracy table, the
    unscored judgments and, for a simulated judge, both scorers against the known truth."""
    summary = result.semantic
    if summary is None:
        return SEMANTIC_OFF
    parts = [_judge_sentence(result), _constant_note(summary), _semantic_sentences(result)]
    parts.append(display.table_block(_agreement_table(summary), _agreement_caption(result)))
    parts.append(display.table_block(_accuracy_table(summary), _accuracy_caption(result)))
    parts.append(_unscored_block(summary))
    if summary.truth is not None:
        parts.append(display.table_block(_truth_table(summary), _truth_caption(result)))
    return "".join(parts)


def _judge_sentence(result: GaiaResult) -> str:
    judge = result.params.semantic_judge
    assert judge is not None  # a summary exists only with a judge
    assert result.semantic is not None
    table = result.semantic.agreement
    unscored = int(table["unscored"].sum())
    return display.fill(
        "<p>Semantic judge <b>{name}</b> ({kind}), prompt <code>{prompt}</code> "
        "(<code>evalbench.judge.matching</code>); the official scorer stays the headline. "
        "First attempts: {u} of {asked} judgments unscored.</p>",
        name=judge.name,
        kind=display.system_kind(judge.name, result.simulated),
        prompt=judge.prompt,
        u=unscored,
        asked=unscored + int(table["scored"].sum()),
    )


def _constant_note(summary: metrics.SemanticSummary) -> str:
    """A warning when the judge gave one verdict to every answer it scored ("" otherwise):
    then its agreement measures nothing (kappa 0 or undefined)."""
    table = summary.agreement
    scored = int(table["scored"].sum())
    yes = int((table["both_right"] + table["semantic_only"]).sum())
    if scored < 2 or 0 < yes < scored:  # one verdict alone is not "one verdict throughout"
        return ""
    return display.fill(
        "<p><b>The judge said {word} to every one of the {n} answers it scored</b>: its "
        "verdicts do not tell equivalent answers from different ones.</p>",
        word="yes" if yes else "no",
        n=scored,
    )


def _semantic_sentences(result: GaiaResult) -> str:
    assert result.semantic is not None
    level = result.params.confidence_level
    parts = []
    for row in result.semantic.accuracy.to_dict("records"):
        if not row["scored"]:
            parts.append(display.fill(
                "<b>{s}</b>: no result (the judge scored none of its answers; {u} unscored)",
                s=row["system"], u=row["unscored"],
            ))  # fmt: skip
            continue
        parts.append(display.fill(
            "<b>{s}</b> official {o:.1%} vs semantic {m:.1%} on {n}, difference {d:+.1%} "
            "({lvl:.0%} paired bootstrap {lo:+.1%} to {hi:+.1%}); only semantic right: {om}, "
            "only official right: {oo}; exact McNemar p = {p:.3g}",
            s=row["system"], o=row["official"], m=row["semantic"],
            n=display.count(row["n"], "item"), d=row["difference"], lvl=level,
            lo=row["difference_low"], hi=row["difference_high"], om=row["only_semantic"],
            oo=row["only_official"], p=row["mcnemar_p"],
        ))  # fmt: skip
    return "<p>" + "; ".join(parts) + ".</p>"


def _agreement_table(summary: metrics.SemanticSummary) -> pd.DataFrame:
    return display.fold_intervals(summary.agreement, ["kappa"])


def _agreement_caption(result: GaiaResult) -> str:
    return (
        "Official vs semantic verdicts of the first-attempt answers the judge scored: "
        "both_right, official_only (right only for the official scorer), semantic_only, "
        "both_wrong; agreement = share of equal verdicts; Cohen's kappa over right/wrong "
        f"[{result.params.confidence_level:.0%} percentile bootstrap, "
        f"{result.params.bootstrap_rounds} rounds; — when undefined: one verdict throughout]; "
        "unscored = unreadable judge output or failed judge call, no_answer = nothing to "
        "judge (error, no answer, past a limit): neither is in the table"
    )


def _accuracy_table(summary: metrics.SemanticSummary) -> pd.DataFrame:
    table = summary.accuracy.drop(columns=["scored"])  # in the agreement table
    return display.fold_intervals(table, ["official", "semantic", "difference"])


def _accuracy_caption(result: GaiaResult) -> str:
    return (
        "Accuracy under each scorer over the n items with both verdicts (first attempt; "
        "items − unscored; an item with no answer is wrong under both): official and semantic "
        f"with {result.params.confidence_level:.0%} Wilson intervals; difference = semantic − "
        "official with a paired bootstrap interval; only_official / only_semantic = the "
        "discordant items; mcnemar_p = exact McNemar test"
    )


def _unscored_block(summary: metrics.SemanticSummary) -> str:
    unscored = summary.unscored
    if unscored.empty:
        return "<p>Every judge output was readable: no unscored judgment.</p>"
    caption = (
        f"{display.count(len(unscored), 'unscored judgment')} (first attempt; counted, never "
        "right or wrong): the answer and why"
    )
    return display.table_block(_clipped(unscored), caption, max_rows=len(unscored))


def _truth_table(summary: metrics.SemanticSummary) -> pd.DataFrame:
    assert summary.truth is not None
    return display.fold_intervals(
        summary.truth.rename(columns={"judge_low": "judge_accuracy_low",
                                      "judge_high": "judge_accuracy_high"}),
        ["judge_accuracy"],
    )  # fmt: skip


def _truth_caption(result: GaiaResult) -> str:
    judge = result.params.semantic_judge
    assert judge is not None
    level = result.params.confidence_level
    return (
        "Simulated judge against the simulation's truth (evalbench.gaia.equivalence), scored "
        "first-attempt answers by case: same = equivalent and accepted by the official scorer, "
        "variant = equivalent but rejected by it, different = not equivalent; judge_right = "
        f"verdicts equal to the truth, judge_accuracy with its {level:.0%} "
        "Wilson interval; official_right = official verdicts equal to the truth. The judge's "
        f"set accuracy: {judge.sim.accuracy}, malformed_rate {judge.sim.malformed_rate}"
    )


def semantic_disagreements_section(result: GaiaResult) -> str:
    """Every first-attempt answer on which the official and the semantic verdicts differ, with
    both answers (escaped, clipped to 300 characters); one line when there is none."""
    summary = result.semantic
    if summary is None:
        return SEMANTIC_OFF
    rows = summary.disagreements
    if rows.empty:
        return "<p>The official and the semantic verdicts agree on every scored answer.</p>"
    caption = (
        f"Every disagreement ({len(rows)}), first attempt: extracted_answer (the model's) and "
        "expected (gold), correct = official verdict, correct_semantic = the judge's"
        + ("; semantic_truth = the simulation's truth" if "semantic_truth" in rows else "")
    )
    return display.table_block(_clipped(rows), caption, max_rows=len(rows))


def _clipped(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    for column in ("extracted_answer", "expected", "semantic_reason"):
        if column in out:
            out[column] = [_clip(v) for v in out[column]]
    return out


def _clip(value: Any) -> Any:
    if not isinstance(value, str) or len(value) <= _CLIP:
        return value
    return value[:_CLIP] + f" … [{len(value) - _CLIP} more chars]"


def paired_sentence(result: GaiaResult) -> str:
    """The paired comparison of the two systems (McNemar, paired bootstrap), in one sentence."""
    if result.pair is None or result.comparison is None:
        return "<p>One system only: no paired comparison.</p>"
    (a, b), cmp = result.pair, result.comparison
    if unmeasured := [s for s in (a, b) if s not in _scored(result)]:
        return display.fill(
            "<p>No paired comparison of <b>{a}</b> and <b>{b}</b>: {none} {verb} no result "
            "(every first call failed).</p>",
            a=a, b=b, none=" and ".join(unmeasured), verb="has" if len(unmeasured) == 1 else "have",
        )  # fmt: skip
    return display.fill(
        "<p><b>{a}</b> vs <b>{b}</b> on {n}: accuracy {acc_a:.1%} vs {acc_b:.1%}; "
        "difference {d:+.1%} ({lvl:.0%} paired bootstrap interval {lo:+.1%} to {hi:+.1%}); "
        "only {a} right: {oa}, only {b} right: {ob}; exact McNemar p = {p:.3g}.</p>",
        a=a,
        b=b,
        n=display.count(cmp.n, "item"),
        acc_a=cmp.accuracy_a,
        acc_b=cmp.accuracy_b,
        d=cmp.difference.estimate,
        lo=cmp.difference.low,
        hi=cmp.difference.high,
        lvl=cmp.difference.level,
        oa=cmp.only_a,
        ob=cmp.only_b,
        p=cmp.mcnemar_p,
    )


def pass_at_k_section(result: GaiaResult) -> str:
    """The pass@k table (one ``pass@<k>`` column per k); one line with a single attempt."""
    attempts = result.params.attempts
    if result.summary.pass_at_k is None:
        return display.fill(
            "<p>{n} attempt per item (<code>attempts: {n}</code>): pass@k needs several.</p>",
            n=attempts,
        )
    caption = (
        "pass@k over n_items items, unbiased estimator of Chen et al. (2021) from "
        f"{attempts} attempts per item (pass@1 averages all attempts, so it can differ from "
        "the first-attempt accuracy above); identical_attempts = items whose attempts all "
        "gave the same answer; — = no result: none of its answers was measured"
    )
    wide = metrics.pass_at_k_wide(result.summary.pass_at_k)
    rates = [c for c in wide.columns if str(c).startswith("pass@")]
    table = display.table_block(_no_result_blank(result, wide, rates), caption)
    return table + identical_sentence(result)


def identical_sentence(result: GaiaResult) -> str:
    """A warning beside pass@k when some item's attempts were all identical ("" when none
    was): attempts at temperature 0 (or of a deterministic system) are one try repeated."""
    rows = [m for m in metrics.measured_systems(result.records) if m.identical]
    if not rows:
        return ""
    each = "; ".join(f"{m.system}: {identical_text(m)}" for m in rows)
    return display.fill(
        "<p><b>Identical attempts.</b> {each}. Where the {k} attempts were not independent "
        "(temperature 0, a deterministic system) they are one try repeated: pass@k of those "
        "items is their pass@1, not {k} tries.</p>",
        each=each,
        k=result.params.attempts,
    )


def usage_table(result: GaiaResult) -> pd.DataFrame:
    """Mean tokens, cost and latency per answer by system and level (``answers`` = items ×
    attempts); the agents' steps and time are in :func:`agent_effort`."""
    usage = result.summary.usage
    means = [f"{c}_mean" for c in _PER_ANSWER if f"{c}_mean" in usage.columns]
    return usage[["system", "level", "n", *means]].rename(columns={"n": "answers"})


def usage_caption(result: GaiaResult) -> str:
    """Caption of :func:`usage_table`."""
    caption = (
        "Mean prompt and completion tokens, cost (USD) and latency (s) per answer, by level "
        "(answers = items × attempts); cost is 0 for an unpriced or simulated system"
    )
    if not usage_table(result).isna().any(axis=None):
        return caption
    return caption + "; — = not reported (an agent's time is per task, in the effort table below)"


def failure_examples(result: GaiaResult, n: int = 8) -> list[dict[str, Any]]:
    """Up to ``n`` wrong first-attempt answers, drawn with the study's seed."""
    sample = metrics.failure_sample(result.records, n, seed=result.params.seed)
    return sample.to_dict("records")


def failure_fields(examples: list[dict[str, Any]]) -> list[str]:
    """The fields shown for each failure example (``error`` only when one failed)."""
    fields = ["system", "task_id", "level", "extracted_answer", "expected"]
    return fields + (["error"] if any(pd.notna(e.get("error")) for e in examples) else [])


def submission_sentence(result: GaiaResult) -> str:
    """Where the leaderboard submission and its guide were written."""
    path = result.submission
    return display.fill(
        "<p>Wrote <code>{p}</code> (system <b>{s}</b>) and its guide <code>{g}</code>.</p>",
        p=path.name,
        s=result.submission_system,
        g=path.with_suffix(".md").name,
    )


# ------------------------------------------------------------------ agents

NO_AGENTS = "<p>No agent systems in this run: every system is a chat model.</p>"
"""What each agent section shows when no system is an agent."""
AGENT_STATE_COLUMNS = ["system", "level", "tasks", "answered", "timeout", "step_limit", "error",
                       "timeout_rate", "error_rate"]  # fmt: skip


def agents_sentence(result: GaiaResult) -> str:
    """Per agent over all levels: how its tasks ended and the steps they took."""
    if result.agents is None:
        return NO_AGENTS
    states = result.agents.states.set_index(["system", "level"])
    effort = result.agents.effort.set_index(["system", "level"])
    parts = []
    for name in states.index.get_level_values(0).unique():
        row, work = states.loc[(name, "all")], effort.loc[(name, "all")]
        parts.append(display.fill(
            "<b>{name}</b> ({kind}): {tasks}, {answered} answered, {timeout} timed out, "
            "{limit} hit the step limit, {error} failed; {steps:.1f} steps and {tools:.1f} tool "
            "calls per task on average",
            name=name, kind=system_kind(result, name),
            tasks=display.count(int(row["tasks"]), "task"),
            answered=int(row["answered"]), timeout=int(row["timeout"]),
            limit=int(row["step_limit"]), error=int(row["error"]),
            steps=work["steps_mean"], tools=work["tool_calls_mean"],
        ))  # fmt: skip
    return "<p>" + "; ".join(parts) + ".</p>"


def agent_states(result: GaiaResult) -> str:
    """How each agent's tasks ended, by level ("" without agents)."""
    if result.agents is None:
        return ""
    caption = (
        "How each agent's tasks ended, first attempt, by level: answered (the agent returned an "
        "answer, then scored), "
        "timeout (max_time_s), step_limit (max_steps or max_tokens), error (the agent or its "
        f"model calls failed); rates with {result.params.confidence_level:.0%} Wilson intervals. "
        "Timeouts and step limits count as wrong in the accuracy above, shown apart here"
    )
    return display.table_block(result.agents.states[AGENT_STATE_COLUMNS], caption)


def agent_effort(result: GaiaResult) -> str:
    """Steps and tool calls (mean with its interval, median), time, tokens and cost per task
    ("" without agents)."""
    if result.agents is None:
        return ""
    means = {"steps_mean": "steps", "tool_calls_mean": "tool_calls"}
    effort = display.fold_intervals(
        result.agents.effort.rename(columns=means), ["steps", "tool_calls"], digits=2
    )
    effort = effort.rename(columns={"wall_s_mean": "wall_s", "tokens_mean": "tokens",
                                    "cost_usd_mean": "cost_usd"})  # fmt: skip
    return display.table_block(effort, _effort_caption(result), digits=2)


def _effort_caption(result: GaiaResult) -> str:
    sim = " (simulated agents: simulated times)" if any(
        s.is_agent and s.name in result.simulated for s in result.params.systems
    ) else ""  # fmt: skip
    return (
        "Effort per task, first attempt: mean steps (model calls and tool calls) and tool calls "
        f"[{result.params.confidence_level:.0%} percentile bootstrap over tasks, "
        f"{result.params.bootstrap_rounds} rounds], medians, share of tool calls that failed, "
        f"wall time (s), tokens and cost (USD) per task{sim}"
    )


def steps_accuracy(result: GaiaResult) -> str:
    """Accuracy of the agents' tasks by steps taken; :data:`NO_AGENTS` without agents."""
    if result.agents is None:
        return NO_AGENTS
    caption = (
        "Accuracy of each agent's first-attempt tasks grouped by the steps they took (steps_bin: "
        "model calls and tool calls per task; tasks = tasks in the group)"
    )
    return display.table_block(result.agents.by_steps, caption)


def failures_html(result: GaiaResult, limit: int = 8) -> str:
    """The trajectories of (up to ``limit``) tasks the agents got wrong, collapsible and
    escaped; :data:`NO_AGENTS` without agents."""
    if result.agents is None:
        return NO_AGENTS
    tasks = result.agents.failures.to_dict("records")
    return trajectories_html(tasks, result.steps, limit=limit)
