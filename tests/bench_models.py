"""Benchmark: client throughput against the loopback server (``make bench``).

The issue's setting: 2,000 requests at concurrency 64 against an OpenAI-compatible server on
127.0.0.1 that answers every request after 100 ms, three times (fresh prompts each time;
median, min and max reported). The ideal is concurrency / latency = 640 requests/s. Then the
same 2,000 requests again from the response cache (expected: zero requests).

Configurations, each against its own server process (so the client's CPU is measured alone):

- ``default``: one event loop, request starts paced by the loop's own CPU per request
  (``pacing_ms`` unset; see ``evalbench.models.client.Pacer``);
- ``unpaced``: the same with ``pacing_ms: 0`` (what pacing buys);
- ``processes_2``: the batch sharded over two worker processes (``evalbench.models.shards``);
- ``bare_sdk``: the same requests through ``AsyncOpenAI.post`` under a semaphore of 64, no
  evalbench layer and no pacing;
- ``cpu_bound_processes_1`` / ``_2``: 6,000 requests at concurrency 256 (ideal 2,560/s),
  where one event loop's CPU, not the endpoint, is the limit: what ``processes`` is for
  (issue 26: ≥ 85% of ideal on 2 cores); ``cpu_bound_bare_sdk``: the official client alone
  at the same 256 in flight;
- ``auto``: ``max_concurrency: auto`` (ceiling 64) against the same server: what the
  default for real providers reaches with no tuning;
- ``rate_limited_auto`` / ``rate_limited_fixed_64``: 3,000 requests against a server that
  allows 300 requests/s (a token bucket of 60, refilled continuously; ``x-ratelimit-*``
  headers, 429 + ``Retry-After`` when empty), with ``auto`` and with a hand-set 64: the
  share of the allowed rate reached and of requests refused;
- ``token_limited_auto``: the same with a token limit instead (60,000 tokens/s, bucket
  12,000; each request counts prompt/4 + ``max_tokens`` 200 ≈ 201 tokens, ≈ 299/s allowed).
- ``queueing_serial`` / ``queueing_auto`` / ``queueing_bare_sdk``: 200 requests against a
  server that serves one request at a time for 50 ms and queues the rest, never refusing
  (llama-cpp-python's server does so): evalbench one at a time, ``max_concurrency: auto``,
  and the official client one at a time. ``auto`` must settle at ≤ 2 in flight, with no
  timeout and ≥ 95% of the serial throughput (issue 34).
- ``real_one_slot``: the same comparison against a real model server (llama-cpp-python with
  SmolLM2-135M-Instruct, one request at a time; tests/realmodel.py), ``REAL_N`` requests of
  at most 16 tokens each way, serial then ``auto`` on fresh prompts; skipped (with the reason)
  without the local extra.

Client CPU includes the workers'. Writes ``outputs/bench/models.json`` (or
``$EVALBENCH_OUTPUTS/bench/models.json``). ``BENCH_REPEATS`` sets the number of timed
batches per configuration (default 3), ``BENCH_CONFIGS`` a comma-separated subset.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
N, CONCURRENCY, LATENCY = int(os.environ.get("BENCH_REQUESTS", 2000)), 64, 0.100
CPU_BOUND_N, CPU_BOUND_CONCURRENCY = 3 * N, 4 * CONCURRENCY
REPEATS = int(os.environ.get("BENCH_REPEATS", 3))

SERVER = """
import resource, sys
sys.path.insert(0, {tests!r})
from loopback import LoopbackServer, RateLimit
s = LoopbackServer(latency={latency}).start()
s.rate_limit = {rate_limit}
s.slots = {slots}
print(s.port, flush=True)
sys.stdin.read()  # serve until the parent closes our stdin
usage = resource.getrusage(resource.RUSAGE_SELF)
print(s.count, s.max_in_flight, usage.ru_utime + usage.ru_stime, s.rejected, flush=True)
print(*s.arrivals, flush=True)
print(*s.concurrency, flush=True)
"""
RATE_N, RATE_REQUESTS, RATE_BURST = int(os.environ.get("BENCH_RATE_REQUESTS", 3000)), 300.0, 60.0
REQUEST_LIMIT = f"RateLimit(requests_per_s={RATE_REQUESTS}, request_burst={RATE_BURST})"
TOKEN_LIMIT = "RateLimit(tokens_per_s=60000.0, token_burst=12000.0)"
TOKENS_PER_REQUEST = 201  # "r<i>-<j>" prompts of ≤ 8 chars: 1 + max_tokens 200
QUEUE_N, QUEUE_LATENCY = int(os.environ.get("BENCH_QUEUE_REQUESTS", 200)), 0.05
REAL_N = int(os.environ.get("BENCH_REAL_REQUESTS", 64))


CONFIGS = {
    "default": lambda: run_config(),
    "unpaced": lambda: run_config(pacing_ms=0),
    "processes_2": lambda: run_config(processes=2),
    "bare_sdk": lambda: run_bare_sdk(),
    "cpu_bound_processes_1": lambda: run_config(n=CPU_BOUND_N, concurrency=CPU_BOUND_CONCURRENCY),
    "cpu_bound_processes_2": lambda: run_config(
        n=CPU_BOUND_N, concurrency=CPU_BOUND_CONCURRENCY, processes=2
    ),
    "cpu_bound_bare_sdk": lambda: run_bare_sdk(CPU_BOUND_N, CPU_BOUND_CONCURRENCY),
    "auto": lambda: run_config(concurrency="auto"),
    "rate_limited_auto": lambda: run_rate_limited("auto", REQUEST_LIMIT, RATE_REQUESTS),
    "rate_limited_fixed_64": lambda: run_rate_limited(64, REQUEST_LIMIT, RATE_REQUESTS),
    "token_limited_auto": lambda: run_rate_limited(
        "auto", TOKEN_LIMIT, 60000.0 / TOKENS_PER_REQUEST
    ),
    "queueing_serial": lambda: run_queueing(1),
    "queueing_auto": lambda: run_queueing("auto"),
    "queueing_bare_sdk": lambda: run_queueing_sdk(),
    "real_one_slot": lambda: run_real_one_slot(),
}


def main() -> None:
    from evalbench.records import to_json, write_atomic

    chosen = os.environ.get("BENCH_CONFIGS", ",".join(CONFIGS)).split(",")
    unknown = sorted(set(chosen) - set(CONFIGS))
    if unknown:
        sys.exit(f"BENCH_CONFIGS: unknown {unknown}; choose from {sorted(CONFIGS)}")
    results = {name: CONFIGS[name]() for name in chosen}
    if {"queueing_serial", "queueing_auto"} <= set(results):
        serial = results["queueing_serial"]["achieved_requests_per_s"]["median"]
        auto = results["queueing_auto"]
        auto["ratio_to_serial"] = round(auto["achieved_requests_per_s"]["median"] / serial, 3)
        auto["meets_target"] = (auto["ratio_to_serial"] >= 0.95 and auto["timeouts"] == 0
                                and auto["max_in_flight_settled"] <= 2)  # fmt: skip
    results["machine"] = f"{os.cpu_count()} cores, python {sys.version.split()[0]}"
    out = Path(os.environ.get("EVALBENCH_OUTPUTS") or ROOT / "outputs") / "bench" / "models.json"
    write_atomic(out, to_json(results, indent=2) + "\n")
    print(to_json(results, indent=2))
    print(f"wrote {out}")


def _start_server(
    rate_limit: str = "None", latency: float = LATENCY, slots: int | None = None
) -> tuple[subprocess.Popen, int]:
    code = SERVER.format(tests=str(ROOT / "tests"), latency=latency, rate_limit=rate_limit,
                         slots=slots)  # fmt: skip
    server = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    return server, int(server.stdout.readline())


def _stop_server(server: subprocess.Popen, full: bool = False) -> Any:
    """Requests served, maximum in flight, server CPU seconds (``full``: also requests
    refused by the rate limit and every arrival time)."""
    server.stdin.close()
    served, max_in_flight, server_cpu, rejected = (
        float(x) for x in server.stdout.readline().split()
    )
    arrivals = [float(x) for x in server.stdout.readline().split()]
    concurrency = [int(x) for x in server.stdout.readline().split()]
    server.wait(10)
    if full == "concurrency":
        return concurrency
    if full:
        return int(served), int(rejected), arrivals
    return int(served), int(max_in_flight), server_cpu


def run_rate_limited(concurrency: int | str, rate_limit: str, allowed_per_s: float) -> dict:
    """Batches of ``RATE_N`` requests against a rate-limited server (fresh per batch, so each
    starts with a full bucket): the share of the allowed rate reached, requests refused."""
    from evalbench.models import ChatRequest, Job, ModelClient, ModelSpec, generate

    os.environ["EVALBENCH_BENCH_KEY"] = "sk-bench"
    shares, refused, walls, errors = [], [], [], 0
    for repeat in range(REPEATS):
        server, port = _start_server(rate_limit)
        spec = ModelSpec(
            name="bench", provider="openai", model="m", base_url=f"http://127.0.0.1:{port}/v1",
            api_key_env="EVALBENCH_BENCH_KEY", max_concurrency=concurrency, timeout_s=30,
            max_tokens=200, max_retries=20,
        )  # fmt: skip
        jobs = [Job(str(i), ChatRequest(messages=[{"role": "user", "content": f"r{repeat}-{i}"}]))
                for i in range(RATE_N)]  # fmt: skip
        client = ModelClient(spec, backoff_base_s=0.1)
        started = time.perf_counter()
        responses = generate(client, jobs, progress=False)
        walls.append(time.perf_counter() - started)
        served, rejected, arrivals = _stop_server(server, full=True)
        errors += sum(not r.ok for r in responses)
        accepted = sorted(arrivals)  # the server's clock; refused ones included
        span = accepted[-1] - accepted[0]
        burst = RATE_BURST if "requests_per_s" in rate_limit else 12000.0 / TOKENS_PER_REQUEST
        shares.append((RATE_N - burst) / span / allowed_per_s)
        refused.append(rejected / served)
    return {
        "requests": RATE_N,
        "max_concurrency": concurrency,
        "server": rate_limit,
        "allowed_requests_per_s": round(allowed_per_s, 1),
        "share_of_allowed_rate": _spread(shares, 3),
        "refused_share_of_requests": _spread(refused, 4),
        "wall_s": _spread(walls, 2),
        "errors": errors,
        "note": "share = (requests - the initial bucket) / (last arrival - first arrival) / "
        "allowed rate; refused = 429s / all requests the server received",
    }


def run_queueing(concurrency: int | str) -> dict:
    """Batches of ``QUEUE_N`` requests against a one-slot queueing server (fresh per batch):
    requests/s, requests in flight as each arrived (all, and after the first 10%), timeouts."""
    from evalbench.models import ChatRequest, Job, ModelClient, ModelSpec, generate

    os.environ["EVALBENCH_BENCH_KEY"] = "sk-bench"
    rates, in_flight, settled, timeouts, errors = [], [], [], 0, 0
    for repeat in range(REPEATS):
        server, port = _start_server(latency=QUEUE_LATENCY, slots=1)
        spec = ModelSpec(
            name="bench", provider="openai", model="m", base_url=f"http://127.0.0.1:{port}/v1",
            api_key_env="EVALBENCH_BENCH_KEY", max_concurrency=concurrency, timeout_s=30,
            max_retries=0,
        )  # fmt: skip
        jobs = [Job(str(i), ChatRequest(messages=[{"role": "user", "content": f"s{repeat}-{i}"}]))
                for i in range(QUEUE_N)]  # fmt: skip
        started = time.perf_counter()
        responses = generate(ModelClient(spec), jobs, progress=False)
        rates.append(QUEUE_N / (time.perf_counter() - started))
        concurrency_at_arrival = _stop_server(server, full="concurrency")
        in_flight.append(max(concurrency_at_arrival))
        settled.append(max(concurrency_at_arrival[QUEUE_N // 10 :]))
        errors += sum(not r.ok for r in responses)
        timeouts += sum((r.error or "").startswith("timeout") for r in responses)
    return {
        "requests": QUEUE_N,
        "max_concurrency": concurrency,
        "server": f"1 slot, {QUEUE_LATENCY * 1000:g} ms per request, the rest queued",
        "achieved_requests_per_s": _spread(rates),
        "ratio_to_one_slot": _spread([r * QUEUE_LATENCY for r in rates], 3),
        "max_in_flight": max(in_flight),
        "max_in_flight_settled": max(settled),
        "timeouts": timeouts,
        "errors": errors,
        "note": "in flight = requests at the server (served or queued) as each arrived; "
        "settled = after the first 10% of requests; one slot = 1 / 50 ms = 20 requests/s",
    }


def run_real_one_slot() -> dict:
    """Serial vs ``auto`` against a real one-slot model server (see the module docstring)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from realmodel import MODEL_ALIAS, RealServer, unavailable

    reason = unavailable()
    if reason is not None:
        return {"skipped": reason}
    with tempfile.TemporaryDirectory() as tmp:
        server = RealServer(Path(tmp) / "server.log").start()
        try:  # serial before and after auto: the machine's load drifts
            _real_batch(server.base_url, MODEL_ALIAS, "warm-up", 1, count=1)
            runs = {name: _real_batch(server.base_url, MODEL_ALIAS, name, concurrency)
                    for name, concurrency in (("serial", 1), ("auto", "auto"),
                                              ("serial_after", 1))}  # fmt: skip
        finally:
            server.stop()
    auto = runs["auto"]
    serial = (runs["serial"]["requests_per_s"] + runs["serial_after"]["requests_per_s"]) / 2
    ratio = auto["requests_per_s"] / serial
    return {
        "requests": REAL_N,
        "server": "llama-cpp-python, SmolLM2-135M-Instruct Q4_1, 1 slot, n_threads 1",
        "startup_s": round(server.startup_s, 2),
        **runs,
        "ratio_auto_to_serial": round(ratio, 3),
        "note_ratio": "auto over the mean of the serial batches before and after it",
        "meets_target": ratio >= 0.95
        and auto["timeouts"] == 0
        and auto["max_in_flight_settled"] <= 2,
        "load_average_1m": round(os.getloadavg()[0], 2),
        "note": "in flight = the client's requests in flight as each answer came back, over "
        "the second half; every answer runs to the 16-token limit (a long story asked for), so "
        "serial and auto do the same work",
    }


