"""The official web-search answer check: the expected answer in the final chat message.

Reimplements (does not import or copy) ``_evaluate_single_agentic_entry`` of
``bfcl_eval/eval_checker/eval_runner.py`` and ``agentic_checker`` of
``bfcl_eval/eval_checker/agentic_eval/agentic_checker.py`` (bfcl-eval 2026.3.23). The
searches themselves are not re-run (no network): only the last step that is *not* a
function call is read, and it passes when one accepted answer appears in it as a whole
word after both are standardized (``,./-_*^()`` removed, lower case, ``'`` -> ``"``;
spaces are kept, unlike the AST checker's standardization). The memory categories are
checked the same way (:mod:`.memory`).

"As a whole word" is the official ``\b<answer>\b``, which also demands a word character
next to an answer that starts or ends with a non-word one: "$49.99" (standardized "$4999")
never matches "it was $49.99". :data:`CORRECTED` is the variant without that bug (no word
character right before or after the answer); the study records its verdict beside the
official one.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from .checker import Check
from .multi_turn import decode_step
from .schema import WebSearchItem

CORRECTED = "no word character right before or after the answer"
"""The corrected whole-word rule (``(?<!\\w)answer(?!\\w)``; equal to ``\b`` at word edges)."""
INFERENCE_ERROR = "agentic:inference_error"
NO_LAST_MESSAGE = "agentic:no_last_message"
ANSWER_NOT_FOUND = "agentic:answer_not_found"
_PUNCTUATION = re.compile(r"[\,\.\/\-\_\*\^\(\)]")


class Answer(NamedTuple):
    """What the check read from one result."""

    check: Check
    message: Any
    """The last non-call step (None when there was none)."""
    calls: int
    """Steps that decoded to function calls (the searches and page fetches)."""


def standardize(text: str) -> str:
    """The official agentic standardization (spaces kept)."""
    return _PUNCTUATION.sub("", text).lower().replace("'", '"')


def last_message(steps: list[Any], style: str) -> tuple[Any, int]:
    """The last step that does not decode to calls, and how many steps did."""
    message, calls = None, 0
    for step in steps:
        if decode_step(step, style) is None:
            message = step
        else:
            calls += 1
    return message, calls


def check_web_search(item: WebSearchItem, result: Any, *, style: str = "fc") -> Answer:
    """Score one web-search result with the official semantics (:func:`check_answer`)."""
    return check_answer(item.answers, result, style=style)


def check_answer(
    answers: list[str], result: Any, *, style: str = "fc", corrected: bool = False
) -> Answer:
    """Score one agentic (web-search or memory) result with the official semantics.

    Args:
        answers: the accepted answers.
        result: the ``result`` of its result-file line: a list holding one list of steps.
        style: how steps are decoded (``fc``, ``prompt`` or ``auto``, as for multi-turn).
        corrected: use the corrected whole-word rule (:data:`CORRECTED`).
    """
    if type(result) is not list or len(result) != 1:
        message = "Error during inference phase. Model did not output a list of model responses."
        return Answer(Check(False, INFERENCE_ERROR, message), None, 0)
    steps = result[0] if isinstance(result[0], (list, str)) else []
    message, calls = last_message(list(steps), style)
    if not message:
        text = "Cannot find the last chat message that is not a function call."
        return Answer(Check(False, NO_LAST_MESSAGE, text), message, calls)
    return Answer(answer_check(message, answers, corrected=corrected), message, calls)


def answer_check(message: Any, answers: list[str], *, corrected: bool = False) -> Check:
    """Official ``agentic_checker``: one accepted answer found as a whole word (with
    ``corrected``, by :data:`CORRECTED`)."""
    if type(message) is list:
        message = message[0]
    text = standardize(message if type(message) is str else str(message))
    before, after = (r"(?<!\w)", r"(?!\w)") if corrected else (r"\b", r"\b")
    for answer in answers:
        if re.search(before + re.escape(standardize(answer)) + after, text):
            return Check(True, None, None)
    error = "None of the expected answers were found in the model response."
    return Check(False, ANSWER_NOT_FOUND, error)
