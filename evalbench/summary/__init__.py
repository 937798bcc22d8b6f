"""``summary.html`` beside every run's ``report.html``: one page for a reader who is not a
statistician.

What was measured; each system's headline in words with its uncertainty ("about 62%, likely
between 55% and 69%"); the change since the baseline and whether it is real; cost per task;
the top three risks or failure kinds with one example each; a link to the full report. The
numbers are the full report's (:mod:`.facts`); the page is escaped and needs no network
(:mod:`.page`). ``run_study`` writes it when a run is published.
"""

from __future__ import annotations

import webbrowser
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from evalbench.importers import OutcomeError
from evalbench.processes import unmarked
from evalbench.records import write_atomic

from .facts import Facts, summary_facts
from .page import no_result_html, problem_html, summary_html

SUMMARY_FILE = "summary.html"


class Written(NamedTuple):
    """Where the summary went, and why it is only a pointer to the full report ("" if not)."""

    path: Path
    problem: str


def write_summary(run_dir: Path) -> Written:
    """Write ``run_dir/summary.html`` for the published run in ``run_dir``; when the run's
    records cannot be read, a page that says so and links the full report.

    Raises:
        OSError: the page could not be written.
    """
    try:
        page = summary_html(summary_facts(run_dir))
    except OutcomeError as exc:
        problem = f"summary.html: the run's records could not be summarized ({exc})"
        return Written(write_atomic(run_dir / SUMMARY_FILE, problem_html(problem)), problem)
    return Written(write_atomic(run_dir / SUMMARY_FILE, page), "")


def audience_pages(
    run_dirs: Sequence[Path | None], audience: str, open_pages: bool = False
) -> list[str]:
    """``evalbench report --audience``: each published run's page, ``summary.html`` (written
    when missing: a run published before summaries existed) or ``report.html``, one line each
    (``summary: <path>``); with ``open_pages`` also opened in the browser."""
    name = SUMMARY_FILE if audience == "summary" else "report.html"
    lines = []
    for run_dir in run_dirs:
        if run_dir is None or not (run_dir / "report.html").exists():
            continue
        if name == SUMMARY_FILE and not (run_dir / SUMMARY_FILE).exists():
            write_summary(run_dir)
        lines.append(f"{audience}: {run_dir / name}")
        if open_pages:
            with unmarked():  # the browser stays open after evalbench exits
                webbrowser.open((run_dir / name).resolve().as_uri())
    return lines


__all__ = [
    "SUMMARY_FILE",
    "Facts",
    "Written",
    "audience_pages",
    "no_result_html",
    "summary_facts",
    "summary_html",
    "write_summary",
]
