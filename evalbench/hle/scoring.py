"""HLE scoring: the official prompts, the judge's structured output, and a robust parser.

The answering prompt, the judge prompt and the judge's output schema reproduce
centerforaisafety/hle @ 26dca2e253b405105b4c3d8c2f5af06f86f90c66
(``hle_eval/run_model_predictions.py`` line 11 and ``format_message``;
``hle_eval/run_judge_results.py`` ``JUDGE_PROMPT`` and ``ExtractedAnswer``), byte for byte:
their SHA-256 are pinned in :data:`PROMPT_SHA256` and checked by the tests. Quirks kept:
the literal ``\\%`` and the doubled "if there if there" in the judge prompt, the system
prompt sent with role ``user`` to models whose name contains ``o1``, the question always
sent as a list of content parts (text, then the image). The response is put into the judge
prompt verbatim, as the official code does (no fencing: a response can address the judge).

Parsing (:func:`parse_judgment`), stated rules:

- ``correct``: after stripping spaces, quotes, ``*``/`` ` `` and a trailing ``.``/``!``,
  case-insensitively ``yes`` or ``no`` (so ``Yes.`` and ``**no**`` count); anything else,
  a missing field, a JSON boolean, or two different verdicts make the judgment
  **unscored** (counted and shown, never "no");
- ``confidence``: a number, optionally with ``%`` (``85``, ``"85%"``, ``"85 %"``, 85.0);
  a number strictly between 0 and 1 *without* ``%`` is read as a fraction (0.85 -> 85,
  noted ``fraction``); a value outside 0-100 is kept as ``confidence_official`` (the
  official script divides whatever integer the judge wrote by 100, unclipped) but is not a
  valid ``confidence`` (noted ``out_of_range``); a missing or unreadable value leaves both
  empty (noted ``missing`` / ``unparseable``) — the judge is told to write 100 when the
  response states none, and we never invent that 100 for it;
- ``extracted_final_answer`` and ``reasoning`` are informational: missing ones are noted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Literal, NamedTuple

from pydantic import Field

from evalbench.judge.official import EXTRACTED_ANSWER_GRADER
from evalbench.records import Record
from evalbench.textparse import MAX_PARSE_CHARS, parse_json_object

SYSTEM_PROMPT = (
    "Your response should be in the following format:\n"
    "Explanation: {your explanation for your answer choice}\n"
    "Answer: {your chosen answer}\n"
    "Confidence: {your confidence score between 0% and 100% for your answer}"
)
"""The official answering system prompt (one prompt for both answer types since upstream
commit 67b3251, 2025-06-06)."""

JUDGE_PROMPT = EXTRACTED_ANSWER_GRADER
"""The official judge prompt (one user message, no system message), quirks included."""

PROMPT_SHA256 = {
    "SYSTEM_PROMPT": "40f399fe8c277e2cb98ad8ca663461141d1abbf01a18da3c4129eccc706b4326",
    "JUDGE_PROMPT": "0f0023ee579b8c134f1834ed8952778b9e01460e31d47c242ee3629da9d44835",
}
"""SHA-256 of the official template strings (UTF-8, placeholders unformatted)."""

JUDGE_FIELDS = ("extracted_final_answer", "reasoning", "correct", "confidence")

JUDGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "extracted_final_answer": {"type": "string"},
        "reasoning": {"type": "string"},
        "correct": {"type": "string", "enum": ["yes", "no"]},
        "confidence": {"type": "integer"},
        # A field of the official pydantic model (``strict: Literal[True]``), not the API flag.
        "strict": {"type": "boolean", "enum": [True]},
    },
    "required": [*JUDGE_FIELDS, "strict"],
    "additionalProperties": False,
}
"""The JSON schema of the official ``ExtractedAnswer`` model."""

JUDGE_RESPONSE_FORMAT: dict[str, Any] = {
    "type": "json_schema",
    "json_schema": {"name": "ExtractedAnswer", "strict": True, "schema": JUDGE_SCHEMA},
}
"""``response_format`` of a structured-output judge (as ``client.beta.chat.completions.parse``
sends for ``ExtractedAnswer``)."""

# ---------------------------------------------------------------------------- messages


def build_messages(question: str, image: str = "", *, model: str = "") -> list[dict[str, Any]]:
    """The official answering messages: the system prompt, then the question as content parts.

    The user content is always a list (``[{"type": "text", ...}]``, plus ``{"type":
    "image_url", "image_url": {"url": image}}`` after the text when there is an image), and
    the system prompt goes with role ``user`` when ``"o1"`` is in the model name.
    """
    content: list[dict[str, Any]] = [{"type": "text", "text": question}]
    if image:
        content.append({"type": "image_url", "image_url": {"url": image}})
    role = "user" if "o1" in model else "system"
    return [{"role": role, "content": SYSTEM_PROMPT}, {"role": "user", "content": content}]


def judge_messages(question: str, correct_answer: str, response: str) -> list[dict[str, str]]:
    """The official judge request: one user message, the judge prompt filled in (the question
    text only: the judge never sees the image)."""
    prompt = JUDGE_PROMPT.format(
        question=question, correct_answer=correct_answer, response=response
    )
    return [{"role": "user", "content": prompt}]


# ---------------------------------------------------------------------------- parsing

ParseMethod = Literal["json", "text"]
ConfidenceNote = Literal["missing", "unparseable", "fraction", "out_of_range"]


class Judgment(Record):
    """One parsed judge output: scored (a yes/no verdict) or explicitly unscored."""

    status: Literal["scored", "unscored"]
    correct: bool | None = None
    """The verdict (``None`` when unscored)."""
    extracted_final_answer: str | None = None
    reasoning: str | None = None
    confidence: float | None = None
    """The stated confidence, valid 0-100 (``None`` when missing, unreadable or out of range)."""
    confidence_official: float | None = None
    """The number the official script would use (unclipped; ``None`` when missing)."""
    confidence_note: ConfidenceNote | None = None
    """Why ``confidence`` differs from the judge's text, if it does."""
    parse_method: ParseMethod | None = None
    unscored_reason: str | None = None
    notes: list[str] = Field(default_factory=list)
    """Non-fatal problems (a missing informational field)."""


