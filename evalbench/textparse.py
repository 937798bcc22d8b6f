"""Robust extraction of JSON objects from LLM output.

Judges and generators are asked for JSON and answer with prose around it, a fenced block,
or LaTeX whose single backslashes (``\\frac``, ``\\(``) are not valid JSON escapes. These
helpers find the object and repair exactly those backslashes; anything still unparseable
is reported as ``None`` so the caller can count it (never a default value).
"""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
# A backslash that does not start a valid JSON escape (\" \\ \/ \b \f \n \r \t \uXXXX), or
# that starts one but is really LaTeX: \b \f \r \t followed by a letter (\beta, \frac,
# \right, \times: models never mean a backspace or form feed there) and the LaTeX commands
# that begin with \n (\nu, \neq, ...). A newline followed by a word ("\nThe") is kept, and
# so is \uXXXX; \u without four hex digits is LaTeX (\underline, \uparrow).
_LATEX_N = r"n(?:u|eq|e|abla|eg|ot|otin|i|mid|ewline|olimits|leq|geq)(?![A-Za-z])"
_BAD_ESCAPE = re.compile(
    r"(?<!\\)((?:\\\\)*)\\(?=[bfrt][A-Za-z]|" + _LATEX_N + r'|u(?![0-9a-fA-F]{4})|[^"\\/bfnrtu])'
)
MAX_PARSE_CHARS = 200_000


def repair_latex_backslashes(text: str) -> str:
    """Double every backslash that would be an invalid JSON escape (LaTeX commands).

    ``{"a": "\\frac{1}{2}"}`` (single backslash) becomes ``{"a": "\\\\frac{1}{2}"}`` so that
    ``json.loads`` yields the LaTeX the model meant. Valid escapes (``\\n``, ``\\"``,
    ``\\u00e9``) are left alone, except ``\\b \\f \\r \\t`` followed by a letter and the
    ``\\n...`` LaTeX commands (``\\nu``, ``\\neq``), which are LaTeX in practice.
    """
    return _BAD_ESCAPE.sub(lambda m: m.group(1) + "\\\\", text)


def candidate_json_texts(text: str) -> list[str]:
    """Fenced blocks first (last one first), then the outermost ``{...}`` span of the text."""
    out = [m.group(1).strip() for m in reversed(list(_FENCE.finditer(text)))]
    start, end = text.find("{"), text.rfind("}")
    if start != -1 and end > start:
        out.append(text[start : end + 1])
    return out


def parse_json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object found in ``text`` (fenced or bare), LaTeX backslashes repaired.

    Returns:
        The parsed object, or ``None`` when no candidate parses to a dict (or the text is
        longer than ``MAX_PARSE_CHARS``, which no well-behaved judge produces).
    """
    if not text or len(text) > MAX_PARSE_CHARS:
        return None
    for candidate in candidate_json_texts(text):
        for attempt in (repair_latex_backslashes(candidate), candidate):
            try:
                value = json.loads(attempt)
            except (json.JSONDecodeError, RecursionError):
                continue
            if isinstance(value, dict):
                return value
    return None


BIDI_CONTROLS = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""Unicode's bidirectional control characters (marks, embeddings, overrides, isolates): in a
page, one in a system name reorders what follows it (a right-to-left override showed "28%
to 61%" as "%16 ,%82")."""


TERMINAL_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
"""C0 and C1 control characters and DEL, but tab and line breaks: a terminal printing one
(ESC, BEL, CSI) takes it for a command (a system name recoloured what ``compare`` printed
after it and set the window's title)."""


def without_bidi_controls(text: str) -> str:
    """``text`` without :data:`BIDI_CONTROLS` (the letters of any script stay as they are)."""
    return BIDI_CONTROLS.sub("", text)
