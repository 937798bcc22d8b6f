"""Generated-data quality study: AIME-style problem generation, validation and evaluation.

A generator model is shown a real AIME problem as a style reference and asked for a new
problem as JSON ``{problem, answer, solution, topic}``. This module holds the pure core of
the study: the reference problems, the generation prompt, parsing and validation of what
the generator wrote, near-duplicate detection against the real problems, the quality
summaries (rubric judge, win rate against real problems, topic and answer distributions,
human verification) and the conclusion against fixed thresholds.

The study (``study: datagen``, :class:`DatagenParams`, :func:`run_study`) drives them
through a run: :func:`generate_problems` asks the generator in rounds (round ``r`` retries
every slot still invalid after ``r − 1`` attempts; every answer is checkpointed, so a rerun
resumes), :func:`judge_problems` and :func:`compare_with_real` call the judges of
:mod:`evalbench.judge`, and :func:`study_verifications` reads human reviews. Model calls,
caching and run bookkeeping live in :mod:`evalbench.runs` and :mod:`evalbench.models`.

The three evaluation methods (rubric judge with pass ≥ 3.5 and excellent ≥ 4.5, pairwise
win rate against real problems with an ideal near 50%, human verification with
approved / rejected / needs_revision and a ``<data>_verifications.json`` file) follow the
AIME case study of Datawhale's *Hello-Agents*, chapter 12.4
(github.com/datawhalechina/hello-agents, ``code/chapter12/data_generation``). AIME
answers are integers 0–999 (MAA contest rules).

A simulated generator (:func:`sim_generation_output`) writes what a model would write,
including malformed outputs and light copies of the reference, so the whole study runs
offline with known ground truth: each simulated problem's hidden quality is
:func:`sim_true_quality` of its text, real problems' is :data:`REAL_TRUE_QUALITY`, and a
simulated reviewer (:func:`sim_review`) scores around the same truth.
"""

from __future__ import annotations

import csv
import hashlib
import html
import json
import math
import os
import re
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timezone
from fractions import Fraction
from functools import partial
from pathlib import Path
from typing import Annotated, Any, Literal, NamedTuple

import numpy as np
import pandas as pd
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)
from scipy import sparse
from scipy import stats as sps

from evalbench import agreement, stats
from evalbench.judge import JudgeCase, PairTask, RubricTask, judge_pairs, judge_rubric
from evalbench.models import ChatRequest, Job, ModelSpec, SimReply, SimSpec, SimTask
from evalbench.params import StudyParams, data_path
from evalbench.records import Record, read_jsonl, write_jsonl
from evalbench.sources import fetch
from evalbench.textparse import parse_json_object

TOPICS: tuple[str, ...] = (
    "algebra",
    "number_theory",
    "combinatorics",
    "geometry",
    "probability",
    "sequences_series",
    "complex_numbers",
)
"""The fixed topic set a generated problem must declare (snake_case)."""
DIMENSIONS: tuple[str, ...] = ("correctness", "clarity", "difficulty_match", "completeness")
"""Rubric dimensions scored 1–5 by the judge and by human reviewers."""
VERIFICATION_STATUSES: tuple[str, ...] = ("approved", "rejected", "needs_revision")
"""A human reviewer's decision on one problem."""
PASS_SCORE = 3.5
"""A problem passes when its (weighted) score is at least this."""
EXCELLENT_SCORE = 4.5
"""A problem is excellent when its (weighted) score is at least this."""
# Weighted sums like 0.3·4 + 0.2·3 + ... can land a hair below an exact 3.5.
_SLACK = 1e-9
ANSWER_MIN, ANSWER_MAX = 0, 999
PROBLEM_MIN_CHARS, PROBLEM_MAX_CHARS = 30, 5000
SOLUTION_MAX_CHARS = 20_000
DEFAULT_DUPLICATE_THRESHOLD = 0.6
"""Cosine similarity (char 3–5-gram TF-IDF, numbers masked) from which a pair is a near-duplicate.

Measured on the 60 distinct AIME 2024–2025 problems of the mirror
(``tests/test_datagen.py``): the most similar pair of *different* real problems scores
0.46; a copy with every number changed and two phrases swapped scores at least 0.83 (30
seeds); the same problem in its two published transcriptions (Qwen2.5-Math vs MathArena)
scores at least 0.66, except 2024 I-5, which MathArena rewrote (0.33). 0.6 sits in the
gap with a margin on both sides.
"""
THRESHOLDS: dict[str, float] = {
    "judge_mean": 4.0,
    "win_rate": 0.45,
    "judge_pass_rate": 0.80,
    "human_pass_rate": 0.90,
}
"""Criteria the conclusion checks (judge mean on 1–5, rates as fractions)."""

_REFERENCE_COLUMNS = ["id", "source", "year", "contest", "number", "problem", "answer", "solution"]


# --------------------------------------------------------------------------- reference


def load_reference(
    sources: Sequence[str] = ("qwen25math", "matharena"), *, years: Sequence[int] = (2024, 2025)
) -> pd.DataFrame:
    """Real AIME problems from the registered pinned files (mirror, cache or download).

    ``qwen25math`` is the Qwen2.5-Math evaluation copy of AIME 2024 (30 problems, with
    AoPS solutions); ``matharena`` is MathArena's LaTeX transcription of AIME 2024 and 2025
    (60 problems, answers from its ``answers.csv``). Both sources are kept, so 2024
    problems appear twice; use :func:`unique_reference` for one row per problem.

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
    }
    unknown = [s for s in sources if s not in loaders]
    if unknown:
        raise ValueError(f"load_reference: unknown source(s) {unknown}; known: {list(loaders)}")
    frames = [loaders[s]() for s in sources]
    df = pd.concat(frames, ignore_index=True) if frames else _empty_reference()
    return df[df["year"].isin(list(years))].reset_index(drop=True)


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
    return pd.DataFrame(rows, columns=_REFERENCE_COLUMNS)


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
    return pd.DataFrame(rows, columns=_REFERENCE_COLUMNS)


def _read_answers_csv(path: Path) -> dict[int, str]:
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        if reader.fieldnames != ["id", "answer"]:
            raise ValueError(f"{path}: expected header 'id,answer', got {reader.fieldnames}")
        return {int(r["id"]): r["answer"] for r in reader}


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
    return pd.DataFrame(out, columns=_REFERENCE_COLUMNS)


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


# --------------------------------------------------------------------------- generation

GENERATION_SYSTEM = (
    "You are a professional mathematics competition problem designer who writes "
    "original AIME-style problems."
)

_GENERATION_TEMPLATE = """\
Write one new AIME-style problem on the topic: {topic}.

Reference problem (for style only; your problem must be completely different, not a \
variant of it):
Problem: {problem}
Answer: {answer}

AIME problems:
1. have a single integer answer from 0 to 999;
2. need several steps of reasoning but no advanced theory;
3. are of medium to hard difficulty (like AIME problems 6-9).

Reply with one JSON object and nothing else:
{{"problem": "<the statement, LaTeX allowed>", "answer": <integer 0-999>, \
"solution": "<a complete worked solution>", "topic": "{topic}"}}
The topic must be one of: {topics}."""


class GenerationRequest(NamedTuple):
    """A generation prompt and the reference problem it shows."""

    messages: list[dict[str, str]]
    reference_id: str
    topic: str


def assign_topics(n: int, rng: np.random.Generator, topics: Sequence[str] = TOPICS) -> list[str]:
    """``n`` topics as balanced as possible (each topic ⌊n/k⌋ or ⌈n/k⌉ times), shuffled."""
    cycle = [topics[i % len(topics)] for i in range(n)]
    return [cycle[i] for i in rng.permutation(n)]


def pick_reference(reference: pd.DataFrame, rng: np.random.Generator) -> pd.Series:
    """One reference problem drawn uniformly with ``rng``."""
    if reference.empty:
        raise ValueError("pick_reference: the reference set is empty")
    return reference.iloc[int(rng.integers(len(reference)))]


def generation_messages(reference_row: Mapping[str, Any], topic: str) -> list[dict[str, str]]:
    """The chat messages asking for a new problem on ``topic`` in the style of one problem."""
    topic = _require_topic(topic)
    prompt = _GENERATION_TEMPLATE.format(
        topic=topic,
        problem=str(reference_row["problem"]).strip(),
        answer=reference_row["answer"],
        topics=", ".join(TOPICS),
    )
    return [
        {"role": "system", "content": GENERATION_SYSTEM},
        {"role": "user", "content": prompt},
    ]


def build_generation_messages(
    reference: pd.DataFrame, topic: str, rng: np.random.Generator
) -> GenerationRequest:
    """Draw a style reference with ``rng`` and build the generation prompt for ``topic``.

    Args:
        reference: the pool of real problems (e.g. :func:`unique_reference`).
        topic: one of :data:`TOPICS` (see :func:`assign_topics`).
        rng: the seeded generator that picks the reference problem.
    """
    row = pick_reference(reference, rng)
    return GenerationRequest(generation_messages(row, topic), str(row["id"]), topic)


def _require_topic(topic: str) -> str:
    norm = normalize_topic(topic)
    if norm is None:
        raise ValueError(f"unknown topic {topic!r}; choose one of {', '.join(TOPICS)}")
    return norm


# --------------------------------------------------------------------------- parsing


class GeneratedProblem(Record):
    """A generated problem that passed validation."""

    id: str
    """Identifier of the problem (unique within a run)."""
    topic: str
    """The topic the generator declared (one of ``TOPICS``)."""
    problem: str
    """The problem statement (LaTeX allowed)."""
    answer: int
    """The integer answer, 0–999."""
    solution: str
    """The generator's worked solution."""
    reference_id: str | None = None
    """The real problem shown as style reference."""
    requested_topic: str | None = None
    """The topic the prompt asked for (may differ from ``topic``)."""
    attempts: int = 1
    """Generation attempts it took (1 = first try)."""
    raw: str = ""
    """The generator's output exactly as returned."""


class InvalidGeneration(Record):
    """A generator output that failed parsing or validation (kept, never dropped)."""

    reason: str
    """Why it is invalid, e.g. ``answer 1000 is outside 0-999``."""
    raw: str
    """The output exactly as returned."""
    attempt: int = 1
    """Which attempt this was."""
    id: str | None = None
    """The problem slot it was meant to fill."""
    reference_id: str | None = None
    """The real problem shown as style reference."""


_INT_TEXT = re.compile(r"[+-]?\d+(?:\.0*)?")


def parse_answer(value: Any) -> int | None:
    """The integer an answer field stands for, or ``None`` when it is not an integer.

    Accepts ints, integral floats (``42.0``) and digit strings with optional leading
    zeros, sign or ``.0`` (``"042"``); rejects ``3.5``, ``"abc"``, booleans and NaN. The
    0–999 range is checked by :func:`validate`, not here.
    """
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return int(value) if math.isfinite(value) and float(value).is_integer() else None
    if isinstance(value, str) and _INT_TEXT.fullmatch(value.strip()):
        return int(float(value.strip())) if "." in value else int(value.strip())
    return None


def normalize_topic(topic: Any) -> str | None:
    """``"Number Theory"``/``"number-theory"`` -> ``"number_theory"``; ``None`` if not a topic."""
    if not isinstance(topic, str):
        return None
    norm = re.sub(r"[\s\-/]+", "_", topic.strip().lower())
    return norm if norm in TOPICS else None


def validate(obj: Mapping[str, Any]) -> list[str]:
    """Every reason the parsed generator output is not a usable problem (empty = valid).

    Checks: problem text of 30–5000 characters; integer answer 0–999 (see
    :func:`parse_answer`); a non-empty solution; a topic from :data:`TOPICS`.
    """
    reasons = []
    for field in ("problem", "answer", "solution", "topic"):
        if field not in obj or obj[field] is None:
            reasons.append(f"missing field {field!r}")
    if "problem" in obj and obj["problem"] is not None:
        reasons.extend(_problem_reasons(obj["problem"]))
    if "answer" in obj and obj["answer"] is not None:
        reasons.extend(_answer_reasons(obj["answer"]))
    if "solution" in obj and obj["solution"] is not None:
        reasons.extend(_solution_reasons(obj["solution"]))
    if "topic" in obj and obj["topic"] is not None and normalize_topic(obj["topic"]) is None:
        reasons.append(f"topic {str(obj['topic'])[:40]!r} is not one of {', '.join(TOPICS)}")
    return reasons


def _problem_reasons(problem: Any) -> list[str]:
    if not isinstance(problem, str):
        return [f"problem is a {type(problem).__name__}, not text"]
    n = len(problem.strip())
    if n < PROBLEM_MIN_CHARS:
        return [f"problem text too short ({n} < {PROBLEM_MIN_CHARS} chars)"]
    if n > PROBLEM_MAX_CHARS:
        return [f"problem text too long ({n} > {PROBLEM_MAX_CHARS} chars)"]
    return []


