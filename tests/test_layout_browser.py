"""Every page evalbench writes fits a laptop: at 1,280 × 800 in headless Chromium no page
scrolls sideways, every table wider than its place scrolls inside its own box with a
scrollbar drawn, and the index's first screen shows results even when six studies were
skipped (as on a first run with no network).

One outputs folder for the module: the GAIA demo and the sweep demo cut to two cells (its
configurations table is still wider than the report), eight more studies with the same two
simulated systems written by hand (a wide scorecard, namesakes), six skipped studies written
as a first run without data leaves them, and the index. Chromium overlays its scrollbars, as
on macOS: a box with a default scrollbar shows none until touched, and a table in it looks
cut at the window's edge; evalbench's boxes draw theirs.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from compare.conftest import write_gaia_run

from evalbench.index import system_page_name
from evalbench.publish import build_index, run_study
from evalbench.settings import ENV_CACHE, ENV_OUTPUTS

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.xdist_group("layout_browser")]

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
WIDTH, HEIGHT = 1280, 800
SKIPPED = ("arena_public", "bfcl_demo", "bfcl_public", "browsecomp_official", "datagen_demo",
           "judge_public")  # fmt: skip
"""What a first run with no network and no mirror skips; all sort before gaia_demo."""
MORE = tuple(f"suite_{n}_demo" for n in range(1, 9))
"""Studies written by hand, each with strong-sim and weak-sim."""
HOSTILE = "zz_hostile_demo"
"""A study written by hand whose title and system name are one unbreakable word each."""

MEASURE = """() => {
  document.querySelectorAll('details').forEach(d => { d.open = true; });  // folded ones too
  const wide = [];
  for (const table of document.querySelectorAll('table')) {
    if (table.scrollWidth <= table.parentElement.clientWidth + 1) continue;
    const box = table.closest('div.evalbench-scroll');
    const style = box && getComputedStyle(box);
    wide.push({
      head: (table.innerText || '').slice(0, 50),
      scrolls: !!box && ['auto', 'scroll'].includes(style.overflowX),
      scrollbar: box ? box.offsetHeight - box.clientHeight : 0,
      right: box ? box.getBoundingClientRect().right : table.getBoundingClientRect().right,
    });
  }
  return {page: document.scrollingElement.scrollWidth, wide: wide};
}"""


def _skip_like_a_first_run(outputs: Path) -> None:
    """The manifests of the studies a first run without data skips (their real reason)."""
    for number, study in enumerate(SKIPPED):
        run_dir = outputs / study / f"skipped{number}"
        run_dir.mkdir(parents=True)
        name = f"{study}/question/simple_python"
        reason = (f"DataUnavailable: data file '{name}' (https://raw.githubusercontent.com/o/r/"
                  f"{'0' * 40}/data/{study}.json) is unavailable: no mirror set "
                  "(EVALBENCH_DATA_MIRROR); not in the cache; download failed: <urlopen error "
                  f"[Errno -2] Name or service not known>. Provide it with `evalbench fetch "
                  f"{name}` on a machine with network access.")  # fmt: skip
        manifest = {"study": study, "kind": "gaia", "title": f"{study} — offline demo",
                    "run_id": run_dir.name, "status": "skipped", "reason": reason,
                    "started_at": "2026-01-01T00:00:00+00:00", "overrides": []}  # fmt: skip
        (run_dir / "manifest.json").write_text(json.dumps(manifest))


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The module's outputs folder (see the module docstring)."""
    base = tmp_path_factory.mktemp("layout")
    with pytest.MonkeyPatch.context() as env:  # module scope: before the autouse isolation
        env.setenv(ENV_OUTPUTS, str(base / "outputs"))
        env.setenv(ENV_CACHE, str(base / "cache"))
        small_sweep = ["sweep.seeds=[0]", 'sweep.grid={"systems.0.limits.max_steps": [5]}']
        for name, overrides in [("gaia_demo", []), ("sweep_demo", small_sweep)]:
            result = run_study(ROOT / "params" / f"{name}.yaml", overrides, warm=True)
            assert result.status == "ok", result.reason
        _skip_like_a_first_run(base / "outputs")
        for study in MORE:  # 1 of 2 and 0 of 2 right
            outcomes = {"strong-sim": {"t1": True, "t2": False}, "weak-sim": {"t1": False}}
            write_gaia_run(base / "outputs", study, "r1", outcomes)
        # one unbreakable 10,000-character title and a 300-character system name
        hostile = write_gaia_run(base / "outputs", HOSTILE, "r1", {"S" * 300: {"t1": True}})
        manifest = json.loads((hostile / "manifest.json").read_text())
        (hostile / "manifest.json").write_text(
            json.dumps({**manifest, "title": "T " + "W" * 10_000})
        )
        build_index()
    return base / "outputs"


