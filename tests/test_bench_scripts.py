"""`make bench` keeps working: every bench script imports, and the arena bench runs end to end
at a tiny size (it broke when the arena package stopped re-exporting the rating functions)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).parent
BENCHES = [*sorted(TESTS.glob("bench_*.py")), TESTS / "agents" / "bench_sandbox.py"]


@pytest.mark.parametrize("path", BENCHES, ids=lambda p: p.name)
def test_a_bench_script_imports(path):
    spec = importlib.util.spec_from_file_location(f"_bench_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # top level only: each runs under `if __name__ == ...`
    assert callable(module.main)


@pytest.mark.slow
def test_the_arena_bench_runs_and_writes_strict_json(tmp_path):
    command = [sys.executable, str(TESTS / "bench_arena.py"), "--battles", "3000",
               "--models", "6", "--rounds", "20", "--repeats", "1", "--peers", ""]  # fmt: skip
    env = {"EVALBENCH_OUTPUTS": str(tmp_path), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-2000:]

    def refuse(literal: str) -> None:
        raise ValueError(literal)

    written = json.loads((tmp_path / "bench" / "arena.json").read_text(), parse_constant=refuse)
    assert written["setup"]["battles"] == 3000 and written["ours"]["degenerate_rounds"] == 0
