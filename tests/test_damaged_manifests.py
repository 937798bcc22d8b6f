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


# A field evalbench reads, holding another type than evalbench writes there. Before: each of
# these stopped `evalbench run` of any study (the index it rebuilds), `history` or `compare`
# with a traceback (OverflowError, AttributeError, TypeError); now the folder is unreadable,
# as a manifest that is not JSON is.
WRONG_FIELDS = [
    ({"wall_time_s": 10**400}, "it holds a number that is not finite or past 1e300"),
    ({"cost_usd": float("nan")}, "it holds a number that is not finite or past 1e300"),
    ({"headlines": [1, 2]}, "field 'headlines' is a list, not an object"),
    ({"alerts": []}, "field 'alerts' is a list, not an object"),
    ({"alerts": {"fired": [1]}}, "field 'alerts.fired' holds an item that is not an object"),
    ({"environment": "x"}, "field 'environment' is a string, not an object"),
    ({"environment": {"git": "x"}}, "field 'environment.git' is a string, not an object"),
    ({"simulated_names": 5}, "field 'simulated_names' is an integer, not a list"),
    ({"overrides": [1, None]}, "field 'overrides' holds an item that is not a string"),
    ({"models": [1, 2]}, "field 'models' holds an item that is not an object"),
    ({"pid": True}, "field 'pid' is true or false, not an integer"),
    ({"published": {"headlines": "x"}}, "field 'published': field 'headlines' is a string, not an object"),
]  # fmt: skip


@pytest.mark.parametrize(("fields", "why"), WRONG_FIELDS, ids=lambda x: str(x)[:40])
def test_a_field_of_another_type_makes_the_manifest_unreadable(tmp_path, fields, why):
    import json

    manifest = {"status": "ok", "study": "s", "run_id": "r", **fields}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ValueError) as caught:
        read_manifest(tmp_path)
    assert str(caught.value).startswith(f"{tmp_path / 'manifest.json'}: {why}")


def test_what_evalbench_writes_is_of_the_types_read(tmp_path):
    # every field with a value of its type (and null) reads
    manifest = {
        "status": "ok", "pid": 1, "simulated": False, "wall_time_s": 1.5, "cost_usd": 0,
        "overrides": ["seed=1"], "models": [{"name": "a"}], "environment": {"git": None},
        "alerts": {"fired": [{"rule": "x"}]}, "headlines": {"accuracy a": 1e300},
        "published": {"status": "ok", "headlines": {}}, "reason": None, "notes": [],
        # a seed of 305 digits is what the user gave (numpy takes it): before, the run that
        # wrote it could not read its own manifest back (a traceback at its end)
        "params": {"seed": 10**305}, "seeds": {"study": 10**305},
    }  # fmt: skip
    (tmp_path / "manifest.json").write_text(__import__("json").dumps(manifest))
    assert read_manifest(tmp_path) == manifest


@pytest.mark.slow
def test_a_sibling_with_a_field_of_another_type_stops_no_page_or_command(warm_cli, capsys):
    import json

    from evalbench.history import history_frame
    from evalbench.index import build_index

    assert main(["run", str(DEMO)]) == 0
    good = run_dir_for(DEMO, load_params(DEMO))
    text = (good / "manifest.json").read_text()
    for k, (fields, _) in enumerate(WRONG_FIELDS):
        bad = good.parent / f"{k:012d}"
        bad.mkdir()
        (bad / "manifest.json").write_text(json.dumps({**json.loads(text), **fields}))
    capsys.readouterr()
    index = build_index().read_text()
    assert index.count("unreadable manifest") == len(WRONG_FIELDS)
    frame = history_frame("gaia_demo")
    assert (frame["status"] == "failed").sum() == len(WRONG_FIELDS)
    assert (frame["status"] == "ok").sum() == 1
    assert main(["history", "gaia_demo"]) == 0
    for k in range(len(WRONG_FIELDS)):
        assert main(["compare", str(good), f"gaia_demo/{k:012d}", "--no-report"]) == 2
        assert "evalbench: " in capsys.readouterr().err
