"""An endpoint that answers with what no server should: wrong types in a 200, JSON nested
past the parser's recursion limit, a garbage ``Retry-After``, rate-limit headers that reset
in 30 years, the API key echoed in an error. Each is a failed call (or an ignored header) of
that request, never a crash of the run, a wait without end, or a key in the records."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from evalbench.models import ChatRequest, Job, ModelClient, ModelSpec, generate, run_sync
from evalbench.models.concurrency import MAX_PAUSE_S, Budget, Ticket
from evalbench.models.providers import parse_completion, retry_after_seconds

KEY = "sk-SECRETKEY123-not-real"
OK = {"choices": [{"message": {"content": "FINAL ANSWER: 42"}, "finish_reason": "stop"}],
      "usage": {"prompt_tokens": 5, "completion_tokens": 3}}  # fmt: skip


class _Scripted(BaseHTTPRequestHandler):
    """Answers every POST with the server's ``status``, ``headers`` and ``body``; an error
    body may quote the request's Authorization header (``{auth}``)."""

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        server = self.server
        body = server.body.replace("{auth}", self.headers.get("Authorization", "")).encode()
        self.send_response(server.status)
        for name, value in server.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Type", "application/json")
        if not getattr(server, "no_length", False):  # else: the body ends when the socket does
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def scripted(monkeypatch):
    monkeypatch.setenv("EVALBENCH_TEST_KEY", KEY)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Scripted)
    server.status, server.headers, server.body = 200, {}, json.dumps(OK)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join(5)


def _ask(server, **spec):
    spec = ModelSpec(name="m", provider="openai", model="m", api_key_env="EVALBENCH_TEST_KEY",
                     base_url=f"http://127.0.0.1:{server.server_port}/v1",
                     **{"max_retries": 0, "timeout_s": 5, **spec})  # fmt: skip
    client = ModelClient(spec)

    async def ask():
        try:
            return await client.chat(ChatRequest(messages=[{"role": "user", "content": "q"}]))
        finally:
            await client.aclose()

    return run_sync(ask())


def _with(choice: dict) -> dict:
    return {**OK, "choices": [{**OK["choices"][0], **choice}]}


@pytest.mark.parametrize("body", [
    _with({"message": {"content": 42}}),
    _with({"finish_reason": 5}),
    _with({"message": {"content": None, "tool_calls": [
        {"id": 1, "type": "function", "function": {"name": 7, "arguments": {"a": 1}}}]}}),
    '{"id": "x", "choices": ' + "[" * 200_000 + "]" * 200_000 + "}",
], ids=["content 42", "finish_reason 5", "tool call name 7", "nested past the parser's limit"])  # fmt: skip
def test_a_field_of_the_wrong_type_is_a_malformed_response_of_that_call(scripted, body):
    # pydantic's ValidationError escaped the client: the whole run failed, no record kept
    scripted.body = body if isinstance(body, str) else json.dumps(body)
    response = _ask(scripted)
    assert not response.ok and response.error.startswith("malformed_response"), response.error


@pytest.mark.parametrize("value", ["garbage-value", "Fri,", "Thu, 99 Foo 2026 25:61:61 GMT"])
def test_a_retry_after_no_one_can_read_is_ignored(scripted, value):
    # email.utils.parsedate_to_datetime raises ValueError on it: the run failed with it
    assert retry_after_seconds({"Retry-After": value}) is None
    scripted.status, scripted.headers = 429, {"Retry-After": value}
    scripted.body = json.dumps({"error": {"message": "slow down"}})
    response = _ask(scripted)
    assert response.error.startswith("http_429"), response.error


def test_a_reset_past_the_longest_hold_is_no_budget_to_wait_for():
    # x-ratelimit-reset-requests: 1000000000 (0 of 2 left): the budget's refill rate was
    # 1.5 per 10^9 s, so the next request waited 21 years; the header is not believed
    budget = Budget()
    ticket = Ticket(seq=1, sent=0.0, used_requests=1, used_tokens=0, full=False)
    budget.observe(2, 0, 1e9, ticket, used_since=0, now=0.01)
    assert budget.wait_s(1, now=0.02) == 0.0
    budget.observe(2, 0, MAX_PAUSE_S, ticket, used_since=0, now=0.01)  # within: believed
    assert 0 < budget.wait_s(1, now=0.02) <= MAX_PAUSE_S


def test_such_a_reset_does_not_stall_the_client(scripted):
    scripted.headers = {"x-ratelimit-limit-requests": "2", "x-ratelimit-remaining-requests": "0",
                        "x-ratelimit-reset-requests": "99999h"}  # fmt: skip
    spec = ModelSpec(name="m", provider="openai", model="m", api_key_env="EVALBENCH_TEST_KEY",
                     base_url=f"http://127.0.0.1:{scripted.server_port}/v1", max_retries=0,
                     max_concurrency="auto")  # fmt: skip
    jobs = [Job(str(i), ChatRequest(messages=[{"role": "user", "content": f"q{i}"}]))
            for i in range(12)]  # fmt: skip
    done: list = []
    worker = threading.Thread(target=lambda: done.extend(
        generate(ModelClient(spec), jobs, progress=False)), daemon=True)  # fmt: skip
    worker.start()
    worker.join(60)  # the requests after the first window waited 99,999 hours
    assert not worker.is_alive(), "the client waits for a reset 99,999 hours away"
    assert len(done) == 12 and all(r.ok for r in done)


def test_the_api_key_echoed_in_an_error_never_reaches_the_response(scripted):
    scripted.status = 401
    scripted.body = json.dumps({"error": {"message": "bad key {auth} for this model"}})
    response = _ask(scripted)
    assert response.error.startswith("http_401") and "bad key Bearer " in response.error
    assert KEY not in response.model_dump_json() and "[redacted]" in response.error


def test_parse_completion_by_hand():
    reply, usage = parse_completion(OK)
    assert (reply.text, reply.finish_reason, usage.prompt_tokens) == ("FINAL ANSWER: 42", "stop", 5)


@pytest.mark.parametrize("length", ["declared", "not declared"])
def test_a_body_past_the_limit_is_not_read_into_memory(scripted, monkeypatch, length):
    # a 100 MB body was read whole (2.2 GB peak RSS); one of a few GB would exhaust memory
    from evalbench.models import transport

    monkeypatch.setattr(transport, "MAX_BODY_BYTES", 4096)
    scripted.body = json.dumps(_with({"message": {"content": "x" * 10_000}}))
    scripted.no_length = length == "not declared"
    response = _ask(scripted, max_retries=2)
    assert response.error.startswith("malformed_response: a body over 4,096 bytes"), response.error
    assert response.attempts == 1  # the same server sends the same body again: not retried
