"""BFCL summaries over the verdict frame (pure): accuracy per category, the leaderboard's
aggregation, error types, per-parameter accuracy, the simulator's truth vs the checker.

The verdict frame has one row per system and item (columns of :class:`~.scoring.Verdict`).
An item whose model call failed (:data:`~.schema.CALL_FAILED`) counts as wrong, as on the
leaderboard; the tables also give accuracy over the answered items beside it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from evalbench.measured import Measured, failed_call, measured
from evalbench.stats import DEFAULT_LEVEL, wilson_interval

from .checker import ParamOutcome
from .decode import DECODER_FAILED
from .format_sensitivity import CONFIGS, label
from .leaderboard import AGGREGATES, Score, aggregates
from .schema import (
    CALL_FAILED,
    CATEGORIES,
    CATEGORY_SIZES,
    JAVA_JS,
    MULTI_TURN,
    PYTHON,
    AnyItem,
    Item,
)
from .scoring import question_messages

EXAMPLE_FIELDS = [
    "system", "test_category", "id", "error_type", "question", "expected", "decoded", "raw",
    "error",
]  # fmt: skip
"""The fields of a failure example (:func:`failure_examples`), in display order."""


class Summary(NamedTuple):
    """The tables :func:`summarize` computes from a verdict frame."""

    categories: pd.DataFrame
    overall: pd.DataFrame
    errors: pd.DataFrame
    params: pd.DataFrame
    systems: pd.DataFrame


# --------------------------------------------------------------------------- accuracy


def category_table(verdicts: pd.DataFrame, *, level: float = DEFAULT_LEVEL) -> pd.DataFrame:
    """Accuracy per system and category with Wilson intervals, and over answered items.

    Returns:
        Columns ``system, test_category, n, correct, accuracy, ci_low, ci_high, answered,
        accuracy_answered``: ``answered`` leaves out items whose model call failed (NaN
        accuracy when none was answered).
    """
    answered_by = (verdicts["error_type"] != CALL_FAILED).groupby(
        [verdicts["system"], verdicts["test_category"]], sort=False
    )
    answered_counts = answered_by.sum()
    rows = []
    for (system, cat), valid in verdicts.groupby(["system", "test_category"], sort=False)["valid"]:
        ci = wilson_interval(int(valid.sum()), int(valid.size), level)
        answered = int(answered_counts[(system, cat)])
        rows.append(
            {
                "system": system,
                "test_category": cat,
                "n": int(valid.size),
                "correct": int(valid.sum()),
                "accuracy": ci.estimate,
                "ci_low": ci.low,
                "ci_high": ci.high,
                "answered": answered,
                "accuracy_answered": int(valid.sum()) / answered if answered else float("nan"),
            }
        )
    columns = ["system", "test_category", "n", "correct", "accuracy", "ci_low", "ci_high",
               "answered", "accuracy_answered"]  # fmt: skip
    return _sort_categories(pd.DataFrame(rows, columns=columns))


def _sort_categories(frame: pd.DataFrame) -> pd.DataFrame:
    order = {cat: i for i, cat in enumerate(CATEGORIES)}
    key = frame["test_category"].map(lambda c: order.get(c, len(order)))
    return (
        frame.assign(_order=key)
        .sort_values(["system", "_order"], kind="stable")
        .drop(columns="_order")
        .reset_index(drop=True)
    )


def overall_table(categories: pd.DataFrame) -> pd.DataFrame:
    """The leaderboard's aggregate accuracies per system (:func:`~.leaderboard.aggregates`:
    ``generate_leaderboard_csv`` of ``bfcl_eval/eval_checker/eval_runner_helper.py``,
    bfcl-eval 2026.3.23; checked against the published glyphh-ada-1.1 score CSVs).

    As officially, a category with no score counts as accuracy 0 (with its full item count
    in the live section's weighted mean); such categories are listed in ``missing`` (the
    leaderboard shows N/A for the sub-scores that contain them). Scores of categories not
    studied may be added to ``categories`` by hand (``extra_categories`` of :func:`summarize`).

    Args:
        categories: columns ``system, test_category, accuracy`` and optionally ``n`` (item
            counts; default the category's size in BFCL v4).

    Returns:
        One row per system: ``non_live, live, irrelevance, relevance, multi_turn, agentic,
        overall, missing``.
    """
    rows = []
    for system, group in categories.groupby("system", sort=False):
        sizes = group["test_category"].map(CATEGORY_SIZES)
        n = (group["n"].fillna(sizes) if "n" in group else sizes).fillna(0)
        scores = {
            str(c): Score(float(a), int(k))
            for c, a, k in zip(group["test_category"], group["accuracy"], n, strict=True)
        }
        rows.append({"system": system, **aggregates(scores)})
    return pd.DataFrame(rows, columns=["system", *AGGREGATES, "missing"])


def error_table(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Failures per system, category and official error type.

    Returns:
        Columns ``system, test_category, error_type, count, share`` (share of the category's
        items), most frequent first within each system and category.
    """
    sizes = verdicts.groupby(["system", "test_category"], sort=False).size().rename("items")
    failed = verdicts[~verdicts["valid"].astype(bool)]
    counts = failed.groupby(
        ["system", "test_category", "error_type"], sort=False, dropna=False
    ).size()
    frame = counts.rename("count").reset_index().join(sizes, on=["system", "test_category"])
    frame["share"] = frame["count"] / frame["items"]
    frame = frame.drop(columns="items").sort_values("count", ascending=False, kind="stable")
    return _sort_categories(frame)


def param_table(verdicts: pd.DataFrame) -> pd.DataFrame:
    """One row per expected parameter of every scored item (from the checker's details).

    Returns:
        Columns ``system, test_category, id, function, param, type, called, correct``.
    """
    rows = [
        {"system": v.system, "test_category": v.test_category, "id": v.id, **p}
        for v in verdicts.itertuples(index=False)
        for p in v.params
    ]
    columns = ["system", "test_category", "id", *ParamOutcome._fields]
    return pd.DataFrame(rows, columns=columns)


def param_accuracy(
    verdicts: pd.DataFrame, by: Sequence[str] = ("function", "param")
) -> pd.DataFrame:
    """Per-parameter accuracy: the share of items where the parameter was right.

    Args:
        verdicts: the verdict frame.
        by: grouping columns of :func:`param_table` besides ``system`` (e.g. ``("type",)``).

    Returns:
        Columns ``system, *by, n, correct, accuracy, called, accuracy_when_called`` (the last
        counts only items where the expected function was called).
    """
    table = param_table(verdicts)
    keys = ["system", *by]
    grouped = (
        table.groupby(keys, sort=False)
        .agg(n=("correct", "size"), correct=("correct", "sum"), called=("called", "sum"))
        .reset_index()
    )
    grouped["accuracy"] = grouped["correct"] / grouped["n"]
    grouped["accuracy_when_called"] = grouped["correct"] / grouped["called"].where(
        grouped["called"] > 0
    )
    return grouped[[*keys, "n", "correct", "accuracy", "called", "accuracy_when_called"]]


def systems_table(categories: pd.DataFrame) -> pd.DataFrame:
    """Systems × categories accuracy (categories in leaderboard order)."""
    table = categories.pivot(index="system", columns="test_category", values="accuracy")
    ordered = [c for c in CATEGORIES if c in table.columns]
    return table[ordered + [c for c in table.columns if c not in ordered]]


def summarize(
    verdicts: pd.DataFrame,
    *,
    level: float = DEFAULT_LEVEL,
    extra_categories: pd.DataFrame | None = None,
) -> Summary:
    """All BFCL tables from a verdict frame (pure).

    Args:
        verdicts: rows of :class:`~.scoring.Verdict` (:func:`~.scoring.score_results`; several
            systems).
        level: confidence level of the Wilson intervals.
        extra_categories: scores of categories not run here (``system, test_category,
            accuracy[, n]``), included in the aggregates only.
    """
    categories = category_table(verdicts, level=level)
    combined = (
        categories
        if extra_categories is None
        else pd.concat([categories, extra_categories], ignore_index=True)
    )
    return Summary(
        categories=categories,
        overall=overall_table(combined),
        errors=error_table(verdicts),
        params=param_accuracy(verdicts),
        systems=systems_table(categories),
    )


def system_accuracy(
    verdicts: pd.DataFrame, categories: Sequence[str], *, level: float = DEFAULT_LEVEL
) -> pd.DataFrame:
    """Per system, all studied categories pooled: coverage, failed calls, accuracy over all
    items (Wilson interval) and over the answered items.

    Returns:
        :func:`coverage_table` plus ``failed calls, accuracy, accuracy_low, accuracy_high,
        accuracy_answered`` (NaN when no call was answered).
    """
    rows = []
    for _, group in verdicts.groupby("system", sort=False):
        correct, n = int(group["valid"].sum()), len(group)
        failed = int((group["error_type"] == CALL_FAILED).sum())
        ci = wilson_interval(correct, n, level)
        answered = correct / (n - failed) if n > failed else float("nan")
        rows.append((failed, ci.estimate, ci.low, ci.high, answered))
    columns = ["failed calls", "accuracy", "accuracy_low", "accuracy_high", "accuracy_answered"]
    extra = pd.DataFrame(rows, columns=columns)
    return pd.concat([coverage_table(verdicts, categories), extra], axis=1)


NO_CALL_WANTED = frozenset({"irrelevance", "live_irrelevance"})
"""Categories whose right answer calls no function."""


def silent_tools(verdicts: pd.DataFrame) -> dict[str, int]:
    """Systems asked in tools mode none of whose answers called a function, though some
    items wanted a call: system -> such answers (failed calls and the irrelevance and
    multi-turn categories aside). The endpoint likely left the tools out of the prompt
    (llama-cpp-python's ``chatml-function-calling`` does without ``tool_choice``, its
    default format always), or the model cannot call them.

    A tools-mode answer with calls is the official FC result ``[{name: args}]`` (a list);
    one without is its text.
    """
    wanted = verdicts[
        (verdicts["mode"] == "tools")
        & (verdicts["error_type"] != CALL_FAILED)
        & ~verdicts["test_category"].isin(NO_CALL_WANTED)
        & ~verdicts["test_category"].str.startswith("multi_turn")
    ]
    called = wanted["raw"].map(lambda raw: isinstance(raw, list))
    counts = called.groupby(wanted["system"], sort=False).agg(["sum", "size"])
    return {str(name): int(row["size"]) for name, row in counts.iterrows() if not row["sum"]}


def coverage_table(verdicts: pd.DataFrame, categories: Sequence[str]) -> pd.DataFrame:
    """Per system: items scored, categories scored and the studied categories not submitted."""
    rows = []
    for system, group in verdicts.groupby("system", sort=False):
        scored = set(group["test_category"])
        missing = [c for c in categories if c not in scored]
        rows.append(
            (system, str(group["mode"].iloc[0]), len(group), len(scored), ", ".join(missing))
        )
    return pd.DataFrame(rows, columns=["system", "mode", "items", "categories", "not submitted"])


def items_per_category(items: Iterable[AnyItem]) -> pd.DataFrame:
    """Items studied per category beside the category's size in BFCL v4."""
    counts = pd.Series([it.category for it in items], dtype=str).value_counts(sort=False)
    counts = counts.rename_axis("test_category").reset_index(name="items")
    counts["in BFCL v4"] = counts["test_category"].map(CATEGORY_SIZES)
    return counts


def accuracy_matrix(
    categories: pd.DataFrame, order: Sequence[str] | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Systems × categories accuracy and matching annotations ``acc`` / ``[low, high]``.

    Args:
        categories: :func:`category_table` output.
        order: system order of the rows (default: alphabetical).

    Returns:
        (values, labels): two frames of the same shape; labels are "" where not scored.
    """
    values = systems_table(categories)
    if order is not None:
        values = values.loc[[s for s in order if s in values.index]]
    labels = pd.DataFrame("", index=values.index, columns=values.columns)
    for row in categories.itertuples(index=False):
        labels.loc[row.system, row.test_category] = (
            f"{row.accuracy:.2f}\n[{row.ci_low:.2f}, {row.ci_high:.2f}]"
        )
    return values, labels


def accuracy_text(categories: pd.DataFrame, order: Sequence[str]) -> pd.DataFrame:
    """Categories × systems, each cell ``estimate [low, high]`` (3 decimals).

    A cell where some calls failed adds the accuracy over the answered items (``· 0.789 of
    19 answered``); a system without results for a category shows "not submitted".

    Returns:
        Columns ``test_category, n`` (items in the category) and one per system of ``order``.
    """
    cells = {
        (row.test_category, row.system): _accuracy_cell(row)
        for row in categories.itertuples(index=False)
    }
    cats = [c for c in systems_table(categories).columns]
    wide = pd.DataFrame(
        {s: [cells.get((c, s), "not submitted") for c in cats] for s in order}, index=cats
    )
    wide.insert(0, "n", categories.groupby("test_category")["n"].max().reindex(cats))
    return wide.rename_axis("test_category").reset_index()


def _accuracy_cell(row: Any) -> str:
    text = f"{row.accuracy:.3f} [{row.ci_low:.3f}, {row.ci_high:.3f}]"
    if row.answered < row.n:
        answered = "—" if row.answered == 0 else f"{row.accuracy_answered:.3f}"
        text += f" · {answered} of {row.answered} answered"
    return text


# --------------------------------------------------------------------------- published scores


def compare_with_published(
    summary: Summary, published: Mapping[str, tuple[pd.Series, Mapping[str, float]]]
) -> pd.DataFrame:
    """Our numbers beside the published ones.

    Args:
        summary: :func:`summarize` output.
        published: system -> (published accuracy per category, indexed by category;
            published aggregates keyed like :func:`overall_table`'s columns).

    Returns:
        Columns ``system, metric, ours, published, difference`` (fractions): every category
        we score, then the published aggregates.
    """
    rows = []
    for system, (by_category, published_aggregates) in published.items():
        ours = summary.categories[summary.categories["system"] == system]
        for cat, acc in zip(ours["test_category"], ours["accuracy"], strict=True):
            rows.append((system, cat, float(acc), float(by_category.get(cat, float("nan")))))
        overall = summary.overall.set_index("system").loc[system]
        for key, value in published_aggregates.items():
            rows.append((system, key, float(overall[key]), value))
    frame = pd.DataFrame(rows, columns=["system", "metric", "ours", "published"])
    # Rounded so float noise does not print as -0.0000; published values have 4 decimals.
    return frame.assign(difference=(frame["ours"] - frame["published"]).round(9) + 0.0)


def overall_by_system(overall: pd.DataFrame, order: Sequence[str]) -> pd.DataFrame:
    """:func:`overall_table` in ``order``, the missing categories joined as text."""
    shown = overall.set_index("system").loc[list(order)].reset_index()
    shown["missing"] = shown["missing"].map(", ".join).replace("", "—")
    return shown


# --------------------------------------------------------------------------- errors


def error_matrix(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Failures per official error type (rows) and system (columns), all categories pooled."""
    failed = verdicts[~verdicts["valid"].astype(bool)]
    table = pd.crosstab(failed["error_type"].fillna("(none)"), failed["system"])
    order = table.sum(axis=1).sort_values(ascending=False).index
    return table.loc[order]


def error_shares(verdicts: pd.DataFrame, order: Sequence[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`error_matrix` with systems in ``order``, and each system's shares of it."""
    errors = error_matrix(verdicts)
    errors = errors[[name for name in order if name in errors.columns]]
    return errors, errors / errors.sum()


def most_wrong_params(params: pd.DataFrame, *, per_system: int = 5, min_n: int = 3) -> pd.DataFrame:
    """The parameters most often wrong per system (expected at least ``min_n`` times).

    Args:
        params: :func:`param_accuracy` output (by function and parameter).
        per_system: rows kept per system.
        min_n: the least number of items a parameter must be expected in.
    """
    table = params.assign(failed=params["n"] - params["correct"])
    top = (
        table[table["n"] >= min_n]
        .sort_values("failed", ascending=False)
        .groupby("system", sort=False)
        .head(per_system)
    )
    return top.sort_values(["system", "failed"], ascending=[True, False])


# --------------------------------------------------------------------------- simulated truth


def injected_vs_detected(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Simulated systems: how the checker judged each injected mistake.

    Returns:
        Columns ``injected, verdict, items, as_expected``: the verdict is the official error
        type (``valid`` for a correct verdict); ``as_expected`` says whether it is one
        :func:`expected_error_types` allows (a failed call never is).
    """
    sim = verdicts[verdicts["injected"].notna()]
    valid = sim["valid"].astype(bool)
    verdict = sim["error_type"].where(~valid, "valid").fillna("(none)")
    counts = (
        pd.DataFrame(
            {"injected": sim["injected"], "verdict": verdict, "category": sim["test_category"]}
        )
        .groupby(["injected", "verdict", "category"], sort=True)
        .size()
        .rename("items")
        .reset_index()
    )
    counts["as_expected"] = [
        _as_expected(cat, mistake, v)
        for cat, mistake, v in zip(
            counts["category"], counts["injected"], counts["verdict"], strict=True
        )
    ]
    return (
        counts.groupby(["injected", "verdict", "as_expected"], sort=True)["items"]
        .sum()
        .reset_index()
    )


def _as_expected(category: str, mistake: str, verdict: str) -> bool:
    allowed = expected_error_types(category, mistake)
    return (None in allowed) if verdict == "valid" else verdict in allowed


def expected_error_types(category: str, mistake: str) -> frozenset[str | None]:
    """The official error types the checker should give an injected mistake (``None`` = valid).

    Used to check the simulator against the checker; in parallel categories every call-level
    mistake surfaces as ``cannot_find_match`` (a dropped call as ``wrong_count``).
    """
    if mistake == "none":
        return frozenset({None})
    if category in ("irrelevance", "live_irrelevance"):
        # A malformed output is a (correct) abstention, as officially.
        return frozenset(
            {None} if mistake == "malformed" else {"irrelevance_error:decoder_success"}
        )
    if category == "live_relevance":
        return frozenset({"relevance_error:decoder_failed"})
    if mistake == "malformed":
        return frozenset({DECODER_FAILED})
    if "parallel" in category:
        if mistake == "dropped_call":
            return frozenset({"parallel_function_checker_no_order:wrong_count"})
        return frozenset({"parallel_function_checker_no_order:cannot_find_match"})
    return _SIMPLE_ERRORS[mistake]


_SIMPLE_ERRORS = {
    "wrong_value": frozenset(
        {
            "value_error:string",
            "value_error:others",
            "value_error:list/tuple",
            "value_error:dict_value",
            "value_error:dict_key",
        }
    ),
    "wrong_type": frozenset({"type_error:simple"}),
    "missing_required": frozenset({"simple_function_checker:missing_required"}),
    "extra_param": frozenset({"simple_function_checker:unexpected_param"}),
    "wrong_function": frozenset({"simple_function_checker:wrong_func_name"}),
}

# --------------------------------------------------------------------------- examples


def failure_examples(
    verdicts: pd.DataFrame, items: Sequence[AnyItem], *, per_system: int = 3, seed: int = 0
) -> list[dict[str, Any]]:
    """A few failures per system, one for each of its most frequent error types.

    Returns:
        Rows with ``system, test_category, id, error_type, question, expected, decoded, raw,
        error`` (untrusted text: show them escaped, e.g. with ``display.examples``).
    """
    by_id = {item.id: item for item in items if isinstance(item, Item)}
    failed = verdicts[~verdicts["valid"].astype(bool)]
    rows = []
    for _, group in failed.groupby("system", sort=False):
        types = group["error_type"].fillna("").value_counts().index[:per_system]
        for kind in types:
            pick = group[group["error_type"].fillna("") == kind].sample(1, random_state=seed)
            rows.append(_example(pick.iloc[0], by_id[pick.iloc[0]["id"]]))
    return rows


def _example(row: pd.Series, item: Item) -> dict[str, Any]:
    if item.category in ("irrelevance", "live_irrelevance"):
        expected = "no function call (the functions cannot answer this)"
    elif item.category == "live_relevance":
        expected = "at least one function call"
    else:
        expected = json.dumps(item.possible_answer, ensure_ascii=False)
    question = next(
        (m["content"] for m in reversed(question_messages(item)) if m["role"] == "user"), ""
    )
    decoded = row["decoded"]
    return {
        "system": row["system"],
        "test_category": row["test_category"],
        "id": row["id"],
        "error_type": row["error_type"],
        "question": question,
        "expected": expected,
        "decoded": "(decoding failed)"
        if decoded is None
        else json.dumps(decoded, ensure_ascii=False),
        "raw": row["raw"]
        if isinstance(row["raw"], str)
        else json.dumps(row["raw"], ensure_ascii=False),
        "error": row["error"],
    }


# --------------------------------------------------------------------------- format sensitivity


def format_accuracy(formats: pd.DataFrame, *, level: float = DEFAULT_LEVEL) -> pd.DataFrame:
    """Accuracy per system and prompt format, with Wilson intervals (formats in the official
    order; a failed call counts as wrong).

    Returns:
        Columns ``system, config, format`` (:func:`~.format_sensitivity.label`), ``n,
        correct, accuracy, accuracy_low, accuracy_high``.
    """
    order = {config: i for i, config in enumerate(CONFIGS)}
    rows = []
    for (system, config), valid in formats.groupby(["system", "config"], sort=False)["valid"]:
        ci = wilson_interval(int(valid.sum()), len(valid), level)
        rows.append((system, config, label(config), len(valid), int(valid.sum()), ci.estimate,
                     ci.low, ci.high))  # fmt: skip
    columns = ["system", "config", "format", "n", "correct", "accuracy", "accuracy_low",
               "accuracy_high"]  # fmt: skip
    frame = pd.DataFrame(rows, columns=columns)
    systems = list(dict.fromkeys(formats["system"]))
    keys = pd.DataFrame({"s": frame["system"].map(systems.index), "c": frame["config"].map(order)})
    return frame.loc[keys.sort_values(["s", "c"]).index].reset_index(drop=True)


def format_spread(
    formats: pd.DataFrame, *, seed: int = 0, level: float = DEFAULT_LEVEL, rounds: int = 1000
) -> pd.DataFrame:
    """Per system, how much the prompt format moves accuracy: the official max delta (best
    minus worst format) and standard deviation across formats (sample), beside what no
    format effect would give on the same items: their means when each item's answers are
    shuffled across formats (seeded), the central ``level`` range of the shuffled max delta,
    and the permutation p-value of the observed max delta.

    No bootstrap interval is given for the two: both grow with item noise (with few items a
    format-blind system shows a large spread), and resampling items adds more noise, so a
    percentile interval lies above the estimate and a bias-corrected one still misses a
    spread of 0 (tests/bfcl/test_format_sensitivity.py shows both). The shuffled columns are
    the yardstick; per format, accuracy has its Wilson interval (:func:`format_accuracy`).

    Returns:
        Columns ``system, items, formats, worst, worst_accuracy, best, best_accuracy,
        max_delta, std, null_max_delta, null_low, null_high, null_std, p_value``.
    """
    rows = []
    for index, (system, group) in enumerate(formats.groupby("system", sort=False)):
        table = group.pivot_table(index="item_id", columns="config", values="valid",
                                  aggfunc="first").astype(float)  # fmt: skip
        table = table[[c for c in CONFIGS if c in table.columns]]
        rng = np.random.default_rng([seed, index])
        spread = _spread(table.to_numpy(), list(table.columns), rng, level, rounds)
        rows.append({"system": system, "items": len(table), "formats": table.shape[1], **spread})
    return pd.DataFrame(rows)


def _spread(
    answers: np.ndarray, configs: list[str], rng: np.random.Generator, level: float, rounds: int
) -> dict[str, Any]:
    """The spread of one system's items × formats matrix of 0/1 verdicts."""
    acc = answers.mean(axis=0)
    shuffled = rng.permuted(np.broadcast_to(answers, (rounds, *answers.shape)), axis=2)
    shuffled_acc = shuffled.mean(axis=1)
    null = shuffled_acc.max(axis=1) - shuffled_acc.min(axis=1)
    observed = float(acc.max() - acc.min())
    return {
        "worst": label(configs[int(acc.argmin())]), "worst_accuracy": float(acc.min()),
        "best": label(configs[int(acc.argmax())]), "best_accuracy": float(acc.max()),
        "max_delta": observed, "std": float(acc.std(ddof=1)),
        "null_max_delta": float(null.mean()),
        "null_low": float(np.quantile(null, (1 - level) / 2)),
        "null_high": float(np.quantile(null, (1 + level) / 2)),
        "null_std": float(shuffled_acc.std(axis=1, ddof=1).mean()),
        "p_value": float((1 + (null >= observed - 1e-12).sum()) / (rounds + 1)),
    }  # fmt: skip


CALL_EXPECTED = frozenset(PYTHON + JAVA_JS + MULTI_TURN) - {"irrelevance", "live_irrelevance"}
"""Categories whose items a function-calling model answers with a call, and whose verdicts
record the decoded calls (web search is judged on its final text)."""
NEVER_CALLED = "no function call by this system in any item that needs one"
"""Why none of a system's items is measured when it never produced a call: an irrelevance
item it "passed" by not calling tests abstention, which a model that cannot call passes
every time (a model whose server never received the functions, too)."""


def made_call(decoded: Any) -> bool:
    """Whether a verdict's decoded output holds a call: single-turn ``[{name: args}]``, or
    multi-turn steps ``[{turn, step, calls}]`` with a call in some step."""
    if not isinstance(decoded, list) or not decoded:
        return False
    return any(not isinstance(c, dict) or "calls" not in c or bool(c["calls"]) for c in decoded)


def never_called(group: pd.DataFrame) -> bool:
    """Whether a system answered items that need a call (its call did not fail) and
    produced no call in any of them."""
    needs = group[group["test_category"].isin(CALL_EXPECTED) & (group["error_type"] != CALL_FAILED)]
    return bool(len(needs)) and not any(made_call(d) for d in needs["decoded"])


def measured_systems(verdicts: pd.DataFrame) -> list[Measured]:
    """Per system (in verdict order): items whose call did not fail; none when the system
    never produced a function call where one was needed (:data:`NEVER_CALLED`)."""
    out = []
    for system, group in verdicts.groupby("system", sort=False):
        silent = never_called(group)
        states = [
            failed_call(error) if kind == CALL_FAILED else (NEVER_CALLED if silent else None)
            for kind, error in zip(group["error_type"], group["error"], strict=True)
        ]
        out.append(measured(str(system), states, "item"))
    return out
