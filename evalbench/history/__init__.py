"""Runs over time: find a study's runs, pin a baseline, pair two runs item by item and test.

Core (no benchmark imported): ``evalbench compare`` / ``evalbench history``, the ``compare``
study and the index's scorecard and regression marks all use these functions.

- :mod:`.runs` — run folders and references (run folder, ``study/run id``, study name,
  params file, or another harness's log), pinned baselines (``outputs/<study>/baseline.json``),
  every run of a study from its manifests and each run's numbers with intervals;
- :mod:`.paired` — pairing two runs by item id and the paired tests (exact McNemar, Wilcoxon
  signed-rank, paired bootstrap, Holm, Benjamini–Hochberg, minimum detectable difference),
  and the regression gate's rule;
- :mod:`.scorecard` — what the index shows: the systems × benchmarks scorecard, each
  system's results and history, and the regression mark of a study with a pinned baseline.
"""

from __future__ import annotations

from .paired import (
    MEASURED_STATES,
    TEST_COLUMNS,
    Comparison,
    ErrorPolicy,
    Pairing,
    SignedRank,
    SystemPair,
    benjamini_hochberg,
    check_comparable,
    compare_runs,
    gate_blockers,
    holm,
    mdd_paired_binary,
    mdd_paired_mean,
    pair_outcomes,
    paired_tests,
    regression_line,
    regressions,
    rng_for,
    system_pairs,
    unmeasured,
    wilcoxon_signed_rank,
)
from .runs import (
    BASELINE_FILE,
    HISTORY_COLUMNS,
    PUBLISHED,
    SUMMARY_COLUMNS,
    headline_series,
    history_frame,
    is_published,
    is_published_run,
    latest_published,
    load_run,
    params_run_dir,
    pin_baseline,
    pinned_baseline,
    resolve_run,
    study_runs,
    summarize_outcomes,
)
from .scorecard import (
    Scorecard,
    latest_cells,
    read_ratings,
    regression_status,
    run_results,
    scorecard,
    system_history,
    system_results,
)

__all__ = [
    "BASELINE_FILE",
    "HISTORY_COLUMNS",
    "MEASURED_STATES",
    "PUBLISHED",
    "SUMMARY_COLUMNS",
    "TEST_COLUMNS",
    "Comparison",
    "ErrorPolicy",
    "Pairing",
    "Scorecard",
    "SignedRank",
    "SystemPair",
    "benjamini_hochberg",
    "check_comparable",
    "compare_runs",
    "gate_blockers",
    "headline_series",
    "history_frame",
    "holm",
    "is_published",
    "is_published_run",
    "latest_cells",
    "latest_published",
    "load_run",
    "mdd_paired_binary",
    "mdd_paired_mean",
    "pair_outcomes",
    "paired_tests",
    "params_run_dir",
    "pin_baseline",
    "pinned_baseline",
    "read_ratings",
    "regression_line",
    "regression_status",
    "regressions",
    "resolve_run",
    "rng_for",
    "run_results",
    "scorecard",
    "study_runs",
    "summarize_outcomes",
    "system_history",
    "system_pairs",
    "system_results",
    "unmeasured",
    "wilcoxon_signed_rank",
]  # fmt: skip
