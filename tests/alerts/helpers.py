"""GAIA run folders in the real on-disk format (manifest.json, records/gaia.jsonl and
records/responses.jsonl), written by hand so each alert test knows every number it checks,
and webhooks on 127.0.0.1: a receiver that records what it is sent, one that redirects and
one that trickles its answer a byte at a time."""

from __future__ import annotations

import json
import os
import resource
import signal
import socket
import subprocess
import sys
import textwrap
import threading
from collections.abc import Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from evalbench.gaia.records import ScoredRecord

Outcome = bool | str
"""True/False = right/wrong; "error" = a failed call (counted wrong)."""


def outcomes_from(correct: Sequence[bool], levels: int = 2) -> dict[str, tuple[Outcome, int]]:
    """``task_id -> (outcome, level)``: tasks t00.. spread over ``levels`` levels in turn."""
    return {f"t{i:02d}": (bool(c), 1 + i % levels) for i, c in enumerate(correct)}


def seeded(accuracy: float, n: int, seed: int) -> dict[str, tuple[Outcome, int]]:
    """A simulated system of this accuracy on ``n`` tasks, drawn with ``seed``."""
    rng = np.random.default_rng(seed)
    return outcomes_from(list(rng.random(n) < accuracy))


def write_run(
    outputs: Path,
    run_id: str,
    systems: Mapping[str, Mapping[str, tuple[Outcome, int]]],
    *,
    study: str = "watched",
    started_at: str = "2026-01-01T00:00:00+00:00",
    overrides: Sequence[str] = (),
    status: str = "ok",
    usage: Mapping[str, Mapping[str, float]] | None = None,
    latencies: Mapping[str, Sequence[float]] | None = None,
) -> Path:
    """A finished GAIA run folder; ``usage[system]`` = calls/errors/cost_usd (default: one
    call per task, no error, no cost); ``latencies[system]``: one response record per call."""
    run_dir = outputs / study / run_id
    (run_dir / "records").mkdir(parents=True, exist_ok=True)
    rows = []
    for system, items in systems.items():
        for task_id, (outcome, level) in items.items():
            rows.append({
                "system": system, "task_id": task_id, "level": level, "attempt": 0,
                "model_answer": None if outcome in ("error", "timeout") else "x",
                "extracted_answer": None if outcome in ("error", "timeout") else "x",
                "expected": "x", "correct": outcome is True, "no_answer": False,
                "error": "http_500: boom" if outcome == "error" else None,
                **({"state": "timeout"} if outcome == "timeout" else {}),  # an agent's limit
            })  # fmt: skip
    for row in rows:
        ScoredRecord.model_validate(row)  # the GAIA study's declared record type
    _jsonl(run_dir / "records" / "gaia.jsonl", rows)
    _jsonl(run_dir / "records" / "responses.jsonl", _responses(latencies or {}))
    default = {
        s: {"calls": len(items), "errors": 0, "cost_usd": 0.0} for s, items in systems.items()
    }
    manifest: dict[str, Any] = {
        "study": study, "kind": "gaia", "title": f"{study} <i>title</i>", "run_id": run_id,
        "status": status, "started_at": started_at, "ended_at": started_at,
        "params_hash": run_id, "overrides": list(overrides),
        "models": [{"name": s, "provider": "openai"} for s in systems],
        "simulated": False, "simulated_names": [],
        "environment": {"git": {"commit": "abc1234def5678", "dirty": False}},
        "headlines": {}, "params": {"description": "A watched study."},
        "usage": [{"system": s, **u} for s, u in (usage or default).items()],
    }  # fmt: skip
    if status == "ok":
        manifest["published"] = {"status": "ok", "usage": manifest["usage"]}
        (run_dir / "report.html").write_text("<html>report</html>")
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    return run_dir


def _responses(latencies: Mapping[str, Sequence[float]]) -> list[dict[str, Any]]:
    return [
        {"system": s, "key": f"{s}-{i}", "request_key": f"{s}-{i}", "text": "x",
         "tool_calls": [], "finish_reason": "stop", "error": None, "prompt_tokens": 1,
         "completion_tokens": 1, "latency_s": value, "cached": False, "simulated": False}
        for s, values in latencies.items()
        for i, value in enumerate(values)
    ]  # fmt: skip


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


class Receiver:
    """A webhook on 127.0.0.1: records each POSTed JSON body and the path it was POSTed to
    (``paths``); answers ``fail_next`` requests with ``fail_status`` first, then 200, and
    every request to a path in ``gone`` with 404."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.gone: set[str] = set()
        self.requests = 0
        self.fail_next = 0
        self.fail_status = 503
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.requests += 1
                if self.path in receiver.gone:
                    self.send_response(404)
                elif receiver.fail_next > 0:
                    receiver.fail_next -= 1
                    self.send_response(receiver.fail_status)
                else:
                    receiver.bodies.append(json.loads(body))
                    receiver.paths.append(self.path)
                    self.send_response(200)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/SECRET-TOKEN"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    def start(self) -> Receiver:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)

    def reset(self) -> None:
        self.bodies.clear()
        self.paths.clear()
        self.gone.clear()
        self.requests, self.fail_next, self.fail_status = 0, 0, 503


def closed_port_url() -> str:
    """A URL on 127.0.0.1 where nothing listens (a port bound, then released)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    port = server.server_address[1]
    server.server_close()
    return f"http://127.0.0.1:{port}/hooks/SECRET-TOKEN"


