"""The BFCL AST checker: each official rule, on hand-made items."""

from __future__ import annotations

import pytest
from bfcl.cases import AREA, CHOICE, FLOAT, INT, MATH, NONE_FITS, PAIR, STR, fn, item, verdict

from evalbench.bfcl.checker import standardize

# --------------------------------------------------------------------------- checker rules


def test_dotted_names_and_the_underscore_to_dot_conversion():
    assert verdict(MATH, "[math.factorial(number=5)]").valid
    wrong = verdict(MATH, "[math_factorial(number=5)]")
    assert (wrong.valid, wrong.error_type) == (False, "simple_function_checker:wrong_func_name")
    assert verdict(MATH, "[math_factorial(number=5)]", underscore_to_dot=True).valid
    dotted = verdict(MATH, "[math.factorial(number=5)]", underscore_to_dot=True)
    assert dotted.error_type == "simple_function_checker:wrong_func_name"


@pytest.mark.parametrize(
    ("raw", "error_type"),
    [
        ("[area(base=10, height=5)]", None),  # optional "unit" may be omitted ("" accepted)
        ("[area(base=10, height=5, unit='CM')]", None),
        ("[area(base=10)]", "simple_function_checker:missing_required"),
        ("[area(base=10, height=5, depth=2)]", "simple_function_checker:unexpected_param"),
        ("[area(base=10, height=6)]", "value_error:others"),
        ("[area(base=10, height='5')]", "type_error:simple"),
        (
            "[area(base=10, height=5), area(base=10, height=5)]",
            "simple_function_checker:wrong_count",
        ),
        ("[]", "simple_function_checker:wrong_count"),
        ("area base 10", "ast_decoder:decoder_failed"),
    ],
)
def test_simple_rules(raw, error_type):
    result = verdict(AREA, raw)
    assert result.valid is (error_type is None)
    if error_type is not None:
        assert result.error_type == error_type


def test_optional_parameter_without_empty_marker_is_missing_optional():
    strict = AREA._replace(
        possible_answer=[{"area": {"base": [10], "height": [5], "unit": ["cm"]}}]
    )
    result = verdict(strict, "[area(base=10, height=5)]")
    assert result.error_type == "simple_function_checker:missing_optional"
    # a doc parameter that the answer does not list must not be passed at all
    narrow = AREA._replace(possible_answer=[{"area": {"base": [10], "height": [5]}}])
    assert verdict(narrow, "[area(base=10, height=5, unit='cm')]").error_type == (
        "simple_function_checker:unexpected_param"
    )


SPEED = item(
    "simple_python",
    [fn("speed", {"v": FLOAT}, ("v",))],
    [{"speed": {"v": [5.0]}}],
)


@pytest.mark.parametrize(
    ("raw", "valid", "error_type"),
    [
        ("[speed(v=5)]", True, "simple_function_checker:unclear"),  # int accepted for float
        ("[speed(v=5.0)]", True, "simple_function_checker:unclear"),
        ("[speed(v=True)]", False, "type_error:simple"),  # bool is not a number here
        ("[speed(v='5')]", False, "type_error:simple"),
    ],
)
def test_int_is_accepted_for_float(raw, valid, error_type):
    result = verdict(SPEED, raw)
    assert (result.valid, result.error_type) == (valid, error_type)
    integer = item("simple_python", [fn("f", {"n": INT})], [{"f": {"n": [5]}}])
    assert verdict(integer, "[f(n=5.0)]").error_type == "type_error:simple"


def test_string_standardization():
    # spaces and , . / - _ * ^ dropped, lowercased, ' -> "
    assert standardize("April 1, 2024") == "april12024"
    assert standardize("New-York_City./*^") == "newyorkcity"
    assert standardize("It's") == 'it"s'
    city = item("simple_python", [fn("f", {"city": STR})], [{"f": {"city": ["New York City"]}}])
    assert verdict(city, "[f(city='new-york  city')]").valid
    assert verdict(city, "[f(city='Boston')]").error_type == "value_error:string"
    # strings are compared standardized, but nothing else is (no stemming, no trimming of words)
    assert verdict(city, "[f(city='NYC')]").error_type == "value_error:string"


