"""Multi-turn diagnostics beyond the official score (pure): what each system did, turn by turn.

None of this changes a verdict. Per system and item (:func:`multi_turn_detail`, from the
replay of :func:`~.multi_turn.check_multi_turn`):

- **efficiency**: calls the model executed vs the ground truth's calls (the minimum that
  reaches the expected state), repeated identical calls within a turn, calls whose result
  is an error;
- **call order**: turns where the model called two ground-truth functions in the opposite
  order of the ground truth (e.g. ``mv`` before the ``cd`` it depends on);
- **hold-out handling**: in the turns whose ground truth is empty (a function or a
  parameter is missing), did the model call anything (it guessed, or called the function
  it was not given) or make no call (it asked or declined, as intended);
- **per backend**: accuracy by the API classes an item involves.

The tables give each rate with a Wilson interval and each mean with a seeded bootstrap
interval.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from evalbench.stats import DEFAULT_LEVEL, wilson_interval

from .multi_turn import MultiTurnCheck
from .replay import ERROR_PREFIX
from .schema import MultiTurnItem

DETAIL_COLUMNS = [
    "system", "test_category", "id", "classes", "turns", "valid", "error_type", "failed_turn",
    "model_calls", "truth_calls", "repeated_calls", "error_results", "order_inversions",
    "holdout", "holdout_turns", "holdout_calls", "called_missing", "reason",
]  # fmt: skip
"""Columns of the per-item detail frame (:func:`multi_turn_detail` rows)."""


def multi_turn_detail(system: str, item: MultiTurnItem, check: MultiTurnCheck) -> dict[str, Any]:
    """One item's diagnostics from its replay (counts over the turns that ran)."""
    turns = [[[c.source for c in step] for step in steps] for steps in check.decoded or []]
    ran = len(check.trace)
    model_results = [r for t in check.trace[:ran] for step in t.model for r in step]
    holdout = [i for i, truth in enumerate(item.ground_truth) if not truth and i < ran]
    holdout_calls = [call for i in holdout for step in turns[i] for call in step]
    missing = {name for names in item.missed_function.values() for name in names}
    return {
        "system": system, "test_category": item.category, "id": item.id,
        "classes": "+".join(sorted(item.involved_classes)), "turns": len(item.ground_truth),
        "valid": check.valid, "error_type": check.error_type, "failed_turn": check.turn,
        "model_calls": len(model_results),
        "truth_calls": sum(len(t) for t in item.ground_truth[:ran]),
        "repeated_calls": sum(_repeats(turn) for turn in turns[:ran]),
        "error_results": sum(_is_error(r) for r in model_results),
        "order_inversions": sum(
            _inverted(item.ground_truth[i], turns[i]) for i in range(min(ran, len(turns)))
        ),
        "holdout": "function" if missing else "parameter" if holdout else "",
        "holdout_turns": len(holdout), "holdout_calls": len(holdout_calls),
        "called_missing": any(_name(call) in missing for call in holdout_calls),
        "reason": _reason(check),
    }  # fmt: skip


def _reason(check: MultiTurnCheck) -> str:
    """The official details in one line: differing attributes, or the first missing result."""
    details = check.details or {}
    if "differences" in details:
        return f"{details['class']}: {', '.join(details['differences'])} differ"
    missing = details.get("missing_items")
    if missing:
        more = f" (+{len(missing) - 1} more)" if len(missing) > 1 else ""
        return f"missing result {missing[0][:200]}{more}"
    return ""


def _name(source: str) -> str:
    return source.split("(", 1)[0].strip()


def _repeats(steps: list[list[str]]) -> int:
    calls = [call for step in steps for call in step]
    return len(calls) - len(set(calls))


def _is_error(result: str) -> bool:
    if result.startswith(ERROR_PREFIX):
        return True
    if not result.startswith("{"):
        return False
    try:
        parsed = json.loads(result)
    except ValueError:
        return False
    return isinstance(parsed, dict) and "error" in parsed


def _inverted(truth: list[str], steps: list[list[str]]) -> bool:
    """Whether two functions the ground truth calls in one order were first called in the
    other (both called, different names)."""
    first: dict[str, int] = {}
    for position, call in enumerate(c for step in steps for c in step):
        first.setdefault(_name(call), position)
    names = list(dict.fromkeys(_name(c) for c in truth))
    return any(
        a in first and b in first and first[b] < first[a]
        for i, a in enumerate(names)
        for b in names[i + 1 :]
    )


