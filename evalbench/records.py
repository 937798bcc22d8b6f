"""Record types shared by all studies, and the append-only JSONL record store.

Benchmark modules define their own per-item records (subclasses of :class:`Record`); the
shapes every study shares (battles, error information) live here. A :class:`RecordStore`
is one JSONL file under a run's ``records/`` folder: one JSON object per line, flushed
after every record, so an interrupted run loses at most the record in flight, and a rerun
skips the keys already written.
"""

from __future__ import annotations

import contextlib
import csv
import errno
import functools
import io
import json
import math
import os
import re
import stat
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal, TextIO

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, model_validator

from evalbench.settings import get_settings


class Record(BaseModel):
    """Base of every record written to a run's ``records/`` folder.

    Record files are strict JSON (:func:`to_json`): a missing number (NaN) is written
    ``null``, and a field typed ``float`` reads ``null`` back as NaN.
    """

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _null_is_nan(cls, data: Any) -> Any:
        floats = _float_fields(cls)
        if not isinstance(data, dict) or not floats:
            return data
        return {k: math.nan if v is None and k in floats else v for k, v in data.items()}


@functools.cache
def _float_fields(cls: type[BaseModel]) -> frozenset[str]:
    """The fields of a record type that are exactly ``float`` (not ``float | None``)."""
    return frozenset(name for name, field in cls.model_fields.items() if field.annotation is float)


class Battle(Record):
    """One pairwise comparison between two models (the unit of arena ratings)."""

    model_a: str
    """The model shown as (or labelled) A."""
    model_b: str
    """The other model."""
    winner: Literal["a", "b", "tie"]
    """Who won: model A, model B, or a tie."""
    weight: float = 1.0
    """How much this battle counts (e.g. more for a strong verdict)."""
    question_id: str = ""
    """The prompt both answered."""


class Rating(Record):
    """One model's Bradley–Terry rating in one dataset (``records/ratings.jsonl`` of the
    arena studies; see :mod:`evalbench.ratings`)."""

    dataset: str
    model: str
    rating: float
    """Bradley–Terry rating on the Elo scale."""
    ci_low: float
    ci_high: float
    """Percentile bootstrap interval at ``level``."""
    n_battles: int
    """Battles the model played (AlpacaEval: judged instructions)."""
    online_elo: float
    """Online Elo, battles in order (NaN where battles have no order, e.g. AlpacaEval)."""
    level: float
    rounds: int
    degenerate_rounds: int
    """Bootstrap rounds without a finite fit (left out of the interval)."""


class StyleCounts(Record):
    """Both answers' style counts on a battle (:func:`evalbench.ratings_style.style_counts`):
    tokens (cl100k_base), headers, list items and bold spans of A's answer, then of B's;
    ``None`` where the answers are not published."""

    tokens_a: float | None = None
    headers_a: float | None = None
    lists_a: float | None = None
    bold_a: float | None = None
    tokens_b: float | None = None
    headers_b: float | None = None
    lists_b: float | None = None
    bold_b: float | None = None


class LengthControlled(Record):
    """Raw and length-controlled win rates against a baseline (``None`` where not computed)."""

    win_rate: float | None = None
    """Against the baseline (percent, ties ½); ``None`` for the baseline itself."""
    lc_win_rate: float | None = None
    """AlpacaEval 2.0's length-controlled win rate against the baseline (percent)."""
    lc_standard_error: float | None = None


class StyledRating(LengthControlled, Rating):
    """A rating with its style-controlled counterpart and, against a baseline, the raw and
    length-controlled win rates (``None`` where not computed)."""

    style_rating: float | None = None
    """Style-controlled Bradley–Terry rating (:mod:`evalbench.ratings_style`), same anchor."""
    style_ci_low: float | None = None
    style_ci_high: float | None = None
    """Its percentile bootstrap interval at ``level``."""
    rank: int | None = None
    """Rank by the raw rating (1 = best; ties share the better rank)."""
    style_rank: int | None = None
    """Rank by the style-controlled rating."""
    rank_change: int | None = None
    """``rank − style_rank``: positive = the model climbs once style is controlled."""


