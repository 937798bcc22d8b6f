"""Benchmark: client throughput against the loopback server (``make bench``).

2,000 requests at concurrency 64 against an OpenAI-compatible server on 127.0.0.1 that
answers every request after 100 ms. The ideal is concurrency / latency = 640 requests/s.
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
N, CONCURRENCY, LATENCY = 2000, 64, 0.100

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
    )  # fmt: skip

    def jobs(prefix: str, n: int) -> list[Job]:
        return [Job(str(i), ChatRequest(messages=[{"role": "user", "content": f"{prefix}{i}"}]))
                for i in range(n)]  # fmt: skip

    with tempfile.TemporaryDirectory() as tmp:
        cache = ResponseCache(Path(tmp) / "bench.sqlite")
        # The first batch of a process pays the SDK import and its connections: measured
        # apart, like a study's first call; the throughput run starts warm.
        first = _timed(
            lambda: generate(ModelClient(spec, cache=cache), jobs("w", CONCURRENCY), progress=False)
        )
        cold = _timed(
            lambda: generate(ModelClient(spec, cache=cache), jobs("q", N), progress=False)
        )
        warm = _timed(
            lambda: generate(ModelClient(spec, cache=cache), jobs("q", N), progress=False)
        )
    server.stdin.close()
    served, max_in_flight, server_cpu = (float(x) for x in server.stdout.read().split())
    server.wait(10)
    result = _report(cold, warm, int(served) - CONCURRENCY, int(max_in_flight), server_cpu)
    result["first_batch"] = {"requests": CONCURRENCY, "wall_s": round(first["wall_s"], 3),
                             "note": "includes importing the openai SDK and opening connections"}  # fmt: skip
    out = Path(os.environ.get("EVALBENCH_OUTPUTS") or ROOT / "outputs") / "bench" / "models.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    print(f"wrote {out}")


def _timed(fn):
    cpu0, wall0 = time.process_time(), time.perf_counter()
    responses = fn()
    return {
        "wall_s": time.perf_counter() - wall0,
        "cpu_s": time.process_time() - cpu0,
        "errors": sum(not r.ok for r in responses),
        "cached": sum(r.cached for r in responses),
    }


def _report(cold, warm, served, max_in_flight, server_cpu):
    ideal = CONCURRENCY / LATENCY
    achieved = N / cold["wall_s"]
    return {
        "requests": N,
        "concurrency": CONCURRENCY,
        "server_latency_s": LATENCY,
        "ideal_requests_per_s": ideal,
        "achieved_requests_per_s": round(achieved, 1),
        "ratio_to_ideal": round(achieved / ideal, 3),
        "target_ratio": 0.85,
        "wall_s": round(cold["wall_s"], 3),
        "client_cpu_ms_per_request": round(1000 * cold["cpu_s"] / N, 3),
        "errors": cold["errors"],
        "server_max_in_flight": max_in_flight,
        "server_cpu_s": round(server_cpu, 3),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "cached_rerun": {
            "requests_made": served - N,
            "cache_hits": warm["cached"],
            "wall_s": round(warm["wall_s"], 3),
        },
        "machine": f"{os.cpu_count()} cores, python {sys.version.split()[0]}",
    }


if __name__ == "__main__":
    main()
