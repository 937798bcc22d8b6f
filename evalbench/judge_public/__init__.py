"""Published LLM judges against real human labels: PRD Vicuna-80, PandaLM, MT-Bench.

``study: judge_public``, notebook ``judge_public.ipynb``; no model is asked. What
notebooks and users call:

* :func:`run` (a :class:`JudgePublicParams` run) -> :class:`JudgePublicResult`.
* :func:`load_prd`, :func:`load_pandalm`, :func:`load_mtbench_single`,
  :func:`load_mtbench_pairs`: the published files as DataFrames (readers in
  :mod:`evalbench.published`).
* :mod:`~.report` (sentences and tables) and :mod:`~.figures` (figures) of a result.

The agreement tables are :mod:`~.metrics`' functions; the verdict tables shared with the
golden-set study are :mod:`evalbench.judge.tables`'.
"""

from .data import load_mtbench_pairs, load_mtbench_single, load_pandalm, load_prd
from .records import JudgePublicParams, JudgePublicResult
from .study import run

__all__ = [
    "JudgePublicParams",
    "JudgePublicResult",
    "load_mtbench_pairs",
    "load_mtbench_single",
    "load_pandalm",
    "load_prd",
    "run",
]
