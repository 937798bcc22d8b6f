"""Browsing tools: ``open_url``, ``search_site``, ``submit_form`` (plain HTTP) and ``browser``
(headless Chromium through Playwright, for pages whose content only appears when scripts run).

Where they may go is set per task by :func:`web_scope` (a context variable the study sets
around each task; ``asyncio.to_thread`` carries it into the tool's thread):

- ``base_url``: the task's site root; a URL without a scheme (``/shop/index.html``,
  ``shop/index.html``) is resolved against it;
- ``allowed_hosts``: the hosts a tool may contact; by default only the loopback addresses, so
  the offline suite can never reach the internet (the browser aborts every other request too);
- ``aliases``: virtual host -> real ``host:port`` (e.g. ``cove.evalbench.test`` ->
  ``127.0.0.1:43117``): the agent only ever sees the virtual URL, the tools send the request to
  the real server. A study serving its web on a free port keeps the prompts, and so the
  response cache keys, the same from run to run (a rerun replays the cached steps).

A page comes back as text: its title and URL, the visible text (table rows as ``a | b | c``,
list items as ``- x``, headings as ``## x``), the numbered links (absolute URLs) and the forms
with their fields, a window of ``char_budget`` characters at a time (``start`` asks for the
next window, read from the copy fetched by the call with ``start`` 0, so paging through a page
that changes between visits does not count as a new visit). Without scripts, a page shows its
``<noscript>`` text, as a browser with scripts off would.

``browser`` drives the system's Chromium (``/usr/bin/chromium`` or ``chromium`` on PATH;
Playwright's own browser download is never used): headless, no sandbox, no GPU, no QUIC,
no background networking, a fresh temporary profile per call. It loads the page, waits for the
network to go idle (at most 5 s; a page still busy says so), optionally clicks one element (a
Playwright selector such as ``text=Show more``), and reads ``document.body.innerText`` and the
links.
"""

from __future__ import annotations

import contextlib
import contextvars
import ipaddress
import shutil
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, NamedTuple

from evalbench import processes

from .base import Tool, ToolContext, ToolError, function_schema, page, page_size

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
MAX_BYTES = 2_000_000  # a page larger than this is cut (the tool says so)
FETCH_TIMEOUT_S = 15.0
IDLE_WAIT_MS = 5000  # the browser waits this long at most for scripts' requests to finish
TEXT_TYPES = ("text/html", "text/plain", "application/json", "application/xhtml+xml")
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
_SKIPPED = frozenset({"script", "style", "template", "head", "svg"})
_BLOCKS = frozenset(
    {
        "p",
        "div",
        "br",
        "tr",
        "ul",
        "ol",
        "table",
        "section",
        "article",
        "header",
        "footer",
        "main",
        "nav",
        "form",
        "pre",
        "blockquote",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "li",
        "dl",
        "dt",
        "dd",
        "noscript",
        "label",
        "button",
        "select",
        "option",
    }
)


@dataclass
class WebScope:
    """Where the browsing tools of one task may go, and the copies they fetched."""

    base_url: str | None = None
    allowed_hosts: frozenset[str] = LOOPBACK
    aliases: dict[str, str] = field(default_factory=dict)
    """Virtual host (as the agent sees it) -> the real ``host:port`` the tools contact."""
    timeout_s: float = FETCH_TIMEOUT_S
    fetched: dict[str, str] = field(default_factory=dict)
    """Formatted page text by (tool, URL) key: what ``start > 0`` pages through."""


_SCOPE: contextvars.ContextVar[WebScope | None] = contextvars.ContextVar("web_scope", default=None)


@contextlib.contextmanager
def web_scope(
    base_url: str | None = None, allowed_hosts: frozenset[str] = LOOPBACK, **options: Any
) -> Iterator[WebScope]:
    """Set the browsing scope for the code inside (one task); restores the previous one."""
    scope = WebScope(base_url, frozenset(allowed_hosts), **options)
    token = _SCOPE.set(scope)
    try:
        yield scope
    finally:
        _SCOPE.reset(token)


def current_scope() -> WebScope:
    """The task's scope (a default, loopback-only scope when none was set)."""
    return _SCOPE.get() or WebScope()


