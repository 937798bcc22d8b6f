"""A damaged manifest.json (not JSON, or JSON that is no object: a hand edit, a disk error,
an archive) is its run folder's problem, said in one line: it never stops another run of
the study, and a rerun of that folder sets it aside and starts a new one."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalbench.cli import main
from evalbench.runs import read_manifest, run_dir_for
from evalbench.settings import get_settings
from evalbench.studies import load_params

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "params" / "gaia_demo.yaml"


@pytest.mark.parametrize("text", ["[1, 2]", '"x"', "7", "null"])
def test_a_manifest_that_is_no_object_is_unreadable(tmp_path, text):
    (tmp_path / "manifest.json").write_text(text)
    with pytest.raises(ValueError) as caught:
        read_manifest(tmp_path)
    assert str(caught.value) == f"{tmp_path / 'manifest.json'}: not a JSON object"


@pytest.mark.slow
def test_a_damaged_manifest_never_stops_a_run(warm_cli, capsys):
    # Before: a sibling run folder with manifest.json = "x" stopped `evalbench run` with an
    # AttributeError (the alerts' retry read every run of the study), and the run's own
    # damaged manifest with a ValueError traceback.
    run_dir = run_dir_for(DEMO, load_params(DEMO))
    sibling = run_dir.parent / "000000000000"
    sibling.mkdir(parents=True)
    (sibling / "manifest.json").write_text('"x"')
    run_dir.mkdir()
    (run_dir / "manifest.json").write_text('{"status": "ok", "headl')
    assert main(["run", str(DEMO)]) == 0
    err = capsys.readouterr().err
    set_aside = [p.name for p in run_dir.glob("manifest.unreadable-*.json")]
    assert len(set_aside) == 1 and (run_dir / set_aside[0]).read_text() == '{"status": "ok", "headl'
    assert (
        f"evalbench: {run_dir / 'manifest.json'} could not be read (" in err
        and f"); moved to {set_aside[0]}; this run starts a new one" in err
    )
    assert read_manifest(run_dir)["status"] == "ok"
    assert (sibling / "manifest.json").read_text() == '"x"'  # another folder: left as it is
    assert get_settings().outputs_dir.joinpath("index.html").exists()
