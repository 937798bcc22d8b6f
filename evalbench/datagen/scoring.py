"""Prompts, parsing and validation of generated AIME-style problems (pure).

The generator is shown one real AIME problem as a style reference and asked for a new
problem as JSON ``{problem, answer, solution, topic}``; :func:`parse_generated` turns what
it wrote into a :class:`GeneratedProblem` or an :class:`InvalidGeneration` with the
reason. The judges see a problem through :func:`problem_card`; :func:`pairwise_outcome`
reads a pairwise verdict from the generated problem's side. AIME answers are integers
0–999 (MAA contest rules); the pass (3.5) and excellent (4.5) scores follow the AIME case
study of Datawhale's *Hello-Agents*, chapter 12.4.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, NamedTuple

import numpy as np
import pandas as pd

from evalbench.records import Record
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
SCORE_SLACK = 1e-9
"""Weighted sums like 0.3·4 + 0.2·3 + ... can land a hair below an exact 3.5."""
ANSWER_MIN, ANSWER_MAX = 0, 999
PROBLEM_MIN_CHARS, PROBLEM_MAX_CHARS = 30, 5000
SOLUTION_MAX_CHARS = 20_000


# --------------------------------------------------------------------------- generation prompt

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
    topic = require_topic(topic)
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
    """Draw a style reference from ``reference`` (the real problems) with ``rng`` and build
    the generation prompt for ``topic`` (one of :data:`TOPICS`)."""
    row = pick_reference(reference, rng)
    return GenerationRequest(generation_messages(row, topic), str(row["id"]), topic)


def require_topic(topic: str) -> str:
    """The normalised topic (see :func:`normalize_topic`).

    Raises:
        ValueError: ``topic`` is not one of :data:`TOPICS`.
    """
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


# --------------------------------------------------------------------------- what the judges see

PAIRWISE_QUESTION = (
    "Two AIME-style competition problems follow, each with its stated answer. Which is the "
    "better AIME problem? Judge correctness (well posed, the stated integer answer 0-999 is "
    "right), clarity, AIME-level difficulty (several steps, no advanced theory) and "
    "originality. Do not favour the longer statement."
)
"""The question of every generated-vs-real comparison."""


def problem_card(row: Mapping[str, Any], *, with_solution: bool = False) -> str:
    """A problem as the judges see it: statement and answer (and the solution)."""
    text = f"Problem: {str(row['problem']).strip()}\n\nAnswer: {row['answer']}"
    solution = row.get("solution")
    if with_solution and isinstance(solution, str) and solution.strip():
        text += f"\n\nSolution: {solution.strip()}"
    return text


def content_key(problem_id: str, *texts: str) -> str:
    """``<id>@<10 hex digits of the texts' sha256>``: a judgment key that changes with the text.

    A slot's problem can change between runs (a failed generator call is retried on
    resume and may now succeed at an earlier attempt); keying judgments by content means
    a stored judgment is only reused for exactly the text it judged.
    """
    digest = hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:10]
    return f"{problem_id}@{digest}"


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
