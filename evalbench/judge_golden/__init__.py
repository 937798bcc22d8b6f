"""How far to trust an LLM judge on your own golden set.

``study: judge_golden``, notebook ``judge_golden.ipynb``. A golden set is a file of items
with human scores per rubric dimension; the study asks one or more judges to grade every
item and reports, per judge and dimension, how often it lands within ±k points of the human
score (with intervals), its bias, confusion and answer-length bias, the worst
disagreements, a panel of the judges, a test–retest run, a pairwise position check and,
with several annotators, their agreement and each judge against their reference. Offline
it uses ``sim`` judges whose truth is the human score, so each estimate is checked against
its known expectation. What notebooks and users call:

* :func:`run` (a :class:`JudgeGoldenParams` run) -> :class:`JudgeGoldenResult`.
* :func:`load_golden` (a ``.csv`` / ``.jsonl`` golden set, or ``"demo"``) and
  :func:`load_annotations` (several annotators' scores), combined into one reference per
  item by :func:`golden_from_annotations`; a malformed file is a :class:`GoldenSetError`
  naming the file, line and column.
* :mod:`~.report` (sentences and tables) and :mod:`~.figures` (figures) of a result.

The judges themselves (prompts, parsers, simulators) are :mod:`evalbench.judge`.
"""

from .data import GoldenSetError, golden_from_annotations, load_annotations, load_golden
from .records import JudgeGoldenParams, JudgeGoldenResult
from .study import run

__all__ = [
    "GoldenSetError",
    "JudgeGoldenParams",
    "JudgeGoldenResult",
    "golden_from_annotations",
    "load_annotations",
    "load_golden",
    "run",
]
