"""Sweeps: a ``sweep:`` block in any study's params runs every configuration, one report.

    sweep:
      grid: {systems.0.temperature: [0.0, 0.7], systems.0.limits.max_steps: [10, 30]}
      zip: {}                 # keys that vary together (same lengths)
      seeds: [0, 1, 2]        # each configuration once per seed
      baseline: {systems.0.temperature: 0.0, systems.0.limits.max_steps: 10}

What notebooks and users call:

- :func:`run` — compute every cell (a run of the swept study in its own run folder, through
  the study's ``run`` function, no notebook; worker processes, resumable, reused when
  finished), then compare, summarize and rank them (:class:`SweepResult`);
- :class:`SweepParams`, :class:`SweepSpec` — the sweep's params and its ``sweep:`` block;
- :class:`SweepResult` — what the sweep report shows;
- :class:`CellExecutor`, :class:`LocalExecutor` — where cells run (the seam for other
  executors).
"""

from .executor import CellExecutor, LocalExecutor
from .records import MAX_CELLS, SweepParams, SweepResult, SweepSpec
from .study import run

__all__ = [
    "MAX_CELLS",
    "CellExecutor",
    "LocalExecutor",
    "SweepParams",
    "SweepResult",
    "SweepSpec",
    "run",
]
