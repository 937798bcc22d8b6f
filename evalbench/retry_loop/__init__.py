"""Does feedback help? The suggestion-driven retry loop, measured.

``study: retry_loop``, notebook ``retry_loop.ipynb``. A generator answers; a judge scores the
answer on a 3-dimension 1-10 rubric and writes a suggestion; the generator retries with it,
up to ``rounds`` times or until a score threshold — and, in a control arm, retries the same
way without the suggestion, so the suggestion's effect is separated from a second try. A
second judge on the first and final answers checks the loop judge's self-preference. Offline
the generator is simulated with known true gains per round. What notebooks and users call:

* :func:`run` (a :class:`RetryLoopParams` run) -> :class:`RetryLoopResult`.
* :func:`load_items` (``"demo"`` or a ``.jsonl`` / ``.csv`` of ``item, question,
  [reference]``; a malformed file is a :class:`RetryDataError` naming the line).
* :mod:`~.report` (sentences and tables) and :mod:`~.figures` (figures) of a result.

The judges (prompts, parsers, simulators) are :mod:`evalbench.judge`'s.
"""

from .data import RetryDataError, load_items
from .records import RetryLoopParams, RetryLoopResult
from .study import run

__all__ = ["RetryDataError", "RetryLoopParams", "RetryLoopResult", "load_items", "run"]
