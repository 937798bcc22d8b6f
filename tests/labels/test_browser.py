"""The label app in a real browser (headless Debian Chromium through Playwright).

Each test starts the app on a free 127.0.0.1 port in a thread and stops it at the end.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from labels.helpers import running, write_tasks

from evalbench.labels import annotator_order, left_side, read_labels

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("labels_browser")]  # one Chromium
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="needs the playwright package (pip install playwright)"
)
expect = sync_api.expect
TIMEOUT = 15_000  # ms, every wait is bounded

ITEMS = [
    {"item": "q1", "question": "What is $\\frac{1}{2}+\\frac{1}{3}$?", "answer": "It is $\\frac{5}{6}$.",
     "reference": "5/6"},
    {"item": "q2", "question": "Capital of France?", "answer": "**Paris**, on the Seine."},
    {"item": "q3", "question": "Sum of $1..n$?", "answer": "$$\\frac{n(n+1)}{2}$$"},
]  # fmt: skip


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _wait_saved(page, done: int, total: int) -> None:
    expect(page.locator("#progress")).to_have_text(f"{done} / {total} done", timeout=TIMEOUT)


def _shown_item(page, tasks, annotator: str) -> str:
    """The id of the item on screen (from the position line, checked against the order)."""
    text = page.inner_text("#position")
    number = int(text.split()[1]) - 1
    item = annotator_order(tasks, annotator)[number]
    assert f"· {item}" in text, text
    if "$" in tasks.item(item).fields["question"]:  # LaTeX typeset by the local KaTeX
        assert page.locator("#item .katex").count() > 0
    return item


def test_an_annotator_scores_three_items_with_keyboard_and_mouse_reloads_and_edits(
    tmp_path, browser
):
    tasks = write_tasks(tmp_path, "rubric", ITEMS)
    with running(tasks) as server:
        page = browser.new_page()
        dialogs: list[str] = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(server.url(annotator="alice"))
        page.wait_for_selector("#item section", timeout=TIMEOUT)
        first = _shown_item(page, tasks, "alice")

        # item 1, keyboard only: a digit per dimension (the row advances), c: comment, Enter
        for key in ("7", "8", "9"):
            page.keyboard.press(key)
        page.keyboard.press("c")
        page.keyboard.type("clear enough")
        page.keyboard.press("Escape")
        page.keyboard.press("Enter")
        _wait_saved(page, 1, 3)
        second = _shown_item(page, tasks, "alice")

        # item 2, mouse only
        for dim, value in (("accuracy", "3"), ("completeness", "4"), ("clarity", "5")):
            page.click(f'.row[data-name="{dim}"] button[data-value="{value}"]')
        page.click("#save")
        _wait_saved(page, 2, 3)
        third = _shown_item(page, tasks, "alice")

        # reload mid-way: same item, progress kept, the first two marked done
        page.reload()
        page.wait_for_selector("#item section", timeout=TIMEOUT)
        _wait_saved(page, 2, 3)
        assert _shown_item(page, tasks, "alice") == third
        assert page.locator("#items button.done").count() == 2

        for key in ("0", "1", "6"):  # 0 = 10 on a 1-10 scale
            page.keyboard.press(key)
        page.keyboard.press("Enter")
        _wait_saved(page, 3, 3)
        expect(page.locator("#message")).to_contain_text("all 3 items", timeout=TIMEOUT)

        # edit the first label: back to item 1, the form shows the saved label
        page.click('#items button[data-pos="0"]')
        expect(page.locator("#position")).to_contain_text("revision 1", timeout=TIMEOUT)
        pressed = page.locator('.row[data-name="accuracy"] button[aria-pressed="true"]')
        assert pressed.inner_text() == "7"
        assert page.input_value("#comment") == "clear enough"
        page.keyboard.press("4")  # accuracy 7 -> 4; the rest as saved
        page.keyboard.press("Enter")
        expect(page.locator("#message")).to_contain_text("revision 2", timeout=TIMEOUT)
        assert dialogs == []

    # the file holds exactly the four submits, in order (the edit is a new line)
    lines = _lines(tasks.labels_dir / "alice.jsonl")
    got = [(r["item"], r["position"], r["revision"], r["scores"], r["comment"]) for r in lines]
    assert got == [
        (first, 0, 1, {"accuracy": 7, "completeness": 8, "clarity": 9}, "clear enough"),
        (second, 1, 1, {"accuracy": 3, "completeness": 4, "clarity": 5}, ""),
        (third, 2, 1, {"accuracy": 10, "completeness": 1, "clarity": 6}, ""),
        (first, 0, 2, {"accuracy": 4, "completeness": 8, "clarity": 9}, "clear enough"),
    ]
    assert {r["annotator"] for r in lines} == {"alice"}
    assert all(r["elapsed_s"] is not None and r["elapsed_s"] >= 0 for r in lines)


PAYLOAD = (
    '<script>alert("xss-script")</script><img src=x onerror="alert(\'xss-img\')">'
    "[click](javascript:alert('xss-link')) <svg onload=alert('xss-svg')> "
    "$\\href{javascript:alert('xss-katex')}{k}$"
)


def test_a_script_injection_in_an_answer_stays_inert_and_shows_literally(tmp_path, browser):
    items = [{"item": "x1", "question": "Say hi <b>bold?</b>", "answer": PAYLOAD}]
    tasks = write_tasks(
        tmp_path, "rubric", items, instructions="<script>alert('xss-instr')</script>"
    )
    with running(tasks) as server:
        page = browser.new_page()
        dialogs: list[str] = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(server.url(annotator="mallory"))
        page.wait_for_selector("#item section", timeout=TIMEOUT)
        page.click("#item section >> text=Answer")  # interact a little
        page.click("#instructions-box summary")
        page.wait_for_timeout(300)
        text = page.inner_text("#item")
        assert '<script>alert("xss-script")</script>' in text
        assert "<img src=x onerror=\"alert('xss-img')\">" in text
        assert "[click](javascript:alert('xss-link'))" in text
        assert "<b>bold?</b>" in text
        assert "<script>alert('xss-instr')</script>" in page.inner_text("#instructions")
        assert page.locator("script").count() == 2  # KaTeX and the app, nothing else
        for selector in ("#item img", "#item svg", "#item script", "#item a", "#item b",
                         "#instructions script"):  # fmt: skip
            assert page.locator(selector).count() == 0, selector
        assert dialogs == []


def test_two_annotators_label_at_once_and_neither_file_is_overwritten(tmp_path, browser):
    tasks = write_tasks(tmp_path, "rubric", ITEMS)
    with running(tasks) as server:
        pages = {}
        for name in ("alice", "bob"):
            page = browser.new_context().new_page()  # two contexts: two separate browsers
            page.goto(server.url(annotator=name))
            page.wait_for_selector("#item section", timeout=TIMEOUT)
            pages[name] = page
        for done in (1, 2, 3):
            for name, page in pages.items():  # both submits in flight together
                for key in ("5", "6", "7") if name == "alice" else ("2", "3", "4"):
                    page.keyboard.press(key)
            for page in pages.values():
                page.keyboard.press("Enter")
            for page in pages.values():
                _wait_saved(page, done, 3)
    for name, scores in (("alice", [5, 6, 7]), ("bob", [2, 3, 4])):
        lines = _lines(tasks.labels_dir / f"{name}.jsonl")
        assert sorted(r["item"] for r in lines) == ["q1", "q2", "q3"]
        assert {r["annotator"] for r in lines} == {name}
        assert all(list(r["scores"].values()) == scores for r in lines)
    assert len(read_labels(tasks.labels_dir)) == 6


SYSTEMS = ("SYSTEM-ALPHA-zeta", "SYSTEM-BETA-omega")


def _pairs(n: int) -> list[dict]:
    return [
        {"item": f"p{i}-{SYSTEMS[0]}-vs-{SYSTEMS[1]}", "question": f"Question {i}?",
         "system_x": SYSTEMS[0], "answer_x": f"x-answer {i}",
         "system_y": SYSTEMS[1], "answer_y": f"y-answer {i}"}
        for i in range(n)
    ]  # fmt: skip


def test_pairwise_sides_are_randomized_per_annotator_and_the_names_hidden(tmp_path, browser):
    tasks = write_tasks(tmp_path, "pairwise", _pairs(6), seed=3)
    seen: dict[str, dict[str, str]] = {}
    with running(tasks) as server:
        for name in ("ann", "ben"):
            page = browser.new_context().new_page()
            bodies: list[str] = []
            page.on("response", lambda r, b=bodies: b.append(r.text()))
            source = page.goto(server.url(annotator=name)).text()
            seen[name] = {}
            for done in range(1, 7):
                page.wait_for_selector("#item section", timeout=TIMEOUT)
                item = annotator_order(tasks, name)[
                    int(page.inner_text("#position").split()[1]) - 1
                ]
                shown_a = page.inner_text("#item section:nth-of-type(2) .text")
                seen[name][item] = "x" if shown_a.startswith("x-answer") else "y"
                page.keyboard.press("a")
                page.keyboard.press("Enter")
                _wait_saved(page, done, 6)
            dom = page.content()
            for text in (source, dom, *bodies):
                for system in SYSTEMS:
                    assert system not in text  # not in the source, the DOM or any response
    for name, sides in seen.items():
        assert sides == {i: left_side(tasks, name, i) for i in sides}
        assert set(sides.values()) == {"x", "y"}  # both orders within one annotator
    assert any(seen["ann"][i] != seen["ben"][i] for i in seen["ann"])  # and across them
    for name in seen:
        for r in _lines(tasks.labels_dir / f"{name}.jsonl"):
            assert r["choice"] == "left" and r["left"] == seen[name][r["item"]]
            assert r["preference"] == ("a" if r["left"] == "x" else "b")
            assert (r["system_x"], r["system_y"]) == SYSTEMS
