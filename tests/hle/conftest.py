"""A small simulated HLE study, run once per session and shared by the report and figure
tests (a result is a NamedTuple: tests change it with ``_replace``, never in place)."""

from __future__ import annotations

import pytest
import yaml
from hle.cases import row, write_jsonl

from evalbench.hle import study
from evalbench.studies import open_run


@pytest.fixture(scope="session")
def result(tmp_path_factory):
    """A 30-question study of one simulated system, run once (in its own
    outputs and cache folders: a session fixture runs before the per-test isolation)."""
    tmp_path = tmp_path_factory.mktemp("hle_result")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("EVALBENCH_OUTPUTS", str(tmp_path / "outputs"))
        env.setenv("EVALBENCH_CACHE", str(tmp_path / "cache"))
        return _run(tmp_path)


def _run(tmp_path):
    dataset = write_jsonl(tmp_path / "q.jsonl", [row(f"q{i}", answer=str(i)) for i in range(30)])
    data = {"study": "hle", "title": "t", "bootstrap_rounds": 50, "dataset": str(dataset),
            "systems": [{"name": "<b>sys</b>", "sim": {"accuracy": 0.5}}],
            "judge": {"name": "judge", "sim": {"accuracy": 1.0}}}  # fmt: skip
    path = tmp_path / "hle_report.yaml"
    path.write_text(yaml.safe_dump(data))
    return study.run(open_run(path))
