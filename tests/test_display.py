"""How reports label systems: the one wording every report uses."""

from __future__ import annotations

import html as html_module
import re

import pytest

from evalbench import display


def test_every_system_is_labelled_simulated_or_real_and_agent_or_model():
    sim = {"a", "b"}
    assert display.system_kind("a", sim) == "simulated"
    assert display.system_kind("b", sim, "sim-agent") == "simulated agent"
    assert display.system_kind("c", sim, "command") == "agent (command)"
    assert display.system_kind("c", sim) == "real model"
    # evalbench's reference agent (provider: agent) on a real model, not "agent (agent)"
    assert display.system_kind("d", sim, "agent") == "reference agent, real model"


def _shown(monkeypatch) -> list[str]:
    """What the notebook would show, unescaped (so the test reads the words)."""
    import html

    shown: list[str] = []
    monkeypatch.setattr(display, "_display", lambda text: shown.append(html.unescape(text)))
    return shown


def _gaia_run(tmp_path, systems, name="usage_test"):
    from studyfiles import gaia_dataset, gaia_params

    from evalbench import gaia
    from evalbench.studies import open_run

    folder = tmp_path / name
    folder.mkdir(exist_ok=True)
    data = folder / "data"
    if not data.exists():
        gaia_dataset(folder, ["1", "2", "3"], name="data")
    run = open_run(gaia_params(folder, data, systems, name=name))
    gaia.run(run)
    return run


AGENT = {
    "name": "my-agent",
    "provider": "python",
    "entrypoint": "tests.agents.example_agent:answer",
}


@pytest.mark.slow
def test_the_usage_section_says_what_this_session_did(tmp_path, monkeypatch):
    shown = _shown(monkeypatch)
    systems = [{"name": "chat", "sim": {"accuracy": 0.5}}, AGENT]
    display.usage(_gaia_run(tmp_path, systems))
    fresh = "".join(shown)
    assert "This session: requests" in fresh  # chat's calls went through the model client
    assert "Agent tasks run this session outside evalbench's model client: my-agent (3)" in fresh
    assert "read back" not in fresh and "Nothing was asked" not in fresh
    assert "calls its own models" in fresh and "a simulated agent" not in fresh  # says why
    shown.clear()
    display.usage(_gaia_run(tmp_path, systems))  # the same study again: all recorded
    again = "".join(shown)
    assert "Nothing was asked this session: every answer and agent task was already" in again
    assert "This session: requests" not in again and "my-agent (3)" not in again


@pytest.mark.slow
def test_an_agent_only_session_names_its_tasks_not_a_read_back(tmp_path, monkeypatch):
    shown = _shown(monkeypatch)
    display.usage(_gaia_run(tmp_path, [AGENT], name="agent_only"))
    text = "".join(shown)
    assert "my-agent (3)" in text and "read back" not in text and "Nothing was asked" not in text


def test_counts_print_as_integers_with_thousands_separators():
    import numpy as np
    import pandas as pd

    from evalbench.runs import usage_from_rows

    rows = [{"system": "s", "key": f"k{i}", "request_key": "r", "prompt_tokens": tokens,
             "completion_tokens": 10, "cached": False, "error": None}
            for i, tokens in enumerate([179_000, 31, None])]  # fmt: skip
    usage = usage_from_rows(rows, {})
    assert usage.loc[0, "prompt_tokens"] == 179_031 and usage["prompt_tokens"].dtype.kind == "i"
    html = display.table_html(usage, digits=4)
    assert ">179,031<" in html and ">30<" in html and "179031.0000" not in html
    frame = pd.DataFrame({"n": np.array([1234567, 5], dtype=np.int64), "rate": [0.5, 1.0]})
    html = display.table_html(frame, digits=3)
    assert ">1,234,567<" in html and ">5<" in html and ">1.000<" in html  # floats keep digits
    labels = pd.DataFrame({"year": [2024], "seed": [12345], "task_id": [100200], "n": [2024]})
    html = display.table_html(labels)
    assert ">2024<" in html and ">12345<" in html and ">100200<" in html  # not counts
    assert ">2,024<" in html  # n is a count


