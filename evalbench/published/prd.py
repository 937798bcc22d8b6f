"""PRD Vicuna-80 ratings: human (MTurk) and LLM-reviewer pairwise verdicts, and answer lengths.

Li, Patel & Du (2023), "PRD: Peer Rank and Discussion Improve Large Language Model based
Evaluations", arXiv:2307.02762; files from bcdnlp/PRD (MIT) through the source registry.
Used by the judge-agreement study (LLM reviewers vs humans) and the arena (human votes as
battles).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any, Literal, NamedTuple

import numpy as np
import pandas as pd

from evalbench import agreement as ag
from evalbench import sources
from evalbench.records import read_jsonl

PrdReviewer = Literal["gpt4", "gpt35", "claude", "bard", "vicuna-13b"]
PRD_REVIEWERS: tuple[PrdReviewer, ...] = ("gpt4", "gpt35", "claude", "bard", "vicuna-13b")
"""The LLM reviewers of PRD's Vicuna-80 ratings (each judged 10 model pairs × 2 orders)."""
PRD_SCORE = {1: "a", 2: "b", 3: "tie"}
"""PRD's three-class score: 1 = the answer shown first is better, 2 = the second, 3 = tie."""
_PRD_NAME = re.compile(
    r"^prd/ratings/(?P<reviewer>[^/]+)/answer(?P<sep>[_-])(?P<first>.+?)-vs-answer[_-]"
    r"(?P<second>.+?)-(?P=reviewer)-reviewer(?:[_-]threeclass)?$"
)
PAIR_KEYS = ["question_id", "model_x", "model_y"]
"""Columns identifying one PRD item: a question and an (unordered) model pair."""


class PrdFile(NamedTuple):
    """One registered PRD ratings file: who judged which ordered pair, in which run."""

    name: str
    reviewer: str
    first: str
    second: str
    run: str


def prd_files(reviewer: str) -> list[PrdFile]:
    """The registered ratings files of ``reviewer`` (``human`` or one of :data:`PRD_REVIEWERS`).

    GPT-3.5's folder holds a second run of gpt35-vs-gpt4 in both orders, named with hyphens
    (``answer-gpt35-vs-answer-gpt4-…``); it is run ``"b"``, every other file is run ``"a"``.
    """
    names = sources.names(f"prd/ratings/{reviewer}/")
    if not names:
        raise ValueError(f"no registered PRD ratings for reviewer {reviewer!r}")
    files = []
    for name in names:
        match = _PRD_NAME.match(name)
        if match is None:
            raise ValueError(f"unrecognised PRD ratings file name {name!r}")
        run = "b" if match["sep"] == "-" else "a"
        files.append(PrdFile(name, reviewer, match["first"], match["second"], run))
    return files


def _prd_rows(file: PrdFile) -> Iterator[tuple[Any, ...]]:
    path = sources.fetch(file.name, progress=False)
    seen: Counter[int] = Counter()
    for number, row in enumerate(read_jsonl(path), start=1):
        qid, score = row.get("question_id"), row.get("score")
        if score not in PRD_SCORE or not isinstance(qid, int):
            raise ValueError(
                f"{path}: vote {number}: need an int question_id and score 1, 2 or 3, "
                f"got question_id={qid!r}, score={score!r}"
            )
        position = PRD_SCORE[score]
        yield (file.reviewer, file.run, qid, file.first, file.second, seen[qid], score, position)
        seen[qid] += 1


def load_prd_ratings(reviewer: str) -> pd.DataFrame:
    """All verdicts of one PRD reviewer (``human`` or an LLM), oriented to the models.

    Returns:
        One row per verdict, in file order: ``reviewer, run, question_id, first, second``
        (the order shown), ``rater`` (0, 1, 2 for the three MTurk votes; 0 for LLMs),
        ``score`` (PRD's code, :data:`PRD_SCORE`), ``position`` (a = the answer shown first
        won), ``model_x, model_y`` (the pair sorted by name), ``x_first`` and ``verdict``
        (a = model x won).

    Raises:
        ValueError: no registered file for ``reviewer``, an unrecognised file name, or a
            vote without an int ``question_id`` and a score 1, 2 or 3.
    """
    columns = ["reviewer", "run", "question_id", "first", "second", "rater", "score", "position"]
    frame = pd.DataFrame(
        [row for file in prd_files(reviewer) for row in _prd_rows(file)], columns=columns
    )
    frame["model_x"] = frame[["first", "second"]].min(axis=1)
    frame["model_y"] = frame[["first", "second"]].max(axis=1)
    frame["x_first"] = frame["first"] == frame["model_x"]
    shown = np.where(frame["x_first"], "a", "b")
    frame["verdict"] = ag.positions_to_models(frame["position"], list(shown))
    return frame


def load_prd_lengths(models: Sequence[str] = PRD_REVIEWERS) -> pd.DataFrame:
    """Answer lengths (characters) of PRD's generations: ``model, question_id, chars``."""
    answers = load_prd_answers(models)
    return answers.assign(chars=answers["text"].str.len()).drop(columns="text")


def prd_answer_models() -> list[str]:
    """The models whose Vicuna-80 answers PRD publishes (registered ``prd/generations/``):
    bard, claude, gpt35, gpt4, vicuna-13b; the four Guanaco models its human votes also
    compare have none in the repository."""
    return [n.rsplit("/answer_", 1)[1] for n in sources.names("prd/generations/answer_")]


def load_prd_answers(models: Sequence[str] | None = None) -> pd.DataFrame:
    """PRD's Vicuna-80 answers (``data/vicuna80/generations``): ``model, question_id, text``.

    Args:
        models: whose answers (default: :func:`prd_answer_models`).

    Raises:
        ValueError: an answer without an int ``question_id`` and a string ``text``.
    """
    rows = []
    for model in prd_answer_models() if models is None else models:
        path = sources.fetch(f"prd/generations/answer_{model}", progress=False)
        for number, row in enumerate(read_jsonl(path), start=1):
            qid, text = row.get("question_id"), row.get("text")
            if not isinstance(qid, int) or not isinstance(text, str):
                raise ValueError(f"{path}: answer {number}: need an int question_id and a "
                                 f"string text, got question_id={qid!r}")  # fmt: skip
            rows.append((model, qid, text))
    return pd.DataFrame(rows, columns=["model", "question_id", "text"])
