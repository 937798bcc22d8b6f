"""A run's usage does not depend on the order its records were written (a sweep cell on Ray
and the same cell computed here wrote them in other orders: 0.6634474999999999 vs 0.6634475)."""

from __future__ import annotations

from evalbench.runs import usage_from_rows


def _rows(costs: list[float]) -> list[dict]:
    return [{"system": "a", "key": f"k{i}", "cached": False, "error": None, "prompt_tokens": 1,
             "completion_tokens": 1, "cost_usd": cost} for i, cost in enumerate(costs)]  # fmt: skip


def test_the_cost_is_the_same_sum_in_any_order():
    forward, backward = [0.1, 0.2, 0.3], [0.3, 0.2, 0.1]
    assert sum(forward) != sum(backward)  # 0.6000000000000001 vs 0.6: plain sums differ
    a = usage_from_rows(_rows(forward), {})
    b = usage_from_rows(_rows(backward), {})
    assert a["cost_usd"].tolist() == b["cost_usd"].tolist() == [0.6]  # exactly rounded
