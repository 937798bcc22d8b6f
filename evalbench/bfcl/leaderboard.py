"""The leaderboard's score tables, column by column, from per-category accuracies.

Reimplements (does not import or copy) ``generate_leaderboard_csv`` and its helpers
(``calculate_weighted_accuracy``, ``calculate_unweighted_accuracy``,
``calculate_percentage_weighted_accuracy``, ``get_category_score``) of
``bfcl_eval/eval_checker/eval_runner_helper.py`` (bfcl-eval 2026.3.23): the accuracy
columns of ``data_non_live``, ``data_live``, ``data_multi_turn``, ``data_agentic`` and
``data_overall``. As officially, a category without a score counts as accuracy 0 with its
full item count, and a summary holding one shows N/A (here None) except the section
overalls, which are always shown; ``overall`` weighs non-live 10, live 10, irrelevance 10,
multi-turn 30 and agentic 40.

:func:`aggregates` gives the section overalls (:func:`~.metrics.overall_table` shows them);
:func:`leaderboard_tables` every sub-column with the N/A rule, so a published row can be
compared cell by cell.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import pandas as pd

from .schema import CATEGORY_SIZES, MEMORY

OVERALL_WEIGHTS = (10, 10, 10, 30, 40)
"""non-live, live, irrelevance, multi-turn, agentic (official, 'TODO: adjust the weights'):
memory is half of agentic (the unweighted mean of web search and memory, each the unweighted
mean of its categories), so each memory category weighs 40/100 x 1/2 x 1/3 = 1/15."""
NEEDS_MEMORY = {
    "data_agentic": ("Agentic Overall Acc", "Memory Summary", "Memory KV", "Memory Vector",
                     "Memory Recursive Summarization"),
    "data_overall": ("Overall Acc", "Memory Acc", "Memory KV", "Memory Vector",
                     "Memory Recursive Summarization"),
}  # fmt: skip
"""Published columns that cannot be computed without the memory categories."""


class Score(NamedTuple):
    """One cell's value: accuracy, item count, and whether it is shown (else N/A)."""

    accuracy: float
    total: int
    shown: bool = True


def scores_from_verdicts(verdicts: pd.DataFrame) -> dict[str, Score]:
    """Per category of one system's verdict frame: accuracy and item count."""
    grouped = verdicts.groupby("test_category")["valid"].agg(["mean", "size"])
    return {str(c): Score(float(r["mean"]), int(r["size"])) for c, r in grouped.iterrows()}


def _category(scores: Mapping[str, Score], name: str) -> Score:
    """Official ``get_category_score``: a missing category is 0 with its size, shown N/A."""
    return scores.get(name) or Score(0.0, CATEGORY_SIZES.get(name, 0), False)


def _unweighted(parts: Sequence[Score], na_if_missing: bool = True) -> Score:
    mean = sum(p.accuracy for p in parts) / len(parts)
    return Score(
        mean, sum(p.total for p in parts), not na_if_missing or all(p.shown for p in parts)
    )


def _weighted(parts: Sequence[Score], na_if_missing: bool = True) -> Score:
    total = sum(p.total for p in parts)
    mean = sum(p.accuracy * p.total for p in parts) / total
    return Score(mean, total, not na_if_missing or all(p.shown for p in parts))


def _percentage_weighted(parts: Sequence[Score], weights: Sequence[float]) -> Score:
    norm = [w / sum(weights) for w in weights]
    mean = sum(p.accuracy * w for p, w in zip(parts, norm, strict=True))
    return Score(mean, sum(p.total for p in parts), True)


def leaderboard_tables(scores: Mapping[str, Score]) -> dict[str, dict[str, float | None]]:
    """Every accuracy column of the published tables for one system.

    Args:
        scores: category -> :class:`Score` (e.g. :func:`scores_from_verdicts`).

    Returns:
        table name (``data_non_live``...) -> column (as in the CSV header) -> accuracy as a
        fraction, None where the leaderboard shows N/A.
    """
    cat = {name: _category(scores, name) for name in CATEGORY_SIZES}
    s = _summaries(cat)
    tables = {
        "data_non_live": _non_live(cat, s),
        "data_live": _live(cat, s),
        "data_multi_turn": _multi_turn(cat, s),
        "data_agentic": _agentic(cat, s),
        "data_overall": _overall(cat, s),
    }
    return {
        table: {col: v.accuracy if v.shown else None for col, v in columns.items()}
        for table, columns in tables.items()
    }


