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
