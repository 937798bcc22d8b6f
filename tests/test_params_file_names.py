"""A params file's name (without ``.yaml``) names its run folders under the outputs folder:
a name that is not a folder name there (``...yaml`` is ``..``, ``..yaml`` is ``.``) is a
params error, before anything is written."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evalbench.cli import main
from evalbench.params import ParamsError
from evalbench.studies import load_params

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", ["...yaml", "..yaml", ".hidden.yaml", "....yaml"])
def test_a_params_file_whose_name_is_no_run_folder_is_refused(tmp_path, name):
    # Before: params/...yaml rendered into outputs/../<hash>/, the project folder itself
    # (its stem is ".."); "..yaml" into outputs/<hash>/ with its lab copy in <project>/lab/.
    path = tmp_path / name
    shutil.copyfile(ROOT / "params" / "gaia_demo.yaml", path)
    with pytest.raises(ParamsError) as caught:
        load_params(path)
    assert str(caught.value) == (
        f"{path}: its name without .yaml ({path.stem!r}) names its run folders under the "
        "outputs folder; rename the file (a name that does not start with a dot)"
    )


def test_evalbench_run_of_such_a_file_is_exit_2_and_writes_nothing(tmp_path, monkeypatch, capsys):
    outputs = tmp_path / "project" / "outputs"
    monkeypatch.setenv("EVALBENCH_OUTPUTS", str(outputs))
    path = tmp_path / "project" / "...yaml"
    path.parent.mkdir()
    shutil.copyfile(ROOT / "params" / "gaia_demo.yaml", path)
    assert main(["run", str(path)]) == 2
    assert capsys.readouterr().err.startswith(f"evalbench: {path}: its name without .yaml")
    assert sorted(p.name for p in path.parent.iterdir()) == ["...yaml"]  # no run folder


def test_ordinary_names_still_load():
    assert load_params(ROOT / "params" / "gaia_demo.yaml").study == "gaia"
