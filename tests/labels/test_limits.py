"""The label app against oversized, slow, deep and malformed bodies (a real server on 127.0.0.1).

Raw sockets where the client must not send the whole body first (httpx would), so the test
sees whether the server answered before reading it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import select
import socket
import time
import tracemalloc
from pathlib import Path

import httpx
import pytest
from labels.helpers import running, write_tasks
from proctree import wait_for

from evalbench.labels import read_labels
from evalbench.labels.app import MAX_BODY, annotator_tokens

ITEMS = [{"item": f"q{i}", "question": f"Q{i}?", "answer": f"A{i}."} for i in range(2)]
GOOD = {"position": 0, "scores": {"accuracy": 7, "completeness": 5, "clarity": 9}}
MODES = {  # name -> (tasks spec, app options, query string of a valid annotator)
    "loopback names": ({}, {}, "annotator=alice"),
    "tokens on loopback": ({"annotators": ["alice"]}, {"require_token": True}, "token={alice}"),
    "tokens beyond loopback": ({"annotators": ["alice"]}, {"host": "0.0.0.0"}, "token={alice}"),
}


def _tasks(tmp_path: Path, **spec):
    return write_tasks(tmp_path, "rubric", ITEMS, **spec)


def _head(port: int, query: str, framing: str) -> bytes:
    return (
        f"POST /api/label?{query} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Content-Type: application/json\r\n{framing}\r\n\r\n"
    ).encode()


def _answer(sock: socket.socket, timeout: float) -> tuple[int, dict]:
    """Status and JSON body of the one response on ``sock`` (read until the server closes)."""
    sock.settimeout(timeout)
    data = b""
    with contextlib.suppress(ConnectionResetError):
        while chunk := sock.recv(65536):
            data += chunk
            if b"\r\n\r\n" in data and data.rstrip().endswith(b"}"):
                break
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


def _connect(base: str) -> tuple[socket.socket, int]:
    port = int(base.rsplit(":", 1)[1])
    return socket.create_connection(("127.0.0.1", port), timeout=5), port


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_a_declared_oversize_body_is_refused_before_it_is_sent(tmp_path, mode):
    """Content-Length 400 MB and not one byte of body: the answer comes at once."""
    spec, options, query = MODES[mode]
    tasks = _tasks(tmp_path, **spec)
    token = {n: t for t, n in annotator_tokens(tasks, "s").items()}
    with running(tasks, secret="s", **options) as server:
        sock, port = _connect(server.base)
        with sock:
            sock.sendall(_head(port, query.format(**token), f"Content-Length: {400 * 2**20}"))
            status, body = _answer(sock, timeout=5)  # before the fix: waits for the body
    assert status == 413
    assert body["error"] == (
        f"request body over {MAX_BODY:,} bytes (Content-Length: {400 * 2**20:,})"
    )
    assert not tasks.labels_dir.exists()


def _readable(sock: socket.socket, timeout: float) -> bool:
    """Whether the server has answered (or closed): poll(), not select(), which cannot take
    a descriptor past 1,023 (a long test process has more open)."""
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    return bool(poller.poll(timeout * 1000))


def _stream_chunks(sock: socket.socket, total: int, chunk: bytes) -> int:
    """Send ``total`` bytes as HTTP chunks until the server answers or stops reading."""
    sent, frame = 0, b"%x\r\n" % len(chunk) + chunk + b"\r\n"
    sock.settimeout(2)
    with contextlib.suppress(OSError):  # the server closing on us ends the upload
        while sent < total and not _readable(sock, 0):
            sock.sendall(frame)
            sent += len(chunk)
    return sent


def test_a_chunked_body_is_cut_at_the_limit_and_never_held_in_memory(tmp_path):
    """256 MB streamed without a Content-Length: 413 long before the end, and the process
    (server in a thread here) never allocates more than a few times the 1 MB limit.
    Before the fix the server read all 256 MB into memory and answered 500."""
    tasks = _tasks(tmp_path)
    with running(tasks) as server:
        sock, port = _connect(server.base)
        with sock:
            sock.sendall(_head(port, "annotator=alice", "Transfer-Encoding: chunked"))
            tracemalloc.start()
            try:
                sent = _stream_chunks(sock, 256 * 2**20, b"[" * 2**18)
                status, body = _answer(sock, timeout=5)
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
    assert status == 413 and body["error"] == f"request body over {MAX_BODY:,} bytes"
    assert sent < 64 * 2**20, "the server kept reading"
    assert peak < 8 * MAX_BODY, f"peak {peak / 2**20:.1f} MB traced during the upload"


@pytest.mark.slow
def test_a_body_that_trickles_in_past_the_deadline_gets_408(tmp_path):
    """Slowloris: a byte every 50 ms of a declared 100-byte body; the deadline is 0.5 s."""
    tasks = _tasks(tmp_path)
    with running(tasks, body_timeout_s=0.5) as server:
        sock, port = _connect(server.base)
        with sock:
            sock.sendall(_head(port, "annotator=alice", "Content-Length: 100"))
            started, trickled = time.monotonic(), 0
            with contextlib.suppress(OSError):
                while trickled < 40 and not _readable(sock, 0.05):  # bounded: 40 bytes
                    sock.sendall(b" ")
                    trickled += 1
            status, body = _answer(sock, timeout=5)
            waited = time.monotonic() - started
    assert status == 408 and body["error"] == "request body not received within 0.5 s"
    assert waited >= 0.4  # measured from after the headers were sent
    # a deadline for the whole body, not for each read: the answer came while bytes were
    # still arriving (a per-read timeout never fires while they do)
    assert trickled < 40


HEADER_LINE = b"X-Slow: 1\r\n"


@pytest.mark.slow
@pytest.mark.parametrize("before", ["nothing", "a whole request"])
def test_headers_that_never_end_get_408_and_the_connection_closed(tmp_path, before):
    """Slowloris on the headers: a header line every 50 ms that never ends them, on a new
    connection and on one kept alive after a whole request; the deadline is 0.5 s."""
    with running(_tasks(tmp_path), header_timeout_s=0.5) as server:
        sock, port = _connect(server.base)
        with sock:
            if before == "a whole request":
                sock.sendall(f"GET /api/session?annotator=alice HTTP/1.1\r\n"
                             f"Host: 127.0.0.1:{port}\r\n\r\n".encode())  # fmt: skip
                assert _answer(sock, timeout=5)[0] == 200
            sock.sendall(
                f"GET /api/session?annotator=alice HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n".encode()
            )
            trickled = 0
            with contextlib.suppress(OSError):
                while trickled < 200 and not _readable(sock, 0.05):  # bounded: 10 s
                    sock.sendall(HEADER_LINE)
                    trickled += 1
            status, body = _answer(sock, timeout=5)
            assert sock.recv(1) == b""  # and closed
    assert status == 408 and body["error"] == "request headers not received within 0.5 s"
    assert trickled < 200  # a deadline for the whole head: bytes were still arriving


@pytest.mark.slow
def test_the_header_deadline_does_not_cut_a_request_whose_headers_came_in(tmp_path):
    """Headers in, then the body twice the header deadline later: the app's own answer."""
    with running(_tasks(tmp_path), header_timeout_s=0.5) as server:
        sock, port = _connect(server.base)
        with sock:
            body = json.dumps(GOOD).encode()
            sock.sendall(_head(port, "annotator=alice", f"Content-Length: {len(body)}"))
            assert not _readable(sock, 1.0)  # nothing said while the body is due
            sock.sendall(body)
            status, answer = _answer(sock, timeout=5)
    assert status == 200, answer