class StyleCoefficient(Record):
    """One style feature's coefficient (``records/style_coefficients.jsonl``)."""

    dataset: str
    feature: str
    """``tokens``, ``headers``, ``lists`` or ``bold`` (normalized difference, standardized)."""
    coefficient: float
    """Log-odds of winning per standard deviation of the feature (NaN: never varies)."""
    ci_low: float
    ci_high: float
    estimable: bool
    """False when every battle has the same value (left out of the fit)."""
    level: float
    rounds: int


class ResponseRecord(Record):
    """One model call of a study: what a system or judge answered to one item.

    Every study keeps these in ``records/responses.jsonl`` (append-only, one per
    (system, key)); its scored records are computed from them.
    """

    system: str
    """The system or judge asked."""
    key: str
    """The item (and variant: order, attempt...) this call answers."""
    request_key: str = ""
    """Hash of everything that determined the answer (the response-cache key): a stored
    answer whose request has since changed (edited data, prompt or settings) is stale."""
    text: str | None = None
    """The answer text (``None`` when the call failed or only tools were called)."""
    tool_calls: list[dict[str, Any]] = []
    """Native tool calls: ``{"name", "arguments"}`` with arguments as returned."""
    finish_reason: str | None = None
    error: str | None = None
    """Why the call failed permanently (an error record: never a score)."""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float = 0.0
    cached: bool = False
    """Served from the response cache (no request, no cost)."""
    simulated: bool = False
    """Produced by the offline sim provider."""


TOO_DEEP = "nested too deeply to read (JSON deeper than the parser's recursion limit)"


class JsonTooDeep(json.JSONDecodeError):
    """JSON nested deeper than the parser's recursion limit (a damaged or hostile file);
    a :class:`json.JSONDecodeError`, so every reader's ``not JSON`` line covers it."""

    def __str__(self) -> str:
        return self.msg  # no "line 1 column 1": the parser does not say where


def parse_json(text: str | bytes) -> Any:
    """:func:`json.loads`, raising :class:`JsonTooDeep` where it would raise RecursionError.

    Raises:
        json.JSONDecodeError: not JSON, or nested too deeply (``msg`` says which).
    """
    try:
        return json.loads(text)
    except RecursionError:
        raise JsonTooDeep(TOO_DEEP, text if isinstance(text, str) else "", 0) from None


class CorruptRecords(RuntimeError):
    """A record file has a line that is not a JSON object (other than a torn last line)."""


