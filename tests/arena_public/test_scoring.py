"""The judge's preference for the longer answer, item by item (by hand)."""

from __future__ import annotations

import numpy as np
import pytest

from evalbench.arena_public.scoring import prefer_longer_probability, prefer_longer_shares


def test_prefer_longer_probability_by_hand():
    # item 1: output 2 longer, p = 1.8 -> .8; item 2: output 1 longer, p = 1.3 -> .7;
    # item 3: same length (left out)
    p = prefer_longer_probability([1.8, 1.3, 2.0], [10, 50, 7], [20, 40, 7])
    assert p == pytest.approx((0.8 + 0.7) / 2)


def test_prefer_longer_shares_by_hand():
    shares = prefer_longer_shares([1.8, 1.3, 2.0, 1.1], [10, 50, 7, 3], [20, 40, 7, 9])
    # output 2 longer: p - 1; output 1 longer: 2 - p; equal lengths left out
    np.testing.assert_allclose(shares, [0.8, 0.7, 0.1])


def test_prefer_longer_shares_clean_preferences_like_the_win_rate():
    # output 2 longer everywhere: 0 is AlpacaEval's old draw (1.5 -> share 1.5 - 1 = 0.5),
    # 2.5 and NaN are unusable and left out (unclean, 0 and 2.5 gave shares -1 and 1.5)
    shares = prefer_longer_shares([0.0, 1.8, 2.5, np.nan], [10] * 4, [20] * 4)
    np.testing.assert_allclose(shares, [1.5 - 1, 1.8 - 1])
