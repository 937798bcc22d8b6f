"""The summary page: :class:`~.facts.Facts` in plain words, one escaped, offline HTML page.

No test statistics and no jargon: an interval is "likely between", a real change is "not
chance". Each headline element carries its exact numbers (``data-estimate``, ``data-low``,
``data-high``) so a test can hold them against the full report's.
"""

from __future__ import annotations

import html
import re
from typing import Any

from evalbench.alerts.shown import shown
from evalbench.findings import safe_html
from evalbench.look import SCROLL_CSS
from evalbench.measured import from_rows, identical_text, reasons_text, truncated_text, why
from evalbench.textparse import without_bidi_controls

from .facts import Change, Facts, Headline, Risk, number

METRIC_WORDS = {
    "accuracy": "tasks answered correctly",
    "win share": "share of head-to-head comparisons won (a tie counts half)",
    "judge quality (1-5)": "average quality a judge gave the generated problems (1 to 5)",
}
"""Plain words for the headline metrics that have them (others are named as they are)."""
JARGON = re.compile(
    r"\s*\([^)]*(?:Holm|Wilson|bootstrap|McNemar|Wilcoxon|Benjamini|p\s*[<=]|\d+% )[^)]*\)",
    re.IGNORECASE,
)
"""A parenthesis of test names or levels in a study's own headline label (left out here)."""

TIER_WORDS = {
    "quick": " (a quick sample: about 10% of the tasks)",
    "standard": " (a standard sample: about 30% of the tasks)",
}


def e(value: object) -> str:
    """HTML-escaped text."""
    return html.escape(without_bidi_controls(str(value)), quote=True)


def plain(label: str) -> str:
    """A study's headline label without its parenthesised test names."""
    return JARGON.sub("", label).strip()


def metric_words(metric: str) -> str:
    """What a metric measures, in plain words."""
    if metric in METRIC_WORDS:
        return METRIC_WORDS[metric]
    if within := re.fullmatch(r"within ±(\S+) \((.+)\)", metric):
        return (f"share of items where the judge's {within[2]} score was within "
                f"{within[1]} point(s) of the human score")  # fmt: skip
    if metric.startswith("rating ("):
        return f"rating from head-to-head comparisons, {metric[8:-1]} (higher is better)"
    if metric.startswith("abs error"):
        return f"average distance from the human score, {metric[10:].strip('()')} (lower is better)"
    return metric


def summary_html(facts: Facts) -> str:
    """The whole page."""
    body = "".join([
        _head(facts), _found(facts), _measured(facts), _results(facts), _changes(facts),
        _costs(facts), _risks(facts), _foot(facts),
    ])  # fmt: skip
    return _PAGE.format(title=e(facts.title), body=body)


def problem_html(problem: str) -> str:
    """The page when the run could not be summarized: why, and the full report."""
    body = (f"<h1>Summary not available</h1><p>{e(problem)}</p>"
            '<p><a href="report.html">The full report</a> has the results.</p>')  # fmt: skip
    return _PAGE.format(title="summary not available", body=body)


def no_result_html(manifest: dict[str, Any]) -> str:
    """The report of a study that stopped with nothing measured (``NoResult``): what was
    asked, the counts and reasons per system, the calls (failed, truncated)."""
    title = str(manifest.get("title") or manifest.get("study") or "evalbench run")
    reason = str(manifest.get("no_result") or "no result")
    rows = "".join(
        f"<tr><td>{e(m.system)}</td><td>{m.scored:,d} of {m.total:,d} {e(m.unit)}s</td>"
        f"<td>{e(reasons_text(m.unscored) or '—')}</td></tr>"
        for m in from_rows(manifest.get("measured"))
    )
    sim = ""
    if manifest.get("simulated"):
        names = ", ".join(str(n) for n in manifest.get("simulated_names") or [])
        sim = f'<p class="sim">Simulated: {e(names)} came from evalbench\'s simulator.</p>'
    body = (
        f'<h1>{e(title)}</h1><p class="meta">Run {e(manifest.get("study", ""))}/'
        f"{e(manifest.get('run_id', ''))}</p>{sim}"
        f'<p class="warn"><b>No result.</b> {e(why(reason))}.</p>'
        "<p>The study stopped before its analysis: nothing was measured, so there is no "
        "number to report. What each system was asked, and why no item was scored:</p>"
        '<div class="evalbench-scroll"><table><thead><tr><th>system</th><th>scored</th>'
        f"<th>why not</th></tr></thead><tbody>{rows}</tbody></table></div>"
        f"{_calls_table(manifest)}"
        '<p class="foot"><a href="../../index.html">All studies</a>.</p>'
    )
    return _PAGE.format(title=e(title), body=body)