class RecordStore:
    """Append-only JSONL file of records, keyed for resume.

    Args:
        path: the ``.jsonl`` file (created with its folder on first append).
        key_fields: fields whose values identify a record; a key is written at most once.

    Raises:
        CorruptRecords: the file has a line that is not a JSON object, or it (or its folder)
            is a symbolic link.
    """

    def __init__(self, path: Path | str, key_fields: Sequence[str]):
        self.path = Path(path)
        # a run folder from elsewhere (an archive): an append, or the cut of a torn last
        # line, would write through the link to whatever file it names
        if self.path.is_symlink() or self.path.parent.is_symlink():
            raise CorruptRecords(
                f"{self.path}: a symbolic link; records are read and written only in the run "
                "folder itself (delete the link, then run again)"
            )
        self.key_fields = tuple(key_fields)
        self._rows = self._latest_per_key(self._load())
        self._by_key = {self.key_of(r): r for r in self._rows}
        self.appended: Counter[str] = Counter()
        """Records this object appended, by their ``system`` field (what this session did)."""

    def _latest_per_key(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """One row per key (the last written): a file two writers appended to at once (before
        run folders were locked) still counts every call, and its cost, once."""
        latest = {self.key_of(r): i for i, r in enumerate(rows)}
        self.duplicates = len(rows) - len(latest)
        """Rows dropped at load because a later row had the same key."""
        if not self.duplicates:
            return rows
        keep = set(latest.values())
        return [r for i, r in enumerate(rows) if i in keep]

    def key_of(self, row: dict[str, Any] | Record) -> tuple[Any, ...]:
        """The key of a record or row (a tuple of its key fields' values)."""
        data = row.model_dump() if isinstance(row, BaseModel) else row
        return tuple(_hashable(data.get(f)) for f in self.key_fields)

    def done_keys(self) -> set[tuple[Any, ...]]:
        """Keys already written (skip these on resume)."""
        return set(self._by_key)

    def __contains__(self, key: tuple[Any, ...]) -> bool:
        return key in self._by_key

    def get(self, key: tuple[Any, ...]) -> dict[str, Any] | None:
        """The record with this key (``None`` when there is none)."""
        return self._by_key.get(key)

    def __len__(self) -> int:
        return len(self._rows)

    def append(self, record: Record | dict[str, Any]) -> None:
        """Write one record and flush it to the OS before returning.

        Raises:
            ValueError: a record with the same key was already written (a resume bug).
        """
        row = record.model_dump(mode="json") if isinstance(record, BaseModel) else dict(record)
        key = self.key_of(row)
        if key in self._by_key:
            raise ValueError(f"{self.path.name}: a record with key {key} was already written")
        line = to_json(row)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open_in_folder(self.path, "a") as fh:
            fh.write(line + "\n")
            fh.flush()
        self._rows.append(row)
        self._by_key[key] = row
        self.appended[str(row.get("system", ""))] += 1

    def extend(self, records: Iterable[Record | dict[str, Any]]) -> None:
        """Append several records (each flushed as it is written)."""
        for record in records:
            self.append(record)

    def drop_where(self, predicate: Callable[[dict[str, Any]], bool]) -> int:
        """Remove the records matching ``predicate`` (atomic rewrite); returns how many.

        Used to retry failed model calls on resume: their error records are dropped, then
        the retried calls append fresh records, so each key is still written once.
        """
        keep = [row for row in self._rows if not predicate(row)]
        dropped = len(self._rows) - len(keep)
        if dropped:
            write_jsonl(self.path, keep)
            self._rows = keep
            self._by_key = {self.key_of(r): r for r in keep}
        return dropped

    def drop_keys(self, keys: Iterable[tuple[Any, ...]]) -> int:
        """Remove the records with these keys (:meth:`drop_where`, when there are any)."""
        gone = set(keys) & self._by_key.keys()
        return self.drop_where(lambda row: self.key_of(row) in gone) if gone else 0

    def rows(self) -> list[dict[str, Any]]:
        """All records as dicts, in write order."""
        return list(self._rows)

    def frame(self) -> pd.DataFrame:
        """All records as a DataFrame (one row per record)."""
        return pd.DataFrame(self._rows)

    def _load(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        lines = self.path.read_bytes().split(b"\n")
        rows, last, offset = [], len(lines) - 1, 0
        for number, raw in enumerate(lines, start=1):
            torn = number - 1 == last  # no newline after it: the record in flight at a kill
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                if torn:  # cut inside a character (records are UTF-8, not ASCII)
                    self._truncate_torn_tail()
                    break
                why = not_utf8(raw, exc.start, offset)
                raise CorruptRecords(f"{self.path}:{number}: {why}") from None
            offset += len(raw) + 1
            if not line.strip():
                continue
            try:
                row = parse_json(line)
            except json.JSONDecodeError as exc:
                if torn and not isinstance(exc, JsonTooDeep):
                    self._truncate_torn_tail()  # torn final write: the record in flight
                    break
                raise CorruptRecords(f"{self.path}:{number}: {_not_json(exc)}") from None
            if not isinstance(row, dict):
                raise CorruptRecords(f"{self.path}:{number}: expected a JSON object")
            rows.append(row)
        return rows

    def _truncate_torn_tail(self) -> None:
        keep = self.path.read_bytes().rfind(b"\n") + 1
        with open(self.path, "rb+") as fh:
            fh.truncate(keep)


def write_jsonl(path: Path | str, rows: Iterable[dict[str, Any] | Record]) -> Path:
    """Write rows as strict JSON Lines (:func:`to_json`) atomically (temp file, then rename)."""
    lines = (
        to_json(row.model_dump(mode="json") if isinstance(row, BaseModel) else row) + "\n"
        for row in rows
    )
    return write_atomic(path, lines)


def to_json(value: Any, *, indent: int | None = None, default: Any = None) -> str:
    """JSON text any strict parser reads (``JSON.parse``, ``jq``): a non-finite number (NaN,
    ±Infinity: pandas' missing value) is ``null``, never the ``NaN`` literal Python writes;
    numpy scalars are numbers.

    Args:
        value: what to encode.
        indent: as :func:`json.dumps`.
        default: as :func:`json.dumps`, for the other types JSON does not know.
    """

    def encode(obj: Any) -> Any:
        if isinstance(obj, (np.generic, np.ndarray)):
            return obj.tolist()
        if default is None:
            raise TypeError(f"{type(obj).__name__} is not JSON serializable")
        return default(obj)

    options: dict[str, Any] = {"ensure_ascii": False, "allow_nan": False, "indent": indent}
    try:  # the common case: nothing to replace, no copy
        return json.dumps(value, default=encode, **options)
    except ValueError:
        return json.dumps(_finite(value), default=encode, **options)


def _finite(value: Any) -> Any:
    """``value`` with every non-finite float (numpy's too) replaced by ``None``."""
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    if isinstance(value, (np.generic, np.ndarray)):
        return _finite(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def leads_outside(paths: Iterable[Path], folder: Path) -> Path | None:
    """The first of ``paths`` (found under ``folder``) that leads outside it through a
    symbolic link, if any: a dataset or document folder's files are read only inside it."""
    root = Path(folder).resolve()
    return next((p for p in paths if not Path(p).resolve().is_relative_to(root)), None)


def open_in_folder(path: Path | str, mode: Literal["w", "a"]) -> TextIO:
    """``open(path, mode, encoding="utf-8")`` for a file evalbench writes in a run or cell
    folder, never through a symbolic link planted there (a folder from an archive): the
    write would go to the file it names (``O_NOFOLLOW``).

    Raises:
        OSError: ``ELOOP`` for a link, or any other reason the file cannot be opened.
    """
    flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
    flags |= os.O_APPEND if mode == "a" else os.O_TRUNC
    return os.fdopen(os.open(path, flags, 0o644), mode, encoding="utf-8")


class OutputsUnwritable(OSError):
    """The outputs folder cannot be written (read-only, no permission, disk full)."""


UNWRITABLE = frozenset(
    {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EFBIG}
)
"""Why a file cannot be written (a full disk or quota, a read-only or forbidden folder, a
file past the size limit: ``ulimit -f``, ``prlimit --fsize``)."""
NO_SPACE = re.compile(
    rf"\[Errno (?:{errno.ENOSPC}|{errno.EDQUOT})\][^'\n]*(?:'(?P<path>[^'\n]+)')?"
)
"""A failure's reason that says a disk (or quota) is full, and which file it was writing."""


def unwritable(where: Path, cause: object) -> OutputsUnwritable:
    """The one-line error for a folder or file that cannot be written (read-only, full)."""
    text = cause.strerror if isinstance(cause, OSError) and cause.strerror else str(cause)
    if NO_SPACE.search(text):
        text = os.strerror(errno.ENOSPC)
    cache = get_settings().cache_dir.resolve()
    variable = "EVALBENCH_CACHE" if where.resolve().is_relative_to(cache) else "EVALBENCH_OUTPUTS"
    return OutputsUnwritable(
        f"cannot write to {where} ({text}); set {variable} to a writable folder "
        "or free some disk space"
    )


def refuse_links(path: Path, outputs: Path | None = None) -> None:
    """Refuse to write in ``path``, a folder of the outputs folder (``outputs``, default the
    settings'), when it leads out of it or it, or a folder between it and the outputs folder,
    is a symbolic link: every reader takes a linked folder for an archive (never current,
    never settled), and a run, a pin, a trends page or a compare request written through it
    lands in the folder it names.

    Raises:
        OutputsUnwritable: one line naming ``path`` and the link.
    """
    outputs = get_settings().outputs_dir if outputs is None else outputs
    if not (real := path.resolve()).is_relative_to(outputs.resolve()):
        raise OutputsUnwritable(f"{path}: leads to {real} (a link), outside the outputs "
                                f"folder {outputs}; evalbench writes only inside it")  # fmt: skip
    for folder in [path, *path.parents]:
        if folder == outputs or not folder.is_relative_to(outputs):
            break
        if folder.is_symlink():
            raise OutputsUnwritable(
                f"{path}: {folder} is a link (to {folder.resolve()}), read as an archive; "
                f"evalbench writes only into folders of the outputs folder {outputs} that are "
                "no link"
            )


def ensure_writable(run_dir: Path) -> None:
    """Create the run folder and write a small probe file in it (removed again, also when
    the write failed).

    Raises:
        OutputsUnwritable: one line naming the folder and the cause; or the folder leads out
            of the outputs folder (a link in its path; the outputs folder itself may be one).
    """
    refuse_links(run_dir)
    probe = run_dir / ".write-probe"
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        with open_in_folder(probe, "w") as fh:
            fh.write("\0" * 65536)
    except OSError as exc:
        raise unwritable(run_dir, exc) from None
    finally:
        with contextlib.suppress(OSError):
            probe.unlink(missing_ok=True)


WRITE_ERRORS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG})
"""Errors only a write meets (a full disk or quota, a read-only folder, ``ulimit -f``): the
commands say them in one line naming the folder, whatever was being written."""


def write_failure(exc: OSError) -> OutputsUnwritable | None:
    """The one line for ``exc`` when it is one of :data:`WRITE_ERRORS` on a named file (its
    folder is named), else ``None``."""
    if exc.errno in WRITE_ERRORS and exc.filename:
        return unwritable(Path(exc.filename).parent, exc)
    return None


def write_atomic(path: Path | str, parts: str | Iterable[str]) -> Path:
    """Write text to ``path`` through a temp file renamed over it: readers see the old file
    or the new one, never half of one, whoever else writes it at the same time; a failed
    write (a full disk) leaves no temp file.

    Raises:
        OSError: the write failed (``path`` is unchanged).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # a temp file of its own: two writers of one path (two runs rebuilding the index) never
    # write into, or rename away, each other's
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{uuid.uuid4().hex[:12]}.tmp")
    try:
        with open(tmp, "x", encoding="utf-8") as fh:
            fh.writelines([parts] if isinstance(parts, str) else parts)
        tmp.replace(path)
    except BaseException:
        with contextlib.suppress(OSError):  # a read-only folder refuses this too: the
            tmp.unlink(missing_ok=True)  # write's own error is the one to see
        raise
    return path


BOM = b"\xef\xbb\xbf"
"""The UTF-8 byte order mark Excel and other Windows tools put at the start of a text file."""


def text_lines(
    path: Path | str, *, error: type[Exception] = CorruptRecords
) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` for every line of a text file read as untrusted input, one
    line at a time (files of any size): strict UTF-8, a BOM at the start dropped, lines
    ended by ``\n`` only (a U+2028 inside a JSON string is no line break).

    Raises:
        error: a line that is not UTF-8, naming the file, the line, the byte and its offset.
    """
    offset = 0
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, start=1):
            start = 3 if number == 1 and raw.startswith(BOM) else 0  # as Windows tools write
            try:
                line = raw[start:].decode("utf-8")
            except UnicodeDecodeError as exc:
                why = not_utf8(raw, start + exc.start, offset)
                raise error(f"{path}:{number}: {why}") from None
            offset += len(raw)
            yield number, line


