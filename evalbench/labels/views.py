"""What the page is sent and what it may send back (pure; no HTTP here).

:func:`task_view` describes the task to the page (dimensions, statuses, instructions),
:func:`item_view` one item as escaped HTML sections (pairwise: the two answers in this
annotator's left/right order and nothing that names a system), and :func:`parse_label`
turns a submitted form into a :class:`~.storage.LabelRecord`, refusing anything off the
scale with a one-line reason.
"""

from __future__ import annotations

import json
import math
from typing import Any

from .render import plain_html, to_html
from .storage import LabelRecord, now_utc
from .tasks import CHOICES, STATUSES, Item, Tasks, left_side

MAX_COMMENT = 5000
"""Characters of a comment or reason."""


class LabelRejected(ValueError):
    """A submitted label is invalid (the message says which field and why)."""


def dimensions(tasks: Tasks) -> list[dict[str, Any]]:
    """The scored dimensions (rubric and verification kinds; ``[]`` for pairwise)."""
    if tasks.spec.kind == "pairwise":
        return []
    return [
        {
            "name": d.name,
            "description": d.description,
            "min": d.scale_min,
            "max": d.scale_max,
            "integer": float(d.scale_min).is_integer() and float(d.scale_max).is_integer(),
        }
        for d in tasks.spec.rubric_obj().dimensions
    ]


def task_view(tasks: Tasks) -> dict[str, Any]:
    """The task as the page needs it (no item text)."""
    spec = tasks.spec
    return {
        "title": spec.title,
        "kind": spec.kind,
        "instructions_html": to_html(spec.instructions) if spec.instructions else "",
        "dimensions": dimensions(tasks),
        "statuses": list(STATUSES) if spec.kind == "verification" else [],
        "reason": spec.reason,
        "total": len(tasks.items),
    }


def _section(title: str, html: str, *, collapsed: bool = False) -> dict[str, Any]:
    return {"title": title, "html": html, "collapsed": collapsed}


def item_sections(tasks: Tasks, item: Item, annotator: str) -> list[dict[str, Any]]:
    """The item as titled HTML sections, in display order (every text escaped)."""
    f = item.fields
    if tasks.spec.kind == "verification":
        out = [_section("Topic", plain_html(f["topic"]))] if f.get("topic") else []
        return [
            *out,
            _section("Problem", to_html(f["problem"])),
            _section("Answer", to_html(f["answer"])),
            _section("Solution", to_html(f["solution"]), collapsed=True),
        ]
    out = [_section("Question", to_html(f["question"]))]
    for number, doc in enumerate(f.get("documents") or [], start=1):
        out.append(_section(f"Document {number}", to_html(doc), collapsed=True))
    if f.get("reference"):
        out.append(_section("Reference answer", to_html(f["reference"]), collapsed=True))
    if tasks.spec.kind == "rubric":
        return [*out, _section("Answer", to_html(f["answer"]))]
    left = left_side(tasks, annotator, item.id)
    right = "y" if left == "x" else "x"
    return [
        *out,
        _section("Answer A", to_html(f[f"answer_{left}"])),
        _section("Answer B", to_html(f[f"answer_{right}"])),
    ]


def item_view(
    tasks: Tasks, item: Item, annotator: str, position: int, current: LabelRecord | None
) -> dict[str, Any]:
    """One item for the page: its sections and this annotator's current label, if any.

    A pairwise item's id is not sent (a user's ids may name the systems); its current
    label is sent as the ``choice`` the annotator made (left / right / tie).
    """
    label = None
    if current is not None:
        label = {
            "scores": current.scores,
            "status": current.status,
            "choice": current.choice,
            "comment": current.comment,
            "revision": current.revision,
            "stale": current.item_digest != item.digest,
        }
    return {
        "position": position,
        "item": None if tasks.spec.kind == "pairwise" else item.id,
        "sections": item_sections(tasks, item, annotator),
        "label": label,
    }


