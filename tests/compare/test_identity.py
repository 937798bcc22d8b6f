"""A comparison's bootstrap streams are seeded by what the runs are (their study kind and
params hash), never by the params file's name: sweep cells are shared by every sweep file
that has them, so their manifests carry the name of whichever file computed them first."""

from __future__ import annotations

import json

from alerts.helpers import seeded, write_run

from evalbench.history import compare_runs
from evalbench.importers import read_outcomes
from evalbench.settings import get_settings


def test_the_same_runs_under_another_file_name_give_the_same_intervals():
    outputs = get_settings().outputs_dir
    intervals = []
    for name in ("sweep_a", "sweep_b"):  # two names of one params file: equal run ids
        base = write_run(outputs, "0c90ef4502af", {"s": seeded(0.7, 40, 1)}, study=name)
        now = write_run(outputs, "1d2e3f405162", {"s": seeded(0.5, 40, 2)}, study=name,
                        started_at="2026-01-02T00:00:00+00:00")  # fmt: skip
        for run in (base, now):  # as a cell's manifest says it: its study is the file's stem
            manifest = json.loads((run / "manifest.json").read_text())
            assert manifest["study"] == name
        tests = compare_runs([read_outcomes(base), read_outcomes(now)]).tests
        intervals.append(tests[["metric", "system_b", "low", "high"]].to_dict("records"))
    assert intervals[0] == intervals[1]
    # and the interval is a bootstrap's: 40 items paired, not a point
    assert all(row["low"] < row["high"] for row in intervals[0])
