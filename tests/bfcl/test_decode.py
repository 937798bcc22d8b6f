"""The BFCL decoder: Python call strings, JSON and FC formats, hostile outputs."""

from __future__ import annotations

import json
import time

import pytest

from evalbench import bfcl
from evalbench.bfcl.decode import DECODER_FAILED
from evalbench.bfcl.schema import Call

# --------------------------------------------------------------------------- decoding


def test_python_call_strings_decode_to_literals():
    decoded = bfcl.decode(
        "[f(a=1, b='x'), m.n.g(c=[1, -2.5, {'k': (1, 2)}], d=True, e=None, h=false)]", "prompt"
    )
    assert decoded.calls == (
        Call("f", {"a": 1, "b": "x"}),
        # tuples stay tuples (the official decoder keeps them); a bare name is its text
        Call("m.n.g", {"c": [1, -2.5, {"k": (1, 2)}], "d": True, "e": None, "h": "false"}),
    )
    assert bfcl.decode("f(x=1)", "prompt").calls == (Call("f", {"x": 1}),)  # no brackets
    assert bfcl.decode("```[f(x=1)]```", "prompt").calls == (Call("f", {"x": 1}),)
    # positional arguments are dropped; nested calls become a dict or their source text
    nested = bfcl.decode("[f(1, y=g(z=2), w=h(3), s=data['a'])]", "prompt")
    assert nested.calls == (Call("f", {"y": {"g": {"z": 2}}, "w": "h(3)", "s": "data['a']"}),)


def test_unary_operators_follow_the_official_quirk():
    # officially every unary operator negates its literal operand
    assert bfcl.decode("[f(x=-3)]", "prompt").calls == (Call("f", {"x": -3}),)
    assert bfcl.decode("[f(x=+3)]", "prompt").calls == (Call("f", {"x": -3}),)
    assert bfcl.decode("[f(x=-y)]", "prompt").error_type == DECODER_FAILED


def test_fenced_blocks_need_the_auto_style():
    text = "Here you go:\n```python\n[f(x=1)]\n```"
    assert bfcl.decode(text, "prompt").error_type == DECODER_FAILED  # as officially
    assert bfcl.decode(text, "auto").calls == (Call("f", {"x": 1}),)


@pytest.mark.parametrize(
    "raw",
    [
        '[{"name": "f", "arguments": {"x": 1}}]',
        '{"name": "f", "arguments": "{\\"x\\": 1}"}',
        '[{"type": "function", "function": {"name": "f", "arguments": "{\\"x\\": 1}"}}]',
        '[{"f": {"x": 1}}]',
        '```json\n[{"f": "{\\"x\\": 1}"}]\n```',
        [{"f": '{"x": 1}'}],
        [{"name": "f", "parameters": {"x": 1}}],
    ],
)
def test_json_call_formats_decode_in_auto_style(raw):
    assert bfcl.decode(raw, "auto").calls == (Call("f", {"x": 1}),)


def test_function_calling_result_format_is_strict():
    assert bfcl.decode([{"f": '{"x": 1}'}, {"g": "{}"}], "fc").calls == (
        Call("f", {"x": 1}),
        Call("g", {}),
    )
    assert bfcl.decode([], "fc").calls == ()
    assert bfcl.decode("", "fc").calls == ()
    assert bfcl.decode([{"f": {"x": 1}}], "fc").error_type == DECODER_FAILED  # not a string
    assert bfcl.decode("I have no tool for that.", "fc").error_type == DECODER_FAILED
    assert bfcl.decode([{"f": "{x: 1}"}], "fc").error_type == DECODER_FAILED
    with pytest.raises(ValueError, match="unknown decode style"):
        bfcl.decode("[f()]", "xml")


@pytest.mark.parametrize(
    ("raw", "style"),
    [
        ("[f(x=10**10**10)]", "prompt"),  # never evaluated
        ("[f(x=2*3)]", "auto"),
        ("[f(x=lambda y: y)]", "prompt"),
        ("[f(x=" + "[" * 10_000 + "]" * 10_000 + ")]", "prompt"),
        ("f(a=" * 5_000 + "1" + ")" * 5_000, "prompt"),
        ("[f(x=" + "-" * 50_000 + "1)]", "prompt"),
        ("[f(x=" + "not " * 20_000 + "1)]", "auto"),
        ("[f(x='" + "a" * 5_000_000 + "')]", "prompt"),  # multi-MB
        ("[f(x=" + "9" * 5_000 + ")]", "prompt"),
        ("[f(x='\x00')]", "prompt"),
        ([{"f": "[" * 40_000 + "]" * 40_000}], "fc"),
        ([{"f": '{"a": ' + "[" * 900 + "]" * 900 + "}"}], "fc"),
        ([{"f": "{}"}] * 200_000, "fc"),
        ({"f": {"a": json.loads("[" * 500 + "]" * 500)}}, "auto"),
    ],
)
def test_pathological_outputs_fail_fast_and_safely(raw, style):
    start = time.process_time()  # CPU time: load from other processes does not change it
    decoded = bfcl.decode(raw, style)
    elapsed = time.process_time() - start
    assert decoded.calls is None
    assert decoded.error_type == DECODER_FAILED
    assert elapsed < 2.0  # a safety net only: each of these takes milliseconds