def _calls_table(manifest: dict[str, Any]) -> str:
    usage = [u for u in manifest.get("usage") or [] if isinstance(u, dict)]
    if not usage:
        return "<p>No model call was recorded.</p>"
    rows = "".join(
        f"<tr><td>{e(u.get('system'))}</td><td>{int(u.get('calls') or 0):,d}</td>"
        f"<td>{int(u.get('errors') or 0):,d}</td>"
        f"<td>{e(reasons_text(u.get('error_reasons') or {}) or '—')}</td>"
        f"<td>{int(u.get('truncated') or 0):,d}</td></tr>"
        for u in usage
    )
    return ('<h2>Model calls</h2><div class="evalbench-scroll"><table><thead><tr><th>system'
            "</th><th>calls</th><th>failed</th><th>why</th><th>truncated</th></tr></thead>"
            f"<tbody>{rows}</tbody></table></div>")  # fmt: skip


def _head(facts: Facts) -> str:
    sim = ""
    if facts.simulated:
        names = ", ".join(sorted(facts.simulated))
        sim = (
            f'<p class="sim">Simulated: {e(names)} came from evalbench\'s simulator, not real '
            "models. The numbers show how the method works, not how good any model is.</p>"
        )
    none = f'<p class="warn"><b>No result.</b> {e(why(facts.no_result))}.</p>'
    none = none if facts.no_result else ""
    return (
        f'<h1>{e(facts.title)}</h1><p class="meta">One-page summary of run '
        f'{e(facts.study)}/{e(facts.run_id)} · <a href="report.html">full report</a></p>{sim}'
        f"{none}"
    )


def _found(facts: Facts) -> str:
    """The study's own key result and caveats, as its report opens (none when the run has no
    result: the notice above says why)."""
    found = facts.findings
    if found is None or facts.no_result:
        return ""
    text = f"<h2>What the study found</h2><p>{safe_html(found.key_result)}</p>"
    if found.caveats:
        text += f'<p class="warn"><b>Read with care:</b> {safe_html(found.caveats[0])}</p>'
    if len(found.caveats) > 1:
        text += "<ul>" + "".join(f"<li>{safe_html(c)}</li>" for c in found.caveats[1:]) + "</ul>"
    return text


def _measured(facts: Facts) -> str:
    tier = TIER_WORDS.get(facts.tier, "")
    size = f"{facts.items:,d} task{'' if facts.items == 1 else 's'}{tier}" if facts.items else ""
    count = len(facts.systems)
    systems = f"{count} system{'' if count == 1 else 's'}: {', '.join(facts.systems)}"
    shape = "; ".join(part for part in (size, systems if count else "") if part)
    judges = f"Judges and graders (not rated): {', '.join(facts.judges)}." if facts.judges else ""
    metrics = list(dict.fromkeys(h.metric for h in facts.headlines if h.kind != "text"))
    what = "".join(f"<li>{e(m)}: {e(metric_words(m))}</li>" for m in metrics)
    return (
        "<h2>What was measured</h2>"
        + (f"<p>{e(facts.description)}</p>" if facts.description else "")
        + (f"<p>{e(shape)}.</p>" if shape else "")
        + (f"<p>{e(judges)}</p>" if judges else "")
        + (f"<ul>{what}</ul>" if what else "")
        + _scored(facts)
    )