@pytest.mark.slow
def test_a_connection_that_sends_nothing_gets_408_and_is_closed(tmp_path):
    with running(_tasks(tmp_path), header_timeout_s=0.5) as server:
        sock, _ = _connect(server.base)
        with sock:
            status, body = _answer(sock, timeout=10)
            assert sock.recv(1) == b""
    assert status == 408 and body["error"] == "request headers not received within 0.5 s"


def test_the_header_deadline_is_on_by_default():
    from evalbench.labels.app import HEADER_TIMEOUT_S, server_config

    config = server_config(object())
    assert 0 < HEADER_TIMEOUT_S <= 30 and config.http.header_timeout_s == HEADER_TIMEOUT_S


@pytest.mark.parametrize(
    ("raw", "message"),
    [(b"[" * 100_000, "JSON nested too deeply"),
     (b'{"position": 0, "scores": ' + b'{"a": ' * 100_000, "JSON nested too deeply"),
     (b'{"position": 0,', "body is not JSON"),
     (b"", "body is not JSON"),
     (b"\xff\xfe{}", "body is not JSON"),
     (b'{"position": ' + b"9" * 5000 + b"}", "body is not JSON"),
     (b'{"position": 0, "elapsed_s": Infinity}', "body is not JSON: Infinity"),
     (b'{"position": 0, "scores": {"accuracy": NaN}}', "body is not JSON: NaN")],
)  # fmt: skip
@pytest.mark.slow
def test_deep_or_malformed_json_is_a_400_with_the_reason(tmp_path, raw, message):
    tasks = _tasks(tmp_path)
    with running(tasks) as server:
        got = httpx.post(f"{server.base}/api/label?annotator=alice", content=raw,
                         headers={"Content-Type": "application/json"})  # fmt: skip
        assert got.status_code == 400 and got.json()["error"].startswith(message), got.text
        assert httpx.get(f"{server.base}/healthz").text == "ok"  # and the server is fine
    assert not tasks.labels_dir.exists()