def _solution_reasons(solution: Any) -> list[str]:
    if not isinstance(solution, str):
        return [f"solution is a {type(solution).__name__}, not text"]
    if not solution.strip():
        return ["solution is empty"]
    if len(solution) > SOLUTION_MAX_CHARS:
        return [f"solution too long ({len(solution)} > {SOLUTION_MAX_CHARS} chars)"]
    return []


def _answer_reasons(answer: Any) -> list[str]:
    value = parse_answer(answer)
    if value is None:
        return [f"answer {str(answer)[:20]!r} is not an integer"]
    if not ANSWER_MIN <= value <= ANSWER_MAX:
        return [f"answer {value} is outside {ANSWER_MIN}-{ANSWER_MAX}"]
    return []


def parse_generated(
    text: str | None,
    *,
    id: str,
    reference_id: str | None = None,
    requested_topic: str | None = None,
    attempt: int = 1,
) -> GeneratedProblem | InvalidGeneration:
    """Parse and validate one generator output.

    The JSON object may be fenced or bare, with LaTeX single backslashes
    (:func:`evalbench.textparse.parse_json_object` repairs them).

    Args:
        text: the generator's output (``None`` for none).
        id: the problem slot it fills.
        reference_id: the real problem shown as style reference.
        requested_topic: the topic the prompt asked for.
        attempt: which attempt this was (1 = first).

    Returns:
        A :class:`GeneratedProblem`, or an :class:`InvalidGeneration` whose ``reason``
        says what is wrong (``no JSON object found`` when nothing parses).
    """
    raw = text or ""
    obj = parse_json_object(raw)

    def invalid(reason: str) -> InvalidGeneration:
        return InvalidGeneration(
            reason=reason, raw=raw, attempt=attempt, id=id, reference_id=reference_id
        )

    if obj is None:
        return invalid("no JSON object found" if raw.strip() else "empty output")
    reasons = validate(obj)
    if reasons:
        return invalid("; ".join(reasons))
    return GeneratedProblem(
        id=id,
        topic=str(normalize_topic(obj["topic"])),
        problem=obj["problem"].strip(),
        answer=int(parse_answer(obj["answer"])),  # type: ignore[arg-type]
        solution=obj["solution"].strip(),
        reference_id=reference_id,
        requested_topic=requested_topic,
        attempts=attempt,
        raw=raw,
    )


def problems_frame(records: Iterable[GeneratedProblem | Mapping[str, Any]]) -> pd.DataFrame:
    """Generated problems as a DataFrame (one row per problem, the record's fields).

    Raises:
        TypeError: an item is neither a :class:`GeneratedProblem` nor a mapping (e.g. an
            :class:`InvalidGeneration`, which belongs in its own table).
    """
    rows = []
    for r in records:
        if not isinstance(r, (GeneratedProblem, Mapping)):
            raise TypeError(f"problems_frame: expected GeneratedProblem, got {type(r).__name__}")
        rows.append(r.model_dump() if isinstance(r, GeneratedProblem) else dict(r))
    return pd.DataFrame(rows, columns=None if rows else list(GeneratedProblem.model_fields))


# --------------------------------------------------------------------------- near duplicates

_FIGURE = re.compile(
    r"\\begin\{(tikzpicture|asy)\}.*?\\end\{\1\}|\[asy\].*?\[/asy\]|<asy>.*?</asy>",
    re.DOTALL | re.IGNORECASE,
)
_LAYOUT = re.compile(
    r"\\(?:left|right|big|Big|displaystyle|textstyle|mathrm|mathbf|textbf|textit|text|"
    r"operatorname|quad|qquad)(?![a-zA-Z])|\\[,;:! ]"
)
_COMMAND = re.compile(r"\\([a-zA-Z]+)")
_OPERATOR = re.compile(r"([+\-=<>^*/|])")
_NOT_TOKEN = re.compile(r"[^a-z0-9+\-=<>^*/|]+")
_SYNONYM_COMMANDS = {"dfrac": "frac", "tfrac": "frac", "le": "leq", "ge": "geq"}


def normalize_problem_text(text: str, *, mask_numbers: bool = False) -> str:
    """Text reduced to what identifies a problem: no figures, markup, case or spacing.

    Drops figures (``tikzpicture``, ``[asy]``, ``<asy>``) and layout-only LaTeX
    (``\\left``, ``\\displaystyle``, ``\\,``), keeps command names as words (``\\frac`` ->
    ``frac``, ``\\dfrac`` -> ``frac``), lowercases, keeps letters, digits and
    ``+ - = < > ^ * / |`` as tokens and collapses whitespace, so ``$s+\\frac{1}{2}$`` and
    ``\\( s + \\dfrac{1}{2} \\)`` come out alike. With ``mask_numbers`` every number
    becomes ``0``, so a copy with changed numbers is the same text.
    """
    text = _LAYOUT.sub(" ", _FIGURE.sub(" ", text))
    text = _COMMAND.sub(lambda m: f" {_SYNONYM_COMMANDS.get(m.group(1), m.group(1))} ", text)
    text = _OPERATOR.sub(r" \1 ", _NOT_TOKEN.sub(" ", text.lower()))
    if mask_numbers:
        text = re.sub(r"\d+", "0", text)
    return " ".join(text.split())


def tfidf_vectors(texts: Sequence[str], ngram_range: tuple[int, int] = (3, 5)) -> sparse.csr_matrix:
    """L2-normalised TF-IDF rows of character n-grams (texts used as given).

    Same definition as scikit-learn's ``TfidfVectorizer(analyzer="char",
    ngram_range=..., lowercase=False)`` with its defaults: raw counts,
    ``idf = ln((1 + n) / (1 + df)) + 1``, rows scaled to unit length (an empty text
    stays a zero row).
    """
    lo, hi = ngram_range
    if not 1 <= lo <= hi:
        raise ValueError(f"tfidf_vectors: bad ngram_range {ngram_range}")
    vocab: dict[str, int] = {}
    rows, cols, vals = [], [], []
    for r, text in enumerate(texts):
        grams = Counter(
            text[i : i + n] for n in range(lo, hi + 1) for i in range(len(text) - n + 1)
        )
        for gram, count in grams.items():
            rows.append(r)
            cols.append(vocab.setdefault(gram, len(vocab)))
            vals.append(count)
    shape = (len(texts), len(vocab))
    tf = sparse.csr_matrix((np.array(vals, dtype=float), (rows, cols)), shape=shape)
    df = np.bincount(tf.indices, minlength=len(vocab))
    weighted = tf @ sparse.diags(np.log((1 + len(texts)) / (1 + df)) + 1)
    norms = np.sqrt(np.asarray(weighted.multiply(weighted).sum(axis=1)).ravel())
    scale = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
    return sparse.csr_matrix(sparse.diags(scale) @ weighted)


def similarity_matrix(
    texts_a: Sequence[str], texts_b: Sequence[str], ngram_range: tuple[int, int] = (3, 5)
) -> np.ndarray:
    """Cosine similarity of every normalised text in ``a`` with every one in ``b``.

    Texts go through :func:`normalize_problem_text` with numbers masked; the IDF weights
    are fitted on both lists together.
    """
    norm = [normalize_problem_text(t, mask_numbers=True) for t in [*texts_a, *texts_b]]
    if not texts_a or not texts_b:
        return np.zeros((len(texts_a), len(texts_b)))
    vectors = tfidf_vectors(norm, ngram_range)
    a, b = vectors[: len(texts_a)], vectors[len(texts_a) :]
    return np.asarray((a @ b.T).todense())


class DuplicateReport(NamedTuple):
    """Near-duplicates of reference problems among generated problems."""

    pairs: pd.DataFrame
    """Every ``generated_id, reference_id, similarity`` >= the threshold, most similar first."""
    top: pd.DataFrame
    """One row per generated problem: its closest reference, similarity, and ``flagged``."""
    threshold: float

    def flagged_ids(self) -> set[str]:
        """Ids of generated problems with a near-duplicate among the references."""
        return set(self.top.loc[self.top["flagged"], "generated_id"])


def near_duplicates(
    generated: pd.DataFrame,
    reference: pd.DataFrame,
    *,
    threshold: float = DEFAULT_DUPLICATE_THRESHOLD,
    ngram_range: tuple[int, int] = (3, 5),
) -> DuplicateReport:
    """Flag generated problems whose text nearly copies a reference problem.

    Character 3–5-gram TF-IDF cosine similarity after :func:`normalize_problem_text` with
    numbers masked (robust to changed numbers, swapped words and LaTeX/spacing
    differences). A problem is never compared with a reference of the same id, so
    ``near_duplicates(ref, ref)`` measures how close different real problems are. See
    :data:`DEFAULT_DUPLICATE_THRESHOLD` for how the threshold was chosen.

    Args:
        generated: needs columns ``id`` and ``problem``.
        reference: needs columns ``id`` and ``problem``.
        threshold: similarity from which a pair is flagged.
        ngram_range: character n-gram lengths.
    """
    sims = similarity_matrix(list(generated["problem"]), list(reference["problem"]), ngram_range)
    gen_ids = generated["id"].astype(str).to_numpy()
    ref_ids = reference["id"].astype(str).to_numpy()
    sims[gen_ids[:, None] == ref_ids[None, :]] = np.nan  # a problem is not its own copy
    gi, ri = np.nonzero(np.nan_to_num(sims, nan=-1.0) >= threshold)
    pairs = pd.DataFrame(
        {"generated_id": gen_ids[gi], "reference_id": ref_ids[ri], "similarity": sims[gi, ri]}
    ).sort_values("similarity", ascending=False, kind="stable")
    return DuplicateReport(
        pairs.reset_index(drop=True), _top_matches(sims, gen_ids, ref_ids, threshold), threshold
    )


def _top_matches(
    sims: np.ndarray, gen_ids: np.ndarray, ref_ids: np.ndarray, threshold: float
) -> pd.DataFrame:
    best_ids: list[str | None] = [None] * len(gen_ids)
    best_sim = np.full(len(gen_ids), np.nan)
    if sims.shape[1]:
        filled = np.nan_to_num(sims, nan=-np.inf)
        best = filled.argmax(axis=1)
        best_sim = filled[np.arange(len(gen_ids)), best]
        best_ids = [
            ref_ids[b] if np.isfinite(v) else None for b, v in zip(best, best_sim, strict=True)
        ]
        best_sim[~np.isfinite(best_sim)] = np.nan
    top = pd.DataFrame({"generated_id": gen_ids, "reference_id": best_ids, "similarity": best_sim})
    top["flagged"] = top["similarity"] >= threshold
    return top


# --------------------------------------------------------------------------- quality


class JudgeSummary(NamedTuple):
    """Rubric-judge results over generated problems."""

    metrics: pd.DataFrame
    """Rows ``mean_score, pass_rate, excellent_rate`` and one per dimension mean, with
    columns ``estimate, low, high, n``."""
    n_items: int
    n_scored: int
    n_unscored: int
    unscored_by_status: dict[str, int]


def judge_summary(
    results: pd.DataFrame,
    *,
    rng: np.random.Generator,
    dimensions: Sequence[str] = DIMENSIONS,
    scored_status: str = "scored",
    rounds: int = stats.DEFAULT_ROUNDS,
    level: float = stats.DEFAULT_LEVEL,
) -> JudgeSummary:
    """Average weighted score, pass / excellent rates and per-dimension means.

    A problem passes at ``weighted >= 3.5`` and is excellent at ``>= 4.5`` (Hello-Agents
    ch. 12.4). Means get percentile-bootstrap intervals (``rng``), rates Wilson intervals,
    all over the scored problems. Rows whose ``status`` is not ``scored_status`` are
    unscored: counted (by status), never turned into a number. The column names of
    :func:`evalbench.judge.results_frame` are accepted too (see :func:`judge_columns`).

    Args:
        results: columns ``problem_id, status, weighted`` and one per dimension.
        rng: randomness for the bootstrap.
        dimensions: the rubric dimension columns.
        scored_status: the status value of a successfully scored row.
        rounds: bootstrap resamples.
        level: confidence level of every interval.
    """
    results = judge_columns(results, dimensions)
    _require_columns(results, ["problem_id", "status", "weighted", *dimensions], "judge results")
    scored = results[results["status"] == scored_status]
    bad = scored[~np.isfinite(scored["weighted"].astype(float))]
    if len(bad):
        raise ValueError(
            f"judge results: problem {bad['problem_id'].iloc[0]!r} is scored but its "
            "weighted score is missing"
        )
    unscored = results[results["status"] != scored_status]
    w = scored["weighted"].astype(float).to_numpy()
    rows = {
        "mean_score": stats.bootstrap_mean(w, rng=rng, rounds=rounds, level=level),
        "pass_rate": stats.wilson_interval(int((w >= PASS_SCORE - _SLACK).sum()), len(w), level),
        "excellent_rate": stats.wilson_interval(
            int((w >= EXCELLENT_SCORE - _SLACK).sum()), len(w), level
        ),
    }
    for dim in dimensions:
        values = scored[dim].astype(float).dropna()
        rows[dim] = stats.bootstrap_mean(values, rng=rng, rounds=rounds, level=level)
    counts = {dim: int(scored[dim].notna().sum()) for dim in dimensions}
    metrics = _interval_table(rows, {**dict.fromkeys(rows, len(w)), **counts})
    by_status = {str(k): int(v) for k, v in unscored["status"].value_counts(dropna=False).items()}
    return JudgeSummary(metrics, len(results), len(scored), len(unscored), by_status)


