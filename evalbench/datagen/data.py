"""Reference problems: real AIME (pinned public files, Hugging Face tables) or evalbench's
own demo problems (the I/O edge).

Reference problems serve three purposes in the study: one is shown in every generation
prompt as a style reference, they are the opponents of the win-rate comparison, and the
near-duplicate check runs against them. Sources: MathArena's LaTeX transcription of AIME
2024–2025 and the Qwen2.5-Math evaluation copy of AIME 2024 (registered, pinned and
sha256-checked in :mod:`evalbench.sources`), any Hugging Face AIME table
(:func:`load_hf_reference`), or ``demo``: 30 AIME-style problems written for evalbench
(:func:`demo_path`; not AIME problems), so the demo study runs offline.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalbench.records import iter_csv, none_for_missing, read_jsonl
from evalbench.sources import fetch, record_read

from .scoring import ANSWER_MAX, ANSWER_MIN, parse_answer

_REFERENCE_COLUMNS = ["id", "source", "year", "contest", "number", "problem", "answer", "solution"]


def load_reference(
    sources: Sequence[str] = ("qwen25math", "matharena"), *, years: Sequence[int] = (2024, 2025)
) -> pd.DataFrame:
    """Reference problems: real AIME from the registered pinned files (mirror, cache or
    download), or evalbench's demo problems.

    ``qwen25math`` is the Qwen2.5-Math evaluation copy of AIME 2024 (30 problems, with
    AoPS solutions); ``matharena`` is MathArena's LaTeX transcription of AIME 2024 and 2025
    (60 problems, answers from its ``answers.csv``). Both sources are kept, so 2024
    problems appear twice; use :func:`unique_reference` for one row per problem. ``demo``
    is :func:`load_demo_reference` (offline; no year, so ``years`` does not filter it).

    Args:
        sources: which sources to load, in order.
        years: contest years to keep (``qwen25math`` only has 2024).

    Returns:
        Columns ``id, source, year, contest, number, problem, answer (int), solution``.
    """
    loaders: dict[str, Callable[[], pd.DataFrame]] = {
        "qwen25math": load_qwen25math_aime24,
        "matharena": lambda: pd.concat(
            [load_matharena_aime(y, c) for y in years for c in ("I", "II")], ignore_index=True
        ),
        "demo": load_demo_reference,
    }
    unknown = [s for s in sources if s not in loaders]
    if unknown:
        raise ValueError(f"load_reference: unknown source(s) {unknown}; known: {list(loaders)}")
    frames = [loaders[s]() for s in sources]
    df = pd.concat(frames, ignore_index=True) if frames else _empty_reference()
    kept = df["year"].isin(list(years)) | (df["source"] == DEMO)
    return df[kept].reset_index(drop=True)


DEMO = "demo"
"""The reference source of evalbench's own demo problems (:func:`load_demo_reference`)."""


def demo_path() -> Path:
    """``evalbench/demo/datagen``: 30 AIME-style problems written for evalbench (not AIME
    problems; see its README), each answer an integer 0–999 recomputed in the tests."""
    return Path(str(resources.files("evalbench").joinpath("demo").joinpath("datagen")))


def load_demo_reference() -> pd.DataFrame:
    """evalbench's demo reference problems (``problems.jsonl`` of :func:`demo_path`): ids
    ``demo:p01``..., no year or contest, ``number`` 1, 2, ...

    Raises:
        ValueError: a row without ``id``/``problem``/``answer`` or with an answer that is not
            an integer 0–999 (naming file and line).
    """
    path = demo_path() / "problems.jsonl"
    record_read(path, "datagen demo reference problems")
    rows = []
    for line, item in enumerate(read_jsonl(path), start=1):
        where = f"{path}:{line}"
        if not all(isinstance(item.get(k), (str, int)) for k in ("id", "problem", "answer")):
            raise ValueError(f"{where}: needs 'id', 'problem' and 'answer'")
        rows.append(_reference_row(DEMO, None, None, line, item["problem"], item["answer"],
                                   item.get("solution"), where=where, key=item["id"]))  # fmt: skip
    return _reference_frame(rows)


def load_qwen25math_aime24() -> pd.DataFrame:
    """AIME 2024 I+II (30 problems) from Qwen2.5-Math's ``evaluation/data/aime24/test.jsonl``.

    Contest and number come from each row's AoPS wiki URL
    (``.../2024_AIME_I_Problems/Problem_1``).
    """
    path = fetch("aime/qwen25math/aime24", progress=False)
    rows = []
    for line, item in enumerate(read_jsonl(path), start=1):
        m = re.search(r"(\d{4})_AIME_(I{1,2})_Problems/Problem_(\d+)", str(item.get("url", "")))
        if m is None:
            raise ValueError(f"{path}:{line}: url {item.get('url')!r} names no AIME problem")
        year, contest, number = int(m.group(1)), m.group(2), int(m.group(3))
        rows.append(
            _reference_row(
                "qwen25math",
                year,
                contest,
                number,
                item["problem"],
                item["answer"],
                item.get("solution"),
                where=f"{path}:{line}",
            )
        )
    return _reference_frame(rows)


