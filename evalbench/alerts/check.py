"""The alert check of a finished run: choose the baseline, check the rules, notify, record.

``run_study`` calls :func:`check_run` once a run is published (``ok`` or ``degraded``) and
its params have an ``alerts:`` block. The outcome is the ``alerts`` field of the run's
manifest (:func:`check_run`'s return value); :func:`status_note` says it in one line for the
run's status line, and :func:`alert_exit` is ``--fail-on-alert``'s verdict.

What was decided is written before anything is sent: every delivery starts as undelivered
(``retry: true``) and the manifest is rewritten after each target (once per target, not per
notification: 1,000 notifications to one file cost one write, not 1,000), so Ctrl-C or
SIGTERM mid-way leaves the record with the undelivered ones marked, and ``kill -9`` leaves at
most the target under way to be sent again. The next ``evalbench run`` or ``watch`` of the
study delivers those (:func:`redeliver`), at most :data:`MAX_ROUNDS` times each.

Until the check has run, a published run's record is :func:`due_record`: a run that ends
between publishing and its check (killed, a write error) is not up to date, and the next run
of the same command checks it (:func:`evalbench.freshness.is_current`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from evalbench.history.runs import check_baseline
from evalbench.importers import OutcomeError
from evalbench.runs import RunInUse, lock_run, now_iso, read_manifest, release_run, update_manifest

from .notify import Delivery, deliver_one, finding_line, notifications, stop_on_signals
from .pending import undelivered_run
from .rules import Finding, evaluate, read_numbers
from .spec import AlertsSpec, NotifyTarget

PENDING = "not delivered yet (the process ended during the delivery)"
"""A delivery's error until it is tried: what stays when the process is killed mid-way."""
SKIPPED = "not tried: this target failed for an earlier notification"
"""After a target fails, its other notifications of the check wait for the next round (one
unreachable target costs at most one notification's deadline per round)."""
MAX_ROUNDS = 5
"""Checks that try one delivery (the run's own, then each next run or watch) before it is
given up (the manifest and that run's exit status still say it failed)."""
DUE = "the run ended after it was published, before its alert check; the next run checks it"


def due_record(spec: AlertsSpec) -> dict[str, Any]:
    """The ``alerts`` record of a run published but not checked yet (``due``), written with
    its status: if the run ends before :func:`check_run` replaces it, the next run checks it."""
    return {"checked_at": None, "due": True, **spec.public(), "checked": [], "baseline": None,
            "baseline_is": DUE, "fired": [], "notifications": 0, "deliveries": [],
            "problems": [], "notes": []}  # fmt: skip


FAILED_RUN = "a failed run: only its error-rate rules are checked, on its own calls"


def check_run(
    run_dir: Path, spec: AlertsSpec, title: str = "", failed: bool = False
) -> dict[str, Any]:
    """Check ``spec``'s rules for the run in ``run_dir``, send the notifications and write
    the outcome into the run's manifest (``alerts``), which is returned. A ``failed`` run
    (above ``max_error_rate``: not published) is checked for its ``error_rate_more_than``
    rules only, on its own calls (:data:`FAILED_RUN`): the runs those rules are for.

    The record: ``checked_at``, ``rules``, ``notify`` (targets, no secret), ``checked`` (the
    rules checked: without a baseline, those that need none), ``baseline`` (``study/run id``
    or ``None``), ``baseline_is`` (how it was chosen, or why there is none), ``fired`` (one
    entry per place a rule fired), ``notifications`` (how many were made), ``deliveries``
    (each one's outcome), ``problems`` (rules that could not be checked) and ``notes``.
    """
    record: dict[str, Any] = {"checked_at": now_iso(), **spec.public(), "baseline": None,
                              "fired": [], "notifications": 0, "deliveries": [],
                              "problems": [], "notes": []}  # fmt: skip
    baseline, how = (None, FAILED_RUN) if failed else _baseline(run_dir, record)
    record["baseline_is"] = how
    if baseline is not None:
        record["baseline"] = f"{baseline.parent.name}/{baseline.name}"
    payloads = _check(record, spec, run_dir, baseline, title, failed)
    rules = [str(p["evalbench"]["rule"]) for p in payloads]
    record["deliveries"] = [
        Delivery(target.label(), rule, False, 0, PENDING, True, 0, number, target.key())._asdict()
        for number, target in enumerate(spec.notify)
        for rule in rules
    ]
    update_manifest(run_dir, alerts=record)  # decided: kept whatever happens while sending
    deliver_pending(run_dir, record, spec, payloads)
    return record


def _baseline(run_dir: Path, record: dict[str, Any]) -> tuple[Path | None, str]:
    """:func:`check_baseline`, or ``None`` and why: a pin that cannot be read, or that leads
    out of the study's folder (``"run_id": "../other/…"``, refused by
    :func:`~evalbench.history.runs.pinned_baseline`), is a problem of the check."""
    try:
        return check_baseline(run_dir)
    except OutcomeError as exc:
        how = f"the pinned baseline cannot be read: {exc}"
        record["problems"].append(how)
        return None, how


