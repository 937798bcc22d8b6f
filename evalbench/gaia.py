"""GAIA: level-wise accuracy of general AI assistants.

GAIA (Mialon et al., 2023, "GAIA: a benchmark for General AI Assistants",
arXiv:2311.12983) has 466 questions with short, unambiguous answers in three levels of
difficulty (level = number of steps and tools a human needed). The public validation
split has 165 questions (L1 53 / L2 86 / L3 26); the test split's answers are hidden and
scored only by the leaderboard (https://huggingface.co/spaces/gaia-benchmark/leaderboard).

This module is the pure core of the study:

- :func:`load` reads the gated Hugging Face dataset, a local folder or a JSONL file,
  resolving attachments safely (nothing may escape the dataset folder);
- :func:`build_messages` builds the chat with the paper's system prompt
  (:data:`SYSTEM_PROMPT`), :func:`extract_answer` reads the ``FINAL ANSWER:`` template;
- :func:`question_scorer` reproduces the official leaderboard scorer, quirks included;
  :func:`lenient_scorer` is a separate, explicitly non-official diagnostic;
- :func:`score` turns predictions into per-item records; :func:`summarize` and the metric
  functions are pure over those records; :func:`export_submission` writes the leaderboard
  JSONL with a short guide.
"""

from __future__ import annotations

import json
import math
import re
import string
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import partial
from importlib import resources
from numbers import Integral
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
    model_validator,
)

from evalbench.models import ChatRequest, Job, ModelSpec, SimReply, SimSpec, SimTask
from evalbench.params import StudyParams, data_path
from evalbench.settings import get_settings, secret
from evalbench.sources import record_read
from evalbench.stats import (
    DEFAULT_LEVEL,
    DEFAULT_ROUNDS,
    PairedComparison,
    mean_replicates,
    paired_comparison,
    percentile_interval,
    wilson_interval,
)

HF_REPO = "gaia-benchmark/GAIA"
HF_URL = "https://huggingface.co/datasets/gaia-benchmark/GAIA"
LEADERBOARD_URL = "https://huggingface.co/spaces/gaia-benchmark/leaderboard"
HF_TOKEN_ENV = "HF_TOKEN"
SPLITS = ("validation", "test")
LEVELS = (1, 2, 3)
HIDDEN_ANSWER = "?"  # the test split's "Final answer" placeholder
METADATA_FILES = ("metadata.jsonl", "metadata.parquet")

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

_OBJECT_COLUMNS = frozenset(
    {"model_answer", "extracted_answer", "expected", "error", "correct", "correct_lenient"}
)
USAGE_COLUMNS = (
    "steps",
    "tool_calls",
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "cost_usd",
    "latency_s",
)


class GaiaDataError(ValueError):
    """Bad GAIA input: a malformed row, an unsafe or missing attachment, a bad filter."""


