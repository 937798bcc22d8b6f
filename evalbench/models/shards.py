"""Sharding a large batch over worker processes (``ModelSpec.processes > 1``).

One event loop spends about 0.3 ms of CPU per request (evalbench's transport, cache and
accounting; ``make bench``); against a fast endpoint at high concurrency that CPU, not the
endpoint, becomes the bottleneck. With ``processes: N`` a batch is split over N worker
processes, each with its own event loop, connection pool and 1/N of the concurrency and
rate limits. Workers answer cache hits themselves (the parent looked every request up
first, which delayed the first request of 6,000 by ≈ 90 ms), and results stream back to
the parent as they arrive, so checkpoints, usage accounting and the progress bar work
exactly as in-process; workers write the same response cache (SQLite WAL is multi-process
safe). In ``replay`` mode the parent still looks every request up first, so a miss raises
:class:`~evalbench.models.cache.CacheMiss` before any worker starts.

Workers start from a ``forkserver`` that has imported the client once, so a batch starts in
milliseconds, without forking a Jupyter kernel's threads. Each worker still pays its own
client set-up and connections, so sharding only pays where one loop's CPU is the limit
(``make bench`` and the README: at concurrency 256 against a 100 ms server two processes
beat one; at concurrency 64, where one paced loop keeps up, they do not).
"""

from __future__ import annotations

import asyncio
import json
import math
import multiprocessing
import os
from collections.abc import Callable, Sequence
from typing import Any

from evalbench import processes
from evalbench.models.types import ChatResponse, Job, ModelSpec

MIN_JOBS_PER_PROCESS = 64
_PRELOAD = ["evalbench.models.client", "openai"]


def use_shards(client: Any, jobs: Sequence[Job]) -> bool:
    """Whether this batch goes to worker processes (real providers, big enough batches)."""
    spec: ModelSpec = client.spec
    return (
        spec.processes > 1
        and not spec.simulated
        and len(jobs) >= spec.processes * MIN_JOBS_PER_PROCESS
    )


def shard_spec(spec: ModelSpec, processes: int) -> ModelSpec:
    """The spec one worker uses: 1/N of the concurrency (or of the ``auto`` ceiling) and of
    the rate limits; under ``auto`` each worker also uses 1/N of the server's observed
    rate-limit budget (``ModelClient(budget_share=...)``)."""

    def share(limit: float | None) -> float | None:
        return None if limit is None else limit / processes

    def part(count: int) -> int:
        return max(1, math.ceil(count / processes))

    concurrency = spec.max_concurrency
    return spec.model_copy(
        update={
            "processes": 1,
            "max_concurrency": concurrency if concurrency == "auto" else part(concurrency),
            "concurrency_ceiling": part(spec.concurrency_ceiling),
            "requests_per_minute": share(spec.requests_per_minute),
            "tokens_per_minute": share(spec.tokens_per_minute),
        }
    )


async def run_shards(
    client: Any,
    jobs: Sequence[Job],
    finish: Callable[[int, ChatResponse], None],
    worker: Callable[..., None],
) -> None:
    """Answer ``jobs`` in ``client.spec.processes`` workers; ``finish(index, response)`` each.

    ``worker(settings, shard, queue)`` is the process target (a module-level function, so
    the forkserver can import it: :func:`evalbench.models.client.shard_worker`).

    Each worker's CPU time and peak RSS end up in ``client.shard_stats``.

    Raises:
        RuntimeError: a worker failed (its error, e.g. a replay-mode cache miss, is named).
    """
    misses = list(range(len(jobs)))  # the workers answer cache hits themselves
    if client.cache_mode == "replay":  # a miss raises CacheMiss here, before any worker
        misses = []
        for index, job in enumerate(jobs):
            hit = client.cached(job.request)
            if hit is None:
                misses.append(index)
            else:
                finish(index, hit)
    client.shard_stats = []
    if misses:
        await _run_workers(client, [(i, jobs[i]) for i in misses], finish, worker)


async def _run_workers(
    client: Any,
    work: list[tuple[int, Job]],
    finish: Callable[[int, ChatResponse], None],
    worker: Callable[..., None],
) -> None:
    spec: ModelSpec = client.spec
    count = min(spec.processes, len(work))
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(_PRELOAD)
    queue = context.Queue()
    cache_path = str(client.cache.path) if client.cache is not None else None
    # The forkserver's environment is a snapshot from its start: pass the variables this
    # system reads now (in memory, over the process pipe; never written anywhere).
    env = {n: os.environ[n] for n in (spec.api_key_env, spec.base_url_env) if n and n in os.environ}
    settings = (shard_spec(spec, count).model_dump_json(), cache_path, client.cache_mode,
                client.seed, client.backoff_base_s, env, 1.0 / count, os.getpid())  # fmt: skip
    workers = [
        context.Process(
            target=worker,
            args=(
                settings,
                [(i, job.request.model_dump_json()) for i, job in work[n::count]],
                queue,
            ),
            daemon=True,
        )
        for n in range(count)
    ]
    processes.before_forkserver()  # the workers carry this process's mark
    try:
        for process in workers:
            process.start()
            assert process.pid is not None  # set by start()
            processes.tie(process.pid)  # dies with this process, even by kill -9
        await _collect(queue, count, client, finish)
    finally:
        for process in workers:
            if process.pid is None:  # never started
                continue
            if process.is_alive():
                process.terminate()
            process.join(5)
            processes.untie(process.pid)
        queue.close()


async def _collect(
    queue: Any, count: int, client: Any, finish: Callable[[int, ChatResponse], None]
) -> None:
    # One thread drains the queue and finishes each result as it arrives: handing every
    # message to the event loop separately cost more parent CPU than the workers saved.
    await asyncio.get_running_loop().run_in_executor(None, _drain, queue, count, client, finish)


def _drain(
    queue: Any, count: int, client: Any, finish: Callable[[int, ChatResponse], None]
) -> None:
    while len(client.shard_stats) < count:
        kind, _, payload = queue.get()
        if kind == "done":
            client.shard_stats.append(json.loads(payload))
        elif kind == "error":
            raise RuntimeError(f"a worker process of {client.spec.name!r} failed: {payload}")
        else:  # "results": [(job index, response JSON), ...]
            for index, body in payload:
                response = ChatResponse.model_validate_json(body)
                client.ledger.record(client.spec, response)
                finish(index, response)
