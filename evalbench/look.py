"""What every page and figure shares to read well on a laptop (1,280 px wide) and for readers
with a colour-vision deficiency: the series colours and markers, and the CSS of wide tables.

Plain constants (no plotting library): the SVG trends pages and the HTML pages use them
without importing matplotlib; :mod:`evalbench.plots` uses the same colours for figures.
"""

from __future__ import annotations

OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442",
             "#000000")  # fmt: skip
"""The colour of each series, in order: Okabe & Ito's palette ("Color Universal Design",
2008), told apart under every common colour-vision deficiency (seaborn's default puts a
green and a red side by side); blue and orange first, yellow (faint on white) and black last."""

MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
"""A marker per series beside its colour (matplotlib codes): past eight series, or printed in
grey, the shape still tells them apart."""

SCROLL_CLASS = "evalbench-scroll"
"""The class of the box a wide table scrolls in (:func:`evalbench.display.table_html`)."""

SCROLL_CSS = """
div.evalbench-scroll { overflow-x: auto; max-width: 100%;
  background:
    linear-gradient(to right, #fff 30%, rgba(255, 255, 255, 0)) left / 3em 100% no-repeat local,
    linear-gradient(to left, #fff 30%, rgba(255, 255, 255, 0)) right / 3em 100% no-repeat local,
    radial-gradient(farthest-side at 0 50%, rgba(0, 0, 0, .28), rgba(0, 0, 0, 0))
      left / 1em 100% no-repeat scroll,
    radial-gradient(farthest-side at 100% 50%, rgba(0, 0, 0, .28), rgba(0, 0, 0, 0))
      right / 1em 100% no-repeat scroll;
  background-color: #fff; }
div.evalbench-scroll::-webkit-scrollbar { height: 12px; width: 12px; }
div.evalbench-scroll::-webkit-scrollbar-thumb { background: #8a8a8a; border-radius: 6px; }
div.evalbench-scroll::-webkit-scrollbar-track { background: #ececec; }
@supports not selector(::-webkit-scrollbar) {
  div.evalbench-scroll { scrollbar-width: thin; scrollbar-color: #8a8a8a #ececec; } }
div.evalbench-scroll tbody tr, div.evalbench-scroll tbody tr:nth-child(odd) {
  background: transparent; }
div.evalbench-scroll tbody tr:nth-child(even) { background: rgba(0, 0, 0, .035); }
"""
"""A wide table scrolls sideways inside its own box instead of widening the page, and shows
that it does: a scrollbar that is always drawn (overlay scrollbars, as on macOS, hide until
touched) and a shadow on the side where columns are hidden (the ``local`` white covers
fade away as the box scrolls). Row stripes are translucent, so the shadow shows through."""
