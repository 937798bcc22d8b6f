"""Providers: what every provider shares (:class:`ProviderError`, the request body, the
completion's parsing) and the seeded ``sim``; real endpoints are
:class:`evalbench.models.transport.OpenAIProvider`.

A provider makes exactly one attempt and either returns a reply or raises
:class:`ProviderError` saying whether the failure is worth retrying; retries, caching and
accounting live in :mod:`evalbench.models.client`, the same for every provider.
"""

from __future__ import annotations

import email.utils
import hashlib
import ipaddress
import json
import math
import os
import re
import time
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from evalbench.models.types import (
    ChatRequest,
    ModelSpec,
    SimReply,
    SimTask,
    ToolCall,
    Usage,
    base_url_problem,
)
from evalbench.settings import UnusableSecret, secret

RETRYABLE_STATUS = frozenset({408, 409, 425, 429})
PERMANENT_5XX = frozenset({501, 505})
"""Server errors no retry can cure: Not Implemented (no such endpoint or method), HTTP
Version Not Supported. Every other 5xx is retried."""


def retryable_status(status: int) -> bool:
    """Whether an HTTP error status may succeed when asked again."""
    return status in RETRYABLE_STATUS or (status >= 500 and status not in PERMANENT_5XX)


OPENAI_URL = "https://api.openai.com/v1"
"""The SDK's default endpoint (no ``base_url`` and no ``OPENAI_BASE_URL``)."""
KEYLESS_HINT = (
    " (an endpoint that takes no key: set api_key_env: null for this system; endpoints on "
    "loopback, such as http://127.0.0.1:8000/v1, need none)"
)


class ProviderError(Exception):
    """One failed attempt.

    Args:
        reason: short machine-readable reason first (``http_429``, ``timeout``...), then detail.
        retryable: whether another attempt may succeed.
        retry_after: seconds the server asked us to wait (``Retry-After``), if any.
        status: the HTTP status, when there was a response.
        headers: the response headers, when there was a response.
    """

    def __init__(
        self, reason: str, *, retryable: bool, retry_after: float | None = None,
        status: int | None = None, headers: Any = None,
    ):  # fmt: skip
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable
        self.retry_after = retry_after
        self.status = status
        """The HTTP status, when the server answered."""
        self.headers = headers
        """The response headers, when the server answered (rate-limit signals)."""


_TRANSIENT = re.compile(
    r"^(timeout|connection|connection_error|malformed_response|http_(408|409|425|429|5\d\d))\b"
)


def is_transient(error: str | None) -> bool:
    """Whether a recorded failure may succeed if asked again (rate limits, timeouts, 5xx...).

    Permanent failures (other 4xx such as a rejected request, simulated failures) are not.
    """
    return bool(error) and bool(_TRANSIENT.match(error or ""))


_REFUSAL = re.compile(  # what a refusal of the request names; a generic 500 names none
    r"validation error|input should|field required|extra inputs|pydantic|nonetype|"
    r"can only concatenate|not subscriptable|not iterable|has no attribute|object is not|"
    r"not supported|unsupported|not implemented|invalid|must be|expected|could not broadcast|"
    r"\b(Type|Value|Key|Attribute|Index|Validation|NotImplemented|Template\w*|Undefined|"
    r"JSONDecode)Error\b",
    re.IGNORECASE,
)


def repeated_refusal(previous: ProviderError | None, failure: ProviderError) -> bool:
    """Whether ``failure`` is a 500 that refuses the request itself: the same message as the
    attempt before, naming a cause (a validation error, a Python exception, "not supported").

    llama-cpp-python's server answers a request it cannot render (``content: null``, list
    content, ``json_schema``) with a 500 carrying the exception's text, every time. OpenAI's
    transient 500 also repeats word for word, but names no cause ("The server had an error
    while processing your request"), nor do gateways' 502/503/504: those stay retried.
    """
    return (
        failure.status == 500
        and previous is not None
        and previous.status == 500
        and previous.reason == failure.reason
        and bool(_REFUSAL.search(failure.reason.split(" - ", 1)[-1]))
    )


def resolve_base_url(spec: ModelSpec) -> str | None:
    """The endpoint URL from ``base_url`` or the variable named by ``base_url_env``.

    Raises:
        MissingSecret: the variable is unset.
        UnusableSecret: it holds no usable base URL (:func:`~.types.base_url_problem`).
    """
    if spec.base_url:
        return spec.base_url  # checked when the params were read
    if spec.base_url_env:
        url = secret(spec.base_url_env, purpose=f"system {spec.name!r} (base URL)")
        return _usable(url, spec.base_url_env, spec)
    return None


def endpoint_url(spec: ModelSpec) -> str:
    """Where a remote system's requests go: ``base_url`` / ``base_url_env``, else
    ``OPENAI_BASE_URL``, else OpenAI's API (as the SDK chooses).

    Raises:
        MissingSecret, UnusableSecret: as :func:`resolve_base_url` (``OPENAI_BASE_URL`` too).
    """
    url = resolve_base_url(spec)
    if url:
        return url
    from_env = os.environ.get("OPENAI_BASE_URL")
    return _usable(from_env, "OPENAI_BASE_URL", spec) if from_env else OPENAI_URL


