"""GAIA data: load the questions, resolve attachments safely, write leaderboard submissions.

GAIA (Mialon et al., 2023, "GAIA: a benchmark for General AI Assistants",
arXiv:2311.12983) has 466 questions with short, unambiguous answers in three levels of
difficulty (level = number of steps and tools a human needed). The public validation
split has 165 questions (L1 53 / L2 86 / L3 26); the test split's answers are hidden and
scored only by the leaderboard (https://huggingface.co/spaces/gaia-benchmark/leaderboard).

This is the I/O edge of the benchmark: :func:`load` reads the gated Hugging Face dataset,
the offline demo suite, a local folder or a JSONL file (nothing may escape the dataset
folder); :func:`export_submission` / :func:`read_submission` write and read the
leaderboard's JSONL. :func:`first_attempts` (the record selection both the export and the
metrics use) lives here too.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from importlib import resources
from numbers import Integral
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict

from evalbench.records import none_for_missing, parse_json, text_lines, to_json, write_atomic
from evalbench.settings import get_settings, secret
from evalbench.sources import record_read

HF_REPO = "gaia-benchmark/GAIA"
HF_URL = "https://huggingface.co/datasets/gaia-benchmark/GAIA"
LEADERBOARD_URL = "https://huggingface.co/spaces/gaia-benchmark/leaderboard"
HF_TOKEN_ENV = "HF_TOKEN"
SPLITS = ("validation", "test")
LEVELS = (1, 2, 3)
HIDDEN_ANSWER = "?"  # the test split's "Final answer" placeholder
METADATA_FILES = ("metadata.jsonl", "metadata.parquet")


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


# ---------------------------------------------------------------------------- loading


def demo_path() -> Path:
    """``evalbench/demo/gaia``: the offline GAIA-format demo suite (not GAIA; see its README)."""
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
    """The items as a DataFrame (one row per item; ``attachment`` as a string path; a hidden
    answer or no attachment is ``None``, not the NaN pandas 3 puts in a text column)."""
    rows = [it.model_dump(exclude={"annotator_metadata"}) for it in items]
    for row in rows:
        row["attachment"] = None if row["attachment"] is None else str(row["attachment"])
    frame = pd.DataFrame(rows)
    return none_for_missing(frame, [c for c in ("final_answer", "attachment") if c in frame])


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
    for lineno, line in text_lines(path, error=GaiaDataError):
        if line.strip():
            yield f"{path}:{lineno}", _json_line(line, f"{path}:{lineno}")


def _json_line(line: str, where: str) -> Mapping[str, Any]:
    try:
        value = parse_json(line)
    except json.JSONDecodeError as exc:
        raise GaiaDataError(f"{where}: not valid JSON ({exc.msg})") from None
    if not isinstance(value, dict):
        raise GaiaDataError(f"{where}: expected a JSON object, got {type(value).__name__}")
    return value


def _parse_row(row: Mapping[str, Any], where: str, folder: Path) -> GaiaItem:
    task_id = _required_text(row, "task_id", where)
    file_name = _file_name(row.get("file_name"), where)
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


def _file_name(value: Any, where: str) -> str:
    """An attachment's name; missing, null, NaN (a table's empty cell) or "" is none."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if not isinstance(value, str):
        raise GaiaDataError(f"{where}: field 'file_name' must be a string (or empty: no "
                            f"attachment), got {value!r:.60}")  # fmt: skip
    return value.strip()


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


def level_counts(items: Iterable[GaiaItem]) -> dict[int, int]:
    """Number of items per level (levels with no item included, as 0)."""
    counts = Counter(it.level for it in items)
    return {lv: counts.get(lv, 0) for lv in LEVELS}


# ---------------------------------------------------------------------------- records


def first_attempts(records: pd.DataFrame) -> pd.DataFrame:
    """One record per (system, task_id): the lowest ``attempt`` (all rows if no column)."""
    require_columns(records, ("system", "task_id", "level", "correct"))
    if "attempt" not in records.columns:
        return records
    ordered = records.sort_values("attempt", kind="stable")
    return ordered.drop_duplicates(["system", "task_id"], keep="first").sort_index()


def require_columns(records: pd.DataFrame, columns: Sequence[str]) -> None:
    """Raise :class:`GaiaDataError` naming the ``columns`` that ``records`` lacks."""
    missing = [c for c in columns if c not in records.columns]
    if missing:
        raise GaiaDataError(f"records: missing column(s) {missing}")


def text_or_none(value: Any) -> str | None:
    """``None`` for a missing value (``None`` or NaN), else the value as text."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return str(value)


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
    lines = (to_json(_submission_line(rec)) + "\n" for rec in chosen.to_dict("records"))
    write_atomic(path, lines)
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
    for lineno, line in text_lines(path, error=GaiaDataError):
        if not line.strip():
            continue
        where = f"{path}:{lineno}"
        row = _json_line(line, where)
        for field in ("task_id", "model_answer"):
            _required_text(row, field, where, allow_empty=True)
        if row["task_id"] in seen:
            raise GaiaDataError(f"{where}: duplicate task_id {row['task_id']!r}")
        seen.add(row["task_id"])
        if row.get("reasoning_trace") is None:  # null reads as absent, not as NaN
            row = {**row, "reasoning_trace": ""}
        _required_text(row, "reasoning_trace", where, allow_empty=True)
        rows.append(row)
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
    failed = text_or_none(rec.get("error")) is not None
    return {
        "task_id": str(rec["task_id"]),
        "model_answer": text_or_none(rec.get("extracted_answer")) or "",
        "reasoning_trace": "" if failed else text_or_none(rec.get("model_answer")) or "",
    }
