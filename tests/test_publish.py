"""The HTML export: markdown is sanitized after it renders (once), every output too, and no
script or handler reaches the report."""

from __future__ import annotations

import html as html_module
import re
from pathlib import Path

import nbformat
import pytest

from evalbench.publish import export_html

MARKDOWN = "## Next\n\nFollow it with `evalbench history <params>`; a < b & c.\n\n> a quote"
HOSTILE = "<script>alert(1)</script> <img src=x onerror=alert(2)> [x](javascript:alert(3))"


def _report(tmp_path: Path, cells: list) -> str:
    path = tmp_path / "nb.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    return export_html(path, tmp_path / "report.html").read_text(encoding="utf-8")


def _output(data: dict) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell("")
    cell.outputs = [nbformat.v4.new_output("display_data", data=data)]
    return cell


def _text(html: str) -> str:
    """The report's visible text, entities decoded once (what a reader sees)."""
    body = html.split("<body", 1)[1]
    return html_module.unescape(re.sub(r"<[^>]+>", "", body))


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> str:
    return _report(
        tmp_path_factory.mktemp("report"),
        [
            nbformat.v4.new_markdown_cell(MARKDOWN),
            nbformat.v4.new_markdown_cell(HOSTILE),
            _output({"text/markdown": "Run `evalbench label init pairwise <run folder>`."}),
            _output({"text/html": "<p>" + HOSTILE + "</p>"}),
            _output({"application/javascript": "alert(4)", "text/plain": "js"}),
        ],
    )


@pytest.mark.slow
def test_markdown_renders_code_text_as_written_not_escaped_twice(report):
    text = _text(report)
    assert "evalbench history <params>" in text and "a < b & c." in text
    assert "evalbench label init pairwise <run folder>" in text  # a text/markdown output
    assert "&lt;" not in text and "&amp;" not in text
    assert re.search(r"<blockquote>\s*<p>a quote</p>", report)  # `>` still quotes
    assert '<h2 id="Next">' in report


@pytest.mark.slow
def test_no_script_handler_or_javascript_link_reaches_the_report(report):
    assert "<script" not in report and "<img" not in report and "alert(4)" not in report
    tags = re.findall(r"<[^>]*>", report)
    assert not [t for t in tags if "javascript:" in t or "onerror" in t]
    text = _text(report)
    assert text.count("<script>alert(1)</script>") == 2  # shown as text, where it was written


def test_a_skipped_study_is_one_short_line_and_the_report_ends_with_one_hint():
    from evalbench.publish import StudyResult, skip_hints, summary_lines

    data = (
        "DataUnavailable: data file 'bfcl/question/simple_python' (https://x/y.json) is "
        "unavailable: no mirror set (EVALBENCH_DATA_MIRROR); not in the cache /c. Provide it ..."
    )
    secret = (
        "MissingSecret: system 'gpt' needs the environment variable OPENAI_API_KEY; it is not set"
    )
    results = [
        StudyResult(Path(f"params/{name}.yaml"), "skipped", None, 0.1, reason)
        for name, reason in (("a", data), ("b", data), ("c", secret))
    ]
    lines = summary_lines(results)
    assert lines[0].endswith("[needs public data (bfcl/…)]")
    assert lines[2].endswith("[needs $OPENAI_API_KEY]")
    assert max(len(line) for line in lines) < 100
    hints = skip_hints(results)
    assert len(hints) == 2
    assert hints[0].startswith("2 studies skipped for missing public data: `evalbench fetch --all`")
    assert "EVALBENCH_DATA_MIRROR" in hints[0]
    assert hints[1].startswith("1 study skipped for a missing key")
    assert skip_hints(results[:0]) == []


@pytest.mark.slow
def test_a_wide_table_scrolls_visibly_in_the_report(tmp_path):
    import pandas as pd

    from evalbench.display import table_html
    from evalbench.look import SCROLL_CSS

    wide = pd.DataFrame(
        [{f"systems.0.sim.column_{i}": "{'1': 0.85, '2': 0.65}" for i in range(12)}]
    )
    page = _report(tmp_path, [_output({"text/html": table_html(wide)})])
    assert '<div class="evalbench-scroll"' in page.split("<body", 1)[1]
    # one home for the CSS of a wide table's box: its scrollbar drawn, its hidden side shaded
    assert SCROLL_CSS.strip() in page
    assert "div.evalbench-scroll::-webkit-scrollbar" in page


def test_the_first_signal_says_what_it_does_to_a_study_and_to_a_sweep():
    # Before: a sweep's Ctrl-C also promised "its requests in flight are recorded first",
    # but a sweep's cells stop at once and their requests in flight are asked again.
    from evalbench.publish import _stopping

    assert _stopping({"kind": "gaia"}) == (
        "stopping the study (its requests in flight are recorded first)"
    )
    assert "asked again, and paid again, when you resume" in _stopping({"kind": "sweep"})