def resolve_url(url: str, scope: WebScope) -> str:
    """An absolute http(s) URL for ``url`` (relative to the task's site), checked against
    the allowed hosts.

    Raises:
        ToolError: not http(s), no site to resolve a relative URL against, or a host the
            scope does not allow.
    """
    url = url.strip()
    parts = urllib.parse.urlsplit(url)
    if not parts.scheme:
        if scope.base_url is None:
            raise ToolError(f"{url!r} is not an absolute URL and this task has no site")
        url = urllib.parse.urljoin(scope.base_url, url.lstrip("/"))
        parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise ToolError(f"only http(s) URLs can be opened, not {parts.scheme!r}")
    host = (parts.hostname or "").lower()
    if host not in scope.aliases and not _allowed(host, scope.allowed_hosts):
        allowed = ", ".join(sorted(scope.allowed_hosts))
        raise ToolError(f"host {host!r} is not reachable from this task (allowed: {allowed})")
    return url


def real_url(url: str, scope: WebScope) -> str:
    """``url`` with a virtual host replaced by the real ``host:port`` it stands for."""
    parts = urllib.parse.urlsplit(url)
    real = scope.aliases.get((parts.hostname or "").lower())
    return urllib.parse.urlunsplit(parts._replace(netloc=real)) if real else url


def virtual_url(url: str, scope: WebScope) -> str:
    """The inverse of :func:`real_url` (what the agent is shown)."""
    parts = urllib.parse.urlsplit(url)
    for virtual, real in scope.aliases.items():
        if parts.netloc == real:
            return urllib.parse.urlunsplit(parts._replace(netloc=virtual))
    return url


def _allowed(host: str, allowed: frozenset[str]) -> bool:
    if host in allowed or "*" in allowed:
        return True
    with contextlib.suppress(ValueError):
        return ipaddress.ip_address(host).is_loopback and bool(allowed & LOOPBACK)
    return False


# --- HTML to text ------------------------------------------------------------------------


class Form(NamedTuple):
    """A form on a page: where it goes and its fields (name -> default value, options)."""

    action: str
    method: str
    fields: dict[str, str]
    options: dict[str, list[str]]
    search: bool
    """Marked as a search form (``role="search"`` or a ``type="search"`` input)."""


class Page(NamedTuple):
    """A fetched page as the tools show it."""

    url: str
    title: str
    text: str
    links: list[tuple[str, str]]
    forms: list[Form]


class _PageParser(HTMLParser):
    """Visible text (no scripts; ``<noscript>`` shown), links and forms of an HTML page."""

    def __init__(self, url: str) -> None:
        super().__init__(convert_charrefs=True)
        self.url = url
        self.parts: list[str] = []
        self.title = ""
        self.links: list[tuple[str, str]] = []
        self.forms: list[Form] = []
        self._skip: list[str] = []
        self._in_title = False
        self._link: tuple[str, list[str]] | None = None
        self._select: str | None = None
        self._cells = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "body":  # a head left open (no </head>) ends here
            self._skip = [t for t in self._skip if t != "head"]
        if tag == "title":
            self._in_title = True
        elif tag in _SKIPPED:
            self._skip.append(tag)
        if self._skip:
            return
        self._block(tag)
        if tag in ("td", "th"):
            self.parts.append(" | " if self._cells else "")
            self._cells += 1
        elif tag == "li":
            self.parts.append("- ")
        elif tag in ("h1", "h2", "h3", "h4"):
            self.parts.append("#" * int(tag[1]) + " ")
        elif tag == "a" and a.get("href"):
            self._link = (urllib.parse.urljoin(self.url, a["href"]), [])
        else:
            self._form_tag(tag, a)

    def _block(self, tag: str) -> None:
        if tag in _BLOCKS:
            self.parts.append("\n")
        if tag == "tr":
            self._cells = 0

    def _form_tag(self, tag: str, a: dict[str, str]) -> None:
        if tag == "form":
            action = urllib.parse.urljoin(self.url, a.get("action") or self.url)
            search = a.get("role") == "search"
            self.forms.append(Form(action, (a.get("method") or "get").lower(), {}, {}, search))
        elif not self.forms:
            return
        form = self.forms[-1]
        name = a.get("name", "")
        if tag == "input" and name and a.get("type", "text") not in ("submit", "button", "image"):
            form.fields[name] = a.get("value", "")
            if a.get("type") == "search":
                self.forms[-1] = form._replace(search=True)
        elif tag in ("select", "textarea") and name:
            form.fields[name] = ""
            self._select = name if tag == "select" else None
            form.options.setdefault(name, [])
        elif tag == "option" and self._select is not None:
            value = a.get("value", "")
            form.options[self._select].append(value)
            if "selected" in a or len(form.options[self._select]) == 1:
                form.fields[self._select] = value

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif self._skip and tag == self._skip[-1]:
            self._skip.pop()
        elif not self._skip:
            if tag == "a" and self._link is not None:
                href, words = self._link
                self.links.append((" ".join("".join(words).split()), href))
                self._link = None
            elif tag == "select":
                self._select = None
            if tag in _BLOCKS:
                self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif not self._skip:
            self.parts.append(data)
            if self._link is not None:
                self._link[1].append(data)


