"""A real OpenAI-compatible HTTP server on 127.0.0.1 for tests and benchmarks.

It speaks just enough HTTP/1.1 (keep-alive, Content-Length) for the official ``openai``
client:

* ``POST /v1/chat/completions`` answers with scripted replies, tool calls, latency and
  injected faults (429 + Retry-After, 500, slow responses, malformed JSON, dropped
  connections); with :attr:`LoopbackServer.rate_limit` set, a token-bucket rate limit that
  sends OpenAI's ``x-ratelimit-*`` headers and refuses with 429 + ``Retry-After``; with
  :attr:`LoopbackServer.slots` set, a queueing server (llama-cpp-python's: that many
  requests served at once, the others wait in line, never a 429); with
  :attr:`LoopbackServer.ignore_n`, one choice whatever ``n`` asks. It counts requests and
  the maximum number in flight at once.
* ``/v1/files`` (multipart upload, ``GET /v1/files/{id}/content``) and ``/v1/batches``
  (create, retrieve, list, cancel) with the Batch API's state machine: ``validating`` →
  ``in_progress`` → ``finalizing`` → ``completed``, or ``failed`` (validation errors with
  line numbers), ``expired`` (partial output; the rest ``batch_expired`` in the error
  file), ``cancelling`` → ``cancelled`` (partial output); per-line errors; one state step
  per retrieve (:class:`BatchPlan`). It counts creates, uploads and polls.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.parser
import email.policy
import json
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

HOLD_S = 120.0
"""The longest :attr:`LoopbackServer.hold` keeps an answer back."""


@dataclass
class Reply:
    """A successful completion."""

    text: str | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    finish_reason: str = "stop"
    prompt_tokens: int = 10
    completion_tokens: int = 5


@dataclass
class Fault:
    """An injected failure: ``kind`` in {"429", "500", "501", "401", "400", "slow", "malformed",
    "drop", "empty"} ("empty": a 200 whose ``choices`` list is empty); ``message`` is the
    error body's ``error.message`` (default ``injected <kind>``)."""

    kind: str
    retry_after: float | None = None
    seconds: float = 0.0
    message: str | None = None


@dataclass
class RateLimit:
    """A token-bucket rate limit, refilled continuously, full at start.

    ``requests_per_s`` / ``tokens_per_s`` refill rates (``None``: no such limit) and their
    bucket sizes. A request costs one request and, like OpenAI's accounting, its prompt
    characters / 4 plus its ``max_tokens`` in tokens.
    """

    requests_per_s: float | None = None
    request_burst: float = 1.0
    tokens_per_s: float | None = None
    token_burst: float = 1.0


@dataclass
class BatchPlan:
    """How one batch behaves (a server takes the next plan at each create; default: the
    next default plan). Each retrieve moves it one step through ``steps``, then to
    ``outcome``.

    Args:
        outcome: ``completed``, ``failed`` (validation), ``expired`` or ``cancelled``.
        done: input lines answered before an expiry or cancellation (default: all for
            ``completed``).
        line_errors: input line index (0-based) -> (HTTP status, message) written to the
            error file instead of an answer.
        invalid_lines: for ``failed``: input line index -> message (``errors.data`` with
            1-based line numbers); empty = the whole file is refused.
        hold: stay ``in_progress`` until :meth:`LoopbackServer.release_batches`.
        raw_lines: input line index -> a function of its ``custom_id`` giving the JSON value
            written to the output file instead of its answer (a hostile provider's line).
    """

    outcome: str = "completed"
    steps: tuple[str, ...] = ("validating", "in_progress", "finalizing")
    done: int | None = None
    line_errors: dict[int, tuple[int, str]] = field(default_factory=dict)
    invalid_lines: dict[int, str] = field(default_factory=dict)
    hold: bool = False
    raw_lines: dict[int, Callable[[str], Any]] = field(default_factory=dict)


class Chaos:
    """Random faults: each unscripted request fails with probability ``rate``, the fault kind
    drawn uniformly from ``kinds`` (a hang lasts ``hang_s``), from a seeded generator."""

    def __init__(self, rate: float, kinds: list[str], *, seed: int = 0, hang_s: float = 5.0):
        import random

        self.rate, self.kinds, self.hang_s = rate, kinds, hang_s
        self.rng = random.Random(seed)
        self.injected: dict[str, int] = {}

    def draw(self) -> Fault | None:
        if self.rng.random() >= self.rate:
            return None
        kind = self.rng.choice(self.kinds)
        self.injected[kind] = self.injected.get(kind, 0) + 1
        if kind == "hang":
            return Fault("slow", seconds=self.hang_s)
        return Fault(kind, retry_after=0.05 if kind == "429" else None)