def _usable(url: str, variable: str, spec: ModelSpec) -> str:
    """``url`` from ``variable``, or the one-line refusal naming the variable (a base URL
    in the environment may carry a secret: its value is never shown)."""
    problem = base_url_problem(url)
    if problem:
        raise UnusableSecret(
            f"system {spec.name!r} (base URL): the URL in {variable} is not a base URL: {problem}"
        )
    return url


def is_loopback(url: str) -> bool:
    """Whether ``url``'s host is this machine: ``localhost``, 127.0.0.0/8 or ``::1`` (also
    IPv4-mapped, ``::ffff:127.0.0.1``). Names are not resolved: ``127.0.0.1.example.com``
    and ``localhost@example.com`` (whose host is ``example.com``) are not loopback."""
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return False
    if not host:
        return False
    if host.rstrip(".") == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return address.is_loopback or bool(mapped and mapped.is_loopback)


def api_key(spec: ModelSpec) -> str | None:
    """The key to send to ``spec``'s endpoint; ``None``: send none.

    No key for a local model (evalbench's own server), for ``api_key_env: null``, and for a
    loopback endpoint whose variable is unset (it is sent when set: a local proxy may want it).

    Raises:
        MissingSecret: any other endpoint whose variable is unset (the message says how to
            declare an endpoint keyless).
    """
    if spec.local is not None:
        return None
    url = endpoint_url(spec)  # first: an unset base_url_env is the error to report
    if spec.api_key_env is None:
        return None
    if is_loopback(url):
        return os.environ.get(spec.api_key_env) or None
    return secret(spec.api_key_env, purpose=f"system {spec.name!r}", hint=KEYLESS_HINT)


def payload_for(spec: ModelSpec, request: ChatRequest) -> dict[str, Any]:
    """The JSON body of a chat completion (``None`` fields omitted; the token limit under
    ``spec.max_tokens_field``; ``spec.extra_body`` merged in; messages as
    :func:`wire_message` writes them)."""
    body = {"model": spec.model, **request.model_dump(exclude_none=True)}
    body["messages"] = [wire_message(m) for m in request.messages]
    if spec.max_tokens_field != "max_tokens" and "max_tokens" in body:
        body[spec.max_tokens_field] = body.pop("max_tokens")
    return {**body, **(spec.extra_body or {})}


def wire_message(message: dict[str, Any]) -> dict[str, Any]:
    """A message in the form every OpenAI-compatible server takes, meaning the same.

    - An assistant turn with ``content: null`` (a turn of only tool calls) goes out with
      ``content: ""``: llama-cpp-python's server refuses ``null`` with a 500.
    - Content made only of text parts goes out as one string, the parts joined by a newline
      as vLLM (``vllm/entrypoints/chat_utils.py``) and llama.cpp's server render them:
      llama-cpp-python's default chat format refuses any list with a 500. Sending the string
      always, rather than learning per endpoint which refuse, costs no refused request and
      no state. Content with other parts (an image) keeps its list.

    The cache key is computed from the request as asked, so it does not change with this.
    """
    content = message.get("content")
    if content is None and message.get("role") == "assistant":
        return {**message, "content": ""}
    if isinstance(content, list) and content and all(_is_text_part(p) for p in content):
        return {**message, "content": "\n".join(p["text"] for p in content)}
    return message


def _is_text_part(part: Any) -> bool:
    return (
        isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str)
    )


def retry_after_seconds(headers: dict[str, str]) -> float | None:
    """Seconds to wait from ``retry-after-ms`` / ``Retry-After`` (seconds or HTTP date)."""
    lower = {k.lower(): v for k, v in headers.items()}
    if "retry-after-ms" in lower:
        try:
            return max(0.0, float(lower["retry-after-ms"]) / 1000)
        except ValueError:
            pass
    value = lower.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:  # an HTTP date; what no one can read (raises on Python 3.10+) is no header
        parsed = email.utils.parsedate_to_datetime(value) if value else None
    except (TypeError, ValueError, OverflowError):
        return None
    return max(0.0, parsed.timestamp() - time.time()) if parsed else None


def parse_completion(body: Any) -> tuple[SimReply, Usage]:
    """Text, tool calls, finish reason (of the first choice) and usage from a
    chat-completion JSON body."""
    try:
        reply = _parse_choice(body["choices"][0])
        usage = body.get("usage") or {}
        prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        snippet = json.dumps(body, default=str)[:200]
        raise ProviderError(f"malformed_response: {snippet}", retryable=True) from exc
    return reply, Usage(prompt_tokens=_count(prompt), completion_tokens=_count(completion))


MAX_TOKENS_REPORTED = 10**9
"""More tokens than any response has (contexts are ~10^7): a count past it is no count."""


