"""Tests of evalbench.ratings_style by hand (the official outputs: test_style_oracle.py)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import brentq
from scipy.special import expit

from evalbench import ratings_style as rs
from evalbench.ratings import ArenaError
from evalbench.ratings_fast import multinomial_rounds

LN10 = math.log(10)


def counted(rows: list[tuple[str, str, str, int, int]]) -> pd.DataFrame:
    """Battles (model_a, model_b, winner, tokens_a, tokens_b), no markdown."""
    df = pd.DataFrame(rows, columns=["model_a", "model_b", "winner", "tokens_a", "tokens_b"])
    for f in ("headers", "lists", "bold"):
        df[f"{f}_a"] = df[f"{f}_b"] = 0
    return df


def test_markdown_counts_by_hand():
    text = "# h1\n## h2\n####### seven\n#none\n- a\n* b\n+ c\n1. d\n**x** __y__ ** z**"
    # headers: '# ', '## ' (seven hashes and '#none' are not); lists: -, *, +, 1.; bold: **x**,
    # __y__ ('** z**' is bold too: [^*\n]+ allows the space)
    assert rs.markdown_counts(text) == {"headers": 2, "lists": 4, "bold": 3}


def test_code_blocks_official_quirk_and_the_corrected_variant():
    text = "```\n- a\n```\n- a\n- b"
    # official: the block's content '\n- a\n' is removed everywhere, the item after the block
    # too, and '```' '```' '- b' joins into one line that starts with backticks: no item;
    # blocks: only the block goes, '- a' and '- b' stay
    assert rs.without_code(text) == "``````- b"
    assert rs.markdown_counts(text)["lists"] == 0
    assert rs.markdown_counts(text, code="blocks")["lists"] == 2


def test_token_count_cl100k():
    assert rs.token_count("Hello world") == 2  # cl100k_base: [9906, 1917]
    assert rs.token_count("<|endoftext|>") > 1  # special-token text is ordinary text


def test_features_normalised_difference_standardised():
    b = counted([("A", "B", "a", 3, 1), ("A", "B", "b", 1, 1)])
    feats = rs.style_features(b)
    # (3-1)/(3+1+1) = 0.4 and (1-1)/3 = 0: mean 0.2, population sd 0.2 -> +1, -1
    assert feats.names == ["tokens"] and feats.constant == ["headers", "lists", "bold"]
    np.testing.assert_allclose(feats.values[:, 0], [1.0, -1.0])
    np.testing.assert_allclose(feats.mean[0], 0.2) and np.testing.assert_allclose(feats.std[0], 0.2)


def test_weighted_features_count_a_battle_weight_times():
    b = counted([("A", "B", "a", 3, 1), ("A", "B", "b", 1, 1)]).assign(weight=[3.0, 1.0])
    # values 0.4 (x3) and 0: mean 0.3, sd sqrt((3*0.01 + 0.09)/4) = sqrt(0.03)
    feats = rs.style_features(b)
    np.testing.assert_allclose(feats.values[:, 0], [0.1, -0.3] / np.sqrt(0.03))


def test_ridge_fit_two_models_by_hand():
    # A beats B 3 times of 4, equal lengths in half the battles so the feature varies but
    # is balanced: by symmetry theta_A = -theta_B = t, and with the feature's coefficient 0
    # the loss is 3 log(1+e^{-2 ln10 t}) + log(1+e^{2 ln10 t}) + 0.25 (2 t^2)
    b = counted([("A", "B", "a", 2, 1), ("A", "B", "a", 1, 2), ("A", "B", "a", 1, 1),
                 ("A", "B", "b", 1, 1)])  # fmt: skip
    fit = rs.fit_style_bt(b)

    def slope(t: float) -> float:
        return -6 * LN10 * expit(-2 * LN10 * t) + 2 * LN10 * expit(2 * LN10 * t) + t

    t = brentq(slope, 0.0, 2.0)
    np.testing.assert_allclose(fit.theta, [t, -t], atol=1e-10)
    np.testing.assert_allclose(fit.coefs, [0.0], atol=1e-10)


def test_bootstrap_seeded_and_anchored():
    b = counted(
        [
            ("A", "B", "a", 5, 1),
            ("A", "B", "b", 1, 4),
            ("B", "C", "a", 3, 3),
            ("C", "A", "tie", 2, 6),
            ("A", "C", "a", 9, 2),
            ("B", "C", "b", 1, 5),
        ]
        * 5
    )
    one = rs.bootstrap_style_bt(b, rng=np.random.default_rng(0), rounds=20, anchor="B")
    two = rs.bootstrap_style_bt(b, rng=np.random.default_rng(0), rounds=20, anchor="B")
    np.testing.assert_array_equal(one.replicates, two.replicates)
    assert one.ratings[one.models.index("B")] == 1000.0
    assert (one.replicates[:, one.models.index("B")] == 1000.0).all()
    assert one.replicates.shape == (20, 3) and one.coef_replicates.shape == (20, 1)
    assert list(one.n_battles) == [20, 20, 20]


def test_tables_rank_change_and_coefficients():
    boot = rs.StyleBT(
        models=["A", "B", "C"], ratings=np.array([1000.0, 1050.0, 990.0]),
        replicates=np.array([[1000.0, 1040.0, 980.0], [1000.0, 1060.0, 1000.0]]),
        coefs=np.array([0.5]), coef_replicates=np.array([[0.4], [0.6]]),
        features=rs.StyleFeatures(["tokens"], np.zeros((1, 1)), ["headers", "lists", "bold"],
                                  np.zeros(4), np.zeros(4)),
        n_battles=np.array([2, 2, 2]),
    )  # fmt: skip
    raw = pd.Series({"A": 1100.0, "B": 1000.0, "C": 950.0})
    table = rs.style_ratings_table(boot, raw, level=0.5)
    # raw ranks A1 B2 C3; controlled B 1050 > A 1000 > C 990: B climbs 1, A drops 1
    assert table[["model", "rank", "style_rank", "rank_change"]].values.tolist() == [
        ["A", 1, 2, -1],
        ["B", 2, 1, 1],
        ["C", 3, 3, 0],
    ]
    coefs = rs.style_coefficients(boot, level=0.5)
    assert coefs["feature"].tolist() == list(rs.STYLE_FEATURES)
    assert coefs["estimable"].tolist() == [True, False, False, False]
    assert coefs["coefficient"].iloc[0] == 0.5 and coefs["coefficient"].iloc[1:].isna().all()


def test_battles_with_style_joins_both_answers():
    battles = pd.DataFrame({"model_a": ["A"], "model_b": ["B"], "winner": ["a"],
                            "question_id": ["q1"]})  # fmt: skip
    counts = pd.DataFrame({"model": ["A", "B"], "question_id": ["q1", "q1"], "tokens": [7, 3],
                           "headers": [1, 0], "lists": [0, 2], "bold": [0, 0]})  # fmt: skip
    out = rs.battles_with_style(battles, counts)
    assert out[["tokens_a", "tokens_b", "lists_b"]].iloc[0].tolist() == [7.0, 3.0, 2.0]
    with pytest.raises(ArenaError, match=r"no answer for battle \('B', 'q2'\)"):
        rs.battles_with_style(battles.assign(question_id="q2"), counts.assign(
            question_id=["q2", "q9"]))  # fmt: skip


@pytest.mark.parametrize(("change", "message"), [
    ({"tokens_a": -1}, "not a number >= 0"),
    ({"tokens_a": float("nan")}, "not a number >= 0"),
    ({"tokens_a": float("inf")}, "not a number >= 0"),
])  # fmt: skip
def test_bad_counts_are_named(change, message):
    b = counted([("A", "B", "a", 3, 1), ("A", "B", "b", 1, 1)]).astype({"tokens_a": float})
    for col, value in change.items():
        b.loc[1, col] = value
    with pytest.raises(ArenaError, match=f"battle row 1 .*{message}"):
        rs.fit_style_bt(b)


def test_missing_counts_reg_and_anchor_errors():
    b = counted([("A", "B", "a", 3, 1), ("A", "B", "b", 1, 1)])
    with pytest.raises(ArenaError, match="lack the answers' style counts"):
        rs.fit_style_bt(b.drop(columns="bold_b"))
    with pytest.raises(ArenaError, match="reg must be > 0"):
        rs.fit_style_bt(b, reg=0.0)
    with pytest.raises(ArenaError, match="anchor model 'Z'"):
        rs.bootstrap_style_bt(b, rng=np.random.default_rng(0), rounds=2, anchor="Z")
    with pytest.raises(ArenaError, match="rounds must be >= 1"):
        rs.bootstrap_style_bt(b, rng=np.random.default_rng(0), rounds=0)


@pytest.mark.parametrize(
    ("dense_cells", "outer_cells"),
    [(rs._DENSE_CELLS, rs._OUTER_CELLS), (rs._DENSE_CELLS, 0), (0, 0)],
)  # batched (Hessians as one product, or by einsum), and one round at a time
@pytest.mark.slow
def test_bootstrap_rounds_equal_single_fits_on_the_same_draws(
    monkeypatch, dense_cells, outer_cells
):
    monkeypatch.setattr(rs, "_DENSE_CELLS", dense_cells)
    monkeypatch.setattr(rs, "_OUTER_CELLS", outer_cells)
    rng = np.random.default_rng(1)
    rows = [("A", "B", "a", 5, 1), ("A", "B", "b", 1, 4), ("B", "C", "a", 3, 3),
            ("C", "A", "tie", 2, 6), ("A", "C", "a", 9, 2), ("B", "C", "b", 1, 5)]  # fmt: skip
    b = counted([(*r[:3], int(r[3] + rng.integers(5)), r[4]) for r in rows * 6])
    boot = rs.bootstrap_style_bt(b, rng=np.random.default_rng(5), rounds=12)
    draws = multinomial_rounds(np.ones(len(b), dtype=np.int64), 12, np.random.default_rng(5))
    for k in range(12):
        fit = rs.fit_style_bt(b, counts=draws[k].astype(float))
        elo = 400 * fit.theta
        np.testing.assert_allclose(elo - elo.mean() + 1000, boot.replicates[k], atol=1e-9)
        np.testing.assert_allclose(fit.coefs, boot.coef_replicates[k], atol=1e-12)


def _six_battles() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    rows = [("A", "B", "a", 5, 1), ("A", "B", "b", 1, 4), ("B", "C", "a", 3, 3),
            ("C", "A", "tie", 2, 6), ("A", "C", "a", 9, 2), ("B", "C", "b", 1, 5)]  # fmt: skip
    return counted([(*r[:3], int(r[3] + rng.integers(5)), r[4]) for r in rows * 6])


def test_clusters_resample_halves_of_a_verdict_together():
    b = _six_battles().assign(weight=1.0)
    # each battle split in two identical halves of weight 0.5: the same loss and the same
    # weighted features; drawn by battle (cluster), a round counts both halves as often as
    # the whole battle was drawn on the same draws, so the replicates are the same
    halves = pd.concat([b, b]).sort_index(kind="stable").assign(weight=0.5)
    whole = rs.bootstrap_style_bt(b, rng=np.random.default_rng(4), rounds=15)
    paired = rs.bootstrap_style_bt(halves, rng=np.random.default_rng(4), rounds=15,
                                   clusters=halves.index.to_numpy())  # fmt: skip
    np.testing.assert_allclose(paired.ratings, whole.ratings, atol=1e-9)
    np.testing.assert_allclose(paired.replicates, whole.replicates, atol=1e-9)
    np.testing.assert_allclose(paired.coef_replicates, whole.coef_replicates, atol=1e-12)
    # each half alone as a unit: other draws, other replicates
    alone = rs.bootstrap_style_bt(halves, rng=np.random.default_rng(4), rounds=15)
    assert np.abs(alone.replicates - whole.replicates).max() > 1.0


def test_one_battle_per_cluster_is_the_plain_bootstrap():
    b = _six_battles()
    plain = rs.bootstrap_style_bt(b, rng=np.random.default_rng(2), rounds=10)
    labelled = rs.bootstrap_style_bt(b, rng=np.random.default_rng(2), rounds=10,
                                     clusters=[f"q{i}" for i in range(len(b))])  # fmt: skip
    np.testing.assert_array_equal(labelled.replicates, plain.replicates)


@pytest.mark.parametrize(
    ("clusters", "message"),
    [([0, 1], "2 cluster labels for 36 battles"), ([None] * 36, "has no cluster label")],
)
def test_bad_clusters_are_named(clusters, message):
    with pytest.raises(ArenaError, match=message):
        rs.bootstrap_style_bt(_six_battles(), rng=np.random.default_rng(0), rounds=2,
                              clusters=clusters)  # fmt: skip


def test_answer_style_counts_one_row_per_answer():
    answers = pd.DataFrame({"model": ["x", "y"], "question_id": [1, 1],
                            "text": ["# Title\n- a\n- b\n**bold**", "Hello world"]})  # fmt: skip
    counts = rs.answer_style_counts(answers)
    # '# Title' one header, two '- ' items, one bold span; 'Hello world' is 2 cl100k tokens
    assert counts.to_dict("records")[1] == {"model": "y", "question_id": 1, "tokens": 2,
                                            "headers": 0, "lists": 0, "bold": 0}  # fmt: skip
    assert counts.iloc[0][["headers", "lists", "bold"]].tolist() == [1, 2, 1]


@pytest.mark.parametrize("text", [None, float("nan"), 3])
def test_an_answer_that_is_not_text_is_refused_not_counted(text):
    answers = pd.DataFrame({"model": ["x", "y"], "question_id": ["q1", "q2"], "text": ["ok", text]})
    # str(None) would be counted as the 1-token answer "None"
    with pytest.raises(ArenaError, match=r"style counts: the answer of 'y' to 'q2' is not text"):
        rs.answer_style_counts(answers)
