"""What notebooks show: escaped tables and text, the run header, the "simulated" banner.

Model, judge and dataset text is untrusted: everything here HTML-escapes it, so a model
answer containing ``<script>`` shows as text in the report and never runs. Notebooks use
these helpers instead of ``Styler`` (which does not escape) or raw ``HTML(...)``.
"""

from __future__ import annotations

import html
import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from evalbench.findings import Findings
from evalbench.measured import (
    Measured,
    identical_text,
    no_result_text,
    nothing_measured,
    reasons_text,
    truncated_text,
    why,
)
from evalbench.models import ModelSpec, local
from evalbench.runs import Run
from evalbench.textparse import without_bidi_controls

_BANNER_STYLE = (
    "padding:8px 12px;border-radius:6px;margin:6px 0;font-weight:600;"
    "background:#fff4ce;border:1px solid #e0b000;color:#5a4300"
)


def _display(html_text: str) -> None:
    from IPython.display import HTML, display

    display(HTML(html_text))


def escape(value: Any) -> str:
    """HTML-escape any value's ``str`` (quotes included)."""
    return html.escape(without_bidi_controls(str(value)), quote=True)


def header(run: Run, result: Any = None) -> None:
    """Title, description, run id and — when any system is simulated — a clear banner; with
    the study's ``result``, what was measured (:func:`measured_html`) and what the study
    found (:func:`findings_html`): the report opens with the same sentences as the summary."""
    p = run.params
    parts = [f"<h1>{escape(p.title)}</h1>"]
    if p.description:
        parts.append(f"<p>{escape(p.description)}</p>")
    parts.append(
        f"<p><small>run <code>{escape(run.run_id)}</code> · params "
        f"<code>{escape(run.params_file.name)}</code> · seed {p.seed} · "
        f"intervals at {p.confidence_level:.0%} · cache mode {escape(p.cache)}</small></p>"
    )
    local_line = local_models_line(p.model_specs())
    if local_line:
        parts.append(local_line)
    if run.simulated:
        names = ", ".join(s.name for s in p.model_specs() if s.simulated)
        parts.append(
            banner(
                f"SIMULATED — produced by the offline sim provider ({names}); "
                "not measurements of real models."
            )
        )
    if result is not None and run.summarize is not None:
        summary = run.summarize(result)
        limits = {s.name: s.max_tokens for s in p.model_specs() if s.max_tokens is not None}
        contexts = {s.name: s.local.n_ctx for s in p.model_specs() if s.local is not None}
        parts.append(measured_html(summary.measured or [], run.recorded_usage(), limits, contexts))
        if summary.findings is not None:
            parts.append(findings_html(summary.findings))
    _display("\n".join(parts))


def local_models_line(specs: Sequence[ModelSpec]) -> str:
    """One line per local model file the study's systems are served from: the file, its
    sha256, the engine and its version, context size and chat format, and the systems it
    serves (``""`` when no system is local). What the manifest records, in the header."""
    served: dict[tuple[Any, ...], list[str]] = {}
    for spec in specs:
        if spec.local is not None:
            path, found = local.model_path(spec.local), local.fingerprint(spec)
            name = path.name if path else spec.local.model_file or local.SMOLLM2_FILE
            key = (name, found["model_sha256"] or "unknown: the file is not here",
                   found["engine"], found["engine_version"] or "(not installed here)",
                   found["n_ctx"], found["chat_format"] or "the model file's template")  # fmt: skip
            served.setdefault(key, []).append(spec.name)
    return "\n".join(
        f"<p><small>local model <code>{escape(name)}</code> (sha256 <code>{escape(sha)}</code>) "
        f"served by {escape(engine)} {escape(version)} · n_ctx {n_ctx} · chat format: "
        f"{escape(form)} — {escape(', '.join(names))}</small></p>"
        for (name, sha, engine, version, n_ctx, form), names in served.items()
    )


def findings_html(findings: Findings) -> str:
    """What the study found, as its report opens with it: the key result in plain words, the
    report's technical key sentence, the caveats and the risks (the same sentences the
    summary page carries; each already escaped where it was written)."""
    parts = [f"<p><b>What the study found.</b> {findings.key_result}</p>", findings.detail]
    if findings.cost:
        parts.append(f"<p><b>Cost.</b> {findings.cost}</p>")
    for title, items in (("Read with care", findings.caveats), ("Risks", findings.risks)):
        if items:
            rows = "".join(f"<li>{item}</li>" for item in items)
            parts.append(f"<p><b>{title}:</b></p><ul>{rows}</ul>")
    return '<div class="evalbench-findings">' + "".join(parts) + "</div>"


