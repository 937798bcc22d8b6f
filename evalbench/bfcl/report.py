"""BFCL sentences with numbers, the tables with their captions, the index headlines.

Every function takes the study's :class:`~.records.BfclResult`: sentences come as escaped
HTML (:func:`evalbench.display.fill`), captions as plain text (the table helpers escape
them), tables as the DataFrames the notebook shows (from :mod:`~.metrics`, nothing computed
here that the metrics do not). The figures are :mod:`~.figures`'.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from evalbench import display
from evalbench.findings import Findings, about, count, percent
from evalbench.measured import Measured, by_system, headline, no_result_text
from evalbench.tiers import expected_half_width, subset_label

from . import metrics, multi_turn_metrics
from .backends import VECTOR_REFUSAL
from .format_sensitivity import CONFIGS
from .records import BfclResult
from .schema import (
    CALL_FAILED,
    CATEGORY_SIZES,
    FORMAT_SENSITIVITY,
    FORMAT_SENSITIVITY_SIZE,
    MEMORY,
    MultiTurnItem,
)
from .web_search import CORRECTED

_HEADLINES = 3


def headlines(result: BfclResult) -> dict[str, Any]:
    """The index headlines: accuracy over every scored item of the first three systems.

    ``"<system> accuracy (<n> items scored)"`` -> share of the system's items marked valid,
    all studied categories pooled (failed calls count as wrong); "no result ..." for a
    system with no item measured: every call failed, or it never produced a function call
    (:func:`~.metrics.measured_systems`: its irrelevance "passes" are no skill).
    """
    micro = result.verdicts.groupby("system", sort=False)["valid"].agg(["sum", "size"])
    rows = list(zip(micro.index, micro["sum"], micro["size"], strict=True))[:_HEADLINES]
    measured = by_system(metrics.measured_systems(result.verdicts))
    return {
        f"{name} accuracy ({int(n)} items scored)": headline(float(ok / n), measured.get(name))
        for name, ok, n in rows
    }


def key_result(result: BfclResult) -> str:
    """Each system's pooled accuracy with its Wilson interval, labelled result files,
    simulated or real, with its failed calls and the accuracy over answered items beside."""
    level = result.params.confidence_level
    table = metrics.system_accuracy(result.verdicts, result.params.categories, level=level)
    silent = metrics.silent_tools(result.verdicts)
    never = {m.system: m for m in metrics.measured_systems(result.verdicts)
             if metrics.NEVER_CALLED in m.unscored}  # fmt: skip
    systems = "; ".join(
        (_never_called_sentence(never[row["system"]], result) if row["system"] in never
         else _system_sentence(row, result))
        + _silent_sentence(silent.get(row["system"]))
        for row in table.to_dict("records")
    )  # fmt: skip
    head = display.fill(
        "<p><b>Key result.</b> Share of scored items the official checker marks valid, all "
        "studied categories pooled ({level:.0%} Wilson intervals): ",
        level=level,
    )
    tail = (
        ". Systems without results for every category are scored on fewer items, so these "
        "shares are not directly comparable; the per-category table and the leaderboard "
        "aggregation below are.</p>"
    )
    return head + systems + tail


def findings(result: BfclResult) -> Findings:
    """What the study found (the report's opening, the summary's key result): each system's
    share of valid items in words, with how many categories it stands on; the top caveat when
    the systems cover different categories (then they are compared on the shared ones only),
    else that only a subset of each category was scored."""
    level = result.params.confidence_level
    table = metrics.system_accuracy(result.verdicts, result.params.categories, level=level)
    scored = {m.system for m in metrics.measured_systems(result.verdicts) if m.scored}
    systems = "; ".join(
        display.fill(
            "{name} ({kind}) about {est} of {n} in {c}, likely between {lo} and {hi}",
            name=r["system"],
            kind=system_kind(result, r["system"]),
            est=percent(r["accuracy"]),
            n=count(r["items"], "item"),
            c=count(r["categories"], "category"),
            lo=percent(r["accuracy_low"]),
            hi=percent(r["accuracy_high"]),
        )
        for r in table.to_dict("records")
        if r["system"] in scored
    )
    key = "Share of items the official BFCL checker marks valid, all studied categories pooled: "
    caveats = (_demo_caveat(result), _coverage_caveat(result, table), _subset_caveat(result))
    return Findings(key + systems + ".", tuple(c for c in caveats if c), detail=key_result(result))


SHOWN_MISSING = 6
"""Categories named per system in the coverage caveat (the rest counted)."""


def _coverage_caveat(result: BfclResult, table: pd.DataFrame) -> str:
    """Systems scored on different categories are not directly comparable: which each has,
    and their shares on the categories all of them have ("" when all have the same)."""
    verdicts = result.verdicts
    covered = verdicts.groupby("system", sort=False)["test_category"].unique()
    sets = {str(k): set(v) for k, v in covered.items()}
    if len({frozenset(v) for v in sets.values()}) <= 1:
        return ""
    every = set().union(*sets.values())
    each = "; ".join(_coverage_words(r, sets, len(every)) for r in table.to_dict("records"))
    shared = sorted(set.intersection(*sets.values()))
    head = "<b>Not directly comparable</b>: the systems were scored on different categories: "
    tail = ". Their pooled shares stand on different items. "
    return head + each + tail + _shared(result, shared)


def _coverage_words(row: dict[str, Any], sets: dict[str, set[str]], total: int) -> str:
    text = display.fill("{s} on {k} of {n}", s=row["system"], k=len(sets[row["system"]]), n=total)
    missing = [m for m in str(row["not submitted"]).split(", ") if m]
    if not missing:
        return text
    shown = ", ".join(missing[:SHOWN_MISSING])
    more = f" and {len(missing) - SHOWN_MISSING} more" if len(missing) > SHOWN_MISSING else ""
    return text + display.fill(" (not submitted: {m}{more})", m=shown, more=more)


def _shared(result: BfclResult, shared: list[str]) -> str:
    if not shared:
        return "No category is shared by all of them: do not rank them against each other."
    level = result.params.confidence_level
    verdicts = result.verdicts[result.verdicts["test_category"].isin(shared)]
    table = metrics.system_accuracy(verdicts, shared, level=level)
    each = "; ".join(
        display.fill(
            "{s} {about}",
            s=r["system"],
            about=about(r["accuracy"], r["accuracy_low"], r["accuracy_high"]),
        )
        for r in table.to_dict("records")
    )
    names = ", ".join(shared[:SHOWN_MISSING]) + ("…" if len(shared) > SHOWN_MISSING else "")
    return (
        display.fill(
            "On the {c} all of them have ({names}): ",
            c=count(len(shared), "category"),
            names=names,
        )
        + each
        + "."
    )


def _demo_caveat(result: BfclResult) -> str:
    if result.params.data != "demo":
        return ""
    return (
        "The items are evalbench's own demo items in BFCL's file format, not BFCL's: the "
        "numbers show how the pipeline works, not how a model does on the leaderboard."
    )


def _subset_caveat(result: BfclResult) -> str:
    """Only part of each category scored: not the leaderboard's numbers ("" when all)."""
    params = result.params
    if not params.limit_per_category and params.tier == "full" and params.sample is None:
        return ""
    n = len(result.items) or len(result.verdicts.drop_duplicates("id"))
    return display.fill(
        "Only part of each category was scored ({n} in all), so these shares are not the "
        "leaderboard's and each is known to about ±{hw:.0f} points.",
        n=count(n, "item"),
        hw=expected_half_width(n, params.confidence_level) * 100,
    )


