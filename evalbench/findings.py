"""What a study found, in its own words: its key result, caveats and risks, written once.

Each benchmark's ``report.py`` states them (``findings(result) -> Findings``, registered as
:attr:`evalbench.studies.Study.findings`); the report opens with them
(:func:`evalbench.display.header`), the manifest keeps them (``findings:``) and the one-page
summary carries the key result, the top caveat and the risks (:mod:`evalbench.summary`).
So the summary says what the study found, in the same sentences as its report.

Sentences are escaped HTML fragments (made with :func:`evalbench.display.fill`), in plain
words: an estimate reads "about 66%, likely between 48% and 80%" (:func:`about`). A run
that measured nothing has no key number: :func:`honest` says "No result" with why.
"""

from __future__ import annotations

import difflib
import html
import math
import re
from collections.abc import Sequence
from statistics import NormalDist
from typing import Any, NamedTuple

from evalbench.measured import Measured, no_result_text, nothing_measured, why


class Findings(NamedTuple):
    """A study's findings, each an escaped HTML fragment (no block tags).

    Attributes:
        key_result: the key result in plain words, with each number's uncertainty.
        caveats: how (not) to read it, the most important first: what would mislead a
            reader who took the key result at face value.
        risks: what may be wrong with the measurement itself (a biased judge, answers
            that miss by a character), most important first, each with its numbers.
        cost: what the run cost, when the study knows it better than the calls recorded
            in the run's own folder (a sweep's cells); ``""`` otherwise.
        detail: the report's technical key sentence (method, test names, every count):
            shown in the report below the findings, not kept for the summary.
    """

    key_result: str
    caveats: tuple[str, ...] = ()
    risks: tuple[str, ...] = ()
    cost: str = ""
    detail: str = ""

    def as_row(self) -> dict[str, Any]:
        """The manifest's form (``findings: {...}``; without :attr:`detail`)."""
        return {
            "key_result": self.key_result,
            "caveats": list(self.caveats),
            "risks": list(self.risks),
            "cost": self.cost,
        }


def from_row(row: Any) -> Findings | None:
    """:class:`Findings` back from the manifest; ``None`` for a row that is not one (an older
    run, a manifest written by hand or damaged)."""
    if not isinstance(row, dict) or not isinstance(row.get("key_result"), str):
        return None
    cost = row.get("cost")
    return Findings(
        row["key_result"],
        _texts(row.get("caveats")),
        _texts(row.get("risks")),
        cost if isinstance(cost, str) else "",
    )


def _texts(value: Any) -> tuple[str, ...]:
    return tuple(t for t in value if isinstance(t, str)) if isinstance(value, list) else ()


# ------------------------------------------------------------------------------ numbers in words


def percent(value: float) -> str:
    """A share as a whole percentage (``0.655`` -> ``66%``), one decimal under 1% and above
    99% (where the whole number would read 0% or 100%); "—" when missing."""
    if value != value:
        return "—"
    digits = 1 if 0 < value < 0.01 or 0.99 < value < 1 else 0
    return f"{value * 100:.{digits}f}%"


def score(value: float, digits: int = 1) -> str:
    """A score with ``digits`` decimals; "—" when missing."""
    return "—" if value != value else f"{value:.{digits}f}"


def about(estimate: float, low: float, high: float, kind: str = "share", digits: int = 1) -> str:
    """``"about 66%, likely between 48% and 80%"`` (``kind``: ``share``, ``score`` with
    ``digits`` decimals, or ``rating``: whole numbers); without an interval (NaN bounds)
    only ``"about 66%"``."""
    shown = {"share": percent, "rating": lambda v: score(v, 0)}.get(
        kind, lambda v: score(v, digits)
    )
    text = f"about {shown(estimate)}"
    if low == low and high == high:
        text += f", likely between {shown(low)} and {shown(high)}"
    return text


def signed(value: float) -> str:
    """A difference of shares in percentage points, as a number: ``+12``, ``-3``."""
    return "—" if value != value else f"{value * 100:+.0f}"