def judge_columns(results: pd.DataFrame, dimensions: Sequence[str] = DIMENSIONS) -> pd.DataFrame:
    """Accept :func:`evalbench.judge.results_frame` names: ``weighted_score`` -> ``weighted``,
    ``score_<dim>`` -> ``<dim>`` (only where the plain name is absent)."""
    renames = {"weighted_score": "weighted", **{f"score_{d}": d for d in dimensions}}
    usable = {k: v for k, v in renames.items() if k in results.columns and v not in results.columns}
    return results.rename(columns=usable)


def _interval_table(rows: Mapping[str, stats.Interval], n: Mapping[str, int]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"metric": k, "estimate": v.estimate, "low": v.low, "high": v.high, "n": n[k]}
            for k, v in rows.items()
        ]
    ).set_index("metric")


def _require_columns(df: pd.DataFrame, columns: Iterable[str], what: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"{what}: missing column(s) {missing}; have {list(df.columns)}")


OUTCOMES = ("win", "loss", "tie")
"""Pairwise outcome of a generated problem against a real one (the generated side's view)."""


def pairwise_outcome(final: str | None, generated_side: Literal["x", "y"] = "x") -> str | None:
    """A model-level verdict (``x``/``y``/``tie``, e.g. ``OrderResolution.final`` from
    :mod:`evalbench.judge`) as the generated problem's outcome; ``None`` stays unscored."""
    if final is None or (isinstance(final, float) and math.isnan(final)):
        return None
    if final not in ("x", "y", "tie"):
        raise ValueError(f"pairwise verdict must be 'x', 'y' or 'tie', got {final!r}")
    return "tie" if final == "tie" else ("win" if final == generated_side else "loss")


class WinRateSummary(NamedTuple):
    """Generated-vs-real pairwise results."""

    table: pd.DataFrame
    """Rows ``win_rate`` (ties as half; bootstrap interval), ``wins, losses, ties`` (Wilson)."""
    n: int
    wins: int
    losses: int
    ties: int
    unscored: int
    duplicate_policy: str
    duplicate_comparisons: int
    """Comparisons whose generated problem is a flagged near-duplicate."""
    duplicate_wins_changed: int
    """Of those, how many were wins or ties (turned into losses, or dropped)."""


def win_rate(
    verdicts: pd.DataFrame,
    *,
    rng: np.random.Generator,
    duplicate_ids: Iterable[str] = (),
    duplicate_policy: Literal["loss", "exclude"] = "loss",
    rounds: int = stats.DEFAULT_ROUNDS,
    level: float = stats.DEFAULT_LEVEL,
) -> WinRateSummary:
    """Win / loss / tie rates of generated problems against real ones.

    The headline win rate counts a tie as half a win, ``(W + T/2) / n``; parity with the
    real problems is 50%. A generated problem flagged as a near-duplicate of a real one
    never counts as a win: with ``duplicate_policy="loss"`` (default) its wins and ties
    become losses, because copying a real problem is a failure of the generator and
    dropping it would flatter the rate; ``"exclude"`` drops its comparisons instead.
    Either way the summary reports how many comparisons were affected.

    Args:
        verdicts: columns ``generated_id`` and ``outcome`` (``win``/``loss``/``tie`` from
            the generated problem's side, after any position-swap reconciliation); any
            other outcome (``None``, ``unscored``...) is counted as unscored.
        rng: randomness for the bootstrap interval of the headline rate.
        duplicate_ids: generated ids flagged by :func:`near_duplicates`.
        duplicate_policy: ``"loss"`` or ``"exclude"``.
        rounds: bootstrap resamples.
        level: confidence level of every interval.
    """
    _require_columns(verdicts, ["generated_id", "outcome"], "pairwise verdicts")
    if duplicate_policy not in ("loss", "exclude"):
        raise ValueError(f"duplicate_policy must be 'loss' or 'exclude', got {duplicate_policy!r}")
    scored = verdicts[verdicts["outcome"].isin(OUTCOMES)].copy()
    is_dup = scored["generated_id"].astype(str).isin({str(i) for i in duplicate_ids})
    changed = int((is_dup & scored["outcome"].isin(["win", "tie"])).sum())
    if duplicate_policy == "loss":
        scored.loc[is_dup, "outcome"] = "loss"
    else:
        scored = scored[~is_dup]
    counts = scored["outcome"].value_counts()
    w, lo, t = (int(counts.get(k, 0)) for k in OUTCOMES)
    n = w + lo + t
    points = scored["outcome"].map({"win": 1.0, "tie": 0.5, "loss": 0.0}).to_numpy(dtype=float)
    rows = {
        "win_rate": stats.bootstrap_mean(points, rng=rng, rounds=rounds, level=level),
        "wins": stats.wilson_interval(w, n, level),
        "losses": stats.wilson_interval(lo, n, level),
        "ties": stats.wilson_interval(t, n, level),
    }
    table = _interval_table(rows, dict.fromkeys(rows, n))
    unscored = len(verdicts) - int(verdicts["outcome"].isin(OUTCOMES).sum())
    return WinRateSummary(
        table, n, w, lo, t, unscored, duplicate_policy, int(is_dup.sum()), changed
    )


def topic_distribution(problems: pd.DataFrame, topics: Sequence[str] = TOPICS) -> pd.DataFrame:
    """Count and share of each topic (every topic listed, zeros included), plus others.

    Returns:
        Index ``topic``; columns ``count, share``. Topics outside ``topics`` appear after
        them (they should not, for validated problems).
    """
    counts = problems["topic"].value_counts()
    order = list(topics) + sorted(str(t) for t in counts.index if t not in topics)
    table = pd.DataFrame({"count": [int(counts.get(t, 0)) for t in order]}, index=order)
    table.index.name = "topic"
    total = table["count"].sum()
    table["share"] = table["count"] / total if total else np.nan
    return table


class AnswerSummary(NamedTuple):
    """Sanity statistics of integer answers (AIME answers are 0–999)."""

    n: int
    min: float
    max: float
    median: float
    share_below_100: float
    share_below_10: float
    most_common: list[tuple[int, int]]
    """Up to five ``(answer, count)`` pairs, most frequent first."""
    last_digit_counts: list[int]
    """How many answers end in 0, 1, ..., 9."""
    last_digit_chi2: float
    last_digit_p: float
    """Chi-square test of the last digit against uniform (9 df). With fewer than 50
    answers (expected count < 5 per digit) the approximation is rough."""


def answer_distribution(answers: Iterable[int] | pd.Series) -> AnswerSummary:
    """Range, small-answer shares, most common answers and a last-digit uniformity test.

    A generator that mostly answers small numbers, repeats a few favourite answers, or
    ends its answers in 0 or 5 betrays a bias real AIME answers do not have.
    """
    a = np.asarray(list(answers), dtype=np.int64)
    if a.size == 0:
        nan = float("nan")
        return AnswerSummary(0, nan, nan, nan, nan, nan, [], [0] * 10, nan, nan)
    digits = np.bincount(np.abs(a) % 10, minlength=10)
    test = sps.chisquare(digits)
    common = Counter(a.tolist()).most_common(5)
    return AnswerSummary(
        n=int(a.size),
        min=float(a.min()),
        max=float(a.max()),
        median=float(np.median(a)),
        share_below_100=float((a < 100).mean()),
        share_below_10=float((a < 10).mean()),
        most_common=[(int(k), int(v)) for k, v in common],
        last_digit_counts=[int(d) for d in digits],
        last_digit_chi2=float(test.statistic),
        last_digit_p=float(test.pvalue),
    )


# --------------------------------------------------------------------------- verification


class Verification(BaseModel):
    """One human review of one generated problem."""

    model_config = ConfigDict(extra="forbid")

    problem_id: str
    """The reviewed problem."""
    scores: dict[str, int]
    """Integer 1–5 per dimension in ``DIMENSIONS``."""
    total_score: float
    """Mean of the four scores."""
    status: Literal["approved", "rejected", "needs_revision"]
    """The reviewer's decision."""
    comments: str = ""
    """Free text."""
    verified_at: datetime
    """When (UTC; a timestamp without zone is read as UTC)."""

    @field_validator("scores")
    @classmethod
    def _check_scores(cls, scores: dict[str, int]) -> dict[str, int]:
        if set(scores) != set(DIMENSIONS):
            raise ValueError(f"scores need exactly {list(DIMENSIONS)}, got {sorted(scores)}")
        for dim, value in scores.items():
            if isinstance(value, bool) or not 1 <= value <= 5:
                raise ValueError(f"score {dim}={value!r} is not an integer 1-5")
        return {d: scores[d] for d in DIMENSIONS}

    @field_validator("verified_at")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        if value.tzinfo is None:
            return value.replace(tzinfo=timezone.utc)
        return value.astimezone(timezone.utc)

    @model_validator(mode="after")
    def _check_total(self) -> Verification:
        expected = sum(self.scores.values()) / len(self.scores)
        if abs(self.total_score - expected) > 1e-6:
            raise ValueError(f"total_score {self.total_score} is not the mean of scores {expected}")
        return self


def make_verification(
    problem_id: str,
    scores: Mapping[str, int],
    status: str,
    comments: str = "",
    *,
    verified_at: datetime | None = None,
) -> Verification:
    """A :class:`Verification` with ``total_score`` computed and the time stamped (UTC now).

    Args:
        problem_id: the reviewed problem.
        scores: an integer 1-5 per dimension of :data:`DIMENSIONS`.
        status: ``approved``, ``rejected`` or ``needs_revision``.
        comments: free text.
        verified_at: the time stamp (default: now, UTC).

    Raises:
        pydantic.ValidationError: a score, the status or the dimensions are invalid.
    """
    return Verification(
        problem_id=problem_id,
        scores=dict(scores),
        total_score=sum(scores.values()) / len(scores) if scores else 0.0,
        status=status,  # type: ignore[arg-type]
        comments=comments,
        verified_at=verified_at or datetime.now(timezone.utc),
    )


def verifications_path(data_path: Path | str) -> Path:
    """``problems.json`` -> ``problems_verifications.json`` (next to the data file)."""
    path = Path(data_path)
    return path.with_name(f"{path.stem}_verifications.json")


def load_verifications(path: Path | str) -> dict[str, Verification]:
    """The verifications saved at ``path`` keyed by problem id (``{}`` if there is no file).

    Raises:
        ValueError: the file is not a JSON object of verifications (naming file and key).
    """
    path = Path(path)
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not JSON ({exc.msg}, line {exc.lineno})") from exc
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object keyed by problem id")
    out = {}
    for key, entry in data.items():
        try:
            out[key] = Verification.model_validate({"problem_id": key, **entry})
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{path}: verification {key!r}: {_first_error(exc)}") from exc
    return out


