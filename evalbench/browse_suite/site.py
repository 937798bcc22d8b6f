"""The offline browse suite's web: a real HTTP server on 127.0.0.1 serving evalbench's own sites.

:class:`LocalWeb` serves the folder ``evalbench/demo/browse_suite/site`` (pages written for the
project) plus a few dynamic routes built from ``evalbench/demo/browse_suite/data/*.json``:

- ``library/search?q=&page=`` and ``library/book?id=``: a catalogue search with paged results;
- ``library/events?page=&category=``: a paged events listing with a category filter (a form);
- ``observatory/sightings?page=``: a paged log, newest first;
- ``shop/stores-result?region=``: the result page of the store-finder form;
- the pages named in ``data/changing.json``: their content changes between visits.

Every URL lives under a **session** prefix, ``/s/<session>/<site>/<page>``, and pages link to
each other by relative URLs, so one server hosts every task of a run at once. A changing page
shows its k-th state on the k-th visit within a session (the last state from then on): the
content is a pure function of (session, page, visit number), so runs are deterministic, and
:meth:`LocalWeb.reset` starts a session over (the study resets each task's session before it
runs). Scripts (level 3) run only in a real browser; a plain HTTP client sees the
``<noscript>`` text.

Use it as a context manager: it binds a free port on 127.0.0.1, serves in a thread, and on
exit shuts down, closes the listening socket and joins the thread. :func:`scoped` runs an
agent's task inside its session with evalbench's browsing tools pointed at it
(:func:`evalbench.agents.tools.web.web_scope`), under the virtual host :data:`VIRTUAL_HOST`
so prompts (and so the response cache keys) do not depend on the port.
"""

from __future__ import annotations

import html
import json
import re
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, NamedTuple

from evalbench.agents.tools.web import web_scope

SITE_DIR = Path(__file__).resolve().parents[1] / "demo" / "browse_suite" / "site"
DATA_DIR = SITE_DIR.parent / "data"
CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".json": "application/json; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
}


VIRTUAL_HOST = "cove.evalbench.test"
"""The host name agents see for the local web (``.test`` never resolves on the internet);
the tools send its requests to the real 127.0.0.1 port, so prompts are the same every run."""


class Served(NamedTuple):
    """One request the server answered (for tests and for pages-opened counts)."""

    session: str
    path: str
    query: str
    status: int
    visit: int
    """For a changing page: which visit of this session it was (else 0)."""


def load_changing(data_dir: Path = DATA_DIR) -> dict[str, list[dict[str, Any]]]:
    """Page path -> its states, one per visit (``data/changing.json``)."""
    return json.loads((data_dir / "changing.json").read_text(encoding="utf-8"))


