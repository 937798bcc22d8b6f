"""Model access against a real HTTP server with the real ``openai`` client.

Each fault class, each cache mode, concurrency bounds, rate limits, resume after an
interrupted batch, usage/cost arithmetic, and the simulated provider.
"""

from __future__ import annotations

import asyncio
import datetime
import time

import numpy as np
import pytest
from loopback import Fault, Reply

from evalbench.models import (
    CacheMiss,
    ChatRequest,
    Job,
    ModelClient,
    ModelSpec,
    ResponseCache,
    SimReply,
    SimSpec,
    SimTask,
    agenerate,
    generate,
    run_sync,
)
from evalbench.models.providers import retry_after_seconds

KEY_ENV = "EVALBENCH_TEST_KEY"


@pytest.fixture(autouse=True)
def _api_key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test-not-a-real-key")


def spec_for(server, **kw) -> ModelSpec:
    defaults = dict(
        name="loop", provider="openai", model="m", base_url=server.base_url,
        api_key_env=KEY_ENV, max_retries=3, timeout_s=5,
    )  # fmt: skip
    return ModelSpec(**{**defaults, **kw})


def client_for(server, tmp_path=None, mode="use", **kw) -> ModelClient:
    cache = ResponseCache(tmp_path / "c.sqlite") if tmp_path is not None else None
    return ModelClient(spec_for(server, **kw), cache=cache, cache_mode=mode, backoff_base_s=0.01)


def ask(client, text="hi", **kw):
    req = ChatRequest(messages=[{"role": "user", "content": text}], **kw)

    async def once():
        try:
            return await client.chat(req)
        finally:  # this loop's connection pool, which a new loop cannot close
            await client.aclose()

    return run_sync(once())


def test_plain_completion_has_text_usage_latency_and_key(loopback):
    loopback.enqueue(Reply(text="hello", prompt_tokens=12, completion_tokens=3))
    r = ask(client_for(loopback))
    assert (r.text, r.finish_reason, r.attempts, r.error) == ("hello", "stop", 1, None)
    assert (r.usage.prompt_tokens, r.usage.completion_tokens) == (12, 3)
    assert r.latency_s > 0 and len(r.cache_key) == 64
    sent = loopback.requests[0]
    assert sent["model"] == "m" and sent["messages"][0]["content"] == "hi"
    assert sent["temperature"] == 0.0 and sent["max_tokens"] == 1024  # spec defaults filled in


def test_reasoning_model_settings_reach_the_endpoint(loopback):
    # OpenAI's reasoning models reject max_tokens and any non-default temperature.
    client = client_for(
        loopback, temperature=None, max_tokens=2048, max_tokens_field="max_completion_tokens",
        extra_body={"reasoning_effort": "low"},
    )  # fmt: skip
    assert ask(client).ok
    sent = loopback.requests[0]
    assert "temperature" not in sent and "max_tokens" not in sent
    assert sent["max_completion_tokens"] == 2048 and sent["reasoning_effort"] == "low"


def test_extra_body_and_token_field_enter_the_cache_key_only_when_set(loopback):
    req = ChatRequest(messages=[{"role": "user", "content": "q"}])
    plain = client_for(loopback).key_for(req)
    effort = {"extra_body": {"reasoning_effort": "low"}}
    keys = {
        plain,
        client_for(loopback, **effort).key_for(req),
        client_for(loopback, extra_body={"reasoning_effort": "high"}).key_for(req),
        client_for(loopback, max_tokens_field="max_completion_tokens").key_for(req),
    }
    assert len(keys) == 4
    # An empty extra_body sends nothing more, so it is the same request as none at all.
    assert client_for(loopback, extra_body={}).key_for(req) == plain


def test_extra_body_may_not_override_the_request_or_its_shape(loopback):
    with pytest.raises(ValueError, match=r"extra_body may not set \['max_tokens', 'model'\]"):
        spec_for(loopback, extra_body={"model": "other", "max_tokens": 5, "top_k": 3})
    with pytest.raises(ValueError, match=r"may not set \['n', 'stream'\]"):
        spec_for(loopback, extra_body={"stream": True, "n": 2})
    with pytest.raises(ValueError, match="not a valid JSON value"):  # e.g. a YAML timestamp
        spec_for(loopback, extra_body={"since": datetime.datetime(2024, 5, 1)})


