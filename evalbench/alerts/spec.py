"""The ``alerts:`` block of a params file: rules checked at the end of every run, and where
their notifications go (pydantic only: :mod:`evalbench.params` imports it).

```yaml
alerts:
  rules:
    - metric: accuracy          # any headline metric (default: every metric)
      drop_more_than: 0.05      # absolute; only when also significant (Holm p < 0.05)
    - cost_usd_more_than: 1.25  # cost per task, × the baseline's
    - error_rate_more_than: 0.02
    - latency_p95_more_than: 1.5  # × the baseline's
  notify:
    - webhook_env: SLACK_WEBHOOK_URL   # the URL from the environment (a secret)
    - file: alerts.jsonl               # under the outputs folder
```
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

THRESHOLDS = (
    "drop_more_than",
    "cost_usd_more_than",
    "error_rate_more_than",
    "latency_p95_more_than",
)
"""A rule's kinds: exactly one of these fields is set."""


class AlertRule(BaseModel):
    """One rule; it fires per system (and, for a metric drop, per slice too)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    metric: str | None = None
    """With ``drop_more_than``: the metric (default: every metric of the run)."""
    drop_more_than: float | None = Field(default=None, ge=0.0)
    """The metric fell by more than this (its units, in its better direction) and the paired
    test says the fall is real: Holm-adjusted p below ``alpha``."""
    cost_usd_more_than: float | None = Field(default=None, gt=0.0)
    """Cost per task rose above this many times the baseline's."""
    error_rate_more_than: float | None = Field(default=None, ge=0.0, le=1.0)
    """More than this share of the system's calls failed (the baseline's share shown beside)."""
    latency_p95_more_than: float | None = Field(default=None, gt=0.0)
    """The 95th percentile of call latency rose above this many times the baseline's."""
    systems: list[str] = Field(default_factory=list)
    """Only these systems (default: every system)."""
    alpha: float = Field(default=0.05, gt=0.0, lt=0.5)
    """Level of the drop rule's Holm-adjusted test."""

    @model_validator(mode="after")
    def _one_threshold(self) -> AlertRule:
        given = [name for name in THRESHOLDS if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError(f"a rule sets exactly one of {', '.join(THRESHOLDS)} (got {given})")
        if self.metric is not None and given[0] != "drop_more_than":
            raise ValueError("metric: applies to drop_more_than only")
        return self

    @property
    def kind(self) -> str:
        """The threshold field this rule sets."""
        return next(name for name in THRESHOLDS if getattr(self, name) is not None)

    @property
    def threshold(self) -> float:
        """The value of that field."""
        return float(getattr(self, self.kind))

    def describe(self) -> str:
        """The rule in one line, as a params file would say it."""
        metric = f"{self.metric} " if self.metric else ""
        who = f" ({', '.join(self.systems)})" if self.systems else ""
        return f"{metric}{self.kind} {self.threshold:g}{who}"


class NotifyTarget(BaseModel):
    """Where notifications go: one of ``webhook``, ``webhook_env``, ``file``."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    webhook: str | None = Field(default=None, pattern=r"^https?://\S+$")
    """A URL that takes a Slack-compatible JSON POST (``{"text": ...}`` and more fields)."""
    webhook_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    """The name of the environment variable that holds the webhook URL (a secret: it stays
    out of params files, manifests and logs)."""
    file: str | None = Field(default=None, min_length=1)
    """A JSONL file, one notification a line; a relative path is under the outputs folder."""
    attempts: int = Field(default=3, ge=1, le=10)
    """Tries of a webhook before its failure is reported (a file is written once)."""
    backoff_s: float = Field(default=1.0, ge=0.0, le=60.0)
    """Wait before the second try; doubled before each next one."""
    timeout_s: float = Field(default=10.0, gt=0.0, le=120.0)
    """How long one webhook request may take."""

    @model_validator(mode="after")
    def _one_target(self) -> NotifyTarget:
        given = [n for n in ("webhook", "webhook_env", "file") if getattr(self, n) is not None]
        if len(given) != 1:
            raise ValueError(f"a notify entry sets exactly one of webhook, webhook_env, file "
                             f"(got {given})")  # fmt: skip
        return self

    def label(self) -> str:
        """What the target is, without a secret: a literal webhook shows its host only."""
        if self.webhook is not None:
            host = self.webhook.split("://", 1)[1].split("/", 1)[0].rsplit("@", 1)[-1]
            return f"webhook {self.webhook.split('://', 1)[0]}://{host}/…"
        if self.webhook_env is not None:
            return f"webhook_env {self.webhook_env}"
        return f"file {self.file}"


class AlertsSpec(BaseModel):
    """The ``alerts:`` block."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    rules: list[AlertRule] = Field(min_length=1)
    notify: list[NotifyTarget] = Field(default_factory=list)
    """Where each triggered rule's notification goes (none: only the status line and the
    run's manifest say it)."""
    report_url: str | None = Field(default=None, pattern=r"^https?://\S+$")
    """Where ``outputs/`` is published (e.g. a CI artifact URL): links in notifications are
    made from it; without it they are ``file://`` links."""

    def public(self) -> dict[str, Any]:
        """The block as the run's manifest keeps it (webhook URLs left out)."""
        return {
            "rules": [rule.describe() for rule in self.rules],
            "notify": [target.label() for target in self.notify],
        }
