"""What a headline stands on (:mod:`evalbench.measured`): counts, reasons and the rules every
study shares — a headline over zero measured items is "no result", never a number; a run
with nothing measured is ``no_result``; truncated outputs and identical attempts counted."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from evalbench.cli import exit_status
from evalbench.measured import (
    Measured,
    failed_call,
    from_rows,
    headline,
    honest_headlines,
    identical_attempts,
    judgment_state,
    measured,
    no_result_reason,
    no_result_text,
    partial_reason,
)
from evalbench.models.providers import _within
from evalbench.models.types import SimReply, ToolCall
from evalbench.publish import measured_verdict
from evalbench.runs import usage_from_rows

CONNECTION = "connection: Connection error. (after 3 attempt(s))"


def test_counts_and_reasons_add_up():
    # 5 answers: 2 with a value, 2 failed calls (connection), 1 unparsed judge output
    row = measured(
        "loop",
        [None, failed_call(CONNECTION), None, failed_call(CONNECTION), "unparsed judge output"],
    )
    assert (row.scored, row.total) == (5 - 3, 5)
    assert row.unscored == {"failed call (connection)": 2, "unparsed judge output": 1}
    assert from_rows([row.as_row()]) == [row]


def test_a_headline_over_zero_measured_items_is_no_result_with_why():
    # 12 answers, 12 failed calls: 0 of 12 scored
    row = measured("loop", [failed_call(CONNECTION)] * 12)
    text = "no result: 0 of 12 answers scored — failed call (connection) × 12"
    assert no_result_text([row]) == text
    assert headline(0.0, row) == text  # not accuracy 0.000
    assert headline(0.25, row._replace(scored=3)) == 0.25
    assert honest_headlines({"accuracy loop": 0.0}, [row]) == {"result": text}
    assert no_result_reason([row]) == text


def test_the_reasons_of_every_system_add_up_in_the_run_headline():
    # a: 3 failed calls; b: 2 unparsed judge outputs, 1 failed judge call -> 0 of 6 answers
    a = measured("a", [failed_call("http_500: boom")] * 3)
    b = measured("b", ["unparsed judge output"] * 2 + [failed_call("timeout", "judge")])
    assert no_result_text([a, b]) == (
        "no result: 0 of 6 answers scored — failed call (http_500) × 3, "
        "unparsed judge output × 2, failed judge call (timeout) × 1"
    )


@pytest.mark.parametrize(
    "value", [math.nan, float("inf"), "nan [nan, nan]", "—", "— [—, —]", "NaN"]
)
def test_a_headline_that_is_not_a_number_reads_no_result(value):
    ok = measured("a", [None])
    heads = honest_headlines({"x": value, "n": 0.5, "label": "undefined"}, [ok])
    assert heads["x"].startswith("no result")
    assert heads["n"] == 0.5 and heads["label"] == "undefined"


def test_a_system_with_nothing_scored_is_named_beside_the_others():
    ok, empty = measured("a", [None, None]), measured("b", ["no answer"] * 2)
    assert partial_reason([ok, empty]) == "no result for b: 0 of 2 answers scored — no answer × 2"
    assert partial_reason([ok]) == "" and no_result_reason([ok, empty]) == ""


def test_a_judgment_state_says_whose_call_failed_or_what_did_not_parse():
    assert judgment_state("scored", None) is None
    assert judgment_state("unscored", "sim_error: x", "call_error") == "failed call (sim_error)"
    assert (
        judgment_state("unscored", "timeout", None, role="judge") == "failed judge call (timeout)"
    )
    assert judgment_state("unscored", None, "no_score") == "unparsed judge output (no_score)"
    assert judgment_state("unscored", float("nan"), None) == "unparsed judge output"


def test_identical_attempts_count_items_whose_every_attempt_gave_the_same_answer():
    # t1: "4","4","4" identical; t2: "4","5" not; t3: "4" and a failed call (no repeat);
    # t4 answered once -> 1 of 2 repeated items identical; b: 9 of 9 (temperature 0)
    frame = pd.DataFrame(
        {"system": ["a"] * 8 + ["b"] * 27,
         "item": ["t1"] * 3 + ["t2"] * 2 + ["t3"] * 2 + ["t4"] + [f"q{i // 3}" for i in range(27)],
         "out": ["4", "4", "4", "4", "5", "4", None, "4"] + ["same"] * 27}
    )  # fmt: skip
    assert identical_attempts(frame, item="item", output="out") == {"a": (1, 2), "b": (9, 9)}


@pytest.mark.parametrize("seed", range(4))
def test_identical_flags_are_pandas_groupby_of_every_repeated_fully_answered_item(seed):
    # the oracle: pandas' groupby over (system, item), size > 1, every output present,
    # nunique == 1; missing outputs (None, NaN) and missing keys (dropped, as groupby does)
    import numpy as np

    from evalbench.measured import identical_flags

    rng = np.random.default_rng(seed)
    n = 300
    outputs = rng.choice(np.array(["4", "5", None, float("nan")], dtype=object), n,
                         p=[0.6, 0.3, 0.05, 0.05])  # fmt: skip
    items = rng.choice(np.array(["t0", "t1", "t2", None, *[f"q{i}" for i in range(60)]],
                                dtype=object), n)  # fmt: skip
    frame = pd.DataFrame({"system": rng.choice(["a", "b", "c"], n), "item": items,
                          "out": outputs})  # fmt: skip
    got = identical_flags(frame, keys=("system", "item"), output="out")
    stats = (
        frame.assign(_answered=frame["out"].notna())
        .groupby(["system", "item"])
        .agg(size=("out", "size"), nunique=("out", "nunique"), answered=("_answered", "all"))
    )
    want = stats[(stats["size"] > 1) & stats["answered"]]
    want = (want["nunique"] == 1).rename("identical")
    assert 0 < want.sum() < len(want)  # both kinds are there
    pd.testing.assert_series_equal(got, want)


@pytest.mark.parametrize(
    ("before", "rows", "after"),
    [
        (("ok", ""), [Measured("a", 0, 4)], "no_result"),
        (("degraded", "a: 4 of 4 calls failed"), [Measured("a", 0, 4)], "no_result"),
        (("failed", "a: 4 of 4 calls failed"), [Measured("a", 0, 4)], "failed"),
        (("ok", ""), [Measured("a", 1, 4), Measured("b", 0, 4)], "ok"),
        (("ok", ""), [], "ok"),  # a run that did not say (hand-given headlines)
    ],
)
def test_a_run_is_no_result_when_nothing_was_measured_within_its_error_budget(before, rows, after):
    manifest = {"measured": [m.as_row() for m in rows]}
    status, reason = measured_verdict(before, manifest)  # type: ignore[arg-type]
    assert status == after
    if after == "ok" and rows:
        assert reason.startswith("no result for b: 0 of 4 answers scored")


def test_no_result_exits_1():
    assert exit_status(["ok", "no_result"]) == 1 and exit_status(["ok", "skipped"]) == 0


def test_truncated_outputs_are_counted_per_system():
    # a: 3 calls, 2 cut (finish_reason length); b: an agent task with 2 truncated model steps
    rows = [
        {"system": "a", "key": k, "request_key": k, "prompt_tokens": 1, "completion_tokens": 1,
         "cached": False, "error": None, "finish_reason": r}
        for k, r in (("1", "length"), ("2", "stop"), ("3", "length"))
    ] + [{"system": "b", "key": "t", "request_key": "t", "prompt_tokens": 1,
          "completion_tokens": 1, "cached": False, "error": None, "truncated_steps": 2,
          "steps": 7, "tool_calls": 3}]  # fmt: skip
    usage = usage_from_rows(rows, {}).set_index("system")
    assert usage.loc["a", "truncated"] == 2 and usage.loc["b", "truncated"] == 2
    assert usage.loc["a", "calls"] == 3
    # outputs, what "truncated" counts among: a call's answer each; an agent task's model
    # steps (7 steps, 3 of them tool calls: 4 model outputs, 2 of them cut). Before, b read
    # "2 of 1 outputs truncated" (its one task as the denominator).
    assert (usage.loc["a", "outputs"], usage.loc["b", "outputs"]) == (3, 4)
    assert usage.loc["b", "calls"] == 1


def test_an_output_cut_at_a_local_models_context_size_is_told_apart_from_max_tokens():
    """llama-cpp-python lowers max_tokens to what n_ctx leaves and answers 200 with
    finish_reason length: prompt 192 + completion 64 = n_ctx 256 is a cut at the context
    size, which "at max_tokens 128" misnamed (and "raise max_tokens" does not help)."""
    from evalbench.display import measured_html
    from evalbench.models import ModelSpec

    spec = ModelSpec(name="chat", provider="local", max_tokens=128, local={"n_ctx": 256})
    rows = [{"system": "chat", "key": str(k), "request_key": str(k), "prompt_tokens": p,
             "completion_tokens": c, "cached": False, "error": None, "finish_reason": r}
            for k, (p, c, r) in enumerate([(192, 64, "length"), (209, 47, "length"),
                                           (20, 128, "length"), (30, 12, "stop")])]  # fmt: skip
    usage = usage_from_rows(rows, {"chat": spec}).set_index("system")
    assert (usage.loc["chat", "truncated"], usage.loc["chat", "truncated_at_n_ctx"]) == (3, 2)
    html = measured_html([], usage.reset_index(), {"chat": 128}, {"chat": 256})
    assert ("chat: 3 of 4 outputs truncated (finish_reason=length) at max_tokens 128, 2 of them "
            "at the context size (n_ctx 256: the prompt left max_tokens no room)") in html  # fmt: skip


def test_a_simulated_reply_longer_than_max_tokens_is_cut_there():
    # 4 characters per token: max_tokens 3 keeps 12 characters of text, then no call fits
    reply = SimReply("FINAL ANSWER: 12345678", (ToolCall(name="f", arguments='{"x": 1}'),))
    cut = _within(reply, 3)
    assert cut == SimReply("FINAL ANSWER", (), "length")
    assert _within(reply, 100) is reply  # 22 + 8 characters = 8 tokens: fits
    assert _within(reply, None) is reply


def test_a_damaged_manifest_row_is_left_out_never_an_error():
    good = Measured("a", 1, 2, {"no answer": 1}).as_row()
    rows = [good, {"system": "b"}, "text", {"system": "c", "scored": "1", "total": 2},
            {"system": "d", "scored": True, "total": 2}, {"system": "e", "scored": -1, "total": 2},
            {"system": "f", "scored": 0, "total": 2, "unscored": [1]}]  # fmt: skip
    assert from_rows(rows) == [Measured("a", 1, 2, {"no answer": 1})]
    assert from_rows({"system": "a"}) == [] and from_rows(None) == []
