"""The index and system pages fit a laptop: the scorecard is a block of rows per study (no
column per study, mostly "—"), simulated systems show no cost and namesakes in different
studies keep their own pages, skipped studies are one folded line each, and every table
scrolls inside its own box."""

from __future__ import annotations

import json
import re

from evalbench.index import build_index, system_page_name

SKIP_REASON = (
    "DataUnavailable: data file 'bfcl/question/simple_python' (https://raw.githubusercontent"
    ".com/x/y.json) is unavailable: no mirror set (EVALBENCH_DATA_MIRROR); not in the cache "
    "/c/data; download failed: <urlopen error>. Provide it with `evalbench fetch "
    "bfcl/question/simple_python` on a machine with network access, or point "
    "EVALBENCH_DATA_MIRROR at a mirror that holds raw.githubusercontent.com/x/y.json."
)


def _skipped(run_dir, reason=SKIP_REASON):
    manifest = json.loads((run_dir / "manifest.json").read_text())
    manifest.update(status="skipped", reason=reason, headlines={})
    (run_dir / "manifest.json").write_text(json.dumps(manifest))


def _card(index: str) -> str:
    return index[index.index('<div id="scorecard">') :]


def test_the_scorecard_is_a_block_per_study_without_a_column_per_study(gaia_run, outputs):
    for study in ("ga", "gb", "gc", "gd", "ge", "gf"):  # six studies: were six columns
        gaia_run(study, "r1", {f"{study}-sys": {"t1": True, "t2": False}})
    card = _card(build_index(outputs).read_text())
    heads = re.findall(r"<th>([^<]*)</th>", card.split("<tbody>")[0])
    assert heads == ["system", "headline [95% interval]", "n", "run"]  # no cost: simulated
    assert card.count('<tr class="group">') == 6
    assert "—" not in card  # every cell filled: 1 of 2 right = 0.500 for each system
    assert card.count("<b>0.500</b>") == 6


def test_simulated_systems_show_no_cost_and_real_ones_do(gaia_run, outputs):
    gaia_run("g", "r1", {"sim-a": {"t1": True}})  # usage says $0.25 for every system
    gaia_run("h", "r1", {"real-b": {"t1": True}}, simulated=False)
    card = _card(build_index(outputs).read_text())
    heads = re.findall(r"<th>([^<]*)</th>", card.split("<tbody>")[0])
    assert heads == ["system", "headline [95% interval]", "n", "cost", "run"]
    sim_row, real_row = re.findall(r'<tr class="system">(.*?)</tr>', card)
    assert "$" not in sim_row and "simulated" in sim_row
    assert "<td>$0.2500</td>" in real_row
    page = (outputs / "systems" / system_page_name("sim-a", "g")).read_text()
    assert "$" not in page
    assert "$0.2500" in (outputs / "systems" / system_page_name("real-b")).read_text()


def test_namesakes_simulated_in_two_studies_keep_apart_and_a_real_model_is_one_page(
    gaia_run, outputs
):
    gaia_run("gaia_x", "r1", {"strong-sim": {"t1": True, "t2": True}})
    gaia_run("bfcl_x", "r1", {"strong-sim": {"t1": False, "t2": False}})
    gaia_run("gaia_y", "r1", {"gpt": {"t1": True}}, simulated=False)
    gaia_run("bfcl_y", "r1", {"gpt": {"t1": False}}, simulated=False)
    index = build_index(outputs).read_text()
    gaia_page = system_page_name("strong-sim", "gaia_x")
    bfcl_page = system_page_name("strong-sim", "bfcl_x")
    assert gaia_page != bfcl_page and system_page_name("strong-sim") not in (gaia_page, bfcl_page)
    assert f'href="systems/{gaia_page}"' in index and f'href="systems/{bfcl_page}"' in index
    gaia = (outputs / "systems" / gaia_page).read_text()
    assert "gaia_x" in gaia and "bfcl_x" not in gaia and "<b>1.000</b>" in gaia
    bfcl = (outputs / "systems" / bfcl_page).read_text()
    assert "bfcl_x" in bfcl and "gaia_x" not in bfcl and "<b>0.000</b>" in bfcl
    assert "simulated in" in gaia  # the heading says whose simulator it is
    gpt = (outputs / "systems" / system_page_name("gpt")).read_text()
    assert "gaia_y" in gpt and "bfcl_y" in gpt  # one real model, one page across studies
    pages = sorted(p.name for p in (outputs / "systems").iterdir())
    assert pages == sorted([gaia_page, bfcl_page, system_page_name("gpt")])


