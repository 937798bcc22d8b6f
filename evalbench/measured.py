"""What a headline stands on: per system, the items measured and why the others were not.

A headline is a number only over items that were measured (DESIGN.md, "Honest numbers").
Every study says, per system (or judge, generator, configuration), how many of its items
have a value (``scored``), out of how many (``total``), and why the rest have none
(``unscored``: a failed call, an unparsed judge output, a function-calling model that never
called a function ...). From that, one rule for every study:

- a system with nothing scored has no headline number: its headline is "no result" with
  the counts and reasons (:func:`headline`);
- a run where no system scored anything has the status ``no_result`` and one headline
  saying why (:func:`honest_headlines`, :func:`no_result_reason`), never a number;
- a headline that is not a finite number (NaN from an empty mean) is "no result" too.

Also here, for every study alike: repeated attempts that were identical (pass@k from k
attempts at temperature 0 is pass@1: :func:`identical_attempts`) and outputs cut at
``max_tokens`` (``finish_reason == "length"``: :func:`truncated_text`).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

import pandas as pd

from evalbench.agreement_pairwise import _is_missing

NO_RESULT = "no result"
"""How a headline over zero measured items reads (the start of its text)."""
NO_RESULT_STATUS = "no_result"
"""The status of a run in which no system scored any item."""
TRUNCATED = "length"
"""The ``finish_reason`` of an output cut at ``max_tokens`` (OpenAI's, llama.cpp's ...)."""


class NoResult(Exception):
    """A study that measured nothing and so cannot go on to its analysis (no battle to rate,
    no valid problem to judge): raised by :meth:`evalbench.runs.Run.no_result` after the
    manifest says what was measured; ``evalbench run`` then publishes a page saying why
    (status ``no_result``), not a crash. The message is :func:`no_result_text`."""


class Measured(NamedTuple):
    """What one system's headline is measured over.

    Attributes:
        system: the system, judge, generator or configuration the headline is about.
        scored: items with a value (the headline's own denominator may count more: GAIA's
            official accuracy counts a failed call wrong, but it measured nothing).
        total: items the system was given.
        unscored: why the others have no value: reason -> items (``"failed call
            (connection)"``, ``"unparsed judge output"``); they add up to ``total - scored``.
        unit: what an item is, singular (``answer``, ``judgment``, ``battle``, ``task``).
        identical: items whose repeated attempts all gave the same output (``None`` with a
            single attempt per item).
        repeated: items with more than one attempt (the denominator of ``identical``).
    """

    system: str
    scored: int
    total: int
    unscored: Mapping[str, int] = {}
    unit: str = "answer"
    identical: int | None = None
    repeated: int = 0

    def as_row(self) -> dict[str, Any]:
        """The manifest's form (``measured: [...]``)."""
        return {**self._asdict(), "unscored": dict(self.unscored)}


def from_rows(rows: Any) -> list[Measured]:
    """:class:`Measured` back from the manifest's rows; a row that is not one (a manifest
    written by hand, damaged or from another version) is left out, never an error."""
    out = []
    for row in rows if isinstance(rows, list) else []:
        try:
            out.append(_from_row(row))
        except (KeyError, TypeError, ValueError, AttributeError):
            continue
    return out


def _from_row(row: Any) -> Measured:
    counts = [row["scored"], row["total"]]
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in counts):
        raise ValueError("scored and total are counts")
    unscored = {str(k): int(v) for k, v in dict(row.get("unscored") or {}).items()}
    identical = row.get("identical")
    return Measured(
        str(row["system"]), counts[0], counts[1], unscored, str(row.get("unit") or "item"),
        None if identical is None else int(identical), int(row.get("repeated") or 0),
    )  # fmt: skip


