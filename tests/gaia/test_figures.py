"""GAIA figures: each returns a new Figure; the agents' figure refuses a run without agents."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest
from matplotlib.figure import Figure

from evalbench.gaia import figures


@pytest.mark.parametrize("name", ["accuracy", "drops", "tool_mix"])
def test_each_figure_is_a_new_figure(agent_result, name):
    fig = getattr(figures, name)(agent_result)
    assert isinstance(fig, Figure) and fig.axes[0].get_title()
    plt.close(fig)


def test_tool_mix_names_what_the_run_lacks(agent_result):
    with pytest.raises(ValueError, match="tool mix: no agent systems in this run"):
        figures.tool_mix(agent_result._replace(agents=None))
