"""Fixtures of the public arena tests."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from evalbench.published import alpaca_eval


@pytest.fixture
def alpaca_leaderboard(mirror: Path) -> pd.DataFrame:
    """The pinned AlpacaEval 2 leaderboard (from the mirror)."""
    return alpaca_eval.load_alpaca_eval_leaderboard()
