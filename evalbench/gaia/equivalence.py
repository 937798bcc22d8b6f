"""The simulation's truth of "the same answer": when two GAIA answers mean the same thing.

Not a scorer: the official verdict is :func:`~.scoring.question_scorer`, and semantic
matching is a judge's (:mod:`evalbench.judge.matching`). This module is what the *simulated*
semantic judge knows (it gives :func:`equivalent`'s verdict with a set accuracy) and what the
simulated assistants use to write a right answer in another form, so that a demo's agreement
table can be checked against a known truth. The rules, deliberately few and stated:

- numbers are equal in value: digits (``$``, ``%``, thousands commas and spaces ignored;
  ``"42"`` = ``"42.0"``), English number words (``"forty-two"``), Chinese numerals
  (``"四十二"``; full-width digits read as digits);
- a number may carry a unit: units of the same kind are converted (``"5 km"`` =
  ``"5000 m"``, ``"3.5 h"`` = ``"210 min"``); a number without a unit gets the benefit of the
  doubt against one with a unit (``"12600"`` = ``"12600 seconds"``, as simple-evals'
  equality checker does);
- dates are equal as dates (``"2024-07-19"`` = ``"19 July 2024"`` = ``"July 19, 2024"``);
- text is equal after case, Unicode width, punctuation, spaces and the articles a/an/the are
  removed and weekday, month and a few country abbreviations are expanded (``"Wed"`` =
  ``"Wednesday"``);
- a gold answer with ``,`` or ``;`` (not a number like ``1,000``) is a list: equal element
  by element, in order when the question asks for one (it mentions order, sorting, an
  alphabetical or chronological order, a sequence, a rank or "first"), else in any order.
"""

from __future__ import annotations

import calendar
import datetime as dt
import math
import re
import unicodedata
from collections.abc import Iterator
from typing import NamedTuple

_ARTICLES = frozenset({"a", "an", "the"})
_ORDER_CUES = re.compile(
    r"order|sort|alphabetic|chronolog|ascending|descending|sequence|\brank|\bfirst\b", re.I
)
_DIGITS = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?")
_THOUSANDS = re.compile(r"(?<=\d)[,\s](?=\d{3}(?:\D|$))")
_LIST_NUMBER = re.compile(r"[-+]?\$?\d{1,3}(?:,\d{3})+(?:\.\d+)?%?")

# (aliases, kind, factor to the kind's base unit)
_UNITS: tuple[tuple[tuple[str, ...], str, float], ...] = (
    (("km/h", "kph", "kmh", "kilometres per hour", "kilometers per hour"), "speed", 1000 / 3600),
    (("m/s", "metres per second", "meters per second"), "speed", 1.0),
    (("km", "kilometre", "kilometres", "kilometer", "kilometers"), "length", 1000.0),
    (("m", "metre", "metres", "meter", "meters"), "length", 1.0),
    (("cm", "centimetre", "centimetres", "centimeter", "centimeters"), "length", 0.01),
    (("mm", "millimetre", "millimetres", "millimeter", "millimeters"), "length", 0.001),
    (("kg", "kilogram", "kilograms", "kilo", "kilos"), "mass", 1000.0),
    (("g", "gram", "grams"), "mass", 1.0),
    (("mg", "milligram", "milligrams"), "mass", 0.001),
    (("h", "hr", "hrs", "hour", "hours"), "time", 3600.0),
    (("min", "mins", "minute", "minutes"), "time", 60.0),
    (("s", "sec", "secs", "second", "seconds"), "time", 1.0),
    (("day", "days"), "time", 86400.0),
    (("usd", "dollar", "dollars", "us dollars"), "money", 1.0),
    (("percent", "per cent"), "percent", 1.0),
)
_UNIT_OF: dict[str, tuple[str, float]] = {
    alias: (kind, factor) for aliases, kind, factor in _UNITS for alias in aliases
}
_ALIASES_LONGEST_FIRST = sorted(_UNIT_OF, key=len, reverse=True)

_SMALL_WORDS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen "
                "fourteen fifteen sixteen seventeen eighteen nineteen")  # fmt: skip
_SMALL = {word: i for i, word in enumerate(_SMALL_WORDS.split(" "))}
_TENS_WORDS = "twenty thirty forty fifty sixty seventy eighty ninety"
_TENS = {word: 10 * i for i, word in enumerate(_TENS_WORDS.split(" "), start=2)}
_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9}
_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6,
              "七": 7, "八": 8, "九": 9}  # fmt: skip
_MAX_NUMERAL_CHARS = 400
_CN_SMALL = {"十": 10, "百": 100, "千": 1000}
_CN_BIG = {"万": 10**4, "亿": 10**8}

