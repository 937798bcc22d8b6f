"""The arena runner's prompts: the built-in demo set or a local JSONL file (the I/O edge)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from evalbench.ratings import ArenaError
from evalbench.records import iter_csv, iter_jsonl, parse_json, text_lines
from evalbench.sources import record_read


class ArenaPrompt(NamedTuple):
    """One prompt every system answers."""

    id: str
    question: str
    documents: tuple[str, ...] = ()
    """Reference documents, most relevant first (may be empty)."""


def demo_prompts_path() -> Path:
    """The built-in demo prompts (``evalbench/demo/arena/prompts.jsonl``, written for evalbench)."""
    return Path(str(resources.files("evalbench") / "demo" / "arena" / "prompts.jsonl"))


def load_prompts(source: str | Path = "demo", *, limit: int | None = None) -> list[ArenaPrompt]:
    """Prompts from ``demo`` or a JSONL file of ``{id, question, documents?}`` objects.

    Blank lines are skipped. Raises :class:`ArenaError` naming the file and line for
    invalid JSON, a missing or empty ``id``/``question``, ``documents`` that is not a list
    of strings, or a repeated ``id``.
    """
    path = demo_prompts_path() if str(source) == "demo" else Path(source)
    record_read(path, "arena demo prompts" if str(source) == "demo" else None)
    prompts: list[ArenaPrompt] = []
    seen: set[str] = set()
    for line_no, line in text_lines(path, error=ArenaError):
        if not line.strip():
            continue
        prompt = _prompt_line(line, f"{path} line {line_no}")
        if prompt.id in seen:
            raise ArenaError(f"{path} line {line_no}: id {prompt.id!r} repeats")
        seen.add(prompt.id)
        prompts.append(prompt)
    if not prompts:
        raise ArenaError(f"{path}: no prompts (empty file)")
    return prompts[:limit]


def _prompt_line(line: str, where: str) -> ArenaPrompt:
    try:
        obj = parse_json(line)
    except json.JSONDecodeError as exc:
        raise ArenaError(f"{where}: not JSON ({exc.msg})") from exc
    if not isinstance(obj, dict):
        raise ArenaError(f"{where}: expected a JSON object")
    pid, question, docs = obj.get("id"), obj.get("question"), obj.get("documents") or []
    if not isinstance(pid, (str, int)) or isinstance(pid, bool) or str(pid) == "":
        raise ArenaError(f"{where}: id must be a non-empty string or integer, got {pid!r}")
    if not isinstance(question, str) or not question.strip():
        raise ArenaError(f"{where}: question must be a non-empty string")
    if not isinstance(docs, list) or not all(isinstance(d, str) for d in docs):
        raise ArenaError(f"{where}: documents must be a list of strings")
    return ArenaPrompt(str(pid), question, tuple(docs))


# --------------------------------------------------------------------------- human votes

HUMAN_VOTE_COLUMNS = ("model_a", "model_b", "winner")
"""Required columns of a human-votes file; ``question_id``, ``annotator``, ``weight`` optional."""


def load_human_battles(path: Path | str, systems: Sequence[str]) -> pd.DataFrame:
    """Human pairwise votes as battles, from ``evalbench label export`` or any file alike.

    A ``.jsonl`` (one object per line) or ``.csv`` with ``model_a, model_b, winner`` (``a``,
    ``b`` or ``tie``) and optional ``question_id``, ``annotator`` (default ``human``) and
    ``weight`` (default 1). Every model must be one of ``systems`` (a typo is an error, not
    a new system).

    Returns:
        ``model_a, model_b, winner, weight, question_id, annotator, line, simulated``.

    Raises:
        ArenaError: naming the file, line and field of the first problem.
    """
    path = Path(path)
    record_read(path)
    rows = [_vote_row(raw, f"{path}:{line}", systems, line) for line, raw in _vote_records(path)]
    if not rows:
        raise ArenaError(f"{path}: no votes")
    return pd.DataFrame(rows)


def _vote_row(raw: dict, where: str, systems: Sequence[str], line: int) -> dict[str, Any]:
    for col in HUMAN_VOTE_COLUMNS:
        if raw.get(col) in (None, ""):
            raise ArenaError(f"{where}: field {col!r}: missing")
    a, b, winner = str(raw["model_a"]), str(raw["model_b"]), str(raw["winner"])
    for col, name in (("model_a", a), ("model_b", b)):
        if name not in systems:
            raise ArenaError(f"{where}: field {col!r}: {name!r} is not one of {list(systems)}")
    if a == b:
        raise ArenaError(f"{where}: field 'model_b': the same system as model_a")
    if winner not in ("a", "b", "tie"):
        raise ArenaError(f"{where}: field 'winner': {winner!r} is not a, b or tie")
    given = raw.get("weight")  # missing or empty: 1; a JSON 0 is 0 (``0 or 1.0`` was 1)
    try:
        weight = 1.0 if given in (None, "") else -1.0 if isinstance(given, bool) else float(given)
    except (TypeError, ValueError):
        weight = -1.0
    if not 0 <= weight < float("inf"):
        raise ArenaError(f"{where}: field 'weight': {raw.get('weight')!r} is not a weight >= 0")
    return {
        "model_a": a, "model_b": b, "winner": winner, "weight": weight,
        "question_id": str(raw.get("question_id") or ""),
        "annotator": str(raw.get("annotator") or "human"), "line": line,
        "simulated": raw.get("simulated") is True or str(raw.get("simulated")).lower() == "true",
    }  # fmt: skip


def _vote_records(path: Path) -> Iterator[tuple[int, dict]]:
    if path.suffix.lower() == ".csv":
        yield from iter_csv(path, error=ArenaError)[1]
        return
    yield from iter_jsonl(path, error=ArenaError)


def label_pair_rows(tasks: Sequence[Any], prompts: Sequence[ArenaPrompt]) -> list[dict[str, Any]]:
    """The pairwise items of ``evalbench label`` for a run's answers (``label_pairs.jsonl``).

    One row per judged pair of answers (``PairTask`` of :func:`~.study.pair_tasks`): the
    item id is ``<question_id>~<hash of the two systems>``, so it stays put when other
    systems are added; the prompt's documents come along for annotators to read.
    """
    docs = {p.id: list(p.documents) for p in prompts}
    rows = []
    for t in tasks:
        digest = hashlib.sha256(f"{t.model_x}\x1f{t.model_y}".encode()).hexdigest()[:8]
        rows.append({
            "item": f"{t.pair_id}~{digest}", "question_id": t.pair_id, "question": t.question,
            "system_x": t.model_x, "answer_x": t.answer_x, "system_y": t.model_y,
            "answer_y": t.answer_y, "documents": docs.get(t.pair_id, []),
        })  # fmt: skip
    return rows
