"""How many requests go out at once: a fixed number, or ``max_concurrency: auto``.

``auto`` needs no tuning; it listens to the server, as TCP does to the network:

* **AIMD window** (additive increase, multiplicative decrease): start with
  :data:`START_WINDOW` requests in flight; while requests succeed and the window is what
  holds requests back, grow it by one per success (slow start, doubling per round trip) up
  to the first sign of overload, then by one per window's worth of successes; on a 503, a
  timeout or a 429 the server's rate-limit headers do not account for, halve it (once per
  window: the other failures of the same burst do not halve it again). A 429 or 503 holds
  every new request until the server's ``Retry-After`` has passed. Never above
  ``concurrency_ceiling``.
* **Latency** (:class:`LatencySignal`): a server that queues instead of refusing
  (llama-cpp-python's, one request at a time, never a 429 or 503) says "too many" only by
  answering later. When latency grows with the requests in flight (faster than their square
  root: more in flight would buy less than that in throughput), the window grows no more and
  is held to what the server works on at once (Little's law, with its own time measured on
  requests sent alone, as TCP Vegas and Netflix's concurrency-limits estimate it) plus a
  small queue. Against one slot it settles at 2 in flight, also when the engine's speed
  swings with the machine's load (each estimate pairs measurements taken together, so a
  slower engine is not read as a longer queue). Latency is timed on the wire:
  from when a request leaves (after any wait in evalbench) to its answer, as the
  ``timeout_s`` clock is.
* **Rate-limit budget**: when the server sends ``x-ratelimit-limit-/remaining-/reset-
  requests`` and ``-tokens`` (OpenAI and most compatible servers do), the client keeps its
  own copy of each server-side token bucket: the level is re-read from every response
  (minus what was sent after that request), the refill rate is
  ``(limit - remaining) / reset`` (``reset`` is the time until the bucket is full again), and
  a request starts only when both buckets hold its share. That is what keeps a rate-limited
  run just under its limit instead of bouncing off it with 429s (``make bench``).

Header formats (OpenAI's rate-limit guide): ``x-ratelimit-reset-*`` is a Go-style duration
(``1s``, ``6m0s``, ``20ms``); other servers send plain seconds. Both are read
(:func:`parse_duration`); anything unreadable is ignored, never guessed.
"""

from __future__ import annotations

import asyncio
import math
import re
import statistics
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evalbench.models.progress import pause

START_WINDOW = 4
"""Requests in flight when an ``auto`` run starts."""
MAX_PAUSE_S = 600.0
"""Longest hold of new requests after a 429/503 with ``Retry-After``."""
DEFAULT_PAUSE_S = 0.5
"""Hold after a 429/503 that names no ``Retry-After``."""
MARGIN_S = 0.02
"""Refill time kept in reserve in the rate-limit budget (see :meth:`Budget._margin`)."""
MIN_ROUND = 4
"""Answers per round of the latency signal, at least (else the window's worth)."""
ROUND_ERROR = 0.1
"""Standard error of a round's mean log latency the round size aims at (≈ ±10%)."""
MAX_ROUND = 64
"""Answers per round at most (however much latencies vary)."""
HISTORY = 32
"""Rounds and lone answers the latency signal looks back for one to compare the latest with."""
BESIDE = 2
"""While it queues, how many of the latest rounds may clear the queue (none further back)."""
LONE_KEPT = 8
"""Answers to requests sent alone that ``no_load`` averages."""
CAPACITY_KEPT = 7
"""Pairs (a lone answer, the round beside it) whose median is ``capacity``."""
CHANGE = math.log(1.5)
"""A round's throughput this far from the one paired last sends a probe (drift or a change
of capacity: the pair tells which)."""
CHANGE_SPACING = 4
"""Rounds that find a queue between two such probes, at least."""
MIN_SPREAD = math.log(1.2)
"""Rounds are compared when their mean in-flight counts are at least 20% apart."""
SIGNIFICANT = 3.0
"""Standard errors an elasticity must lie from 1/2 to tell a queue from none."""
POOL_DECAY = 0.9
"""Weight of older rounds in the pooled spread of latencies."""
_DECAY = 0.9  # weight of older observations in the refill-rate estimate
_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|us|µs|ns|h|m|s)")


