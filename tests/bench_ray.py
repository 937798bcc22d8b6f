"""Benchmark: agent tasks with the Ray executor beside the local one (``make bench``).

A local Ray cluster on 127.0.0.1 (``tests/executors/raycluster.py``; 32 logical CPUs on this
machine's cores, so 32 tasks of one CPU each run at once) and, in the same run:

- **per-task overhead**: tasks one after another, each timed from its submission until its
  steps and record are written (the driver's side of ``run_agents``), for an agent that
  answers at once: ``async`` (it runs in the Ray worker itself: what the executor adds) and
  ``sync`` (a process of its own per task, as locally); also the driver's CPU per task and
  the bytes that travel per task (the task with its backend, the result with its steps);
- **throughput**: ``BENCH_RAY_TASKS`` (400) simulated agent tasks, each 0.5 s waiting and
  0.05 s of CPU, ``max_concurrency: 32``, through ``run_agents``: a sync agent (a process
  per task) and an async one (it computes in the event loop that runs it), local vs Ray.
  Ray's first batch starts its 32 worker processes; it is timed apart (``warm_up``).

Writes ``outputs/bench/ray.json`` (or ``$EVALBENCH_OUTPUTS/bench/ray.json``).
"""

from __future__ import annotations

import json
import os
import pickle
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TASKS = int(os.environ.get("BENCH_RAY_TASKS", 400))
AT_ONCE = 32
SEQUENTIAL = int(os.environ.get("BENCH_RAY_SEQUENTIAL", 200))
AGENTS = "tests.executors.ray_agents"


def main() -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from executors.raycluster import LocalCluster, RayUnavailable, driver_env

    from evalbench.records import to_json, write_atomic

    driver_env()
    os.environ.setdefault("EVALBENCH_HOME", str(ROOT))
    out = _outputs() / "bench" / "ray.json"
    started = time.perf_counter()
    try:
        cluster = LocalCluster(num_cpus=AT_ONCE).start()
    except RayUnavailable as exc:  # reported, as a peer that cannot be set up is
        write_atomic(out, to_json({"skipped": str(exc)}, indent=2) + "\n")
        print(f"bench_ray skipped: {exc}")
        return
    results: dict[str, Any] = {"cluster_start_s": round(time.perf_counter() - started, 1)}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            os.environ["EVALBENCH_OUTPUTS"] = tmp  # the bench's own runs, thrown away
            modes = ("async", "sync")
            results["overhead"] = {m: overhead(cluster.address, m) for m in modes}
            results["throughput"] = {m: throughput(cluster.address, m) for m in modes}
    finally:
        import ray

        ray.shutdown()
        cluster.stop()
    results["machine"] = f"{os.cpu_count()} cores, python {sys.version.split()[0]}"
    write_atomic(out, to_json(results, indent=2) + "\n")
    print(to_json(results, indent=2))
    print(f"wrote {out}")


def _outputs() -> Path:
    return Path(os.environ.get("EVALBENCH_OUTPUTS") or ROOT / "outputs")


def _open(name: str, entrypoint: str, n: int, concurrency: int) -> Any:
    """A GAIA run whose one system is ``entrypoint`` over ``n`` one-line tasks, and them."""
    import yaml

    from evalbench.agents import AgentTask, TaskInput
    from evalbench.studies import open_run

    folder = Path(os.environ["EVALBENCH_OUTPUTS"]) / f"data-{name}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "metadata.jsonl").write_text(
        json.dumps({"task_id": "t0", "Question": "q?", "Level": 1, "Final answer": "x"}) + "\n"
    )
    systems = [{"name": name, "provider": "python", "entrypoint": entrypoint,
                "max_concurrency": concurrency, "limits": {"max_time_s": 60}}]  # fmt: skip
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"study": "gaia", "title": name, "dataset": str(folder),
                                    "systems": systems}))  # fmt: skip
    run = open_run(path)
    spec = run.params.systems[0]
    items = [TaskInput(AgentTask(id=f"{name}-{i}", question=f"q {i}", limits=spec.limits), {})
             for i in range(n)]  # fmt: skip
    return run, spec, items


