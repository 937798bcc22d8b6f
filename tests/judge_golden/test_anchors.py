"""Few-shot anchors in the golden-set study: the paired comparison by hand, params, a run with
anchors (the sim judges' known change recovered), and the report and figure of it."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from matplotlib.figure import Figure

from evalbench.judge_golden import figures, metrics, report, study
from evalbench.judge_golden.records import JudgeGoldenResult
from evalbench.params import ParamsError, params_hash
from evalbench.records import read_jsonl
from evalbench.studies import load_params

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "params" / "judge_golden_demo.yaml"
ANCHOR = {
    "question": "Who wrote Pride and Prejudice?",
    "answer": "Charlotte Brontë wrote it in 1850.",
    "scores": {"accuracy": 2, "completeness": 4, "clarity": 8},
    "explanation": "Both facts are fabricated (Jane Austen, 1813).",
}


def _params_file(tmp_path: Path, name: str = "golden", **changes: object) -> Path:
    data = yaml.safe_load(DEMO.read_text())
    data.pop("anchors", None)
    data.update(changes)
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _long(diffs: list[float]) -> pd.DataFrame:
    return pd.DataFrame({"judge": "j", "item": [f"i{n}" for n in range(len(diffs))],
                         "replicate": 0, "dimension": "accuracy", "diff": diffs})  # fmt: skip


def test_anchor_comparison_by_hand() -> None:
    from evalbench.judge import get_rubric

    plain, anchored = _long([2, 1, 0, math.nan]), _long([1, 0, 0, 1])
    row = metrics.anchor_comparison(
        plain, anchored, get_rubric("fine_grained"), tolerance=1,
        rng=np.random.default_rng(0), rounds=200, level=0.95,
    ).iloc[0]  # fmt: skip
    assert (row["n_paired"], row["n_unpaired"]) == (3, 1)  # item i3 unscored without anchors
    # within ±1: plain |2|,|1|,|0| -> 0,1,1 = 2/3; anchored 1,1,1 = 3/3
    assert row["within_k_plain"] == pytest.approx(2 / 3) and row["within_k_anchored"] == 1
    assert row["within_k_diff"] == pytest.approx(1 / 3)
    # bias: plain (2 + 1 + 0) / 3 = 1; anchored (1 + 0 + 0) / 3 = 1/3; difference -2/3
    assert row["bias_plain"] == 1 and row["bias_diff"] == pytest.approx(-2 / 3)
    # exact: plain 0,0,1 = 1/3; anchored 0,1,1 = 2/3
    assert row["exact_diff"] == pytest.approx(1 / 3)
    for m in ("within_k", "bias", "exact"):
        assert row[f"{m}_diff_low"] <= row[f"{m}_diff"] <= row[f"{m}_diff_high"]


def test_anchors_are_checked_and_absent_anchors_keep_the_run_id(tmp_path: Path) -> None:
    plain = load_params(_params_file(tmp_path))
    assert "anchors" not in plain.model_dump() and plain.anchors == []
    assert params_hash(plain) == params_hash(load_params(_params_file(tmp_path, anchors=[])))
    bad = {**ANCHOR, "scores": {"accuracy": 2, "completeness": 4}}
    with pytest.raises(ParamsError, match=r"anchors\[0\]: missing dimension 'clarity'"):
        load_params(_params_file(tmp_path, anchors=[bad]))
    with pytest.raises(ParamsError, match=r"anchors\.0\.scores"):
        load_params(_params_file(tmp_path, anchors=[{**ANCHOR, "scores": "high"}]))


@pytest.fixture(scope="module")
def anchored(tmp_path_factory: pytest.TempPathFactory) -> JudgeGoldenResult:
    """12 items; judge ``a`` noiseless with leniency +2, ``b`` strict and noisy."""
    from evalbench.studies import open_run

    judges = [
        {"name": "a", "provider": "sim", "sim": {"noise": 0, "leniency": 2}},
        {"name": "b", "provider": "sim", "sim": {"noise": 1, "leniency": -1}},
    ]
    path = _params_file(
        tmp_path_factory.mktemp("anchors"), limit=12, bootstrap_rounds=50, judges=judges,
        anchors=[ANCHOR], pairwise_judge=None, annotations=None,
    )  # fmt: skip
    return study.run(open_run(path))


@pytest.mark.slow
def test_a_run_with_anchors_recovers_the_sim_judges_known_change(
    anchored: JudgeGoldenResult,
) -> None:
    assert anchored.anchors is not None
    table = anchored.anchors.comparison.set_index(["judge", "dimension"])
    assert len(table) == 2 * 3 and (table["n_paired"] == 12).all()
    a = table.loc[("a", "accuracy")]
    # noiseless: plain rint(h + 2), anchored rint(h + 1), clipped to 1..10; the expectation is
    # exact and the sample is every item, so estimate == expected (less than -1 where h = 10
    # or 9 clip)
    assert a["bias_diff"] == pytest.approx(a["expected_bias_diff"])
    assert -1 <= a["bias_diff"] < -0.5

    # b: the same noise draw per item in both arms (the sim judge's error on an item is its
    # own), leniency -1 -> -0.5: each score rises by 0 or 1 (when rounding crosses)
    def scores(frame: pd.DataFrame) -> pd.Series:
        return frame[(frame["judge"] == "b") & (frame["replicate"] == 0)].set_index("item")[
            "score_accuracy"
        ]

    change = scores(anchored.anchors.judgments) - scores(anchored.judgments)
    assert set(change.dropna()) <= {0.0, 1.0} and change.sum() > 0
    b = table.loc[("b", "accuracy")]
    assert b["bias_diff"] == pytest.approx(change.mean())
    assert b["expected_bias_diff"] == pytest.approx(0.5, abs=0.1)  # 0.5 less where 1 or 10 clip


def test_a_run_with_anchors_writes_and_resumes_its_records(tmp_path: Path) -> None:
    from evalbench.studies import open_run

    path = _params_file(tmp_path, limit=4, bootstrap_rounds=20, anchors=[ANCHOR],
                        pairwise_judge=None, annotations=None, retest=False)  # fmt: skip
    run = open_run(path)
    golden = study.load_study_golden(run.params)
    judgments = study.run_anchored(run, golden)
    assert judgments is not None and len(judgments) == 3 * 4  # three judges x four items
    rows = read_jsonl(run.dir / "records" / "golden_anchored.jsonl")
    assert len(rows) == 12 and {"human_accuracy", "score_accuracy"} <= set(rows[0])
    asked = read_jsonl(run.dir / "records" / "anchored.jsonl")
    assert all("+anchors" in r["key"] for r in asked) and len(asked) == 12
    again = open_run(path)
    study.run_anchored(again, golden)
    assert again.ledger.frame().empty  # nothing asked twice
    plain = open_run(_params_file(tmp_path, "plain", limit=4, retest=False,
                                  pairwise_judge=None, annotations=None))  # fmt: skip
    assert study.run_anchored(plain, golden) is None


@pytest.mark.slow
def test_report_and_figure_of_anchors(anchored: JudgeGoldenResult) -> None:
    sentence = report.anchors_sentence(anchored)
    assert "1 anchor in its prompt" in sentence and "a (simulated)" in sentence
    assert "expected bias change" in sentence
    [(table, caption)] = report.anchors_tables(anchored)
    assert len(table) == 2 * 3 * 3 and "paired bootstrap" in caption
    assert set(table["measure"]) == {"within ±1", "bias", "exact"}
    assert isinstance(figures.drawn(figures.anchors, anchored), Figure)
    plain = anchored._replace(anchors=None)
    assert figures.drawn(figures.anchors, plain) is None
    assert "No few-shot anchors" in report.anchors_sentence(plain)
    assert report.anchors_tables(plain) == []
    with pytest.raises(ValueError, match="no few-shot anchors"):
        figures.anchors(plain)
