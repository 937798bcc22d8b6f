"""Notebooks run by hand (JupyterLab): they never write a published run folder, and
``evalbench publish`` renders what they ran, exactly as ``evalbench run`` would."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
import yaml
from studyfiles import gaia_dataset, gaia_params

from evalbench import gaia
from evalbench.cli import main
from evalbench.freshness import notebook_digest
from evalbench.index import collect_runs
from evalbench.params import params_hash
from evalbench.publish import run_many, run_study
from evalbench.records import read_jsonl
from evalbench.runs import LOCK_ENV, run_dir_for
from evalbench.settings import get_settings
from evalbench.studies import load_params, open_run

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


def _project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cell: str) -> Path:
    """A project folder (params/, notebooks/) whose gaia notebook's parameters cell is
    ``cell``, as a user leaves it after editing it in JupyterLab."""
    home = tmp_path / "project"
    (home / "params").mkdir(parents=True)
    (home / "notebooks").mkdir()
    nb = json.loads(NOTEBOOK.read_text())
    nb["cells"][0]["source"] = cell
    (home / "notebooks" / NOTEBOOK.name).write_text(json.dumps(nb))
    monkeypatch.setenv("EVALBENCH_HOME", str(home))
    return home


@pytest.mark.slow
def test_publish_renders_the_run_a_notebook_made_as_evalbench_run_would(
    tmp_path, monkeypatch, capsys, caplog
):
    # a fresh kernel, as `evalbench publish` starts one: the warm kernel of this process
    # would be started again for this project's folder, and once more for the next test's
    home = _project(tmp_path, monkeypatch,
                    'params_file = "params/mine.yaml"\noverrides = ["seed=7"]\n')  # fmt: skip
    gaia_params(home / "params", gaia_dataset(tmp_path, list("1234")), [{"name": "s"}],
                name="mine")  # fmt: skip
    params_file = home / "params" / "mine.yaml"
    lab = _as_lab_runs_it(params_file, ["seed=7"])  # run by hand: records, no report
    run_dir = run_dir_for(params_file, load_params(params_file, ["seed=7"]))
    assert lab == run_dir and not (run_dir / "report.html").exists()
    answers = (run_dir / "records" / "responses.jsonl").read_bytes()

    code = main(["publish", str(home / "notebooks" / NOTEBOOK.name)])

    out = capsys.readouterr().out
    assert code == 0, out
    # papermill cannot read `overrides = ["seed=7"]` (two `=`) as a default; evalbench never
    # uses defaults (it injects both), so its two warnings were only noise
    assert "Unable to parse line" not in caplog.text
    assert "Passed unknown parameter" not in caplog.text
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "ok" and manifest["overrides"] == ["seed=7"]
    assert manifest["params"]["seed"] == 7
    assert (run_dir / "report.html").exists() and (run_dir / "summary.html").exists()
    assert (get_settings().outputs_dir / "index.html").exists()
    assert f"report: {run_dir / 'report.html'}" in out
    # the notebook's answers were resumed, not asked again: the record file is as it was
    assert (run_dir / "records" / "responses.jsonl").read_bytes() == answers
    report = (run_dir / "report.html").stat().st_mtime_ns
    assert main(["publish", str(run_dir)]) == 0  # the run folder: the same run, up to date
    assert "current" in capsys.readouterr().out
    assert (run_dir / "report.html").stat().st_mtime_ns == report


def _nb(tmp_path: Path, cells: list[dict]) -> Path:
    path = tmp_path / "notebooks" / NOTEBOOK.name
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4,
                                "nbformat_minor": 5}))  # fmt: skip
    return path


def _code(source: str, *tags: str) -> dict:
    return {"cell_type": "code", "source": source, "metadata": {"tags": list(tags)},
            "outputs": [], "execution_count": None}  # fmt: skip


@pytest.mark.parametrize(
    ("cells", "says"),
    [
        ([_code('params_file = "params/gaia_demo.yaml"')], "no cell tagged `parameters`"),
        ([_code('params_file = "params/nope.yaml"', "parameters")], "params/nope.yaml"),
        ([_code("overrides = []", "parameters")], "sets no params_file"),
        ([_code("params_file = pick()", "parameters")], "params_file is not a literal"),
        ([_code('params_file = "params/gaia_demo.yaml"\noverrides = "seed=7"', "parameters")],
         "overrides must be a list of strings"),
        ([_code("params_file = (", "parameters")], "not Python"),
        ([_code('params_file = "params/arena_demo.yaml"', "parameters")],
         "renders with notebooks/arena.ipynb"),
        # before: read as overrides = ["seed=5"] (another run published, exit 0)
        ([_code('params_file = "params/gaia_demo.yaml"\noverrides = ["seed=5"]\n'
                'overrides += ["seed=6"]', "parameters")],
         "line 3: overrides is set other than by a plain top-level assignment"),
        ([_code('params_file = "params/gaia_demo.yaml"\nif True:\n    overrides = ["seed=8"]',
                "parameters")], "line 3: overrides is set other than"),
    ],
)  # fmt: skip
def test_publish_says_in_one_line_why_a_notebook_cannot_be_published(
    tmp_path, monkeypatch, capsys, cells, says
):
    home = _project(tmp_path, monkeypatch, "")
    shutil.copytree(ROOT / "params", home / "params", dirs_exist_ok=True)
    notebook = _nb(home, cells)
    assert main(["publish", str(notebook)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("evalbench: ") and says in err and err.count("\n") == 1, err
    assert not get_settings().outputs_dir.exists()  # nothing run, nothing written


def test_publish_says_why_a_folder_or_file_is_not_a_run_to_publish(tmp_path, capsys):
    assert main(["publish", str(tmp_path)]) == 2
    assert "not a run folder (no manifest.json)" in capsys.readouterr().err
    (tmp_path / "x.txt").write_text("")
    assert main(["publish", str(tmp_path / "x.txt")]) == 2
    assert "not a notebook (.ipynb) or a run folder" in capsys.readouterr().err
    assert main(["publish", str(tmp_path / "gone.ipynb")]) == 2
    assert "no such notebook" in capsys.readouterr().err


@pytest.mark.parametrize("manifest", ["[1, 2]", '"a string"', "null", "7"])
def test_publish_of_a_folder_whose_manifest_is_no_object_is_one_line(tmp_path, capsys, manifest):
    # Before: a JSON list was an AttributeError traceback ('list' object has no attribute
    # 'get'); null was taken for a missing manifest.
    (tmp_path / "manifest.json").write_text(manifest)
    assert main(["publish", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"evalbench: {tmp_path}: unreadable manifest ({tmp_path}/manifest.json: not a JSON object)\n"
    )


def test_publish_refuses_a_run_folder_whose_params_file_changed_since(tmp_path, capsys):
    path = gaia_params(tmp_path, gaia_dataset(tmp_path, ["1"]), [{"name": "s"}])
    params = load_params(path)
    run_dir = run_dir_for(path, params)
    run_dir.mkdir(parents=True)
    (run_dir / "manifest.json").write_text(json.dumps(
        {"params_file": str(path), "overrides": [], "status": "executed"}))  # fmt: skip
    data = yaml.safe_load(path.read_text())
    path.write_text(yaml.safe_dump({**data, "seed": 5}))  # edited after the notebook ran
    now = params_hash(load_params(path))
    assert main(["publish", str(run_dir)]) == 2
    err = capsys.readouterr().err
    assert f"changed since this run (run {run_dir.name}; its content now is run {now})" in err


@pytest.mark.parametrize("line", ["writes", "works in"])
def test_publish_refuses_a_notebook_whose_params_file_changed_since_its_session(
    tmp_path, monkeypatch, capsys, line
):
    """The notebook's saved outputs name the run its session wrote; its params file was edited
    since. Before: publish rendered the file's new content, a run the notebook never made
    (asking every question again), and called it the notebook's."""
    from evalbench.lab import publish_target

    home = _project(tmp_path, monkeypatch, 'params_file = "params/mine.yaml"\noverrides = []\n')
    path = gaia_params(home / "params", gaia_dataset(tmp_path, list("12")), [{"name": "s"}],
                       name="mine")  # fmt: skip
    session = run_dir_for(path, load_params(path))
    from evalbench.runs import lab_folder
    from evalbench.studies import _by_hand  # the line the session printed

    said = _by_hand(session, session if line == "writes" else lab_folder(session)) + "\n"
    notebook = home / "notebooks" / NOTEBOOK.name
    nb = json.loads(notebook.read_text())
    code = next(c for c in nb["cells"][1:] if c["cell_type"] == "code")
    code["outputs"] = [{"output_type": "stream", "name": "stderr", "text": said.splitlines(True)}]
    notebook.write_text(json.dumps(nb))
    assert publish_target(notebook).params_file == path  # unchanged: its run is published
    path.write_text(path.read_text().replace("bootstrap_rounds: 50", "bootstrap_rounds: 60"))
    now = run_dir_for(path, load_params(path)).name
    assert main(["publish", str(notebook)]) == 2
    err = capsys.readouterr().err
    assert (
        err.count("\n") == 1
        and (
            f"params/mine.yaml has changed since this notebook's session (its outputs name run "
            f"{session.name}; the file's content now is run {now})"
        )
        in err
    ), err
    assert not session.exists() and not (session.parent / now).exists()  # nothing run
    # the parameters cell now names another file than the session ran
    other = gaia_params(home / "params", gaia_dataset(tmp_path, ["3"], name="d2"),
                        [{"name": "s"}], name="other")  # fmt: skip
    cell = nb["cells"][0]
    cell["source"] = 'params_file = "params/other.yaml"\noverrides = []\n'
    notebook.write_text(json.dumps(nb))
    assert other.is_file() and main(["publish", str(notebook)]) == 2
    err = capsys.readouterr().err
    assert "its saved outputs are of a session that ran another params file (run mine/" in err