class GaiaItem(BaseModel):
    """One GAIA question, as read from ``metadata.jsonl`` / ``metadata.parquet``."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    """Unique id of the question (``task_id``)."""
    question: str
    """The question text (``Question``)."""
    level: int
    """Difficulty level 1, 2 or 3 (``Level``)."""
    final_answer: str | None
    """Ground truth (``Final answer``); ``None`` when hidden (the test split's ``?``)."""
    file_name: str = ""
    """Attachment name as given in the data (``file_name``); empty when there is none."""
    attachment: Path | None = None
    """Resolved absolute path of the attachment, checked to lie inside the dataset folder."""
    annotated_steps: int | None = None
    """Human annotator's ``Number of steps`` (``Annotator Metadata``), when given."""
    annotated_tools: int | None = None
    """Human annotator's ``Number of tools`` (``Annotator Metadata``), when given."""
    annotator_metadata: dict[str, Any] = {}
    """The raw ``Annotator Metadata`` (``Steps``, ``Tools``, ...)."""


class GaiaRecord(BaseModel):
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


class GaiaSummary(NamedTuple):
    """Everything :func:`summarize` computes, one DataFrame per table."""

    accuracy: pd.DataFrame
    drops: pd.DataFrame
    usage: pd.DataFrame
    pass_at_k: pd.DataFrame | None


# ---------------------------------------------------------------------------- loading


def demo_path() -> Path:
    """Folder of the offline demo suite shipped with the package (``evalbench/demo/gaia``).

    The demo is a small GAIA-format suite written for this project (not GAIA data);
    see its ``README.md``.
    """
    return Path(str(resources.files("evalbench").joinpath("demo").joinpath("gaia")))


def load(
    source: str | Path,
    *,
    levels: Iterable[int] | None = None,
    task_ids: Iterable[str] | None = None,
    split: str = "validation",
    revision: str | None = None,
    token_env: str = HF_TOKEN_ENV,
) -> list[GaiaItem]:
    """Load GAIA items from the Hugging Face hub, the demo suite, a folder or a JSONL file.

    Args:
        source: ``"hf"`` (the gated ``gaia-benchmark/GAIA`` dataset, 2023 release),
            ``"demo"`` (:func:`demo_path`), a folder holding ``metadata.jsonl`` (or
            ``metadata.parquet``) and the attachments, or a ``.jsonl`` file whose
            attachments live next to it.
        levels: keep only these levels (subset of 1, 2, 3); ``None`` keeps all.
        task_ids: keep only these task ids (each must exist); ``None`` keeps all.
        split: ``"validation"`` or ``"test"`` (hub only; test answers are hidden).
        revision: hub commit to pin (hub only).
        token_env: environment variable holding the Hugging Face token (hub only).

    Returns:
        The items in file order.

    Raises:
        GaiaDataError: a malformed row, duplicate task id, level outside 1-3, unsafe or
            missing attachment, unknown task id in ``task_ids``, or nothing left after
            filtering; the message names the file and line.
        evalbench.settings.MissingSecret: ``"hf"`` without a token.
    """
    metadata = _metadata_for(source, split=split, revision=revision, token_env=token_env)
    items = read_metadata(metadata)
    return filter_items(items, levels=levels, task_ids=task_ids, where=str(metadata))


def read_metadata(path: Path) -> list[GaiaItem]:
    """Parse a GAIA ``metadata.jsonl``/``.parquet``; attachments resolve in its folder.

    Every file read (the metadata and each attachment) is recorded for the manifest.
    """
    record_read(path)
    items: list[GaiaItem] = []
    first_seen: dict[str, str] = {}
    for where, row in _rows(path):
        item = _parse_row(row, where, path.parent)
        if item.task_id in first_seen:
            raise GaiaDataError(
                f"{where}: duplicate task_id {item.task_id!r} (first at {first_seen[item.task_id]})"
            )
        first_seen[item.task_id] = where
        items.append(item)
    return items


def filter_items(
    items: Sequence[GaiaItem],
    *,
    levels: Iterable[int] | None = None,
    task_ids: Iterable[str] | None = None,
    where: str = "items",
) -> list[GaiaItem]:
    """Keep the items of the given levels and task ids; an empty result is an error."""
    kept = list(items)
    if levels is not None:
        wanted = set(levels)
        bad = sorted(wanted - set(LEVELS), key=str)
        if bad:
            raise GaiaDataError(f"{where}: levels must be among 1, 2, 3; got {bad}")
        kept = [it for it in kept if it.level in wanted]
    if task_ids is not None:
        wanted_ids = set(task_ids)
        known = {it.task_id for it in items}
        unknown = sorted(wanted_ids - known)
        if unknown:
            raise GaiaDataError(f"{where}: unknown task ids {unknown[:5]} ({len(unknown)} in all)")
        kept = [it for it in kept if it.task_id in wanted_ids]
    if not kept:
        raise GaiaDataError(
            f"{where}: no GAIA items left after filtering (levels={levels}, task_ids={task_ids})"
        )
    return kept


def items_frame(items: Sequence[GaiaItem]) -> pd.DataFrame:
    """The items as a DataFrame (one row per item; ``attachment`` as a string path)."""
    rows = [it.model_dump(exclude={"annotator_metadata"}) for it in items]
    frame = pd.DataFrame(rows)
    if "attachment" in frame:
        frame["attachment"] = frame["attachment"].map(lambda p: None if p is None else str(p))
    return frame


def _metadata_for(source: str | Path, *, split: str, revision: str | None, token_env: str) -> Path:
    if isinstance(source, str) and source == "hf":
        return _hub_metadata(split, revision, token_env)
    if isinstance(source, str) and source == "demo":
        return metadata_file(demo_path())
    return metadata_file(Path(source))


def metadata_file(path: Path) -> Path:
    """The metadata file of a dataset folder (``metadata.jsonl`` first), or ``path`` itself."""
    if path.is_file():
        return path
    if not path.is_dir():
        raise GaiaDataError(f"GAIA source {path} does not exist")
    for name in METADATA_FILES:
        if (path / name).is_file():
            return path / name
    raise GaiaDataError(f"GAIA folder {path} holds neither {' nor '.join(METADATA_FILES)}")


def _hub_metadata(split: str, revision: str | None, token_env: str) -> Path:
    if split not in SPLITS:
        raise GaiaDataError(f"GAIA split must be one of {SPLITS}, got {split!r}")
    token = secret(
        token_env,
        purpose=f"loading the gated Hugging Face dataset {HF_REPO} (accept its terms at "
        f"{HF_URL}, then create a read token)",
    )
    # Imported here: only the hub path needs it, and importing it is slow.
    from huggingface_hub import snapshot_download

    # A plain local_dir (no symlinks into the HF blob store) keeps attachments inside the
    # dataset folder, so the containment check below holds for hub data too.
    target = get_settings().cache_dir / "hf" / HF_REPO.replace("/", "--")
    root = snapshot_download(
        HF_REPO,
        repo_type="dataset",
        revision=revision,
        token=token,
        local_dir=target,
        allow_patterns=[f"2023/{split}/*"],
    )
    return metadata_file(Path(str(root)) / "2023" / split)


def _rows(path: Path) -> Iterator[tuple[str, Mapping[str, Any]]]:
    if path.suffix == ".parquet":
        frame = pd.read_parquet(path)
        for i, row in enumerate(frame.to_dict("records"), start=1):
            yield f"{path} row {i}", row
        return
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if line.strip():
                yield f"{path}:{lineno}", _json_line(line, f"{path}:{lineno}")


def _json_line(line: str, where: str) -> Mapping[str, Any]:
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        raise GaiaDataError(f"{where}: not valid JSON ({exc.msg})") from None
    if not isinstance(value, dict):
        raise GaiaDataError(f"{where}: expected a JSON object, got {type(value).__name__}")
    return value


def _parse_row(row: Mapping[str, Any], where: str, folder: Path) -> GaiaItem:
    task_id = _required_text(row, "task_id", where)
    file_name = _optional_text(row.get("file_name"))
    meta = row.get("Annotator Metadata")
    meta = dict(meta) if isinstance(meta, Mapping) else {}
    answer = _required_text(row, "Final answer", where, allow_empty=True)
    return GaiaItem(
        task_id=task_id,
        question=_required_text(row, "Question", where),
        level=_parse_level(row.get("Level"), where),
        final_answer=None if answer.strip() == HIDDEN_ANSWER else answer,
        file_name=file_name,
        attachment=resolve_attachment(folder, file_name, where) if file_name else None,
        annotated_steps=_optional_int(meta.get("Number of steps")),
        annotated_tools=_optional_int(meta.get("Number of tools")),
        annotator_metadata=meta,
    )


def _required_text(
    row: Mapping[str, Any], field: str, where: str, allow_empty: bool = False
) -> str:
    if field not in row:
        raise GaiaDataError(f"{where}: missing field {field!r}")
    value = row[field]
    if not isinstance(value, str):
        raise GaiaDataError(f"{where}: field {field!r} must be a string, got {value!r}")
    if not allow_empty and not value.strip():
        raise GaiaDataError(f"{where}: field {field!r} is empty")
    return value


def _optional_text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _optional_int(value: Any) -> int | None:
    try:
        return int(str(value).strip())
    except ValueError:
        return None


def _parse_level(value: Any, where: str) -> int:
    level: int | None = None
    if isinstance(value, Integral) and not isinstance(value, bool):
        level = int(value)
    elif isinstance(value, str) and value.strip().isdigit():
        level = int(value.strip())
    if level not in LEVELS:
        raise GaiaDataError(f"{where}: field 'Level' must be 1, 2 or 3, got {value!r}")
    return level


def resolve_attachment(folder: Path, file_name: str, where: str = "attachment") -> Path:
    """Resolve ``file_name`` inside ``folder``; reject anything that could escape it.

    Rejected: absolute paths, any ``..`` component, and names that resolve (through
    symlinks) outside ``folder``. A missing file is an error naming it. The file is
    recorded for the manifest.
    """
    if "\0" in file_name:
        raise GaiaDataError(f"{where}: file_name {file_name!r} contains a NUL byte; refused")
    name = Path(file_name)
    if name.is_absolute() or file_name.startswith(("/", "\\")):
        raise GaiaDataError(f"{where}: file_name {file_name!r} is an absolute path; refused")
    if ".." in name.parts or ".." in file_name.replace("\\", "/").split("/"):
        raise GaiaDataError(f"{where}: file_name {file_name!r} contains '..'; refused")
    root = folder.resolve()
    resolved = (root / name).resolve()
    if not resolved.is_relative_to(root):
        raise GaiaDataError(
            f"{where}: file_name {file_name!r} resolves outside the dataset folder "
            f"({resolved}); refused"
        )
    if not resolved.is_file():
        raise GaiaDataError(f"{where}: attachment {file_name!r} not found in {root}")
    record_read(resolved)
    return resolved


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
    if _is_float(ground_truth):
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
        if _is_float(gt):
            if official_number(ans) != float(gt):
                return False
        elif official_text(ans, keep_punctuation=True) != official_text(gt, keep_punctuation=True):
            return False
    return True


def _is_float(text: str) -> bool:
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
            :data:`USAGE_COLUMNS` (passed through).
        with_lenient: also add ``correct_lenient`` (:func:`lenient_scorer`), a diagnostic
            that never replaces ``correct``.

    Returns:
        A DataFrame with :data:`RECORD_COLUMNS` (see :class:`GaiaRecord`), in prediction
        order, plus the passed-through usage columns.

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
        rows.append(row | {c: pred[c] for c in USAGE_COLUMNS if c in pred})
    lenient = ["correct_lenient"] if with_lenient else []
    usage = [c for c in USAGE_COLUMNS if c in preds.columns]
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
    error = _text_or_none(pred.get("error"))
    output = _text_or_none(pred.get("output"))
    extracted = None if error else extract_answer(output)
    correct: bool | None
    if error is not None:
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
        no_answer=error is None and extracted is None,
        error=error,
        annotated_steps=item.annotated_steps,
    )