def system_kind(result: BfclResult, name: str) -> str:
    """``result files`` (a result set), ``simulated`` or ``real model`` (asked live)."""
    if name in {rs.name for rs in result.params.result_sets}:
        return "result files"
    return display.system_kind(name, result.simulated)


def _system_sentence(row: dict[str, Any], result: BfclResult) -> str:
    text = display.fill(
        "{name} ({kind}) {acc:.1%} [{low:.1%}, {high:.1%}] of {n} items",
        name=row["system"],
        kind=system_kind(result, row["system"]),
        acc=row["accuracy"],
        low=row["accuracy_low"],
        high=row["accuracy_high"],
        n=row["items"],
    )
    if not row["failed calls"]:
        return text
    failed = display.failed_calls(result.usage, row["system"])
    answered = row["items"] - row["failed calls"]
    if math.isnan(row["accuracy_answered"]):
        return text + display.fill(" — {failed}; no item answered", failed=failed)
    return text + display.fill(
        " — {failed}; {acc:.1%} of the {k} answered items",
        failed=failed or f"{row['failed calls']} calls failed",
        acc=row["accuracy_answered"],
        k=answered,
    )


def _never_called_sentence(row: Measured, result: BfclResult) -> str:
    """A system that never called a function where one was needed: no number (its
    irrelevance "passes" are no skill), the counts and the reason instead."""
    kind = system_kind(result, row.system)
    return display.fill("{name} ({kind}) {why}", name=row.system, kind=kind,
                        why=no_result_text([row]))  # fmt: skip