def _check(
    record: dict[str, Any], spec: AlertsSpec, run_dir: Path, baseline: Path | None, title: str,
    failed: bool = False,
) -> list[dict[str, Any]]:  # fmt: skip
    rules = [r for r in spec.rules if baseline is not None or not r.needs_baseline]
    record["checked"] = [rule.describe() for rule in rules]
    before = None if baseline is None else read_numbers(baseline)
    found = evaluate(rules, before, read_numbers(run_dir, attempt=failed))
    record["checked"] = [r for r in record["checked"]  # a rule with a problem was not
                         if not any(p.startswith(f"{r}: ") for p in found.problems)]  # fmt: skip
    record["problems"] += found.problems
    record["notes"] += found.notes
    record["fired"] = [f._asdict() for f in found.findings]
    payloads = notifications(found.findings, run_dir=run_dir, baseline_dir=baseline,
                             how=str(record["baseline_is"]), title=title or run_dir.parent.name,
                             report_url=spec.report_url, failed=failed)  # fmt: skip
    record["notifications"] = len(payloads)
    return payloads


def deliver_pending(
    run_dir: Path,
    record: dict[str, Any],
    spec: AlertsSpec,
    payloads: list[dict[str, Any]],
    failed: set[int] | None = None,
) -> list[dict[str, Any]]:
    """Try every delivery of ``record`` marked ``retry`` (its target, its rule's payload),
    one target after another, rewriting the run's manifest after each target; return those
    tried, as they are now. A target that fails (or is in ``failed``, which gathers their
    positions in ``notify:``) is not tried again here.

    Raises:
        KeyboardInterrupt: Ctrl-C or SIGTERM, at once; the delivery under way is marked
            interrupted (to be retried) and the manifest written first.
    """
    by_rule = {str(p["evalbench"]["rule"]): p for p in payloads}
    entries: list[dict[str, Any]] = record["deliveries"]
    failed = set() if failed is None else failed
    by_target: dict[int | None, list[int]] = {}
    for index, entry in enumerate(entries):
        if isinstance(entry, dict) and entry.get("retry"):
            by_target.setdefault(_target_index(entry, spec.notify), []).append(index)
    tried, current = [], None
    with stop_on_signals() as stop:
        try:
            for number, indices in by_target.items():
                for index in indices:
                    current = index
                    entries[index] = _try(entries[index], number, spec, by_rule, failed,
                                          run_dir.parent.parent)  # fmt: skip
                    current = None
                    tried.append(index)
                update_manifest(run_dir, alerts=record)
        except KeyboardInterrupt:
            if current is not None:
                why = f"interrupted by {stop.signal or 'SIGINT'} during the delivery"
                entries[current] = {**entries[current], "ok": False, "retry": True, "error": why}
            update_manifest(run_dir, alerts=record)
            raise
    return [entries[index] for index in tried]


def _target_index(entry: dict[str, Any], notify: list[NotifyTarget]) -> int | None:
    """The position in ``notify`` of a delivery's target: the target with its key
    (:meth:`NotifyTarget.key`; of two equal ones, the position it was tried at); for a record
    made before keys were kept, the target at its position if it still has its label, or
    else the only target with its label. ``None``: no longer a target."""
    label, number, key = entry.get("target"), entry.get("target_index"), entry.get("target_key")
    if key is not None:
        same = [i for i, target in enumerate(notify) if target.key() == key]
        return number if number in same else (same[0] if same else None)
    if isinstance(number, int) and 0 <= number < len(notify) and notify[number].label() == label:
        return number
    same = [i for i, target in enumerate(notify) if target.label() == label]
    return same[0] if len(same) == 1 and "target_index" not in entry else None


def _try(
    entry: dict[str, Any],
    number: int | None,
    spec: AlertsSpec,
    by_rule: dict[str, dict[str, Any]],
    failed: set[int],
    outputs: Path,
) -> dict[str, Any]:
    """One delivery of a record to the target at ``number`` in ``notify:``, tried (or why
    not)."""
    payload = by_rule.get(str(entry.get("rule")))
    if number is None or payload is None:
        why = "no longer a notify target" if number is None else "its notification is gone"
        return {**entry, "retry": False, "error": f"{entry.get('error')}; not retried: {why}"}
    if number in failed:
        return {**entry, "ok": False, "attempts": 0, "retry": True, "error": SKIPPED}
    target = spec.notify[number]
    done = deliver_one(target, payload, outputs)._replace(target_index=number,
                                                          target_key=target.key())  # fmt: skip
    rounds = int(entry.get("rounds") or 0) + 1
    if done.ok:
        return done._replace(rounds=rounds)._asdict()
    failed.add(number)
    if rounds >= MAX_ROUNDS:
        given_up = f"{done.error} (given up after {rounds} tries)"
        return done._replace(rounds=rounds, retry=False, error=given_up)._asdict()
    return done._replace(rounds=rounds)._asdict()


