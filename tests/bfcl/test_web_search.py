"""Web search: the official answer check on the last message that is not a call."""

from __future__ import annotations

import pytest

from evalbench.bfcl.schema import WebSearchItem
from evalbench.bfcl.web_search import (
    ANSWER_NOT_FOUND,
    INFERENCE_ERROR,
    NO_LAST_MESSAGE,
    answer_check,
    check_web_search,
    standardize,
)

ITEM = WebSearchItem("web_search_base_900", "web_search_base", [], [], ["Dong-Sup Yoon", "1871"])
SEARCH = [{"search_engine_query": '{"keywords": "Yonsei president"}'}]


def test_standardize_keeps_spaces_unlike_the_ast_checker():
    assert standardize("Dong-Sup Yoon (20th), U.S.") == "dongsup yoon 20th us"
    assert standardize("it's") == 'it"s'


@pytest.mark.parametrize(
    ("message", "valid"),
    [
        ("The president is **Dong-Sup Yoon**.", True),
        ("the president is dongsup yoon", True),  # standardized on both sides
        ("The president is Dong Sup Yoon.", False),  # the space is not removed
        ("Founded in 18710.", False),  # a whole word only
        ("Founded in 1871, London.", True),
        (["Founded in 1871."], True),  # a list: its first element
    ],
)
def test_answer_check(message, valid):
    result = answer_check(message, ITEM.answers)
    assert (result.valid, result.error_type) == (valid, None if valid else ANSWER_NOT_FOUND)


def test_the_last_step_that_is_not_a_call_is_read():
    steps = ["Dong-Sup Yoon, I guess.", SEARCH, "I could not find it.", SEARCH]
    answer = check_web_search(ITEM, [steps])
    assert answer.message == "I could not find it." and answer.calls == 2
    assert answer.check.error_type == ANSWER_NOT_FOUND


def test_shapes_the_official_runner_refuses():
    assert check_web_search(ITEM, [["a"], ["b"]]).check.error_type == INFERENCE_ERROR
    assert check_web_search(ITEM, "Dong-Sup Yoon").check.error_type == INFERENCE_ERROR
    only_calls = check_web_search(ITEM, [[SEARCH, SEARCH]])
    assert (only_calls.check.error_type, only_calls.calls) == (NO_LAST_MESSAGE, 2)
    # an empty last text is "no last message" too (officially a falsy message)
    assert check_web_search(ITEM, [[SEARCH, ""]]).check.error_type == NO_LAST_MESSAGE
