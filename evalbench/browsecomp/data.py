"""BrowseComp data: the official encrypted sets, decrypted in memory.

Official sets (every field encrypted with the row's canary; nothing decrypted is written):

- **BrowseComp** (Wei et al., 2025; openai/simple-evals ``browsecomp_eval.py``): the CSV at
  the registered URL of :data:`BROWSECOMP_CSV` (``sources.tsv``), columns
  ``problem, answer, problem_topic, canary`` (the official
  code reads ``problem``, ``answer`` and ``canary``; ``problem_topic`` is plain text), 1,266
  rows. OpenAI publishes no checksum: :data:`BROWSECOMP_CSV` pins the SHA-256 that several
  independent third-party loaders pin (a community value, verified on every read). It is not
  in ``sources.tsv`` because that registry only takes files pinned at a GitHub commit and
  held by the mirror; :func:`fetch_browsecomp_csv` uses the same mirror/cache/download path.
- **BrowseComp-ZH** (Zhou et al., 2025, arXiv:2504.19314; PALIN2018/BrowseComp-ZH): the xlsx
  registered as ``browsecomp/zh/encrypted_xlsx`` (commit 86abe635…), sheet columns ``Topic,
  Question, Answer, canary``; Topic, Question and Answer are all encrypted; 289 rows.

Decryption (both): key = SHA-256(canary as UTF-8), repeated to the ciphertext's length;
plaintext = base64-decoded field XOR key, decoded as UTF-8 (``derive_key``/``decrypt`` in
both repositories). :func:`encrypt` is its inverse (for tests and your own files).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import unicodedata
from pathlib import Path
from typing import Any, NamedTuple

from evalbench import sources
from evalbench.records import iter_csv

from .scoring import Style

BROWSECOMP_CSV = sources.get("browsecomp/openai/test_set")
"""The official BrowseComp CSV with the community-observed SHA-256 (not OpenAI's)."""
ZH_SOURCE = "browsecomp/zh/encrypted_xlsx"
"""The ``sources.tsv`` name of the BrowseComp-ZH xlsx."""
CSV_COLUMNS = ("problem", "answer", "canary")
XLSX_COLUMNS = ("Topic", "Question", "Answer", "canary")


class OfficialDataError(ValueError):
    """A malformed official file: one line naming the file, the row and the field."""


class OfficialItem(NamedTuple):
    """One decrypted question (kept in memory only)."""

    id: str
    """``bc-0000`` / ``bczh-000``: the row's position in the pinned file."""
    question: str
    answer: str
    topic: str


def derive_key(password: str, length: int) -> bytes:
    """SHA-256 of ``password`` (UTF-8), repeated and cut to ``length`` bytes."""
    digest = hashlib.sha256(password.encode("utf-8")).digest()
    whole, rest = divmod(length, len(digest))
    return digest * whole + digest[:rest]


def decrypt(ciphertext_b64: str, password: str) -> str:
    """Base64-decode, XOR with the derived key, decode UTF-8 (strictly)."""
    encrypted = base64.b64decode(ciphertext_b64, validate=True)
    key = derive_key(password, len(encrypted))
    return bytes(a ^ b for a, b in zip(encrypted, key, strict=True)).decode("utf-8")


def encrypt(plaintext: str, password: str) -> str:
    """The inverse of :func:`decrypt` (XOR is its own inverse)."""
    raw = plaintext.encode("utf-8")
    key = derive_key(password, len(raw))
    return base64.b64encode(bytes(a ^ b for a, b in zip(raw, key, strict=True))).decode("ascii")


def _decrypted(value: Any, password: str, where: str, name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise OfficialDataError(f"{where}: {name}: empty or not text")
    try:
        text = decrypt(value.strip(), password)
    except (binascii.Error, ValueError) as exc:
        raise OfficialDataError(
            f"{where}: {name}: does not decrypt with the canary ({exc})"
        ) from None
    if not text.strip() or not _printable_lines(text):
        raise OfficialDataError(f"{where}: {name}: decrypts to no readable text")
    return text


def _printable_lines(text: str) -> bool:
    """Whether ``text`` reads as text: printable once tabs, line breaks and format characters
    (Unicode Cf: zero-width joiners, soft hyphens), which official rows hold, are set aside
    (a wrong canary already fails the strict UTF-8 decode, or leaves control bytes)."""
    shown = "".join(ch for ch in text if unicodedata.category(ch) != "Cf")
    return all(line.isprintable() for line in shown.replace("\t", " ").splitlines())


def read_browsecomp_csv(path: Path) -> list[OfficialItem]:
    """Decrypt the BrowseComp CSV (``problem``, ``answer``, ``canary``; ``problem_topic``).

    Raises:
        OfficialDataError: a missing column, or a row that does not decrypt (``file:line``).
    """
    header, rows = iter_csv(path, error=OfficialDataError)
    missing = [c for c in CSV_COLUMNS if c not in header]
    if missing:
        raise OfficialDataError(f"{path}:1: missing column(s) {', '.join(missing)}")
    items = []
    for index, (line, row) in enumerate(rows):
        where = f"{path}:{line}"
        canary = row.get("canary") or ""
        if not canary:
            raise OfficialDataError(f"{where}: canary: empty")
        items.append(
            OfficialItem(
                id=f"bc-{index:04d}",
                question=_decrypted(row["problem"], canary, where, "problem"),
                answer=_decrypted(row["answer"], canary, where, "answer"),
                topic=(row.get("problem_topic") or "").strip() or "(none)",
            )
        )
    if not items:
        raise OfficialDataError(f"{path}: no questions")
    return items


def read_browsecomp_zh_xlsx(path: Path) -> list[OfficialItem]:
    """Decrypt the BrowseComp-ZH workbook (first sheet: ``Topic, Question, Answer, canary``).

    Raises:
        OfficialDataError: a missing column, or a cell that does not decrypt (``file:row``).
    """
    import zipfile

    import openpyxl
    from openpyxl.utils.exceptions import InvalidFileException

    try:
        book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except (zipfile.BadZipFile, InvalidFileException, KeyError) as exc:
        raise OfficialDataError(f"{path}: not an xlsx workbook ({exc})") from None
    try:
        rows = list(book.worksheets[0].iter_rows(values_only=True))
    finally:
        book.close()
    header = [str(c).strip() if c is not None else "" for c in (rows[0] if rows else ())]
    missing = [c for c in XLSX_COLUMNS if c not in header]
    if missing:
        raise OfficialDataError(f"{path}: row 1: missing column(s) {', '.join(missing)}")
    at = {name: header.index(name) for name in XLSX_COLUMNS}
    items: list[OfficialItem] = []
    for number, row in enumerate(rows[1:], start=2):
        if all(cell is None for cell in row):
            continue
        where = f"{path}: row {number}"
        canary = row[at["canary"]]
        if not isinstance(canary, str) or not canary:
            raise OfficialDataError(f"{where}: canary: empty")
        fields = {
            n: _decrypted(row[at[n]], canary, where, n) for n in ("Topic", "Question", "Answer")
        }
        items.append(
            OfficialItem(
                f"bczh-{len(items):03d}",
                fields["Question"],
                fields["Answer"],
                fields["Topic"].strip(),
            )
        )
    if not items:
        raise OfficialDataError(f"{path}: no questions")
    return items


def fetch_browsecomp_csv() -> Path:
    """The BrowseComp CSV (mirror, cache, then download; checked against the community
    SHA-256). Raises :class:`evalbench.sources.DataUnavailable` when unreachable."""
    return sources.fetch_source(BROWSECOMP_CSV, progress=False)


def load_official(dataset: str) -> tuple[Style, list[OfficialItem]]:
    """``(style, items)`` of ``browsecomp``, ``browsecomp_zh`` or a local ``.csv``/``.xlsx``
    (BrowseComp or BrowseComp-ZH format by suffix; local files are hashed for the manifest)."""
    if dataset == "browsecomp":
        return "browsecomp", read_browsecomp_csv(fetch_browsecomp_csv())
    if dataset == "browsecomp_zh":
        return "browsecomp_zh", read_browsecomp_zh_xlsx(sources.fetch(ZH_SOURCE, progress=False))
    path = Path(dataset)
    sources.record_read(path)
    if path.suffix.lower() == ".xlsx":
        return "browsecomp_zh", read_browsecomp_zh_xlsx(path)
    return "browsecomp", read_browsecomp_csv(path)


def topic_counts(items: list[OfficialItem]) -> dict[str, int]:
    """Items per topic, largest first."""
    counts: dict[str, int] = {}
    for item in items:
        counts[item.topic] = counts.get(item.topic, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
