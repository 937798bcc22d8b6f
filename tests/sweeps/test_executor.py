"""The local executor: every task back exactly once, in chain order, phases one after another;
a task that raises, a worker that dies and a task that hangs are each one ``Finished`` with the
reason, and the rest goes on; stopping early leaves no process behind. Real worker processes
(spawned): slow by nature (~5 s with a 2 s timeout in it)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from evalbench.sweeps.executor import LocalExecutor, Task

pytestmark = pytest.mark.slow


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as fh:  # a zombie waiting for its parent is not running
        return fh.read().split(") ")[1][0] != "Z"


@pytest.fixture
def work(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.syspath_prepend(str(Path(__file__).parent))  # workers inherit sys.path
    from sweep_work import task

    return task


def test_every_task_ends_once_whatever_happens_to_it(work, tmp_path: Path) -> None:
    pid_file = tmp_path / "hung_child.pid"
    phases = [
        [[Task(0, ("ok", 0)), Task(1, ("raise", 1)), Task(2, ("ok", 2))],
         [Task(3, ("die", 3)), Task(4, ("ok", 4))]],
        [[Task(5, ("hang", str(pid_file))), Task(6, ("ok", 6))]],
    ]  # fmt: skip
    started = time.monotonic()
    done = list(LocalExecutor(2).run(phases, work, timeout_s=2.0))
    wall = time.monotonic() - started
    by_cell = {d.cell: d for d in done}
    assert sorted(by_cell) == list(range(7)) and len(done) == 7
    assert by_cell[1].error == "ValueError: bad input 1" and by_cell[1].value is None
    assert by_cell[3].error == "its worker process died (exit code 3)"
    assert by_cell[5].error == "timed out after 2 s (sweep.cell_timeout_s); stopped"
    assert all(by_cell[c].error is None for c in (0, 2, 4, 6))
    order = [d.cell for d in done]
    assert order.index(0) < order.index(1) < order.index(2)  # a chain runs in order
    assert order.index(3) < order.index(4)
    assert max(order.index(c) for c in range(5)) < order.index(5)  # phase 2 after phase 1
    # after a worker died (3) or hung (5), the rest of its chain still ran (4, 6: ok above)
    # the hung task's own child was killed with it (its process group)
    assert not _alive(int(pid_file.read_text()))
    assert 2.0 <= wall < 30


def test_stopping_early_kills_the_workers(work, tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    phases = [[[Task(0, ("ok", 0))], [Task(1, ("hang", str(pid_file)))]]]
    run = LocalExecutor(2).run(phases, work, timeout_s=60.0)
    first = next(run)
    assert first.cell == 0 and first.error is None
    deadline = time.monotonic() + 60  # a loaded machine starts the task late
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    run.close()  # as an interrupt in the consumer does: both workers and the child are gone
    assert not _alive(first.value) and not _alive(int(pid_file.read_text()))


def test_max_parallel_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_parallel must be at least 1, got 0"):
        LocalExecutor(0)


def test_a_forkserver_worker_makes_no_named_semaphore_for_its_progress_bars():
    # Before: a cell's progress bar took tqdm's multiprocessing lock, in a forkserver worker a
    # named semaphore (/dev/shm/sem.mp-*) that only the resource tracker removes: a kill -9
    # of the sweep left one per worker behind.
    import subprocess
    import sys

    code = (
        "import multiprocessing as mp, multiprocessing.synchronize as s\n"
        "mp.set_start_method('forkserver', force=True)\n"
        "made = []\n"
        "init = s.SemLock.__init__\n"
        "s.SemLock.__init__ = lambda self, *a, **k: (made.append(a), init(self, *a, **k))[1]\n"
        "from evalbench.sweeps.study import prepare_worker\n"
        "from evalbench.models.progress import progress_bar\n"
        "prepare_worker('gaia')\n"
        "for _ in progress_bar()(range(3), disable=False): pass\n"
        "print(len(made))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "EVALBENCH_PROGRESS": "text"})  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["0"], done.stdout