def _first_error(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        first = errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        return f"{where}: {first.get('msg')}" if where else str(first.get("msg"))
    return str(exc)


def merge_verifications(
    old: Mapping[str, Verification], new: Mapping[str, Verification]
) -> dict[str, Verification]:
    """All verifications of both; for a problem in both, the newer review wins.

    A re-imported review with unchanged scores, status and comments keeps its original
    time stamp (so exporting and re-importing a CSV does not re-date everything).
    """
    merged = dict(old)
    for key, review in new.items():
        before = merged.get(key)
        if before is not None and _same_review(before, review):
            continue
        if before is None or review.verified_at >= before.verified_at:
            merged[key] = review
    return merged


def _same_review(a: Verification, b: Verification) -> bool:
    return (a.scores, a.status, a.comments) == (b.scores, b.status, b.comments)


def save_verifications(
    path: Path | str, verifications: Mapping[str, Verification] | Iterable[Verification]
) -> dict[str, Verification]:
    """Merge ``verifications`` into the file at ``path`` and write it atomically.

    Earlier reviews of other problems are kept (see :func:`merge_verifications`). The
    file is written to a temporary file in the same folder and renamed over the old one,
    so a crash never leaves a half-written file.

    Returns:
        Everything now in the file.
    """
    path = Path(path)
    items = verifications.values() if isinstance(verifications, Mapping) else verifications
    merged = merge_verifications(load_verifications(path), {v.problem_id: v for v in items})
    payload = {k: v.model_dump(mode="json") for k, v in sorted(merged.items())}
    _atomic_write(path, json.dumps(payload, ensure_ascii=False, indent=2) + "\n")
    return merged


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


_CSV_INFO = ["problem_id", "topic", "answer", "problem", "solution"]
_CSV_REVIEW = [*DIMENSIONS, "status", "comments"]


def export_verification_csv(
    problems: pd.DataFrame,
    path: Path | str,
    existing: Mapping[str, Verification] | None = None,
) -> Path:
    """Write a CSV template for offline review: one row per problem.

    Columns ``problem_id, topic, answer, problem, solution`` (read only) then
    ``correctness, clarity, difficulty_match, completeness`` (1–5), ``status``
    (approved / rejected / needs_revision) and ``comments``, prefilled from ``existing``.
    Generated text starting with ``= + - @`` gets a leading ``'`` so a spreadsheet shows
    it instead of running it as a formula.
    """
    path = Path(path)
    existing = existing or {}
    rows = []
    for p in problems.to_dict("records"):
        pid = str(p["id"])
        review = existing.get(pid)
        filled = (
            {**review.scores, "status": review.status, "comments": review.comments}
            if review
            else {}
        )
        info = {"problem_id": pid, **{k: _csv_safe(p.get(k, "")) for k in _CSV_INFO[1:]}}
        rows.append({**info, **{k: filled.get(k, "") for k in _CSV_REVIEW}})
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=[*_CSV_INFO, *_CSV_REVIEW])
        writer.writeheader()
        writer.writerows(rows)
    return path


def _csv_safe(value: Any) -> Any:
    # Model-written text opened in a spreadsheet must not become a formula (CSV injection).
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@"):
        return "'" + value
    return value


def import_verification_csv(
    path: Path | str, *, verified_at: datetime | None = None
) -> dict[str, Verification]:
    """Read a reviewed CSV (see :func:`export_verification_csv`), validating every row.

    A row whose four scores and status are all blank is not reviewed yet and is skipped;
    any other row must be complete: scores integers 1–5 (``4`` or ``4.0``), a known status.

    Args:
        path: the edited CSV (UTF-8, a spreadsheet's BOM is fine).
        verified_at: time stamp for the imported reviews (default: now, UTC).

    Raises:
        ValueError: ``<file>:<line>: <what is wrong>``, naming the line where the bad row
            starts, or a missing column.
    """
    path = Path(path)
    stamp = verified_at or datetime.now(timezone.utc)
    out: dict[str, Verification] = {}
    lines: dict[str, int] = {}
    with open(path, encoding="utf-8-sig", newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader, None) or []
        missing = [c for c in ["problem_id", *_CSV_REVIEW] if c not in header]
        if missing:
            raise ValueError(f"{path}:1: missing column(s) {missing}")
        while True:
            line = reader.line_num + 1
            values = next(reader, None)
            if values is None:
                break
            review = _csv_review(
                dict(zip(header, values, strict=False)), where=f"{path}:{line}", stamp=stamp
            )
            if review is None:
                continue
            if review.problem_id in lines:
                raise ValueError(
                    f"{path}:{line}: problem {review.problem_id!r} already reviewed on line "
                    f"{lines[review.problem_id]}"
                )
            lines[review.problem_id] = line
            out[review.problem_id] = review
    return out


def _csv_review(row: dict[str, str], *, where: str, stamp: datetime) -> Verification | None:
    cells = {k: (row.get(k) or "").strip() for k in ["problem_id", *_CSV_REVIEW]}
    if not any(cells[k] for k in [*DIMENSIONS, "status"]):
        return None
    if not cells["problem_id"]:
        raise ValueError(f"{where}: problem_id is empty")
    scores = {}
    for dim in DIMENSIONS:
        score = _csv_score(cells[dim])
        if score is None:
            raise ValueError(f"{where}: {dim} must be an integer 1-5, got {cells[dim]!r}")
        scores[dim] = score
    if cells["status"] not in VERIFICATION_STATUSES:
        raise ValueError(
            f"{where}: status must be one of {', '.join(VERIFICATION_STATUSES)}, "
            f"got {cells['status']!r}"
        )
    return make_verification(
        cells["problem_id"], scores, cells["status"], cells["comments"], verified_at=stamp
    )


def _csv_score(text: str) -> int | None:
    value = parse_answer(text) if re.fullmatch(r"\d+(?:\.0*)?", text) else None
    return value if value is not None and 1 <= value <= 5 else None


def verifications_frame(verifications: Mapping[str, Verification]) -> pd.DataFrame:
    """One row per review: ``problem_id``, the four scores, ``total_score, status, comments,
    verified_at``."""
    rows = [
        {
            "problem_id": v.problem_id,
            **v.scores,
            "total_score": v.total_score,
            "status": v.status,
            "comments": v.comments,
            "verified_at": v.verified_at,
        }
        for v in verifications.values()
    ]
    columns = ["problem_id", *DIMENSIONS, "total_score", "status", "comments", "verified_at"]
    return pd.DataFrame(rows, columns=columns)


def verification_form(problems: pd.DataFrame, path: Path | str) -> Any:
    """A JupyterLab form to review problems one at a time (needs ``ipywidgets``).

    Shows the problem, answer and solution (HTML-escaped), four 1–5 sliders, a status
    dropdown and a comment box; *Save* writes through :func:`save_verifications` (merged,
    atomic), prefilling from reviews already in the file.

    Args:
        problems: columns ``id, problem, answer, solution`` (``topic`` optional).
        path: the verifications JSON (see :func:`verifications_path`).

    Returns:
        An ``ipywidgets.VBox``; display it in a notebook cell.
    """
    import ipywidgets as w  # lazy: only the optional 'lab' extra installs it

    rows = problems.to_dict("records")
    if not rows:
        raise ValueError("verification_form: no problems to review")
    ui = _FormWidgets(w)
    position = {"i": 0}

    def show(i: int) -> None:
        position["i"] = i % len(rows)
        row = rows[position["i"]]
        ui.view.value = _problem_html(row, position["i"], len(rows))
        ui.fill(load_verifications(path).get(str(row["id"])))

    def save(_: Any) -> None:
        pid = str(rows[position["i"]]["id"])
        try:
            review = make_verification(pid, ui.scores(), ui.status.value, ui.comments.value)
            save_verifications(path, [review])
        except (ValueError, OSError) as exc:  # shown in the form, where the reviewer looks
            ui.message.value = f"<b>not saved</b>: {html.escape(str(exc))}"
            return
        ui.message.value = f"saved {html.escape(pid)} ({review.status})"

    ui.prev.on_click(lambda _: show(position["i"] - 1))
    ui.next.on_click(lambda _: show(position["i"] + 1))
    ui.save.on_click(save)
    show(0)
    return ui.box


class _FormWidgets:
    """The widgets of :func:`verification_form` (kept apart so that function stays short)."""

    def __init__(self, w: Any):
        self.view = w.HTMLMath()  # renders the LaTeX of problems and solutions
        self.sliders = {
            d: w.IntSlider(value=3, min=1, max=5, description=d.replace("_", " "))
            for d in DIMENSIONS
        }
        self.status = w.Dropdown(options=list(VERIFICATION_STATUSES), description="status")
        self.comments = w.Textarea(description="comments", layout=w.Layout(width="90%"))
        self.prev = w.Button(description="◀ previous")
        self.next = w.Button(description="next ▶")
        self.save = w.Button(description="save", button_style="primary")
        self.message = w.HTML()
        controls = w.VBox([*self.sliders.values(), self.status, self.comments])
        buttons = w.HBox([self.prev, self.save, self.next])
        self.box = w.VBox([self.view, controls, buttons, self.message])

    def scores(self) -> dict[str, int]:
        """The slider values by dimension."""
        return {d: int(s.value) for d, s in self.sliders.items()}

    def fill(self, review: Verification | None) -> None:
        """Show ``review`` (or the defaults when there is none)."""
        for dim, slider in self.sliders.items():
            slider.value = review.scores[dim] if review else 3
        self.status.value = review.status if review else VERIFICATION_STATUSES[0]
        self.comments.value = review.comments if review else ""
        self.message.value = "already reviewed" if review else ""


def _problem_html(row: Mapping[str, Any], i: int, n: int) -> str:
    esc = {
        k: html.escape(str(row.get(k, "")))
        for k in ("id", "topic", "problem", "answer", "solution")
    }
    return (
        f"<h4>Problem {i + 1} / {n}: {esc['id']} ({esc['topic']})</h4>"
        f"<p style='white-space: pre-wrap'>{esc['problem']}</p>"
        f"<p><b>Answer:</b> {esc['answer']}</p>"
        f"<details><summary>Solution</summary><p style='white-space: pre-wrap'>"
        f"{esc['solution']}</p></details>"
    )


class HumanSummary(NamedTuple):
    """Human verification results."""

    n: int
    status_counts: dict[str, int]
    approved_rate: stats.Interval
    """Share approved by the reviewer: the headline human pass rate."""
    score_pass_rate: stats.Interval
    """Share with mean score (``total_score``) >= 3.5: the rubric rule, for comparison."""
    dimension_means: pd.Series


def human_summary(
    verifications: Mapping[str, Verification], *, level: float = stats.DEFAULT_LEVEL
) -> HumanSummary:
    """Human pass rates and mean scores.

    The headline *human pass rate* is the approved share: the reviewer's explicit
    decision, which can reject a problem with good average scores (e.g. a wrong answer).
    The rubric rule (mean of the four scores >= 3.5, as for the judge) is reported
    alongside. Both with Wilson intervals.
    """
    df = verifications_frame(verifications)
    n = len(df)
    counts = {s: int((df["status"] == s).sum()) for s in VERIFICATION_STATUSES}
    return HumanSummary(
        n=n,
        status_counts=counts,
        approved_rate=stats.wilson_interval(counts["approved"], n, level),
        score_pass_rate=stats.wilson_interval(
            int((df["total_score"] >= PASS_SCORE - _SLACK).sum()), n, level
        ),
        dimension_means=df[list(DIMENSIONS)].astype(float).mean(),
    )


def paired_human_judge(
    verifications: Mapping[str, Verification],
    judge_results: pd.DataFrame,
    *,
    scored_status: str = "scored",
) -> pd.DataFrame:
    """Human and judge scores of the same problems, long format.

    Returns:
        Columns ``problem_id, dimension, human, judge`` for problems both scored
        (unscored judge rows are left out); dimension ``total`` pairs the human mean
        with the judge's ``weighted`` score.
    """
    human = verifications_frame(verifications).rename(columns={"total_score": "total"})
    judge = judge_columns(judge_results)
    judge = judge[judge["status"] == scored_status].rename(columns={"weighted": "total"})
    both = human.merge(judge, on="problem_id", suffixes=("_human", "_judge"))
    parts = [
        pd.DataFrame(
            {
                "problem_id": both["problem_id"],
                "dimension": d,
                "human": both[f"{d}_human"].astype(float),
                "judge": both[f"{d}_judge"].astype(float),
            }
        )
        for d in [*DIMENSIONS, "total"]
    ]
    return pd.concat(parts, ignore_index=True)


def human_judge_agreement(
    verifications: Mapping[str, Verification],
    judge_results: pd.DataFrame,
    *,
    scored_status: str = "scored",
) -> pd.DataFrame:
    """Agreement between human reviewers and the judge, per dimension.

    Uses :mod:`evalbench.agreement` on the pairs from :func:`paired_human_judge`.

    Returns:
        One row per dimension (and ``total``): ``n``, ``within_1`` (share with
        ``|judge - human| <= 1``), ``bias`` (mean judge − human), ``pearson``,
        ``spearman``, and for the 1–5 dimensions ``exact`` agreement and quadratic-weighted
        kappa ``qwk`` over the labels 1–5 (judge scores rounded).
    """
    pairs = paired_human_judge(verifications, judge_results, scored_status=scored_status)
    rows = []
    for dim, group in pairs.groupby("dimension", sort=False):
        h, j = group["human"].to_numpy(), group["judge"].to_numpy()
        rows.append({"dimension": dim, "n": len(group), **_agreement_stats(h, j, dim)})
    return pd.DataFrame(rows).set_index("dimension")


def _agreement_stats(human: np.ndarray, judge: np.ndarray, dim: str) -> dict[str, float]:
    out = {
        "within_1": agreement.within_k_agreement(judge, human, k=1).estimate,
        "bias": agreement.mean_signed_error(judge, human).estimate,
        "pearson": agreement.pearson(judge, human).estimate,
        "spearman": agreement.spearman(judge, human).estimate,
        "exact": float("nan"),
        "qwk": float("nan"),
    }
    if dim != "total":  # scores on the 1-5 scale; a fractional judge score is rounded
        rounded = np.clip(np.rint(judge), 1, 5).astype(int)
        out["exact"] = agreement.exact_agreement(rounded, human.astype(int)).estimate
        out["qwk"] = agreement.weighted_kappa(
            rounded, human.astype(int), "quadratic", labels=range(1, 6)
        )
    return {k: float(v) for k, v in out.items()}


