"""The session's local Ray cluster for the Ray tests of this folder: one per pytest
process, whichever of its files run (:mod:`executors.raycluster`)."""

from __future__ import annotations

import pytest
from executors.raycluster import LocalCluster, RayUnavailable, driver_env
from studyfiles import CANARY_KEY, KEY_ENV

from evalbench.settings import ENV_EXECUTOR, ENV_RAY_ADDRESS


@pytest.fixture(scope="session")
def ray_cluster():
    """A local Ray cluster for this session, and this process connected to it."""
    driver_env()
    try:
        import ray
    except ImportError:
        pytest.skip("Ray is not installed: pip install -e '.[ray]' (.ci/run does)")
    try:
        cluster = _start_cluster()
    except RayUnavailable as exc:
        pytest.skip(f"a local Ray cluster cannot start here: {exc}")
    yield cluster
    ray.shutdown()
    cluster.stop()
    assert cluster.processes() == set()


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


@pytest.fixture
def on_ray(ray_cluster, monkeypatch):
    """This test's runs use the cluster (as ``--executor ray --ray-address ADDR`` does)."""
    monkeypatch.setenv(ENV_EXECUTOR, "ray")
    monkeypatch.setenv(ENV_RAY_ADDRESS, ray_cluster.address)
    return ray_cluster
