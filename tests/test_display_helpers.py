"""display.table_block and display.count: the shared table and plural helpers of every
benchmark's report.py (they had private copies: arena, arena_public, judge_public, gaia
``_table``; hle, gaia, browse_suite, agents.view ``_count``)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalbench import display


def test_table_block_is_the_escaped_caption_then_the_table() -> None:
    frame = pd.DataFrame({"system": ["<b>x</b>"], "acc": [0.12345]})
    block = display.table_block(frame, "Accuracy <of> all", digits=2)
    assert block == ("<p><b>Accuracy &lt;of&gt; all</b></p>" + display.table_html(frame, digits=2))
    assert "0.12<" in block and "&lt;b&gt;x&lt;/b&gt;" in block


def test_table_block_without_caption_or_past_max_rows() -> None:
    frame = pd.DataFrame({"n": range(5)})
    assert display.table_block(frame) == display.table_html(frame)
    clipped = display.table_block(frame, max_rows=2)
    assert clipped == (
        display.table_html(frame.head(2)) + "<p><small>first 2 of 5 rows</small></p>"
    )


def test_table_shows_the_block(monkeypatch) -> None:
    shown: list[str] = []
    monkeypatch.setattr(display, "_display", shown.append)
    frame = pd.DataFrame({"a": [1.0]})
    display.table(frame, "cap", digits=1)
    assert shown == [display.table_block(frame, "cap", digits=1)]


def test_count_is_singular_for_one_only() -> None:
    assert display.count(1, "step") == "1 step"
    assert display.count(0, "step") == "0 steps"
    assert display.count(2, "tool call") == "2 tool calls"
    assert display.count(3, "category") == "3 categories"  # consonant + y
    assert display.count(3, "day") == "3 days"  # vowel + y
    assert display.count(2, "match", "matches") == "2 matches"
    assert display.count(1, "match", "matches") == "1 match"


def test_percent_shows_a_missing_value_as_a_dash() -> None:
    assert display.percent(0.3614) == "36.1%"
    assert display.percent(0.3614, digits=0) == "36%"
    assert display.percent(None) == "—" and display.percent(float("nan")) == "—"


def test_a_missing_number_in_a_sentence_reads_a_dash_never_nan():
    # a share of zero scored items is NaN: "on nan% of 0 scored items" read like a number
    text = display.fill(
        "on {acc:.1%} of {n} scored items ({lo:.1%}–{hi:.1%}); bias {b:+.2f}",
        acc=float("nan"), n=0, lo=np.float64("nan"), hi=float("nan"), b=float("nan"),
    )  # fmt: skip
    assert text == "on — of 0 scored items (—–—); bias —"
    assert display.fill("{x:.1%}", x=0.5) == "50.0%"
