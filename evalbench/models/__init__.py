"""Model access: one async chat interface for any OpenAI-compatible endpoint and ``sim``.

Public API (import from here): :class:`ModelSpec` / :class:`SimSpec` (params),
:class:`ChatRequest` / :class:`ChatResponse` / :class:`Choice` (of ``n`` > 1) /
:class:`ToolCall`, :class:`SimTask` / :class:`SimReply` (how the offline simulator
answers), :class:`Job`, :class:`ModelClient`,
:func:`generate` / :func:`agenerate`, :class:`ResponseCache`, :class:`UsageLedger`; batch
mode (:func:`require_sync`, :class:`BatchPending`, :class:`BatchRefused`) and adaptive
concurrency (:class:`AdaptiveLimit`).
"""

from evalbench.models.batch import BatchPending, BatchRefused, require_sync
from evalbench.models.cache import CacheMiss, ResponseCache, cache_key
from evalbench.models.client import ModelClient, RateLimiter, agenerate, generate, run_sync
from evalbench.models.concurrency import AdaptiveLimit
from evalbench.models.providers import ProviderError, sim_rng
from evalbench.models.types import (
    CacheMode,
    ChatRequest,
    ChatResponse,
    Choice,
    Job,
    ModelSpec,
    SimReply,
    SimSpec,
    SimTask,
    ToolCall,
    Usage,
)
from evalbench.models.usage import UsageLedger, call_cost, token_cost

__all__ = [
    "AdaptiveLimit",
    "BatchPending",
    "BatchRefused",
    "CacheMiss",
    "CacheMode",
    "ChatRequest",
    "ChatResponse",
    "Choice",
    "Job",
    "ModelClient",
    "ModelSpec",
    "ProviderError",
    "RateLimiter",
    "ResponseCache",
    "SimReply",
    "SimSpec",
    "SimTask",
    "ToolCall",
    "Usage",
    "UsageLedger",
    "agenerate",
    "cache_key",
    "call_cost",
    "generate",
    "require_sync",
    "run_sync",
    "sim_rng",
    "token_cost",
]