def parse_page(url: str, body: str) -> Page:
    """A page's title, text (one line per block, table cells joined by ``|``), links, forms."""
    parser = _PageParser(url)
    parser.feed(body)
    parser.close()
    lines = (" ".join(line.split()) for line in "".join(parser.parts).splitlines())
    text = "\n".join(line for line in lines if line.strip(" |-#"))
    return Page(url, " ".join(parser.title.split()), text, parser.links, parser.forms)


def format_page(p: Page) -> str:
    """The text a tool returns for a page (see the module docstring)."""
    out = [f"URL: {p.url}", f"Title: {p.title or '(none)'}", "", p.text or "(no visible text)"]
    if p.links:
        out += ["", "Links:"] + [
            f"[{i}] {text or '(no text)'} -> {href}"
            for i, (text, href) in enumerate(p.links, start=1)
        ]
    for i, form in enumerate(p.forms, start=1):
        fields = ", ".join(
            f"{name}"
            + (
                f" (one of: {' | '.join(form.options[name])})"
                if name in form.options
                else f" (default {value!r})"
                if value
                else ""
            )
            for name, value in form.fields.items()
        )
        kind = " search" if form.search else ""
        out.append(
            f"[form {i}{kind}] {form.method.upper()} {form.action} — fields: {fields or 'none'}"
        )
    return "\n".join(out)


# --- plain HTTP ----------------------------------------------------------------------------


def fetch(url: str, scope: WebScope, data: bytes | None = None) -> Page:
    """GET (or POST ``data``) ``url`` within the scope and parse it.

    Raises:
        ToolError: refused host, HTTP error, timeout, or a type that is not text.
    """
    url = resolve_url(url, scope)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never a proxy
    target = real_url(url, scope)
    request = urllib.request.Request(target, data=data, headers={"User-Agent": "evalbench-agent"})
    try:
        with opener.open(request, timeout=scope.timeout_s) as response:
            kind = response.headers.get_content_type()
            charset = response.headers.get_content_charset() or "utf-8"
            raw = response.read(MAX_BYTES + 1)
            final = virtual_url(response.geturl(), scope)
    except urllib.error.HTTPError as error:
        raise ToolError(f"HTTP {error.code} for {url}") from None
    except (urllib.error.URLError, TimeoutError, OSError) as error:
        reason = getattr(error, "reason", error)
        raise ToolError(f"could not open {url}: {reason}") from None
    if kind not in TEXT_TYPES:
        raise ToolError(f"{url} is {kind}, not a page of text")
    body = raw[:MAX_BYTES].decode(charset, errors="replace")
    if kind in ("text/html", "application/xhtml+xml"):
        result = parse_page(final, body)
    else:
        result = Page(final, "", body, [], [])
    if len(raw) > MAX_BYTES:
        result = result._replace(text=result.text + f"\n[page cut at {MAX_BYTES:,d} bytes]")
    return result


def _paged(ctx: ToolContext, key: str, start: int, load: Any, again: str) -> str:
    """Fetch (``start`` 0) or reuse (``start`` > 0) the formatted page, then one window."""
    scope = current_scope()
    if start == 0 or key not in scope.fetched:
        scope.fetched[key] = load()
    text = scope.fetched[key]
    return page(key.split(" ", 1)[1], text, start, page_size(ctx, None), again)


def _run_open_url(arguments: dict[str, Any], ctx: ToolContext) -> str:
    url = resolve_url(arguments["url"], current_scope())
    again = f"open_url with url={url!r} and start={{end}}"
    return _paged(
        ctx,
        f"open_url {url}",
        arguments.get("start", 0),
        lambda: format_page(fetch(url, current_scope())),
        again,
    )