def _count(value: Any) -> int | None:
    """A token count the server reported, or ``None`` (unreported) when it is not one: not a
    whole number, negative, or past :data:`MAX_TOKENS_REPORTED` (a server's bug, which would
    otherwise become the run's cost: -5 prompt and 10^12 completion tokens, $2,000,000)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not 0 <= value <= MAX_TOKENS_REPORTED or value != int(value):  # NaN, inf, -5, 2.5
        return None
    return int(value)


def parse_more_choices(body: Any) -> tuple[SimReply, ...]:
    """The choices after the first (a request with ``n > 1``), in ``index`` order."""
    try:
        choices = sorted(body["choices"][1:], key=lambda c: c.get("index") or 0)
        return tuple(_parse_choice(c) for c in choices)
    except (KeyError, TypeError, AttributeError) as exc:
        snippet = json.dumps(body, default=str)[:200]
        raise ProviderError(f"malformed_response: {snippet}", retryable=True) from exc


def _parse_choice(choice: Any) -> SimReply:
    """One choice; a field of the wrong type (``content: 42``, a tool call named ``7``) is a
    ``TypeError``, as a missing one is a ``KeyError``: the caller's ``malformed_response``."""
    message = choice["message"] or {}
    calls = tuple(
        ToolCall(id=_text(c.get("id")), name=_text(c["function"]["name"], required=True),
                 arguments=_text(c["function"].get("arguments")) or "")
        for c in message.get("tool_calls") or []
        if c.get("function")
    )  # fmt: skip
    return SimReply(_text(message.get("content")), calls, _text(choice.get("finish_reason")) or "")


def _text(value: Any, required: bool = False) -> Any:
    """``value`` when it is a string (or ``None``, unless ``required``), else ``TypeError``."""
    if isinstance(value, str) or (value is None and not required):
        return value
    raise TypeError(f"expected a string, got {type(value).__name__}")


def without_key(text: str, spec: ModelSpec) -> str:
    """``text`` with the system's API key, where a server echoed it back in an error
    message (``bad key Bearer sk-…``), replaced by ``[redacted]``: an error is recorded."""
    key = os.environ.get(spec.api_key_env) if spec.api_key_env else None
    return text.replace(key, "[redacted]") if key and len(key) >= 8 else text


class SimProvider:
    """The embedded offline default: seeded, deterministic per (seed, system, item).

    What the simulated model says comes from the :class:`SimTask` the benchmark attaches
    to the request (it knows the item's hidden truth); this class adds seeding, simulated
    API errors (``sim.error_rate``), a token estimate (4 characters per token) and the
    request's ``max_tokens`` (a longer reply is cut, ``finish_reason`` ``length``).
    """

    def __init__(self, spec: ModelSpec):
        self.spec = spec

    def open(self) -> None:
        """Nothing to connect to."""
        return None

    async def complete(
        self, request: ChatRequest, sim: SimTask | None, seed: int
    ) -> tuple[SimReply, Usage]:
        """Answer one request from its :class:`SimTask`."""
        if sim is None:
            raise ProviderError(
                f"sim_unsupported: system {self.spec.name!r} is simulated but this request "
                "has no simulation; use a real provider for it",
                retryable=False,
            )
        rng = sim_rng(seed, self.spec.name, sim.key)
        if rng.random() < self.spec.sim.error_rate:
            raise ProviderError("sim_error: simulated permanent API failure", retryable=False)
        reply = _within(sim.respond(request, self.spec.sim, rng), request.max_tokens)
        out = (reply.text or "") + "".join(c.arguments for c in reply.tool_calls)
        prompt_chars = sum(len(str(m.get("content") or "")) for m in request.messages)
        usage = Usage(prompt_tokens=_tokens(prompt_chars), completion_tokens=_tokens(len(out)))
        return reply, usage


def _within(reply: SimReply, max_tokens: int | None) -> SimReply:
    """A simulated reply cut at ``max_tokens`` (4 characters per token) as a real model's
    is: the text clipped, the tool calls that no longer fit dropped, ``finish_reason``
    ``length``; unchanged when it fits."""
    out = (reply.text or "") + "".join(c.arguments for c in reply.tool_calls)
    if max_tokens is None or _tokens(len(out)) <= max_tokens:
        return reply
    budget = max_tokens * SIM_CHARS_PER_TOKEN
    text = None if reply.text is None else reply.text[:budget]
    budget -= len(text or "")
    calls = []
    for call in reply.tool_calls:
        if len(call.arguments) > budget:
            break
        calls.append(call)
        budget -= len(call.arguments)
    return SimReply(text, tuple(calls), "length")


def sim_rng(seed: int, system: str, key: str) -> np.random.Generator:
    """The generator for one simulated call: a pure function of (seed, system, item key)."""
    words = [seed & 0xFFFFFFFF, *_stable_words(system), *_stable_words(key)]
    return np.random.default_rng(np.random.SeedSequence(words))


def _stable_words(text: str) -> list[int]:
    digest = hashlib.sha256(text.encode()).digest()
    return [int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4)]


SIM_CHARS_PER_TOKEN = 4
"""The sim provider's token estimate: 4 characters per token."""


def _tokens(chars: int) -> int:
    return max(1, math.ceil(chars / SIM_CHARS_PER_TOKEN))
