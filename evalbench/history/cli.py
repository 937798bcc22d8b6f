"""``evalbench compare`` and ``evalbench history``: paired comparison of runs, the regression
gate, pinned baselines and a study's runs over time, on the terminal.

    evalbench compare A B [C ...]          paired tests, B (C ...) vs A; writes a compare report
    evalbench compare --baseline A --fail-on-regression [--min-drop X] B
                                           exit 1 when B dropped significantly (Holm) vs A
    evalbench compare --fail-on-regression B      ... vs B's study's pinned baseline
    evalbench compare --pin RUN            pin RUN as its study's baseline
    evalbench history PARAMS|STUDY         every run of a study, from its manifests

A run is a run folder, ``<study>/<run id>`` under outputs, a study name (its latest
published run), a params file (the run of its current content when rendered, else the
study's latest published run), an inspect_ai log or lm-evaluation-harness output.

Exit codes of ``compare``: 0 compared (with the gate: no regression); 1 the gate found a
regression; 2 bad input or nothing compared (one line on stderr; with the gate also a metric
that paired no item, non-finite numbers, or a run that did not finish); 3 the report did not
render (the table and the gate's lines were printed).
"""

from __future__ import annotations

import argparse
import hashlib
import math
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd

from evalbench.importers import OutcomeError, RunOutcomes, read_options
from evalbench.params import dump_yaml
from evalbench.records import OutputsUnwritable, refuse_links, write_atomic, write_failure
from evalbench.settings import get_settings

from .paired import (
    Comparison,
    compare_runs,
    gate_blockers,
    left_out,
    regression_line,
    regressions,
    repeated_pair,
    unfinished,
)
from .runs import (
    history_frame,
    load_run,
    pin_baseline,
    pinned_baseline,
    resolve_run,
    study_name,
)


def add_parsers(sub: Any) -> None:
    """Add the ``compare`` and ``history`` subcommands to the ``evalbench`` parser."""
    cmp = sub.add_parser("compare", help="paired comparison of runs; regression gate; pin")
    cmp.add_argument("runs", nargs="*", help="runs to compare (the first is the baseline)")
    cmp.add_argument(
        "--baseline",
        help="the baseline run (default with --fail-on-regression: "
        "the pinned baseline of the candidate's study)",
    )
    cmp.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 1 when a metric, overall or in a slice, dropped significantly; exit 2 "
        "when the gate cannot decide (nothing compared, a run that did not finish)",
    )
    cmp.add_argument(
        "--min-drop",
        type=float,
        default=0.0,
        metavar="X",
        help="a regression must also drop by more than X (metric units, finite, >= 0)",
    )
    cmp.add_argument(
        "--alpha", type=float, default=0.05, help="level (Holm-adjusted), above 0 and below 0.5"
    )
    cmp.add_argument(
        "--pair",
        nargs=2,
        action="append",
        default=[],
        metavar=("A_SYS", "B_SYS"),
        help="compare system A_SYS of the baseline with B_SYS (repeatable)",
    )
    cmp.add_argument("--metric", action="append", default=[], help="only this metric")
    cmp.add_argument(
        "--errors",
        choices=["as_study", "exclude"],
        default="as_study",
        help="failed calls: as the study counts them, or left out of the pairs",
    )
    cmp.add_argument(
        "--slice",
        action="append",
        default=[],
        metavar="KEY",
        help="inspect_ai logs: slice by this sample metadata key",
    )
    cmp.add_argument(
        "--max-log-mb",
        type=int,
        metavar="MB",
        help="inspect_ai logs: the most a log may expand to (default 256; read into memory)",
    )
    cmp.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    cmp.add_argument("--rounds", type=int, default=1000, help="bootstrap rounds")
    cmp.add_argument("--no-report", action="store_true", help="print only (no HTML report)")
    cmp.add_argument("--pin", metavar="RUN", help="pin RUN as its study's baseline and exit")
    cmp.set_defaults(handler=cmd_compare)

    hist = sub.add_parser("history", help="every run of a study, from its manifests")
    hist.add_argument("study", help="params file or study name")
    hist.set_defaults(handler=cmd_history)


def _fail(exc: Exception) -> int:
    print(f"evalbench: {exc}", file=sys.stderr)
    return 2


