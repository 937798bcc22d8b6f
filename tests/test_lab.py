"""Notebooks run by hand (JupyterLab) never write a published run folder."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from studyfiles import gaia_dataset, gaia_params

from evalbench import gaia
from evalbench.freshness import notebook_digest
from evalbench.index import collect_runs
from evalbench.publish import run_many, run_study
from evalbench.records import read_jsonl
from evalbench.runs import LOCK_ENV
from evalbench.settings import get_settings
from evalbench.studies import open_run

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "gaia_levels.ipynb"


def _files(run_dir: Path) -> dict[str, str]:
    """sha256 of every file of a run folder (the lock files aside), by relative path."""
    return {
        str(p.relative_to(run_dir)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(run_dir.rglob("*"))
        if p.is_file() and not p.name.startswith(".lock")
    }


def _as_lab_runs_it(params_file: Path, overrides: list[str] | None = None) -> Path:
    """What the notebook's setup cell and last cell do in a JupyterLab kernel: no
    ``evalbench`` process started it, so no run folder lock was handed to it."""
    assert LOCK_ENV not in __import__("os").environ
    run = open_run(params_file, overrides or [])
    run.finish(gaia.run(run))
    return run.dir


@pytest.mark.slow
def test_a_notebook_rerun_by_hand_leaves_its_published_run_as_it_was(tmp_path):
    # weak sim fails 4 of 6 calls on purpose: a rerun in place asked them again and
    # rewrote responses.jsonl, and the run was `executed`, then `interrupted`
    systems = [{"name": "s", "provider": "sim", "sim": {"error_rate": 0.5}}]
    path = gaia_params(tmp_path, gaia_dataset(tmp_path, list("123456")), systems,
                       max_error_rate=1.0)  # fmt: skip
    published = run_study(path, warm=True)
    assert published.status == "ok" and published.run_dir is not None
    before = _files(published.run_dir)
    failed = sum(r["error"] is not None for r in read_jsonl(published.run_dir / "records" /
                                                            "responses.jsonl"))  # fmt: skip
    assert failed > 0

    lab = _as_lab_runs_it(path)

    assert _files(published.run_dir) == before  # manifest, records, report: byte for byte
    outputs = get_settings().outputs_dir
    assert lab == outputs / "lab" / "gaia_test" / published.run_dir.name
    assert [r.status for r in run_many([path])] == ["current"]  # `make report` renders nothing
    assert [m["_dir"] for m in collect_runs(outputs)] == [published.run_dir]  # index: one run
    # the lab copy started from the published records: the same answers, failed ones re-asked
    ok = {r["key"]: r["text"] for r in read_jsonl(published.run_dir / "records" /
                                                  "responses.jsonl") if not r["error"]}  # fmt: skip
    again = {r["key"]: r["text"] for r in read_jsonl(lab / "records" / "responses.jsonl")}
    assert len(again) == 6 and all(again[key] == text for key, text in ok.items())
    assert json.loads((lab / "manifest.json").read_text())["status"] == "executed"


def test_a_notebook_saved_by_jupyterlab_after_a_run_is_the_same_code(tmp_path):
    """JupyterLab saves outputs, execution counts and metadata into the notebook (and the
    parameters cell as the user left it, whose values papermill replaces in every render):
    none of that changes a rendered report, so none of it makes a published run stale."""
    nb = json.loads(NOTEBOOK.read_text())
    plain = tmp_path / "plain.ipynb"
    plain.write_text(json.dumps(nb))
    for number, cell in enumerate(nb["cells"], start=1):
        if cell["cell_type"] == "code":
            cell["execution_count"] = number
            cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "4.0\n"}]
            cell["metadata"]["execution"] = {"iopub.status.idle": "2026-01-01T00:00:00Z"}
    nb["metadata"]["language_info"] = {"name": "python", "version": "3.11.9"}
    nb["cells"][0]["source"] = 'params_file = "params/mine.yaml"\noverrides = ["seed=7"]\n'
    saved = tmp_path / "saved.ipynb"
    saved.write_text(json.dumps(nb, indent=1))
    assert notebook_digest(saved) == notebook_digest(plain)

    edited = json.loads(saved.read_text())
    edited["cells"][1]["source"] += "\nprint('one more line')"  # code the report runs
    (tmp_path / "edited.ipynb").write_text(json.dumps(edited))
    assert notebook_digest(tmp_path / "edited.ipynb") != notebook_digest(plain)
    untagged = json.loads(plain.read_text())  # its assignments would override papermill's
    untagged["cells"][0]["metadata"] = {}
    (tmp_path / "untagged.ipynb").write_text(json.dumps(untagged))
    assert notebook_digest(tmp_path / "untagged.ipynb") != notebook_digest(plain)
