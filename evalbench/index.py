"""The index of every run: ``outputs/index.html`` (the scorecard of every system across
benchmarks, then every run with its status, headlines and link) and one page per system
under ``outputs/systems/`` — all escaped, offline.

A run is shown by its last published attempt; a later attempt that was not published is
noted beside it. A run still marked ``running`` whose folder no process holds any more is
shown as ``interrupted``.
"""

from __future__ import annotations

import hashlib
import html
import os
import re
from pathlib import Path
from typing import Any

import pandas as pd

from evalbench.alerts.shown import shown
from evalbench.records import write_atomic
from evalbench.runs import PUBLISHED_STATUSES, current_manifest
from evalbench.settings import get_settings

PUBLISHED: frozenset[str] = frozenset(PUBLISHED_STATUSES)
"""Statuses whose attempt is published (its report linked)."""


class OutputsUnwritable(OSError):
    """The outputs folder cannot be written (read-only, no permission, disk full)."""


def collect_runs(outputs: Path) -> list[dict[str, Any]]:
    """Every run manifest under ``outputs/<study>/<run>/``, sorted by study and time.

    A run still marked ``running`` whose folder no process holds any more (killed, machine
    restarted) is ``interrupted`` (:func:`evalbench.runs.current_manifest`, which also
    rewrites its manifest so).
    """
    rows = []
    for path in sorted(outputs.glob("*/*/manifest.json")):
        manifest = current_manifest(path.parent)
        manifest["_dir"] = path.parent
        rows.append(manifest)
    return sorted(rows, key=lambda m: (str(m.get("study", "")), str(m.get("started_at", ""))))


def build_index(outputs: Path | None = None) -> Path:
    """Write ``outputs/index.html`` — the scorecard of every system across benchmarks, then
    every run (with its regression mark when its study has a pinned baseline) — and one page
    per system under ``outputs/systems/`` (all escaped, offline)."""
    from evalbench.history import regression_status, scorecard  # scipy: only when indexing
    from evalbench.history.trends import write_trend_pages

    outputs = outputs or get_settings().outputs_dir
    runs = collect_runs(outputs)
    card = scorecard(outputs)
    studies = sorted({str(m.get("study")) for m in runs})
    marks = {study: regression_status(study, outputs) for study in studies}
    trends = write_trend_pages(card.results, runs, outputs)
    rows = "\n".join(
        _index_row(m, outputs, marks.get(str(m.get("study"))), str(m.get("study")) in trends)
        for m in runs
    )
    page = _INDEX_PAGE.format(
        scorecard=scorecard_html(card, outputs),
        rows=rows or '<tr><td colspan="8">no runs yet</td></tr>',
    )
    target = outputs / "index.html"
    _write_page(target, page)
    write_system_pages(card, outputs)
    return target


def _write_page(target: Path, page: str) -> None:
    try:
        write_atomic(target, page)
    except OSError as exc:
        raise OutputsUnwritable(f"cannot write {target} ({exc.strerror or exc})") from None


def _index_row(
    m: dict[str, Any], outputs: Path, mark: dict[str, Any] | None = None, trends: bool = False
) -> str:
    """One study run: the last published attempt's numbers and links (report, summary, the
    study's trends page), and, when the latest attempt was not published, what happened to
    it; ``mark``: its study's pinned-baseline status
    (:func:`evalbench.history.regression_status`); the alerts its check fired."""
    e = html.escape
    status = str(m.get("status", "unknown"))
    shown = m if status in PUBLISHED else (m.get("published") or m)
    link = _links(m, outputs, trends)
    heads = "<br>".join(
        f"{e(str(k))}: <b>{e(_fmt(v))}</b>" for k, v in (shown.get("headlines") or {}).items()
    )
    badge = '<span class="sim">simulated</span>' if shown.get("simulated") else ""
    cell = f'<td class="st {e(status)}">{e(status)}{_reason_html(m)}</td>'
    if status not in PUBLISHED and m.get("published"):
        when = str(m.get("ended_at") or "")[:16].replace("T", " ")
        note = f"latest attempt {status} at {when}: {m.get('reason') or ''}"
        published = str(shown.get("status", "ok"))
        cell = (f'<td class="st {e(published)}">{e(published)}'
                f'<div class="reason warn">{e(note)}</div></td>')  # fmt: skip
    wall = shown.get("wall_time_s")
    wall_text = f"{wall:.1f} s" if isinstance(wall, (int, float)) else "—"
    ended = str(shown.get("ended_at") or "")[:16].replace("T", " ")
    return (
        f"<tr><td>{e(str(m.get('title', m.get('study', '?'))))}<div class='id'>"
        f"{e(str(m.get('study', '')))}/{e(str(m.get('run_id', '')))}"
        f"{e(''.join(' -p ' + str(o) for o in m.get('overrides') or []))}</div></td>"
        f"{cell}<td>{heads}</td>"
        f"<td>{badge}</td><td>{_baseline_html(m, mark)}{_alerts_html(m)}</td><td>{wall_text}</td>"
        f"<td>{e(ended)}</td><td>{link}</td></tr>"
    )


