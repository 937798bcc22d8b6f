"""Shared fixtures: the data mirror, isolated cache/outputs/IPython folders, the warm kernel.

Tests that render a study in-process pass ``warm=True`` to ``run_study`` (as ``make report``
renders): the kernel and its imports are paid once per test process, not once per study
(``make test`` runs three processes, pytest-xdist). Tests about a fresh kernel, and every
``evalbench run`` a test starts as a process, still start their own.
"""

from __future__ import annotations

import gc
import os
import uuid
from pathlib import Path

import pytest
from realmodel import real_server  # noqa: F401 (the real model's server, one per session)

from evalbench.settings import ENV_CACHE, ENV_OUTPUTS

ROOT = Path(__file__).resolve().parents[1]
ORACLES_ENV = "EVALBENCH_ORACLES"
# A token of this test session, in the environment every process the tests start inherits:
# the marks tests look for among all processes (/proc) carry it, so that two test runs on one
# machine never see, or kill, each other's agents.
os.environ.setdefault("EVALBENCH_TEST_TOKEN", uuid.uuid4().hex[:12])


def _mirror() -> Path | None:
    value = os.environ.get("EVALBENCH_DATA_MIRROR", "").strip()
    return Path(value) if value and Path(value).is_dir() else None


@pytest.hookimpl(trylast=True)  # after pytest-xdist's own hook (it runs in each worker)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Slow tests first (otherwise in file order): in pytest-xdist processes the long ones
    start early and the many short ones fill in at the end, so no process is left finishing
    a long test alone while the others have nothing to do."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
    if getattr(config.option, "loadgroup", False):  # a worker of `--dist loadgroup`
        _mark_xdist_groups(items)


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection imported (pandas, scipy, matplotlib, evalbench, the test modules) is
    out of the garbage collector's sight from here on: its full collections during the run
    walk only what the tests make (as a warm kernel's walk only what a study makes); and
    they come a seventh as often (young collections after 5,000 allocations, not 700): a
    test process keeps ~10^6 objects, each full collection walked them in ~0.25 s."""
    from evalbench.models.client import freeze_for_good

    freeze_for_good()
    gc.set_threshold(5000, 10, 10)


def _mark_xdist_groups(items: list[pytest.Item]) -> None:
    """Give each ``xdist_group`` test the ``@group`` node id suffix the scheduler groups by.

    pytest-xdist 3.8 appends it to ``item._nodeid``, which pytest 9.2 no longer reads (node
    ids are ``item._id``, a ``NodeId``), so grouped tests ran on any worker: the agent tests
    killing each other's processes, a Ray cluster per worker (pytest-xdist#1386).
    """
    from _pytest.nodeid import NodeId

    for item in items:
        names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                        for m in item.iter_markers("xdist_group")})  # fmt: skip
        suffix = "@" + "_".join(names)
        if names and not item.nodeid.endswith(suffix):
            item._id = NodeId.parse(item.nodeid + suffix)  # type: ignore[attr-defined]


@pytest.fixture
def mirror() -> Path:
    """The public-data mirror; the test skips (with the reason) when it is absent."""
    path = _mirror()
    if path is None:
        pytest.skip("needs the public-data mirror: set EVALBENCH_DATA_MIRROR (.ci/run does)")
    return path


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A first run behind a firewall: no mirror, downloads off, an empty cache."""
    monkeypatch.delenv("EVALBENCH_DATA_MIRROR", raising=False)
    monkeypatch.setenv("EVALBENCH_OFFLINE", "1")
    monkeypatch.setenv(ENV_CACHE, str(tmp_path / "empty-cache"))


@pytest.fixture
def oracles(mirror: Path) -> Path:
    """Outputs of official implementations (``../shared/data/oracles`` next to the mirror)."""
    path = Path(os.environ.get(ORACLES_ENV) or mirror.parent / "oracles")
    if not path.is_dir():
        pytest.skip(f"needs the oracle folder {path} (set {ORACLES_ENV})")
    return path


@pytest.fixture(scope="session", autouse=True)
def _session_dirs(tmp_path_factory: pytest.TempPathFactory):
    """Cache, outputs and IPython folders (a kernel's history database) in this session's
    tmp, for the session fixtures that run before any test's own (never the user's
    outputs/, ~/.cache or ~/.ipython); this process's warm kernel is stopped at the end."""
    from evalbench import kernels

    base = tmp_path_factory.mktemp("session")
    with pytest.MonkeyPatch.context() as patch:
        for name, folder in [(ENV_CACHE, "cache"), (ENV_OUTPUTS, "outputs"),
                             ("IPYTHONDIR", "ipython")]:  # fmt: skip
            patch.setenv(name, str(base / folder))
        patch.setenv("EVALBENCH_HOME", str(ROOT))
        yield
        kernels.shutdown()


@pytest.fixture(autouse=True)
def _isolated_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Every test gets its own cache and outputs folders (never the user's)."""
    base = tmp_path_factory.mktemp("evalbench")
    monkeypatch.setenv(ENV_CACHE, str(base / "cache"))
    monkeypatch.setenv(ENV_OUTPUTS, str(base / "outputs"))
    monkeypatch.setenv("EVALBENCH_HOME", str(ROOT))


@pytest.fixture
def warm_cli(monkeypatch: pytest.MonkeyPatch) -> None:
    """``evalbench.cli.main(["run", ...])`` renders in this process's warm kernel (as
    ``make report`` does), not a fresh one: for tests about the command, not the kernel
    (a fresh kernel's start and imports cost ~3 s CPU per render)."""
    import functools

    from evalbench import publish

    monkeypatch.setattr(publish, "run_study", functools.partial(publish.run_study, warm=True))


@pytest.fixture(scope="module")
def loopback_server():
    """A real OpenAI-compatible HTTP server on 127.0.0.1 (see tests/loopback.py)."""
    from loopback import LoopbackServer

    server = LoopbackServer().start()
    yield server
    server.stop()


@pytest.fixture
def loopback(loopback_server):
    """The module's loopback server, reset (no script, counters at zero) for this test."""
    import time

    deadline = time.monotonic() + 10
    while loopback_server.in_flight and time.monotonic() < deadline:
        time.sleep(0.02)  # a previous test's abandoned slow request is still being served
    loopback_server.reset()
    loopback_server.latency = 0.0
    return loopback_server
