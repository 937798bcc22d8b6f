"""Bad numbers and names given to ``evalbench compare`` and ``evalbench history`` are one-line
errors (exit 2) before anything is read: a gate with a NaN level never passes silently, a
bootstrap of -5 rounds never crashes, a study name never leaves the outputs folder."""

from __future__ import annotations

import pytest
from compare.conftest import write_gaia_run

from evalbench.cli import main

RUNS = {"s": {"t1": True, "t2": False}}


@pytest.mark.parametrize(
    ("option", "value", "says"),
    [
        ("--alpha", "nan", "--alpha: nan is not a level above 0 and below 0.5"),
        ("--alpha", "-1", "--alpha: -1 is not a level above 0 and below 0.5"),
        ("--alpha", "0.5", "--alpha: 0.5 is not a level above 0 and below 0.5"),
        ("--min-drop", "nan", "--min-drop: nan is not a finite number >= 0"),
        ("--min-drop", "inf", "--min-drop: inf is not a finite number >= 0"),
        ("--min-drop", "-0.1", "--min-drop: -0.1 is not a finite number >= 0"),
        ("--rounds", "-5", "--rounds: -5 is not a number of rounds from 10 to 100,000"),
        ("--rounds", "0", "--rounds: 0 is not a number of rounds from 10 to 100,000"),
        ("--rounds", "1000001", "--rounds: 1000001 is not a number of rounds from 10 to 100,000"),
        ("--max-log-mb", "0", "--max-log-mb: 0 is not a size of 1 MB or more"),
    ],
)
def test_bad_gate_numbers_are_one_line_errors(gaia_run, capsys, option, value, says):
    base, cand = gaia_run("g", "base", RUNS), gaia_run("g", "cand", RUNS)
    code = main(["compare", "--baseline", str(base), "--fail-on-regression", "--no-report",
                 option, value, str(cand)])  # fmt: skip
    out, err = capsys.readouterr()
    assert (code, out, err) == (2, "", f"evalbench: {says}\n")


def test_a_study_name_never_leaves_the_outputs_folder(outputs, capsys):
    write_gaia_run(outputs.parent / "elsewhere", "h", "r1", RUNS)  # a study outside outputs
    for ref in (
        "../elsewhere/h",
        "..",
        "h/../../elsewhere/h",
        str(outputs.parent / "elsewhere" / "h"),
    ):
        assert main(["history", ref]) == 2, ref
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1
        assert err.startswith(f"evalbench: {ref}: not a study name (a folder directly under ")
    assert main(["compare", "../elsewhere/h", "../elsewhere/h", "--no-report"]) == 2
    assert "not a run folder" in capsys.readouterr().err
