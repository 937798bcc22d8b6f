"""Java and JavaScript: the official type conversions and checker rules, by hand."""

from __future__ import annotations

import importlib
import json

import pytest

from evalbench.bfcl.decode import decode
from evalbench.bfcl.java_js import check_java_js, java_value, js_value
from evalbench.bfcl.schema import Item


def official(name: str):
    """The official converter, when bfcl-eval is installed (checked against it too)."""
    try:
        module = importlib.import_module(f"bfcl_eval.eval_checker.ast_eval.type_convertor.{name}")
    except ImportError:
        return None
    return getattr(module, name)


@pytest.mark.parametrize(
    ("text", "kind", "nested", "value"),
    [
        ("123", "integer", None, 123),
        ("-128", "byte", None, -128),
        ("3.14f", "float", None, 3.14),
        ("3e-3F", "float", None, 3e-3),
        ("3.14", "float", None, "3.14"),  # a Java float needs its f: stays text
        ("3.14e2", "double", None, 314.0),
        ("123L", "long", None, 123),
        ("123", "long", None, "123"),  # a long needs its L
        ("true", "boolean", None, True),
        ("True", "boolean", None, "True"),
        ("'a'", "char", None, "'a'"),  # official quirk: the char pattern never matches
        ("new int[]{1, 2, 3}", "Array", "integer", [1, 2, 3]),
        ("new long[]{1L, 2, 3L}", "Array", "long", [1, "2", 3]),
        ('new String[]{"a", "b"}', "Array", "String", ['"a"', '"b"']),  # kept quoted
        ('new ArrayList<>(Arrays.asList("a", "b"))', "ArrayList", "String", ["a", "b"]),
        ("new ArrayList<Float>() {{ add(1.0f); add(2.0f); }}", "ArrayList", "float", [1.0, 2.0]),
        ("new ArrayList<>()", "ArrayList", "String", []),
        ('new HashMap<String, Object>() {{ put("k1", 1); put("k2", "v"); }}', "HashMap", None,
         {"k1": 1, "k2": "v"}),
        ("new HashMap<>()", "HashMap", None, {}),
        ("abc", "any", None, "abc"),
    ],
)  # fmt: skip
def test_java_conversions(text, kind, nested, value):
    assert java_value(text, kind, nested) == value
    convert = official("java_type_converter")
    if convert is not None:
        assert convert(text, kind, nested) == value


@pytest.mark.parametrize(
    ("text", "kind", "nested", "value"),
    [
        ("'abc'", "String", None, "abc"),
        ("abc", "String", None, "abc"),
        ("123n", "Bigint", None, 123),
        ("3.14", "float", None, 3.14),
        ("1e3", "float", None, "1e3"),  # no exponent in the official pattern
        ("[1, 'two', true]", "array", None, [1, "two", True]),
        ("['a', 'b']", "array", "String", ["a", "b"]),
        ("new Array(1, 2, 3)", "array", None, [1, 2, 3]),
        ("[[1, 2], [3, 4]]", "array", None, [[1, 2], [3, 4]]),
        ("{'key1': 123, 'key2': 'value', 'key3': false}", "dict", None,
         {"key1": 123, "key2": "value", "key3": False}),
        ("{}", "dict", None, {}),
        ("[1, 2]", "array", "Nope", "[1, 2]"),  # a failed element conversion: text kept
    ],
)  # fmt: skip
def test_javascript_conversions(text, kind, nested, value):
    assert js_value(text, kind, nested) == value
    convert = official("js_type_converter")
    if convert is not None:
        assert convert(text, kind, nested) == value


JAVA = Item(
    "simple_java_900",
    "simple_java",
    [[{"role": "user", "content": "q"}]],
    [
        {
            "name": "Cache.put",
            "parameters": {
                "type": "dict",
                "properties": {
                    "key": {"type": "String"},
                    "size": {"type": "long"},
                    "tags": {"type": "ArrayList", "items": {"type": "String"}},
                    "owner": {"type": "any"},
                },
                "required": ["key", "size"],
            },
        }
    ],
    [
        {
            "Cache.put": {
                "key": ["user1"],
                "size": [10],
                "tags": [["a", "b"], ""],
                "owner": ["me", ""],
            }
        }
    ],
)


def verdict(item, **args):
    return check_java_js(
        item, decode([{next(iter(item.possible_answer[0])): json.dumps(args)}], "fc")
    )


@pytest.mark.parametrize(
    ("args", "valid", "error_type"),
    [
        ({"key": "user1", "size": "10L"}, True, None),  # a string check ran: no 'unclear'
        ({"key": "USER 1", "size": "10L", "tags": 'new ArrayList<>(Arrays.asList("a", "b"))'},
         True, None),  # strings compared standardized
        ({"key": "user1", "size": 10}, False, "type_error:java"),  # not Java source text
        ({"key": "user1", "size": "10"}, False, "type_error:simple"),  # "10" stays a string
        ({"key": "user1", "size": "11L"}, False, "value_error:others"),
        ({"key": "user1", "size": "10L", "tags": 'new ArrayList<>(Arrays.asList("a"))'},
         False, "value_error:list/tuple"),
        ({"key": "user1"}, False, "simple_function_checker:missing_required"),
        ({"key": "user1", "size": "10L", "colour": "x"}, False,
         "simple_function_checker:unexpected_param"),
    ],
)  # fmt: skip
def test_java_checker_rules(args, valid, error_type):
    result = verdict(JAVA, **args)
    assert (result.valid, result.error_type) == (valid, error_type)


def test_a_valid_verdict_without_a_string_list_or_dict_check_stays_unclear():
    only_long = Item(
        "simple_java_901", "simple_java", [], [
            {"name": "f", "parameters": {"properties": {"n": {"type": "long"}}, "required": ["n"]}}
        ], [{"f": {"n": [10]}}],
    )  # fmt: skip
    result = verdict(only_long, n="10L")
    assert (result.valid, result.error_type) == (True, "simple_function_checker:unclear")


def test_javascript_type_error_and_wrong_count():
    item = Item(
        "simple_javascript_900", "simple_javascript", [], [
            {"name": "fmt", "parameters": {"properties": {"x": {"type": "float"}}, "required": []}}
        ], [{"fmt": {"x": [2.5]}}],
    )  # fmt: skip
    assert verdict(item, x="2.5").valid
    assert verdict(item, x=2.5).error_type == "type_error:js"
    two = decode([{"fmt": '{"x": "2.5"}'}, {"fmt": '{"x": "2.5"}'}], "fc")
    assert check_java_js(item, two).error_type == "simple_function_checker:wrong_count"
    assert check_java_js(item, decode("no calls", "fc")).error_type == "ast_decoder:decoder_failed"


def test_java_js_shares_the_checkers_public_helpers_only():
    """The Java/JavaScript check reuses the Python checker's type and value checks: by their
    public names (a private name of another module would be a hidden dependency)."""
    import ast
    from pathlib import Path

    from evalbench.bfcl import java_js

    tree = ast.parse(Path(java_js.__file__).read_text())
    imported = [a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names]
    assert {"type_check", "value_check", "missing_optional"} <= set(imported)
    assert [name for name in imported if name.startswith("_")] == []
