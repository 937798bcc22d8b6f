"""Decryption (the official XOR-with-SHA-256 scheme) and the official file readers."""

from __future__ import annotations

import base64
import hashlib
import unicodedata

import pytest
from browsecomp.helpers import CANARY, write_csv, write_xlsx

from evalbench import sources
from evalbench.browsecomp.data import (
    ZH_SOURCE,
    OfficialDataError,
    decrypt,
    derive_key,
    encrypt,
    fetch_browsecomp_csv,
    load_official,
    read_browsecomp_csv,
    read_browsecomp_zh_xlsx,
)
from evalbench.sources import DataUnavailable


def test_the_key_is_the_sha256_digest_repeated_and_cut():
    digest = hashlib.sha256(b"abc").digest()  # 32 bytes
    assert derive_key("abc", 70) == digest + digest + digest[:6]  # 32 + 32 + 6
    assert derive_key("abc", 5) == digest[:5]
    assert derive_key("abc", 0) == b""


def test_decrypt_is_xor_with_the_key_by_hand():
    # plaintext "Hi" = 0x48 0x69; key = sha256("k")[:2]
    key = hashlib.sha256(b"k").digest()[:2]
    cipher = base64.b64encode(bytes([0x48 ^ key[0], 0x69 ^ key[1]])).decode()
    assert decrypt(cipher, "k") == "Hi"


@pytest.mark.parametrize("text", ["Who won?", "谁赢得了2019年的比赛？", "x" * 100, "é\nline two"])
def test_encrypt_then_decrypt_round_trips(text):
    assert decrypt(encrypt(text, "BrowseComp-ZH"), "BrowseComp-ZH") == text
    assert encrypt(text, "a") != encrypt(text, "b")


def test_a_synthetic_csv_decrypts(tmp_path):
    rows = [
        ("Which bridge opened in 1932?", "Sydney Harbour Bridge", "Geography"),
        ("How many moons?", "2", "Science"),
    ]
    items = read_browsecomp_csv(write_csv(tmp_path / "bc.csv", rows))
    assert [(i.id, i.question, i.answer, i.topic) for i in items] == [
        ("bc-0000", rows[0][0], rows[0][1], "Geography"),
        ("bc-0001", rows[1][0], rows[1][1], "Science"),
    ]


def test_a_csv_row_that_does_not_decrypt_names_file_line_and_field(tmp_path):
    path = write_csv(tmp_path / "bc.csv", [("q", "a", "t"), ("q2", "a2", "t")])
    text = path.read_text().splitlines()
    text[2] = text[2].replace(CANARY, "wrong-canary")  # row 2 is on line 3
    path.write_text("\n".join(text) + "\n")
    with pytest.raises(OfficialDataError, match=r"bc\.csv:3: (problem|answer): "):
        read_browsecomp_csv(path)
    path.write_text("problem,answer\nx,y\n")
    with pytest.raises(OfficialDataError, match=r"bc\.csv:1: missing column\(s\) canary"):
        read_browsecomp_csv(path)


@pytest.mark.parametrize(
    "text", ["می\u200cخواهم", "co\u00adoperation", "👨\u200d👩\u200d👧 family"]
)
def test_text_with_format_characters_decrypts_as_the_official_reader_does(tmp_path, text):
    """simple-evals' ``decrypt`` only decodes: a zero-width joiner or non-joiner, a soft hyphen
    (Unicode category Cf) are text. Before: "decrypts to no readable text"."""
    assert any(unicodedata.category(ch) == "Cf" for ch in text)
    (item,) = read_browsecomp_csv(write_csv(tmp_path / "bc.csv", [(text, text, "t")]))
    assert (item.question, item.answer) == (text, text)


