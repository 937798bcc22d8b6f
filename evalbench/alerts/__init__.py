"""Alert rules checked at the end of every run, and their notifications.

The ``alerts:`` block of a params file (:class:`AlertsSpec`) lists rules — a metric's
significant drop, cost per task, the share of failed calls, call latency — checked against
the study's pinned baseline, or its previous ok run of the same configuration when none is
pinned. Each triggered rule sends one notification to every ``notify:`` target (a
Slack-compatible webhook, a JSONL file); the outcome, deliveries included, is kept in the
run's manifest and said on its status line.

- :mod:`.spec` — the params block (pydantic only; imported by :mod:`evalbench.params`);
- :mod:`.rules` — what a run's numbers are next to its baseline's, and which rules fire;
- :mod:`.notify` — the notifications and their delivery (bounded retries with backoff);
- :mod:`.check` — the whole check of a finished run (``run_study`` calls it);
- :mod:`.cli` — ``evalbench watch`` for a cron or CI job, and the retries of undelivered
  notifications before a run or watch;
- :mod:`.shown` — how many alert lines a log or a page lists.

This module imports only :mod:`.spec`, so reading params stays light.
"""

from __future__ import annotations

from .spec import THRESHOLDS, AlertRule, AlertsSpec, NotifyTarget

__all__ = ["THRESHOLDS", "AlertRule", "AlertsSpec", "NotifyTarget"]
