"""Compare runs: is B better than A, where, and how sure are we?

The names most users need:

- :func:`run` — the whole study (``study: compare``) for an open run; the notebook
  ``compare.ipynb`` shows its :class:`CompareResult`;
- :class:`CompareParams` / :class:`RunRef` — what to compare (run folders, params files,
  study names, inspect_ai logs, lm-eval outputs) and how;
- :func:`evalbench.history.compare_runs` — the paired tests themselves (shared with
  ``evalbench compare`` and the index).

The modules: :mod:`.records` (params, record types, the result), :mod:`.data` (locating and
reading runs), :mod:`.scoring` (verdicts, the gate), :mod:`.metrics` (summaries),
:mod:`.study` (orchestration), :mod:`.report` (sentences), :mod:`.figures` (the history
plot), :mod:`.sim` (simulated runs for the gate's error rates).
"""

from __future__ import annotations

from .data import InputRun, locate, read
from .metrics import overall, run_summaries, run_table
from .records import CompareParams, CompareResult, ComparisonRecord, PairingRecord, RunRef
from .scoring import gate_fires, verdict, with_verdicts
from .study import run

__all__ = [
    "CompareParams",
    "CompareResult",
    "ComparisonRecord",
    "InputRun",
    "PairingRecord",
    "RunRef",
    "gate_fires",
    "locate",
    "overall",
    "read",
    "run",
    "run_summaries",
    "run_table",
    "verdict",
    "with_verdicts",
]
