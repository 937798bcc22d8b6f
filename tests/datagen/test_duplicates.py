"""Near-duplicates of real problems (evalbench.datagen.duplicates), measured on the mirror."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from datagen.cases import (
    REF_ROW,
)

from evalbench.datagen import (
    data,
    duplicates,
    sim,
)


def test_tfidf_matches_scikit_learn() -> None:
    sklearn_text = pytest.importorskip("sklearn.feature_extraction.text")
    texts = ["find the number of pairs", "find all pairs of integers", "a circle of radius 3", ""]
    ours = duplicates.tfidf_vectors(texts, (3, 5))
    vec = sklearn_text.TfidfVectorizer(analyzer="char", ngram_range=(3, 5), lowercase=False)
    theirs = vec.fit_transform(texts)
    np.testing.assert_allclose((ours @ ours.T).toarray(), (theirs @ theirs.T).toarray(), atol=1e-12)


def test_normalisation_ignores_markup_figures_and_spacing() -> None:
    a = r"Let $s+\frac{1}{2}$ be  given.[asy]draw((0,0)--(1,1));[/asy]"
    b = r"let \( s + \dfrac{1}{2} \) be given."
    assert (
        duplicates.normalize_problem_text(a)
        == duplicates.normalize_problem_text(b)
        == "let s + frac 1 2 be given"
    )
    assert duplicates.normalize_problem_text("x = 12, y = 7", mask_numbers=True) == "x = 0 y = 0"


@pytest.mark.slow
def test_verbatim_and_lightly_edited_copies_are_flagged(mirror: Path) -> None:
    ref = data.unique_reference(data.load_reference())
    verbatim = ref.assign(id="copy-" + ref["id"])
    report = duplicates.near_duplicates(verbatim, ref)
    assert report.top["flagged"].all() and np.allclose(report.top["similarity"], 1.0)
    for seed in range(5):
        rng = np.random.default_rng(seed)
        edited = ref.assign(
            id="edit-" + ref["id"], problem=[sim.lightly_edit(p, rng) for p in ref["problem"]]
        )
        assert (edited["problem"] != ref["problem"]).all()
        top = duplicates.near_duplicates(edited, ref).top
        assert top["flagged"].all(), top.loc[~top["flagged"]]
        assert (top["reference_id"].to_numpy() == ref["id"].to_numpy()).all()
        assert top["similarity"].min() > 0.8  # measured minimum 0.84 over 30 seeds


def test_different_real_problems_are_not_near_duplicates(mirror: Path) -> None:
    ref = data.unique_reference(data.load_reference())
    report = duplicates.near_duplicates(ref, ref)  # each problem against all *other* problems
    assert report.pairs.empty
    assert (
        report.top["similarity"].max() < duplicates.DEFAULT_DUPLICATE_THRESHOLD - 0.1
    )  # measured 0.46


def test_two_transcriptions_of_the_same_problem_match(mirror: Path) -> None:
    ref = data.load_reference()
    qwen, arena = ref[ref.source == "qwen25math"], ref[ref.source == "matharena"]
    top = duplicates.near_duplicates(qwen, arena).top
    same = top["generated_id"].str.split(":").str[1] == top["reference_id"].str.split(":").str[1]
    assert same.all()  # the closest MathArena problem is always the same problem
    # all but 2024 I-5, which MathArena rewrote as a different statement without the figure
    assert set(top.loc[~top["flagged"], "generated_id"]) == {"qwen25math:2024-I-5"}


def test_near_duplicate_report_shape_and_threshold() -> None:
    gen = pd.DataFrame(
        {"id": ["g1", "g2"], "problem": [REF_ROW["problem"], "Compute the area of a unit circle."]}
    )
    ref = pd.DataFrame(
        {"id": ["r1", "r2"], "problem": [REF_ROW["problem"], "A triangle has sides 3, 4, 5."]}
    )
    report = duplicates.near_duplicates(gen, ref)
    assert report.pairs[["generated_id", "reference_id"]].values.tolist() == [["g1", "r1"]]
    assert report.flagged_ids() == {"g1"}
    assert report.top.set_index("generated_id").loc["g2", "flagged"] == False  # noqa: E712
    assert duplicates.near_duplicates(gen, ref, threshold=0.0).pairs.shape[0] == 4
    no_ref = duplicates.near_duplicates(gen, ref.iloc[:0])
    assert no_ref.pairs.empty and no_ref.top["similarity"].isna().all()