def test_unicode_comments_are_kept_and_a_lone_surrogate_is_refused(tmp_path):
    """Astral characters, RTL marks and NUL survive the round trip; an unpaired surrogate
    (valid JSON, not encodable as UTF-8) is a 422 naming the field, not a 500."""
    tasks = _tasks(tmp_path)
    text = "𝔘𝔫𝔦 😀 \u202eevil\u202c \x00 é"
    with running(tasks) as server:
        url = f"{server.base}/api/label?annotator=alice"
        ok = httpx.post(url, json={**GOOD, "comment": text})
        assert ok.status_code == 200, ok.text
        bad = httpx.post(url, content=b'{"position": 1, "scores": {"accuracy": 7, '
                         b'"completeness": 5, "clarity": 9}, "comment": "x\\ud800"}',
                         headers={"Content-Type": "application/json"})  # fmt: skip
        assert bad.status_code == 422 and bad.json()["error"].startswith("comment: ")
    assert [r.comment for r in read_labels(tasks.labels_dir)] == [text]


def test_a_body_just_under_the_limit_is_read_and_judged_on_its_content(tmp_path):
    """The limit is on bytes, not on what they say: a label padded with whitespace to
    MAX_BODY bytes is read and saved; one byte more is refused unread."""
    tasks = _tasks(tmp_path)
    frame = json.dumps({**GOOD, "comment": ""}).encode()
    under = frame.replace(b'"comment": ""', b'"comment": ""' + b" " * (MAX_BODY - len(frame)))
    assert len(under) == MAX_BODY
    with running(tasks) as server:
        url = f"{server.base}/api/label?annotator=alice"
        headers = {"Content-Type": "application/json"}
        assert httpx.post(url, content=under, headers=headers).status_code == 200
        over = httpx.post(url, content=under + b" ", headers=headers)
        assert over.status_code == 413
    assert len(read_labels(tasks.labels_dir)) == 1


class _Errors(logging.Handler):
    def __init__(self):
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.mark.slow  # over ~1 s
def test_bodies_in_flight_are_capped_and_a_dropped_upload_frees_its_place(tmp_path):
    """max_uploads 2: two half-sent bodies hold both places (a third submit gets 503); the
    client dropping one frees it (no traceback logged), and the other times out (408) and
    frees its own."""
    tasks = _tasks(tmp_path)
    errors, log = _Errors(), logging.getLogger("uvicorn.error")
    with contextlib.ExitStack() as stack:
        server = stack.enter_context(running(tasks, max_uploads=2, body_timeout_s=3.0))
        log.addHandler(errors)  # after uvicorn configured its loggers
        stack.callback(log.removeHandler, errors)
        url = f"{server.base}/api/label?annotator=alice"

        def full() -> bool:  # an empty label: 503 while both places are held, else refused
            return httpx.post(url, json={}).status_code == 503  # (it is never stored)

        held = [_connect(server.base) for _ in range(2)]
        for sock, port in held:
            sock.sendall(_head(port, "annotator=alice", "Content-Length: 100") + b"{")
        assert wait_for(full, 30)  # both requests reached the app (polled: no fixed sleep)
        assert httpx.post(url, json=GOOD).status_code == 503
        held[0][0].close()  # a dropped upload
        assert wait_for(lambda: not full(), 30)
        assert httpx.post(url, json=GOOD).status_code == 200
        status, _ = _answer(held[1][0], timeout=5)
        held[1][0].close()
        assert status == 408
        assert httpx.post(url, json={**GOOD, "position": 1}).status_code == 200
    assert [r.getMessage() for r in errors.records] == []
    assert len(read_labels(tasks.labels_dir)) == 2


@pytest.mark.slow
def test_a_label_with_thousands_of_unknown_dimensions_gets_a_short_answer(tmp_path):
    """60,000 made-up dimensions (770 KB, under the cap): the refusal names a few and the
    count, instead of echoing every name back (it was a 589 KB answer)."""
    tasks = _tasks(tmp_path)
    scores = {**GOOD["scores"], **{f"k{i}": 1 for i in range(60_000)}}
    with running(tasks) as server:
        got = httpx.post(f"{server.base}/api/label?annotator=alice",
                         json={**GOOD, "scores": scores})  # fmt: skip
    assert got.status_code == 422 and len(got.content) < 300
    assert got.json()["error"] == "scores: 60000 unknown dimension(s): 'k0', 'k1', 'k10', ..."
