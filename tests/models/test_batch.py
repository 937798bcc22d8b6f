"""Batch mode against the loopback server's files + batches endpoints (the real state
machine): a GAIA study end to end, resume after a kill without a second submission,
failed / expired / cancelled batches resubmitting only what is missing, per-line errors,
``--no-wait``, the batch price, and requests that batch mode must refuse."""

from __future__ import annotations

import asyncio
import email.parser
import email.policy
import json
import os
import signal
import subprocess
import sys
import time
from collections import deque
from typing import NamedTuple
from urllib.parse import urlsplit

import openai
import pytest
from loopback import BatchPlan, LoopbackServer, Reply, _read_request, _write
from studyfiles import CANARY_KEY, KEY_ENV, gaia_dataset, gaia_params, openai_system

from evalbench import gaia
from evalbench.agents.types import SystemSpec
from evalbench.models import (
    BatchPending,
    BatchRefused,
    CacheMiss,
    ChatRequest,
    ModelClient,
    ModelSpec,
    require_sync,
    run_sync,
    token_cost,
)
from evalbench.models import batch as batch_mode
from evalbench.records import read_jsonl
from evalbench.studies import open_run

ANSWERS = ["4", "4", "5", "6", "7", "8"]


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, CANARY_KEY)
    monkeypatch.setenv(batch_mode.NO_WAIT_ENV, "")  # undone after each test


def _study(tmp_path, loopback, n=6, name="gaia_batch", **system):
    loopback.batch_reply = lambda body: Reply(text="FINAL ANSWER: 4", prompt_tokens=100,
                                              completion_tokens=20)  # fmt: skip
    system = {"batch": True, "batch_poll_s": 0.01, "price_input_per_mtok": 2.0,
              "price_output_per_mtok": 8.0, **system}  # fmt: skip
    dataset = gaia_dataset(tmp_path, ANSWERS[:n], name=f"data_{name}")
    return gaia_params(tmp_path, dataset, [openai_system(loopback, **system)], name=name)


def _run(path):
    run = open_run(path)
    result = gaia.run(run)
    run.finish(result)
    return run


def _inputs(loopback) -> list[list[str]]:
    """The custom_ids of every batch the server received, in order."""
    return [[line["custom_id"] for line in b["lines"]] for b in loopback.batches.values()]


def _records(run) -> list[dict]:
    return read_jsonl(run.dir / "records" / "responses.jsonl")


def _events(run) -> list[dict]:
    return read_jsonl(run.dir / "batches" / "batches.jsonl")


@pytest.mark.slow
def test_a_gaia_study_runs_end_to_end_in_batch_mode_at_the_batch_price(tmp_path, loopback):
    path = _study(tmp_path, loopback)
    run = _run(path)
    assert loopback.batch_creates == 1 and loopback.count == 0  # no synchronous call at all
    records = _records(run)
    assert sorted(r["key"] for r in records) == [f"t{i}#0" for i in range(6)]
    assert all(r["error"] is None and r["text"] == "FINAL ANSWER: 4" for r in records)
    # one line per distinct request, custom_id = the request's cache key
    assert sorted(_inputs(loopback)[0]) == sorted(r["request_key"] for r in records)
    assert [e["event"] for e in _events(run)] == ["submitting", "submitted", "ended"]
    assert _events(run)[1]["batch_id"] == "batch_1"
    scored = read_jsonl(run.dir / "records" / "gaia.jsonl")
    assert sum(r["correct"] for r in scored) == 2  # the two items whose answer is 4
    # 6 answers × (100 prompt × 2 + 20 completion × 8) / 1e6 USD = 0.00216 at list price;
    # batch_discount 0.5 halves it
    usage = run.recorded_usage().set_index("system").loc["loop"]
    assert usage["cost_usd"] == pytest.approx(6 * (100 * 2 + 20 * 8) / 1e6 * 0.5)
    assert run.ledger.summary()["loop"]["cost_usd"] == pytest.approx(0.00108)
    # a rerun finds every answer in its records: nothing is submitted again
    again = _run(path)
    assert again.dir == run.dir and loopback.batch_creates == 1