_WARN_STYLE = (
    "padding:8px 12px;border-radius:6px;margin:6px 0;font-weight:600;"
    "background:#fde7e9;border:1px solid #b00020;color:#7a0016"
)


def warning(message: str) -> str:
    """An escaped red notice: a result that is not one, or a number to read with care."""
    return f'<div class="evalbench-warning" style="{_WARN_STYLE}">{escape(message)}</div>'


def measured_html(
    rows: Sequence[Measured], usage: pd.DataFrame, limits: Mapping[str, int] | None = None,
    contexts: Mapping[str, int] | None = None,
) -> str:  # fmt: skip
    """What the headlines stand on, for every report alike: a red notice when nothing was
    measured, for each system that measured nothing, for outputs cut at ``max_tokens``
    (``limits``: each system's, as its params set it; ``contexts``: a local model's ``n_ctx``,
    where the cut came from when prompt and answer filled it) and for repeated attempts that
    were identical; then one line per system: items scored of items asked, and why not."""
    limits, contexts = limits or {}, contexts or {}
    notes = []
    if nothing_measured(rows):
        notes.append(f"NO RESULT — {why(no_result_text(rows))}. Nothing below is a measurement.")
    else:
        notes += [f"NO RESULT for {m.system} — {why(no_result_text([m]))}." for m in rows
                  if not m.scored]  # fmt: skip
    cut = [r for r in usage.itertuples() if getattr(r, "truncated", 0)] if len(usage) else []
    if cut:
        each = "; ".join(
            f"{r.system}: {truncated_text(int(r.truncated), int(getattr(r, 'outputs', r.calls)))}"
            + (f" at max_tokens {limits[r.system]}" if r.system in limits else "")
            + _at_context(r, contexts)
            for r in cut
        )
        notes.append(f"TRUNCATED — {each}: those outputs end where the limit cut them.")
    same = [m for m in rows if m.identical]
    if same:
        each = "; ".join(f"{m.system}: {identical_text(m)}" for m in same)
        notes.append(
            f"IDENTICAL ATTEMPTS — {each}: attempts that are not independent (temperature 0, "
            "a deterministic system) are one try repeated, and pass@k of those items is pass@1."
        )
    lines = "; ".join(
        f"{m.system} {m.scored:,d} of {count(m.total, m.unit)}"
        + (f" ({reasons_text(m.unscored)})" if m.scored < m.total else "")
        for m in rows
    )  # fmt: skip
    scored = f"<p><small>Scored: {escape(lines)}.</small></p>" if lines else ""
    return "".join(warning(n) for n in notes) + scored


def banner(message: str) -> str:
    """An escaped, highlighted one-line notice (returned as HTML)."""
    return f'<div class="evalbench-banner" style="{_BANNER_STYLE}">{escape(message)}</div>'


def notice(message: str) -> None:
    """Show :func:`banner` now."""
    _display(banner(message))


def table(
    df: pd.DataFrame,
    caption: str | None = None,
    *,
    digits: int = 3,
    index: bool = False,
    max_rows: int = 200,
) -> None:
    """Show a DataFrame as an escaped HTML table.

    Floats are rounded to ``digits``, integers get thousands separators, missing values show
    as "—", numeric columns are right-aligned and text columns left-aligned; a wide table
    scrolls sideways, in a report inside a box no taller than the window (its header stays).
    """
    _display(table_block(df, caption, digits=digits, index=index, max_rows=max_rows))


def table_block(
    df: pd.DataFrame,
    caption: str | None = None,
    *,
    digits: int = 3,
    index: bool = False,
    max_rows: int = 200,
) -> str:
    """The HTML :func:`table` shows, returned: the escaped caption in bold, the table and,
    past ``max_rows``, a line saying how many rows are left out. A ``report.py`` section
    that holds a table returns this."""
    shown = df.head(max_rows).reset_index() if index else df.head(max_rows)
    cap = f"<p><b>{escape(caption)}</b></p>" if caption else ""
    more = f"<p><small>first {max_rows} of {len(df)} rows</small></p>" if len(df) > max_rows else ""
    return cap + table_html(shown, digits=digits) + more


