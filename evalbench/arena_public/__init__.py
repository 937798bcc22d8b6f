"""Ratings from published data: PRD human votes, Arena-Hard PR #44, AlpacaEval 2.

``study: arena_public``, notebook ``arena_public.ipynb``; no model is asked. What notebooks
and users call:

* :func:`run` (an :class:`ArenaPublicParams` run) -> :class:`ArenaPublicResult`.
* :func:`public_battles` (a dataset of :data:`PUBLIC_DATASETS` as battles) and
  :func:`alpaca_eval_study` (AlpacaEval 2 win rates equal to the leaderboard's, answer
  lengths, P(prefer longer) and star ratings).
* Style-controlled ratings where the answers are published (PRD's five answered models,
  AlpacaEval) and AlpacaEval's length-controlled win rates are part of :func:`run`'s result.
* :mod:`~.report` (sentences and tables) and :mod:`~.figures` (figures) of a result.

The rating math is :mod:`evalbench.ratings`, :mod:`evalbench.ratings_style` and
:mod:`evalbench.ratings_lc` (shared with the arena runner).
"""

from .data import PUBLIC_DATASETS, public_battles
from .records import ArenaPublicParams, ArenaPublicResult
from .study import alpaca_eval_study, run

__all__ = [
    "PUBLIC_DATASETS",
    "ArenaPublicParams",
    "ArenaPublicResult",
    "alpaca_eval_study",
    "public_battles",
    "run",
]
