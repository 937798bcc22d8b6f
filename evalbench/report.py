"""Execute study notebooks, export self-contained HTML reports, build the index.

Notebooks run through papermill's Python API (one kernel per study, no CLI subprocess);
reports are exported with nbconvert's ``HTMLExporter`` using a template that drops every
CDN script (require.js, MathJax, widget managers), hides code, strips progress bars and
sanitizes the HTML, so a report opens offline and untrusted text stays inert.
"""

from __future__ import annotations

import html
import json
import multiprocessing
import os
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any, Literal, NamedTuple

from evalbench.params import ParamsError, load_params, notebook_for
from evalbench.runs import now_iso, read_manifest, run_dir_for, update_manifest
from evalbench.settings import get_settings

PROGRESS_ENV = "EVALBENCH_PROGRESS"

Status = Literal["ok", "failed", "skipped"]
SKIP_ERRORS = {"DataUnavailable", "MissingSecret"}
_WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


class StudyResult(NamedTuple):
    """How one study run ended."""

    params_file: Path
    status: Status
    run_dir: Path | None
    wall_s: float
    reason: str = ""


def run_study(
    params_file: Path, overrides: list[str] | None = None, *, progress: bool = False
) -> StudyResult:
    """Validate params, execute the study's notebook into its run folder, export the report.

    Params errors are raised (nothing is written); a notebook failure marks the run
    ``failed``; a study whose data or secret is unavailable is ``skipped`` with the reason.
    With ``progress``, the study's progress bars (model calls: items, errors, tokens, cost,
    ETA) are shown on this process's stderr as the notebook runs.

    Raises:
        ParamsError: the params file or an override is invalid.
    """
    overrides = overrides or []
    params = load_params(params_file, overrides)
    settings = get_settings()
    run_dir = run_dir_for(params_file, params)
    notebook = settings.project_root / "notebooks" / notebook_for(params)
    started = time.perf_counter()
    update_manifest(run_dir, status="running", started_at=now_iso(), report=None, reason=None)
    try:
        _execute(notebook, run_dir / "notebook.ipynb", params_file, overrides, progress)
        _require_finished(run_dir)
        export_html(run_dir / "notebook.ipynb", run_dir / "report.html")
    except Exception as exc:  # every failure is recorded in the manifest, then reported
        status, reason = classify_failure(exc)
        return _end(params_file, run_dir, started, status, reason)
    return _end(params_file, run_dir, started, "ok", "")


def run_many(files: list[Path], *, jobs: int = 1) -> Iterator[StudyResult]:
    """Run several studies, ``jobs`` at a time (one process and kernel each), as they finish.

    A params error is a failed study (nothing run); every other study still runs.
    """
    if jobs <= 1 or len(files) <= 1:
        yield from (_run_or_fail(path) for path in files)
        return
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        futures = [pool.submit(_run_or_fail, path) for path in files]
        for future in as_completed(futures):
            yield future.result()


def _run_or_fail(path: Path) -> StudyResult:
    try:
        return run_study(path)
    except ParamsError as exc:
        return failure_result(path, exc)


def _execute(
    notebook: Path, output: Path, params_file: Path, overrides: list[str], progress: bool
) -> None:
    import papermill as pm

    if progress:  # the kernel (started below) draws text bars; its stderr is relayed here
        os.environ[PROGRESS_ENV] = "text"

    pm.execute_notebook(
        str(notebook),
        str(output),
        parameters={"params_file": str(Path(params_file).resolve()), "overrides": overrides},
        cwd=str(notebook.parent),
        kernel_name="python3",
        language="python",
        progress_bar=False,
        log_output=False,
        # the kernel's own log (TCP notice, shutdown chatter) is not the study's output
        extra_arguments=["--IPKernelApp.log_level=CRITICAL"],
        stderr_file=sys.stderr if progress else None,
    )


def _require_finished(run_dir: Path) -> None:
    if read_manifest(run_dir).get("status") != "executed":
        raise RuntimeError("the notebook ran to the end but never called run.finish()")