def iter_jsonl(
    path: Path | str, *, error: type[Exception] = CorruptRecords
) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for every non-blank line of a JSON Lines file
    (:func:`text_lines`: strict UTF-8, a BOM dropped).

    Raises:
        error: a line that is not UTF-8, not JSON, or not a JSON object (the message names
            file and line).
    """
    path = Path(path)
    for number, line in text_lines(path, error=error):
        if not line.strip():
            continue
        try:
            row = parse_json(line)
        except json.JSONDecodeError as exc:
            raise error(f"{path}:{number}: {_not_json(exc)}") from None
        if not isinstance(row, dict):
            raise error(f"{path}:{number}: expected a JSON object")
        yield number, row


def read_regular_text(path: Path | str) -> str:
    """A file evalbench wrote (a manifest) as UTF-8 text, read only when it is a regular
    file: a FIFO planted in its place blocked every reader (``history``, ``compare``, the
    index every ``run`` rebuilds) until someone wrote to it.

    Raises:
        OSError: it cannot be opened (``FileNotFoundError`` when it is gone).
        ValueError: it is not a regular file, or not UTF-8 (``UnicodeDecodeError``).
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)  # a FIFO opens at once
    with open(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"{path}: not a regular file")
        return fh.read().decode("utf-8")


def read_utf8(path: Path | str, *, error: type[Exception] = CorruptRecords) -> str:
    """A whole text file read as untrusted input (:func:`decode_utf8`)."""
    return decode_utf8(Path(path).read_bytes(), path, error=error)


