"""A document collection for offline search: BM25 (bm25s) over documents, with no tool in it
(the ``search`` / ``open_page`` tools are :mod:`.search`).

:class:`DocumentIndex` holds the documents (from a folder of .txt/.md/.html files or
from records) and a BM25 index (Lucene variant, k1=1.5, b=0.75) over lowercased word
tokens minus bm25s's English stopwords, no stemming. A document is indexed as its title
followed by its text, so title words weigh a little more. Search is deterministic:
ties are broken by document id.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalbench.params import format_validation_error
from evalbench.records import iter_jsonl, leads_outside

FOLDER_SUFFIXES = (".txt", ".md", ".html", ".htm")
WORD = re.compile(r"\w+")
SNIPPET_CHARS = 240  # characters of context shown per hit
TITLE_CHARS = 200
HTML_SKIPPED = frozenset({"script", "style", "noscript", "template", "head"})
HTML_BLOCKS = frozenset(
    {"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article",
     "table", "ul", "ol", "pre", "blockquote", "header", "footer", "title", "td", "th"}
)  # fmt: skip


class UnknownDocument(LookupError):
    """An id no document of the index has (the search tools pass the message to the model)."""


class Document(NamedTuple):
    """One document of the collection."""

    id: str
    title: str
    text: str
    url: str | None = None


class Hit(NamedTuple):
    """One search result."""

    id: str
    title: str
    score: float
    snippet: str


class DocumentRecord(BaseModel):
    """A document as a record (``from_records``); a boundary type."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    """Stable id, shown to the model and passed back to ``open_page``."""
    text: str
    """The document's full text."""
    title: str = ""
    """Its title; empty means the text's first non-empty line."""
    url: str | None = None
    """Where it came from, if anywhere."""


def tokenize(text: str) -> list[str]:
    """Lowercased word tokens without English stopwords."""
    stop = _stopwords()
    return [word for word in WORD.findall(text.lower()) if word not in stop]


@functools.cache
def _stopwords() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN  # bm25s is slow to import: first use only

    return frozenset(STOPWORDS_EN)


def first_line(text: str) -> str:
    """The first non-empty line, without Markdown heading marks, cut to TITLE_CHARS."""
    for line in text.splitlines():
        if line.strip():
            return line.strip().lstrip("#").strip()[:TITLE_CHARS]
    return ""


