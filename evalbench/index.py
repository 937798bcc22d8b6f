"""The index of every run: ``outputs/index.html`` (every run with its status, headlines and
links; the studies skipped for want of data folded below them; then the scorecard of every
system, a block of rows per benchmark) and one page per system under ``outputs/systems/`` —
all escaped, offline, no wider than a laptop's 1,280 px (a wide table scrolls in its box).

A simulated system is a study's own simulator: ``strong-sim`` of the GAIA demo and of the
BFCL demo are different systems, so each has a page of its study (:func:`system_page_name`);
a real model is one system across studies. A simulated system shows no cost (nothing paid).

A run is shown by its last published attempt; a later attempt that was not published is
noted beside it. A run still marked ``running`` whose folder no process holds any more is
shown as ``interrupted``.
"""

from __future__ import annotations

import hashlib
import html
import itertools
import os
import re
import urllib.parse
from pathlib import Path
from typing import Any

import pandas as pd

from evalbench.alerts.shown import shown
from evalbench.look import SCROLL_CSS
from evalbench.records import OutputsUnwritable, write_atomic
from evalbench.runs import PUBLISHED_STATUSES, current_manifest, in_its_folder
from evalbench.settings import get_settings
from evalbench.skipped import skip_hints, skip_reason

PUBLISHED: frozenset[str] = frozenset(PUBLISHED_STATUSES)
"""Statuses whose attempt is published (its report linked)."""


