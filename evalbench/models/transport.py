"""Chat completions over one aiohttp connection pool, without the SDK's request layers.

The official SDK's ``post`` costs ≈ 0.7 ms of client CPU per request in its request and
response layers; at 256 requests in flight against a 100 ms server that CPU, not the
server, set the pace (``make bench``). :class:`Transport` sends the same body with the same
key and words its errors as the SDK does, so records and retries do not change. Batch
mode's files and batches still go through the SDK (:mod:`evalbench.models.batch`).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from typing import Any

from evalbench.models import local
from evalbench.models.providers import (
    ProviderError,
    api_key,
    endpoint_url,
    is_loopback,
    parse_completion,
    parse_more_choices,
    payload_for,
    retry_after_seconds,
    retryable_status,
)
from evalbench.models.types import ChatRequest, ModelSpec, SimReply, Usage
from evalbench.records import parse_json


class OpenAIProvider:
    """Any OpenAI-compatible endpoint: one :class:`Transport` per event loop."""

    def __init__(self, spec: ModelSpec):
        self.spec = spec

    def open(self) -> Transport:
        """A connection pool bound to the running event loop (no retries of its own); for a
        local model, to the server evalbench starts on first use (no key, no proxy)."""
        if self.spec.local is not None:
            base_url = local.endpoint(self.spec)
            return Transport(self.spec, None, base_url, direct=True,
                             gone=lambda: local.server_gone(base_url))  # fmt: skip
        return Transport(self.spec, api_key(self.spec), endpoint_url(self.spec))

    async def complete(
        self, http: Transport, request: ChatRequest
    ) -> tuple[tuple[SimReply, ...], Usage, Any]:
        """One attempt: every choice, usage and the response headers; raises
        :class:`ProviderError`."""
        body, headers = await http.post(payload_for(self.spec, request))
        reply, usage = parse_completion(body)
        return (reply, *parse_more_choices(body)), usage, headers


class Transport:
    """One event loop's connection pool to one OpenAI-compatible endpoint.

    Errors (:class:`~evalbench.models.providers.ProviderError`) as the SDK words them:
    ``http_<status>: Error code: <status> - <error.message>`` (retryable for 408/409/425/429
    and 5xx, with ``Retry-After``), ``timeout: ...`` past ``timeout_s`` (the whole request),
    ``connection_error: <type>: <message>`` for a refused or dropped connection,
    ``malformed_response: ...`` for a body that is not a completion. ``HTTP(S)_PROXY`` and
    ``NO_PROXY`` are honoured as the SDK honours them, except for an endpoint on loopback
    (or ``direct``: a server evalbench started): those are asked directly; the key is sent
    (none when it is ``None``), never put in an error.
    """

    def __init__(
        self,
        spec: ModelSpec,
        key: str | None,
        base_url: str | None,
        *,
        direct: bool = False,
        gone: Callable[[], str] | None = None,
    ):
        import aiohttp  # here: a quarter of a second to import, and only real endpoints need it

        self._aiohttp = aiohttp
        self.spec = spec
        self.gone = gone
        """Why the endpoint is gone for good (a local server that died), asked on a refused
        connection: then the error is not retried."""
        base = base_url or endpoint_url(spec)
        self.url = base.rstrip("/") + "/chat/completions"
        self.headers = _headers(key)
        self.session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=0, ttl_dns_cache=300),
            timeout=aiohttp.ClientTimeout(total=spec.timeout_s),
        )
        self.proxy: Any
        # never a proxy to this machine: it would get the prompt and the key, and ask its own
        # loopback (as Go's ProxyFromEnvironment leaves localhost out)
        direct = direct or is_loopback(self.url)
        self.proxy, auth = _env_proxy(self.url) if not direct else (None, None)
        self.proxy_headers = None
        if auth is not None:  # to the proxy: in the request (http) or its CONNECT (https)
            proxy_auth = {"Proxy-Authorization": auth.encode()}
            if self.url.startswith("https:"):
                self.proxy_headers = proxy_auth
            else:
                self.headers |= proxy_auth

    async def post(self, body: dict[str, Any]) -> tuple[Any, Any]:
        """One attempt: the decoded JSON body and the response headers.

        Raises:
            ProviderError: timeout, connection, HTTP status or undecodable body.
        """
        aiohttp, data = self._aiohttp, json.dumps(body).encode()
        try:
            post = self.session.post(
                self.url, data=data, headers=self.headers, proxy=self.proxy,
                proxy_headers=self.proxy_headers, allow_redirects=False,
            )  # fmt: skip
            async with post as response:
                raw = await _read_capped(response)
        except (asyncio.TimeoutError, aiohttp.ServerTimeoutError):
            raise ProviderError(
                f"timeout: no response within {self.spec.timeout_s}s", retryable=True
            ) from None
        except aiohttp.ClientError as exc:
            why = self.gone() if self.gone is not None else ""
            if why:
                raise ProviderError(f"connection_error: {why}", retryable=False) from None
            detail = f"{type(exc).__name__}: {exc}".strip().rstrip(":")
            raise ProviderError(f"connection_error: {detail}", retryable=True) from None
        if 300 <= response.status < 400:  # never followed: see _redirect
            raise _redirect(response.status)
        if response.status >= 400:
            raise status_error(response.status, raw, response.headers)
        try:
            return parse_json(raw), response.headers
        except ValueError as exc:  # JSONDecodeError included
            raise ProviderError(f"malformed_response: {exc}", retryable=True) from exc

    async def close(self) -> None:
        """Close the connection pool."""
        await self.session.close()


MAX_BODY_BYTES = 64 * 2**20
"""The largest response body read (64 MiB; a completion is kilobytes, a few MiB with many
choices): past it the call fails, unread, rather than the process's memory (a 100 MB body
took 2.2 GB to read and parse)."""


async def _read_capped(response: Any) -> bytes:
    """The response's body, read only up to :data:`MAX_BODY_BYTES`.

    Raises:
        ProviderError: ``malformed_response``, not retried (the same server sends it again).
    """
    over = ProviderError(f"malformed_response: a body over {MAX_BODY_BYTES:,d} bytes (not "
                         "read further)", retryable=False)  # fmt: skip
    if (response.content_length or 0) > MAX_BODY_BYTES:
        raise over
    chunks, size = [], 0
    async for chunk in response.content.iter_chunked(1 << 16):
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise over
        chunks.append(chunk)
    return b"".join(chunks)


def _headers(key: str | None) -> dict[str, str]:
    """Authorization (when there is a key) and content headers, and the organization/project
    the SDK reads from ``OPENAI_ORG_ID`` / ``OPENAI_PROJECT_ID``."""
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    for header, variable in (("OpenAI-Organization", "OPENAI_ORG_ID"),
                             ("OpenAI-Project", "OPENAI_PROJECT_ID")):  # fmt: skip
        if os.environ.get(variable):
            headers[header] = os.environ[variable]
    return headers


def _env_proxy(url: str) -> tuple[Any, Any]:
    """The proxy (and its credentials) ``HTTP(S)_PROXY`` / ``NO_PROXY`` give for ``url``,
    read once (aiohttp's ``trust_env`` reads them in a thread for every request)."""
    from aiohttp.helpers import get_env_proxy_for_url
    from yarl import URL

    try:
        return get_env_proxy_for_url(URL(url))
    except LookupError:  # no proxy for this URL
        return None, None


def _redirect(status: int) -> ProviderError:
    """A redirect answering a completion request: a failed call, not retried, and never
    followed. A 307/308 would send the prompt again to a host nobody named (aiohttp drops
    the key across origins, not the body), a 301-303 would turn it into a GET whose answer
    was recorded as the model's. The Location is not shown (a token may travel in it)."""
    return ProviderError(f"http_{status}: a redirect (not followed)", retryable=False,
                         status=status)  # fmt: skip


def status_error(status: int, raw: bytes, headers: Any) -> ProviderError:
    """A :class:`ProviderError` for an HTTP error status, worded as the SDK words it:
    ``Error code: 429 - <the body's error.message>`` (just ``Error code: 429`` when the body
    has no message)."""
    detail = f"Error code: {status}"
    try:
        body = json.loads(raw.decode(errors="replace"))
    except ValueError:
        body = None
    error = body.get("error", body) if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    if isinstance(message, str) and message:
        detail += f" - {message}"
    return ProviderError(
        f"http_{status}: {detail[:300]}",
        retryable=retryable_status(status),
        retry_after=retry_after_seconds(dict(headers)),
        status=status,
        headers=headers,
    )
