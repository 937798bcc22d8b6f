"""The alert check of a finished run: choose the baseline, check the rules, notify, record.

``run_study`` calls :func:`check_run` once a run is published (``ok`` or ``degraded``) and
its params have an ``alerts:`` block. The outcome is the ``alerts`` field of the run's
manifest (:func:`check_run`'s return value); :func:`status_note` says it in one line for the
run's status line, and :func:`alert_exit` is ``--fail-on-alert``'s verdict.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evalbench.history.runs import check_baseline
from evalbench.importers import OutcomeError
from evalbench.runs import now_iso, update_manifest

from .notify import deliver, finding_line, notifications
from .rules import Finding, evaluate, read_numbers
from .spec import AlertsSpec


def check_run(run_dir: Path, spec: AlertsSpec, title: str = "") -> dict[str, Any]:
    """Check ``spec``'s rules for the run in ``run_dir``, send the notifications and write
    the outcome into the run's manifest (``alerts``), which is returned.

    The record: ``checked_at``, ``rules``, ``notify`` (targets, no secret), ``baseline``
    (``study/run id`` or ``None``), ``baseline_is`` (how it was chosen, or why there is none),
    ``fired`` (one entry per place a rule fired), ``notifications`` (how many were made),
    ``deliveries`` (each one's outcome), ``problems`` (rules that could not be checked) and
    ``notes``.
    """
    record: dict[str, Any] = {"checked_at": now_iso(), **spec.public(), "baseline": None,
                              "fired": [], "notifications": 0, "deliveries": [],
                              "problems": [], "notes": []}  # fmt: skip
    try:
        baseline, how = check_baseline(run_dir)
    except OutcomeError as exc:
        baseline, how = None, f"the pinned baseline cannot be read: {exc}"
        record["problems"].append(how)
    record["baseline_is"] = how
    if baseline is not None:
        record["baseline"] = f"{baseline.parent.name}/{baseline.name}"
        _check(record, spec, run_dir, baseline, title)
    update_manifest(run_dir, alerts=record)
    return record


def _check(
    record: dict[str, Any], spec: AlertsSpec, run_dir: Path, baseline: Path, title: str
) -> None:
    found = evaluate(spec.rules, read_numbers(baseline), read_numbers(run_dir))
    record["problems"] += found.problems
    record["notes"] += found.notes
    record["fired"] = [f._asdict() for f in found.findings]
    payloads = notifications(found.findings, run_dir=run_dir, baseline_dir=baseline,
                             how=str(record["baseline_is"]), title=title or run_dir.parent.name,
                             report_url=spec.report_url)  # fmt: skip
    record["notifications"] = len(payloads)
    deliveries = deliver(spec.notify, payloads, run_dir.parent.parent)
    record["deliveries"] = [d._asdict() for d in deliveries]


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
    fired = record.get("fired") or []
    if fired:
        rules = len({f["rule"] for f in fired})
        first = finding_line(Finding(**fired[0]))
        more = f" and {len(fired) - 1} more" if len(fired) > 1 else ""
        parts.append(f"ALERT: {rules} rule(s) fired vs {record['baseline']}: {first}{more}")
    elif record.get("baseline"):
        parts.append(f"alerts: none fired vs {record['baseline']} ({record['baseline_is']})")
    else:
        parts.append(f"alerts: not checked ({record.get('baseline_is')})")
    for failed in failed_deliveries(record):
        parts.append(f"NOTIFICATION FAILED: {failed['target']} after {failed['attempts']} "
                     f"attempt(s): {failed['error']}")  # fmt: skip
    parts += [f"alert rule problem: {p}" for p in record.get("problems") or []]
    return "; ".join(parts)
