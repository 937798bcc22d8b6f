"""The offline browse suite: browsing agents on evalbench's own small invented web.

``study: browse_suite``, notebook ``browse_suite.ipynb``. 30 tasks at five levels (static
page, navigation/search/pagination, tables/forms/scripts, several sites, pages that change
between visits) on a real HTTP server on 127.0.0.1, scored by typed weighted criteria. Not
BrowseComp (that is :mod:`evalbench.browsecomp`). What notebooks and users call:

* :func:`run` (a :class:`BrowseSuiteParams` run) -> :class:`BrowseSuiteResult`.
* :func:`load_suite` (a tasks file as :class:`SuiteTask` items) and :class:`LocalWeb` (the
  local web, a context manager) to try agents on the suite by hand.
* :mod:`~.report` (sentences and tables) and :mod:`~.figures` (figures) of a result.
"""

from .data import SuiteTask, load_suite
from .records import BrowseSuiteParams, BrowseSuiteResult
from .site import LocalWeb
from .study import run

__all__ = [
    "BrowseSuiteParams",
    "BrowseSuiteResult",
    "LocalWeb",
    "SuiteTask",
    "load_suite",
    "run",
]
