"""Batch mode (``batch: true``): a system's requests through the provider's Batch API.

OpenAI's Batch API (and compatible ones) runs a JSONL file of requests on the provider's
own fleet within a window (24 h) at half price (guide: platform.openai.com/docs/guides/
batch; SDK ``openai/resources/batches.py``). :func:`run_batch` is what :func:`agenerate`
does for such a system, so every study works in batch mode unchanged:

1. requests already in the response cache are answered from it;
2. the others are written as JSONL, one line per distinct request with
   ``custom_id`` = its cache key, split at 50,000 requests / 190 MB per file (the API's
   limits), uploaded (``/v1/files``, purpose ``batch``) and submitted (``/v1/batches``);
3. each batch's id is saved in the run folder's ``batches/batches.jsonl`` the moment
   the provider returns it (and the request keys in ``batches/<local id>.keys`` before
   submitting), so a rerun after Ctrl-C, ``kill -9`` or a reboot keeps polling the same
   batches and never pays twice; a crash between submitting and saving is covered too:
   each batch carries ``metadata.evalbench_chunk`` = its local id, and a rerun adopts
   the batch that has it. A create is never retried blindly (a create answered after
   ``timeout_s``, or whose answer was lost, may have made a batch that bills): after a
   failed create the batch is looked up by that tag, for :data:`CREATE_SETTLE_S` while
   the provider may still be making it, and its requests go out again (a new tag, the
   next round) only when it is not there. Uploads likewise: a failed upload is looked
   for by its file name (unique per attempt) before it is sent again. A submit that made
   no batch (its upload or create failed for good) is marked ``not_made``: a rerun does not
   look it up. An endpoint without a Batch API (llama-cpp-python's server: ``POST
   /v1/files`` answers 404) stops the run with :class:`BatchRefused`, one line naming it;
4. polling backs off from ``batch_poll_s`` (×1.5 per poll, to 2 min) and shows the
   provider's status and request counts on a progress bar; ``evalbench run --no-wait``
   (:data:`NO_WAIT_ENV`) submits, polls once and stops with :class:`BatchPending`;
5. a finished batch's output and error files are read: answers go into the response
   cache and to the study; a per-request error that would fail again (HTTP 4xx, a line
   the provider rejected) is an error record; requests without a result (the batch
   ``failed``, ``expired`` or was ``cancelled``: partial output is kept, OpenAI lists
   unfinished requests as ``batch_expired`` in the error file) are resubmitted, only
   they, up to :data:`MAX_ROUNDS` times per run.

Usage of batch answers is priced at ``(1 - batch_discount)`` of the system's prices. An
answer's ``latency_s`` is its batch's turnaround (created → ended).

Requests that depend on earlier answers (agent steps, multi-turn conversations) cannot
wait for a batch: :func:`require_sync` refuses them with a one-line error (and
``ModelClient.chat`` calls it).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from evalbench.models.progress import STOP, progress_bar
from evalbench.models.providers import (
    ProviderError,
    api_key,
    endpoint_url,
    is_loopback,
    parse_completion,
    parse_more_choices,
    payload_for,
    retryable_status,
    without_key,
)
from evalbench.models.types import ChatRequest, ChatResponse, Choice, Job, ModelSpec
from evalbench.records import open_in_folder, parse_json, to_json

ENDPOINT = "/v1/chat/completions"
MAX_REQUESTS = 50_000
"""Requests per batch (OpenAI's limit)."""
MAX_BYTES = 190 * 2**20
"""Bytes per input file (OpenAI's limit is 200 MB)."""
MAX_ROUNDS = 3
"""Submissions of one request per run before its last error becomes its record."""
MAX_POLL_S = 120.0
CREATE_SETTLE_S = 60.0
"""Seconds a batch whose create failed is looked for before it is taken as never made."""
TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})
NO_WAIT_ENV = "EVALBENCH_BATCH_NO_WAIT"
"""Set (to 1) by ``evalbench run --no-wait``: submit, poll once, stop."""
_TRANSIENT_CODES = frozenset({
    "batch_expired", "batch_cancelled", "server_error", "rate_limit_exceeded", "timeout",
    "internal_error",
})  # fmt: skip