# --------------------------------------------------------------------------- conclusion


class Conclusion(NamedTuple):
    """The study's verdict against :data:`THRESHOLDS`."""

    table: pd.DataFrame
    """Columns ``criterion, value, threshold, met``; with no data ``value`` is NaN and
    ``met`` is ``None``."""
    next_steps: list[str]


_CRITERIA = {
    "judge_mean": "judge mean score (1-5)",
    "win_rate": "win rate vs real problems",
    "judge_pass_rate": "judge pass rate (score >= 3.5)",
    "human_pass_rate": "human pass rate (approved)",
}
_ADVICE = {
    "judge_mean": "Raise the judge mean: look at the lowest-scoring dimension and add its "
    "requirement to the generation prompt (e.g. ask for a checked, complete solution).",
    "win_rate": "Close the gap to real problems: read lost comparisons' reasons, and "
    "consider a stronger generator or a self-check step before accepting a problem.",
    "judge_pass_rate": "Filter or regenerate: drop problems the judge scores below 3.5 "
    "and regenerate their slots, then re-evaluate.",
    "human_pass_rate": "Review the rejected problems' comments and fix the commonest "
    "failure (often a wrong answer) with an answer-verification step.",
}


def conclusion(
    values: Mapping[str, float | None],
    *,
    thresholds: Mapping[str, float] = THRESHOLDS,
    duplicate_rate: float | None = None,
    invalid_rate: float | None = None,
) -> Conclusion:
    """Compare results with thresholds and suggest next steps.

    Args:
        values: by criterion name (``judge_mean, win_rate, judge_pass_rate,
            human_pass_rate``; rates as fractions); a missing, ``None`` or NaN value
            means no data, and its ``met`` is ``None``.
        thresholds: the bar per criterion (met when ``value >= threshold``).
        duplicate_rate: share of generated problems flagged as near-duplicates (advice only).
        invalid_rate: share of generator outputs that failed validation (advice only).
    """
    rows, steps = [], []
    for key, bar in thresholds.items():
        value = values.get(key)
        has = value is not None and math.isfinite(value)
        met = bool(value >= bar) if has else None  # type: ignore[operator]
        rows.append(
            {
                "criterion": _CRITERIA.get(key, key),
                "value": float(value) if has else float("nan"),  # type: ignore[arg-type]
                "threshold": bar,
                "met": met,
            }
        )
        if met is None:
            steps.append(f"No data for {_CRITERIA.get(key, key)}: run that evaluation.")
        elif not met:
            steps.append(_ADVICE.get(key, f"Improve {key}."))
    steps.extend(_rate_advice(duplicate_rate, invalid_rate))
    if not steps:
        steps.append("All criteria met: scale up generation and spot-check a fresh sample by hand.")
    return Conclusion(pd.DataFrame(rows, columns=["criterion", "value", "threshold", "met"]), steps)


def _rate_advice(duplicate_rate: float | None, invalid_rate: float | None) -> list[str]:
    steps = []
    if duplicate_rate is not None and duplicate_rate > 0:
        steps.append(
            f"{duplicate_rate:.0%} of generated problems nearly copy a real one: drop them, "
            "and insist in the prompt that the reference is for style only."
        )
    if invalid_rate is not None and invalid_rate > 0.05:
        steps.append(
            f"{invalid_rate:.0%} of generator outputs were invalid: see the reasons, and "
            "use JSON mode or retries for the commonest one."
        )
    return steps


class StudySummary(NamedTuple):
    """Everything the report shows, each part ``None`` when its data is missing."""

    judge: JudgeSummary | None
    win: WinRateSummary | None
    topics: pd.DataFrame
    answers: AnswerSummary
    human: HumanSummary | None
    conclusion: Conclusion


def summarize(
    problems: pd.DataFrame,
    *,
    rng: np.random.Generator,
    judge_results: pd.DataFrame | None = None,
    verdicts: pd.DataFrame | None = None,
    duplicates: DuplicateReport | None = None,
    verifications: Mapping[str, Verification] | None = None,
    n_invalid: int = 0,
    thresholds: Mapping[str, float] = THRESHOLDS,
    duplicate_policy: Literal["loss", "exclude"] = "loss",
    topics: Sequence[str] = TOPICS,
    rounds: int = stats.DEFAULT_ROUNDS,
    level: float = stats.DEFAULT_LEVEL,
) -> StudySummary:
    """All summaries of a run and the conclusion (see the individual functions).

    Args:
        problems: the valid generated problems (columns ``id, topic, answer``).
        rng: randomness for bootstrap intervals.
        judge_results: rubric results (see :func:`judge_summary`).
        verdicts: pairwise outcomes (see :func:`win_rate`).
        duplicates: near-duplicate report; flagged problems never count as wins.
        verifications: human reviews.
        n_invalid: generator outputs that failed validation (for the advice).
        thresholds: the bars of :func:`conclusion`.
        duplicate_policy: how flagged problems' comparisons count (see :func:`win_rate`).
        topics: the topics listed in the topic table (see :func:`topic_distribution`).
        rounds: bootstrap resamples.
        level: confidence level of every interval.
    """
    judge = None
    if judge_results is not None:
        judge = judge_summary(judge_results, rng=rng, rounds=rounds, level=level)
    dup_ids = duplicates.flagged_ids() if duplicates is not None else set()
    win = None
    if verdicts is not None:
        win = win_rate(
            verdicts,
            rng=rng,
            duplicate_ids=dup_ids,
            duplicate_policy=duplicate_policy,
            rounds=rounds,
            level=level,
        )
    human = human_summary(verifications, level=level) if verifications else None
    values = _criterion_values(judge, win, human)
    n, total = len(problems), len(problems) + n_invalid
    dup_rate = len(dup_ids) / n if duplicates is not None and n else None
    verdict = conclusion(
        values,
        thresholds=thresholds,
        duplicate_rate=dup_rate,
        invalid_rate=n_invalid / total if total else None,
    )
    answers = answer_distribution(problems["answer"])
    return StudySummary(judge, win, topic_distribution(problems, topics), answers, human, verdict)


def _criterion_values(
    judge: JudgeSummary | None, win: WinRateSummary | None, human: HumanSummary | None
) -> dict[str, float | None]:
    return {
        "judge_mean": judge.metrics.loc["mean_score", "estimate"] if judge else None,
        "win_rate": win.table.loc["win_rate", "estimate"] if win else None,
        "judge_pass_rate": judge.metrics.loc["pass_rate", "estimate"] if judge else None,
        "human_pass_rate": human.approved_rate.estimate if human else None,
    }


# --------------------------------------------------------------------------- the study

REAL_TRUE_QUALITY = 4.5
"""Hidden true quality (1–5) of every real AIME problem for the simulated judges.

Real contest problems are well posed, correct and at AIME difficulty, so they sit near the
top of the scale; 4.5 (not 5) leaves room for a simulated generator to match or beat them.
"""
LOGIT_PER_POINT = 1.0
"""Log-odds per quality point for the simulated pairwise judge.

A quality ``q`` on 1–5 becomes the latent ``(q - 3) * LOGIT_PER_POINT`` of
:class:`evalbench.judge.PairTask`, so for an unbiased judge with no tie band
``P(generated beats real) = σ(q_generated − 4.5)``: a problem one point worse than a real
one wins 27% of its comparisons, an equally good one 50%.
"""
SIM_REVIEW_NOISE = 0.5
"""Standard deviation (scale points) of the simulated reviewer's scores around the truth."""
SIM_REVIEW_TIME = datetime(2025, 1, 1, tzinfo=timezone.utc)
"""Time stamp of simulated reviews (fixed, so a rerun writes the same file)."""
PAIRWISE_QUESTION = (
    "Two AIME-style competition problems follow, each with its stated answer. Which is the "
    "better AIME problem? Judge correctness (well posed, the stated integer answer 0-999 is "
    "right), clarity, AIME-level difficulty (several steps, no advanced theory) and "
    "originality. Do not favour the longer statement."
)
_DATASET_FIELDS = ["id", "topic", "problem", "answer", "solution", "reference_id", "attempts"]


def _topic_list(topics: list[str]) -> list[str]:
    norm = [normalize_topic(t) for t in topics]
    bad = [t for t, n in zip(topics, norm, strict=True) if n is None]
    if bad or not topics:
        raise ValueError(f"topics must be a non-empty subset of {', '.join(TOPICS)} (got {bad})")
    if len(set(norm)) != len(norm):
        raise ValueError(f"topics are repeated: {topics}")
    return [str(n) for n in norm]


def _verifications_source(value: str | None, info: ValidationInfo) -> str | None:
    if value is None or value == "simulated":
        return value
    return str(data_path(value, info))


ReferenceSource = Literal["matharena", "qwen25math"]
REFERENCE_SOURCES: tuple[ReferenceSource, ...] = ("matharena", "qwen25math")


class ReferenceParams(BaseModel):
    """Which real AIME problems serve as style references, opponents and duplicate checks."""

    model_config = ConfigDict(extra="forbid")

    sources: list[ReferenceSource] = Field(default_factory=lambda: list(REFERENCE_SOURCES))
    """Registered pinned files (see :func:`load_reference`); order = preference when a
    problem is in both."""
    years: list[int] = Field(default_factory=lambda: [2024, 2025], min_length=1)
    """Contest years to keep (the registered files hold 2024 and 2025)."""
    hf_dataset: str | None = None
    """Also load a Hugging Face AIME set (e.g. ``TianHongZXY/aime-1983-2025``; needs
    ``datasets``); ``years`` does not filter it."""
    hf_revision: str | None = None
    """Hub commit to pin (``hf_dataset`` only)."""
    hf_split: str | None = None
    """Split of ``hf_dataset`` (default: its only split)."""

    @model_validator(mode="after")
    def _some_source(self) -> ReferenceParams:
        if not self.sources and self.hf_dataset is None:
            raise ValueError("give at least one of sources or hf_dataset")
        if len(set(self.sources)) != len(self.sources):
            raise ValueError(f"sources are repeated: {self.sources}")
        return self


class Thresholds(BaseModel):
    """The bars of the conclusion (met when the value is at least the bar)."""

    model_config = ConfigDict(extra="forbid")

    judge_mean: float = Field(default=THRESHOLDS["judge_mean"], ge=1, le=5)
    """Judge mean weighted score, 1–5."""
    win_rate: float = Field(default=THRESHOLDS["win_rate"], ge=0, le=1)
    """Win rate against real problems (ties count half)."""
    judge_pass_rate: float = Field(default=THRESHOLDS["judge_pass_rate"], ge=0, le=1)
    """Share of problems the judge scores >= 3.5."""
    human_pass_rate: float = Field(default=THRESHOLDS["human_pass_rate"], ge=0, le=1)
    """Share of reviewed problems a human approved."""


class DatagenParams(StudyParams):
    """Parameters of a generated-data quality study (``study: datagen``)."""

    study: Literal["datagen"] = "datagen"
    generator: ModelSpec
    """The model that writes problems (``sim`` knobs: ``quality``, ``malformed_rate``,
    ``copy_rate``)."""
    judge: ModelSpec
    """The rubric and pairwise judge (``sim`` knobs: ``noise``, ``leniency``,
    ``position_bias``, ``malformed_rate``)."""
    n_problems: int = Field(default=60, ge=1, le=100_000)
    """Problems to generate (one slot each; a slot is retried until valid)."""
    topics: Annotated[list[str], AfterValidator(_topic_list)] = Field(
        default_factory=lambda: list(TOPICS)
    )
    """Topics to spread the problems over evenly (a subset of the fixed topic set)."""
    max_attempts: int = Field(default=3, ge=1, le=20)
    """Generator calls per slot before it is left unfilled (invalid outputs are retried)."""
    json_mode: bool = False
    """Send ``response_format: json_object`` (for endpoints that support JSON mode)."""
    reference: ReferenceParams = Field(default_factory=ReferenceParams)
    """The real AIME problems."""
    duplicate_threshold: float = Field(default=DEFAULT_DUPLICATE_THRESHOLD, gt=0, le=1)
    """Similarity from which a generated problem is a near-duplicate of a real one."""
    duplicate_policy: Literal["loss", "exclude"] = "loss"
    """A near-duplicate's comparisons: counted as losses, or excluded from the win rate."""
    win_rate_pairs: int = Field(default=60, ge=0, le=100_000)
    """Generated-vs-real comparisons (each judged in both orders; 0 skips the win rate)."""
    verdict_format: Literal["mt_bench", "arena_hard"] = "mt_bench"
    """Pairwise verdict labels: ``[[A]]/[[B]]/[[C]]`` or Arena-Hard's five labels."""
    inconsistent: Literal["tie", "drop"] = "tie"
    """A pair whose two orders disagree counts as a tie, or is dropped."""
    verifications: Annotated[str | None, AfterValidator(_verifications_source)] = None
    """Human reviews: a ``<data>_verifications.json`` path (relative to the params file),
    ``simulated`` (a simulated reviewer, for demos), or none: then the run folder's
    ``generated_verifications.json`` is read when it exists."""
    human_sample: int = Field(default=30, ge=1, le=100_000)
    """Problems the simulated reviewer checks (``verifications: simulated`` only)."""
    thresholds: Thresholds = Field(default_factory=Thresholds)
    """The criteria of the conclusion."""

    @model_validator(mode="after")
    def _check_names(self) -> DatagenParams:
        if self.generator.name == self.judge.name:
            raise ValueError(f"generator and judge need different names (both {self.judge.name!r})")
        if self.verifications == "simulated" and not self.generator.simulated:
            raise ValueError(
                "verifications: simulated reviews need a simulated generator (its hidden "
                "quality); give a <data>_verifications.json path or leave it empty"
            )
        return self

    def model_specs(self) -> list[ModelSpec]:
        """The generator and the judge."""
        return [self.generator, self.judge]