def cmd_compare(args: argparse.Namespace) -> int:
    """``evalbench compare``: 0 (compared; with --fail-on-regression: no regression), 1
    (--fail-on-regression: a regression), 2 (bad input or nothing compared: one line on
    stderr), 3 (the report did not render: one line on stderr)."""
    try:
        check_numbers(args)
        if args.pin:
            if args.runs:
                raise OutcomeError(f"--pin takes one run (got {len(args.runs)} more)")
            path = pin_baseline(resolve_run(args.pin))
            print(f"pinned {resolve_run(args.pin)} as the baseline of its study ({path})")
            return 0
        refs = _refs(args)
        options = read_options(args.slice, args.max_log_mb)
        runs = [load_run(ref, **options) for ref in refs]
        found = compare_runs(
            runs,
            pairs=args.pair,
            metrics=args.metric or None,
            errors=args.errors,
            seed=args.seed,
            rounds=args.rounds,
            alpha=args.alpha,
        )
    except OutcomeError as exc:
        return _fail(exc)
    _print_table(runs, found)
    code = _gate(args, found, runs) if args.fail_on_regression else 0
    if code == 2 or args.no_report:
        return code
    return _report(args, runs, code)


MIN_ROUNDS, MAX_ROUNDS = 10, 100_000
"""Bootstrap rounds ``--rounds`` takes (a study's ``bootstrap_rounds`` takes the same)."""
MAX_ALPHA = 0.5
"""``--alpha`` is below it, as the compare study's ``alpha`` (its report renders the gate)."""


def check_numbers(args: argparse.Namespace) -> None:
    """Refuse a level, a drop, a number of rounds or a log size that cannot be used: a NaN
    level would pass every gate silently (no p is below NaN), a negative count of rounds
    crashes.

    Raises:
        OutcomeError: one line naming the option and what it takes.
    """
    if not 0 < args.alpha < MAX_ALPHA:  # also NaN
        raise OutcomeError(f"--alpha: {args.alpha:g} is not a level above 0 and below "
                           f"{MAX_ALPHA:g}")  # fmt: skip
    if not (math.isfinite(args.min_drop) and args.min_drop >= 0):
        raise OutcomeError(f"--min-drop: {args.min_drop:g} is not a finite number >= 0")
    if not MIN_ROUNDS <= args.rounds <= MAX_ROUNDS:
        raise OutcomeError(f"--rounds: {args.rounds} is not a number of rounds from "
                           f"{MIN_ROUNDS} to {MAX_ROUNDS:,d}")  # fmt: skip
    if args.max_log_mb is not None and args.max_log_mb < 1:
        raise OutcomeError(f"--max-log-mb: {args.max_log_mb} is not a size of 1 MB or more")
    if twice := repeated_pair(args.pair):
        raise OutcomeError(f"--pair {' '.join(twice)} is given twice (the same tests twice "
                           "would weaken every Holm-adjusted p)")  # fmt: skip


def _print_table(runs: list[RunOutcomes], found: Comparison) -> None:
    print(_describe(runs))
    print(format_tests(found.tests, {r.label: _letter(i) for i, r in enumerate(runs)}))
    notes = [unfinished(r) for r in runs if not r.finished]
    notes += found.notes + left_out(found)
    for note in notes + [f"{r.label}: {n}" for r in runs for n in r.notes]:
        print(f"note: {note}")
    sys.stdout.flush()  # the table before any report work, also when stdout is a pipe


def _gate(args: argparse.Namespace, found: Comparison, runs: list[RunOutcomes]) -> int:
    """The gate's exit code, with its lines: 2 when it cannot decide (one line on stderr);
    1 on a regression of what it could compare in finished runs, even where it could not
    decide on something else (a system that measured nothing: said on stderr as well)."""
    if args.min_drop >= 1 and len(found.tests) and (found.tests["kind"] == "binary").all():
        print(
            f"evalbench: --min-drop {args.min_drop:g} can never fire: every metric compared "
            "is a share (from 0 to 1), which cannot fall by more than 1",
            file=sys.stderr,
        )
        return 2
    blockers = gate_blockers(found, runs)
    more = f" (and {len(blockers) - 1} more)" if len(blockers) > 1 else ""
    bad = regressions(found.tests, min_drop=args.min_drop, alpha=args.alpha)
    if blockers and (not len(bad) or any(unfinished(r) for r in runs)):
        print(f"evalbench: {blockers[0]}{more}", file=sys.stderr)
        return 2
    for row in bad.itertuples():
        print(regression_line(row))
    if blockers:
        print(f"evalbench: also: {blockers[0]}{more}", file=sys.stderr)
    if not len(bad):
        print(f"no regression (Holm-adjusted p < {args.alpha:g}, drop > {args.min_drop:g})")
    sys.stdout.flush()
    return 1 if len(bad) else 0