def table_html(df: pd.DataFrame, *, digits: int = 3) -> str:
    """The escaped HTML of :func:`table` (no caption)."""
    aligns = ["right" if _numeric(df[c]) else "left" for c in df.columns]
    head = "".join(
        f'<th style="text-align:{a}">{escape(c)}</th>'
        for c, a in zip(df.columns, aligns, strict=True)
    )
    counts = [not _LABEL_COLUMN.search(str(c)) for c in df.columns]
    body = "".join(
        "<tr>"
        + "".join(
            f'<td style="text-align:{a}">{escape(_cell(v, digits, count))}</td>'
            for v, a, count in zip(row, aligns, counts, strict=True)
        )
        + "</tr>"
        for row in df.itertuples(index=False, name=None)
    )
    return (
        '<div class="evalbench-scroll" style="overflow-x:auto"><table class="evalbench-table">'
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"
    )


def _numeric(column: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column)


_LABEL_COLUMN = re.compile(r"(?:^|_)(?:year|seed|id|index)$", re.IGNORECASE)
"""Integer columns that are labels, not counts: no thousands separators (2024, not 2,024)."""


def _cell(value: Any, digits: int, count: bool = True) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    if count and isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return f"{value:,d}"  # 179,031
    return str(value)


def _at_context(row: Any, contexts: Mapping[str, int]) -> str:
    at = int(getattr(row, "truncated_at_n_ctx", 0) or 0)
    if not at or row.system not in contexts:
        return ""
    return (f", {at:,d} of them at the context size (n_ctx {contexts[row.system]:,d}: the "
            "prompt left max_tokens no room)")  # fmt: skip


def usage(run: Run) -> None:
    """Model calls per system and judge: the whole study (all sessions), then this session.

    The study table sums the run's response records (so a resumed run still shows what
    the study used); the session table adds requests (retries included), latency
    percentiles and the reasons of permanent failures.
    """
    study = run.recorded_usage()
    if study.empty:
        text("<p>No model calls or agent tasks are recorded in this run.</p>")
        return
    study["error_reasons"] = [_reasons(r) for r in study["error_reasons"]]
    if not study["truncated_at_n_ctx"].any():  # only a local model's cut can be one
        study = study.drop(columns="truncated_at_n_ctx")
    table(
        study,
        "Model calls over the whole study: calls = answers recorded, cached = served from the "
        "response cache (no request, no cost), errors = permanent failures (error records, "
        "never scores), outputs = model outputs (one per call; an agent task's model steps), "
        "truncated = those cut at max_tokens (finish_reason=length), tokens as reported by "
        "the endpoint (the sim provider estimates 4 characters per token), cost in USD at "
        "the params' prices (0 when unpriced or simulated)",
        digits=4,
    )
    session = run.ledger.frame().drop(columns="simulated")
    if not session.empty:
        session["error_reasons"] = [_reasons(r) for r in session["error_reasons"]]
        table(
            session,
            "This session: requests = provider requests (retries included; 0 for a cache hit), "
            "latency percentiles in seconds, cost in USD",
            digits=4,
        )
    note = _session_note(run, set(session["system"]))
    if note:
        text("<p>{note}</p>", note=note)


def _session_note(run: Run, through_client: set[str]) -> str:
    """What this session did beyond the table of calls through evalbench's model client:
    agent tasks that made no such calls (simulated agents; users' agents, whose own calls
    are in the study table as they reported them), or nothing at all."""
    tasks = run.recorded_this_session("agent_runs")
    outside = {name: n for name, n in sorted(tasks.items()) if name not in through_client}
    if outside:
        simulated = [name for name in outside if name in run.simulated_names]
        listed = ", ".join(
            f"{name} ({n}{', simulated' if name in simulated else ''})"
            for name, n in outside.items()
        )
        why = []
        if simulated:
            why.append("a simulated agent calls no model")
        if len(simulated) < len(outside):
            why.append("a python or command agent calls its own models: its tokens and cost "
                       "are in the table above as it reported them")  # fmt: skip
        return (
            f"Agent tasks run this session outside evalbench's model client: {listed} "
            f"({'; '.join(why)})."
        )
    if through_client:
        return ""
    if not sum(run.recorded_this_session().values()):
        return (
            "Nothing was asked this session: every answer and agent task was already recorded "
            "in the run folder (a rerun asks only what is missing or failed)."
        )
    return "No model calls this session."


def _reasons(reasons: Mapping[str, int]) -> str:
    return ", ".join(f"{k} × {v}" for k, v in sorted(reasons.items())) or "—"


def fold_intervals(frame: pd.DataFrame, names: Sequence[str], *, digits: int = 3) -> pd.DataFrame:
    """For display: fold each ``name, name_low, name_high`` triple into one text column.

    ``0.929 [0.830, 0.972]``; a missing bound prints as ``—``, a missing estimate as ``—``
    alone. Other columns are unchanged.
    """
    out = frame.copy()

    def show(value: Any) -> str:
        return "—" if pd.isna(value) else f"{value:.{digits}f}"

    for name in names:
        out[name] = [
            "—" if pd.isna(e) else f"{show(e)} [{show(lo)}, {show(hi)}]"
            for e, lo, hi in zip(out[name], out[f"{name}_low"], out[f"{name}_high"], strict=True)
        ]
        out = out.drop(columns=[f"{name}_low", f"{name}_high"])
    return out