class BatchRefused(ValueError):
    """Batch mode cannot serve this request (it depends on an earlier answer) or this
    endpoint (it has no Batch API)."""


class BatchPending(RuntimeError):
    """``--no-wait``: batches were submitted (or are still running) at the provider; a rerun
    of the study collects them."""


def require_sync(spec: ModelSpec, what: str = "requests that depend on earlier answers") -> None:
    """Refuse batch mode for work that must be answered one request at a time.

    Agent steps and multi-turn conversations build each request from the previous answer,
    so each would wait for a whole batch. Call this before such a loop.

    Raises:
        BatchRefused: ``spec.batch`` is set (one line naming the system and the fix).
    """
    if spec.batch:
        raise BatchRefused(
            f"system {spec.name!r} has batch: true, but batch mode cannot answer {what}: "
            "each request would wait for a whole batch; set batch: false for this system"
        )


class Saved(NamedTuple):
    """One batch this run submitted (from ``batches/batches.jsonl``)."""

    local: str
    batch_id: str | None
    """``None``: the process ended between submitting and saving the id (adopted by
    its ``metadata.evalbench_chunk`` on the next run)."""
    keys: list[str]
    since: float
    failed_at: float | None = None
    """When its create last failed (no id came back): it is looked up by its tag."""


class BatchLog:
    """The run folder's record of one system's batches: ``batches/batches.jsonl`` (one JSON
    event per line, fsynced) and ``batches/<local id>.keys`` (one request key per line)."""

    def __init__(self, folder: Path, system: str):
        self.folder = folder
        self.path = folder / "batches.jsonl"
        self.system = system

    def entries(self) -> list[Saved]:
        """This system's batches, oldest first."""
        begun: dict[str, float] = {}
        ids: dict[str, str] = {}
        failed: dict[str, float] = {}
        for event in self._events():
            if event.get("system") != self.system:
                continue
            if event["event"] == "submitting":
                begun[event["local"]] = float(event["at"])
            elif event["event"] == "not_made":
                begun.pop(event["local"], None)
            elif event["event"] == "submitted":
                ids[event["local"]] = event["batch_id"]
            elif event["event"] == "create_failed":
                failed[event["local"]] = float(event["at"])
        return [Saved(local, ids.get(local), self._keys(local), since, failed.get(local))
                for local, since in begun.items()]  # fmt: skip

    def _events(self) -> Iterator[dict[str, Any]]:
        if not self.path.exists():
            return
        with open(self.path, encoding="utf-8") as fh:
            for number, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    yield parse_json(line)
                except ValueError:  # a line cut short by a crash: only the last can be
                    raise ValueError(f"{self.path}:{number}: not a JSON line") from None

    def _keys(self, local: str) -> list[str]:
        return (self.folder / f"{local}.keys").read_text(encoding="utf-8").split()

    def begin(self, keys: Sequence[str]) -> str:
        """Save the keys of a batch about to be submitted; returns its local id."""
        local = f"b{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{uuid.uuid4().hex[:8]}"
        self.folder.mkdir(parents=True, exist_ok=True)
        _write_synced(self.folder / f"{local}.keys", "\n".join(keys) + "\n", append=False)
        self._append(event="submitting", local=local, requests=len(keys))
        return local

    def submitted(self, local: str, batch_id: str, input_file_id: str) -> None:
        """Save the provider's id of a batch, at once."""
        self._append(event="submitted", local=local, batch_id=batch_id, input_file=input_file_id)

    def create_failed(self, local: str, reason: str) -> None:
        """Note a create that failed: the provider may have made the batch all the same."""
        self._append(event="create_failed", local=local, reason=reason)

    def not_made(self, local: str, reason: str) -> None:
        """Note a submit that made no batch (its upload or create failed for good)."""
        self._append(event="not_made", local=local, reason=reason)

    def ended(self, local: str, batch: Any, counts: dict[str, int]) -> None:
        """Note how a batch ended and what it gave (for people reading the folder)."""
        self._append(event="ended", local=local, batch_id=batch.id, status=batch.status,
                     **counts)  # fmt: skip

    def _append(self, **event: Any) -> None:
        record = {"system": self.system, "at": round(time.time(), 3), **event}
        _write_synced(self.path, to_json(record) + "\n", append=True)