def load_study_reference(params: DatagenParams) -> pd.DataFrame:
    """The reference problems of a study (all sources; see :func:`unique_reference`).

    Raises:
        evalbench.sources.DataUnavailable: a registered file is not reachable.
    """
    ref = params.reference
    frames = [load_reference(ref.sources, years=ref.years)] if ref.sources else []
    if ref.hf_dataset:
        frames.append(
            load_hf_reference(ref.hf_dataset, split=ref.hf_split, revision=ref.hf_revision)
        )
    return pd.concat(frames, ignore_index=True)


class Slot(NamedTuple):
    """One problem to generate."""

    id: str
    topic: str


def problem_slots(n: int, rng: np.random.Generator, topics: Sequence[str] = TOPICS) -> list[Slot]:
    """``n`` slots ``gen_0001, gen_0002, ...`` with balanced, shuffled topics."""
    width = max(4, len(str(n)))
    return [Slot(f"gen_{i + 1:0{width}d}", t) for i, t in enumerate(assign_topics(n, rng, topics))]


def attempt_rng(seed: int, problem_id: str, attempt: int) -> np.random.Generator:
    """The generator that picks the style reference of one attempt (pure, resume-safe)."""
    digest = hashlib.sha256(f"{problem_id}#{attempt}".encode()).digest()
    words = [seed & 0xFFFFFFFF, *(int.from_bytes(digest[i : i + 4], "little") for i in (0, 4))]
    return np.random.default_rng(np.random.SeedSequence(words))


class PlannedGeneration(NamedTuple):
    """One generator call: the job and what it was for."""

    job: Job
    slot: Slot
    attempt: int
    reference_id: str


def generation_job(
    slot: Slot,
    attempt: int,
    reference: pd.DataFrame,
    *,
    seed: int,
    json_mode: bool = False,
) -> PlannedGeneration:
    """The chat job of one attempt at one slot (key ``gen:<id>#<attempt>``).

    The style reference is drawn with :func:`attempt_rng`, so every attempt shows its own
    reference and asks with its own request seed: a retry is never a cache hit of the
    invalid answer before it.

    Args:
        slot: the problem to generate.
        attempt: the attempt number (1 = first).
        reference: the real problems to draw the style reference from.
        seed: the study seed.
        json_mode: ask for ``response_format: json_object``.
    """
    row = pick_reference(reference, attempt_rng(seed, slot.id, attempt))
    key = f"gen:{slot.id}#{attempt}"
    request = ChatRequest(
        messages=generation_messages(row, slot.topic),
        seed=None if attempt == 1 else attempt,
        response_format={"type": "json_object"} if json_mode else None,
    )
    respond = partial(
        sim_generate,
        reference_problem=str(row["problem"]),
        reference_answer=int(row["answer"]),
        topic=slot.topic,
    )
    truth = {"reference_id": str(row["id"]), "topic": slot.topic}
    return PlannedGeneration(
        Job(key, request, SimTask(respond, key, truth)), slot, attempt, truth["reference_id"]
    )


def read_generation(
    planned: PlannedGeneration, response: Any
) -> GeneratedProblem | InvalidGeneration:
    """Parse one generator response; a failed call is an invalid attempt with its error."""
    if response.error is not None:
        return InvalidGeneration(
            reason=f"generator call failed: {response.error}",
            raw="",
            attempt=planned.attempt,
            id=planned.slot.id,
            reference_id=planned.reference_id,
        )
    return parse_generated(
        response.text,
        id=planned.slot.id,
        reference_id=planned.reference_id,
        requested_topic=planned.slot.topic,
        attempt=planned.attempt,
    )


def progress_postfix(job: Job, response: Any) -> dict[str, Any]:
    """Progress-bar fields for the last generator answer: its topic and answer."""
    parsed = parse_generated(response.text if response.error is None else None, id=job.key)
    if isinstance(parsed, GeneratedProblem):
        return {"topic": parsed.topic, "answer": parsed.answer}
    return {"topic": "-", "answer": "invalid"}


class GenerationResult(NamedTuple):
    """What generation produced."""

    problems: pd.DataFrame
    """One row per filled slot (:class:`GeneratedProblem` fields + ``true_quality``)."""
    invalid: pd.DataFrame
    """One row per invalid attempt (:class:`InvalidGeneration` fields)."""
    slots: list[Slot]
    unfilled: list[str]
    """Slots still invalid after ``max_attempts``."""
    calls: int
    """Generator calls (valid + invalid outputs)."""


def generate_problems(run: Any, reference: pd.DataFrame) -> GenerationResult:
    """Generate every slot, retrying invalid outputs, and write the dataset.

    Round ``r`` asks the generator for every slot still invalid after ``r − 1`` attempts.
    Each answer is checkpointed as it arrives (``records/generations.jsonl``), so an
    interrupted run resumes where it stopped: no problem lost, none asked twice. Writes
    ``records/problems.jsonl``, ``records/invalid.jsonl`` and the dataset
    ``<run dir>/generated.jsonl`` (the ``<data>`` of ``<data>_verifications.json``).

    Args:
        run: the open :class:`evalbench.runs.Run` of a ``datagen`` study.
        reference: real problems to draw style references from (:func:`unique_reference`).
    """
    params: DatagenParams = run.params
    slots = problem_slots(params.n_problems, run.rng("topics"), params.topics)
    valid: dict[str, GeneratedProblem] = {}
    invalid: list[InvalidGeneration] = []
    pending, calls = slots, 0
    for attempt in range(1, params.max_attempts + 1):
        planned = [
            generation_job(s, attempt, reference, seed=params.seed, json_mode=params.json_mode)
            for s in pending
        ]
        answers = run.ask(
            params.generator,
            [p.job for p in planned],
            store="generations",
            desc=f"generate (attempt {attempt})",
            postfix=progress_postfix,
        )
        for p in planned:
            result = read_generation(p, answers[p.job.key])
            if isinstance(result, GeneratedProblem):
                valid[p.slot.id] = result
            else:
                invalid.append(result)
        calls += len(planned)
        pending = [s for s in pending if s.id not in valid]
        if not pending:
            break
    return _generation_result(run, slots, valid, invalid, calls)


def _generation_result(
    run: Any,
    slots: list[Slot],
    valid: Mapping[str, GeneratedProblem],
    invalid: list[InvalidGeneration],
    calls: int,
) -> GenerationResult:
    simulated = run.params.generator.simulated
    rows = [
        {**valid[s.id].model_dump(), "true_quality": _truth(valid[s.id].problem, simulated)}
        for s in slots
        if s.id in valid
    ]
    problems = pd.DataFrame(rows, columns=[*GeneratedProblem.model_fields, "true_quality"])
    bad = pd.DataFrame(
        [r.model_dump() for r in invalid], columns=list(InvalidGeneration.model_fields)
    )
    run.write_records("problems", problems)
    run.write_records("invalid", bad)
    write_jsonl(run.dir / "generated.jsonl", problems[_DATASET_FIELDS].to_dict("records"))
    unfilled = [s.id for s in slots if s.id not in valid]
    return GenerationResult(problems, bad, slots, unfilled, calls)


def _truth(problem: str, simulated: bool) -> float | None:
    return sim_true_quality(problem) if simulated else None


def problem_card(row: Mapping[str, Any], *, with_solution: bool = False) -> str:
    """A problem as the judges see it: statement and answer (and the solution)."""
    text = f"Problem: {str(row['problem']).strip()}\n\nAnswer: {row['answer']}"
    solution = row.get("solution")
    if with_solution and isinstance(solution, str) and solution.strip():
        text += f"\n\nSolution: {solution.strip()}"
    return text


def quality_logit(quality: float) -> float:
    """A 1–5 quality on the pairwise judge's log-odds scale (see :data:`LOGIT_PER_POINT`)."""
    return LOGIT_PER_POINT * (quality - 3.0)


def content_key(problem_id: str, *texts: str) -> str:
    """``<id>@<10 hex digits of the texts' sha256>``: a judgment key that changes with the text.

    A slot's problem can change between runs (a failed generator call is retried on
    resume and may now succeed at an earlier attempt); keying judgments by content means
    a stored judgment is only reused for exactly the text it judged.
    """
    digest = hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:10]
    return f"{problem_id}@{digest}"


def rubric_tasks(problems: pd.DataFrame) -> list[RubricTask]:
    """One ``aime_quality`` judgment per problem, keyed by :func:`content_key` (truth for
    the sim judge from the text)."""
    return [
        RubricTask(
            content_key(str(p["id"]), problem_card(p, with_solution=True)),
            JudgeCase(
                question=f"Write one new AIME-style problem on the topic: {p['topic']}.",
                answer=problem_card(p, with_solution=True),
            ),
            truth=sim_true_quality(str(p["problem"])),
        )
        for p in problems.to_dict("records")
    ]


def judge_problems(run: Any, problems: pd.DataFrame) -> pd.DataFrame:
    """Score every problem with the ``aime_quality`` rubric; writes ``records/quality.jsonl``.

    Returns:
        :func:`evalbench.judge.judge_rubric` columns (``case_id`` is the
        :func:`content_key`) plus ``problem_id``; unscored rows kept, counted in
        :func:`judge_summary`.
    """
    frame = judge_rubric(run, run.params.judge, "aime_quality", rubric_tasks(problems))
    frame.insert(1, "problem_id", problems["id"].astype(str).tolist())  # rows in task order
    run.write_records("quality", frame)
    return frame


