"""``evalbench compare`` on an outputs folder that cannot be written (read-only, full): one
line naming the folder, never a traceback; and a pin only of a run where the gate finds it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from compare.conftest import write_gaia_run

from evalbench.cli import main

RUNS = {"s": {"t1": True, "t2": False}}

_COMMANDS = """
import contextlib, io, json, sys
from pathlib import Path
from evalbench.cli import main
from evalbench.records import write_atomic
a, b = sys.argv[1:3]
for argv in (["compare", "--pin", a], ["compare", a, b], ["compare", a, b, "--no-report"]):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(argv)
    print(json.dumps([argv[1], code, err.getvalue()]))
try:  # the error is the write's own, not one raised while cleaning up after it
    write_atomic(Path(a).parent / "x.txt", "x")
except OSError as exc:
    print(json.dumps(["write_atomic", exc.errno, repr(exc.__context__)]))
"""


@pytest.mark.slow
def test_a_read_only_outputs_folder_is_one_line_for_every_compare(tmp_path, outputs):
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare (util-linux) for a private read-only mount")
    a = write_gaia_run(outputs, "g", "base", RUNS)
    write_gaia_run(outputs, "g", "cand", RUNS)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    script = (f"mount -t tmpfs -o size=1m tmpfs {mnt} && cp -r {outputs} {mnt}/outputs && "
              f"mount -o remount,ro {mnt} && {sys.executable} -c \"$0\" "
              f"{mnt}/outputs/g/base {mnt}/outputs/g/cand")  # fmt: skip
    env = {"EVALBENCH_OUTPUTS": str(mnt / "outputs")}
    proc = subprocess.run(["unshare", "-m", "sh", "-c", script, _COMMANDS], capture_output=True,
                          text=True, timeout=120, env={**os.environ, **env})  # fmt: skip
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    said = [json.loads(line) for line in proc.stdout.splitlines()]
    ro = "(Read-only file system); set EVALBENCH_OUTPUTS to a writable folder"
    # before: three tracebacks (pin, report), each naming a temp file, exit 1
    assert said[0] == ["--pin", 2, f"evalbench: cannot write to {mnt}/outputs/g {ro} or free "
                                   "some disk space\n"]  # fmt: skip
    assert said[1][:2] == [str(a).replace(str(outputs), f"{mnt}/outputs"), 3]
    assert said[1][2].startswith(f"evalbench: cannot write to {mnt}/outputs") and ro in said[1][2]
    assert said[1][2].count("\n") == 1
    assert said[2][1:] == [0, ""]  # no report: nothing written, the comparison as before
    assert said[3] == ["write_atomic", 30, "None"]


def test_a_run_folder_outside_its_study_folder_is_never_pinned(outputs, tmp_path, capsys):
    # Before: a copy of a run outside outputs/ was pinned (only its folder name was kept), and
    # the gate then used outputs/<study>/<that name>: another run, or none
    write_gaia_run(outputs, "g", "other", RUNS)
    outside = write_gaia_run(tmp_path / "elsewhere", "g", "other", RUNS)
    tamper = write_gaia_run(outputs, "tamper", "x1", RUNS)
    manifest = json.loads((tamper / "manifest.json").read_text())
    (tamper / "manifest.json").write_text(json.dumps(manifest | {"study": "g"}))
    for run in (outside, tamper):
        assert main(["compare", "--pin", str(run)]) == 2
        err = capsys.readouterr().err
        assert err == (f"evalbench: {run}: not a run folder of study 'g' in {outputs} (pin "
                       f"one of {outputs / 'g'}/RUN_ID)\n")  # fmt: skip
    assert not (outputs / "g" / "baseline.json").exists()
    assert main(["compare", "--pin", str(outputs / "g" / "other")]) == 0
    assert json.loads((outputs / "g" / "baseline.json").read_text())["run_id"] == "other"


def test_pin_takes_one_run(outputs, capsys):
    a = write_gaia_run(outputs, "g", "a", RUNS)
    assert main(["compare", "--pin", str(a), str(a)]) == 2
    assert capsys.readouterr().err == "evalbench: --pin takes one run (got 1 more)\n"
    assert not (outputs / "g" / "baseline.json").exists()