def parse_duration(value: str | None) -> float | None:
    """Seconds from a rate-limit reset header: ``"1s"``, ``"6m0s"``, ``"20ms"``, ``"7"``.

    Returns ``None`` for a missing or unreadable value.
    """
    if value is None:
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        parts = _PART.findall(text)
        if not parts or "".join(n + u for n, u in parts) != text:
            return None
        seconds = sum(float(n) * _UNITS[u] for n, u in parts)
    return seconds if seconds >= 0 else None


def _number(headers: Mapping[str, str], name: str) -> float | None:
    value = headers.get(name)
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        return None


@dataclass(slots=True)
class Ticket:
    """One admitted request: what the limiter needs to read its response."""

    seq: int
    sent: float
    """When it left (the caller updates it after any wait of its own, e.g. pacing: the
    server's headers describe the bucket as of the request's arrival)."""
    used_requests: float
    """Requests admitted so far, this one included."""
    used_tokens: float
    full: bool
    """Whether the window was full when it started (then its success grows the window)."""
    in_flight: int = 1
    """Requests in flight when it started, itself included (1: it went alone)."""


class FixedLimit:
    """``max_concurrency: N``: at most N requests in flight, nothing adaptive."""

    def __init__(self, limit: int):
        self._semaphore = asyncio.Semaphore(limit)

    async def acquire(self, tokens: int) -> Ticket | None:
        """Wait for a free slot."""
        await self._semaphore.acquire()
        return None

    def release(self, ticket: Ticket | None, outcome: Any = None) -> None:
        """Free the slot."""
        self._semaphore.release()


class Budget:
    """The client's copy of one server-side token bucket (requests or tokens).

    Unknown until the first response that carries the headers; then the level is
    re-synchronised from each response newer than the last one used, and runs down by what
    this client sends in between.

    Args:
        share: the part of the observed bucket this client may use (``1/N`` for N worker
            processes on one key).
    """

    def __init__(self, share: float = 1.0):
        self.share = share
        self.limit: float | None = None
        self.level: float | None = None
        self.rate: float | None = None
        self.stamp = 0.0
        self.full_at: float | None = None
        self._seq = -1
        self._deficit = 0.0
        self._reset = 0.0

    def observe(
        self, limit: float | None, remaining: float | None, reset_s: float | None,
        ticket: Ticket, used_since: float, now: float,
    ) -> None:  # fmt: skip
        """Read one response's headers (``used_since``: sent after that request)."""
        if remaining is None or ticket.seq < self._seq:
            return
        if reset_s is not None and reset_s > MAX_PAUSE_S:  # 10^9 s: 21 years for the next
            reset_s = None  # request; no hold is longer than MAX_PAUSE_S (the server's 429s
            # and their Retry-After pace it then)
        self._seq = ticket.seq
        if limit is not None and limit > 0:
            self.limit = limit * self.share
        if limit is not None and reset_s is not None and reset_s > 0 and limit > remaining + 0.5:
            # ``remaining`` is a whole number (the level rounded down): the deficit the reset
            # time was computed from lies in (limit - remaining - 1, limit - remaining]
            self._deficit = _DECAY * self._deficit + (limit - remaining - 0.5)
            self._reset = _DECAY * self._reset + reset_s
            self.rate = self.share * self._deficit / self._reset
        self.full_at = ticket.sent + reset_s if reset_s is not None else None
        level = remaining * self.share
        if self.rate is not None:
            level += self.rate * (now - ticket.sent)
        if self.limit is not None:
            level = min(level, self.limit)
        self.level, self.stamp = level - used_since, now

    def emptied(self, now: float) -> None:
        """The server refused a request for want of budget: nothing is left now."""
        if self.level is not None:
            self.level, self.stamp = min(self.level, 0.0), now

    def _refill(self, now: float) -> None:
        assert self.level is not None
        if self.rate is not None:
            self.level += self.rate * (now - self.stamp)
        elif self.full_at is not None and now >= self.full_at:
            self.level = max(self.level, self.limit or 1.0)  # reset passed: full again
        if self.limit is not None:
            self.level = min(self.level, self.limit)
        self.stamp = now

    def wait_s(self, amount: float, now: float) -> float:
        """Seconds until ``amount`` fits (0: now)."""
        if self.level is None:
            return 0.0
        self._refill(now)
        need = min(amount, self.limit) if self.limit is not None else amount
        need += self._margin(need)
        if self.level >= need:
            return 0.0
        if self.rate:
            return (need - self.level) / self.rate
        if self.full_at is not None and self.full_at > now:
            return self.full_at - now
        return 0.0

    def _margin(self, need: float) -> float:
        """Budget left in the bucket on top of a request's own share.

        The copy lags the server by the time a request takes to arrive, and the event loop
        starts requests a little late or early: without a margin some land just before the
        refill. At a steady rate a constant margin costs no throughput (the bucket merely
        never runs quite dry): :data:`MARGIN_S` of refill, at most one request's share and
        half of what the bucket holds beyond it.
        """
        if not self.rate:
            return 0.0
        room = (self.limit - need) / 2 if self.limit is not None else need
        return max(0.0, min(need, room, self.rate * MARGIN_S))

    def take(self, amount: float) -> None:
        """Spend ``amount`` (after :meth:`wait_s` said it fits)."""
        if self.level is not None:
            self.level -= amount


