"""Shared plots: legends sit beside the axes (inside they hid bars), and a plot with nothing
labelled draws without a legend instead of failing."""

from __future__ import annotations

import subprocess
import sys

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pandas as pd
import pytest
from matplotlib.colors import to_hex

from evalbench import plots


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _outside_right(ax) -> bool:
    ax.figure.canvas.draw()
    return ax.get_legend().get_window_extent().x0 >= ax.get_window_extent().x1


def test_interval_bars_put_the_hue_legend_beside_the_bars():
    df = pd.DataFrame({"x": ["L1", "L1"], "s": ["a", "b"], "y": [0.9, 0.95],
                       "lo": [0.8, 0.9], "hi": [1.0, 1.0]})  # fmt: skip
    ax = plots.interval_bars(df, x="x", y="y", low="lo", high="hi", hue="s")
    assert _outside_right(ax) and ax.get_legend().get_title().get_text() == "s"


def test_stacked_shares_legend_beside_and_no_parts_draws_without_one():
    df = pd.DataFrame({"label": ["a", "b"], "win": [0.7, 0.2], "loss": [0.3, 0.8]})
    assert _outside_right(plots.stacked_shares(df, label="label", parts=["win", "loss"]))
    # an agent run where no tool was called: no parts; a legend of 0 columns raised before
    ax = plots.stacked_shares(df[["label"]], label="label", parts=[])
    assert ax.get_legend() is None


# ------------------------------------------------------------- colour-blind-safe, legible


def test_setup_draws_series_in_the_okabe_ito_colours():
    with plt.rc_context():
        plots.setup()
        cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    # Okabe & Ito's eight colours, blue and orange first (apart under every deficiency)
    assert [to_hex(c) for c in cycle] == [c.lower() for c in plots.OKABE_ITO]
    assert plots.OKABE_ITO[:2] == ("#0072B2", "#E69F00") and len(set(plots.OKABE_ITO)) == 8


def test_setup_sets_seaborns_whitegrid_look_without_importing_seaborn():
    # the theme is seaborn's set_theme(style="whitegrid", context="notebook") setting by
    # setting (its image.cmap aside: every heatmap names its map), applied without seaborn
    import seaborn as sns

    with plt.rc_context():
        matplotlib.rcdefaults()
        defaults = dict(plt.rcParams)
        sns.set_theme(style="whitegrid", context="notebook", palette=list(plots.OKABE_ITO))
        seaborns = dict(plt.rcParams)
    with plt.rc_context():
        matplotlib.rcdefaults()
        plots.setup()
        ours = dict(plt.rcParams)
    changed = {k for k in seaborns if seaborns[k] != defaults[k]}
    assert changed - {"image.cmap"} == set(plots.THEME) | {"axes.prop_cycle"}
    for key in changed - {"image.cmap"}:
        assert ours[key] == seaborns[key], key


