"""A small simulated golden-set study, run once per session and shared by the report and
figure tests (a result is a NamedTuple: tests change it with ``_replace``, never in place)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from evalbench import judge_golden as G
from evalbench.judge_golden.records import JudgeGoldenResult

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def result(tmp_path_factory: pytest.TempPathFactory) -> JudgeGoldenResult:
    """A 6-item study with judges ``a`` (primary) and ``b`` and a pairwise judge ``p``."""
    from evalbench.studies import open_run

    data = yaml.safe_load((ROOT / "params" / "judge_golden_demo.yaml").read_text())
    data.update(
        limit=6,
        bootstrap_rounds=20,
        judges=[{"name": "a", "provider": "sim"}, {"name": "b", "provider": "sim"}],
        pairwise_judge={"name": "p", "provider": "sim"},
    )
    path = tmp_path_factory.mktemp("golden") / "golden.yaml"
    path.write_text(yaml.safe_dump(data))
    return G.run(open_run(path))
