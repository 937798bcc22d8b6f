"""Fixtures of the alert tests: a webhook receiver on 127.0.0.1 (no proxy in the way), and
a pinned baseline with a run that dropped."""

from __future__ import annotations

import pytest
from alerts.helpers import Receiver, outcomes_from, write_run

from evalbench.history import pin_baseline
from evalbench.settings import get_settings


@pytest.fixture
def hook(monkeypatch):
    """A :class:`helpers.Receiver` (started, stopped at the end); proxies unset, so the
    notification goes straight to it."""
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    server = Receiver().start()
    yield server
    server.stop()


@pytest.fixture
def runs():
    """A pinned baseline (40 of 40 right) and a run that dropped to 0 of 40."""
    outputs = get_settings().outputs_dir
    base = write_run(outputs, "base", {"a": outcomes_from([True] * 40)})
    now = write_run(outputs, "now", {"a": outcomes_from([False] * 40)},
                    started_at="2026-01-02T00:00:00+00:00")  # fmt: skip
    pin_baseline(base, outputs)
    return base, now


@pytest.fixture
def costed_runs():
    """A pinned baseline (40 of 40 right, $0.01 per task) and a run that dropped to 10 of 40
    and costs twice as much per task."""
    outputs = get_settings().outputs_dir
    usage = {"calls": 40, "errors": 0}
    base = write_run(outputs, "base", {"a": outcomes_from([True] * 40)},
                     usage={"a": {**usage, "cost_usd": 0.40}})  # fmt: skip
    now = write_run(outputs, "now", {"a": outcomes_from([False] * 30 + [True] * 10)},
                    usage={"a": {**usage, "cost_usd": 0.80}},
                    started_at="2026-01-02T00:00:00+00:00")  # fmt: skip
    pin_baseline(base, outputs)
    return base, now
