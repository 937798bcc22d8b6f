"""How each kind of agent runs one task: the user's Python function, the user's program,
the reference agent (``reference.py``) and the simulated agent (``sim.py``).

Every backend is ``async backend(item, recorder, workdir) -> Outcome``; the runner adds the
time limit, the private working dir and the record. A sync Python function and a command
run in processes of their own, so a task past ``max_time_s`` is killed with everything it
started and the study goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import inspect
import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from pydantic import ValidationError

from evalbench import processes
from evalbench.runs import Run
from evalbench.settings import get_settings

from .runner import AgentConfigError, Backend, Outcome, Recorder, TaskInput, clip
from .types import AgentReply, SystemSpec

MAX_STDOUT_BYTES = 10_000_000  # a command's reply larger than this is an error, not read on
STDERR_KEPT = 1_000_000  # the tail of a command agent's stderr kept (the rest is read, dropped)
MAX_REPLY_BYTES = 100_000_000  # a sync python agent's JSON reply, likewise
STDERR_TAIL = 500
WORKER_SCRIPT = Path(__file__).with_name("_agent_worker.py")
WORKER_EXIT_GRACE_S = 1.0  # after its reply, how long a worker may take to exit by itself
KILL_ROUNDS = 20  # rounds of killing a worker's descendants (each round may find new forks)


def backend_for(run: Run, spec: SystemSpec, **sim_options: Any) -> Backend:
    """The backend of an agent system (checked now: a bad entrypoint fails before any task).

    Args:
        run: the open run (the reference agent asks its model through ``run.client``).
        spec: the agent system.
        sim_options: for simulated agents (``wrong_answer(truth, rng) -> str``).
    """
    if spec.provider == "python":
        rebuild = functools.partial(_python_agent, spec.entrypoint or "")
        return Portable(rebuild(), rebuild)
    if spec.provider == "command":
        rebuild = functools.partial(_command_agent, spec.name, list(spec.argv or []))
        return Portable(rebuild(), rebuild)
    if spec.provider == "agent":
        from .reference import reference_backend

        cache = str(get_settings().cache_dir / "responses.sqlite")
        rebuild = functools.partial(
            _reference_elsewhere, spec, cache, run.params.cache, run.params.seed
        )
        return Portable(reference_backend(run, spec), rebuild)
    if spec.sim_agent is not None:
        from .sim import sim_backend

        return sim_backend(
            spec, seed=spec.seed if spec.seed is not None else run.params.seed, **sim_options
        )
    raise AgentConfigError(f"system {spec.name!r} (provider {spec.provider!r}) is not an agent")


class Portable:
    """A backend that another process (a worker of a cluster) builds anew when it unpickles
    it, from its recipe (``rebuild``): the reference agent's model client, HTTP connections
    and response cache belong to the process that opened them, and a user's function or
    program must be found where it runs."""

    def __init__(self, backend: Backend, rebuild: Callable[[], Backend]):
        self.backend, self.rebuild = backend, rebuild
        self.aclose = getattr(backend, "aclose", None)

    async def __call__(self, item: TaskInput, recorder: Recorder, workdir: Path) -> Outcome:
        return cast(Outcome, await self.backend(item, recorder, workdir))

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuilt, (self.rebuild,))


def _rebuilt(rebuild: Callable[[], Backend]) -> Backend:
    return rebuild()


def _python_agent(entrypoint: str) -> Backend:
    """The user's function, imported here (where the backend runs: a worker that cannot
    import it fails at once, not task by task)."""
    return python_backend(load_entrypoint(entrypoint), entrypoint)


def _command_agent(name: str, argv: list[str]) -> Backend:
    """The user's program, found here (relative paths from the project root)."""
    argv = resolve_argv(argv, get_settings().project_root)
    if shutil.which(argv[0]) is None and not Path(argv[0]).is_file():
        raise AgentConfigError(f"system {name!r}: program {argv[0]!r} not found")
    return command_backend(argv)


class _RunElsewhere:
    """What the reference agent needs of a run in another process: a model client with the
    run's cache mode and seed, on the driver's response cache when this machine has that
    file (a local cluster, a shared disk), else without one."""

    def __init__(self, cache_file: str, cache_mode: Any, seed: int):
        self.cache_file, self.cache_mode, self.seed = Path(cache_file), cache_mode, seed

    def client(self, spec: Any) -> Any:
        from evalbench.models import ModelClient, ResponseCache

        cache = ResponseCache(self.cache_file) if self.cache_file.is_file() else None
        return ModelClient(spec, cache=cache, cache_mode=self.cache_mode, seed=self.seed)


