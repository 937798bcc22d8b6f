"""A study's trends page, ``outputs/<study>/trends.html``: each headline over the study's ok
runs with its interval, one line per system and setup, and the alerts that fired.

A *setup* is the run's ``-p`` overrides other than ``tag=`` (:func:`.runs.configuration`),
its params as resolved (:func:`.runs.params_identity`: an edited params file is another
setup; a tag, title or description is not) and its code commit (``+dirty`` when
uncommitted): runs made differently are never joined into one line, and a dashed rule marks
each run whose setup differs from the run before. A system with no result in a run (it
measured nothing) has no point there, and its line breaks.
Each line has its own colour (:data:`evalbench.look.OKABE_ITO`) and marker, the runs are in
order under their start dates. A run whose alert check fired is marked (a red ring on the
system's point for a metric drop, a red "!" over the run for every alert), with the alert
lines in its tooltip and in the table below. Drawn as inline SVG from the scorecard's numbers
(no plotting library, no extra reading of records): the index builds these pages at almost
no cost.
"""

from __future__ import annotations

import html
import itertools
import math
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from evalbench.alerts.shown import shown
from evalbench.look import MARKERS, OKABE_ITO, SCROLL_CSS
from evalbench.records import OutputsUnwritable, refuse_links, write_atomic
from evalbench.textparse import without_bidi_controls

from .runs import configuration, params_identity, setup_label

TRENDS_FILE = "trends.html"
DASHES = ("", "6 3", "2 3", "8 3 2 3")
WIDTH, HEIGHT, LEFT, RIGHT, TOP, BOTTOM = 900, 320, 64, 16, 28, 88
MAX_LABELS = 14
"""Run labels drawn under the axis at most (every k-th run past that)."""
MAX_TABLE_ROWS = 200
DODGE = 6.0
"""Pixels between the series' points within a run (equal values stay apart)."""
MARKER_R = 4.5


class RunInfo(NamedTuple):
    """What the page needs of one run's manifest."""

    setup: str
    """Overrides (without ``tag=``), params identity and commit, in a few words."""
    alerts: list[str]
    """One line per place an alert rule fired."""
    drops: set[tuple[str, str]]
    """(system, metric) of the drop rules that fired."""
    summary: bool


def run_info(manifest: dict[str, Any]) -> RunInfo:
    """A manifest's setup and fired alerts."""
    git = (manifest.get("environment") or {}).get("git") or {}
    setup = setup_label(" ".join(configuration(manifest.get("overrides") or [])),
                        params_identity(manifest), (git.get("commit") or "")[:10],
                        bool(git.get("dirty")))  # fmt: skip
    fired = (manifest.get("alerts") or {}).get("fired") or []
    lines = shown([f"{f.get('rule')}: {f.get('system')} {f.get('metric')} {f.get('slice')} "
                   f"{_num(f.get('baseline'))} → {_num(f.get('now'))}" for f in fired])  # fmt: skip
    # a drop rule's finding has a p (0.0 for the strongest drops); the other rules' have none
    drops = {(str(f.get("system")), str(f.get("metric")))
             for f in fired if f.get("p_holm") is not None}  # fmt: skip
    summary = (Path(manifest["_dir"]) / "summary.html").exists() if "_dir" in manifest else False
    return RunInfo(setup, lines, drops, summary)


