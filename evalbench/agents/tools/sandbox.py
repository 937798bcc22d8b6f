"""What the python sandbox is: its limits, its isolation, and the command that starts it.

``python_exec.run_python`` runs model-written code in a separate, limited process (never
in evalbench's own): it starts ``python -I -B _sandbox_init.py`` (isolated mode: no user
site, no ``PYTHON*`` variables; the venv's site-packages stay importable, so the code
may use pandas/numpy) with ``cwd`` = the task's work dir, a minimal explicit environment
(never inherited: no API keys or tokens) and the code on stdin. Two isolation modes:

- ``namespace`` (root and ``unshare`` works): ``unshare --pid --fork --kill-child --net
  --ipc --mount-proc``. The code runs in fresh PID, network (loopback down: no network at
  all), IPC and mount namespaces, as a fresh unprivileged uid/gid picked per call (so
  RLIMIT_NPROC applies and concurrent sandboxes cannot touch each other). Its file system:
  one private tmpfs of ``disk_mb`` is ``/tmp``, ``/var/tmp`` and ``/dev/shm`` and holds a
  copy of the work dir (the disk budget: a write past it fails with ENOSPC); every other
  mount is read-only; unreadable ancestors (a 0700 ``/root``) are covered by empty tmpfs
  mounts with only what the interpreter needs bound back. When the code ends, the
  supervisor (the namespace's PID 1, still root) kills what it left running and copies the
  work dir's new state back to the host (regular files, folders, symlinks as links; never
  following one); then the namespace, and everything written elsewhere, is gone. A call
  stopped at its wall-clock or output limit is not copied back: the work dir stays as it was.
- ``session`` (otherwise): a new session, killed with ``killpg`` when the call ends; as
  root it still drops to a fresh uid (then the interpreter's files must be readable by
  other users; a venv on a Python under a 0700 ``/root`` is not). The code writes the work
  dir directly; a process that calls setsid() can outlive the call, and **network and file
  isolation and the disk budget are unavailable** (the result says so).

Both modes: RLIMIT_CPU, RLIMIT_AS, RLIMIT_FSIZE, RLIMIT_NPROC and RLIMIT_CORE=0, and a
seccomp filter that refuses Unix sockets (host sockets are reached by path or name) and new
user namespaces (set by ``_sandbox_init.py`` before the code runs); the wall clock, bounded
output capture and the final kill are ``python_exec``'s.
"""

from __future__ import annotations

import functools
import json
import os
import secrets
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

INIT_SCRIPT = Path(__file__).with_name("_sandbox_init.py")
UNSHARE_FLAGS = ("--pid", "--fork", "--kill-child", "--net", "--ipc", "--mount-proc")
SANDBOX_UID_BASE = 1_500_000_000  # far above any real account; one fresh uid per call
SANDBOX_UID_SPAN = 1 << 24
Mode = Literal["namespace", "session"]
NO_NETWORK_NOTE = (
    "network isolation is unavailable on this platform (session mode), and so are file "
    "isolation and the disk budget"
)
PRIVATE = ("/tmp", "/var/tmp", "/dev/shm")  # one private tmpfs in namespace mode


