"""A pytest plugin that writes, per test, the machine's busy CPU seconds (``/proc/stat``:
every process, so a test's kernels, servers and workers count), its wall time, the test
process's own CPU, and the process's open descriptors and threads after it, one JSON line
each: ``make test TEST_JOBS=0 PYTEST_ARGS="-p cpu_per_test"`` (one process, so the busy time
is the test's own); the file is ``$CPU_PER_TEST_OUT`` (default ``cpu_per_test.jsonl`` in
the working folder). docs/performance.md quotes its sums."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from typing import Any

import pytest

_TICK = os.sysconf("SC_CLK_TCK")


def _busy() -> float:
    with open("/proc/stat") as fh:
        fields = [int(x) for x in fh.readline().split()[1:9]]
    return (sum(fields) - fields[3] - fields[4]) / _TICK  # all but idle and iowait


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: Any) -> Iterator[None]:
    busy, wall, own = _busy(), time.monotonic(), time.process_time()
    yield
    row = {"id": item.nodeid, "busy_s": round(_busy() - busy, 3),
           "wall_s": round(time.monotonic() - wall, 3),
           "process_s": round(time.process_time() - own, 3),
           "fds": len(os.listdir("/proc/self/fd")), "threads": len(os.listdir("/proc/self/task"))}  # fmt: skip
    with open(os.environ.get("CPU_PER_TEST_OUT", "cpu_per_test.jsonl"), "a") as fh:
        fh.write(json.dumps(row) + "\n")
