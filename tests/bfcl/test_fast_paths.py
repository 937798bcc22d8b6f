"""The speed paths of the decoder and checker give exactly what the plain paths give.

- the regular-expression reader of simple Python calls vs ``ast`` on every public output
  and on thousands of generated near-misses (quotes, escapes, keywords, numbers...);
- the checker's shortcut for passing outputs vs the general per-parameter diagnostic;
- repeated checks (the per-item cache) give the same verdicts.
"""

from __future__ import annotations

import importlib
import random

import pytest
from bfcl.cases import python_results

from evalbench import bfcl

decode_module = importlib.import_module("evalbench.bfcl.decode")
checker = importlib.import_module("evalbench.bfcl.checker")


def _plain(text: str):
    """What ``ast`` makes of ``text``: its calls, or the error message."""
    try:
        return ("calls", decode_module._ast_calls(text))
    except decode_module._DecodeError as exc:
        return ("error", str(exc))


def _same(text: str) -> bool:
    fast = decode_module._simple_calls(text)
    # repr compares types too: 1 is not 1.0 is not True
    return fast is None or ("calls", repr(fast)) == (_plain(text)[0], repr(_plain(text)[1]))


def _prompt_text(raw: str) -> str:
    """The text the prompting decoder parses (as ``_decode_prompt`` prepares it)."""
    text = raw.strip("`\n ")
    text = text if text.startswith("[") else "[" + text
    text = text if text.endswith("]") else text + "]"
    return text.strip().strip("'")


def test_simple_shapes_are_read_exactly_as_ast_reads_them():
    cases = {
        "[f(a=1)]": (("f", {"a": 1}),),
        "[m.g(a='x', b=-2.5, c=[1, 'y', True], d=None, e=abc)]": (
            ("m.g", {"a": "x", "b": -2.5, "c": [1, "y", True], "d": None, "e": "abc"}),
        ),
        "[f(a='g(b=1)'), h(c=[' x=1 ', 2])]": (("f", {"a": "g(b=1)"}), ("h", {"c": [" x=1 ", 2]})),
        "[f()]": (("f", {}),),
        "[f(a=[ ])]": (("f", {"a": []}),),
        '[ f ( a = 1 ,\n b = "q" ) ]': (("f", {"a": 1, "b": "q"}),),
    }
    for text, expected in cases.items():
        fast = decode_module._simple_calls(text)
        assert [(c.name, c.args) for c in fast] == [tuple(e) for e in expected], text
        assert _same(text), text


@pytest.mark.parametrize(
    "text",
    ["[f(a=1, a=2)]", "[f(class=1)]", "[import.x(a=1)]", "[f(a=and)]", "[True(a=1)]",
     "[f(a=01)]", "[f(a=1e5)]", "[f(a=1.)]", "[f(a=1_0)]", "[f(a=0x1F)]", "[f(a=[1,])]",
     "[f(a=1,)]", "[]", "[f(a='x\\n')]", "[f(a='x' 'y')]", "[f(a=(1, 2))]", "[f(a={'k': 1})]",
     "[f(a=- 1)]", "[f(1)]", "[f(a=g(b=1))]", "[f(a=b.c)]", "[f(a='\ud800')]", "[f(a=5j)]",
     "[f(__debug__=1)]", "[f(a=1)]<end_of_turn>]", "[f(a=1)] [g(b=2)]"],
)  # fmt: skip
def test_anything_else_is_left_to_ast(text):
    assert decode_module._simple_calls(text) is None


def test_generated_near_misses_agree_with_ast():
    rng = random.Random(20261123)
    names = ["f", "m.g", "a_b", "_x", "class", "None", "True", "match", "x1", "ü", "print"]
    values = ["1", "-1", "0", "00", "007", "1.5", "-0.0", "1e3", "1_0", ".5", "5.", "True",
              "None", "false", "and", "'s'", '"d"', "'it''s'", "'a\\\\b'", "'é'", "''",
              "[1, 2]", "[]", "['a', -3]", "[1,]", "(1,)", "{'k': 1}", "x.y", "g()", "- 2",
              "'\t'", "'a\"b'", "[[1]]", "lambda: 1", "1 + 2"]  # fmt: skip
    spaces = ["", " ", "\n", "\t", "  "]
    read_fast = 0
    for _ in range(4000):
        calls = []
        for _ in range(rng.randint(1, 3)):
            args = [f"{rng.choice(names)}{rng.choice(spaces)}={rng.choice(spaces)}"
                    f"{rng.choice(values)}" for _ in range(rng.randint(0, 3))]  # fmt: skip
            sep = rng.choice([",", ", ", " ,\n", ",,", " "])
            calls.append(f"{rng.choice(names)}{rng.choice(spaces)}({sep.join(args)})")
        text = "[" + rng.choice(spaces) + rng.choice([", ", ",", " "]).join(calls) + "]"
        assert _same(text), text
        read_fast += decode_module._simple_calls(text) is not None
    assert read_fast > 200  # both paths are exercised (331 of 4,000 read fast when written)


@pytest.mark.slow
def test_every_public_prompt_output_is_read_exactly_as_ast_reads_it(public_items):
    fast = 0
    for model, style in bfcl.PUBLIC_SYSTEMS.items():
        if style != "prompt":
            continue
        for line in python_results(model):
            text = _prompt_text(line.result)
            assert _same(text), (model, line.id)
            fast += decode_module._simple_calls(text) is not None
    assert fast > 5000  # the shortcut carries most of them (5,098 when written)


@pytest.mark.slow
def test_the_passing_shortcut_equals_the_general_diagnostic(public_items):
    items = {item.id: item for item in public_items}
    compared = 0
    for model, style in bfcl.PUBLIC_SYSTEMS.items():
        for line in python_results(model):
            item, decoded = items[line.id], bfcl.decode(line.result, style)
            if item.possible_answer is None or decoded.calls is None:
                continue
            for underscore_to_dot in (False, True):
                result = bfcl.check(item, decoded, underscore_to_dot=underscore_to_dot)
                general = checker._param_outcomes(item, decoded, underscore_to_dot, {})
                assert result.params == general, (model, line.id)
                again = bfcl.check(item, decoded, underscore_to_dot=underscore_to_dot)
                assert again == result  # the per-item cache changes nothing
                compared += result.valid
    assert compared > 5000  # passing outputs, each through both paths
