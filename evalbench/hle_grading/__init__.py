"""HLE-style expert grading (after Phan et al., 2025, arXiv:2501.14249): research answers
graded on six dimensions by the ``hle`` rubric judge, by category × difficulty, against a
human baseline.

``study: hle_grading``, notebook ``hle_grading.ipynb``. What notebooks and users call:

* :func:`run` (an :class:`HleGradingParams` run) -> :class:`HleGradingResult`.
* :func:`load` (the expert set: ``"demo"`` or a JSON Lines file) -> :class:`ExpertItem` list.
* :mod:`~.report` (sentences and tables) and :mod:`~.figures` (figures) of a result.

HLE's exact-answer accuracy and calibration error are the ``hle`` study
(:mod:`evalbench.hle`).
"""

from .data import ExpertItem, load
from .records import HleGradingParams, HleGradingResult
from .study import run

__all__ = ["ExpertItem", "HleGradingParams", "HleGradingResult", "load", "run"]