class _Confidence(NamedTuple):
    valid: float | None
    official: float | None
    note: ConfidenceNote | None


_FIELD_LINE = re.compile(
    r"^[\s>*_#`-]*(extracted_final_answer|reasoning|correct|confidence)[\s*_`]*:[\s*_`]*(.*)$",
    re.IGNORECASE | re.MULTILINE,
)
_CONFIDENCE_TEXT = re.compile(r"^([-+]?(?:\d+(?:\.\d*)?|\.\d+))\s*(%|percent)?$", re.IGNORECASE)
_DECORATION = " \t\"'*`_"


def parse_judgment(text: str | None) -> Judgment:
    """Parse a judge's reply (a JSON object, or the ``field: value`` text form).

    A JSON object holding ``correct`` is read as JSON (a structured reply is one); otherwise
    each ``extracted_final_answer: / reasoning: / correct: / confidence:`` line (markdown
    bold and bullets allowed; ``reasoning`` runs until the next field). Rules: see the
    module docstring.
    """
    raw = text or ""
    if not raw.strip():
        return _unscored("the judge output is empty")
    if len(raw) > MAX_PARSE_CHARS:
        return _unscored(f"the judge output has {len(raw):,} characters")
    obj = parse_json_object(raw)
    if obj is not None and "correct" in _lower_keys(obj):
        return _judgment(_lower_keys(obj), "json")
    fields = _text_fields(raw)
    if isinstance(fields, str):
        return _unscored(fields)
    return _judgment(fields, "text")


def _lower_keys(obj: Mapping[str, Any]) -> dict[str, Any]:
    return {str(k).strip().lower(): v for k, v in obj.items()}