def _links(m: dict[str, Any], outputs: Path, trends: bool) -> str:
    """The run's report and summary (when published) and its study's trends page."""
    run_dir = Path(m["_dir"])
    pages = [("report", run_dir / "report.html")] if m.get("published") else []
    if pages and (run_dir / "summary.html").exists():
        pages.append(("summary", run_dir / "summary.html"))
    if trends:
        pages.append(("trends", run_dir.parent / "trends.html"))
    return " · ".join(
        f'<a href="{html.escape(path.relative_to(outputs).as_posix())}">{name}</a>'
        for name, path in pages
    )


def _alerts_html(m: dict[str, Any]) -> str:
    """What the run's alert check found: the rules that fired and failed notifications."""
    record = m.get("alerts") or {}
    fired = record.get("fired") or []
    failed = [d for d in record.get("deliveries") or [] if not d.get("ok")]
    lines = shown([f"{f.get('rule')}: {f.get('system')} {f.get('metric')} {f.get('slice')}"
                   for f in fired])  # fmt: skip
    lines += shown([f"notification failed: {d.get('target')}: {d.get('error')}" for d in failed])
    if not lines:
        return ""
    detail = "".join(f"<li>{html.escape(str(line))}</li>" for line in lines)
    against = html.escape(str(record.get("baseline")))
    head = f'<div class="warn">ALERT: {len(fired)} fired vs {against}</div>'
    return f'{head}<ul class="reason">{detail}</ul>'


def _baseline_html(m: dict[str, Any], mark: dict[str, Any] | None) -> str:
    """The run's cell in the "vs pinned baseline" column."""
    e = html.escape
    run_id = Path(m["_dir"]).name
    if mark is None:
        return ""
    if mark.get("problem") and run_id in (mark.get("latest"), None):
        problem = _reason_html({"reason": mark["problem"]})
        return f'<span class="warn">baseline check failed</span>{problem}'
    if run_id == mark.get("baseline"):
        return '<span class="pin">pinned baseline</span>'
    if run_id != mark.get("latest"):
        return ""
    lines = mark.get("regressions") or []
    if not lines:
        return f'<span class="good">no regression vs pinned {e(str(mark["baseline"]))}</span>'
    detail = "".join(f"<li>{e(line)}</li>" for line in lines)
    return (f'<span class="warn">REGRESSED vs pinned {e(str(mark["baseline"]))}: '
            f'{len(lines)}</span><ul class="reason">{detail}</ul>')  # fmt: skip


# --------------------------------------------------------------------------- scorecard

NO_AVERAGE = (
    "No overall score: the benchmarks measure different things (answer accuracy, "
    "function-call validity, agreement with human graders, pairwise ratings) on different "
    "scales, item counts and difficulty, so an average would mostly reflect which benchmarks "
    "happened to be run and how much each was made to count. No weights saying that are "
    "defined, so evalbench shows no average: every cell stands on its own with its interval."
)


def _number(value: Any) -> str:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return "—"
    return "—" if number != number else _fmt(number)


def _interval(row: Any) -> str:
    e = html.escape
    return f"<b>{e(_number(row.estimate))}</b> [{e(_number(row.low))}, {e(_number(row.high))}]"


def _cost(value: Any) -> str:
    return "—" if value is None or value != value else f"${float(value):.4f}"


def _report_href(report: Any, page_dir: Path, outputs: Path) -> str:
    if not report:
        return ""
    href = os.path.relpath(Path(str(report)), page_dir)
    return f' · <a href="{html.escape(Path(href).as_posix())}">report</a>'


def _card_cell(rows: pd.DataFrame, page_dir: Path, outputs: Path) -> str:
    e = html.escape
    parts = []
    for row in rows.itertuples():
        sim = ' <span class="sim">simulated</span>' if row.simulated else ""
        parts.append(
            f"{e(str(row.metric))}: {_interval(row)}{sim}<div class='id'>n={e(str(row.n))} · "
            f"{e(_cost(row.cost_usd))} · run {e(str(row.run_id))}"
            f"{_report_href(row.report, page_dir, outputs)}</div>"
        )
    return "<hr>".join(parts) or "—"


