"""``evalbench compare --pin`` where the pin file cannot be written (a folder in its place):
one line naming the path, exit 2, nothing changed; before, a traceback from the rename of
the temp file onto it (found by attack)."""

from __future__ import annotations

from evalbench.cli import main

RUNS = {"s": {"t1": True, "t2": False}}


def _tree(outputs):
    return sorted(str(p.relative_to(outputs)) for p in outputs.rglob("*"))


def test_a_folder_where_the_pin_goes_is_one_line_and_exit_2(gaia_run, outputs, capsys):
    run = gaia_run("g", "a", RUNS)
    pin = outputs / "g" / "baseline.json"
    pin.mkdir()
    before = _tree(outputs)
    assert main(["compare", "--pin", str(run)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == f"evalbench: {pin}: cannot write the pin (Is a directory)\n"
    assert _tree(outputs) == before and pin.is_dir()  # no temp file left, the folder kept
    # the gate, on the same state, says so in one line too (as before)
    assert main(["compare", "--fail-on-regression", "--no-report", str(run)]) == 2
    assert capsys.readouterr().err.startswith(f"evalbench: {pin}: run_id: unreadable pin")
