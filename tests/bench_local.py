"""Benchmark: evalbench against a real model that it serves itself (``make bench``).

One server, started by evalbench's launcher (``evalbench.models.local``: SmolLM2-135M-Instruct
Q4_1 on llama-cpp-python, 1 slot, 1 thread, as ``params/local_*.yaml`` serve it), measured
side by side in one run:

- ``startup``: launch -> ready (the first good ``GET /v1/models``) over ``START_REPEATS``
  starts, and the whole ``local.endpoint`` call (engine check, file hash from its cache, free
  port, start, probe);
- ``sdk_vs_evalbench``: the same ``BENCH_LOCAL_REQUESTS`` prompts (max_tokens 16, temperature
  0: every answer runs to 16 tokens, the same work) through evalbench (``generate`` with a
  ``provider: local`` system, no response cache) and through the openai SDK directly
  (``AsyncOpenAI.chat.completions.create``), both at the server's slots (1) in flight, in
  ``BENCH_LOCAL_ROUNDS`` short rounds whose order alternates (A B, B A ...) so the machine's
  load drift falls on both alike (rounds of 8-24 requests let a busy machine's drift decide:
  0.69-0.71 measured, where rounds of 4 gave 0.99 on the same machine) (one untimed request each first). End-to-end requests/s of each
  over all rounds and their ratio (target: evalbench ≥ 0.95 × the SDK), the median of the
  rounds' ratios and the ratio at equal engine time (what each client adds to the engine's
  time, compared alone: a busy machine's drift does not enter it); the time the server sat
  idle per request (the client's own cost); tokens/s: prompt and completion tokens per
  second of wall time (the usage the server reports), and the engine's own count from its
  log (``llama_perf_context_print``: prompt tokens read and tokens generated, per second of
  its own time; a prompt prefix it still holds from the request before is not read again);
- ``auto_vs_serial``: ``max_concurrency: auto`` against this one-slot server (which queues,
  never answers 429): serial, auto, serial again on fresh prompts (``BENCH_REAL_REQUESTS``
  each), ``BENCH_AUTO_REPEATS`` times (median, min and max of the repetitions); auto must
  settle at ≤ 2 in flight with no timeout and ≥ 95% of the serial throughput. On a busy
  machine the engine's speed swings ×2 between batches (serial batches a minute apart
  measured 1.5× apart), so the ratio at equal engine time (from the server's log, as above)
  is given beside it.

Skipped (with the reason) without the local extra. Writes ``outputs/bench/local.json`` (or
``$EVALBENCH_OUTPUTS/bench/local.json``). ``BENCH_CONFIGS`` chooses a comma-separated subset.
"""

from __future__ import annotations

import asyncio
import os
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
REQUESTS = int(os.environ.get("BENCH_LOCAL_REQUESTS", 4))
ROUNDS = int(os.environ.get("BENCH_LOCAL_ROUNDS", 16))
REAL_N = int(os.environ.get("BENCH_REAL_REQUESTS", 64))
AUTO_REPEATS = int(os.environ.get("BENCH_AUTO_REPEATS", 5))
START_REPEATS = int(os.environ.get("BENCH_START_REPEATS", 3))
MAX_TOKENS = 16
PROMPT = "Tell a long story about the number {i} ({tag})."
SERVER = "llama-cpp-python, SmolLM2-135M-Instruct Q4_1, 1 slot, n_threads 1"


def _spec(**kw: Any) -> Any:
    from evalbench.models import ModelSpec

    fields = {"name": "smollm2", "provider": "local", "local": {"threads": 1},
              "max_tokens": MAX_TOKENS, "temperature": 0.0, "max_retries": 0, **kw}  # fmt: skip
    return ModelSpec(**fields)


def main() -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from realmodel import unavailable

    from evalbench.models import local
    from evalbench.records import to_json, write_atomic

    configs = {"startup": run_startup, "sdk_vs_evalbench": run_sdk_vs_evalbench,
               "auto_vs_serial": run_auto_vs_serial}  # fmt: skip
    chosen = os.environ.get("BENCH_CONFIGS", ",".join(configs)).split(",")
    unknown = sorted(set(chosen) - set(configs))
    if unknown:
        sys.exit(f"BENCH_CONFIGS: unknown {unknown}; choose from {sorted(configs)}")
    reason = unavailable()
    results: dict[str, Any] = {"server": SERVER}
    try:
        for name in chosen:
            results[name] = {"skipped": reason} if reason else configs[name]()
    finally:
        local.stop_all()
    results["machine"] = f"{os.cpu_count()} cores, python {sys.version.split()[0]}"
    results["load_average_1m"] = round(os.getloadavg()[0], 2)
    out = Path(os.environ.get("EVALBENCH_OUTPUTS") or ROOT / "outputs") / "bench" / "local.json"
    write_atomic(out, to_json(results, indent=2) + "\n")
    print(to_json(results, indent=2))
    print(f"wrote {out}")


