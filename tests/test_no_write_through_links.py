"""Nothing evalbench writes in a run or cell folder goes through a symbolic link planted
there (a folder from an archive): the write-probe, a cell's log and in-flight note, batch
mode's log. The link's target stays as it was; the write fails with the
folder's own error."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest

from evalbench.models.batch import BatchLog
from evalbench.publish import OutputsUnwritable, ensure_writable
from evalbench.records import open_in_folder
from evalbench.sweeps.data import IN_FLIGHT, note_sent

TARGET_TEXT = "export PATH=$HOME/bin:$PATH"  # no final newline


def _planted(folder: Path, name: str, tmp_path: Path) -> Path:
    target = tmp_path / "victim"
    target.write_text(TARGET_TEXT)
    link = folder / name
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)
    return target


WRITERS: dict[str, tuple[str, Callable[[Path], object]]] = {
    # Before: the probe overwrote the target with 64 kB of zero bytes; the in-flight note
    # and batch mode's log appended to it; a cell's log replaced its content.
    "write probe": (".write-probe", ensure_writable),
    "in-flight note": (IN_FLIGHT, lambda folder: note_sent(folder, "s", "k" * 64)),
    "batch log": ("batches.jsonl", lambda folder: BatchLog(folder, "s")._append(event="x")),
    "cell log": ("cell.log", lambda folder: _cell_log(folder)),
}


def _cell_log(folder: Path) -> None:
    """A sweep cell's run with its stderr in ``cell.log`` (the cell itself left out)."""
    from evalbench.sweeps import study

    computed = study._compute
    study._compute = lambda job, timing: None  # type: ignore[assignment]
    try:
        study._logged(SimpleNamespace(folder=folder), {})  # type: ignore[arg-type]
    finally:
        study._compute = computed


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_link_planted_in_a_folder_is_never_written_through(tmp_path, writer):
    name, write = WRITERS[writer]
    folder = tmp_path / "run"
    target = _planted(folder, name, tmp_path)
    with pytest.raises((OSError, OutputsUnwritable)):
        write(folder)
    assert target.read_text() == TARGET_TEXT


def test_open_in_folder_writes_and_appends_a_plain_file(tmp_path):
    path = tmp_path / "f.log"
    with open_in_folder(path, "w") as fh:
        fh.write("a\n")
    with open_in_folder(path, "a") as fh:
        fh.write("b\n")
    assert path.read_text() == "a\nb\n"


def test_a_linked_lock_file_is_the_run_folders_one_line_error(tmp_path):
    # filelock itself refuses the link (ELOOP); before, that was a traceback out of
    # `evalbench run`.
    from evalbench.publish import run_study
    from evalbench.runs import run_dir_for
    from evalbench.studies import load_params

    params_file = Path(__file__).resolve().parents[1] / "params" / "gaia_demo.yaml"
    run_dir = run_dir_for(params_file, load_params(params_file))
    target = _planted(run_dir, ".lock", tmp_path)
    with pytest.raises(OutputsUnwritable, match=r"^cannot write to .*symbolic links"):
        run_study(params_file)
    assert target.read_text() == TARGET_TEXT


@pytest.mark.parametrize("linked", ["study", "run"])
def test_a_reader_never_settles_a_run_through_a_link(tmp_path, linked):
    # Before: `evalbench history evil` (outputs/evil a link to a folder elsewhere) created
    # <elsewhere>/run1/.lock and rewrote that run's manifest `interrupted`.
    import json

    from evalbench.runs import current_manifest

    elsewhere = tmp_path / "elsewhere" / "evil"
    (elsewhere / "run1").mkdir(parents=True)
    text = json.dumps({"status": "running", "pid": 2**22 + 1, "study": "evil"})
    (elsewhere / "run1" / "manifest.json").write_text(text)
    outputs = tmp_path / "outputs"
    if linked == "study":
        outputs.mkdir()
        (outputs / "evil").symlink_to(elsewhere)
    else:
        (outputs / "evil").mkdir(parents=True)
        (outputs / "evil" / "run1").symlink_to(elsewhere / "run1")
    shown = current_manifest(outputs / "evil" / "run1")
    assert shown["status"] == "interrupted" and "killed?" in shown["reason"]
    assert (elsewhere / "run1" / "manifest.json").read_text() == text
    assert sorted(p.name for p in (elsewhere / "run1").iterdir()) == ["manifest.json"]
