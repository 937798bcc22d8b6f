"""Several annotators, by hand, on a small three-annotator table (4 items, scale 1-5).

    A  B  C
i1  3  3  4
i2  1  2  1
i3  5  5  5
i4  2  4  3
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from evalbench.labels import (
    annotator_agreement,
    human_reference,
    leave_one_out,
    pairwise_agreement_table,
    wide,
)

TABLE = {"A": [3, 1, 5, 2], "B": [3, 2, 5, 4], "C": [4, 1, 5, 3]}
ITEMS = ["i1", "i2", "i3", "i4"]


def _long() -> pd.DataFrame:
    rows = [{"item": i, "annotator": a, "score": s}
            for a, scores in TABLE.items() for i, s in zip(ITEMS, scores, strict=True)]  # fmt: skip
    return pd.DataFrame(rows)


def test_the_reference_by_each_policy():
    long = _long()
    mean = human_reference(long, ["score"], "mean")["score"]
    assert list(mean) == pytest.approx([10 / 3, 4 / 3, 5, 3])  # (3+3+4)/3, (1+2+1)/3, ...
    assert list(human_reference(long, ["score"], "median")["score"]) == [3, 1, 5, 3]
    majority = human_reference(long, ["score"], "majority")["score"]
    assert list(majority[:3]) == [3, 1, 5] and math.isnan(majority["i4"])  # 2, 4, 3: none
    assert list(human_reference(long, ["score"], "mean")["n_annotators"]) == [3, 3, 3, 3]


def test_majority_of_decisions_needs_more_than_half():
    long = pd.DataFrame({"item": ["p"] * 4 + ["q"] * 3, "annotator": list("abcd") + list("abc"),
                         "status": ["ok", "ok", "no", "no", "ok", "ok", "no"]})  # fmt: skip
    ref = human_reference(long, ["status"], "majority")["status"]
    assert math.isnan(ref["p"]) and ref["q"] == "ok"  # 2 of 4 is not more than half


def test_pairwise_exact_within_one_and_kappa_by_hand():
    pairs = pairwise_agreement_table(wide(_long(), "score"), scale=range(1, 6), tolerance=1)
    by = pairs.set_index(["annotator_1", "annotator_2"])
    # |A-B| = 0 1 0 2; |A-C| = 1 0 0 1; |B-C| = 1 1 0 1
    assert by.loc[("A", "B"), "exact"] == 2 / 4 and by.loc[("A", "B"), "within_k"] == 3 / 4
    assert by.loc[("A", "C"), "exact"] == 2 / 4 and by.loc[("A", "C"), "within_k"] == 1.0
    assert by.loc[("B", "C"), "exact"] == 1 / 4 and by.loc[("B", "C"), "within_k"] == 1.0
    # Cohen (A, B): p_o = 2/4; p_e = 3 shared labels (2, 3, 5) x 1/4 x 1/4 = 3/16
    assert by.loc[("A", "B"), "kappa"] == pytest.approx((1 / 2 - 3 / 16) / (1 - 3 / 16))  # 5/13
    assert list(by["n"]) == [4, 4, 4]


def test_krippendorff_alpha_by_hand_and_the_means_over_pairs():
    rng = np.random.default_rng(0)
    got = annotator_agreement(wide(_long(), "score"), numeric=True, scale=range(1, 6),
                              rng=rng, rounds=200, level=0.9)  # fmt: skip
    # Observed: sum over units of (sum over ordered pairs of (v_i - v_j)^2) / (m_u - 1):
    #   i1 (3,3,4): 2·(0+1+1)/2 = 2; i2 (1,2,1): 2; i3: 0; i4 (2,4,3): 2·(4+1+1)/2 = 6 -> 10.
    # Expected: sum over ordered pairs of all 12 values = 2·n·Σv² - 2·(Σv)²
    #   = 2·12·144 - 2·38² = 3456 - 2888 = 568.   alpha = 1 - (n - 1)·10 / 568 = 458/568.
    assert got["alpha"] == pytest.approx(458 / 568)
    assert got["alpha_level"] == "interval" and got["n_items"] == 4 and got["n_annotators"] == 3
    assert got["alpha_low"] <= got["alpha"] <= got["alpha_high"]
    assert got["within_k"] == pytest.approx((3 / 4 + 1 + 1) / 3)  # equal n: a plain mean
    assert got["exact"] == pytest.approx((1 / 2 + 1 / 2 + 1 / 4) / 3)


@pytest.mark.parametrize("numeric", [True, False])
def test_the_alphas_interval_is_the_bootstrap_of_alpha_over_resampled_items(numeric):
    # the interval resamples the units' label counts; it must be the percentile bootstrap of
    # krippendorff_alpha recomputed on the resampled items (the same rounds of the same rng),
    # a resample missing a label included (a unit with one label and items with NaN too)
    from evalbench import agreement as ag
    from evalbench.stats import bootstrap

    gen = np.random.default_rng(7)
    raw = gen.integers(1, 6, size=(30, 4)).astype(float)
    raw[gen.random(raw.shape) < 0.2] = np.nan
    table = pd.DataFrame(raw if numeric else np.where(np.isnan(raw), None, raw.astype(str)),
                         columns=list("ABCD"))  # fmt: skip
    got = annotator_agreement(table, numeric=numeric, scale=range(1, 6) if numeric else None,
                              rng=np.random.default_rng(3), rounds=60, level=0.9)  # fmt: skip
    pairable = table[table.notna().sum(axis=1) >= 2]
    level = "interval" if numeric else "nominal"
    order = None if numeric else sorted({v for v in pairable.to_numpy().ravel() if pd.notna(v)})
    matrix = pairable.to_numpy(dtype=float if numeric else object)
    want = bootstrap(lambda m: ag.krippendorff_alpha(m.T, level, order=order), matrix,
                     rng=np.random.default_rng(3), rounds=60, level=0.9)  # fmt: skip
    assert got["n_items"] == len(pairable) < 30
    assert (got["alpha"], got["alpha_low"], got["alpha_high"]) == pytest.approx(
        (want.estimate, want.low, want.high), rel=1e-12
    )


def test_nominal_alpha_for_decisions_and_items_with_one_label_do_not_count():
    table = pd.DataFrame({"A": ["ok", "no", "ok", "ok"], "B": ["ok", "no", "no", None]},
                         index=ITEMS)  # fmt: skip
    got = annotator_agreement(table, numeric=False, rng=np.random.default_rng(1), rounds=50,
                              level=0.95)  # fmt: skip
    # units i1..i3 pairable (i4 has one label). Coincidences: ok-ok 2, no-no 2, ok-no 1, no-ok 1;
    # n = 6, n_ok = 3, n_no = 3. D_o = 2/6; D_e = 2·3·3/(6·5) = 18/30. alpha = 1 - (2/6)/(18/30)
    assert got["n_items"] == 3 and got["alpha"] == pytest.approx(1 - (2 / 6) / (18 / 30))
    assert got["alpha_level"] == "nominal" and math.isnan(got["within_k"])
    assert got["exact"] == pytest.approx(2 / 3)


def test_each_annotator_and_a_judge_against_the_others_reference():
    judge = pd.Series([3, 1, 4, 4], index=ITEMS, dtype=float)
    got = leave_one_out(wide(_long(), "score"), "median", tolerance=1, judge=judge)
    a = got.set_index("annotator").loc["A"]
    # reference of B, C (median of two = mean): 3.5, 1.5, 5, 3.5; A = 3, 1, 5, 2
    assert (
        a["n"] == 4 and a["human_within_k"] == 3 / 4 and a["human_mae"] == (0.5 + 0.5 + 0 + 1.5) / 4
    )
    # judge 3, 1, 4, 4 against the same: 0.5, 0.5, 1, 0.5
    assert a["judge_within_k"] == 1.0 and a["judge_mae"] == pytest.approx(2.5 / 4)


def test_a_repeated_label_is_an_error():
    long = pd.concat([_long(), _long().head(1)])
    with pytest.raises(ValueError, match="two labels of item 'i1' by annotator 'A'"):
        wide(long, "score")