# --- start-up ----------------------------------------------------------------------------------


def run_startup() -> dict:
    """Launch -> ready of ``START_REPEATS`` starts of the server (each stopped after)."""
    from evalbench.models import local

    spec, ready, endpoint = _spec(), [], []
    for _ in range(START_REPEATS):
        local.stop_all()
        started = time.perf_counter()
        url = local.endpoint(spec)
        endpoint.append(time.perf_counter() - started)
        (server,) = [s for s in local.running() if s.base_url == url]
        ready.append(server.launched.startup_s or 0.0)
    local.stop_all()
    return {"starts": START_REPEATS, "launch_to_ready_s": _spread(ready, 2),
            "endpoint_call_s": _spread(endpoint, 2)}  # fmt: skip


# --- evalbench vs the openai SDK ---------------------------------------------------------------


def run_sdk_vs_evalbench() -> dict:
    """The same prompts through evalbench and through the SDK, alternating rounds."""
    from evalbench.models import local

    spec = _spec()
    url = local.endpoint(spec)
    (server,) = [s for s in local.running() if s.base_url == url]
    slots = spec.concurrency_limit
    prompts = [PROMPT.format(i=i, tag="bench") for i in range(REQUESTS)]
    _sdk_batch(url, spec.model, prompts[:1], slots)  # warm-ups (not timed)
    _evalbench_batch(spec, prompts[:1])
    sides: dict[str, list[dict]] = {"evalbench": [], "sdk": []}
    for r in range(ROUNDS):
        order = ("evalbench", "sdk") if r % 2 == 0 else ("sdk", "evalbench")
        for side in order:
            before, cpu = _log_size(server), time.process_time()
            if side == "sdk":
                batch = _sdk_batch(url, spec.model, prompts, slots)
            else:
                batch = _evalbench_batch(spec, prompts)
            batch["engine"] = _engine_counts(_log_since(server, before))
            batch["cpu_s"] = time.process_time() - cpu
            sides[side].append(batch)
    totals = {side: _totals(batches) for side, batches in sides.items()}
    ratio = totals["evalbench"]["requests_per_s"] / totals["sdk"]["requests_per_s"]
    per_round = [s["wall_s"] / e["wall_s"]  # the same requests: the inverse ratio of times
                 for e, s in zip(sides["evalbench"], sides["sdk"], strict=True)]  # fmt: skip
    equal = _at_equal_engine_time(totals)
    same = [b["texts"] for b in sides["evalbench"]] == [b["texts"] for b in sides["sdk"]]
    return {
        "requests_per_round": REQUESTS, "rounds": ROUNDS, "in_flight": slots,
        "max_tokens": MAX_TOKENS, **totals,
        "ratio_evalbench_to_sdk": round(ratio, 3),
        "meets_target": ratio >= 0.95,
        "ratio_per_round": [round(r, 3) for r in per_round],
        "ratio_median_of_rounds": round(statistics.median(per_round), 3),
        "ratio_at_equal_engine_time": round(equal, 3),
        "same_answers": same,
        "note": "requests/s and tokens/s over all rounds (sum of requests or tokens / sum of "
        "wall time); engine_* from the server's own log: tokens it read or generated per "
        "second of its own time; idle_ms_per_request: wall time the server was not working "
        "on a request (the client's own cost, HTTP included), per request",
    }  # fmt: skip


def _at_equal_engine_time(totals: dict[str, dict]) -> float:
    """evalbench's throughput over the SDK's had the engine been as fast for both: each
    side's time per request = the engine's mean time per request over both sides + that
    side's own idle time per request (what the client adds). On a busy machine the engine's
    speed drifts by 2x between rounds; this compares only what the clients do."""
    engine = statistics.mean(t["engine_busy_share"] * t["wall_s"] / t["requests"]
                             for t in totals.values())  # fmt: skip
    idle = {side: t["idle_ms_per_request"] / 1000 for side, t in totals.items()}
    return (engine + idle["sdk"]) / (engine + idle["evalbench"])


