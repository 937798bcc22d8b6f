"""Statistics of published judges against human labels: agreement, bias, test–retest (pure).

Every proportion carries a Wilson interval and every kappa or mean a seeded percentile
bootstrap (``rng``, ``rounds``, ``level``). The shared verdict tables
(:func:`~evalbench.judge.tables.verdict_agreement`, position and length summaries) are
:mod:`evalbench.judge.tables`'s; this module applies them to PRD, PandaLM and MT-Bench.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from evalbench import agreement as ag
from evalbench.judge.tables import (
    VERDICT_NAMES,
    VERDICTS,
    equal_share,
    interval_columns,
    longer_summary,
    position_summary,
    stack_confusions,
    verdict_agreement,
    verdict_confusion,
)
from evalbench.published.pandalm import (
    ANNOTATORS,
    PANDALM_JUDGES,
    PANDALM_PUBLISHED,
    PANDALM_PUBLISHED_KAPPA,
    PANDALM_PUBLISHED_LABELS,
)
from evalbench.published.prd import PAIR_KEYS

from .scoring import prd_merged

PUBLISHED_DIGITS = 4
"""PandaLM publishes its metrics to four decimals: ours reproduce them when they round alike."""


def share_over_all_items(judge: ag.Values, human: ag.Values) -> float:
    """Agreement over every item with a human label, a missing judge verdict counted as a miss.

    The companion of an agreement over answered items only (issue 12): a judge that leaves
    items unscored cannot look better for it.
    """
    pred = pd.Series(list(judge), dtype=object)
    gold = pd.Series(list(human), dtype=object)
    labelled = gold.notna()
    if not labelled.any():
        return float("nan")
    hits = (pred[labelled] == gold[labelled]) & pred[labelled].notna()
    return float(hits.sum() / labelled.sum())


# --------------------------------------------------------------------------- PRD Vicuna-80


def prd_confusions(merged: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """:func:`verdict_confusion` of every reviewer's resolved verdict against the humans."""
    return {
        str(reviewer): verdict_confusion(part["resolved"], part["human"])
        for reviewer, part in merged.groupby("reviewer", sort=False)
    }


def _reviewer_row(
    reviewer: str, part: pd.DataFrame, rng: np.random.Generator, rounds: int, level: float
) -> dict[str, Any]:
    both = np.concatenate([part["x_first"], part["y_first"]])
    human2 = np.concatenate([part["human"], part["human"]])
    return {
        "reviewer": reviewer,
        "n_items": len(part),
        "n_dropped": int(part["resolved"].isna().sum()),
        **verdict_agreement(part["resolved"], part["human"], rng=rng, rounds=rounds, level=level),
        **equal_share(both, human2, level, "single_order"),
        **position_summary(part["x_first"], part["y_first"], level),
        **longer_summary(part["resolved"], part["len_x"], part["len_y"], level),
        "with_ties_all": share_over_all_items(part["resolved"], part["human"]),
    }


def prd_reviewer_table(
    orders: pd.DataFrame,
    items: pd.DataFrame,
    *,
    rng: np.random.Generator,
    rounds: int,
    level: float,
) -> pd.DataFrame:
    """Each LLM reviewer (run ``a``) of ``orders`` (:func:`~.scoring.prd_orders` with
    lengths) against the human majority of ``items`` (:func:`~.scoring.prd_human_items`).

    Columns: :func:`verdict_agreement` of the resolved verdict (kappa bootstrapped with
    ``rng``), ``single_order`` (each order scored on its own), :func:`position_summary`,
    :func:`longer_summary`, ``n_dropped`` (no resolved verdict) and ``with_ties_all``
    (:func:`share_over_all_items`).
    """
    merged = prd_merged(orders, items)
    rows = [
        _reviewer_row(str(reviewer), part, rng, rounds, level)
        for reviewer, part in merged.groupby("reviewer", sort=False)
    ]
    return pd.DataFrame(rows)


def rater_agreement(votes: pd.DataFrame, labels: ag.Values = VERDICTS) -> dict[str, float]:
    """Agreement among interchangeable raters (items × raters, every item fully rated).

    ``with_ties``/``without_ties`` pool every pair of raters on every item
    (:func:`evalbench.agreement.pairwise_agreement`, MT-Bench's human–human agreement);
    Fleiss' (1971) kappa and Krippendorff's (2011) nominal alpha correct for chance.
    """
    cols = list(votes.columns)
    pairs = list(combinations(cols, 2))
    left = np.concatenate([votes[a].to_numpy(object) for a, _ in pairs])
    right = np.concatenate([votes[b].to_numpy(object) for _, b in pairs])
    pooled = ag.pairwise_agreement(left, right)
    return {
        "n_items": len(votes),
        "n_raters": len(cols),
        "with_ties": pooled.with_ties,
        "without_ties": pooled.without_ties,
        "fleiss_kappa": ag.fleiss_kappa(votes, labels),
        "krippendorff_alpha": ag.krippendorff_alpha(votes.T, "nominal"),
    }


