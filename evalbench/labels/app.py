"""The annotators' web app: Starlette + uvicorn, one static page, a small JSON API.

``evalbench label serve TASKS`` runs :func:`serve`. The page (``static/index.html`` +
``app.js``) never holds model text in its source: it asks ``/api/item/<n>`` for one item
at a time, as HTML rendered on the server with raw HTML disabled (:mod:`.render`), and
typesets math with the vendored KaTeX. Every response carries a Content-Security-Policy
without inline scripts, so even a missed escape could not run script.

Who is labelling:

- bound to a loopback address (the default, 127.0.0.1): ``/?annotator=<name>`` (any valid
  name, or one of the task's ``annotators``); the Host header must be the loopback
  address (no DNS rebinding);
- bound to any other address, or with ``--require-token``: only ``/?token=<token>``, one
  per declared annotator, an HMAC of the annotator's name with a secret from the
  environment (``EVALBENCH_LABEL_SECRET``; a fresh random one per start when unset). A
  request without a valid token is refused (403).

A submit is a JSON POST (no form posts from other sites: a cross-origin JSON POST needs a
CORS preflight this app never answers) whose ``Origin``, when sent, must be this server.

Every request body, in every mode, is capped (:data:`MAX_BODY`): a declared
``Content-Length`` over the cap is refused (413) before a byte is read, a chunked body is
cut off (413) as soon as it passes the cap, and a body must arrive within
:data:`BODY_TIMEOUT_S` (408), so no client can make the server hold more than the cap per
connection, or hold a connection open with a trickle; at most :data:`MAX_UPLOADS` bodies
are read at once (503 beyond).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import os
import secrets
import socket
import time
from importlib import resources
from pathlib import Path
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from .storage import LabelFileError, LabelRecord, LabelStore, current_labels
from .tasks import Tasks, annotator_order, check_annotator
from .views import LabelRejected, decode_body, item_view, parse_label, task_view

SECRET_ENV = "EVALBENCH_LABEL_SECRET"
"""Environment variable holding the token secret (tokens stay valid across restarts)."""
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "font-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'"
)
"""No inline or foreign scripts; inline styles only for KaTeX's layout; nothing remote."""
MAX_BODY = 2**20
"""Bytes a request body may have (a label is a few KB, a 5,000-character comment included)."""
BODY_TIMEOUT_S = 10.0
"""Seconds a request body may take to arrive once its headers are in."""
HEADER_TIMEOUT_S = 10.0
"""Seconds a request's headers may take to arrive: from the connection, or on a connection
kept alive from the previous answer (more: 408 and the connection closed)."""
MAX_UPLOADS = 32
"""Request bodies read at once; more get 503 (so bodies never hold more than this x MAX_BODY)."""


class ServeRefused(ValueError):
    """The server will not start as asked (e.g. another address without annotators)."""