class _HtmlText(HTMLParser):
    """Visible text of an HTML page (scripts and styles dropped) and its <title>."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title = ""
        self.skipping: list[str] = []
        self.in_title = False

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag == "title":
            self.in_title = True
        elif tag in HTML_SKIPPED:
            self.skipping.append(tag)
        if tag in HTML_BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        elif self.skipping and tag == self.skipping[-1]:
            self.skipping.pop()
        if tag in HTML_BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title += data
        elif not self.skipping:
            self.parts.append(data)


def html_to_text(html: str) -> tuple[str, str]:
    """``(title, text)`` of an HTML page: one line per block, blank runs squeezed."""
    parser = _HtmlText()
    parser.feed(html)
    parser.close()
    lines = (" ".join(line.split()) for line in "".join(parser.parts).splitlines())
    text = "\n".join(line for line in lines if line)
    return " ".join(parser.title.split())[:TITLE_CHARS], text


def read_document(path: Path, doc_id: str) -> Document:
    """One file of a folder as a :class:`Document`."""
    raw = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix.lower() in (".html", ".htm"):
        title, text = html_to_text(raw)
        return Document(doc_id, title or first_line(text), text)
    return Document(doc_id, first_line(raw), raw)


class DocumentIndex:
    """Documents and a BM25 index over them."""

    def __init__(self, documents: Iterable[Document]) -> None:
        """Index ``documents`` (ids must be unique; at least one document)."""
        import bm25s  # slow to import (over a second): only when an index is built

        self.documents = sorted(documents, key=lambda doc: doc.id)
        if not self.documents:
            raise ValueError("DocumentIndex: no documents to index")
        ids = [doc.id for doc in self.documents]
        duplicates = sorted({i for i, j in itertools.pairwise(ids) if i == j})
        if duplicates:
            raise ValueError(f"DocumentIndex: duplicate document ids {duplicates[:5]}")
        self._by_id = {doc.id: doc for doc in self.documents}
        self._bm25 = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
        corpus = [tokenize(f"{doc.title}\n{doc.text}") for doc in self.documents]
        self._bm25.index(corpus, show_progress=False)

    @classmethod
    def from_folder(cls, folder: Path) -> DocumentIndex:
        """Every .txt/.md/.html file under ``folder``; id = its path relative to ``folder``
        (a file that leads outside ``folder``, through a symbolic link, is refused)."""
        folder = Path(folder)
        if not folder.is_dir():
            raise FileNotFoundError(f"DocumentIndex: {folder} is not a folder")
        paths = sorted(p for p in folder.rglob("*") if p.suffix.lower() in FOLDER_SUFFIXES)
        if (out := leads_outside(paths, folder)) is not None:  # never into the model's view
            raise ValueError(f"DocumentIndex: {out} leads outside {folder} (to "
                             f"{out.resolve()}); refused")  # fmt: skip
        docs = [read_document(p, p.relative_to(folder).as_posix()) for p in paths if p.is_file()]
        if not docs:
            raise ValueError(f"DocumentIndex: no {'/'.join(FOLDER_SUFFIXES)} files in {folder}")
        return cls(docs)

    @classmethod
    def from_jsonl(cls, path: Path) -> DocumentIndex:
        """The documents of a JSON Lines file, one ``{"id", "text", "title"?, "url"?}`` per
        line (read as untrusted input: :func:`evalbench.records.iter_jsonl`).

        Raises:
            ValueError: ``documents: <file>:<line>: <what is wrong>`` (not UTF-8, not JSON,
                not a document, an id already used), or no document at all.
        """
        records: list[DocumentRecord] = []
        lines: dict[str, int] = {}
        try:
            for number, row in iter_jsonl(path, error=ValueError):
                try:
                    record = DocumentRecord.model_validate(row)
                except ValidationError as exc:
                    raise ValueError(f"{path}:{number}: {format_validation_error(exc)}") from None
                if record.id in lines:
                    raise ValueError(
                        f"{path}:{number}: id {record.id!r} already on line {lines[record.id]}"
                    )
                lines[record.id] = number
                records.append(record)
        except ValueError as exc:
            raise ValueError(f"documents: {exc}") from None
        if not records:
            raise ValueError(f"documents: {path}: no documents")
        return cls(Document(r.id, r.title or first_line(r.text), r.text, r.url) for r in records)

    @classmethod
    def from_records(cls, rows: Iterable[Mapping[str, Any]]) -> DocumentIndex:
        """Rows ``{"id", "text", "title"?, "url"?}``; an empty title becomes the first line."""
        records = [DocumentRecord.model_validate(row) for row in rows]
        return cls(Document(r.id, r.title or first_line(r.text), r.text, r.url) for r in records)

    def __len__(self) -> int:
        return len(self.documents)

    def get(self, doc_id: str) -> Document:
        """The document ``doc_id``; an unknown id is an :class:`UnknownDocument`."""
        if doc_id not in self._by_id:
            raise UnknownDocument(f"no document with id {doc_id!r} (ids come from search results)")
        return self._by_id[doc_id]

    def search(self, query: str, k: int = 5) -> list[Hit]:
        """The ``k`` best documents with a positive score, best first, ties by id."""
        import numpy as np

        terms = list(dict.fromkeys(tokenize(query)))  # each query word counts once
        known = [t for t in terms if t in self._bm25.vocab_dict]
        if not known or k < 1:
            return []
        scores = np.asarray(self._bm25.get_scores(known), dtype=float)
        order = np.lexsort((np.arange(len(scores)), -scores))  # documents are sorted by id
        best = [int(i) for i in order[:k] if scores[i] > 0]
        return [self._hit(self.documents[i], float(scores[i]), known) for i in best]

    def _hit(self, doc: Document, score: float, terms: Sequence[str]) -> Hit:
        return Hit(doc.id, doc.title, round(score, 4), snippet(doc.text, terms))


def snippet(text: str, terms: Sequence[str], width: int = SNIPPET_CHARS) -> str:
    """About ``width`` characters of ``text`` around the first query term, one line."""
    pattern = r"\b(?:" + "|".join(map(re.escape, terms)) + r")\b"
    match = re.search(pattern, text, flags=re.IGNORECASE) if terms else None
    start = max(0, (match.start() if match else 0) - width // 3)
    end = min(len(text), start + width)
    body = " ".join(text[start:end].split())
    return ("…" if start > 0 else "") + body + ("…" if end < len(text) else "")
