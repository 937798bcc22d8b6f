"""The published-ratings figures: a new Figure per rated dataset, a dataset not rated named."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
from arena_public.test_report import result
from matplotlib.figure import Figure

from evalbench.arena_public import figures


def test_ratings_draws_the_four_panels_of_a_rated_dataset() -> None:
    fig = figures.ratings(result(), "arena_hard_pr44")
    assert isinstance(fig, Figure)
    assert fig.get_suptitle() == "Arena-Hard PR #44: LLM-judge battles"
    # ratings, observed win rates, predicted vs observed, ranks (+ the two heatmaps' colour bars)
    assert len(fig.axes) == 6
    plt.close(fig)


def test_a_dataset_not_rated_is_named() -> None:
    with pytest.raises(ValueError, match="prd_human is not rated in this run"):
        figures.ratings(result(), "prd_human")
    with pytest.raises(ValueError, match="alpaca_eval is not rated in this run"):
        figures.alpaca(result())
