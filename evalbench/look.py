"""What every page and figure shares to read well on a laptop (1,280 px wide) and for readers
with a colour-vision deficiency: the series colours and markers, and the CSS of wide tables.

Plain constants (no plotting library): the SVG trends pages and the HTML pages use them
without importing matplotlib; :mod:`evalbench.plots` uses the same colours for figures.
"""

from __future__ import annotations

import html
import re

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


NO_ALT = 'alt="No description has been provided for this image"'
"""The alternative text nbconvert gives every figure of a report (a screen reader's only
words for it)."""
_HEADING_OR_FIGURE = re.compile(r"<h([1-4])\b[^>]*>(.*?)</h\1>|" + re.escape(NO_ALT), re.S)


def describe_figures(page: str, title: str) -> str:
    """Give each figure of a report the alternative text of the section it is in ("Figure:
    Accuracy by level"; before the first heading, the report's title) instead of
    nbconvert's :data:`NO_ALT`: the heading names what the figure shows, and the table under
    it carries its numbers."""
    section = title

    def replace(found: re.Match[str]) -> str:
        nonlocal section
        if found.group(1):  # a heading: its text, without the anchor link's ¶
            text = html.unescape(re.sub(r"<[^>]+>", "", found.group(2))).replace("¶", "")
            section = text.strip() or title
            return found.group(0)
        return f'alt="Figure: {html.escape(section, quote=True)}"'

    return _HEADING_OR_FIGURE.sub(replace, page)