def classify_failure(exc: BaseException) -> tuple[Status, str]:
    """``skipped`` for unavailable data or secrets, ``failed`` otherwise; one-line reason."""
    ename = getattr(exc, "ename", type(exc).__name__)
    evalue = str(getattr(exc, "evalue", exc)).strip().splitlines()
    reason = f"{ename}: {evalue[0] if evalue else ''}".strip()
    return ("skipped" if ename in SKIP_ERRORS else "failed"), reason


def _end(
    params_file: Path, run_dir: Path, started: float, status: Status, reason: str
) -> StudyResult:
    wall = time.perf_counter() - started
    report = "report.html" if status == "ok" else None
    update_manifest(
        run_dir, status=status, reason=reason or None, wall_time_s=round(wall, 2),
        ended_at=now_iso(), report=report,
    )  # fmt: skip
    return StudyResult(Path(params_file), status, run_dir, wall, reason)


def export_html(notebook_path: Path, html_path: Path) -> Path:
    """Render an executed notebook as a self-contained, offline, input-free HTML report.

    Outputs are escaped where they are made (:mod:`evalbench.display`); as a second line of
    defence every HTML output is sanitized to a fixed list of tags and attributes (no
    script, no event handlers, no ``javascript:`` links).
    """
    import nbformat
    from nbconvert import HTMLExporter

    nb = nbformat.read(notebook_path, as_version=4)
    strip_noise(nb)
    title = str(nb.metadata.get("title") or _study_title(notebook_path.parent))
    exporter = HTMLExporter(
        template_name="evalbench",
        extra_template_basedirs=[str(Path(__file__).parent / "templates")],
        exclude_input=True,
        exclude_input_prompt=True,
        exclude_output_prompt=True,
        embed_images=True,
    )
    exporter.register_preprocessor(_sanitizer(), enabled=True)
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": title}})
    tmp = html_path.with_suffix(".html.tmp")
    tmp.write_text(body, encoding="utf-8")
    tmp.replace(html_path)
    return html_path


_SAFE_TAGS = [
    "a", "abbr", "b", "blockquote", "br", "caption", "code", "dd", "div", "dl", "dt", "em",
    "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "li", "ol", "p", "pre", "small", "span",
    "strong", "sub", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul",
]  # fmt: skip
_SAFE_ATTRIBUTES = {
    "*": ["class", "style", "title", "id"],
    "a": ["href", "title"],
    "td": ["colspan", "rowspan"],
    "th": ["colspan", "rowspan"],
}
_SAFE_STYLES = [
    "background", "background-color", "border", "border-radius", "color", "font-size",
    "font-weight", "margin", "padding", "text-align", "white-space", "max-width", "overflow-x",
]  # fmt: skip


def _sanitizer() -> Any:
    from nbconvert.preprocessors.sanitize import SanitizeHTML

    return SanitizeHTML(tags=_SAFE_TAGS, attributes=_SAFE_ATTRIBUTES, styles=_SAFE_STYLES)


def strip_noise(nb: Any) -> None:
    """Drop what a reader should not see: progress bars, logs (stderr, widget views) and
    code cells left with no output (with inputs hidden they would only leave gaps)."""
    kept = []
    for cell in nb.cells:
        if cell.get("cell_type") == "code":
            cell["outputs"] = [o for o in cell.get("outputs", []) if not _is_noise(o)]
            if not cell["outputs"]:
                continue
        kept.append(cell)
    nb.cells = kept
    nb.metadata.pop("widgets", None)


def _study_title(run_dir: Path) -> str:
    return str(read_manifest(run_dir).get("title") or "evalbench report")


def _is_noise(output: Any) -> bool:
    if output.get("output_type") == "stream":
        return output.get("name") == "stderr"
    return _WIDGET_MIME in output.get("data", {})


def collect_runs(outputs: Path) -> list[dict[str, Any]]:
    """Every run manifest under ``outputs/<study>/<run>/``, sorted by study and time."""
    rows = []
    for path in sorted(outputs.glob("*/*/manifest.json")):
        try:
            manifest = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            manifest = {"status": "failed", "reason": f"unreadable manifest {path}"}
        manifest["_dir"] = path.parent
        rows.append(manifest)
    return sorted(rows, key=lambda m: (str(m.get("study", "")), str(m.get("started_at", ""))))


