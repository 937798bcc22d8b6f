"""The README's example agent (tests/agents/example_agent.py:answer), run as the README shows
it: on the GAIA demo suite, every task answered, none an error."""

from __future__ import annotations

import pytest

from evalbench import gaia
from evalbench.studies import open_run

README_PARAMS = """
study: gaia
title: My agent on the GAIA demo suite
dataset: demo
systems:
  - name: my-agent
    provider: python
    entrypoint: tests.agents.example_agent:answer
    limits: {max_steps: 30, max_time_s: 600, max_tokens: 200000}
    max_concurrency: 4
"""


@pytest.mark.slow  # over ~1 s
def test_the_readme_example_agent_answers_every_demo_task(tmp_path):
    path = tmp_path / "my_agent.yaml"
    path.write_text(README_PARAMS)
    records = gaia.run(open_run(path)).records.set_index("task_id")
    assert len(records) == 32  # the whole demo suite
    assert records["state"].eq("answered").all(), records.loc[records["error"].notna(), "error"]
    assert records.loc["demo-l1-09", "extracted_answer"] == "1515"  # units in demo-sales.csv
    assert records.loc["demo-l1-09", "correct"]