class LoopbackServer:
    """Start with :meth:`start`, stop with :meth:`stop`; thread-safe scripting.

    Args:
        latency: seconds every request waits before it is answered.
    """

    def __init__(self, latency: float = 0.0):
        self.latency = latency
        self.requests: list[dict[str, Any]] = []
        self.arrivals: list[float] = []  # time.monotonic() of each request, in order
        self.headers: list[dict[str, str]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.concurrency: list[int] = []
        """Requests in flight as each request arrived (itself included), in order."""
        self._script: deque[Reply | Fault] = deque()
        self.chaos: Chaos | None = None
        """When set, unscripted requests fail at random (see :class:`Chaos`)."""
        self.rate_limit: RateLimit | None = None
        """When set, chat requests are rate-limited (see :class:`RateLimit`)."""
        self.rejected = 0
        """Chat requests refused with 429 by :attr:`rate_limit`."""
        self.on_request: Callable[[int], None] | None = None
        """Called (in the server's thread) with the number of requests so far as each arrives."""
        self.hold: threading.Event | None = None
        """When set to an Event, answers wait until it is set (at most :data:`HOLD_S`)."""
        self.default: Reply | None = None
        """When set, the answer to every unscripted request (else the echo reply)."""
        self.slots: int | None = None
        """When set, at most this many requests are served at once (each for ``latency``
        seconds); the others wait in line, first come first served, and are never refused."""
        self._gate: asyncio.Semaphore | None = None
        self.ignore_n: bool = False
        """Answer one choice whatever ``n`` asks (as llama-cpp-python's server does)."""
        self._levels: dict[str, float] = {}
        self._stamp = 0.0
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.batch_plans: deque[BatchPlan] = deque()
        self.batch_reply: Callable[[dict[str, Any]], Reply] | None = None
        """How batch lines are answered (default: the echo reply)."""
        self.batch_creates = 0
        self.batch_polls = 0
        self.uploads = 0
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.AbstractServer | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        """The URL to give ``base_url`` (``http://127.0.0.1:<port>/v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def count(self) -> int:
        """Requests received so far (faulted ones included)."""
        with self._lock:
            return len(self.requests)

    def enqueue(self, *steps: Reply | Fault) -> None:
        """Script the next requests' outcomes, in order (then the default echo reply)."""
        with self._lock:
            self._script.extend(steps)

    def reset(self) -> None:
        """Forget requests, script, hooks and the in-flight maximum."""
        with self._lock:
            self.requests.clear()
            self.arrivals.clear()
            self.headers.clear()
            self.concurrency.clear()
            self._script.clear()
            self.max_in_flight = 0
            self.chaos = None
            self.rate_limit = None
            self.rejected = 0
            self._levels.clear()
            self.files.clear()
            self.batches.clear()
            self.batch_plans.clear()
            self.batch_reply = None
            self.batch_creates = self.batch_polls = self.uploads = 0
            self.on_request = None
            self.hold = None
            self.default = None
            self.slots = None
            self._gate = None
            self.ignore_n = False

    def release_batches(self) -> None:
        """Let held batches (``BatchPlan(hold=True)``) go on."""
        with self._lock:
            for batch in self.batches.values():
                batch["plan"].hold = False

    def start(self) -> LoopbackServer:
        """Serve on a free port in a background thread."""
        ready = threading.Event()

        def serve() -> None:
            self._loop = asyncio.new_event_loop()
            asyncio.set_event_loop(self._loop)
            self._server = self._loop.run_until_complete(
                asyncio.start_server(self._handle, "127.0.0.1", 0, backlog=1024)
            )
            self.port = self._server.sockets[0].getsockname()[1]
            ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=serve, daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    def stop(self) -> None:
        """Stop serving and join the thread."""
        if self._loop is None:
            return
        loop = self._loop

        async def shutdown() -> None:
            assert self._server is not None
            self._server.close()
            current = asyncio.current_task()
            tasks = [t for t in asyncio.all_tasks() if t is not current]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            loop.stop()

        asyncio.run_coroutine_threadsafe(shutdown(), loop)
        if self._thread is not None:
            self._thread.join(10)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    break
                method, target, headers, body = request
                path = urlsplit(target).path
                if "/files" in path or "/batches" in path:
                    with self._lock:
                        status, answer = self._batch_api(method, target, headers, body)
                    _write(writer, status, answer, {})
                    await writer.drain()
                elif not await self._answer(headers, body, writer):
                    return
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    async def _answer(self, headers: dict[str, str], body: bytes, writer: Any) -> bool:
        with self._lock:
            payload = json.loads(body or b"{}")
            self.requests.append(payload)
            self.arrivals.append(time.monotonic())
            self.headers.append(headers)
            limited = self._take_budget(payload)
            step = self._script.popleft() if self._script else None
            if step is None and self.chaos is not None:
                step = self.chaos.draw()
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self.concurrency.append(self.in_flight)
            if self.on_request is not None:
                self.on_request(len(self.requests))
        try:
            await self._held()
            if limited is not None and limited[0]:  # refused at once, as a real limiter does
                _write(writer, 429, _error_body("rate limit reached"), limited[1])
                await writer.drain()
                return True
            async with self._slot():
                await asyncio.sleep(self.latency)
            return await self._respond(step, payload, writer, limited[1] if limited else {})
        finally:
            with self._lock:
                self.in_flight -= 1

    def _take_budget(self, payload: dict[str, Any]) -> tuple[bool, dict[str, str]] | None:
        """(refused?, rate-limit headers) under :attr:`rate_limit` (caller holds the lock)."""
        limit = self.rate_limit
        if limit is None:
            return None
        now = time.monotonic()
        buckets = {"requests": (limit.requests_per_s, limit.request_burst, 1.0),
                   "tokens": (limit.tokens_per_s, limit.token_burst, _token_cost(payload))}  # fmt: skip
        for kind, (rate, burst, _) in buckets.items():
            if rate is not None:
                level = self._levels.get(kind, burst)
                self._levels[kind] = min(burst, level + (now - self._stamp) * rate)
        self._stamp = now
        short = [
            (cost - self._levels[kind]) / rate
            for kind, (rate, _, cost) in buckets.items()
            if rate is not None and self._levels[kind] < min(cost, buckets[kind][1])
        ]
        if short:
            self.rejected += 1
        else:
            for kind, (rate, _, cost) in buckets.items():
                if rate is not None:
                    self._levels[kind] -= cost
        headers = {}
        for kind, (rate, burst, _) in buckets.items():
            if rate is not None:
                level = max(0.0, self._levels[kind])
                headers |= {f"x-ratelimit-limit-{kind}": f"{burst:g}",
                            f"x-ratelimit-remaining-{kind}": str(math.floor(level)),
                            f"x-ratelimit-reset-{kind}": go_duration((burst - level) / rate)}  # fmt: skip
        if short:
            wait = max(short)
            headers |= {"retry-after-ms": f"{1000 * wait:.0f}", "retry-after": f"{wait:.3f}"}
        return bool(short), headers

    def _slot(self) -> Any:
        """One of :attr:`slots` (a queue forms behind them), or no gate at all."""
        if self.slots is None:
            return contextlib.nullcontext()
        if self._gate is None:  # made in the server's loop, on first use
            self._gate = asyncio.Semaphore(self.slots)
        return self._gate

    async def _held(self) -> None:
        hold, deadline = self.hold, time.monotonic() + HOLD_S
        while hold is not None and not hold.is_set() and time.monotonic() < deadline:
            await asyncio.sleep(0.005)

    async def _respond(
        self, step: Reply | Fault | None, payload: dict[str, Any], writer: Any,
        extra: dict[str, str] | None = None,
    ) -> bool:  # fmt: skip
        if isinstance(step, Fault):
            if step.kind == "drop":
                writer.transport.abort()
                return False
            if step.kind == "slow":
                await asyncio.sleep(step.seconds)
            elif step.kind == "malformed":
                _write(writer, 200, b'{"id": "x", "choices": [ {"mess', {})
                await writer.drain()
                return True
            elif step.kind == "empty":
                _write(writer, 200, json.dumps({"id": "x", "choices": []}).encode(), {})
                await writer.drain()
                return True
            elif step.kind in {"429", "500", "501", "401", "400"}:
                extra = (
                    {"retry-after": str(step.retry_after)} if step.retry_after is not None else {}
                )
                message = step.message or f"injected {step.kind}"
                error = json.dumps({"error": {"message": message, "type": "test"}})
                _write(writer, int(step.kind), error.encode(), extra)
                await writer.drain()
                return True
        reply = step if isinstance(step, Reply) else (self.default or _echo(payload))
        choices = 1 if self.ignore_n else int(payload.get("n") or 1)
        body = _completion(payload, reply, choices)
        _write(writer, 200, json.dumps(body).encode(), extra or {})
        await writer.drain()
        return True

    # ------------------------------------------------------------------ Batch API

    def _batch_api(
        self, method: str, target: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, bytes]:
        """Files and batches (the caller holds the lock)."""
        url = urlsplit(target)
        parts = [p for p in url.path.split("/") if p]  # v1, files|batches, id, action
        resource, rest = parts[1], parts[2:]
        if resource == "files" and method == "POST":
            return 200, self._upload(headers, body)
        if resource == "files" and len(rest) == 2 and rest[1] == "content":
            if rest[0] not in self.files:
                return 404, _error_body(f"no file {rest[0]}")
            return 200, self.files[rest[0]]
        if resource == "batches" and method == "POST" and not rest:
            return self._create(json.loads(body))
        if resource == "batches" and not rest:
            return 200, self._list(parse_qs(url.query))
        batch = self.batches.get(rest[0]) if rest else None
        if batch is None:
            return 404, _error_body(f"no batch {rest[0] if rest else ''}")
        if method == "POST" and rest[1:] == ["cancel"]:
            if batch["status"] not in TERMINAL:
                batch["status"], batch["cancelling_at"] = "cancelling", int(time.time())
            return 200, json.dumps(_public(batch)).encode()
        self.batch_polls += 1
        self._advance(batch)
        return 200, json.dumps(_public(batch)).encode()

    def _upload(self, headers: dict[str, str], body: bytes) -> bytes:
        head = f"Content-Type: {headers['content-type']}\r\n\r\n".encode()
        message = email.parser.BytesParser(policy=email.policy.default).parsebytes(head + body)
        fields = {part.get_param("name", header="content-disposition"): part
                  for part in message.iter_parts()}  # fmt: skip
        data = fields["file"].get_payload(decode=True)
        self.uploads += 1
        file_id = f"file-{len(self.files) + 1}"
        self.files[file_id] = data
        return json.dumps({"id": file_id, "object": "file", "bytes": len(data),
                           "created_at": int(time.time()), "filename": "input.jsonl",
                           "purpose": fields["purpose"].get_content().strip(),
                           "status": "processed"}).encode()  # fmt: skip

    def _create(self, params: dict[str, Any]) -> tuple[int, bytes]:
        if params.get("input_file_id") not in self.files:
            return 400, _error_body("unknown input_file_id")
        self.batch_creates += 1
        lines = [json.loads(x) for x in self.files[params["input_file_id"]].splitlines() if x]
        batch_id = f"batch_{self.batch_creates}"  # never reused, even after a clear
        self.batches[batch_id] = {
            "id": batch_id, "object": "batch", "endpoint": params["endpoint"],
            "completion_window": params["completion_window"],
            "input_file_id": params["input_file_id"], "status": "validating",
            "created_at": int(time.time()), "metadata": params.get("metadata"),
            "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
            "lines": lines, "step": 0,
            "plan": self.batch_plans.popleft() if self.batch_plans else BatchPlan(),
        }  # fmt: skip
        return 200, json.dumps(_public(self.batches[batch_id])).encode()

    def _list(self, query: dict[str, list[str]]) -> bytes:
        newest = sorted(self.batches.values(), key=lambda b: int(b["id"].split("_")[1]),
                        reverse=True)  # fmt: skip
        after = query.get("after", [None])[0]
        if after is not None:
            ids = [b["id"] for b in newest]
            newest = newest[ids.index(after) + 1 :] if after in ids else []
        limit = int(query.get("limit", ["20"])[0])
        page = newest[:limit]
        return json.dumps({"object": "list", "data": [_public(b) for b in page],
                           "first_id": page[0]["id"] if page else None,
                           "last_id": page[-1]["id"] if page else None,
                           "has_more": len(newest) > limit}).encode()  # fmt: skip

    def _advance(self, batch: dict[str, Any]) -> None:
        """One retrieve = one step of the state machine."""
        plan: BatchPlan = batch["plan"]
        if batch["status"] in TERMINAL:
            return
        if batch["status"] == "cancelling":
            self._finish(batch, "cancelled")
            return
        if batch["status"] == "in_progress" and plan.hold:
            return
        batch["step"] += 1
        steps = [s for s in plan.steps if plan.outcome != "failed" or s == "validating"]
        if batch["step"] < len(steps):
            batch["status"] = steps[batch["step"]]
            stamp = f"{batch['status']}_at"
            batch[stamp] = int(time.time())
            total = batch["request_counts"]["total"]
            done = total if plan.done is None else plan.done
            share = {"in_progress": 0.5, "finalizing": 1.0}.get(batch["status"], 0.0)
            batch["request_counts"]["completed"] = int(done * share)
        else:
            self._finish(batch, plan.outcome)

    def _finish(self, batch: dict[str, Any], status: str) -> None:
        plan: BatchPlan = batch["plan"]
        lines = batch["lines"]
        batch["status"] = status
        batch[f"{status}_at"] = int(time.time())
        if status == "failed":
            batch["errors"] = {"object": "list", "data": [
                {"code": "invalid_request", "line": i + 1, "message": m, "param": None}
                for i, m in sorted(plan.invalid_lines.items())
            ] or [{"code": "token_limit_exceeded", "line": None, "param": None,
                   "message": "Enqueued token limit reached"}]}  # fmt: skip
            return
        done = len(lines) if plan.done is None else min(plan.done, len(lines))
        out, errors = [], []
        for i, line in enumerate(lines[:done]):
            if i in plan.raw_lines:
                out.append(plan.raw_lines[i](line["custom_id"]))
            elif i in plan.line_errors:
                code, message = plan.line_errors[i]
                errors.append(_result_line(line, code, {"error": {"message": message}}))
            else:
                reply = (self.batch_reply or _echo)(line["body"])
                out.append(_result_line(line, 200, _completion(line["body"], reply)))
        if status == "expired":
            errors += [{"id": f"batch_req_x{i}", "custom_id": line["custom_id"],
                        "response": None, "error": {"code": "batch_expired", "message":
                        "This request could not be executed before the completion window "
                        "expired."}} for i, line in enumerate(lines[done:])]  # fmt: skip
        counts = batch["request_counts"]
        counts["completed"], counts["failed"] = len(out), len(errors)
        for name, rows in (("output_file_id", out), ("error_file_id", errors)):
            if rows:
                file_id = f"file-{len(self.files) + 1}"
                self.files[file_id] = "".join(json.dumps(r) + "\n" for r in rows).encode()
                batch[name] = file_id


TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})