def _lenient_verdict(row: Mapping[str, Any]) -> bool | None:
    if row["expected"] is None:
        return None
    return row["error"] is None and lenient_scorer(row["extracted_answer"], row["expected"])


def _text_or_none(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return str(value)


# ---------------------------------------------------------------------------- metrics


def level_accuracy(records: pd.DataFrame, *, confidence: float = DEFAULT_LEVEL) -> pd.DataFrame:
    """Overall and per-level accuracy per system, with Wilson intervals and n.

    Uses each item's first attempt. Columns: ``system, level`` (``"all"``, ``"L1"``..),
    ``n, correct, accuracy, ci_low, ci_high, no_answer, no_answer_rate, errors,
    error_rate``. No-answer and error records count as wrong and are also counted apart.
    """
    recs = _scored(first_attempts(records))
    rows = []
    for system, group in recs.groupby("system", sort=True):
        for label, part in _level_parts(group):
            rows.append({"system": system, "level": label, **_accuracy_cells(part, confidence)})
    return pd.DataFrame(rows)


def _accuracy_cells(part: pd.DataFrame, confidence: float) -> dict[str, Any]:
    n = len(part)
    hits = int(part["correct"].astype(bool).sum())
    wilson = wilson_interval(hits, n, confidence)
    no_answer, errors = int(part["no_answer"].sum()), int(part["error"].notna().sum())
    return {
        "n": n,
        "correct": hits,
        "accuracy": wilson.estimate,
        "ci_low": wilson.low,
        "ci_high": wilson.high,
        "no_answer": no_answer,
        "no_answer_rate": no_answer / n if n else math.nan,
        "errors": errors,
        "error_rate": errors / n if n else math.nan,
    }


def drop_rates(
    records: pd.DataFrame,
    *,
    rng: np.random.Generator,
    rounds: int = DEFAULT_ROUNDS,
    confidence: float = DEFAULT_LEVEL,
) -> pd.DataFrame:
    """Accuracy drops L1→L2 and L2→L3 per system, with stratified bootstrap intervals.

    ``relative_drop = 1 - acc(to)/acc(from)`` (NaN when ``acc(from) = 0``) and
    ``absolute_drop = acc(from) - acc(to)``. Each bootstrap round resamples items with
    replacement within each level separately (level sizes are fixed by design); rounds
    where ``acc(from) = 0`` leave the relative drop undefined and are ignored.
    """
    recs = _scored(first_attempts(records))
    rows = []
    for system, group in recs.groupby("system", sort=True):
        correct = {lv: group.loc[group["level"] == lv, "correct"].to_numpy(bool) for lv in LEVELS}
        reps = {lv: mean_replicates(correct[lv], rng=rng, rounds=rounds) for lv in LEVELS}
        for low, high in ((1, 2), (2, 3)):
            head = {"system": system, "transition": f"L{low}→L{high}"}
            pair = (correct[low], correct[high])
            rows.append(head | _drop_cells(pair, (reps[low], reps[high]), confidence))
    return pd.DataFrame(rows)


def _drop_cells(
    correct: tuple[np.ndarray, np.ndarray],
    reps: tuple[np.ndarray, np.ndarray],
    confidence: float,
) -> dict[str, Any]:
    acc_from, acc_to = (float(c.mean()) if c.size else math.nan for c in correct)
    relative = relative_drop(acc_from, acc_to)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel_reps = np.where(reps[0] > 0, 1 - reps[1] / reps[0], np.nan)
    rel = percentile_interval(relative, rel_reps, confidence)
    absolute = percentile_interval(acc_from - acc_to, reps[0] - reps[1], confidence)
    return {
        "n_from": int(correct[0].size),
        "n_to": int(correct[1].size),
        "acc_from": acc_from,
        "acc_to": acc_to,
        "relative_drop": relative,
        "relative_low": rel.low,
        "relative_high": rel.high,
        "absolute_drop": acc_from - acc_to,
        "absolute_low": absolute.low,
        "absolute_high": absolute.high,
    }


def relative_drop(acc_from: float, acc_to: float) -> float:
    """``1 - acc_to / acc_from``: the share of accuracy lost; NaN when ``acc_from`` is 0."""
    if not acc_from or math.isnan(acc_from):
        return math.nan
    return 1 - acc_to / acc_from


def usage_by_level(records: pd.DataFrame) -> pd.DataFrame:
    """Mean and total of the optional usage columns per system and level (all attempts).

    Columns present among :data:`USAGE_COLUMNS` (steps, tool calls, tokens, cost,
    latency) get ``<col>_mean`` (over records that report it) and ``<col>_total``; a
    system that reports none of them still gets its ``n``.
    """
    present = [c for c in USAGE_COLUMNS if c in records.columns]
    rows = []
    for system, group in records.groupby("system", sort=True):
        for label, part in _level_parts(group):
            row: dict[str, Any] = {"system": system, "level": label, "n": len(part)}
            for column in present:
                values = pd.to_numeric(part[column], errors="coerce")
                row[f"{column}_mean"] = float(values.mean()) if values.notna().any() else math.nan
                row[f"{column}_total"] = float(values.sum())
            rows.append(row)
    return pd.DataFrame(rows)


def compare_systems(
    records: pd.DataFrame,
    system_a: str,
    system_b: str,
    *,
    rng: np.random.Generator,
    rounds: int = DEFAULT_ROUNDS,
    levels: Iterable[int] | None = None,
) -> PairedComparison:
    """Paired comparison of two systems on the same items (first attempts).

    Exact McNemar p-value and a paired bootstrap interval of ``acc(a) - acc(b)``
    (:func:`evalbench.stats.paired_comparison`). Restrict to ``levels`` if given.

    Args:
        records: output of :func:`score`.
        system_a: the first system (``accuracy_a``).
        system_b: the second system (``accuracy_b``).
        rng: the source of randomness of the bootstrap.
        rounds: bootstrap rounds.
        levels: keep only these levels (``None``: all).

    Raises:
        GaiaDataError: a system has no records, or the two item sets differ.
    """
    recs = _scored(first_attempts(records))
    if levels is not None:
        recs = recs[recs["level"].isin(list(levels))]
    a, b = (_correct_by_task(recs, name) for name in (system_a, system_b))
    only_a, only_b = sorted(set(a.index) - set(b.index)), sorted(set(b.index) - set(a.index))
    if only_a or only_b:
        raise GaiaDataError(
            f"compare_systems: item sets differ: {len(only_a)} only in {system_a!r} "
            f"{only_a[:3]}, {len(only_b)} only in {system_b!r} {only_b[:3]}"
        )
    b = b.reindex(a.index)
    return paired_comparison(a.to_numpy(bool), b.to_numpy(bool), rng=rng, rounds=rounds)


def _correct_by_task(recs: pd.DataFrame, system: str) -> pd.Series:
    part = recs[recs["system"] == system]
    if part.empty:
        raise GaiaDataError(f"compare_systems: no records for system {system!r}")
    return part.set_index("task_id")["correct"].astype(bool)


def pass_at_k_estimate(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for one item with ``n`` attempts of which ``c`` are correct.

    ``1 - C(n-c, k) / C(n, k)`` (Chen et al., 2021, "Evaluating Large Language Models
    Trained on Code", arXiv:2107.03374), computed as ``1 - prod(1 - k/i, i=n-c+1..n)``
    to avoid huge binomials.
    """
    if not (0 <= c <= n and 1 <= k <= n):
        raise ValueError(
            f"pass_at_k_estimate: need 0 <= c <= n and 1 <= k <= n, got {n=} {c=} {k=}"
        )
    if n - c < k:
        return 1.0
    return float(1 - np.prod(1 - k / np.arange(n - c + 1, n + 1)))


def pass_at_k(records: pd.DataFrame, ks: Sequence[int] = (1,)) -> pd.DataFrame:
    """pass@k per system and level, averaging :func:`pass_at_k_estimate` over items.

    Every item must have at least ``k`` attempts (rows with distinct ``attempt``).
    Columns: ``system, level, k, n_items, pass_at_k``.
    """
    recs = _scored(records if "attempt" in records else records.assign(attempt=0))
    per_item = (
        recs.groupby(["system", "task_id", "level"], sort=True)["correct"]
        .agg(n="size", c=lambda s: int(s.astype(bool).sum()))
        .reset_index()
    )
    rows = []
    for system, group in per_item.groupby("system", sort=True):
        for k in ks:
            _require_attempts(group, k, str(system))
            estimates = group.assign(
                p=[pass_at_k_estimate(n, c, k) for n, c in zip(group.n, group.c, strict=True)]
            )
            for label, part in _level_parts(estimates):
                mean = float(part["p"].mean()) if len(part) else math.nan
                rows.append(
                    {
                        "system": system,
                        "level": label,
                        "k": k,
                        "n_items": len(part),
                        "pass_at_k": mean,
                    }
                )
    return pd.DataFrame(rows)


def _require_attempts(group: pd.DataFrame, k: int, system: str) -> None:
    short = group[group["n"] < k]
    if not short.empty:
        first = short.iloc[0]
        raise GaiaDataError(
            f"pass_at_k: system {system!r} has {first['n']} attempt(s) for task "
            f"{first['task_id']!r}, fewer than k={k} ({len(short)} items short)"
        )


def summarize(
    records: pd.DataFrame,
    *,
    rng: np.random.Generator,
    rounds: int = DEFAULT_ROUNDS,
    confidence: float = DEFAULT_LEVEL,
    ks: Sequence[int] = (1,),
) -> GaiaSummary:
    """All study tables: accuracy by level, drop rates, usage, and pass@k if attempts > 1.

    Args:
        records: output of :func:`score` (possibly several systems and attempts).
        rng: source of randomness for the bootstrap intervals.
        rounds: bootstrap rounds.
        confidence: level of every interval.
        ks: the k values for pass@k (computed only when some item has several attempts).

    Returns:
        A :class:`GaiaSummary`.
    """
    several = "attempt" in records and records.groupby(["system", "task_id"]).size().max() > 1
    return GaiaSummary(
        accuracy=level_accuracy(records, confidence=confidence),
        drops=drop_rates(records, rng=rng, rounds=rounds, confidence=confidence),
        usage=usage_by_level(records),
        pass_at_k=pass_at_k(records, ks) if several else None,
    )


def first_attempts(records: pd.DataFrame) -> pd.DataFrame:
    """One record per (system, task_id): the lowest ``attempt`` (all rows if no column)."""
    _require_columns(records, ("system", "task_id", "level", "correct"))
    if "attempt" not in records.columns:
        return records
    ordered = records.sort_values("attempt", kind="stable")
    return ordered.drop_duplicates(["system", "task_id"], keep="first").sort_index()


def _scored(records: pd.DataFrame) -> pd.DataFrame:
    _require_columns(records, ("system", "task_id", "level", "correct"))
    hidden = records["correct"].isna()
    if hidden.any():
        raise GaiaDataError(
            f"records: {int(hidden.sum())} record(s) have no verdict (hidden test answers, "
            f"e.g. task {records.loc[hidden, 'task_id'].iloc[0]!r}); only the leaderboard "
            "can score them: use export_submission"
        )
    return records


def _require_columns(records: pd.DataFrame, columns: Sequence[str]) -> None:
    missing = [c for c in columns if c not in records.columns]
    if missing:
        raise GaiaDataError(f"records: missing column(s) {missing}")


def _level_parts(group: pd.DataFrame) -> Iterator[tuple[str, pd.DataFrame]]:
    yield "all", group
    for lv in LEVELS:
        yield f"L{lv}", group[group["level"] == lv]


# ---------------------------------------------------------------------------- export

SUBMISSION_GUIDE = """\
# GAIA leaderboard submission: `{file}`

`{file}` holds {n} answers of system `{system}` ({levels}), one JSON object per line:

```
{{"task_id": "...", "model_answer": "...", "reasoning_trace": "..."}}
```

- `model_answer` is the answer extracted from the model's `FINAL ANSWER:` line
  (empty when none was found or the model call failed);
- `reasoning_trace` is the model's full output (optional for the leaderboard).

## How to submit

1. Open the GAIA leaderboard: {leaderboard}
   (log in with your Hugging Face account).
2. In the submission form, choose the split these answers belong to
   (`validation` or `test`), fill in the model / system name, the organisation and a
   contact e-mail, and describe the system (model, tools, system prompt).
3. Upload `{file}`. The leaderboard scores it with the official quasi-exact-match
   scorer (`scorer.py` in the space; `evalbench.gaia.question_scorer` reproduces it) and
   reports the percentage of correct answers overall and per level.

## Things to know

- The **test split's answers are hidden**: only the leaderboard can score test answers.
  Test results are the ones to compare with published numbers.
- The validation split's answers are public, so validation scores are useful for
  development but easier to overfit; say which split a number comes from.
- GAIA is gated to avoid contamination: do not repost its questions, answers or files
  in a public or crawlable place, and do not train on them.
- Check the leaderboard page for its current rules before submitting.
"""


def export_submission(
    records: pd.DataFrame,
    path: Path | str,
    *,
    system: str | None = None,
    items: Sequence[GaiaItem] | None = None,
) -> Path:
    """Write the leaderboard JSONL (``task_id, model_answer, reasoning_trace``) and a guide.

    One line per item, from the first attempt of one system. The guide is a markdown
    file next to the JSONL (same name, ``.md``): how to submit, and that test answers are
    hidden. Error and no-answer records are written with an empty ``model_answer``.

    Args:
        records: output of :func:`score`.
        path: where to write the ``.jsonl``.
        system: which system to export; required when ``records`` hold several.
        items: if given, every item must have an answer (the leaderboard scores a split
            as a whole, so a partial file would under-report).

    Returns:
        The path of the JSONL file.
    """
    path = Path(path)
    chosen = _one_system(first_attempts(records), system)
    if items is not None:
        _check_complete(chosen, items)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for rec in chosen.to_dict("records"):
            fh.write(json.dumps(_submission_line(rec), ensure_ascii=False) + "\n")
    levels = ", ".join(f"L{lv} {int((chosen['level'] == lv).sum())}" for lv in LEVELS)
    guide = SUBMISSION_GUIDE.format(
        file=path.name,
        n=len(chosen),
        system=chosen["system"].iloc[0],
        levels=levels,
        leaderboard=LEADERBOARD_URL,
    )
    path.with_suffix(".md").write_text(guide, encoding="utf-8")
    return path


def read_submission(path: Path | str) -> pd.DataFrame:
    """Read a submission JSONL back (``task_id, model_answer, reasoning_trace``), checked.

    Raises:
        GaiaDataError: a line that is not an object with string ``task_id`` and
            ``model_answer``, or a repeated task id; the message names file and line.
    """
    path = Path(path)
    rows, seen = [], set()
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            where = f"{path}:{lineno}"
            row = _json_line(line, where)
            for field in ("task_id", "model_answer"):
                _required_text(row, field, where, allow_empty=True)
            if row["task_id"] in seen:
                raise GaiaDataError(f"{where}: duplicate task_id {row['task_id']!r}")
            seen.add(row["task_id"])
            rows.append({"reasoning_trace": "", **row})
    return pd.DataFrame(rows, columns=["task_id", "model_answer", "reasoning_trace"])


def _one_system(records: pd.DataFrame, system: str | None) -> pd.DataFrame:
    systems = sorted(records["system"].unique())
    if system is None:
        if len(systems) != 1:
            raise GaiaDataError(f"export_submission: records hold systems {systems}; pick one")
        system = systems[0]
    chosen = records[records["system"] == system]
    if chosen.empty:
        raise GaiaDataError(f"export_submission: no records for system {system!r} ({systems})")
    return chosen


def _check_complete(records: pd.DataFrame, items: Sequence[GaiaItem]) -> None:
    missing = [it.task_id for it in items if it.task_id not in set(records["task_id"])]
    if missing:
        raise GaiaDataError(
            f"export_submission: {len(missing)} item(s) have no answer, e.g. {missing[:3]}"
        )


def _submission_line(rec: Mapping[str, Any]) -> dict[str, str]:
    failed = _text_or_none(rec.get("error")) is not None
    return {
        "task_id": str(rec["task_id"]),
        "model_answer": _text_or_none(rec.get("extracted_answer")) or "",
        "reasoning_trace": "" if failed else _text_or_none(rec.get("model_answer")) or "",
    }


def level_counts(items: Iterable[GaiaItem]) -> dict[int, int]:
    """Number of items per level (levels with no item included, as 0)."""
    counts = Counter(it.level for it in items)
    return {lv: counts.get(lv, 0) for lv in LEVELS}


# ---------------------------------------------------------------------------- the study


def _levels_in_range(levels: list[int]) -> list[int]:
    bad = [lv for lv in levels if lv not in LEVELS]
    if bad or not levels:
        raise ValueError(f"levels must be a non-empty subset of 1, 2, 3 (got {levels})")
    return sorted(set(levels))


def _dataset_source(value: str, info: ValidationInfo) -> str:
    if value in {"demo", "hf"}:
        return value
    return str(data_path(value, info))


class GaiaParams(StudyParams):
    """Parameters of a GAIA level-wise accuracy study (``study: gaia``)."""

    study: Literal["gaia"] = "gaia"
    dataset: Annotated[str, AfterValidator(_dataset_source)] = "demo"
    """``demo`` (the offline demo suite, not GAIA), ``hf`` (gated, needs ``HF_TOKEN``), or a
    folder / ``.jsonl`` path with GAIA's fields (relative to the params file)."""
    split: Literal["validation", "test"] = "validation"
    """Hub split (``test`` answers are hidden: export a submission instead of scoring)."""
    revision: str | None = None
    """Hub commit to pin (``hf`` only)."""
    levels: Annotated[list[int], AfterValidator(_levels_in_range)] = Field(
        default_factory=lambda: [1, 2, 3]
    )
    """Levels to keep."""
    limit_per_level: int | None = Field(default=None, ge=1)
    """Keep the first N items of each level (quick runs); ``None`` keeps all."""
    systems: list[ModelSpec] = Field(min_length=1)
    """The assistants under test (unique names)."""
    attempts: int = Field(default=1, ge=1, le=20)
    """Attempts per item (pass@k for k up to this; the headline uses the first)."""
    compare: tuple[str, str] | None = None
    """Two system names for the paired comparison (default: the first two)."""
    attachment_chars: int = Field(default=DEFAULT_ATTACHMENT_CHARS, ge=0)
    """Characters of a text attachment inlined in the prompt."""
    lenient: bool = True
    """Also show the (non-official) lenient scorer beside the official one."""
    submission_system: str | None = None
    """Write the leaderboard submission JSONL for this system (default: the first)."""

    @model_validator(mode="after")
    def _check_names(self) -> GaiaParams:
        names = [s.name for s in self.systems]
        if len(set(names)) != len(names):
            raise ValueError(f"systems: names must be unique (got {names})")
        for name in [*(self.compare or ()), self.submission_system]:
            if name is not None and name not in names:
                raise ValueError(f"unknown system {name!r} (systems are {names})")
        return self

    def model_specs(self) -> list[ModelSpec]:
        """The systems under test."""
        return list(self.systems)

    def comparison(self) -> tuple[str, str] | None:
        """The pair of systems to compare (``compare`` or the first two), if any."""
        if self.compare:
            return self.compare
        return (self.systems[0].name, self.systems[1].name) if len(self.systems) > 1 else None


def load_study_items(params: GaiaParams) -> list[GaiaItem]:
    """The items of a study: its dataset, levels and per-level limit."""
    items = load(params.dataset, levels=params.levels, split=params.split, revision=params.revision)
    if params.limit_per_level is None:
        return items
    seen: Counter[int] = Counter()
    kept = []
    for item in items:
        seen[item.level] += 1
        if seen[item.level] <= params.limit_per_level:
            kept.append(item)
    return kept


def answer_jobs(items: Sequence[GaiaItem], params: GaiaParams) -> list[Job]:
    """One chat job per (item, attempt); attempts differ by their request seed."""
    jobs = []
    for item in items:
        messages = build_messages(item, attachment_chars=params.attachment_chars)
        truth = {"expected": item.final_answer, "level": item.level}
        for attempt in range(params.attempts):
            key = f"{item.task_id}#{attempt}"
            request = ChatRequest(messages=messages, seed=attempt if attempt else None)
            respond = partial(sim_answer, expected=item.final_answer, level=item.level)
            jobs.append(Job(key, request, SimTask(respond, key, truth)))
    return jobs


def run_study(run: Any, items: Sequence[GaiaItem]) -> pd.DataFrame:
    """Ask every system every item (resumable), score, and write ``records/gaia.jsonl``.

    Args:
        run: the open :class:`evalbench.runs.Run` of a ``gaia`` study.
        items: from :func:`load_study_items`.

    Returns:
        The per-item records (see :func:`score`), with usage columns.
    """
    params: GaiaParams = run.params
    jobs = answer_jobs(items, params)
    predictions = []
    for spec in params.systems:
        answers = run.ask(spec, jobs, desc=f"GAIA {spec.name}")
        predictions += [_prediction(spec, job.key, answers[job.key]) for job in jobs]
    records = score(items, predictions, with_lenient=params.lenient)
    run.write_records("gaia", records)
    return records


def _prediction(spec: ModelSpec, key: str, answer: Any) -> dict[str, Any]:
    task_id, _, attempt = key.rpartition("#")
    cost = None
    if answer.prompt_tokens is not None and not answer.cached:
        cost = (
            answer.prompt_tokens * (spec.price_input_per_mtok or 0)
            + (answer.completion_tokens or 0) * (spec.price_output_per_mtok or 0)
        ) / 1e6
    return {
        "system": spec.name,
        "task_id": task_id,
        "attempt": int(attempt),
        "output": answer.text,
        "error": answer.error,
        "prompt_tokens": answer.prompt_tokens,
        "completion_tokens": answer.completion_tokens,
        "cost_usd": cost,
        "latency_s": answer.latency_s,
    }


# ---------------------------------------------------------------------------- simulation


def sim_answer(
    request: ChatRequest,
    knobs: SimSpec,
    rng: np.random.Generator,
    *,
    expected: str | None,
    level: int,
) -> SimReply:
    """A simulated assistant's answer to one GAIA item (the ``sim`` provider).

    Correct with probability ``knobs.accuracy_for(level)``; otherwise a plausible wrong
    answer of the same type (a nearby number, a list with one element changed or two
    swapped, a near-miss string). With probability ``knobs.malformed_rate`` it forgets the
    ``FINAL ANSWER:`` template (a "no answer"). The reasoning trace's length follows
    ``knobs.verbosity``.
    """
    steps = max(1, round(knobs.verbosity * (1 + level + int(rng.integers(0, 3)))))
    trace = "\n".join(f"Step {i + 1}: working on the question." for i in range(steps))
    if rng.random() < knobs.malformed_rate:
        return SimReply(f"{trace}\nI could not settle on an answer.")
    truth = expected if expected is not None else "unknown"
    right = rng.random() < knobs.accuracy_for(level)
    answer = truth if right else plausible_wrong(truth, rng)
    return SimReply(f"{trace}\nFINAL ANSWER: {answer}")


def plausible_wrong(truth: str, rng: np.random.Generator) -> str:
    """An answer of the same type as ``truth`` that the official scorer marks wrong."""
    for _ in range(20):
        candidate = _perturb(truth, rng)
        if not question_scorer(candidate, truth):
            return candidate
    return f"not {truth}"


def _perturb(truth: str, rng: np.random.Generator) -> str:
    if _is_float(truth):
        return _perturb_number(truth, rng)
    if any(sep in truth for sep in ",;"):
        parts = [p.strip() for p in re.split(r"[,;]", truth)]
        if len(parts) > 1 and rng.random() < 0.5:
            i = int(rng.integers(0, len(parts) - 1))
            parts[i], parts[i + 1] = parts[i + 1], parts[i]
        else:
            i = int(rng.integers(0, len(parts)))
            parts[i] = _perturb(parts[i], rng) if parts[i] else "x"
        return ", ".join(parts)
    return _perturb_text(truth, rng)


def _perturb_number(truth: str, rng: np.random.Generator) -> str:
    value = float(truth.replace(",", ""))
    if value.is_integer() and "." not in truth:
        step = max(1, int(abs(value) * 0.1))
        return str(int(value) + int(rng.choice([-1, 1])) * int(rng.integers(1, step + 1)))
    decimals = len(truth.split(".")[1]) if "." in truth else 2
    return f"{value * (1 + rng.choice([-1, 1]) * rng.uniform(0.05, 0.25)):.{decimals}f}"


def _perturb_text(truth: str, rng: np.random.Generator) -> str:
    words = truth.split()
    if len(words) > 1:
        del words[int(rng.integers(0, len(words)))]
        return " ".join(words)
    if len(truth) > 2:
        i = int(rng.integers(0, len(truth) - 1))
        return truth[:i] + truth[i + 1] + truth[i] + truth[i + 2 :]
    return truth + "s"
