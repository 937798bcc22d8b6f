"""Run folders in the real on-disk format (manifest.json + records/gaia.jsonl), written by hand
so each test knows every outcome it compares."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from evalbench.gaia.records import ScoredRecord
from evalbench.settings import get_settings

Outcome = bool | str | None
"""True/False = right/wrong; "error" = a failed call (wrong); "none" = no answer (wrong);
None = hidden truth (unscored)."""


def write_gaia_run(
    outputs: Path,
    study: str,
    run_id: str,
    outcomes: Mapping[str, Mapping[str, Outcome]],
    *,
    levels: Mapping[str, int] | None = None,
    started_at: str = "2026-01-01T00:00:00+00:00",
    status: str = "ok",
    simulated: bool = True,
    commit: str = "abc1234def5678",
    dirty: bool = False,
    overrides: list[str] | None = None,
    params: dict[str, Any] | None = None,
    measured: list[dict[str, Any]] | None = None,
) -> Path:
    """A finished GAIA run folder: ``outcomes[system][task_id]`` (see :data:`Outcome`);
    ``params`` and ``measured``: the manifest's resolved params and measured rows (left out
    when ``None``, as in a manifest written by hand)."""
    run_dir = outputs / study / run_id
    (run_dir / "records").mkdir(parents=True, exist_ok=True)
    rows = []
    for system, items in outcomes.items():
        for task_id, outcome in items.items():
            level = (levels or {}).get(task_id, 1)
            rows.append({
                "system": system, "task_id": task_id, "level": level, "attempt": 0,
                "model_answer": None if outcome == "error" else "x",
                "extracted_answer": None if outcome in ("error", "none") else "x",
                "expected": None if outcome is None else "x",
                "correct": None if outcome is None else outcome is True,
                "no_answer": outcome == "none", "error": "http_500: boom" if outcome == "error" else None,
            })  # fmt: skip
    for row in rows:
        ScoredRecord.model_validate(row)  # the GAIA study's declared record type
    with open(run_dir / "records" / "gaia.jsonl", "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in rows)
    models = [{"name": s, "provider": "sim" if simulated else "openai"} for s in outcomes]
    manifest: dict[str, Any] = {
        "study": study, "kind": "gaia", "title": f"{study} <i>title</i>", "run_id": run_id,
        "status": status, "started_at": started_at, "ended_at": started_at,
        "params_hash": run_id, "overrides": overrides or [], "models": models,
        "simulated": simulated, "simulated_names": list(outcomes) if simulated else [],
        "environment": {"git": {"commit": commit, "dirty": dirty}},
        "headlines": {f"accuracy {s}": 0.5 for s in outcomes},
        "usage": [{"system": s, "calls": 1, "cost_usd": 0.25} for s in outcomes],
    }  # fmt: skip
    manifest |= {k: v for k, v in (("params", params), ("measured", measured)) if v is not None}
    if status == "ok":
        manifest["published"] = {"status": "ok", "headlines": manifest["headlines"]}
        (run_dir / "report.html").write_text("<html>report</html>")
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    return run_dir


@pytest.fixture
def outputs() -> Path:
    """The test's isolated outputs folder (set by the autouse fixture of tests/conftest.py)."""
    path = get_settings().outputs_dir
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture
def gaia_run(outputs: Path) -> Callable[..., Path]:
    """``gaia_run(study, run_id, outcomes, **kw)`` -> a run folder under the test's outputs."""

    def make(study: str, run_id: str, outcomes: Mapping[str, Mapping[str, Outcome]],
             **kw: Any) -> Path:  # fmt: skip
        return write_gaia_run(outputs, study, run_id, outcomes, **kw)

    return make