def scorecard_html(card: Any, outputs: Path) -> str:
    """The systems × benchmarks matrix of :func:`evalbench.history.scorecard` (escaped):
    the systems evalbench asked (simulated or real) first; the models known only from
    published results (no cost: nobody paid for a call) folded below."""
    e = html.escape
    cells = card.cells
    if not len(cells):
        return "<p>No system results yet.</p>"
    published = cells.groupby("system")["cost_usd"].apply(lambda c: c.isna().all())
    asked = _card_table(cells[~cells["system"].map(published)], outputs)
    known = cells[cells["system"].map(published)]
    folded = ""
    if len(known):
        count = known["system"].nunique()
        folded = (f"<details><summary>Models known from published results ({count}; their "
                  f"outputs, votes or verdicts were read, not asked)</summary>"
                  f"{_card_table(known, outputs)}</details>")  # fmt: skip
    only = "; ".join(f"{e(t)} ({e(s)})" for s, t in card.headline_only)
    problems = "".join(f"<li>{e(p)}</li>" for p in card.problems)
    if only:
        only = f"<p class='reason'>Without per-system results (headlines below): {only}.</p>"
    if problems:
        problems = f"<p class='warn'>Runs whose records could not be read:</p><ul>{problems}</ul>"
    return (
        "<h2>Scorecard: systems × benchmarks</h2><p>Each cell: the system's headline metric in "
        "the latest ok run of that study that has it (runs of the params file as written before "
        "runs with -p overrides), with its 95% interval (Wilson for rates, "
        "bootstrap for scores, the study's bootstrap for ratings), n (items; battles for "
        "ratings), the system's cost in that run and the report. " + e(NO_AVERAGE) + "</p>"
        f"{asked}{folded}{only}{problems}"
    )