def _report(args: argparse.Namespace, runs: list[RunOutcomes], code: int) -> int:
    """Render (or reuse) the report; one that did not render is exit 3, unless the gate
    already failed (its 1 stands)."""
    try:
        print(f"report: {render_report(args, runs)}")
    except (OutcomeError, OSError) as exc:  # a full disk: the run folder's probe says so
        why = exc if isinstance(exc, OutcomeError | OutputsUnwritable) else write_failure(exc)
        if why is None:
            raise
        print(f"evalbench: {why}", file=sys.stderr)
        return code or 3
    return code


def _refs(args: argparse.Namespace) -> list[str]:
    if args.baseline:
        return [args.baseline, *args.runs]
    if args.fail_on_regression and len(args.runs) == 1:
        candidate = resolve_run(args.runs[0])
        study = candidate.parent.name
        pinned = pinned_baseline(study)
        if pinned is None:
            raise OutcomeError(
                f"{args.runs[0]}: study {study!r} has no pinned baseline; give "
                "--baseline RUN or pin one (evalbench compare --pin RUN)"
            )
        return [str(pinned), str(candidate)]
    if len(args.runs) < 2:
        raise OutcomeError("compare needs two runs or more (or --baseline RUN and a candidate)")
    return list(args.runs)


def _letter(index: int) -> str:
    return chr(ord("A") + index) if index < 26 else f"R{index + 1}"


def _describe(runs: list[RunOutcomes]) -> str:
    lines = []
    for i, run in enumerate(runs):
        meta = run.meta
        commit = (meta.get("commit") or "")[:10] or "-"
        dirty = "+dirty" if meta.get("dirty") else ""
        role = f"{_letter(i)} = " + ("baseline " if i == 0 else "candidate")
        lines.append(
            f"{role:9s} {run.label}  ({run.benchmark}, {run.source}; started "
            f"{str(meta.get('started_at') or '-')[:16]}, commit {commit}{dirty})"
        )
    return "\n".join(lines)


def _fmt(value: float, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, float) and math.isinf(value):
        return "inf"
    return f"{value:.{digits}f}"


def _p(value: float) -> str:
    if math.isnan(value):
        return "-"
    return f"{value:.3f}" if value >= 0.001 else f"{value:.1e}"


def format_tests(tests: pd.DataFrame, letters: dict[str, str] | None = None) -> str:
    """The comparison as a text table (one row per metric and slice; candidates by letter:
    ``mean B`` with one candidate, else ``mean run``, the row's run)."""
    letters = letters or {}
    shown = {letters.get(c, c) for c in tests["candidate"]}
    candidate_mean = f"mean {shown.pop()}" if len(shown) == 1 else "mean run"
    rows = []
    for r in tests.itertuples():
        system = r.system_a if r.system_a == r.system_b else f"{r.system_a}->{r.system_b}"
        where = "all" if r.slice == "all" else f"{r.slice}={r.slice_value}"
        rows.append(
            {
                "run": letters.get(r.candidate, r.candidate),
                "system": system,
                "metric": r.metric,
                "slice": where,
                "n": r.n,
                "mean A": _fmt(r.mean_a),
                candidate_mean: _fmt(r.mean_b),
                "change [interval]": f"{r.difference:+.3f} [{r.low:+.3f}, {r.high:+.3f}]",
                "test": r.test.split(" (")[0],
                "p": _p(r.p),
                "Holm": _p(r.p_holm),
                "BH": _p(r.p_bh),
                "MDD": _fmt(r.mdd),
            }
        )
    if not rows:
        return "(no paired items)"
    return pd.DataFrame(rows).to_string(index=False)


BUSY_WAIT_S = 300.0
"""How long ``compare`` waits for another process rendering the same report."""
BUSY_POLL_S = 0.5