def _reference_elsewhere(spec: SystemSpec, cache_file: str, cache_mode: Any, seed: int) -> Backend:
    from .reference import reference_backend

    return reference_backend(cast(Run, _RunElsewhere(cache_file, cache_mode, seed)), spec)


def resolve_argv(argv: list[str], root: Path) -> list[str]:
    """``argv`` with its relative paths made absolute against the project ``root`` (a
    command runs in the task's private folder): an argument naming an existing file or
    folder under ``root`` is replaced by its absolute path; the program itself only when
    it has a ``/`` (else it is looked up on PATH, as a shell does). Options (``-x``) and
    arguments that name nothing there (``openai/gpt-4o``) stay as they are."""
    resolved = []
    for index, arg in enumerate(argv):
        named = arg and not arg.startswith("-") and not Path(arg).is_absolute()
        is_path = named and (index > 0 or "/" in arg)
        resolved.append(str(root / arg) if is_path and _exists(root / arg) else arg)
    return resolved


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except (OSError, ValueError):  # a name too long, or with a NUL byte: not a path
        return False


def load_entrypoint(entrypoint: str) -> Callable[..., Any]:
    """Import ``package.module:function`` (the project root is importable).

    Raises:
        AgentConfigError: one line naming what could not be imported.
    """
    module_name, _, attr = entrypoint.partition(":")
    root = str(get_settings().project_root)
    if root not in sys.path:
        sys.path.insert(0, root)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise AgentConfigError(
            f"entrypoint {entrypoint!r}: cannot import {module_name}: {exc}"
        ) from None
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise AgentConfigError(f"entrypoint {entrypoint!r}: {module_name} has no function {attr!r}")
    return fn


def python_backend(fn: Callable[..., Any], entrypoint: str) -> Backend:
    """The user's function, called with the task as a dict: an async function is awaited
    (and cancelled at ``max_time_s``); a sync one runs in a worker process of its own per
    task (:func:`call_in_worker`), killed with everything it started at ``max_time_s``."""
    if inspect.iscoroutinefunction(fn):

        async def run_async(item: TaskInput, recorder: Recorder, workdir: Path) -> Outcome:
            return outcome_of(await fn(item.task.model_dump(mode="json")), recorder)

        return run_async

    async def run(item: TaskInput, recorder: Recorder, workdir: Path) -> Outcome:
        ok, reply = await call_in_worker(entrypoint, item.task.model_dump(mode="json"))
        return outcome_of(reply, recorder) if ok else Outcome("error", error=reply)

    return run