def decode_utf8(raw: bytes, path: Path | str, *, error: type[Exception] = CorruptRecords) -> str:
    """The bytes of a whole file as strict UTF-8, a leading BOM dropped.

    Raises:
        error: not UTF-8, naming the file ``path``, the line, the byte and its offset (as
            :func:`text_lines`).
    """
    start = 3 if raw.startswith(BOM) else 0
    try:
        return raw[start:].decode("utf-8")
    except UnicodeDecodeError as exc:
        at = start + exc.start
        line = raw.count(b"\n", 0, at) + 1
        raise error(f"{path}:{line}: {not_utf8(raw, at)}") from None


def not_utf8(raw: bytes, at: int, offset: int = 0) -> str:
    """``not UTF-8: byte 0x.. at offset N`` for the byte ``raw[at]``, where ``raw`` starts
    ``offset`` bytes into its file."""
    return f"not UTF-8: byte 0x{raw[at]:02x} at offset {offset + at}"


def iter_csv(
    path: Path | str, *, error: type[Exception] = CorruptRecords
) -> tuple[list[str], Iterator[tuple[int, dict[str, Any]]]]:
    """The header and ``(line number, row)`` of every row of a CSV file read as untrusted
    input: strict UTF-8 (a BOM, as Excel writes it, is dropped). Rows are as
    ``csv.DictReader`` makes them (values past the header under ``None``, missing ones
    ``None``; blank lines skipped), each numbered by the line it starts on.

    Raises:
        error: not UTF-8 (the byte and its offset), a header of one column holding ``;``,
            a tab or ``|`` (another separator), or a row the csv module cannot read (a field
            past its limit of 131,072 characters, a stray quote), naming file and line.
    """
    path = Path(path)
    reader = csv.reader(io.StringIO(read_utf8(path, error=error), newline=""))

    def read() -> tuple[int, list[str]] | None:
        """The next non-blank row and the line it starts on; None at the end."""
        while True:
            start = reader.line_num + 1
            try:
                values = next(reader)
            except StopIteration:
                return None
            except csv.Error as exc:
                why = str(exc)
                if "field larger" in why:
                    why = f"a field over {csv.field_size_limit():,d} characters"
                raise error(f"{path}:{start}: {why}") from None
            if values:
                return start, values

    first = read()
    at, header = first if first else (1, [])
    if len(header) == 1 and (sep := next((c for c in ";\t|" if c in header[0]), None)):
        looks = "tab-separated" if sep == "\t" else f"{sep!r}-separated"  # Excel in many locales
        raise error(f"{path}:{at}: the header is one column {header[0]!r}: the file looks "
                    f"{looks}; save it as comma-separated CSV")  # fmt: skip

    def rows() -> Iterator[tuple[int, dict[str, Any]]]:
        while (got := read()) is not None:
            line, values = got
            row: dict[Any, Any] = dict(zip(header, values, strict=False))
            if len(values) > len(header):
                row[None] = values[len(header) :]
            for key in header[len(values) :]:
                row[key] = None
            yield line, row

    return header, rows()


def _not_json(exc: json.JSONDecodeError) -> str:
    return exc.msg if isinstance(exc, JsonTooDeep) else f"not JSON ({exc.msg})"


def read_jsonl(path: Path | str) -> list[dict[str, Any]]:
    """Read a JSON Lines file; a bad line is an error naming the file and line."""
    return [row for _, row in iter_jsonl(path)]


def none_for_missing(frame: pd.DataFrame, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """``frame`` with a missing value (NaN, ``pd.NA``) in ``columns`` (default: all) as ``None``.

    pandas 3 stores a text column as strings with NaN for a missing one, which no text
    field accepts; the columns become ``object``.
    """
    chosen = list(frame.columns if columns is None else columns)
    out = frame.copy()
    out[chosen] = frame[chosen].astype(object).where(frame[chosen].notna(), None)
    return out


def plain_rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The rows of ``frame`` as dicts of plain Python values, a missing one as ``None``."""
    return none_for_missing(frame).to_dict(orient="records")


def _hashable(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in value.items()))
    return value
