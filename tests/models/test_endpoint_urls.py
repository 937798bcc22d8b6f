"""Where a system's requests go, and what of its URL is ever shown: a redirect is never
followed (the prompt would travel to a host nobody named), and a base URL carrying a secret
(a user and password, a query, a fragment) or one no request can use is refused before
anything is asked, with a message that never quotes it."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace

import openai
import pytest
from studyfiles import gaia_dataset, gaia_params

from evalbench.cli import main
from evalbench.models import ModelSpec
from evalbench.models.batch import _Session
from evalbench.models.providers import ProviderError, endpoint_url
from evalbench.models.transport import Transport
from evalbench.params import ParamsError
from evalbench.settings import UnusableSecret
from evalbench.studies import load_params

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


SECRET = "pw-SECRET-9"
USERINFO = (
    "it has a user or password before the host (the key goes in the variable api_key_env names)"
)
UNUSABLE = [  # (base URL, what the message says), each secret part spelled SECRET
    (f"http://user:{SECRET}@127.0.0.1:8000/v1", USERINFO),
    (f"http://{SECRET}@api.example.invalid/v1", USERINFO),
    (f"http://127.0.0.1:8000/v1?key={SECRET}", "it has a query (?...)"),
    (f"http://127.0.0.1:8000/v1#{SECRET}", "it has a fragment (#...)"),
    (f"ftp://127.0.0.1/{SECRET}", "it is not an http:// or https:// URL"),
    (f"127.0.0.1:8000/{SECRET}", "it is not an http:// or https:// URL"),
    (f"http:///{SECRET}", "it names no host"),
    (f"http://127.0.0.1:99999/{SECRET}", "its port is not a number from 1 to 65535"),
    (f"http://127.0.0.1:x/{SECRET}", "its port is not a number from 1 to 65535"),
    (f"http://[::1/{SECRET}", "it cannot be parsed"),
    (f"http://127.0.0.1:8000/{SECRET} v1", "it has a space or a control character"),
    (f"http://127.0.0.1:8000/{SECRET}\r\nX: y", "it has a space or a control character"),
]


@pytest.mark.parametrize(("url", "why"), UNUSABLE)
def test_a_base_url_in_params_that_no_request_can_use_is_refused_unquoted(tmp_path, url, why):
    # Before: accepted, and written into manifest.json, params.yaml and the executed
    # notebook (credentials and ?key= included); a query or fragment sent the requests to
    # another path; a user and password with a key, or a bad port, crashed the study.
    system = {"name": "s", "provider": "openai", "model": "m", "base_url": url}
    path = gaia_params(tmp_path, gaia_dataset(tmp_path, ["1"]), [system])
    with pytest.raises(ParamsError) as caught:
        load_params(path)
    message = str(caught.value)
    assert f"systems.0.base_url: not a base URL: {why}" in message
    assert SECRET not in message


@pytest.mark.parametrize(("url", "why"), UNUSABLE)
def test_a_base_url_variable_that_no_request_can_use_is_one_line_exit_2(
    tmp_path, monkeypatch, capsys, url, why
):
    monkeypatch.setenv("EVALBENCH_URL_TEST", url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-unused")
    system = {"name": "s", "provider": "openai", "model": "m",
              "base_url_env": "EVALBENCH_URL_TEST"}  # fmt: skip
    path = gaia_params(tmp_path, gaia_dataset(tmp_path, ["1"]), [system])
    assert main(["run", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.err == (
        "evalbench: system 's' (base URL): the URL in EVALBENCH_URL_TEST is not a base URL: "
        f"{why}\n"
    )
    assert SECRET not in captured.out + captured.err


def test_openai_base_url_is_checked_as_a_base_url_variable(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", f"https://api.example.invalid/v1?key={SECRET}")
    spec = ModelSpec(name="s", provider="openai", model="m", api_key_env=None)
    with pytest.raises(UnusableSecret) as caught:
        endpoint_url(spec)
    assert str(caught.value) == (
        "system 's' (base URL): the URL in OPENAI_BASE_URL is not a base URL: it has a query (?...)"
    )


@pytest.mark.parametrize(
    "url",
    ["http://127.0.0.1:8000/v1", "https://api.openai.com/v1/", "http://[::1]:8080/v1",
     "http://localhost/v1", "https://modèle.example/v1", "http://10.0.0.5:65535"],
)  # fmt: skip
def test_usable_base_urls_are_kept_as_written(url):
    assert ModelSpec(name="s", provider="openai", model="m", base_url=url).base_url == url