AGGREGATES = ("non_live", "live", "irrelevance", "relevance", "multi_turn", "agentic", "overall")
"""The section overalls and the overall accuracy (:func:`aggregates`), as in ``data_overall``."""


def aggregates(scores: Mapping[str, Score]) -> dict[str, float | list[str]]:
    """The section overalls and the overall accuracy of one system (always shown, as on the
    leaderboard), and ``missing``: the categories they count as 0 (sorted).

    ``non_live`` is the leaderboard's Non-Live Overall Acc (simple AST = mean of Python,
    Java, JavaScript; with multiple, parallel, parallel_multiple), ``live`` its Live Overall
    Acc (weighted by item counts), ``irrelevance`` the mean of irrelevance and
    live_irrelevance, ``relevance`` live_relevance, ``multi_turn`` and ``agentic`` (web
    search and memory) their section overalls, ``overall`` the weighted sum of
    :data:`OVERALL_WEIGHTS`.
    """
    cat = {name: _category(scores, name) for name in CATEGORY_SIZES}
    s = _summaries(cat)
    out: dict[str, float | list[str]] = {
        key: (cat["live_relevance"] if key == "relevance" else s[key]).accuracy
        for key in AGGREGATES
    }
    out["missing"] = sorted(name for name in cat if name not in scores)
    return out


def _summaries(cat: Mapping[str, Score]) -> dict[str, Score]:
    simple = _unweighted([cat["simple_python"], cat["simple_java"], cat["simple_javascript"]])
    ast_parts = [simple, cat["multiple"], cat["parallel"], cat["parallel_multiple"]]
    live = [cat[c] for c in ("live_simple", "live_multiple", "live_parallel",
                             "live_parallel_multiple")]  # fmt: skip
    turns = [cat[c] for c in ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param",
                              "multi_turn_long_context")]  # fmt: skip
    web = _unweighted([cat["web_search_base"], cat["web_search_no_snippet"]])
    memory = _unweighted([cat[c] for c in MEMORY])
    s = {
        "simple": simple, "web": web, "memory": memory,
        "non_live": _unweighted(ast_parts, na_if_missing=False),
        "ast_summary": _unweighted(ast_parts),
        "live": _weighted(live, na_if_missing=False),
        "live_summary": _weighted(live),
        "multi_turn": _unweighted(turns, na_if_missing=False),
        "agentic": _unweighted([web, memory], na_if_missing=False),
        "irrelevance": _unweighted([cat["irrelevance"], cat["live_irrelevance"]]),
    }  # fmt: skip
    parts = [s[k] for k in ("non_live", "live", "irrelevance", "multi_turn", "agentic")]
    s["overall"] = _percentage_weighted(parts, OVERALL_WEIGHTS)
    return s


def _non_live(cat: Mapping[str, Score], s: Mapping[str, Score]) -> dict[str, Score]:
    return {
        "Non-Live Overall Acc": s["non_live"], "AST Summary": s["ast_summary"],
        "Simple AST": s["simple"], "Python Simple AST": cat["simple_python"],
        "Java Simple AST": cat["simple_java"],
        "JavaScript Simple AST": cat["simple_javascript"], "Multiple AST": cat["multiple"],
        "Parallel AST": cat["parallel"], "Parallel Multiple AST": cat["parallel_multiple"],
        "Irrelevance Detection": cat["irrelevance"],
    }  # fmt: skip