class _Sums:
    """Running sums over answers: enough for their means and a least-squares fit of log
    latency (``y``) on log in-flight (``x``). Mutable: one per round, added to in place
    (this runs once per answer, on the event loop)."""

    __slots__ = (
        "answers", "full_in_flight", "full_latency", "in_flight", "latency",
        "x", "xx", "xy", "y", "yy",
    )  # fmt: skip

    def __init__(self) -> None:
        self.answers = 0
        self.x = self.y = self.xx = self.xy = self.yy = 0.0
        self.in_flight = 0.0  # sum of in-flight counts
        self.latency = 0.0  # sum of latencies (s)
        self.full_in_flight = self.full_latency = 0.0  # the same, of full-window requests

    def add(self, latency: float, in_flight: float, full: bool = True) -> None:
        """Count one more answer (``full``: its request went with the window full)."""
        x, y = math.log(in_flight), math.log(latency)
        if full:
            self.full_in_flight += in_flight
            self.full_latency += latency
        self.answers += 1
        self.x += x
        self.y += y
        self.xx += x * x
        self.xy += x * y
        self.yy += y * y
        self.in_flight += in_flight
        self.latency += latency

    def rate(self) -> float:
        """Answers per second (Little's law: mean in-flight over mean latency), of requests
        sent with the window full if any (a refill after a probe, sent all at once, ranks its
        requests 1, 2, 3... in flight though the server takes them all together)."""
        if self.full_latency > 0:
            return self.full_in_flight / self.full_latency
        return self.in_flight / self.latency

    def merged(self, other: _Sums) -> _Sums:
        """The sums over both sets of answers (a new object)."""
        both = _Sums()
        for name in _Sums.__slots__:
            setattr(both, name, getattr(self, name) + getattr(other, name))
        return both

    def fit(self) -> tuple[float, float, float, int]:
        """(slope, its spread ``Sxx``, residual variance, degrees of freedom); without spread
        in ``x`` the slope is 0 and the residuals are the deviations from the mean."""
        n = self.answers
        sxx = self.xx - self.x * self.x / n
        sxy = self.xy - self.x * self.y / n
        syy = max(0.0, self.yy - self.y * self.y / n)
        spread = sxx > 1e-9
        slope = sxy / sxx if spread else 0.0
        freedom = n - (2 if spread else 1)
        residual = max(0.0, syy - slope * sxy) / freedom if freedom > 0 else 0.0
        return slope, sxx, residual, max(0, freedom)


