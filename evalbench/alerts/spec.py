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

Everything that could make a rule or a target useless, unsafe or endless is refused here, in
one line that never shows a URL (it may hold a secret): a threshold its metric can never
pass (:data:`METRICS`), a ``file:`` outside the outputs folder, a webhook URL urllib cannot
send to, a ``report_url`` with a user, query or fragment, a webhook whose retries could take
more than :data:`MAX_TARGET_S`; and, before the params are read, a literal webhook URL given
as a ``-p`` override (:func:`override_problem`: overrides are kept with the run).
"""

from __future__ import annotations

import hashlib
import math
import re
import urllib.parse
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from evalbench.settings import EnvName

THRESHOLDS = (
    "drop_more_than",
    "cost_usd_more_than",
    "error_rate_more_than",
    "latency_p95_more_than",
)
"""A rule's kinds: exactly one of these fields is set."""
MAX_TARGETS = 20
"""Notification targets one ``alerts:`` block may list (each delivery rewrites the manifest:
1,000 targets took 46 s after the run was done)."""
MAX_TARGET_S = 300.0
"""The longest one webhook target may take for one notification: every attempt's
``timeout_s`` (a total deadline per request) plus the doubling backoffs between them."""


class MetricRange(NamedTuple):
    """The values one metric of a study kind can take."""

    pattern: str
    """Regular expression its names match in full (some names carry a params value)."""
    name: str
    """How to say it in a message."""
    low: float
    high: float
    """``math.inf`` when unbounded."""


_SHARE = (0.0, 1.0)
METRICS: dict[str, tuple[MetricRange, ...]] = {
    "gaia": (MetricRange("accuracy", "accuracy", *_SHARE),),
    "bfcl": (MetricRange("accuracy", "accuracy", *_SHARE),),
    "hle": (MetricRange("accuracy", "accuracy", *_SHARE),),
    "arena": (MetricRange("win share", "win share", *_SHARE),),
    "arena_public": (MetricRange("win share", "win share", *_SHARE),),
    "judge_golden": (
        MetricRange(r"within ±\S+ \(.+\)", "within ±k (dimension)", *_SHARE),
        MetricRange(r"abs error \(.+\)", "abs error (dimension)", 0.0, math.inf),
    ),
    "datagen": (MetricRange(r"judge quality \(1-5\)", "judge quality (1-5)", 1.0, 5.0),),
}
"""Study kind -> the metrics its per-item outcomes have (the readers of
:data:`evalbench.importers.READERS`, which a test holds to this table) and their ranges."""
WITHOUT_OUTCOMES = frozenset(
    {"judge_public", "hle_grading", "compare", "browsecomp", "browse_suite", "retry_loop"}
)
"""Study kinds with no per-item outcomes: a drop rule could never be checked. (A sweep's own
rules are checked on its cells' study kind.)"""