def prd_human_agreement(human: pd.DataFrame) -> dict[str, float]:
    """:func:`rater_agreement` of PRD's MTurk workers on every triple-voted item (all 28 pairs)."""
    triple = human[human.groupby(PAIR_KEYS)["verdict"].transform("size") == 3]
    votes = triple.set_index([*PAIR_KEYS, "rater"])["verdict"].unstack("rater")
    return rater_agreement(votes)


def prd_rerun(
    orders: pd.DataFrame, *, rng: np.random.Generator, rounds: int, level: float
) -> dict[str, Any] | None:
    """A reviewer's two runs on the same pairs (PRD ships one: GPT-3.5 on gpt35-vs-gpt4).

    Returns:
        ``None`` when no reviewer has a second run, else ``reviewer, pair, n`` (verdicts of
        both orders), ``exact`` (Wilson) and ``kappa`` (bootstrap) between the two runs.
    """
    if "b" not in set(orders["run"]):
        return None
    keys = ["reviewer", *PAIR_KEYS]
    runs = orders.set_index([*keys, "run"])[["x_first", "y_first"]].unstack("run").dropna()
    first = np.concatenate([runs[("x_first", "a")], runs[("y_first", "a")]])
    second = np.concatenate([runs[("x_first", "b")], runs[("y_first", "b")]])
    index = runs.index.to_frame(index=False)
    kappa = ag.kappa_interval(first, second, VERDICTS, rng=rng, rounds=rounds, level=level)
    return {
        "reviewer": ", ".join(sorted(set(index["reviewer"]))),
        "pair": ", ".join(sorted(set(index["model_x"] + " vs " + index["model_y"]))),
        "n": int(first.size),
        **equal_share(first, second, level, "exact"),
        **interval_columns(kappa, "kappa"),
    }


# --------------------------------------------------------------------------- PandaLM


def _pandalm_row(
    frame: pd.DataFrame, judge: str, rng: np.random.Generator, rounds: int, level: float
) -> dict[str, Any]:
    pred, gold = frame[judge], frame["human"]
    report = ag.classification_report(pred, gold, VERDICTS)
    agree = verdict_agreement(pred, gold, rng=rng, rounds=rounds, level=level)
    return {
        "judge": judge,
        "n": report["n"],
        "garbage": int(frame[f"{judge}_garbage"].sum()),
        **equal_share(pred, gold, level, "accuracy"),
        "precision": report["precision"],
        "recall": report["recall"],
        "f1": report["f1"],
        **{k: agree[k] for k in ("kappa", "kappa_low", "kappa_high", "without_ties")},
        **{f"published_{k}": v for k, v in PANDALM_PUBLISHED[judge].items()},
        "accuracy_all": share_over_all_items(pred, gold),
    }


def pandalm_judge_table(
    frame: pd.DataFrame, *, rng: np.random.Generator, rounds: int, level: float
) -> pd.DataFrame:
    """Each judge against the human majority by PandaLM's protocol: accuracy, macro P/R/F1,
    kappa (bootstrap), agreement without ties, ``accuracy_all`` (unscored = miss) and the
    ``published_*`` numbers beside them."""
    rows = [_pandalm_row(frame, judge, rng, rounds, level) for judge in PANDALM_JUDGES]
    return pd.DataFrame(rows)


def pandalm_comparison(judges: pd.DataFrame) -> pd.DataFrame:
    """Our PandaLM metrics beside the published: ``judge, metric, ours, published, difference``."""
    rows = [
        {"judge": r["judge"], "metric": m, "ours": r[m], "published": r[f"published_{m}"]}
        for _, r in judges.iterrows()
        for m in PANDALM_PUBLISHED[str(r["judge"])]
    ]
    out = pd.DataFrame(rows)
    out["difference"] = out["ours"] - out["published"]
    return out


def reproduces_published(comparison: pd.DataFrame) -> bool:
    """Whether every metric of :func:`pandalm_comparison` equals the published to 4 decimals.

    Within half a unit of the fourth decimal (5e-5): what rounding to four decimals allows.
    """
    return bool((comparison["difference"].abs() < 0.5 * 10**-PUBLISHED_DIGITS).all())


