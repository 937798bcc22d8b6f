"""Unchanged reruns are skipped (``current``), anything that changes the numbers is not; a
warm kernel renders exactly what a fresh kernel renders."""

from __future__ import annotations

import json
import os
import threading

import pytest
from loopback import Fault
from studyfiles import CANARY_KEY, KEY_ENV, gaia_dataset, gaia_params, openai_system

from evalbench.cli import main
from evalbench.publish import run_many, run_study
from evalbench.records import OutputsUnwritable, read_jsonl


def _study(tmp_path, answers=("1", "2", "3")):
    return gaia_params(tmp_path, gaia_dataset(tmp_path, list(answers)), [{"name": "s"}])


@pytest.mark.slow
def test_an_unchanged_rerun_is_current_and_renders_nothing(tmp_path):
    path = _study(tmp_path)
    first = run_study(path, warm=True)
    assert first.status == "ok"
    report = (first.run_dir / "report.html").stat().st_mtime_ns
    again = run_study(path, warm=True)
    assert again.status == "current" and again.run_dir == first.run_dir
    assert (first.run_dir / "report.html").stat().st_mtime_ns == report  # not rewritten
    assert run_study(path, force=True, warm=True).status == "ok"  # --force renders anyway
    # a run folder moved out of the outputs folder and linked back: never "current" (as
    # `history` and `--force` already treat it: before, `report` said current and linked it)
    moved = tmp_path / "elsewhere"
    first.run_dir.rename(moved)
    first.run_dir.symlink_to(moved, target_is_directory=True)
    with pytest.raises(OutputsUnwritable, match=r"\(a link\), outside the outputs folder"):
        run_study(path, warm=True)


@pytest.mark.slow
def test_edited_params_or_data_make_the_run_stale(tmp_path):
    path = _study(tmp_path)
    assert run_study(path, warm=True).status == "ok"
    path.write_text(path.read_text() + "# a comment changes nothing resolved, but the file\n")
    assert run_study(path, warm=True).status == "ok"  # the params file changed: rendered again
    assert run_study(path, warm=True).status == "current"
    with open(tmp_path / "gaia_local" / "metadata.jsonl", "a") as fh:  # the data changed
        fh.write(json.dumps({"task_id": "t9", "Question": "?", "Level": 1,
                             "Final answer": "9"}) + "\n")  # fmt: skip
    rerun = run_study(path, warm=True)
    assert rerun.status == "ok"
    assert len(read_jsonl(rerun.run_dir / "records" / "gaia.jsonl")) == 4


@pytest.mark.slow
def test_a_run_with_a_failed_real_call_is_never_current(tmp_path, loopback, monkeypatch):
    monkeypatch.setenv(KEY_ENV, CANARY_KEY)
    loopback.enqueue(Fault("500"))
    path = gaia_params(tmp_path, gaia_dataset(tmp_path, ["1", "2"]),
                       [openai_system(loopback, max_retries=0, max_concurrency=1)],
                       max_error_rate=0.5)  # fmt: skip
    assert run_study(path, warm=True).status == "ok"  # 1 of 2 calls failed, within the limit
    healed = run_study(path, warm=True)
    assert healed.status == "ok" and loopback.count == 3  # the failed call asked again
    assert run_study(path, warm=True).status == "current"


