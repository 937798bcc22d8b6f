"""``evalbench watch``: one scheduled run for a cron or CI job, and ``--fail-on-alert``.

    evalbench watch params/x.yaml --tier quick          daily: a 10% sample, alerts checked
    evalbench watch params/x.yaml --tier standard       weekly: 30%

Each call is a new point in the study's history: it runs the params with ``tier=`` and a
``tag=`` (default: today's UTC date, so a retried job resumes that day's run instead of
paying twice) and, unless ``-p cache=...`` says otherwise, ``cache=refresh`` (a scheduled
check asks the systems now, not the response cache); ``-p tier=`` and ``-p tag=`` are refused
(``--tier``, ``--tag`` say them). The run's ``alerts:`` rules are checked against the pinned
baseline, or the previous ok run of the same configuration; the index and the study's trends
page are rebuilt. evalbench has no scheduler of its own: cron or CI calls this.

Before the run, the notifications earlier checks of the study could not deliver are sent
again (:func:`retry_lines`; ``evalbench run`` does the same).

Exit status: 0 nothing fired; 1 an alert fired, a notification was not delivered (this run's
or an earlier one's, retried), a rule could not be checked (not one that waits for a
baseline on a first run), or the run itself was not ok; 2 bad input (no ``alerts:`` block,
a params error, ``-p tier=`` or ``-p tag=``); 130 interrupted (Ctrl-C or SIGTERM, also
during a delivery: the undelivered ones are kept for the next run).
"""

from __future__ import annotations

import argparse
import datetime as dt
import shlex
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalbench.params import StudyParams


def add_watch_parser(sub: Any, handler: Callable[[argparse.Namespace], int]) -> None:
    """Add ``watch`` to the ``evalbench`` command line (imports nothing heavy); ``handler``
    calls :func:`cmd_watch`."""
    watch = sub.add_parser("watch", help="one scheduled run (cron/CI): run, check alerts, exit")
    watch.add_argument("params", type=Path, help="params YAML file with an alerts: block")
    watch.add_argument("--tier", choices=["quick", "standard", "full"], default="quick",
                       help="share of every stratum to study (default: quick, 10%%)")  # fmt: skip
    watch.add_argument("-p", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                       help="override a params field (dotted keys; repeatable)")  # fmt: skip
    watch.add_argument("--tag", help="name of this run (default: today's UTC date, YYYY-MM-DD)")
    watch.set_defaults(handler=handler)


WATCH_SETS = ("tier", "tag")
"""Params watch sets from its own options (``--tier``, ``--tag``), never from ``-p``."""


def watch_overrides(args: argparse.Namespace, today: dt.date | None = None) -> list[str]:
    """The overrides of a scheduled run: the user's, then ``tier=``, ``tag=`` and (unless
    given) ``cache=refresh``.

    Raises:
        ParamsError: a ``-p`` override of the tier or the tag (watch's own would win over
            it): one line naming ``--tier`` / ``--tag``.
    """
    for override in args.overrides:
        _refuse_watchs_own(str(override))
    tag = args.tag or (today or dt.datetime.now(dt.timezone.utc).date()).isoformat()
    extra = [f"tier={args.tier}", f"tag={tag}"]
    if not any(str(o).startswith("cache=") for o in args.overrides):
        extra.append("cache=refresh")
    return [*args.overrides, *extra]


def _refuse_watchs_own(override: str) -> None:
    from evalbench.params import ParamsError, shown_override

    key, _, value = override.partition("=")
    name = key.strip().split(".")[0]  # the field -p would set, as it reads the key
    if name not in WATCH_SETS:
        return
    value = value.strip()
    shown = shown_override(override)  # a URL or a long value is not repeated
    use = f"--{name} {shlex.quote(value)}" if value and shown == override else f"--{name}"
    raise ParamsError(f"-p {shown}: watch sets the {name}; use {use}")


