"""Usage and cost per system: tokens, requests, cache hits, latency percentiles, errors."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import pandas as pd

from evalbench.models.types import ChatResponse, ModelSpec


@dataclass
class _Tally:
    calls: int = 0
    requests: int = 0
    cache_hits: int = 0
    errors: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    latencies: list[float] = field(default_factory=list)
    error_reasons: dict[str, int] = field(default_factory=dict)


class UsageLedger:
    """Accumulates what every system and judge used in one study run (thread-safe)."""

    def __init__(self) -> None:
        self._tallies: dict[str, _Tally] = {}
        self._specs: dict[str, ModelSpec] = {}
        self._lock = threading.Lock()

    def record(self, spec: ModelSpec, response: ChatResponse) -> float:
        """Count one finished call; returns its cost in USD (0 for cache hits)."""
        cost = 0.0 if response.cached else call_cost(spec, response)
        with self._lock:
            tally = self._tallies.setdefault(spec.name, _Tally())
            self._specs[spec.name] = spec
            tally.calls += 1
            tally.requests += response.attempts
            tally.cache_hits += int(response.cached)
            if not response.ok:
                tally.errors += 1
                reason = (response.error or "").split(":", 1)[0]
                tally.error_reasons[reason] = tally.error_reasons.get(reason, 0) + 1
            if not response.cached:
                tally.prompt_tokens += response.usage.prompt_tokens or 0
                tally.completion_tokens += response.usage.completion_tokens or 0
                tally.cost_usd += cost
                if response.ok:
                    tally.latencies.append(response.latency_s)
        return cost

    def frame(self) -> pd.DataFrame:
        """One row per system: calls, requests, cache hits, errors, tokens, latency, cost."""
        rows = [self._row(name, t) for name, t in sorted(self._tallies.items())]
        columns = list(self._row("", _Tally()))
        return pd.DataFrame(rows, columns=columns)

    def summary(self) -> dict[str, dict[str, Any]]:
        """The same as :meth:`frame`, as plain JSON-ready dicts keyed by system."""
        return {row["system"]: row for row in self.frame().to_dict(orient="records")}

    def errors(self) -> dict[str, int]:
        """Error count per system."""
        return {name: t.errors for name, t in self._tallies.items()}

    def _row(self, name: str, t: _Tally) -> dict[str, Any]:
        lat = np.asarray(t.latencies, dtype=float)
        spec = self._specs.get(name)
        return {
            "system": name,
            "simulated": bool(spec.simulated) if spec else False,
            "calls": t.calls,
            "requests": t.requests,
            "cache_hits": t.cache_hits,
            "errors": t.errors,
            "error_reasons": dict(t.error_reasons),
            "prompt_tokens": t.prompt_tokens,
            "completion_tokens": t.completion_tokens,
            "latency_p50_s": float(np.percentile(lat, 50)) if lat.size else None,
            "latency_p95_s": float(np.percentile(lat, 95)) if lat.size else None,
            "cost_usd": round(t.cost_usd, 6),
        }


def call_cost(spec: ModelSpec, response: ChatResponse) -> float:
    """USD cost of one response from the system's per-1M-token prices (0 when unpriced)."""
    return token_cost(spec, response.usage.prompt_tokens, response.usage.completion_tokens)


def token_cost(spec: ModelSpec | None, prompt: float | None, completion: float | None) -> float:
    """USD cost of ``prompt`` + ``completion`` tokens at the system's prices: per 1M tokens,
    less ``batch_discount`` in batch mode (0 for an unknown or unpriced system).

    E.g. 1,000 prompt + 500 completion tokens at 2 / 8 USD per 1M tokens cost
    (1000·2 + 500·8) / 1e6 = 0.006 USD, or 0.006 · (1 - 0.5) = 0.003 USD in batch mode.
    """
    if spec is None:
        return 0.0
    price_in, price_out = spec.price_input_per_mtok or 0.0, spec.price_output_per_mtok or 0.0
    cost = ((prompt or 0) * price_in + (completion or 0) * price_out) / 1e6
    return cost * (1.0 - spec.batch_discount) if spec.batch else cost


class _Tokens(Protocol):
    """A recorded answer's tokens (e.g. :class:`evalbench.records.ResponseRecord`)."""

    prompt_tokens: int | None
    completion_tokens: int | None
    cached: bool


def answer_cost(spec: ModelSpec, answer: _Tokens) -> float | None:
    """What one recorded answer cost, as the usage table counts it (:func:`token_cost`, the
    batch discount included); ``None`` when the system has no price, the endpoint reported no
    tokens, or the answer came from the response cache (paid before)."""
    priced = spec.price_input_per_mtok is not None or spec.price_output_per_mtok is not None
    if not priced or answer.prompt_tokens is None or answer.cached:
        return None
    return token_cost(spec, answer.prompt_tokens, answer.completion_tokens)