@pytest.fixture(scope="module")
def page(outputs: Path) -> Iterator[Any]:
    """A 1,280 × 800 page of headless Debian Chromium (skips without it or playwright)."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="needs the playwright package")
    executable = CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")
    if executable is None:
        pytest.skip("needs Debian chromium at /usr/bin/chromium (.ci/run installs it)")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=executable, ignore_default_args=["--hide-scrollbars"],
            args=["--no-sandbox", "--disable-gpu", "--enable-features=OverlayScrollbar"],
        )  # fmt: skip
        try:
            yield browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
        finally:
            browser.close()


def _pages(outputs: Path) -> list[Path]:
    """The index, every system page, trends page, summary and report."""
    found = [outputs / "index.html", *sorted((outputs / "systems").glob("*.html"))]
    found += sorted(outputs.glob("*/trends.html")) + sorted(outputs.glob("*/*/summary.html"))
    return found + sorted(outputs.glob("*/*/report.html"))


def test_no_page_scrolls_sideways_and_every_wide_table_scrolls_in_its_box(outputs, page):
    kinds, wide_tables = set(), 0
    for path in _pages(outputs):
        page.goto(path.as_uri())
        found = page.evaluate(MEASURE)
        name = path.relative_to(outputs).as_posix()
        assert found["page"] <= WIDTH, f"{name} is {found['page']} px wide"
        for table in found["wide"]:
            assert table["scrolls"], f"{name}: a table wider than its place is cut: {table}"
            assert table["scrollbar"] >= 8, f"{name}: its box draws no scrollbar: {table}"
            assert table["right"] <= WIDTH, f"{name}: its box ends off screen: {table}"
        wide_tables += len(found["wide"])
        kinds.add(path.name if path.parent.name != "systems" else "system")
    assert kinds == {"index.html", "system", "trends.html", "summary.html", "report.html"}
    assert wide_tables >= 1  # the sweep's configurations table, at least: the check bites


def test_one_unbreakable_title_pushes_no_studys_numbers_off_screen(outputs, page):
    """Before: a 10,000-character title made the index's first column ~158,000 px wide, so
    every study's status and numbers began there, inside the scroll box (and the study's
    trends page was 353,001 px wide: checked by the test above)."""
    page.goto((outputs / "index.html").as_uri())
    lefts = page.evaluate("""() => [...document.querySelectorAll('td.st')]
      .map(td => td.getBoundingClientRect().left)""")
    assert lefts and max(lefts) < WIDTH, lefts


def test_namesakes_simulated_in_different_studies_have_a_page_each(outputs):
    for study in ("gaia_demo", *MORE):
        page = (outputs / "systems" / system_page_name("strong-sim", study)).read_text()
        assert f"simulated in {study}" in page


def test_the_index_first_screen_shows_results_not_skipped_studies(outputs, page):
    page.goto((outputs / "index.html").as_uri())
    rows = page.evaluate("""() => [...document.querySelectorAll('tr')]
      .filter(tr => tr.querySelector('td.st.ok'))
      .map(tr => ({bottom: tr.getBoundingClientRect().bottom, text: tr.innerText}))""")
    shown = [r for r in rows if r["bottom"] <= HEIGHT]
    assert shown and any("gaia_demo" in r["text"] for r in shown), rows
    skipped = page.evaluate("""() => [...document.querySelectorAll('details.skipped li')]
      .map(li => li.getBoundingClientRect().height)""")
    assert len(skipped) == len(SKIPPED)
    assert all(height < 40 for height in skipped)  # one short line each, the reason folded