_WEEKDAYS = {d.lower()[:3]: d.lower() for d in calendar.day_name}
_MONTHS = {m.lower()[:3]: m.lower() for m in calendar.month_name if m}
_ABBREVIATIONS = {**_WEEKDAYS, **_MONTHS, "tues": "tuesday", "thurs": "thursday",
                  "sept": "september", "usa": "unitedstates", "uk": "unitedkingdom"}  # fmt: skip


class Quantity(NamedTuple):
    """A number as written (``value``), the kind of its unit and the unit's factor to the
    kind's base unit (kind ``None``: no unit)."""

    value: float
    kind: str | None = None
    factor: float = 1.0


# ------------------------------------------------------------------------------ the truth


def equivalent(answer: str, gold: str, question: str = "") -> bool:
    """Whether ``answer`` means the same as ``gold`` (the rules in the module docstring).

    Args:
        answer: the model's (extracted) answer.
        gold: GAIA's ``Final answer``.
        question: the item's question: whether a list's order matters, and the unit a gold
            number without one is in (the first unit the question names, e.g. "in km").
    """
    unit = question_unit(question)
    if is_list(gold):
        ordered = _ORDER_CUES.search(question) is not None
        return _lists_equal(split_list(answer), split_list(gold), ordered, unit)
    return same_element(answer, gold, unit)


def is_list(gold: str) -> bool:
    """A gold answer with ``,`` or ``;`` that is not one number written with thousands commas."""
    text = gold.strip()
    return ("," in text or ";" in text) and _LIST_NUMBER.fullmatch(text) is None


def split_list(text: str) -> list[str]:
    """The elements of a list answer: split on ``,`` and ``;``, blanks dropped."""
    return [part.strip() for part in re.split(r"[,;]", text) if part.strip()]


def _lists_equal(given: list[str], expected: list[str], ordered: bool, unit: str | None) -> bool:
    if len(given) != len(expected):
        return False
    if ordered:
        return all(same_element(a, g, unit) for a, g in zip(given, expected, strict=True))
    unused = list(given)
    for gold in expected:
        hit = next((a for a in unused if same_element(a, gold, unit)), None)
        if hit is None:
            return False
        unused.remove(hit)
    return True


def same_element(answer: str, gold: str, unit: str | None = None) -> bool:
    """One answer against one gold element: as quantities (a gold number without a unit is
    in ``unit``, when given), as dates, else as text."""
    expected = quantity(gold)
    if expected is not None:
        if expected.kind is None and unit is not None:
            expected = Quantity(expected.value, *_UNIT_OF[unit])
        given = quantity(answer)
        return given is not None and same_quantity(given, expected)
    day = parse_date(gold)
    if day is not None:
        return parse_date(answer) == day
    return bool(text_key(gold)) and text_key(answer) == text_key(gold)


def same_quantity(a: Quantity, b: Quantity) -> bool:
    """Equal in base units when both have a unit (of one kind); else equal as written."""
    if a.kind is None or b.kind is None:
        return math.isclose(a.value, b.value, rel_tol=1e-9, abs_tol=1e-12)
    base_a, base_b = a.value * a.factor, b.value * b.factor
    return a.kind == b.kind and math.isclose(base_a, base_b, rel_tol=1e-9, abs_tol=1e-12)


def quantity(text: str) -> Quantity | None:
    """``text`` as a number with an optional unit (``"5 km"``, ``"forty-two"``), or ``None``."""
    clean = _normal(text).strip().rstrip(".")
    for alias in _ALIASES_LONGEST_FIRST:
        if clean.endswith(alias) and _unit_boundary(clean, alias):
            value = number_value(clean[: -len(alias)])
            if value is not None:
                return Quantity(value, *_UNIT_OF[alias])
    value = number_value(clean)
    return None if value is None else Quantity(value)


def _unit_boundary(text: str, alias: str) -> bool:
    before = text[: -len(alias)]
    return bool(before.strip()) and (not alias[0].isalpha() or not before[-1].isalpha())


def question_unit(question: str) -> str | None:
    """The first unit (two letters or more, not money) the question names, or ``None``."""
    found = []
    for alias in _UNIT_OF:
        if len(alias) > 1 and _UNIT_OF[alias][0] != "money":
            match = re.search(rf"(?<![\w/]){re.escape(alias)}(?![\w/])", _normal(question))
            if match:
                found.append((match.start(), -len(alias), alias))
    return min(found)[2] if found else None


