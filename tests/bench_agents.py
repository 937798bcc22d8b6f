"""Reference agent overhead per step, and the python tool's start-up time.

    python tests/bench_agents.py   (writes outputs/bench/agents.json, or under $EVALBENCH_OUTPUTS)

Against the loopback OpenAI-compatible server (no latency), 40 tasks × 10 steps
(9 read_file calls, then final_answer), one task at a time:
- per step: the agent loop's wall time per model call + tool call, next to a bare
  ``ModelClient.chat`` of the same request (the difference is evalbench's loop + tool
  dispatch + step records);
- the python tool: median wall time of ``print(1)`` over 20 runs (sandbox start-up).
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).parent))
from loopback import LoopbackServer, Reply

ROOT = Path(__file__).resolve().parents[1]
OUTPUTS = Path(os.environ.get("EVALBENCH_OUTPUTS") or ROOT / "outputs")  # before main() moves it
TASKS, STEPS = 40, 10


def _study(tmp: Path, base_url: str) -> Path:
    data = tmp / "data"
    data.mkdir()
    (data / "notes.txt").write_text("the answer is 42\n" * 20)
    rows = [{"task_id": f"t{i}", "Question": "What is the answer?", "Level": 1,
             "Final answer": "42", "file_name": "notes.txt"} for i in range(TASKS)]  # fmt: skip
    (data / "metadata.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    params = {"study": "gaia", "title": "bench", "dataset": str(data), "bootstrap_rounds": 10,
              "systems": [{"name": "react", "provider": "agent", "model": "m", "base_url": base_url,
                           "api_key_env": "BENCH_KEY", "max_concurrency": 1,
                           "tools": ["read_file"], "limits": {"max_steps": STEPS + 1}}]}  # fmt: skip
    path = tmp / "bench_agents.yaml"
    path.write_text(yaml.safe_dump(params))
    return path


def bench_steps(server: LoopbackServer, tmp: Path) -> dict[str, float]:
    from evalbench import gaia
    from evalbench.models import ChatRequest, ModelClient, ModelSpec, run_sync
    from evalbench.studies import open_run

    read = Reply(tool_calls=[{"name": "read_file", "arguments": '{"name": "notes.txt"}'}])
    final = Reply(tool_calls=[{"name": "final_answer", "arguments": '{"answer": "42"}'}])
    for _ in range(TASKS):
        server.enqueue(*[read] * (STEPS - 1), final)
    run = open_run(_study(tmp, server.base_url), ["cache=off"])
    started = time.perf_counter()
    gaia.run(run)
    agent_s = (time.perf_counter() - started) / (TASKS * STEPS)
    spec = ModelSpec(name="bare", provider="openai", model="m", base_url=server.base_url,
                     api_key_env="BENCH_KEY")  # fmt: skip
    client = ModelClient(spec)
    request = ChatRequest(messages=[{"role": "user", "content": "hi"}])

    async def calls() -> float:
        t0 = time.perf_counter()
        for _ in range(TASKS * STEPS):
            await client.chat(request)
        await client.aclose()
        return (time.perf_counter() - t0) / (TASKS * STEPS)

    bare_s = run_sync(calls())
    return {"agent_step_ms": agent_s * 1e3, "bare_call_ms": bare_s * 1e3,
            "overhead_per_step_ms": (agent_s - bare_s) * 1e3}  # fmt: skip


def bench_python_tool(tmp: Path) -> dict[str, float]:
    from evalbench.agents.tools.python_exec import run_python

    work = tmp / "sandbox"
    work.mkdir()
    run_python("print(1)", work)  # warm-up
    times = []
    for _ in range(20):
        t0 = time.perf_counter()
        result = run_python("print(1)", work)
        times.append(time.perf_counter() - t0)
        assert result.stdout.strip() == "1", result
    return {"python_tool_startup_ms_median": statistics.median(times) * 1e3,
            "isolation": result.isolation}  # fmt: skip


def main() -> None:
    from evalbench.records import to_json, write_atomic

    os.environ["BENCH_KEY"] = "sk-bench"
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        os.environ["EVALBENCH_OUTPUTS"] = str(tmp / "outputs")
        os.environ["EVALBENCH_CACHE"] = str(tmp / "cache")
        os.environ["EVALBENCH_PROGRESS"] = "text"
        server = LoopbackServer().start()
        try:
            result = bench_steps(server, tmp) | bench_python_tool(tmp)
        finally:
            server.stop()
    write_atomic(OUTPUTS / "bench" / "agents.json", to_json(result, indent=2) + "\n")
    print(to_json(result, indent=2))


if __name__ == "__main__":
    asyncio.set_event_loop_policy(None)
    main()
