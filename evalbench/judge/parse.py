"""Parsing a rubric judge's reply into scores, or an explicit unscored result.

Unparseable, out-of-range, non-finite, boolean or incomplete outputs give an explicit
``unscored`` result with a reason and the raw text, never a default score. The weighted
score is always computed from the parsed scores (:func:`~evalbench.judge.rubrics.weighted_score`);
a total the model writes is kept as an extra field for comparison, never used.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import pandas as pd
from pydantic import Field

from evalbench.records import Record
from evalbench.textparse import MAX_PARSE_CHARS, parse_json_object

from .rubrics import Dimension, Rubric, as_rubric, pass_status, score_map_problems, weighted_score

Status = Literal["scored", "unscored"]
ParseMethod = Literal["json", "bracket", "labelled", "dimension_text"]


class RubricResult(Record):
    """One parsed rubric judgment: scored (every dimension valid) or explicitly unscored."""

    rubric: str
    """Name of the rubric used."""
    status: Status
    """``scored`` or ``unscored`` (never a default score)."""
    scores: dict[str, float] = Field(default_factory=dict)
    """Score per dimension (empty when unscored)."""
    weighted_score: float | None = None
    """``sum(w·s) / sum(w)`` computed here (``None`` when unscored)."""
    passed: bool | None = None
    """Pass-rule verdict (``None`` when unscored or the rubric has no pass rule)."""
    excellent: bool | None = None
    """Excellence verdict where the pass rule defines one."""
    extras: dict[str, str | float | None] = Field(default_factory=dict)
    """Extra output fields (``reason``, ``confidence``, …); an invalid number is ``None``."""
    parse_method: ParseMethod | None = None
    """How the scores were found: JSON, ``[[n]]``, ``Rating:/Score: n``, ``dimension: n``."""
    unscored_kind: str | None = None
    """Short cause when unscored: empty, no_score, missing_dimension, out_of_range, …"""
    unscored_reason: str | None = None
    """Human-readable reason when unscored."""
    notes: list[str] = Field(default_factory=list)
    """Non-fatal problems (e.g. an extra number field that was not a number)."""
    raw: str = ""
    """The judge's text, verbatim."""


class _Unscorable(Exception):
    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail


def rubric_result(
    rubric: Rubric | str,
    scores: Mapping[str, float],
    *,
    extras: Mapping[str, str | float | None] | None = None,
    raw: str = "",
    parse_method: ParseMethod | None = None,
    notes: Sequence[str] = (),
) -> RubricResult:
    """A scored result from complete, in-range ``scores`` (weighted score and pass computed).

    Args:
        rubric: a ``Rubric`` or the name of a built-in one.
        scores: one score per dimension.
        extras: extra output fields to keep (``reason``, ``confidence``, ...).
        raw: the judge's text, if any.
        parse_method: how the scores were found.
        notes: non-fatal problems to record.

    Raises:
        ValueError: a dimension is missing, unknown or out of range (all listed).
    """
    rubric = as_rubric(rubric)
    problems = score_map_problems(rubric, scores)
    if problems:
        raise ValueError(f"rubric {rubric.name!r}: " + "; ".join(problems))
    clean = {d.name: float(scores[d.name]) for d in rubric.dimensions}
    passed, excellent = pass_status(rubric, clean)
    return RubricResult(
        rubric=rubric.name,
        status="scored",
        scores=clean,
        weighted_score=weighted_score(rubric, clean),
        passed=passed,
        excellent=excellent,
        extras=dict(extras or {}),
        parse_method=parse_method,
        notes=list(notes),
        raw=raw,
    )


def parse_rubric_output(rubric: Rubric | str, text: str | None) -> RubricResult:
    """Parse a judge's reply into scores, or an explicit unscored result.

    Order: a JSON object (fenced or bare, LaTeX backslashes repaired) holding at least one
    dimension, read from ``"scores"`` or the top level (it is then authoritative: a missing
    or invalid dimension is not looked for elsewhere); otherwise, for a single-dimension
    rubric, every ``[[n]]``, ``Rating: n`` / ``Score: n`` and ``<name>: n`` match, which must
    all agree; for a multi-dimension rubric, ``<name>: n`` for every dimension (also
    ``**Name**: n``, ``name = n``). Numbers may be strings ("8", "8/10", "8 out of 10" — a
    denominator must be the scale maximum). Out-of-range, NaN/inf, boolean, ambiguous (two
    different values) or missing scores make the result unscored; the raw text is kept.

    Args:
        rubric: a ``Rubric`` or the name of a built-in one.
        text: the judge's reply.
    """
    rubric = as_rubric(rubric)
    raw = text or ""
    try:
        scores, extras, method, notes = _extract(rubric, raw)
    except _Unscorable as err:
        return RubricResult(
            rubric=rubric.name,
            status="unscored",
            unscored_kind=err.kind,
            unscored_reason=err.detail,
            raw=raw,
        )
    return rubric_result(rubric, scores, extras=extras, raw=raw, parse_method=method, notes=notes)


