"""Size limits for logs read whole into memory: inspect_ai ``.eval`` archives are checked as
streams before inspect_ai's reader expands them, ``.json`` logs by their size on disk.

inspect_ai's reader expands each ZIP member in one call into memory, whatever its header
says (``inspect_ai/_util/compression.py``, ``decompress_bytes``): a 290 KB ``.eval`` that
expands to 300 MB used 830 MB before inspect refused the content. :func:`check_archive`
refuses such a file first, holding at most about a megabyte at a time:

- the members' declared sizes must add up to at most the limit (:data:`MAX_LOG_BYTES`);
- each member's data, expanded as a stream (1 MiB at a time, nothing kept), must give
  exactly its declared size, so a header that lies ("1,000 bytes") is caught as soon as the
  data passes it, and the total stays under the limit;
- the archive must start with its first member (data before it makes readers disagree on
  where members start: Python's zipfile shifts every offset, inspect's reader does not) and
  use stored, deflate or zstd members (what inspect_ai reads).
"""

from __future__ import annotations

import struct
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, BinaryIO, cast

from .outcomes import OutcomeError

MAX_LOG_BYTES = 256 * 2**20
"""The most a log may expand to (``--max-log-mb`` / ``max_log_mb:`` raise it)."""
CHUNK = 2**20
STORED, DEFLATE, ZSTD = 0, 8, 93
_LOCAL = struct.Struct("<4sHHHHHIIIHH")  # a member's local header (APPNOTE 4.3.7)


def size_text(n: int) -> str:
    """``12345 bytes`` below a MiB, else ``3.5 MB`` (MiB)."""
    return f"{n} bytes" if n < 2**20 else f"{n / 2**20:.1f} MB"


def _too_big(path: Path, what: str, limit: int) -> OutcomeError:
    return OutcomeError(
        f"{path}: {what}; evalbench reads logs up to {size_text(limit)} (raise it with "
        "--max-log-mb, or max_log_mb: in a compare params file)"
    )


def check_file_size(path: Path, limit: int = MAX_LOG_BYTES) -> None:
    """Refuse a plain log (read whole into memory) larger than ``limit`` bytes.

    Raises:
        OutcomeError: naming the file, its size and the limit.
    """
    size = path.stat().st_size
    if size > limit:
        raise _too_big(path, f"a log of {size_text(size)}", limit)


def check_archive(path: Path, limit: int = MAX_LOG_BYTES) -> int:
    """Check a ZIP archive as described in the module docstring; returns its expanded size.

    Raises:
        OutcomeError: one line naming the file (and the member) and what is wrong.
    """
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise OutcomeError(
            f"{path}: not a readable inspect_ai log (not a ZIP archive: {exc})"
        ) from None
    declared = sum(m.file_size for m in members)
    if declared > limit:
        raise _too_big(path, f"expands to {size_text(declared)}", limit)
    first = min((m.header_offset for m in members), default=0)
    if first:
        raise OutcomeError(f"{path}: {first} bytes before the first member (refused: readers "
                           "disagree on where its members start)")  # fmt: skip
    with open(path, "rb") as fh:
        for member in members:
            _check_member(path, fh, member)
    return declared


def _check_member(path: Path, fh: BinaryIO, member: zipfile.ZipInfo) -> None:
    where = f"{path}: {member.filename}"
    if member.compress_type not in (STORED, DEFLATE, ZSTD):
        raise OutcomeError(f"{where}: compression method {member.compress_type} (evalbench "
                           "reads stored, deflate and zstd members)")  # fmt: skip
    expanded = 0
    for piece in _expand(where, _data(where, fh, member), member.compress_type):
        expanded += piece
        if expanded > member.file_size:
            raise OutcomeError(f"{where}: declares {member.file_size} bytes but its data "
                               "expands to more (a damaged or hostile archive)")  # fmt: skip
    if expanded != member.file_size:
        raise OutcomeError(f"{where}: declares {member.file_size} bytes but its data expands "
                           f"to {expanded} (a damaged archive)")  # fmt: skip


def _data(where: str, fh: BinaryIO, member: zipfile.ZipInfo) -> Iterator[bytes]:
    """The member's compressed bytes, as inspect's reader finds them: after its local header
    (whose name and extra lengths say where the data starts), ``compress_size`` of them."""
    fh.seek(member.header_offset)
    head = fh.read(_LOCAL.size)
    if len(head) < _LOCAL.size or head[:4] != b"PK\x03\x04":
        raise OutcomeError(f"{where}: no member header at offset {member.header_offset}")
    name_length, extra_length = _LOCAL.unpack(head)[-2:]
    fh.seek(member.header_offset + _LOCAL.size + name_length + extra_length)
    left = member.compress_size
    while left > 0:
        block = fh.read(min(CHUNK, left))
        if not block:
            raise OutcomeError(f"{where}: the archive ends inside this member's data")
        left -= len(block)
        yield block


def _expand(where: str, blocks: Iterator[bytes], method: int) -> Iterator[int]:
    """The sizes of the pieces ``blocks`` expand to, at most :data:`CHUNK` bytes each."""
    if method == STORED:
        yield from (len(b) for b in blocks)
    elif method == DEFLATE:
        yield from _inflate(where, blocks)
    else:
        yield from _unzstd(where, blocks)


def _inflate(where: str, blocks: Iterator[bytes]) -> Iterator[int]:
    inflater = zlib.decompressobj(-15)
    try:
        for block in blocks:
            data = block
            while not inflater.eof:
                piece = inflater.decompress(data, CHUNK)
                yield len(piece)
                data = inflater.unconsumed_tail
                if not data and len(piece) < CHUNK:
                    break  # this block is used up (a full piece may leave output pending)
    except zlib.error as exc:
        raise OutcomeError(f"{where}: not a deflate stream ({exc})") from None
    if not inflater.eof:
        raise OutcomeError(f"{where}: the deflate stream ends early (a damaged archive)")


def _unzstd(where: str, blocks: Iterator[bytes]) -> Iterator[int]:
    import zstandard  # inspect_ai's dependency: present whenever a log can be read at all

    source = cast(IO[bytes], _Blocks(blocks))  # all the reader calls is read(size)
    reader = zstandard.ZstdDecompressor().stream_reader(source, read_across_frames=True)
    try:
        while piece := reader.read(CHUNK):
            yield len(piece)
    except zstandard.ZstdError as exc:
        raise OutcomeError(f"{where}: not a zstd stream ({exc})") from None


class _Blocks:
    """A read-only file over an iterator of byte blocks (for zstandard's stream reader)."""

    def __init__(self, blocks: Iterator[bytes]) -> None:
        self._blocks = blocks
        self._rest = b""

    def read(self, size: int = -1) -> bytes:
        if not self._rest:
            self._rest = next(self._blocks, b"")
        size = len(self._rest) if size < 0 else size
        out, self._rest = self._rest[:size], self._rest[size:]
        return out
