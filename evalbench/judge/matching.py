"""Answer-matching judges: does a model's answer mean the same as the gold answer?

Two well-known prompts, reproduced verbatim (neither invented here):

- ``hle_grader``: :data:`~evalbench.judge.official.EXTRACTED_ANSWER_GRADER`, the judge prompt
  of Humanity's Last Exam and of BrowseComp (centerforaisafety/hle ``JUDGE_PROMPT``; openai/
  simple-evals ``browsecomp_eval.py`` ``GRADER_TEMPLATE``). The judge sees the question, the
  response and the correct answer and answers ``correct: yes`` only if the answer "matches
  ... or is within a small margin of error for numerical problems", ``no`` on "any
  inconsistency, ambiguity, non-equivalency". Sent as one user message, as both do.
- ``equality_checker``: :data:`EQUALITY_TEMPLATE`, simple-evals' fuzzy matcher for MATH
  (openai/simple-evals @ ee3b0318d8d1d9d72755a4120879be65f7c07e9e, ``common.py``
  ``EQUALITY_TEMPLATE`` and ``check_equality``; last changed in 5e623c2b): two expressions,
  "only perform trivial simplifications", "give benefit of the doubt to units", reply "Yes"
  or "No". Sent as one user message, the gold answer as expression 1 and the model's as
  expression 2 (``check_equality(sampler, row["Answer"], extracted_answer)`` in
  ``math_eval.py``); no question.

Both put the answers into the prompt verbatim, as the official code does (no fencing).

Parsing is stricter than the official readers, on purpose (:func:`parse_match`): an output
that is neither a clear yes nor a clear no is **unscored** (a reason, never 0/1). simple-evals
reads ``response_text.lower().strip() == "yes"``, so "Yes." or any unreadable reply counts
as *not equal*; here "Yes." is yes and an unreadable reply is unscored.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal, NamedTuple, get_args

from evalbench.textparse import MAX_PARSE_CHARS, parse_json_object

from .official import EXTRACTED_ANSWER_GRADER

MatchPrompt = Literal["hle_grader", "equality_checker"]
"""The answer-matching prompts (see the module docstring)."""
MATCH_PROMPTS: tuple[str, ...] = get_args(MatchPrompt)

EQUALITY_TEMPLATE = (
    "Look at the following two expressions (answers to a math problem) and judge whether "
    "they are equivalent. Only perform trivial simplifications\n\nExamples:\n\n"
    "    Expression 1: $2x+3$\n    Expression 2: $3+2x$\n\nYes\n\n"
    "    Expression 1: 3/2\n    Expression 2: 1.5\n\nYes\n\n"
    "    Expression 1: $x^2+2x+1$\n    Expression 2: $y^2+2y+1$\n\nNo\n\n"
    "    Expression 1: $x^2+2x+1$\n    Expression 2: $(x+1)^2$\n\nYes\n\n"
    "    Expression 1: 3245/5\n    Expression 2: 649\n\nNo\n"
    "(these are actually equal, don't mark them equivalent if you need to do nontrivial "
    "simplifications)\n\n"
    "    Expression 1: 2/(-3)\n    Expression 2: -2/3\n\nYes\n"
    "(trivial simplifications are allowed)\n\n"
    "    Expression 1: 72 degrees\n    Expression 2: 72\n\nYes\n"
    "(give benefit of the doubt to units)\n\n"
    "    Expression 1: 64\n    Expression 2: 64 square feet\n\nYes\n"
    "(give benefit of the doubt to units)\n\n---\n\nYOUR TASK\n\n\n"
    'Respond with only "Yes" or "No" (without quotes). Do not include a rationale.\n\n'
    "    Expression 1: %(expression1)s\n    Expression 2: %(expression2)s"
)
"""simple-evals' ``EQUALITY_TEMPLATE`` after its ``.strip()`` (a ``%``-format template:
``expression1`` = gold, ``expression2`` = the model's answer)."""

PROMPT_SHA256 = {
    "EQUALITY_TEMPLATE": "c9385e2f8120f01b098ea7c3b265535f797a65d8d7b37df4833fa38b51f50d2f",
}
"""SHA-256 of the official template (UTF-8, placeholders unformatted)."""


class MatchVerdict(NamedTuple):
    """A parsed answer-matching judgment: ``correct`` is ``None`` when unscored."""

    correct: bool | None
    reason: str | None = None
    """Why the output is unscored (``None`` when it has a verdict)."""