def _real_batch(
    base_url: str, model: str, name: str, concurrency: int | str, count: int = 0
) -> dict:
    from evalbench.models import ChatRequest, Job, ModelClient, ModelSpec, generate

    os.environ["EVALBENCH_BENCH_KEY"] = "no-auth-on-loopback"
    spec = ModelSpec(name="real", provider="openai", model=model, base_url=base_url,
                     api_key_env="EVALBENCH_BENCH_KEY", max_concurrency=concurrency,
                     max_tokens=16, temperature=0.0, max_retries=0)  # fmt: skip
    words = "Tell a long story about the number {i} (" + name + ")."
    count = count or REAL_N
    jobs = [Job(str(i), ChatRequest(messages=[{"role": "user", "content": words.format(i=i)}]))
            for i in range(count)]  # fmt: skip
    client = ModelClient(spec)
    in_flight: list[int] = []

    def seen(job: Job, response: Any) -> None:
        runtime = client._runtime
        in_flight.append(getattr(runtime.limit, "in_flight", 0) + 1 if runtime else 0)

    started = time.perf_counter()
    responses = generate(client, jobs, progress=False, on_result=seen)
    wall = time.perf_counter() - started
    return {
        "requests_per_s": round(count / wall, 3),
        "wall_s": round(wall, 1),
        "completion_tokens": sum(r.usage.completion_tokens or 0 for r in responses),
        "max_in_flight_settled": max(in_flight[count // 2 :], default=0),
        "timeouts": sum((r.error or "").startswith("timeout") for r in responses),
        "errors": sum(not r.ok for r in responses),
    }


def run_queueing_sdk() -> dict:
    """The official client alone, one request at a time, against the one-slot server."""
    rates = []
    for r in range(REPEATS):
        server, port = _start_server(latency=QUEUE_LATENCY, slots=1)
        rate, _, _ = _sdk_only(port, QUEUE_N, f"sdk{r}", 1)
        rates.append(rate)
        _stop_server(server)
    return {
        "requests": QUEUE_N,
        "concurrency": 1,
        "achieved_requests_per_s": _spread(rates),
        "ratio_to_one_slot": _spread([r * QUEUE_LATENCY for r in rates], 3),
        "note": "AsyncOpenAI(aiohttp).post one at a time: the serial baseline without evalbench",
    }


def run_config(
    *, processes: int = 1, pacing_ms: float | None = None, n: int = N,
    concurrency: int | str = CONCURRENCY,
) -> dict:  # fmt: skip
    """One server process, one client configuration: warm-up, timed batches, cached rerun."""
    from evalbench.models import ChatRequest, Job, ModelClient, ModelSpec, ResponseCache, generate

    server, port = _start_server()
    os.environ["EVALBENCH_BENCH_KEY"] = "sk-bench"
    spec = ModelSpec(
        name="bench", provider="openai", model="m", base_url=f"http://127.0.0.1:{port}/v1",
        api_key_env="EVALBENCH_BENCH_KEY", max_concurrency=concurrency, timeout_s=30,
        processes=processes, pacing_ms=pacing_ms,
    )  # fmt: skip

    def jobs(prefix: str, count: int) -> list[Job]:
        return [Job(str(i), ChatRequest(messages=[{"role": "user", "content": f"{prefix}{i}"}]))
                for i in range(count)]  # fmt: skip

    warmup = spec.concurrency_limit * processes * 2
    with tempfile.TemporaryDirectory() as tmp:
        cache = ResponseCache(Path(tmp) / "bench.sqlite")

        def batch(prefix: str, count: int) -> dict:
            client = ModelClient(spec, cache=cache)
            return _timed(lambda: generate(client, jobs(prefix, count), progress=False), client)

        # The first batch pays the SDK import (and, with processes > 1, the forkserver's)
        # and opens connections: measured apart, like a study's first call.
        first = batch("w", warmup)
        runs = [batch(f"q{r}-", n) for r in range(REPEATS)]
        rerun = batch(f"q{REPEATS - 1}-", n)  # the last batch again: all from the cache
    served, max_in_flight, server_cpu = _stop_server(server)
    result = _report(runs, rerun, served - warmup - REPEATS * n, max_in_flight, server_cpu,
                     n, spec.concurrency_limit)  # fmt: skip
    result.update(processes=processes, pacing_ms=pacing_ms, max_concurrency=concurrency)
    result["first_batch"] = {"requests": warmup, "wall_s": round(first["wall_s"], 3),
                             "note": "includes importing the openai SDK and opening connections"}  # fmt: skip
    return result


def run_bare_sdk(n: int = N, concurrency: int = CONCURRENCY) -> dict:
    """The official client alone: the same batches with no evalbench layer, no pacing."""
    server, port = _start_server()
    rates, cpu, latencies = [], [], []
    for r in range(REPEATS):
        rate, cpu_s, batch_latencies = _sdk_only(port, n, f"sdk{r}", concurrency)
        rates.append(rate)
        cpu.append(1000 * cpu_s / n)
        latencies += batch_latencies
    _, _, server_cpu = _stop_server(server)
    ideal = concurrency / LATENCY
    return {
        "requests": n,
        "concurrency": concurrency,
        "achieved_requests_per_s": _spread(rates),
        "ratio_to_ideal": _spread([r / ideal for r in rates], 3),
        "client_cpu_ms_per_request": _spread(cpu, 3),
        "latency_ms": _latency_ms(latencies),
        "server_cpu_s": round(server_cpu, 3),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "note": f"AsyncOpenAI(aiohttp).post under a semaphore of {concurrency}, no evalbench "
        "layer, no pacing: what the official client does on its own on this machine",
    }


def _spread(values: list[float], digits: int = 1) -> dict:
    ordered = sorted(values)
    return {"median": round(ordered[len(ordered) // 2], digits), "min": round(ordered[0], digits),
            "max": round(ordered[-1], digits), "runs": len(values)}  # fmt: skip


def _sdk_only(port: int, n: int, prefix: str, concurrency: int) -> tuple[float, float, list[float]]:
    """Requests/s, CPU seconds and latencies of the official client alone (after a warm-up)."""
    import asyncio

    import openai

    async def batch(prefix: str, count: int, latencies: list[float]) -> tuple[float, float]:
        client = openai.AsyncOpenAI(api_key="sk-bench", base_url=f"http://127.0.0.1:{port}/v1",
                                    max_retries=0, http_client=openai.DefaultAioHttpClient())  # fmt: skip
        gate = asyncio.Semaphore(concurrency)

        async def one(i: int) -> None:
            async with gate:
                body = {"model": "m", "messages": [{"role": "user", "content": f"{prefix}{i}"}]}
                sent = time.perf_counter()
                await client.post("/chat/completions", body=body, cast_to=object)
                latencies.append(time.perf_counter() - sent)

        started, cpu = time.perf_counter(), time.process_time()
        await asyncio.gather(*(one(i) for i in range(count)))
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
        await client.close()
        return count / wall, cpu

    asyncio.run(batch(f"{prefix}-warm", concurrency * 2, []))
    latencies: list[float] = []
    rate, cpu = asyncio.run(batch(prefix, n, latencies))
    return rate, cpu, latencies


def _timed(fn, client):
    cpu0, wall0 = time.process_time(), time.perf_counter()
    responses = fn()
    workers = getattr(client, "shard_stats", [])
    return {
        "wall_s": time.perf_counter() - wall0,
        "cpu_s": time.process_time() - cpu0 + sum(w["cpu_s"] for w in workers),
        "worker_peak_rss_mb": max((w["peak_rss_mb"] for w in workers), default=None),
        "errors": sum(not r.ok for r in responses),
        "cached": sum(r.cached for r in responses),
        "latencies_s": [r.latency_s for r in responses if r.ok and not r.cached],
    }


def _latency_ms(latencies: list[float]) -> dict:
    """Percentiles of the time each request spent in the SDK call (pooled over batches)."""
    ordered = sorted(latencies)
    pick = lambda q: round(1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)  # noqa: E731
    return {"p50": pick(0.50), "p95": pick(0.95), "p99": pick(0.99), "requests": len(ordered)}


def _report(runs, rerun, paid_on_rerun, max_in_flight, server_cpu, n, concurrency):
    ideal = concurrency / LATENCY
    rates = [n / r["wall_s"] for r in runs]
    ratios = [r / ideal for r in rates]
    # the issues' settings: c=64 (#17) and c=256 (#26 item 5), 85% of ideal on 2 cores
    target = (
        0.85
        if (n, concurrency) in {(N, CONCURRENCY), (CPU_BOUND_N, CPU_BOUND_CONCURRENCY)}
        else None
    )
    return {
        "requests": n,
        "concurrency": concurrency,
        "server_latency_s": LATENCY,
        "ideal_requests_per_s": ideal,
        "achieved_requests_per_s": _spread(rates),
        "ratio_to_ideal": _spread(ratios, 3),
        "target_ratio": target,
        "meets_target_every_batch": None if target is None else min(ratios) >= target,
        "client_cpu_ms_per_request": _spread([1000 * r["cpu_s"] / n for r in runs], 3),
        "latency_ms": _latency_ms([x for r in runs for x in r["latencies_s"]]),
        "errors": sum(r["errors"] for r in runs),
        "server_max_in_flight": max_in_flight,
        "server_cpu_s": round(server_cpu, 3),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "peak_rss_mb_bench_process_so_far": round(
            resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1
        ),
        "worker_peak_rss_mb": max(
            (r["worker_peak_rss_mb"] for r in runs if r["worker_peak_rss_mb"]), default=None
        ),
        "cached_rerun": {
            "requests_made": paid_on_rerun,
            "cache_hits": rerun["cached"],
            "wall_s": round(rerun["wall_s"], 3),
        },
    }


if __name__ == "__main__":
    main()
