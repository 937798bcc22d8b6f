"""The aiohttp transport against the loopback server: errors worded and classified as the
official SDK words them (the SDK itself is the oracle), proxies from the environment, the
key in no error, the connection pool closed however a batch ends."""

from __future__ import annotations

import asyncio
import base64
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import openai
import pytest
from loopback import Fault

from evalbench.models import ChatRequest, Job, ModelClient, ModelSpec, agenerate
from evalbench.models.transport import Transport, status_error

KEY = "sk-test-transport-secret"


def spec_for(base_url: str, **kw) -> ModelSpec:
    return ModelSpec(name="t", provider="openai", model="m", base_url=base_url,
                     api_key_env="EVALBENCH_TEST_KEY", max_retries=0, timeout_s=5, **kw)  # fmt: skip


async def post_once(base_url: str) -> tuple[object, object]:
    transport = Transport(spec_for(base_url), KEY, base_url)
    try:
        return await transport.post({"model": "m", "messages": [{"role": "user", "content": "x"}]})
    finally:
        await transport.close()


async def sdk_message(base_url: str) -> str:
    client = openai.AsyncOpenAI(api_key=KEY, base_url=base_url, max_retries=0)
    try:
        await client.post("/chat/completions", body={"model": "m"}, cast_to=object)
    except openai.APIStatusError as exc:
        return f"http_{exc.status_code}: {exc.message}"
    finally:
        await client.close()
    raise AssertionError("the SDK did not raise")


@pytest.fixture
def clean_proxy_env(monkeypatch):
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


@pytest.mark.parametrize(("kind", "retryable"), [("429", True), ("500", True), ("401", False)])
def test_http_errors_are_worded_and_classified_as_the_sdk_does(loopback, kind, retryable):
    loopback.enqueue(Fault(kind, retry_after=2), Fault(kind, retry_after=2))
    with pytest.raises(Exception) as caught:
        asyncio.run(post_once(loopback.base_url))
    sdk = asyncio.run(sdk_message(loopback.base_url))
    error = caught.value
    assert error.reason == sdk == f"http_{kind}: Error code: {kind} - injected {kind}"
    assert (error.retryable, error.status, error.retry_after) == (retryable, int(kind), 2.0)


def test_an_error_body_without_a_message_is_its_status_alone():
    # The SDK's wording: only the body's error.message joins "Error code: N".
    html = status_error(502, b"<html>bad gateway</html>", {})
    no_message = status_error(400, b'{"error": {"code": "invalid"}}', {"Retry-After": "3"})
    assert (html.reason, html.retryable) == ("http_502: Error code: 502", True)
    assert (no_message.reason, no_message.retryable) == ("http_400: Error code: 400", False)
    assert no_message.retry_after == 3.0


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_the_environment_proxy_is_used_with_its_credentials(loopback, monkeypatch, clean_proxy_env):
    # The endpoint's name does not resolve: only the proxy (the loopback server) can answer.
    proxy = loopback.base_url.removesuffix("/v1").replace("//", "//user:pw%21@")
    monkeypatch.setenv("HTTP_PROXY", proxy)
    body, _ = asyncio.run(post_once("http://api.example.invalid/v1"))
    assert body["choices"][0]["message"]["content"] == "echo: x"
    headers = loopback.headers[-1]
    assert headers["authorization"] == f"Bearer {KEY}"
    assert headers["proxy-authorization"] == "Basic " + base64.b64encode(b"user:pw!").decode()


class _Proxy:
    """A proxy that answers 502 to everything and notes each request's path."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        seen = self.seen

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                seen.append(self.path)
                self.send_response(502)
                self.send_header("content-length", "0")
                self.end_headers()

            do_GET = do_POST

            def log_message(self, *args: object) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_port}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_a_loopback_endpoint_is_never_asked_through_the_proxy(
    loopback, monkeypatch, clean_proxy_env, host
):
    # Before: with HTTP_PROXY set (and no NO_PROXY), a request to a server on this machine
    # went to the proxy with the prompt and the key, and the proxy asked its own loopback.
    proxy = _Proxy()
    try:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        port = loopback.base_url.split(":")[-1].removesuffix("/v1")
        body, _ = asyncio.run(post_once(f"http://{host}:{port}/v1"))
    finally:
        proxy.stop()
    assert body["choices"][0]["message"]["content"] == "echo: x"
    assert proxy.seen == [] and loopback.count == 1


def test_batch_mode_never_asks_a_loopback_endpoint_through_the_proxy(
    loopback, monkeypatch, clean_proxy_env
):
    from types import SimpleNamespace

    from evalbench.models.batch import _Session

    proxy = _Proxy()
    spec = spec_for(loopback.base_url, batch=True)
    monkeypatch.setenv("EVALBENCH_TEST_KEY", KEY)

    async def upload() -> object:
        api = _Session._open(SimpleNamespace(spec=spec))
        try:
            return await api.files.create(file=("in.jsonl", b'{"x": 1}\n'), purpose="batch")
        finally:
            await api.close()

    try:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        uploaded = asyncio.run(upload())
    finally:
        proxy.stop()
    assert proxy.seen == [] and uploaded.id in loopback.files


def test_no_proxy_bypasses_it_and_the_key_is_in_no_error(loopback, monkeypatch, clean_proxy_env):
    monkeypatch.setenv("HTTP_PROXY", loopback.base_url.removesuffix("/v1"))
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with pytest.raises(Exception) as caught:
        asyncio.run(post_once(f"http://127.0.0.1:{closed_port()}/v1"))
    assert caught.value.reason.startswith("connection_error: ClientConnectorError")
    assert caught.value.retryable and loopback.count == 0
    assert KEY not in caught.value.reason and KEY not in repr(caught.value.__cause__)


def test_the_pool_is_closed_when_a_batch_ends_or_is_cancelled(loopback, monkeypatch):
    monkeypatch.setenv("EVALBENCH_TEST_KEY", KEY)
    loopback.enqueue(Fault("slow", seconds=1))
    client = ModelClient(spec_for(loopback.base_url))
    jobs = [Job("a", ChatRequest(messages=[{"role": "user", "content": "x"}]))]

    async def cancel_in_flight() -> Transport:
        task = asyncio.ensure_future(agenerate(client, jobs, progress=False))
        for _ in range(200):  # ≤ 2 s for the request to reach the server
            if loopback.in_flight:
                break
            await asyncio.sleep(0.01)
        transport = client._runtime.http
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return transport

    cancelled = asyncio.run(cancel_in_flight())
    assert cancelled.session.closed and client._runtime is None

    async def one_batch() -> Transport:
        transport = client._runtime_for_loop().http
        await agenerate(client, jobs, progress=False)
        return transport

    finished = asyncio.run(one_batch())
    assert finished.session.closed and client._runtime is None
