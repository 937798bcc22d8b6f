"""Score result lines of the multi-turn, Java/JavaScript and web-search categories.

:func:`score_more_results` is the counterpart of :func:`~.scoring.score_results` for these
categories: it matches result lines to items by id and returns the same verdict frame
(columns of :class:`~.scoring.Verdict`), so the study's tables take both. The category
decides the checker: :func:`~.multi_turn.check_multi_turn`,
:func:`~.java_js.check_java_js` or :func:`~.web_search.check_web_search`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import pandas as pd

from .decode import decode
from .java_js import check_java_js
from .more_metrics import DETAIL_COLUMNS, multi_turn_detail
from .more_schema import JAVA_JS, MORE_CATEGORIES, MultiTurnItem, WebSearchItem
from .multi_turn import Step, check_multi_turn
from .schema import BfclDataError, Item, ResultLine
from .scoring import Verdict, calls_json, verdict_frame
from .web_search import check_web_search

AnyItem = Item | MultiTurnItem | WebSearchItem


class Scored(NamedTuple):
    """One scored result: the verdict, and for multi-turn the replay's diagnostics."""

    verdict: Verdict
    detail: dict[str, Any] | None = None
    """:func:`~.more_metrics.multi_turn_detail` (multi-turn items only)."""


def score_more_item(
    item: AnyItem, raw: Any, *, system: str, style: str = "fc", model_name: str | None = None
) -> Scored:
    """One result of a multi-turn, Java/JavaScript or web-search item -> its verdict.

    Args:
        item: the test entry.
        raw: the ``result`` of its result-file line.
        system: the system name recorded in the verdict.
        style: the decoder (``fc``; multi-turn and web search also ``prompt`` / ``auto``).
        model_name: the official model folder name (multi-turn only; default ``system``).
    """
    base = {"system": system, "test_category": item.category, "id": item.id, "raw": raw}
    if isinstance(item, MultiTurnItem):
        mt = check_multi_turn(item, raw, style=style, model_name=model_name or system)
        decoded = None if mt.decoded is None else _steps_json(mt.decoded)
        verdict = Verdict(**base, valid=mt.valid, error_type=mt.error_type, error=mt.error,
                          decoded=decoded, params=[])  # fmt: skip
        return Scored(verdict, multi_turn_detail(system, item, mt))
    if isinstance(item, WebSearchItem):
        answer = check_web_search(item, raw, style=style)
        check = answer.check
        return Scored(Verdict(**base, valid=check.valid, error_type=check.error_type,
                              error=check.error, decoded=None, params=[]))  # fmt: skip
    if item.category not in JAVA_JS:
        raise ValueError(f"{item.id}: {item.category} is scored by scoring.score_item")
    decoded_calls = decode(raw, "fc" if style == "fc" else "auto")
    check = check_java_js(item, decoded_calls)
    calls = None if decoded_calls.calls is None else calls_json(decoded_calls.calls)
    return Scored(Verdict(**base, valid=check.valid, error_type=check.error_type,
                          error=check.error, decoded=calls, params=[]))  # fmt: skip


def _steps_json(turns: list[list[Step]]) -> list[dict[str, Any]]:
    """Decoded steps as records: one ``{turn, step, calls}`` per step, calls as the official
    execution strings."""
    return [
        {"turn": t, "step": s, "calls": [call.source for call in step]}
        for t, steps in enumerate(turns)
        for s, step in enumerate(steps)
    ]


def score_more_results(
    items: Sequence[AnyItem],
    results: Iterable[ResultLine],
    *,
    system: str,
    style: str = "fc",
    model_name: str | None = None,
    allow_missing: bool = False,
) -> pd.DataFrame:
    """The verdict frame of :func:`score_more` (without the multi-turn details)."""
    return score_more(
        items, results, system=system, style=style, model_name=model_name,
        allow_missing=allow_missing,
    )[0]  # fmt: skip


def score_more(
    items: Sequence[AnyItem],
    results: Iterable[ResultLine],
    *,
    system: str,
    style: str = "fc",
    model_name: str | None = None,
    allow_missing: bool = False,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Score result lines against their items (by id), as the official runner does.

    Every item of a category with at least one result must have one, unless
    ``allow_missing`` (official ``--partial-eval``); items of other categories are ignored.

    Returns:
        The verdict frame, and the multi-turn details (:data:`~.more_metrics.DETAIL_COLUMNS`).

    Raises:
        BfclDataError: a result id that is not an item, a duplicate, or missing results.
        BackendUnavailable: multi-turn results without the official backend classes.
    """
    known = {item.id for item in items}
    by_id: dict[str, ResultLine] = {}
    for line in results:
        where = f"{line.source or 'results'}:{line.line}"
        if line.id not in known:
            raise BfclDataError(f"{where}: unknown id {line.id!r} (not among the loaded items)")
        if line.id in by_id:
            raise BfclDataError(f"{where}: duplicate result for {line.id!r}")
        by_id[line.id] = line
    covered = {line.category for line in by_id.values()}
    rows: list[Verdict] = []
    details: list[dict[str, Any]] = []
    for item in sorted(items, key=_official_order):
        if item.category not in covered:
            continue
        found = by_id.get(item.id)
        if found is None:
            if allow_missing:
                continue
            raise BfclDataError(f"{system}: no result for {item.id!r} ({item.category})")
        scored = score_more_item(
            item, found.result, system=system, style=style, model_name=model_name
        )
        usage = {
            k: getattr(found, k) for k in ("latency", "input_token_count", "output_token_count")
        }
        rows.append(scored.verdict._replace(**usage))
        if scored.detail is not None:
            details.append(scored.detail)
    return verdict_frame(rows), pd.DataFrame(details, columns=DETAIL_COLUMNS)


def _official_order(item: AnyItem) -> tuple[int, int]:
    """Categories in leaderboard order, items by index (the official runner sorts by id)."""
    return MORE_CATEGORIES.index(item.category), int(item.id.rsplit("_", 1)[1])