def number_value(text: str) -> float | None:
    """A number written in digits, English words or Chinese numerals, or ``None`` (also for
    one too large for a float); a leading ``$``, a trailing ``%`` and thousands separators
    (``,`` or a space) are ignored."""
    clean = _normal(text).strip().removeprefix("$").removesuffix("%").strip()
    clean = _THOUSANDS.sub("", clean)
    if not clean:
        return None
    if _DIGITS.fullmatch(clean):
        value: float | None = float(clean)
    else:
        value = english_number(clean) if clean.isascii() else chinese_number(clean)
    return value if value is not None and math.isfinite(value) else None


def english_number(text: str) -> float | None:
    """``"forty-two"`` -> 42, ``"three hundred and ninety-one"`` -> 391, ``"five point
    five"`` -> 5.5; ``None`` for anything else (``"five five"`` too)."""
    words = [w for w in re.split(r"[\s-]+", text.lower().replace(",", " ")) if w and w != "and"]
    sign = -1.0 if words[:1] in (["minus"], ["negative"]) else 1.0
    words = words[1:] if sign < 0 else words
    whole, _, fraction = _split_on(words, "point")
    value = _english_integer(whole)
    if value is None or (fraction and not all(w in _SMALL and _SMALL[w] < 10 for w in fraction)):
        return None
    digits = "".join(str(_SMALL[w]) for w in fraction)
    return sign * (value + (float(f"0.{digits}") if digits else 0.0))


def _split_on(words: list[str], mark: str) -> tuple[list[str], bool, list[str]]:
    if mark not in words:
        return words, False, []
    i = words.index(mark)
    return words[:i], True, words[i + 1 :]


def _english_integer(words: list[str]) -> int | None:
    if not words:
        return None
    total = current = 0
    last = ""  # the kind of the previous word: a grammar small enough to reject "five five"
    for word in words:
        if word in _SMALL:
            value = _SMALL[word]
            if last in ("small", "teen") or (last == "tens" and not 0 < value < 10):
                return None
            current, last = current + value, "small" if value < 10 else "teen"
        elif word in _TENS and last not in ("small", "teen", "tens"):
            current, last = current + _TENS[word], "tens"
        elif word == "hundred" and last in ("small", "teen") and current < 100:
            current, last = current * 100, "hundred"
        elif word in _SCALES and current and last != "scale":
            total, current, last = total + current * _SCALES[word], 0, "scale"
        else:
            return None
    return total + current


def chinese_number(text: str) -> float | None:
    """``"四十二"`` -> 42, ``"一万三千五百二十"`` -> 13520, ``"二〇二四"`` -> 2024, ``"五点五"``
    -> 5.5, ``"负三"`` -> -3; ``None`` for anything else."""
    if len(text) > _MAX_NUMERAL_CHARS:  # past a float's range anyway (and int() refuses)
        return None
    sign = -1.0 if text.startswith("负") else 1.0
    body = text[1:] if sign < 0 else text
    whole, _, fraction = body.partition("点")
    value = _chinese_integer(whole)
    if value is None or not all(c in _CN_DIGITS for c in fraction):
        return None
    digits = "".join(str(_CN_DIGITS[c]) for c in fraction)
    return sign * (value + (float(f"0.{digits}") if digits else 0.0))


def _chinese_integer(text: str) -> int | None:
    if not text or any(c not in _CN_DIGITS and c not in _CN_SMALL and c not in _CN_BIG
                       for c in text):  # fmt: skip
        return None
    if all(c in _CN_DIGITS for c in text) and len(text) > 1:  # digit by digit: 二〇二四
        return int("".join(str(_CN_DIGITS[c]) for c in text))
    total = section = digit = 0
    for char in text:
        if char in _CN_DIGITS:
            digit = _CN_DIGITS[char]
        elif char in _CN_SMALL:
            section, digit = section + (digit or 1) * _CN_SMALL[char], 0
        elif char == "万":
            total, section, digit = total + (section + digit) * 10**4, 0, 0
        else:  # 亿
            total, section, digit = (total + section + digit) * 10**8, 0, 0
    return total + section + digit


def parse_date(text: str) -> dt.date | None:
    """``2024-07-19``, ``19 July 2024``, ``July 19, 2024`` (month names or their first three
    letters), or ``None``."""
    clean = re.sub(r"[.,]", " ", _normal(text)).split()
    for fmt in ("%Y-%m-%d", "%d %B %Y", "%B %d %Y", "%d %b %Y", "%b %d %Y"):
        try:
            return dt.datetime.strptime(" ".join(clean), fmt).date()
        except ValueError:
            continue
    return None


def text_key(text: str) -> str:
    """Text without case, width, punctuation, spaces or articles, abbreviations expanded."""
    words = re.findall(r"\w+", _normal(text))
    return "".join(_ABBREVIATIONS.get(w, w) for w in words if w not in _ARTICLES)


