"""The published-ratings figures: a new Figure per rated dataset, a dataset not rated named."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
from arena_public.test_report import result
from matplotlib.figure import Figure

from evalbench.arena_public import figures


@pytest.mark.slow
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


@pytest.mark.slow
def test_drawn_draws_the_rated_datasets_and_nothing_else() -> None:
    fig = figures.drawn(figures.ratings, result(), "arena_hard_pr44")
    assert fig is not None and fig.get_suptitle() == "Arena-Hard PR #44: LLM-judge battles"
    plt.close(fig)
    before = set(plt.get_fignums())
    assert figures.drawn(figures.ratings, result(), "prd_human") is None  # not in public
    assert figures.drawn(figures.alpaca, result()) is None  # alpaca_eval not in public
    assert set(plt.get_fignums()) == before  # nothing drawn


def test_the_notebook_has_no_section_guards() -> None:
    import json
    from pathlib import Path

    notebook = Path(__file__).resolve().parents[2] / "notebooks" / "arena_public.ipynb"
    cells = json.loads(notebook.read_text())["cells"]
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    assert not [line for cell in code for line in cell.splitlines() if line.startswith("if ")]