class SandboxLimits(BaseModel):
    """Limits of one ``python`` tool call (a boundary type: params files may set it)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cpu_s: int = Field(default=10, gt=0)
    """CPU seconds per process (RLIMIT_CPU; SIGXCPU when reached)."""
    wall_s: float = Field(default=20, gt=0)
    """Wall-clock seconds for the whole call, enforced by evalbench."""
    memory_mb: int = Field(default=512, gt=0)
    """Address space per process (RLIMIT_AS): a bigger allocation raises MemoryError."""
    output_chars: int = Field(default=20000, gt=0)
    """Characters kept per stream (head and tail); the middle is dropped and counted."""
    processes: int = Field(default=32, gt=0)
    """Processes and threads of the sandbox user (RLIMIT_NPROC)."""
    file_mb: int = Field(default=64, gt=0)
    """Largest file the code may write (RLIMIT_FSIZE)."""
    disk_mb: int = Field(default=1024, gt=0)
    """Disk budget of a call: the work dir (copied in, attachments included) and whatever
    it writes there or in /tmp, /var/tmp, /dev/shm share one private tmpfs (memory, freed
    when the call ends) of this size; past it a write fails with ENOSPC (namespace mode)."""


class SandboxResult(NamedTuple):
    """What one run produced."""

    stdout: str
    stderr: str
    exit_code: int  # negative: killed by that signal (subprocess's convention)
    timed_out: bool  # a CPU or wall-clock limit ended the run
    killed: str | None  # why the run was stopped, e.g. "wall time limit (20 s)"
    wall_s: float
    isolation: str = "namespace"  # "namespace" or "session"
    notes: tuple[str, ...] = ()  # e.g. why the work dir was not saved


class Plan(NamedTuple):
    """How to isolate one run (tests build their own to exercise a mode)."""

    mode: Mode
    uid: int | None  # uid/gid to drop to; None keeps the caller's


@functools.cache
def namespaces_available() -> bool:
    """True when running as root and ``unshare`` with every flag we use works here."""
    unshare = shutil.which("unshare")
    if os.geteuid() != 0 or unshare is None:
        return False
    probe = subprocess.run(
        [unshare, *UNSHARE_FLAGS, "true"], capture_output=True, timeout=10, check=False
    )
    return probe.returncode == 0


def plan_for(isolation: Literal["auto", "namespace", "session"] = "auto") -> Plan:
    """The isolation to use: namespaces when available (or demanded), else a session."""
    if isolation == "namespace" and not namespaces_available():
        raise RuntimeError("sandbox: namespaces unavailable (needs root and util-linux unshare)")
    use_ns = isolation == "namespace" or (isolation == "auto" and namespaces_available())
    uid = SANDBOX_UID_BASE + secrets.randbelow(SANDBOX_UID_SPAN) if os.geteuid() == 0 else None
    return Plan("namespace" if use_ns else "session", uid)


def sandbox_env(workdir: Path) -> dict[str, str]:
    """The child's whole environment: built here, nothing taken from ``os.environ``."""
    path = os.pathsep.join([str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"])
    threads = {name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    return {
        "PATH": path,
        "HOME": str(workdir),
        "TMPDIR": str(workdir),
        "LANG": "C.UTF-8",
        "USER": "sandbox",
        "LOGNAME": "sandbox",
        "PYTHONDONTWRITEBYTECODE": "1",
        "MPLBACKEND": "Agg",
        **threads,  # one BLAS thread each: threads count against RLIMIT_NPROC
    }


def rlimits(limits: SandboxLimits, plan: Plan) -> dict[str, list[int]]:
    """Resource limits as ``{"RLIMIT_NAME": [soft, hard]}`` for ``_sandbox_init.py``."""
    mb = 1024 * 1024
    nproc = limits.processes + (_tasks_of(os.getuid()) if plan.uid is None else 0)
    return {
        "RLIMIT_CPU": [limits.cpu_s, limits.cpu_s + 1],  # SIGXCPU, then SIGKILL a second later
        "RLIMIT_AS": [limits.memory_mb * mb] * 2,
        "RLIMIT_FSIZE": [limits.file_mb * mb] * 2,
        "RLIMIT_NPROC": [nproc] * 2,
        "RLIMIT_CORE": [0, 0],
    }


def _tasks_of(uid: int) -> int:
    """Threads the user already runs: RLIMIT_NPROC counts them all, ours included."""
    count = 0
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":", 1) for line in status.read_text().splitlines())
        except (OSError, ValueError):
            continue
        if int(fields.get("Uid", "-1").split()[0]) == uid:
            count += int(fields.get("Threads", "1"))
    return count


def needed_paths(workdir: Path) -> list[str]:
    """Paths the sandbox must reach: the work dir, the interpreter and its imports."""
    found = {workdir, Path(sys.base_prefix), Path(sys.prefix), Path(sys.executable).parent}
    found.update(Path(p) for p in sys.path if p and Path(p).is_dir())
    return sorted({str(p.resolve()) for p in found})


def _blocked_ancestor(path: str) -> str | None:
    """The topmost ancestor of ``path`` that other users cannot traverse, if any."""
    for parent in reversed(Path(path).parents):
        if parent != Path("/") and not os.stat(parent).st_mode & 0o001:
            return str(parent)
    return None


def _under(path: str, tops: Iterable[str], strictly: bool = False) -> bool:
    inside = (path.startswith(top.rstrip("/") + "/") for top in tops)
    return any(inside) or (not strictly and path in tops)


def mounts(workdir: Path) -> tuple[list[list], list[str]]:
    """Tmpfs masks ``[[path, mode], ...]`` over untraversable ancestors, and the paths the
    interpreter needs bound back (under those masks or under the private /tmp)."""
    needed = needed_paths(workdir)
    private = [p for p in PRIVATE if os.path.isdir(p)]
    masks = sorted(set(filter(None, map(_blocked_ancestor, needed))) - set(private))
    needed.remove(str(workdir.resolve()))  # its copy is mounted there, not the host's
    masks = [m for m in masks if not _under(m, [o for o in masks if o != m] + private)]
    binds = [p for p in needed if _under(p, [*masks, *private], strictly=True)]
    binds = [p for p in binds if not _under(p, [o for o in binds if o != p])]
    return [[m, 0o755] for m in masks], binds


def hand_over(workdir: Path, uid: int) -> None:
    """Let ``uid`` use the work dir: its files become the sandbox's; the dir stays root's.

    The dir is ``root:<uid> 0770`` so the sandbox can write in it but, not owning it,
    cannot rename it away (its parent is sticky); symlinks are re-owned, never followed.
    """
    os.chown(workdir, 0, uid)
    os.chmod(workdir, 0o770)
    for folder, dirs, files in os.walk(workdir):
        for name in dirs + files:
            os.chown(os.path.join(folder, name), uid, uid, follow_symlinks=False)


def command(
    workdir: Path, limits: SandboxLimits, plan: Plan, status_fd: int, work_fd: int | None
) -> list[str]:
    """The argv that starts the sandbox (``work_fd``: the work dir, opened on the host, for
    the copy in and out; namespace mode only)."""
    masks, binds = mounts(workdir) if plan.mode == "namespace" else ([], [])
    config = {
        "namespace": plan.mode == "namespace",
        "workdir": str(workdir),
        "work_fd": work_fd,
        "uid": plan.uid,
        "limits": rlimits(limits, plan),
        "masks": masks,
        "binds": binds,
        "disk_mb": limits.disk_mb,
        "status_fd": status_fd,
    }
    python = [sys.executable, "-I", "-B", str(INIT_SCRIPT), json.dumps(config)]
    if plan.mode == "namespace":
        return [shutil.which("unshare") or "unshare", *UNSHARE_FLAGS, "--", *python]
    return python
