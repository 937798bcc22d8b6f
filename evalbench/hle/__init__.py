"""HLE: Humanity's Last Exam (Phan et al., 2025, arXiv:2501.14249) — exact-answer accuracy
with the official judge and the official calibration error (quirks kept, a corrected one
beside).

``study: hle``, notebook ``hle.ipynb``. What notebooks and users call:

* :func:`run` (an :class:`HleParams` run) -> :class:`HleResult`.
* :func:`load` — HLE questions from the gated hub dataset ``cais/hle`` (pinned revision),
  a local folder / JSONL / parquet, or the offline demo suite (``"demo"``: not HLE);
  :func:`read_predictions` / :func:`write_predictions` — the official ``hle_<model>.json``
  files.
* :func:`parse_judgment` — a judge's output to a verdict and confidence, or unscored.
* :mod:`~.report` (sentences and captions) and :mod:`~.figures` (figures) of a result.

The calibration errors are :mod:`evalbench.calibration`'s; HLE-style expert grading is the
``hle_grading`` study (:mod:`evalbench.hle_grading`).
"""

from .data import load, read_predictions, write_predictions
from .records import HleParams, HleResult
from .scoring import parse_judgment
from .study import run

__all__ = [
    "HleParams",
    "HleResult",
    "load",
    "parse_judgment",
    "read_predictions",
    "run",
    "write_predictions",
]
