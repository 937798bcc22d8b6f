"""Expert-grading prompts and judgments: the judge sees the reference and the criteria inside
untrusted blocks, and every reply (scored, unreadable, failed call) becomes record fields
that validate."""

from __future__ import annotations

import json

from evalbench.hle_grading import scoring
from evalbench.hle_grading.data import DIMENSIONS, ExpertItem
from evalbench.hle_grading.records import GradeRecord

ITEM = ExpertItem(id="e1", category="Physics", difficulty="hard", question="Why is the sky blue?",
                  reference_answer="Rayleigh scattering.", criteria=("names the mechanism",))  # fmt: skip
BASE = {"id": "e1", "source": "dataset", "category": "Physics", "difficulty": "hard"}


def test_the_answering_and_judge_messages():
    asked = scoring.answer_messages(ITEM.question)
    assert asked == [{"role": "system", "content": scoring.ANSWER_PROMPT},
                     {"role": "user", "content": "Why is the sky blue?"}]  # fmt: skip
    judged = "\n".join(m["content"] for m in scoring.judge_messages(ITEM, "Because of <<<x>>>."))
    assert "Rayleigh scattering." in judged and "names the mechanism" in judged
    assert "<<<x>>>" not in judged  # the answer cannot close its untrusted block


def test_a_scored_reply_gives_every_score_and_the_computed_overall():
    scores = dict(zip(DIMENSIONS, [90, 80, 70, 60, 50, 40], strict=True))
    reply = json.dumps({"scores": scores, "overall": 99, "confidence": 85, "reason": "r"})
    fields = scoring.judgment_fields(reply, None)
    assert fields["status"] == "scored" and fields["score_accuracy"] == 90.0
    assert fields["score_overall"] == (90 + 80 + 70 + 60 + 50 + 40) / 6  # 65, never the judge's
    assert (fields["judge_overall"], fields["judge_confidence"]) == (99.0, 85.0)
    GradeRecord(**BASE, judge="j", **fields)


def test_an_unreadable_reply_and_a_failed_call_are_unscored():
    prose = scoring.judgment_fields("It is fine, I think.", None)
    assert prose["status"] == "unscored" and prose["judge_raw"] == "It is fine, I think."
    assert prose["unscored_kind"] == "no_score"
    failed = scoring.judgment_fields(None, "http_500: boom")
    assert failed == {"status": "unscored", "unscored_kind": "call_error",
                      "unscored_reason": "the judge call failed: http_500: boom",
                      "judge_error": "http_500: boom"}  # fmt: skip
    for fields in (prose, failed):
        assert "score_overall" not in GradeRecord(**BASE, judge="j", **fields).model_dump(
            exclude_none=True
        )