def collect_runs(outputs: Path) -> list[dict[str, Any]]:
    """Every run manifest under ``outputs/<study>/<run>/``, sorted by study and time.

    A run still marked ``running`` whose folder no process holds any more (killed, machine
    restarted) is ``interrupted`` (:func:`evalbench.runs.current_manifest`, which also
    rewrites its manifest so).
    """
    rows = []
    for path in sorted(outputs.glob("*/*/manifest.json")):
        if not in_its_folder(path.parent):  # a link out of its study's folder: no run of it
            continue
        manifest = current_manifest(path.parent)
        manifest["_dir"] = path.parent
        # named by its folder, where every link goes (a copy under another study's folder
        # keeps the original's names in its manifest; a run killed early has none yet)
        manifest["study"], manifest["run_id"] = path.parent.parent.name, path.parent.name
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
    skipped = [m for m in runs if is_skipped(m)]
    rows = "\n".join(
        _index_row(m, outputs, marks.get(str(m.get("study"))), str(m.get("study")) in trends)
        for m in runs
        if not is_skipped(m)
    )
    page = _INDEX_PAGE.format(
        scorecard=scorecard_html(card, outputs),
        rows=rows or '<tr><td colspan="8">no results yet</td></tr>',
        skipped=skipped_html(skipped),
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
    run_dir = Path(m["_dir"])  # names the study and the run when the manifest does not yet
    study, run_id = str(m.get("study") or run_dir.parent.name), m.get("run_id") or run_dir.name
    return (
        f"<tr><td>{e(str(m.get('title') or study))}<div class='id'>{e(study)}/{e(str(run_id))}"
        f"{e(''.join(' -p ' + str(o) for o in m.get('overrides') or []))}</div></td>"
        f"{cell}<td>{heads}</td>"
        f"<td>{badge}</td><td>{_baseline_html(m, mark)}{_alerts_html(m)}</td><td>{wall_text}</td>"
        f"<td>{e(ended)}</td><td>{link}</td></tr>"
    )


def is_skipped(m: dict[str, Any]) -> bool:
    """A run skipped (data or a secret missing) with no published attempt to show instead."""
    return m.get("status") == "skipped" and not m.get("published")


def skipped_html(skipped: list[dict[str, Any]]) -> str:
    """The studies skipped, folded: one short line each (what is missing), its full reason
    folded under it, and what lifts each kind of skip (the hints ``make report`` ends
    with); nothing when none was skipped."""
    if not skipped:
        return ""
    e = html.escape
    lines = "".join(
        f'<li><details><summary title="{e(str(m.get("title") or ""))}"><b>'
        f"{e(str(m.get('study')))}</b>: {e(short_reason(str(m.get('reason') or '')))}"
        f"</summary><div class='reason'>{e(str(m.get('title') or ''))}<br>"
        f"{e(str(m.get('reason') or 'no reason recorded'))}</div></details></li>"
        for m in skipped
    )
    count = f"{len(skipped)} stud{'y' if len(skipped) == 1 else 'ies'}"
    summary = f"{count} skipped: needs data or a secret (one line each)"
    hints = "".join(f"<p>{e(h)}</p>" for h in skip_hints(str(m.get("reason")) for m in skipped))
    return (f'<details class="skipped"><summary>{summary}</summary><ul>{lines}</ul>'
            f"{hints}</details>\n")  # fmt: skip


SHORT_REASON = 100
"""Characters of a skip reason shown on its line (the whole reason is folded below it)."""


def short_reason(reason: str) -> str:
    """What a skipped run misses, in the few words ``make report`` prints for it
    (:func:`evalbench.skipped.skip_reason`), cut to :data:`SHORT_REASON` characters."""
    short = skip_reason(reason).strip() or "no reason recorded"
    return short if len(short) <= SHORT_REASON else short[: SHORT_REASON - 1] + "…"


def href(path: str) -> str:
    """A relative link to ``path`` in an ``href`` attribute: its characters URL-quoted (a
    study file named ``a#b?c.yaml``: the link was read as ``a`` with a fragment) and then
    HTML-escaped."""
    return html.escape(urllib.parse.quote(path, safe="/"))


def _links(m: dict[str, Any], outputs: Path, trends: bool) -> str:
    """The run's report and summary (when published) and its study's trends page."""
    run_dir = Path(m["_dir"])
    pages = [("report", run_dir / "report.html")] if m.get("published") else []
    if pages and (run_dir / "summary.html").exists():
        pages.append(("summary", run_dir / "summary.html"))
    if trends:
        pages.append(("trends", run_dir.parent / "trends.html"))
    return " · ".join(
        f'<a href="{href(path.relative_to(outputs).as_posix())}">{name}</a>' for name, path in pages
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
    baseline = record.get("baseline")  # none: an absolute rule (error rate) on a first run
    against = f" vs {html.escape(str(baseline))}" if baseline else ""
    head = f'<div class="warn">ALERT: {len(fired)} fired{against}</div>'
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
    """A result with its interval, or "no result" with why: a system that measured nothing
    (every call failed) has no number (:func:`evalbench.history.summarize_outcomes`)."""
    e = html.escape
    if _number(row.estimate) == "—":
        errors = int(row.errors) if _number(row.errors) != "—" else 0
        failed = f" ({errors:,d} failed call{'s' if errors != 1 else ''})" if errors else ""
        return f"<b>no result</b>: nothing measured{failed}"
    return f"<b>{e(_number(row.estimate))}</b> [{e(_number(row.low))}, {e(_number(row.high))}]"


def _n(row: Any) -> str:
    """Items a result stands on (none for "no result")."""
    return "—" if _number(row.estimate) == "—" else str(row.n)


def _cost(value: Any) -> str:
    return "—" if value is None or value != value else f"${float(value):.4f}"


def _report_href(report: Any, page_dir: Path, outputs: Path) -> str:
    if not report:
        return ""
    relative = os.path.relpath(Path(str(report)), page_dir)
    return f' · <a href="{href(Path(relative).as_posix())}">report</a>'


def scorecard_html(card: Any, outputs: Path) -> str:
    """The scorecard of :func:`evalbench.history.scorecard` (escaped): a block of rows per
    study, a row per system in it; the systems evalbench asked (simulated or real) first,
    the models known only from published results (no cost: nobody paid for a call) folded
    below."""
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
        only = f"<p class='reason'>Without per-system results (headlines above): {only}.</p>"
    if problems:
        problems = f"<p class='warn'>Runs whose records could not be read:</p><ul>{problems}</ul>"
    return (
        "<h2>Scorecard: systems by benchmark</h2><p>Each row: a system's headline metric in "
        "the latest ok run of the study that has it (runs of the params file as written before "
        "runs with -p overrides), with its 95% interval (Wilson for rates, "
        "bootstrap for scores, the study's bootstrap for ratings), n (items; battles for "
        "ratings), its cost in that run (none for simulated systems) and the report; \"no "
        "result\" where the system measured nothing (every call failed). A "
        "simulated system belongs to its study: its page is that study's. "
        + e(NO_AVERAGE) + f"</p>{asked}{folded}{only}{problems}"
    )  # fmt: skip


def _card_table(cells: pd.DataFrame, outputs: Path) -> str:
    """One table: per study (title as a heading row) a row per system; a cost column only
    when a system that was not simulated has a cost. Built from one pass over the rows
    (a pandas group per system took 10 s for 10,000 systems)."""
    if not len(cells):
        return ""
    costs = not cells[~cells["simulated"].astype(bool)]["cost_usd"].isna().all()
    head = "<th>system</th><th>headline [95% interval]</th><th>n</th>"
    head += ("<th>cost</th>" if costs else "") + "<th>run</th>"
    width = 5 if costs else 4
    body: list[str] = []
    ordered = cells.sort_values(["study", "system"], kind="stable").itertuples()
    for study, in_study in itertools.groupby(ordered, lambda r: r.study):
        systems = [list(rows) for _, rows in itertools.groupby(in_study, lambda r: r.system)]
        title = html.escape(str(systems[0][0].title))
        body.append(f'<tr class="group"><th colspan="{width}">{title} <span class="id">'
                    f"{html.escape(str(study))}</span></th></tr>")  # fmt: skip
        body += [_card_row(rows, outputs, costs) for rows in systems]
    return (f'<div class="evalbench-scroll"><table class="card"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>")  # fmt: skip


def _card_row(rows: list[Any], outputs: Path, costs: bool) -> str:
    """A system's row in its study's block (``rows``: its cells' tuples): its page,
    headline(s), n, cost, run."""
    e = html.escape
    first = rows[0]
    simulated = any(bool(r.simulated) for r in rows)
    page = system_page_name(str(first.system), str(first.study) if simulated else None)
    sim = ' <span class="sim">simulated</span>' if simulated else ""
    heads = "<br>".join(f"{e(str(r.metric))}: {_interval(r)}" for r in rows)
    cost = f"<td>{'' if simulated else e(_cost(first.cost_usd))}</td>" if costs else ""
    link = f'<a href="{href(f"systems/{page}")}">{e(str(first.system))}</a>'
    run = f"{e(str(first.run_id))}{_report_href(first.report, outputs, outputs)}"
    return (f'<tr class="system"><td>{link}</td><td>{heads}{sim}</td><td>{e(_n(first))}</td>'
            f"{cost}<td class='id'>{run}</td></tr>")  # fmt: skip


def system_page_name(system: str, study: str | None = None) -> str:
    """The file name of a system's page: a readable slug plus a hash of the exact name; a
    simulated system's page is its ``study``'s (``<study>--<system>-<hash>.html``)."""
    label = system if study is None else f"{study}--{system}"
    key = system if study is None else f"{study}\x1f{system}"  # no real name holds \x1f
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", label).strip("._")[:60] or "system"
    return f"{slug}-{hashlib.sha256(key.encode()).hexdigest()[:8]}.html"


def _page_names(frame: pd.DataFrame) -> pd.Series:
    """Each row's system page: by system, and for a simulated system by study too."""
    names = [
        system_page_name(str(system), str(study) if simulated else None)
        for system, study, simulated in zip(
            frame["system"], frame["study"], frame["simulated"].astype(bool), strict=True
        )
    ]
    return pd.Series(names, index=frame.index, dtype=object)


def write_system_pages(card: Any, outputs: Path) -> list[Path]:
    """One page per system under ``outputs/systems/`` (stale pages removed)."""
    folder = outputs / "systems"
    written = []
    for name, system, study, mine in _per_system(card):
        target = folder / name
        _write_page(target, system_page(mine, system, outputs, study=study))
        written.append(target)
    kept = set(written)
    for old in folder.glob("*.html") if folder.exists() else []:
        if old not in kept:
            old.unlink()
    return written


def _per_system(card: Any) -> list[tuple[str, str, str | None, Any]]:
    """(page name, system, its study when simulated, the card cut down to its rows) for
    every system page, sorted: each page then reads its own rows, not the whole card
    (10,000 systems: minutes otherwise)."""
    if not len(card.cells):
        return []
    results = dict(tuple(card.results.groupby(_page_names(card.results), sort=False)))
    empty = card.results.iloc[:0]
    pages = []
    for name, cells in card.cells.groupby(_page_names(card.cells), sort=True):
        first = cells.iloc[0]
        study = str(first.study) if bool(first.simulated) else None
        mine = card._replace(cells=cells, results=results.get(name, empty))
        pages.append((str(name), str(first.system), study, mine))
    return pages


def system_page(card: Any, system: str, outputs: Path, study: str | None = None) -> str:
    """A system's results across benchmarks and its history (escaped HTML); ``study``: the
    study whose simulator it is (its only study)."""
    from evalbench.history import system_history, system_results

    e = html.escape
    folder = outputs / "systems"
    results = system_results(card, system)
    history = system_history(card, system)
    paid = not results["simulated"].astype(bool).all()  # a cost column only then
    result_rows = "".join(
        f"<tr><td>{e(r.title)}<div class='id'>{e(r.study)}</div></td><td>{e(r.metric)}"
        f"{' (higher is better)' if r.higher_is_better else ' (lower is better)'}</td>"
        f"<td>{_interval(r)}</td><td>{e(_n(r))}</td><td>{e(str(r.unscored))}</td>"
        f"<td>{e(str(r.errors))}</td>"
        + (f"<td>{'' if r.simulated else e(_cost(r.cost_usd))}</td>" if paid else "")
        + f"<td>{'simulated' if r.simulated else ''}</td><td>{e(r.run_id)}"
        f"{_report_href(r.report, folder, outputs)}</td></tr>"
        for r in results.itertuples()
    )
    history_rows = "".join(
        f"<tr><td>{e(r.study)}</td><td>{e(r.metric)}</td><td>{e(str(r.started_at)[:16])}</td>"
        f"<td>{e(r.run_id)}{_report_href(r.report, folder, outputs)}</td>"
        f"<td>{e(r.overrides or '—')}</td><td>{_interval(r)}</td><td>{e(_n(r))}</td></tr>"
        for r in history.itertuples()
    )
    badge = ' <span class="sim">simulated</span>' if results["simulated"].any() else ""
    if study is not None:
        badge = f' <span class="sim">simulated in {e(study)}</span>'
    return _SYSTEM_PAGE.format(
        name=e(system), badge=badge, why=e(NO_AVERAGE), results=result_rows,
        history=history_rows, cost="<th>cost</th>" if paid else "",
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
h1, h2, td:first-child {{ overflow-wrap: anywhere; }}
tr.group th {{ background: #e8eef6; font-size: 0.95em; }}
.id {{ color: #888; font-size: 0.8em; }}
.sim {{ background: #fff4ce; border: 1px solid #e0b000; border-radius: 4px;
  padding: 1px 6px; font-size: 0.85em; }}
h1 .sim {{ font-size: 0.45em; vertical-align: middle; font-weight: 600; }}
details.about, details.skipped {{ margin: 0.6em 0 1em 0; }}
details.skipped > summary {{ color: #8a6100; font-weight: 600; cursor: pointer; }}
details.skipped ul {{ list-style: none; padding-left: 1em; margin: 0.3em 0; }}
details.skipped li {{ margin: 0.15em 0; }}
details.skipped li summary {{ cursor: pointer; }}
details.skipped li .reason {{ margin: 0.2em 0 0.5em 1.2em; }}
""" + SCROLL_CSS.replace("{", "{{").replace("}", "}}")
"""What the index and the system pages share (``str.format`` braces doubled)."""

_INDEX_PAGE = (
    """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>evalbench — study runs</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
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
<p><a href="#runs">Runs</a> · <a href="#scorecard">Scorecard: systems by benchmark</a></p>
<h2 id="runs">Runs</h2>
<details class="about"><summary>Every run under <code>outputs/</code>, with its headline
numbers and links: what the columns mean</summary><p>"simulated" marks runs whose systems or
judges were produced by the offline <code>sim</code> provider: not measurements of real
models. "vs pinned baseline": a study's latest run compared item by item with the run pinned by
<code>evalbench compare --pin RUN</code> (a drop with Holm-adjusted p &lt; 0.05 is a
regression), and the alert rules that fired at the end of the run (<code>alerts:</code> in its
params). Links: the full report, its one-page summary for readers who are not statisticians,
and the study's trends (each headline over its runs). Studies skipped for want of data are
folded below the table, one line each.</p></details>
<div class="evalbench-scroll"><table><thead><tr><th>study</th><th>status</th>
<th>headline numbers</th><th></th><th>vs pinned baseline</th><th>wall time</th>
<th>finished (UTC)</th><th></th></tr></thead>
<tbody>
{rows}
</tbody></table></div>
{skipped}<div id="scorecard">{scorecard}</div></body></html>
"""
)

_SYSTEM_PAGE = (
    """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>evalbench — {name}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
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
value (battles for ratings), unscored = items without one, errors = failed calls; "no result"
for a system that measured nothing (every call failed), never 0; no cost for a simulated system
(nothing was paid).</p>
<div class="evalbench-scroll"><table><thead><tr><th>study</th><th>metric</th>
<th>estimate [95% interval]</th><th>n</th><th>unscored</th><th>errors</th>{cost}<th></th>
<th>run</th></tr></thead>
<tbody>{results}</tbody></table></div>
<h2>History</h2>
<p>The headline metric in every ok run of every study that has this system, oldest first.</p>
<div class="evalbench-scroll"><table><thead><tr><th>study</th><th>metric</th>
<th>started (UTC)</th><th>run</th><th>overrides</th><th>estimate [95% interval]</th><th>n</th>
</tr></thead>
<tbody>{history}</tbody></table></div></body></html>
"""
)
