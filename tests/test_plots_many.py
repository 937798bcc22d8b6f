"""Plots coloured by system with thousands of systems: no legend past plots.MAX_LEGEND entries
(a note says how many), and the bars drawn in one go (10,000 systems took minutes)."""

from __future__ import annotations

import io
import time

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from evalbench import plots


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _accuracy(systems: int) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    est = rng.uniform(0.2, 0.8, (systems, 3))
    return pd.DataFrame({
        "system": np.repeat([f"s{i}" for i in range(systems)], 3), "level": [1, 2, 3] * systems,
        "accuracy": est.ravel(), "low": est.ravel() - 0.1, "high": est.ravel() + 0.1,
    })  # fmt: skip


def _bars(systems: int) -> plt.Axes:
    return plots.interval_bars(_accuracy(systems), x="level", y="accuracy", low="low",
                               high="high", hue="system", title="Accuracy")  # fmt: skip


@pytest.mark.slow
def test_2000_systems_draw_fast_with_a_note_instead_of_a_legend():
    started = time.process_time()  # this process's CPU: what other processes' load cannot change
    ax = _bars(2000)
    ax.figure.savefig(io.BytesIO(), format="png")  # what the notebook does with it
    seconds = time.process_time() - started
    assert ax.get_legend() is None
    assert [t.get_text() for t in ax.texts] == ["system: 2,000\n(too many for a legend)"]
    (bars,) = ax.collections[:1]
    assert len(bars.get_paths()) == 2000 * 3  # every bar is there
    assert seconds < 5, seconds  # 0.2 s CPU here; it was 35 s (17 s drawing, 18 s the legend)


def test_up_to_max_legend_systems_keep_their_legend_and_bars():
    ax = _bars(plots.MAX_LEGEND)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == [f"s{i}" for i in range(plots.MAX_LEGEND)] and not ax.texts
    assert len(ax.patches) == plots.MAX_LEGEND * 3


def test_a_reliability_diagram_of_many_systems_has_the_note():
    table = _accuracy(plots.MAX_LEGEND + 1).rename(columns={"level": "mean_confidence"})
    table = table.rename(columns={"low": "ci_low", "high": "ci_high"}).assign(
        mean_confidence=lambda t: t["mean_confidence"] / 4
    )
    ax = plots.reliability_diagram(table)
    assert ax.get_legend() is None and ax.texts[0].get_text().startswith("system: 31\n")
