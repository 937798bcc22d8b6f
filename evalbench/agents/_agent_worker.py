"""The process a sync ``python`` agent runs one task in: ``python -I _agent_worker.py``.

Standard library only, never imported by evalbench (``backends.call_in_worker`` starts it).
It reads the job from stdin — an 8-byte length, then JSON ``{"sys_path", "entrypoint",
"task"}`` — imports the entrypoint with the parent's ``sys.path``, calls it with the task,
and writes JSON ``[ok, value]`` length-prefixed on stdout: ``[true, reply]`` or
``[false, "<Type>: <message>"]``. The agent's own prints go to stderr, so stdout carries
only the reply. The reply crosses as data, never as a pickle: unpickled in evalbench, a
reply's ``__reduce__`` ran the agent's code there, past its time limit.

It dies with evalbench: PR_SET_PDEATHSIG kills it when its parent goes, and since its parent
may be ``unshare`` (a PID namespace of its own), a thread also watches stdin, which evalbench
keeps open: end of file means evalbench is gone, and the worker kills its process group.
"""

import importlib
import json
import os
import signal
import sys
import threading
from typing import Any

PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER = 1, 36


def _die_with_parent() -> None:
    """Die with the parent; adopt orphaned descendants (evalbench finds and kills them)."""
    import ctypes

    parent = os.getppid()
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the prctl took effect
        os._exit(1)


def _watch_lifeline() -> None:
    """Block on stdin; at its end (evalbench gone) kill the whole process group."""
    while os.read(0, 1024):
        pass
    os.killpg(0, signal.SIGKILL)
    os._exit(1)  # unreachable unless the group was changed under us


def _read_job() -> dict[str, Any]:
    size = int.from_bytes(_read_exactly(8), "big")
    return json.loads(_read_exactly(size))


def _read_exactly(size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = os.read(0, size - len(data))
        if not chunk:
            raise EOFError("evalbench closed the job pipe early")
        data += chunk
    return data


def _call(job: dict[str, Any]) -> tuple[bool, Any]:
    """The agent's reply, or its failure as ``"<Type>: <message>"`` (as evalbench records it)."""
    module_name, _, attr = job["entrypoint"].partition(":")
    try:
        fn = getattr(importlib.import_module(module_name), attr)
        return True, fn(job["task"])
    except BaseException as exc:  # SystemExit too: the agent's failure, never the worker's
        return False, f"{type(exc).__name__}: {exc}"


def _plain(value: Any) -> Any:
    """What JSON cannot write, as data when it is data: numpy's numbers and arrays, a
    pydantic model; anything else cannot be sent (``TypeError``)."""
    for name, args in (("model_dump", {"mode": "json"}), ("tolist", {}), ("item", {})):
        method = getattr(value, name, None)
        if callable(method) and not isinstance(value, type):
            return method(**args)
    raise TypeError(f"{type(value).__name__} is not data (a string, number, list or mapping)")


def _send(out: int, result: tuple[bool, Any]) -> None:
    try:
        data = json.dumps(list(result), default=_plain).encode()
    except (TypeError, ValueError, RecursionError) as exc:
        reason = f"the reply cannot be sent back to evalbench ({type(exc).__name__}: {exc})"
        data = json.dumps([False, f"UnsendableReply: {reason}"]).encode()
    view = memoryview(len(data).to_bytes(8, "big") + data)
    while view:
        view = view[os.write(out, view) :]


def main() -> None:
    """Read the job, run the agent once, send its reply, exit."""
    _die_with_parent()
    job = _read_job()
    threading.Thread(target=_watch_lifeline, daemon=True).start()
    out = os.dup(1)
    os.dup2(2, 1)  # the agent's prints (and its children's) go to stderr
    sys.path[:] = job["sys_path"]
    result = _call(job)
    sys.stdout.flush()
    _send(out, result)
    os.close(out)


if __name__ == "__main__":
    main()
