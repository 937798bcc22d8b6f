"""What a reader of the compare table and report sees: the table's headers, the banner of
imported simulated runs, and the history plot's one series per configuration."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import yaml

from evalbench.cli import main
from evalbench.compare import figures, metrics, report
from evalbench.compare.study import run
from evalbench.studies import open_run

matplotlib.use("Agg")
LM_EVAL_DUMMY = Path(__file__).parents[1] / "importers" / "data" / "lm_eval_dummy"


def _header(out: str) -> list[str]:
    return next(line for line in out.splitlines() if line.lstrip().startswith("run ")).split()


def test_the_table_names_both_means_plainly(gaia_run, capsys):
    runs = [str(gaia_run("g", r, {"s": {"t0": True, "t1": False}})) for r in ("a", "b", "c")]
    assert main(["compare", "--no-report", *runs[:2]]) == 0
    header = _header(capsys.readouterr().out)
    assert header[5:9] == ["mean", "A", "mean", "B"] and "run's" not in header
    assert main(["compare", "--no-report", *runs]) == 0  # B and C: the row's run
    assert _header(capsys.readouterr().out)[5:9] == ["mean", "A", "mean", "run"]


def _compare_params(tmp_path: Path, runs: list[str]) -> Path:
    path = tmp_path / "cmp.yaml"
    path.write_text(yaml.safe_dump({"study": "compare", "title": "t", "bootstrap_rounds": 10,
                                    "calibration_repeats": 0,
                                    "runs": [{"path": r} for r in runs]}))  # fmt: skip
    return path


def test_imported_simulated_runs_say_what_produced_them(tmp_path):
    """lm-eval's dummy model is simulated, but not by evalbench's sim provider."""
    result = run(open_run(_compare_params(tmp_path, [str(LM_EVAL_DUMMY), str(LM_EVAL_DUMMY)])))
    notice = report.simulated_notice(result)
    assert "sim provider" not in notice
    assert "i82qcls7 (A, B): lm-evaluation-harness&#x27;s dummy model" in notice


def test_sim_provider_runs_still_say_so(gaia_run, tmp_path):
    runs = [str(gaia_run("g", r, {"s": {"t0": True, "t1": False}})) for r in ("a", "b")]
    notice = report.simulated_notice(run(open_run(_compare_params(tmp_path, runs))))
    assert "s (A, B): evalbench&#x27;s offline sim provider" in notice


def test_each_configuration_is_its_own_history_series(gaia_run, tmp_path):
    """Three runs as written (two commits) and two with a seed override, interleaved in
    time: four series (system × configuration), each in time order, none joining them."""
    right = {"s": {"t0": True, "t1": False}}
    made = [("r1", "2026-01-01", [], "aaaaaaa1"), ("r2", "2026-01-02", ["seed=2"], "aaaaaaa1"),
            ("r3", "2026-01-03", [], "aaaaaaa1"), ("r4", "2026-01-04", ["seed=2"], "aaaaaaa1"),
            ("r5", "2026-01-05", [], "bbbbbbb2")]  # fmt: skip
    for run_id, day, overrides, commit in made:
        gaia_run("g", run_id, right, started_at=f"{day}T00:00:00+00:00", overrides=overrides,
                 commit=commit)  # fmt: skip
    result = run(open_run(_compare_params(tmp_path, ["g/r1", "g/r5"])))
    series = metrics.history_series(result.series, "accuracy")
    assert series.groupby("series", sort=False)["run_id"].agg(list).to_dict() == {
        "s · as written · aaaaaaa1": ["r1", "r3"],
        "s · seed=2 · aaaaaaa1": ["r2", "r4"],
        "s · as written · bbbbbbb2": ["r5"],
    }
    fig = figures.history_figure(result)
    assert fig is not None
    ax = fig.axes[0]
    lines = {b.get_label(): [round(x) for x in b.lines[0].get_xdata()] for b in ax.containers}
    # x = each run's place in time (0..4, dodged by < 0.2): a line joins only the runs of
    # its configuration
    assert lines == {"s · as written · aaaaaaa1": [0, 2], "s · seed=2 · aaaaaaa1": [1, 3],
                     "s · as written · bbbbbbb2": [4]}  # fmt: skip
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    assert len(ticks) == 5 and ticks[0].startswith("01-01") and ticks[4].startswith("01-05")


def test_no_history_figure_for_an_imported_baseline(tmp_path):
    result = run(open_run(_compare_params(tmp_path, [str(LM_EVAL_DUMMY), str(LM_EVAL_DUMMY)])))
    assert result.history is None and figures.history_figure(result) is None
