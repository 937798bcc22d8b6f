"""Expert grading's prompts and judgments: the answering prompt, the ``hle`` rubric's judge
messages, and a judge's reply as record fields.

The rubric (six dimensions 0-100; the judge also writes its own ``overall`` and its
``confidence``) is core's ``hle`` rubric (:func:`evalbench.judge.get_rubric`), with core's
prompt and parser: an unreadable or incomplete reply, or a failed call, is unscored, never a
default score. The overall score is the rubric's weighted score (the mean of the six),
computed here; the judge's own overall is kept for comparison only.
"""

from __future__ import annotations

from typing import Any

from evalbench.judge import JudgeCase, build_rubric_messages, get_rubric, parse_rubric_output

from .data import DIMENSIONS, ExpertItem

RUBRIC = "hle"

ANSWER_PROMPT = (
    "You are answering an expert research question. Give a complete, accurate and well "
    "reasoned answer; where facts may have changed over time, say which date your information "
    "refers to."
)
"""evalbench's prompt for answers to the expert questions (not an official prompt)."""


def answer_messages(question: str) -> list[dict[str, str]]:
    """Messages asking a system for a research answer to an expert question."""
    return [{"role": "system", "content": ANSWER_PROMPT}, {"role": "user", "content": question}]


def judge_messages(item: ExpertItem, answer: str) -> list[dict[str, Any]]:
    """The rubric judge's messages: the question, the answer, the reference and criteria."""
    case = JudgeCase(
        question=item.question,
        answer=answer,
        reference=item.reference_answer,
        criteria=list(item.criteria) or None,
    )
    return build_rubric_messages(get_rubric(RUBRIC), case)


def judgment_fields(text: str | None, error: str | None) -> dict[str, Any]:
    """A judge's reply (or its failed call) as :class:`~.records.GradeRecord` fields:
    ``status`` scored (six scores, overall, the judge's own overall and confidence) or
    unscored (kind and reason), and the raw text."""
    if error is not None:
        reason = f"the judge call failed: {error}"
        return {"status": "unscored", "unscored_kind": "call_error", "unscored_reason": reason,
                "judge_error": error}  # fmt: skip
    result = parse_rubric_output(RUBRIC, text)
    if result.status != "scored":
        return {"status": "unscored", "judge_raw": text, "unscored_kind": result.unscored_kind,
                "unscored_reason": result.unscored_reason}  # fmt: skip
    return {
        "status": "scored",
        "judge_raw": text,
        **{f"score_{d}": result.scores[d] for d in DIMENSIONS},
        "score_overall": result.weighted_score,
        "judge_overall": _number(result.extras.get("overall")),
        "judge_confidence": _number(result.extras.get("confidence")),
    }


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) else None
