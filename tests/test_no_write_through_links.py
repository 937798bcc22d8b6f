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
    from evalbench.settings import get_settings

    name, write = WRITERS[writer]
    folder = get_settings().outputs_dir / "study" / "run"  # a run folder where it belongs
    target = _planted(folder, name, tmp_path)
    with pytest.raises((OSError, OutputsUnwritable)) as refused:
        write(folder)
    assert "outside the outputs folder" not in str(refused.value)  # the link's own error
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


def _linked_run(outputs: Path, target: Path, linked: str) -> tuple[Path, Path]:
    """``outputs/study/abc123`` with the run (or its study) folder a link to ``target``:
    (the run folder, the link)."""
    target.mkdir(parents=True)
    run_dir = outputs / "study" / "abc123"
    link = run_dir if linked == "run folder" else run_dir.parent
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target, target_is_directory=True)
    return run_dir, link


@pytest.mark.parametrize("linked", ["run folder", "study folder"])
@pytest.mark.parametrize("target", ["elsewhere", "another folder of outputs"])
def test_a_linked_run_folder_is_refused_and_nothing_is_written_through_it(tmp_path, linked, target):
    # Before: outputs/<study>/<run> (or outputs/<study>) as a link to a folder elsewhere:
    # the report, the records, the manifest and the lock were all written there. A link to
    # an archive inside outputs was written through too, though every reader takes a linked
    # folder for an archive: the run was never `current` (each `make report` rendered it
    # again, into the archive) and a reader never settles a linked run
    from evalbench.settings import get_settings

    outputs = get_settings().outputs_dir
    inside = target != "elsewhere"
    to = outputs / "archive" / "old" if inside else tmp_path / "elsewhere"
    run_dir, link = _linked_run(outputs, to, linked)
    with pytest.raises(OutputsUnwritable) as refused:
        ensure_writable(run_dir)
    assert str(refused.value) == (
        f"{run_dir}: {link} is a link (to {to}), read as an archive; evalbench writes "
        f"only into folders of the outputs folder {outputs} that are no link"
        if inside
        else f"{run_dir}: leads to {to}{'' if linked == 'run folder' else '/abc123'} (a "
        f"link), outside the outputs folder {outputs}; evalbench writes only inside it"
    )
    assert list(to.iterdir()) == []  # not even the write probe


def test_an_outputs_folder_that_is_itself_a_link_is_written_as_usual(tmp_path, monkeypatch):
    # a bigger disk for every run: EVALBENCH_OUTPUTS (or outputs/) pointing at it is fine
    disk = tmp_path / "big-disk"
    disk.mkdir()
    (tmp_path / "outputs").symlink_to(disk, target_is_directory=True)
    monkeypatch.setenv("EVALBENCH_OUTPUTS", str(tmp_path / "outputs"))
    ensure_writable(tmp_path / "outputs" / "study" / "abc123")
    assert (disk / "study" / "abc123").is_dir() and not list((disk / "study" / "abc123").iterdir())


def test_a_write_probe_that_fails_is_not_left_behind(tmp_path, monkeypatch):
    # Before: a full disk left an empty .write-probe in the run folder
    import evalbench.records

    def full(path, mode):
        path.write_text("")  # created, then the disk is full
        raise OSError(28, "No space left on device", str(path))

    from evalbench.settings import get_settings

    monkeypatch.setattr(evalbench.records, "open_in_folder", full)
    run_dir = get_settings().outputs_dir / "study" / "run"
    with pytest.raises(OutputsUnwritable, match="No space left on device"):
        ensure_writable(run_dir)
    assert list(run_dir.iterdir()) == []
