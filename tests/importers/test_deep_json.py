"""JSON nested deeper than the parser's recursion limit, in every file an importer reads:
one line naming file:line (exit 2 on the command line), never a RecursionError traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalbench.cli import main
from evalbench.importers import OutcomeError, read_outcomes

# inspect_ai takes ~2 s to import: its tests share one test process (xdist_group)
pytestmark = pytest.mark.xdist_group("inspect_ai")

DEEP = "[" * 200_000 + "]" * 200_000
DATE = "2026-01-01T00-00-00.1"


def _lm_eval(folder: Path, second_line: str, results: str | None = None) -> Path:
    folder.mkdir(parents=True)
    (folder / f"results_{DATE}.json").write_text(
        results or json.dumps({"results": {"toy": {}}, "model_name": "m"})
    )
    first = '{"doc_id": 0, "filter": "none", "metrics": ["acc"], "acc": 1}'
    (folder / f"samples_toy_{DATE}.jsonl").write_text(f"{first}\n\n{second_line}\n")
    return folder


def test_an_lm_eval_sample_line_nested_200k_deep_is_one_line_exit_2(tmp_path, capsys):
    folder = _lm_eval(tmp_path / "m", '{"doc_id": 1, "x": ' + DEEP + "}")
    assert main(["compare", "--no-report", str(folder), str(folder)]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"evalbench: {folder}/samples_toy_{DATE}.jsonl:3: nested too deeply to read "
        "(JSON deeper than the parser's recursion limit)\n"
    )  # line 3: the blank line 2 is counted


def test_a_deep_results_file_manifest_and_record_line_name_the_file(tmp_path, gaia_run_folder):
    folder = _lm_eval(tmp_path / "m", '{"doc_id": 1, "filter": "none", "metrics": []}', DEEP)
    with pytest.raises(OutcomeError, match=rf"results_{DATE}\.json: not a readable lm-eval "
                                           r"results file \(nested too deeply"):  # fmt: skip
        read_outcomes(folder)
    run = gaia_run_folder
    records = run / "records" / "gaia.jsonl"
    records.write_text(records.read_text() + '{"task_id": ' + DEEP + "}\n")
    with pytest.raises(OutcomeError, match=r"gaia\.jsonl:2: nested too deeply to read"):
        read_outcomes(run)
    (run / "manifest.json").write_text(DEEP)
    with pytest.raises(OutcomeError, match=r"manifest\.json: not JSON \(nested too deeply"):
        read_outcomes(run)


@pytest.fixture
def gaia_run_folder(tmp_path) -> Path:
    """A GAIA run folder with one record (the fields the reader reads)."""
    run = tmp_path / "outputs" / "g" / "r"
    (run / "records").mkdir(parents=True)
    row = {"system": "s", "task_id": "t0", "level": 1, "attempt": 0, "correct": True,
           "no_answer": False, "error": None}  # fmt: skip
    (run / "records" / "gaia.jsonl").write_text(json.dumps(row) + "\n")
    (run / "manifest.json").write_text(json.dumps({"kind": "gaia", "status": "ok"}))
    assert len(read_outcomes(run).outcomes) == 1
    return run


@pytest.mark.slow  # over ~1 s
def test_deep_inspect_logs_are_one_line_too(inspect_ai, tmp_path):
    """Already so (inspect's reader raises, its error becomes one line): kept that way."""
    import zipfile

    path = tmp_path / "deep.eval"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", '{"version": 2, "x": ' + DEEP + "}")
    with pytest.raises(OutcomeError, match=r"deep\.eval: not a readable inspect_ai log"):
        read_outcomes(path)
    path = tmp_path / "deep.json"
    path.write_text('{"version": 2, "status": "success", "eval": ' + DEEP + "}")
    with pytest.raises(OutcomeError, match=r"deep\.json: not a readable inspect_ai log"):
        read_outcomes(path)


def test_a_deep_manifest_is_an_unreadable_run_in_the_history(gaia_run_folder, monkeypatch):
    from evalbench.history import history_frame

    monkeypatch.setenv("EVALBENCH_OUTPUTS", str(gaia_run_folder.parents[1]))
    (gaia_run_folder / "manifest.json").write_text(DEEP)
    frame = history_frame("g")
    assert frame["status"].tolist() == ["failed"]  # "unreadable manifest", no traceback