def _write_synced(path: Path, text: str, *, append: bool) -> None:
    with open_in_folder(path, "a" if append else "w") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())


class _Failure(NamedTuple):
    reason: str
    transient: bool


_NO_ROUTE = frozenset({404, 405})
"""What a server without a route answers (FastAPI's servers: llama-cpp-python, vLLM)."""
_NOT_YET = object()
"""A batch whose create just failed and that the provider does not list (yet)."""


def _create_failure(exc: Exception) -> str | None:
    """Why a create failed when the provider may have made the batch (no answer, a
    timeout, 408/409/425/429 or 5xx); ``None`` for a refusal (4xx) that made nothing."""
    status = getattr(exc, "status_code", None)
    if status is None:
        kind = "timeout" if "Timeout" in type(exc).__name__ else "connection_error"
        return f"{kind}: {exc}"
    if retryable_status(status):
        body = getattr(exc, "body", None)
        detail = body.get("message") if isinstance(body, dict) else None
        return f"http_{status}: {detail or exc}"[:300]
    return None


def _route_refused(exc: Exception) -> str | None:
    """``POST /v1/files → 404 Not Found`` when ``exc`` is a 404 or 405 answer, else ``None``."""
    response = getattr(exc, "response", None)
    if getattr(exc, "status_code", None) not in _NO_ROUTE or response is None:
        return None
    request = response.request
    return f"{request.method} {request.url.path} → {response.status_code} {response.reason_phrase}"


async def run_batch(
    client: Any,
    jobs: Sequence[Job],
    finish: Callable[[int, ChatResponse], None],
    bar: Any,
) -> None:
    """Answer ``jobs`` through the Batch API; ``finish(index, response)`` for each answer.

    Raises:
        BatchRefused: the client has no run folder to save batch ids in.
        BatchPending: ``--no-wait`` and some batches are still running.
        CacheMiss: replay mode met an uncached request (nothing is submitted).
    """
    if client.batch_dir is None:
        raise BatchRefused(
            f"system {client.spec.name!r} has batch: true, which needs a run folder to save "
            "its batch ids in: ask through run.ask (or give ModelClient a batch_dir)"
        )
    waiting: dict[str, list[int]] = {}
    requests: dict[str, ChatRequest] = {}
    for index, job in enumerate(jobs):
        hit = client.cached(job.request, sim=job.sim)
        if hit is not None:
            finish(index, hit)
            continue
        key = client.key_for(job.request, job.sim)
        waiting.setdefault(key, []).append(index)
        requests[key] = client.resolve(job.request)
    if waiting:
        session = _Session(client, BatchLog(client.batch_dir, client.spec.name), finish)
        try:
            await session.run(waiting, requests, show=not bar.disable)
        finally:
            await session.close()