def match_messages(
    prompt: MatchPrompt, question: str, gold: str, answer: str
) -> list[dict[str, str]]:
    """The judge request: one user message with the chosen prompt filled in.

    Args:
        prompt: ``hle_grader`` or ``equality_checker``.
        question: the item's question (``equality_checker`` does not show it).
        gold: the gold answer.
        answer: the model's answer (already extracted).
    """
    if prompt == "hle_grader":
        text = EXTRACTED_ANSWER_GRADER.format(
            question=question, correct_answer=gold, response=answer
        )
    elif prompt == "equality_checker":
        text = EQUALITY_TEMPLATE % {"expression1": gold, "expression2": answer}
    else:
        raise ValueError(f"unknown answer-matching prompt {prompt!r} (one of {MATCH_PROMPTS})")
    return [{"role": "user", "content": text}]


def parse_match(prompt: MatchPrompt, text: str | None) -> MatchVerdict:
    """Read a judge's output for ``prompt``: a yes/no verdict, or unscored with a reason.

    - ``equality_checker``: after stripping spaces, quotes, Markdown marks and a trailing
      ``.``/``!``, the reply's first word is ``yes`` or ``no`` and the other word does not
      appear anywhere in it (``"Yes."`` -> yes; ``"No, yes"`` and ``"Maybe"`` -> unscored).
    - ``hle_grader``: the ``correct:`` line(s) (a line that starts, after spaces and Markdown
      marks ``* _ # > - `````, with ``correct`` and a colon, so ``incorrect: yes`` does not
      count), or the ``correct`` field of a JSON reply; ``yes``/``no`` after the same
      stripping; none, another word, or two different verdicts -> unscored.
    """
    raw = text or ""
    if not raw.strip():
        return MatchVerdict(None, "the judge output is empty")
    if len(raw) > MAX_PARSE_CHARS:
        return MatchVerdict(None, f"the judge output has {len(raw):,} characters")
    if prompt == "equality_checker":
        return _parse_yes_no(raw)
    if prompt == "hle_grader":
        return _parse_correct_field(raw)
    raise ValueError(f"unknown answer-matching prompt {prompt!r} (one of {MATCH_PROMPTS})")


_DECORATION = " \t\r\n\"'*`_"
_WORD = re.compile(r"[a-z]+")
_CORRECT_LINE = re.compile(r"^[\s>*_#`-]*correct[\s*_`]*:[\s*_`]*(.*)$", re.I | re.M)


def _verdict_word(value: str) -> str:
    return value.strip().strip(_DECORATION).rstrip(".!").strip(_DECORATION).lower()


def _shown(text: str) -> str:
    return json.dumps(text.strip()[:60], ensure_ascii=False)


def _parse_yes_no(raw: str) -> MatchVerdict:
    words = _WORD.findall(raw.lower())
    first = words[0] if words else ""
    if first not in ("yes", "no"):
        return MatchVerdict(None, f"the reply does not start with yes or no: {_shown(raw)}")
    other = "no" if first == "yes" else "yes"
    if other in words:
        return MatchVerdict(None, f"the reply says both yes and no: {_shown(raw)}")
    return MatchVerdict(first == "yes")


def _parse_correct_field(raw: str) -> MatchVerdict:
    obj = parse_json_object(raw)
    if obj is not None:
        lowered = {str(k).strip().lower(): v for k, v in obj.items()}
        if "correct" in lowered:
            return _from_values([lowered["correct"]])
    values: list[Any] = [m.group(1) for m in _CORRECT_LINE.finditer(raw)]
    if not values:
        return MatchVerdict(None, f"no 'correct:' line in the judge output: {_shown(raw)}")
    return _from_values(values)


def _from_values(values: list[Any]) -> MatchVerdict:
    if not all(isinstance(v, str) for v in values):
        return MatchVerdict(None, f"'correct' must be yes or no, got {json.dumps(values[0])}")
    words = {_verdict_word(v) for v in values}
    if len(words) > 1:
        return MatchVerdict(
            None, f"several different 'correct:' values ({', '.join(sorted(words))})"
        )
    word = words.pop()
    if word not in ("yes", "no"):
        return MatchVerdict(None, f"'correct' must be yes or no, got {_shown(word)}")
    return MatchVerdict(word == "yes")
