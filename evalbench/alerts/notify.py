"""Notifications of triggered alert rules, and their delivery.

One notification per triggered rule: a Slack-compatible JSON object (``text``, in Slack's
markup, for a chat channel) with the same facts structured under ``evalbench`` (the study,
both runs, links to both reports, and per place the rule fired: system, metric, slice,
baseline → now, the change with its interval, the Holm-adjusted p).

Slack reads ``<...>`` as a link or a mention (``<!channel>``) and ``&`` as an entity, so every
piece of the text that comes from a params file or a run (title, rule, system, metric, slice,
run ids) is escaped as Slack's formatting reference says (``&`` → ``&amp;``, ``<`` → ``&lt;``,
``>`` → ``&gt;``: https://api.slack.com/reference/surfaces/formatting#escaping); evalbench's
own ``<url|text>`` links have their URL percent-encoded and their text escaped.

Delivery: a webhook is POSTed up to ``attempts`` times, waiting ``backoff_s``, then twice as
long before each next try. Each request has a total deadline of ``timeout_s`` (connecting,
sending and the whole answer; a server that trickles its answer is cut at it). A redirect is
a failed delivery, never followed; so is a 4xx answer other than 429, at once. A URL urllib
cannot send to is a failed delivery too, said without the URL. A file gets one JSON line per
notification, only under the outputs folder. Every delivery's outcome is returned: a
failure is reported by the caller (status line, manifest) and retried by the next run,
never dropped. A webhook URL is never written anywhere.
"""

from __future__ import annotations

import contextlib
import errno
import http.client
import os
import signal
import socket
import stat
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from evalbench.records import to_json
from evalbench.runs import FAILED_NOTEBOOK

from .rules import Finding
from .spec import NotifyTarget, file_problem, webhook_problem

MAX_TEXT_FINDINGS = 20
"""Places a rule fired listed in a notification's Slack text (the facts list every one)."""


class Delivery(NamedTuple):
    """How one notification went to one target."""

    target: str
    """:meth:`NotifyTarget.label` (no secret)."""
    rule: str
    ok: bool
    attempts: int
    error: str | None = None
    retry: bool = False
    """Not delivered, and the next ``evalbench run``/``watch`` of the study tries again."""
    rounds: int = 1
    """How many checks (the run's own, then retries) have tried it."""
    target_index: int | None = None
    """The target's position in ``notify:`` when it was tried."""
    target_key: str | None = None
    """The target's identity (:meth:`NotifyTarget.key`: two webhooks on one host share a
    label, and ``notify:`` may be reordered before a retry)."""


# ------------------------------------------------------------------------------ payloads


def _safe_url(url: str) -> str:
    """``url`` with every character a URL may not hold as is percent-encoded (``|``, ``<``,
    ``>``, spaces, non-ASCII); existing ``%XX`` escapes are kept."""
    return urllib.parse.quote(url, safe=":/?#[]@!$&'()*+,;=%~")


def _link(path: Path, outputs: Path, report_url: str | None) -> str:
    if report_url:
        relative = path.resolve().relative_to(outputs.resolve()).as_posix()
        return _safe_url(report_url.rstrip("/") + "/" + relative)
    return path.resolve().as_uri()


def _number(value: float | None, form: str = ".3f") -> str:
    """``value`` in ``form``; "—" when missing or NaN, 4 significant digits from a million."""
    if value is None or value != value:
        return "—"
    if abs(value) >= 1e6:
        form = "+.4g" if form.startswith("+") else ".4g"
    return format(value, form)


def finding_line(finding: Finding) -> str:
    """One place a rule fired, in one line (status lines, Slack text); a missing or
    non-finite number is "—"."""
    where = f"{finding.system} {finding.metric} {finding.slice}"
    if finding.p_holm is None:
        ratio = "" if "share" in finding.metric else f" (×{_number(finding.change, '.2f')})"
        return f"{where}: {_number(finding.baseline)} → {_number(finding.now)}{ratio}"
    return (
        f"{where}: {_number(finding.baseline)} → {_number(finding.now)} "
        f"({_number(finding.change, '+.3f')}, interval {_number(finding.low, '+.3f')} to "
        f"{_number(finding.high, '+.3f')}; Holm-adjusted p {_number(finding.p_holm, '.3g')}; "
        f"n={finding.n})"
    )


