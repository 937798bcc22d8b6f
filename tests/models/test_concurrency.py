"""``max_concurrency: auto``: the AIMD window and the rate-limit budget by hand, then against
the loopback server's token-bucket limit (x-ratelimit-* headers, 429 + Retry-After)."""

from __future__ import annotations

import asyncio

import pytest
from loopback import Fault, RateLimit, go_duration

from evalbench.models import ChatRequest, Job, ModelClient, ModelSpec, generate
from evalbench.models.concurrency import AdaptiveLimit, Budget, Ticket, parse_duration
from evalbench.models.providers import ProviderError

KEY_ENV = "EVALBENCH_TEST_KEY"


@pytest.fixture(autouse=True)
def _api_key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test-not-a-real-key")


def _client(server, **kw) -> ModelClient:
    spec = ModelSpec(name="auto", provider="openai", model="m", base_url=server.base_url,
                     api_key_env=KEY_ENV, max_retries=8, timeout_s=10, **kw)  # fmt: skip
    return ModelClient(spec, backoff_base_s=0.02)


def _jobs(n: int, **request) -> list[Job]:
    return [Job(str(i), ChatRequest(messages=[{"role": "user", "content": f"q{i}"}], **request))
            for i in range(n)]  # fmt: skip


def test_auto_is_the_default_for_real_providers_only_and_dumps_stay_as_they_were():
    real = ModelSpec(name="r", provider="openai", model="m")
    assert (real.max_concurrency, real.concurrency_limit) == ("auto", 64)
    assert ModelSpec(name="r", provider="openai", model="m", max_concurrency=8).max_concurrency == 8
    sim = ModelSpec(name="s")
    assert (sim.max_concurrency, sim.concurrency_limit) == (8, 8)
    later = {"concurrency_ceiling", "batch", "batch_discount", "batch_poll_s"}
    assert not later & (set(sim.model_dump(mode="json")) | set(real.model_dump(mode="json")))
    used = ModelSpec(name="r", provider="openai", model="m", concurrency_ceiling=16, batch=True,
                     batch_discount=0.4, batch_poll_s=1)  # fmt: skip
    assert later <= set(used.model_dump(mode="json"))
    with pytest.raises(ValueError, match="expected an integer from 1 to 1024 or 'auto', got 0"):
        ModelSpec(name="s", max_concurrency=0)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("1s", 1.0), ("6m0s", 360.0), ("20ms", 0.02), ("2m59.56s", 179.56), ("1h2m3s", 3723.0),
     ("7", 7.0), ("0.25", 0.25), ("1.5µs", 1.5e-6), ("abc", None), ("1x", None), (None, None)],
)  # fmt: skip
def test_reset_durations_in_go_style_or_seconds(text, seconds):
    assert parse_duration(text) == (pytest.approx(seconds) if seconds is not None else None)


def test_the_loopback_writes_reset_times_the_parser_reads_back():
    for seconds in (0.0123, 0.5, 1.25, 61.5, 360.0):
        assert parse_duration(go_duration(seconds)) == pytest.approx(seconds, abs=1e-3)


def test_the_budget_copy_by_hand():
    budget = Budget()
    assert budget.wait_s(1, now=0.0) == 0.0  # unknown until a response tells
    ticket = Ticket(seq=3, sent=10.0, used_requests=3, used_tokens=0, full=False)
    # limit 20, remaining 10, full again in 0.1 s: the deficit is 20 - 10 - 0.5 = 9.5
    # (remaining is rounded down), so the refill rate is 9.5 / 0.1 = 95 per second
    budget.observe(20, 10, 0.1, ticket, used_since=2, now=10.02)
    assert budget.rate == pytest.approx(95.0)
    # level now: 10 + 95 · (10.02 - 10.0) refilled - 2 sent since = 9.9
    assert budget.level == pytest.approx(9.9)
    assert budget.wait_s(1, now=10.02) == 0.0
    budget.take(9.6)
    # 0.3 left; a request needs 1 plus a margin of min(1, (20 - 1) / 2, 95 · 0.02) = 1:
    # (2 - 0.3) / 95 seconds
    assert budget.wait_s(1, now=10.02) == pytest.approx(1.7 / 95)
    older = Ticket(seq=2, sent=9.9, used_requests=2, used_tokens=0, full=False)
    budget.observe(20, 19, 0.01, older, used_since=3, now=10.02)  # stale: ignored
    assert budget.level == pytest.approx(0.3)


