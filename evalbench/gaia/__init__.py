"""GAIA: level-wise accuracy of general AI assistants (Mialon et al., 2023, arXiv:2311.12983).

``study: gaia``, notebook ``gaia_levels.ipynb``; chat models and agents alike. What notebooks
and users call:

* :func:`run` (a :class:`GaiaParams` run) -> :class:`GaiaResult`.
* :func:`load` (the gated hub dataset, the offline demo suite at :func:`demo_path`, a folder
  or a JSONL file; a bad file is a :class:`GaiaDataError`).
* :func:`extract_answer` (the ``FINAL ANSWER:`` template), :func:`question_scorer` (the
  official leaderboard verdict, quirks included), :func:`score` (outputs -> records) and
  :func:`level_accuracy` (accuracy by level with Wilson intervals).
* :func:`export_submission` / :func:`read_submission` (the leaderboard JSONL).
* :mod:`~.report` (sentences and tables) and :mod:`~.figures` (figures) of a result.
* Semantic answer matching (``semantic_judge:`` in params): a judge
  (:mod:`evalbench.judge.matching`) says whether each answer means the same as the gold one;
  its verdict (``correct_semantic``) is shown beside the official one, never instead.

Everything else is in the submodules: :mod:`~.data`, :mod:`~.scoring`, :mod:`~.metrics`,
:mod:`~.equivalence` (the simulation's truth of "the same answer").
"""

from .data import GaiaDataError, demo_path, export_submission, load, read_submission
from .metrics import level_accuracy
from .records import GaiaParams, GaiaResult
from .scoring import extract_answer, question_scorer, score
from .study import run

__all__ = [
    "GaiaDataError",
    "GaiaParams",
    "GaiaResult",
    "demo_path",
    "export_submission",
    "extract_answer",
    "level_accuracy",
    "load",
    "question_scorer",
    "read_submission",
    "run",
    "score",
]
