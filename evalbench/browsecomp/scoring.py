"""Official BrowseComp and BrowseComp-ZH prompts and grading, reproduced, with a correct parser.

Sources (read, not copied; the prompt strings are byte-exact and pinned by SHA-256 in
:data:`PROMPT_SHA256`, checked by the tests):

- BrowseComp: openai/simple-evals ``browsecomp_eval.py`` @ ee3b0318d8d1d9d72755a4120879be65f7c07e9e
  (last changed in 5e623c2b400af62a1278e23595f95b0853d7fe8a): ``QUERY_TEMPLATE`` sent as the only
  user message; ``GRADER_TEMPLATE`` (identical to HLE's judge prompt, quirks included: the
  literal ``\\%`` and "if there if there") sent as a user message after the grader sampler's
  system message ``"You are a helpful assistant."`` (``sampler/chat_completion_sampler.py``:
  ``gpt-4.1-2025-04-14``, temperature 0.5, max_tokens 2048); free-text reply.
- BrowseComp-ZH: PALIN2018/BrowseComp-ZH @ 86abe635e7deef89ec00c68ff1c2588f0e2f2099, ``prompt.py``
  and ``run.py``: system ``SYSTEM_PROMPT_CN`` + user question; the judge (gpt-4o, temperature
  0.6, top_p 0.95) gets system ``"you are a helpful assistant!"`` + user ``JUDGE_PROMPT_CN``.

**The reference BrowseComp grader scores every answer wrong.** ``grade_sample`` searches
``correct: (yes|no)`` and returns ``match.group(0)`` — the whole match, ``"correct: yes"`` —
which the caller compares with ``"yes"``; so an item is never correct once the grader follows
the format (an unmatched reply defaults to ``"no"``). openai/simple-evals PR #93 (open in the
snapshot read) changes it to ``group(1)``. :func:`reference_grade_sample` reproduces the
published behaviour (to pin it in a test and show it beside the real numbers);
:func:`parse_grade` is what evalbench scores with:

- ``correct``: a line that starts (after spaces and Markdown marks ``* _ # > -``) with
  ``correct`` and a colon, then ``yes`` or ``no`` (case-insensitive, optional ``*``/quotes):
  a line starting ``incorrect:`` or a mention inside the reasoning does not count; two lines
  that disagree, or none, leave the grade **unscored** (counted, never "no"); a JSON reply
  (structured output) is read from its ``correct`` field;
- ``confidence``: the judge's ``confidence:`` line (a number, optionally with ``%``); outside
  0–100 or unreadable it is missing (the prompt tells the judge to write 100 when the response
  states none; evalbench never invents it);
- ``extracted_final_answer`` and ``reasoning`` are informational.

BrowseComp-ZH's own reading (``run.py``) is reproduced by :func:`zh_reference_fields` (one
regular expression needing the four fields in order; no match -> four empty strings) with
:func:`zh_reference_verdict` (lower-cased; anything but ``yes``/``no`` counts as ``none``,
i.e. wrong) and :func:`zh_reference_confidence` (``int(x.split('%')[0])``, **0** on any
failure — so ``85.5%`` and ``**85%**`` become 0; ``run_acc_calibration_error.py``).
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal, NamedTuple

from evalbench.judge.official import EXTRACTED_ANSWER_GRADER
from evalbench.textparse import parse_json_object

Style = Literal["browsecomp", "browsecomp_zh"]

QUERY_TEMPLATE = (
    "{Question}\n"
    "\n"
    "Your response should be in the following format:\n"
    "Explanation: {{your explanation for your final answer}}\n"
    "Exact Answer: {{your succinct, final answer}}\n"
    "Confidence: {{your confidence score between 0% and 100% for your answer}}"
)
"""BrowseComp's answering template (a ``str.format`` template: ``{{ }}`` render as braces)."""

GRADER_TEMPLATE = EXTRACTED_ANSWER_GRADER
"""BrowseComp's grader template (after the official ``.strip()``), quirks included."""

GRADER_SYSTEM = "You are a helpful assistant."
"""The system message simple-evals' ``ChatCompletionSampler`` prepends for the grader."""

SYSTEM_PROMPT_CN = (
    "如果你回复的问题需要借助外部资源，请根据你自身的知识储备给出具体答案，而不是拒答后让用户自行查询。\n"
    "\n"
    "你的回复应遵循以下格式：\n"
    "Explanation: {你对最终答案的解释}\n"
    "Exact Answer: {你简洁的最终答案}\n"
    "Confidence: {你对答案的置信度得分在 0% 到 100% 之间}\n"
)
"""BrowseComp-ZH's answering system prompt (not a format template; sent as is)."""