class LocalWeb:
    """The suite's web server (see the module docstring).

    Args:
        site_dir: the static pages.
        data_dir: the JSON data of the dynamic routes and changing pages.
    """

    def __init__(self, site_dir: Path = SITE_DIR, data_dir: Path = DATA_DIR) -> None:
        self.site_dir = site_dir.resolve()
        self.data = {p.stem: json.loads(p.read_text("utf-8")) for p in data_dir.glob("*.json")}
        self.changing: dict[str, list[dict[str, Any]]] = self.data.get("changing", {})
        self.log: list[Served] = []
        self._visits: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._routes: dict[str, Callable[[dict[str, str]], str]] = {
            "library/search": self._library_search,
            "library/book": self._library_book,
            "library/events": self._library_events,
            "observatory/sightings": self._sightings,
            "shop/stores-result": self._stores,
        }

    # --- lifecycle --------------------------------------------------------------------------

    def start(self) -> LocalWeb:
        """Bind a free port on 127.0.0.1 and serve in a daemon thread."""
        if self._server is not None:
            return self
        web = self

        class Handler(_Handler):
            owner = web

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        self._server = server
        # shutdown() waits for serve_forever's next poll (every 0.5 s by default)
        self._thread = threading.Thread(
            target=server.serve_forever, args=(0.05,), name="browse-suite-web"
        )
        self._thread.daemon = True
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, close the listening socket and join the thread (idempotent)."""
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None

    def __enter__(self) -> LocalWeb:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound port (the server must be running)."""
        if self._server is None:
            raise RuntimeError("the local web is not running")
        return int(self._server.server_address[1])

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.port}"

    def session_root(self, session: str) -> str:
        """The base URL of a session (ends with ``/``); pages are relative to it."""
        return f"{self.origin}/s/{urllib.parse.quote(session, safe='')}/"

    def url(self, session: str, path: str) -> str:
        """The absolute URL of ``path`` (e.g. ``library/index.html``) within ``session``."""
        return self.session_root(session) + path.lstrip("/")

    def root_for(self, session: str, virtual: bool) -> str:
        """A session's base URL as an agent sees it: under :data:`VIRTUAL_HOST` (evalbench's
        own tools map it to this server) or the real 127.0.0.1 address (other agents)."""
        return f"http://{VIRTUAL_HOST}/s/{session}/" if virtual else self.session_root(session)

    def reset(self, session: str) -> None:
        """Forget a session's visits: its changing pages start again at their first state."""
        with self._lock:
            for key in [k for k in self._visits if k[0] == session]:
                del self._visits[key]

    def served(self, session: str) -> list[Served]:
        """The requests answered for ``session``, in order."""
        with self._lock:
            return [s for s in self.log if s.session == session]

    # --- routing ----------------------------------------------------------------------------

    def respond(self, raw_path: str) -> tuple[int, str, bytes, Served]:
        """Status, content type and body for a request path (``/s/<session>/<page>?query``)."""
        parsed = urllib.parse.urlsplit(raw_path)
        parts = parsed.path.split("/", 3)
        if len(parts) < 4 or parts[1] != "s" or not parts[2]:
            return self._answer("", parsed.path, parsed.query, 404, _not_found(parsed.path))
        session, page = urllib.parse.unquote(parts[2]), urllib.parse.unquote(parts[3])
        page = page or "index.html"
        query = {k: v[-1] for k, v in urllib.parse.parse_qs(parsed.query).items()}
        if page.endswith("/"):
            page += "index.html"
        if page in self.changing:
            visit = self._visit(session, page)
            body = self._changing(page, visit)
            return self._answer(session, page, parsed.query, 200, body, visit=visit)
        if page in self._routes:
            try:
                body = self._routes[page](query)
            except LookupError as missing:
                return self._answer(session, page, parsed.query, 404, _not_found(str(missing)))
            return self._answer(session, page, parsed.query, 200, body)
        return self._static(session, page, parsed.query)

    def _answer(
        self,
        session: str,
        page: str,
        query: str,
        status: int,
        body: str | bytes,
        *,
        kind: str = CONTENT_TYPES[".html"],
        visit: int = 0,
    ) -> tuple[int, str, bytes, Served]:
        served = Served(session, page, query, status, visit)
        with self._lock:
            self.log.append(served)
        data = body.encode("utf-8") if isinstance(body, str) else body
        return status, kind, data, served

    def _static(self, session: str, page: str, query: str) -> tuple[int, str, bytes, Served]:
        path = (self.site_dir / page).resolve()
        inside = path.is_relative_to(self.site_dir)
        if not inside or not path.is_file() or path.suffix not in CONTENT_TYPES:
            return self._answer(session, page, query, 404, _not_found(page))
        body = path.read_bytes()
        return self._answer(session, page, query, 200, body, kind=CONTENT_TYPES[path.suffix])

    def _visit(self, session: str, page: str) -> int:
        with self._lock:
            count = self._visits.get((session, page), 0) + 1
            self._visits[(session, page)] = count
            return count

    def state(self, page: str, visit: int) -> dict[str, Any]:
        """The state a changing page shows on visit ``visit`` (1-based; the last one after)."""
        states = self.changing[page]
        return states[min(visit, len(states)) - 1]

    def _changing(self, page: str, visit: int) -> str:
        template = (self.site_dir / page).read_text(encoding="utf-8")
        for name, value in self.state(page, visit).items():
            template = template.replace("{{" + name + "}}", _fragment(value))
        return template

    # --- dynamic routes ---------------------------------------------------------------------

    def _library_search(self, query: dict[str, str]) -> str:
        catalog = self.data["library_catalog"]
        form = (
            '<form role="search" action="search" method="get"><label>Search the catalogue '
            f'<input type="search" name="q" value="{_e(query.get("q", ""))}"></label>'
            '<button type="submit">Search</button></form>'
        )
        terms = query.get("q", "").lower().split()
        if not terms:
            return _shell(
                "Catalogue search — Alder Cove Public Library",
                "Catalogue search",
                form + "<p>Type words from a title or an author's name.</p>",
            )
        hits = [b for b in catalog["books"] if all(t in _book_words(b) for t in terms)]
        rows = [
            f'<li><a href="book?id={_e(b["id"])}">{_e(b["title"])}</a> — {_e(b["author"])} '
            f"({b['year']})</li>"
            for b in hits
        ]
        body, pager = _paged(rows, query, catalog["per_page"], {"q": query.get("q", "")}, "search")
        summary = (
            f"<p>{len(hits)} result{'s' if len(hits) != 1 else ''} for “{_e(query['q'])}”.</p>"
        )
        return _shell(
            "Search results — Alder Cove Public Library",
            "Catalogue search",
            form + summary + f"<ul>{body}</ul>" + pager,
        )

    def _library_book(self, query: dict[str, str]) -> str:
        books = {b["id"]: b for b in self.data["library_catalog"]["books"]}
        if query.get("id") not in books:
            raise LookupError(f"no book {query.get('id')!r}")
        b = books[query["id"]]
        rows = [
            ("Title", b["title"]),
            ("Author", b["author"]),
            ("Published", b["year"]),
            ("Shelf code", b["shelf"]),
            ("Copies available", b["copies"]),
        ]
        table = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows)
        nav = '<p><a href="search">New search</a> | <a href="index.html">Library home</a></p>'
        return _shell(
            f"{b['title']} — Alder Cove Public Library", b["title"], f"<table>{table}</table>{nav}"
        )

    def _library_events(self, query: dict[str, str]) -> str:
        data = self.data["library_events"]
        category = query.get("category", "")
        if category and category not in data["categories"]:
            raise LookupError(f"no event category {category!r}")
        events = [e for e in data["events"] if not category or e["category"] == category]
        options = "".join(
            f'<option value="{_e(c)}"{" selected" if c == category else ""}>'
            f"{_e(c or 'All categories')}</option>"
            for c in ["", *data["categories"]]
        )
        form = (
            '<form action="events" method="get"><label>Category <select name="category">'
            f'{options}</select></label><button type="submit">Filter</button></form>'
        )
        rows = [
            f"<tr><td>{_e(e['date'])}</td><td>{_e(e['title'])}</td><td>{_e(e['category'])}</td>"
            f"<td>{_e(e['room'])}</td></tr>"
            for e in events
        ]
        keep = {"category": category} if category else {}
        body, pager = _paged(rows, query, data["per_page"], keep, "events")
        head = "<tr><th>Date</th><th>Event</th><th>Category</th><th>Room</th></tr>"
        shown = f"<p>{len(events)} events{' in ' + _e(category) if category else ''}.</p>"
        return _shell(
            "Events — Alder Cove Public Library",
            "What's on",
            form + shown + f"<table>{head}{body}</table>" + pager,
        )

    def _sightings(self, query: dict[str, str]) -> str:
        data = self.data["observatory_sightings"]
        rows = [
            f"<tr><td>{_e(s['date'])}</td><td>{_e(s['species'])}</td><td>{s['count']}</td>"
            f"<td>{_e(s['observer'])}</td></tr>"
            for s in data["sightings"]
        ]
        body, pager = _paged(rows, query, data["per_page"], {}, "sightings")
        head = "<tr><th>Date</th><th>Species</th><th>Birds</th><th>Observer</th></tr>"
        intro = "<p>Notable sightings of the 2024 season, newest first.</p>"
        return _shell(
            "Sightings log — Kestrel Ridge Bird Observatory",
            "Sightings log, 2024",
            intro + f"<table>{head}{body}</table>" + pager,
        )

    def _stores(self, query: dict[str, str]) -> str:
        data = self.data["shop_stores"]
        region = query.get("region", "")
        if region not in data["stores"]:
            raise LookupError(f"no region {region!r}")
        blocks = []
        for store in data["stores"][region]:
            hours = "".join(f"<tr><td>{_e(d)}</td><td>{_e(h)}</td></tr>" for d, h in store["hours"])
            blocks.append(
                f"<h2>{_e(store['name'])}</h2><p>{_e(store['address'])}</p><table>{hours}</table>"
            )
        back = '<p><a href="stores.html">Choose another region</a></p>'
        return _shell(
            "Stores — Tinker & Lathe Hardware",
            f"Stores in the {data['regions'][region]} region",
            "".join(blocks) + back,
        )