def load_matharena_aime(year: int, contest: str) -> pd.DataFrame:
    """One AIME contest (15 problems) from MathArena's ``problems/<n>.tex`` + ``answers.csv``."""
    base = f"aime/matharena/aime_{year}_{contest}"
    answers_path = fetch(f"{base}/answers", progress=False)
    answers = _read_answers_csv(answers_path)
    rows = []
    for number in range(1, 16):
        if number not in answers:
            raise ValueError(f"{answers_path}: no answer for problem {number}")
        tex = fetch(f"{base}/{number}", progress=False).read_text(encoding="utf-8")
        rows.append(
            _reference_row(
                "matharena",
                year,
                contest,
                number,
                tex.strip(),
                answers[number],
                None,
                where=f"{answers_path} (problem {number})",
            )
        )
    return _reference_frame(rows)


def _read_answers_csv(path: Path) -> dict[int, str]:
    header, rows = iter_csv(path, error=ValueError)
    if header != ["id", "answer"]:
        raise ValueError(f"{path}: expected header 'id,answer', got {header}")
    answers: dict[int, str] = {}
    lines: dict[int, int] = {}
    for line, row in rows:
        text = row["id"] or ""
        if not (text.isascii() and text.strip().isdigit()):
            raise ValueError(f"{path}:{line}: id {text!r} is not a problem number")
        number = int(text)
        if number in lines:
            raise ValueError(f"{path}:{line}: problem {number} already on line {lines[number]}")
        lines[number], answers[number] = line, row["answer"] or ""
    return answers


def _reference_row(
    source: str,
    year: Any,
    contest: Any,
    number: Any,
    problem: str,
    answer: Any,
    solution: Any,
    *,
    where: str,
    key: Any = None,
) -> dict[str, Any]:
    value = parse_answer(answer)
    if value is None or not ANSWER_MIN <= value <= ANSWER_MAX:
        raise ValueError(f"{where}: answer {answer!r} is not an integer 0-999")
    if key is None:
        key = "-".join(str(p) for p in (year, contest, number) if p is not None)
    return {
        "id": f"{source}:{key}",
        "source": source,
        "year": year,
        "contest": contest,
        "number": number,
        "problem": problem,
        "answer": value,
        "solution": solution if isinstance(solution, str) and solution.strip() else None,
    }


def _empty_reference() -> pd.DataFrame:
    return pd.DataFrame(columns=_REFERENCE_COLUMNS)