def _evalbench_batch(spec: Any, prompts: list[str]) -> dict:
    from evalbench.models import ChatRequest, Job, ModelClient, generate

    jobs = [Job(str(i), ChatRequest(messages=[{"role": "user", "content": p}]))
            for i, p in enumerate(prompts)]  # fmt: skip
    started = time.perf_counter()
    responses = generate(ModelClient(spec), jobs, progress=False)
    wall = time.perf_counter() - started
    return {
        "wall_s": wall, "errors": sum(not r.ok for r in responses),
        "prompt_tokens": sum(r.usage.prompt_tokens or 0 for r in responses),
        "completion_tokens": sum(r.usage.completion_tokens or 0 for r in responses),
        "texts": [r.text for r in responses],
    }  # fmt: skip


def _sdk_batch(url: str, model: str, prompts: list[str], concurrency: int) -> dict:
    import openai

    async def batch() -> dict:
        client = openai.AsyncOpenAI(base_url=url, api_key="no-key", max_retries=0, timeout=600)
        gate = asyncio.Semaphore(concurrency)

        async def one(prompt: str) -> Any:
            async with gate:
                return await client.chat.completions.create(
                    model=model, messages=[{"role": "user", "content": prompt}],
                    max_tokens=MAX_TOKENS, temperature=0.0,
                )  # fmt: skip

        started = time.perf_counter()
        answers = await asyncio.gather(*(one(p) for p in prompts), return_exceptions=True)
        wall = time.perf_counter() - started
        await client.close()
        ok = [a for a in answers if not isinstance(a, BaseException)]
        return {
            "wall_s": wall, "errors": len(answers) - len(ok),
            "prompt_tokens": sum(a.usage.prompt_tokens for a in ok if a.usage),
            "completion_tokens": sum(a.usage.completion_tokens for a in ok if a.usage),
            "texts": [None if isinstance(a, BaseException) else a.choices[0].message.content
                      for a in answers],
        }  # fmt: skip

    return asyncio.run(batch())


def _totals(batches: list[dict]) -> dict:
    wall = sum(b["wall_s"] for b in batches)
    requests = sum(len(b["texts"]) for b in batches)
    engine = {k: sum(b["engine"][k] for b in batches) for k in batches[0]["engine"]}
    return {
        "requests": requests,
        "requests_per_s": round(requests / wall, 3),
        "requests_per_s_per_round": [round(len(b["texts"]) / b["wall_s"], 3) for b in batches],
        "wall_s": round(wall, 2), "errors": sum(b["errors"] for b in batches),
        "prompt_tokens_per_s": round(sum(b["prompt_tokens"] for b in batches) / wall, 1),
        "completion_tokens_per_s": round(sum(b["completion_tokens"] for b in batches) / wall, 1),
        "engine_prompt_tokens_read": engine["prompt_tokens"],
        "engine_prompt_tokens_per_s": _rate(engine["prompt_tokens"], engine["prompt_ms"]),
        "engine_completion_tokens_per_s": _rate(engine["generated"], engine["eval_ms"]),
        "engine_busy_share": round(engine["total_ms"] / 1000 / wall, 3),
        "idle_ms_per_request": round((wall - engine["total_ms"] / 1000) / requests * 1000, 1),
        "client_cpu_ms_per_request": round(sum(b["cpu_s"] for b in batches) / requests * 1000, 1),
    }  # fmt: skip


_PROMPT_EVAL = re.compile(r"prompt eval time =\s*([\d.]+) ms /\s*(\d+) tokens")
_EVAL = re.compile(r"\s(?<!prompt )eval time =\s*([\d.]+) ms /\s*(\d+) runs")
_TOTAL = re.compile(r"total time =\s*([\d.]+) ms")


def _engine_counts(log: str) -> dict[str, float]:
    """The engine's own timings (llama.cpp's ``llama_perf_context_print`` lines) summed.
    A prompt eval of under 1 ms read nothing new (the prefix was still there): not counted."""
    prompt = [(float(ms), int(n)) for ms, n in _PROMPT_EVAL.findall(log) if float(ms) >= 1.0]
    evals = [(float(ms), int(n)) for ms, n in _EVAL.findall(log)]
    return {
        "prompt_ms": sum(ms for ms, _ in prompt), "prompt_tokens": sum(n for _, n in prompt),
        "eval_ms": sum(ms for ms, _ in evals), "generated": sum(n for _, n in evals),
        "total_ms": sum(float(ms) for ms in _TOTAL.findall(log)),
    }  # fmt: skip


def _rate(tokens: float, ms: float) -> float | None:
    return round(tokens / (ms / 1000), 1) if ms else None


def _log_size(server: Any) -> int:
    server.launched.log.flush()
    return os.fstat(server.launched.log.fileno()).st_size


def _log_since(server: Any, offset: int) -> str:
    size = _log_size(server)
    return os.pread(server.launched.log.fileno(), size - offset, offset).decode(errors="replace")