def test_fields_added_later_leave_dumps_and_run_folder_names_alone(loopback):
    # A spec that does not use them dumps exactly as before they existed, so the params
    # hash of an existing study (its run folder) is unchanged and an interrupted run resumes.
    later = {"pacing_ms", "max_tokens_field", "extra_body"}
    assert not later & set(spec_for(loopback).model_dump(mode="json"))
    used = spec_for(loopback, pacing_ms=2, max_tokens_field="max_completion_tokens",
                    extra_body={"top_k": 3})  # fmt: skip
    assert later <= set(used.model_dump(mode="json"))
    assert ModelSpec.model_validate_json(used.model_dump_json()) == used


def test_tool_calls_and_tools_are_passed_through(loopback):
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    loopback.enqueue(
        Reply(tool_calls=[{"name": "f", "arguments": '{"a": 1}'}], finish_reason="tool_calls")
    )
    r = ask(client_for(loopback), tools=tools, tool_choice="auto")
    assert [(c.name, c.arguments) for c in r.tool_calls] == [("f", '{"a": 1}')]
    assert r.finish_reason == "tool_calls" and loopback.requests[0]["tools"] == tools


def test_429_honours_retry_after_then_succeeds(loopback):
    loopback.enqueue(Fault("429", retry_after=0.3), Reply(text="ok"))
    started = time.perf_counter()
    r = ask(client_for(loopback))
    assert (r.text, r.attempts) == ("ok", 2)
    assert time.perf_counter() - started >= 0.3  # waited as the server asked


@pytest.mark.parametrize("fault", [Fault("500"), Fault("malformed"), Fault("drop")])
def test_transient_faults_are_retried(loopback, fault):
    loopback.enqueue(fault, Reply(text="ok"))
    r = ask(client_for(loopback))
    assert (r.text, r.attempts, r.error) == ("ok", 2, None)
    assert loopback.count == 2


@pytest.mark.slow
def test_timeout_then_permanent_failure_is_an_error_record(loopback):
    loopback.enqueue(*[Fault("slow", seconds=0.5)] * 3)  # past timeout_s; the next test waits
    r = ask(client_for(loopback, timeout_s=0.2, max_retries=2))
    assert r.text is None and r.attempts == 3  # 1 try + 2 retries
    assert r.error.startswith("timeout") and "after 3 attempt(s)" in r.error


def test_persistent_500_becomes_error_with_reason(loopback):
    loopback.enqueue(*[Fault("500")] * 4)
    client = client_for(loopback, max_retries=3)
    r = ask(client)
    assert r.error.startswith("http_500") and r.attempts == 4 and loopback.count == 4
    assert client.ledger.errors() == {"loop": 1}


def test_a_failed_request_records_how_long_it_took(loopback):
    """Before: an error response said ``latency_s`` 0.0 (a context overflow that took 116 s
    read as instant in an agent's steps). Now: from its first attempt to giving up."""
    loopback.latency = 0.05  # each attempt waits this long before its 500
    loopback.enqueue(*[Fault("500")] * 2)
    r = ask(client_for(loopback, max_retries=1))
    assert r.error.startswith("http_500") and r.attempts == 2
    assert r.latency_s >= 2 * 0.05  # both attempts (a lower bound: it holds under load)


def test_501_not_implemented_is_not_retried(loopback):
    # Before: a server without the endpoint (python -m http.server answers 501) was asked 7
    # times per item, ~50 s per system of 2 items, for an answer it can never give
    loopback.enqueue(Fault("501"), Reply(text="never reached"))
    r = ask(client_for(loopback))
    assert r.error.startswith("http_501") and r.attempts == 1 and loopback.count == 1