class _Session:
    """One :func:`run_batch` call: the API client, what is waiting, what was tried."""

    def __init__(self, client: Any, log: BatchLog, finish: Callable[[int, ChatResponse], None]):
        self.client = client
        self.spec: ModelSpec = client.spec
        self.log = log
        self.finish = finish
        self.api: Any = None
        self.waiting: dict[str, list[int]] = {}
        self.exhausted: set[tuple[str, str]] = set()  # (local id, key): no result there
        self.last_error: dict[str, _Failure] = {}
        self.rounds: dict[str, int] = {}
        self.bar: Any = None
        self.counted = 0

    async def run(
        self, waiting: dict[str, list[int]], requests: dict[str, ChatRequest], show: bool
    ) -> None:

        self.waiting = waiting
        self.api = self._open()
        self.bar = progress_bar()(total=len(waiting), desc=f"{self.spec.name} batch",
                                   disable=not show)  # fmt: skip
        try:
            while self.waiting and not STOP.is_set():
                owned = self._owned()
                unowned = [k for k in self.waiting if k not in owned]
                if unowned:
                    await self._submit_or_give_up(unowned, requests)
                    continue
                await self._poll({s.local: s for s in owned.values()})
        finally:
            self.bar.close()

    def _open(self) -> Any:
        """The SDK's client, as :mod:`.transport` asks: following no redirect (the uploaded
        requests would go to a host nobody named; a 3xx is an ``APIStatusError``), and no
        proxy to an endpoint on loopback."""
        from openai import AsyncOpenAI, DefaultAsyncHttpxClient

        url = endpoint_url(self.spec)
        http = DefaultAsyncHttpxClient(follow_redirects=False, trust_env=not is_loopback(url))
        return AsyncOpenAI(
            api_key=api_key(self.spec) or "no-key",  # a keyless endpoint: the SDK needs one
            base_url=url,
            timeout=self.spec.timeout_s,
            max_retries=self.spec.max_retries,
            http_client=http,
        )

    async def close(self) -> None:
        if self.api is not None:
            await self.api.close()

    def _owned(self) -> dict[str, Saved]:
        """The newest saved batch of each waiting key that may still give its result."""
        owner: dict[str, Saved] = {}
        for saved in self.log.entries():
            for key in saved.keys:
                if key in self.waiting and (saved.local, key) not in self.exhausted:
                    owner[key] = saved
        return owner

    # ------------------------------------------------------------------ submitting

    async def _submit_or_give_up(self, keys: list[str], requests: dict[str, ChatRequest]) -> None:
        again = [k for k in keys if self.rounds.get(k, 0) < MAX_ROUNDS]
        for key in keys:
            if key not in again:
                failure = self.last_error.get(key) or _Failure("batch_missing", True)
                self._deliver_error(key, failure.reason + f" (after {MAX_ROUNDS} batches)")
        for chunk in _chunks(again, requests, self.spec):
            await self._submit(chunk)

    async def _submit(self, lines: list[tuple[str, bytes]]) -> None:
        import openai

        keys = [key for key, _ in lines]
        local = self.log.begin(keys)
        data = b"".join(line for _, line in lines)
        try:
            upload = await self._upload(f"{local}.jsonl", data)
            for key in keys:  # an attempt, made or not, counts towards MAX_ROUNDS
                self.rounds[key] = self.rounds.get(key, 0) + 1
            await self._create(local, keys, upload.id)
        except (BatchRefused, openai.APIError) as exc:  # raised before any batch was made
            self.log.not_made(local, str(exc)[:300])
            raise

    async def _create(self, local: str, keys: list[str], file_id: str) -> None:
        import openai

        try:  # once: a retry could make a second batch (see the module docstring)
            batch = await self.api.with_options(max_retries=0).batches.create(
                input_file_id=file_id, endpoint=ENDPOINT, completion_window="24h",
                metadata={"evalbench_chunk": local, "evalbench_system": self.spec.name[:512]},
            )  # fmt: skip
        except (openai.APIConnectionError, openai.APIStatusError) as exc:
            reason = _create_failure(exc)
            if reason is None:
                await self._refuse_without_batch_api(exc, probe=True)
                raise
            self._create_failed(local, keys, reason)
            return
        self.log.submitted(local, batch.id, file_id)

    async def _upload(self, name: str, data: bytes) -> Any:
        """The input file at the provider: uploaded once per attempt, and after a failed
        attempt looked for by ``name`` first (a blind retry could leave copies)."""
        import openai

        api = self.api.with_options(max_retries=0)
        for attempt in range(self.spec.max_retries + 1):
            if attempt:
                found = await self._find_file(name, len(data))
                if found is not None:
                    return found
                await _sleep_unless_stopped(min(0.5 * 2 ** (attempt - 1), 8.0))
            try:
                return await api.files.create(file=(name, data), purpose="batch")
            except (openai.APIConnectionError, openai.APIStatusError) as exc:
                await self._refuse_without_batch_api(exc, probe=False)
                if _create_failure(exc) is None or attempt == self.spec.max_retries:
                    raise
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def _refuse_without_batch_api(self, exc: Exception, *, probe: bool) -> None:
        """Raise :class:`BatchRefused` when ``exc`` (a 404 or 405) says the endpoint has no
        Batch API. With ``probe``, only if listing batches is not found either: a Batch API
        may answer a create with 404 for its input file."""
        import openai

        route = _route_refused(exc)
        if route is None:
            return
        if probe:
            try:
                await self.api.batches.list(limit=1)
                return
            except openai.APIError as listing:
                if getattr(listing, "status_code", None) not in _NO_ROUTE:
                    return
        raise BatchRefused(f"system {self.spec.name!r}: the endpoint has no Batch API "
                           f"({route}); remove batch: true") from None  # fmt: skip

    async def _find_file(self, name: str, size: int) -> Any:
        """The uploaded file called ``name`` of ``size`` bytes, if the provider has it."""
        async for file in self.api.files.list(purpose="batch", order="desc", limit=100):
            if file.filename == name and file.bytes == size:
                return file
            if file.created_at < time.time() - 3600:  # newest first: older cannot be it
                break
        return None

    def _create_failed(self, local: str, keys: list[str], reason: str) -> None:
        self.log.create_failed(local, reason)
        for key in keys:
            self.last_error[key] = _Failure(f"batch_create_failed: {reason}", True)
        _warn(f"system {self.spec.name!r}: creating batch {local} failed ({reason}); "
              "looking it up by its tag before submitting again")  # fmt: skip

    # -------------------------------------------------------------------- polling

    async def _poll(self, active: dict[str, Saved]) -> None:

        interval = self.spec.batch_poll_s
        while active and not STOP.is_set():
            statuses: dict[str, int] = {}
            progress = 0
            for local, saved in list(active.items()):
                batch = await self._retrieve(saved)
                if batch is _NOT_YET:  # its create failed moments ago: look again
                    statuses["unconfirmed"] = statuses.get("unconfirmed", 0) + 1
                    continue
                if batch is None:  # never submitted: its keys go out again
                    self.exhausted.update((local, k) for k in saved.keys)
                    del active[local]
                    continue
                active[local] = saved = saved._replace(batch_id=batch.id)
                statuses[batch.status] = statuses.get(batch.status, 0) + 1
                if batch.status in TERMINAL:
                    await self._collect(saved, batch)
                    del active[local]
                else:
                    counts = batch.request_counts
                    progress += (counts.completed + counts.failed) if counts else 0
            self._show(statuses, progress)
            if not active:
                return
            if os.environ.get(NO_WAIT_ENV):
                raise BatchPending(self._pending_message(active, statuses))
            await _sleep_unless_stopped(interval)
            interval = min(interval * 1.5, max(MAX_POLL_S, self.spec.batch_poll_s))

    async def _retrieve(self, saved: Saved) -> Any:
        """The saved batch now, or ``None`` when the provider has no such batch."""
        import openai

        try:
            if saved.batch_id is not None:
                return await self.api.batches.retrieve(saved.batch_id)
            return await self._adopt(saved)
        except openai.NotFoundError:
            if saved.batch_id is not None:  # else batches cannot be listed: none to adopt
                _warn(f"system {self.spec.name!r}: the provider has no batch {saved.batch_id} "
                      f"(saved in {self.log.path}); its requests are submitted again")  # fmt: skip
            return None

    async def _adopt(self, saved: Saved) -> Any:
        """The batch a crashed run or a failed create submitted but did not save (found by
        its metadata); ``None`` when there is none, :data:`_NOT_YET` while a failed create
        may still be being made."""
        async for batch in self.api.batches.list(limit=100):
            if (batch.metadata or {}).get("evalbench_chunk") == saved.local:
                self.log.submitted(saved.local, batch.id, batch.input_file_id)
                return batch
            if batch.created_at < saved.since - 600:  # newest first: older ones cannot be it
                break
        if saved.failed_at is not None and time.time() - saved.failed_at < CREATE_SETTLE_S:
            return _NOT_YET
        return None

    def _show(self, statuses: dict[str, int], progress: int) -> None:
        if self.bar.disable:
            return
        self.bar.n = min(self.bar.total, self.counted + progress)
        self.bar.set_postfix({s: statuses[s] for s in sorted(statuses)}, refresh=False)
        self.bar.refresh()

    def _pending_message(self, active: dict[str, Saved], statuses: dict[str, int]) -> str:
        states = ", ".join(f"{n} {s}" for s, n in sorted(statuses.items()))
        requests = len({k for saved in active.values() for k in saved.keys} & set(self.waiting))
        return (
            f"system {self.spec.name!r}: {requests} request(s) in {len(active)} batch(es) at "
            f"the provider ({states}); ids saved in {self.log.path}; run the study again to "
            "collect them"
        )

    # ----------------------------------------------------------------- collecting

    async def _collect(self, saved: Saved, batch: Any) -> None:
        """Deliver what a finished batch gave; what it did not give is looked for again."""
        answers = 0
        failed = 0
        lines = await self._result_lines(batch)
        for line in lines:
            key = line.get("custom_id")
            if key not in self.waiting or key not in saved.keys:
                continue
            outcome = _read_line(line)
            if isinstance(outcome, _Failure):
                failed += 1
                if outcome.transient:
                    self.last_error[key] = outcome
                else:
                    self._deliver_error(key, outcome.reason)
            else:
                answers += 1
                self._deliver(key, outcome, batch)
        for key, reason in _rejected_lines(batch, saved.keys):
            if key in self.waiting:
                failed += 1
                self._deliver_error(key, reason)
        missing = [k for k in saved.keys if k in self.waiting]
        if batch.status == "failed":
            reason = _batch_failure(batch)
            for key in missing:
                self.last_error.setdefault(key, _Failure(reason, True))
        self.exhausted.update((saved.local, k) for k in missing)
        self.log.ended(saved.local, batch, {"answers": answers, "errors": failed,
                                             "without_result": len(missing)})  # fmt: skip

    async def _result_lines(self, batch: Any) -> list[dict[str, Any]]:
        lines: list[dict[str, Any]] = []
        for file_id in (batch.output_file_id, batch.error_file_id):
            if not file_id:
                continue
            content = await self.api.files.content(file_id)
            for number, text in enumerate(content.text.splitlines(), 1):
                if not text.strip():
                    continue
                try:
                    line = parse_json(text)
                except ValueError:
                    raise ProviderError(
                        f"malformed_response: batch {batch.id} file {file_id} line {number} "
                        "is not JSON", retryable=False,
                    ) from None  # fmt: skip
                # a line that names no request (not an object, a custom_id that is no
                # string) answers none: the requests it does not answer go out again
                if isinstance(line, dict) and isinstance(line.get("custom_id"), str):
                    lines.append(line)
        return lines

    def _deliver(self, key: str, answer: tuple[Any, Any], batch: Any) -> None:
        replies, usage = answer
        reply = replies[0]
        ended = batch.completed_at or batch.expired_at or batch.cancelled_at or time.time()
        choices = [Choice(text=r.text, tool_calls=list(r.tool_calls), finish_reason=r.finish_reason)
                   for r in replies] if len(replies) > 1 else []  # fmt: skip
        response = ChatResponse(
            system=self.spec.name, text=reply.text, tool_calls=list(reply.tool_calls),
            finish_reason=reply.finish_reason, usage=usage, choices=choices,
            latency_s=max(0.0, float(ended - batch.created_at)), cache_key=key,
            attempts=max(1, self.rounds.get(key, 0)),
        )  # fmt: skip
        cache = self.client.cache
        if cache is not None and self.client.cache_mode != "off":
            cache.put(key, response)
        self._hand_over(key, response)

    def _deliver_error(self, key: str, reason: str) -> None:
        response = ChatResponse(system=self.spec.name, error=without_key(reason, self.spec),
                                cache_key=key,
                                attempts=max(1, self.rounds.get(key, 0)))  # fmt: skip
        self._hand_over(key, response)

    def _hand_over(self, key: str, response: ChatResponse) -> None:
        self.client.ledger.record(self.spec, response)
        for index in self.waiting.pop(key):
            self.finish(index, response)
        self.counted += 1


