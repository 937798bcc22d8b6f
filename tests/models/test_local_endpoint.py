"""Where local servers live, with a stand-in engine (a tiny HTTP server that lists the model;
no model is loaded): one server per command line, shared by systems and threads, found by
child processes, restarted when it died, retried when another process took its port, and
one line with its last output when it fails."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from evalbench.models import ModelSpec, launcher, local
from evalbench.processes import wait_group_gone

pytestmark = pytest.mark.slow  # every test starts processes

FAKE_SERVER = r"""
import http.server, json, sys
port, model = int(sys.argv[1]), sys.argv[2]
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({"data": [{"id": model}]}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", port), Handler).serve_forever()
"""


def fake_argv(spec, path, alias, port):
    return [sys.executable, "-c", FAKE_SERVER, str(port), alias]


@pytest.fixture
def fake_engine(monkeypatch, tmp_path):
    """``llama-cpp-python`` replaced by the stand-in; a GGUF-looking model file; every server
    stopped at the end. The servers this process already runs (the real model's, for the
    real-model tests: tests/realmodel.py) are set aside meanwhile, not stopped."""
    engine = local.Engine(fake_argv, lambda spec: "fake-1", lambda spec: None)
    monkeypatch.setitem(local.ENGINES, "llama-cpp-python", engine)
    monkeypatch.setattr(local, "_SERVERS", {})
    monkeypatch.delenv(local.ENV_SERVERS, raising=False)
    path = tmp_path / "tiny.gguf"
    path.write_bytes(b"GGUF" + bytes(60))
    yield path
    local.stop_all()


def spec_for(path: Path, name: str = "m", **kw) -> ModelSpec:
    return ModelSpec(name=name, provider="local", local={"model_file": str(path)}, **kw)


def test_systems_that_differ_in_sampling_share_one_server_until_stop_all(fake_engine):
    url = local.endpoint(spec_for(fake_engine, "cold"))
    assert local.endpoint(spec_for(fake_engine, "warm", temperature=0.7)) == url
    (server,) = local._SERVERS.values()
    assert json.loads(os.environ[local.ENV_SERVERS]) == {server.key: url}
    assert local.running() == [server]
    local.stop_all()
    assert local.running() == []
    assert wait_group_gone(server.launched.group, 30)
    assert local.ENV_SERVERS not in os.environ and not launcher.probe_models(url, "tiny")


def test_two_threads_asking_at_once_start_one_server(fake_engine):
    urls: list[str] = []
    threads = [threading.Thread(target=lambda: urls.append(local.endpoint(spec_for(fake_engine))))
               for _ in range(2)]  # fmt: skip
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert len(urls) == 2 and urls[0] == urls[1] and len(local._SERVERS) == 1


CHILD = r"""
import sys
from evalbench.models import ModelSpec, local
sys.path.insert(0, sys.argv[2])
from test_local_endpoint import fake_argv
local.ENGINES["llama-cpp-python"] = local.Engine(fake_argv, lambda s: "fake-1", lambda s: None)
spec = ModelSpec(name="m", provider="local", local={"model_file": sys.argv[1]})
print(local.endpoint(spec), len(local._SERVERS))
"""


def test_a_child_process_asks_its_parents_server(fake_engine):
    url = local.endpoint(spec_for(fake_engine))
    child = subprocess.run([sys.executable, "-c", CHILD, str(fake_engine), str(Path(__file__).parent)],
                           capture_output=True, text=True, timeout=120, env=dict(os.environ))  # fmt: skip
    assert child.returncode == 0, child.stderr
    assert child.stdout.split() == [url, "0"]  # the parent's URL; no server of its own


def test_a_server_that_died_is_started_again_on_next_use(fake_engine):
    spec = spec_for(fake_engine)
    local.endpoint(spec)
    (first,) = local._SERVERS.values()
    first.launched.stop()  # as if it crashed
    url = local.endpoint(spec)
    (second,) = local._SERVERS.values()
    assert second is not first and second.launched.running()
    assert launcher.probe_models(url, "tiny")


def test_a_port_taken_meanwhile_is_tried_again(fake_engine, monkeypatch):
    attempts: list[int] = []
    taken = "print('[Errno 98] error while attempting to bind: address already in use'); exit(1)"

    def clashing(spec, path, alias, port):
        if port:  # port 0: the command line that names the server (its key), not a start
            attempts.append(port)
        if len(attempts) == 1:
            return [sys.executable, "-c", taken]
        return fake_argv(spec, path, alias, port)

    monkeypatch.setitem(local.ENGINES, "llama-cpp-python",
                        local.Engine(clashing, lambda s: "fake-1", lambda s: None))  # fmt: skip
    url = local.endpoint(spec_for(fake_engine))
    assert len(attempts) == 2 and url == f"http://127.0.0.1:{attempts[1]}/v1"
    assert launcher.probe_models(url, "tiny")


def test_a_server_that_fails_is_one_line_with_its_last_output(fake_engine, monkeypatch):
    def broken(spec, path, alias, port):
        return [sys.executable, "-c", "print('llama_model_load: error loading model'); exit(1)"]

    monkeypatch.setitem(local.ENGINES, "llama-cpp-python",
                        local.Engine(broken, lambda s: "fake-1", lambda s: None))  # fmt: skip
    with pytest.raises(launcher.ServerFailed) as err:
        local.endpoint(spec_for(fake_engine))
    assert str(err.value) == (
        "system 'm': the local llama-cpp-python server exited with status 1 before it "
        "answered: llama_model_load: error loading model"
    )
    assert local._SERVERS == {}


def test_a_server_that_died_mid_run_fails_the_requests_left_at_once(fake_engine):
    # Before: each request left retried the dead port 7 times (~50 s per item), then failed
    # with "ClientConnectorError: Cannot connect to host 127.0.0.1:<port>", never saying the
    # server had died.
    import asyncio
    import signal

    from evalbench.models.providers import ProviderError
    from evalbench.models.transport import OpenAIProvider

    spec = spec_for(fake_engine)
    base_url = local.endpoint(spec)
    (server,) = local.running()

    async def ask() -> ProviderError:
        http = OpenAIProvider(spec).open()  # a run's transport, bound to the server
        os.killpg(server.launched.group, signal.SIGKILL)  # then the server dies
        server.launched.process.wait(30)
        assert wait_group_gone(server.launched.group, timeout_s=30)
        try:
            await http.post({"model": "m", "messages": []})
        except ProviderError as exc:
            return exc
        finally:
            await http.session.close()
        raise AssertionError("a dead server answered")

    failure = asyncio.run(ask())
    assert failure.retryable is False
    assert str(failure).startswith(f"connection_error: the local server at {base_url} was "
                                   "killed by SIGKILL during the run; rerun to start a new one")  # fmt: skip
    assert local.server_gone("http://127.0.0.1:1/v1") == ""  # not one of this process's
