"""The arena runner: systems answer prompts, a judge compares (or grades) them, ratings.

``study: arena``, notebook ``arena.ipynb``. What notebooks and users call:

* :func:`run` (an :class:`ArenaParams` run) -> :class:`ArenaResult`: answers, a pairwise
  judge in both orders or a rubric judge, battles, Bradley–Terry ratings with bootstrap
  intervals and online Elo, human votes beside the judge.
* :func:`load_prompts` (``"demo"`` or a JSONL file; :func:`demo_prompts_path` gives the
  demo's) and :func:`answer_messages` (what a system is asked, with or without documents).
* :mod:`~.report` (sentences and tables) and :mod:`~.figures` (figures) of a result.

The rating math is :mod:`evalbench.ratings` and the readers of published battles are
:mod:`evalbench.published`'s; ratings from published data are the ``arena_public`` study.
"""

from .data import demo_prompts_path, load_prompts
from .records import ArenaParams, ArenaResult
from .scoring import answer_messages
from .study import run

__all__ = [
    "ArenaParams",
    "ArenaResult",
    "answer_messages",
    "demo_prompts_path",
    "load_prompts",
    "run",
]