class LatencySignal:
    """Whether a server queues, and how many requests it works on at once, from latencies.

    **Queue or not.** Each answer is a point: the log of the requests in flight when it was
    sent (itself included) and the log of its latency on the wire. A server that queues
    answers later the more requests it holds: latency grows in proportion to the requests in
    flight, an *elasticity* (the least-squares slope of log latency on log in-flight) near 1;
    a server that does not queue answers in its own time however many are in flight, an
    elasticity near 0. Answers are read in rounds (a window's worth, at least
    :data:`MIN_ROUND`, more when latencies vary); an answer to a request sent alone is a
    point of its own. Each round (and each lone answer) is fitted together with the latest
    earlier one whose in-flight count differs by at least 20% and which tells the two apart:
    a slope more than :data:`SIGNIFICANT` standard errors above 1/2 (the geometric middle) is
    a queue, as far below is none. Latencies vary by request (long answers take longer): that
    variation (the fits' residuals, pooled over recent rounds) widens the standard error, so
    it cannot pass for a queue. With none that tells (a steady window), the verdict stays.
    Fitting rounds beside each other keeps it local: a server with C slots answers in its own
    time up to C in flight and later only beyond.

    **Drift.** On a shared machine the engine's own speed swings (×2 measured for
    llama-cpp-python under a load of 2-5 on 2 cores): at one in-flight count a slower engine
    looks exactly like a longer queue. So comparisons are kept beside each other in time: a
    queue, once found, is cleared only by a round at more in flight than one of the latest
    :data:`BESIDE` rounds (rounds further back were measured at another speed), and the
    server's concurrency is read from pairs measured together.

    **How many at once.** While it queues, a request sent alone (:attr:`probe`: the window
    drops to 1 until the others are answered) takes the server's own time ``L``; the round
    right after it answers ``N / R`` requests per second (``N`` in flight on average, mean
    latency ``R``, of its requests sent with the window full: Little's law). Not the round
    before: it was measured before the others drained (9 s against one slot at the start),
    and the engine's speed can change meanwhile. The server works on ``C = L · N / R``
    requests at once (TCP Vegas's expected vs actual throughput); a slower engine stretches
    ``L`` and ``R`` alike, so ``C`` does not drift. ``C`` is the median of the last
    :data:`CAPACITY_KEPT` pairs (in log: a lone request of unusual length, or a pair the
    engine's speed changed between, does not move it; a server that changed does within two
    probes), the smallest while there are fewer than 3 (against one slot one pair too high
    puts 3 in flight; one too low costs nothing), measured afresh when a queue is found again
    after none was. The window is held
    to ``C`` (1 at least) plus a queue of its square root (Netflix's ``Gradient2Limit``
    allows a queue of the square root of its limit): against one slot, 2 in flight. A round
    that finds no queue drops the lone answers before it (a server that is not saturated
    answers in ``L``, which says nothing of its capacity).

    **Probes** go after the 1st, 4th, 16th and 64th round that finds a queue and every 128th
    (the 2nd, 8th and 32nd too while ``C`` < 2; every one while ``C`` is unknown, the window
    halved meanwhile), as Netflix's
    ``VegasLimit`` measures its ``rtt_noload`` again every ``probeMultiplier`` × limit
    samples; and when a round's throughput moved by half from the round paired last (the
    engine's speed or the server's slots changed: the next pair tells which) or the latest
    pair lay that far from ``C``. Against one slot a probe costs the server one idle trip of
    a request on the wire.

    Limits: the verdict needs answers in roughly the order their requests arrived (a FIFO
    queue, as llama.cpp's and vLLM's schedulers keep); a server that picks waiting requests
    at random spreads latencies so widely that no round tells, and the window grows until
    timeouts halve it, as without the latency signal. Where more in flight still buys
    throughput but less than its square root (elasticity above 1/2: batching servers near
    saturation), the window stops growing there, for latency's sake.

    References: Netflix/concurrency-limits (``VegasLimit``: ``queue_use = limit ×
    (1 − rtt_noload / rtt)`` and its periodic ``rtt_noload`` probe; ``Gradient2Limit``: a
    queue of ``√limit``); Brakmo & Peterson, "TCP Vegas: end to end congestion avoidance on a
    global Internet" (1995).
    """

    def __init__(self) -> None:
        self.queueing = False
        """The latest verdict: the server queues (then the window does not grow)."""
        self.decided = False
        """Whether any comparison has told (queue or none) yet."""
        self.elasticity: float | None = None
        """The latest comparison's elasticity (``None``: nothing to tell it apart from)."""
        self.rounds = 0
        self.probe = False
        """Set when a request should go alone (the limiter sends one, then clears it)."""
        self._lone: deque[float] = deque(maxlen=LONE_KEPT)
        self._lone_seen = 0
        self._first: _Sums | None = None  # the very first lone answer (a cold server's?)
        self._unpaired: list[float] = []  # lone answers waiting for a round
        self._pairs: deque[float] = deque(maxlen=CAPACITY_KEPT)  # log C, one per pair
        self._far = False  # whether the latest pair lay :data:`CHANGE` from the median
        self._rate: float | None = None  # answers per second of the latest round
        self._paired_rate: float | None = None  # ... of the round paired last
        self._probed = 0  # rounds that had found a queue at the latest probe
        self._history: deque[_Sums] = deque(maxlen=HISTORY)  # rounds and lone answers
        self._round = _Sums()
        self._size = 0  # answers this round takes (set by its first answer)
        self._queued = 0  # rounds that found a queue
        self._squares = self._freedom = 0.0  # pooled residual variance of log latency

    @property
    def no_load(self) -> float | None:
        """The server's own time per request: the mean latency of the last requests sent
        alone (``None`` before the first)."""
        return sum(self._lone) / len(self._lone) if self._lone else None

    @property
    def capacity(self) -> float | None:
        """Requests the server works on at once (see the class; ``None``: not measured)."""
        if not self._pairs:
            return None
        pairs = self._pairs  # the smallest while there are few: too many is what costs
        return math.exp(statistics.median(pairs) if len(pairs) >= 3 else min(pairs))

    @property
    def noise(self) -> float:
        """One answer's spread of log latency that in-flight counts do not explain, pooled
        over recent rounds (0 before the first)."""
        return math.sqrt(self._squares / self._freedom) if self._freedom else 0.0

    def sample(self, latency: float, in_flight: int, full: bool = True) -> float | None:
        """One answer: ``latency`` on the wire, ``in_flight`` when it was sent (itself
        included), ``full``: whether the window was full then. Returns the most requests in
        flight the latency allows when this answer ends a round, or when it went alone and
        found a queue (``math.inf``: no limit), else ``None``."""
        if not latency > 0 or not math.isfinite(latency):
            return None
        if in_flight <= 1:
            return self._alone(latency)
        if not self._round.answers:
            self._size = self._round_size(in_flight)
        self._round.add(latency, in_flight, full)
        if self._round.answers < self._size:
            return None
        now, self._round = self._round, _Sums()
        _, _, residual, freedom = now.fit()
        self._squares = POOL_DECAY * self._squares + residual * freedom
        self._freedom = POOL_DECAY * self._freedom + freedom
        self._rate = now.rate()
        self.rounds += 1
        self._judge(now)
        if not self.queueing:
            if self.elasticity is not None:  # no queue: the server was not saturated
                self._unpaired.clear()
            return math.inf
        for lone in self._unpaired:  # L · N / R: what the server works on at once
            self._pair(lone)
        self._unpaired.clear()
        self._queued += 1
        if self._scheduled() or self._changed():
            self.probe = True
            self._probed = self._queued
        return self._allowed(now)

    def _scheduled(self) -> bool:
        """A probe after the 1st, 4th, 16th, 64th and every 128th round that found a queue;
        while the server works on fewer than 2 at once, after the 2nd, 8th and 32nd too (a
        probe costs it one idle trip, and ``C`` + ``√C`` reaches 3 in flight at ``C`` = 1.7:
        the median needs its pairs soon)."""
        queued, capacity = self._queued, self.capacity
        if queued in (1, 4, 16, 64) or queued % 128 == 0:
            return True
        return queued in (2, 8, 32) and (capacity is None or capacity < 2)

    def _changed(self) -> bool:
        """Whether the latest round's throughput moved :data:`CHANGE` from the one paired
        last, or the latest pair lay that far from the median (one more pair to tell drift,
        noise and a changed server apart), and the latest probe was :data:`CHANGE_SPACING`
        rounds ago."""
        if self._paired_rate is None or self._rate is None:
            return False
        moved = abs(math.log(self._rate / self._paired_rate)) > CHANGE
        return (moved or self._far) and self._queued - self._probed >= CHANGE_SPACING

    def _alone(self, latency: float) -> float | None:
        """An answer to a request sent alone: the server's own time (paired with the round
        after it) and a point to compare rounds with; the window when it found a queue."""
        if self._lone_seen == 1:  # the very first may be a cold server's: it goes now
            self._forget_first()
        self._lone_seen += 1
        self._lone.append(latency)
        point = _Sums()
        point.add(latency, 1)
        if self._lone_seen == 1:
            self._first = point
        self._unpaired.append(latency)  # paired with the round after it
        found = not self.queueing
        self._judge(point)
        rounds = [r for r in self._history if r.answers > 1]
        if not (found and self.queueing and rounds):
            return None
        if self.capacity is None:  # a queue, found by this answer: halve until the pair
            return max(1.0, rounds[-1].in_flight / rounds[-1].answers / 2)
        return self._allowed(rounds[-1])

    def _forget_first(self) -> None:
        """Drop the very first lone answer and its pair (the only lone answer so far, so the
        only pair)."""
        self._lone.clear()
        self._unpaired.clear()
        self._pairs.clear()
        if self._first is not None and self._first in self._history:
            self._history.remove(self._first)

    def _judge(self, now: _Sums) -> None:
        """Compare ``now`` (a round or a lone answer) with what came before: the verdict."""
        self.elasticity = self._compare(now)
        self._history.append(now)
        if self.elasticity is not None:  # else nothing tells: the verdict stays
            if self.elasticity > 0.5 and not self.queueing:  # a queue (again): measured
                self._queued = self._probed = 0  # afresh, probes as at first
                self._pairs.clear()
            self.queueing = self.elasticity > 0.5
            self.decided = True

    def _allowed(self, now: _Sums) -> float:
        """The window while it queues: ``C`` plus a queue of ``√C``; halved from ``now``'s
        in-flight count (and a probe) while ``C`` is not measured."""
        capacity = self.capacity
        if capacity is None:  # nothing sent alone beside a queue yet: halve until a probe
            self.probe = True
            return max(1.0, now.in_flight / now.answers / 2)
        capacity = max(1.0, capacity)  # a server that answers works on one at least
        return capacity + math.sqrt(capacity)

    def _pair(self, latency: float) -> None:
        """``L · N / R``: what the server works on at once, one more pair of the median."""
        assert self._rate is not None
        estimate = math.log(latency * self._rate)
        self._far = bool(self._pairs) and abs(estimate - statistics.median(self._pairs)) > CHANGE
        self._pairs.append(estimate)
        self._paired_rate = self._rate

    def _round_size(self, in_flight: int) -> int:
        """A window's worth of answers (the requests in flight when the round's first answer
        was sent), at least :data:`MIN_ROUND`, and enough for a mean log latency within
        :data:`ROUND_ERROR` (one standard error) given how much answers have varied (at most
        :data:`MAX_ROUND`)."""
        noisy = self._squares / self._freedom / ROUND_ERROR**2 if self._freedom else 0.0
        return max(MIN_ROUND, in_flight, min(MAX_ROUND, math.ceil(noisy)))

    def _compare(self, now: _Sums) -> float | None:
        """The slope fitted with the latest earlier round or lone answer that tells (see the
        class). While it queues, only a round at more in flight than one of the latest
        :data:`BESIDE` rounds can clear the queue (room above); not a round at fewer (the
        refill after a probe, below the server's slots: it says nothing of room above),
        nor a lone answer, whose slope to a round spans the server's free slots too (from 1
        to 11 in flight against 8 slots: 0.1)."""
        earlier: list[_Sums] | deque[_Sums] = self._history
        if self.queueing:
            if now.answers == 1:
                return None
            earlier = [r for r in self._history if r.answers > 1][-BESIDE:]
        for before in reversed(earlier):
            step = now.in_flight / now.answers / (before.in_flight / before.answers)
            if abs(math.log(step)) < MIN_SPREAD or (self.queueing and step < 1):
                continue
            slope, sxx, residual, _ = before.merged(now).fit()
            # the residual spread, or the pooled noise if larger: a fit of a few answers
            # can look steadier than the server is
            error = max(math.sqrt(residual), self.noise) / math.sqrt(sxx)
            if abs(slope - 0.5) > SIGNIFICANT * error:
                return slope
        return None

    def grows(self) -> bool:
        """Whether answers may grow the window: no queue found (so far)."""
        return not self.queueing


