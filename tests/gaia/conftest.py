"""A small simulated GAIA study with an agent, run once per session and shared by the report
and figure tests (a result is a NamedTuple: tests change it with ``_replace``, never in place)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from evalbench import gaia
from evalbench.gaia.records import GaiaResult
from evalbench.studies import open_run

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def agent_result(tmp_path_factory: pytest.TempPathFactory) -> GaiaResult:
    """``params/gaia_agents_demo.yaml`` on 4 items per level (sim-agent and sim-chat)."""
    base = tmp_path_factory.mktemp("gaia_agents")
    data = yaml.safe_load((ROOT / "params" / "gaia_agents_demo.yaml").read_text())
    data.update(limit_per_level=4, bootstrap_rounds=20)
    path = base / "gaia_agents.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.MonkeyPatch.context() as env:  # session scope: before the autouse isolation
        env.setenv("EVALBENCH_CACHE", str(base / "cache"))
        env.setenv("EVALBENCH_OUTPUTS", str(base / "outputs"))
        run = open_run(path)
        result = gaia.run(run)
        run.finish(result)
    return result