def test_a_skipped_study_is_one_short_folded_line_below_the_results(gaia_run, outputs):
    gaia_run("a_ok", "r1", {"s": {"t1": True}})
    _skipped(gaia_run("b_skipped", "r1", {"s": {"t1": True}}, status="skipped"))
    index = build_index(outputs).read_text()
    runs, rest = index.split('<details class="skipped"', 1)
    assert "b_skipped" not in runs and "a_ok/r1" in runs  # results first, skips after them
    group = rest.split("</details>\n", 1)[0]
    assert "1 study skipped: needs data" in group
    assert "evalbench fetch --all" in group and "EVALBENCH_DATA_MIRROR" in group
    line = re.findall(r"<li><details><summary[^>]*>(.*?)</summary>", group)[0]
    # the same few words as make report's line for it (one home: evalbench.skipped)
    assert line == "<b>b_skipped</b>: needs public data (bfcl/…)"
    assert len(re.sub(r"<[^>]+>", "", line)) < 160  # one short line; the rest folded
    assert "raw.githubusercontent" in group.split(line, 1)[1]  # the full reason, folded


def test_every_table_of_the_index_and_system_pages_scrolls_in_its_own_box(gaia_run, outputs):
    gaia_run("g", "r1", {"s": {"t1": True}})
    index = build_index(outputs).read_text()
    pages = [index, *(p.read_text() for p in (outputs / "systems").iterdir())]
    for page in pages:
        assert page.count("<table") == page.count('<div class="evalbench-scroll"><table')
        assert "div.evalbench-scroll::-webkit-scrollbar" in page  # a scrollbar always drawn


def test_the_no_result_page_tables_scroll_in_their_boxes():
    from evalbench.summary import no_result_html

    long = "x" * 400  # an error reason with no place to break
    manifest = {
        "study": "s", "run_id": "r", "title": "t", "reason": "no item was scored",
        "measured": [{"system": "a", "scored": 0, "total": 3, "unscored": {long: 3}}],
        "usage": [{"system": "a", "calls": 3, "errors": 3, "error_reasons": {long: 3}}],
    }  # fmt: skip
    page = no_result_html(manifest)
    assert page.count("<table") == 2
    assert page.count('<div class="evalbench-scroll"><table') == 2
    assert "div.evalbench-scroll::-webkit-scrollbar" in page


def test_a_study_named_with_url_characters_links_to_its_own_pages(gaia_run, outputs):
    # Before: href="a#b?c/r1/report.html": a browser asked for "a" (the rest a query and a
    # fragment); a newline in a name broke the link the same way
    from html.parser import HTMLParser
    from urllib.parse import unquote, urlsplit

    for study in ("a#b?c", "per%cent", "new\nline", "sp ace"):
        gaia_run(study, "r1", {"s": {"t1": True}})
    index = build_index(outputs)

    class Links(HTMLParser):
        def handle_starttag(self, tag, attrs):
            hrefs.extend(v for k, v in attrs if tag == "a" and k == "href" and v)

    hrefs: list[str] = []
    parser = Links()
    parser.feed(index.read_text())
    targets = [h for h in hrefs if not h.startswith("#")]
    assert len(targets) >= 8
    for href in targets:  # as a browser reads it: the path only, then unquoted
        parts = urlsplit(href)
        assert not parts.query and not parts.fragment, href
        assert (index.parent / unquote(parts.path)).is_file(), href


def test_a_run_copied_under_another_study_is_named_by_its_folder(gaia_run, outputs, capsys):
    # Before: a copy of g/r1 under tamper/ was listed (and compared) as "g/r1" twice, one
    # of them linking to tamper/: which folder a number came from was not said anywhere
    import shutil

    from evalbench.cli import main

    original = gaia_run("g", "r1", {"s": {"t1": True, "t2": False}})
    shutil.copytree(original, outputs / "tamper" / "r1")
    index = build_index(outputs).read_text()
    assert "<div class='id'>tamper/r1</div>" in index and "<div class='id'>g/r1</div>" in index
    assert main(["compare", str(original), str(outputs / "tamper" / "r1"), "--no-report"]) == 0
    out = capsys.readouterr().out
    assert "A = baseline  g/r1 " in out and "B = candidate tamper/r1 " in out
