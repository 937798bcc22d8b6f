"""The compare study in-process on hand-made runs: its result, sentences and records."""

from __future__ import annotations

import yaml

from evalbench.compare import report
from evalbench.compare.records import ComparisonRecord, PairingRecord
from evalbench.compare.study import run
from evalbench.records import read_jsonl
from evalbench.studies import open_run

N = 20
LEVELS = {f"t{i}": 1 + i % 2 for i in range(N)}


def _params(tmp_path, runs, **extra):
    path = tmp_path / "cmp.yaml"
    data = {"study": "compare", "title": "t <script>", "runs": runs, "bootstrap_rounds": 100,
            "calibration_repeats": 20, **extra}  # fmt: skip
    path.write_text(yaml.safe_dump(data))
    return path


def test_a_comparison_of_two_runs_with_one_improved_system(gaia_run, tmp_path):
    same = {f"t{i}": i % 2 == 0 for i in range(N)}
    base = gaia_run("g", "a", {"keep": same, "grow": {f"t{i}": False for i in range(N)}},
                    levels=LEVELS)  # fmt: skip
    gaia_run("g", "b", {"keep": same, "grow": {f"t{i}": i < 12 for i in range(N)}},
                    levels=LEVELS)  # fmt: skip
    params = _params(tmp_path, [{"path": str(base), "label": "old"},
                                {"path": "g/b", "label": "new"}])  # fmt: skip
    live = open_run(params)
    result = run(live)
    live.finish(result)
    tests = result.comparison.tests
    grow = tests[(tests["system_a"] == "grow") & (tests["slice"] == "all")].iloc[0]
    # grow: 0 of 20 -> 12 of 20; McNemar b = 0, c = 12: p = 2 × 2^-12 = 4.9e-4; Holm over 6 rows
    assert grow.p == 2 / 2**12 and grow.verdict == "improvement"
    keep = tests[(tests["system_a"] == "keep") & (tests["slice"] == "all")].iloc[0]
    assert keep.difference == 0.0 and keep.verdict == "no significant change"
    sentence = report.key_result(result)
    assert "<b>new</b> vs <b>old</b>, grow accuracy (higher is better): 0.000 → 0.600" in sentence
    assert "change +0.600" in sentence and "on 20 paired items" in sentence
    assert "changes smaller than" in sentence  # keep: no change, stated with its resolution
    found = report.findings(result)
    # grow: 0 of 20 -> 12 of 20 = +60 points, a real improvement
    assert (
        f"new vs old, item by item: grow accuracy went from 0% to 60% (+60 points, likely "
        f"between {grow.low * 100:+.0f} and {grow.high * 100:+.0f}): a real improvement"
    ) in found.key_result
    assert "keep accuracy stayed at 50% (+0 points" in found.key_result
    assert found.caveats[0].startswith("“No change” is not proof of none: with 20 paired items")
    assert report.headlines(result)["improvements (Holm)"] >= 1
    assert report.headlines(result)["regressions (Holm)"] == 0
    assert "No regression" in report.regressions_sentence(result)
    assert result.calibration["false_alarm"].between(0, 1).all()
    assert result.history is not None and len(result.history) == 2
    assert report.simulated_notice(result).count("SIMULATED") == 1
    for name, kind in (("comparison", ComparisonRecord), ("pairing", PairingRecord)):
        rows = read_jsonl(live.dir / "records" / f"{name}.jsonl")
        assert rows and all(kind.model_validate(r) for r in rows)


def test_a_missing_run_is_one_line_naming_the_field(tmp_path, gaia_run):
    import pytest

    from evalbench.importers import OutcomeError

    base = gaia_run("g", "a", {"s": {"t0": True}})
    params = _params(tmp_path, [{"path": str(base)}, {"path": "g/nothere"}])
    live = open_run(params)
    with pytest.raises(OutcomeError, match=r"^runs\.1\.path: g/nothere: not a run folder"):
        run(live)


def test_the_report_says_the_gate_would_exit_2_when_a_metric_paired_nothing(gaia_run, tmp_path):
    from evalbench.history import pin_baseline, regression_status

    right = {f"t{i}": True for i in range(N)}
    base = gaia_run("g", "a", {"s": right, "x": right}, started_at="2026-01-01T00:00:00+00:00")
    gaia_run("g", "b", {"s": right, "x": {k: None for k in right}},
             started_at="2026-02-01T00:00:00+00:00")  # fmt: skip
    live = open_run(_params(tmp_path, [{"path": str(base)}, {"path": "g/b"}]))
    result = run(live)
    sentence = report.regressions_sentence(result)
    assert "would exit 2" in sentence and "x accuracy: the gate compared nothing" in sentence
    assert "No regression" not in sentence
    pin_baseline(base)
    status = regression_status("g")  # the index's mark: a problem, not a clean pass
    assert status is not None and "the gate compared nothing" in str(status["problem"])


def test_an_mdd_of_none_detectable_survives_strict_json(gaia_run, tmp_path):
    """3 paired items: no change is detectable at 5% (n < z² = 3.84): MDD inf. Strict JSON
    writes null for it, so the record says which null it is."""
    import json

    base = gaia_run("g", "a", {"s": {"t0": True, "t1": True, "t2": False}})
    gaia_run("g", "b", {"s": {"t0": True, "t1": False, "t2": False}})
    live = open_run(_params(tmp_path, [{"path": str(base)}, {"path": "g/b"}]))
    live.finish(run(live))
    [row, *_] = [json.loads(line) for line in (live.dir / "records" / "comparison.jsonl").open()]
    assert (row["n"], row["mdd"], row["mdd_status"]) == (3, None, "none detectable")
    assert ComparisonRecord.model_validate(row).mdd_status == "none detectable"
