"""Expert-grading figures: a heatmap panel per source with a scored answer (the same rows in
each, labels once), a figure that says so when nothing was scored, legends beside the bars,
labelled axes."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
from hle_grading.cases import grade, result_of

from evalbench.hle_grading import figures

ROWS = [
    grade("dataset", "a1", "Physics", "easy", 60.0, human=70.0),
    grade("dataset", "a2", "Math", "hard", 80.0, human=75.0, confidence=95.0),
    grade("sys", "a1", "Physics", "easy", 40.0),
    grade("sys", "a2", "Math", "hard", None),
    grade("never", "a1", "Physics", "easy", None, status="no_response"),
]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.mark.slow
def test_one_heatmap_per_scored_source_with_the_same_rows():
    fig = figures.heatmaps(result_of(ROWS, systems=["sys", "never"]))
    first, second = [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]
    assert first.get_title().endswith(": dataset") and second.get_title().endswith(": sys")
    labels = [[t.get_text() for t in ax.get_yticklabels()] for ax in (first, second)]
    assert labels[0] == ["Math", "Physics"]  # sys has no scored Math answer: a blank row
    assert first.get_ylabel() == "category" and second.get_ylabel() == ""
    assert not any("never" in ax.get_title() for ax in fig.axes)  # nothing scored: no panel


def test_nothing_scored_is_a_figure_that_says_so():
    fig = figures.heatmaps(result_of([grade("dataset", "a1", "Physics", "easy", None)]))
    assert fig.axes[0].get_title() == "No scored answer: nothing to draw"


def test_the_distribution_legend_sits_beside_the_bars():
    fig = figures.distribution(result_of(ROWS, systems=["sys"]))
    ax = fig.axes[0]
    fig.canvas.draw()
    assert ax.get_legend().get_window_extent().x0 >= ax.get_window_extent().x1
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["judge: dataset", "judge: sys", "human baseline"]
    assert ax.get_xlabel() == "overall score (0–100)" and ax.get_ylabel() == "answers"


def test_the_confidence_gap_scatter_and_its_empty_case():
    ax = figures.confidence_gap(result_of(ROWS, systems=["sys"])).axes[0]
    offsets = ax.collections[0].get_offsets()
    assert sorted(map(tuple, offsets.tolist())) == [(80.0, 10.0), (95.0, 5.0)]  # |60−70|, |80−75|
    assert ax.get_xlabel() and ax.get_ylabel()
    empty = figures.confidence_gap(result_of([grade("dataset", "a1", "Physics", "easy", 60.0)]))
    assert empty.axes[0].get_title().endswith("no human baseline")
