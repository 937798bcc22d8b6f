"""A run's usage: the same in any order its records were written (a sweep cell on Ray and
the same cell computed here wrote them in other orders: 0.6634474999999999 vs 0.6634475),
and what a pandas groupby of its records gives."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from evalbench.measured import TRUNCATED
from evalbench.models import ModelSpec
from evalbench.models.usage import token_cost
from evalbench.runs import USAGE_COLUMNS, error_reasons, usage_from_rows


def _rows(costs: list[float]) -> list[dict]:
    return [{"system": "a", "key": f"k{i}", "cached": False, "error": None, "prompt_tokens": 1,
             "completion_tokens": 1, "cost_usd": cost} for i, cost in enumerate(costs)]  # fmt: skip


def test_the_cost_is_the_same_sum_in_any_order():
    forward, backward = [0.1, 0.2, 0.3], [0.3, 0.2, 0.1]
    assert sum(forward) != sum(backward)  # 0.6000000000000001 vs 0.6: plain sums differ
    a = usage_from_rows(_rows(forward), {})
    b = usage_from_rows(_rows(backward), {})
    assert a["cost_usd"].tolist() == b["cost_usd"].tolist() == [0.6]  # exactly rounded


def _pandas_usage(rows: list[dict], specs: dict) -> pd.DataFrame:
    """The oracle: the per-system usage as a pandas groupby computes it (evalbench's own
    formulation before it became plain Python)."""
    frame = pd.DataFrame(rows).fillna({"prompt_tokens": 0, "completion_tokens": 0})
    frame["truncated"] = (frame["finish_reason"] == TRUNCATED).astype(int) + frame[
        "truncated_steps"
    ].fillna(0).astype(int)
    model_steps = (frame["steps"].fillna(0) - frame["tool_calls"].fillna(0)).clip(lower=0)
    frame["outputs"] = model_steps.where(frame["truncated_steps"].notna(), 1).astype(int)
    frame["at_n_ctx"] = 0  # no local system among them
    paid = ~frame["cached"].astype(bool)
    computed = [token_cost(specs.get(s), p, c) if is_paid else 0.0
                for s, p, c, is_paid in zip(frame["system"], frame["prompt_tokens"],
                                            frame["completion_tokens"], paid, strict=True)]  # fmt: skip
    frame["cost_usd"] = frame["cost_usd"].astype(float).fillna(pd.Series(computed))
    out = frame.groupby("system", sort=True).agg(
        calls=("key", "size"), errors=("error", lambda e: int(e.notna().sum())),
        error_reasons=("error", error_reasons), outputs=("outputs", "sum"),
        truncated=("truncated", "sum"), truncated_at_n_ctx=("at_n_ctx", "sum"),
        cached=("cached", "sum"), prompt_tokens=("prompt_tokens", "sum"),
        completion_tokens=("completion_tokens", "sum"), cost_usd=("cost_usd", math.fsum),
    )  # fmt: skip
    counts = ["outputs", "truncated", "truncated_at_n_ctx", "cached", "prompt_tokens",
              "completion_tokens"]  # fmt: skip
    out[counts] = out[counts].astype("int64")
    return out.reset_index()[USAGE_COLUMNS]


@pytest.mark.parametrize("seed", range(3))
def test_usage_is_the_pandas_groupby_of_the_records(seed):
    # calls, errors by reason, truncated outputs and agent steps, cache hits, tokens (missing
    # ones as 0) and costs (reported, else at the system's prices when paid) per system
    rng = np.random.default_rng(seed)
    specs = {"a": ModelSpec(name="a", provider="sim", price_input_per_mtok=3.0,
                           price_output_per_mtok=15.0)}  # fmt: skip
    rows = [{"system": str(rng.choice(["a", "b", "c"])), "key": f"k{i}",
             "cached": bool(rng.random() < 0.3),
             "error": rng.choice([None, "timeout: slow", "http_500: x"], p=[0.8, 0.1, 0.1]),
             "finish_reason": rng.choice(["stop", "length", None]),
             "truncated_steps": rng.choice([None, 0, 2]),  # an agent task's when set
             "steps": rng.choice([None, 3, 8]), "tool_calls": rng.choice([None, 1, 4]),
             "prompt_tokens": rng.choice([None, 10, 200]),
             "completion_tokens": rng.choice([None, 5, 50]),
             "cost_usd": rng.choice([None, 0.01, 0.25])} for i in range(200)]  # fmt: skip
    got = usage_from_rows(rows, specs)
    want = _pandas_usage(rows, specs)
    assert got.to_dict("records") == want.to_dict("records")
    assert got["errors"].sum() > 0 and got["cached"].sum() > 0 and got["truncated"].sum() > 0