def _card_table(cells: pd.DataFrame, outputs: Path) -> str:
    """One matrix: a row per system, a column per study that has any of them."""
    e = html.escape
    if not len(cells):
        return ""
    studies = list(dict.fromkeys(cells.sort_values("study")["study"]))
    titles = dict(zip(cells["study"], cells["title"], strict=True))
    head = "".join(f'<th title="{e(titles[s])}">{e(s)}</th>' for s in studies)
    by_cell = {key: group for key, group in cells.groupby(["system", "study"], sort=False)}
    empty = cells.iloc[:0]
    body = []
    for system in sorted(cells["system"].unique()):
        link = f'<a href="systems/{e(system_page_name(system))}">{e(system)}</a>'
        tds = "".join(
            f"<td>{_card_cell(by_cell.get((system, s), empty), outputs, outputs)}</td>"
            for s in studies
        )
        body.append(f"<tr><td>{link}</td>{tds}</tr>")
    return (f'<div style="overflow-x:auto"><table><thead><tr><th>system</th>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>")  # fmt: skip


def system_page_name(system: str) -> str:
    """The file name of a system's page: a readable slug plus a hash of the exact name."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", system).strip("._")[:60] or "system"
    return f"{slug}-{hashlib.sha256(system.encode()).hexdigest()[:8]}.html"


def write_system_pages(card: Any, outputs: Path) -> list[Path]:
    """One page per system under ``outputs/systems/`` (stale pages removed)."""
    folder = outputs / "systems"
    written = []
    for system, mine in _per_system(card):
        target = folder / system_page_name(system)
        _write_page(target, system_page(mine, system, outputs))
        written.append(target)
    kept = set(written)
    for old in folder.glob("*.html") if folder.exists() else []:
        if old not in kept:
            old.unlink()
    return written


def _per_system(card: Any) -> list[tuple[str, Any]]:
    """(system, the card cut down to its rows) for every system, sorted: each page then reads
    its own rows, not the whole card (10,000 systems: minutes otherwise)."""
    if not len(card.cells):
        return []
    results = dict(tuple(card.results.groupby("system", sort=False)))
    empty = card.results.iloc[:0]
    return [
        (system, card._replace(cells=cells, results=results.get(system, empty)))
        for system, cells in card.cells.groupby("system", sort=True)
    ]


def system_page(card: Any, system: str, outputs: Path) -> str:
    """A system's results across benchmarks and its history (escaped HTML)."""
    from evalbench.history import system_history, system_results

    e = html.escape
    folder = outputs / "systems"
    results = system_results(card, system)
    history = system_history(card, system)
    result_rows = "".join(
        f"<tr><td>{e(r.title)}<div class='id'>{e(r.study)}</div></td><td>{e(r.metric)}"
        f"{' (higher is better)' if r.higher_is_better else ' (lower is better)'}</td>"
        f"<td>{_interval(r)}</td><td>{e(str(r.n))}</td><td>{e(str(r.unscored))}</td>"
        f"<td>{e(str(r.errors))}</td><td>{e(_cost(r.cost_usd))}</td>"
        f"<td>{'simulated' if r.simulated else ''}</td><td>{e(r.run_id)}"
        f"{_report_href(r.report, folder, outputs)}</td></tr>"
        for r in results.itertuples()
    )
    history_rows = "".join(
        f"<tr><td>{e(r.study)}</td><td>{e(r.metric)}</td><td>{e(str(r.started_at)[:16])}</td>"
        f"<td>{e(r.run_id)}{_report_href(r.report, folder, outputs)}</td>"
        f"<td>{e(r.overrides or '—')}</td><td>{_interval(r)}</td><td>{e(str(r.n))}</td></tr>"
        for r in history.itertuples()
    )
    badge = ' <span class="sim">simulated</span>' if results["simulated"].any() else ""
    return _SYSTEM_PAGE.format(
        name=e(system), badge=badge, why=e(NO_AVERAGE), results=result_rows,
        history=history_rows,
    )  # fmt: skip


def _reason_html(m: dict[str, Any]) -> str:
    return f'<div class="reason">{html.escape(str(m["reason"]))}</div>' if m.get("reason") else ""


def _fmt(value: Any) -> str:
    """Rates and scores with three decimals, ratings (|x| >= 100) with one."""
    if isinstance(value, float):
        return f"{value:.1f}" if abs(value) >= 100 else f"{value:.3f}"
    return str(value)


_STYLE = """body {{ font-family: system-ui, sans-serif; margin: 2em; color: #222; }}
table {{ border-collapse: collapse; width: 100%; }}
th, td {{ border-bottom: 1px solid #ddd; padding: 6px 10px; text-align: left;
  vertical-align: top; }}
th {{ background: #f4f4f4; }}
.id {{ color: #888; font-size: 0.8em; }}
.sim {{ background: #fff4ce; border: 1px solid #e0b000; border-radius: 4px;
  padding: 1px 6px; font-size: 0.85em; }}
"""
"""What the index and the system pages share (``str.format`` braces doubled)."""

_INDEX_PAGE = (
    """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>evalbench — study runs</title>
<style>
"""
    + _STYLE
    + """.st.ok {{ color: #17692b; font-weight: 600; }}
.st.failed, .st.interrupted, .st.busy, .st.no_result {{ color: #b00020; font-weight: 600; }}
.st.skipped, .st.running, .st.executed, .st.degraded, .st.pending {{ color: #8a6100;
  font-weight: 600; }}
.warn {{ color: #b00020; }}
.reason {{ color: #555; font-weight: normal; font-size: 0.85em; max-width: 40em;
  overflow-wrap: anywhere; }}
.good {{ color: #17692b; }}
.pin {{ color: #1f4e99; font-weight: 600; }}
</style></head><body>
<h1>evalbench — study runs</h1>
<p><a href="#runs">Runs</a> · <a href="#scorecard">Scorecard: systems × benchmarks</a></p>
<h2 id="runs">Runs</h2>
<p>Every run under <code>outputs/</code>. "simulated" marks runs whose systems or judges
were produced by the offline <code>sim</code> provider: not measurements of real models.
"vs pinned baseline": a study's latest run compared item by item with the run pinned by
<code>evalbench compare --pin RUN</code> (a drop with Holm-adjusted p &lt; 0.05 is a
regression), and the alert rules that fired at the end of the run (<code>alerts:</code> in its
params). Links: the full report, its one-page summary for readers who are not statisticians,
and the study's trends (each headline over its runs).</p>
<table><thead><tr><th>study</th><th>status</th><th>headline numbers</th><th></th>
<th>vs pinned baseline</th><th>wall time</th><th>finished (UTC)</th><th></th></tr></thead>
<tbody>
{rows}
</tbody></table>
<div id="scorecard">{scorecard}</div></body></html>
"""
)

_SYSTEM_PAGE = (
    """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>evalbench — {name}</title>
<style>
"""
    + _STYLE
    + """</style></head><body>
<p><a href="../index.html">← all studies</a></p>
<h1>{name}{badge}</h1>
<p>{why}</p>
<h2>Results across benchmarks</h2>
<p>The latest ok run of each study that has this system (runs of the params file as written
before runs with overrides): every metric, with its 95% interval
(Wilson for rates, bootstrap for scores, the study's bootstrap for ratings); n = items with a
value (battles for ratings), unscored = items without one, errors = failed calls.</p>
<table><thead><tr><th>study</th><th>metric</th><th>estimate [95% interval]</th><th>n</th>
<th>unscored</th><th>errors</th><th>cost</th><th></th><th>run</th></tr></thead>
<tbody>{results}</tbody></table>
<h2>History</h2>
<p>The headline metric in every ok run of every study that has this system, oldest first.</p>
<table><thead><tr><th>study</th><th>metric</th><th>started (UTC)</th><th>run</th>
<th>overrides</th><th>estimate [95% interval]</th><th>n</th></tr></thead>
<tbody>{history}</tbody></table></body></html>
"""
)
