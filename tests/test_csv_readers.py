"""Every CSV a user hands evalbench (human votes, label items, retry-loop questions, data
reviews) is read as untrusted input by one reader (``records.iter_csv``): bytes that are not
UTF-8, a field past the csv module's limit and a stray quote are one line naming the file
(and line) in the reader's own error; Excel's BOM is dropped; a bad row is named by the line
it starts on, also after a row whose quoted field spans lines."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from pydantic import BaseModel, ConfigDict

from evalbench.arena.data import ArenaError, load_human_battles
from evalbench.datagen.scoring import DIMENSIONS
from evalbench.datagen.verification import import_verification_csv
from evalbench.labels.tasks import LabelTaskError, load_items
from evalbench.records import iter_csv
from evalbench.retry_loop.data import RetryDataError
from evalbench.retry_loop.data import load_items as load_questions


class Reader(NamedTuple):
    read: Callable[[Path], Any]
    error: type[Exception]
    header: str
    good: str  # a valid row; {text} is a free-text field that may span lines
    bad: str  # a row the reader refuses, and (below) the words of its error
    says: str


READERS = {
    "arena votes": Reader(lambda p: load_human_battles(p, ["a", "b"]), ArenaError,
                          "model_a,model_b,winner,question_id", "a,b,a,{text}",
                          "a,b,neither,q2", "field 'winner'"),
    "label items": Reader(lambda p: load_items(p, "rubric"), LabelTaskError,
                          "item,question,answer", "i1,{text},yes", "i2,,no",
                          "field 'question': missing or empty"),
    "retry-loop questions": Reader(lambda p: load_questions(str(p)), RetryDataError,
                                   "item,question,reference", "i1,{text},42", "i2,,7",
                                   "column 'question': missing or empty"),
    "data reviews": Reader(import_verification_csv, ValueError,
                           ",".join(["problem_id", *DIMENSIONS, "status", "comments"]),
                           "p1,5,5,5,5,approved,{text}", "p2,9,5,5,5,approved,",
                           "correctness must be an integer 1-5"),
}  # fmt: skip


def _write(tmp_path: Path, reader: Reader, rows: list[str], prefix: bytes = b"") -> Path:
    path = tmp_path / "in.csv"
    path.write_bytes(prefix + "\n".join([reader.header, *rows, ""]).encode())
    return path


@pytest.mark.parametrize("name", list(READERS))
def test_bytes_that_are_not_utf8_are_one_line_naming_the_byte(name, tmp_path):
    reader = READERS[name]
    path = _write(tmp_path, reader, [reader.good.format(text="caf\ufffd")])
    path.write_bytes(path.read_bytes().replace("\ufffd".encode(), b"\xe9"))  # Latin-1 é
    offset = path.read_bytes().index(b"\xe9")
    with pytest.raises(reader.error) as err:
        reader.read(path)
    assert str(err.value) == f"{path}:2: not UTF-8: byte 0xe9 at offset {offset}"


@pytest.mark.parametrize("name", list(READERS))
def test_a_field_past_the_csv_limit_is_one_line_naming_its_line(name, tmp_path):
    reader = READERS[name]
    huge = "x" * 200_000
    path = _write(tmp_path, reader, [reader.good.format(text="ok"), reader.good.format(text=huge)])
    with pytest.raises(reader.error) as err:
        reader.read(path)
    assert str(err.value) == f"{path}:3: a field over 131,072 characters"


@pytest.mark.parametrize("name", list(READERS))
def test_a_bom_is_dropped_and_a_bad_row_after_a_multi_line_one_is_named_by_its_first_line(
    name, tmp_path
):
    reader = READERS[name]
    two_lines = '"first line\nsecond line"'
    path = _write(tmp_path, reader, [reader.good.format(text=two_lines), reader.bad],
                  prefix=b"\xef\xbb\xbf")  # fmt: skip
    with pytest.raises(reader.error) as err:  # header, then lines 2-3, then the bad row: 4
        reader.read(path)
    assert str(err.value).startswith(f"{path}:4: "), str(err.value)
    assert reader.says in str(err.value)
    # and without the bad row the BOM'd file reads, the two-line text kept whole
    path = _write(tmp_path, reader, [reader.good.format(text=two_lines)], prefix=b"\xef\xbb\xbf")
    assert len(reader.read(path)) == 1


def test_iter_csv_numbers_rows_by_their_first_line_skipping_blank_lines(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text('a,b\n\n1,"x\ny"\n\n\n2,3,extra\n4\n')
    header, rows = iter_csv(path)
    assert header == ["a", "b"]
    assert list(rows) == [  # as csv.DictReader: extra values under None, missing ones None
        (3, {"a": "1", "b": "x\ny"}),
        (7, {"a": "2", "b": "3", None: ["extra"]}),
        (8, {"a": "4", "b": None}),
    ]


@pytest.mark.parametrize(
    ("rows", "says"),
    [(["1,204", "x1,3"], ":3: id 'x1' is not a problem number"),
     (["1,204", "\u0661,3"], ":3: id '\u0661' is not a problem number"),  # an Arabic-Indic 1
     (["1,204", "2,5", "1,7"], ":4: problem 1 already on line 2")],
)  # fmt: skip
def test_matharena_answers_name_a_bad_or_repeated_problem_number(rows, says, tmp_path):
    from evalbench.datagen.data import _read_answers_csv

    path = tmp_path / "answers.csv"
    path.write_bytes(b"\xef\xbb\xbf" + "\n".join(["id,answer", *rows, ""]).encode())
    with pytest.raises(ValueError) as err:
        _read_answers_csv(path)
    assert str(err.value) == f"{path}{says}"
    path.write_bytes(b"\xef\xbb\xbfid,answer\n1,204\n2,5\n")
    assert _read_answers_csv(path) == {1: "204", 2: "5"}


# JSON inputs: the same strict UTF-8, one line naming the byte (they were UnicodeDecodeError)


def test_a_jsonl_line_that_is_not_utf8_is_named_by_line_and_offset(tmp_path):
    from evalbench.records import CorruptRecords, iter_jsonl

    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b": "caf\xe9"}\n')
    with pytest.raises(CorruptRecords) as err:
        list(iter_jsonl(path))
    offset = path.read_bytes().index(b"\xe9")  # 19: in the file, not the line
    assert str(err.value) == f"{path}:2: not UTF-8: byte 0xe9 at offset {offset}"
    path.write_bytes(b'\xef\xbb\xbf{"a": 1}\r\n\r\n{"b": "caf\xc3\xa9"}\r\n')  # a BOM, CRLF
    assert list(iter_jsonl(path)) == [(1, {"a": 1}), (3, {"b": "café"})]


def test_arena_votes_in_jsonl_that_are_not_utf8_are_one_line(tmp_path):
    path = tmp_path / "votes.jsonl"
    path.write_bytes(b'{"model_a": "a", "model_b": "b", "winner": "a", "annotator": "J\xf6rg"}\n')
    with pytest.raises(ArenaError) as err:
        load_human_battles(path, ["a", "b"])
    assert str(err.value) == f"{path}:1: not UTF-8: byte 0xf6 at offset 63"


def test_json_documents_that_are_not_utf8_are_one_line(tmp_path):
    from evalbench.datagen.verification import load_verifications
    from evalbench.hle.data import HleDataError
    from evalbench.hle.data import load as load_hle

    hle = tmp_path / "hle.json"
    hle.write_bytes(b'[{"id": "q1", "question": "caf\xe9", "answer": "x"}]')
    with pytest.raises(HleDataError) as err:
        load_hle(str(hle))
    offset = hle.read_bytes().index(b"\xe9")
    assert str(err.value) == f"{hle}:1: not UTF-8: byte 0xe9 at offset {offset}"
    reviews = tmp_path / "generated_verifications.json"
    reviews.write_bytes(b'{"p1": {"status": "approved", "comments": "caf\xe9"}}')
    with pytest.raises(ValueError) as err:
        load_verifications(reviews)
    offset = reviews.read_bytes().index(b"\xe9")
    assert str(err.value) == f"{reviews}:1: not UTF-8: byte 0xe9 at offset {offset}"


class _Row(BaseModel):
    model_config = ConfigDict(extra="allow")


def _readers_of_lines() -> dict[str, tuple[Callable[[Path], Any], type[Exception], str]]:
    from evalbench.arena.data import load_prompts
    from evalbench.bfcl.files import read_jsonl as read_bfcl
    from evalbench.bfcl.schema import BfclDataError
    from evalbench.browse_suite.data import load_suite
    from evalbench.gaia.data import GaiaDataError, read_submission
    from evalbench.gaia.data import load as load_gaia
    from evalbench.hle.data import HleDataError
    from evalbench.hle.data import load as load_hle
    from evalbench.params import ParamsError

    return {  # reader, its error, the file's name
        "HLE questions": (lambda p: load_hle(str(p)), HleDataError, "q.jsonl"),
        "GAIA questions": (lambda p: load_gaia(p), GaiaDataError, "metadata.jsonl"),
        "GAIA submission": (read_submission, GaiaDataError, "submission.jsonl"),
        "arena prompts": (load_prompts, ArenaError, "prompts.jsonl"),
        "BFCL items": (lambda p: list(read_bfcl(p, _Row)), BfclDataError, "items.json"),
        "retry-loop questions": (lambda p: load_questions(str(p)), RetryDataError, "q.jsonl"),
        "browse-suite tasks": (load_suite, ParamsError, "tasks.yaml"),
    }


@pytest.mark.parametrize("name", list(_readers_of_lines()))
def test_every_line_reader_names_a_byte_that_is_not_utf8(name, tmp_path):
    read, error, file = _readers_of_lines()[name]
    path = tmp_path / file
    path.write_bytes(b'{"id": "b", "question": "J\xf6rg"}\n{"id": "a"}\n')  # before any check
    offset = path.read_bytes().index(b"\xf6")
    with pytest.raises(error) as err:
        read(path)
    assert f"{path}:1: not UTF-8: byte 0xf6 at offset {offset}" in str(err.value)


def test_a_line_separator_inside_a_retry_loop_question_is_no_line_break(tmp_path):
    path = tmp_path / "q.jsonl"  # U+2028 is valid inside a JSON string; str.splitlines splits
    path.write_text('{"item": "i1", "question": "one\u2028two"}\n', encoding="utf-8")
    assert load_questions(str(path))["question"].tolist() == ["one\u2028two"]


@pytest.mark.parametrize("name", list(READERS))
@pytest.mark.parametrize(("sep", "says"), [(";", "';'-separated"), ("\t", "tab-separated")])
def test_a_csv_separated_by_another_character_says_so(name, sep, says, tmp_path):
    # Before: Excel in many locales writes ';' (and some tools tabs): the reader saw one
    # column and said the first one it needs was missing on line 2
    reader = READERS[name]
    path = tmp_path / "in.csv"
    lines = [reader.header, reader.good.format(text="ok")]
    path.write_text("\n".join(line.replace(",", sep) for line in lines) + "\n")
    with pytest.raises(reader.error) as err:
        reader.read(path)
    assert str(err.value) == (
        f"{path}:1: the header is one column {reader.header.replace(',', sep)!r}: the file "
        f"looks {says}; save it as comma-separated CSV"
    )


def test_a_one_column_header_after_blank_lines_is_named_by_its_own_line(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("\n\na;b\n1;2\n")
    with pytest.raises(ValueError, match=r"t\.csv:3: the header is one column 'a;b'"):
        iter_csv(path, error=ValueError)
