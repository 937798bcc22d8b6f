"""GAIA scoring: the paper's prompt, answer extraction and the official leaderboard scorer.

- :func:`build_messages` builds the chat with the GAIA paper's system prompt
  (:data:`SYSTEM_PROMPT`, Mialon et al., 2023, arXiv:2311.12983, Figure 2);
  :func:`extract_answer` reads the ``FINAL ANSWER:`` template;
- :func:`question_scorer` reproduces the official leaderboard scorer, quirks included;
  :func:`lenient_scorer` is a separate, explicitly non-official diagnostic;
- :func:`score` turns predictions (model outputs) into per-item :class:`GaiaRecord` rows.

Pure: plain message lists and DataFrames in and out (study.py wraps the messages in
requests).
"""

from __future__ import annotations

import math
import re
import string
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from evalbench.judge.matching import MatchPrompt, MatchVerdict, match_messages
from evalbench.records import Record

from .data import GaiaDataError, GaiaItem, text_or_none

# The system prompt of the GAIA paper (Mialon et al., 2023, arXiv:2311.12983, Figure 2),
# word for word with ASCII apostrophes; public GAIA harnesses quote the same text as the
# official prompt.
SYSTEM_PROMPT = (
    "You are a general AI assistant. I will ask you a question. Report your thoughts, and "
    "finish your answer with the following template: FINAL ANSWER: [YOUR FINAL ANSWER]. "
    "YOUR FINAL ANSWER should be a number OR as few words as possible OR a comma separated "
    "list of numbers and/or strings. If you are asked for a number, don't use comma to write "
    "your number neither use units such as $ or percent sign unless specified otherwise. If "
    "you are asked for a string, don't use articles, neither abbreviations (e.g. for cities), "
    "and write the digits in plain text unless specified otherwise. If you are asked for a "
    "comma separated list, apply the above rules depending of whether the element to be put "
    "in the list is a number or a string."
)
PLACEHOLDER = "YOUR FINAL ANSWER"
INLINE_SUFFIXES = frozenset({".txt", ".csv", ".tsv", ".json", ".jsonl", ".md", ".py", ".xml"})
DEFAULT_ATTACHMENT_CHARS = 8000

SEMANTIC_COLUMNS = (
    "correct_semantic",
    "semantic_judge",
    "semantic_status",
    "semantic_reason",
    "semantic_truth",
)
"""The semantic judge's fields of a record (:func:`semantic_fields`)."""
_OBJECT_COLUMNS = frozenset(
    {"model_answer", "extracted_answer", "expected", "error", "correct", "correct_lenient",
     *SEMANTIC_COLUMNS}
)  # fmt: skip
USAGE_COLUMNS = (
    "wall_s",
    "steps",
    "tool_calls",
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "cost_usd",
    "latency_s",
)
"""The numbers a prediction may report about its call or task (summed by level)."""
PASSED_COLUMNS = ("state", *USAGE_COLUMNS)
"""What :func:`score` copies from a prediction to its record: the end state and the usage."""


class GaiaRecord(Record):
    """One scored prediction: a system's answer to one item (one attempt)."""

    system: str
    """Name of the system that answered."""
    task_id: str
    """The item's ``task_id``."""
    level: int
    """The item's level (1-3)."""
    attempt: int = 0
    """Attempt number (0 when there is a single attempt; used by pass@k)."""
    model_answer: str | None
    """Raw model output (the reasoning trace); ``None`` when the call failed."""
    extracted_answer: str | None
    """Answer read from the output (:func:`extract_answer`); ``None`` = no answer."""
    expected: str | None
    """Ground truth; ``None`` when hidden (test split)."""
    correct: bool | None
    """Official verdict (:func:`question_scorer`); ``None`` only when the truth is hidden."""
    no_answer: bool
    """The call succeeded but no answer could be extracted (counted wrong, shown apart)."""
    error: str | None
    """Model-call error message; an error record is never correct and never dropped."""
    annotated_steps: int | None = None
    """Human annotator's number of steps for the item, when known."""