def measured(
    system: str, states: Iterable[str | None], unit: str = "answer", **extra: Any
) -> Measured:
    """A system's :class:`Measured` from one state per item: ``None`` for an item with a
    value, else the reason it has none (``failed call (timeout)``).

    Example: ``measured("a", [None, "unparsed judge output", None])`` is 2 of 3 scored.
    """
    reasons: Counter[str] = Counter()
    total = 0
    for state in states:
        total += 1
        if state is not None:
            reasons[str(state)] += 1
    return Measured(system, total - sum(reasons.values()), total, dict(reasons), unit, **extra)


def failed_call(error: Any, role: str = "") -> str:
    """The reason of an item whose call failed: ``failed call (<kind>)``, the kind being the
    text before the error's first colon (``connection``, ``http_500``, ``timeout``), as the
    usage tables count failed calls (:func:`evalbench.runs.error_reasons`; at most 40
    characters); ``role`` names whose call it was when not the system's own (``failed judge
    call (timeout)``)."""
    kind = ("" if error is None else str(error)).split(":", 1)[0].strip()[:40] or "error"
    return f"failed {role} call ({kind})" if role else f"failed call ({kind})"


def unparsed(kind: Any = None) -> str:
    """The reason of an item whose judge (or grader) replied but gave no readable verdict:
    ``unparsed judge output`` (with the parser's kind when it says one: ``no_score``)."""
    return "unparsed judge output" + (f" ({kind})" if kind not in (None, "") else "")


def judgment_state(status: Any, error: Any, kind: Any = None, role: str = "") -> str | None:
    """One judgment's state for :func:`measured`: ``None`` when ``status`` is ``scored``,
    else why not: its failed call (``error``; ``role`` as :func:`failed_call`) or its
    unparsed output (``kind``)."""
    if status == "scored":
        return None
    if isinstance(error, str) and error:
        return failed_call(error, role)
    return unparsed(None if kind == "call_error" else kind)


def reasons_text(unscored: Mapping[str, int]) -> str:
    """``"failed call (connection) × 12, unparsed judge output × 3"``, most first."""
    ordered = sorted(unscored.items(), key=lambda kv: (-kv[1], kv[0]))
    return ", ".join(f"{reason} × {n:,d}" for reason, n in ordered if n)


def _units(n: int, unit: str) -> str:
    return f"{n:,d} {unit}" + ("" if n == 1 else "s")


def no_result_text(rows: Sequence[Measured]) -> str:
    """``"no result: 0 of 12 answers scored — failed call (connection) × 12"`` over ``rows``
    (their counts and reasons added up; the unit of the first)."""
    total = sum(m.total for m in rows)
    unit = rows[0].unit if rows else "item"
    reasons: Counter[str] = Counter()
    for m in rows:
        reasons.update(m.unscored)
    why = reasons_text(reasons) or ("nothing to measure" if not total else "")
    return f"{NO_RESULT}: 0 of {_units(total, unit)} scored" + (f" — {why}" if why else "")


def why(text: str) -> str:
    """A no-result headline without its leading ``no result: `` (under a "No result" title)."""
    return text.removeprefix(f"{NO_RESULT}: ")


def headline(value: Any, row: Measured | None) -> Any:
    """A system's headline: ``value``, or :func:`no_result_text` when the system scored
    nothing (``row`` is ``None``: not measured at all, also "no result")."""
    if row is None:
        return f"{NO_RESULT}: not measured"
    return value if row.scored else no_result_text([row])


def by_system(rows: Sequence[Measured]) -> dict[str, Measured]:
    """``rows`` by system name."""
    return {m.system: m for m in rows}


def nothing_measured(rows: Sequence[Measured]) -> bool:
    """Whether no system scored any item (also: no system at all)."""
    return not any(m.scored for m in rows)


def honest_headlines(headlines: Mapping[str, Any], rows: Sequence[Measured]) -> dict[str, Any]:
    """A study's headlines as the index may show them: one ``result: no result ...`` when
    nothing was measured; otherwise each as the study gave it, except a number that is not
    finite (an empty mean), which reads ``no result``."""
    if nothing_measured(rows):
        return {"result": no_result_text(rows)}
    return {label: _finite_or_none(value) for label, value in headlines.items()}