def static_dir() -> Path:
    """The page, its script and stylesheet, and the vendored KaTeX."""
    return Path(str(resources.files("evalbench") / "labels" / "static"))


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (127.0.0.0/8, ::1) or ``localhost``."""
    if host.strip("[]") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def annotator_tokens(tasks: Tasks, secret: str) -> dict[str, str]:
    """Token -> annotator for every declared annotator: HMAC-SHA256(secret, task + name)."""
    out = {}
    for name in tasks.spec.annotators:
        mac = hmac.new(secret.encode(), f"{tasks.name}\x1f{name}".encode(), hashlib.sha256)
        out[mac.hexdigest()[:32]] = name
    return out


class Access:
    """How requests are identified: names on loopback, tokens elsewhere."""

    def __init__(self, tasks: Tasks, host: str, *, require_token: bool, secret: str | None):
        self.tasks, self.host, self.port = tasks, host, 0
        self.token_required = require_token or not is_loopback(host)
        if self.token_required and not tasks.spec.annotators:
            raise ServeRefused(
                f"serving on {host} needs a token per annotator: list them in the tasks file "
                "(annotators: [alice, bob]) or with --annotator; only 127.0.0.1 accepts names"
            )
        self.secret = secret or secrets.token_hex(32)
        self.tokens = annotator_tokens(tasks, self.secret)

    def annotator(self, request: Request) -> str:
        """The annotator of ``request``, or :class:`PermissionError` with the reason."""
        token = request.query_params.get("token") or request.headers.get("x-label-token")
        if token:
            for known, name in self.tokens.items():
                if hmac.compare_digest(known.encode(), token.encode()):  # any text, no 500
                    return name
            raise PermissionError("unknown token")
        if self.token_required:
            raise PermissionError("a token is required (ask for your link)")
        try:
            name = check_annotator(request.query_params.get("annotator", ""))
        except ValueError as exc:
            raise PermissionError(str(exc)) from None
        if self.tasks.spec.annotators and name not in self.tasks.spec.annotators:
            raise PermissionError(f"{name!r} is not an annotator of this task")
        return name

    def host_ok(self, header: str) -> bool:
        """On loopback, the Host header must name this server (defeats DNS rebinding)."""
        if self.token_required:
            return True
        allowed = {f"{h}:{self.port}" for h in ("127.0.0.1", "localhost", "[::1]", self.host)}
        return header in allowed

    def urls(self, shown_host: str | None = None) -> dict[str, str]:
        """Annotator -> URL to hand out (tokens when required, names otherwise)."""
        host = shown_host or self.host
        host = f"[{host}]" if ":" in host and not host.startswith("[") else host
        base = f"http://{host}:{self.port}/"
        if self.token_required:
            return {name: f"{base}?token={tok}" for tok, name in self.tokens.items()}
        names = self.tasks.spec.annotators or ["YOUR_NAME"]
        return {name: f"{base}?annotator={name}" for name in names}


class _Guard(BaseHTTPMiddleware):
    """Host check, JSON-only same-origin POSTs, security headers on every response."""

    def __init__(self, app: Any, access: Access):
        super().__init__(app)
        self.access = access

    async def dispatch(self, request: Request, call_next: Any) -> Response:
        if not self.access.host_ok(request.headers.get("host", "")):
            return PlainTextResponse("wrong Host header", status_code=421)
        if request.method == "POST":
            refused = _post_refusal(request, self.access)
            if refused:
                return JSONResponse({"error": refused}, status_code=403)
        response = await call_next(request)
        response.headers["Content-Security-Policy"] = CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        response.headers["Cache-Control"] = "no-store"
        return response


def _post_refusal(request: Request, access: Access) -> str | None:
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        return "submits must be JSON"
    origin = request.headers.get("origin")
    if origin and origin != f"{request.url.scheme}://{request.headers.get('host', '')}":
        return "cross-origin submit refused"
    return None


class BodyRefused(Exception):
    """A request body refused: too big (413), too slow (408), too many at once (503)."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status

    def response(self) -> Response:
        """The JSON answer; it closes the connection, or the server would read the rest."""
        return JSONResponse({"error": str(self)}, self.status, headers={"Connection": "close"})


def _content_length(scope: Any) -> int:
    """The declared body size (0 when undeclared)."""
    for name, value in scope["headers"]:
        if name == b"content-length":
            if not value.isdigit():  # h11 refuses these first; kept for other servers
                raise BodyRefused(400, "Content-Length: not a number")
            return int(value)
    return 0


class _BodyLimit:
    """Caps every request body at ``limit`` bytes and ``timeout_s`` seconds, and the bodies
    in flight at ``uploads`` (pure ASGI: a refusal is raised from ``receive`` inside the
    handler reading the body, so it never holds more than ``limit``)."""

    def __init__(self, app: Any, limit: int, timeout_s: float, uploads: int):
        self.app, self.limit, self.timeout_s = app, limit, timeout_s
        self.uploads, self.in_flight = uploads, 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        try:
            self._admit(_content_length(scope), scope["method"])
        except BodyRefused as exc:
            return await exc.response()(scope, receive, send)
        if scope["method"] in ("GET", "HEAD"):  # no handler reads their bodies
            return await self.app(scope, receive, send)
        self.in_flight += 1
        try:
            await self.app(scope, self._capped(receive), send)
        finally:
            self.in_flight -= 1

    def _admit(self, declared: int, method: str) -> None:
        if declared > self.limit:
            raise BodyRefused(
                413, f"request body over {self.limit:,} bytes (Content-Length: {declared:,})"
            )
        if method not in ("GET", "HEAD") and self.in_flight >= self.uploads:
            raise BodyRefused(503, f"{self.uploads} submits in progress; try again")

    def _capped(self, receive: Any) -> Any:
        deadline, read, done = time.monotonic() + self.timeout_s, 0, False

        async def capped() -> Any:
            nonlocal read, done
            if done:  # the body is in: later receives only wait for a disconnect
                return await receive()
            with anyio.move_on_after(deadline - time.monotonic()) as waited:
                message = await receive()
            if waited.cancelled_caught:
                raise BodyRefused(408, f"request body not received within {self.timeout_s:g} s")
            read += len(message.get("body", b""))
            if read > self.limit:
                raise BodyRefused(413, f"request body over {self.limit:,} bytes")
            done = not message.get("more_body", False)
            return message

        return capped