def test_401_is_not_retried(loopback):
    loopback.enqueue(Fault("401"), Reply(text="never reached"))
    r = ask(client_for(loopback))
    assert r.error.startswith("http_401") and r.attempts == 1 and loopback.count == 1


def test_errors_are_never_cached(loopback, tmp_path):
    loopback.enqueue(Fault("401"))
    client = client_for(loopback, tmp_path)
    assert not ask(client).ok
    assert ask(client).ok  # asked again, not served an error from the cache
    assert loopback.count == 2


def test_cache_use_makes_zero_requests_on_rerun(loopback, tmp_path):
    client = client_for(loopback, tmp_path)
    first, second = ask(client, "q"), ask(client, "q")
    assert loopback.count == 1 and (first.cached, second.cached) == (False, True)
    assert second.text == first.text and second.cache_key == first.cache_key


def test_cache_refresh_asks_again_and_overwrites(loopback, tmp_path):
    ask(client_for(loopback, tmp_path), "q")
    loopback.enqueue(Reply(text="new"))
    assert ask(client_for(loopback, tmp_path, mode="refresh"), "q").text == "new"
    assert ask(client_for(loopback, tmp_path), "q").text == "new" and loopback.count == 2


def test_cache_off_neither_reads_nor_writes(loopback, tmp_path):
    client = client_for(loopback, tmp_path, mode="off")
    ask(client, "q"), ask(client, "q")
    assert loopback.count == 2 and client.cache.stats()["entries"] == {}


def test_replay_serves_hits_without_a_key_and_fails_on_a_miss(loopback, tmp_path, monkeypatch):
    ask(client_for(loopback, tmp_path), "q")
    monkeypatch.delenv(KEY_ENV)
    replay = client_for(loopback, tmp_path, mode="replay")
    assert ask(replay, "q").cached and loopback.count == 1
    with pytest.raises(CacheMiss, match="replay mode: no cached response"):
        ask(replay, "another question")


def test_cache_key_ignores_the_api_key_but_not_settings(loopback, tmp_path, monkeypatch):
    client = client_for(loopback, tmp_path)
    req = ChatRequest(messages=[{"role": "user", "content": "q"}])
    key = client.key_for(req)
    monkeypatch.setenv(KEY_ENV, "a-different-key")
    assert client_for(loopback, tmp_path).key_for(req) == key
    assert client_for(loopback, tmp_path, temperature=0.5).key_for(req) != key
    assert client.key_for(req.model_copy(update={"seed": 1})) != key


KERNEL = """
import pathlib, sys, time
from evalbench.models import ChatRequest, Job, ModelClient, ModelSpec, ResponseCache, generate
name, base_url, cache_path, go = sys.argv[1:5]
cache = ResponseCache(cache_path, batch=1)  # a commit per response: the most contention
spec = ModelSpec(name=name, provider="openai", model="m", base_url=base_url,
                 api_key_env="EVALBENCH_TEST_KEY", max_concurrency=8)
jobs = [Job(str(i), ChatRequest(messages=[{"role": "user", "content": f"{name}-{i}"}]))
        for i in range(150)]
print("ready", flush=True)
deadline = time.monotonic() + 60
while not pathlib.Path(go).exists():
    if time.monotonic() > deadline:
        sys.exit("never released")
    time.sleep(0.002)
responses = generate(ModelClient(spec, cache=cache), jobs, progress=False)
print(sum(r.ok for r in responses), flush=True)
"""


@pytest.mark.slow
def test_two_kernels_write_the_same_cache_at_once(loopback, tmp_path):
    # Two processes (as two notebook kernels would be), released together, each committing
    # every response to one SQLite file: none fails, every response is stored.
    import subprocess
    import sys

    path, go = tmp_path / "c.sqlite", tmp_path / "go"
    argv = [sys.executable, "-c", KERNEL]
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
    kernels = [
        subprocess.Popen([*argv, name, loopback.base_url, str(path), str(go)], **pipes)
        for name in ("a", "b")
    ]
    try:
        assert [k.stdout.readline().strip() for k in kernels] == ["ready", "ready"]
        go.touch()
        outputs = [k.communicate(timeout=120) for k in kernels]
    finally:
        for kernel in kernels:
            kernel.kill()
            kernel.wait()
    assert [k.returncode for k in kernels] == [0, 0], [err for _, err in outputs]
    assert [out.strip() for out, _ in outputs] == ["150", "150"]
    assert ResponseCache(path).stats()["entries"] == {"a": 150, "b": 150}