_NOT_A_NUMBER = re.compile(r"^\s*(?:nan\b|—\s*(?:$|\[))", re.IGNORECASE)
"""A formatted headline whose estimate is missing: ``nan [nan, nan]``, ``—``, ``— [—, —]``."""


def _finite_or_none(value: Any) -> Any:
    if isinstance(value, float | int) and not isinstance(value, bool) and not math.isfinite(value):
        return f"{NO_RESULT}: not a number (nothing measured)"
    if isinstance(value, str) and _NOT_A_NUMBER.match(value):
        return f"{NO_RESULT}: nothing measured ({value.strip()})"
    return value


def no_result_reason(rows: Sequence[Measured]) -> str:
    """Why a run is ``no_result`` (``""`` when some system scored something)."""
    return no_result_text(rows) if nothing_measured(rows) else ""


def partial_reason(rows: Sequence[Measured]) -> str:
    """The systems with no result in a run where others have one, in one line
    (``"no result for weak: 0 of 32 answers scored — failed call (sim_error) × 32"``);
    ``""`` when every system scored something."""
    empty = [m for m in rows if not m.scored]
    if not empty or nothing_measured(rows):
        return ""
    return "; ".join(f"{NO_RESULT} for {m.system}: {no_result_text([m])[len(NO_RESULT) + 2 :]}"
                     for m in empty)  # fmt: skip


# ------------------------------------------------------------------------ repeated attempts


def identical_flags(frame: pd.DataFrame, *, keys: Sequence[str], output: str) -> pd.Series:
    """Per group of ``keys`` (system, item) answered more than once: whether every attempt
    gave the same ``output``. Only groups whose every attempt has an output count: a failed
    call is no try, so an item with one is not a repeated attempt at all.

    Example: item t1 answered "4", "4", "4" -> True; t2 "4", "5" -> False; t3 "4" and a
    failed call, or once only: absent.
    """
    if not len(frame):
        return pd.Series(dtype=bool)
    # plain Python, not a pandas groupby-agg (~6 ms a call, once per GAIA result and sweep
    # cell); the same groups: rows with a missing key left out, keys sorted
    attempts: dict[tuple[Any, ...], list[Any]] = {}
    columns = [frame[k].tolist() for k in keys]
    for *key, value in zip(*columns, frame[output].tolist(), strict=True):
        if not any(_is_missing(k) for k in key):
            attempts.setdefault(tuple(key), []).append(value)
    flags = {key: len(set(values)) == 1 for key, values in attempts.items()
             if len(values) > 1 and not any(_is_missing(v) for v in values)}  # fmt: skip
    index = pd.MultiIndex.from_tuples(sorted(flags), names=list(keys))
    return pd.Series([flags[k] for k in index], index=index, dtype=bool, name="identical")


def identical_attempts(
    frame: pd.DataFrame, *, item: str, output: str, system: str = "system"
) -> dict[str, tuple[int, int]]:
    """Per system: (items whose attempts all gave the same output, items with more than one
    attempt), from :func:`identical_flags`.

    Example: t1 answered "4", "4", "4" and t2 "4", "5" by system a -> ``{"a": (1, 2)}``.
    """
    flags = identical_flags(frame, keys=(system, item), output=output)
    return {
        str(name): (int(group.sum()), len(group))
        for name, group in flags.groupby(level=0, sort=True)
    }


def identical_text(row: Measured) -> str:
    """``"9 of 9 items' attempts identical"`` (``""`` with a single attempt per item)."""
    if row.identical is None or not row.repeated:
        return ""
    return f"{row.identical:,d} of {row.repeated:,d} items' attempts identical"


# ------------------------------------------------------------------------ truncation


def truncated_text(truncated: int, outputs: int) -> str:
    """``"2 of 18 outputs truncated (finish_reason=length)"``; ``""`` without outputs."""
    if not outputs:
        return ""
    return f"{truncated:,d} of {outputs:,d} outputs truncated (finish_reason=length)"