def test_a_study_that_draws_no_heatmap_never_imports_scipy_stats():
    # a fresh kernel of the GAIA study: its imports and plots.setup() (seaborn, and the
    # scipy.stats it imports, cost ~0.6 s of CPU at each start); nor does the McNemar test
    # every comparison of two systems makes (GAIA's pairs, compare, each sweep cell)
    code = (
        "import sys, matplotlib; matplotlib.use('Agg')\n"
        "from evalbench import display, gaia, plots, studies\n"
        "from evalbench.gaia import figures, report\n"
        "from evalbench.stats import mcnemar_exact\n"
        "plots.setup()\n"
        "assert mcnemar_exact(1, 5) == 2 * 7 / 64\n"
        "print(sorted(m for m in ('seaborn', 'scipy.stats') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("cmap", ["RdYlGn", "RdYlGn_r", "Spectral", "jet"])
def test_heatmap_refuses_a_colour_map_red_green_readers_cannot_tell_apart(cmap):
    with pytest.raises(ValueError, match=f"colour map {cmap!r} is not colour-blind safe"):
        plots.heatmap(pd.DataFrame([[0.1, 0.9]]), cmap=cmap)


@pytest.mark.slow
def test_heatmap_annotations_stay_inside_their_cells():
    # 3 systems × 15 categories of "0.90 [0.70, 0.97]" (17 characters) on a 13-inch figure:
    # at the default size each label was ~1.3 cells wide and ran into both neighbours
    matrix = pd.DataFrame(0.5, index=["a", "b", "c"], columns=[f"category_{i}" for i in range(15)])
    labels = [["0.90 [0.70, 0.97]"] * 15] * 3
    fig, ax = plt.subplots(figsize=(13, 3.6))
    plots.heatmap(matrix, ax=ax, annot=labels, fmt="")
    fig.canvas.draw()
    box = ax.get_window_extent()
    cell = box.width / 15
    for i, text in enumerate(t for t in ax.texts if t.get_text()):
        extent = text.get_window_extent()
        left = box.x0 + (i % 15) * cell
        assert left <= extent.x0 and extent.x1 <= left + cell, (i, extent, left, cell)
    assert all(t.get_fontsize() >= plots.MIN_ANNOTATION_PT for t in ax.texts)


def test_forest_truth_legend_sits_beside_the_points():
    df = pd.DataFrame({"l": ["a", "b"], "e": [0.2, 0.9], "lo": [0.1, 0.8], "hi": [0.3, 1.0],
                       "t": [0.25, 0.95]})  # fmt: skip
    ax = plots.forest(df, label="l", estimate="e", low="lo", high="hi", truth="t")
    assert _outside_right(ax)
    # two forests side by side: only the right one carries the legend (beside the figure)
    _, (left, right) = plt.subplots(1, 2)
    plots.forest(df, label="l", estimate="e", low="lo", high="hi", truth="t", ax=left,
                 legend=False)  # fmt: skip
    plots.forest(df, label="l", estimate="e", low="lo", high="hi", truth="t", ax=right)
    assert left.get_legend() is None and _outside_right(right)


def test_reliability_diagram_and_radar_legends_sit_beside_the_axes():
    table = pd.DataFrame(
        {
            "system": ["s", "s"],
            "mean_confidence": [0.2, 0.8],
            "accuracy": [0.3, 0.7],
            "ci_low": [0.2, 0.6],
            "ci_high": [0.4, 0.8],
        }
    )
    assert _outside_right(plots.reliability_diagram(table))  # fmt: skip
    scores = pd.DataFrame({"x": [1, 2], "y": [3, 4], "z": [5, 6]}, index=["p", "q"])
    assert _outside_right(plots.radar(scores))


def test_interval_lines_dodge_the_series_and_draw_no_bands_over_each_other():
    # two systems at the same two formats: their intervals overlapped as shaded bands
    df = pd.DataFrame({"f": ["x", "y", "x", "y"], "s": ["a", "a", "b", "b"],
                       "v": [0.5, 0.6, 0.5, 0.6], "lo": [0.1] * 4, "hi": [0.9] * 4})  # fmt: skip
    ax = plots.interval_lines(df, x="f", y="v", low="lo", high="hi", hue="s")
    assert [c.get_label() for c in ax.containers] == ["a", "b"]
    lines = [c.lines[0] for c in ax.containers]  # each error bar container's data line
    a, b = (line.get_xdata() for line in lines)
    # positions 0 and 1; the two series 0.3 (of the 1.0 between positions) apart: ±0.15
    assert list(a) == pytest.approx([-0.15, 0.85]) and list(b) == pytest.approx([0.15, 1.15])
    assert lines[0].get_marker() != lines[1].get_marker()  # a marker per series, too
    assert not [c for c in ax.collections if type(c).__name__ == "FillBetweenPolyCollection"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["x", "y"]
    assert _outside_right(ax)
