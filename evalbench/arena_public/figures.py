"""The published-ratings notebook's figures: one function per figure, each a new one.

Each takes the study's :class:`~.records.ArenaPublicResult` and returns the
:class:`~matplotlib.figure.Figure`; the notebook calls ``drawn(figure, result, ...)``, which
draws nothing for a dataset the run did not rate, then ``plt.show()``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from evalbench import plots

from .data import PUBLIC_DATASETS
from .records import ArenaPublicResult


def ratings(result: ArenaPublicResult, name: str) -> Figure:
    """The four rating panels of the rated dataset ``name`` (ValueError if it was not rated)."""
    if name not in result.rated:
        raise ValueError(f"{name} is not rated in this run (not in params.public)")
    reference = result.params.anchor_rating
    fig = plots.rating_panels(
        result.rated[name].ratings, title=PUBLIC_DATASETS[name].title, reference=reference
    )
    return cast(Figure, fig)


def alpaca(result: ArenaPublicResult) -> Figure:
    """P(prefer longer) per model and the star ratings, with their intervals."""
    if result.alpaca is None or result.alpaca_ratings is None:
        raise ValueError("alpaca_eval is not rated in this run (not in params.public)")
    p, level = result.params, f"{result.params.confidence_level:.0%}"
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 3.6))
    table = result.alpaca.table
    plots.forest(
        table[table["model"] != p.alpaca_baseline], label="model", estimate="prefer_longer",
        low="prefer_longer_low", high="prefer_longer_high", reference=0.5, ax=left,
        xlabel="P(prefer longer)",
        title=f"Judge's preference for the longer answer, {level} intervals",
    )  # fmt: skip
    plots.forest(
        result.alpaca_ratings, label="model", estimate="rating", low="ci_low", high="ci_high",
        reference=p.anchor_rating, ax=right, xlabel="Bradley–Terry rating (Elo scale)",
        title=f"Ratings vs {p.alpaca_baseline} = {p.anchor_rating:g}, {level} intervals",
    )  # fmt: skip
    fig.tight_layout()
    return fig


def drawn(figure: Callable[..., Figure], result: ArenaPublicResult, *args: Any) -> Figure | None:
    """``figure(result, *args)``, or ``None`` (nothing drawn) when the run did not rate the
    dataset it shows (not in ``public``)."""
    if figure is ratings:
        rated = args[0] in result.rated
    else:
        rated = result.alpaca is not None and result.alpaca_ratings is not None
    return figure(result, *args) if rated else None