def _read_line(line: dict[str, Any]) -> tuple[Any, Any] | _Failure:
    """One output/error line: (every choice, usage), or why it has no answer."""
    response, error = line.get("response"), line.get("error")
    shapeless = response is not None and not isinstance(response, dict)
    if shapeless or (response and not isinstance(response.get("status_code"), int)):
        return _Failure(f"malformed_response: {to_json(line)[:200]}", True)
    if response and response.get("status_code") == 200:
        try:
            reply, usage = parse_completion(response.get("body"))
            return (reply, *parse_more_choices(response.get("body"))), usage
        except ProviderError as exc:
            return _Failure(exc.reason, True)
    if response:
        status = int(response.get("status_code") or 0)
        body = response.get("body") or {}
        error = body.get("error") if isinstance(body, dict) else None
        detail = error.get("message") if isinstance(error, dict) else error
        transient = retryable_status(status)
        return _Failure(f"http_{status}: {str(detail or body)[:300]}", transient)
    error = error if isinstance(error, dict) else {"message": str(error or "")}
    code = str(error.get("code") or "batch_error")
    return _Failure(f"{code}: {str(error.get('message') or '')[:300]}", code in _TRANSIENT_CODES)


def _rejected_lines(batch: Any, keys: list[str]) -> Iterator[tuple[str, str]]:
    """Input lines the provider's validation rejected (they would be rejected again)."""
    errors = getattr(batch.errors, "data", None) or []
    for error in errors:
        line = getattr(error, "line", None)
        if line is not None and 1 <= line <= len(keys):
            yield keys[line - 1], f"batch_invalid: {error.code}: {error.message}"[:400]