def pick_form(p: Page, index: int | None, *, search: bool = False) -> Form:
    """Form ``index`` (1-based) of a page, or its first search form when ``search``."""
    if not p.forms:
        raise ToolError(f"{p.url} has no form")
    if index is not None:
        if not 1 <= index <= len(p.forms):
            raise ToolError(f"{p.url} has {len(p.forms)} form(s); form={index} does not exist")
        return p.forms[index - 1]
    if search:
        return next((f for f in p.forms if f.search), p.forms[0])
    return p.forms[0]


def submit(form: Form, values: dict[str, Any], scope: WebScope) -> Page:
    """Submit ``form`` with its defaults overridden by ``values`` (GET query or POST body).

    Raises:
        ToolError: a field the form does not have, or a value not among a select's options.
    """
    unknown = sorted(set(values) - set(form.fields))
    if unknown:
        known = ", ".join(form.fields) or "none"
        raise ToolError(f"the form has no field(s) {', '.join(unknown)} (fields: {known})")
    filled = {**form.fields, **{k: str(v) for k, v in values.items()}}
    for name, value in values.items():
        options = form.options.get(name)
        if options and str(value) not in options:
            raise ToolError(f"{name}={value!r} is not one of the options: {' | '.join(options)}")
    encoded = urllib.parse.urlencode(filled)
    if form.method == "post":
        return fetch(form.action, scope, data=encoded.encode())
    parts = urllib.parse.urlsplit(form.action)
    return fetch(urllib.parse.urlunsplit(parts._replace(query=encoded, fragment="")), scope)


def _run_search_site(arguments: dict[str, Any], ctx: ToolContext) -> str:
    scope = current_scope()
    start_page = fetch(arguments["url"], scope)
    form = pick_form(start_page, None, search=True)
    text_fields = [n for n, v in form.fields.items() if n not in form.options]
    if not text_fields:
        raise ToolError(f"the form on {start_page.url} has no text field to type a query into")
    result = submit(form, {text_fields[0]: arguments["query"]}, scope)
    return page(
        result.url,
        format_page(result),
        0,
        page_size(ctx, None),
        f"open_url with url={result.url!r} and start={{end}}",
    )


def _run_submit_form(arguments: dict[str, Any], ctx: ToolContext) -> str:
    scope = current_scope()
    form = pick_form(fetch(arguments["url"], scope), arguments.get("form", 1))
    result = submit(form, arguments.get("fields", {}), scope)
    return page(
        result.url,
        format_page(result),
        0,
        page_size(ctx, None),
        f"open_url with url={result.url!r} and start={{end}}",
    )


# --- headless Chromium ------------------------------------------------------------------------


def chromium_path() -> str:
    """The system's Chromium.

    Raises:
        ToolError: no Chromium (``apt-get install chromium``; Playwright's download is not used).
    """
    if Path(CHROMIUM).exists():
        return CHROMIUM
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        raise ToolError("browser mode needs the system's Chromium (apt-get install chromium)")
    return found


_LINKS_JS = (
    "() => Array.from(document.querySelectorAll('a[href]'))"
    ".map(a => [(a.innerText || '').trim(), a.href])"
)


def render(url: str, scope: WebScope, click: str | None = None, wait_ms: int = 300) -> Page:
    """The page as headless Chromium shows it after its scripts ran (and after ``click``).

    Raises:
        ToolError: Playwright or Chromium missing, a refused host, a navigation error or
            timeout, or ``click`` matching nothing clickable.
    """
    url = resolve_url(url, scope)
    try:
        from playwright.sync_api import Error as PlaywrightError
        from playwright.sync_api import sync_playwright
    except ImportError:
        raise ToolError(
            "browser mode needs the playwright package (pip install playwright)"
        ) from None
    executable = chromium_path()
    timeout_ms = scope.timeout_s * 1000
    processes.lifeline()  # Playwright's driver and Chromium carry the mark: they die with us
    with (
        processes.scratch("evalbench-chromium-") as profile,
        sync_playwright() as pw,
    ):
        context = pw.chromium.launch_persistent_context(
            str(profile), executable_path=executable, headless=True, args=list(CHROMIUM_ARGS)
        )
        try:
            return _read_rendered(context, url, scope, click, wait_ms, timeout_ms, PlaywrightError)
        finally:
            context.close()


