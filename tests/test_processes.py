"""evalbench.processes: a process group's liveness from /proc and the bounded wait after a kill."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time

from evalbench.processes import group_running, wait_group_gone


def test_a_killed_group_is_gone_after_the_wait_and_a_live_one_is_not():
    # a shell and its background sleep: one process group of their own
    leader = subprocess.Popen(["sh", "-c", "sleep 30 & wait"], start_new_session=True)
    try:
        assert group_running(leader.pid)
        started = time.monotonic()
        assert not wait_group_gone(leader.pid, timeout_s=0.2)  # alive: False after the bound
        assert 0.2 <= time.monotonic() - started < 2
        os.killpg(leader.pid, signal.SIGKILL)
        leader.wait(5)  # the sleep is orphaned: a zombie until init reaps it counts as gone
        assert wait_group_gone(leader.pid) and not group_running(leader.pid)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(leader.pid, signal.SIGKILL)
        leader.wait(5)