def count(n: Any, noun: str, plural: str | None = None) -> str:
    """``"1 step"``, ``"2 steps"``, ``"0 categories"``: ``n`` and the noun, plural unless
    ``n == 1`` (``plural``, else ``noun`` + "s", or "ies" for a consonant + "y")."""
    if n == 1:
        return f"{n} {noun}"
    if plural is None:
        consonant_y = noun.endswith("y") and noun[-2:-1] not in ("", *"aeiou")
        plural = noun[:-1] + "ies" if consonant_y else noun + "s"
    return f"{n} {plural}"


def percent(value: float | None, digits: int = 1) -> str:
    """``"36.1%"`` for 0.361; "—" for a missing value (None or NaN)."""
    if value is None or value != value:
        return "—"
    return f"{value:.{digits}%}"


def fill(template: str, **values: Any) -> str:
    """Trusted HTML ``template`` with escaped ``values`` filled in (returned, not shown).

    ``fill("<b>{name}</b> scored {acc:.1%}", name=system, acc=0.5)`` escapes ``name``. A
    benchmark's ``report.py`` builds its sentences with this; notebooks show them with
    :func:`show`.
    """
    safe = {k: _EscapedFormat(v) for k, v in values.items()}
    return template.format(**safe)


def text(template: str, **values: Any) -> None:
    """Show trusted prose (``template``, HTML allowed) with escaped ``values`` filled in."""
    _display(fill(template, **values))


def show(fragment: str) -> None:
    """Show HTML already escaped where it was made (a ``report.py`` sentence, a table)."""
    _display(fragment)


def system_kind(name: str, simulated: Collection[str], agent_provider: str | None = None) -> str:
    """How every report labels a system: ``simulated``, ``simulated agent``, ``agent
    (<provider>)``, ``reference agent, real model`` (evalbench's own agent) or ``real model``
    (``agent_provider``: the provider of an agent system)."""
    if name in simulated:
        return "simulated agent" if agent_provider else "simulated"
    if agent_provider == "agent":
        return "reference agent, real model"
    return f"agent ({agent_provider})" if agent_provider else "real model"


def failed_calls(usage: pd.DataFrame, system: str) -> str:
    """``"6 of 6 calls failed: http_401 × 6"`` for ``system`` (``""`` when none failed).

    Args:
        usage: :meth:`evalbench.runs.Run.recorded_usage` (calls, errors, error_reasons).
        system: the system or judge.
    """
    rows = usage[usage["system"] == system] if len(usage) else usage
    if not len(rows) or not int(rows["errors"].iloc[0]):
        return ""
    row = rows.iloc[0]
    reasons = _reasons(row["error_reasons"])
    return f"{int(row['errors'])} of {int(row['calls'])} calls failed: {reasons}"


def quote(value: Any, *, limit: int = 2000) -> str:
    """Untrusted text as an escaped ``<pre>`` block, clipped to ``limit`` characters.

    Nothing (``None`` or an empty string) shows as "—" so the layout around it holds.
    """
    raw = "" if value is None else str(value)
    if not raw.strip():
        return "<p>—</p>"
    clipped = raw if len(raw) <= limit else raw[:limit] + f" … [{len(raw) - limit} more chars]"
    return f'<pre style="white-space:pre-wrap">{escape(clipped)}</pre>'


def examples(rows: list[Mapping[str, Any]], fields: list[str], *, limit: int = 1200) -> None:
    """Show failure examples: one block per row, each field escaped and clipped."""
    blocks = []
    for row in rows:
        items = "".join(
            f"<dt>{escape(f)}</dt><dd>{quote(row.get(f), limit=limit)}</dd>" for f in fields
        )
        blocks.append(f"<dl>{items}</dl><hr/>")
    _display("".join(blocks) or "<p><i>none</i></p>")


class _EscapedFormat:
    """Formats like the wrapped value, then HTML-escapes the result; a missing number (NaN:
    a share of zero items) reads "—", as in every table, never ``nan%``."""

    def __init__(self, value: Any):
        self.value = value

    def __format__(self, spec: str) -> str:
        if isinstance(self.value, float | np.floating) and self.value != self.value:
            return "—"
        return escape(format(self.value, spec))
