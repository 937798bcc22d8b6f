"""Runs of evalbench and of other harnesses, read into per-item outcomes.

:func:`read_outcomes` takes

- an evalbench run folder (``manifest.json`` + ``records/``; :mod:`.outcomes`),
- an inspect_ai log, ``.eval`` or ``.json`` (:mod:`.inspect_logs`; needs the optional extra
  ``pip install 'evalbench[importers]'``), or
- lm-evaluation-harness output: a ``results_*.json``, a ``samples_*.jsonl`` or the folder
  holding them (:mod:`.lm_eval`; plain JSON, no extra needed),

and returns a :class:`RunOutcomes`: one row per item, system and metric, which ``evalbench
compare`` pairs across runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .outcomes import (
    BINARY,
    OUTCOME_COLUMNS,
    READERS,
    SCORE,
    STATES,
    ImporterUnavailable,
    OutcomeError,
    RunOutcomes,
    outcome_frame,
    read_run_folder,
)


def detect(path: Path) -> str:
    """``evalbench``, ``inspect_ai`` or ``lm_eval``: what kind of run ``path`` holds.

    Raises:
        OutcomeError: none of them.
    """
    if path.is_dir():
        if (path / "manifest.json").exists():
            return "evalbench"
        if any(path.glob("**/results_*.json")) or any(path.glob("**/samples_*.jsonl")):
            return "lm_eval"
    elif path.suffix == ".eval":
        return "inspect_ai"
    elif path.name.startswith(("results_", "samples_")) and path.suffix in (".json", ".jsonl"):
        return "lm_eval"
    elif path.suffix == ".json" and _looks_like_inspect(path):
        return "inspect_ai"
    raise OutcomeError(
        f"{path}: not an evalbench run folder, an inspect_ai log (.eval/.json) or "
        "lm-evaluation-harness output (results_*.json, samples_*.jsonl or their folder)"
    )


def _looks_like_inspect(path: Path) -> bool:
    with open(path, encoding="utf-8", errors="replace") as fh:
        head = fh.read(4096)
    return '"eval"' in head and ('"version"' in head or '"status"' in head)


def input_files(path: Path) -> list[Path]:
    """The files :func:`read_outcomes` reads for the run at ``path`` (for freshness checks):
    a run folder's manifest and record files, a log, or lm-eval's results and samples files.

    Raises:
        OutcomeError: ``path`` is none of the kinds :func:`detect` knows.
    """
    kind = detect(path)
    if kind == "evalbench":
        return [path / "manifest.json", *sorted((path / "records").glob("*.jsonl"))]
    if kind == "inspect_ai":
        return [path]
    from .lm_eval import locate

    results, samples = locate(path)
    return [*([results] if results else []), *samples]


def read_options(slices: Sequence[str] = (), max_log_mb: int | None = None) -> dict[str, Any]:
    """:func:`read_outcomes` options for an inspect_ai log (other readers ignore them):
    sample metadata keys to slice by, and the most the log may expand to (MiB)."""
    options: dict[str, Any] = {"slices": list(slices)} if slices else {}
    if max_log_mb is not None:
        options["max_log_bytes"] = max_log_mb * 2**20
    return options


def read_outcomes(path: Path | str, **options: Any) -> RunOutcomes:
    """Read a run of any supported kind (see the module docstring) into outcomes.

    Args:
        path: the run folder, log file or output folder.
        **options: passed to an inspect_ai log's reader (:func:`read_options`: ``slices``,
            ``max_log_bytes``); the other readers take none.

    Raises:
        OutcomeError: unreadable input (one line naming file:line and field where known).
        ImporterUnavailable: an inspect_ai log without the optional extra.
    """
    path = Path(path)
    kind = detect(path)
    if kind == "evalbench":
        return read_run_folder(path)
    if kind == "inspect_ai":
        from .inspect_logs import read_inspect_log

        return read_inspect_log(path, **options)
    from .lm_eval import read_lm_eval

    return read_lm_eval(path)


__all__ = [
    "BINARY",
    "OUTCOME_COLUMNS",
    "READERS",
    "SCORE",
    "STATES",
    "ImporterUnavailable",
    "OutcomeError",
    "RunOutcomes",
    "detect",
    "input_files",
    "outcome_frame",
    "read_options",
    "read_outcomes",
    "read_run_folder",
]
