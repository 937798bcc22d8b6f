"""Where a system's requests go: a redirect is never followed (the prompt would travel to a
host nobody named)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace

import openai
import pytest

from evalbench.models import ModelSpec
from evalbench.models.batch import _Session
from evalbench.models.providers import ProviderError
from evalbench.models.transport import Transport

KEY = "sk-redirect-test-secret"


def _serve(handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    return server


@pytest.fixture
def elsewhere() -> Iterator[tuple[ThreadingHTTPServer, list[str]]]:
    """A second server (another origin: "a host nobody named") that answers every request
    with a completion and notes each request's method and path."""
    seen: list[str] = []

    class Answer(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            seen.append(f"{self.command} {self.path}")
            body = json.dumps({"choices": [{"message": {"content": "from elsewhere"},
                                            "finish_reason": "stop"}]}).encode()  # fmt: skip
            self.send_response(200)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST

        def log_message(self, *args: object) -> None:
            return None

    server = _serve(Answer)
    yield server, seen
    server.shutdown()
    server.server_close()


def _redirecting(status: int, location: str) -> ThreadingHTTPServer:
    class Redirect(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            self.send_response(status)
            self.send_header("Location", location)
            self.send_header("content-length", "0")
            self.end_headers()

        do_GET = do_POST

        def log_message(self, *args: object) -> None:
            return None

    return _serve(Redirect)


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_is_a_failed_call_never_followed(elsewhere, status):
    # 307/308 would POST the prompt again to the other host; 301-303 would turn it into a
    # GET whose answer was recorded as the model's. Neither: the call fails, once, with
    # the status and without the Location (a URL with a token in it, maybe).
    target, seen = elsewhere
    location = f"http://localhost:{target.server_port}/v1/chat/completions?token=LEAKED"
    server = _redirecting(status, location)
    base = f"http://127.0.0.1:{server.server_port}/v1"
    spec = ModelSpec(name="r", provider="openai", model="m", base_url=base, max_retries=0)

    async def post() -> object:
        transport = Transport(spec, KEY, base)
        try:
            return await transport.post({"model": "m", "messages": []})
        finally:
            await transport.close()

    try:
        with pytest.raises(ProviderError) as caught:
            asyncio.run(post())
    finally:
        server.shutdown()
        server.server_close()
    assert seen == []  # nothing reached the other host
    error = caught.value
    assert error.reason == f"http_{status}: a redirect (not followed)"
    assert (error.retryable, error.status) == (False, status)
    assert "LEAKED" not in error.reason and str(target.server_port) not in error.reason


def test_batch_mode_follows_no_redirect_either(elsewhere):
    # Batch mode talks to /v1/files and /v1/batches through the SDK, which follows
    # redirects by default: the uploaded file (every prompt) would go to the other host.
    target, seen = elsewhere
    server = _redirecting(307, f"http://localhost:{target.server_port}/v1/files")
    base = f"http://127.0.0.1:{server.server_port}/v1"
    spec = ModelSpec(name="b", provider="openai", model="m", base_url=base, max_retries=0,
                     api_key_env=None, batch=True)  # fmt: skip

    async def upload() -> None:
        api = _Session._open(SimpleNamespace(spec=spec))
        try:
            await api.files.create(file=("in.jsonl", b'{"x": 1}\n'), purpose="batch")
        finally:
            await api.close()

    try:
        with pytest.raises(openai.APIStatusError) as caught:
            asyncio.run(upload())
    finally:
        server.shutdown()
        server.server_close()
    assert seen == [] and caught.value.status_code == 307
