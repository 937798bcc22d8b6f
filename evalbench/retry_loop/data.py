"""The questions a retry-loop study asks: the shipped demo set or a user's file (the I/O edge).

A file is ``.jsonl`` (one object per line) or ``.csv`` with the columns ``item`` (or ``id``),
``question`` and optionally ``reference`` (shown to the judge). A malformed file is a
:class:`RetryDataError` naming the file, the line and the column.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from evalbench.records import iter_csv, iter_jsonl

COLUMNS = ["item", "question", "reference"]

DEMO_ITEMS: tuple[tuple[str, str], ...] = (
    ("Which planet is closest to the Sun, and how long is its year?",
     "Mercury; its year lasts about 88 Earth days."),
    ("What is the tallest mountain above sea level, and on which border does it lie?",
     "Mount Everest (8,849 m), on the border of Nepal and China (Tibet)."),
    ("Who wrote the play Romeo and Juliet, and roughly when?",
     "William Shakespeare, in the mid-1590s."),
    ("What does photosynthesis produce besides glucose?", "Oxygen."),
    ("What is the capital of Canada, and in which province is it?", "Ottawa, in Ontario."),
    ("How many degrees are in the interior angles of a triangle?", "180 degrees."),
    ("What is the chemical symbol of sodium, and why is it not S?",
     "Na, from its Latin name natrium; S is sulfur."),
    ("Which blood vessels carry blood away from the heart?", "Arteries."),
    ("What is the largest desert in the world by area, counting polar deserts?",
     "Antarctica; the largest hot desert is the Sahara."),
    ("What is 15% of 200, and how do you compute it?", "30: 200 × 0.15."),
    ("In which year did the first human spaceflight take place, and who flew?",
     "1961, Yuri Gagarin on Vostok 1."),
    ("What does RAM stand for, and is it volatile?",
     "Random-access memory; yes, it loses its contents without power."),
    ("Which gas makes up most of Earth's atmosphere, and about how much?",
     "Nitrogen, about 78%."),
    ("What is the main language of Brazil, and why?",
     "Portuguese, from Portuguese colonisation."),
    ("What is the boiling point of ethanol at sea level, approximately?", "About 78 °C."),
    ("Who proposed the three laws of motion, and in which book?",
     "Isaac Newton, in the Principia (1687)."),
    ("How many minutes are in a day, and how is it computed?", "1,440: 24 × 60."),
    ("What is the hardest natural material, and what is it made of?",
     "Diamond, a form of carbon."),
    ("Which ocean lies between Africa and Australia?", "The Indian Ocean."),
    ("What is the function of the lungs?",
     "Gas exchange: oxygen into the blood, carbon dioxide out."),
    ("What does a thermometer measure, and in which SI unit?", "Temperature, in kelvin."),
    ("What is the largest mammal, and what does it eat?", "The blue whale; mostly krill."),
    ("Who painted The Starry Night, and in which year?", "Vincent van Gogh, in 1889."),
    ("What is the freezing point of water in Fahrenheit?", "32 °F."),
    ("What is a prime number, and is 9 one?",
     "A whole number above 1 divisible only by 1 and itself; 9 is not (3 × 3)."),
    ("Which continent has the most countries?", "Africa, with 54 recognised countries."),
    ("What does DNS do on the internet?", "It translates domain names into IP addresses."),
    ("What is the currency of the United Kingdom, and its ISO code?",
     "The pound sterling, GBP."),
    ("How long does light from the Sun take to reach Earth?", "About 8 minutes 20 seconds."),
    ("What causes tides on Earth?", "Mainly the Moon's gravity, and the Sun's to a lesser extent."),
    ("What is the square of 12, and the square root of 169?", "144, and 13."),
    ("Which instrument has 88 keys in its standard form?", "The piano."),
)  # fmt: skip
"""The shipped demo set: ``(question, reference)`` pairs, item ids ``demo-01`` … (written for
evalbench; no outside source)."""


class RetryDataError(ValueError):
    """A question file that cannot be read (the message names the file, line and column)."""


def demo_items() -> pd.DataFrame:
    """The shipped demo questions: ``item, question, reference``."""
    rows = [(f"demo-{i:02d}", q, r) for i, (q, r) in enumerate(DEMO_ITEMS, start=1)]
    return pd.DataFrame(rows, columns=COLUMNS)


def load_items(source: str) -> pd.DataFrame:
    """The questions of ``source``: ``"demo"`` or a ``.jsonl`` / ``.csv`` file.

    Returns:
        ``item, question, reference`` (reference ``None`` where absent), in file order.

    Raises:
        RetryDataError: an unknown suffix, an unreadable line, a missing or empty
            ``item``/``question``, or an item id used twice.
    """
    if source == "demo":
        return demo_items()
    path = Path(source)
    if path.suffix not in (".jsonl", ".csv"):
        raise RetryDataError(f"{path}: expected a .jsonl or .csv file of questions")
    rows = _jsonl_rows(path) if path.suffix == ".jsonl" else _csv_rows(path)
    return _checked(path, rows)


def _jsonl_rows(path: Path) -> list[tuple[int, dict[str, object]]]:
    return list(iter_jsonl(path, error=RetryDataError))


def _csv_rows(path: Path) -> list[tuple[int, dict[str, object]]]:
    return list(iter_csv(path, error=RetryDataError)[1])


def _checked(path: Path, rows: list[tuple[int, dict[str, object]]]) -> pd.DataFrame:
    out, seen = [], set()
    for line_no, row in rows:
        item = row.get("item", row.get("id"))
        for column, value in (("item", item), ("question", row.get("question"))):
            if not isinstance(value, (str, int)) or not str(value).strip():
                raise RetryDataError(f"{path}:{line_no}: column '{column}': missing or empty")
        if str(item) in seen:
            raise RetryDataError(f"{path}:{line_no}: column 'item': {item!r} is used twice")
        seen.add(str(item))
        reference = row.get("reference")
        out.append((str(item), str(row["question"]), str(reference) if reference else None))
    if not out:
        raise RetryDataError(f"{path}: no question in the file")
    return pd.DataFrame(out, columns=COLUMNS, dtype=object)  # None stays None, not NaN