DEFAULT_ALPHA = 0.05
"""A drop rule's test level when it sets none (the regression gate's)."""


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
    alpha: float = Field(default=DEFAULT_ALPHA, gt=0.0, lt=0.5)
    """Level of the drop rule's Holm-adjusted test."""

    @model_validator(mode="after")
    def _one_threshold(self) -> AlertRule:
        given = [name for name in THRESHOLDS if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError(f"a rule sets exactly one of {', '.join(THRESHOLDS)} (got {given})")
        if self.metric is not None and given[0] != "drop_more_than":
            raise ValueError("metric: applies to drop_more_than only")
        if (self.error_rate_more_than or 0.0) >= 1.0:
            raise ValueError(f"error_rate_more_than {self.error_rate_more_than:g} can never "
                             "fire: a share of calls is at most 1")  # fmt: skip
        return self

    def range_problem(self, study: str) -> str | None:
        """Why this rule can never fire on a run of the study kind ``study``, if it cannot
        (a drop rule: no such metric, a threshold beyond the metric's range, no outcomes)."""
        if self.kind != "drop_more_than":
            return None
        if study in WITHOUT_OUTCOMES:
            kinds = ", ".join(sorted(METRICS))
            return (f"{study} runs have no per-item outcomes, so a drop cannot be checked "
                    f"(kinds with them: {kinds}); use the cost, error or latency "
                    "rules")  # fmt: skip
        ranges = METRICS.get(study)
        if ranges is None:  # a sweep, or a kind this table does not know: checked at run end
            return None
        if self.metric is not None:
            ranges = tuple(r for r in ranges if re.fullmatch(r.pattern, self.metric))
            if not ranges:
                names = ", ".join(r.name for r in METRICS[study])
                return f"no metric {self.metric!r} in {study} runs (they have: {names})"
        span = max(r.high - r.low for r in ranges)
        if self.threshold < span:
            return None
        said = " and ".join(f"{r.name} lies in [{r.low:g}, {r.high:g}]" for r in ranges)
        return f"can never fire: {said}, so it cannot fall by more than {span:g}"

    @property
    def kind(self) -> str:
        """The threshold field this rule sets."""
        return next(name for name in THRESHOLDS if getattr(self, name) is not None)

    @property
    def needs_baseline(self) -> bool:
        """Whether the rule compares with a baseline run (all but the share of failed calls,
        which is checked on every run, the first one too)."""
        return self.kind != "error_rate_more_than"

    @property
    def threshold(self) -> float:
        """The value of that field."""
        return float(getattr(self, self.kind))

    def describe(self) -> str:
        """The rule in one line, as a params file would say it."""
        metric = f"{self.metric} " if self.metric else ""
        who = f" ({', '.join(self.systems)})" if self.systems else ""
        alpha = f" alpha {self.alpha:g}" if self.alpha != DEFAULT_ALPHA else ""
        return f"{metric}{self.kind} {self.threshold:g}{alpha}{who}"


class NotifyTarget(BaseModel):
    """Where notifications go: one of ``webhook``, ``webhook_env``, ``file``."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    webhook: str | None = None
    """A URL that takes a Slack-compatible JSON POST (``{"text": ...}`` and more fields)."""
    webhook_env: EnvName | None = None
    """The name of the environment variable that holds the webhook URL (a secret: it stays
    out of params files, manifests and logs)."""
    file: str | None = Field(default=None, min_length=1, max_length=255)
    """A JSONL file under the outputs folder, one notification a line (:func:`file_problem`)."""
    attempts: int = Field(default=3, ge=1, le=10)
    """Tries of a webhook before its failure is reported (a file is written once)."""
    backoff_s: float = Field(default=1.0, ge=0.0, le=60.0)
    """Wait before the second try; doubled before each next one."""
    timeout_s: float = Field(default=10.0, gt=0.0, le=120.0)
    """How long one webhook request may take in total (connecting, sending, the answer)."""

    @field_validator("webhook")
    @classmethod
    def _usable_url(cls, url: str | None) -> str | None:
        why = None if url is None else webhook_problem(url)
        if why:
            raise ValueError(f"not a webhook URL: {why}")
        return url

    @field_validator("file")
    @classmethod
    def _under_outputs(cls, name: str | None) -> str | None:
        from evalbench.settings import get_settings  # light; nothing runs at import

        why = None if name is None else file_problem(name, get_settings().outputs_dir)
        if why:
            raise ValueError(f"not a file under the outputs folder: {why}")
        return name

    @model_validator(mode="after")
    def _one_target(self) -> NotifyTarget:
        given = [n for n in ("webhook", "webhook_env", "file") if getattr(self, n) is not None]
        if len(given) != 1:
            raise ValueError(f"a notify entry sets exactly one of webhook, webhook_env, file "
                             f"(got {given})")  # fmt: skip
        if self.file is None and self.worst_case_s > MAX_TARGET_S:
            raise ValueError(
                f"attempts × timeout_s plus the doubling backoffs could take "
                f"{self.worst_case_s:,.0f} s; at most {MAX_TARGET_S:g} s per target (lower "
                "attempts, timeout_s or backoff_s)"
            )
        return self

    @property
    def worst_case_s(self) -> float:
        """The longest a webhook delivery can take: every attempt's ``timeout_s`` and the
        backoffs between them (``backoff_s``, doubled each time)."""
        return self.attempts * self.timeout_s + self.backoff_s * (2 ** (self.attempts - 1) - 1)

    def label(self) -> str:
        """What the target is, without a secret: a literal webhook shows its scheme, host and
        port only (not its path, query or fragment). Not its identity: every Slack webhook
        has the label ``webhook https://hooks.slack.com/…`` (:meth:`key` is). A host that
        is not a plain name or address (``hooks.slack.com;SECRET``) is not shown either."""
        if self.webhook is not None:
            parts = urllib.parse.urlsplit(self.webhook)
            host = parts.netloc.rpartition("@")[2]
            shown = host if _PLAIN_HOST.fullmatch(host) else "(host not shown)"
            return f"webhook {parts.scheme}://{shown}/…"
        if self.webhook_env is not None:
            return f"webhook_env {self.webhook_env}"
        return f"file {self.file}"

    def key(self) -> str:
        """The target's identity in a run's record of its deliveries, without a secret: 16
        hex digits of the sha256 of what it is (a webhook's whole URL, a variable's name, a
        file's path). A pending delivery finds its target by it wherever ``notify:`` has
        moved it; two webhooks on one host (one label) have two keys."""
        what = [("webhook", self.webhook), ("webhook_env", self.webhook_env), ("file", self.file)]
        kind, value = next((k, v) for k, v in what if v is not None)
        return hashlib.sha256(f"{kind}\0{value}".encode()).hexdigest()[:16]


_PLAIN_HOST = re.compile(r"(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?")
"""A host (name, IPv4 or [IPv6] address) and port, nothing else: what a label may show."""


class AlertsSpec(BaseModel):
    """The ``alerts:`` block."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    rules: list[AlertRule] = Field(min_length=1)
    notify: list[NotifyTarget] = Field(default_factory=list)
    """Where each triggered rule's notification goes (none: only the status line and the
    run's manifest say it)."""
    report_url: str | None = None
    """Where ``outputs/`` is published (e.g. a CI artifact URL): links in notifications are
    made from it (a run's path appended); without it they are ``file://`` links. It is sent
    with every notification, so it may hold no user, password, query or fragment."""

    @field_validator("rules")
    @classmethod
    def _each_rule_once(cls, rules: list[AlertRule]) -> list[AlertRule]:
        """Rules are told apart by their description (their notifications, their records)."""
        first: dict[str, int] = {}
        for number, rule in enumerate(rules):
            said = rule.describe()
            if said in first:
                raise ValueError(f"rule {number} repeats rule {first[said]} ({said})")
            first[said] = number
        return rules

    @field_validator("notify")
    @classmethod
    def _few_targets(cls, targets: list[NotifyTarget]) -> list[NotifyTarget]:
        if len(targets) > MAX_TARGETS:
            raise ValueError(f"at most {MAX_TARGETS} targets (got {len(targets):,d}); send to "
                             "one webhook or file that fans out")  # fmt: skip
        return targets

    @field_validator("report_url")
    @classmethod
    def _public_url(cls, url: str | None) -> str | None:
        why = None if url is None else webhook_problem(url)
        if url is not None and not why:
            parts = urllib.parse.urlsplit(url)
            if "@" in parts.netloc:
                why = "it has a user or password (it would be sent with every notification)"
            elif parts.query or parts.fragment or "?" in url or "#" in url:
                why = "it has a query or fragment (a run's path is appended to it)"
        if why:
            raise ValueError(f"not a base URL for links: {why}")
        return url

    def problem_for(self, study: str) -> str | None:
        """The first rule that can never fire on a run of the study kind ``study``, in one
        line (:meth:`AlertRule.range_problem`), or ``None``."""
        for number, rule in enumerate(self.rules):
            why = rule.range_problem(study)
            if why:
                return f"rules.{number} ({rule.describe()}): {why}"
        return None

    def public(self) -> dict[str, Any]:
        """The block as the run's manifest keeps it (webhook URLs left out)."""
        return {
            "rules": [rule.describe() for rule in self.rules],
            "notify": [target.label() for target in self.notify],
        }


# ------------------------------------------------------------------------------ checks


def webhook_problem(url: str) -> str | None:
    """Why urllib could not POST to ``url`` (``None`` when it can), never quoting the URL: a
    space or control character (CR/LF would split the request), a non-ASCII character, not
    http(s), unparseable (``http://[::1/x``), no host, a user or password before the host
    (urllib would resolve ``user:pass@host`` as a host name), a port that is not a number."""
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in url):
        return "it has a space or a control character"
    if not url.isascii():
        return "it has a character that is not ASCII (percent-encode it)"
    if not url.lower().startswith(("http://", "https://")):
        return "it is not an http:// or https:// URL"
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError as exc:
        return ("its port is not a number from 1 to 65535" if "port" in str(exc).lower()
                else "it cannot be parsed")  # fmt: skip
    if not parts.hostname:
        return "it names no host"
    if "@" in parts.netloc:  # urllib sends no credentials from a URL: it would look them up
        return "it has a user or password before the host (put the token in the path)"
    if port == 0:
        return "its port is not a number from 1 to 65535"
    return None


def override_problem(key: str, value: Any) -> str | None:
    """Why the ``-p`` override of ``key`` (dotted) to ``value`` (as parsed from YAML) is
    refused (``None`` when it is not), never quoting the value: a literal webhook URL in the
    ``alerts:`` block would be kept, as every override is, in the run's manifest, its notebook
    and every page that lists its overrides."""
    parts = key.strip().split(".")
    url = parts[1:] != ["report_url"] and _holds_url(value)  # webhook_env=https://…, a typo
    if parts[0] != "alerts" or not (parts[-1] == "webhook" or _holds_webhook(value) or url):
        return None
    return (f"override {key.strip()[:80]}=…: a webhook URL is a secret and overrides are kept "
            "in the run's manifest and reports; put the URL in an environment variable and "
            "name it with webhook_env (-p alerts.notify.N.webhook_env=VARIABLE)")  # fmt: skip


def _holds_url(value: Any) -> bool:
    """Whether ``value`` has a string with ``://`` at any depth (a URL where the ``alerts:``
    block takes none: the message that refuses the value would quote it)."""
    if isinstance(value, str):
        return "://" in value
    if isinstance(value, dict):
        return any(_holds_url(v) for v in value.values())
    return isinstance(value, list) and any(_holds_url(v) for v in value)


def _holds_webhook(value: Any) -> bool:
    """Whether ``value`` has a ``webhook`` key at any depth."""
    if isinstance(value, dict):
        return "webhook" in value or any(_holds_webhook(v) for v in value.values())
    return isinstance(value, list) and any(_holds_webhook(v) for v in value)


FILE_NAME = re.compile(r"(?:[A-Za-z0-9][A-Za-z0-9._-]*/)*[A-Za-z0-9][A-Za-z0-9._-]*\.jsonl")
"""A ``file:`` target: a relative path of plain names (no ``..``, ``~``, hidden or absolute
parts) ending in ``.jsonl``."""


def file_problem(name: str, outputs: Path) -> str | None:
    """Why the ``file:`` target ``name`` is not a JSONL file of its own under ``outputs``
    (``None`` when it is): its form (:data:`FILE_NAME`), where it leads once symbolic links
    are resolved, and whether it is inside a run folder (whose records are evalbench's)."""
    if not FILE_NAME.fullmatch(name):
        return ("write a relative path of letters, digits, '.', '_', '-' and '/' ending in "
                ".jsonl (no '..', '~', hidden or absolute part)")  # fmt: skip
    root = outputs.resolve()
    path = (root / name).resolve()
    if not path.is_relative_to(root):
        return "it leads outside the outputs folder (through a symbolic link)"
    for folder in path.parents:
        if folder == root:
            break
        if (folder / "manifest.json").exists():
            return f"it is inside the run folder {folder.relative_to(root)} (evalbench's own)"
    return None
