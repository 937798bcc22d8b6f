"""Where the compared runs are, and reading them (the I/O edge of the compare study).

A run reference in params is a run folder, ``<study>/<run id>`` under the outputs folder, a
study name (its latest published run), a params file, or a log of another harness
(inspect_ai ``.eval``/``.json``, lm-evaluation-harness output). A params file with
``overrides`` — or with ``create: true``, the default — names exactly the run those params
make; the study renders it first when it has not been rendered yet.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from evalbench.history import is_published_run, params_run_dir, resolve_run
from evalbench.importers import OutcomeError, RunOutcomes, read_options, read_outcomes
from evalbench.params import ParamsError

from .records import InputRun, RunRef


def default_label(index: int) -> str:
    """``A``, ``B``, ... ``Z``, then ``R27`` ..."""
    return chr(ord("A") + index) if index < 26 else f"R{index + 1}"


def locate(ref: RunRef, index: int, *, base: Path, outputs: Path) -> InputRun:
    """Locate ``runs[index]`` of the params (``ref``).

    Raises:
        OutcomeError: one line naming ``runs.<index>.path`` and what is wrong.
    """
    label = ref.label or default_label(index)
    raw = Path(ref.path)
    file = raw if raw.is_absolute() else base / raw
    params_ref = file.suffix in (".yaml", ".yml") and file.is_file()
    try:
        if params_ref and (ref.overrides or ref.create):
            run_dir = params_run_dir(file, ref.overrides, outputs)
            published = is_published_run(run_dir)
            return InputRun(
                index,
                label,
                run_dir if published else None,
                file,
                list(ref.overrides),
                list(ref.slices),
            )
        if ref.overrides:
            raise OutcomeError("overrides apply to a params file only")
        path = resolve_run(ref.path, base=base, outputs=outputs)
    except (OutcomeError, ParamsError) as exc:
        raise OutcomeError(f"runs.{index}.path: {exc}") from None
    params_file = file if params_ref else None
    return InputRun(index, label, path, params_file, [], list(ref.slices), ref.max_log_mb)


def read(run: InputRun) -> RunOutcomes:
    """The located run's outcomes.

    Raises:
        OutcomeError: naming ``runs.<index>`` and the reader's one-line reason.
    """
    if run.path is None:
        raise OutcomeError(f"runs.{run.position}.path: {run.params_file} has not been rendered")
    options = read_options(run.slices, run.max_log_mb)
    try:
        return read_outcomes(run.path, **options)
    except OutcomeError as exc:
        raise type(exc)(f"runs.{run.position}.path: {exc}") from None


def labels(runs: Sequence[InputRun]) -> list[str]:
    """The runs' labels, refusing duplicates.

    Raises:
        OutcomeError: two runs with one label.
    """
    names = [r.label for r in runs]
    if len(set(names)) != len(names):
        raise OutcomeError(f"runs: labels must be unique (got {names})")
    return names