def _silent_sentence(answers: int | None) -> str:
    """The warning for a tools-mode system none of whose answers called a function."""
    if not answers:
        return ""
    return display.fill(
        " — <b>none of its {n} answers that should call a function called one</b> (tools "
        "mode): the endpoint may leave the tools out of the prompt, or the model cannot call "
        "them; try mode: prompt",
        n=answers,
    )


def items_caption(result: BfclResult) -> str:
    """Caption of the items-per-category table: the data source and the subset."""
    params = result.params
    limit = params.limit_per_category
    subset = f"first {limit} items of each category" if limit else "every item"
    return f"Items per category (data: {params.data}; {subset})"


def subset_notice(result: BfclResult) -> str:
    """A banner when only some items of each category are scored (a per-category limit or
    a tier / sample, with the interval half-width to expect at that size)."""
    params = result.params
    limit = params.limit_per_category
    tiered = params.tier != "full" or params.sample is not None
    if not limit and not tiered:
        return "<p>Every item of each studied category is scored, as on the leaderboard.</p>"
    parts = [f"only the first {limit} items of each category"] if limit else []
    if tiered:
        size = subset_label(params.tier, params.sample)
        parts.append(
            f"a seeded subsample stratified by category ({size}, sample_seed "
            f"{params.sample_seed}; nested: quick ⊂ standard ⊂ full)"
        )
    n = len(result.items)
    half = expected_half_width(n, params.confidence_level)
    return display.banner(
        f"SUBSET — {' and '.join(parts)}: {n} items are scored, so an accuracy near 50% has an "
        f"expected {params.confidence_level:.0%} interval half-width of ±{half:.3f}; the "
        "accuracies are not comparable with the leaderboard's."
    )


def systems_caption(result: BfclResult) -> str:
    """Caption of the per-system table (coverage, failed calls, both accuracies)."""
    return (
        "Items scored per system (categories without results are 'not submitted'); accuracy "
        f"over all items [{result.params.confidence_level:.0%} Wilson interval] and over the "
        "answered items (failed calls left out)"
    )


def accuracy_caption(result: BfclResult) -> str:
    """Caption of the categories × systems accuracy table."""
    level = result.params.confidence_level
    return (
        f"Accuracy per category: estimate [{level:.0%} Wilson interval]; n = items in the "
        "category; where calls failed, the accuracy over the answered items follows"
    )


