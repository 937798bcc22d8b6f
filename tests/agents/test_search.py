"""Document search: BM25 scores computed by hand (Lucene variant), deterministic ties,
folder loading (html to text), and open_page paging."""

from __future__ import annotations

import json
import math

import pytest
from pydantic import ValidationError

from evalbench.agents.tools import DocumentIndex, ToolContext, call_tool, get_tools
from evalbench.agents.tools.documents import Document, html_to_text, tokenize

SEARCH, OPEN_PAGE = get_tools(["search", "open_page"])
K1, B = 1.5, 0.75

# Indexed as title + text: d1 = [one, cat, cat, dog] (4 tokens), d2 = [two, cat, fish] (3),
# d3 = [three, bird, fish, fish, fish] (5); avgdl = 12 / 3 = 4.
CORPUS = [
    {"id": "d1", "title": "One", "text": "cat cat dog"},
    {"id": "d2", "title": "Two", "text": "cat fish"},
    {"id": "d3", "title": "Three", "text": "bird fish fish fish"},
]


def bm25(tf: int, df: int, dl: int, n: int = 3, avgdl: float = 4.0) -> float:
    """One term's Lucene BM25: idf · tf / (tf + k1 · (1 - b + b · dl / avgdl))."""
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
    return idf * tf / (tf + K1 * (1 - B + B * dl / avgdl))


@pytest.fixture(scope="module")
def index() -> DocumentIndex:
    return DocumentIndex.from_records(CORPUS)


def test_scores_match_the_hand_computation(index):
    # "cat": df = 2, idf = ln(1 + 1.5 / 2.5) = ln 1.6 = 0.4700
    #   d1: tf 2, dl 4 -> 2 / (2 + 1.5 · 1) = 0.5714 -> 0.2686
    #   d2: tf 1, dl 3 -> 1 / (1 + 1.5 · 0.8125) = 0.4507 -> 0.2118
    hits = index.search("cat")
    assert [h.id for h in hits] == ["d1", "d2"]  # d3 has no cat: left out, not scored 0
    assert [h.score for h in hits] == pytest.approx([bm25(2, 2, 4), bm25(1, 2, 3)], abs=1e-4)
    assert [round(h.score, 4) for h in hits] == [0.2686, 0.2118]


def test_a_two_word_query_ranks_by_the_summed_scores(index):
    # "fish cat": d2 = cat 0.2118 + fish (tf 1, dl 3) 0.2118 = 0.4236
    #             d3 = fish (tf 3, dl 5): 0.4700 · 3 / (3 + 1.5 · 1.1875) = 0.2949
    #             d1 = cat 0.2686
    hits = index.search("Fish, CAT!")
    assert [h.id for h in hits] == ["d2", "d3", "d1"]
    expected = [2 * bm25(1, 2, 3), bm25(3, 2, 5), bm25(2, 2, 4)]
    assert [h.score for h in hits] == pytest.approx(expected, abs=1e-4)


def test_ties_are_broken_by_id_and_k_cuts():
    index = DocumentIndex.from_records(
        [{"id": i, "text": "same words here"} for i in ("m", "z", "k")]
    )
    assert [h.id for h in index.search("words")] == ["k", "m", "z"]
    assert [h.id for h in index.search("words", k=2)] == ["k", "m"]


def test_stopwords_and_unknown_words_find_nothing(index):
    assert tokenize("The cat and THE dog") == ["cat", "dog"]
    assert index.search("the and of") == []
    assert index.search("zebra") == []


def test_the_search_tool_lists_ids_titles_and_snippets(index):
    ctx = ToolContext(None, {}, index)
    result, error = call_tool(SEARCH, json.dumps({"query": "dog", "k": 3}), ctx)
    # "dog": df = 1, idf = ln(1 + 2.5 / 1.5) = 0.9808; d1 tf 1 dl 4 -> 0.9808 / 2.5 = 0.392
    assert (result, error) == (
        "1 result for 'dog' (open one with open_page):\n1. id: d1 | One (score 0.392)\n   cat cat dog",
        None,
    )
    assert call_tool(SEARCH, '{"query": "zebra"}', ctx)[0] == "no documents match 'zebra'"
    assert call_tool(SEARCH, '{"query": "x"}', ToolContext(None, {}, None))[1] == (
        "no document collection is configured for this task"
    )


