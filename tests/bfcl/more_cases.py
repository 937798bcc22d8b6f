"""Shared, loaded-once data of the multi-turn / Java / JavaScript / web-search tests."""

from __future__ import annotations

from functools import cache

import pandas as pd

from evalbench.bfcl import more_data, more_scoring


@cache
def more_items() -> list:
    """Every item of the eight categories (the mirror must be set)."""
    return more_data.load_more()


@cache
def glyphh_more_verdicts() -> pd.DataFrame:
    """glyphh-ada-1.1's 1,150 verdicts (the official backends must be installed)."""
    lines = more_data.fetch_more_results("glyphh-ada-1.1")
    return more_scoring.score_more_results(more_items(), lines, system="glyphh-ada-1.1")