# --- agents on the local web ----------------------------------------------------------


def session_for(system: str, task_id: str, attempt: int = 0) -> str:
    """The web session of one system on one task (its changing pages start over)."""
    return f"{re.sub(r'[^A-Za-z0-9_-]', '-', system)}.{task_id}.{attempt}"


def scoped(backend: Any, web: LocalWeb, system: str, virtual: bool) -> Any:
    """``backend`` with each task run inside its own web session (reset first)."""

    async def run_task(item: Any, recorder: Any, workdir: Path) -> Any:
        session = session_for(system, item.task.id, item.attempt)
        web.reset(session)
        root = web.root_for(session, virtual)
        aliases = {VIRTUAL_HOST: f"127.0.0.1:{web.port}"}
        with web_scope(root, aliases=aliases):
            return await backend(item, recorder, workdir)

    if hasattr(backend, "aclose"):
        run_task.aclose = backend.aclose  # type: ignore[attr-defined]
    return run_task


def site_check(web: LocalWeb, tasks: Sequence[Any]) -> list[dict[str, Any]]:
    """GET every task's start page in a throwaway session: rows ``task_id, start, status``.

    Raises:
        RuntimeError: a start page does not serve (the suite is broken, not the agents).
    """
    rows = []
    for task in tasks:
        try:
            with urllib.request.urlopen(web.url("site-check", task.start), timeout=10) as resp:
                status = resp.status
        except urllib.error.HTTPError as exc:
            status = exc.code
        rows.append({"task_id": task.id, "start": task.start, "status": status})
    bad = [r for r in rows if r["status"] != 200]
    if bad:
        raise RuntimeError(f"suite site check: start pages that do not serve: {bad}")
    web.reset("site-check")
    return rows


