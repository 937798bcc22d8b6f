"""Several annotators on a golden set: loading, the reference by policy (by hand), the study
section, the label-app export read back, tiers, and the single-annotator numbers unchanged."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from evalbench import judge_golden as G
from evalbench.judge import get_rubric
from evalbench.judge_golden import data as D
from evalbench.judge_golden import humans as H
from evalbench.judge_golden import report, sim, study
from evalbench.labels import LabelStore, export_labels, load_tasks
from evalbench.labels.views import parse_label
from evalbench.studies import open_run

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "params" / "judge_golden_demo.yaml"
RUBRIC = get_rubric("fine_grained")


def _params_file(tmp_path: Path, **changes: object) -> Path:
    data = yaml.safe_load(DEMO.read_text())
    data.update({"bootstrap_rounds": 50, "anchors": None, **changes})  # anchors: not here
    data = {k: v for k, v in data.items() if v is not None}
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "golden.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _rows(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _scored(item: str, who: str, a: int, c: int, d: int, **extra) -> dict:
    return {"item": item, "annotator": who, "human_accuracy": a, "human_completeness": c,
            "human_clarity": d, **extra}  # fmt: skip


TEXT = {"question": "Q?", "answer": "A.", "reference": "R."}


def test_the_reference_of_two_items_by_hand_for_each_policy(tmp_path):
    rows = [_scored("i1", "a", 7, 5, 9, **TEXT), _scored("i1", "b", 8, 5, 8, **TEXT),
            _scored("i1", "c", 8, 6, 4, **TEXT), _scored("i2", "a", 3, 2, 2, **TEXT),
            _scored("i2", "b", 5, 2, 2, **TEXT)]  # fmt: skip
    path = _rows(tmp_path / "g.jsonl", rows)
    mean = D.load_golden(path, RUBRIC, "mean").set_index("item")
    assert mean.loc["i1", "human_accuracy"] == pytest.approx((7 + 8 + 8) / 3)
    assert mean.loc["i2", "human_accuracy"] == 4  # (3 + 5) / 2
    median = D.load_golden(path, RUBRIC, "median").set_index("item")
    assert list(median["human_clarity"]) == [8, 2] and list(median["n_annotators"]) == [3, 2]
    assert median.loc["i1", "human_weighted"] == pytest.approx(0.5 * 8 + 0.3 * 5 + 0.2 * 8)
    majority = D.load_golden(path, RUBRIC, "majority")
    # i1: accuracy 8 (2 of 3), completeness 5 (2 of 3), clarity 9/8/4 has no majority: left out
    # i2: accuracy 3/5 has no majority either (1 of 2 is not more than half)
    assert majority.empty and majority.attrs["no_reference"] == ["i1", "i2"]


@pytest.mark.parametrize(
    ("rows", "message"),
    [([_scored("i1", "a", 7, 5, 9, **TEXT), _scored("i1", "a", 6, 5, 9, **TEXT)],
      r"g.jsonl:2: column 'annotator': item 'i1' by 'a' repeats line 1"),
     ([_scored("i1", "a", 7, 5, 9, **TEXT), _scored("i1", "b", 6, 5, 9, **{**TEXT, "answer": "B"})],
      r"g.jsonl:2: item 'i1': question, answer or reference differs from line 1"),
     ([_scored("i1", "a", 11, 5, 9, **TEXT)], r"g.jsonl:1: column 'human_accuracy': 11 is outside"),
     ([_scored("i1", "a", 7.5, 5, 9, **TEXT)], r"not a whole number"),
     ([{**_scored("i1", "", 7, 5, 9, **TEXT)}], r"g.jsonl:1: column 'annotator': empty")],
)  # fmt: skip
def test_bad_annotations_name_file_line_and_column(tmp_path, rows, message):
    with pytest.raises(D.GoldenSetError, match=message):
        D.load_golden(_rows(tmp_path / "g.jsonl", rows), RUBRIC)


def test_the_shipped_demo_annotations_are_the_simulators_output():
    golden = D.load_golden("demo")
    again = sim.sim_annotations(golden, RUBRIC, rng=np.random.default_rng(sim.SIM_ANNOTATOR_SEED))
    shipped = D.load_annotations("demo", RUBRIC)
    pd.testing.assert_frame_equal(
        shipped.drop(columns=["line", "reference"]), again, check_dtype=False
    )
    assert shipped["simulated"].all() and len(shipped) == 3 * 60


def test_annotations_must_name_golden_items_and_not_double_up(tmp_path):
    stray = _rows(tmp_path / "a.jsonl", [_scored("nope", "a", 5, 5, 5)])
    params = open_run(_params_file(tmp_path, annotations=str(stray), limit=4)).params
    with pytest.raises(D.GoldenSetError, match=r"a.jsonl:1: column 'item': 'nope' is not in"):
        study.load_study_annotations(params, study.load_study_golden(params))


@pytest.mark.slow
def test_the_demo_headline_numbers_do_not_move_with_the_annotators(tmp_path):
    with_humans = G.run(open_run(_params_file(tmp_path / "a", limit=16)))
    without = G.run(open_run(_params_file(tmp_path / "b", limit=16, annotations=None)))
    assert without.humans is None and with_humans.humans is not None
    pd.testing.assert_frame_equal(with_humans.agreement, without.agreement)
    assert report.headlines(with_humans) == report.headlines(without)
    assert with_humans.panel.summary == without.panel.summary
    assert "One human score per item" in report.humans_intro(without)
    assert report.humans_tables(without) == []


@pytest.mark.slow
def test_the_annotator_section_of_the_demo(tmp_path):
    result = G.run(open_run(_params_file(tmp_path, limit=16)))
    h = result.humans
    assert h.counts["annotators"] == ["sim-annotator-1", "sim-annotator-2", "sim-annotator-3"]
    assert h.counts["items"] == 16 and h.counts["simulated"]
    alpha = h.agreement.set_index("dimension")
    assert list(alpha.index) == ["accuracy", "completeness", "clarity"]
    assert (alpha["alpha_low"] <= alpha["alpha"]).all() and (
        alpha["alpha"] <= alpha["alpha_high"]
    ).all()
    # the reference is the median of the three annotators, item by item
    ann = h.annotations.pivot(index="item", columns="annotator", values="human_accuracy")
    ref = h.reference.set_index("item")["human_accuracy"]
    assert (ref == ann.median(axis=1).loc[ref.index]).all()
    # the primary judge against that reference, by hand from its judgments
    first = result.judgments[(result.judgments["judge"] == "judge-sim")
                             & (result.judgments["replicate"] == 0)].set_index("item")  # fmt: skip
    scored = first["score_accuracy"].dropna()
    hits = (abs(scored - ref.loc[scored.index]) <= 1).mean()
    row = h.versus.set_index(["judge", "dimension"]).loc[("judge-sim", "accuracy")]
    assert row["within_k"] == pytest.approx(hits) and row["n_scored"] == len(scored)
    assert list(h.among["annotator"]) == [*h.counts["annotators"], "mean"]
    intro = report.humans_intro(result)
    assert "SIMULATED ANNOTATORS" in intro and "median of the annotators" in intro
    assert "Krippendorff's alpha" in report.humans_agreement_sentence(result)
    assert "Leaving one annotator out" in report.humans_judge_sentence(result)


def _label_app_golden(tmp_path: Path) -> Path:
    """Three annotators label 6 golden items through the label task and export them."""
    golden = D.load_golden("demo").head(6)
    items = golden[["item", "question", "answer", "reference"]].to_dict("records")
    _rows(tmp_path / "items.jsonl", items)
    (tmp_path / "t.yaml").write_text("kind: rubric\ntitle: T\nitems: items.jsonl\n")
    tasks = load_tasks(tmp_path / "t.yaml")
    store = LabelStore(tasks.labels_dir)
    for k, who in enumerate(("ann", "bob", "cy")):
        for pos, item in enumerate(tasks.items):
            truth = golden.set_index("item").loc[item.id]
            scores = {d: int(min(10, truth[f"human_{d}"] + (k == 1))) for d in
                      ("accuracy", "completeness", "clarity")}  # fmt: skip
            store.append(parse_label(tasks, item, who, pos, {"scores": scores}))
    return export_labels(tasks, tmp_path / "golden_labels.jsonl").path


@pytest.mark.slow
def test_a_golden_set_exported_from_the_label_app_is_read_with_its_annotators(tmp_path):
    path = _label_app_golden(tmp_path)
    result = G.run(open_run(_params_file(tmp_path, golden=str(path), annotations=None)))
    h = result.humans
    assert len(result.golden) == 6 and h.counts["annotators"] == ["ann", "bob", "cy"]
    assert list(result.golden["n_annotators"]) == [3] * 6
    # two annotators gave the golden score, one gave +1 (capped at 10): the median is golden
    demo = D.load_golden("demo").head(6)
    assert list(result.golden["human_accuracy"]) == list(demo["human_accuracy"])
    # the golden set is the reference, so the section's judge rows equal the main ones (the
    # point estimates and the Wilson bounds; the bootstraps draw from other seeded streams)
    same = [c for c in h.versus.columns if not c.endswith(("_low", "_high"))]
    same += ["within_k_low", "within_k_high"]
    pd.testing.assert_frame_equal(h.versus[same], result.agreement[same])
    with pytest.raises(D.GoldenSetError, match="has an annotator column"):
        study.load_study_annotations(
            open_run(_params_file(tmp_path / "x", golden=str(path))).params, result.golden
        )


@pytest.mark.slow
def test_tiers_keep_whole_questions_and_nest(tmp_path):
    golden = {t: study.load_study_golden(open_run(_params_file(tmp_path / t, tier=t)).params)
              for t in ("quick", "standard", "full")}  # fmt: skip
    sizes = {t: len(g) for t, g in golden.items()}
    assert sizes == {"quick": 2 * 3, "standard": 2 * 9, "full": 60}  # ceil(0.1·30), ceil(0.3·30)
    assert set(golden["quick"]["item"]) <= set(golden["standard"]["item"])
    assert all(golden["quick"].groupby("question").size() == 2)  # both answers of a question
    result_text = report.tier_sentence(
        G.run(open_run(_params_file(tmp_path / "q", tier="quick", annotations=None)))
    )
    assert "6 golden items studied (tier quick)" in result_text
    assert "±40.0%" in result_text  # 1.96·sqrt(0.25 / 6) = 0.400


def test_the_leave_one_out_table_by_hand():
    ann = pd.DataFrame([_scored(i, a, s, 5, 5) for i, row in
                        (("i1", (3, 3, 4)), ("i2", (1, 2, 1)), ("i3", (5, 5, 5)))
                        for a, s in zip("ABC", row, strict=True)])  # fmt: skip
    judgments = pd.DataFrame({"judge": "j", "replicate": 0, "item": ["i1", "i2", "i3"],
                              "score_accuracy": [5.0, 1.0, math.nan]})  # fmt: skip
    got = H.judge_among_annotators(
        ann, judgments, judge="j", dimension="accuracy", policy="mean", tolerance=1
    ).set_index("annotator")
    # A vs mean(B, C) = 3.5, 1.5 on i1, i2 (i3: the judge did not score): |3-3.5|, |1-1.5|
    assert got.loc["A", "n"] == 2 and got.loc["A", "human_mae"] == 0.5
    # judge 5, 1 vs 3.5, 1.5: 1.5 (miss), 0.5 (hit)
    assert got.loc["A", "judge_within_k"] == 0.5 and got.loc["A", "judge_mae"] == 1.0
    assert got.loc["mean", "n"] == 6


@pytest.mark.slow
def test_annotator_names_are_escaped_in_the_report(tmp_path):
    golden = D.load_golden("demo").head(2)
    rows = [
        {**_scored(r["item"], who, 5, 5, 5), "question": r["question"], "answer": r["answer"],
         "reference": r["reference"]}
        for r in golden.to_dict("records") for who in ("<script>x</script>", "ok")
    ]  # fmt: skip
    path = _rows(tmp_path / "g.jsonl", rows)
    result = G.run(open_run(_params_file(tmp_path, golden=str(path), annotations=None)))
    intro = report.humans_intro(result)
    assert "&lt;script&gt;x&lt;/script&gt;" in intro and "<script>" not in intro
    assert "SIMULATED" not in intro  # labels from people are not called simulated


@pytest.mark.slow
def test_a_fractional_reference_has_no_confusion_and_says_why(tmp_path):
    golden = D.load_golden("demo").head(4)
    rows = [
        {**_scored(r["item"], who, 5 + k, 5, 5), "question": r["question"],
         "answer": r["answer"], "reference": r["reference"]}
        for r in golden.to_dict("records") for k, who in enumerate(("a", "b"))
    ]  # fmt: skip
    path = _rows(tmp_path / "g.jsonl", rows)
    result = G.run(open_run(_params_file(
        tmp_path, golden=str(path), annotations=None, human_reference="mean")))  # fmt: skip
    assert list(result.golden["human_accuracy"]) == [5.5] * 4  # (5 + 6) / 2
    assert result.confusion is None
    assert "No score confusion on accuracy" in report.confusion_note(result)
    median = G.run(open_run(_params_file(tmp_path / "m", golden=str(path), annotations=None)))
    assert median.confusion is None  # the median of two is their mean too
    assert report.confusion_note(G.run(open_run(_params_file(tmp_path / "d", limit=4)))) == ""


# --------------------------------------------------------------------- agreement records


def _two_annotators_run(tmp_path: Path, rows: list[dict]):
    golden = _rows(tmp_path / "g.jsonl", rows)
    path = _params_file(tmp_path, golden=str(golden), annotations=None, pairwise_judge=None,
                        retest=False, judges=[{"name": "j", "provider": "sim"}])  # fmt: skip
    run = open_run(path)
    return run, G.run(run)


@pytest.mark.slow
def test_annotator_agreement_is_in_the_records_at_full_precision_by_hand(tmp_path):
    """Two annotators, three items. accuracy: a = 1, 2, 3 and b = 1, 2, 4; completeness the
    same for both; clarity 5 from everyone (no variation: alpha and kappa are undefined).

    accuracy by hand (scale 1-10):
      exact 2/3; within ±1 3/3;
      Cohen's kappa: p_o = 2/3, p_e = (1/3)(1/3) [1] + (1/3)(1/3) [2] = 2/9,
        kappa = (2/3 - 2/9) / (1 - 2/9) = 4/7;
      quadratic kappa: observed (1,1), (2,2), (3,4) -> sum (i-j)^2 O = 1 * 1/3; expected
        over a in {1,2,3} x b in {1,2,4}, 1/9 each: (0+1+9) + (1+0+4) + (4+1+1) = 21 -> 21/9;
        qwk = 1 - (1/3) / (21/9) = 6/7;
      Krippendorff interval alpha: D_o = (1/6) * 2 * (3-4)^2 = 1/3; over all six values
        1,1,2,2,3,4 the unordered squared differences sum to 41, so
        D_e = 2 * 41 / (6 * 5) = 41/15 and alpha = 1 - (1/3) / (41/15) = 36/41;
      ordinal alpha: with n_1 = n_2 = 2, n_3 = n_4 = 1 the ordinal distances squared are
        (1,2) 4, (1,3) 12.25, (1,4) 20.25, (2,3) 2.25, (2,4) 6.25, (3,4) 1: D_o = 1/3,
        D_e = 2 * (4*4 + 2*12.25 + 2*20.25 + 2*2.25 + 2*6.25 + 1) / 30 = 6.6,
        alpha = 1 - (1/3) / 6.6 = 94/99.
    """
    scores = {"a": [(1, 7, 5), (2, 8, 5), (3, 9, 5)], "b": [(1, 7, 5), (2, 8, 5), (4, 9, 5)]}
    rows = [_scored(f"i{n}", who, *s, question=f"Q{n}?", answer=f"A{n}.")
            for who, triples in scores.items() for n, s in enumerate(triples, 1)]  # fmt: skip
    run, result = _two_annotators_run(tmp_path, rows)
    text = (run.dir / "records" / "annotator_agreement.jsonl").read_text()
    assert "NaN" not in text and "Infinity" not in text  # strict JSON: null
    got = {r["dimension"]: r for r in map(json.loads, text.splitlines())}
    acc = got["accuracy"]
    assert (acc["n_items"], acc["n_annotators"], acc["tolerance"]) == (3, 2, 1.0)
    assert acc["exact"] == pytest.approx(2 / 3, abs=1e-15)
    assert acc["within_k"] == 1.0
    assert acc["kappa"] == pytest.approx(4 / 7, abs=1e-15)
    assert acc["qwk"] == pytest.approx(6 / 7, abs=1e-15)
    assert acc["alpha"] == pytest.approx(36 / 41, abs=1e-15)
    assert acc["alpha_ordinal"] == pytest.approx(94 / 99, abs=1e-15)
    assert acc["alpha_low"] <= acc["alpha"] <= acc["alpha_high"] and acc["level"] == 0.95
    assert got["completeness"]["alpha"] == 1.0 and got["completeness"]["qwk"] == 1.0
    assert got["clarity"]["alpha"] is None and got["clarity"]["kappa"] is None
    assert (
        got["clarity"]["exact"] == 1.0
    )  # everyone agrees; only the chance-corrected are undefined
    # read back, every number is the one the report shows (not rounded to 3 decimals)
    shown = result.humans.agreement.set_index("dimension")
    for dim, row in got.items():
        for column in ("alpha", "alpha_low", "alpha_high", "alpha_ordinal", "exact", "kappa"):
            value = shown.loc[dim, column]
            assert row[column] == (None if math.isnan(value) else value), (dim, column)
    pairs = [json.loads(x) for x in (run.dir / "records" / "annotator_pairs.jsonl").open()]
    assert [(p["dimension"], p["annotator_1"], p["annotator_2"], p["n"]) for p in pairs] == [
        ("accuracy", "a", "b", 3), ("completeness", "a", "b", 3), ("clarity", "a", "b", 3)
    ]  # fmt: skip
    assert pairs[0]["kappa"] == pytest.approx(4 / 7, abs=1e-15) and pairs[2]["kappa"] is None


def test_annotators_without_a_shared_item_give_empty_statistics_not_a_crash(tmp_path):
    """Zero pairable items: each item scored by one annotator only."""
    rows = [_scored("i1", "a", 7, 5, 9, question="Q1?", answer="A1."),
            _scored("i2", "b", 3, 2, 2, question="Q2?", answer="A2.")]  # fmt: skip
    run, _ = _two_annotators_run(tmp_path, rows)
    for name in ("annotator_agreement", "annotator_pairs"):
        rows = [json.loads(x) for x in (run.dir / "records" / f"{name}.jsonl").open()]
        assert len(rows) == 3, name  # one per dimension
        for row in rows:
            assert row.get("n_items", row.get("n")) == 0
            assert row["alpha" if "alpha" in row else "kappa"] is None


def test_a_bad_annotations_file_is_refused_before_any_judge_is_asked(tmp_path):
    stray = _rows(tmp_path / "a.jsonl", [_scored("nope", "a", 5, 5, 5)])
    run = open_run(_params_file(tmp_path, annotations=str(stray), limit=4))
    with pytest.raises(D.GoldenSetError, match=r"a.jsonl:1: column 'item': 'nope' is not in"):
        G.run(run)
    asked = sorted(p.name for p in (run.dir / "records").glob("*.jsonl"))
    assert asked == [], f"asked before reading the annotations: {asked}"