@pytest.mark.slow
def test_answers_go_to_the_response_cache_so_another_run_pays_nothing(tmp_path, loopback):
    _run(_study(tmp_path, loopback, name="first"))
    other = _run(_study(tmp_path, loopback, name="second"))  # another folder, same requests
    assert loopback.batch_creates == 1
    assert all(r["cached"] for r in _records(other))
    assert other.recorded_usage()["cost_usd"].sum() == 0.0


def test_the_batch_price_is_the_list_price_less_the_discount():
    spec = ModelSpec(name="s", provider="openai", model="m", price_input_per_mtok=2.0,
                     price_output_per_mtok=8.0)  # fmt: skip
    # (1000 · 2 + 500 · 8) / 1e6 = 0.006 USD synchronously
    assert token_cost(spec, 1000, 500) == pytest.approx(0.006)
    batch = spec.model_copy(update={"batch": True})
    assert token_cost(batch, 1000, 500) == pytest.approx(0.006 * (1 - 0.5))
    deeper = spec.model_copy(update={"batch": True, "batch_discount": 0.75})
    assert token_cost(deeper, 1000, 500) == pytest.approx(0.006 * 0.25)


_RUN_IN_PROCESS = (
    "import sys; from evalbench import gaia; from evalbench.studies import open_run; "
    "gaia.run(open_run(sys.argv[1]))"
)