class AdaptiveLimit:
    """``max_concurrency: auto``: an AIMD window, the latency signal, and the server's
    rate-limit budget.

    Args:
        ceiling: the most requests in flight ever (``concurrency_ceiling``).
        start: the first window.
        share: the part of the server's observed budget this client may use.
    """

    def __init__(self, ceiling: int, *, start: int = START_WINDOW, share: float = 1.0):
        self.ceiling = ceiling
        self.window = float(min(start, ceiling))
        self.threshold = float(ceiling)  # slow start ends here (TCP's ssthresh)
        self.in_flight = 0
        self.requests, self.tokens = Budget(share), Budget(share)
        self.latency = LatencySignal()
        self.cuts = 0
        self.latency_cuts = 0
        """Times the latency signal lowered the window."""
        self._restore: float | None = None  # the window to go back to after a probe
        self._first_answer: float | None = None  # when the first answer came back
        self._first_latency = 0.0  # and how long it took
        self.max_window = self.window
        self._seq = 0
        self._cut_seq = -1
        self._used_requests = 0.0
        self._used_tokens = 0.0
        self._paused_until = 0.0
        self._waiters: deque[asyncio.Future[None]] = deque()
        self.waiting = 0
        """Requests waiting for a slot in the window right now (their successes grow it)."""

    async def acquire(self, tokens: int) -> Ticket:
        """Wait until the window, any ``Retry-After`` hold and both budgets allow a start."""
        loop = asyncio.get_running_loop()
        while True:
            now = loop.time()
            if now < self._paused_until:  # an interrupt ends these waits (NotSent)
                await pause(self._paused_until - now)
                continue
            if self.in_flight >= int(self.window):
                await self._wait_for_slot(loop)
                continue
            wait = max(self.requests.wait_s(1, now), self.tokens.wait_s(tokens, now))
            if wait > 0:
                await pause(wait)
                continue
            return self.admit(tokens, now)

    def admit(self, tokens: int, now: float) -> Ticket:
        """Start one request now (the caller checked the window, holds and budgets)."""
        self.requests.take(1)
        self.tokens.take(tokens)
        self.in_flight += 1
        self._seq += 1
        self._used_requests += 1
        self._used_tokens += tokens
        full = self.in_flight >= int(self.window)
        return Ticket(self._seq, now, self._used_requests, self._used_tokens, full, self.in_flight)

    async def _wait_for_slot(self, loop: asyncio.AbstractEventLoop) -> None:
        waiter: asyncio.Future[None] = loop.create_future()
        self._waiters.append(waiter)
        self.waiting += 1
        try:
            await waiter
        finally:
            self.waiting -= 1
            if not waiter.done():
                waiter.cancel()

    def _wake(self) -> None:
        free = int(self.window) - self.in_flight
        while free > 0 and self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                free -= 1

    def release(self, ticket: Ticket | None, outcome: Any = None, now: float | None = None) -> None:
        """One request ended: ``outcome`` is its response headers or its ProviderError
        (``None``: cancelled, no signal); ``now`` defaults to the event loop's clock."""
        if ticket is None:
            return
        self.in_flight -= 1
        now = asyncio.get_running_loop().time() if now is None else now
        failure = outcome if isinstance(getattr(outcome, "reason", None), str) else None
        headers = getattr(failure, "headers", None) if failure is not None else outcome
        if headers is not None and hasattr(headers, "get"):
            self._observe(ticket, headers, now)
        if failure is not None and _congested(failure):
            self._back_off(ticket, failure, now)
        elif failure is None and outcome is not None:
            self._succeeded(ticket, now - ticket.sent)
        self._wake()

    def _succeeded(self, ticket: Ticket, latency: float) -> None:
        """Read one answer's latency: while the server queues the window follows what the
        latency signal allows; otherwise it grows (slow start: +1, then +1/window).

        Answers to requests sent before the first answer came back are not read (but the
        first answer itself, to a request sent alone): a server's first answer can be slow
        (llama-cpp-python's took 3 times the next ones), and every request queued behind it
        with it. Until the latency signal has told anything, an answer that took over twice
        the first answer's time sends one request alone (a queue forming, perhaps: TCP's
        HyStart leaves slow start on such a rise), if none has gone alone yet: without it,
        rounds that all grow at once tell nothing against each other, and the window grew to
        15 against llama-cpp-python's one slot before they did.
        """
        if self._restore is not None and ticket.in_flight <= 1:  # the probe came back
            self.window, self._restore = self._restore, None
        if self._first_answer is None:
            self._first_answer, self._first_latency = ticket.sent + latency, latency
            read = ticket.in_flight <= 1
        else:  # not if sent before any answer came back (queued behind a cold first one)
            read = ticket.sent >= self._first_answer
        # before the latency signal tells anything, answers grow the window in slow start
        # only within twice the server's own time (or the first answer's): a queue forming,
        # perhaps (TCP's HyStart leaves slow start on such a rise)
        signal = self.latency
        own = signal.no_load or self._first_latency
        slow = 0 < own < latency / 2 and not signal.decided
        allowed = signal.sample(latency, ticket.in_flight, ticket.full) if read else None
        if allowed is not None and allowed != math.inf:
            self._follow(min(float(self.ceiling), max(1.0, allowed)))
        if read and slow and signal.no_load is None:
            signal.probe = True  # with no lone answer, rounds that grow alike tell nothing
        if signal.probe:  # measure the server's own time: the next request goes alone
            signal.probe = False
            if self._restore is None:  # (one probe at a time)
                self._restore, self.window = self.window, 1.0
        elif (
            (read or not slow)
            and not (slow and self.window < self.threshold)
            and self._restore is None
            and (ticket.full or self.waiting)
            and signal.grows()
        ):
            step = 1.0 if self.window < self.threshold else 1.0 / self.window
            self.window = min(float(self.ceiling), self.window + step)
            self.max_window = max(self.max_window, self.window)

    def _follow(self, allowed: float) -> None:
        """Hold the window to what the latency allows (up or down; after a probe's answer)."""
        if self._restore is not None:
            self._restore = allowed
            return
        if allowed < self.window:
            self.latency_cuts += 1
            self.threshold = min(self.threshold, allowed)  # slow start is over
        self.window = allowed
        self.max_window = max(self.max_window, self.window)

    def _observe(self, ticket: Ticket, headers: Any, now: float) -> None:
        for budget, kind, used in (
            (self.requests, "requests", self._used_requests - ticket.used_requests),
            (self.tokens, "tokens", self._used_tokens - ticket.used_tokens),
        ):
            budget.observe(
                _number(headers, f"x-ratelimit-limit-{kind}"),
                _number(headers, f"x-ratelimit-remaining-{kind}"),
                parse_duration(headers.get(f"x-ratelimit-reset-{kind}")),
                ticket, used, now,
            )  # fmt: skip

    def _back_off(self, ticket: Ticket, failure: Any, now: float) -> None:
        status = getattr(failure, "status", None)
        # A 429 the rate-limit budget accounts for (the server sends its headers) says the
        # budget copy ran a little ahead, not that fewer requests should be in flight.
        budgeted = self.requests.rate is not None or self.tokens.rate is not None
        explained = status == 429 and budgeted
        if ticket.seq > self._cut_seq and not explained:  # one cut per window of requests
            self.threshold = max(1.0, self.window / 2)
            self.window = self.threshold
            self._cut_seq = self._seq
            self.cuts += 1
        if status == 429:
            self.requests.emptied(now)
            self.tokens.emptied(now)
        retry_after = getattr(failure, "retry_after", None)
        if status in (429, 503):
            hold = DEFAULT_PAUSE_S if retry_after is None else min(retry_after, MAX_PAUSE_S)
            self._paused_until = max(self._paused_until, now + hold)


def _congested(failure: Any) -> bool:
    """429 (rate limit), 503 (overloaded) and timeouts mean: fewer requests at once."""
    return getattr(failure, "status", None) in (429, 503) or failure.reason.startswith("timeout")


def make_limit(spec: Any, share: float = 1.0) -> FixedLimit | AdaptiveLimit:
    """The limiter a system's spec asks for (simulated systems: always fixed)."""
    if spec.auto_concurrency and not spec.simulated:
        return AdaptiveLimit(spec.concurrency_ceiling, share=share)
    return FixedLimit(spec.concurrency_limit)


__all__ = [
    "AdaptiveLimit", "Budget", "FixedLimit", "LatencySignal", "Ticket", "make_limit",
    "parse_duration",
]  # fmt: skip