@pytest.mark.slow
def test_make_report_prints_current_and_exits_0(tmp_path, capsys):
    path = _study(tmp_path)
    assert main(["report", str(path)]) == 0
    capsys.readouterr()
    assert main(["report", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("current") and "1 current" in out


@pytest.mark.slow
def test_a_warm_kernel_renders_what_a_fresh_one_renders(tmp_path, monkeypatch):
    # two different studies through this process's warm kernel (the one earlier tests used,
    # see conftest.py), then the first again: each one's records equal those of a fresh
    # kernel (nothing leaks from one study to the next)
    a = gaia_params(tmp_path, gaia_dataset(tmp_path, ["1", "2", "3"]), [{"name": "s"}], name="a")
    b = gaia_params(tmp_path, gaia_dataset(tmp_path, ["x", "y"], name="data_b"),
                    [{"name": "t", "sim": {"accuracy": 0.2}}], name="b")  # fmt: skip
    warm = list(run_many([a, b], jobs=1, force=True))
    assert [r.status for r in warm] == ["ok", "ok"]
    warm_a = read_jsonl(warm[0].run_dir / "records" / "gaia.jsonl")
    manifest_b = json.loads((warm[1].run_dir / "manifest.json").read_text())
    # b's manifest names b's data file only: a's reads were forgotten between studies
    assert list(manifest_b["data_files"]) == [str(tmp_path / "data_b" / "metadata.jsonl")]
    fresh = run_study(a, force=True)  # a fresh kernel (not warm)
    assert read_jsonl(fresh.run_dir / "records" / "gaia.jsonl") == warm_a
    # after studies that asked a model, the warm kernel's imports are still out of the
    # garbage collector's passes (a batch's unfreeze gave them back: each %reset then
    # walked the whole heap twice, 0.2 s of CPU per study)
    from evalbench import kernels

    km = kernels._STATE["km"]  # the one run_many used
    kernels.prepare(km)
    kernels._run(km, "import gc; assert gc.get_freeze_count() > 100_000, gc.get_freeze_count()")


@pytest.mark.slow
def test_renders_in_the_warm_kernel_leave_no_descriptor_or_thread_behind(tmp_path):
    # `make report` renders every study in one process, in its warm kernel. Each render left
    # papermill's client of that kernel open: its heartbeat thread, a zmq context with two
    # threads and 14 file descriptors, so ~70 renders exhausted a limit of 1,024 descriptors
    # (and a serial `make test TEST_JOBS=0` went past it)
    path = _study(tmp_path)
    assert run_study(path, warm=True, force=True).status == "ok"  # the warm kernel is up

    def held() -> tuple[int, int]:
        return len(os.listdir("/proc/self/fd")), threading.active_count()

    before = held()
    for _ in range(3):
        assert run_study(path, warm=True, force=True).status == "ok"
    after = held()  # an earlier test's thread may end meanwhile: no growth is the point
    assert after[0] <= before[0] and after[1] <= before[1], (before, after)


@pytest.mark.slow
def test_the_report_command_does_not_import_the_label_or_history_commands():
    # an unchanged `make report` is a few file reads; building the parser used to import
    # evalbench.labels and evalbench.history (scipy.stats and pandas: ~1 s of the ≤ 2 s)
    import subprocess
    import sys

    code = (
        "import sys; from evalbench import cli; cli._parser(['report']); "
        "print(sorted(m for m in sys.modules if m.startswith(('evalbench.labels', "
        "'evalbench.history', 'scipy.stats'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_label_compare_and_history_still_parse_and_list_in_help(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    listing = capsys.readouterr().out
    assert all(name in listing for name in ("label", "compare", "history"))
    for argv in (["label", "--help"], ["compare", "--help"], ["history", "--help"]):
        with pytest.raises(SystemExit) as exit_info:
            main(argv)
        assert exit_info.value.code == 0
        assert "usage: evalbench " + argv[0] in capsys.readouterr().out


def test_the_timing_table_shows_a_dash_for_a_phase_a_skipped_study_never_reached(tmp_path):
    from pathlib import Path

    from evalbench.publish import StudyResult, timing_lines

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "manifest.json").write_text(
        json.dumps({"timing": {"kernel_start_s": 0.64, "data_load_s": 0.37, "compute_s": 0.0}})
    )
    head, row = timing_lines([StudyResult(Path("bfcl_public.yaml"), "skipped", run_dir, 0.96)])
    assert head.split() == ["timing", "(s)", "kernel_start", "data_load", "compute", "export",
                            "fixed", "total"]  # fmt: skip
    assert row.split() == ["bfcl_public.yaml", "0.64", "0.37", "0.00", "—", "—", "0.96"]
    # a study another process was rendering (busy): its manifest's timing is that process's
    # (before, printed as this one's: "fixed 4.45, total 0.00")
    assert timing_lines([StudyResult(Path("d1.yaml"), "busy", run_dir, 0.0)]) == []


@pytest.mark.slow
def test_a_warm_kernel_can_start_a_spawned_process():
    # make report renders in a warm kernel reset by prepare(); a study that starts a process
    # pool (spawn reads __main__.__spec__) must work there as in a fresh kernel
    from pathlib import Path

    from evalbench import kernels

    km, _ = kernels.warm_kernel(Path(__file__).resolve().parents[1] / "notebooks")
    kernels.prepare(km)
    kernels._run(km, "import multiprocessing as mp, os\n"
                     "child = mp.get_context('spawn').Process(target=os.getpid)\n"
                     "child.start(); child.join(60); assert child.exitcode == 0")  # fmt: skip


@pytest.mark.slow
def test_a_comparison_of_params_files_is_stale_once_a_compared_file_changes(tmp_path):
    # Before: references to a params file (what params/compare_demo.yaml uses) were never
    # followed: after gaia_demo.yaml changed, compare_demo stayed `current` and showed the
    # old comparison ("from 56% to 59%" where a fresh render said "from 3% to 22%").
    import yaml

    compared = _study(tmp_path)
    body = {"study": "compare", "title": "c", "bootstrap_rounds": 50, "calibration_repeats": 0,
            "runs": [{"path": compared.name, "overrides": ["seed=1"]},
                     {"path": compared.name, "overrides": ["seed=2"]}]}  # fmt: skip
    path = tmp_path / "cmp.yaml"
    path.write_text(yaml.safe_dump(body))
    first = run_study(path, warm=True)
    assert first.status == "ok", first.reason
    assert run_study(path, warm=True).status == "current"
    compared.write_text(compared.read_text() + "attempts: 2\n")
    again = run_study(path, warm=True)
    assert again.status == "ok", again.reason  # rendered again, on the new runs
    assert run_study(path, warm=True).status == "current"


@pytest.mark.slow
@pytest.mark.parametrize("change", ["renamed", "edited"])
def test_a_params_file_renamed_or_edited_while_its_run_renders(tmp_path, monkeypatch, change):
    """The run ends from the params it loaded: before, its end read the file again, so a
    file renamed mid-run ended a finished run as "params file not found" (exit 2, no summary,
    no inputs), and one edited mid-run was recorded as the input of a run it never made (a
    later run of the edited file could then read as up to date)."""
    import hashlib

    from evalbench import publish
    from evalbench.publish import _Execution

    path = _study(tmp_path)
    loaded = hashlib.sha256(path.read_bytes()).hexdigest()
    export = _Execution.export

    def meanwhile(self, notebook, html):
        if change == "renamed":
            path.rename(path.with_name("elsewhere.yaml"))
        else:
            path.write_text(
                path.read_text().replace("bootstrap_rounds: 50", "bootstrap_rounds: 60")
            )
        return export(self, notebook, html)

    monkeypatch.setattr(publish._Execution, "export", meanwhile)
    result = run_study(path, warm=True)
    assert result.status == "ok", result.reason
    manifest = json.loads((result.run_dir / "manifest.json").read_text())
    assert manifest["inputs"]["params_file"] == loaded and manifest["published"]
    assert (result.run_dir / "summary.html").is_file()
    if change == "edited":
        monkeypatch.undo()
        assert run_study(path, warm=True).status == "ok"  # another run: not "current"
