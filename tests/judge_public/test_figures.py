"""The judge_public figures: one new Figure each, and a missing section named."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
from judge_public.test_report import _result
from matplotlib.figure import Figure

from evalbench.judge_public import figures


def test_prd_bias_draws_the_reviewers_and_the_humans_on_a_new_figure() -> None:
    before = set(plt.get_fignums())
    fig = figures.prd_bias(_result())
    assert isinstance(fig, Figure) and fig.number not in before
    consistency, longer = fig.axes[:2]
    assert [t.get_text() for t in consistency.get_xticklabels()] == ["gpt4"]
    assert [t.get_text() for t in longer.get_xticklabels()] == ["gpt4", "humans"]
    plt.close(fig)


def test_a_figure_of_a_section_not_run_names_the_section() -> None:
    with pytest.raises(ValueError, match="pandalm is not in this run's sections"):
        figures.pandalm_confusion(_result())


def test_drawn_draws_the_sections_run_and_nothing_else() -> None:
    before = set(plt.get_fignums())
    assert figures.drawn(figures.pandalm_confusion, _result()) is None  # not in sections
    assert set(plt.get_fignums()) == before
    fig = figures.drawn(figures.prd_bias, _result())
    assert isinstance(fig, Figure) and fig.number not in before
    plt.close(fig)
