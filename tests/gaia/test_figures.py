"""GAIA figures: each returns a new Figure; the agents' figure refuses a run without agents."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest
from matplotlib.figure import Figure
from matplotlib.transforms import Bbox

from evalbench.gaia import figures


@pytest.mark.slow
@pytest.mark.parametrize("name", ["accuracy", "drops", "tool_mix"])
def test_each_figure_is_a_new_figure(agent_result, name):
    fig = getattr(figures, name)(agent_result)
    assert isinstance(fig, Figure) and fig.axes[0].get_title()
    plt.close(fig)


def test_tool_mix_names_what_the_run_lacks(agent_result):
    with pytest.raises(ValueError, match="tool mix: no agent systems in this run"):
        figures.tool_mix(agent_result._replace(agents=None))


def _covered(fig: Figure) -> list[str]:
    """What the legend's box hides: bars (patches) and error-bar segments it overlaps."""
    fig.canvas.draw()
    ax = fig.axes[0]
    box = ax.get_legend().get_window_extent()
    hidden = [f"bar at {p.get_xy()}" for p in ax.patches
              if p.get_width() and p.get_height() and box.overlaps(p.get_window_extent())]  # fmt: skip
    for lines in ax.collections:
        for seg in lines.get_segments():
            if len(seg) != 2:  # an interval that is not drawn (NaN)
                continue
            (x0, y0), (x1, y1) = ax.transData.transform(seg)
            if box.overlaps(Bbox.from_extents(min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1))):
                hidden.append(f"error bar {seg.tolist()}")
    return hidden


@pytest.mark.slow
@pytest.mark.parametrize("name", ["accuracy", "drops", "tool_mix"])
def test_no_legend_covers_a_bar_or_an_interval(agent_result, name):
    # the tool-mix legend sat on the bars; "best" places the others by this run's data, so
    # the legend goes beside the plot, where no data can be
    fig = getattr(figures, name)(agent_result)
    fig.canvas.draw()
    ax = fig.axes[0]
    assert not ax.get_legend().get_window_extent().overlaps(ax.get_window_extent())
    assert _covered(fig) == []
    plt.close(fig)


def test_drawn_draws_nothing_for_the_tool_mix_of_a_chat_only_run(agent_result):
    before = set(plt.get_fignums())
    assert figures.drawn(figures.tool_mix, agent_result._replace(agents=None)) is None
    assert set(plt.get_fignums()) == before  # nothing drawn
    fig = figures.drawn(figures.tool_mix, agent_result)
    assert fig is not None and fig.axes[0].get_title() == "Tool calls by tool"
    plt.close(fig)


def test_the_notebook_has_no_section_guards():
    import json
    from pathlib import Path

    notebook = Path(__file__).resolve().parents[2] / "notebooks" / "gaia_levels.ipynb"
    cells = json.loads(notebook.read_text())["cells"]
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    assert not [line for cell in code for line in cell.splitlines() if line.startswith("if ")]
