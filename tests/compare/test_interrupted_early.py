"""A run killed (``kill -9``) before its manifest said what it runs: the manifest holds only
the status, start time and process id. Its folder still names the study and the run, so the
index and ``evalbench history`` say those, never ``?``, ``nan`` or a lone ``*``; ``compare``
says the run was interrupted, not that a study kind ``None`` has no outcomes."""

from __future__ import annotations

import json
import re

import pytest

from evalbench.cli import main
from evalbench.index import build_index


@pytest.fixture
def killed(outputs):
    run_dir = outputs / "g" / "0a1b2c3d4e5f"
    run_dir.mkdir(parents=True)
    manifest = {"status": "running", "started_at": "2026-01-02T00:00:00+00:00", "reason": None,
                "pid": 2**22 + 12345, "kernel_pid": None}  # fmt: skip
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    return run_dir


def test_the_index_row_names_study_and_run_from_the_folder(killed, outputs):
    build_index(outputs)
    index = (outputs / "index.html").read_text()
    row = re.findall(r"<tr><td>[^<]*<div class='id'>[^<]*</div>.*?</tr>", index)[0]
    assert row.startswith("<tr><td>g<div class='id'>g/0a1b2c3d4e5f</div>")
    assert "interrupted" in row


def test_history_shows_no_nan_and_no_lone_star(killed, gaia_run, capsys):
    gaia_run("g", "r1", {"s": {"t1": True}}, started_at="2026-01-01T00:00:00+00:00")
    assert main(["history", "g"]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if line.startswith("0a1b2c3d4e5f"))
    assert "interrupted" in line
    assert not re.search(r"\bnan\b|\bNaN\b|None|(?<![\w-])\*", line), line
    assert line.split()[5] == "0a1b2c3d4e5f"  # params hash: the folder's name


def test_compare_says_the_run_was_interrupted(killed, gaia_run, capsys):
    base = gaia_run("g", "r1", {"s": {"t1": True}})
    assert main(["compare", str(base), "g/0a1b2c3d4e5f", "--no-report"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "kind 'None'" not in err
    assert err.startswith("evalbench: g/0a1b2c3d4e5f: status interrupted before it recorded what "
                          "it runs (no study kind in its manifest)")  # fmt: skip


@pytest.mark.parametrize("gate", [False, True])
def test_ctrl_c_while_the_compare_report_renders_exits_130(gaia_run, capsys, monkeypatch, gate):
    """Before: the interrupted render was "the compare report did not render (interrupted:
    …)", exit 3 (or the gate's 1): a Ctrl-C must read as one, exit 130, in every command."""
    from evalbench import publish
    from evalbench.publish import StudyResult

    a = gaia_run("g", "r1", {"s": {"t1": True, "t2": True}})
    b = gaia_run("g", "r2", {"s": {"t1": False, "t2": False}},
                 started_at="2026-01-02T00:00:00+00:00")  # fmt: skip

    def interrupted(path, *args, **kwargs):
        return StudyResult(path, "interrupted", None, 1.0, "interrupted by SIGINT")

    monkeypatch.setattr(publish, "run_study", interrupted)
    argv = ["compare", str(a), str(b)] + (["--fail-on-regression"] if gate else [])
    assert main(argv) == 130
    assert capsys.readouterr().err.endswith("evalbench: interrupted; rerun the same command to "
                                            "resume\n")  # fmt: skip