def test_open_page_pages_through_a_document():
    text = "".join(f"{i:04d}|" for i in range(100))  # 500 characters
    index = DocumentIndex.from_records([{"id": "long", "title": "Long", "text": text, "url": "u"}])
    ctx = ToolContext(None, {}, index, char_budget=300)  # a page: 300 - 200 = 100 characters
    first = call_tool(OPEN_PAGE, '{"id": "long"}', ctx)[0]
    assert first == (
        f"[long | Long | u: characters 0-100 of 500]\n{text[:100]}\n"
        "[400 more characters: call open_page with id='long' and start=100]"
    )
    last = call_tool(OPEN_PAGE, '{"id": "long", "start": 450}', ctx)[0]
    assert last == f"[long | Long | u: characters 450-500 of 500]\n{text[450:]}\n[end]"
    assert call_tool(OPEN_PAGE, '{"id": "long", "start": 500}', ctx)[1] == (
        "start=500 is past the end of long | Long | u (500 characters)"
    )
    assert call_tool(OPEN_PAGE, '{"id": "nope"}', ctx)[1] == (
        "no document with id 'nope' (ids come from search results)"
    )


def test_from_folder_reads_txt_md_and_html(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.md").write_text("# Alpha title\nbody alpha")
    (tmp_path / "c.txt").write_text("\nGamma first line\nmore")
    (tmp_path / "d.pdf").write_bytes(b"%PDF")  # not a collection format: skipped
    (tmp_path / "sub" / "b.html").write_text(
        "<html><head><title>Beta page</title><style>.x{color:red}</style></head>"
        "<body><script>var secret = 1;</script><h1>Beta</h1><p>beta &amp; body</p></body></html>"
    )
    index = DocumentIndex.from_folder(tmp_path)
    assert [(d.id, d.title) for d in index.documents] == [
        ("a.md", "Alpha title"),
        ("c.txt", "Gamma first line"),
        ("sub/b.html", "Beta page"),
    ]
    assert index.get("sub/b.html").text == "Beta\nbeta & body"
    assert [h.id for h in index.search("beta")] == ["sub/b.html"]


def test_a_collection_file_that_leads_outside_the_folder_is_refused(tmp_path):
    """A symbolic link in the documents folder to a file elsewhere was indexed: the agent's
    search tool could show it to the model (as HLE's folders read such files, fixed alike)."""
    folder, outside = tmp_path / "docs", tmp_path / "outside"
    folder.mkdir()
    outside.mkdir()
    (folder / "a.md").write_text("# A\nalpha")
    (outside / "secret.txt").write_text("the secret")
    (folder / "s.txt").symlink_to(outside / "secret.txt")
    with pytest.raises(ValueError, match=r"DocumentIndex: .*s\.txt leads outside .*docs"):
        DocumentIndex.from_folder(folder)


def test_html_to_text_drops_scripts_and_styles():
    title, text = html_to_text(
        "<title>T</title><div>a<script>x()</script>b</div><style>p{}</style>"
    )
    assert (title, text) == ("T", "ab")


def test_bad_collections_fail_loudly(tmp_path):
    with pytest.raises(ValueError, match=r"no \.txt/\.md/\.html/\.htm files"):
        DocumentIndex.from_folder(tmp_path)
    with pytest.raises(ValueError, match=r"duplicate document ids \['a'\]"):
        DocumentIndex([Document("a", "", "x"), Document("a", "", "y")])
    with pytest.raises(ValidationError, match="body"):
        DocumentIndex.from_records([{"id": "a", "text": "x", "body": "typo"}])


@pytest.mark.parametrize(
    ("content", "says"),
    [(b'{"id": "d1", "text": "a"}\nnot json\n', ":2: not JSON (Expecting value)"),
     (b'{"id": "d1", "text": "a"}\n{"id": "d2"}\n', ":2: text: missing required field"),
     (b'{"id": "d1", "text": "a"}\n["d2", "b"]\n', ":2: expected a JSON object"),
     (b'{"id": "d1", "text": "caf\xe9"}\n', ":1: not UTF-8: byte 0xe9 at offset 25"),
     (b'{"id": "d1", "text": "a"}\n{"id": "d1", "text": "b"}\n', ":2: id 'd1' already on line 1"),
     (b"\n\n", ": no documents")],
)  # fmt: skip
def test_a_bad_documents_file_is_one_line_naming_file_and_line(tmp_path, content, says):
    from evalbench.agents.reference import _documents
    from evalbench.agents.types import SystemSpec

    path = tmp_path / "docs.jsonl"
    path.write_bytes(content)
    spec = SystemSpec(name="a", provider="agent", model="m", documents=str(path))
    with pytest.raises(ValueError) as err:
        _documents(spec)
    assert str(err.value) == f"documents: {path}{says}"


def test_a_documents_path_that_is_missing_is_one_line(tmp_path):
    from evalbench.agents.reference import _documents
    from evalbench.agents.types import SystemSpec

    spec = SystemSpec(name="a", provider="agent", model="m", documents=str(tmp_path / "nope"))
    with pytest.raises(ValueError) as err:
        _documents(spec)
    assert str(err.value) == f"documents: {tmp_path / 'nope'}: no such file or folder"