@pytest.mark.slow
def test_killed_while_polling_the_rerun_polls_the_same_batch(tmp_path, loopback):
    loopback.batch_plans.append(BatchPlan(hold=True))  # stays in_progress until released
    path = _study(tmp_path, loopback)
    # the study's run() in a process of its own (what the notebook's kernel runs, without
    # the CLI and kernel start-up: ~3 s CPU less), killed mid-poll
    proc = subprocess.Popen([sys.executable, "-c", _RUN_IN_PROCESS, str(path)],
                            start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    deadline = time.monotonic() + 120
    while loopback.batch_polls < 3 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(30)
    assert loopback.batch_creates == 1 and loopback.batch_polls >= 3
    loopback.release_batches()
    run = _run(path)
    assert loopback.batch_creates == 1  # the server counted one submission, ever
    keys = [r["key"] for r in _records(run)]
    assert sorted(keys) == [f"t{i}#0" for i in range(6)]  # exactly one record per item


@pytest.mark.slow
def test_a_crash_between_submitting_and_saving_the_id_adopts_the_batch(
    tmp_path, loopback, monkeypatch
):
    path = _study(tmp_path, loopback)

    def die(*args, **kwargs):
        raise RuntimeError("the process died right after the provider accepted the batch")

    with monkeypatch.context() as patch:
        patch.setattr(batch_mode.BatchLog, "submitted", die)
        with pytest.raises(RuntimeError, match="died right after"):
            _run(path)
    assert loopback.batch_creates == 1
    run = _run(path)
    assert loopback.batch_creates == 1  # found by metadata.evalbench_chunk, not resubmitted
    assert len(_records(run)) == 6
    submitted = [e for e in _events(run) if e["event"] == "submitted"]
    assert [e["batch_id"] for e in submitted] == ["batch_1"]


@pytest.mark.slow
@pytest.mark.parametrize("outcome", ["expired", "cancelled"])
def test_an_unfinished_batch_keeps_its_output_and_resubmits_only_the_rest(
    tmp_path, loopback, outcome
):
    loopback.batch_plans.append(BatchPlan(outcome=outcome, done=2))
    run = _run(_study(tmp_path, loopback))
    first, second = _inputs(loopback)
    assert len(first) == 6 and sorted(second) == sorted(first[2:])  # the 4 without output
    assert loopback.batch_creates == 2
    records = _records(run)
    assert len(records) == 6 and all(r["error"] is None for r in records)
    ended = [e for e in _events(run) if e["event"] == "ended"]
    assert [(e["status"], e["answers"], e["without_result"]) for e in ended] == [
        (outcome, 2, 4), ("completed", 4, 0)
    ]  # fmt: skip


@pytest.mark.slow
def test_per_line_errors_a_permanent_one_is_recorded_a_transient_one_retried(tmp_path, loopback):
    loopback.batch_plans.append(BatchPlan(line_errors={0: (400, "bad request"),
                                                       1: (500, "server hiccup")}))  # fmt: skip
    path = _study(tmp_path, loopback)
    run = _run(path)
    first, second = _inputs(loopback)
    assert second == [first[1]]  # only the 500 goes out again
    by_key = {r["request_key"]: r for r in _records(run)}
    assert by_key[first[0]]["error"] == "http_400: bad request"
    assert by_key[first[1]]["error"] is None
    assert sum(r["error"] is not None for r in by_key.values()) == 1
    # a rerun asks again for the failed one: the saved batch's error file answers it, the
    # request is not resubmitted (it would be refused again)
    again = {r["request_key"]: r for r in _records(_run(path))}
    assert again[first[0]]["error"] == "http_400: bad request" and loopback.batch_creates == 2


_OK_BODY = {"choices": [{"message": {"content": "FINAL ANSWER: 4"}, "finish_reason": "stop"}]}
_HOSTILE = {
    "not an object": lambda cid: [1, 2, 3],
    "custom_id a list": lambda cid: {"custom_id": [cid], "response": None},
    "response a string": lambda cid: {"custom_id": cid, "response": "oops"},
    "status_code not a number": lambda cid: {
        "custom_id": cid, "response": {"status_code": "abc", "body": _OK_BODY}},
    "error a string": lambda cid: {"custom_id": cid, "response": {"status_code": 500, "body": {
        "error": "oops"}}},
    "content a number": lambda cid: {"custom_id": cid, "response": {"status_code": 200, "body": {
        "choices": [{"message": {"content": 42}, "finish_reason": "stop"}]}}},
}  # fmt: skip


@pytest.mark.parametrize("line", list(_HOSTILE))
def test_a_result_line_of_the_wrong_shape_is_that_requests_failure_not_the_runs(
    tmp_path, loopback, line
):
    # each crashed the whole run (AttributeError, ValueError, TypeError, ValidationError):
    # no record kept; now the line is no answer, and its request goes out again
    loopback.batch_plans.append(BatchPlan(raw_lines={0: _HOSTILE[line]}))
    run = _run(_study(tmp_path, loopback, n=3))
    first, second = _inputs(loopback)
    assert second == [first[0]]
    records = _records(run)
    assert len(records) == 3 and all(r["error"] is None for r in records)


def test_a_failed_batch_names_rejected_lines_and_resubmits_the_others(tmp_path, loopback):
    loopback.batch_plans.append(BatchPlan(outcome="failed", invalid_lines={2: "bad model"}))
    run = _run(_study(tmp_path, loopback))
    first, second = _inputs(loopback)
    assert sorted(second) == sorted(k for i, k in enumerate(first) if i != 2)
    by_key = {r["request_key"]: r for r in _records(run)}
    assert by_key[first[2]]["error"] == "batch_invalid: invalid_request: bad model"


def test_a_request_without_result_after_every_round_is_a_transient_error(tmp_path, loopback):
    loopback.batch_plans.extend(BatchPlan(outcome="failed") for _ in range(3))
    run = _run(_study(tmp_path, loopback, n=2))
    assert loopback.batch_creates == batch_mode.MAX_ROUNDS
    errors = {r["error"] for r in _records(run)}
    assert errors == {"batch_failed: token_limit_exceeded: Enqueued token limit reached "
                      "(after 3 batches)"}  # fmt: skip


@pytest.mark.slow
def test_no_wait_submits_and_stops_then_a_rerun_collects(tmp_path, loopback, monkeypatch):
    path = _study(tmp_path, loopback)
    monkeypatch.setenv(batch_mode.NO_WAIT_ENV, "1")
    run = open_run(path)
    with pytest.raises(BatchPending, match=r"6 request\(s\) in 1 batch\(es\) .*in_progress"):
        gaia.run(run)
    assert loopback.batch_creates == 1 and not (run.dir / "records" / "responses.jsonl").exists()
    assert (run.dir / "batches" / "batches.jsonl").exists()
    monkeypatch.setenv(batch_mode.NO_WAIT_ENV, "")
    run = _run(path)
    assert loopback.batch_creates == 1 and len(_records(run)) == 6


@pytest.mark.slow
def test_cli_no_wait_exits_0_and_says_how_to_collect(tmp_path, loopback, capsys, warm_cli):
    from evalbench.cli import main

    path = _study(tmp_path, loopback)
    assert main(["run", str(path), "--no-wait"]) == 0
    out = capsys.readouterr().out
    assert "6 request(s) in 1 batch(es) at the provider" in out and "run the study again" in out
    os.environ[batch_mode.NO_WAIT_ENV] = ""  # as a fresh shell would have it
    assert main(["run", str(path)]) == 0
    assert loopback.batch_creates == 1


def test_replay_mode_never_submits(tmp_path, loopback):
    path = _study(tmp_path, loopback, name="replayed")
    run = open_run(path, ["cache=replay"])
    with pytest.raises(CacheMiss):
        gaia.run(run)
    assert loopback.batch_creates == 0 and loopback.uploads == 0


def test_requests_that_depend_on_earlier_answers_are_refused_in_one_line(loopback):
    spec = ModelSpec(**openai_system(loopback, batch=True))
    with pytest.raises(BatchRefused, match="system 'loop' has batch: true, but batch mode "
                       "cannot answer agent steps"):  # fmt: skip
        require_sync(spec, "agent steps")
    request = ChatRequest(messages=[{"role": "user", "content": "hi"}])
    with pytest.raises(BatchRefused, match="one request at a time"):
        run_sync(ModelClient(spec).chat(request))
    require_sync(spec.model_copy(update={"batch": False}), "agent steps")  # fine
    for bad in ({"provider": "sim"}, {"provider": "agent", "model": "m"}):
        with pytest.raises(ValueError, match="batch: true needs provider 'openai'"):
            SystemSpec(name="s", batch=True, **bad)
    assert loopback.count == 0


def test_batch_mode_needs_a_run_folder(loopback):
    from evalbench.models import Job, generate

    client = ModelClient(ModelSpec(**openai_system(loopback, batch=True)))
    job = Job("a", ChatRequest(messages=[{"role": "user", "content": "hi"}]))
    with pytest.raises(BatchRefused, match="needs a run folder"):
        generate(client, [job], progress=False)


def test_input_files_split_at_the_apis_limits(monkeypatch):
    spec = ModelSpec(name="s", provider="openai", model="m", batch=True)
    requests = {f"k{i}": ChatRequest(messages=[{"role": "user", "content": "x" * 100}])
                for i in range(7)}  # fmt: skip
    monkeypatch.setattr(batch_mode, "MAX_REQUESTS", 3)
    sizes = [len(c) for c in batch_mode._chunks(list(requests), requests, spec)]
    assert sizes == [3, 3, 1]
    one = next(batch_mode._chunks(["k0"], requests, spec))[0][1]
    monkeypatch.setattr(batch_mode, "MAX_REQUESTS", 100)
    monkeypatch.setattr(batch_mode, "MAX_BYTES", 2 * len(one))  # two lines per file
    sizes = [len(c) for c in batch_mode._chunks(list(requests), requests, spec)]
    assert sizes == [2, 2, 2, 1]
    line = json.loads(one)
    assert (line["custom_id"], line["method"], line["url"]) == ("k0", "POST", batch_mode.ENDPOINT)
    assert line["body"] == {"model": "m", "messages": [{"role": "user", "content": "x" * 100}]}


def test_a_batch_the_provider_no_longer_has_is_submitted_again(tmp_path, loopback, monkeypatch):
    path = _study(tmp_path, loopback)
    monkeypatch.setenv(batch_mode.NO_WAIT_ENV, "1")
    with pytest.raises(BatchPending):
        gaia.run(open_run(path))
    loopback.batches.clear()  # e.g. another account's key, or the provider lost it
    monkeypatch.setenv(batch_mode.NO_WAIT_ENV, "")
    run = _run(path)
    assert loopback.batch_creates == 2 and len(_records(run)) == 6


# ------------------------------------------------------------- creates that go wrong


class Create(NamedTuple):
    """How the server treats one batch create (or file upload)."""

    delay_s: float = 0.0
    """Seconds before the answer."""
    made: str = "now"
    """When the batch is made: ``now`` (on arrival), ``late`` (when answering), ``never``."""
    status: int = 200
    """The answer's HTTP status (503: no batch made as far as the client can tell)."""


class SlowProvider(LoopbackServer):
    """The loopback server's Batch API (no chat), but each ``POST /v1/batches`` follows the
    next :class:`Create` of :attr:`creates` and each ``POST /v1/files`` the next of
    :attr:`uploads_plan` (then they answer at once); files keep their names and are listed
    (``GET /v1/files``, newest first); every call is noted in :attr:`calls`."""

    def __init__(self):
        super().__init__()
        self.creates: deque[Create] = deque()
        self.uploads_plan: deque[Create] = deque()
        self.calls: list[str] = []
        self.listed: list[dict] = []  # the files as GET /v1/files shows them

    def clear(self) -> None:
        self.reset()
        for kept in (self.creates, self.uploads_plan, self.calls, self.listed):
            kept.clear()

    async def _handle(self, reader, writer):
        try:
            while (request := await _read_request(reader)) is not None:
                status, answer = await self._route(*request)
                _write(writer, status, answer, {})
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass  # the client gave up on a slow create: as a provider would, carry on
        finally:
            writer.close()

    async def _route(self, method, target, headers, body) -> tuple[int, bytes]:
        path = urlsplit(target).path
        call = {("POST", "/v1/batches"): "create", ("POST", "/v1/files"): "upload",
                ("GET", "/v1/batches"): "list", ("GET", "/v1/files"): "list_files"}  # fmt: skip
        self.calls.append(call.get((method, path), "other"))
        if method == "POST" and path in ("/v1/batches", "/v1/files"):
            plans = self.creates if path == "/v1/batches" else self.uploads_plan
            return await self._slowly(plans, method, target, headers, body)
        if (method, path) == ("GET", "/v1/files"):
            return 200, json.dumps({"object": "list", "data": self.listed[::-1],
                                    "has_more": False}).encode()  # fmt: skip
        with self._lock:
            return self._batch_api(method, target, headers, body)

    async def _slowly(self, plans, *request) -> tuple[int, bytes]:
        plan = plans.popleft() if plans else Create()
        made = self._make(*request) if plan.made == "now" else None
        await asyncio.sleep(plan.delay_s)
        made = self._make(*request) if plan.made == "late" else made
        if plan.status != 200 or made is None:
            return plan.status, json.dumps({"error": {"message": "try later"}}).encode()
        return made

    def _make(self, method, target, headers, body) -> tuple[int, bytes]:
        with self._lock:
            status, answer = self._batch_api(method, target, headers, body)
        if target.endswith("/files"):  # keep the name the client gave (the base says input.jsonl)
            made = {**json.loads(answer), "filename": _upload_name(headers, body)}
            self.listed.append(made)
            answer = json.dumps(made).encode()
        return status, answer


def _upload_name(headers: dict, body: bytes) -> str:
    head = f"Content-Type: {headers['content-type']}\r\n\r\n".encode()
    message = email.parser.BytesParser(policy=email.policy.default).parsebytes(head + body)
    return next(p.get_filename() for p in message.iter_parts() if p.get_filename())


@pytest.fixture(scope="module")
def slow_server():
    server = SlowProvider().start()
    yield server
    server.stop()


@pytest.fixture
def slow(slow_server, loopback):  # loopback: its reset and key fixtures, shared
    slow_server.clear()
    return slow_server


SLOW = {"timeout_s": 0.2, "max_retries": 2}  # the 1 s / 2.5 s, scaled down


@pytest.mark.slow
@pytest.mark.parametrize(
    "plan",
    [Create(delay_s=0.6), Create(delay_s=0.6, made="late"), Create(status=500)],
    ids=["answered after the timeout", "made after the timeout", "500 after accepting"],
)
def test_a_create_that_failed_after_the_provider_took_it_is_adopted_not_posted_again(
    tmp_path, slow, plan
):
    """Before: the SDK retried the create (max_retries 2), one new batch per retry, each
    billed at a real provider. Now the create is never retried blindly: the batch is looked
    up by its metadata tag (while a just-failed create may still be being made) and adopted."""
    slow.creates.extend([plan] * 3)
    run = _run(_study(tmp_path, slow, **SLOW))
    assert slow.batch_creates == 1 and slow.calls.count("create") == 1
    assert slow.calls.index("list") > slow.calls.index("create")
    assert len(_records(run)) == 6 and all(r["error"] is None for r in _records(run))
    events = [(e["event"], e.get("batch_id")) for e in _events(run)]
    assert events == [("submitting", None), ("create_failed", None), ("submitted", "batch_1"),
                      ("ended", "batch_1")]  # fmt: skip


def test_a_create_the_provider_never_took_is_posted_again_only_after_a_lookup(
    tmp_path, slow, monkeypatch
):
    monkeypatch.setattr(batch_mode, "CREATE_SETTLE_S", 0.1)
    slow.creates.append(Create(status=503, made="never"))
    run = _run(_study(tmp_path, slow, **SLOW))
    first, second = [i for i, call in enumerate(slow.calls) if call == "create"]
    assert "list" in slow.calls[first:second] and slow.batch_creates == 1
    assert len(_records(run)) == 6 and all(r["error"] is None for r in _records(run))


def test_creates_that_always_fail_stop_after_max_rounds_with_error_records(
    tmp_path, slow, monkeypatch
):
    monkeypatch.setattr(batch_mode, "CREATE_SETTLE_S", 0.0)
    slow.creates.extend([Create(status=503, made="never")] * 10)
    run = _run(_study(tmp_path, slow, n=2, **SLOW))
    assert slow.calls.count("create") == batch_mode.MAX_ROUNDS and slow.batch_creates == 0
    assert {r["error"] for r in _records(run)} == {
        "batch_create_failed: http_503: try later (after 3 batches)"
    }


def test_an_upload_answered_after_the_timeout_is_found_by_name_not_uploaded_again(tmp_path, slow):
    """Before: the SDK retried the upload, one more 190 MB file at the provider per retry
    (only the last used). Now a failed upload is looked up by its unique name first."""
    slow.uploads_plan.extend([Create(delay_s=0.6)] * 3)
    run = _run(_study(tmp_path, slow, **SLOW))
    assert slow.uploads == 1 and slow.calls.count("upload") == 1
    assert slow.calls[:3] == ["upload", "list_files", "create"]
    assert len(_records(run)) == 6 and all(r["error"] is None for r in _records(run))


@pytest.mark.slow
def test_an_upload_the_provider_never_took_is_sent_again_after_a_lookup(tmp_path, slow):
    slow.uploads_plan.extend([Create(status=503, made="never")] * 2)
    run = _run(_study(tmp_path, slow, **SLOW))
    assert slow.calls[:5] == ["upload", "list_files", "upload", "list_files", "upload"]
    assert slow.uploads == 1 and slow.batch_creates == 1 and len(_records(run)) == 6


@pytest.mark.slow
def test_no_wait_after_a_failed_create_says_unconfirmed_and_the_rerun_adopts_it(
    tmp_path, slow, monkeypatch
):
    """The create times out and the batch only appears later: --no-wait stops with the batch
    unconfirmed (not resubmitted); the rerun finds it by its tag."""
    slow.creates.append(Create(delay_s=0.4, made="late"))
    path = _study(tmp_path, slow, **SLOW)
    monkeypatch.setenv(batch_mode.NO_WAIT_ENV, "1")
    with pytest.raises(BatchPending, match=r"6 request\(s\) in 1 batch\(es\) .*1 unconfirmed"):
        gaia.run(open_run(path))
    deadline = time.monotonic() + 10
    while slow.batch_creates == 0 and time.monotonic() < deadline:  # the late batch is made
        time.sleep(0.02)
    monkeypatch.setenv(batch_mode.NO_WAIT_ENV, "")
    run = _run(path)
    assert slow.calls.count("create") == 1 and slow.batch_creates == 1
    assert len(_records(run)) == 6 and all(r["error"] is None for r in _records(run))


# ------------------------------------------------------ endpoints without a Batch API


class NoBatchApi(LoopbackServer):
    """An OpenAI-compatible server without (part of) the Batch API, as llama-cpp-python's:
    the routes under ``/v1/<name>`` for each name in :attr:`missing` answer FastAPI's 404."""

    def __init__(self):
        super().__init__()
        self.missing: set[str] = set()  # "files", "batches"

    def _batch_api(self, method, target, headers, body):
        if urlsplit(target).path.split("/")[2] in self.missing:
            return 404, b'{"detail":"Not Found"}'
        return super()._batch_api(method, target, headers, body)


@pytest.fixture(scope="module")
def no_batch_server():
    server = NoBatchApi().start()
    yield server
    server.stop()


@pytest.fixture
def no_batch(no_batch_server, loopback):  # loopback: its reset and key fixtures, shared
    no_batch_server.reset()
    no_batch_server.missing = set()
    return no_batch_server


@pytest.mark.parametrize(
    ("missing", "route"),
    [({"files", "batches"}, "POST /v1/files"), ({"batches"}, "POST /v1/batches")],
    ids=["no files endpoint", "files but no batches endpoint"],
)
def test_an_endpoint_without_a_batch_api_fails_the_run_in_one_line_naming_it(
    tmp_path, no_batch, capsys, missing, route
):
    """Before: ``NotFoundError: Error code: 404`` (the openai SDK's), and a rerun warned
    ``the provider has no batch None``. Now one line names the route and the fix, every run."""
    no_batch.missing = missing
    path = _study(tmp_path, no_batch, n=2)
    said = (f"system 'loop': the endpoint has no Batch API ({route} → 404 Not Found); "
            "remove batch: true")  # fmt: skip
    for _ in range(2):  # a rerun says the same, and looks up no batch
        with pytest.raises(batch_mode.BatchRefused) as refused:
            _run(path)
        assert str(refused.value) == said
    assert "batch None" not in capsys.readouterr().err
    assert no_batch.batch_creates == 0 and no_batch.count == 0  # no chat request either
    events = [e["event"] for e in _events(open_run(path))]
    assert events == ["submitting", "not_made"] * 2  # each closed: nothing to look up


def test_a_submit_cut_short_is_not_a_batch_to_look_up_on_an_endpoint_without_one(
    tmp_path, no_batch, capsys, monkeypatch
):
    """A run killed mid-upload leaves a ``submitting`` event with no batch id; the rerun
    cannot list batches there (404) and says nothing of a 'batch None'."""
    no_batch.missing = {"files", "batches"}
    path = _study(tmp_path, no_batch, n=2)
    with monkeypatch.context() as patch:
        patch.setattr(batch_mode._Session, "_upload", _killed)
        with pytest.raises(RuntimeError, match="killed mid-upload"):
            _run(path)
    with pytest.raises(batch_mode.BatchRefused, match=r"no Batch API \(POST /v1/files → 404"):
        _run(path)
    assert "batch None" not in capsys.readouterr().err


def test_a_404_to_a_create_from_a_batch_api_that_lists_batches_stays_the_providers(tmp_path, slow):
    """A Batch API may answer a create with 404 for its input file: listing batches works
    there, so the endpoint is not said to have no Batch API."""
    slow.creates.append(Create(status=404, made="never"))
    path = _study(tmp_path, slow, n=2, **SLOW)
    with pytest.raises(openai.NotFoundError, match="try later"):
        _run(path)
    assert slow.calls == ["upload", "create", "list"]  # the list: does it have batches?
    assert [e["event"] for e in _events(open_run(path))] == ["submitting", "not_made"]


async def _killed(*args, **kwargs):
    raise RuntimeError("the process was killed mid-upload")


@pytest.mark.slow
def test_cli_run_on_an_endpoint_without_a_batch_api_exits_1_with_that_reason(
    tmp_path, no_batch, capsys, warm_cli
):
    from evalbench.cli import main
    from evalbench.runs import read_manifest, run_dir_for
    from evalbench.studies import load_params

    no_batch.missing = {"files", "batches"}
    path = _study(tmp_path, no_batch, n=2)
    assert main(["run", str(path)]) == 1
    manifest = read_manifest(run_dir_for(path, load_params(path)))
    assert manifest["status"] == "failed"
    assert manifest["reason"] == (
        "BatchRefused: system 'loop': the endpoint has no Batch API (POST /v1/files → 404 "
        "Not Found); remove batch: true"
    )
    assert "Traceback" not in capsys.readouterr().out
