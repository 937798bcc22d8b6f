"""The reliability figure: drawn from the core reliability table, fractions on both axes."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import pytest
from browsecomp.helpers import write_csv, write_params

from evalbench import browsecomp
from evalbench.browsecomp import figures, metrics
from evalbench.studies import open_run


def test_the_reliability_figure_draws_bins_where_every_answer_is_wrong_or_right(tmp_path):
    data = write_csv(tmp_path / "bc.csv", [("q1", "a1", "t"), ("q2", "a2", "t")])
    systems = [{"name": "s", "provider": "sim", "sim": {"accuracy": 0.5}}]
    grader = {"name": "g", "provider": "sim", "sim": {"accuracy": 1.0}}
    result = browsecomp.run(
        open_run(write_params(tmp_path, systems=systems, dataset=str(data), grader=grader))
    )
    # 3 wrong answers stated at 5% and 10 right ones at 95%: accuracy 0 and 1, whose Wilson
    # intervals start at 0 and end at 1 (an error bar never crosses its point)
    records = pd.DataFrame(
        {
            "system": "s",
            "status": "scored",
            "confidence": [5.0] * 3 + [95.0] * 10,
            "correct": [False] * 3 + [True] * 10,
        }
    )
    table = metrics.reliability(records)
    assert (table["bin"].tolist(), table["n"].tolist(), table["accuracy"].tolist()) == (
        ["0-10", "90-100"],
        [3, 10],
        [0.0, 1.0],
    )
    assert table["mean_confidence"].tolist() == [pytest.approx(0.05), pytest.approx(0.95)]
    fig = figures.reliability(result._replace(reliability=table))
    fig.canvas.draw()
    ax = fig.axes[0]
    assert ax.get_xlim() == (0, 1) and ax.get_ylim() == (0, 1)
    plt.close(fig)
