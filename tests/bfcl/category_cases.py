"""Shared, loaded-once data of the Java / JavaScript / multi-turn / web-search tests."""

from __future__ import annotations

from functools import cache

import pandas as pd

from evalbench import bfcl
from evalbench.bfcl.schema import JAVA_JS, MULTI_TURN, WEB_SEARCH

OWN_CHECKERS = JAVA_JS + MULTI_TURN + WEB_SEARCH
"""The categories scored by their own checkers (not the Python AST checker)."""


@cache
def own_checker_items() -> list:
    """Every item of the eight categories (the mirror must be set)."""
    return bfcl.load(OWN_CHECKERS)


@cache
def glyphh_own_checker_verdicts() -> pd.DataFrame:
    """glyphh-ada-1.1's 1,150 verdicts on them (the official backends must be installed)."""
    lines = bfcl.fetch_results("glyphh-ada-1.1", OWN_CHECKERS)
    return bfcl.score_results(own_checker_items(), lines, system="glyphh-ada-1.1", style="fc")