JUDGE_PROMPT_CN = (
    "根据以下精确且明确的[response]，判断以下对[question]的[correct_answer]是否正确。\n"
    "\n"
    "[question]:  {question}\n"
    "\n"
    "[response]:  {response}\n"
    "\n"
    "您的判断必须符合以下指定的格式和标准：\n"
    "\n"
    "extracted_final_answer: 从[response]中提取的最终准确答案。"
    '如果无法从答案中提取出准确的最终答案，则将提取的答案填写为"None"。\n'
    "\n"
    "[correct_answer]: {correct_answer}\n"
    "\n"
    "reasoning: 根据[correct_answer]解释提取的最终答案正确或错误的原因， "
    "仅关注[correct_answer]和提取的最终答案之间是否存在有意义的差异。"
    "请勿评论问题的任何背景，请勿尝试解决问题，"
    "请勿争论任何与[correct_answer]不同的答案，仅关注答案是否匹配。\n"
    "\n"
    "correct: 如果提取的最终答案与上面给出的[correct_answer]相符，"
    '或者在数值问题的误差范围内，则回答"yes"。'
    "否则，例如，如果存在任何不一致、歧义、不等同，"
    '或者提取的答案不正确，则回答"no"。\n'
    "\n"
    "confidence: 从[response]中提取的置信度分数，介于0% 到100% 之间。"
    "如果没有可用的置信度分数，则填写100%。\n"
    "\n"
)
"""BrowseComp-ZH's judge prompt (``str.format`` with question, response, correct_answer)."""

ZH_JUDGE_SYSTEM = "you are a helpful assistant!"

PROMPT_SHA256 = {
    "QUERY_TEMPLATE": "6990664d8e2ac329133e805515199d65f943c128aba9a3af9727fcf1dd32264f",
    "GRADER_TEMPLATE": "0f0023ee579b8c134f1834ed8952778b9e01460e31d47c242ee3629da9d44835",
    "SYSTEM_PROMPT_CN": "aa22ca08b08b07aa82481bb18ca2d52aa3aaa52c928643fe4616f16c63e2590b",
    "JUDGE_PROMPT_CN": "ca5121f52bf0006ec147701a5dd11dd167836c260a0964efaeef036b7422a587",
}
"""SHA-256 of the official template strings (UTF-8, unformatted)."""

GRADE_SCHEMA: dict[str, Any] = {
    "type": "json_schema",
    "json_schema": {
        "name": "BrowseCompGrade",
        "strict": True,
        "schema": {
            "type": "object",
            "properties": {
                "extracted_final_answer": {"type": "string"},
                "reasoning": {"type": "string"},
                "correct": {"type": "string", "enum": ["yes", "no"]},
                "confidence": {"type": "integer"},
            },
            "required": ["extracted_final_answer", "reasoning", "correct", "confidence"],
            "additionalProperties": False,
        },
    },
}
"""``response_format`` of a structured-output grader (the template's four fields; the
official BrowseComp grader is free text)."""


def query_messages(style: Style, question: str) -> list[dict[str, str]]:
    """What the system under test is sent for one question."""
    if style == "browsecomp_zh":
        return [
            {"role": "system", "content": SYSTEM_PROMPT_CN},
            {"role": "user", "content": question},
        ]
    return [{"role": "user", "content": QUERY_TEMPLATE.format(Question=question)}]


def agent_question(style: Style, question: str) -> str:
    """The task text an agent receives: the same instructions in one message."""
    if style == "browsecomp_zh":
        return f"{SYSTEM_PROMPT_CN}\n{question}"
    return QUERY_TEMPLATE.format(Question=question)


def grader_messages(
    style: Style, question: str, response: str, correct_answer: str
) -> list[dict[str, str]]:
    """What the grader is sent for one response (the official message layout per style)."""
    values = {"question": question, "response": response, "correct_answer": correct_answer}
    if style == "browsecomp_zh":
        return [
            {"role": "system", "content": ZH_JUDGE_SYSTEM},
            {"role": "user", "content": JUDGE_PROMPT_CN.format(**values)},
        ]
    return [
        {"role": "system", "content": GRADER_SYSTEM},
        {"role": "user", "content": GRADER_TEMPLATE.format(**values)},
    ]


# --- the reference behaviour, reproduced -----------------------------------------------------

_REFERENCE_GRADE = re.compile(r"correct: (yes|no)")


def reference_grade_sample(grading_response: str) -> str:
    """simple-evals' ``grade_sample`` as published: the WHOLE match (``"correct: yes"``), or
    ``"no"`` when nothing matches. Kept to pin the bug; never used to score."""
    match = _REFERENCE_GRADE.search(grading_response)
    return match.group(0) if match else "no"


def reference_is_correct(grade: str) -> bool:
    """simple-evals' ``is_correct = grade_result == "yes"`` (always false on a match)."""
    return grade == "yes"


def reference_grade_sample_pr93(grading_response: str) -> str:
    """The fix proposed in openai/simple-evals PR #93: ``group(1)`` of the same unanchored
    search (still fooled by an ``incorrect: yes`` before the verdict line)."""
    match = _REFERENCE_GRADE.search(grading_response)
    return match.group(1) if match else "no"