def _batch_failure(batch: Any) -> str:
    errors = getattr(batch.errors, "data", None) or []
    first = next((e for e in errors if getattr(e, "line", None) is None), None)
    if first is None:
        return "batch_failed: the provider failed the batch"
    return f"batch_failed: {first.code}: {first.message}"[:400]


def _chunks(
    keys: list[str], requests: dict[str, ChatRequest], spec: ModelSpec
) -> Iterator[list[tuple[str, bytes]]]:
    """JSONL lines (custom_id = the cache key) in files of at most the API's limits."""
    chunk: list[tuple[str, bytes]] = []
    size = 0
    for key in keys:
        line = {"custom_id": key, "method": "POST", "url": ENDPOINT,
                "body": payload_for(spec, requests[key])}  # fmt: skip
        data = (to_json(line) + "\n").encode()
        if chunk and (len(chunk) >= MAX_REQUESTS or size + len(data) > MAX_BYTES):
            yield chunk
            chunk, size = [], 0
        chunk.append((key, data))
        size += len(data)
    if chunk:
        yield chunk


def _warn(message: str) -> None:
    print(f"evalbench: {message}", file=sys.stderr, flush=True)


async def _sleep_unless_stopped(seconds: float) -> None:

    deadline = time.monotonic() + seconds
    while not STOP.is_set() and (left := deadline - time.monotonic()) > 0:
        await asyncio.sleep(min(0.1, left))


__all__ = [
    "MAX_ROUNDS", "NO_WAIT_ENV", "BatchLog", "BatchPending", "BatchRefused", "Saved",
    "require_sync", "run_batch",
]  # fmt: skip