class LabelApp:
    """The HTTP handlers over one task, its label store and its access rules."""

    def __init__(self, tasks: Tasks, access: Access):
        self.tasks, self.access = tasks, access
        self.store = LabelStore(tasks.labels_dir)
        self.index_html = (static_dir() / "index.html").read_text(encoding="utf-8")

    def _who(self, request: Request) -> str:
        return self.access.annotator(request)

    def _current(self, annotator: str) -> dict[str, LabelRecord]:
        """This task's current labels of ``annotator`` (another task may share the folder)."""
        mine = [r for r in self.store.read(annotator) if r.task == self.tasks.name]
        return {r.item: r for r in current_labels(mine)}

    def _progress(self, annotator: str) -> dict[str, Any]:
        order, current = annotator_order(self.tasks, annotator), self._current(annotator)
        done = [item in current for item in order]
        return {"done": done, "done_count": sum(done), "total": len(order)}

    async def index(self, request: Request) -> Response:
        return HTMLResponse(self.index_html)

    async def session(self, request: Request) -> Response:
        name = self._who(request)
        progress = await run_in_threadpool(self._progress, name)
        return JSONResponse({"annotator": name, "task": task_view(self.tasks), **progress})

    async def item(self, request: Request) -> Response:
        name = self._who(request)
        order = annotator_order(self.tasks, name)
        position = request.path_params["position"]
        if not 0 <= position < len(order):
            return JSONResponse({"error": f"no item {position}"}, status_code=404)
        item = self.tasks.item(order[position])
        current = (await run_in_threadpool(self._current, name)).get(item.id)
        return JSONResponse(item_view(self.tasks, item, name, position, current))

    async def label(self, request: Request) -> Response:
        name = self._who(request)
        try:
            body = decode_body(await request.body())
        except LabelRejected as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        order = annotator_order(self.tasks, name)
        position = body.get("position") if isinstance(body, dict) else None
        if not isinstance(position, int) or isinstance(position, bool):
            return JSONResponse({"error": "position: expected an integer"}, status_code=400)
        if not 0 <= position < len(order):
            return JSONResponse({"error": f"no item {position}"}, status_code=404)
        try:
            record = parse_label(self.tasks, self.tasks.item(order[position]), name, position, body)
        except LabelRejected as exc:
            return JSONResponse({"error": str(exc)}, status_code=422)
        saved = await run_in_threadpool(self.store.append, record)
        progress = await run_in_threadpool(self._progress, name)
        return JSONResponse({"saved": True, "revision": saved.revision, **progress})


def create_app(
    tasks: Tasks,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    require_token: bool = False,
    secret: str | None = None,
    max_body: int = MAX_BODY,
    body_timeout_s: float = BODY_TIMEOUT_S,
    max_uploads: int = MAX_UPLOADS,
) -> tuple[Starlette, Access]:
    """The Starlette app for ``tasks`` and its :class:`Access` rules.

    Args:
        tasks: the loaded label task (:func:`~.tasks.load_tasks`).
        host: the address the server binds (decides names vs tokens).
        port: the bound port (for the Host check; set ``access.port`` once bound).
        require_token: ask for tokens even on loopback.
        secret: the token secret (default: ``$EVALBENCH_LABEL_SECRET``, else random).
        max_body: bytes a request body may have (more: 413).
        body_timeout_s: seconds a request body may take to arrive (more: 408).
        max_uploads: request bodies read at once (more: 503).

    Raises:
        ServeRefused: tokens are needed and the task declares no annotators.
    """
    access = Access(
        tasks, host, require_token=require_token, secret=secret or os.environ.get(SECRET_ENV)
    )
    access.port = port
    handlers = LabelApp(tasks, access)

    async def denied(request: Request, exc: Exception) -> Response:
        return JSONResponse({"error": str(exc)}, status_code=403)

    async def gone(request: Request, exc: Exception) -> Response:
        return Response(status_code=400)  # the client left mid-body: no one to answer

    async def unreadable(request: Request, exc: Exception) -> Response:
        # a damaged label file (a hand edit): the annotator's page says which line, as
        # `evalbench label status` does (not a bare 500)
        return JSONResponse({"error": str(exc)}, status_code=500)

    async def unwritable(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, OSError)  # a full disk, a file past its size limit
        why = exc.strerror or type(exc).__name__
        return JSONResponse({"error": f"not saved: {why} (the labels folder cannot be "
                                      "written; labels saved before are kept)"},
                            status_code=507)  # fmt: skip

    async def body_refused(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, BodyRefused)  # the handler is registered for it alone
        return exc.response()

    routes = [
        Route("/", handlers.index),
        Route("/api/session", handlers.session),
        Route("/api/item/{position:int}", handlers.item),
        Route("/api/label", handlers.label, methods=["POST"]),
        Route("/healthz", lambda request: PlainTextResponse("ok")),
        Mount("/static", StaticFiles(directory=static_dir()), name="static"),
    ]
    app = Starlette(
        routes=routes,
        middleware=[
            Middleware(_Guard, access=access),
            Middleware(_BodyLimit, limit=max_body, timeout_s=body_timeout_s, uploads=max_uploads),
        ],
        exception_handlers={
            PermissionError: denied,
            LabelFileError: unreadable,
            OSError: unwritable,
            BodyRefused: body_refused,
            ClientDisconnect: gone,
        },
    )
    return app, access