def _reply(text: str):
    from evalbench.models.types import ChatResponse, Usage

    return ChatResponse(system="s", text=text, usage=Usage(prompt_tokens=1, completion_tokens=1))


def test_a_cache_write_never_waits_for_the_database(tmp_path):
    # Another kernel holds the database's write lock. Storing a response used to commit on
    # the caller's thread, the event loop's, and wait up to busy_timeout (60 s) there: every
    # request in flight stalled. Now a writer thread commits; put() only queues.
    import sqlite3
    import threading

    path = tmp_path / "c.sqlite"
    cache = ResponseCache(path, batch=2)
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # holds the write lock
    stored = threading.Event()

    def store() -> None:
        for i in range(5):
            cache.put(f"k{i}", _reply(f"r{i}"))
        stored.set()

    threading.Thread(target=store, daemon=True).start()
    try:
        assert stored.wait(2), "put() waited for the database's write lock"
        assert [cache.get(f"k{i}").text for i in range(5)] == [f"r{i}" for i in range(5)]
    finally:
        other.execute("ROLLBACK")
        other.close()
    cache.flush()  # durable once flush returns
    assert [ResponseCache(path).get(f"k{i}").text for i in range(5)] == [f"r{i}" for i in range(5)]
    cache.close()


def test_the_cache_commits_within_max_delay_without_another_write(tmp_path):
    # One response, then silence: it used to wait for the next put() to be committed.
    import sqlite3

    path = tmp_path / "c.sqlite"
    cache = ResponseCache(path, batch=64, max_delay_s=0.05)
    cache.put("k", _reply("r"))
    deadline, rows = time.monotonic() + 5, 0
    while time.monotonic() < deadline and not rows:
        time.sleep(0.02)
        with sqlite3.connect(path) as conn:
            rows = conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
    assert rows == 1
    cache.close()


def test_closing_the_cache_stops_its_writer_thread(tmp_path):
    import threading

    cache = ResponseCache(tmp_path / "c.sqlite", batch=1)
    cache.put("k", _reply("r"))

    def writers() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t.name == f"evalbench-cache {cache.path}"]

    assert len(writers()) == 1
    cache.close()
    assert not writers()
    assert ResponseCache(tmp_path / "c.sqlite").get("k").text == "r"


def test_concurrency_never_exceeds_the_limit(loopback):
    loopback.latency = 0.05
    client = client_for(loopback, max_concurrency=4)
    jobs = [
        Job(str(i), ChatRequest(messages=[{"role": "user", "content": str(i)}])) for i in range(24)
    ]
    responses = generate(client, jobs, progress=False)
    assert all(r.ok for r in responses) and loopback.max_in_flight == 4


def test_results_come_back_in_job_order(loopback):
    jobs = [
        Job(str(i), ChatRequest(messages=[{"role": "user", "content": str(i)}])) for i in range(10)
    ]
    texts = [r.text for r in generate(client_for(loopback), jobs, progress=False)]
    assert texts == [f"echo: {i}" for i in range(10)]


def test_requests_per_minute_limit_paces_requests(loopback):
    # 1200/min = 20/s with a one-second burst of 20: 30 requests need >= (30 - 20) / 20 s.
    client = client_for(loopback, requests_per_minute=1200, max_concurrency=64)
    jobs = [
        Job(str(i), ChatRequest(messages=[{"role": "user", "content": str(i)}])) for i in range(30)
    ]
    started = time.perf_counter()
    generate(client, jobs, progress=False)
    assert time.perf_counter() - started >= (30 - 20) / 20 * 0.9


