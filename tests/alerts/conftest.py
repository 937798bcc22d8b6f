"""Fixtures of the alert tests: a webhook receiver on 127.0.0.1, with no proxy in the way."""

from __future__ import annotations

import pytest
from alerts.helpers import Receiver


@pytest.fixture
def hook(monkeypatch):
    """A :class:`helpers.Receiver` (started, stopped at the end); proxies unset, so the
    notification goes straight to it."""
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    server = Receiver().start()
    yield server
    server.stop()