def pair_plan(
    problems: pd.DataFrame, real: pd.DataFrame, n_pairs: int, rng: np.random.Generator
) -> pd.DataFrame:
    """Which generated problem meets which real one.

    Generated problems are taken in a random order without repetition (cycling through
    fresh permutations when ``n_pairs`` exceeds them); each meets a real problem drawn
    uniformly.

    Returns:
        Columns ``pair_id`` (``w0001@...``, a :func:`content_key` of both problems),
        ``generated_id, reference_id``.
    """
    if problems.empty or real.empty or n_pairs == 0:
        return pd.DataFrame(columns=["pair_id", "generated_id", "reference_id"])
    rounds = -(-n_pairs // len(problems))
    order = np.concatenate([rng.permutation(len(problems)) for _ in range(rounds)])[:n_pairs]
    opponents = rng.integers(len(real), size=n_pairs)
    gen_ids = problems["id"].astype(str).to_numpy()[order]
    ref_ids = real["id"].astype(str).to_numpy()[opponents]
    gen_text = problems["problem"].astype(str).to_numpy()[order]
    ref_text = real["problem"].astype(str).to_numpy()[opponents]
    pairs = enumerate(zip(gen_text, ref_text, strict=True))
    pair_ids = [content_key(f"w{k + 1:04d}", g, r) for k, (g, r) in pairs]
    return pd.DataFrame({"pair_id": pair_ids, "generated_id": gen_ids, "reference_id": ref_ids})


def pair_tasks(plan: pd.DataFrame, problems: pd.DataFrame, real: pd.DataFrame) -> list[PairTask]:
    """Pairwise tasks, generated problem as ``x`` and real as ``y`` (sim truth: the
    problems' qualities on the log-odds scale, real ones at :data:`REAL_TRUE_QUALITY`)."""
    gen = problems.set_index(problems["id"].astype(str))
    ref = real.set_index(real["id"].astype(str))
    tasks = []
    for pair_id, gid, rid in plan[["pair_id", "generated_id", "reference_id"]].itertuples(
        index=False
    ):
        g, r = gen.loc[gid], ref.loc[rid]
        tasks.append(
            PairTask(
                pair_id=str(pair_id),
                question=PAIRWISE_QUESTION,
                model_x="generated",
                answer_x=problem_card(g),
                model_y="real",
                answer_y=problem_card(r),
                quality_x=quality_logit(sim_true_quality(str(g["problem"]))),
                quality_y=quality_logit(REAL_TRUE_QUALITY),
            )
        )
    return tasks


def compare_with_real(run: Any, problems: pd.DataFrame, real: pd.DataFrame) -> pd.DataFrame | None:
    """Judge ``win_rate_pairs`` generated-vs-real pairs in both orders.

    Writes ``records/pairwise.jsonl``.

    Returns:
        One row per pair: :func:`evalbench.judge.judge_pairs` columns plus
        ``generated_id, reference_id`` and ``outcome`` (``win``/``loss``/``tie`` for the
        generated problem, ``None`` when unscored or dropped); ``None`` when no pairs.
    """
    params: DatagenParams = run.params
    plan = pair_plan(problems, real, params.win_rate_pairs, run.rng("pairs"))
    if plan.empty:
        return None
    judged = judge_pairs(
        run,
        params.judge,
        pair_tasks(plan, problems, real),
        verdict_format=params.verdict_format,
        both_orders=True,
        policy=params.inconsistent,
    )
    judged = judged.rename(columns={"outcome": "order_outcome"})
    verdicts = plan.merge(judged, on="pair_id", validate="one_to_one")
    verdicts["outcome"] = [pairwise_outcome(f, "x") for f in verdicts["final"]]
    run.write_records("pairwise", verdicts)
    return verdicts


class HumanData(NamedTuple):
    """The human reviews a study read."""

    verifications: dict[str, Verification]
    """Reviews of this run's problems, by problem id."""
    path: Path | None
    """The file read (``None``: none found)."""
    simulated: bool
    """Written by the simulated reviewer."""
    unknown_ids: list[str]
    """Reviewed ids that are not problems of this run (ignored)."""


def sim_review(
    problem_id: str,
    true_quality: float,
    rng: np.random.Generator,
    *,
    noise: float = SIM_REVIEW_NOISE,
    verified_at: datetime = SIM_REVIEW_TIME,
) -> Verification:
    """A simulated human review of one problem.

    Each dimension is ``clip(rint(true_quality + noise·z), 1, 5)``, ``z ~ N(0, 1)``. The
    status follows the scores: ``approved`` when the mean is at least 3.5 and no dimension
    is below 3, ``rejected`` when the mean is below 2.5, else ``needs_revision``.

    Args:
        problem_id: the reviewed problem.
        true_quality: its hidden quality (1-5).
        rng: the random generator (one normal per dimension).
        noise: standard deviation of the scores around the truth.
        verified_at: the time stamp (fixed, so reruns write the same file).
    """
    z = rng.standard_normal(len(DIMENSIONS))
    values = np.clip(np.rint(true_quality + noise * z), 1, 5).astype(int)
    scores = {d: int(v) for d, v in zip(DIMENSIONS, values, strict=True)}
    total = float(values.mean())
    if total >= PASS_SCORE and values.min() >= 3:
        status = "approved"
    elif total < 2.5:
        status = "rejected"
    else:
        status = "needs_revision"
    return make_verification(
        problem_id, scores, status, "simulated reviewer", verified_at=verified_at
    )


def sim_verifications(
    problems: pd.DataFrame, n: int, rng: np.random.Generator
) -> dict[str, Verification]:
    """Simulated reviews of a random sample of ``n`` problems (all when fewer), from each
    problem's hidden ``true_quality`` (see :func:`sim_review`)."""
    take = rng.permutation(len(problems))[: min(n, len(problems))]
    sample = problems.iloc[np.sort(take)]
    return {
        str(p["id"]): sim_review(str(p["id"]), float(p["true_quality"]), rng)
        for p in sample.to_dict("records")
    }


def study_verifications(run: Any, problems: pd.DataFrame) -> HumanData:
    """The human reviews of this run: simulated, from the params file's path, or from
    ``<run dir>/generated_verifications.json`` when a reviewer has written it.

    Simulated reviews (which need a simulated generator's hidden truth) are saved to
    ``<run dir>/simulated_verifications.json`` and read back like a reviewer's file.
    """
    params: DatagenParams = run.params
    source = params.verifications
    if source == "simulated":
        if problems["true_quality"].isna().any():
            raise ValueError(
                "verifications: simulated needs a simulated generator (hidden true quality)"
            )
        path = run.dir / "simulated_verifications.json"
        save_verifications(path, sim_verifications(problems, params.human_sample, run.rng("human")))
    else:
        path = Path(source) if source else verifications_path(run.dir / "generated.jsonl")
    loaded = load_verifications(path)
    ids = set(problems["id"].astype(str))
    known = {k: v for k, v in loaded.items() if k in ids}
    unknown = sorted(set(loaded) - ids)
    return HumanData(known, path if path.exists() else None, source == "simulated", unknown)


class DatagenStudy(NamedTuple):
    """Everything one run of the study produced."""

    reference: pd.DataFrame
    """All reference rows (every source)."""
    real: pd.DataFrame
    """One row per real problem (style references and win-rate opponents)."""
    generation: GenerationResult
    judge_results: pd.DataFrame
    verdicts: pd.DataFrame | None
    duplicates: DuplicateReport
    human: HumanData
    summary: StudySummary


def run_study(run: Any, reference: pd.DataFrame) -> DatagenStudy:
    """Generate, judge, compare with real problems, check duplicates, read reviews, summarize.

    Writes ``records/problems, invalid, quality, pairwise, duplicates`` and
    ``<run dir>/generated.jsonl``; every model call is cached and checkpointed.

    Args:
        run: the open :class:`evalbench.runs.Run` of a ``datagen`` study.
        reference: from :func:`load_study_reference`.
    """
    params: DatagenParams = run.params
    real = unique_reference(reference)
    generation = generate_problems(run, real)
    problems = generation.problems
    if problems.empty:
        reasons = invalid_reasons(generation.invalid)
        raise ValueError(
            f"no valid problem: all {generation.calls} generator outputs were invalid "
            f"(commonest reason: {reasons['reason'].iloc[0]!r}; see records/invalid.jsonl)"
        )
    judged = judge_problems(run, problems)
    duplicates = near_duplicates(problems, reference, threshold=params.duplicate_threshold)
    run.write_records("duplicates", duplicates.top)
    verdicts = compare_with_real(run, problems, real)
    human = study_verifications(run, problems)
    summary = summarize(
        problems,
        rng=run.rng("summary"),
        judge_results=judged,
        verdicts=verdicts,
        duplicates=duplicates,
        verifications=human.verifications,
        n_invalid=len(generation.invalid),
        thresholds=params.thresholds.model_dump(),
        duplicate_policy=params.duplicate_policy,
        topics=params.topics,
        rounds=params.bootstrap_rounds,
        level=params.confidence_level,
    )
    return DatagenStudy(reference, real, generation, judged, verdicts, duplicates, human, summary)


# --------------------------------------------------------------------------- report tables


def basic_info(study: DatagenStudy) -> pd.DataFrame:
    """The report's first table: what was asked, what came back, what it was checked on."""
    gen, problems = study.generation, study.generation.problems
    attempts = problems["attempts"].astype(float)
    mismatched = int((problems["topic"] != problems["requested_topic"]).sum())
    rows = [
        ("problems requested", len(gen.slots)),
        ("valid problems", len(problems)),
        ("slots left unfilled (all attempts invalid)", len(gen.unfilled)),
        ("generator calls", gen.calls),
        ("invalid outputs", len(gen.invalid)),
        ("invalid share of outputs", len(gen.invalid) / gen.calls if gen.calls else np.nan),
        ("mean attempts per valid problem", attempts.mean() if len(attempts) else np.nan),
        ("declared topic differs from the requested one", mismatched),
        ("real problems (unique)", len(study.real)),
        ("reference rows (all sources)", len(study.reference)),
    ]
    return pd.DataFrame(
        {"item": [r[0] for r in rows], "value": pd.Series([r[1] for r in rows], dtype=object)}
    )


def invalid_reasons(invalid: pd.DataFrame) -> pd.DataFrame:
    """How often each validation failure occurred (an output can fail for several).

    Returns:
        Columns ``reason, count, share`` (share of invalid outputs), most frequent first.
    """
    if invalid.empty:
        return pd.DataFrame(columns=["reason", "count", "share"])
    parts = invalid["reason"].astype(str).str.split("; ").explode()
    counts = parts.value_counts()
    table = pd.DataFrame({"reason": counts.index, "count": counts.to_numpy()})
    table["share"] = table["count"] / len(invalid)
    return table


def answer_comparison(generated: AnswerSummary, real: AnswerSummary) -> pd.DataFrame:
    """The answer-sanity statistics of generated and real problems side by side."""
    fields = ["n", "min", "max", "median", "share_below_100", "share_below_10", "last_digit_p"]
    table = pd.DataFrame(
        {
            "generated": [getattr(generated, f) for f in fields],
            "real": [getattr(real, f) for f in fields],
        },
        index=fields,
    )
    table.index.name = "statistic"
    return table


def duplicate_examples(
    report: DuplicateReport, problems: pd.DataFrame, reference: pd.DataFrame
) -> list[dict[str, Any]]:
    """Flagged pairs with both texts (for display), most similar first."""
    gen = problems.set_index(problems["id"].astype(str))["problem"]
    ref = reference.set_index(reference["id"].astype(str))["problem"]
    top = report.top[report.top["flagged"]].sort_values("similarity", ascending=False)
    return [
        {
            "generated_id": row.generated_id,
            "reference_id": row.reference_id,
            "similarity": f"{row.similarity:.3f}",
            "generated problem": gen.get(row.generated_id),
            "real problem": ref.get(row.reference_id),
        }
        for row in top.itertuples(index=False)
    ]


def judge_vs_truth(judge_results: pd.DataFrame, problems: pd.DataFrame) -> pd.DataFrame:
    """Judge weighted scores beside the simulated problems' hidden true quality.

    Returns:
        Columns ``problem_id, true_quality, judge`` for scored problems with a truth.
    """
    scored = judge_columns(judge_results)
    scored = scored[scored["status"] == "scored"][["problem_id", "weighted"]]
    truth = problems[["id", "true_quality"]].rename(columns={"id": "problem_id"})
    both = truth.merge(scored, on="problem_id").rename(columns={"weighted": "judge"})
    return both.dropna(subset=["true_quality"]).reset_index(drop=True)


def order_consistency(verdicts: pd.DataFrame) -> pd.DataFrame:
    """How the two presentation orders of each pair resolved (consistent, inconsistent,
    unscored), with shares of all pairs."""
    counts = verdicts["order_outcome"].value_counts()
    table = pd.DataFrame({"resolution": counts.index, "pairs": counts.to_numpy()})
    table["share"] = table["pairs"] / max(1, len(verdicts))
    return table


def finish_headlines(summary: StudySummary) -> dict[str, float]:
    """Two or three headline numbers for the index."""
    out: dict[str, float] = {}
    if summary.judge is not None:
        out["judge mean (1-5)"] = float(summary.judge.metrics.loc["mean_score", "estimate"])
    if summary.win is not None:
        out["win rate vs real"] = float(summary.win.table.loc["win_rate", "estimate"])
    if summary.human is not None:
        out["human pass rate"] = float(summary.human.approved_rate.estimate)
    elif summary.judge is not None:
        out["judge pass rate"] = float(summary.judge.metrics.loc["pass_rate", "estimate"])
    return out


# --------------------------------------------------------------------------- simulation


class SimGeneration(NamedTuple):
    """What the simulated generator wrote, with its hidden truth."""

    text: str
    """The output text, as a model would return it."""
    kind: Literal["valid", "malformed", "copy"]
    """``valid`` (a fresh templated problem), ``malformed`` or ``copy`` of the reference."""
    detail: str
    """Format or defect: ``fenced``, ``bare``, ``prose_json`` (+ ``+raw_latex``),
    ``answer_1000``, ``missing_solution``, ``prose``."""
    answer: int | None
    """The correct answer of the problem written (``None`` for prose, and for a copy, whose
    changed numbers make the stated reference answer unreliable)."""
    true_quality: float
    """Hidden quality on 1–5; equals ``sim_true_quality(problem)`` (NaN without a problem)."""


_SIM_FORMATS = ("fenced", "bare", "prose_json")
SIM_RAW_LATEX_RATE = 0.3
"""Share of simulated JSON outputs that write LaTeX with single backslashes."""
_SIM_CANDIDATES = 10
_SIM_QUALITY_SD = 0.6


def sim_true_quality(problem: str) -> float:
    """The hidden quality (1–5) of a simulated problem, derived from its text alone.

    A stable hash of :func:`normalize_problem_text` mapped to [1, 5], so a simulated
    judge that only sees the problem text can recover the truth. The simulated generator
    makes its mean match its ``quality`` knob by choosing among candidate problems.
    """
    digest = hashlib.sha256(normalize_problem_text(problem).encode()).digest()
    return 1.0 + 4.0 * int.from_bytes(digest[:6], "big") / float(1 << 48)


def sim_generation_output(
    reference_row: Mapping[str, Any],
    topic: str,
    *,
    rng: np.random.Generator,
    quality: float = 3.5,
    malformed_rate: float = 0.0,
    copy_rate: float = 0.0,
) -> SimGeneration:
    """The text a generator model would write for one generation prompt (simulated).

    With probability ``malformed_rate`` the output is invalid (answer 1000, the solution
    missing, or prose without JSON); with ``copy_rate`` it is a lightly edited copy of
    the reference problem (:func:`lightly_edit`); otherwise a templated problem on
    ``topic`` whose integer answer (0–999) is computed in code. JSON outputs are fenced,
    bare, or after a line of prose, and in :data:`SIM_RAW_LATEX_RATE` of cases write
    LaTeX with single backslashes (invalid JSON that :func:`parse_generated` repairs;
    never for text with ``\\u...`` such as ``\\underline``, which cannot be repaired).

    The hidden quality of a problem is :func:`sim_true_quality` of its text; among
    ``10`` candidate problems the one closest to a draw from ``N(quality, 0.6)`` (clipped
    to 1–5) is written, so the mean true quality tracks ``quality``. Deterministic for the
    state of ``rng``.

    Args:
        reference_row: the real problem shown in the prompt (``problem``, ``answer``).
        topic: one of :data:`TOPICS`.
        rng: the seeded generator.
        quality: mean true quality on 1–5 (the sim knob ``SimSpec.quality``).
        malformed_rate: share of invalid outputs.
        copy_rate: share of light copies of the reference.
    """
    topic = _require_topic(topic)
    draw = rng.random()
    if draw < copy_rate:
        problem = lightly_edit(str(reference_row["problem"]), rng)
        solution = "Adapting the standard approach to this setting gives the answer directly."
        fields = _fields(problem, int(reference_row["answer"]), solution, topic)
        return _sim_json(rng, fields, truth=None, kind="copy")
    problem, solution, answer = _pick_candidate(topic, rng, quality)
    if draw < copy_rate + malformed_rate:
        return _sim_malformed(rng, _fields(problem, answer, solution, topic))
    return _sim_json(rng, _fields(problem, answer, solution, topic), truth=answer, kind="valid")


def sim_generate(
    request: ChatRequest,
    knobs: SimSpec,
    rng: np.random.Generator,
    *,
    reference_problem: str,
    reference_answer: int,
    topic: str,
) -> SimReply:
    """The ``sim`` provider's generator: :func:`sim_generation_output` with the spec's knobs
    ``quality``, ``malformed_rate`` and ``copy_rate`` (the request itself is not read)."""
    out = sim_generation_output(
        {"problem": reference_problem, "answer": reference_answer},
        topic,
        rng=rng,
        quality=knobs.quality,
        malformed_rate=knobs.malformed_rate,
        copy_rate=knobs.copy_rate,
    )
    return SimReply(out.text)


def _fields(problem: str, answer: int, solution: str, topic: str) -> dict[str, Any]:
    return {"problem": problem, "answer": answer, "solution": solution, "topic": topic}


def _pick_candidate(topic: str, rng: np.random.Generator, quality: float) -> tuple[str, str, int]:
    target = float(np.clip(rng.normal(quality, _SIM_QUALITY_SD), 1.0, 5.0))
    candidates = [_SIM_TEMPLATES[topic](rng) for _ in range(_SIM_CANDIDATES)]
    return min(candidates, key=lambda c: abs(sim_true_quality(c[0]) - target))


def _sim_json(
    rng: np.random.Generator,
    fields: dict[str, Any],
    *,
    truth: int | None,
    kind: Literal["valid", "malformed", "copy"],
    defect: str = "",
) -> SimGeneration:
    body = json.dumps(fields, indent=2, ensure_ascii=False)
    fmt = _SIM_FORMATS[int(rng.integers(len(_SIM_FORMATS)))]
    detail = defect or fmt
    latex = "\\\\" in body  # an escaped backslash: the text has LaTeX
    # \u... (\underline) cannot be told from a JSON unicode escape, so no repair can save it
    if latex and "\\\\u" not in body and rng.random() < SIM_RAW_LATEX_RATE:
        body = body.replace("\\\\", "\\")  # what models write: LaTeX unescaped in JSON
        detail += "+raw_latex"
    text = {
        "fenced": f"```json\n{body}\n```",
        "bare": body,
        "prose_json": f"Here is an original AIME-style problem.\n\n{body}\n",
    }[fmt]
    return SimGeneration(text, kind, detail, truth, sim_true_quality(fields["problem"]))


def _sim_malformed(rng: np.random.Generator, fields: dict[str, Any]) -> SimGeneration:
    defect = ("answer_1000", "missing_solution", "prose")[int(rng.integers(3))]
    if defect == "answer_1000":
        wrong = {**fields, "answer": 1000}
        return _sim_json(rng, wrong, truth=fields["answer"], kind="malformed", defect=defect)
    if defect == "missing_solution":
        partial = {k: v for k, v in fields.items() if k != "solution"}
        return _sim_json(rng, partial, truth=fields["answer"], kind="malformed", defect=defect)
    text = (
        "I considered several ideas for a problem on this topic, but could not make the "
        "answer come out as an integer between 0 and 999, so I stopped here."
    )
    return SimGeneration(text, "malformed", defect, None, float("nan"))


_EDIT_SWAPS = (
    ("Find", "Determine"),
    ("Let ", "Now let "),
    ("such that", "so that"),
    ("positive integers", "positive whole numbers"),
    ("the number of", "how many"),
    ("probability", "chance"),
    ("is divided by", "is divided through by"),
    ("where", "in which"),
    ("There exist", "There are"),
    ("real numbers", "reals"),
)


def lightly_edit(text: str, rng: np.random.Generator, *, swaps: int = 2) -> str:
    """A light copy of a problem: every number outside LaTeX commands changed, and up to
    ``swaps`` phrases replaced by near-synonyms (what a copying generator does)."""
    present = [pair for pair in _EDIT_SWAPS if pair[0] in text]
    if present:
        for k in rng.permutation(len(present))[:swaps]:
            old, new = present[int(k)]
            text = text.replace(old, new, 1)
    return re.sub(
        r"(?<![\\A-Za-z0-9])\d+", lambda m: str(int(m.group()) + int(rng.integers(1, 4))), text
    )


def _tpl_algebra(rng: np.random.Generator) -> tuple[str, str, int]:
    while True:
        s, p = int(rng.integers(5, 32)), int(rng.integers(2, 200))
        answer = s * s - 2 * p
        if s * s >= 4 * p and 0 <= answer <= 999:
            break
    problem = (
        f"Real numbers $a$ and $b$ satisfy $a+b={s}$ and $ab={p}$. Find the value of $a^2+b^2$."
    )
    solution = (
        f"Since $(a+b)^2=a^2+2ab+b^2$, we get $a^2+b^2=(a+b)^2-2ab={s}^2-2\\cdot {p}={answer}$. "
        f"Such reals exist because the discriminant ${s}^2-4\\cdot {p}\\geq 0$."
    )
    return problem, solution, answer


def _tpl_number_theory(rng: np.random.Generator) -> tuple[str, str, int]:
    base, exp, mod = (
        int(rng.integers(2, 20)),
        int(rng.integers(50, 2025)),
        int(rng.integers(101, 1000)),
    )
    answer = pow(base, exp, mod)
    problem = f"Find the remainder when ${base}^{{{exp}}}$ is divided by ${mod}$."
    solution = (
        f"Compute ${base}^{{{exp}}} \\pmod{{{mod}}}$ by repeated squaring: write {exp} in "
        f"binary and multiply the needed powers ${base}^{{2^k}}$, reducing modulo {mod} at "
        f"each step. The result is ${answer}$."
    )
    return problem, solution, answer


def _tpl_combinatorics(rng: np.random.Generator) -> tuple[str, str, int]:
    while True:
        n, k = int(rng.integers(8, 25)), int(rng.integers(2, 6))
        answer = math.comb(n - k + 1, k)
        if n - k + 1 >= k and answer <= 999:
            break
    problem = (
        f"How many {k}-element subsets of $\\{{1,2,\\ldots,{n}\\}}$ contain no two "
        "consecutive integers?"
    )
    solution = (
        f"Map a subset $a_1<a_2<\\cdots<a_{k}$ to $b_i=a_i-(i-1)$; this is a bijection onto "
        f"all {k}-subsets of $\\{{1,\\ldots,{n - k + 1}\\}}$, so the count is "
        f"$\\binom{{{n - k + 1}}}{{{k}}}={answer}$."
    )
    return problem, solution, answer


_TRIPLES = ((3, 4, 5), (5, 12, 13), (8, 15, 17), (7, 24, 25), (20, 21, 29), (9, 40, 41))


def _tpl_geometry(rng: np.random.Generator) -> tuple[str, str, int]:
    while True:
        a, b, c = _TRIPLES[int(rng.integers(len(_TRIPLES)))]
        k = int(rng.integers(1, 6))
        answer = k * a * k * b // 2
        if answer <= 999:
            break
    problem = (
        f"A triangle has side lengths ${k * a}$, ${k * b}$ and ${k * c}$. "
        "Find the area of the triangle."
    )
    solution = (
        f"Because ${k * a}^2+{k * b}^2={k * c}^2$, the triangle is right-angled with legs "
        f"${k * a}$ and ${k * b}$, so its area is $\\frac{{{k * a}\\cdot {k * b}}}{{2}}={answer}$."
    )
    return problem, solution, answer


def _tpl_probability(rng: np.random.Generator) -> tuple[str, str, int]:
    sides = int(rng.integers(4, 13))
    total = int(rng.integers(3, 2 * sides))
    ways = sum(1 for i in range(1, sides + 1) if 1 <= total - i <= sides)
    prob = Fraction(ways, sides * sides)
    answer = prob.numerator + prob.denominator
    problem = (
        f"Two fair {sides}-sided dice, each with faces numbered $1$ through ${sides}$, are "
        f"rolled. The probability that the sum of the two numbers rolled is ${total}$ is "
        "$\\frac{m}{n}$, where $m$ and $n$ are relatively prime positive integers. Find $m+n$."
    )
    solution = (
        f"There are ${sides}^2={sides * sides}$ equally likely outcomes, and {ways} of them "
        f"have sum {total}. So the probability is $\\frac{{{ways}}}{{{sides * sides}}}="
        f"\\frac{{{prob.numerator}}}{{{prob.denominator}}}$ and $m+n={answer}$."
    )
    return problem, solution, answer


def _tpl_sequences_series(rng: np.random.Generator) -> tuple[str, str, int]:
    a, d, n = int(rng.integers(1, 50)), int(rng.integers(2, 30)), int(rng.integers(20, 120))
    total = n * (2 * a + (n - 1) * d) // 2
    answer = total % 1000
    problem = (
        f"An arithmetic sequence has first term ${a}$ and common difference ${d}$. "
        f"Find the remainder when the sum of its first ${n}$ terms is divided by $1000$."
    )
    solution = (
        f"The sum is $\\sum_{{i=0}}^{{{n - 1}}} ({a}+{d}i)="
        f"\\frac{{{n}(2\\cdot {a}+{n - 1}\\cdot {d})}}{{2}}={total}$, "
        f"which leaves remainder ${answer}$ modulo $1000$."
    )
    return problem, solution, answer


def _tpl_complex_numbers(rng: np.random.Generator) -> tuple[str, str, int]:
    while True:
        a, b, m = int(rng.integers(1, 25)), int(rng.integers(1, 25)), int(rng.integers(1, 3))
        answer = (a * a + b * b) ** m
        if answer <= 999:
            break
    imag = f"{b}i" if b > 1 else "i"
    problem = (
        f"Let $z={a}+{imag}$, where $i=\\sqrt{{-1}}$. Find the modulus of $z^{{{2 * m}}}$, "
        f"that is, $|z^{{{2 * m}}}|$."
    )
    solution = (
        f"We have $|z|^2=z\\overline{{z}}={a}^2+{b}^2={a * a + b * b}$, so "
        f"$|z^{{{2 * m}}}|=(|z|^2)^{{{m}}}={answer}$."
    )
    return problem, solution, answer


_SIM_TEMPLATES: dict[str, Callable[[np.random.Generator], tuple[str, str, int]]] = {
    "algebra": _tpl_algebra,
    "number_theory": _tpl_number_theory,
    "combinatorics": _tpl_combinatorics,
    "geometry": _tpl_geometry,
    "probability": _tpl_probability,
    "sequences_series": _tpl_sequences_series,
    "complex_numbers": _tpl_complex_numbers,
}