def _num(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        return "—"
    return f"{value:.3f}" if abs(value) < 1e6 else f"{value:.4g}"


class Point(NamedTuple):
    """One system's headline in one run."""

    run_id: str
    started_at: str
    title: str
    system: str
    metric: str
    kind: str
    estimate: float
    low: float
    high: float


def write_trend_pages(
    results: pd.DataFrame, manifests: list[dict[str, Any]], outputs: Path
) -> dict[str, Path]:
    """One trends page per study with per-system results (the scorecard's ``results``);
    returns study -> page."""
    infos = {(str(m.get("study")), Path(m["_dir"]).name): run_info(m) for m in manifests}
    if not len(results):
        return {}
    primary = results[results["primary"].astype(bool)].sort_values(
        ["started_at", "run_id"], kind="stable"
    )
    by_study: dict[str, list[Point]] = {}
    columns = ["study", *Point._fields[:5], "metric_kind", *Point._fields[6:]]
    for study, *fields in primary[columns].itertuples(index=False, name=None):
        by_study.setdefault(str(study), []).append(Point(*(_plain(v) for v in fields)))
    pages = {}
    for study, points in sorted(by_study.items()):
        try:
            refuse_links(outputs / study, outputs)
        except OutputsUnwritable:
            continue  # a linked study folder (an archive): read, never written through
        target = outputs / study / TRENDS_FILE
        write_atomic(target, trends_page(study, points, infos))
        pages[study] = target
    return pages


def _plain(value: Any) -> Any:
    if isinstance(value, str):
        return value
    try:
        return float(value)
    except (TypeError, ValueError):
        return str(value)


def trends_page(study: str, points: list[Point], infos: dict[tuple[str, str], RunInfo]) -> str:
    """The page of one study (escaped), its points oldest first."""
    order = list(dict.fromkeys(p.run_id for p in points))
    info = {r: infos.get((study, r), RunInfo("—", [], set(), False)) for r in order}
    metrics = list(dict.fromkeys(p.metric for p in points))
    panels = "".join(
        f"<h2>{_e(metric)}</h2>{panel_svg(mine, order, info)}{_legend(mine, info)}"
        for metric in metrics
        for mine in [[p for p in points if p.metric == metric]]
    )
    title = points[0].title if points else study
    return _PAGE.format(title=_e(title), study=_e(study), panels=panels,
                        table=_table(points, order, info), scroll_css=SCROLL_CSS)  # fmt: skip


# ------------------------------------------------------------------------------ drawing


def _e(value: Any) -> str:
    return html.escape(without_bidi_controls(str(value)), quote=True)


def _finite(values: list[float]) -> list[float]:
    return [v for v in values if isinstance(v, float) and math.isfinite(v)]


def _scale(points: list[Point]) -> tuple[float, float]:
    if points[0].kind == "binary":
        return 0.0, 1.0
    values = _finite([v for p in points for v in (p.low, p.high, p.estimate)]) or [0.0, 1.0]
    low, high = min(values), max(values)
    pad = (high - low) * 0.08 or 1.0
    return low - pad, high + pad


def _fmt(value: float, kind: str) -> str:
    if not math.isfinite(value):
        return "—"
    if kind == "binary":
        return f"{value:.0%}"
    return f"{value:.0f}" if kind == "rating" or abs(value) >= 100 else f"{value:.2f}"


def panel_svg(points: list[Point], order: list[str], info: dict[str, RunInfo]) -> str:
    """One metric's runs × systems chart (inline SVG)."""
    kind = points[0].kind
    low, high = _scale(points)
    place = {run: LEFT + (i + 0.5) * (WIDTH - LEFT - RIGHT) / len(order)
             for i, run in enumerate(order)}  # fmt: skip

    def y(value: float) -> float:
        return TOP + (high - value) / (high - low) * (HEIGHT - TOP - BOTTOM)

    shapes = _axes(low, high, kind, y) + _setup_rules(order, info, place)
    shapes += _run_labels(order, place, _started(points))
    lines = list(_series(points, info).items())
    nudges = _nudges([line for _, line in lines])
    for number, ((_, setup), line) in enumerate(lines):
        look = _look(number, _setups(points, info).index(setup))
        at = {p.run_id: place[p.run_id] + nudges[number, p.run_id] for p in line}
        shapes += _line(line, look, at, y, info)
    shapes += _alert_marks(order, info, place)
    return (f'<svg viewBox="0 0 {WIDTH} {HEIGHT}" width="100%" role="img" '
            f'class="trend">{"".join(shapes)}</svg>')  # fmt: skip


def _series(points: list[Point], info: dict[str, RunInfo]) -> dict[tuple[str, str], list[Point]]:
    """The points of each line: (system, setup) -> its runs, oldest first."""
    lines: dict[tuple[str, str], list[Point]] = {}
    for p in points:
        lines.setdefault((p.system, info[p.run_id].setup), []).append(p)
    return lines


def _nudges(lines: list[list[Point]]) -> dict[tuple[int, str], float]:
    """(series number, run) -> pixels its point moves sideways: the series with a point in a
    run side by side, centred on the run (equal values and intervals stay apart)."""
    present: dict[str, list[int]] = {}
    for number, line in enumerate(lines):
        for p in line:
            present.setdefault(p.run_id, []).append(number)
    return {(number, run): DODGE * (k - (len(numbers) - 1) / 2)
            for run, numbers in present.items() for k, number in enumerate(numbers)}  # fmt: skip


def _setups(points: list[Point], info: dict[str, RunInfo]) -> list[str]:
    return list(dict.fromkeys(info[p.run_id].setup for p in points))


class Look(NamedTuple):
    """How one series is drawn."""

    number: int
    color: str
    marker: str
    dash: str


def _look(number: int, setup: int) -> Look:
    """Series ``number``'s colour and marker (its own while there are eight or fewer; past
    that a colour comes back with another marker) and its setup's dash."""
    color = OKABE_ITO[number % len(OKABE_ITO)]
    marker = MARKERS[(number + number // len(OKABE_ITO)) % len(MARKERS)]
    return Look(number, color.lower(), marker, DASHES[setup % len(DASHES)])


def _started(points: list[Point]) -> dict[str, str]:
    """Each run's start as the axis shows it: ``YYYY-MM-DD HH:MM`` (UTC), with the seconds
    when two runs started in the same minute."""
    starts = {p.run_id: p.started_at.replace("T", " ") for p in points}
    minutes = [start[:16] for start in starts.values()]
    cut = 16 if len(set(minutes)) == len(minutes) else 19
    return {run: start[:cut] for run, start in starts.items()}


_UNIT_SHAPES: dict[str, list[tuple[float, float]]] = {
    "s": [(-0.85, -0.85), (0.85, -0.85), (0.85, 0.85), (-0.85, 0.85)],
    "^": [(0, -1), (1, 0.8), (-1, 0.8)],
    "D": [(0, -1.2), (1, 0), (0, 1.2), (-1, 0)],
    "v": [(0, 1), (1, -0.8), (-1, -0.8)],
    "P": [(-0.35, -1), (0.35, -1), (0.35, -0.35), (1, -0.35), (1, 0.35), (0.35, 0.35),
          (0.35, 1), (-0.35, 1), (-0.35, 0.35), (-1, 0.35), (-1, -0.35), (-0.35, -0.35)],
    "X": [(-0.75, -1), (0, -0.25), (0.75, -1), (1, -0.75), (0.25, 0), (1, 0.75), (0.75, 1),
          (0, 0.25), (-0.75, 1), (-1, 0.75), (-0.25, 0), (-1, -0.75)],
    "*": [(round(math.sin(k * math.pi / 5) * (1.2 if k % 2 == 0 else 0.5), 3),
           round(-math.cos(k * math.pi / 5) * (1.2 if k % 2 == 0 else 0.5), 3))
          for k in range(10)],
}  # fmt: skip
"""Each marker but the circle as a polygon around (0, 0), radius about 1."""


def marker_path(marker: str, x: float, y: float, r: float = MARKER_R) -> str:
    """The SVG path data of ``marker`` (a :data:`evalbench.look.MARKERS` code) at (x, y)."""
    if marker not in _UNIT_SHAPES:  # "o"
        return f"M{x - r:.1f},{y:.1f} a{r},{r} 0 1,0 {2 * r},0 a{r},{r} 0 1,0 {-2 * r},0 Z"
    corners = " L".join(f"{x + dx * r:.1f},{y + dy * r:.1f}" for dx, dy in _UNIT_SHAPES[marker])
    return f"M{corners} Z"


def _axes(low: float, high: float, kind: str, y: Any) -> list[str]:
    out = [f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{HEIGHT - BOTTOM}" stroke="#999"/>']
    for i in range(5):
        value = low + (high - low) * i / 4
        at = y(value)
        out.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{at:.1f}" y2="{at:.1f}" '
                   f'stroke="#eee"/><text x="{LEFT - 6}" y="{at + 4:.1f}" text-anchor="end" '
                   f'font-size="11">{_e(_fmt(value, kind))}</text>')  # fmt: skip
    return out


def _setup_rules(order: list[str], info: dict[str, RunInfo], place: dict[str, float]) -> list[str]:
    out = []
    for before, run in itertools.pairwise(order):
        if info[run].setup != info[before].setup:
            at = (place[before] + place[run]) / 2
            out.append(f'<line x1="{at:.1f}" x2="{at:.1f}" y1="{TOP}" y2="{HEIGHT - BOTTOM}" '
                       f'stroke="#888" stroke-dasharray="4 4" class="setup"><title>setup changed: '
                       f"{_e(info[run].setup)}</title></line>")  # fmt: skip
    return out


def _run_labels(order: list[str], place: dict[str, float], started: dict[str, str]) -> list[str]:
    """Each run's start date under the axis (every k-th past :data:`MAX_LABELS`, the last
    run always, never two closer than k runs), and the axis title."""
    every = max(1, math.ceil(len(order) / MAX_LABELS))
    last, labelled = len(order) - 1, list(range(0, len(order), every))
    if labelled and labelled[-1] != last:
        if last - labelled[-1] < every:  # the last run's label instead of one too near it
            labelled.pop()
        labelled.append(last)
    base = HEIGHT - BOTTOM + 14
    labels = [
        f'<text x="{place[run]:.1f}" y="{base}" font-size="10" text-anchor="end" class="date" '
        f'transform="rotate(-30 {place[run]:.1f} {base})">{_e(started.get(run) or run[:8])}</text>'
        for run in (order[i] for i in labelled)
    ]
    middle = (LEFT + WIDTH - RIGHT) / 2
    return [*labels, f'<text x="{middle:.1f}" y="{HEIGHT - 4}" font-size="11" '
                     'text-anchor="middle">run started (UTC)</text>']  # fmt: skip


def _line(line: list[Point], look: Look, place: dict[str, float], y: Any,
          info: dict[str, RunInfo]) -> list[str]:  # fmt: skip
    shown = [p for p in line if math.isfinite(p.estimate)]
    color, dash = look.color, look.dash
    out = []
    for piece in _pieces(line):  # a run with no result breaks the line: nothing to join
        path = " ".join(f"{place[p.run_id]:.1f},{y(p.estimate):.1f}" for p in piece)
        out.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2" '
                   f'stroke-dasharray="{dash}" class="series"/>')  # fmt: skip
    for p in shown:
        px = place[p.run_id]
        tip = f"{p.system} · {info[p.run_id].setup} · run {p.run_id}: {_value(p)}"
        if math.isfinite(p.low) and math.isfinite(p.high):
            out.append(f'<line x1="{px:.1f}" x2="{px:.1f}" y1="{y(p.low):.1f}" '
                       f'y2="{y(p.high):.1f}" stroke="{color}"/>')  # fmt: skip
        ring = (p.system, p.metric) in info[p.run_id].drops
        shape = marker_path(look.marker, px, y(p.estimate))
        out.append(f'<path data-series="{look.number}" fill="{color}" d="{shape}" '
                   f'data-marker="{_e(look.marker)}"'
                   + (' stroke="#d00" stroke-width="3" class="alerted"' if ring else "")
                   + f"><title>{_e(tip)}</title></path>")  # fmt: skip
    return out


def _pieces(line: list[Point]) -> list[list[Point]]:
    """The runs of consecutive points with a number, two points or more each."""
    pieces: list[list[Point]] = [[]]
    for p in line:
        if math.isfinite(p.estimate):
            pieces[-1].append(p)
        elif pieces[-1]:
            pieces.append([])
    return [piece for piece in pieces if len(piece) > 1]


def _value(p: Point) -> str:
    """A point's value with its interval, or "no result" (a system that measured nothing)."""
    if not math.isfinite(p.estimate):
        return "no result (nothing measured)"
    return f"{_fmt(p.estimate, p.kind)} [{_fmt(p.low, p.kind)}, {_fmt(p.high, p.kind)}]"


def _alert_marks(order: list[str], info: dict[str, RunInfo], place: dict[str, float]) -> list[str]:
    return [
        f'<text x="{place[run]:.1f}" y="{TOP - 8}" fill="#d00" font-weight="bold" '
        f'font-size="16" text-anchor="middle" class="alert">!<title>'
        f"{_e('; '.join(info[run].alerts))}</title></text>"
        for run in order
        if info[run].alerts
    ]


def _legend(points: list[Point], info: dict[str, RunInfo]) -> str:
    """A line per series: its colour, dash and marker, system and setup."""
    items = []
    for number, (system, setup) in enumerate(_series(points, info)):
        look = _look(number, _setups(points, info).index(setup))
        key = (
            f'<svg width="30" height="12" aria-hidden="true"><line x1="1" x2="29" y1="6" '
            f'y2="6" stroke="{look.color}" stroke-width="2" stroke-dasharray="{look.dash}"/>'
            f'<path fill="{look.color}" d="{marker_path(look.marker, 15, 6, 4)}"/></svg>'
        )
        items.append(f"<li>{key} {_e(system)} · {_e(setup)}</li>")
    return f'<ul class="legend">{"".join(items)}</ul>'


def _table(points: list[Point], order: list[str], info: dict[str, RunInfo]) -> str:
    shown = order[-MAX_TABLE_ROWS:]
    by_run: dict[str, list[Point]] = {}
    for p in points:
        by_run.setdefault(p.run_id, []).append(p)
    body = []
    for run in reversed(shown):
        mine = by_run[run]
        links = '<a href="' + _e(f"{run}/report.html") + '">report</a>'
        if info[run].summary:
            links += ' · <a href="' + _e(f"{run}/summary.html") + '">summary</a>'
        values = "<br>".join(f"{_e(p.system)} {_e(p.metric)}: {_e(_value(p))}" for p in mine)
        alerts = "<br>".join(_e(a) for a in info[run].alerts) or "—"
        body.append(f"<tr><td>{_e(mine[0].started_at[:16].replace('T', ' '))}</td>"
                    f"<td>{_e(run)}<div class='id'>{links}</div></td><td>{_e(info[run].setup)}"
                    f"</td><td>{values}</td><td class='warn'>{alerts}</td></tr>")  # fmt: skip
    if len(order) > len(shown):
        body.append(f"<tr><td colspan='5' class='id'>and {len(order) - len(shown)} older runs"
                    "</td></tr>")  # fmt: skip
    return "".join(body)


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Trends — {title}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em; color: #222; }}
table {{ border-collapse: collapse; width: 100%; }}
th, td {{ border-bottom: 1px solid #ddd; padding: 6px 10px; text-align: left;
  vertical-align: top; }}
th {{ background: #f4f4f4; }}
h1, td:first-child, ul.legend li {{ overflow-wrap: anywhere; }}
.id {{ color: #888; font-size: 0.8em; }}
.warn {{ color: #b00020; }}
svg.trend {{ max-width: 60em; display: block; }}
ul.legend {{ list-style: none; padding: 0; font-size: 0.9em; }}
ul.legend svg {{ vertical-align: middle; }}
{scroll_css}</style></head><body>
<p><a href="../index.html">← all studies</a></p>
<h1>Trends — {title}</h1>
<p>Study <code>{study}</code>: each headline over its ok runs, oldest first, with its 95%
interval, under the date each run started. One line per system and setup (the run's
<code>-p</code> overrides other than <code>tag=</code>, a short hash of its params as resolved,
and its code commit), each with its own colour and marker: runs made differently are never
joined, and a dashed rule marks each run whose setup differs from the run before. A system
that measured nothing in a run (every call failed) has no point there. Alerts that fired: a
red ring on the point (a metric's drop) and a red "!" over the run (any alert).</p>
{panels}
<h2>Runs</h2>
<div class="evalbench-scroll"><table><thead><tr><th>started (UTC)</th><th>run</th><th>setup</th>
<th>headline [95% interval]</th><th>alerts fired</th></tr></thead><tbody>{table}</tbody></table>
</div>
</body></html>
"""
