"""Run references, history from manifests, the scorecard and the system pages."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from compare.conftest import write_gaia_run

from evalbench.cli import main
from evalbench.history import history_frame, resolve_run, scorecard
from evalbench.importers import OutcomeError
from evalbench.index import NO_AVERAGE, build_index, system_page_name


def test_history_lists_every_run_from_its_manifests(gaia_run, capsys):
    gaia_run("g", "r1", {"s": {"t1": True}}, started_at="2026-01-01T00:00:00+00:00",
             commit="1111111111aaaa", dirty=True, overrides=["seed=1"])  # fmt: skip
    gaia_run("g", "r2", {"s": {"t1": False}}, started_at="2026-02-01T00:00:00+00:00",
             simulated=False)  # fmt: skip
    frame = history_frame("g")
    assert frame["run_id"].tolist() == ["r1", "r2"]
    assert frame.iloc[0]["commit"] == "1111111111" and bool(frame.iloc[0]["dirty"])
    assert frame.iloc[0]["overrides"] == "seed=1" and frame.iloc[0]["simulated"] == "s"
    assert main(["compare", "--pin", "g/r1"]) == 0
    capsys.readouterr()
    assert main(["history", "g"]) == 0
    out = capsys.readouterr().out
    assert "1111111111+dirty" in out and "s*" in out and "pinned baseline" in out
    assert main(["history", "params/nope.yaml"]) == 2


def test_run_references(gaia_run, outputs, tmp_path):
    old = gaia_run("g", "old", {"s": {"t1": True}}, started_at="2026-01-01T00:00:00+00:00")
    new = gaia_run("g", "new", {"s": {"t1": True}}, started_at="2026-02-01T00:00:00+00:00")
    gaia_run("g", "failed", {"s": {"t1": True}}, started_at="2026-03-01T00:00:00+00:00",
             status="failed")  # fmt: skip
    assert resolve_run("g") == new  # the latest *published* run of the study
    assert resolve_run("g/old") == old and resolve_run(str(old)) == old
    params = tmp_path / "g.yaml"  # a params file whose current content was never rendered
    params.write_text(yaml.safe_dump({"study": "gaia", "title": "t", "dataset": "demo",
                                      "systems": [{"name": "s", "provider": "sim"}]}))  # fmt: skip
    assert resolve_run(params) == new
    other = tmp_path / "other.yaml"  # the same content, a study with no run at all
    other.write_text(params.read_text())
    with pytest.raises(OutcomeError, match="study 'other' has no published run yet"):
        resolve_run(other)


def test_the_scorecard_takes_each_systems_latest_ok_run_and_escapes_everything(gaia_run, outputs):
    levels = {"t1": 1, "t2": 1, "t3": 2, "t4": 2}
    gaia_run("g", "r1", {"s": {"t1": True, "t2": True, "t3": True, "t4": True},
                         "<b>x</b>": {"t1": True, "t2": False, "t3": False, "t4": False}},
             started_at="2026-01-01T00:00:00+00:00", levels=levels)  # fmt: skip
    gaia_run("g", "r2", {"s": {"t1": True, "t2": False, "t3": False, "t4": False}},
             started_at="2026-02-01T00:00:00+00:00", levels=levels)  # fmt: skip
    gaia_run("g", "r3", {"s": {"t1": False, "t2": False, "t3": False, "t4": False}},
             started_at="2026-03-01T00:00:00+00:00", status="failed", levels=levels)  # fmt: skip
    card = scorecard(outputs)
    cells = card.cells.set_index("system")
    # s: its latest ok run is r2 (r3 failed): 1 of 4; <b>x</b> only ran in r1: 1 of 4
    assert cells.loc["s", "run_id"] == "r2" and cells.loc["s", "estimate"] == 0.25
    assert cells.loc["<b>x</b>", "run_id"] == "r1"
    assert cells.loc["s", "n"] == 4 and cells.loc["s", "cost_usd"] == 0.25
    # Wilson interval of 1/4 at 95%: centre (0.25 + 1.92/4)/(1 + 3.84/4) = 0.3727, half-width
    # 1.96 × √(0.25·0.75/4 + 3.84/64)/1.96 = 0.3331 -> [0.0456, 0.6994]
    assert cells.loc["s", "low"] == pytest.approx(0.0456, abs=1e-3)
    assert cells.loc["s", "high"] == pytest.approx(0.6994, abs=1e-3)
    index = build_index().read_text()
    assert "<b>x</b>" not in index and "&lt;b&gt;x&lt;/b&gt;" in index
    assert "Scorecard: systems by benchmark" in index and "<i>title</i>" not in index
    page = outputs / "systems" / system_page_name("<b>x</b>", "g")  # simulated: g's own
    text = page.read_text()
    assert "&lt;b&gt;x&lt;/b&gt;" in text and "<b>x</b>" not in text
    assert "No overall score" in text and "No overall score" in NO_AVERAGE
    history = (outputs / "systems" / system_page_name("s", "g")).read_text()
    assert history.count("<td>g</td>") == 2  # s in r1 and r2 (not the failed r3)


def test_runs_with_overrides_fill_a_cell_only_when_no_plain_run_has_the_system(gaia_run, outputs):
    gaia_run("g", "plain", {"s": {"t1": True, "t2": True}},
             started_at="2026-01-01T00:00:00+00:00")  # fmt: skip
    gaia_run("g", "experiment", {"s": {"t1": False, "t2": False}, "new": {"t1": True}},
             started_at="2026-02-01T00:00:00+00:00", overrides=["seed=2"])  # fmt: skip
    cells = scorecard(outputs).cells.set_index("system")
    assert cells.loc["s", "run_id"] == "plain" and cells.loc["s", "estimate"] == 1.0
    assert cells.loc["new", "run_id"] == "experiment"  # only an experiment has it


def test_a_killed_run_is_interrupted_for_history_and_compare_and_on_disk(gaia_run):
    """A manifest left ``running`` by a kill -9 (no process holds the folder): every reader
    says interrupted, and the first one rewrites the file (runs.current_manifest)."""
    import json

    from evalbench.history import load_run

    killed = gaia_run("g", "killed", {"s": {"t1": True}}, status="running")
    assert load_run(str(killed)).meta["status"] == "interrupted"
    assert json.loads((killed / "manifest.json").read_text())["status"] == "interrupted"
    other = gaia_run("g", "other", {"s": {"t1": True}}, status="executed")
    assert history_frame("g").set_index("run_id").loc["other", "status"] == "interrupted"
    assert json.loads((other / "manifest.json").read_text())["status"] == "interrupted"


def test_a_start_time_that_is_no_time_or_in_the_future_never_makes_a_run_the_latest(
    gaia_run, outputs
):
    # Before: "started_at": "garbage…" (and 2999-01-01) sorted after every real run, so the
    # study's "latest" run (compare STUDY, the gate, the index) was a hand-edited one
    from evalbench.history.runs import latest_published

    runs = {"SIS": {"t1": True}}
    gaia_run("w", "old", runs, started_at="2026-01-01T00:00:00+00:00")
    gaia_run("w", "new", runs, started_at="2026-01-02T00:00:00+00:00")
    for run_id, when in [("garbage", "garbage-not-a-date"), ("future", "2999-01-01T00:00:00"),
                         ("number", 12345), ("naive", "2026-01-01T12:00:00")]:  # fmt: skip
        gaia_run("w", run_id, runs, started_at=when)
    assert latest_published("w", outputs) == outputs / "w" / "new"


def test_a_run_folder_that_is_a_link_out_of_its_study_is_not_one_of_its_runs(
    gaia_run, outputs, tmp_path, capsys
):
    # Before: outputs/w/r2 -> /elsewhere/r2 was listed by history, could be "latest", and a
    # reader marking it interrupted rewrote the manifest at the link's target
    from evalbench.history.runs import latest_published, study_runs

    runs = {"SIS": {"t1": True}}
    gaia_run("w", "r1", runs, started_at="2026-01-01T00:00:00+00:00")
    elsewhere = write_gaia_run(tmp_path / "elsewhere", "w", "r2", runs,
                               started_at="2026-01-02T00:00:00+00:00")  # fmt: skip
    (outputs / "w" / "r2").symlink_to(elsewhere, target_is_directory=True)
    assert [Path(m["_dir"]).name for m in study_runs("w", outputs)] == ["r1"]
    assert latest_published("w", outputs) == outputs / "w" / "r1"
    assert main(["history", "w"]) == 0
    assert "r2" not in capsys.readouterr().out
    assert "w/r2" not in build_index(outputs).read_text()