def _extract(
    rubric: Rubric, raw: str
) -> tuple[dict[str, float], dict[str, str | float | None], ParseMethod, list[str]]:
    if not raw.strip():
        raise _Unscorable("empty", "the judge output is empty")
    if len(raw) > MAX_PARSE_CHARS:
        raise _Unscorable("too_long", f"the judge output has {len(raw):,} characters")
    obj = parse_json_object(raw)
    if obj is not None and _json_has_dimension(rubric, obj):
        scores = _json_scores(rubric, obj)
        extras, notes = _json_extras(rubric, obj)
        return scores, extras, "json", notes
    scores, method = _text_scores(rubric, raw, json_found=obj is not None)
    _require_fields(rubric, {})
    return scores, {}, method, []


def _normalised(obj: Mapping[str, Any]) -> dict[str, Any]:
    return {re.sub(r"[\s\-]+", "_", str(k).strip().lower()): v for k, v in obj.items()}


def _json_score_sources(obj: Mapping[str, Any]) -> list[dict[str, Any]]:
    top = _normalised(obj)
    nested = top.get("scores")
    return [_normalised(nested), top] if isinstance(nested, Mapping) else [top]


def _json_has_dimension(rubric: Rubric, obj: Mapping[str, Any]) -> bool:
    sources = _json_score_sources(obj)
    return any(d.name in src for d in rubric.dimensions for src in sources)


def _json_scores(rubric: Rubric, obj: Mapping[str, Any]) -> dict[str, float]:
    sources = _json_score_sources(obj)
    scores: dict[str, float] = {}
    errors: list[_Unscorable] = []
    for dim in rubric.dimensions:
        src = next((s for s in sources if dim.name in s), None)
        try:
            if src is None:
                raise _Unscorable("missing_dimension", f"missing dimension {dim.name!r}")
            scores[dim.name] = coerce_score(src[dim.name], dim.scale_min, dim.scale_max, dim.name)
        except _Unscorable as err:
            errors.append(err)
    if errors:
        raise _Unscorable(errors[0].kind, "; ".join(e.detail for e in errors))
    return scores


def _json_extras(
    rubric: Rubric, obj: Mapping[str, Any]
) -> tuple[dict[str, str | float | None], list[str]]:
    top = _normalised(obj)
    extras: dict[str, str | float | None] = {}
    notes: list[str] = []
    for f in rubric.output_fields:
        if f.name not in top or top[f.name] is None:
            continue
        value = top[f.name]
        if f.kind == "text":
            extras[f.name] = value if isinstance(value, str) else json.dumps(value)
            continue
        try:
            extras[f.name] = coerce_score(value, f.scale_min, f.scale_max, f.name)  # type: ignore[arg-type]
        except _Unscorable as err:
            extras[f.name] = None
            notes.append(f"{err.detail} (extra field kept as null)")
    _require_fields(rubric, extras)
    return extras, notes


def _require_fields(rubric: Rubric, extras: Mapping[str, Any]) -> None:
    missing = [f.name for f in rubric.output_fields if f.required and f.name not in extras]
    if missing:
        raise _Unscorable("missing_field", f"missing required field(s) {missing}")


_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)"
_VALUE = rf"{_NUM}(?:\s*(?:/|out\s+of)\s*{_NUM})?"
_SCORE_STRING = re.compile(rf"^\s*({_NUM})\s*(?:(?:/|out\s+of)\s*({_NUM}))?\s*$", re.I)
_BRACKET = re.compile(rf"\[\[\s*({_VALUE})\s*\]\]", re.I)
_LABELLED = re.compile(rf"\b(?:rating|score)\b[\"'*\s]*[:=][\s\"'*\[]*({_VALUE})", re.I)


def _dimension_pattern(name: str) -> re.Pattern[str]:
    words = r"[\s_-]+".join(re.escape(w) for w in name.split("_"))
    return re.compile(
        rf"(?<![A-Za-z0-9_]){words}(?:[\s_-]*score)?[\"'*\s]*[:=][\s\"'*\[]*({_VALUE})", re.I
    )


