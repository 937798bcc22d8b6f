"""The simulated BFCL systems: each injected mistake gets the verdict it implies."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from bfcl.cases import AREA, CHOICE, INT, MATH, NONE_FITS, PAIR, STR, fn, item

from evalbench import bfcl
from evalbench.bfcl import sim
from evalbench.bfcl.metrics import expected_error_types
from evalbench.bfcl.schema import Item
from evalbench.bfcl.scoring import MODES, correct_calls, fc_result, render_calls
from evalbench.models import ChatRequest, SimSpec

NOOP = ChatRequest(messages=[])


def reply_raw(it: Item, mistake: str, mode: str, seed: int = 0):
    """What a simulated system outputs for ``mistake``, in result-file form."""
    rng = np.random.default_rng(seed)
    reply = sim.sim_respond(NOOP, SimSpec(), rng, item=it, mode=mode, mistake=mistake)
    if mode == "tools" and reply.tool_calls:
        return fc_result((c.name, c.arguments) for c in reply.tool_calls)
    return reply.text or ""


def judged(it: Item, raw, mode: str) -> str | None:
    """The checker's error type, None for a valid verdict (as the official runner counts)."""
    style = "fc" if mode == "tools" else "prompt"
    result = bfcl.check(it, bfcl.decode(raw, style), underscore_to_dot=mode == "tools")
    return None if result.valid else result.error_type


# --------------------------------------------------------------------------- simulation


def test_applicable_mistakes_follow_the_item_shape():
    assert sim.applicable_mistakes(AREA, "prompt") == (
        "wrong_value",
        "wrong_type",
        "missing_required",
        "extra_param",
    )
    assert "wrong_function" in sim.applicable_mistakes(CHOICE, "prompt")
    assert "dropped_call" in sim.applicable_mistakes(PAIR, "prompt")
    assert sim.applicable_mistakes(NONE_FITS, "tools") == ("hallucinated_call",)
    nothing = NONE_FITS._replace(category="live_irrelevance", functions=[])
    assert sim.applicable_mistakes(nothing, "tools") == ()  # no tool to call
    assert sim.applicable_mistakes(nothing, "prompt") == ("hallucinated_call",)
    relevant = item("live_relevance", [fn("f", {"a": INT})], None)
    assert sim.applicable_mistakes(relevant, "prompt") == ("missed_call",)
    # a string parameter is never "a number given as a string"
    words = item("simple_python", [fn("f", {"s": STR})], [{"f": {"s": ["x"]}}])
    assert "wrong_type" not in sim.applicable_mistakes(words, "prompt")


RELEVANT = item("live_relevance", [fn("f", {"a": INT}, ("a",))], None)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("it", "mistake", "expected"),
    [
        (AREA, "none", None),
        (AREA, "wrong_value", "value_error:others"),
        (AREA, "wrong_type", "type_error:simple"),
        (AREA, "missing_required", "simple_function_checker:missing_required"),
        (AREA, "extra_param", "simple_function_checker:unexpected_param"),
        (AREA, "malformed", "ast_decoder:decoder_failed"),
        (MATH, "extra_param", "simple_function_checker:unexpected_param"),
        (CHOICE, "wrong_function", "simple_function_checker:wrong_func_name"),
        (PAIR, "dropped_call", "parallel_function_checker_no_order:wrong_count"),
        (PAIR, "wrong_value", "parallel_function_checker_no_order:cannot_find_match"),
        (NONE_FITS, "hallucinated_call", "irrelevance_error:decoder_success"),
        (NONE_FITS, "none", None),
        (NONE_FITS, "malformed", None),  # an unreadable output abstains, as officially
        (RELEVANT, "none", None),
        (RELEVANT, "missed_call", "relevance_error:decoder_failed"),
        (RELEVANT, "malformed", "relevance_error:decoder_failed"),
    ],
)
def test_each_injected_mistake_gets_its_official_error_type(it, mistake, expected, mode):
    got = judged(it, reply_raw(it, mistake, mode), mode)
    assert got == expected
    assert got in expected_error_types(it.category, mistake)


def test_tools_mode_replies_are_openai_tool_calls_with_dot_free_names():
    reply = sim.sim_respond(
        NOOP, SimSpec(), np.random.default_rng(0), item=MATH, mode="tools", mistake="none"
    )
    assert reply.text is None and reply.finish_reason == "tool_calls"
    [call] = reply.tool_calls
    assert (call.name, json.loads(call.arguments)) == ("math_factorial", {"number": 5})
    broken = sim.sim_respond(
        NOOP, SimSpec(), np.random.default_rng(0), item=MATH, mode="tools", mistake="malformed"
    )
    assert broken.tool_calls[0].arguments == '{"number": 5'  # truncated JSON
    prose = sim.sim_respond(
        NOOP, SimSpec(), np.random.default_rng(0), item=NONE_FITS, mode="tools", mistake="none"
    )
    assert prose.tool_calls == () and prose.text


def test_plan_mistake_rates_follow_the_knobs():
    knobs = SimSpec(accuracy={"simple_python": 0.7, "default": 0.2}, malformed_rate=0.1)
    rng = np.random.default_rng(7)
    n = 4000
    plans = pd.Series([sim.plan_mistake(AREA, knobs, "prompt", rng) for _ in range(n)])
    shares = plans.value_counts() / n
    # P(malformed) = 0.1; P(none) = 0.9 * 0.7; the rest split evenly over 4 mistakes
    for kind, p in [("malformed", 0.1), ("none", 0.9 * 0.7)]:
        assert abs(shares[kind] - p) < 4 * math.sqrt(p * (1 - p) / n)
    for kind in sim.applicable_mistakes(AREA, "prompt"):
        p = 0.9 * 0.3 / 4
        assert abs(shares[kind] - p) < 4 * math.sqrt(p * (1 - p) / n)
    other = MATH._replace(category="multiple")  # falls back to the "default" accuracy
    none = sum(sim.plan_mistake(other, knobs, "prompt", rng) == "none" for _ in range(n)) / n
    assert abs(none - 0.9 * 0.2) < 4 * math.sqrt(0.18 * 0.82 / n)
    lone = NONE_FITS._replace(category="live_irrelevance", functions=[])
    assert sim.plan_mistake(lone, SimSpec(accuracy=0.0), "tools", rng) == "none"  # nothing to do


@pytest.mark.slow
def test_sim_answers_on_every_public_item_get_the_implied_verdict(public_items):
    # A correct answer exists for every item but five whose possible answer disagrees with
    # the function doc (a required parameter missing from the answer, or an undeclared one).
    unreachable = {
        it.id
        for it in public_items
        if it.category not in bfcl.RELEVANCE_CATEGORIES
        and judged(it, render_calls(correct_calls(it)), "prompt") is not None
    }
    assert unreachable == {
        "live_simple_106-63-0",
        "live_simple_112-68-0",
        "live_multiple_507-149-4",
        "live_multiple_862-181-3",
        "live_multiple_964-207-0",
    }
    wrong = []
    for it in public_items[::5]:  # every 5th item, both modes, every applicable mistake
        if it.id in unreachable:
            continue
        for mode in MODES:
            for mistake in ("none", "malformed", *sim.applicable_mistakes(it, mode)):
                got = judged(it, reply_raw(it, mistake, mode, seed=len(it.id)), mode)
                allowed = expected_error_types(it.category, mistake)
                if got not in allowed:
                    wrong.append((it.id, mode, mistake, got))
    assert wrong == []