def build_index(outputs: Path | None = None) -> Path:
    """Write ``outputs/index.html`` listing every run (escaped, offline)."""
    outputs = outputs or get_settings().outputs_dir
    outputs.mkdir(parents=True, exist_ok=True)
    rows = "\n".join(_index_row(m, outputs) for m in collect_runs(outputs))
    page = _INDEX_PAGE.format(rows=rows or '<tr><td colspan="7">no runs yet</td></tr>')
    target = outputs / "index.html"
    target.write_text(page, encoding="utf-8")
    return target


def _index_row(m: dict[str, Any], outputs: Path) -> str:
    e = html.escape
    status = str(m.get("status", "unknown"))
    link = ""
    if m.get("report"):
        href = (Path(m["_dir"]) / m["report"]).relative_to(outputs).as_posix()
        link = f'<a href="{e(href)}">report</a>'
    heads = "<br>".join(
        f"{e(str(k))}: <b>{e(_fmt(v))}</b>" for k, v in (m.get("headlines") or {}).items()
    )
    badge = '<span class="sim">simulated</span>' if m.get("simulated") else ""
    reason = f'<div class="reason">{e(str(m["reason"]))}</div>' if m.get("reason") else ""
    wall = f"{m['wall_time_s']:.1f} s" if isinstance(m.get("wall_time_s"), (int, float)) else "—"
    ended = str(m.get("ended_at") or "")[:16].replace("T", " ")
    return (
        f"<tr><td>{e(str(m.get('title', m.get('study', '?'))))}<div class='id'>"
        f"{e(str(m.get('study', '')))}/{e(str(m.get('run_id', '')))}</div></td>"
        f'<td class="st {e(status)}">{e(status)}{reason}</td><td>{heads}</td>'
        f"<td>{badge}</td><td>{wall}</td><td>{e(ended)}</td>"
        f"<td>{link}</td></tr>"
    )


def _fmt(value: Any) -> str:
    """Rates and scores with three decimals, ratings (|x| >= 100) with one."""
    if isinstance(value, float):
        return f"{value:.1f}" if abs(value) >= 100 else f"{value:.3f}"
    return str(value)


def summary_lines(results: list[StudyResult]) -> list[str]:
    """The console summary ``make report`` prints: one line per study."""
    lines = []
    for r in results:
        headlines = read_manifest(r.run_dir).get("headlines", {}) if r.run_dir else {}
        heads = ", ".join(f"{k}={_fmt(v)}" for k, v in headlines.items())
        tail = f"  [{r.reason}]" if r.reason else ""
        lines.append(f"{r.status:8s} {r.wall_s:6.1f}s  {r.params_file.name:32s} {heads}{tail}")
    return lines


def failure_result(params_file: Path, exc: ParamsError) -> StudyResult:
    """A params error as a failed study (nothing was run)."""
    return StudyResult(params_file, "failed", None, 0.0, str(exc))


_INDEX_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>evalbench — study runs</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em; color: #222; }}
table {{ border-collapse: collapse; width: 100%; }}
th, td {{ border-bottom: 1px solid #ddd; padding: 6px 10px; text-align: left;
  vertical-align: top; }}
th {{ background: #f4f4f4; }}
.id {{ color: #888; font-size: 0.8em; }}
.st.ok {{ color: #17692b; font-weight: 600; }}
.st.failed {{ color: #b00020; font-weight: 600; }}
.st.skipped, .st.running, .st.executed {{ color: #8a6100; font-weight: 600; }}
.reason {{ color: #555; font-weight: normal; font-size: 0.85em; max-width: 40em; }}
.sim {{ background: #fff4ce; border: 1px solid #e0b000; border-radius: 4px;
  padding: 1px 6px; font-size: 0.85em; }}
</style></head><body>
<h1>evalbench — study runs</h1>
<p>Every run under <code>outputs/</code>. "simulated" marks runs whose systems or judges
were produced by the offline <code>sim</code> provider: not measurements of real models.</p>
<table><thead><tr><th>study</th><th>status</th><th>headline numbers</th><th></th>
<th>wall time</th><th>finished (UTC)</th><th></th></tr></thead>
<tbody>
{rows}
</tbody></table></body></html>
"""
