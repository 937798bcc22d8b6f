"""Generated-data quality: AIME-style problems from a generator model, and how good they are.

A generator is shown a real AIME problem as a style reference and asked for a new problem
as JSON ``{problem, answer, solution, topic}``; invalid outputs are kept with their reason
and retried. The problems are then checked three ways, after the AIME case study of
Datawhale's *Hello-Agents*, chapter 12.4: a rubric judge (``aime_quality``: four
dimensions 1–5, pass ≥ 3.5), a pairwise judge against real AIME problems in both orders
(win rate, 50% = parity) and human reviewers (a form or a CSV round trip). Near-copies of
real problems are flagged and never count as wins; a conclusion table checks the results
against thresholds.

The study (``study: datagen``, notebook ``datagen_quality.ipynb``): :func:`run` (a
:class:`DatagenParams` run) -> :class:`DatagenResult`, shown by :mod:`~.report` (sentences
and tables) and :mod:`~.figures`::

    result = datagen.run(run)

Reviewing problems by hand (in JupyterLab)::

    problems = datagen.problems_frame(read_jsonl(".../generated.jsonl"))
    path = datagen.verifications_path(".../generated.jsonl")
    datagen.verification_form(problems, path)            # or the CSV round trip:
    datagen.export_verification_csv(problems, "review.csv", datagen.load_verifications(path))
    datagen.save_verifications(path, datagen.import_verification_csv("review.csv"))

Modules: :mod:`~.data` (real AIME problems), :mod:`~.scoring` (prompt, parsing,
validation), :mod:`~.duplicates`, :mod:`~.verification` (review files) and :mod:`~.review`
(the form), :mod:`~.reviewers` (several reviewers), :mod:`~.metrics` (summaries,
conclusion), :mod:`~.records` (params, records, the result), :mod:`~.study` (the run),
:mod:`~.report` (sentences, tables, headlines), :mod:`~.figures`, :mod:`~.sim` (the
simulated generator and reviewer).
"""

from __future__ import annotations

from .records import DatagenParams, DatagenResult
from .review import verification_form
from .scoring import problems_frame
from .study import run
from .verification import (
    export_verification_csv,
    import_verification_csv,
    load_verifications,
    save_verifications,
    verifications_path,
)

__all__ = [
    "DatagenParams",
    "DatagenResult",
    "export_verification_csv",
    "import_verification_csv",
    "load_verifications",
    "problems_frame",
    "run",
    "save_verifications",
    "verification_form",
    "verifications_path",
]