def comparison_sentence(result: BfclResult) -> str:
    """The largest difference between our numbers and the published ones (or why none)."""
    comparison = result.comparison
    if not len(comparison):
        return (
            "<p>No result set names a <code>leaderboard_model</code>: no published numbers "
            "to compare.</p>"
        )
    return display.fill(
        "<p>Largest absolute difference over {n} published numbers: {d:.5f} (published values "
        "are rounded to 0.01%, so a difference up to 0.00005 is rounding).</p>",
        n=int(comparison["published"].notna().sum()),
        d=float(comparison["difference"].abs().max()),
    )


def injected_sentence(result: BfclResult) -> str:
    """How many simulated answers got a verdict their injected mistake does not imply."""
    truth = result.truth
    if truth is None:
        return "<p>No simulated system in this study: nothing to check against a known truth.</p>"
    unexpected = truth[~truth["as_expected"] & (truth["verdict"] != CALL_FAILED)]
    return display.fill(
        "<p>{n} of {total} simulated answers got a verdict other than the injected mistake "
        "implies (simulated API failures aside).</p>",
        n=int(unexpected["items"].sum()),
        total=int(truth["items"].sum()),
    )


def result_files_caption(result: BfclResult) -> str:
    """Caption of the table of official result files written."""
    files = result.result_files
    total = 0 if files is None else int(files["result files"].sum())
    return (
        f"Official result files written ({total}; one per category, BFCL_v4_<category>_result.json)"
    )


def calls_sentence(result: BfclResult) -> str:
    """Failed model calls of the live systems (or that no system was asked)."""
    if result.result_files is None:
        return "<p>No live system: nothing was generated, no result file written.</p>"
    failed = int((result.verdicts["error_type"] == CALL_FAILED).sum())
    return display.fill(
        "<p>{n} model calls failed (counted wrong and left out of the result files).</p>",
        n=failed,
    )


# --------------------------------------------------------------------------- tables


def items_table(result: BfclResult) -> pd.DataFrame:
    """Items studied per category and its size in BFCL v4 (:func:`~.metrics.items_per_category`)."""
    return metrics.items_per_category(result.items)


SOURCES_CAPTION = (
    "Systems and where their outputs come from (result sets' model outputs remain subject "
    "to their provider's terms)"
)
"""Caption of ``result.sources``."""


def systems_table(result: BfclResult) -> pd.DataFrame:
    """Per system, all studied categories pooled: coverage, failed calls, both accuracies."""
    level = result.params.confidence_level
    scored = metrics.system_accuracy(result.verdicts, result.params.categories, level=level)
    return display.fold_intervals(scored, ["accuracy"])


def accuracy_table(result: BfclResult) -> pd.DataFrame:
    """Categories × systems, cells ``estimate [low, high]`` (:func:`~.metrics.accuracy_text`)."""
    return metrics.accuracy_text(result.summary.categories, result.order)


def overall_table(result: BfclResult) -> pd.DataFrame:
    """The leaderboard aggregate per system (:func:`~.metrics.overall_by_system`)."""
    return metrics.overall_by_system(result.summary.overall, result.order)


OVERALL_CAPTION = (
    "Aggregate accuracy per system (leaderboard formula over all items; fractions); missing = "
    "categories counted as 0"
)
"""Caption of :func:`overall_table` (shown with 4 digits)."""


def comparison_table(result: BfclResult) -> pd.DataFrame:
    """``result.comparison`` with the differences rounded to 5 decimals (no ``-0.0``)."""
    comparison = result.comparison
    return comparison.assign(difference=comparison["difference"].round(5) + 0.0)


COMPARISON_CAPTION = "Our numbers vs the published score tables (fractions)"
"""Caption of :func:`comparison_table` (shown with 5 digits)."""


def error_table(result: BfclResult) -> pd.DataFrame:
    """Failed items by official error type (rows) and system (columns), as counts."""
    errors, _ = metrics.error_shares(result.verdicts, result.order)
    return errors.rename_axis(columns=None).reset_index()


