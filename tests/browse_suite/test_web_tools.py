"""The browsing tools against the local web: plain HTTP (open_url, search_site, submit_form)
and headless Chromium (browser)."""

from __future__ import annotations

import json

import pytest
from browse_suite.helpers import chromium_or_skip

from evalbench.agents.tools import ToolContext, call_tool, get_tools
from evalbench.agents.tools.web import web_scope
from evalbench.browse_suite import LocalWeb

TOOLS = {t.name: t for t in get_tools(["open_url", "search_site", "submit_form", "browser"])}
VIRTUAL = "cove.evalbench.test"


def _call(name: str, ctx: ToolContext, **arguments) -> tuple[str, str | None]:
    return call_tool(TOOLS[name], json.dumps(arguments), ctx)


@pytest.fixture
def site(tmp_path):
    """The local web and a task scope on it (virtual host mapped to the real port)."""
    ctx = ToolContext(workdir=tmp_path, attachments={}, documents=None, char_budget=3000)
    with (
        LocalWeb() as web,
        web_scope(f"http://{VIRTUAL}/s/t/", aliases={VIRTUAL: f"127.0.0.1:{web.port}"}),
    ):
        yield web, ctx


def test_open_url_shows_text_tables_links_and_forms_under_the_virtual_host(site):
    web, ctx = site
    text, error = _call("open_url", ctx, url="/library/index.html")
    assert error is None
    assert f"URL: http://{VIRTUAL}/s/t/library/index.html" in text
    assert "Wednesday | 09:00–20:00" in text  # a table row
    assert f"-> http://{VIRTUAL}/s/t/library/branches.html" in text  # links, absolute, virtual
    assert f"[form 1 search] GET http://{VIRTUAL}/s/t/library/search — fields: q" in text
    assert str(web.port) not in text  # the agent never sees the real port
    assert web.served("t")[0].path == "library/index.html"


def test_paging_reads_the_same_copy_and_does_not_count_as_a_visit(site):
    web, ctx = site
    small = ctx._replace(char_budget=400)
    first, _ = _call("open_url", small, url="transit/board.html")
    assert "more characters: call open_url with url=" in first and "start=200" in first
    _call("open_url", small, url="transit/board.html", start=200)
    visits = [s.visit for s in web.served("t") if s.path == "transit/board.html"]
    assert visits == [1]
    again, _ = _call("open_url", ctx, url="transit/board.html")  # start 0: a new visit
    assert "Delayed 7 min" in again


def test_search_and_forms(site):
    _, ctx = site
    found, _ = _call("search_site", ctx, url="library/index.html", query="lantern almanac")
    assert "1 result for" in found and "book?id=b03" in found
    stores, _ = _call("submit_form", ctx, url="shop/stores.html", fields={"region": "harbour"})
    assert "Net Loft" in stores and "Sunday | 09:00–13:00" in stores
    _, error = _call("submit_form", ctx, url="shop/stores.html", fields={"region": "west"})
    assert error == "region='west' is not one of the options: north | harbour | east"
    _text, error = _call("submit_form", ctx, url="shop/stores.html", fields={"city": "x"})
    assert error == "the form has no field(s) city (fields: region)"


def test_without_scripts_the_catalogue_shows_only_its_noscript_text(site):
    _, ctx = site
    text, _ = _call("open_url", ctx, url="shop/catalog.html")
    assert "Please enable JavaScript" in text and "£6.80" not in text


def test_hosts_outside_the_scope_are_refused(site):
    _, ctx = site
    for url in ("https://example.com/", "http://10.0.0.1/", "file:///etc/passwd"):
        text, error = _call("open_url", ctx, url=url)
        assert text.startswith("error: ") and error is not None, url
    text, error = _call("open_url", ctx, url="library/nope.html")
    assert error == f"HTTP 404 for http://{VIRTUAL}/s/t/library/nope.html"


