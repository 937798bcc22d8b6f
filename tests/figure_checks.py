"""Checks on drawn figures shared by the figure tests: legends outside every axes' data area,
annotations inside their heatmap cells, colour maps safe for colour-blind readers."""

from __future__ import annotations

from typing import Any

from matplotlib.figure import Figure

from evalbench import plots


def legends_over_data(fig: Figure) -> list[str]:
    """Legends (of an axes or of the figure) whose box overlaps an axes' data area."""
    fig.canvas.draw()
    legends = [a.get_legend() for a in fig.axes if a.get_legend() is not None]
    legends += list(fig.legends)
    found = []
    for legend in legends:
        box = legend.get_window_extent()
        for ax in fig.axes:
            if ax.get_label() == "<colorbar>":
                continue
            area = ax.get_window_extent()
            overlap = min(box.x1, area.x1) - max(box.x0, area.x0) > 1 and (
                min(box.y1, area.y1) - max(box.y0, area.y0) > 1
            )
            if overlap:
                found.append(f"legend {legend.get_title().get_text()!r} over {ax.get_title()!r}")
    return found


def colormaps(fig: Figure) -> set[str]:
    """The names of the colour maps of every image/mesh in ``fig``."""
    names = set()
    for ax in fig.axes:
        for artist in [*ax.collections, *ax.images]:
            cmap: Any = getattr(artist, "cmap", None)
            if cmap is not None and artist.get_array() is not None:
                names.add(cmap.name)
    return names


def unsafe_colormaps(fig: Figure) -> set[str]:
    """Colour maps in ``fig`` outside :data:`evalbench.plots.SAFE_CMAPS`."""
    return {name for name in colormaps(fig) if name not in plots.SAFE_CMAPS}
