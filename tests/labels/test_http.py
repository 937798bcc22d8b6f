"""The label app over HTTP (no browser): identity, tokens, refusals, validation, concurrency."""

from __future__ import annotations

import contextlib
import json
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from labels.helpers import running, write_tasks

from evalbench.labels import annotator_order, load_tasks, read_labels
from evalbench.labels.app import ServeRefused, annotator_tokens, create_app, is_loopback

ROOT = Path(__file__).resolve().parents[2]
ITEMS = [{"item": f"q{i}", "question": f"Q{i}?", "answer": f"A{i}."} for i in range(4)]
GOOD = {"scores": {"accuracy": 7, "completeness": 5, "clarity": 9}}


def _tasks(tmp_path: Path, **spec):
    return write_tasks(tmp_path, "rubric", ITEMS, **spec)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("127.0.0.2", True), ("localhost", True), ("::1", True),
     ("[::1]", True), ("0.0.0.0", False), ("::", False), ("192.168.1.20", False),
     ("example.org", False)],
)  # fmt: skip
def test_which_addresses_count_as_loopback(host, loopback):
    assert is_loopback(host) is loopback


@pytest.mark.slow
def test_another_address_without_annotators_is_refused_before_binding(tmp_path):
    tasks = _tasks(tmp_path)
    with pytest.raises(ServeRefused, match="needs a token per annotator"):
        create_app(tasks, host="0.0.0.0")
    done = subprocess.run(
        [sys.executable, "-m", "evalbench.cli", "label", "serve", str(tasks.path),
         "--host", "0.0.0.0", "--port", "0"],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 2
    assert "needs a token per annotator" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_bound_beyond_loopback_only_a_valid_token_gets_in(tmp_path):
    tasks = _tasks(tmp_path, annotators=["alice", "bob"])
    tokens = {name: tok for tok, name in annotator_tokens(tasks, "s3cret").items()}
    with running(tasks, host="0.0.0.0", secret="s3cret") as server:
        api = f"{server.base}/api/session"
        assert server.access.token_required
        assert httpx.get(api).status_code == 403
        assert httpx.get(api, params={"annotator": "alice"}).status_code == 403
        assert httpx.get(api, params={"token": "0" * 32}).status_code == 403
        post = httpx.post(f"{server.base}/api/label", json={"position": 0, **GOOD})
        assert post.status_code == 403
        ok = httpx.get(api, params={"token": tokens["bob"]})
        assert ok.status_code == 200 and ok.json()["annotator"] == "bob"
        assert set(server.access.urls()) == {"alice", "bob"}
        assert all("?token=" in url for url in server.access.urls().values())
    assert not tasks.labels_dir.exists()  # nothing was written by the refused requests


def test_tokens_depend_on_the_secret_and_the_task(tmp_path):
    one = _tasks(tmp_path, annotators=["alice"])
    other = tmp_path / "other.yaml"  # the same task under another name
    other.write_text(one.path.read_text())
    two = load_tasks(other)
    assert annotator_tokens(one, "a") != annotator_tokens(one, "b")
    assert annotator_tokens(one, "a") != annotator_tokens(two, "a")
    assert annotator_tokens(one, "a") == annotator_tokens(load_tasks(one.path), "a")


def test_on_loopback_a_name_identifies_and_declared_names_are_enforced(tmp_path):
    tasks = _tasks(tmp_path, annotators=["alice"])
    with running(tasks) as server:
        api = f"{server.base}/api/session"
        assert httpx.get(api, params={"annotator": "alice"}).json()["annotator"] == "alice"
        assert httpx.get(api, params={"annotator": "eve"}).status_code == 403
        assert httpx.get(api, params={"annotator": "../etc"}).status_code == 403
        assert httpx.get(api).status_code == 403


def test_a_foreign_host_header_and_cross_site_posts_are_refused(tmp_path):
    tasks = _tasks(tmp_path)
    with running(tasks) as server:
        params = {"annotator": "alice"}
        rebinding = httpx.get(f"{server.base}/", headers={"Host": "evil.example:80"})
        assert rebinding.status_code == 421
        url = f"{server.base}/api/label"
        body = json.dumps({"position": 0, **GOOD})
        form = httpx.post(url, params=params, content=body, headers={"Content-Type": "text/plain"})
        assert form.status_code == 403
        foreign = httpx.post(url, params=params, content=body, headers={
            "Content-Type": "application/json", "Origin": "http://evil.example"})  # fmt: skip
        assert foreign.status_code == 403
        same = httpx.post(url, params=params, content=body, headers={
            "Content-Type": "application/json", "Origin": server.base})  # fmt: skip
        assert same.status_code == 200
    assert len(read_labels(tasks.labels_dir)) == 1


def test_every_page_and_api_answer_carries_the_security_headers(tmp_path):
    tasks = _tasks(tmp_path)
    with running(tasks) as server:
        for path in ("/", "/static/app.js", "/api/session?annotator=a"):
            headers = httpx.get(server.base + path).headers
            assert "script-src 'self'" in headers["content-security-policy"]
            assert "unsafe-eval" not in headers["content-security-policy"]
            assert headers["x-content-type-options"] == "nosniff"
        page = httpx.get(server.base + "/").text
        assert "Q0?" not in page and "<script>" not in page  # no item text, no inline script


@pytest.mark.parametrize(
    ("body", "message"),
    [({"scores": {"accuracy": 7, "completeness": 5}}, "clarity: missing"),
     ({"scores": {"accuracy": 11, "completeness": 5, "clarity": 1}}, "outside 1-10"),
     ({"scores": {"accuracy": 7.5, "completeness": 5, "clarity": 1}}, "not a whole number"),
     ({"scores": {"accuracy": True, "completeness": 5, "clarity": 1}}, "accuracy: missing"),
     ({"scores": {**GOOD["scores"], "style": 3}}, "unknown dimension"),
     ({**GOOD, "comment": "x" * 5001}, "max 5000")],
)  # fmt: skip
@pytest.mark.slow
def test_an_invalid_label_is_refused_with_the_field_and_nothing_is_written(tmp_path, body, message):
    tasks = _tasks(tmp_path)
    with running(tasks) as server:
        got = httpx.post(
            f"{server.base}/api/label", params={"annotator": "al"}, json={"position": 0, **body}
        )
        assert got.status_code == 422 and message in got.json()["error"]
        missing = httpx.post(f"{server.base}/api/label", params={"annotator": "al"},
                             json={"position": 9, **GOOD})  # fmt: skip
        assert missing.status_code == 404
    assert not tasks.labels_dir.exists() or read_labels(tasks.labels_dir) == []


@pytest.mark.slow
def test_two_annotators_posting_at_once_from_threads_keep_every_label(tmp_path):
    """40 submits per annotator from 4 threads each, all at once: every one is on disk."""
    tasks = _tasks(tmp_path)
    with running(tasks) as server:

        def submit(name: str, start: int) -> None:
            with httpx.Client(base_url=server.base, timeout=30) as client:
                for k in range(start, start + 10):
                    scores = {"accuracy": 1 + k % 10, "completeness": 5, "clarity": 5}
                    r = client.post("/api/label", params={"annotator": name},
                                    json={"position": k % 4, "scores": scores})  # fmt: skip
                    assert r.status_code == 200, r.text

        threads = [threading.Thread(target=submit, args=(n, 10 * i))
                   for n in ("alice", "bob") for i in range(4)]  # fmt: skip
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert not any(t.is_alive() for t in threads)
    for name in ("alice", "bob"):
        lines = read_labels(tasks.labels_dir / f"{name}.jsonl")
        assert len(lines) == 40 and {r.annotator for r in lines} == {name}
        assert sorted(r.scores["accuracy"] for r in lines) == sorted(1 + k % 10 for k in range(40))
        for item in {r.item for r in lines}:  # revisions 1..n per item, none repeated
            revs = sorted(r.revision for r in lines if r.item == item)
            assert revs == list(range(1, len(revs) + 1))


def test_the_session_reports_progress_in_the_annotators_own_order(tmp_path):
    tasks = _tasks(tmp_path)
    with running(tasks) as server:
        params = {"annotator": "carol"}
        httpx.post(f"{server.base}/api/label", params=params, json={"position": 2, **GOOD})
        session = httpx.get(f"{server.base}/api/session", params=params).json()
        assert session["done"] == [False, False, True, False]
        assert session["done_count"] == 1 and session["total"] == 4
        item = httpx.get(f"{server.base}/api/item/2", params=params).json()
        assert item["item"] == annotator_order(tasks, "carol")[2]
        assert item["label"]["scores"] == {"accuracy": 7.0, "completeness": 5.0, "clarity": 9.0}
        assert httpx.get(f"{server.base}/api/item/4", params=params).status_code == 404


@pytest.mark.slow
def test_the_serve_command_announces_urls_answers_and_stops(tmp_path):
    """`evalbench label serve` as a real process on a free loopback port (stopped here)."""
    tasks = _tasks(tmp_path, annotators=["alice"])
    proc = subprocess.Popen(
        [sys.executable, "-m", "evalbench.cli", "label", "serve", str(tasks.path), "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT,
    )  # fmt: skip
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout], daemon=True).start()
    try:
        url, deadline = None, time.monotonic() + 60
        while url is None and time.monotonic() < deadline:  # bounded wait for the URLs
            with contextlib.suppress(queue.Empty):
                line = lines.get(timeout=1.0)
                if "?annotator=alice" in line:
                    url = line.split()[-1]
        assert url is not None and url.startswith("http://127.0.0.1:")
        base = url.split("/?")[0]
        assert httpx.get(f"{base}/healthz", timeout=10).text == "ok"
        assert httpx.get(url.replace("/?", "/api/session?"), timeout=10).json()["total"] == 4
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    assert proc.returncode is not None