def _reference_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The reference rows as a frame; a missing contest or solution stays ``None`` (pandas 3
    would store NaN in a text column)."""
    frame = pd.DataFrame(rows, columns=_REFERENCE_COLUMNS)
    texts = ["contest", "solution"]
    return none_for_missing(frame, texts)


_HF_COLUMN_CANDIDATES: dict[str, tuple[str, ...]] = {
    "problem": ("problem", "question", "problem_text"),
    "answer": ("answer", "final_answer"),
    "id": ("id", "problem_id", "unique_id"),
    "year": ("year",),
    "contest": ("part", "contest", "exam"),
    "number": ("problem_number", "number", "problem_idx", "problem_index"),
    "solution": ("solution",),
}


def reference_from_rows(rows: Any, *, source: str) -> pd.DataFrame:
    """Map a Hugging Face AIME table onto the reference columns (pure; no download).

    Column names are matched case-insensitively with spaces as underscores, so
    ``Question``/``problem``, ``Answer``, ``ID``, ``Year``, ``Problem Number`` and ``Part``
    (the ``TianHongZXY/aime-1983-2025`` and AoPS-derived layouts) and ``id, problem,
    answer`` (``math-ai/aime25``) all map. Year, contest and number missing as columns are
    read from an id like ``2025-II-7`` when possible.

    Args:
        rows: a ``datasets.Dataset`` (anything with ``to_pandas()``) or a DataFrame.
        source: label for the ``source`` column and the id prefix (e.g. the dataset name).

    Raises:
        ValueError: no problem or answer column, or an answer that is not an integer
            0–999 (naming the row).
    """
    df = rows.to_pandas() if hasattr(rows, "to_pandas") else pd.DataFrame(rows)
    found = _match_columns(list(df.columns))
    for needed in ("problem", "answer"):
        if needed not in found:
            raise ValueError(f"{source}: no {needed!r} column among {list(df.columns)}")
    out = []
    for i, row in enumerate(df.to_dict("records")):
        get = {k: _clean(row.get(col)) for k, col in found.items()}
        year, contest, number = _id_parts(get.get("id"), get)
        key = get.get("id")
        if key is None and None in (year, number):
            key = i
        out.append(
            _reference_row(
                source,
                year,
                contest,
                number,
                str(get["problem"]),
                get["answer"],
                get.get("solution"),
                where=f"{source} row {i}",
                key=key,
            )
        )
    return _reference_frame(out)


def _match_columns(columns: list[str]) -> dict[str, str]:
    norm = {re.sub(r"[\s\-]+", "_", str(c).strip().lower()): c for c in columns}
    found: dict[str, str] = {}
    for field, names in _HF_COLUMN_CANDIDATES.items():
        hit = next((norm[n] for n in names if n in norm), None)
        if hit is not None:
            found[field] = hit
    return found


def _clean(value: Any) -> Any:
    if value is None or (np.isscalar(value) and pd.isna(value)):
        return None
    return value


def _id_parts(raw_id: Any, got: Mapping[str, Any]) -> tuple[Any, Any, Any]:
    year, contest, number = got.get("year"), got.get("contest"), got.get("number")
    m = re.search(r"((?:19|20)\d\d)\D+?(?:(I{1,2})\D+)?(\d{1,2})$", str(raw_id or ""))
    if m:
        year = year if year is not None else int(m.group(1))
        contest = contest if contest is not None else m.group(2)
        number = number if number is not None else int(m.group(3))
    if isinstance(contest, str):
        contest = contest.strip().upper().removeprefix("AIME").strip() or None
    return (
        int(year) if year is not None else None,
        contest,
        int(number) if number is not None else None,
    )


HF_REFERENCE_DATASETS = ("math-ai/aime25", "TianHongZXY/aime-1983-2025")
"""Hugging Face AIME sets :func:`load_hf_reference` is known to map."""


def load_hf_reference(
    dataset: str = "TianHongZXY/aime-1983-2025",
    *,
    split: str | None = None,
    revision: str | None = None,
) -> pd.DataFrame:
    """Real AIME problems from a Hugging Face dataset (needs ``datasets`` and network/cache).

    Args:
        dataset: e.g. ``math-ai/aime25`` (AIME 2025, 30 problems) or
            ``TianHongZXY/aime-1983-2025`` (900+ problems).
        split: which split; ``None`` takes the only split there is.
        revision: a commit to pin (recommended for reproducible reports).

    Returns:
        The reference columns, via :func:`reference_from_rows`.
    """
    from datasets import load_dataset  # lazy: optional and slow to import

    loaded = load_dataset(dataset, revision=revision)
    if split is None:
        if len(loaded) != 1:
            raise ValueError(f"{dataset}: several splits {list(loaded)}; pass split=")
        split = next(iter(loaded))
    return reference_from_rows(loaded[split], source=dataset)


def unique_reference(
    reference: pd.DataFrame, prefer: Sequence[str] = ("matharena", "qwen25math")
) -> pd.DataFrame:
    """One row per (year, contest, number), keeping the first source in ``prefer``.

    Rows without a full (year, contest, number) are all kept.
    """
    rank = {s: i for i, s in enumerate(prefer)}
    df = reference.assign(_rank=reference["source"].map(rank).fillna(len(rank)))
    df = df.sort_values("_rank", kind="stable")
    keyed = df[["year", "contest", "number"]].notna().all(axis=1)
    kept = pd.concat([df[keyed].drop_duplicates(["year", "contest", "number"]), df[~keyed]])
    return kept.drop(columns="_rank").sort_index().reset_index(drop=True)


def answer_mismatches(reference: pd.DataFrame) -> pd.DataFrame:
    """Problems that two sources both hold but with different answers (should be empty).

    Returns:
        One row per disagreeing pair: ``year, contest, number, id_x, answer_x, id_y,
        answer_y``.
    """
    keys = ["year", "contest", "number"]
    cols = [*keys, "id", "source", "answer"]
    keyed = reference.loc[reference[keys].notna().all(axis=1), cols]
    pairs = keyed.merge(keyed, on=keys)
    pairs = pairs[pairs["source_x"] < pairs["source_y"]]
    bad = pairs[pairs["answer_x"] != pairs["answer_y"]]
    return bad[[*keys, "id_x", "answer_x", "id_y", "answer_y"]].reset_index(drop=True)
