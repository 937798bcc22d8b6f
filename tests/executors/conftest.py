"""The local Ray cluster the Ray tests of this folder share (:mod:`executors.raycluster`).

The first of them starts it; it is stopped right after the last of a run of them (the
``ray`` xdist group runs them one after another in one process), not at the end of the
session: idle, the cluster and this process's connection to it use ≈ 7% of a core, which
the rest of the suite needs. A Ray test that comes later starts it again.
"""

from __future__ import annotations

import pytest
from executors.raycluster import LocalCluster, RayUnavailable, driver_env
from studyfiles import CANARY_KEY, KEY_ENV

from evalbench.settings import ENV_EXECUTOR, ENV_RAY_ADDRESS

_SHARED: dict[str, LocalCluster] = {}


@pytest.fixture
def ray_cluster() -> LocalCluster:
    """The shared local Ray cluster, started if it is not running."""
    driver_env()
    try:
        import ray  # noqa: F401
    except ImportError:
        pytest.skip("Ray is not installed: pip install -e '.[ray]' (.ci/run does)")
    if "cluster" not in _SHARED:
        try:
            _SHARED["cluster"] = _start_cluster()
        except RayUnavailable as exc:
            pytest.skip(f"a local Ray cluster cannot start here: {exc}")
    return _SHARED["cluster"]


def _start_cluster() -> LocalCluster:
    """A started cluster; a second try when the first timed out (Ray gives its raylet 30 s
    to register, which a loaded 2-core machine can miss)."""
    env = {KEY_ENV: CANARY_KEY}  # the reference agent's key, in its workers' environment
    try:
        return LocalCluster(num_cpus=2, env=env).start()
    except RayUnavailable as exc:
        if "timed out" not in str(exc):
            raise
        return LocalCluster(num_cpus=2, env=env).start()


def _stop_cluster() -> None:
    cluster = _SHARED.pop("cluster", None)
    if cluster is None:
        return
    import ray

    ray.shutdown()  # this process's connection (the studies' ray.init)
    cluster.stop()
    assert cluster.processes() == set(), "a process of the Ray cluster outlived it"


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """After a test of this folder: stop the cluster unless the next test uses it."""
    if nextitem is None or "ray_cluster" not in getattr(nextitem, "fixturenames", ()):
        _stop_cluster()


def pytest_sessionfinish() -> None:
    _stop_cluster()


@pytest.fixture
def on_ray(ray_cluster, monkeypatch):
    """This test's runs use the cluster (as ``--executor ray --ray-address ADDR`` does)."""
    monkeypatch.setenv(ENV_EXECUTOR, "ray")
    monkeypatch.setenv(ENV_RAY_ADDRESS, ray_cluster.address)
    return ray_cluster