def test_a_lab_copy_publishes_the_run_it_copies(tmp_path):
    from evalbench.lab import publish_target
    from evalbench.runs import lab_folder

    path = gaia_params(tmp_path, gaia_dataset(tmp_path, ["1"]), [{"name": "s"}])
    run_dir = run_dir_for(path, load_params(path, ["seed=2"]))
    lab = lab_folder(run_dir)
    assert lab == get_settings().outputs_dir / "lab" / "gaia_test" / run_dir.name
    lab.mkdir(parents=True)
    (lab / "manifest.json").write_text(json.dumps(
        {"params_file": str(path), "overrides": ["seed=2"], "status": "executed"}))  # fmt: skip
    assert publish_target(lab) == (path, ["seed=2"])  # `evalbench run` renders run_dir


def test_a_lab_copy_never_copies_what_a_record_link_points_to(tmp_path):
    # A published run folder from an archive whose records/x.jsonl links to a private file.
    # Before: the lab copy (made when its notebook is rerun in JupyterLab) copied the file
    # it names into outputs/lab/..., a folder that is shared like any output.
    from evalbench.runs import _copy_records

    private = tmp_path / "id_ed25519"
    private.write_text("-----BEGIN OPENSSH PRIVATE KEY-----")
    records = tmp_path / "run" / "records"
    records.mkdir(parents=True)
    (records / "answers.jsonl").write_text('{"id": 1}\n')
    (records / "x.jsonl").symlink_to(private)
    _copy_records(records, tmp_path / "lab" / "records")
    assert sorted(p.name for p in (tmp_path / "lab" / "records").iterdir()) == ["answers.jsonl"]
