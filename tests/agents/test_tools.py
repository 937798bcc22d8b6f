"""The tool layer: call_tool's checks, paging and budget arithmetic, prepare_workdir, and
read_file on real small files of every supported type (made here with the libraries,
the pdf by hand)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from evalbench.agents.tools import (
    TOOLS,
    ToolContext,
    ToolError,
    call_tool,
    get_tools,
    prepare_workdir,
)
from evalbench.agents.tools.base import page, safe_name, truncate
from evalbench.agents.tools.sandbox import SandboxLimits

READ_FILE, PYTHON, FINAL = get_tools(["read_file", "python", "final_answer"])


def context(tmp_path: Path, files: dict[str, bytes], budget: int = 8000) -> ToolContext:
    """A context whose attachments are ``files`` (written under tmp_path, then copied)."""
    originals = tmp_path / "originals"
    originals.mkdir(exist_ok=True)
    for name, data in files.items():
        (originals / safe_name(name)).write_bytes(data)
    attachments = {name: originals / safe_name(name) for name in files}
    workdir, copies = prepare_workdir(attachments, root=tmp_path)
    return ToolContext(workdir, copies, None, char_budget=budget)


def read(ctx: ToolContext, **arguments) -> tuple[str, str | None]:
    return call_tool(READ_FILE, json.dumps(arguments), ctx)


def minimal_pdf(text: str) -> bytes:
    """A one-page pdf drawing ``text`` in Helvetica, byte offsets computed for the xref."""
    content = f"BT /F1 12 Tf 20 50 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 100] /Contents 4 0 R"
        b" /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return out


def xlsx_bytes(tmp_path: Path) -> bytes:
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    sheet.title = "Data"
    sheet["A1"], sheet["B1"] = "item", "price"
    sheet["A2"], sheet["B2"] = "tea", 3.5
    sheet["B3"] = "=B2*2"  # openpyxl saves no cached value: "not computed"
    book.create_sheet("Notes")["A1"] = "hello"
    book.save(tmp_path / "book.xlsx")
    return (tmp_path / "book.xlsx").read_bytes()


def docx_bytes(tmp_path: Path) -> bytes:
    import docx

    document = docx.Document()
    document.add_heading("Report", 1)
    document.add_paragraph("First para.")
    table = document.add_table(rows=2, cols=2)
    for cell, text in zip([c for row in table.rows for c in row.cells], "abcd", strict=True):
        cell.text = text
    document.add_paragraph("After.")
    document.save(tmp_path / "doc.docx")
    return (tmp_path / "doc.docx").read_bytes()


# --- read_file: one real file per format --------------------------------------------


def test_read_file_reads_text(tmp_path):
    ctx = context(tmp_path, {"notes.txt": b"hello\nworld"})
    assert read(ctx, name="notes.txt") == (
        "[notes.txt: characters 0-11 of 11]\nhello\nworld\n[end]",
        None,
    )


def test_read_file_reads_json_as_written(tmp_path):
    ctx = context(tmp_path, {"a.json": b'{"k": [1, 2]}'})
    assert read(ctx, name="a.json")[0] == '[a.json: characters 0-13 of 13]\n{"k": [1, 2]}\n[end]'


def test_read_file_shows_a_csv_as_a_table(tmp_path):
    ctx = context(
        tmp_path, {"people.csv": b"name,age\nAda,36\nBob,7\n", "t.tsv": b"x\ty\n007\t1\n"}
    )
    body = read(ctx, name="people.csv")[0].split("\n")[1:-1]
    assert body == ["2 rows × 2 columns", "name age", " Ada  36", " Bob   7"]
    assert "007" in read(ctx, name="t.tsv")[0]  # cells kept as written, not parsed as 7


def test_read_file_reads_every_sheet_with_formulas(tmp_path):
    ctx = context(tmp_path, {"book.xlsx": xlsx_bytes(tmp_path)})
    body = read(ctx, name="book.xlsx")[0].split("\n")[1:-1]
    assert body == [
        "[sheet 'Data': 3 non-empty rows]",
        "1: item | price",
        "2: tea | 3.5",
        "3:  | =B2*2 (formula, value not computed)",
        "",
        "[sheet 'Notes': 1 non-empty rows]",
        "1: hello",
    ]


def test_read_file_reads_docx_paragraphs_and_tables_in_order(tmp_path):
    ctx = context(tmp_path, {"doc.docx": docx_bytes(tmp_path)})
    body = read(ctx, name="doc.docx")[0].split("\n")[1:-1]
    assert body == ["# Report", "", "First para.", "", "[table]", "a | b", "c | d", "", "After."]


def test_read_file_extracts_pdf_text_per_page(tmp_path):
    ctx = context(tmp_path, {"paper.pdf": minimal_pdf("Hello PDF world")})
    assert read(ctx, name="paper.pdf")[0].split("\n")[1:3] == [
        "--- page 1 of 1 ---",
        "Hello PDF world",
    ]


def test_read_file_refuses_unknown_names_and_lists_the_available_ones(tmp_path):
    ctx = context(tmp_path, {"b.txt": b"", "a.csv": b"x\n1\n"})
    result, error = read(ctx, name="../../etc/passwd")
    assert result == "error: no attachment named '../../etc/passwd'; available: a.csv, b.txt"
    assert error == result.removeprefix("error: ")
    assert "this task has no attachments" in read(context(tmp_path, {}), name="x")[0]


def test_read_file_refuses_binary_and_broken_files(tmp_path):
    ctx = context(
        tmp_path, {"img.png": b"\x89PNG\x00\x00", "bad.xlsx": b"not a zip", "x.bin": b"ok"}
    )
    assert read(ctx, name="img.png")[0].startswith(
        "error: img.png is a binary file of an unsupported type"
    )
    assert read(ctx, name="bad.xlsx")[0].startswith(
        "error: could not read bad.xlsx as an xlsx workbook"
    )
    assert read(ctx, name="x.bin")[0].endswith("\nok\n[end]")  # unknown type, but text


def test_read_file_never_follows_a_symlink_put_in_place_of_a_copy(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("root only")
    ctx = context(tmp_path, {"data.txt": b"public"})
    os.remove(ctx.attachments["data.txt"])
    os.symlink(secret, ctx.attachments["data.txt"])  # what the python tool could do
    result, error = read(ctx, name="data.txt")
    assert error is not None and "root only" not in result


def test_read_file_pages_within_the_budget(tmp_path):
    text = "0123456789" * 12  # 120 characters
    ctx = context(tmp_path, {"n.txt": text.encode()}, budget=250)  # a page: 250 - 200 = 50
    first = read(ctx, name="n.txt")[0]
    assert first == (
        f"[n.txt: characters 0-50 of 120]\n{text[:50]}\n"
        "[70 more characters: call read_file with name='n.txt' and start=50]"
    )
    assert (
        read(ctx, name="n.txt", start=100)[0]
        == f"[n.txt: characters 100-120 of 120]\n{text[100:]}\n[end]"
    )
    assert "characters 10-40 of 120" in read(ctx, name="n.txt", start=10, max_chars=30)[0]
    assert (
        read(ctx, name="n.txt", start=120)[1]
        == "start=120 is past the end of n.txt (120 characters)"
    )


def test_read_file_accepts_the_copys_file_name(tmp_path):
    ctx = context(tmp_path, {"sub/report.txt": b"x"})  # saved as sub_report.txt
    assert read(ctx, name="sub_report.txt")[1] is None


# --- call_tool: bad calls become "error: ..." results ---------------------------------


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        (
            '{"name": "a.txt"',
            "arguments are not valid JSON (Expecting ',' delimiter: line 1 column 17 (char 16))",
        ),  # 16 characters: ends at index 16
        ("[1, 2]", "arguments must be a JSON object, got list"),
        ("{}", "missing required argument(s): name"),
        ('{"name": 3}', "argument 'name' must be of type string, got 3"),
        ('{"name": "a.txt", "start": "5"}', "argument 'start' must be of type integer, got \"5\""),
        ('{"name": "a.txt", "start": true}', "argument 'start' must be of type integer, got true"),
        ('{"name": "a.txt", "start": -1}', "argument 'start' must be at least 0, got -1"),
        (
            '{"name": "a.txt", "path": "x"}',
            "unknown argument(s): path (known: name, start, max_chars)",
        ),
    ],
)
def test_call_tool_turns_bad_calls_into_error_results(tmp_path, arguments, error):
    ctx = context(tmp_path, {"a.txt": b"text"})
    assert call_tool(READ_FILE, arguments, ctx) == (f"error: {error}", error)


def test_call_tool_truncates_to_the_budget(tmp_path):
    ctx = ToolContext(tmp_path, {}, None, char_budget=30)
    result, error = call_tool(FINAL, json.dumps({"answer": "a" * 100}), ctx)
    assert (result, error) == ("a" * 30 + "… [70 more characters]", None)  # 100 - 30 = 70
    assert truncate("short", 30) == "short"


def test_final_answer_returns_the_answer(tmp_path):
    assert call_tool(FINAL, '{"answer": "42"}', ToolContext(tmp_path, {}, None)) == ("42", None)
    assert (
        call_tool(FINAL, "", ToolContext(tmp_path, {}, None))[1]
        == "missing required argument(s): answer"
    )


def test_page_counts_what_remains():
    assert (
        page("doc", "abcdef", 2, 3, "again at {end}")
        == "[doc: characters 2-5 of 6]\ncde\n[1 more characters: call again at 5]"
    )
    with pytest.raises(ToolError):
        page("doc", "abc", 4, 3, "")


def test_the_python_tool_runs_code_in_the_work_dir(tmp_path):
    ctx = context(tmp_path, {"nums.txt": b"3\n4\n"})
    ctx = ctx._replace(python=SandboxLimits(cpu_s=2, wall_s=5))
    code = "print(sum(int(x) for x in open('nums.txt')))"
    result, error = call_tool(PYTHON, json.dumps({"code": code}), ctx)
    assert error is None
    assert result.startswith("[exit code 0; ") and result.endswith("\nstdout:\n7\n")


# --- the registry and the work dir ---------------------------------------------------


def test_get_tools_returns_tools_in_order_and_names_the_known_ones():
    assert [t.name for t in get_tools(["final_answer", "search"])] == ["final_answer", "search"]
    with pytest.raises(
        ValueError, match="known: read_file, python, search, open_page, final_answer"
    ):
        get_tools(["browse"])


def test_params_know_every_tool_and_refuse_an_unknown_one_before_anything_runs(tmp_path):
    # `tools: [rm_rf, python]` passed the params check, made a run folder and failed in the
    # notebook (exit 1); it is a params error now (exit 2, nothing run)
    from evalbench.params import ParamsError
    from evalbench.studies import load_params

    path = tmp_path / "a.yaml"
    path.write_text("study: gaia\ntitle: t\ndataset: demo\nsystems: [{name: a, provider: agent,"
                    " model: m, base_url: 'http://127.0.0.1:9/v1', api_key_env: null,"
                    " tools: [rm_rf, python]}]\n")  # fmt: skip
    with pytest.raises(ParamsError, match=r"systems\.0: .*unknown tool\(s\) \['rm_rf'\]"):
        load_params(path)


def test_every_schema_is_an_openai_function_tool():
    for name, tool in TOOLS.items():
        function = tool.schema["function"]
        assert tool.schema["type"] == "function" and function["name"] == name
        assert function["parameters"]["type"] == "object" and function["description"]


def test_prepare_workdir_copies_and_sanitizes(tmp_path):
    original = tmp_path / "in.txt"
    original.write_text("original")
    workdir, copies = prepare_workdir(
        {"../up/in.txt": original, ".hidden": original}, root=tmp_path
    )
    assert {n: p.name for n, p in copies.items()} == {
        "../up/in.txt": "_up_in.txt",
        ".hidden": "hidden",
    }
    assert sorted(os.listdir(workdir)) == ["_up_in.txt", "hidden"]
    copies[".hidden"].write_text("changed")
    assert original.read_text() == "original"
    with pytest.raises(ValueError, match="collide"):
        prepare_workdir({"a/b": original, "a_b": original}, root=tmp_path)
    with pytest.raises(FileNotFoundError, match="'gone'"):
        prepare_workdir({"gone": tmp_path / "missing"}, root=tmp_path)


def test_the_tools_field_names_every_registered_tool():
    """The params docs of ``tools:`` (SystemSpec.tools's docstring) list the registry."""
    import ast
    import inspect

    from evalbench.agents import types

    body = ast.parse(inspect.getsource(types.SystemSpec)).body[0].body
    field = next(i for i, node in enumerate(body) if getattr(node, "target", None)
                 and node.target.id == "tools")  # fmt: skip
    doc = body[field + 1].value.value
    assert [name for name in TOOLS if f"``{name}``" not in doc] == []
