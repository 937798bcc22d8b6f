"""Example agents for the tests (entrypoints ``tests.agents.example_agent:<name>``).

``answer`` is the example from the README: it reads the task, opens its CSV attachment
and answers, reporting its steps (tests/agents/test_example_agent.py runs it on the demo).
"""

from __future__ import annotations

import asyncio
import csv
from pathlib import Path


def answer(task: dict) -> dict:
    """Sum the 'units' column of an attached CSV (else echo the question's last word)."""
    steps = []
    for path in (p for p in task["attachments"] if p.endswith(".csv")):
        with open(path, newline="") as fh:
            rows = list(csv.DictReader(fh))
        steps.append({"kind": "tool", "tool": "read_csv", "arguments": {"path": Path(path).name},
                      "result": f"{len(rows)} rows"})  # fmt: skip
        if rows and "units" in rows[0]:
            total = sum(int(row["units"]) for row in rows)
            return {"answer": str(total), "steps": steps, "prompt_tokens": 120,
                    "completion_tokens": 8, "cost_usd": 0.0001}  # fmt: skip
    return {"answer": task["question"].split()[-1].rstrip("?"), "steps": steps}


async def async_answer(task: dict) -> str:
    """An async agent answering with a bare string."""
    await asyncio.sleep(0)
    return "42"


def crash(task: dict) -> str:
    """An agent that raises."""
    raise RuntimeError(f"cannot solve {task['id']}")


def slow(task: dict) -> dict:
    """An agent that takes 0.3 s per task and reports two steps (kill-and-resume tests)."""
    import time

    time.sleep(0.3)
    steps = [{"kind": "model"}, {"kind": "tool", "tool": "sleep"}]
    return {"answer": task["question"].split()[-1].rstrip("?"), "steps": steps}


def many_steps(task: dict) -> dict:
    """Reports more steps than any sane limit."""
    return {"answer": "x", "steps": [{"kind": "model"}] * 50}


def modify_attachment(task: dict) -> str:
    """Writes into its copy of the attachment (the original must not change)."""
    for path in task["attachments"]:
        Path(path).write_text("overwritten")
    return "done"


def hle_answer(task: dict) -> dict:
    """Answers HLE-style tasks in the official response format ("4" to every question)."""
    assert "Exact Answer" in task["question"] or "Answer:" in task["question"]
    steps = [{"kind": "model", "prompt_tokens": 50, "completion_tokens": 10}]
    return {"answer": "Explanation: counted\nExact Answer: 4\nConfidence: 90%", "steps": steps}


FOREVER_MARK = "EVALBENCH_FOREVER_MARK"


def forever_mark(task_id: str = "") -> str:
    """The mark :func:`forever` leaves on its sleeper's command line: this test session's
    (tests/conftest.py's token), then the task id; without ``task_id``, the prefix of all."""
    import os

    return f"{FOREVER_MARK}-{os.environ.get('EVALBENCH_TEST_TOKEN', '')}-{task_id}"


ASYNC_CANCELLED: list[str] = []


def forever(task: dict) -> str:
    """Never returns, ignores SIGTERM, and leaves a marked ``sleep`` in a session of its own
    (everything of it must still be gone after its task times out)."""
    import contextlib
    import signal
    import subprocess
    import sys
    import time

    with contextlib.suppress(ValueError):  # in a thread (evalbench before its worker process)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    mark = forever_mark(task["id"])
    sleeper = "import time; time.sleep(300)"  # the mark is its argv[1] (sleep would refuse it)
    subprocess.Popen([sys.executable, "-c", sleeper, mark], start_new_session=True)
    while True:
        time.sleep(1)


async def async_forever(task: dict) -> str:
    """Awaits forever; notes its cancellation (the runner must cancel it at max_time_s)."""
    try:
        await asyncio.sleep(3600)
    finally:
        ASYNC_CANCELLED.append(task["id"])
    return "never"


RICH_REPLY = {
    "answer": "ok",
    "steps": [
        {"kind": "model", "prompt_tokens": 7, "completion_tokens": 3, "latency_s": 0.25},
        {"kind": "tool", "tool": "calc", "arguments": {"x": [1, 2.5, None, True], "y": "é"}},
        {"kind": "tool", "tool": "t1", "result": {"nested": {"value": 1.0}}, "error": "flaky"},
        {"kind": "tool", "tool": "t2", "arguments": "raw", "result": 3},
    ],
    "cost_usd": 0.5,
}


def rich(task: dict) -> dict:
    """Reports a trajectory with nested arguments and results of every JSON type."""
    print("the agent prints; its reply must not change")
    return RICH_REPLY


def exits(task: dict) -> str:
    """Calls sys.exit (an error of the agent, not of the run)."""
    import sys

    sys.exit(3)


def dies(task: dict) -> str:
    """Ends its process without a word."""
    import os

    os._exit(7)


class _Trap:
    """Runs ``os.system`` wherever it is unpickled: the reply of :func:`pickle_trap`."""

    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        import os

        return (os.system, (f"touch {self.path}",))


def pickle_trap(task: dict) -> dict:
    """A reply that was code run in evalbench's own process (its replies were pickles)."""
    return {"answer": _Trap(task["question"].split()[-1])}


def numpy_reply(task: dict) -> dict:
    """Numbers of numpy's types in the reply (what an agent computing its cost returns)."""
    import numpy as np

    return {"answer": "np", "cost_usd": np.float64(0.25), "prompt_tokens": np.int64(7)}