def test_resume_after_an_interrupted_batch_pays_only_for_the_rest(loopback, tmp_path):
    jobs = [
        Job(str(i), ChatRequest(messages=[{"role": "user", "content": str(i)}])) for i in range(10)
    ]
    done: list[str] = []

    def crash_after_four(job, response):
        if len(done) == 4:
            raise KeyboardInterrupt("simulated crash")
        done.append(job.key)

    client = client_for(loopback, tmp_path, max_concurrency=1)
    with pytest.raises(KeyboardInterrupt):
        generate(client, jobs, on_result=crash_after_four, progress=False)
    paid_before = loopback.count  # 5: four recorded + the one in flight when it crashed
    assert paid_before == 5
    responses = generate(client_for(loopback, tmp_path), jobs, progress=False)
    assert all(r.ok for r in responses)
    assert loopback.count - paid_before == 10 - 5  # only the unanswered ones were asked


def test_usage_and_cost_arithmetic(loopback, tmp_path):
    client = client_for(loopback, tmp_path, price_input_per_mtok=2.0, price_output_per_mtok=8.0)
    loopback.enqueue(Reply(text="a", prompt_tokens=1000, completion_tokens=500))
    ask(client, "q"), ask(client, "q")  # the second is a cache hit: no cost
    row = client.ledger.frame().iloc[0]
    assert row["cost_usd"] == pytest.approx((1000 * 2.0 + 500 * 8.0) / 1e6)  # = 0.006
    assert (row["calls"], row["requests"], row["cache_hits"]) == (2, 1, 1)
    assert (row["prompt_tokens"], row["completion_tokens"]) == (1000, 500)


def test_retry_after_header_forms():
    assert retry_after_seconds({"Retry-After": "2"}) == 2.0
    assert retry_after_seconds({"retry-after-ms": "250"}) == 0.25
    assert retry_after_seconds({}) is None
    date = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 30))
    assert 25 <= retry_after_seconds({"Retry-After": date}) <= 31


def test_missing_api_key_is_a_clear_error(loopback, monkeypatch):
    # a remote endpoint (never contacted: the key is checked first); loopback ones need none
    monkeypatch.delenv(KEY_ENV)
    with pytest.raises(Exception, match=f"needs the environment variable {KEY_ENV}"):
        ask(client_for(loopback, base_url="https://api.example.invalid/v1"))
    assert loopback.count == 0


# --- the sim provider ---------------------------------------------------------------


def _coin(request, knobs, rng):
    return SimReply("right" if rng.random() < knobs.accuracy_for("x") else "wrong")


def _sim_jobs(n):
    return [
        Job(
            str(i), ChatRequest(messages=[{"role": "user", "content": "q"}]), SimTask(_coin, str(i))
        )
        for i in range(n)
    ]


def test_sim_is_deterministic_per_seed_system_item():
    spec = ModelSpec(name="s", sim=SimSpec(accuracy=0.5))
    a = [r.text for r in generate(ModelClient(spec, seed=1), _sim_jobs(50), progress=False)]
    b = [r.text for r in generate(ModelClient(spec, seed=1), _sim_jobs(50), progress=False)]
    c = [r.text for r in generate(ModelClient(spec, seed=2), _sim_jobs(50), progress=False)]
    assert a == b and a != c
    assert all(r.simulated for r in generate(ModelClient(spec), _sim_jobs(2), progress=False))


def test_sim_accuracy_and_error_rate_match_their_knobs():
    spec = ModelSpec(name="s", sim=SimSpec(accuracy=0.8, error_rate=0.1))
    out = generate(ModelClient(spec), _sim_jobs(2000), progress=False)
    errors = np.mean([not r.ok for r in out])
    right = np.mean([r.text == "right" for r in out if r.ok])
    # binomial standard errors: sqrt(.1*.9/2000) = .0067, sqrt(.8*.2/1800) = .0094
    assert abs(errors - 0.1) < 4 * 0.0067 and abs(right - 0.8) < 4 * 0.0094
    assert all(r.error.startswith("sim_error") for r in out if not r.ok)


