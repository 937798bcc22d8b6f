"""Freshness of a study that depends on a folder of runs (a compare study's baseline study):
a run that appears, changes or goes there makes it stale; other files there do not."""

from __future__ import annotations

import json
from pathlib import Path

from evalbench.freshness import find_current, is_current, run_inputs


def _run(study: Path, run_id: str, status: str = "ok") -> Path:
    (study / run_id).mkdir(parents=True, exist_ok=True)
    (study / run_id / "manifest.json").write_text(json.dumps({"status": status}))
    return study / run_id


def _published(tmp_path: Path, folder: Path) -> tuple[dict, Path, Path]:
    notebook, params = tmp_path / "nb.ipynb", tmp_path / "p.yaml"
    notebook.write_text("{}")
    params.write_text("study: compare\n")
    inputs = run_inputs(notebook, params, [], {}, [folder])
    return {"inputs": inputs, "status": "ok", "published": {"status": "ok"}}, notebook, params


def test_a_new_changed_or_removed_run_in_a_folder_dependency_makes_it_stale(tmp_path):
    study = tmp_path / "outputs" / "baseline_study"
    first = _run(study, "r1")
    manifest, notebook, params = _published(tmp_path, study)
    assert is_current(manifest, notebook, params, [])
    (first / "records").mkdir()
    (first / "records" / "x.jsonl").write_text("{}\n")  # not a manifest: the runs are the same
    (study / "baseline.json").write_text("{}")
    assert is_current(manifest, notebook, params, [])
    second = _run(study, "r2")
    assert not is_current(manifest, notebook, params, [])  # a new run
    manifest, notebook, params = _published(tmp_path, study)
    _run(study, "r2", status="interrupted")
    assert not is_current(manifest, notebook, params, [])  # a run's manifest changed
    manifest, notebook, params = _published(tmp_path, study)
    (second / "manifest.json").unlink()
    assert not is_current(manifest, notebook, params, [])  # a run gone


def test_find_current_skips_a_manifest_it_cannot_read(tmp_path):
    outputs, params = tmp_path / "outputs", tmp_path / "s.yaml"
    params.write_text("study: x\n")
    _run(outputs / "s", "deep").joinpath("manifest.json").write_text("[" * 100_000)
    _run(outputs / "s", "list").joinpath("manifest.json").write_text("[1, 2]")
    assert find_current(outputs, tmp_path, params, []) is None  # no traceback