def _use(executor: str, address: str) -> None:
    os.environ["EVALBENCH_EXECUTOR"] = executor
    os.environ["EVALBENCH_RAY_ADDRESS"] = address


def overhead(address: str, mode: str) -> dict[str, Any]:
    """Tasks one after another: submission -> steps and record written, local and Ray."""
    from evalbench.agents import backend_for, runner
    from evalbench.models.client import run_sync

    entry = f"{AGENTS}:quick_async" if mode == "async" else f"{AGENTS}:quick"
    out: dict[str, Any] = {"tasks": SEQUENTIAL, "agent": entry}
    for executor in ("local", "ray"):
        _use(executor, address)
        run, spec, items = _open(f"overhead-{mode}-{executor}", entry, SEQUENTIAL + 10, 1)
        backend = backend_for(run, spec)
        steps = run.store("steps", ("system", "task_id", "attempt", "step"))
        records = run.store("agent_runs", ("system", "key"))
        execute = runner._executor_for(run, spec, backend, steps)
        run_sync(_timed_tasks(execute, records, items[:10]))  # warm: workers, imports
        cpu = time.process_time()
        times = run_sync(_timed_tasks(execute, records, items[10:]))
        cpu = time.process_time() - cpu
        out[executor] = {"per_task_ms": _spread_ms(times),
                         "driver_cpu_ms_per_task": round(1000 * cpu / len(times), 3)}  # fmt: skip
        if executor == "ray":
            out["ray"]["bytes_per_task"] = _sizes(execute, items[0])
    out["target"] = "Ray per-task overhead (median, async agent) <= 10 ms"
    return out


async def _timed_tasks(execute: Any, records: Any, items: list[Any]) -> list[float]:
    times = []
    for item in items:
        started = time.perf_counter()
        record = await execute(item)
        records.append(record)
        times.append(time.perf_counter() - started)
    return times


def _sizes(execute: Any, item: Any) -> dict[str, int]:
    """Bytes of one task as it is sent (the job) and of what a worker sends back."""
    from evalbench.agents.runner import RemoteJob, run_remote

    job = RemoteJob(execute.root, execute.spec, execute.backend, item.task, {}, item.attempt,
                    item.level, item.truth)  # fmt: skip
    return {"task": len(pickle.dumps(job)), "result": len(pickle.dumps(run_remote(job)))}


def _spread_ms(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    pick = lambda q: round(1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)  # noqa: E731
    return {"p50": pick(0.5), "p95": pick(0.95), "p99": pick(0.99), "max": pick(1.0)}


def throughput(address: str, mode: str) -> dict[str, Any]:
    """``TASKS`` simulated agent tasks, 32 at once, local then Ray (after a warm-up batch)."""
    from evalbench.agents import backend_for, run_agents

    entry = f"{AGENTS}:busy_async" if mode == "async" else f"{AGENTS}:busy"
    out: dict[str, Any] = {"tasks": TASKS, "at_once": AT_ONCE, "agent": entry,
                           "ideal_s": round(TASKS / AT_ONCE * 0.55, 2)}  # fmt: skip
    for executor in ("local", "ray"):
        _use(executor, address)
        if executor == "ray":
            run, spec, items = _open(f"warm-{mode}", entry, AT_ONCE * 2, AT_ONCE)
            started = time.perf_counter()
            run_agents(run, spec, items, backend=backend_for(run, spec), progress=False)
            warm = time.perf_counter() - started
            out["warm_up"] = {"tasks": len(items), "wall_s": round(warm, 2)}
        run, spec, items = _open(f"busy-{mode}-{executor}", entry, TASKS, AT_ONCE)
        usage, started = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        done = run_agents(run, spec, items, backend=backend_for(run, spec), progress=False)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_SELF)
        cpu = after.ru_utime + after.ru_stime - usage.ru_utime - usage.ru_stime
        out[executor] = {
            "wall_s": round(wall, 2),
            "tasks_per_s": round(TASKS / wall, 1),
            "answered": sum(r.state == "answered" for r in done.values()),
            "driver_cpu_s": round(cpu, 2),
        }
    out["ray_vs_local"] = round(out["ray"]["tasks_per_s"] / out["local"]["tasks_per_s"], 2)
    return out


if __name__ == "__main__":
    main()
