"""evalbench.findings: numbers in words, the no-result rule, the manifest round trip, the HTML
a summary keeps from a manifest, and the marks on a near miss."""

from __future__ import annotations

import math

from evalbench.findings import (
    Findings,
    about,
    count,
    from_row,
    honest,
    marked_pair,
    near_miss,
    ordinal,
    percent,
    safe_html,
    size_caveat,
)
from evalbench.measured import Measured

NAN = math.nan


def test_numbers_in_words():
    # 21 of 32 = 0.65625 -> 66%; under 1% and over 99% keep one decimal (not 0% / 100%)
    assert [percent(21 / 32), percent(0.004), percent(0.996), percent(1.0), percent(NAN)] == [
        "66%", "0.4%", "99.6%", "100%", "—"]  # fmt: skip
    assert about(0.656, 0.483, 0.8) == "about 66%, likely between 48% and 80%"
    assert about(1142.17, 1099.3, 1189.7, "rating") == "about 1142, likely between 1099 and 1190"
    assert about(77.62, 72.1, 82.8, "score") == "about 77.6, likely between 72.1 and 82.8"
    assert about(60.0, NAN, NAN, "score") == "about 60.0"  # no interval from one value
    assert [count(1, "task"), count(5090, "item"), count(2, "category")] == [
        "1 task", "5,090 items", "2 categories"]  # fmt: skip
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st"]  # fmt: skip


def test_the_size_caveat_shows_its_arithmetic():
    # 1.96 · sqrt(0.25 / 32) = 0.1732 -> ±17 points; from 400 items on (±4.9) it is not said
    assert size_caveat(32, "task", 0.95).startswith(
        "Only 32 tasks: each share is known to about ±17"
    )
    assert size_caveat(1, "task", 0.95).startswith("Only 1 task:")
    assert size_caveat(400, "task", 0.95) == size_caveat(0, "task", 0.95) == ""


def test_nothing_measured_is_no_result_never_the_studys_numbers():
    found = Findings("a answered about 0%, likely between 0% and 11%", ("c",), ("r",))
    none = [Measured("a", 0, 32, {"failed call (http_401)": 32})]
    out = honest(found, none)
    assert out is not None and out.key_result == (
        "No result: 0 of 32 answers scored — failed call (http_401) × 32. Nothing was "
        "measured, so there is no number to report."
    )
    assert (out.caveats, out.risks, out.detail) == ((), (), "")
    assert honest(None, none) is not None  # a study without findings still says why
    assert honest(found, []) == found  # nothing declared: the study's own


def test_a_system_with_nothing_scored_is_the_first_caveat():
    found = Findings("b about 50%", ("small sample",))
    rows = [Measured("<a>", 0, 4, {"failed call (timeout)": 4}), Measured("b", 4, 4)]
    out = honest(found, rows)
    assert out is not None
    assert out.caveats == (
        "No result for &lt;a&gt;: 0 of 4 answers scored — failed call (timeout) × 4.",
        "small sample",
    )


def test_the_manifest_round_trip_and_damaged_rows():
    found = Findings("k", ("c1", "c2"), ("r",), "cost", detail="not kept")
    assert from_row(found.as_row()) == found._replace(detail="")
    for damaged in (None, "text", [], {"caveats": []}, {"key_result": 3}):
        assert from_row(damaged) is None
    odd = from_row({"key_result": "k", "caveats": "not a list", "risks": [1, "r"], "cost": 5})
    assert odd == Findings("k", (), ("r",), "")


def test_only_plain_inline_tags_survive_and_every_tag_is_closed():
    assert safe_html("<b>a</b> &amp; <mark>b</mark> <code>c</code>") == (
        "<b>a</b> &amp; <mark>b</mark> <code>c</code>"
    )
    evil = '<script>x()</script><b onclick="x">y</b><img src=x onerror=y><a href="j:x">z</a>'
    out = safe_html(evil)
    assert "<script" not in out and "<img" not in out and "<a " not in out and "<b " not in out
    assert out.startswith("&lt;script&gt;x()&lt;/script&gt;&lt;b onclick=&quot;x&quot;&gt;y")
    assert safe_html("<b>open <i>nested") == "<b>open <i>nested</i></b>"
    assert safe_html("stray</b> close") == "stray close"
    assert safe_html("a &lt;b&gt; b") == "a &lt;b&gt; b"  # escaped text stays text


def test_the_span_that_differs_is_marked_and_escaped():
    assert marked_pair("kramhnceb", "kramhcneb") == (
        "kramh<mark>nc</mark>eb",
        "kramh<mark>cn</mark>eb",
    )
    assert marked_pair("1 2", "1, 2") == ("1 2", "1<mark>,</mark> 2")
    assert marked_pair("<b>", "<i>") == ("&lt;<mark>b</mark>&gt;", "&lt;<mark>i</mark>&gt;")
    assert marked_pair("391", "Paris") == ("391", "Paris")  # nothing in common: no marks
    assert marked_pair("same", "same") == ("same", "same")
    long = "x" * 100_000
    assert marked_pair(long + "a", long + "b")[0].endswith("<mark>a</mark>")  # linear, no hang


def test_a_near_miss_is_alike_but_not_equal():
    assert near_miss("kramhnceb", "kramhcneb") and near_miss("Paris ", "paris.")
    assert not near_miss("16", "15")  # short: a different number, not a typo
    assert not near_miss("PARIS", "paris")  # equal once case is ignored
    assert not near_miss("London", "Paris") and not near_miss("", "x")
    assert not near_miss("a" * 500, "a" * 499 + "b")  # too long to compare
