"""An interrupt (:data:`~evalbench.models.progress.STOP`: Ctrl-C or SIGTERM) stops every wait
before a request leaves: a rate limit's, and a retry's backoff or ``Retry-After``. Only the
requests already in flight are waited for; nothing is sent after it."""

from __future__ import annotations

import asyncio
import threading

import pytest
from loopback import Fault

from evalbench.models import ChatRequest, Job, ModelClient, ModelSpec, agenerate
from evalbench.models.concurrency import AdaptiveLimit
from evalbench.models.progress import STOP, NotSent

BOUND_S = 60.0  # generous: the waits under test are 1,000 minutes and 600 s long


def _jobs(n: int) -> list[Job]:
    return [Job(str(i), ChatRequest(messages=[{"role": "user", "content": f"q{i}"}]))
            for i in range(n)]  # fmt: skip


def _run_in_thread(client: ModelClient, jobs: list[Job]) -> tuple[threading.Thread, list]:
    out: list = []
    thread = threading.Thread(
        target=lambda: out.append(asyncio.run(agenerate(client, jobs, progress=False))),
        daemon=True,
    )
    thread.start()
    return thread, out


def _interrupt_after_the_first_request(loopback, stop_flag, thread: threading.Thread) -> None:
    """Set STOP once the server has the first request; the client must end within BOUND_S."""
    for _ in range(int(BOUND_S / 0.01)):
        if loopback.count == 1:
            break
        threading.Event().wait(0.01)
    stop_flag.set()
    thread.join(BOUND_S)
    assert not thread.is_alive()


@pytest.fixture
def stop_flag():
    STOP.clear()
    yield STOP
    STOP.clear()


def test_an_interrupt_stops_a_rate_limit_wait_and_sends_nothing_more(loopback, stop_flag):
    # One request per 1,000 minutes: the first leaves at once, the second waits 1,000 min.
    # Before: the interrupt left that wait alone and `evalbench run` hung until a second
    # signal (a single SIGTERM from `timeout` never ended it).
    spec = ModelSpec(name="r", provider="openai", model="m", base_url=loopback.base_url,
                     api_key_env=None, max_concurrency=1, requests_per_minute=0.001)  # fmt: skip
    thread, out = _run_in_thread(ModelClient(spec), _jobs(3))
    _interrupt_after_the_first_request(loopback, stop_flag, thread)  # then it waits
    (responses,) = out
    assert [r.ok for r in responses] == [True]  # the one sent; the others never left
    assert loopback.count == 1


def test_an_interrupt_stops_a_retry_wait_and_the_retry_is_never_sent(loopback, stop_flag):
    # A 429 asking to come back in 600 s: the retry waits. Before: after the interrupt it
    # still waited the 600 s and then sent the retry.
    loopback.enqueue(Fault("429", retry_after=600))
    spec = ModelSpec(name="r", provider="openai", model="m", base_url=loopback.base_url,
                     api_key_env=None, max_concurrency=1, max_retries=3)  # fmt: skip
    thread, out = _run_in_thread(ModelClient(spec), _jobs(1))
    _interrupt_after_the_first_request(loopback, stop_flag, thread)
    (responses,) = out
    (response,) = responses
    assert response.error == "http_429: Error code: 429 - injected 429 (after 1 attempt(s))"
    assert loopback.count == 1  # the retry was never sent


def test_an_interrupt_stops_the_hold_a_retry_after_puts_on_every_start(stop_flag):
    # Under max_concurrency: auto a Retry-After holds every start (here 600 s). Before:
    # the interrupt left that hold alone, and the request left when it was over.
    limit = AdaptiveLimit(4)

    async def start_during_a_hold() -> None:
        limit._paused_until = asyncio.get_running_loop().time() + 600
        asyncio.get_running_loop().call_later(0.05, stop_flag.set)
        await asyncio.wait_for(limit.acquire(10), BOUND_S)

    with pytest.raises(NotSent):
        asyncio.run(start_during_a_hold())
    assert limit.in_flight == 0


def test_an_agent_step_stopped_before_it_left_is_an_interrupted_task_not_an_error(stop_flag):
    # The reference agent's model call raises NotSent when the interrupt comes while it
    # waits to leave; the task must end as interrupted (not recorded), never as an
    # "error" record that a rerun would not redo.
    from types import SimpleNamespace

    from evalbench.agents.runner import Interrupted, _bounded

    async def step_stopped_before_it_left() -> None:
        stop_flag.set()
        raise NotSent

    with pytest.raises(Interrupted):
        asyncio.run(_bounded(step_stopped_before_it_left(), SimpleNamespace(max_time_s=BOUND_S)))