def test_valid_verdicts_keep_the_official_initial_error_type():
    # The official simple_function_checker returns its initial dict (error_type "unclear")
    # unless a string/list/dict check replaced it; parallel checkers return a fresh dict.
    assert verdict(MATH, "[math.factorial(number=5)]").error_type == (
        "simple_function_checker:unclear"
    )
    assert verdict(AREA, "[area(base=10, height=5, unit='cm')]").error_type is None


LISTS = item(
    "simple_python",
    [
        fn(
            "f",
            {
                "cities": {"type": "array", "items": STR},
                "point": {"type": "tuple", "items": INT},
                "ids": {"type": "array", "items": INT},
            },
        )
    ],
    [{"f": {"cities": [["New York", "LA"]], "point": [[1, 2]], "ids": ["", [3]]}}],
)


@pytest.mark.parametrize(
    ("raw", "error_type"),
    [
        ("[f(cities=['new york', 'L.A.'], point=(1, 2))]", None),  # tuple -> list for "tuple"
        ("[f(cities=['LA', 'New York'], point=[1, 2])]", "value_error:list/tuple"),  # order
        ("[f(cities=['New York', 'LA'], point=[1, 2], ids=[3])]", None),
        ("[f(cities=['New York', 'LA'], point=[1, 2], ids=[])]", None),  # "" accepts []
        ("[f(cities=['New York', 'LA'], point=[1, 2], ids=[4])]", "value_error:list/tuple"),
        ("[f(cities=['New York', 1], point=[1, 2])]", "type_error:nested"),
        ("[f(cities=('New York', 'LA'), point=[1, 2])]", "type_error:simple"),  # array != tuple
    ],
)
def test_list_values(raw, error_type):
    result = verdict(LISTS, raw)
    assert (result.valid, result.error_type) == (error_type is None, error_type)


PREFS = item(
    "simple_python",
    [fn("f", {"prefs": {"type": "dict"}, "rows": {"type": "array", "items": {"type": "dict"}}})],
    [{"f": {"prefs": [{"size": ["Large"], "milk": ["", "oat"]}], "rows": ["", [{"k": ["v"]}]]}}],
)


@pytest.mark.parametrize(
    ("raw", "error_type"),
    [
        ("[f(prefs={'size': 'LARGE'})]", None),  # optional key omitted, value standardized
        ("[f(prefs={'size': 'large', 'milk': 'oat'}, rows=[{'k': 'V'}])]", None),
        ("[f(prefs={'size': 'small'})]", "value_error:dict_value"),
        ("[f(prefs={'size': 'large', 'sugar': 1})]", "value_error:dict_key"),
        ("[f(prefs={'milk': 'oat'})]", "value_error:dict_key"),  # missing required key
        (
            "[f(prefs={'size': 'large'}, rows=[{'k': 'v'}, {'k': 'v'}])]",
            "value_error:list_dict_count",
        ),
        ("[f(prefs={'size': 'large'}, rows=[{'k': 'w'}])]", "value_error:dict_value"),
    ],
)
def test_dict_and_list_of_dict_values(raw, error_type):
    result = verdict(PREFS, raw)
    assert (result.valid, result.error_type) == (error_type is None, error_type)


def test_dict_checker_second_pass_overrides_the_error_type():
    # Official quirk: after a wrong value, the missing-key pass still runs and its type wins.
    two = PREFS._replace(possible_answer=[{"f": {"prefs": [{"size": ["large"], "milk": ["oat"]}]}}])
    result = verdict(two, "[f(prefs={'size': 'small'})]")
    assert result.error_type == "value_error:dict_key"
    assert result.error.startswith("Invalid value for parameter 'size'")