def _scored(facts: Facts) -> str:
    """Per system: items scored of items asked (and why not), outputs truncated, identical
    attempts; every system with calls shows its truncated count, 0 included."""
    lines: dict[str, list[str]] = {}
    for m in facts.measured:
        because = f" ({reasons_text(m.unscored)})" if m.scored < m.total else ""
        unit = m.unit if m.total == 1 else f"{m.unit}s"
        lines.setdefault(m.system, []).append(
            f"{m.scored:,d} of {m.total:,d} {unit} scored{because}"
        )
        if identical_text(m):  # with several attempts per item
            lines[m.system].append(identical_text(m))
    for system, cut, calls in facts.truncated:
        lines.setdefault(system, []).append(truncated_text(cut, calls))
    items = "".join(f"<li><b>{e(k)}</b>: {e('; '.join(v))}</li>" for k, v in lines.items())
    return f'<ul class="scored">{items}</ul>' if items else ""


def _results(facts: Facts) -> str:
    if facts.findings is not None and all(h.kind == "text" for h in facts.headlines):
        return ""  # the index's bare numbers: the study's key result says them in words
    items = "".join(_headline(h) for h in facts.headlines) or "<li>No results.</li>"
    note = ""
    if any(h.kind != "text" for h in facts.headlines):
        note = (f'<p class="meta">"Likely between" is a range that holds the true value '
                f"{facts.level:.0%} of the time, given how many tasks were run.</p>")  # fmt: skip
    return f'<h2>Results</h2><ul class="cards">{items}</ul>{note}'


def _headline(h: Headline) -> str:
    if h.kind == "text":
        who = (
            f"<b>{e(h.system)}</b> — {e(plain(h.metric))}"
            if h.system
            else f"<b>{e(plain(h.metric))}</b>"
        )
        return f"<li>{who}: {e(h.text)}</li>"
    unit = "tasks" if h.kind != "rating" else "comparisons"
    value = (
        f"<b>about {e(number(h.estimate, h.kind))}</b>, likely between "
        f"{e(number(h.low, h.kind))} and {e(number(h.high, h.kind))}"
    )
    if h.kind == "rating" and h.low == h.high == h.estimate:
        value = (
            f"<b>fixed at {e(number(h.estimate, h.kind))}</b>, the anchor the other "
            "ratings are measured from (so it has no range)"
        )
    numbers = (f'data-system="{e(h.system)}" data-metric="{e(h.metric)}" '
               f'data-estimate="{h.estimate!r}" data-low="{h.low!r}" data-high="{h.high!r}" '
               f'data-n="{h.n}"')  # fmt: skip
    return (
        f'<li class="headline" {numbers}><b>{e(h.system)}</b> — {e(h.metric)}: '
        f"{value} ({h.n:,d} {unit})</li>"
    )


def _changes(facts: Facts) -> str:
    if facts.changes:
        rows = "".join(_change(c) for c in facts.changes)
        against = (f"<p>Compared with {e(facts.baseline)} ({e(facts.baseline_is)}), task by "
                   "task.</p>") if facts.baseline else ""  # fmt: skip
        text = f'{against}<ul class="cards">{rows}</ul>'
    elif facts.change_problem:
        text = f"<p>Not compared: {e(facts.change_problem)}.</p>"
    else:
        text = (f"<p>Nothing to compare with yet: {e(facts.baseline_is or 'no baseline')}. "
                "Pin a good run as the baseline with <code>evalbench compare --pin RUN</code>."
                "</p>")  # fmt: skip
    alerts = ""
    if facts.alerts:
        places = sorted({f"{a.get('rule')}: {a.get('system')}" for a in facts.alerts})
        rules = "".join(f"<li>{e(line)}</li>" for line in shown(places))
        count = f"{len(places)}"  # a line per rule and system; its slices are counted apart
        if len(facts.alerts) > len(places):
            count += f"; {len(facts.alerts)} places counting each slice"
        alerts = f'<p class="warn">Alerts fired ({count}):</p><ul>{rules}</ul>'
    return f"<h2>Change since the baseline</h2>{text}{alerts}"


def _change(c: Change) -> str:
    if c.change == 0:
        moved = "no change"
    else:
        better = (c.change > 0) == c.higher_is_better
        moved = f"{'up' if c.change > 0 else 'down'} {_amount(c.change, c.kind)} " + (
            "(better)" if better else "(worse)"
        )
    verdict = (
        "Real: a change this large is not chance."
        if c.real
        else "Could be chance: two runs of an unchanged system can differ this much."
    )
    return (
        f'<li class="change"><b>{e(c.system)}</b> — {e(c.metric)}: {e(moved)}, from '
        f"{e(number(c.before, c.kind))} to {e(number(c.after, c.kind))} on {c.n:,d} tasks "
        f"(the change is likely between {e(_signed(c.low, c.kind))} and "
        f'{e(_signed(c.high, c.kind))}). <span class="{"warn" if c.real else "meta"}">'
        f"{e(verdict)}</span></li>"
    )