class _Handler(BaseHTTPRequestHandler):
    owner: LocalWeb
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        status, kind, body, _ = self.owner.respond(self.path)
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return  # the server keeps its own log (LocalWeb.log)


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _fragment(value: Any) -> str:
    """A changing page's value as HTML: rows of cells, list items, or escaped text."""
    if isinstance(value, list) and value and isinstance(value[0], list):
        return "\n".join(
            "<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>" for row in value
        )
    if isinstance(value, list):
        return "\n".join(f"<li>{_e(v)}</li>" for v in value)
    return _e(value)


def _book_words(book: dict[str, Any]) -> str:
    return f"{book['title']} {book['author']}".lower()


def _page_number(query: dict[str, str], pages: int) -> int:
    raw = query.get("page", "1")
    if not raw.isdigit() or not 1 <= int(raw) <= max(pages, 1):
        raise LookupError(f"no page {raw!r} (pages 1-{max(pages, 1)})")
    return int(raw)


def _paged(
    rows: list[str], query: dict[str, str], per_page: int, keep: dict[str, str], action: str
) -> tuple[str, str]:
    """The rows of the requested page and the pager links (previous, page n of m, next)."""
    pages = max(1, -(-len(rows) // per_page))
    number = _page_number(query, pages)
    body = "".join(rows[(number - 1) * per_page : number * per_page])

    def link(n: int, label: str) -> str:
        params = urllib.parse.urlencode({**keep, "page": n})
        return f'<a href="{action}?{_e(params)}">{label}</a>'

    parts = [f"Page {number} of {pages}"]
    if number > 1:
        parts.insert(0, link(number - 1, "« Previous"))
    if number < pages:
        parts.append(link(number + 1, "Next »"))
    return body, f'<p class="pager">{" | ".join(parts)}</p>'


def _shell(title: str, heading: str, body: str) -> str:
    return (
        f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{_e(title)}'
        f"</title></head>\n<body>\n<header><h1>{_e(heading)}</h1></header>\n<main>\n{body}\n"
        "</main>\n</body></html>\n"
    )


def _not_found(what: str) -> str:
    return _shell("Not found", "Not found", f"<p>Nothing here: {_e(what)}</p>")
