"""Benchmark: client throughput against the loopback server (``make bench``).

Run for ``processes: 1`` (one event loop) and ``processes: 2`` (the batch sharded over two
worker processes; see ``evalbench.models.shards``). Client CPU includes the workers'.

2,000 requests at concurrency 64 against an OpenAI-compatible server on 127.0.0.1 that
answers every request after 100 ms, three times (fresh prompts each time; median, min and
max reported). The ideal is concurrency / latency = 640 requests/s. The same requests
through the bare SDK (no evalbench layer) are measured too: the ceiling on this machine.
The server runs in its own process so the client's CPU time is measured alone. Then the
same 2,000 requests again from the response cache (expected: zero requests).

Writes ``outputs/bench/models.json`` (or ``$EVALBENCH_OUTPUTS/bench/models.json``).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
N, CONCURRENCY, LATENCY = int(os.environ.get("BENCH_REQUESTS", 2000)), 64, 0.100
REPEATS = int(os.environ.get("BENCH_REPEATS", 3))

SERVER = """
import resource, sys
sys.path.insert(0, {tests!r})
from loopback import LoopbackServer
s = LoopbackServer(latency={latency}).start()
print(s.port, flush=True)
sys.stdin.read()  # serve until the parent closes our stdin
usage = resource.getrusage(resource.RUSAGE_SELF)
print(s.count, s.max_in_flight, usage.ru_utime + usage.ru_stime, flush=True)
"""


def main() -> None:
    results = {f"processes_{p}": run_config(p) for p in (1, 2)}
    results["machine"] = f"{os.cpu_count()} cores, python {sys.version.split()[0]}"
    out = Path(os.environ.get("EVALBENCH_OUTPUTS") or ROOT / "outputs") / "bench" / "models.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))
    print(f"wrote {out}")


def run_config(processes: int) -> dict:
    """One server process, one client configuration: warm-up, timed batches, cached rerun."""
    from evalbench.models import ChatRequest, Job, ModelClient, ModelSpec, ResponseCache, generate

    server = subprocess.Popen(
        [sys.executable, "-c", SERVER.format(tests=str(ROOT / "tests"), latency=LATENCY)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    port = int(server.stdout.readline())
    os.environ["EVALBENCH_BENCH_KEY"] = "sk-bench"
    spec = ModelSpec(
        name="bench", provider="openai", model="m", base_url=f"http://127.0.0.1:{port}/v1",
        api_key_env="EVALBENCH_BENCH_KEY", max_concurrency=CONCURRENCY, timeout_s=30,
        processes=processes,
    )  # fmt: skip

    def jobs(prefix: str, n: int) -> list[Job]:
        return [Job(str(i), ChatRequest(messages=[{"role": "user", "content": f"{prefix}{i}"}]))
                for i in range(n)]  # fmt: skip

    sdk_rates = [_sdk_only(port, N, f"sdk{r}") for r in range(REPEATS)] if processes == 1 else []
    warmup = CONCURRENCY * processes * 2
    with tempfile.TemporaryDirectory() as tmp:
        cache = ResponseCache(Path(tmp) / "bench.sqlite")

        def batch(prefix: str, n: int) -> dict:
            client = ModelClient(spec, cache=cache)
            return _timed(lambda: generate(client, jobs(prefix, n), progress=False), client)

        # The first batch pays the SDK import (and, with processes > 1, the forkserver's)
        # and opens connections: measured apart, like a study's first call.
        first = batch("w", warmup)
        runs = [batch(f"q{r}-", N) for r in range(REPEATS)]
        rerun = batch(f"q{REPEATS - 1}-", N)  # the last batch again: all from the cache
    server.stdin.close()
    served, max_in_flight, server_cpu = (float(x) for x in server.stdout.read().split())
    server.wait(10)
    paid = int(served) - warmup - len(sdk_rates) * (N + CONCURRENCY * 2) - REPEATS * N
    result = _report(runs, rerun, paid, int(max_in_flight), server_cpu)
    result["processes"] = processes
    if sdk_rates:
        result["bare_sdk_requests_per_s"] = _spread(sdk_rates)
        result["bare_sdk_note"] = (
            "the same requests through AsyncOpenAI(aiohttp).post under a semaphore of 64, no "
            "evalbench layer: the ceiling the official client allows on this machine"
        )
    result["first_batch"] = {"requests": warmup, "wall_s": round(first["wall_s"], 3),
                             "note": "includes importing the openai SDK and opening connections"}  # fmt: skip
    return result


def _spread(values: list[float], digits: int = 1) -> dict:
    ordered = sorted(values)
    return {"median": round(ordered[len(ordered) // 2], digits), "min": round(ordered[0], digits),
            "max": round(ordered[-1], digits), "runs": len(values)}  # fmt: skip


def _sdk_only(port: int, n: int, prefix: str) -> float:
    """Requests/s of the official client alone (warm-up batch first, like the real run)."""
    import asyncio

    import openai

    async def batch(prefix: str, count: int) -> float:
        client = openai.AsyncOpenAI(api_key="sk-bench", base_url=f"http://127.0.0.1:{port}/v1",
                                    max_retries=0, http_client=openai.DefaultAioHttpClient())  # fmt: skip
        gate = asyncio.Semaphore(CONCURRENCY)

        async def one(i: int) -> None:
            async with gate:
                body = {"model": "m", "messages": [{"role": "user", "content": f"{prefix}{i}"}]}
                await client.post("/chat/completions", body=body, cast_to=object)

        started = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(count)))
        wall = time.perf_counter() - started
        await client.close()
        return count / wall

    asyncio.run(batch(f"{prefix}-warm", CONCURRENCY * 2))
    return asyncio.run(batch(prefix, n))


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
    }


def _report(runs, rerun, paid_on_rerun, max_in_flight, server_cpu):
    ideal = CONCURRENCY / LATENCY
    rates = [N / r["wall_s"] for r in runs]
    median = sorted(rates)[len(rates) // 2]
    return {
        "requests": N,
        "concurrency": CONCURRENCY,
        "server_latency_s": LATENCY,
        "ideal_requests_per_s": ideal,
        "achieved_requests_per_s": _spread(rates),
        "ratio_to_ideal": _spread([r / ideal for r in rates], 3),
        "target_ratio": 0.85,
        "meets_target_median": median / ideal >= 0.85,
        "client_cpu_ms_per_request": _spread([1000 * r["cpu_s"] / N for r in runs], 3),
        "errors": sum(r["errors"] for r in runs),
        "server_max_in_flight": max_in_flight,
        "server_cpu_s": round(server_cpu, 3),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
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