def multi_turn_examples(
    details: pd.DataFrame,
    verdicts: pd.DataFrame,
    items: Sequence[MultiTurnItem],
    *,
    per_system: int = 3,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """One failure per system and official error type (its most frequent first): the user's
    message of the turn that failed, the ground truth's calls there, the model's calls and
    the official reason (untrusted text: show it escaped)."""
    by_id = {item.id: item for item in items}
    decoded = {(r.system, r.id): r.decoded for r in verdicts.itertuples(index=False)}
    rows = []
    for system, group in details[~details["valid"].astype(bool)].groupby("system", sort=False):
        for kind in group["error_type"].value_counts().index[:per_system]:
            pick = group[group["error_type"] == kind].sample(1, random_state=seed).iloc[0]
            rows.append(_example(pick, by_id[pick["id"]], decoded.get((system, pick["id"]))))
    return rows


def _example(row: pd.Series, item: MultiTurnItem, steps: Any) -> dict[str, Any]:
    turn = None if pd.isna(row["failed_turn"]) else int(row["failed_turn"])
    asked = item.question[turn] if turn is not None else []
    calls = [c for s in steps or [] if s["turn"] == turn for c in s["calls"]]
    return {
        "system": row["system"], "test_category": row["test_category"], "id": row["id"],
        "error_type": row["error_type"], "turn": "—" if turn is None else turn,
        "user": " / ".join(m["content"] for m in asked) or "(no message: a held-out turn)",
        "expected calls": "; ".join(item.ground_truth[turn]) if turn is not None else "—",
        "model calls": "; ".join(calls) or "(none)", "reason": row["reason"],
    }  # fmt: skip


EXAMPLE_FIELDS = [
    "system", "test_category", "id", "error_type", "turn", "user", "expected calls",
    "model calls", "reason",
]  # fmt: skip
"""The fields of :func:`multi_turn_examples`, in display order."""


# --------------------------------------------------------------------------- tables


def _rate(successes: int, n: int, level: float, name: str) -> dict[str, Any]:
    ci = wilson_interval(successes, n, level)
    return {name: ci.estimate, f"{name}_low": ci.low, f"{name}_high": ci.high}


def behaviour_table(details: pd.DataFrame, *, level: float = DEFAULT_LEVEL) -> pd.DataFrame:
    """Per system: the share of items with each behaviour, with Wilson intervals.

    Rows per system and ``behaviour``: ``more calls than the ground truth``, ``a repeated
    call``, ``an error result``, ``an order inversion`` (over all items), and ``called in a
    held-out turn`` (over items that reached a held-out turn) and ``called the held-out
    function`` (over those whose held-out part is a function).
    """
    rows = []
    for system, group in details.groupby("system", sort=False):
        held = group[group["holdout_turns"] > 0]
        function = held[held["holdout"] == "function"]
        counts = {
            "more calls than the ground truth": group["model_calls"] > group["truth_calls"],
            "a repeated call": group["repeated_calls"] > 0,
            "an error result": group["error_results"] > 0,
            "an order inversion": group["order_inversions"] > 0,
            "called in a held-out turn": held["holdout_calls"] > 0,
            "called the held-out function": function["called_missing"].astype(bool),
        }
        for behaviour, mask in counts.items():
            rate = _rate(int(mask.sum()), len(mask), level, "share")
            rows.append({"system": system, "behaviour": behaviour, "n": len(mask),
                         "items": int(mask.sum()), **rate})  # fmt: skip
    columns = ["system", "behaviour", "n", "items", "share", "share_low", "share_high"]
    return pd.DataFrame(rows, columns=columns)


def efficiency_table(
    details: pd.DataFrame, *, seed: int = 0, level: float = DEFAULT_LEVEL
) -> pd.DataFrame:
    """Per system and category: calls executed per ground-truth call (items pooled: total
    model calls / total ground-truth calls over the turns that ran), with a seeded
    bootstrap interval over items."""
    rows: list[dict[str, Any]] = []
    for (system, category), group in details.groupby(["system", "test_category"], sort=False):
        model = group["model_calls"].to_numpy(float)
        truth = group["truth_calls"].to_numpy(float)
        rng = np.random.default_rng([seed, len(rows)])
        ratio = _ratio_interval(model, truth, rng, level)
        rows.append({
            "system": system, "test_category": category, "items": len(group),
            "model_calls": int(model.sum()), "truth_calls": int(truth.sum()),
            "calls_per_truth_call": ratio[0], "calls_per_truth_call_low": ratio[1],
            "calls_per_truth_call_high": ratio[2],
        })  # fmt: skip
    return pd.DataFrame(rows)


def _ratio_interval(
    model: np.ndarray, truth: np.ndarray, rng: np.random.Generator, level: float
) -> tuple[float, float, float]:
    if truth.sum() == 0:
        return float("nan"), float("nan"), float("nan")
    idx = rng.integers(0, len(model), size=(1000, len(model)))
    ratios = model[idx].sum(axis=1) / np.maximum(truth[idx].sum(axis=1), 1)
    tail = (1 - level) / 2
    low, high = np.quantile(ratios, [tail, 1 - tail])
    return float(model.sum() / truth.sum()), float(low), float(high)


OUTCOMES = {
    None: "correct",
    "multi_turn:instance_state_mismatch": "state differs",
    "multi_turn:execution_response_mismatch": "a result missing",
    "multi_turn:empty_turn_model_response": "no call in a turn",
    "multi_turn:force_terminated": "wrong number of turns",
    "multi_turn:inference_error": "not a list of turns",
}
"""Official outcome (error type; None = valid) -> its label in :func:`outcome_shares`."""


def outcome_shares(details: pd.DataFrame) -> pd.DataFrame:
    """Per system and multi-turn category: the share of items with each official outcome.

    Returns:
        Columns ``label`` (``system · category``) and one per label of :data:`OUTCOMES`.
    """
    outcome = details["error_type"].where(~details["valid"].astype(bool), None).map(OUTCOMES)
    label = details["system"] + " · " + details["test_category"].str.removeprefix("multi_turn_")
    shares = pd.crosstab(label, outcome, normalize="index")
    shares = shares.reindex(columns=list(OUTCOMES.values()), fill_value=0.0)
    order = list(dict.fromkeys(label))
    return shares.loc[order].rename_axis(columns=None).rename_axis("label").reset_index()


def injected_outcomes(details: pd.DataFrame) -> pd.DataFrame:
    """Simulated agents: each injected mistake beside the official outcome it got.

    Returns:
        Columns ``injected`` (the mistake, without its turn), ``items`` and one per official
        outcome label (:data:`OUTCOMES`) that occurs, as counts; the ``injected`` column
        of ``details`` is ``<mistake>@turn<t>`` or ``none``.
    """
    if "injected" not in details or details["injected"].isna().all():
        return pd.DataFrame(columns=["injected", "items"])
    simulated = details[details["injected"].notna()]
    mistake = simulated["injected"].str.split("@").str[0]
    outcome = simulated["error_type"].where(~simulated["valid"].astype(bool), None).map(OUTCOMES)
    table = pd.crosstab(mistake, outcome)
    table = table[[label for label in OUTCOMES.values() if label in table.columns]]
    table.insert(0, "items", table.sum(axis=1))
    return table.rename_axis(index="injected", columns=None).reset_index()


def backend_table(details: pd.DataFrame, *, level: float = DEFAULT_LEVEL) -> pd.DataFrame:
    """Accuracy per system and backend class (an item counts for every class it involves)."""
    exploded = details.assign(backend=details["classes"].str.split("+")).explode("backend")
    rows = []
    for (system, backend), group in exploded.groupby(["system", "backend"], sort=False):
        rate = _rate(int(group["valid"].sum()), len(group), level, "accuracy")
        rows.append({"system": system, "backend": backend, "items": len(group),
                     "correct": int(group["valid"].sum()), **rate})  # fmt: skip
    return pd.DataFrame(rows)


def failure_table(details: pd.DataFrame, *, level: float = DEFAULT_LEVEL) -> pd.DataFrame:
    """Per system and official multi-turn error type: share of items, Wilson interval, and
    the median turn of the first failure."""
    rows = []
    for system, group in details.groupby("system", sort=False):
        failed_items = group[~group["valid"].astype(bool)]
        for error_type, failed in failed_items.groupby("error_type", sort=False):
            rate = _rate(len(failed), len(group), level, "share")
            turn = failed["failed_turn"].dropna()
            median = float(turn.median()) if len(turn) else float("nan")
            rows.append({"system": system, "error_type": error_type, "items": len(failed),
                         "of": len(group), **rate, "median_failed_turn": median})  # fmt: skip
    return pd.DataFrame(rows)