def _scores(tasks: Tasks, raw: Any) -> dict[str, float]:
    if not isinstance(raw, dict):
        raise LabelRejected("scores: expected one score per dimension")
    out = {}
    for dim in dimensions(tasks):
        value = raw.get(dim["name"])
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise LabelRejected(f"scores.{dim['name']}: missing (every dimension needs a score)")
        value = float(value)
        if not (math.isfinite(value) and dim["min"] <= value <= dim["max"]):
            raise LabelRejected(
                f"scores.{dim['name']}: {value:g} is outside {dim['min']:g}-{dim['max']:g}"
            )
        if dim["integer"] and not value.is_integer():
            raise LabelRejected(f"scores.{dim['name']}: {value:g} is not a whole number")
        out[dim["name"]] = value
    extra = sorted(set(raw) - set(out))
    if extra:
        named = ", ".join(repr(name)[:40] for name in extra[:3])
        more = ", ..." if len(extra) > 3 else ""
        raise LabelRejected(f"scores: {len(extra)} unknown dimension(s): {named}{more}")
    return out


def decode_body(raw: bytes) -> Any:
    """A submitted body as JSON (UTF-8, as RFC 8259 requires between systems).

    Raises:
        LabelRejected: not UTF-8, not JSON, or nested too deeply for the parser.
    """
    try:
        return json.loads(raw.decode("utf-8"), parse_constant=_not_json)
    except RecursionError:
        raise LabelRejected("JSON nested too deeply (a label is a flat object)") from None
    except ValueError as exc:  # UnicodeDecodeError and JSONDecodeError included
        raise LabelRejected(f"body is not JSON: {exc}") from None


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # Python's json reads NaN and Infinity; JSON has none


def _comment(tasks: Tasks, raw: Any) -> str:
    text = raw if isinstance(raw, str) else ""
    if raw is not None and not isinstance(raw, str):
        raise LabelRejected("comment: expected text")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: valid JSON, not storable as UTF-8
        raise LabelRejected("comment: not valid Unicode (an unpaired surrogate)") from None
    if len(text) > MAX_COMMENT:
        raise LabelRejected(f"comment: {len(text)} characters (max {MAX_COMMENT})")
    if tasks.spec.reason == "required" and not text.strip():
        raise LabelRejected("comment: required by this task")
    return "" if tasks.spec.reason == "off" else text


def _pairwise_fields(tasks: Tasks, item: Item, annotator: str, body: dict) -> dict[str, Any]:
    choice = body.get("choice")
    if choice not in CHOICES:
        raise LabelRejected(f"choice: expected one of {', '.join(CHOICES)}")
    left = left_side(tasks, annotator, item.id)
    preference = "tie" if choice == "tie" else ("a" if (choice == "left") == (left == "x") else "b")
    return {"choice": choice, "left": left, "preference": preference, **item.hidden}


def _elapsed(value: Any) -> float | None:
    """The browser's seconds-on-item, or ``None`` when it is not a sane number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if 0 <= value < 1e7 else None


def parse_label(
    tasks: Tasks, item: Item, annotator: str, position: int, body: dict[str, Any]
) -> LabelRecord:
    """The :class:`LabelRecord` of a submitted form (revision set later by the store).

    Raises:
        LabelRejected: a missing or off-scale score, an unknown status or choice, a
            comment that is too long (or missing when required).
    """
    kind = tasks.spec.kind
    fields: dict[str, Any] = {}
    if kind == "pairwise":
        fields = _pairwise_fields(tasks, item, annotator, body)
    else:
        fields["scores"] = _scores(tasks, body.get("scores"))
    if kind == "verification":
        if body.get("status") not in STATUSES:
            raise LabelRejected(f"status: expected one of {', '.join(STATUSES)}")
        fields["status"] = body["status"]
    elapsed = _elapsed(body.get("elapsed_s"))
    return LabelRecord(
        task=tasks.name, kind=kind, item=item.id, item_digest=item.digest, annotator=annotator,
        time=now_utc(), position=position, comment=_comment(tasks, body.get("comment")),
        elapsed_s=elapsed, **fields,
    )  # fmt: skip