ERROR_CAPTION = "Failed items by official error type (counts, all categories pooled)"
"""Caption of :func:`error_table`."""


def top_errors_table(result: BfclResult) -> pd.DataFrame:
    """The most frequent error type of each system in each category."""
    return result.summary.errors.groupby(["system", "test_category"], sort=False).head(1)


TOP_ERRORS_CAPTION = (
    "Most frequent error type per system and category (share = of the category's items)"
)
"""Caption of :func:`top_errors_table`."""


def param_type_table(result: BfclResult) -> pd.DataFrame:
    """Parameter accuracy by declared type (:func:`~.metrics.param_accuracy`)."""
    return metrics.param_accuracy(result.verdicts, by=("type",))


PARAM_TYPE_CAPTION = "Parameter accuracy by declared type"
"""Caption of :func:`param_type_table`."""


def wrong_params_table(result: BfclResult) -> pd.DataFrame:
    """The parameters most often wrong per system (:func:`~.metrics.most_wrong_params`)."""
    return metrics.most_wrong_params(result.summary.params)


WRONG_PARAMS_CAPTION = "Most often wrong parameters per system (expected at least 3 times)"
"""Caption of :func:`wrong_params_table`."""

TRUTH_NOTICE = (
    "SIMULATED — these rows compare the simulator's hidden truth with the checker's verdicts."
)
"""The banner over ``result.truth`` (shown with :func:`evalbench.display.notice`)."""

TRUTH_CAPTION = "Injected mistake × the checker's verdict (items, simulated systems pooled)"
"""Caption of ``result.truth``."""


# --------------------------------------------------------------------------- beyond single-turn


def coverage_v4_table(result: BfclResult) -> pd.DataFrame:
    """Every BFCL v4 category: its items, how many this study scores, and why any is not."""
    studied = pd.Series([it.category for it in result.items], dtype=str).value_counts()
    rows: list[tuple[str, int | None, int, str]] = [
        (cat, size, int(studied.get(cat, 0)), "" if cat in studied else "not in this study")
        for cat, size in CATEGORY_SIZES.items()
    ]
    if result.params.systems and "memory_vector" in studied:  # result sets only
        rows = [(*row[:3], VECTOR_REFUSAL) if row[0] == "memory_vector" else row for row in rows]
    cases = 0 if result.formats is None else result.formats["id"].nunique()
    why = "" if cases else "not in this study (asked of live systems in prompt mode)"
    rows.append((FORMAT_SENSITIVITY, FORMAT_SENSITIVITY_SIZE * len(CONFIGS), cases, why))
    frame = pd.DataFrame(rows, columns=["test_category", "in BFCL v4", "studied", "not scored"])
    return frame.astype({"in BFCL v4": "Int64"})


COVERAGE_V4_CAPTION = (
    "BFCL v4 categories: items, items studied here, and why a category is not scored"
)
"""Caption of :func:`coverage_v4_table`."""


def official_tables_table(result: BfclResult) -> pd.DataFrame:
    """``result.tables`` for display: percentages with two decimals, N/A where not shown."""
    tables = result.tables
    if tables is None:
        return pd.DataFrame(columns=["system", "table", "column", "ours", "published", "equal"])

    def pct(value: Any) -> str:
        return "N/A" if value is None or pd.isna(value) else f"{value * 100:.2f}%"

    shown = tables.assign(ours=tables["ours"].map(pct), published=tables["published"].map(pct))
    return shown[["system", "table", "column", "ours", "published", "equal", "reason"]]


OFFICIAL_TABLES_CAPTION = (
    "The official score tables (score/data_*.csv), column by column: our value beside the "
    "published one (equal = same to the published two decimals)"
)
"""Caption of :func:`official_tables_table`."""


