"""Running the python sandbox (see ``sandbox.py``), and the ``python`` tool.

:func:`run_python` starts the sandbox, sends it the code, reads stdout, stderr and the
status pipe together into bounded buffers, enforces the wall clock, and when the call
ends kills whatever is left (the whole PID namespace, or the process group) and waits
until nothing of it remains. Nothing the code prints is ever held in memory beyond
``output_chars`` per stream.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from pathlib import Path
from typing import Any, Literal, NamedTuple

from evalbench import processes

from .base import Tool, ToolContext, function_schema
from .sandbox import (
    NO_NETWORK_NOTE,
    Mode,
    Plan,
    SandboxLimits,
    SandboxResult,
    command,
    hand_over,
    plan_for,
    sandbox_env,
)

OUTPUT_STOP_FACTOR = 100  # stop a program once it has written 100× the kept output
DRAIN_GRACE_S = 0.25  # after the code ends, how long to wait for its last output bytes
READ_CHUNK = 1 << 16
GROUP_EXIT_WAIT_S = 1.0  # session mode: how long to wait for killed group members to go
RESULT_NOTE_ROOM = 300  # characters of the tool result kept for the status lines
SYNC_WAIT_S = 60.0  # after the cell ends, how long the copy of the work dir back may take
NOT_SAVED_NOTE = "the work dir was left as it was before the call"


class _Stream:
    """A bounded capture: the first and last ``cap // 2`` bytes, and a count of the rest."""

    def __init__(self, cap: int) -> None:
        self.half = max(cap // 2, 1)
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        """Keep what fits at the head, then a rolling tail."""
        self.total += len(data)
        room = self.half - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            del self.tail[: max(0, len(self.tail) - self.half)]

    def text(self) -> str:
        """The kept bytes as text, with the omitted middle counted."""
        head, tail = _decode(self.head), _decode(self.tail)
        dropped = self.total - len(self.head) - len(self.tail)
        if dropped <= 0:
            return head + tail
        return f"{head}\n… [{dropped} bytes of output omitted] …\n{tail}"


def _decode(data: bytes | bytearray) -> str:
    return bytes(data).decode("utf-8", errors="replace")


def run_python(
    code: str,
    workdir: Path,
    limits: SandboxLimits | None = None,
    isolation: Literal["auto", "namespace", "session"] = "auto",
) -> SandboxResult:
    """Run ``code`` in a separate, limited process with ``cwd=workdir``; see the module doc.

    Args:
        code: Python source, run as ``__main__`` (tracebacks name it ``<cell>``).
        workdir: the task's private work dir (from ``prepare_workdir``).
        limits: the limits; defaults to ``SandboxLimits()``.
        isolation: ``auto`` picks namespaces when available; ``namespace`` demands them.

    Returns:
        The captured, bounded output, exit code and why the run was stopped (if it was).
    """
    return run_planned(code, Path(workdir), limits or SandboxLimits(), plan_for(isolation))


def run_planned(code: str, workdir: Path, limits: SandboxLimits, plan: Plan) -> SandboxResult:
    """:func:`run_python` with an explicit :class:`Plan`."""
    if not workdir.is_dir():
        raise FileNotFoundError(f"sandbox: work dir {workdir} does not exist")
    work_fd = None
    if plan.mode == "namespace":  # opened here, on the host's mount: the copy back writes it
        work_fd = os.open(workdir, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    elif plan.uid is not None:
        hand_over(workdir, plan.uid)
    started = time.monotonic()
    status_r, status_w = os.pipe()
    try:
        proc = subprocess.Popen(
            command(workdir, limits, plan, status_w, work_fd),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=(status_w,) if work_fd is None else (status_w, work_fd),
            cwd=workdir,
            env=processes.marked(sandbox_env(workdir)),  # + the mark: it dies with evalbench
            start_new_session=True,
        )
    finally:
        os.close(status_w)
        if work_fd is not None:
            os.close(work_fd)
    with proc, os.fdopen(status_r, "rb") as status:
        try:
            processes.tie(proc.pid)  # its group dies with evalbench (kill -9 too)
            _send(proc, code)
            outcome = _collect(proc, status.fileno(), limits, plan.mode, started)
        except BaseException:  # e.g. a notebook interrupt: the run must not live on
            _end(proc, plan.mode, finished=False)
            raise
        finally:
            processes.untie(proc.pid)
    return _result(outcome, limits, plan.mode, time.monotonic() - started)


def _send(proc: subprocess.Popen, code: str) -> None:
    """Write the code to the supervisor, which reads all of stdin before anything else."""
    assert proc.stdin is not None
    try:
        proc.stdin.write(code.encode("utf-8", errors="replace"))  # lone surrogates from JSON
        proc.stdin.close()
    except BrokenPipeError:  # it died at startup; its stderr says why
        pass


class _Outcome(NamedTuple):
    stdout: _Stream
    stderr: _Stream
    status: int | None  # the cell's raw wait status, None when it was never reported
    stop: str | None  # "wall" or "output" when evalbench stopped the run
    returncode: int  # the sandbox process's own (unshare's, or the supervisor's)
    sync: str | None = None  # namespace mode: "synced", "sync failed: ...", None if never


def _collect(
    proc: subprocess.Popen, status_fd: int, limits: SandboxLimits, mode: Mode, started: float
) -> _Outcome:
    """Read the run's output and status until it ends, then clean up after it."""
    assert proc.stdout is not None and proc.stderr is not None
    streams = {fd.fileno(): _Stream(limits.output_chars) for fd in (proc.stdout, proc.stderr)}
    status, stop = _read(streams, status_fd, limits, started + limits.wall_s)
    _end(proc, mode, finished=bool(status) and stop is None)
    stdout, stderr = streams.values()
    lines = status.decode(errors="replace").splitlines()
    code = int(lines[0]) if lines and lines[0].strip() else None
    return _Outcome(stdout, stderr, code, stop, proc.returncode, lines[1] if lines[1:] else None)


def _read(
    streams: dict[int, _Stream], status_fd: int, limits: SandboxLimits, deadline: float
) -> tuple[bytes, str | None]:
    """Read the pipes together until all close, or a stop; ``(status, "wall"|"output"|None)``.

    Once the cell's status is in, the wall clock no longer applies: the supervisor copies
    the work dir back, within :data:`SYNC_WAIT_S`.
    """
    status, gone = b"", False
    with selectors.DefaultSelector() as selector:
        for fd in (*streams, status_fd):
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map():
            timeout = deadline - time.monotonic()
            if timeout <= 0:  # after the supervisor is gone, only the drain deadline
                return status, None if gone or status else "wall"
            for key, _ in selector.select(timeout):
                data = os.read(key.fd, READ_CHUNK)
                if key.fd == status_fd:
                    if b"\n" not in status and b"\n" in data:
                        deadline = time.monotonic() + SYNC_WAIT_S
                    status += data
                elif data:
                    streams[key.fd].add(data)
                if not data:
                    selector.unregister(key.fd)
                if not data and key.fd == status_fd:  # supervisor gone: drain briefly
                    gone, deadline = True, min(deadline, time.monotonic() + DRAIN_GRACE_S)
            if sum(s.total for s in streams.values()) > OUTPUT_STOP_FACTOR * limits.output_chars:
                return status, "output"
    return status, None


def _end(proc: subprocess.Popen, mode: Mode, finished: bool) -> None:
    """Kill whatever is left of the run, and wait until nothing of it remains."""
    if mode == "namespace" and finished:
        # The supervisor has reported and is exiting: the namespace empties by itself.
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=DRAIN_GRACE_S)
            return
    if mode == "session":
        _end_group(proc)
        return
    # Killing the namespace's PID 1 kills everything in it; unshare reaps it only once
    # the namespace is empty, so waiting for unshare is waiting for all of it.
    if proc.poll() is None:
        for pid in _children(proc.pid):
            _kill(pid)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:  # unshare itself stuck: fall back to its group
        _end_group(proc)


def _end_group(proc: subprocess.Popen) -> None:
    """Kill the process group, reap its leader, then wait (bounded) for the rest to go."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)  # before reaping: the group id is still ours
    proc.wait()
    deadline = time.monotonic() + GROUP_EXIT_WAIT_S
    while time.monotonic() < deadline:
        try:
            os.killpg(proc.pid, 0)  # still someone (maybe a zombie awaiting its reaper)
        except ProcessLookupError:
            return
        time.sleep(0.01)


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _children(pid: int) -> list[int]:
    """Process ids whose parent is ``pid`` (a /proc scan; the kernel may lack /children)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def _result(outcome: _Outcome, limits: SandboxLimits, mode: Mode, wall: float) -> SandboxResult:
    """Turn what was collected into a :class:`SandboxResult` with a reason for any stop."""
    exit_code, killed = _exit_and_reason(outcome, limits)
    timed_out = outcome.stop == "wall" or exit_code == -signal.SIGXCPU
    stdout, stderr = outcome.stdout.text(), outcome.stderr.text()
    notes = () if mode == "session" else _sync_notes(outcome)
    return SandboxResult(stdout, stderr, exit_code, timed_out, killed, round(wall, 3), mode, notes)


def _sync_notes(outcome: _Outcome) -> tuple[str, ...]:
    """Namespace mode: what to say when the work dir was not (all) copied back."""
    if outcome.sync == "synced" or (outcome.status is None and outcome.stop is None):
        return ()  # saved, or the sandbox never ran (its reason is the result's)
    if outcome.sync is None:
        return (f"stopped before the end: {NOT_SAVED_NOTE}",)
    return (f"the work dir was not fully saved: {outcome.sync}",)


def _exit_and_reason(outcome: _Outcome, limits: SandboxLimits) -> tuple[int, str | None]:
    """The cell's exit code (negative: a signal) and why it was stopped, if it was."""
    if outcome.stop == "wall":
        return -signal.SIGKILL, f"wall time limit ({limits.wall_s:g} s)"
    if outcome.stop == "output":
        written = OUTPUT_STOP_FACTOR * limits.output_chars
        return -signal.SIGKILL, f"output limit ({written} bytes written)"
    if outcome.status is None:  # the supervisor never reported: the sandbox itself failed
        return (
            outcome.returncode,
            f"sandbox failed to run the code (exit code {outcome.returncode})",
        )
    exit_code = os.waitstatus_to_exitcode(outcome.status)
    return exit_code, _signal_reason(-exit_code, limits) if exit_code < 0 else None


def _signal_reason(signum: int, limits: SandboxLimits) -> str:
    if signum == signal.SIGXCPU:
        return f"cpu time limit ({limits.cpu_s} s)"
    try:
        return f"signal {signal.Signals(signum).name}"
    except ValueError:
        return f"signal {signum}"


def format_result(result: SandboxResult, budget: int) -> str:
    """The tool's text: a status line, then stdout and stderr fitted into ``budget``."""
    status = f"exit code {result.exit_code}"
    if result.killed:
        status += f"; stopped: {result.killed}"
    lines = [f"[{status}; {result.wall_s:.2f} s]"]
    if result.isolation == "session":
        lines.append(f"[note: {NO_NETWORK_NOTE}]")
    lines += [f"[note: {note}]" for note in result.notes]
    room = max(budget - RESULT_NOTE_ROOM, 2)
    err_room = min(len(result.stderr), room // 2)
    out_room = room - err_room
    err_room = room - min(len(result.stdout), out_room)
    if result.stdout:
        lines.append("stdout:\n" + _fit(result.stdout, out_room))
    if result.stderr:
        lines.append("stderr:\n" + _fit(result.stderr, err_room))
    if not (result.stdout or result.stderr):
        lines.append("(no output)")
    return "\n".join(lines)


def _fit(text: str, room: int) -> str:
    """``text`` within ``room`` characters, keeping its head and its tail."""
    if len(text) <= room:
        return text
    half = room // 2
    return f"{text[:half]}\n… [{len(text) - 2 * half} characters omitted] …\n{text[-half:]}"


def _run_tool(arguments: dict[str, Any], ctx: ToolContext) -> str:
    result = run_python(arguments["code"], ctx.workdir, ctx.python)
    return format_result(result, ctx.char_budget)


PYTHON = Tool(
    name="python",
    schema=function_schema(
        "python",
        "Run Python 3 code in a fresh sandboxed process (no state is kept between calls) "
        "whose working directory holds copies of the task's attachments. Print what you "
        "need: the result shows stdout, stderr and the exit code. pandas and numpy are "
        "available; network access is blocked where the platform allows it.",
        {"code": {"type": "string", "description": "the Python source to run"}},
        ["code"],
    ),
    run=_run_tool,
)
