"""The arena notebook reads top to bottom without section guards: a section a run did not
compute (pairwise vs rubric judging) shows its one line, and its table and figure nothing."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pandas as pd
from arena.test_report import result

from evalbench.arena import figures, report

ROOT = Path(__file__).resolve().parents[2]


def test_the_notebook_has_no_section_guards():
    notebook = json.loads((ROOT / "notebooks" / "arena.ipynb").read_text())
    code = ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]
    assert not [line for cell in code for line in cell.splitlines() if line.startswith("if ")]


def test_a_pairwise_run_draws_and_shows_no_rubric_section():
    pairwise = result()  # means None: judged pairwise
    before = set(plt.get_fignums())
    assert figures.drawn(figures.dimensions, pairwise) is None
    assert set(plt.get_fignums()) == before  # nothing drawn
    assert report.dimension_table(pairwise) == ""
    assert report.rubric_grades(pairwise).startswith("<p>Not used in this run")


def test_a_rubric_run_shows_no_pair_outcomes_and_draws_its_radar():
    means = pd.DataFrame({
        "system": ["x", "x", "y", "y"], "dimension": ["a", "b", "a", "b"],
        "mean": [6.0, 7.0, 5.0, 4.0], "level": [0.95] * 4,
    })  # fmt: skip
    rubric = result(means=means, params=result().params.model_copy(update={"judging": "rubric"}))
    assert report.pair_outcomes(rubric) == ""  # position None: no pairs were judged
    assert report.pairwise_judge(rubric).startswith("<p>Not used in this run")
    fig = figures.drawn(figures.dimensions, rubric)
    assert fig is not None and fig.axes[0].get_title().startswith("Mean judge score")
    plt.close(fig)