def official_tables_sentence(result: BfclResult) -> str:
    """How many published columns are reproduced, and which cannot be (memory not scored)."""
    tables = result.tables
    if tables is None:
        return (
            "<p>No result set names a <code>leaderboard_model</code>: no published table to "
            "compare.</p>"
        )
    memory = tables["reason"] != ""
    if not memory.any():
        return display.fill(
            "<p>{equal} of the {n} published columns are reproduced exactly.</p>",
            equal=int(tables["equal"].sum()), n=len(tables),
        )  # fmt: skip
    equal = int(tables.loc[~memory, "equal"].sum())
    columns = ", ".join(
        dict.fromkeys(tables.loc[memory, "table"] + " " + tables.loc[memory, "column"])
    )
    return display.fill(
        "<p>{equal} of the {n} published columns evalbench can compute are reproduced "
        "exactly. {k} cannot be without the memory categories, which this study did not "
        "score for that system: {columns}.</p>",
        equal=equal,
        n=int((~memory).sum()),
        k=int(memory.sum()),
        columns=columns,
    )


def multi_turn_sentence(result: BfclResult) -> str:
    """Multi-turn items scored per system, or why none was."""
    details = result.multi_turn
    if details is None:
        return (
            "<p>No multi-turn item was scored in this study (<code>categories</code> "
            "names none, or no system has multi-turn results).</p>"
        )
    per_system = details.groupby("system", sort=False)["valid"].agg(["sum", "size"])
    parts = [
        display.fill("{s}: {k} of {n} correct", s=s, k=int(r["sum"]), n=int(r["size"]))
        for s, r in per_system.iterrows()
    ]
    return "<p>Multi-turn items replayed and checked — " + "; ".join(parts) + ".</p>"


def memory_sentence(result: BfclResult) -> str:
    """Memory questions checked per system, what the corrected whole-word rule would
    change, and why live systems are not asked ``memory_vector``; or why none was checked."""
    verdicts = result.verdicts
    memory = verdicts[verdicts["test_category"].isin(MEMORY)]
    if memory.empty:
        return (
            "<p>No memory question was scored in this study (<code>categories</code> names "
            "none, or no system has memory results).</p>"
        )
    per_system = memory.groupby("system", sort=False)["valid"].agg(["sum", "size"])
    parts = [
        display.fill("{s}: {k} of {n} correct", s=s, k=int(r["sum"]), n=int(r["size"]))
        for s, r in per_system.iterrows()
    ]
    changed = memory[memory["valid_corrected"].notna()]
    changed = changed[changed["valid_corrected"].astype(bool) != changed["valid"]]
    text = "<p>Memory questions checked — " + "; ".join(parts) + ". " + display.fill(
        "With the corrected whole-word rule ({rule}) {k} verdict(s) would change{ids}.",
        rule=CORRECTED, k=len(changed),
        ids=f": {', '.join(changed['id'].head(5))}" if len(changed) else "",
    )  # fmt: skip
    held = result.memory_prereqs
    if held is not None:
        failed = held[held["error"].notna()]
        text += " " + display.fill(
            "Before the questions, live systems held {n} prerequisite conversations "
            "({k} failed: the memory a failed one would have left is not kept, and the next "
            "one starts from the memory before it, as officially).",
            n=len(held), k=len(failed),
        )  # fmt: skip
    if result.params.systems and "memory_vector" in set(memory["test_category"]):
        text += " " + display.fill("{why}.", why=VECTOR_REFUSAL)
    return text + "</p>"


def multi_turn_failures_table(result: BfclResult) -> pd.DataFrame:
    """Official multi-turn error types per system (:func:`~.multi_turn_metrics.failure_table`)."""
    if result.multi_turn is None:
        return pd.DataFrame()
    table = multi_turn_metrics.failure_table(
        result.multi_turn, level=result.params.confidence_level
    )
    return display.fold_intervals(table, ["share"])


MULTI_TURN_FAILURES_CAPTION = (
    "Multi-turn failures by official error type: items, share of the system's multi-turn "
    "items [Wilson interval], median turn (0-based) of the first failure"
)
"""Caption of :func:`multi_turn_failures_table`."""