def _live(cat: Mapping[str, Score], s: Mapping[str, Score]) -> dict[str, Score]:
    return {
        "Live Overall Acc": s["live"], "AST Summary": s["live_summary"],
        "Python Simple AST": cat["live_simple"], "Python Multiple AST": cat["live_multiple"],
        "Python Parallel AST": cat["live_parallel"],
        "Python Parallel Multiple AST": cat["live_parallel_multiple"],
        "Irrelevance Detection": cat["live_irrelevance"],
        "Relevance Detection": cat["live_relevance"],
    }  # fmt: skip


def _multi_turn(cat: Mapping[str, Score], s: Mapping[str, Score]) -> dict[str, Score]:
    return {
        "Multi Turn Overall Acc": s["multi_turn"], "Base": cat["multi_turn_base"],
        "Miss Func": cat["multi_turn_miss_func"], "Miss Param": cat["multi_turn_miss_param"],
        "Long Context": cat["multi_turn_long_context"],
    }  # fmt: skip


def _agentic(cat: Mapping[str, Score], s: Mapping[str, Score]) -> dict[str, Score]:
    return {
        "Agentic Overall Acc": s["agentic"], "Web Search Summary": s["web"],
        "Web Search Base": cat["web_search_base"],
        "Web Search No Snippet": cat["web_search_no_snippet"], "Memory Summary": s["memory"],
        "Memory KV": cat["memory_kv"], "Memory Vector": cat["memory_vector"],
        "Memory Recursive Summarization": cat["memory_rec_sum"],
    }  # fmt: skip


def _overall(cat: Mapping[str, Score], s: Mapping[str, Score]) -> dict[str, Score]:
    return {
        "Overall Acc": s["overall"], "Non-Live AST Acc": s["ast_summary"],
        "Non-Live Simple AST": s["simple"], "Non-Live Multiple AST": cat["multiple"],
        "Non-Live Parallel AST": cat["parallel"],
        "Non-Live Parallel Multiple AST": cat["parallel_multiple"], "Live Acc": s["live"],
        "Live Simple AST": cat["live_simple"], "Live Multiple AST": cat["live_multiple"],
        "Live Parallel AST": cat["live_parallel"],
        "Live Parallel Multiple AST": cat["live_parallel_multiple"],
        "Multi Turn Acc": s["multi_turn"], "Multi Turn Base": cat["multi_turn_base"],
        "Multi Turn Miss Func": cat["multi_turn_miss_func"],
        "Multi Turn Miss Param": cat["multi_turn_miss_param"],
        "Multi Turn Long Context": cat["multi_turn_long_context"],
        "Web Search Acc": s["web"], "Web Search Base": cat["web_search_base"],
        "Web Search No Snippet": cat["web_search_no_snippet"], "Memory Acc": s["memory"],
        "Memory KV": cat["memory_kv"], "Memory Vector": cat["memory_vector"],
        "Memory Recursive Summarization": cat["memory_rec_sum"],
        "Relevance Detection": cat["live_relevance"], "Irrelevance Detection": s["irrelevance"],
    }  # fmt: skip


def comparison(
    ours: Mapping[str, Mapping[str, float | None]], published: Mapping[str, Mapping[str, float]]
) -> pd.DataFrame:
    """Our columns beside a published row (fractions; NaN or absent there = N/A).

    Returns:
        Columns ``table, column, ours, published, equal, reason``: ``equal`` compares at the
        published precision (percent with two decimals); ``reason`` says why a column
        cannot be reproduced (the memory categories, when ``ours`` has no score for one).
    """
    rows = []
    no_memory = ours.get("data_agentic", {}).get("Memory Summary") is None
    for table, columns in ours.items():
        for column, value in columns.items():
            theirs = published.get(table, {}).get(column, float("nan"))
            needs = no_memory and column in NEEDS_MEMORY.get(table, ())
            reason = "needs the memory categories" if needs else ""
            equal = _same(value, theirs)
            rows.append((table, column, value, theirs, equal, reason))
    return pd.DataFrame(rows, columns=["table", "column", "ours", "published", "equal", "reason"])


def _same(ours: float | None, published: float) -> bool:
    if ours is None or published != published:  # NaN: N/A
        return ours is None and published != published
    return f"{ours * 100:.2f}" == f"{published * 100:.2f}"