def _text_fields(raw: str) -> dict[str, Any] | str:
    matches = list(_FIELD_LINE.finditer(raw))
    fields: dict[str, Any] = {}
    verdicts: set[str] = set()
    for index, match in enumerate(matches):
        name, value = match.group(1).lower(), match.group(2)
        if name == "reasoning":  # free text up to the next field line
            end = matches[index + 1].start() if index + 1 < len(matches) else len(raw)
            value = raw[match.start(2) : end]
        if name == "correct":
            verdicts.add(_verdict_word(value))
        fields.setdefault(name, value.strip())
    if "correct" not in fields:
        return "no 'correct:' field in the judge output"
    if len(verdicts) > 1:
        return f"several different 'correct:' values ({', '.join(sorted(verdicts))})"
    return fields


def _verdict_word(value: str) -> str:
    return value.strip().strip(_DECORATION).rstrip(".!").strip(_DECORATION).lower()


def _judgment(fields: Mapping[str, Any], method: ParseMethod) -> Judgment:
    verdict = fields.get("correct")
    if not isinstance(verdict, str) or _verdict_word(verdict) not in ("yes", "no"):
        shown = json.dumps(verdict)[:60]
        return _unscored(f"'correct' must be yes or no, got {shown}", method)
    confidence = parse_confidence(fields.get("confidence"), present="confidence" in fields)
    notes = [
        f"missing field {name!r}"
        for name in ("extracted_final_answer", "reasoning")
        if fields.get(name) is None
    ]
    return Judgment(
        status="scored",
        correct=_verdict_word(verdict) == "yes",
        extracted_final_answer=_optional_text(fields.get("extracted_final_answer")),
        reasoning=_optional_text(fields.get("reasoning")),
        confidence=confidence.valid,
        confidence_official=confidence.official,
        confidence_note=confidence.note,
        parse_method=method,
        notes=notes,
    )


def parse_confidence(value: Any, *, present: bool = True) -> _Confidence:
    """``(valid 0-100 or None, the official script's number or None, note)`` of one value.

    Examples: ``85`` and ``"85%"`` -> (85, 85, None); ``0.85`` -> (85, 85, "fraction");
    ``150`` -> (None, 150, "out_of_range"); ``"high"`` -> (None, None, "unparseable").
    """
    if not present or value is None:
        return _Confidence(None, None, "missing")
    number, percent = _confidence_number(value)
    if number is None:
        return _Confidence(None, None, "unparseable")
    note: ConfidenceNote | None = None
    if not percent and 0 < number < 1:
        number, note = number * 100, "fraction"
    if not 0 <= number <= 100:
        return _Confidence(None, number, "out_of_range")
    return _Confidence(number, number, note)


def _confidence_number(value: Any) -> tuple[float | None, bool]:
    if isinstance(value, bool):
        return None, False
    if isinstance(value, (int, float)):
        return (
            (float(value), False)
            if value == value and abs(value) != float("inf")
            else (None, False)
        )
    if not isinstance(value, str):
        return None, False
    match = _CONFIDENCE_TEXT.match(value.strip().strip(_DECORATION).rstrip("."))
    if match is None:
        return None, False
    return float(match.group(1)), match.group(2) is not None


def _optional_text(value: Any) -> str | None:
    if value is None:
        return None
    return value.strip() if isinstance(value, str) else json.dumps(value)


def _unscored(reason: str, method: ParseMethod | None = None) -> Judgment:
    return Judgment(status="unscored", unscored_reason=reason, parse_method=method)


def judge_response_entry(judgment: Judgment, correct_answer: str) -> dict[str, Any] | None:
    """The official ``judge_response`` of a judged file (``None`` where the official script
    would have stored none: an unscored judgment, or one without a confidence number)."""
    if judgment.status != "scored" or judgment.confidence_official is None:
        return None
    number = judgment.confidence_official
    return {
        "correct_answer": correct_answer,
        "model_answer": judgment.extracted_final_answer or "None",
        "reasoning": judgment.reasoning or "",
        "correct": "yes" if judgment.correct else "no",
        "confidence": int(number) if float(number).is_integer() else number,
    }
