"""JSON extraction from LLM output, LaTeX-backslash repair."""

from __future__ import annotations

import json

import pytest

from evalbench.textparse import parse_json_object, repair_latex_backslashes


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (r'{"p": "\frac{1}{2}"}', r"\frac{1}{2}"),  # \f would be a form feed
        (r'{"p": "\beta + \times"}', r"\beta + \times"),  # \b backspace, \t tab
        (r'{"p": "\nu \neq 0"}', r"\nu \neq 0"),  # LaTeX commands starting with \n
        (r'{"p": "\sqrt{2} \( x \)"}', r"\sqrt{2} \( x \)"),  # invalid escapes
        (r'{"p": "\underline{x} \uparrow"}', r"\underline{x} \uparrow"),  # \u without hex
        (r'{"p": "caf\u00e9"}', "café"),  # a real unicode escape is kept
        (r'{"p": "line\nThe end"}', "line\nThe end"),  # newline before a word is kept
        (r'{"p": "a \\ b"}', "a \\ b"),  # an escaped backslash stays one backslash
        (r'{"p": "\\\(x\)"}', r"\\(x\)"),  # escaped backslash then a LaTeX \(
    ],
)
def test_repair_gives_the_latex_the_model_meant(raw, expected):
    assert json.loads(repair_latex_backslashes(raw))["p"] == expected
    assert parse_json_object(raw) == {"p": expected}


def test_fenced_json_wins_over_prose_and_the_last_fence_first():
    text = 'Thoughts {not json}.\n```json\n{"a": 1}\n```\nthen\n```\n{"a": 2}\n```'
    assert parse_json_object(text) == {"a": 2}


def test_bare_object_inside_prose():
    assert parse_json_object('Sure! {"score": 7, "reason": "ok"} Hope it helps.') == {
        "score": 7,
        "reason": "ok",
    }


@pytest.mark.parametrize("text", ["", "no json here", '{"a": [1, 2', "[1, 2, 3]", "{" * 5000])
def test_unparseable_is_none_never_a_default(text):
    assert parse_json_object(text) is None


def test_oversized_input_is_refused():
    assert parse_json_object('{"a": "' + "x" * 300_000 + '"}') is None