def _read_rendered(
    context: Any,
    url: str,
    scope: WebScope,
    click: str | None,
    wait_ms: int,
    timeout_ms: float,
    error_type: type[Exception],
) -> Page:
    def guard(route: Any) -> None:
        request_url = route.request.url
        host = (urllib.parse.urlsplit(request_url).hostname or "").lower()
        if host in scope.aliases:
            route.continue_(url=real_url(request_url, scope))
        elif request_url.startswith(("data:", "blob:")) or _allowed(host, scope.allowed_hosts):
            route.continue_()
        else:
            route.abort()

    context.route("**/*", guard)
    tab = context.new_page()
    try:
        response = tab.goto(url, wait_until="load", timeout=timeout_ms)
        if response is not None and response.status >= 400:
            raise ToolError(f"HTTP {response.status} for {url}")
        settled = _settle(tab, timeout_ms, error_type)
        if click:
            tab.click(click, timeout=min(timeout_ms, 5000))
            settled = _settle(tab, timeout_ms, error_type)
        tab.wait_for_timeout(wait_ms)
        text = tab.evaluate("() => document.body ? document.body.innerText : ''")
        links = [(" ".join(t.split()), h) for t, h in tab.evaluate(_LINKS_JS)]
        body = "\n".join(filter(None, (_cells(line) for line in str(text).splitlines())))
        if not settled:
            waited = IDLE_WAIT_MS // 1000
            body += f"\n[the page was still loading after {waited} s; this is what it showed]"
        return Page(tab.url, tab.title(), body, links, [])
    except error_type as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ToolError(f"browser: {first}") from None


def _settle(tab: Any, timeout_ms: float, error_type: type[Exception]) -> bool:
    """Wait until the network is idle (at most :data:`IDLE_WAIT_MS`); False if it was not."""
    try:
        tab.wait_for_load_state("networkidle", timeout=min(timeout_ms, IDLE_WAIT_MS))
    except error_type:
        return False
    return True


def _cells(line: str) -> str:
    """One line of ``innerText``: table cells (tab-separated there) joined by `` | ``."""
    cells = [" ".join(cell.split()) for cell in line.split("\t")]
    return " | ".join(cell for cell in cells if cell)


def _run_browser(arguments: dict[str, Any], ctx: ToolContext) -> str:
    url = resolve_url(arguments["url"], current_scope())
    click = arguments.get("click") or None
    key = f"browser {url}" + (f" [click {click}]" if click else "")
    again = f"browser with url={url!r}" + (f", click={click!r}" if click else "")
    return _paged(
        ctx,
        key,
        arguments.get("start", 0),
        lambda: format_page(render(url, current_scope(), click)),
        again + " and start={end}",
    )


_URL = {"type": "string", "description": "an http(s) URL, or a path on the task's site"}
_START = {"type": "integer", "minimum": 0, "description": "first character (default 0)"}

OPEN_URL = Tool(
    name="open_url",
    schema=function_schema(
        "open_url",
        "Open a web page with a plain HTTP GET (no JavaScript) and read its text, its numbered "
        "links and its forms, a window at a time (start asks for the next window of the same "
        "copy; start 0 loads the page again).",
        {"url": _URL, "start": _START},
        ["url"],
    ),
    run=_run_open_url,
)
SEARCH_SITE = Tool(
    name="search_site",
    schema=function_schema(
        "search_site",
        "Type a query into the search form of a page (its first search form) and read the "
        "results page.",
        {"url": _URL, "query": {"type": "string", "description": "what to search for"}},
        ["url", "query"],
    ),
    run=_run_search_site,
)
SUBMIT_FORM = Tool(
    name="submit_form",
    schema=function_schema(
        "submit_form",
        "Fill in and submit a form of a page (fields you leave out keep their defaults; a "
        "select takes one of its listed options) and read the resulting page.",
        {
            "url": _URL,
            "form": {"type": "integer", "minimum": 1, "description": "which form (default 1)"},
            "fields": {"type": "object", "description": "field name -> value"},
        },
        ["url"],
    ),
    run=_run_submit_form,
)
BROWSER = Tool(
    name="browser",
    schema=function_schema(
        "browser",
        "Open a page in a real headless browser that runs its JavaScript (slower than "
        "open_url; use it when a page needs scripts). Optionally click one element first, "
        "e.g. click='text=Show specifications'. Returns the visible text and links.",
        {
            "url": _URL,
            "click": {"type": "string", "description": "a selector to click, e.g. text=More"},
            "start": _START,
        },
        ["url"],
    ),
    run=_run_browser,
)