RECORD_COLUMNS = tuple(GaiaRecord.model_fields)
"""The columns of a record frame, in :class:`GaiaRecord` order."""


# ---------------------------------------------------------------------------- prompting


def build_messages(
    item: GaiaItem,
    *,
    system_prompt: str = SYSTEM_PROMPT,
    attachment_chars: int = DEFAULT_ATTACHMENT_CHARS,
) -> list[dict[str, str]]:
    """Chat messages for one item: the GAIA system prompt, then the question.

    A text-like attachment (``.txt``, ``.csv``, ``.json``, ...) is inlined after the
    question, clipped to ``attachment_chars`` characters with a note saying so; any other
    attachment is only named (with its size), since a plain chat model cannot open it.
    """
    return [
        {"role": "system", "content": system_prompt},
        {"role": "user", "content": user_prompt(item, attachment_chars=attachment_chars)},
    ]


def user_prompt(item: GaiaItem, *, attachment_chars: int = DEFAULT_ATTACHMENT_CHARS) -> str:
    """The user turn of :func:`build_messages`: the question plus the attachment block."""
    if item.attachment is None:
        return item.question
    return (
        f"{item.question}\n\n{attachment_block(item.attachment, item.file_name, attachment_chars)}"
    )


def attachment_block(path: Path, name: str, budget: int) -> str:
    """Inline a text attachment clipped to ``budget`` characters, or just name the file."""
    if path.suffix.lower() not in INLINE_SUFFIXES:
        size = path.stat().st_size
        return f"Attached file: {name} ({size} bytes). Its content is not included in this message."
    text = path.read_text(encoding="utf-8", errors="replace")
    shown = text[: max(budget, 0)]
    # A fence longer than any backtick run inside keeps the file from closing it early.
    longest = max((len(m) for m in re.findall(r"`+", shown)), default=0)
    fence = "`" * max(3, longest + 1)
    block = f"Attached file: {name}\n{fence}\n{shown.rstrip(chr(10))}\n{fence}"
    if len(shown) < len(text):
        block += f"\n[clipped: the first {len(shown)} of {len(text)} characters are shown]"
    return block


# ---------------------------------------------------------------------------- extraction

_TEMPLATE = re.compile(r"final[ \t_]*answer[ \t]*(?:\*\*|__)?[ \t]*[:：]", re.IGNORECASE)
_DASH_FORM = re.compile(
    r"final[ \t_]*answer[ \t]*(?:\*\*|__)?[ \t]*(?:[-–—]+|\bis\b)[ \t]*[:：]?", re.IGNORECASE
)
_BULLET = re.compile(r"^(?:[-*•]|\d+[.)])\s+")
_TRAILING = ".,;:!。"
_EMPHASIS = "*_`"


def extract_answer(text: str | None) -> str | None:
    """The final answer in a model output, or ``None`` when there is none.

    Rules, in order (the first that yields a non-empty answer wins):

    1. the official template ``FINAL ANSWER: ...`` (case-insensitive; markdown bold
       around it allowed, e.g. ``**Final Answer:**``), last occurrence first; an echo of
       the placeholder ``[YOUR FINAL ANSWER]`` is skipped;
    2. fallback ``Final answer - ...`` / ``Final answer is ...`` (dash or "is");
    3. fallback: the last ``\\boxed{...}`` in the output.

    The answer is the rest of the marker's line (or the next non-blank line when the
    marker ends its line). Later lines of the same paragraph are added only to continue a
    wrapped list (the text so far ends with ``,``/``;`` or the line starts with one), or
    when every line of the paragraph is a bullet (joined with ``", "``). Surrounding
    markdown emphasis, backticks, quotes, one pair of enclosing square brackets, a
    ``\\boxed{}`` wrapper and trailing ``. , ; : !`` are removed.
    """
    if not text:
        return None
    for pattern in (_TEMPLATE, _DASH_FORM):
        for match in reversed(list(pattern.finditer(text))):
            answer = _clean_answer(_paragraph(text[match.end() :]))
            if answer and answer.upper() != PLACEHOLDER:
                return answer
    boxed = last_boxed(text)
    if boxed is None:
        return None
    return _clean_answer(boxed) or None