def test_odd_names_and_tokens_are_refused_not_a_500(tmp_path):
    # Before: "alice\n" passed the name check ('$' matches before a final newline) and then
    # every save was a 500 with a traceback; a non-ASCII token was a 500 (compare_digest
    # takes ASCII text only).
    tasks = _tasks(tmp_path, annotators=["alice", "bob"])
    with running(tasks) as server:
        for query in ({"annotator": "alice\n"}, {"token": "é"}):
            got = httpx.get(f"{server.base}/api/session", params=query)
            assert got.status_code == 403 and "error" in got.json(), (query, got.text)
        got = httpx.get(f"{server.base}/api/session", headers={"x-label-token": "é".encode()})
        assert got.status_code == 403


def test_a_damaged_label_file_or_a_full_disk_is_said_in_json(tmp_path, monkeypatch):
    # Before: a bad line in bob's file made every page of his a bare 500; a save that could
    # not be written (a full disk) was a bare 500 too
    from evalbench.labels import storage

    tasks = _tasks(tmp_path, annotators=["alice", "bob"])
    with running(tasks) as server:
        assert httpx.post(f"{server.base}/api/label", params={"annotator": "bob"},
                          json={"position": 0, **GOOD}).status_code == 200  # fmt: skip
        with open(tasks.labels_dir / "bob.jsonl", "a") as fh:
            fh.write("garbage\n")
        got = httpx.get(f"{server.base}/api/session", params={"annotator": "bob"})
        assert got.status_code == 500 and "bob.jsonl:2" in got.json()["error"]

        def full(*args, **kw):
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(storage.os, "fsync", full)
        got = httpx.post(f"{server.base}/api/label", params={"annotator": "alice"},
                         json={"position": 0, **GOOD})  # fmt: skip
        assert got.status_code == 507
        assert got.json()["error"].startswith("not saved: No space left on device")