def notifications(
    findings: Sequence[Finding],
    *,
    run_dir: Path,
    baseline_dir: Path | None,
    how: str,
    title: str,
    report_url: str | None = None,
    failed: bool = False,
) -> list[dict[str, Any]]:
    """One payload per triggered rule, in the order the rules fired (``baseline_dir``
    ``None``: the rules that need no baseline, checked without one). A ``failed`` run has no
    report or summary of its own: "this run" is its executed notebook."""
    outputs = run_dir.parent.parent
    # the summary is written right after the check, so it can list the alerts
    links: dict[str, str | None] = {
        "report": _link(
            run_dir / (FAILED_NOTEBOOK if failed else "report.html"), outputs, report_url
        ),
        "summary": None if failed else _link(run_dir / "summary.html", outputs, report_url),
        "baseline_report": None,
    }
    run = f"{run_dir.parent.name}/{run_dir.name}"
    baseline: str | None = None
    if baseline_dir is not None:
        links["baseline_report"] = _link(baseline_dir / "report.html", outputs, report_url)
        baseline = f"{baseline_dir.parent.name}/{baseline_dir.name}"
    payloads = []
    for rule in dict.fromkeys(f.rule for f in findings):
        mine = [f for f in findings if f.rule == rule]
        facts = {"study": run_dir.parent.name, "title": title, "run": run, "baseline": baseline,
                 "baseline_is": how, "rule": rule, **links,
                 "findings": [f._asdict() for f in mine]}  # fmt: skip
        payloads.append({"text": _slack_text(facts, mine), "evalbench": facts})
    return payloads