def behaviour_table(result: BfclResult) -> pd.DataFrame:
    """How often each behaviour happens (:func:`~.multi_turn_metrics.behaviour_table`)."""
    if result.multi_turn is None:
        return pd.DataFrame()
    table = multi_turn_metrics.behaviour_table(
        result.multi_turn, level=result.params.confidence_level
    )
    return display.fold_intervals(table, ["share"])


BEHAVIOUR_CAPTION = (
    "Beyond the official score: share of multi-turn items with each behaviour [Wilson "
    "interval]; n = items it applies to (held-out rows: items that reached a held-out turn)"
)
"""Caption of :func:`behaviour_table`."""


def efficiency_table(result: BfclResult) -> pd.DataFrame:
    """Calls per ground-truth call (:func:`~.multi_turn_metrics.efficiency_table`)."""
    if result.multi_turn is None:
        return pd.DataFrame()
    params = result.params
    table = multi_turn_metrics.efficiency_table(
        result.multi_turn, seed=params.seed, level=params.confidence_level
    )
    return display.fold_intervals(table, ["calls_per_truth_call"])


EFFICIENCY_CAPTION = (
    "Efficiency: calls executed per ground-truth call (1 = as few as the ground truth), over "
    "the turns that ran [seeded bootstrap interval over items]"
)
"""Caption of :func:`efficiency_table`."""


def backend_table(result: BfclResult) -> pd.DataFrame:
    """Accuracy per backend class (:func:`~.multi_turn_metrics.backend_table`)."""
    if result.multi_turn is None:
        return pd.DataFrame()
    table = multi_turn_metrics.backend_table(
        result.multi_turn, level=result.params.confidence_level
    )
    return display.fold_intervals(table, ["accuracy"])


BACKEND_CAPTION = (
    "Multi-turn accuracy per backend class [Wilson interval] (an item counts for every class "
    "it involves)"
)
"""Caption of :func:`backend_table`."""


def multi_turn_examples(result: BfclResult) -> list[dict[str, Any]]:
    """One failure per system and multi-turn error type
    (:func:`~.multi_turn_metrics.multi_turn_examples`)."""
    if result.multi_turn is None:
        return []
    items = [it for it in result.items if isinstance(it, MultiTurnItem)]
    return multi_turn_metrics.multi_turn_examples(
        result.multi_turn, result.verdicts, items,
        per_system=result.params.examples_per_system, seed=result.params.seed,
    )  # fmt: skip


def multi_turn_truth_table(result: BfclResult) -> pd.DataFrame:
    """Simulated multi-turn agents: injected mistake × official outcome (counts)."""
    if result.multi_turn is None:
        return pd.DataFrame()
    return multi_turn_metrics.injected_outcomes(result.multi_turn)


MULTI_TURN_TRUTH_CAPTION = (
    "Simulated multi-turn agents: the mistake injected (none = followed the ground truth) × "
    "the official outcome (items)"
)
"""Caption of :func:`multi_turn_truth_table`."""


def multi_turn_truth_sentence(result: BfclResult) -> str:
    """How many simulated multi-turn mistakes the official check lets pass."""
    table = multi_turn_truth_table(result)
    if not len(table):
        return "<p>No simulated multi-turn agent in this study.</p>"
    wrong = table[table["injected"] != "none"]
    passed = int(wrong["correct"].sum()) if "correct" in wrong else 0
    return display.fill(
        "<p>{passed} of {n} conversations with an injected mistake still pass the official "
        "check (an extra or reordered call that changes neither the state nor the expected "
        "results, or a guess in a held-out turn, is not penalized).</p>",
        passed=passed,
        n=int(wrong["items"].sum()),
    )


# --------------------------------------------------------------------------- format sensitivity