def last_boxed(text: str) -> str | None:
    """Content of the last ``\\boxed{...}`` in ``text`` (balanced braces), or ``None``."""
    start = text.rfind("\\boxed{")
    if start == -1:
        return None
    depth, begin = 0, start + len("\\boxed{")
    for i in range(begin, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth < 0:
            return text[begin:i]
    return None


def _paragraph(rest: str) -> str:
    lines: list[str] = []
    for raw in rest.split("\n"):
        line = raw.strip()
        if not line and lines:
            break
        if line:
            lines.append(line)
    if len(lines) > 1 and all(_BULLET.match(line) for line in lines):
        return ", ".join(_BULLET.sub("", line) for line in lines)
    kept = lines[:1]
    for line in lines[1:]:
        if not (kept[-1].endswith((",", ";")) or line.startswith((",", ";"))):
            break
        kept.append(line)
    return " ".join(kept)


def _clean_answer(answer: str) -> str:
    previous = None
    while answer != previous:
        previous = answer
        answer = answer.strip().strip(_EMPHASIS).strip().rstrip(_TRAILING)
        answer = _unwrap(answer)
    return answer


def _unwrap(answer: str) -> str:
    boxed = re.fullmatch(r"\\boxed\{(.*)\}", answer, flags=re.DOTALL)
    if boxed:
        return boxed.group(1)
    if len(answer) < 2:
        return answer
    inner = answer[1:-1]
    for left, right in ('""', "''", "“”", "[]"):
        enclosed = answer[0] == left and answer[-1] == right
        if enclosed and left not in inner and right not in inner:
            return inner
    return answer


# ---------------------------------------------------------------------------- scoring
# The official scorer lives in the leaderboard space (scorer.py, ``question_scorer``) at
# https://huggingface.co/spaces/gaia-benchmark/leaderboard/blob/main/scorer.py. What
# follows re-implements its semantics (read, not copied); every quirk is pinned by a test.


def question_scorer(model_answer: str | None, ground_truth: str) -> bool:
    """The official GAIA leaderboard verdict (quasi-exact match), quirks included.

    - A ``None`` answer is scored as the string ``"None"`` (as the leaderboard does).
    - Ground truth that Python's ``float()`` accepts (``"5"``, ``"-0.5"``, ``"1e3"``,
      ``"1_000"``, ``"inf"``, ``"nan"``) is a number: the answer loses every ``$``,
      ``%`` and ``,`` and must then equal it as a float. An answer ``float()`` rejects
      becomes +inf, so it is wrong, except against ground truth ``"inf"`` (a quirk of the
      official sentinel); ``"nan"`` ground truth is never matched.
    - Otherwise ground truth containing ``,`` or ``;`` is a list: both sides are split on
      either separator, lengths must agree, and elements are compared in order; numeric
      ground-truth elements as numbers (as above), the others with all whitespace removed
      and lowercased but punctuation kept.
    - Otherwise a string: whitespace removed, lowercased, ASCII punctuation removed.

    Args:
        model_answer: the extracted answer (``None`` allowed, see above).
        ground_truth: GAIA's ``Final answer``.

    Returns:
        Whether the leaderboard would count the answer correct.
    """
    answer = "None" if model_answer is None else model_answer
    if is_float(ground_truth):
        return official_number(answer) == float(ground_truth)
    if "," in ground_truth or ";" in ground_truth:
        return _official_lists_match(answer, ground_truth)
    return official_text(answer, keep_punctuation=False) == official_text(
        ground_truth, keep_punctuation=False
    )


def official_number(text: str) -> float:
    """The leaderboard's number normalisation: drop ``$ % ,`` then ``float()``, else +inf."""
    for char in "$%,":
        text = text.replace(char, "")
    try:
        return float(text)
    except ValueError:
        return math.inf


def official_text(text: str, *, keep_punctuation: bool) -> str:
    """The leaderboard's string normalisation: no whitespace, lowercase, ASCII punct off."""
    squashed = re.sub(r"\s", "", text).lower()
    if keep_punctuation:
        return squashed
    return squashed.translate(str.maketrans("", "", string.punctuation))


def official_split(text: str) -> list[str]:
    """The leaderboard's list split: on every ``,`` and ``;`` (empty pieces kept)."""
    return re.split(r"[,;]", text)


def _official_lists_match(answer: str, ground_truth: str) -> bool:
    truth, given = official_split(ground_truth), official_split(answer)
    if len(truth) != len(given):
        return False
    for ans, gt in zip(given, truth, strict=True):
        if is_float(gt):
            if official_number(ans) != float(gt):
                return False
        elif official_text(ans, keep_punctuation=True) != official_text(gt, keep_punctuation=True):
            return False
    return True


def is_float(text: str) -> bool:
    """Whether Python's ``float()`` accepts ``text`` (the official scorer's "is a number")."""
    try:
        float(text)
    except ValueError:
        return False
    return True


_YES = frozenset({"yes", "y", "true", "correct", "right"})
_NO = frozenset({"no", "n", "false", "incorrect", "wrong"})
_THOUSANDS = re.compile(r"[-+]?\$?\d{1,3}(?:,\d{3})+(?:\.\d+)?%?")
_LENIENT_NUMBER = re.compile(r"([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)[^\d]*")


def lenient_scorer(
    model_answer: str | None, ground_truth: str, *, rel_tol: float = 1e-2, abs_tol: float = 1e-9
) -> bool:
    """A forgiving, NON-official verdict, for diagnosing how strict scoring costs points.

    Never a replacement for :func:`question_scorer`. Differences: numbers match within
    ``rel_tol``/``abs_tol`` and may carry a trailing unit (``"5 m"``); lists match as
    multisets (order ignored); strings also drop articles and accept yes/no synonyms
    (``true``/``correct`` for yes); a ground truth like ``"1,000"`` is one number, not
    a list. A missing or blank answer is always wrong.
    """
    if model_answer is None or not model_answer.strip():
        return False
    thousands = _THOUSANDS.fullmatch(ground_truth.strip()) is not None
    if not thousands and ("," in ground_truth or ";" in ground_truth):
        return _lenient_lists_match(model_answer, ground_truth, rel_tol, abs_tol)
    return _lenient_element(model_answer, ground_truth, rel_tol, abs_tol)


def _lenient_element(answer: str, truth: str, rel_tol: float, abs_tol: float) -> bool:
    truth_num = _lenient_number(truth)
    if truth_num is not None:
        got = _lenient_number(answer)
        return got is not None and math.isclose(got, truth_num, rel_tol=rel_tol, abs_tol=abs_tol)
    return _lenient_text(answer) == _lenient_text(truth)


def _lenient_lists_match(answer: str, truth: str, rel_tol: float, abs_tol: float) -> bool:
    given = [a for a in official_split(answer) if a.strip()]
    expected = [t for t in official_split(truth) if t.strip()]
    if len(given) != len(expected):
        return False
    unused = list(given)
    for gt in expected:
        hit = next((a for a in unused if _lenient_element(a, gt, rel_tol, abs_tol)), None)
        if hit is None:
            return False
        unused.remove(hit)
    return True


def _lenient_number(text: str) -> float | None:
    cleaned = re.sub(r"[\s$%,]", "", text)
    match = _LENIENT_NUMBER.fullmatch(cleaned)
    if match is None or re.search(r"\d", cleaned[match.end(1) :]):
        return None
    return float(match.group(1))


def _lenient_text(text: str) -> str:
    words = re.sub(r"[^\w\s]", " ", text.lower()).split()
    words = [w for w in words if w not in {"a", "an", "the"}]
    joined = "".join(words)
    if joined in _YES:
        return "yes"
    return "no" if joined in _NO else joined


# ---------------------------------------------------------------------------- records


def score(
    items: Sequence[GaiaItem],
    predictions: pd.DataFrame | Iterable[Mapping[str, Any]],
    *,
    with_lenient: bool = False,
) -> pd.DataFrame:
    """Per-item records from predictions: extract, then score with the official scorer.

    Args:
        items: the loaded items.
        predictions: one row per (system, task_id[, attempt]) with ``system``,
            ``task_id``, ``output`` (raw model output or ``None``) and optionally
            ``error`` (a model-call error message), ``attempt`` and any of
            :data:`PASSED_COLUMNS` (passed through).
        with_lenient: also add ``correct_lenient`` (:func:`lenient_scorer`), a diagnostic
            that never replaces ``correct``.

    Returns:
        A DataFrame with :data:`RECORD_COLUMNS` (see :class:`GaiaRecord`), in prediction
        order, plus the passed-through columns.

    Raises:
        GaiaDataError: a prediction names an unknown task id, repeats a
            (system, task_id, attempt), or lacks a required column.
    """
    by_id = {it.task_id: it for it in items}
    preds = prediction_frame(predictions)
    _check_predictions(preds, by_id)
    rows = []
    for pred in preds.to_dict("records"):
        row = _score_one(pred, by_id[str(pred["task_id"])]).model_dump()
        if with_lenient:
            row["correct_lenient"] = _lenient_verdict(row)
        rows.append(row | {c: pred[c] for c in PASSED_COLUMNS if c in pred})
    lenient = ["correct_lenient"] if with_lenient else []
    usage = [c for c in PASSED_COLUMNS if c in preds.columns]
    return records_frame(rows, [*RECORD_COLUMNS, *lenient, *usage])


def records_frame(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> pd.DataFrame:
    """Records as a DataFrame whose text and verdict columns keep ``None`` (not NaN).

    pandas (3.x) would turn a text column with gaps into a string dtype with NaN; records
    are written as JSONL, where a missing answer must stay ``null``.
    """
    frame = pd.DataFrame(list(rows), columns=list(columns))
    for column in _OBJECT_COLUMNS.intersection(columns):
        values = [row.get(column) for row in rows]
        if column.startswith("correct") and None not in values:
            frame[column] = pd.Series(values, index=frame.index, dtype=bool)
        else:
            frame[column] = pd.Series(values, index=frame.index, dtype=object)
    return frame


def prediction_frame(predictions: pd.DataFrame | Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Predictions as a DataFrame with ``system, task_id, attempt, output, error``."""
    frame = (
        predictions.copy()
        if isinstance(predictions, pd.DataFrame)
        else pd.DataFrame(list(predictions))
    )
    missing = [c for c in ("system", "task_id", "output") if c not in frame.columns]
    if missing and not frame.empty:
        raise GaiaDataError(f"predictions: missing column(s) {missing}")
    for column, default in (("attempt", 0), ("error", None), ("output", None)):
        if column not in frame.columns:
            frame[column] = default
    return frame


def _check_predictions(preds: pd.DataFrame, by_id: Mapping[str, GaiaItem]) -> None:
    if preds.empty:
        raise GaiaDataError("predictions: empty")
    unknown = sorted(set(preds["task_id"].astype(str)) - set(by_id))
    if unknown:
        raise GaiaDataError(
            f"predictions: unknown task ids {unknown[:5]} ({len(unknown)} in all; not in items)"
        )
    keys = ["system", "task_id", "attempt"]
    dup = preds[preds.duplicated(keys, keep=False)]
    if not dup.empty:
        first = dup.iloc[0]
        raise GaiaDataError(
            f"predictions: duplicate (system, task_id, attempt) = "
            f"({first['system']!r}, {first['task_id']!r}, {first['attempt']}) "
            f"({len(dup)} rows involved)"
        )


def _score_one(pred: Mapping[str, Any], item: GaiaItem) -> GaiaRecord:
    error = text_or_none(pred.get("error"))
    output = text_or_none(pred.get("output"))
    extracted = None if error else extract_answer(output)
    if pred.get("final") is True and extracted is None and output is not None:
        extracted = output.strip() or None  # an agent's final answer is the answer itself
    limited = pred.get("state") in ("timeout", "step_limit")  # an agent's own failure
    correct: bool | None
    if error is not None or limited:  # past a limit, an answer is not scored
        correct = False
    elif item.final_answer is None:
        correct = None
    else:
        correct = extracted is not None and question_scorer(extracted, item.final_answer)
    return GaiaRecord(
        system=str(pred["system"]),
        task_id=item.task_id,
        level=item.level,
        attempt=int(pred.get("attempt", 0)),
        model_answer=output,
        extracted_answer=extracted,
        expected=item.final_answer,
        correct=correct,
        no_answer=error is None and extracted is None and not limited,
        error=error,
        annotated_steps=item.annotated_steps,
    )


def _lenient_verdict(row: Mapping[str, Any]) -> bool | None:
    if row["expected"] is None:
        return None
    return row["error"] is None and lenient_scorer(row["extracted_answer"], row["expected"])


# ---------------------------------------------------------------------------- semantic matching
# A judge says whether an answer means the same as the gold one (evalbench.judge.matching);
# its verdict is stored beside the official one and never replaces it.


def semantic_judgeable(row: Mapping[str, Any]) -> bool:
    """Whether a record has an answer for the semantic judge: a known gold answer, an extracted
    answer, no failed call, and not past an agent's limit (those are wrong under both)."""
    return (
        row.get("expected") is not None
        and row.get("extracted_answer") is not None
        and text_or_none(row.get("error")) is None
        and row.get("state") not in ("timeout", "step_limit")
    )


def semantic_messages(prompt: MatchPrompt, item: GaiaItem, answer: str) -> list[dict[str, str]]:
    """The semantic judge's request for one answer to ``item`` (its question and gold)."""
    if item.final_answer is None:
        raise GaiaDataError(f"task {item.task_id!r}: no gold answer to match against")
    return match_messages(prompt, item.question, item.final_answer, answer)


def semantic_fields(
    row: Mapping[str, Any],
    judge: str,
    verdict: MatchVerdict | None,
    *,
    error: str | None = None,
    truth: bool | None = None,
) -> dict[str, Any]:
    """The semantic fields of one record (:data:`SEMANTIC_COLUMNS`).

    Args:
        row: the record (:func:`score`).
        judge: the judge's name.
        verdict: the parsed judgment (``None`` when not asked, or the call failed).
        error: why the judge call failed.
        truth: the simulation's truth (simulated judges only).

    Returns:
        All ``None`` when the gold answer is hidden; ``correct_semantic`` False with status
        ``no_answer`` when there is nothing to judge (:func:`semantic_judgeable`); status
        ``unscored`` (verdict ``None``, with the reason) when the call failed or the output
        is unreadable; else ``scored`` with the verdict.
    """
    fields = dict.fromkeys(SEMANTIC_COLUMNS) | {"semantic_judge": judge}
    if row.get("expected") is None:
        return dict.fromkeys(SEMANTIC_COLUMNS)
    if not semantic_judgeable(row):
        return fields | {"correct_semantic": False, "semantic_status": "no_answer"}
    fields["semantic_truth"] = truth
    if error is not None or verdict is None:
        reason = f"the judge call failed: {error}" if error else "the judge was not asked"
        return fields | {"semantic_status": "unscored", "semantic_reason": reason}
    if verdict.correct is None:
        return fields | {"semantic_status": "unscored", "semantic_reason": verdict.reason}
    return fields | {"correct_semantic": verdict.correct, "semantic_status": "scored"}


def with_semantic(records: pd.DataFrame, fields: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """``records`` with the :data:`SEMANTIC_COLUMNS` of ``fields`` (one per row, in order),
    kept as objects so ``None`` stays ``null`` in JSONL."""
    if len(fields) != len(records):
        raise ValueError(f"with_semantic: {len(fields)} field rows for {len(records)} records")
    out = records.copy()
    for column in SEMANTIC_COLUMNS:
        out[column] = pd.Series([f[column] for f in fields], index=out.index, dtype=object)
    return out
