"""models.usage.answer_cost: what one recorded answer cost, as the usage table counts it
(one helper for every study; HLE computed its own price without the batch discount)."""

from __future__ import annotations

import pytest

from evalbench.models import ModelSpec
from evalbench.models.usage import answer_cost
from evalbench.records import ResponseRecord

PRICES = {"price_input_per_mtok": 2.0, "price_output_per_mtok": 8.0}
ANSWER = ResponseRecord(
    system="b", key="q", request_key="r", prompt_tokens=1000, completion_tokens=500
)


def test_the_batch_discount_is_included():
    spec = ModelSpec(name="b", provider="openai", model="m", batch=True, **PRICES)
    # (1000 × 2 + 500 × 8) / 1e6 = 0.006 USD; batch mode: 0.006 × (1 − 0.5)
    assert answer_cost(spec, ANSWER) == pytest.approx(0.003)
    assert answer_cost(spec.model_copy(update={"batch": False}), ANSWER) == pytest.approx(0.006)
    deeper = spec.model_copy(update={"batch_discount": 0.75})
    assert answer_cost(deeper, ANSWER) == pytest.approx(0.006 * 0.25)


def test_no_cost_without_a_price_tokens_or_a_paid_call():
    spec = ModelSpec(name="b", provider="openai", model="m", **PRICES)
    assert answer_cost(spec, ANSWER.model_copy(update={"cached": True})) is None  # paid before
    assert answer_cost(spec, ANSWER.model_copy(update={"prompt_tokens": None})) is None
    assert answer_cost(ModelSpec(name="free", provider="sim"), ANSWER) is None  # no price set
    only_input = ModelSpec(name="i", provider="openai", model="m", price_input_per_mtok=2.0)
    assert answer_cost(only_input, ANSWER) == pytest.approx(1000 * 2 / 1e6)