def render_report(args: argparse.Namespace, runs: list[RunOutcomes]) -> str:
    """Render the comparison as a ``compare`` study report (its params file is kept in
    ``outputs/compare/requests/``), or reuse the one already rendered when it is up to date
    (same code, params and compared runs); waits while another process renders it.

    Returns:
        The report's path (``(up to date: reused)`` after it when reused).

    Raises:
        OutcomeError: the report did not render (its status and reason).
        KeyboardInterrupt: its render was interrupted (Ctrl-C, SIGTERM).
    """
    from evalbench.publish import PUBLISHED, run_study

    path = _request_file(args, runs)
    result = run_study(path)
    deadline = time.monotonic() + BUSY_WAIT_S
    while result.status == "busy" and time.monotonic() < deadline:
        time.sleep(BUSY_POLL_S)
        result = run_study(path)
    if result.status == "current" and result.run_dir is not None:
        return f"{result.run_dir / 'report.html'} (up to date: reused)"
    if result.status == "interrupted":  # Ctrl-C or SIGTERM: exit 130, as every command
        raise KeyboardInterrupt
    if result.status not in PUBLISHED or result.run_dir is None:
        raise OutcomeError(f"the compare report did not render ({result.status}: {result.reason})")
    return str(result.run_dir / "report.html")


def _inspect_options(args: argparse.Namespace) -> dict[str, Any]:
    slices = {"slices": args.slice} if args.slice else {}
    return slices | ({"max_log_mb": args.max_log_mb} if args.max_log_mb else {})


def _request_file(args: argparse.Namespace, runs: list[RunOutcomes]) -> Path:
    """The compare params file of this request, named by its content's hash (written
    atomically: two compares of the same pair at once write the same bytes)."""
    params = {
        "study": "compare",
        "title": f"Comparison: {' vs '.join(r.label for r in runs[1:])} vs {runs[0].label}",
        "seed": args.seed,
        "bootstrap_rounds": max(args.rounds, 10),
        "runs": [
            {
                "path": str(r.path.resolve()),
                "create": False,
                **(_inspect_options(args) if r.source == "inspect_ai" else {}),
            }
            for r in runs
        ],
        "pairs": [list(p) for p in args.pair],
        "metrics": args.metric or None,
        "errors": args.errors,
        "alpha": args.alpha,
        "min_drop": args.min_drop,
    }
    text = dump_yaml(params)
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    path = get_settings().outputs_dir / "compare" / "requests" / digest / "compare.yaml"
    refuse_links(path.parent)
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        write_atomic(path, text)
    return path


def cmd_history(args: argparse.Namespace) -> int:
    """``evalbench history``: every run of a study, oldest first."""
    study = Path(args.study).stem if args.study.endswith((".yaml", ".yml")) else args.study
    try:
        study = study_name(study)
    except OutcomeError as exc:
        return _fail(exc)
    frame = history_frame(study)
    if not len(frame):
        return _fail(
            OutcomeError(
                f"{args.study}: no runs of study {study!r} under {get_settings().outputs_dir}"
            )
        )
    print(f"{study}: {len(frame)} runs, oldest first (* = simulated system)")
    print(format_history(frame))
    return 0


def format_history(frame: pd.DataFrame) -> str:
    """The history as a text table."""
    rows = []
    for r in frame.itertuples():
        sims = set(_text(r.simulated).split(", "))
        names = [s for s in _text(r.systems).split(", ") if s]
        systems = ", ".join(s + ("*" if s in sims else "") for s in names) or "-"
        commit = f"{_text(r.commit) or '-'}{'+dirty' if r.dirty is True else ''}"
        rows.append(
            {
                "run id": r.run_id,
                "status": _text(r.status) or "-",
                "started (UTC)": (_text(r.started_at) or "-")[:16].replace("T", " "),
                "commit": commit,
                "params hash": _text(r.params_hash) or "-",
                "overrides": _text(r.overrides) or "-",
                "systems": systems,
                "headlines": _text(r.headlines) or "-",
                "alerts": f"{len(r.alerts.split('; '))} fired" if r.alerts else "-",
                "": "pinned baseline" if r.pinned else "",
            }
        )
    return pd.DataFrame(rows).to_string(index=False)


def _text(value: Any) -> str:
    """A history cell as text: ``""`` for a field the manifest does not have (None, or NaN
    once pandas holds it), never ``nan``."""
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)