def test_without_a_scope_relative_urls_have_no_site(tmp_path):
    ctx = ToolContext(workdir=tmp_path, attachments={}, documents=None)
    _, error = _call("open_url", ctx, url="library/index.html")
    assert error == "'library/index.html' is not an absolute URL and this task has no site"


@pytest.mark.browser
def test_the_browser_runs_scripts_and_clicks(site):
    chromium_or_skip()
    web, ctx = site
    text, error = _call("browser", ctx, url="shop/catalog.html")
    assert error is None and "TL-1003 | Brass Hinge Set (pair) | £6.80 | 14" in text
    assert f"URL: http://{VIRTUAL}/s/t/shop/catalog.html" in text
    assert "shop/api/products.json" in [s.path for s in web.served("t")]  # fetched by the script
    before, _ = _call("browser", ctx, url="shop/product-drill.html")
    assert "1.45 kg" not in before
    after, error = _call(
        "browser", ctx, url="shop/product-drill.html", click="text=Show specifications"
    )
    assert error is None and "Weight (with battery) | 1.45 kg" in after


PROBE = """<!doctype html><html><head><title>probe</title></head><body><p id="out">waiting</p>
<script>
const target = new URLSearchParams(location.search).get("target");
fetch(target).then(function (r) { return r.text(); })
  .then(function () { document.getElementById("out").textContent = "reached"; })
  .catch(function () { document.getElementById("out").textContent = "blocked"; });
</script></body></html>"""


@pytest.mark.browser
def test_the_browser_never_leaves_the_allowed_hosts(tmp_path):
    chromium_or_skip()
    (tmp_path / "site").mkdir()
    (tmp_path / "data").mkdir()
    (tmp_path / "site" / "probe.html").write_text(PROBE)
    ctx = ToolContext(workdir=tmp_path, attachments={}, documents=None)
    with LocalWeb(tmp_path / "site", tmp_path / "data") as web:
        direct = web.url("leak", "probe.html")  # the real address: not an allowed host here
        scope = web_scope(
            f"http://{VIRTUAL}/s/p/",
            allowed_hosts=frozenset(),
            aliases={VIRTUAL: f"127.0.0.1:{web.port}"},
        )
        with scope:
            text, error = _call("browser", ctx, url=f"probe.html?target={direct}")
            assert error is None and "blocked" in text
            _, error = _call("browser", ctx, url="https://example.com/")
            assert error is not None and "not reachable" in error
        assert [s.path for s in web.served("p")] == ["probe.html"] and web.served("leak") == []
        with web_scope(web.session_root("x")):  # loopback allowed: the same fetch goes through
            text, _ = _call("browser", ctx, url=f"probe.html?target={web.url('ok', 'probe.html')}")
            assert "reached" in text and web.served("ok")


def test_html_to_text_by_hand():
    from evalbench.agents.tools.web import parse_page

    html = (
        "<html><head><title>T</title><meta charset=utf-8><body>"  # no </head>
        '<h2>News</h2><p>Hello <a href="b?x=1">B</a></p><ul><li>one</li><li>two</li></ul>'
        "<table><tr><th>x</th><th>y</th></tr><tr><td>1</td><td>2</td></tr></table>"
        "<script>var secret = 1;</script><noscript>needs js</noscript>"
        '<form action="/find"><input type="search" name="q" value="d"><select name="s">'
        '<option value="a">A</option><option value="b" selected>B</option></select></form>'
    )
    page = parse_page("http://x/dir/page.html", html)
    assert page.title == "T"
    assert page.text.splitlines() == [
        "## News",
        "Hello B",
        "- one",
        "- two",
        "x | y",
        "1 | 2",
        "needs js",
        "A",
        "B",
    ]
    assert page.links == [("B", "http://x/dir/b?x=1")]
    (form,) = page.forms
    assert (form.action, form.method, form.search) == ("http://x/find", "get", True)
    assert form.fields == {"q": "d", "s": "b"} and form.options == {"s": ["a", "b"]}
