"""``evalbench report`` outside a project (no ``params/`` folder where the project is looked
for) is one line and exit 2, as ``evalbench run`` there is."""

from __future__ import annotations

from evalbench.cli import main


def test_report_with_no_params_folder_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    # Before: a FileNotFoundError traceback from listing <folder>/params, exit 1.
    monkeypatch.setenv("EVALBENCH_HOME", str(tmp_path))
    assert main(["report"]) == 2
    captured = capsys.readouterr()
    assert captured.err == (
        f"evalbench: {tmp_path / 'params'}: no such folder (the project, a folder with params/ "
        "and notebooks/, is found from the current folder upward); run from your evalbench "
        "checkout, or set EVALBENCH_HOME to it\n"
    )
    assert not (tmp_path / "outputs").exists()  # nothing written