def _normal(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


SEMANTIC_CASES = ("same", "variant", "different")
"""The kinds of :func:`semantic_case`."""


def semantic_case(truth: bool, official: bool) -> str:
    """The kind of an answer, by its truth and the official verdict: ``same`` (equivalent and
    accepted by the official scorer), ``variant`` (equivalent, rejected by it) or
    ``different`` (not equivalent)."""
    if not truth:
        return "different"
    return "same" if official else "variant"


# ------------------------------------------------------------------------------ other forms


def equivalent_forms(gold: str, question: str = "") -> list[str]:
    """Other ways to write ``gold`` that :func:`equivalent` accepts (no duplicates, never
    ``gold`` itself): number words, Chinese numerals, the question's unit appended, another
    unit of the same kind, another date format, a weekday abbreviation, a list reordered
    (when the question asks for no order) or with its whole numbers in words."""
    if is_list(gold):
        forms = list(_list_forms(split_list(gold), _ORDER_CUES.search(question) is not None))
    else:
        forms = list(_element_forms(gold.strip(), question_unit(question)))
    unique = dict.fromkeys(f for f in forms if f != gold and equivalent(f, gold, question))
    return list(unique)


def _list_forms(parts: list[str], ordered: bool) -> Iterator[str]:
    if not ordered and len(parts) > 1:
        yield ", ".join(reversed(parts))
    words = [_words_or_none(p) or p for p in parts]
    if words != parts:
        yield ", ".join(words)


def _element_forms(gold: str, unit: str | None) -> Iterator[str]:
    words = _words_or_none(gold)
    if words:
        yield words
        yield to_chinese(int(float(gold))) if float(gold) < 10**8 else words
    given = quantity(gold)
    if given is not None and given.kind is None and unit is not None:
        yield f"{gold} {unit}"
        given = Quantity(given.value, *_UNIT_OF[unit])
    if given is not None and given.kind is not None:
        yield from _unit_forms(given)
    day = parse_date(gold)
    if day is not None:
        yield f"{day.day} {day:%B %Y}"
        yield f"{day:%B} {day.day}, {day.year}"
    short = {v: k for k, v in _WEEKDAYS.items()}.get(text_key(gold))
    if short:
        yield short.capitalize()


def _words_or_none(text: str) -> str | None:
    value = number_value(text) if _DIGITS.fullmatch(text.strip()) else None
    if value is None or not value.is_integer() or not 0 <= value < 10**9:
        return None
    return to_words(int(value))


def _unit_forms(given: Quantity) -> Iterator[str]:
    """The quantity in every unit of its kind where it is a short, exact decimal, each unit
    written out in full (``76.7 km/h`` -> ``76.7 kilometers per hour``)."""
    base = given.value * given.factor
    for aliases, kind, factor in _UNITS:
        shown = f"{base / factor:.6g}"
        exact = math.isclose(float(shown) * factor, base, rel_tol=1e-12)
        if kind == given.kind and "e" not in shown and exact:
            yield f"{shown} {aliases[-1]}"


def to_words(n: int) -> str:
    """An integer 0 ≤ n < 10⁹ in English words: 391 -> ``three hundred ninety-one``."""
    if n < 20:
        return list(_SMALL)[n]
    if n < 100:
        tens = list(_TENS)[n // 10 - 2]
        return tens if n % 10 == 0 else f"{tens}-{list(_SMALL)[n % 10]}"
    if n < 1000:
        rest = f" {to_words(n % 100)}" if n % 100 else ""
        return f"{list(_SMALL)[n // 100]} hundred{rest}"
    for name, scale in reversed(_SCALES.items()):
        if n >= scale:
            rest = f" {to_words(n % scale)}" if n % scale else ""
            return f"{to_words(n // scale)} {name}{rest}"
    raise ValueError(f"to_words: {n} is out of range")


def to_chinese(n: int) -> str:
    """An integer 0 ≤ n < 10⁸ in Chinese numerals: 42 -> ``四十二``, 105 -> ``一百零五``,
    12 -> ``十二``, 1352000 -> ``一百三十五万二千``."""
    if not 0 <= n < 10**8:
        raise ValueError(f"to_chinese: {n} is out of range")
    if n == 0:
        return "零"
    high, low = divmod(n, 10**4)
    text = _chinese_section(low)
    if high:
        text = _chinese_section(high) + "万" + ("零" if 0 < low < 1000 else "") + text
    return text[1:] if text.startswith("一十") else text


def _chinese_section(n: int) -> str:
    digits = "零一二三四五六七八九"
    out, zero = "", False
    for value, unit in ((1000, "千"), (100, "百"), (10, "十"), (1, "")):
        digit = n // value % 10
        if not digit:
            zero = bool(out)
            continue
        out += ("零" if zero else "") + digits[digit] + unit
        zero = False
    return out