def test_variable_names_are_compared_exactly():
    # An accepted value typed unlike the doc (a string for an integer) marks a variable.
    var = item("simple_python", [fn("f", {"n": INT})], [{"f": {"n": ["count"]}}])
    assert verdict(var, "[f(n='count')]").valid
    assert verdict(var, "[f(n='Count')]").error_type == "value_error:others"


def test_parallel_calls_match_in_any_order():
    assert verdict(PAIR, "[f(a=2), f(a=1)]").valid
    assert verdict(PAIR, "[f(a=2), f(a=1)]").error_type is None
    assert verdict(PAIR, "[f(a=1)]").error_type == "parallel_function_checker_no_order:wrong_count"
    miss = verdict(PAIR, "[f(a=1), f(a=3)]")
    assert miss.error_type == "parallel_function_checker_no_order:cannot_find_match"
    assert miss.error == (
        "Could not find a matching function among index [1] of model output for index 1 of "
        "possible answers."
    )


def test_multiple_needs_the_right_function_among_several():
    assert verdict(CHOICE, "[h(x=1)]").valid
    assert verdict(CHOICE, "[g(x=1)]").error_type == "simple_function_checker:wrong_func_name"
    assert verdict(CHOICE, "[h(x=1), h(x=1)]").error_type == "multiple_function_checker:wrong_count"


@pytest.mark.parametrize(
    ("raw", "style", "valid"),
    [
        ("I cannot answer that with these tools.", "prompt", True),  # decode failure: abstains
        ("[]", "prompt", True),  # empty decode: abstains
        ("[f(a=1)]", "prompt", False),
        ([], "fc", True),
        ([{"f": "[1, 2]"}], "fc", True),  # not call-shaped: officially "empty"
        ([{"f": '{"a": 1}'}], "fc", False),
    ],
)
def test_irrelevance_is_correct_when_no_call_is_decoded(raw, style, valid):
    result = verdict(NONE_FITS, raw, style)
    assert result.valid is valid
    if not valid:
        assert result.error_type == "irrelevance_error:decoder_success"


def test_live_relevance_needs_at_least_one_call():
    some = item("live_relevance", [fn("f", {"a": INT})], None)
    assert verdict(some, "[f(a=999)]").valid  # any call counts, arguments are not checked
    failed = verdict(some, "no call")
    assert failed.error_type == "relevance_error:decoder_failed"
    assert failed.error.startswith("Invalid syntax. Failed to decode AST when it should have. ")
    assert verdict(some, "[]").error_type == "relevance_error:decoder_failed"


def test_decode_failures_fail_ast_items_with_the_decoder_error_type():
    failed = verdict(MATH, "Sure! math.factorial(number=5) is what you need.")
    assert failed.error_type == "ast_decoder:decoder_failed"
    assert failed.error.startswith("Invalid syntax. Failed to decode AST. ")
    shape = verdict(MATH, [{"math.factorial": "[5]"}], "fc")
    assert shape.error_type == "ast_decoder:decoder_wrong_output_format"


def test_items_the_checker_cannot_score_are_errors_not_verdicts():
    with pytest.raises(ValueError, match="is not one of"):
        verdict(MATH._replace(category="simple_java"), "[f()]")
    with pytest.raises(ValueError, match="needs its possible answer"):
        verdict(MATH._replace(possible_answer=None), "[f()]")


def test_per_parameter_details():
    result = verdict(AREA, "[area(base=10, height=6)]")
    by_param = {p.param: (p.called, p.correct) for p in result.params}
    assert by_param == {"base": (True, True), "height": (True, False), "unit": (True, True)}
    failed = verdict(AREA, "not a call")
    assert {p.param: (p.called, p.correct) for p in failed.params} == {
        "base": (False, False),
        "height": (False, False),
        "unit": (False, False),
    }
    # parallel: each expected call is paired with a same-name call that passes first
    pair = verdict(PAIR, "[f(a=2), f(a=7)]")
    assert [(p.param, p.correct) for p in pair.params] == [("a", False), ("a", True)]