def test_sim_without_a_simulation_is_an_error_record():
    r = run_sync(
        ModelClient(ModelSpec(name="s")).chat(
            ChatRequest(messages=[{"role": "user", "content": "q"}])
        )
    )
    assert r.error.startswith("sim_unsupported") and r.attempts == 1


def test_sim_truth_enters_the_cache_key(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    client = ModelClient(ModelSpec(name="s"), cache=cache)
    req = ChatRequest(messages=[{"role": "user", "content": "q"}])
    k1 = client.key_for(req, SimTask(_coin, "1", truth={"answer": 1}))
    k2 = client.key_for(req, SimTask(_coin, "1", truth={"answer": 2}))
    assert k1 != k2


@pytest.mark.slow
def test_a_batch_sharded_over_processes_streams_every_result_back(loopback, tmp_path):
    # 2 worker processes, 8 in flight in all (4 each): every job answered once, in order,
    # checkpointed through on_result in this process, counted in this process's ledger.
    loopback.latency = 0.02
    client = client_for(loopback, tmp_path, processes=2, max_concurrency=8)
    jobs = [
        Job(str(i), ChatRequest(messages=[{"role": "user", "content": str(i)}])) for i in range(160)
    ]
    seen: list[str] = []
    out = generate(client, jobs, on_result=lambda job, r: seen.append(job.key), progress=False)
    assert [r.text for r in out] == [f"echo: {i}" for i in range(160)]
    assert sorted(seen, key=int) == [str(i) for i in range(160)]
    assert loopback.count == 160 and loopback.max_in_flight <= 8
    assert client.ledger.frame().iloc[0]["calls"] == 160
    again = generate(
        client_for(loopback, tmp_path, processes=2, max_concurrency=8), jobs, progress=False
    )
    assert all(r.cached for r in again) and loopback.count == 160  # workers wrote the cache


def test_a_sharded_replay_raises_its_cache_miss_before_any_worker_starts(loopback, tmp_path):
    client = client_for(loopback, tmp_path, mode="replay", processes=2)
    jobs = [
        Job(str(i), ChatRequest(messages=[{"role": "user", "content": str(i)}])) for i in range(128)
    ]
    with pytest.raises(CacheMiss, match="replay mode: no cached response"):
        generate(client, jobs, progress=False)
    assert loopback.count == 0 and not getattr(client, "shard_stats", None)


@pytest.fixture
def unfrozen(monkeypatch):
    """A process whose heap is not frozen for good (this test process's is, from its
    collection on: tests/conftest.py); frozen again afterwards."""
    import gc

    from evalbench.models import client

    monkeypatch.setattr(client, "_FOR_GOOD", [False])
    gc.unfreeze()
    yield
    monkeypatch.undo()
    client.freeze_for_good()


@pytest.mark.slow
def test_a_batch_keeps_the_heap_it_found_out_of_the_collectors_passes(loopback, unfrozen):
    # A full collection walked the whole heap with the loop stopped (~75 ms in a worker
    # process) while every response in flight waited; a batch now freezes what it found.
    import gc

    from evalbench.models.client import frozen_heap

    assert gc.get_freeze_count() == 0
    frozen: list[int] = []
    jobs = [
        Job(str(i), ChatRequest(messages=[{"role": "user", "content": str(i)}])) for i in range(3)
    ]
    on_result = lambda job, r: frozen.append(gc.get_freeze_count())  # noqa: E731
    generate(client_for(loopback), jobs, on_result=on_result, progress=False)
    assert len(frozen) == 3 and min(frozen) > 1000 and gc.get_freeze_count() == 0
    with frozen_heap():  # batches at once (two threads): the first to end unfreezes nothing
        with frozen_heap():
            pass
        assert gc.get_freeze_count() > 1000
    assert gc.get_freeze_count() == 0


def test_a_batch_leaves_a_heap_frozen_for_good_frozen(loopback, unfrozen):
    # A warm kernel freezes its imports for good, and again after each study's reset; the
    # first batch of a study unfroze them all (a %reset walked ~210,000 objects twice)
    import gc

    from evalbench.models.client import freeze_for_good, frozen_heap

    freeze_for_good()
    before = gc.get_freeze_count()
    assert before > 1000
    counts: list[int] = []
    jobs = [Job("a", ChatRequest(messages=[{"role": "user", "content": "a"}]))]
    on_result = lambda job, r: counts.append(gc.get_freeze_count())  # noqa: E731
    generate(client_for(loopback), jobs, on_result=on_result, progress=False)
    with frozen_heap():
        pass
    # (frozen objects that die on their last reference leave the count; none is given back)
    assert len(counts) == 1 and counts[0] > 0.9 * before
    assert gc.get_freeze_count() > 0.9 * before


def _pacer_starts(interval: float, count: int, then: float | None = None) -> np.ndarray:
    """When each of ``count`` starts queued at once leaves a pacer of ``interval``
    (``then``: the interval becomes that 0.1 s in, all of them waiting by then)."""
    from evalbench.models.client import Pacer

    async def starts() -> list[float]:
        pacer, loop, stamps = Pacer(interval), asyncio.get_running_loop(), []

        async def one() -> None:
            await pacer.wait()
            stamps.append(loop.time())

        async def measured() -> None:
            if then is not None:
                await asyncio.sleep(0.1)
                pacer.interval = then

        await asyncio.gather(measured(), *(one() for _ in range(count)))
        return stamps

    return np.array(asyncio.run(starts()))


def test_pacer_spaces_request_starts_by_its_interval():
    stamps = _pacer_starts(0.02, 6)
    # Slots at 0, 20, ..., 100 ms after the first: a timer may fire late, never early, so
    # start k is at least k * 20 ms after start 0 (1 ms for the loop's clock resolution).
    assert len(stamps) == 6 and np.all(stamps - stamps[0] >= 0.020 * np.arange(6) - 0.001)


def test_waiting_starts_follow_the_pacers_interval_as_it_changes():
    # The first wave of a batch: 256 starts queue at once while the interval is still the
    # 1 ms guess. They used to get their slots then, 1 ms apart, however fast the measured
    # interval fell once answers came back (256 ms for a wave the loop sends in ~80).
    stamps = _pacer_starts(0.2, 6, then=0.005)  # far less than the guess
    # the second start keeps its slot (0.2 s: it was next when the interval changed), the
    # rest have slots 5 ms apart after it: 0.22 s in all, where slots handed out up front
    # took 1 s. A timer may fire late, never early (1 ms for the loop's clock resolution);
    # a late one does not push the later slots back.
    assert len(stamps) == 6
    assert np.all(stamps[1:] - stamps[0] >= 0.2 + 0.005 * np.arange(5) - 0.001)
    assert stamps[-1] - stamps[0] < 0.6


def test_pacer_auto_interval_is_a_moving_average_of_loop_cpu_per_request(monkeypatch):
    from evalbench.models import client as client_module

    clock = iter([0.0, 0.002, 0.004, 1.004])
    monkeypatch.setattr(client_module.time, "thread_time", lambda: next(clock))
    pacer = client_module.Pacer(None)
    assert pacer.interval == 0.001  # the starting guess
    pacer.finished()  # first mark: nothing measured yet
    assert pacer.interval == 0.001
    pacer.finished()  # 2 ms of CPU for this request: 1 ms + (2 - 1) / 32 ms
    expected = 0.001 + 0.001 / 32
    assert pacer.interval == pytest.approx(expected)
    pacer.finished()
    expected += (0.002 - expected) / 32
    assert pacer.interval == pytest.approx(expected)
    pacer.finished()  # a one-second pause counts as 50 ms, not as one second
    expected += (0.05 - expected) / 32
    assert pacer.interval == pytest.approx(expected)


def test_pacing_spaces_real_requests_and_can_be_switched_off(loopback):
    jobs = [
        Job(str(i), ChatRequest(messages=[{"role": "user", "content": str(i)}])) for i in range(6)
    ]
    generate(client_for(loopback, pacing_ms=0), jobs[:1], progress=False)  # imports, warm-up
    loopback.reset()
    generate(client_for(loopback, pacing_ms=60, max_concurrency=6), jobs, progress=False)
    # Six starts 60 ms apart: the last reaches the server at least 5 * 60 ms after the
    # first's start, and the first's own trip (a new connection) is allowed one interval.
    assert np.ptp(loopback.arrivals) >= 5 * 0.060 - 0.060
    loopback.reset()
    generate(client_for(loopback, pacing_ms=0, max_concurrency=6), jobs, progress=False)
    assert np.ptp(loopback.arrivals) < 0.120  # all six at once


@pytest.mark.slow
def test_a_dropped_connection_is_a_connection_error_not_a_timeout(loopback):
    # The SDK's aiohttp transport raises APITimeoutError(ConnectTimeout('Server
    # disconnected')) for a reset; the root cause decides.
    loopback.enqueue(Fault("drop"), Fault("slow", seconds=1.5))  # past timeout_s
    client = client_for(loopback, max_retries=0, timeout_s=1)
    dropped, hung = ask(client), ask(client)
    assert dropped.error.startswith("connection_error: ServerDisconnectedError")
    assert hung.error.startswith("timeout: no response within 1")


def test_an_empty_choices_list_is_a_malformed_response(loopback):
    loopback.enqueue(Fault("empty"))
    response = ask(client_for(loopback, max_retries=0))
    assert response.error.startswith("malformed_response")


def test_stop_starts_no_new_request_and_keeps_those_in_flight(loopback):
    # Jobs 0-3 are in flight when STOP is set; they finish and are reported, nothing else
    # is sent (what run_sync does on Ctrl-C).
    from evalbench.models.client import STOP

    # The server holds every answer until STOP is set, and sets it when the 4th request
    # arrives: whatever the machine's load, no answer returns before the stop.
    loopback.hold = STOP
    loopback.on_request = lambda n: STOP.set() if n == 4 else None
    client = client_for(loopback, max_concurrency=4)
    done = []
    jobs = [Job(f"k{i}", ChatRequest(messages=[{"role": "user", "content": f"{i}"}]))
            for i in range(20)]  # fmt: skip

    async def go():
        return await agenerate(
            client, jobs, on_result=lambda j, r: done.append(j.key), progress=False
        )

    try:
        results = asyncio.run(go())
    finally:
        STOP.clear()
    assert loopback.count == 4 and sorted(done) == ["k0", "k1", "k2", "k3"]
    assert all(r.ok for r in results)


def test_run_sync_reuses_its_loop_thread_and_never_shares_a_busy_one():
    import threading

    async def where():
        return threading.current_thread()  # the object: a thread id may be reused

    async def nested():  # sync code inside a coroutine calling run_sync again
        return threading.current_thread(), run_sync(where())

    first, again = run_sync(where()), run_sync(where())
    outer, inner = run_sync(nested())
    assert first is again is outer and first is not threading.current_thread()  # reused
    assert inner is not outer  # the busy one was not shared (that would deadlock)


@pytest.mark.parametrize(
    ("reported", "counted"),
    [
        ({"prompt_tokens": -5, "completion_tokens": 10**12}, (None, None)),
        ({"prompt_tokens": 2.5, "completion_tokens": "7"}, (None, None)),
        ({"prompt_tokens": True, "completion_tokens": float("nan")}, (None, None)),
        ({"prompt_tokens": 12, "completion_tokens": 3.0}, (12, 3)),
        ({}, (None, None)),
    ],
)
def test_usage_that_is_no_token_count_is_unreported(reported, counted):
    # Before: a server's -5 prompt and 10^12 completion tokens were recorded as such and
    # priced: cost_usd 1999999.999995 in an ok run.
    from evalbench.models.providers import parse_completion

    body = {"choices": [{"message": {"role": "assistant", "content": "x"},
                         "finish_reason": "stop"}], "usage": reported}  # fmt: skip
    _, usage = parse_completion(body)
    assert (usage.prompt_tokens, usage.completion_tokens) == counted