def server_config(app: Any, header_timeout_s: float = HEADER_TIMEOUT_S) -> Any:
    """The uvicorn configuration the label app is served with (its HTTP protocol: uvicorn's
    h11 one with a deadline on each request's headers, :func:`header_deadline`)."""
    import uvicorn  # lazy: only serving needs it

    return uvicorn.Config(app, log_level="warning", access_log=False,
                          http=header_deadline(header_timeout_s))  # fmt: skip


def header_deadline(timeout_s: float) -> type:
    """uvicorn's h11 protocol, with a deadline of ``timeout_s`` on each request's headers.

    uvicorn bounds none: a client that connects and sends nothing, or trickles header lines
    (each byte also cancels the keep-alive timer), holds its connection and descriptor for
    ever, and enough of them stop the server accepting (slowloris). A timer set when the
    connection is made, and again when an answer is complete, answers 408 and closes the
    connection unless a request's headers have come in since.
    """
    from uvicorn.protocols.http.h11_impl import H11Protocol

    answer = JSONResponse({"error": f"request headers not received within {timeout_s:g} s"})
    head = (b"HTTP/1.1 408 Request Timeout\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\nConnection: close\r\nX-Content-Type-Options: nosniff\r\n"
            b"Cache-Control: no-store\r\n\r\n" % len(answer.body))  # fmt: skip

    class HeaderDeadline(H11Protocol):
        header_timeout_s = timeout_s

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()

        def on_response_complete(self) -> None:
            answered = self.cycle  # before a pipelined request makes the next one
            super().on_response_complete()
            self._arm(answered)

        def _arm(self, waiting_for: Any = None) -> None:
            """Expire unless a request's headers (a new cycle) come in after ``waiting_for``."""
            self.loop.call_later(timeout_s, self._expired, waiting_for)

        def _expired(self, waiting_for: Any) -> None:
            if self.cycle is waiting_for and not self.transport.is_closing():
                self.transport.write(head + bytes(answer.body))
                self.transport.close()

    return HeaderDeadline


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (``port`` 0: a free one)."""
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host.strip("[]"), port))
    sock.listen(64)
    sock.set_inheritable(True)
    return sock


def serve(
    tasks: Tasks,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    require_token: bool = False,
    announce: Any = None,
) -> None:
    """Run the app until interrupted, after announcing each annotator's URL.

    Raises:
        ServeRefused: tokens are needed and the task declares no annotators.
        OSError: the address is in use or cannot be bound.
    """
    import uvicorn  # lazy: only serving needs it

    announce = announce or (lambda line: print(line, flush=True))  # URLs before serving
    app, access = create_app(tasks, host=host, require_token=require_token)
    sock = bind(host, port)
    access.port = sock.getsockname()[1]
    announce(f"labels of {tasks.name!r} ({len(tasks.items)} items) go to {tasks.labels_dir}")
    if access.token_required and not os.environ.get(SECRET_ENV):
        announce(f"tokens are valid until this server stops (set {SECRET_ENV} to keep them)")
    for name, url in access.urls().items():
        announce(f"  {name:20s} {url}")
    uvicorn.Server(server_config(app)).run(sockets=[sock])