def pandalm_annotator_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Cohen's kappa of every pair of annotators next to the README's IAA table."""
    rows = [
        {
            "pair": f"{a} vs {b}",
            "kappa": ag.cohen_kappa(frame[a], frame[b], VERDICTS),
            "published_kappa": PANDALM_PUBLISHED_KAPPA[(a, b)],
            "exact": float((frame[a] == frame[b]).mean()),
        }
        for a, b in combinations(ANNOTATORS, 2)
    ]
    return pd.DataFrame(rows)


def pandalm_label_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Human-majority label counts next to the README's label distribution."""
    counts = frame["human"].value_counts()
    return pd.DataFrame(
        {
            "label": [VERDICT_NAMES[v] for v in ("tie", "a", "b")],
            "majority_count": [int(counts.get(v, 0)) for v in ("tie", "a", "b")],
            "published_count": [PANDALM_PUBLISHED_LABELS[v] for v in ("tie", "a", "b")],
        }
    )


def pandalm_confusions(frame: pd.DataFrame) -> pd.DataFrame:
    """Row shares of each judge's verdict per human verdict, stacked judge by judge."""
    return stack_confusions(
        {j: verdict_confusion(frame[j], frame["human"]) for j in PANDALM_JUDGES}
    )


def pandalm_longer(frame: pd.DataFrame, level: float) -> pd.DataFrame:
    """P(the longer response wins) for each judge and the human majority (Wilson)."""
    rows = [
        {"judge": j, **longer_summary(frame[j], frame["len_1"], frame["len_2"], level)}
        for j in [*PANDALM_JUDGES, "human"]
    ]
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- MT-Bench


def mtbench_regrades(single: pd.DataFrame) -> pd.DataFrame:
    """Question/model/turn triples graded exactly twice, side by side (grade 1 = first in file).

    Returns:
        ``question_id, model, turn, score_1, score_2, chars_1, chars_2, artifact_1,
        artifact_2``.
    """
    keys = ["question_id", "model", "turn"]
    names = {"score": "score", "answer_chars": "chars", "artifact": "artifact"}
    twice = single[single.groupby(keys)["occurrence"].transform("size") == 2]
    wide = twice.set_index([*keys, "occurrence"])[list(names)].unstack("occurrence")
    wide.columns = [f"{names[c]}_{o + 1}" for c, o in wide.columns]
    return wide.reset_index()


def mtbench_retest(
    regrades: pd.DataFrame, *, rng: np.random.Generator, rounds: int, level: float
) -> dict[str, Any]:
    """Test–retest of the GPT-4 grades: :func:`evalbench.agreement.retest_agreement` and more.

    Adds the mean change ``score_2 − score_1`` (bootstrap), overall and split by whether the
    first graded answer carried the ``assistant`` template artifact, and Spearman's rho
    between the score change and the log ratio of the two answers' lengths (does a longer
    regenerated answer get a higher grade?).
    """
    seen = pd.concat([regrades["score_1"], regrades["score_2"]]).dropna()
    scale = sorted(set(range(1, 11)) | set(seen))  # GPT-4 sometimes grades 8.5
    retest = ag.retest_agreement(
        regrades["score_1"], regrades["score_2"], labels=scale, rng=rng, rounds=rounds, level=level
    )
    change = regrades["score_2"] - regrades["score_1"]
    log_ratio = np.log(regrades["chars_2"] / regrades["chars_1"])
    by_artifact = {
        bool(flag): ag.mean_signed_error(
            part["score_2"], part["score_1"], rng=rng, rounds=rounds, level=level
        )
        for flag, part in regrades.groupby(regrades["artifact_1"].astype(bool))
    }
    return {
        "retest": retest,
        "mean_change": ag.mean_signed_error(
            regrades["score_2"], regrades["score_1"], rng=rng, rounds=rounds, level=level
        ),
        "mean_change_by_artifact": by_artifact,
        "n_unscored": int(regrades[["score_1", "score_2"]].isna().any(axis=1).sum()),
        "change_vs_length": ag.spearman(change, log_ratio, rng=rng, rounds=rounds, level=level),
    }


def mtbench_pair_table(pairs: pd.DataFrame, level: float) -> pd.DataFrame:
    """Position consistency and P(longer wins) of the GPT-4 pair judge, overall and per category."""
    groups = [("all", pairs), *pairs.groupby("category", sort=True)]
    rows = [
        {
            "category": name,
            "n_judged": len(part),
            "n_unscored": int((part["outcome"] == "unscored").sum()),
            **position_summary(part["first"], part["second"], level),
            **longer_summary(part["resolved"], part["len_1"], part["len_2"], level),
        }
        for name, part in groups
    ]
    return pd.DataFrame(rows)


def position_lean(row: pd.Series) -> dict[str, float]:
    """Shares of all pairs that lean to the first / second position (inconsistent pairs split
    by :func:`~evalbench.judge.tables.position_summary`'s ``first_preference``)."""
    inconsistent = 1 - row["consistency"]
    return {
        "first": inconsistent * row["first_preference"],
        "second": inconsistent * (1 - row["first_preference"]),
    }
