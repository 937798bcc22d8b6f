"""Browse-suite study params and small task files for the tests."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from evalbench.agents.tools.web import CHROMIUM
from evalbench.browse_suite.data import demo_tasks_path

SIM_JUDGE = {"name": "judge-sim", "provider": "sim"}


def write_params(tmp_path: Path, name: str = "suite_test", **data: Any) -> Path:
    """A ``browse_suite`` params file (50 bootstrap rounds, the simulated judge by default)."""
    body = {
        "study": "browse_suite",
        "title": "browse suite test",
        "bootstrap_rounds": 50,
        "judge": SIM_JUDGE,
        **data,
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(body, allow_unicode=True), encoding="utf-8")
    return path


def tasks_file(tmp_path: Path, keep: Any, **changes: Any) -> Path:
    """The demo tasks that ``keep(task)`` accepts, each with ``changes`` applied, as a file."""
    tasks = [t for t in yaml.safe_load(demo_tasks_path().read_text())["tasks"] if keep(t)]
    for task in tasks:
        task.update(changes)
    path = tmp_path / "tasks.yaml"
    path.write_text(yaml.safe_dump({"tasks": tasks}, allow_unicode=True), encoding="utf-8")
    return path


def chromium_or_skip() -> None:
    """Skip (with the reason) without the playwright package or Debian chromium."""
    pytest.importorskip(
        "playwright.sync_api", reason="needs the playwright package (pip install playwright)"
    )
    if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
        pytest.skip("needs Debian chromium at /usr/bin/chromium (.ci/run installs it)")