def _public(batch: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in batch.items() if k not in ("lines", "step", "plan")}


def _result_line(line: dict[str, Any], status: int, body: dict[str, Any]) -> dict[str, Any]:
    return {"id": f"batch_req_{line['custom_id'][:12]}", "custom_id": line["custom_id"],
            "response": {"status_code": status, "request_id": "req_loopback", "body": body},
            "error": None}  # fmt: skip


def _token_cost(payload: dict[str, Any]) -> float:
    chars = sum(len(str(m.get("content") or "")) for m in payload.get("messages") or [])
    return float(chars // 4 + (payload.get("max_tokens") or 0))


def _error_body(message: str) -> bytes:
    return json.dumps({"error": {"message": message, "type": "test"}}).encode()


def go_duration(seconds: float) -> str:
    """A duration as OpenAI's reset headers write it (Go style): ``120ms``, ``1.5s``, ``6m0s``."""
    if seconds < 1:
        return f"{1000 * seconds:.3f}".rstrip("0").rstrip(".") + "ms"
    minutes, rest = divmod(seconds, 60)
    text = f"{rest:.3f}".rstrip("0").rstrip(".") + "s"
    return f"{int(minutes)}m{text}" if minutes else text


async def _read_request(
    reader: asyncio.StreamReader,
) -> tuple[str, str, dict[str, str], bytes] | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, target = [*lines[0].split(" "), "", ""][:2]
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            key, value = line.split(":", 1)
            headers[key.strip().lower()] = value.strip()
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return method, target, headers, body


_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found",
            429: "Too Many Requests", 500: "Internal Server Error"}  # fmt: skip


def _write(writer: Any, status: int, body: bytes, extra: dict[str, str]) -> None:
    head = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}",
            "content-type: application/json", f"content-length: {len(body)}",
            "connection: keep-alive", *(f"{k}: {v}" for k, v in extra.items())]  # fmt: skip
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)


def _echo(payload: dict[str, Any]) -> Reply:
    messages = payload.get("messages") or [{}]
    return Reply(text=f"echo: {messages[-1].get('content', '')}")


def _completion(payload: dict[str, Any], reply: Reply, choices: int = 1) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": f"call_{i}", "type": "function",
             "function": {"name": c["name"], "arguments": c["arguments"]}}
            for i, c in enumerate(reply.tool_calls)
        ]  # fmt: skip
    return {
        "id": "chatcmpl-loopback",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": payload.get("model", "loopback"),
        "choices": [
            {"index": i, "message": message, "finish_reason": reply.finish_reason}
            for i in range(choices)
        ],
        "usage": {
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "total_tokens": reply.prompt_tokens + reply.completion_tokens,
        },
    }