async def call_in_worker(entrypoint: str, task: dict[str, Any]) -> tuple[bool, Any]:
    """Call ``entrypoint(task)`` in a fresh worker process (``_agent_worker.py``).

    The worker gets this process's ``sys.path``, environment and working dir, so whatever
    imports here imports there. It runs in its own PID namespace where possible (else its
    own process group), which is killed when the call ends or is cancelled.

    Returns:
        ``(True, reply)`` as the function returned it, or ``(False, "<Type>: <message>")``
        when it raised (or the worker died before replying).
    """
    job = json.dumps({"sys_path": sys.path, "entrypoint": entrypoint, "task": task}).encode()
    processes.lifeline()
    proc = await _spawn(
        _contained([sys.executable, "-I", str(WORKER_SCRIPT)]),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        processes.tie(proc.pid)  # its group dies with evalbench (kill -9 too)
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(len(job).to_bytes(8, "big") + job)  # stdin stays open: the lifeline
        return await _worker_reply(proc)
    finally:
        proc.stdin.close()  # type: ignore[union-attr]
        if not _pid_namespaces():  # no namespace to kill: find what left the process group
            _kill_descendants(proc.pid)
        await _kill_tree(proc)
        processes.untie(proc.pid)


async def _spawn(argv: list[str], **kwargs: Any) -> asyncio.subprocess.Process:
    """``asyncio.create_subprocess_exec``, never cancelled half-way: a time limit that ran
    out while asyncio started the process (``max_time_s`` below a start's time) left it
    running, unknown to evalbench, and the run waiting on its pipes for ever. On a cancel
    the start completes, the process tree is killed, and the cancel goes on."""
    start = asyncio.ensure_future(asyncio.create_subprocess_exec(*argv, **kwargs))
    try:
        return await asyncio.shield(start)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            proc = await start
            processes.tie(proc.pid)
            if proc.stdin is not None:
                proc.stdin.close()
            await _kill_tree(proc)
            processes.untie(proc.pid)
        raise


async def _worker_reply(proc: Any) -> tuple[bool, Any]:
    """Read the worker's length-prefixed JSON reply, then give it a moment to exit."""
    try:
        size = int.from_bytes(await proc.stdout.readexactly(8), "big")
        if size > MAX_REPLY_BYTES:
            return False, f"ReplyTooLarge: {size:,d} bytes (at most {MAX_REPLY_BYTES:,d})"
        raw = await proc.stdout.readexactly(size)
        try:
            ok, result = json.loads(raw)
            result = (bool(ok), result)
        except (ValueError, TypeError, RecursionError) as exc:  # a worker that is not ours
            result = (False, f"UnsendableReply: not a reply ({type(exc).__name__})")
    except asyncio.IncompleteReadError:
        status = await proc.wait()
        return False, f"WorkerDied: the agent's process ended ({_status(status)}) before replying"
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(proc.wait(), WORKER_EXIT_GRACE_S)
    return result


def _status(returncode: int) -> str:
    if returncode >= 0:
        return f"exit status {returncode}"
    try:
        return f"signal {signal.Signals(-returncode).name}"
    except ValueError:
        return f"signal {-returncode}"


def outcome_of(reply: Any, recorder: Recorder) -> Outcome:
    """Record a user agent's reported trajectory and turn its reply into an outcome.

    Raises:
        ValueError: the reply is neither a string nor an :class:`AgentReply` object.
    """
    if isinstance(reply, str) or reply is None:
        reply = {"answer": reply}
    try:
        parsed = AgentReply.model_validate(reply)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "reply"
        raise ValueError(f"invalid agent reply: {where}: {first['msg']}") from None
    for step in parsed.steps:
        arguments = None if step.arguments is None else json.dumps(step.arguments)
        recorder.step(
            step.kind,
            tool=step.tool,
            arguments=arguments,
            result=None if step.result is None else str(step.result),
            prompt_tokens=step.prompt_tokens,
            completion_tokens=step.completion_tokens,
            latency_s=step.latency_s,
            error=step.error,
        )
    if not parsed.steps and (parsed.prompt_tokens or parsed.completion_tokens):
        recorder.step(
            "model", prompt_tokens=parsed.prompt_tokens, completion_tokens=parsed.completion_tokens
        )
    outcome = Outcome("answered", answer=parsed.answer, cost_usd=parsed.cost_usd,
                      prompt_tokens=parsed.prompt_tokens,
                      completion_tokens=parsed.completion_tokens)  # fmt: skip
    if parsed.error:
        return outcome._replace(state="error", answer=None, error=f"agent_error: {parsed.error}")
    return outcome


def command_backend(argv: list[str]) -> Backend:
    """The user's program: one process per task, the task as JSON on stdin, the reply as
    JSON on stdout (a bare JSON string is the answer). Crash-isolated: a non-zero exit,
    output that is not JSON, or more than :data:`MAX_STDOUT_BYTES` is an error record; at
    the end (or the time limit) its whole process tree is killed."""

    async def run(item: TaskInput, recorder: Recorder, workdir: Path) -> Outcome:
        payload = item.task.model_dump_json().encode()
        processes.lifeline()
        proc = await _spawn(
            _contained(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=workdir,
            start_new_session=True,
        )
        try:
            processes.tie(proc.pid)  # its group dies with evalbench (kill -9 too)
            out, err, too_big = await _communicate(proc, payload)
        finally:
            await _kill_tree(proc)
            processes.untie(proc.pid)
        if too_big:
            return Outcome(
                "error", error=f"output_too_large: more than {MAX_STDOUT_BYTES:,d} bytes on stdout"
            )
        if proc.returncode:
            tail = err.decode(errors="replace").strip()[-STDERR_TAIL:]
            return Outcome("error", error=f"exit_status {proc.returncode}: {tail or '(no stderr)'}")
        try:
            reply = json.loads(out)
        except ValueError:
            snippet = clip(out.decode(errors="replace").strip(), 200)
            return Outcome("error", error=f"invalid_output: stdout is not JSON: {snippet!r}")
        return outcome_of(reply, recorder)

    return run


@functools.cache
def _pid_namespaces() -> bool:
    """Whether commands can run in their own PID namespace (root and util-linux unshare)."""
    unshare = shutil.which("unshare")
    if os.geteuid() != 0 or unshare is None:
        return False
    flags = [unshare, "--pid", "--fork", "--kill-child", "--mount-proc", "true"]
    return subprocess.run(flags, capture_output=True, timeout=10, check=False).returncode == 0


def _contained(argv: list[str]) -> list[str]:
    """``argv`` in a PID namespace of its own where possible: killing it kills every
    descendant, daemons that called setsid() included (else the process group is killed)."""
    if _pid_namespaces():
        return [
            shutil.which("unshare") or "unshare",
            "--pid",
            "--fork",
            "--kill-child",
            "--mount-proc",
            "--",
            *argv,
        ]
    return argv


def pid_namespaces() -> bool:
    """Whether a command can run in a PID namespace of its own (root and util-linux unshare)."""
    return _pid_namespaces()


def contained(argv: list[str]) -> list[str]:
    """``argv`` wrapped so that killing its process group kills every descendant, daemons
    that called setsid() included, where PID namespaces are available (else ``argv``)."""
    return _contained(argv)


async def _communicate(proc: Any, payload: bytes) -> tuple[bytes, bytes, bool]:
    """Send the task, read stdout (bounded) and stderr together until the process ends."""

    async def feed() -> None:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            proc.stdin.write(payload)
            await proc.stdin.drain()
            proc.stdin.close()

    async def read(stream: Any, cap: int) -> tuple[bytes, bool]:
        chunks: list[bytes] = []
        size = 0
        while chunk := await stream.read(65536):
            size += len(chunk)
            if size > cap:
                return b"".join(chunks), True
            chunks.append(chunk)
        return b"".join(chunks), False

    async def read_stderr() -> bytes:
        """All of stderr, drained to its end (a pipe left full blocks the program: its answer
        became a timeout), keeping the last :data:`STDERR_KEPT` bytes."""
        kept = bytearray()
        while chunk := await proc.stderr.read(65536):
            kept += chunk
            del kept[:-STDERR_KEPT]
        return bytes(kept)

    async def read_stdout() -> tuple[bytes, bool]:
        out, too_big = await read(proc.stdout, MAX_STDOUT_BYTES)
        if too_big:  # stop it now: it would block on the full pipe and never close stderr
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
        return out, too_big

    _, (out, too_big), err = await asyncio.gather(feed(), read_stdout(), read_stderr())
    if not too_big:
        await proc.wait()
    return out, err, too_big


def _kill_descendants(pid: int) -> None:
    """SIGKILL every live descendant of ``pid``, those in sessions of their own included.

    The worker is a child subreaper, so orphans of its descendants stay in its tree; rounds
    repeat (bounded) for processes forked while the previous round was killing.
    """
    for _ in range(KILL_ROUNDS):
        found = _descendants(pid)
        for child in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(child, signal.SIGKILL)
        if not found:
            return


def _descendants(pid: int) -> list[int]:
    """Live (not zombie) descendants of ``pid``, from one scan of /proc."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            state, ppid = stat.read_text().rsplit(")", 1)[1].split()[:2]
        except (OSError, ValueError):
            continue  # gone meanwhile
        if state != "Z":
            children.setdefault(int(ppid), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        kids = children.get(todo.pop(), [])
        found += kids
        todo += kids
    return found


async def _kill_tree(proc: Any) -> None:
    """Kill the command's process group (and with it its PID namespace), then reap it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    # Close our ends of its pipes: asyncio's wait() returns only once they are closed, and
    # a reader paused on a full buffer (output past the cap) or a descendant that escaped
    # the kill (session mode) would keep them open forever.
    transport = getattr(proc, "_transport", None)
    for fd in (1, 2):
        pipe = transport.get_pipe_transport(fd) if transport is not None else None
        if pipe is not None:
            pipe.close()
    with contextlib.suppress(ProcessLookupError):
        await asyncio.shield(proc.wait())