# ------------------------------------------------------------------------------ retries


class Redelivery(NamedTuple):
    """The undelivered notifications of one earlier run, tried again."""

    run: str
    """``study/run id``."""
    tried: int
    failed: int
    note: str = ""
    """Why none was tried (another process holds the run)."""
    failures: tuple[dict[str, Any], ...] = ()
    """The deliveries that failed again, as the manifest keeps them."""


def redeliver(study_dir: Path, spec: AlertsSpec, title: str = "") -> list[Redelivery]:
    """Deliver the undelivered notifications (``retry: true``) of every run of the study in
    ``study_dir`` to ``spec``'s targets, each run under its lock (a run another process
    holds is left to it); one :class:`Redelivery` per run that had any.

    Raises:
        KeyboardInterrupt: as :func:`deliver_pending`.
    """
    runs = sorted(path.parent for path in study_dir.glob("*/manifest.json"))
    failed: set[int] = set()  # a target that fails for one run is not tried for the next
    pending = [run_dir for run_dir in runs if undelivered_run(run_dir)]
    return [_redeliver(run_dir, spec, title, failed) for run_dir in pending]


def _redeliver(run_dir: Path, spec: AlertsSpec, title: str, failed: set[int]) -> Redelivery:
    label = f"{run_dir.parent.name}/{run_dir.name}"
    try:
        lock_run(run_dir)
    except RunInUse:
        return Redelivery(label, 0, 0, "in use by another process, which delivers them")
    try:
        record = read_manifest(run_dir)["alerts"]  # again, now that it is ours
        payloads = _payloads(record, run_dir, spec, title)
        tried = deliver_pending(run_dir, record, spec, payloads, failed)
    finally:
        release_run(run_dir)
    failures = tuple(entry for entry in tried if not entry.get("ok"))
    return Redelivery(label, len(tried), len(failures), "", failures)


def _payloads(
    record: dict[str, Any], run_dir: Path, spec: AlertsSpec, title: str
) -> list[dict[str, Any]]:
    """The notifications of a recorded check, made again from its facts (a title or
    ``report_url`` edited since shows as edited)."""
    fired = [Finding(*(f.get(name) for name in Finding._fields))  # type: ignore[arg-type]
             for f in record.get("fired") or [] if isinstance(f, dict)]  # fmt: skip
    baseline = str(record.get("baseline") or "")
    if not fired or (baseline and (baseline.count("/") != 1 or ".." in baseline)):
        return []
    baseline_dir = run_dir.parent.parent / baseline if baseline else None
    return notifications(fired, run_dir=run_dir, baseline_dir=baseline_dir,
                         how=str(record.get("baseline_is")), title=title or run_dir.parent.name,
                         report_url=spec.report_url)  # fmt: skip


def failed_deliveries(record: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The deliveries of ``record`` that failed."""
    return [d for d in (record or {}).get("deliveries") or [] if not d.get("ok")]


def alert_exit(record: dict[str, Any] | None) -> int:
    """``--fail-on-alert``: 1 when a rule fired, a notification was not delivered or a rule
    could not be checked; else 0 (also with no ``alerts:`` block)."""
    if not record:
        return 0
    return int(bool(record.get("fired") or failed_deliveries(record) or record.get("problems")))


def status_note(record: dict[str, Any] | None) -> str:
    """The alert check in one line for the run's status line ("" with no ``alerts:``)."""
    if not record:
        return ""
    parts = []
    fired, checked = record.get("fired") or [], record.get("checked") or []
    baseline, why = record.get("baseline"), record.get("baseline_is")
    if fired:
        rules = len({f["rule"] for f in fired})
        first = finding_line(Finding(**fired[0]))
        more = f" and {len(fired) - 1} more" if len(fired) > 1 else ""
        against = f" vs {baseline}" if baseline else ""
        parts.append(f"ALERT: {rules} rule(s) fired{against}: {first}{more}")
    elif baseline:
        parts.append(f"alerts: none fired vs {baseline} ({why})")
    elif checked:  # no baseline: the rules that need none
        parts.append("alerts: none fired")
    unchecked = 0 if baseline else len(record.get("rules") or []) - len(checked)
    if unchecked:
        parts.append(f"{unchecked} rule(s) not checked ({why})" if checked else
                     f"alerts: not checked ({why})")  # fmt: skip
    for failed in failed_deliveries(record):
        parts.append(f"NOTIFICATION FAILED: {failed['target']} after {failed['attempts']} "
                     f"attempt(s): {failed['error']}")  # fmt: skip
    parts += [f"alert rule problem: {p}" for p in record.get("problems") or []]
    return "; ".join(parts)