def _amount(value: float, kind: str) -> str:
    return f"{abs(value) * 100:.0f} points" if kind == "binary" else f"{abs(value):.2f}"


def _signed(value: float, kind: str) -> str:
    if value != value:
        return "—"
    return f"{value * 100:+.0f} points" if kind == "binary" else f"{value:+.2f}"


def _costs(facts: Facts) -> str:
    if facts.findings is not None and facts.findings.cost:
        return f"<h2>Cost</h2><p>{safe_html(facts.findings.cost)}</p>"
    if not facts.costs:
        return "<h2>Cost</h2><p>No model calls were recorded in this run.</p>"
    items = []
    for system, per_task, total in facts.costs:
        if total == 0:
            why = "simulated" if system in facts.simulated else "unpriced, or answered from cache"
            text = f"no recorded cost ({why})"
        else:
            per = f"${per_task:.4f} per task, " if per_task is not None else ""
            text = f"{per}${total:.2f} in all"
        items.append(f"<li><b>{e(system)}</b>: {e(text)}</li>")
    return f"<h2>Cost</h2><ul>{''.join(items)}</ul>"


MAX_RISKS = 4
"""The study's own risks first, then the failure kinds, this many in all."""


def _risks(facts: Facts) -> str:
    own = list(facts.findings.risks) if facts.findings and not facts.no_result else []
    if not facts.risks and not own and not facts.headlines:  # nothing measured: nothing seen
        return "<h2>Top risks</h2><p>None to show: nothing was measured.</p>"
    if not facts.risks and not own and facts.kind == "sweep":  # its own counts are cells'
        return ("<h2>Top risks</h2><p>Every cell ended ok; what failed inside a cell (calls, "
                "answers) is in that cell's own report.</p>")  # fmt: skip
    if not facts.risks and not own:
        return "<h2>Top risks</h2><p>No failures of any kind were recorded.</p>"
    items = [f"<li>{safe_html(r)}</li>" for r in own[:MAX_RISKS]]
    items += [_risk(r) for r in facts.risks[: max(0, MAX_RISKS - len(items))]]
    return "<h2>Top risks</h2><ol>" + "".join(items) + "</ol>"


def _risk(r: Risk) -> str:
    shown = r.marked or e(r.example)
    sample = f'<div class="example">Example: {shown}</div>' if r.example else ""
    return f"<li><b>{e(r.title)}</b>: {e(r.detail)}.{sample}</li>"


def _foot(facts: Facts) -> str:
    return (
        '<p class="foot"><a href="report.html">The full report</a> has every number, how it was '
        'computed, and the details. <a href="../../index.html">All studies</a>.</p>'
    )


_PAGE = (
    """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Summary — {title}</title>
<style>
body {{ font-family: system-ui, sans-serif; color: #222; line-height: 1.5; margin: 0; }}
main {{ max-width: 52em; margin: 0 auto; padding: 1.5em; overflow-wrap: anywhere; }}
h1 {{ font-size: 1.6em; margin-bottom: 0.2em; }}
h2 {{ font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ddd; }}
ul.cards {{ list-style: none; padding: 0; }}
ul.cards li {{ border: 1px solid #ddd; border-radius: 6px; padding: 0.6em 0.9em;
  margin: 0.5em 0; }}
.meta {{ color: #666; font-size: 0.9em; }}
.sim {{ background: #fff4ce; border: 1px solid #e0b000; border-radius: 6px;
  padding: 0.5em 0.9em; }}
.warn {{ color: #b00020; }}
.example {{ color: #444; font-size: 0.92em; margin-top: 0.2em; }}
code {{ white-space: normal; }}
table {{ border-collapse: collapse; }}
th, td {{ border-bottom: 1px solid #ddd; padding: 4px 8px; text-align: left; }}
"""
    + SCROLL_CSS.replace("{", "{{").replace("}", "}}")
    + """</style></head><body><main>
{body}
</main></body></html>
"""
)