class Redirector(Receiver):
    """A webhook that answers every POST with ``status`` (302) and ``Location: location``."""

    def __init__(self, location: str, status: int = 302) -> None:
        super().__init__()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["Content-Length"]))
                receiver.requests += 1
                self.send_response(status)
                self.send_header("Location", location)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                return

        self.server.RequestHandlerClass = Handler


class Trickler:
    """A webhook on 127.0.0.1 that reads the request, then sends ``HTTP/1.1 200 OK\\r\\n`` and
    headers one byte every ``every_s`` seconds, at most ``max_bytes`` bytes (so it ends: a
    client without a total deadline waits ``max_bytes * every_s`` seconds, then reads a whole
    answer). ``answering`` is set once a request was read (the client is in delivery)."""

    def __init__(self, every_s: float = 0.2, max_bytes: int = 200) -> None:
        self.every_s, self.max_bytes = every_s, max_bytes
        self.answering = threading.Event()
        self.stopping = threading.Event()
        self.connections = 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.1)
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/hooks/SECRET-TOKEN"
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def start(self) -> Trickler:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(timeout=10)
        self.listener.close()

    def _serve(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            self.connections += 1
            threading.Thread(target=self._trickle, args=(conn,), daemon=True).start()

    def _trickle(self, conn: socket.socket) -> None:
        answer = b"HTTP/1.1 200 OK\r\n" + b"X-Padding: " + b"x" * self.max_bytes + b"\r\n"
        answer = answer[: self.max_bytes - 4] + b"\r\n\r\n"
        with conn:
            conn.settimeout(5)
            try:
                conn.recv(65536)  # the request (headers and a small body)
                self.answering.set()
                for byte in answer:
                    if self.stopping.wait(self.every_s):
                        return
                    conn.sendall(bytes([byte]))
            except OSError:  # the client gave up
                return


PUBLISHING = textwrap.dedent("""
    import sys
    from pathlib import Path

    from evalbench import publish
    from evalbench.cli import main
    from evalbench.studies import load_params

    def run_study(path, overrides=None, **kw):
        result = publish.StudyResult(Path(path), "ok", Path(sys.argv[3]), 0.0, "")
        return publish.after_publish(result, load_params(path, overrides or []))

    publish.run_study = run_study
    sys.exit(main([sys.argv[1], sys.argv[2]]))
""")
"""``evalbench <command> <params>`` whose study run publishes the run folder given third
(its alert check and summary, as a real run ends), rendering nothing."""


def publishing(
    command: str, params: Path, run_dir: Path, file_size_limit: int | None = None
) -> subprocess.Popen:
    """:data:`PUBLISHING` in a process that ignores SIGINT from its start, as a job started in
    the background by a shell does; with ``file_size_limit`` (bytes), a file it writes may
    grow no larger (``prlimit --fsize``)."""

    def start() -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        if file_size_limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))

    return subprocess.Popen(
        [sys.executable, "-c", PUBLISHING, command, str(params), str(run_dir)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy(),
        preexec_fn=start,
    )  # fmt: skip


def in_delivery(process: subprocess.Popen, trickler: Trickler) -> None:
    """Wait until ``process`` is delivering to ``trickler`` (it read a request)."""
    if not trickler.answering.wait(timeout=120):
        process.kill()
        pytest.fail(f"never reached the delivery: {process.communicate(timeout=30)}")


def interrupted_in_delivery(
    command: str, params: Path, run_dir: Path, trickler: Trickler
) -> tuple[int, str, str]:
    """:func:`publishing`, Ctrl-C once it is delivering to ``trickler``: its exit status,
    stdout and stderr (the process killed whatever happens)."""
    process = publishing(command, params, run_dir)
    try:
        in_delivery(process, trickler)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
    return process.returncode, out, err


def watched_params(tmp_path: Path, *notify: dict) -> Path:
    """A GAIA demo study with a drop rule and ``notify`` (its runs: outputs/watched/<id>)."""
    path = tmp_path / "watched.yaml"
    path.write_text(yaml.safe_dump({
        "study": "gaia", "title": "Watched", "dataset": "demo",
        "systems": [{"name": "a", "provider": "sim"}],
        "alerts": {"rules": [{"metric": "accuracy", "drop_more_than": 0.05}],
                   "notify": list(notify)},
    }))  # fmt: skip
    return path
