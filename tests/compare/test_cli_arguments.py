"""Bad numbers and names given to ``evalbench compare`` and ``evalbench history`` are one-line
errors (exit 2) before anything is read: a gate with a NaN level never passes silently, a
bootstrap of -5 rounds never crashes, a study name never leaves the outputs folder."""

from __future__ import annotations

from pathlib import Path

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


def test_a_pair_named_twice_is_refused_not_counted_twice(gaia_run, capsys):
    # Before: each repeat of --pair added the same tests to the Holm family again; named five
    # times, a drop with Holm p = 0.0167 (exit 1) became p = 0.084 and "no regression" (exit 0)
    base, cand = gaia_run("g", "base", RUNS), gaia_run("g", "cand", RUNS)
    pair = ["--pair", "s", "s"]
    code = main(["compare", "--baseline", str(base), "--fail-on-regression", "--no-report",
                 *pair, *pair, str(cand)])  # fmt: skip
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err == ("evalbench: --pair s s is given twice (the same tests twice would weaken "
                   "every Holm-adjusted p)\n")  # fmt: skip


def test_a_min_drop_no_share_can_fall_by_is_refused(gaia_run, capsys):
    # accuracy lies in [0, 1]: a gate that needs a drop of more than 1 can never fire, and
    # said "no regression" with exit 0
    base, cand = gaia_run("g", "base", RUNS), gaia_run("g", "cand", RUNS)
    args = ["compare", "--baseline", str(base), "--fail-on-regression", "--no-report"]
    for drop in ("1", "5"):
        assert main([*args, "--min-drop", drop, str(cand)]) == 2
        err = capsys.readouterr().err
        assert err == (f"evalbench: --min-drop {drop} can never fire: every metric compared "
                       "is a share (from 0 to 1), which cannot fall by more than 1\n")  # fmt: skip
    assert main([*args, "--min-drop", "0.99", str(cand)]) == 0


def test_a_compare_study_refuses_a_pair_named_twice():
    from evalbench.params import ParamsError
    from evalbench.studies import load_params

    path = Path(__file__).resolve().parents[2] / "params" / "compare_demo.yaml"
    pairs = "pairs=[[strong-sim, strong-sim], [weak-sim, weak-sim], [strong-sim, strong-sim]]"
    with pytest.raises(ParamsError) as caught:
        load_params(path, [pairs])
    assert ("pairs: [strong-sim, strong-sim] is given twice (the same tests twice would "
            "weaken every Holm-adjusted p)") in str(caught.value)  # fmt: skip