def cmd_watch(
    args: argparse.Namespace,
    check_secrets: Callable[[Any], None],
    exit_status: Callable[[Sequence[str]], int],
) -> int:
    """``evalbench watch`` (see the module docstring for the exit status), with the command
    line's own secret check and exit status of a run."""
    from evalbench.publish import build_index, run_study, summary_lines, summary_page
    from evalbench.studies import load_params

    overrides = watch_overrides(args)
    params = load_params(args.params, overrides)
    if params.alerts is None:
        print(f"evalbench: {args.params}: alerts: watch needs an alerts: block (the rules "
              "to check); see docs/compare-alerts.md", file=sys.stderr)  # fmt: skip
        return 2
    check_secrets(params)
    retried, retry_code = retry_lines(args.params, params)
    for line in retried:
        print(line, flush=True)
    result = run_study(args.params, overrides)
    index = build_index()
    print("\n".join(summary_lines([result])))
    code = exit_status([result.status])
    if result.run_dir is None or code:
        return code
    record = _record(result.run_dir)
    for line in alert_lines(record):
        print(line)
    print(f"report: {result.run_dir / 'report.html'}")
    summary = summary_page(result.run_dir)  # written if a run stopped before it had one
    if summary is not None:
        print(f"summary: {summary}")
    print(f"trends: {result.run_dir.parent / 'trends.html'}\nindex: {index}")
    return max(fail_on_alert([result.run_dir]), retry_code)


def retry_lines(params_file: Path, params: StudyParams) -> tuple[list[str], int]:
    """Before a run or watch: deliver the notifications earlier checks of the study could not
    (:func:`evalbench.alerts.check.redeliver`); the lines to print, and 1 when one still
    failed (else 0).

    Raises:
        KeyboardInterrupt: Ctrl-C or SIGTERM during a delivery (the rest stay marked).
    """
    from evalbench.runs import study_dir_for

    from .check import redeliver

    if params.alerts is None or not params.alerts.notify:
        return [], 0
    study_dir = study_dir_for(params_file)
    if not study_dir.is_dir():
        return [], 0
    lines = []
    for done in redeliver(study_dir, params.alerts, params.title):
        if done.note:
            lines.append(f"alerts of {done.run}: {done.note}")
        elif done.failed < done.tried:
            share = f"{done.tried - done.failed} of {done.tried}" if done.failed else done.tried
            lines.append(f"alerts of {done.run}: {share} undelivered notification(s) now "
                         "delivered")  # fmt: skip
        lines += [f"NOTIFICATION FAILED {d.get('target')} ({d.get('rule')}) of {done.run}: "
                  f"{d.get('error')}" for d in done.failures]  # fmt: skip
    return lines, int(any(line.startswith("NOTIFICATION FAILED") for line in lines))


def _record(run_dir: Path) -> dict[str, Any] | None:
    from evalbench.runs import current_manifest

    return current_manifest(run_dir).get("alerts")


def alert_lines(record: dict[str, Any] | None) -> list[str]:
    """Every place a rule fired and every failed delivery, one line each (CI logs)."""
    from .check import failed_deliveries
    from .notify import finding_line
    from .rules import Finding
    from .shown import MAX_SHOWN, shown

    if not record:
        return []
    fired = [f"ALERT {f['rule']}: {finding_line(Finding(**f))}" for f in record.get("fired") or []]
    lines = shown(fired, 2 * MAX_SHOWN, "ALERT ")
    failed = [
        f"NOTIFICATION FAILED {d['target']} ({d['rule']}): {d['error']}"
        for d in failed_deliveries(record)
    ]
    lines += shown(failed, 2 * MAX_SHOWN, "NOTIFICATION FAILED ")
    problems = [f"ALERT RULE NOT CHECKED: {p}" for p in record.get("problems") or []]
    lines += shown(problems, 2 * MAX_SHOWN, "ALERT RULE NOT CHECKED: ")
    if not lines:
        lines.append(f"no alert (vs {record.get('baseline') or '—'}: {record.get('baseline_is')})")
    return lines


def undelivered(run_dir: Path | None) -> int:
    """1 when the alert check of the run in ``run_dir`` left a notification undelivered
    (``evalbench run`` fails then, ``--fail-on-alert`` or not), else 0."""
    from .check import failed_deliveries

    return int(run_dir is not None and bool(failed_deliveries(_record(run_dir))))


def fail_on_alert(run_dirs: Sequence[Path | None]) -> int:
    """``--fail-on-alert``: 1 when any run's alert check fired, failed to notify or could not
    check a rule (:func:`evalbench.alerts.check.alert_exit`), else 0."""
    from .check import alert_exit

    return max((alert_exit(_record(d)) for d in run_dirs if d is not None), default=0)
