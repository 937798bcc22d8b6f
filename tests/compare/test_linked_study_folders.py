"""A study folder of the outputs folder that is a link (an archive linked in) is read, never
written through: no pin, trends page or compare request lands in the folder it names. A
manifest that is no regular file (a FIFO) is no run, and no reader waits on it."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest
from compare.conftest import write_gaia_run

from evalbench.cli import main
from evalbench.index import build_index

RUNS = {"s": {"t1": True, "t2": False}}


def _linked_study(outputs, tmp_path):
    archive = tmp_path / "archive"
    run = write_gaia_run(archive, "old", "r1", RUNS)
    (outputs / "old").symlink_to(archive / "old")
    return outputs / "old" / run.name, archive / "old"


def test_a_pin_in_a_linked_study_folder_is_refused(outputs, tmp_path, capsys):
    run, archive = _linked_study(outputs, tmp_path)
    assert main(["compare", "--pin", str(run)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"evalbench: {outputs / 'old'}: leads to " in err, err
    assert not (archive / "baseline.json").exists()


def test_the_index_writes_no_trends_page_through_a_linked_study_folder(outputs, tmp_path):
    _, archive = _linked_study(outputs, tmp_path)
    write_gaia_run(outputs, "g", "r1", RUNS)
    build_index(outputs)
    assert (outputs / "g" / "trends.html").is_file()
    assert not (archive / "trends.html").exists()


def test_compare_writes_no_request_through_a_linked_requests_folder(outputs, tmp_path, capsys):
    a = write_gaia_run(outputs, "g", "a", RUNS)
    b = write_gaia_run(outputs, "g", "b", RUNS)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (outputs / "compare").mkdir()
    (outputs / "compare" / "requests").symlink_to(elsewhere)
    assert main(["compare", str(a), str(b)]) == 3  # the report did not render
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "requests/" in err and "(a link), outside" in err, err
    assert not list(elsewhere.iterdir())


def test_a_manifest_that_is_a_fifo_is_no_run_and_nothing_waits_on_it(outputs):
    write_gaia_run(outputs, "g", "r1", RUNS)
    (outputs / "g" / "fifo").mkdir()
    os.mkfifo(outputs / "g" / "fifo" / "manifest.json")
    # in a process of its own: a reader that opens the FIFO blocks until someone writes
    proc = subprocess.run(
        [sys.executable, "-m", "evalbench.cli", "history", "g"], capture_output=True,
        text=True, timeout=60, env={**os.environ, "EVALBENCH_OUTPUTS": str(outputs)},
    )  # fmt: skip
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "    r1     ok" in proc.stdout  # the FIFO's folder is a run that cannot be read
    index = threading.Thread(target=build_index, args=(outputs,), daemon=True)
    index.start()  # what every `evalbench run` rebuilds
    index.join(60)
    assert not index.is_alive(), "the index waits on a FIFO"


def test_a_report_that_cannot_be_written_keeps_the_gates_exit_status(outputs, capsys, monkeypatch):
    # a full disk (the run folder's probe: OutputsUnwritable, no errno) made a regression
    # found by the gate exit 2, "bad input", where it is 1 (and 3 without a regression)
    from evalbench.history import cli as history_cli
    from evalbench.records import OutputsUnwritable

    def full(*args, **kwargs):
        raise OutputsUnwritable(f"cannot write to {outputs}/compare/x (No space left on device)")

    monkeypatch.setattr(history_cli, "render_report", full)
    base = write_gaia_run(outputs, "g", "base", {"s": dict.fromkeys(map(str, range(12)), True)})
    worse = write_gaia_run(outputs, "g", "worse", {"s": dict.fromkeys(map(str, range(12)), False)})
    same = write_gaia_run(outputs, "g", "same", {"s": dict.fromkeys(map(str, range(12)), True)})
    gate = ["compare", "--fail-on-regression", "--baseline", str(base)]
    assert main([*gate, str(worse)]) == 1
    assert "REGRESSION" in capsys.readouterr().out
    assert main([*gate, str(same)]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "No space left on device" in err, err


@pytest.mark.parametrize("damage", [b'{"status": "ok", "study": "g"', b"\xff\xfe{}"])
def test_a_pin_of_a_run_whose_manifest_is_damaged_says_what_is_wrong(outputs, capsys, damage):
    # it said "not a run folder (no manifest.json)" beside a manifest that was there
    run = write_gaia_run(outputs, "g", "r1", RUNS)
    (run / "manifest.json").write_bytes(damage)
    assert main(["compare", "--pin", str(run)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"evalbench: {run / 'manifest.json'}: not JSON") and err.count("\n") == 1
    assert not (outputs / "g" / "baseline.json").exists()
