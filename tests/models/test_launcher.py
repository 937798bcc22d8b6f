"""The server launcher: ready when ``/v1/models`` lists the model, one line with the server's
last output when it dies or never answers, and no server outliving its starter (stopped,
its starter killed with ``kill -9``, a daemon the server started outside its group, started
from a thread that has ended)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from evalbench.models import launcher
from evalbench.processes import group_running, wait_group_gone

pytestmark = pytest.mark.slow  # every test starts processes

FAKE_SERVER = r"""
import http.server, json, sys
port, model = int(sys.argv[1]), sys.argv[2]
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({"object": "list", "data": [{"id": model}]}).encode()
        self.send_response(200 if self.path == "/v1/models" else 404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
print("serving", flush=True)
http.server.HTTPServer(("127.0.0.1", port), Handler).serve_forever()
"""
GONE_S = 30.0
"""Bounded waits for a group to be gone (generous: the machine may be loaded)."""


def fake(port: int, model: str = "tiny") -> list[str]:
    return [sys.executable, "-c", FAKE_SERVER, str(port), model]


def started_fake(model: str = "tiny") -> tuple[launcher.Launched, str]:
    port = launcher.free_port()
    url = f"http://127.0.0.1:{port}/v1"
    server = launcher.start(fake(port, model))
    launcher.wait_ready(server, lambda: launcher.probe_models(url, model), 60, "fake")
    return server, url


def test_ready_when_it_lists_the_model_and_stopped_with_its_whole_group():
    server, url = started_fake()
    try:
        assert launcher.probe_models(url, "tiny") and not launcher.probe_models(url, "other")
        assert server.startup_s is not None and server.startup_s >= 0
    finally:
        server.stop()
    assert not group_running(server.group) and not server.running()
    assert not launcher.probe_models(url, "tiny")


REDIRECTING = r"""
import http.server, sys
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(302)
        self.send_header("Location", sys.argv[2])
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
print("serving", flush=True)  # listening
server.serve_forever()
"""


def test_readiness_never_follows_a_redirect():
    real, url = started_fake()  # lists "tiny"
    port = launcher.free_port()
    redirecting = launcher.start([sys.executable, "-c", REDIRECTING, str(port), url + "/models"])
    try:
        other = f"http://127.0.0.1:{port}/v1"
        launcher.wait_ready(redirecting, lambda: "serving" in redirecting.tail(), 60, "it")
        assert launcher.probe_models(url, "tiny") and not launcher.probe_models(other, "tiny")
    finally:
        redirecting.stop()
        real.stop()


def test_a_server_that_exits_is_one_line_ending_with_its_last_output():
    code = "print('loading'); print('error: bad magic in model file'); raise SystemExit(3)"
    server = launcher.start([sys.executable, "-c", code])
    with pytest.raises(launcher.ServerFailed) as err:
        launcher.wait_ready(server, lambda: False, 60, "system 'x': the server")
    server.stop()
    assert str(err.value) == (
        "system 'x': the server exited with status 3 before it answered: loading | "
        "error: bad magic in model file"
    )
    assert not group_running(server.group)


def test_a_server_that_never_answers_is_stopped_at_the_timeout():
    code = "import time\nprint('stuck', flush=True)\ntime.sleep(300)"
    server = launcher.start([sys.executable, "-c", code])

    def never_ready() -> bool:  # once it has said something (however slowly it starts)
        deadline = time.monotonic() + 60
        while "stuck" not in server.tail() and time.monotonic() < deadline:
            time.sleep(0.05)
        return False

    with pytest.raises(launcher.ServerFailed, match=r"did not answer within 0.5 s .*: stuck$"):
        launcher.wait_ready(server, never_ready, 0.5, "the server")
    assert wait_group_gone(server.group, GONE_S)


def test_an_interrupt_while_it_starts_stops_it():
    server = launcher.start([sys.executable, "-c", "import time; time.sleep(300)"])
    with pytest.raises(launcher.ServerFailed, match="the server: interrupted while it started"):
        launcher.wait_ready(server, lambda: False, 60, "the server", cancelled=lambda: True)
    assert wait_group_gone(server.group, GONE_S)


def test_a_server_that_ignores_sigterm_is_killed_after_the_grace():
    code = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(300)"
    server = launcher.start([sys.executable, "-c", code])
    server.stop(grace_s=0.2)
    assert not group_running(server.group)


def test_a_server_outlives_the_thread_that_started_it():
    # PR_SET_PDEATHSIG in the starter would kill it when the (event loop's) thread ends
    box: list[tuple[launcher.Launched, str]] = []
    thread = threading.Thread(target=lambda: box.append(started_fake()))
    thread.start()
    thread.join(120)
    server, url = box[0]
    try:
        assert launcher.probe_models(url, "tiny"), "the server died with its starting thread"
    finally:
        server.stop()


STARTER = r"""
import sys, threading, time
from evalbench.models import launcher
port = launcher.free_port()
url = f"http://127.0.0.1:{port}/v1"
def start():
    server = launcher.start(sys.argv[1:] + [str(port), "tiny"])
    launcher.wait_ready(server, lambda: launcher.probe_models(url, "tiny"), 120, "fake")
    print(server.group, flush=True)
    time.sleep(300)
threading.Thread(target=start).start()  # as evalbench does: from an event loop's thread
"""


def test_kill_9_of_the_starter_stops_the_server():
    starter = subprocess.Popen(
        [sys.executable, "-c", STARTER, sys.executable, "-c", FAKE_SERVER],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        group = int(starter.stdout.readline())
        assert group_running(group)
    finally:
        starter.kill()
        starter.wait(30)
        starter.stdout.close()
    assert wait_group_gone(group, GONE_S), "the server outlived its starter's kill -9"


DAEMONIZING = r"""
import os, subprocess, sys, time
# a daemon of the server's own: a session (and process group) of its own, not the server's
daemon = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"],
                          start_new_session=True)
print(daemon.pid, flush=True)
time.sleep(300)
"""
DAEMON_STARTER = r"""
import sys, time
from evalbench.models import launcher
server = launcher.start([sys.executable, "-c", sys.argv[1]])
launcher.wait_ready(server, lambda: server.tail().strip().isdigit(), 120, "daemonizing")
print(server.tail(), flush=True)
time.sleep(300)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_kill_9_of_the_starter_stops_what_the_server_started_outside_its_group():
    # the server carries its starter's lifeline mark (evalbench.processes), and so does all
    # it starts: a daemon that left the server's process group dies with the starter too
    starter = subprocess.Popen([sys.executable, "-c", DAEMON_STARTER, DAEMONIZING],
                               stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        daemon = int(starter.stdout.readline())
        assert _alive(daemon)
    finally:
        starter.kill()
        starter.wait(30)
        starter.stdout.close()
    deadline = time.monotonic() + GONE_S
    while _alive(daemon) and time.monotonic() < deadline:
        time.sleep(0.05)
    if _alive(daemon):
        os.kill(daemon, signal.SIGKILL)
        raise AssertionError("the server's daemon outlived its starter's kill -9")


def test_a_server_killed_by_a_signal_says_so():
    server = launcher.start([sys.executable, "-c", "import os; os.kill(os.getpid(), 9)"])
    with pytest.raises(launcher.ServerFailed) as err:
        launcher.wait_ready(server, lambda: False, 60, "the server")
    server.stop()
    assert str(err.value) == "the server was killed by SIGKILL before it answered: (no output)"
    assert not group_running(server.group)