def slack_escape(text: str) -> str:
    """``text`` as Slack shows it literally: ``&``, ``<``, ``>`` as entities."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def slack_link(url: str, text: str) -> str:
    """A Slack link ``<url|text>``: the URL percent-encoded then escaped, the text escaped."""
    return f"<{slack_escape(_safe_url(url))}|{slack_escape(text)}>"


def _slack_text(facts: dict[str, Any], findings: list[Finding]) -> str:
    e = slack_escape
    lines = [f"*evalbench alert* — {e(facts['title'])}: `{e(facts['rule'])}` fired"]
    lines += [f"• {e(finding_line(f))}" for f in findings[:MAX_TEXT_FINDINGS]]
    if len(findings) > MAX_TEXT_FINDINGS:
        lines.append(f"• … and {len(findings) - MAX_TEXT_FINDINGS} more (all in the facts)")
    this = f"{slack_link(facts['report'], 'this run')} ({e(facts['run'])})"
    if facts["baseline"] is None:
        lines.append(f"{this}; {e(facts['baseline_is'])}")
    else:
        baseline = slack_link(facts["baseline_report"], facts["baseline_is"])
        lines.append(f"{this} vs {baseline} ({e(facts['baseline'])})")
    return "\n".join(lines)


# ------------------------------------------------------------------------------ delivery


def deliver_one(
    target: NotifyTarget,
    payload: dict[str, Any],
    outputs: Path,
    *,
    sleep: Callable[[float], None] = time.sleep,
) -> Delivery:
    """Send ``payload`` to ``target`` (never raises but for Ctrl-C)."""
    rule = str(payload["evalbench"]["rule"])
    if target.file is not None:
        return _append(target, payload, outputs, rule)
    url, name = str(target.webhook), "the webhook URL"
    if target.webhook_env is not None:
        url = os.environ.get(target.webhook_env, "").strip()
        name = f"the URL in {target.webhook_env}"
        if not url:
            why = f"the environment variable {target.webhook_env} is not set"
            return Delivery(target.label(), rule, False, 0, why, retry=True)
    problem = webhook_problem(url)
    if problem:
        why = f"{name} is not a webhook URL: {problem}"
        return Delivery(target.label(), rule, False, 0, why,
                        retry=True)  # fmt: skip
    return _post(target, url, to_json(payload).encode(), rule, sleep)


def _append(target: NotifyTarget, payload: dict[str, Any], outputs: Path, rule: str) -> Delivery:
    name = str(target.file)
    why = file_problem(name, outputs)  # again: a symbolic link may have appeared since
    if why:
        return Delivery(target.label(), rule, False, 0, f"not written: {why}", retry=True)
    root = outputs.resolve()
    path = root / name
    blocker = next((p for p in reversed(path.parents)
                    if p.is_relative_to(root) and p.exists() and not p.is_dir()), None)  # fmt: skip
    if blocker is not None:  # mkdir would say only "File exists" or "Not a directory"
        why = f"{blocker.relative_to(root)} is a file, not a folder"
        return Delivery(target.label(), rule, False, 1, f"{name}: {why}", retry=True)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(_open_to_append(path), "a", encoding="utf-8") as fh:
            fh.write(to_json(payload) + "\n")  # one write per line: appends stay whole
    except OSError as exc:
        return Delivery(target.label(), rule, False, 1, f"{name}: {exc.strerror or exc}",
                        retry=True)  # fmt: skip
    return Delivery(target.label(), rule, True, 1)


def _open_to_append(path: Path) -> int:
    """A descriptor appending to the regular file ``path``: never through a symbolic link or
    to a file with another name (a hard link), never waiting (a named pipe without a reader
    would block the run forever).

    Raises:
        OSError: it cannot be opened, or is not a regular file.
    """
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise OSError(errno.EINVAL, "not a regular file")
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, 0o644)  # O_NONBLOCK: a pipe put here since fails (ENXIO)
    found = os.fstat(fd)
    if not stat.S_ISREG(found.st_mode) or found.st_nlink > 1:
        os.close(fd)
        hard = stat.S_ISREG(found.st_mode)  # maybe of a file outside the outputs folder
        raise OSError(errno.EINVAL, "a hard link (another name of a file elsewhere)" if hard
                      else "not a regular file")  # fmt: skip
    os.set_blocking(fd, True)
    return fd


def _post(
    target: NotifyTarget, url: str, body: bytes, rule: str, sleep: Callable[[float], None]
) -> Delivery:
    error = ""
    for attempt in range(1, target.attempts + 1):
        if attempt > 1:
            sleep(target.backoff_s * 2 ** (attempt - 2))
        status, error = post_json(url, body, target.timeout_s)
        if status is not None and 200 <= status < 300:
            return Delivery(target.label(), rule, True, attempt)
        final = _final(status)
        if final:
            return Delivery(target.label(), rule, False, attempt, f"{error}{final}", retry=True)
    return Delivery(target.label(), rule, False, target.attempts, error, retry=True)


def _final(status: int | None) -> str:
    """Why an answer is not worth another attempt ("" when it is)."""
    if status is not None and 300 <= status < 400:
        return ": a redirect (not followed)"
    if status is not None and 400 <= status < 500 and status != 429:
        return " (not retried)"
    return ""


# ------------------------------------------------------------------------------ one request


def post_json(url: str, body: bytes, timeout_s: float) -> tuple[int | None, str]:
    """POST ``body`` (JSON) to ``url`` within a total deadline of ``timeout_s``: the HTTP
    status (``None`` without an answer) and, unless it is 2xx, why not, without the URL.

    The request runs in a thread; past the deadline (or on Ctrl-C, which is raised again) its
    connection is shut, which ends a read that a trickling server would keep alive.
    """
    connections: list[http.client.HTTPConnection] = []
    outcome: list[tuple[int | None, str]] = []
    worker = threading.Thread(
        target=lambda: outcome.append(_send(url, body, timeout_s, connections)),
        name="evalbench-webhook",
        daemon=True,  # a name lookup (no timeout of its own) never keeps the process alive
    )
    worker.start()
    late = True
    try:
        worker.join(timeout_s)
        late = worker.is_alive()
    finally:
        if late:  # past the deadline, or interrupted: what the cut read says is moot
            _shut(connections)
            worker.join(1.0)
    if late or not outcome:
        return None, f"no whole answer within timeout_s ({timeout_s:g} s for the request)"
    return outcome[0]


def _send(
    url: str, body: bytes, timeout_s: float, connections: list[http.client.HTTPConnection]
) -> tuple[int | None, str]:
    opener = urllib.request.build_opener(
        _NoRedirects, _HttpHandler(connections), _HttpsHandler(connections)
    )
    request = urllib.request.Request(
        url, data=body, method="POST", headers={"Content-Type": "application/json"}
    )
    try:
        with opener.open(request, timeout=timeout_s) as response:
            return int(response.status), ""
    except urllib.error.HTTPError as exc:
        exc.close()
        return exc.code, f"HTTP {exc.code}"
    except urllib.error.URLError as exc:  # refused, reset, timed out, name not found
        return None, _without(str(exc.reason), url)
    except (OSError, http.client.HTTPException, ValueError) as exc:
        return None, _without(f"{type(exc).__name__}: {exc}", url)
    except Exception as exc:  # any other: the delivery's error, by type only (no URL)
        return None, f"{type(exc).__name__} while sending"


def _without(text: str, url: str) -> str:
    """``text`` with every part of ``url`` that could hold a secret replaced by "…"."""
    parts = urllib.parse.urlsplit(url)
    for secret in sorted({url, parts.netloc, parts.path, parts.query}, key=len, reverse=True):
        if len(secret) > 1:
            text = text.replace(secret, "…")
    return text


def _shut(connections: list[http.client.HTTPConnection]) -> None:
    for connection in connections:
        sock = connection.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A redirect is an answer (an HTTPError with its 3xx code), never followed."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class _HttpHandler(urllib.request.HTTPHandler):
    """HTTP, keeping each connection so that :func:`post_json` can shut it at the deadline."""

    def __init__(self, connections: list[http.client.HTTPConnection]) -> None:
        super().__init__()
        self.connections = connections

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(self._connection, req)

    def _connection(self, host: str, **kwargs: Any) -> http.client.HTTPConnection:
        connection = http.client.HTTPConnection(host, **kwargs)
        self.connections.append(connection)
        return connection


class _HttpsHandler(urllib.request.HTTPSHandler):
    """HTTPS (certificates checked as urllib does), keeping each connection."""

    def __init__(self, connections: list[http.client.HTTPConnection]) -> None:
        super().__init__()
        self.connections = connections

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(self._connection, req, context=getattr(self, "_context", None))

    def _connection(self, host: str, **kwargs: Any) -> http.client.HTTPConnection:
        connection = http.client.HTTPSConnection(host, **kwargs)
        self.connections.append(connection)
        return connection


# ------------------------------------------------------------------------------ signals


class Stop:
    """Which signal stopped a delivery (``None`` while none has)."""

    signal: str | None = None


@contextlib.contextmanager
def stop_on_signals() -> Iterator[Stop]:
    """While notifications are delivered: Ctrl-C (SIGINT) and SIGTERM raise
    ``KeyboardInterrupt`` at once, also in a process that started with SIGINT ignored (a
    shell's background job); the previous handlers come back after. Main thread only."""
    stop = Stop()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return

    def handle(signum: int, frame: Any) -> None:
        stop.signal = signal.Signals(signum).name
        raise KeyboardInterrupt

    saved = {sig: signal.signal(sig, handle) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    finally:
        for sig, previous in saved.items():
            signal.signal(sig, previous)
