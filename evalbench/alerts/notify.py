"""Notifications of triggered alert rules, and their delivery.

One notification per triggered rule: a Slack-compatible JSON object (``text``, in Slack's
markup, for a chat channel) with the same facts structured under ``evalbench`` (the study,
both runs, links to both reports, and per place the rule fired: system, metric, slice,
baseline → now, the change with its interval, the Holm-adjusted p).

Delivery: a webhook is POSTed up to ``attempts`` times, waiting ``backoff_s``, then twice as
long before each next try (a 4xx answer other than 429 is final at once); a file gets one
JSON line per notification. Every delivery's outcome is returned: a failure is reported by
the caller (status line, manifest), never dropped. A webhook URL is never written anywhere.
"""

from __future__ import annotations

import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from evalbench.records import to_json

from .rules import Finding
from .spec import NotifyTarget


class Delivery(NamedTuple):
    """How one notification went to one target."""

    target: str
    """:meth:`NotifyTarget.label` (no secret)."""
    rule: str
    ok: bool
    attempts: int
    error: str | None = None


# ------------------------------------------------------------------------------ payloads


def _link(path: Path, outputs: Path, report_url: str | None) -> str:
    if report_url:
        return (
            report_url.rstrip("/") + "/" + path.resolve().relative_to(outputs.resolve()).as_posix()
        )
    return path.resolve().as_uri()


def _number(value: float | None) -> str:
    return "—" if value is None or value != value else f"{value:.3f}"


def finding_line(finding: Finding) -> str:
    """One place a rule fired, in one line (status lines, Slack text)."""
    where = f"{finding.system} {finding.metric} {finding.slice}"
    if finding.p_holm is None:
        ratio = "" if "share" in finding.metric else f" (×{finding.change:.2f})"
        return f"{where}: {_number(finding.baseline)} → {_number(finding.now)}{ratio}"
    return (
        f"{where}: {finding.baseline:.3f} → {finding.now:.3f} ({finding.change:+.3f}, interval "
        f"{finding.low:+.3f} to {finding.high:+.3f}; Holm-adjusted p {finding.p_holm:.3g}; "
        f"n={finding.n})"
    )


def notifications(
    findings: Sequence[Finding],
    *,
    run_dir: Path,
    baseline_dir: Path,
    how: str,
    title: str,
    report_url: str | None = None,
) -> list[dict[str, Any]]:
    """One payload per triggered rule, in the order the rules fired."""
    outputs = run_dir.parent.parent
    links = {  # the summary is written right after the check, so it can list the alerts
        "report": _link(run_dir / "report.html", outputs, report_url),
        "summary": _link(run_dir / "summary.html", outputs, report_url),
        "baseline_report": _link(baseline_dir / "report.html", outputs, report_url),
    }
    run = f"{run_dir.parent.name}/{run_dir.name}"
    baseline = f"{baseline_dir.parent.name}/{baseline_dir.name}"
    payloads = []
    for rule in dict.fromkeys(f.rule for f in findings):
        mine = [f for f in findings if f.rule == rule]
        facts = {"study": run_dir.parent.name, "title": title, "run": run, "baseline": baseline,
                 "baseline_is": how, "rule": rule, **links,
                 "findings": [f._asdict() for f in mine]}  # fmt: skip
        payloads.append({"text": _slack_text(facts, mine), "evalbench": facts})
    return payloads


def _slack_text(facts: dict[str, Any], findings: list[Finding]) -> str:
    def link(url: str | None, text: str) -> str:
        return f"<{url}|{text}>" if url else text

    lines = [f"*evalbench alert* — {facts['title']}: `{facts['rule']}` fired"]
    lines += [f"• {finding_line(f)}" for f in findings]
    lines.append(
        f"{link(facts['report'], 'this run')} ({facts['run']}) vs "
        f"{link(facts['baseline_report'], facts['baseline_is'])} ({facts['baseline']})"
    )
    return "\n".join(lines)


# ------------------------------------------------------------------------------ delivery


def deliver(
    targets: Sequence[NotifyTarget],
    payloads: Sequence[dict[str, Any]],
    outputs: Path,
    *,
    sleep: Callable[[float], None] = time.sleep,
) -> list[Delivery]:
    """Send every payload to every target; one :class:`Delivery` each."""
    return [
        _deliver_one(target, payload, outputs, sleep) for target in targets for payload in payloads
    ]


def _deliver_one(
    target: NotifyTarget, payload: dict[str, Any], outputs: Path, sleep: Callable[[float], None]
) -> Delivery:
    rule = str(payload["evalbench"]["rule"])
    if target.file is not None:
        return _append(target, payload, outputs, rule)
    url = target.webhook
    if target.webhook_env is not None:
        url = os.environ.get(target.webhook_env, "").strip()
        if not url:
            why = f"the environment variable {target.webhook_env} is not set"
            return Delivery(target.label(), rule, False, 0, why)
    if not str(url).startswith(("http://", "https://")):
        return Delivery(target.label(), rule, False, 0, "not an http(s) URL")
    return _post(target, str(url), to_json(payload).encode(), rule, sleep)


def _append(target: NotifyTarget, payload: dict[str, Any], outputs: Path, rule: str) -> Delivery:
    path = Path(str(target.file)).expanduser()
    path = path if path.is_absolute() else outputs / path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(to_json(payload) + "\n")  # one write per line: appends stay whole
    except OSError as exc:
        return Delivery(target.label(), rule, False, 1, f"{path}: {exc.strerror or exc}")
    return Delivery(target.label(), rule, True, 1)


def _post(
    target: NotifyTarget, url: str, body: bytes, rule: str, sleep: Callable[[float], None]
) -> Delivery:
    error = ""
    for attempt in range(1, target.attempts + 1):
        if attempt > 1:
            sleep(target.backoff_s * 2 ** (attempt - 2))
        request = urllib.request.Request(
            url, data=body, method="POST", headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=target.timeout_s) as response:
                response.read()
            return Delivery(target.label(), rule, True, attempt)
        except urllib.error.HTTPError as exc:
            error = f"HTTP {exc.code}"
            if 400 <= exc.code < 500 and exc.code != 429:
                return Delivery(target.label(), rule, False, attempt, error + " (not retried)")
        except (urllib.error.URLError, OSError) as exc:  # refused, reset, timed out
            error = str(getattr(exc, "reason", exc))
    return Delivery(target.label(), rule, False, target.attempts, error)
