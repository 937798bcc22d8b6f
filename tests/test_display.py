"""How reports label systems: the one wording every report uses."""

from __future__ import annotations

from evalbench import display


def test_every_system_is_labelled_simulated_or_real_and_agent_or_model():
    sim = {"a", "b"}
    assert display.system_kind("a", sim) == "simulated"
    assert display.system_kind("b", sim, "sim-agent") == "simulated agent"
    assert display.system_kind("c", sim, "command") == "agent (command)"
    assert display.system_kind("c", sim) == "real model"


def _shown(monkeypatch) -> list[str]:
    """What the notebook would show, unescaped (so the test reads the words)."""
    import html

    shown: list[str] = []
    monkeypatch.setattr(display, "_display", lambda text: shown.append(html.unescape(text)))
    return shown


def _gaia_run(tmp_path, systems, name="usage_test"):
    from studyfiles import gaia_dataset, gaia_params

    from evalbench import gaia
    from evalbench.runs import open_run

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


def test_the_usage_section_says_what_this_session_did(tmp_path, monkeypatch):
    shown = _shown(monkeypatch)
    systems = [{"name": "chat", "sim": {"accuracy": 0.5}}, AGENT]
    display.usage(_gaia_run(tmp_path, systems))
    fresh = "".join(shown)
    assert "This session: requests" in fresh  # chat's calls went through the model client
    assert "Agent tasks run this session outside evalbench's model client: my-agent (3)" in fresh
    assert "read back" not in fresh and "Nothing was asked" not in fresh
    shown.clear()
    display.usage(_gaia_run(tmp_path, systems))  # the same study again: all recorded
    again = "".join(shown)
    assert "Nothing was asked this session: every answer and agent task was already" in again
    assert "This session: requests" not in again and "my-agent (3)" not in again


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