def coerce_score(value: Any, low: float, high: float, where: str) -> float:
    """A finite number in ``[low, high]`` from a JSON value, else ``_Unscorable``.

    Accepts numbers, numeric strings (``"8"``, ``"8.5"``, ``"8/10"``, ``"8 out of 10"``
    when the denominator equals ``high``) and ``{"score": n}``. Rejects booleans, NaN and
    infinities, out-of-range values and anything else.

    Args:
        value: the value found for one dimension.
        low: scale minimum (inclusive).
        high: scale maximum (inclusive).
        where: the dimension or field name, used in the reason.
    """
    if isinstance(value, Mapping) and "score" in _normalised(value):
        value = _normalised(value)["score"]
    if isinstance(value, bool):
        raise _Unscorable("boolean", f"{where}: {value!r} is a boolean, not a score")
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        number = _number_from_string(value, high, where)
    else:
        raise _Unscorable("not_a_number", f"{where}: {json.dumps(value)[:80]} is not a number")
    if not math.isfinite(number):
        raise _Unscorable("not_finite", f"{where}: {number} is not a finite number")
    if not low <= number <= high:
        raise _Unscorable("out_of_range", f"{where}: {number:g} is outside {low:g}-{high:g}")
    return number


def _number_from_string(text: str, high: float, where: str) -> float:
    match = _SCORE_STRING.match(text)
    if match is None:
        try:
            return float(text.strip())  # "NaN", "inf", "1e1": judged by the caller's checks
        except ValueError:
            raise _Unscorable("not_a_number", f"{where}: {text[:80]!r} is not a number") from None
    if match.group(2) is not None and float(match.group(2)) != high:
        raise _Unscorable(
            "ambiguous_scale", f"{where}: {text.strip()!r} is not on a scale out of {high:g}"
        )
    return float(match.group(1))


def _text_scores(
    rubric: Rubric, raw: str, *, json_found: bool
) -> tuple[dict[str, float], ParseMethod]:
    # A single score may appear as [[n]], "Rating: n" and "rating: n" at once: every match
    # counts, so two different numbers anywhere make the output ambiguous, not a guess.
    if len(rubric.dimensions) == 1:
        dim = rubric.dimensions[0]
        paths: list[tuple[ParseMethod, re.Pattern[str]]] = [
            ("bracket", _BRACKET),
            ("labelled", _LABELLED),
            ("dimension_text", _dimension_pattern(dim.name)),
        ]
        found = [(method, pattern.findall(raw)) for method, pattern in paths]
        values = [v for _, vs in found for v in vs]
        if values:
            method = next(m for m, vs in found if vs)
            return {dim.name: _single_value(values, dim)}, method
        raise _no_score(rubric, json_found)
    per_dim = {d.name: _dimension_pattern(d.name).findall(raw) for d in rubric.dimensions}
    if not any(per_dim.values()):
        raise _no_score(rubric, json_found)
    missing = [name for name, values in per_dim.items() if not values]
    if missing:
        raise _Unscorable("missing_dimension", f"no score found for {missing}")
    return {d.name: _single_value(per_dim[d.name], d) for d in rubric.dimensions}, "dimension_text"


def _no_score(rubric: Rubric, json_found: bool) -> _Unscorable:
    where = "a JSON object without any dimension" if json_found else "no JSON object"
    names = ", ".join(d.name for d in rubric.dimensions)
    return _Unscorable("no_score", f"{where} and no score pattern for {names} found")


def _single_value(values: list[str], dim: Dimension) -> float:
    numbers = {coerce_score(v, dim.scale_min, dim.scale_max, dim.name) for v in values}
    if len(numbers) > 1:
        shown = ", ".join(f"{n:g}" for n in sorted(numbers))
        raise _Unscorable("ambiguous", f"{dim.name}: several different scores ({shown})")
    return numbers.pop()


def results_frame(results: Sequence[RubricResult], rubric: Rubric | None = None) -> pd.DataFrame:
    """One row per result: status, weighted score, pass, reasons and ``score_<dim>`` columns.

    Unscored rows keep NaN scores and their ``unscored_kind``/``unscored_reason``, so
    ``frame.status.value_counts()`` counts them. With ``rubric``, every dimension has its
    ``score_<dim>`` column even when no result was scored (all NaN then).
    """
    rows = []
    for r in results:
        row = r.model_dump(exclude={"scores", "extras", "notes"})
        row.update({f"score_{k}": v for k, v in r.scores.items()})
        row.update({f"extra_{k}": v for k, v in r.extras.items()})
        rows.append(row)
    frame = pd.DataFrame(rows)
    for dim in rubric.dimensions if rubric is not None else ():
        if f"score_{dim.name}" not in frame:
            frame[f"score_{dim.name}"] = float("nan")
    return frame