@pytest.mark.parametrize(
    ("content", "says"),
    [(b"problem,answer,problem_topic,canary\n", "bc.csv: no questions"),
     (b"problem,answer,problem_topic,canary\n\xe9,\xe9,Art,x\n",
      "bc.csv:2: not UTF-8: byte 0xe9 at offset 36"),
     (None, "bc.csv:2: a field over 131,072 characters")],
)  # fmt: skip
def test_an_unreadable_csv_is_one_line_naming_it(tmp_path, content, says):
    """Before: a header with no row was ``KeyError: 'system'`` in the study; latin-1 bytes a
    ``UnicodeDecodeError``; a 10 MB field the csv module's bare "field larger than field
    limit (131072)"."""
    path = tmp_path / "bc.csv"
    if content is None:
        write_csv(path, [("q", "x" * 200_000, "t")])
    else:
        path.write_bytes(content)
    with pytest.raises(OfficialDataError) as caught:
        read_browsecomp_csv(path)
    assert str(caught.value).endswith(says) or says in str(caught.value)
    assert str(caught.value).startswith(str(tmp_path))


def test_a_workbook_that_is_no_xlsx_or_has_no_row_is_one_line(tmp_path):
    (tmp_path / "zh.xlsx").write_text("not a zip")
    with pytest.raises(OfficialDataError, match=r"zh\.xlsx: not an xlsx workbook"):
        read_browsecomp_zh_xlsx(tmp_path / "zh.xlsx")
    with pytest.raises(OfficialDataError, match=r"zh\.xlsx: no questions"):
        read_browsecomp_zh_xlsx(write_xlsx(tmp_path / "zh.xlsx", []))


def test_a_synthetic_xlsx_decrypts_all_three_fields(tmp_path):
    rows = [("体育", "哪支球队赢得了比赛？", "北京队"), ("历史", "Which year?", "1911")]
    items = read_browsecomp_zh_xlsx(write_xlsx(tmp_path / "zh.xlsx", rows))
    assert [(i.id, i.topic, i.question, i.answer) for i in items] == [
        ("bczh-000", *rows[0]),
        ("bczh-001", *rows[1]),
    ]


def test_an_xlsx_without_the_canary_column_is_refused(tmp_path):
    import openpyxl

    book = openpyxl.Workbook()
    book.active.append(["Topic", "Question", "Answer"])
    book.save(tmp_path / "bad.xlsx")
    with pytest.raises(OfficialDataError, match=r"row 1: missing column.*canary"):
        read_browsecomp_zh_xlsx(tmp_path / "bad.xlsx")


def test_local_files_load_by_suffix(tmp_path):
    style, items = load_official(str(write_xlsx(tmp_path / "zh.xlsx", [("t", "q", "a")])))
    assert style == "browsecomp_zh" and items[0].answer == "a"
    style, items = load_official(str(write_csv(tmp_path / "bc.csv", [("q", "a", "t")])))
    assert style == "browsecomp" and items[0].question == "q"


def test_the_browsecomp_csv_is_unavailable_offline_with_a_reason(monkeypatch):
    monkeypatch.delenv("EVALBENCH_DATA_MIRROR", raising=False)
    monkeypatch.setenv("EVALBENCH_OFFLINE", "1")
    with pytest.raises(DataUnavailable, match=r"browse_comp_test_set\.csv"):
        fetch_browsecomp_csv()


@pytest.mark.mirror
def test_the_mirror_decrypts_all_289_browsecomp_zh_rows_to_valid_text(mirror):
    items = read_browsecomp_zh_xlsx(sources.fetch(ZH_SOURCE, progress=False))
    assert len(items) == 289 and len({i.id for i in items}) == 289
    for item in items:
        for field in (item.topic, item.question, item.answer):
            assert field.strip(), item.id
            assert all(unicodedata.category(c) != "Cc" or c in "\n\t\r" for c in field), item.id
            assert "\ufffd" not in field, item.id
    topics = {}
    for item in items:
        topics[item.topic] = topics.get(item.topic, 0) + 1
    # the 11 topics and their sizes (research notes, computed from the same file)
    assert topics == {
        "影视": 45,
        "艺术": 40,
        "地理": 37,
        "音乐": 32,
        "历史": 29,
        "医学": 26,
        "电子游戏": 23,
        "科技": 22,
        "体育": 18,
        "政策法规": 10,
        "学术论文": 7,
    }