# --- auto vs serial ----------------------------------------------------------------------------


def run_auto_vs_serial() -> dict:
    """Serial, ``auto``, serial again against the one-slot server, ``AUTO_REPEATS`` times."""
    from evalbench.models import local

    url = local.endpoint(_spec())
    (server,) = [s for s in local.running() if s.base_url == url]
    _concurrency_batch("warm-up", 1, count=1)
    reps = [_auto_repetition(server, r) for r in range(AUTO_REPEATS)]
    ratios = [r["ratio_auto_to_serial"] for r in reps]
    equal = [r["ratio_at_equal_engine_time"] for r in reps]
    settled = max(r["auto"]["max_in_flight_settled"] for r in reps)
    timeouts = sum(r["auto"]["timeouts"] for r in reps)
    return {
        "requests_per_batch": REAL_N, "repetitions": AUTO_REPEATS,
        "ratio_auto_to_serial": _spread(ratios, 3),
        "ratio_at_equal_engine_time": _spread(equal, 3),
        "max_in_flight_settled": settled, "auto_timeouts": timeouts,
        "meets_target": statistics.median(ratios) >= 0.95 and settled <= 2 and timeouts == 0,
        "per_repetition": reps,
        "note_ratio": "per repetition: auto's requests/s over the mean of the serial batches "
        "just before and after it; at equal engine time: each side's time per request = the "
        "engine's mean time per request over the three batches + that side's server idle time "
        "per request (the engine's speed swings ×2 on a busy machine; this compares only what "
        "the schedules leave idle)",
        "note": "in flight = the client's requests in flight as each answer came back, over "
        "the second half of each batch; every answer runs to the 16-token limit (a long story "
        "asked for), so serial and auto do the same work; each batch is a new client (auto "
        "starts from scratch)",
    }  # fmt: skip


def _auto_repetition(server: Any, r: int) -> dict:
    runs = {}
    for name, concurrency in (("serial", 1), ("auto", "auto"), ("serial_after", 1)):
        before = _log_size(server)
        runs[name] = _concurrency_batch(f"{name}-{r}", concurrency)
        engine_ms = _engine_counts(_log_since(server, before))["total_ms"]
        wall_ms = runs[name].pop("wall_ms")
        runs[name]["engine_ms_per_request"] = round(engine_ms / REAL_N, 1)
        runs[name]["idle_ms_per_request"] = round((wall_ms - engine_ms) / REAL_N, 1)
    serials = (runs["serial"], runs["serial_after"])
    serial = statistics.mean(b["requests_per_s"] for b in serials)
    engine = statistics.mean(b["engine_ms_per_request"] for b in runs.values())
    idle_serial = statistics.mean(b["idle_ms_per_request"] for b in serials)
    equal = (engine + idle_serial) / (engine + runs["auto"]["idle_ms_per_request"])
    return {**runs, "ratio_auto_to_serial": round(runs["auto"]["requests_per_s"] / serial, 3),
            "ratio_at_equal_engine_time": round(equal, 3),
            "load_average_1m": round(os.getloadavg()[0], 2)}  # fmt: skip


def _concurrency_batch(name: str, concurrency: int | str, count: int = 0) -> dict:
    from evalbench.models import ChatRequest, Job, ModelClient, generate

    count = count or REAL_N
    jobs = [Job(str(i), ChatRequest(messages=[
                {"role": "user", "content": PROMPT.format(i=i, tag=name)}]))
            for i in range(count)]  # fmt: skip
    client = ModelClient(_spec(max_concurrency=concurrency))
    in_flight: list[int] = []

    def seen(job: Job, response: Any) -> None:
        runtime = client._runtime
        in_flight.append(getattr(runtime.limit, "in_flight", 0) + 1 if runtime else 0)

    started = time.perf_counter()
    responses = generate(client, jobs, progress=False, on_result=seen)
    wall = time.perf_counter() - started
    return {
        "requests_per_s": round(count / wall, 3), "wall_s": round(wall, 1), "wall_ms": wall * 1000,
        "completion_tokens": sum(r.usage.completion_tokens or 0 for r in responses),
        "max_in_flight_settled": max(in_flight[count // 2 :], default=0),
        "timeouts": sum((r.error or "").startswith("timeout") for r in responses),
        "errors": sum(not r.ok for r in responses),
    }  # fmt: skip


def _spread(values: list[float], digits: int = 1) -> dict:
    return {"median": round(statistics.median(values), digits), "min": round(min(values), digits),
            "max": round(max(values), digits), "runs": len(values)}  # fmt: skip


if __name__ == "__main__":
    main()