def signed_points(value: float) -> str:
    """A difference of shares in percentage points: ``+12 points``, ``-3 points``."""
    return "—" if value != value else f"{signed(value)} points"


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``"1 task"``, ``"5,090 items"``, ``"2 categories"`` (``plural`` when not ``noun`` + s)."""
    if n == 1:
        return f"{n} {noun}"
    if plural is None:
        plural = (
            noun[:-1] + "ies" if noun.endswith("y") and noun[-2:-1] not in "aeiou" else noun + "s"
        )
    return f"{n:,d} {plural}"


def ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th``, ``11th``, ``22nd``."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def joined(names: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    names = list(names)
    return " and ".join(names) if len(names) <= 2 else ", ".join(names[:-1]) + " and " + names[-1]


# ------------------------------------------------------------------------------ no result


def no_result(reason: str) -> Findings:
    """The findings of a run that measured nothing: no number, the reason."""
    text = html.escape(why(reason), quote=True)
    return Findings(f"No result: {text}. Nothing was measured, so there is no number to report.")


def honest(findings: Findings | None, measured: Sequence[Measured]) -> Findings | None:
    """A study's findings as a reader may see them: when no system scored anything, "no
    result" with why (never the study's sentences, which would print numbers over nothing);
    a system that scored nothing is named first among the caveats."""
    if measured and nothing_measured(measured):
        return no_result(no_result_text(list(measured)))
    if findings is None:
        return None
    empty = [
        html.escape(f"No result for {m.system}: {why(no_result_text([m]))}.", quote=True)
        for m in measured
        if not m.scored
    ]
    return findings._replace(caveats=(*empty, *findings.caveats))


# ------------------------------------------------------------------------------ safe HTML


_ALLOWED = re.compile(r"(</?(?:b|i|em|strong|mark|code)>)")
"""The only tags a finding keeps on the summary page (no attributes)."""


def safe_html(fragment: str) -> str:
    """``fragment`` (escaped HTML from a manifest: it may have been edited) with only plain
    inline tags kept (``b i em strong mark code``, no attributes), balanced (a stray closing
    tag is dropped, an open one closed at the end); everything else shows as text. Entities
    are normalised: text is unescaped, then escaped again."""
    out: list[str] = []
    open_tags: list[str] = []
    for i, part in enumerate(_ALLOWED.split(fragment)):
        if not i % 2:
            out.append(html.escape(html.unescape(part), quote=True))
        elif not part.startswith("</"):
            open_tags.append(part[1:-1])
            out.append(part)
        elif open_tags and open_tags[-1] == part[2:-1]:
            open_tags.pop()
            out.append(part)
    return "".join(out) + "".join(f"</{tag}>" for tag in reversed(open_tags))


# ------------------------------------------------------------------------------ differences


NEAR_RATIO = 0.75
"""A wrong answer at least this alike to the expected one (:class:`difflib.SequenceMatcher`
ratio, case and surrounding space ignored) is a near miss: a typo, a swapped pair of
characters, a format the scorer does not accept."""
NEAR_LENGTH = 4
"""Shorter answers are never near misses (``16`` for ``15`` is a different number)."""
MAX_MARKED = 400
"""Longer texts are not compared (the comparison is quadratic in the worst case)."""


def marked_pair(answer: str, expected: str) -> tuple[str, str]:
    """Both texts as escaped HTML with the span where they differ in ``<mark>``: what lies
    between their common start and their common end (``kramh<mark>nc</mark>eb`` and
    ``kramh<mark>cn</mark>eb``). Texts with nothing in common at either end, or equal, are
    escaped without marks (marking all of both says nothing)."""
    start = _common_prefix(answer, expected)
    end = _common_prefix(answer[start:][::-1], expected[start:][::-1])
    if answer == expected or (not start and not end):
        return html.escape(answer, quote=True), html.escape(expected, quote=True)
    return _marked(answer, start, end), _marked(expected, start, end)


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _marked(text: str, start: int, end: int) -> str:
    middle = text[start : len(text) - end]
    span = f"<mark>{html.escape(middle, quote=True)}</mark>" if middle else ""
    head, tail = text[:start], text[len(text) - end :]
    return html.escape(head, quote=True) + span + html.escape(tail, quote=True)


def near_miss(answer: str, expected: str) -> bool:
    """Whether a wrong ``answer`` is a near miss of ``expected``: at least
    :data:`NEAR_LENGTH` characters and alike (ratio at least :data:`NEAR_RATIO`, case and
    surrounding space ignored), but not equal."""
    a, b = answer.strip().lower(), expected.strip().lower()
    if min(len(a), len(b)) < NEAR_LENGTH or a == b or max(len(a), len(b)) > MAX_MARKED:
        return False
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio() >= NEAR_RATIO


# ------------------------------------------------------------------------------ common caveats


def size_caveat(n: int, unit: str, level: float) -> str:
    """``"Only 32 tasks: each share is known to about ±17 points (95%), so systems closer
    than that may not really differ."``; ``""`` from 400 items on (±5 points or better)."""
    if n <= 0 or n >= SMALL_SAMPLE:
        return ""
    z = NormalDist().inv_cdf(0.5 + level / 2)
    half = z * math.sqrt(0.25 / n)
    plural = unit if n == 1 else f"{unit}s"
    return html.escape(
        f"Only {n:,d} {plural}: each share is known to about ±{half * 100:.0f} points "
        f"({level:.0%}), so systems closer than that may not really differ.",
        quote=True,
    )


SMALL_SAMPLE = 400
"""From this many items a share near 50% is known to ±5 points (95%) or better."""