def format_sentence(result: BfclResult) -> str:
    """Per system asked the formats: its best and worst format, the largest difference and
    the standard deviation across formats beside what shuffling gives (or why none)."""
    if result.formats is None and FORMAT_SENSITIVITY in result.params.categories:
        return (
            "<p>Format sensitivity was not asked: no live system is asked in prompt mode (the "
            "formats are a prompting model's system prompts).</p>"
        )
    if result.formats is None:
        return (
            "<p>Format sensitivity was not studied: add <code>format_sensitivity</code> to "
            "<code>categories</code> (asked of live systems in prompt mode; result files of "
            "it are not read).</p>"
        )
    params = result.params
    spread = metrics.format_spread(result.formats, seed=params.seed, level=params.confidence_level,
                                   rounds=params.bootstrap_rounds)  # fmt: skip
    parts = [_spread_sentence(row, result) for row in spread.to_dict("records")]
    return "<p>" + " ".join(parts) + "</p>"


def _spread_sentence(row: dict[str, Any], result: BfclResult) -> str:
    simulated = row["system"] in result.simulated
    text = display.fill(
        "{s} ({kind}, {n} items × {k} formats): from {lo:.1%} ({worst}) to {hi:.1%} ({best}); "
        "largest difference {d:.1%}, standard deviation {sd:.1%}; with no format effect these "
        "items would give a largest difference of {null:.1%} and a standard deviation of "
        "{nsd:.1%} on average (permutation p = {p:.3f} for the largest difference).",
        s=row["system"], kind=system_kind(result, row["system"]), n=row["items"],
        k=row["formats"], lo=row["worst_accuracy"], worst=row["worst"], hi=row["best_accuracy"],
        best=row["best"], d=row["max_delta"], sd=row["std"], null=row["null_max_delta"],
        nsd=row["null_std"], p=row["p_value"],
    )  # fmt: skip
    if simulated:
        text += (
            " A simulated system has no format preference: its spread is what sampling its "
            "mistakes alone gives."
        )
    return text


def format_table(result: BfclResult) -> pd.DataFrame:
    """Formats × systems, cells ``accuracy [low, high]`` (Wilson), in the official order."""
    if result.formats is None or not len(result.formats):
        return pd.DataFrame(columns=["format"])
    table = metrics.format_accuracy(result.formats, level=result.params.confidence_level)
    table = display.fold_intervals(table, ["accuracy"])
    wide = table.pivot(index="format", columns="system", values="accuracy")
    wide = wide.loc[list(dict.fromkeys(table["format"])), list(dict.fromkeys(table["system"]))]
    return wide.reset_index().rename_axis(columns=None)


FORMAT_CAPTION = (
    "Accuracy per prompt format (return format · tool-call tags · function-doc format; the "
    "last two: the default in markdown and in the experimental wording) [Wilson interval]"
)
"""Caption of :func:`format_table`."""


def format_spread_table(result: BfclResult) -> pd.DataFrame:
    """Per system: worst and best format, largest difference and standard deviation across
    formats beside what shuffling gives (:func:`~.metrics.format_spread`)."""
    if result.formats is None or not len(result.formats):
        return pd.DataFrame()
    params = result.params
    spread = metrics.format_spread(result.formats, seed=params.seed, level=params.confidence_level,
                                   rounds=params.bootstrap_rounds)  # fmt: skip
    return spread


FORMAT_SPREAD_CAPTION = (
    "How much the format moves accuracy: largest difference between two formats (the "
    "leaderboard's Max Delta) and standard deviation across formats (its Std); null_max_delta "
    "and null_std: their means with each item's answers shuffled across formats (no format "
    "effect: what item noise alone gives on these items), null_low-null_high: the central "
    "range of the shuffled largest differences (the confidence level), p_value: how often the "
    "shuffled "
    "largest difference reaches the observed one. No bootstrap interval: resampling items "
    "inflates a largest difference further, so its interval would not cover the truth"
)
"""Caption of :func:`format_spread_table`."""