@pytest.mark.browser
def test_a_wide_long_table_scrolls_inside_its_own_box_on_screen(tmp_path):
    """200 rows × 40 columns in a report, in Chromium at 1400 × 900: the table's box scrolls
    sideways and is no taller than the window, so its scrollbar is on screen (a box as tall as
    its 200 rows put the scrollbar thousands of pixels below: the table looked clipped)."""
    import json
    import shutil
    import subprocess

    import nbformat
    import pandas as pd

    from evalbench.publish import export_html

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("needs Debian chromium (apt-get install chromium)")
    frame = pd.DataFrame({f"a_long_column_name_{i}": range(200) for i in range(40)})
    cell = nbformat.v4.new_code_cell("")
    cell.outputs = [nbformat.v4.new_output(
        "display_data", data={"text/html": display.table_html(frame)})]  # fmt: skip
    nb = nbformat.v4.new_notebook(cells=[cell])
    nbformat.write(nb, tmp_path / "wide.ipynb")
    html = export_html(tmp_path / "wide.ipynb", tmp_path / "wide.html").read_text()
    probe = """<script>window.onload = () => {
      const box = document.querySelector('table.evalbench-table').parentElement;
      document.body.dataset.m = JSON.stringify({scroll: box.scrollWidth, client: box.clientWidth,
        height: box.getBoundingClientRect().height, window: innerHeight,
        page: document.documentElement.scrollWidth, width: innerWidth});
    };</script></body>"""  # measures only; the report itself has no script
    (tmp_path / "probe.html").write_text(html.replace("</body>", probe))
    dom = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp_path / 'chrome'}", "--window-size=1400,900",
         "--virtual-time-budget=3000", "--dump-dom", (tmp_path / "probe.html").as_uri()],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip
    m = json.loads(html_module.unescape(re.search(r'data-m="([^"]*)"', dom).group(1)))
    assert m["scroll"] > m["client"]  # wider than its box: it scrolls sideways
    assert m["height"] <= m["window"]  # and its scrollbar is on screen
    assert m["page"] <= m["width"]  # the page itself never scrolls sideways


def test_the_header_line_names_each_local_model_file_its_sha256_and_engine(tmp_path, monkeypatch):
    import hashlib

    from evalbench.models import ModelSpec, local

    monkeypatch.setenv("EVALBENCH_CACHE", str(tmp_path / "cache"))
    model = tmp_path / "tiny <b>.gguf"
    model.write_bytes(b"GGUF" + bytes(60))
    digest = hashlib.sha256(b"GGUF" + bytes(60)).hexdigest()  # the file's bytes, as hashed
    monkeypatch.setitem(local.ENGINES, "llama-cpp-python",
                        local.ENGINES["llama-cpp-python"]._replace(version=lambda s: "9.9"))  # fmt: skip
    lone = {"model_file": str(model), "n_ctx": 512}
    specs = [
        ModelSpec(name="chat", provider="local", local=lone),
        ModelSpec(name="judge", provider="local", local=lone, temperature=0.5),  # same server
        ModelSpec(name="remote", provider="openai", model="m"),  # not local: not listed
    ]
    line = display.local_models_line(specs)
    assert line == (
        "<p><small>local model <code>tiny &lt;b&gt;.gguf</code> (sha256 "
        f"<code>{digest}</code>) served by llama-cpp-python 9.9 · n_ctx 512 · chat format: "
        "the model file&#x27;s template — chat, judge</small></p>"
    )
    assert display.local_models_line(specs[2:]) == ""
    # replayed where the file is gone: said so, never "None"
    monkeypatch.setattr(local, "model_path", lambda spec: None)
    assert "(sha256 <code>unknown: the file is not here</code>)" in display.local_models_line(
        specs[:1]
    )


def test_each_figure_of_a_report_is_described_by_its_sections_heading():
    # Before: every figure of every report read "No description has been provided for this
    # image" to a screen reader (nbconvert's default)
    from evalbench.look import NO_ALT, describe_figures

    page = (f'<p><img src="a.png" {NO_ALT}></p>'
            '<h2 id="x">Accuracy &amp; <i>level</i><a class="anchor-link" href="#x">¶</a></h2>'
            f'<img src="b.png" {NO_ALT}/><img src="c.png" {NO_ALT}/>'
            '<h3>Cost "per" task</h3><p>text</p><img src="d.png" alt="kept">'
            f'<img src="e.png" {NO_ALT}>')  # fmt: skip
    described = describe_figures(page, "GAIA <demo>")
    assert NO_ALT not in described
    assert described.count('alt="Figure: GAIA &lt;demo&gt;"') == 1  # before any heading
    assert described.count('alt="Figure: Accuracy &amp; level"') == 2
    assert 'alt="kept"' in described  # an image's own description stays
    assert 'alt="Figure: Cost &quot;per&quot; task"' in described
    assert '<h2 id="x">Accuracy &amp; <i>level</i><a class="anchor-link"' in described