_ZH_FIELDS = re.compile(
    r"""
    \*{0,2}extracted_final_answer\*{0,2}\s*?:\s*(.*?)\n
    \*{0,2}reasoning\*{0,2}\s*:\s*?(.*?)\n
    \*{0,2}correct\*{0,2}\s*:\s*?(.*?)\n
    \*{0,2}confidence\*{0,2}\s*?:\s*(.*?)$
    """,
    re.DOTALL | re.VERBOSE,
)


def zh_reference_fields(response: str) -> tuple[str, str, str, str]:
    """BrowseComp-ZH's ``run.py`` parse of a judge reply: (extracted answer, reasoning,
    is_correct, confidence) stripped, or four empty strings when the pattern does not match."""
    match = _ZH_FIELDS.search(response or "")
    if not match:
        return "", "", "", ""
    return tuple(g.strip() for g in match.groups())  # type: ignore[return-value]


def zh_reference_verdict(is_correct: str) -> str:
    """``yes``, ``no`` or ``none`` as ``run_acc_calibration_error.py`` counts them."""
    lowered = is_correct.lower()
    return lowered if lowered in ("yes", "no") else "none"


def zh_reference_confidence(extracted: str) -> int:
    """``int(x.split('%')[0])``, 0 on any failure (``run_acc_calibration_error.py``)."""
    try:
        return int(extracted.split("%")[0])
    except ValueError:
        return 0


# --- evalbench's parser ----------------------------------------------------------------------


class Grade(NamedTuple):
    """A parsed grader reply."""

    verdict: Literal["yes", "no"] | None
    """``None``: unscored."""
    confidence: float | None
    """0–100, from the grader's ``confidence`` field; ``None`` when missing or invalid."""
    extracted: str | None
    reasoning: str | None
    note: str
    """``ok``, ``structured``, ``no verdict``, ``conflicting verdicts``, or a confidence note."""


_MARKS = r"[\s*_#>`\-]*"
_VERDICT = re.compile(rf"^{_MARKS}correct{_MARKS}:{_MARKS}[\"']?(yes|no)\b", re.I | re.M)
_CONFIDENCE = re.compile(rf"^{_MARKS}confidence{_MARKS}:{_MARKS}(.*)$", re.I | re.M)
_FIELD = r"^{marks}{name}{marks}:[ \t*_]*(.*)$"


def _field(name: str, text: str) -> str | None:
    match = re.search(_FIELD.format(marks=_MARKS, name=name), text, re.I | re.M)
    return match.group(1).strip() if match else None


def read_confidence(raw: Any) -> tuple[float | None, str]:
    """A confidence in 0–100 from a number or text (``85``, ``"85%"``, ``"85 %"``)."""
    if isinstance(raw, bool) or raw is None:
        return None, "confidence missing"
    if isinstance(raw, (int, float)):
        value = float(raw)
    else:
        match = re.match(r"\s*\**\s*(\d+(?:\.\d+)?)\s*%?", str(raw))
        if not match:
            return None, "confidence unreadable"
        value = float(match.group(1))
    if not 0 <= value <= 100:
        return None, "confidence out of range"
    return value, "ok"


def parse_grade(text: str | None) -> Grade:
    """Read a grader reply (see the module docstring)."""
    if not text or not text.strip():
        return Grade(None, None, None, None, "empty reply")
    if text.lstrip().startswith("{"):
        structured = _structured(text)
        if structured is not None:
            return structured
    verdicts = {m.group(1).lower() for m in _VERDICT.finditer(text)}
    confidence_line = _CONFIDENCE.search(text)
    confidence, note = read_confidence(confidence_line.group(1) if confidence_line else None)
    extracted, reasoning = _field("extracted_final_answer", text), _field("reasoning", text)
    if len(verdicts) != 1:
        why = "no verdict" if not verdicts else "conflicting verdicts"
        return Grade(None, confidence, extracted, reasoning, why)
    verdict: Literal["yes", "no"] = "yes" if verdicts == {"yes"} else "no"
    return Grade(verdict, confidence, extracted, reasoning, note)


def _structured(text: str) -> Grade | None:
    found = parse_json_object(text)
    if found is None or "correct" not in found:
        return None
    raw = found.get("correct")
    verdict = raw.strip().lower() if isinstance(raw, str) else None
    confidence, note = read_confidence(found.get("confidence"))
    extracted = found.get("extracted_final_answer")
    reasoning = found.get("reasoning")
    fields = (
        None if extracted is None else str(extracted),
        None if reasoning is None else str(reasoning),
    )
    if verdict not in ("yes", "no"):
        return Grade(None, confidence, *fields, f"structured: correct={json.dumps(raw)}")
    return Grade(verdict, confidence, *fields, "structured" if note == "ok" else note)  # type: ignore[arg-type]