def test_aimd_grows_per_success_halves_once_per_window_and_holds_for_retry_after():
    async def scenario():
        limit = AdaptiveLimit(ceiling=10, start=2)
        loop = asyncio.get_running_loop()
        first, second = await limit.acquire(1), await limit.acquire(1)
        assert (first.full, second.full) == (False, True)  # the second filled the window
        limit.release(second, {})  # a success that used the whole window: slow start, +1
        limit.release(first, {})  # the window was not full when it started: no growth
        assert limit.window == 3
        tickets = [await limit.acquire(1) for _ in range(3)]
        late = await asyncio.wait_for(_blocked(limit), 0.1)  # a 4th must wait for a slot
        assert late
        rate_limited = ProviderError("http_429: slow down", retryable=True, retry_after=0.2,
                                     status=429)  # fmt: skip
        limit.release(tickets[0], rate_limited)
        assert (limit.window, limit.threshold, limit.cuts) == (1.5, 1.5, 1)
        limit.release(tickets[1], rate_limited)  # same burst: not halved again
        assert (limit.window, limit.cuts) == (1.5, 1)
        limit.release(tickets[2], None)  # cancelled: no signal either way
        started = loop.time()
        ticket = await limit.acquire(1)  # held until Retry-After has passed
        assert loop.time() - started >= 0.19
        limit.release(ticket, {})  # at the threshold: + 1 / window (congestion avoidance)
        assert limit.window == pytest.approx(1.5 + 1 / 1.5)

    asyncio.run(scenario())


async def _blocked(limit: AdaptiveLimit) -> bool:
    task = asyncio.ensure_future(limit.acquire(1))
    await asyncio.sleep(0.02)
    blocked = not task.done()
    task.cancel()
    return blocked


def test_a_ceiling_is_never_exceeded_and_is_reached(loopback):
    loopback.latency = 0.05
    responses = generate(_client(loopback, concurrency_ceiling=6), _jobs(80), progress=False)
    assert all(r.ok for r in responses)
    assert loopback.max_in_flight == 6


def test_a_429_without_headers_holds_every_start_for_its_retry_after(loopback):
    loopback.latency = 0.02
    loopback.enqueue(Fault("429", retry_after=0.3))
    responses = generate(_client(loopback), _jobs(12), progress=False)
    assert all(r.ok for r in responses)
    refused = loopback.arrivals[0]
    later = [t for t in loopback.arrivals if t > refused + 0.02]
    # requests already sent with it (the first window of 4) arrive at once; every later
    # start waits out the 0.3 s
    assert later and min(later) - refused >= 0.29


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["requests", "tokens"])
def test_auto_converges_under_a_token_bucket_limit(loopback, kind):
    # 100 requests/s (burst 20), or 50 tokens per request (4 prompt chars / 4 + 49
    # max_tokens) at 5,000 tokens/s (burst 1,000): both allow 100 requests per second
    loopback.latency = 0.05
    loopback.rate_limit = (
        RateLimit(requests_per_s=100, request_burst=20) if kind == "requests"
        else RateLimit(tokens_per_s=5000, token_burst=1000)
    )  # fmt: skip
    n = 300
    responses = generate(_client(loopback), _jobs(n, max_tokens=49), progress=False)
    assert all(r.ok for r in responses)
    served = loopback.count - loopback.rejected
    assert served == n
    span = loopback.arrivals[-1] - loopback.arrivals[0]
    rate = (n - 20) / span  # the first 20 ride on the initial burst
    # converges: near the allowed rate, and rarely refused (the benchmark measures it:
    # see tests/bench_models.py, configuration rate_limited)
    assert 75 <= rate <= 105
    assert loopback.rejected <= 0.05 * loopback.count
