"""One async chat interface for every provider: cache, retries, limits, usage.

``ModelClient.chat`` answers one request: from the cache when it can (modes ``use`` and
``replay``), else from the provider with bounded concurrency, rate limits and retries
(exponential backoff with jitter, honouring ``Retry-After``). A permanent failure comes
back as a :class:`ChatResponse` with ``error`` set: an error record, never a score.
:func:`generate` maps it over many jobs with a progress bar, from a notebook or the CLI.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import math
import os
import random
import resource
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from evalbench import processes
from evalbench.models.batch import require_sync, run_batch
from evalbench.models.cache import CacheMiss, ResponseCache, cache_key
from evalbench.models.concurrency import make_limit
from evalbench.models.progress import STOP, NotSent, pause, progress_bar
from evalbench.models.providers import (
    ProviderError,
    SimProvider,
    repeated_refusal,
    resolve_base_url,
    without_key,
)
from evalbench.models.shards import run_shards, use_shards
from evalbench.models.transport import OpenAIProvider
from evalbench.models.types import (
    CacheMode,
    ChatRequest,
    ChatResponse,
    Choice,
    Job,
    ModelSpec,
    SimReply,
    SimTask,
    Usage,
)
from evalbench.models.usage import UsageLedger, call_cost

T = TypeVar("T")
MAX_BACKOFF_S = 60.0
MAX_RETRY_AFTER_S = 600.0


class RateLimiter:
    """Token buckets for requests/min and tokens/min (either may be ``None``)."""

    def __init__(self, requests_per_minute: float | None, tokens_per_minute: float | None):
        self._requests = _Bucket(requests_per_minute) if requests_per_minute else None
        self._tokens = _Bucket(tokens_per_minute) if tokens_per_minute else None

    async def acquire(self, tokens: int) -> None:
        """Wait until one request of about ``tokens`` tokens fits both limits."""
        if self._requests is not None:
            await self._requests.take(1.0)
        if self._tokens is not None:
            await self._tokens.take(float(tokens))


class _Bucket:
    """Refills continuously at ``per_minute / 60`` per second; bursts of one second's worth.

    A one-minute burst would let a fresh run fire a whole minute's quota at once, which is
    exactly what gets a client 429s; providers enforce their limits at finer granularity.
    """

    def __init__(self, per_minute: float):
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, self.rate)
        self.level = self.capacity
        self.stamp = time.monotonic()
        self.lock = asyncio.Lock()

    async def take(self, amount: float) -> None:
        amount = min(amount, self.capacity)
        async with self.lock:
            while True:
                now = time.monotonic()
                self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
                self.stamp = now
                if self.level >= amount:
                    self.level -= amount
                    return
                await pause((amount - self.level) / self.rate)


class Pacer:
    """Starts requests no closer together than the event loop's CPU cost per request.

    Requests started together come back together, and the loop finishes such a burst one
    step of each request at a time, so the follow-up requests leave together again: against
    a steady endpoint at high concurrency the bursts merge into waves and every request waits
    for its whole wave. Spacing starts by the loop's own CPU time per request cannot lower
    throughput (the loop could not finish them faster) and keeps them spread out. Measured
    by ``make bench`` (2,000 requests, 64 in flight, 100 ms server; see docs/performance.md): ≈ 94%
    of the ideal throughput paced, ≈ 90% unpaced.

    Args:
        interval_s: fixed spacing; ``None`` measures it: a moving average of the loop
            thread's CPU time per finished request, starting at 1 ms; ``0`` disables pacing.
    """

    INITIAL_S = 0.001
    SMOOTHING = 1 / 32

    def __init__(self, interval_s: float | None):
        self.auto = interval_s is None
        self.interval = self.INITIAL_S if interval_s is None else interval_s
        self._last = -math.inf  # the slot of the latest start
        self._waiting: deque[asyncio.Future[None]] = deque()
        self._timer: asyncio.TimerHandle | None = None
        self._slot = 0.0  # when the armed timer releases the next waiting start
        self._cpu_mark: float | None = None

    async def wait(self) -> None:
        """Wait for this request's start slot.

        Waiting starts leave one :attr:`interval` (as it is *then*) after the one before: a
        first wave queued under the 1 ms guess speeds up as soon as the measured interval
        falls. Slots are kept, not pushed back: when the loop was busy past a slot, the
        starts it owes leave together, as soon as it can run them.
        """
        if not self.interval:
            return
        loop = asyncio.get_running_loop()
        now = loop.time()
        if not self._waiting and now >= self._last + self.interval:
            self._last = now
            return
        waiter: asyncio.Future[None] = loop.create_future()
        self._waiting.append(waiter)
        if self._timer is None:
            self._arm(loop, self._last + self.interval)
        await waiter

    def _arm(self, loop: asyncio.AbstractEventLoop, slot: float) -> None:
        self._slot = slot
        self._timer = loop.call_at(slot, self._release, loop)

    def _release(self, loop: asyncio.AbstractEventLoop) -> None:
        self._timer, slot, now = None, self._slot, loop.time()
        while self._waiting:
            waiter = self._waiting.popleft()
            if waiter.done():  # a cancelled wait gives its slot to the next
                continue
            waiter.set_result(None)
            self._last, slot = slot, slot + self.interval
            if slot > now:
                break
        if self._waiting:
            self._arm(loop, slot)

    def finished(self) -> None:
        """Count one finished request (auto mode: update the measured CPU per request)."""
        if not self.auto:
            return
        cpu = time.thread_time()
        if self._cpu_mark is not None:
            sample = min(cpu - self._cpu_mark, 0.05)  # one long pause must not stall starts
            self.interval += self.SMOOTHING * (sample - self.interval)
        self._cpu_mark = cpu


class _Runtime:
    """Per-event-loop state: asyncio primitives and HTTP clients cannot cross loops."""

    def __init__(self, spec: ModelSpec, provider: Any, share: float):
        self.loop = asyncio.get_running_loop()
        self.limit = make_limit(spec, share)
        self.limiter = RateLimiter(spec.requests_per_minute, spec.tokens_per_minute)
        pacing = None if spec.pacing_ms is None else spec.pacing_ms / 1000
        self.pacer = Pacer(0.0 if spec.simulated else pacing)
        self.http = provider.open()


class ModelClient:
    """Chat completions for one system or judge.

    Args:
        spec: the system as declared in params.
        cache: the response cache (``None`` disables caching whatever the mode). Simulated
            systems never use it: their answers are recomputed, free and identical.
        cache_mode: ``use`` (default), ``refresh`` (always ask, then store), ``off``, or
            ``replay`` (only the cache; a miss raises :class:`CacheMiss`).
        ledger: where usage is counted (a fresh one if not given).
        seed: seeds simulated systems whose spec has no ``seed``.
        backoff_base_s: first retry delay before jitter (doubles per attempt, max 60 s).
        batch_dir: where batch mode (``spec.batch``) saves its batch ids: the run folder's
            ``batches/`` (see :mod:`evalbench.models.batch`).
        budget_share: the part of the server's rate-limit budget this client may use
            under ``max_concurrency: auto`` (``1/N`` in each of N worker processes).
    """

    def __init__(
        self,
        spec: ModelSpec,
        *,
        cache: ResponseCache | None = None,
        cache_mode: CacheMode = "use",
        ledger: UsageLedger | None = None,
        seed: int = 0,
        backoff_base_s: float = 1.0,
        batch_dir: Path | None = None,
        budget_share: float = 1.0,
    ):
        self.spec = spec
        self.batch_dir = batch_dir
        self.budget_share = budget_share
        self.cache = cache
        self.cache_mode = cache_mode
        self.ledger = ledger if ledger is not None else UsageLedger()
        self.seed = spec.seed if spec.seed is not None else seed
        self.backoff_base_s = backoff_base_s
        self._provider = SimProvider(spec) if spec.simulated else OpenAIProvider(spec)
        self._base_url = None if spec.simulated else resolve_base_url(spec)
        self._runtime: _Runtime | None = None
        self._batches = 0
        self._jitter = random.Random(self.seed)
        self._ignores_n = False  # the endpoint answered n > 1 with fewer choices

    def resolve(self, request: ChatRequest) -> ChatRequest:
        """Fill the request's unset generation settings from the system's spec (and, for a
        request with tools, its ``tool_choice``: :meth:`ModelSpec.tool_choice_for`)."""
        spec = self.spec
        defaults: dict[str, Any] = {
            "temperature": spec.temperature,
            "max_tokens": spec.max_tokens,
            "seed": spec.seed,
            "stop": spec.stop,
        }
        unset = {k: v for k, v in defaults.items() if v is not None and getattr(request, k) is None}
        choice = spec.tool_choice_for(request)
        if choice is not None:
            unset["tool_choice"] = choice
        return request.model_copy(update=unset) if unset else request

    def key_for(self, request: ChatRequest, sim: SimTask | None = None) -> str:
        """The cache key of ``request`` as this client would send it."""
        return cache_key(
            self.spec, self.resolve(request), base_url=self._base_url, sim=sim, sim_seed=self.seed
        )

    async def chat(self, request: ChatRequest, *, sim: SimTask | None = None) -> ChatResponse:
        """Answer one request (cache → provider with retries); never raises for API errors.

        Raises:
            CacheMiss: in ``replay`` mode, when the response is not cached.
            BatchRefused: the system is in batch mode, which answers whole sets of
                independent requests (:func:`agenerate`), never one at a time.
        """
        require_sync(self.spec, "one request at a time (agent steps, multi-turn)")
        return await self._chat(request, sim)

    async def _chat(self, request: ChatRequest, sim: SimTask | None) -> ChatResponse:
        request = self.resolve(request)
        key = cache_key(self.spec, request, base_url=self._base_url, sim=sim, sim_seed=self.seed)
        response = self._from_cache(key)
        if response is None:
            response = await self._answer(request, key, sim)
            if self._caching and self.cache_mode != "off":
                assert self.cache is not None
                self.cache.put(key, response)
                if not self._batches:  # a single call commits now; a batch at its end
                    self.cache.flush()
        self.ledger.record(self.spec, response)
        return response

    @property
    def _caching(self) -> bool:
        # Simulated answers are free and recomputed exactly; caching them would only let
        # answers of an older simulator outlive a code change.
        return self.cache is not None and not self.spec.simulated

    def cached(self, request: ChatRequest, *, sim: SimTask | None = None) -> ChatResponse | None:
        """The cached response to ``request`` (counted as a cache hit), or ``None``.

        Raises:
            CacheMiss: in ``replay`` mode, when the response is not cached.
        """
        key = self.key_for(request, sim)
        response = self._from_cache(key)
        if response is not None:
            self.ledger.record(self.spec, response)
        return response

    def _from_cache(self, key: str) -> ChatResponse | None:
        if self.spec.simulated:
            return None
        if self.cache is None and self.cache_mode == "replay":
            raise CacheMiss("replay mode needs a response cache")
        if not self._caching or self.cache_mode in ("off", "refresh"):
            return None
        assert self.cache is not None
        hit = self.cache.get(key)
        if hit is None and self.cache_mode == "replay":
            raise CacheMiss(
                f"replay mode: no cached response for system {self.spec.name!r} "
                f"(request {key[:12]}); rerun with cache: use and an endpoint to fill it"
            )
        return hit.model_copy(update={"cached": True, "attempts": 0}) if hit else None

    async def _ask(self, request: ChatRequest, key: str, sim: SimTask | None) -> ChatResponse:
        """One request, retried as :attr:`spec` allows; an interrupt stops its waits: before
        the first attempt it raises :class:`NotSent`, before a retry it gives up with the
        last failure (as when the retries are spent)."""
        runtime = self._runtime_for_loop()
        tokens = estimate_tokens(request)
        attempts, previous, first = 0, None, time.perf_counter()
        while True:
            attempts += 1
            try:
                outcome = await self._try_once(runtime, request, (key, sim, attempts), tokens)
            except NotSent:
                if previous is None:
                    raise
                return self._gave_up(previous, attempts - 1, key, since=first)
            if isinstance(outcome, ChatResponse):
                return outcome
            failure = outcome
            refused = repeated_refusal(previous, failure)
            if refused or not failure.retryable or attempts > self.spec.max_retries:
                return self._gave_up(failure, attempts, key, refused, since=first)
            previous = failure
            try:
                await pause(self._delay(attempts, failure.retry_after))
            except NotSent:
                return self._gave_up(failure, attempts, key, since=first)

    async def _try_once(
        self,
        runtime: _Runtime,
        request: ChatRequest,
        job: tuple[str, SimTask | None, int],
        tokens: int,
    ) -> ChatResponse | ProviderError:
        """Attempt number ``attempts`` (``job``: key, sim, attempts) once the limits let it
        leave: its response, or its failure."""
        key, sim, attempts = job
        if STOP.is_set():
            raise NotSent
        ticket = await runtime.limit.acquire(tokens)
        outcome: Any = None  # the response headers or the ProviderError, for the limit
        try:
            await runtime.limiter.acquire(tokens)
            await runtime.pacer.wait()
            if ticket is not None:  # adaptive: when it really left
                ticket.sent = runtime.loop.time()
            started = time.perf_counter()
            try:
                replies, usage, outcome = await self._attempt(runtime, request, sim)
            except ProviderError as err:
                outcome = err
                return err
            finally:
                runtime.pacer.finished()
        finally:
            runtime.limit.release(ticket, outcome)
        reply = replies[0]
        return ChatResponse(
            system=self.spec.name,
            text=reply.text,
            tool_calls=list(reply.tool_calls),
            finish_reason=reply.finish_reason,
            choices=[_choice(r) for r in replies] if (request.n or 1) > 1 else [],
            usage=usage,
            latency_s=time.perf_counter() - started,
            cache_key=key,
            attempts=attempts,
            simulated=self.spec.simulated,
        )

    def _gave_up(
        self, failure: ProviderError, attempts: int, key: str, refused: bool = False, *,
        since: float,
    ) -> ChatResponse:  # fmt: skip
        """The error response of a request whose last attempt failed with ``failure``; its
        ``latency_s``: from its first attempt (``since``, a ``perf_counter``) to giving up."""
        why = "; the same refusal twice: not retried again" if refused else ""
        return ChatResponse(
            system=self.spec.name,
            latency_s=time.perf_counter() - since,
            error=without_key(f"{failure.reason} (after {attempts} attempt(s){why})", self.spec),
            cache_key=key,
            attempts=attempts,
            simulated=self.spec.simulated,
        )

    async def _attempt(
        self, runtime: _Runtime, request: ChatRequest, sim: SimTask | None
    ) -> tuple[tuple[SimReply, ...], Usage, Any]:
        """One attempt: every choice, the usage, and the response headers (or ``None``)."""
        if isinstance(self._provider, SimProvider):  # simulated choices are all the same
            reply, usage = await self._provider.complete(request, sim, self.seed)
            return (reply,) * (request.n or 1), usage, None
        return await self._provider.complete(runtime.http, request)

    async def _answer(self, request: ChatRequest, key: str, sim: SimTask | None) -> ChatResponse:
        """:meth:`_ask` once, or once per choice where the endpoint ignores ``n`` (it
        answered ``n > 1`` with fewer choices: llama-cpp-python's server does)."""
        wanted = request.n or 1
        if wanted > 1 and self._ignores_n:
            return await self._per_choice(request, key, sim, [])
        response = await self._ask(request, key, sim)
        if wanted == 1 or not response.ok or len(response.choices) >= wanted:
            return response
        if not self._ignores_n:
            self._ignores_n = True
            print(f"evalbench: system {self.spec.name!r}: the endpoint ignores n (asked for "
                  f"{wanted} choices, got {len(response.choices)}); asking once per choice",
                  file=sys.stderr, flush=True)  # fmt: skip
        return await self._per_choice(request, key, sim, [response])

    async def _per_choice(
        self, request: ChatRequest, key: str, sim: SimTask | None, got: list[ChatResponse]
    ) -> ChatResponse:
        wanted = request.n or 1
        single = request.model_copy(update={"n": None})
        missing = wanted - sum(len(r.choices) for r in got)
        got += await asyncio.gather(*(self._ask(single, key, sim) for _ in range(missing)))
        return _merged(self.spec, key, got, wanted)

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        """Retry-After when the server gave one, else exponential backoff with equal jitter."""
        if retry_after is not None:
            return min(retry_after, MAX_RETRY_AFTER_S)
        ceiling = min(MAX_BACKOFF_S, self.backoff_base_s * 2 ** (attempt - 1))
        return ceiling / 2 + self._jitter.uniform(0, ceiling / 2)

    def _runtime_for_loop(self) -> _Runtime:
        loop = asyncio.get_running_loop()
        if self._runtime is None or self._runtime.loop is not loop:
            self._runtime = _Runtime(self.spec, self._provider, self.budget_share)
        return self._runtime

    async def aclose(self) -> None:
        """Close the HTTP client of the current event loop, if any."""
        runtime, self._runtime = self._runtime, None
        if runtime is not None and runtime.http is not None:
            await runtime.http.close()


def _choice(reply: SimReply) -> Choice:
    return Choice(text=reply.text, tool_calls=list(reply.tool_calls),
                  finish_reason=reply.finish_reason)  # fmt: skip


def _merged(spec: ModelSpec, key: str, parts: list[ChatResponse], wanted: int) -> ChatResponse:
    """One response from the requests that asked for the choices one at a time."""
    choices = [c for r in parts for c in r.choices or [Choice(text=r.text, tool_calls=r.tool_calls,
               finish_reason=r.finish_reason)]][:wanted]  # fmt: skip
    counts = [(r.usage.prompt_tokens, r.usage.completion_tokens) for r in parts]
    usage = Usage(prompt_tokens=_total([p for p, _ in counts]),
                  completion_tokens=_total([c for _, c in counts]))  # fmt: skip
    note = f"the endpoint ignores n: {wanted} choices asked in {len(parts)} requests"
    failed = next((r for r in parts if not r.ok), None)
    first = choices[0]
    return ChatResponse(
        system=spec.name, text=None if failed else first.text,
        tool_calls=[] if failed else first.tool_calls,
        finish_reason=None if failed else first.finish_reason,
        choices=[] if failed else choices, usage=usage, note=note,
        latency_s=max(r.latency_s for r in parts), cache_key=key,
        attempts=sum(r.attempts for r in parts), simulated=spec.simulated,
        error=None if failed is None else f"{failed.error} ({note})",
    )  # fmt: skip


def _total(counts: list[int | None]) -> int | None:
    """The sum of token counts, ``None`` when the endpoint reported none of them."""
    known = [c for c in counts if c is not None]
    return sum(known) if known else None


def estimate_tokens(request: ChatRequest) -> int:
    """A cheap token estimate for rate limiting: prompt chars / 4 plus ``max_tokens``."""
    chars = sum(len(str(m.get("content") or "")) for m in request.messages)
    return chars // 4 + (request.max_tokens or 0)


async def agenerate(
    client: ModelClient,
    jobs: Sequence[Job],
    *,
    on_result: Callable[[Job, ChatResponse], None] | None = None,
    progress: bool = True,
    desc: str | None = None,
    postfix: Callable[[Job, ChatResponse], dict[str, Any]] | None = None,
) -> list[ChatResponse]:
    """Answer every job with bounded concurrency; results in job order.

    Args:
        client: the system to ask.
        jobs: the requests (``Job.key`` identifies each in ``on_result``).
        on_result: called as each job finishes (write its record here to checkpoint).
        progress: show a tqdm bar (items done, errors, tokens, cost so far, ETA).
        desc: bar label (default: the system name).
        postfix: extra bar fields from the latest result (e.g. the last answer's topic).

    Raises:
        CacheMiss: replay mode met an uncached request (other jobs are cancelled).
    """
    bar = progress_bar()(total=len(jobs), desc=desc or client.spec.name, disable=not progress)
    totals = {"errors": 0, "tokens": 0, "cost": 0.0}
    results: list[ChatResponse | None] = [None] * len(jobs)
    pending = iter(enumerate(jobs))

    def finish(index: int, response: ChatResponse) -> None:
        results[index] = response
        if on_result is not None:
            on_result(jobs[index], response)
        extra = postfix(jobs[index], response) if postfix is not None else {}
        _advance(bar, totals, client, response, extra)

    async def worker() -> None:
        # A fixed pool of max_concurrency workers (not one task per job): 100k jobs do not
        # become 100k pending coroutines, and requests leave in job order.
        for index, job in pending:
            if STOP.is_set():  # interrupted: start nothing new, let the others finish
                return
            try:
                response = await client._chat(job.request, job.sim)
            except NotSent:  # interrupted while it waited to leave: never sent, not recorded
                return
            finish(index, response)

    client._batches += 1
    try:
        with frozen_heap():
            if client.spec.batch:
                await run_batch(client, jobs, finish, bar)
            elif use_shards(client, jobs):
                await run_shards(client, jobs, finish, shard_worker)
            else:
                workers = min(len(jobs), client.spec.concurrency_limit)
                await _gather_or_cancel([worker() for _ in range(workers)])
    finally:
        client._batches -= 1
        bar.close()
        await client.aclose()
        if client.cache is not None:
            client.cache.flush()
    return [r for r in results if r is not None]


_FROZEN = [0]  # batches running in this process with the heap frozen
_FOR_GOOD = [False]  # freeze_for_good() was called in this process
_FROZEN_LOCK = threading.Lock()


@contextlib.contextmanager
def frozen_heap() -> Any:
    """Keep every object that exists when a batch starts out of the garbage collector's
    passes until the last running batch ends (:func:`gc.freeze`).

    A full collection walks the whole heap (in a worker process, ~75 ms for what importing
    the client leaves; in a notebook kernel, more) with the event loop stopped, while every
    response in flight waits: each one cost a worker about a tenth of a second's requests
    (``make bench``). Objects made during the batch are collected as usual; the frozen ones
    only wait for the end of the batch, when :func:`gc.unfreeze` gives them back.

    In a process that froze its heap for good (:func:`freeze_for_good`) a batch does
    neither: an unfreeze would give back that heap too.
    """
    with _FROZEN_LOCK:
        _FROZEN[0] += 1
        if not _FOR_GOOD[0]:
            gc.freeze()
    try:
        yield
    finally:
        with _FROZEN_LOCK:
            _FROZEN[0] -= 1
            if not _FROZEN[0] and not _FOR_GOOD[0]:
                gc.unfreeze()


def freeze_for_good() -> None:
    """Keep every object that exists now out of the garbage collector's passes for the rest
    of this process (:func:`gc.freeze`; a later call adds what exists then).

    For a long-lived process once its imports are done (a warm kernel, a test process): what
    they made (pandas, matplotlib, scipy: ~200,000 objects in a kernel) is then never walked
    again, where every full collection (one per ``%reset``, another in IPython's output-cache
    flush) walked it all. Batches then leave the freeze in place (:func:`frozen_heap`).
    """
    with _FROZEN_LOCK:
        gc.freeze()
        _FOR_GOOD[0] = True


def _advance(
    bar: Any,
    totals: dict[str, Any],
    client: ModelClient,
    response: ChatResponse,
    extra: dict[str, Any],
) -> None:
    if bar.disable:  # nothing to show: skip the per-response formatting
        return
    totals["errors"] += int(not response.ok)
    if not response.cached:
        totals["tokens"] += (response.usage.prompt_tokens or 0) + (
            response.usage.completion_tokens or 0
        )
        totals["cost"] += call_cost(client.spec, response)
    bar.set_postfix(
        errors=totals["errors"],
        tokens=totals["tokens"],
        cost=f"${totals['cost']:.4f}",
        **extra,
        refresh=False,
    )
    bar.update(1)


async def _gather_or_cancel(coros: list[Any]) -> list[Any]:
    tasks = [asyncio.ensure_future(c) for c in coros]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def generate(
    client: ModelClient,
    jobs: Sequence[Job],
    *,
    on_result: Callable[[Job, ChatResponse], None] | None = None,
    progress: bool = True,
    desc: str | None = None,
    postfix: Callable[[Job, ChatResponse], dict[str, Any]] | None = None,
) -> list[ChatResponse]:
    """Synchronous :func:`agenerate`, safe inside Jupyter (which already runs a loop)."""
    return run_sync(
        agenerate(client, jobs, on_result=on_result, progress=progress, desc=desc, postfix=postfix)
    )


class _LoopThreads:
    """The threads :func:`run_sync` runs its event loops on, reused from call to call.

    A notebook kernel opens a file descriptor for every thread that writes output (a
    progress bar) and frees it only seconds after the thread ends, so a new thread per call
    ran a study that asks ~1,000 systems out of descriptors. A thread still busy (a nested
    call, or a coroutine abandoned on a second interrupt) is never shared: another is made.
    """

    KEEP_IDLE = 2

    def __init__(self) -> None:
        self._idle: list[ThreadPoolExecutor] = []
        self._lock = threading.Lock()

    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        """Run ``fn(*args)`` on an idle thread (a new one when none is idle)."""
        with self._lock:
            pool = self._idle.pop() if self._idle else ThreadPoolExecutor(1, "evalbench-loop")
        future = pool.submit(fn, *args)
        future.add_done_callback(lambda _: self._release(pool))
        return future

    def _release(self, pool: ThreadPoolExecutor) -> None:
        with self._lock:
            if len(self._idle) < self.KEEP_IDLE:
                self._idle.append(pool)
                return
        pool.shutdown(wait=False)


_LOOP_THREADS = _LoopThreads()


def run_sync(coro: Any) -> Any:
    """Run a coroutine to completion from sync code, and stop it cleanly on an interrupt.

    The coroutine runs on a fresh event loop in a worker thread (Jupyter kernels already run
    a loop in the main thread, where ``asyncio.run`` refuses to start; the threads are
    reused, :class:`_LoopThreads`), so the main thread can catch ``KeyboardInterrupt``
    (Ctrl-C, a kernel interrupt, or SIGTERM turned into one): it sets :data:`STOP`, waits
    for the requests in flight to finish and be recorded, then re-raises. A second interrupt
    abandons them.
    """
    STOP.clear()
    future = _LOOP_THREADS.submit(asyncio.run, coro)
    try:
        return future.result()
    except KeyboardInterrupt:
        STOP.set()
        print("evalbench: interrupted; starting no new request, waiting for those in flight "
              "(interrupt again to abandon them)", file=sys.stderr, flush=True)  # fmt: skip
        with contextlib.suppress(Exception):
            future.result()
        raise


def shard_worker(settings: tuple[Any, ...], shard: list[tuple[int, str]], queue: Any) -> None:
    """A worker process of :func:`evalbench.models.shards.run_shards`: answers its shard with
    its own client and event loop, streaming the responses to ``queue`` in groups (every
    :data:`SHARD_FLUSH_S`; one message per response cost the parent more CPU than the
    request itself), then its CPU and RSS."""
    spec_json, cache_path, cache_mode, seed, backoff, env, share, parent = settings
    processes.exit_with(parent)  # a shard asks (and pays) only while its parent is there
    os.environ.update(env)
    spec = ModelSpec.model_validate_json(spec_json)
    cache = ResponseCache(Path(cache_path)) if cache_path else None
    client = ModelClient(spec, cache=cache, cache_mode=cache_mode, seed=seed,
                         backoff_base_s=backoff, budget_share=share)  # fmt: skip
    jobs = [Job(str(i), ChatRequest.model_validate_json(body)) for i, body in shard]
    done: list[tuple[int, str]] = []

    def send(job: Job, response: ChatResponse) -> None:
        done.append((int(job.key), response.model_dump_json()))

    async def answer() -> None:
        task = asyncio.ensure_future(agenerate(client, jobs, on_result=send, progress=False))
        while not task.done():
            await asyncio.wait({task}, timeout=SHARD_FLUSH_S)
            _send_results(queue, done)
        task.result()

    try:
        asyncio.run(answer())
    except BaseException as exc:  # reported to the parent, which raises it
        queue.put(("error", -1, f"{type(exc).__name__}: {exc}"))
    finally:
        _send_results(queue, done)
        usage = resource.getrusage(resource.RUSAGE_SELF)
        stats = {"cpu_s": usage.ru_utime + usage.ru_stime, "peak_rss_mb": usage.ru_maxrss / 1024}
        queue.put(("done", -1, json.dumps(stats)))


SHARD_FLUSH_S = 0.01
"""How often a shard worker sends the responses it has (checkpoints lag by at most this)."""


def _send_results(queue: Any, done: list[tuple[int, str]]) -> None:
    if done:
        queue.put(("results", -1, done[:]))
        done.clear()


__all__ = [
    "STOP", "CacheMiss", "ModelClient", "Pacer", "RateLimiter", "agenerate", "generate", "run_sync"
]  # fmt: skip
