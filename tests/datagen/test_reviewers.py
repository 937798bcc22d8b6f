"""Several reviewers: consensus and agreement by hand, the form writing the browser app's
label file, the study reading a labels folder, and tiers of the problem slots."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from datagen.cases import made_up_reference, params_file, sample_problems

from evalbench.datagen import report, review, reviewers, scoring, study
from evalbench.labels import (
    LabelRecord,
    LabelStore,
    export_labels,
    label_status,
    load_tasks,
    make_item,
)
from evalbench.records import read_jsonl
from evalbench.studies import open_run

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _params(folder: Path, **changes: object) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return params_file(folder, **changes)


def _review(pid: str, who: str, scores: tuple[int, ...], status: str) -> dict:
    return {"problem_id": pid, "reviewer": who,
            **dict(zip(scoring.DIMENSIONS, scores, strict=True)),
            "total_score": sum(scores) / 4, "status": status, "comments": "",
            "verified_at": T0, "simulated": False}  # fmt: skip


REVIEWS = pd.DataFrame([
    _review("p1", "ann", (5, 4, 3, 2), "approved"),
    _review("p1", "ben", (4, 4, 2, 5), "approved"),
    _review("p1", "cy", (1, 5, 4, 4), "rejected"),
    _review("p2", "ann", (3, 3, 3, 3), "approved"),
    _review("p2", "ben", (2, 2, 2, 2), "rejected"),
])  # fmt: skip


def test_consensus_by_hand_majority_status_and_lower_median_scores():
    got = reviewers.consensus(REVIEWS)
    # p1: approved by 2 of 3; correctness 5, 4, 1 -> 4; difficulty 3, 2, 4 -> 3
    assert set(got.verifications) == {"p1"} and got.no_majority == ["p2"]  # p2: 1 of 2
    p1 = got.verifications["p1"]
    assert p1.status == "approved"
    assert p1.scores == {"correctness": 4, "clarity": 4, "difficulty_match": 3, "completeness": 4}


def test_reviewer_agreement_on_the_status_by_hand():
    table = reviewers.reviewer_agreement(REVIEWS, rng=np.random.default_rng(0), rounds=50,
                                         level=0.9).set_index("measure")  # fmt: skip
    # status, units p1 (a, a, r) and p2 (a, r): coincidences with m_u - 1 weights
    #   p1: a-a 2/2, a-r 2/2, r-a 2/2 -> o_aa 1, o_ar 1, o_ra 1;  p2: o_ar 1, o_ra 1
    #   n_a = 1 + 2 = 3, n_r = 2, n = 5; D_o ∝ o_ar + o_ra = 4; D_e ∝ 2·n_a·n_r/(n-1) = 12/4
    #   alpha = 1 - (n - 1)·4 / (2·3·2) = 1 - 16/12 = -1/3
    assert table.loc["status", "alpha"] == pytest.approx(1 - 16 / 12)
    assert table.loc["status", "alpha_level"] == "nominal"
    # exact, weighted by shared problems: ann-ben 1/2 (n 2), ann-cy 0/1, ben-cy 0/1 -> 1/4
    assert table.loc["status", "exact"] == pytest.approx(1 / 4)
    assert list(table.index) == ["status", *scoring.DIMENSIONS, "total"]


def test_the_form_writes_the_browser_apps_label_file(tmp_path: Path):
    pytest.importorskip("ipywidgets")
    problems = sample_problems()
    data = tmp_path / "generated.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in problems.to_dict("records")))
    (tmp_path / "review.yaml").write_text(
        "kind: verification\ntitle: review\nitems: generated.jsonl\n"
    )
    tasks = load_tasks(tmp_path / "review.yaml")  # labels: review_labels/ (task "review")
    with pytest.raises(ValueError, match="needs reviewer"):
        review.verification_form(problems, tasks.labels_dir)
    form = review.verification_form(problems, tasks.labels_dir, reviewer="alice")
    _view, controls, buttons, message = form.children
    *sliders, status, comments = controls.children
    for slider, value in zip(sliders, (5, 4, 3, 2), strict=True):
        slider.value = value
    status.value, comments.value = "needs_revision", "check"
    buttons.children[1].click()
    assert "saved gen_1" in message.value
    line = json.loads((tasks.labels_dir / "alice.jsonl").read_text())
    assert LabelRecord.model_validate(line).task == "review"
    # the app's side sees it as alice's current, fresh (not stale) label of gen_1
    assert label_status(tasks).set_index("annotator").loc["alice", "done"] == 1
    row = json.loads(export_labels(tasks, tmp_path / "out.jsonl").path.read_text())
    assert (row["problem_id"], row["status"], row["correctness"]) == ("gen_1", "needs_revision", 5)
    # a second form on the same file prefills from it
    again = review.verification_form(problems, tasks.labels_dir / "alice.jsonl")
    assert [s.value for s in again.children[1].children[:4]] == [5, 4, 3, 2]


def test_the_study_reads_several_reviewers_from_a_labels_folder(tmp_path: Path):
    run = open_run(_params(tmp_path / "a", n_problems=6, verifications=None))
    gen = study.generate_problems(run, made_up_reference())
    problems = scoring.problems_frame(read_jsonl(run.dir / "generated.jsonl"))
    folder = tmp_path / "labels"
    store = LabelStore(folder)
    plan = {"ann": "approved", "ben": "approved", "cy": "rejected"}
    for who, decision in plan.items():
        for pos, row in enumerate(problems.to_dict("records")):
            item = make_item("verification", row)
            store.append(LabelRecord(
                task="review", kind="verification", item=item.id, item_digest=item.digest,
                annotator=who, time=T0, position=pos, status=decision,
                scores=dict.fromkeys(scoring.DIMENSIONS, 4.0 if who != "cy" else 2.0),
            ))  # fmt: skip
    human = study.study_verifications(
        open_run(_params(tmp_path / "b", n_problems=6, verifications=str(folder))),
        gen.problems,
    )
    assert human.reviewers is not None and human.reviewers.agreement is not None
    assert len(human.verifications) == len(gen.problems)
    assert {v.status for v in human.verifications.values()} == {"approved"}
    assert all(v.scores["correctness"] == 4 for v in human.verifications.values())
    table = human.reviewers.agreement.set_index("measure")
    assert table.loc["status", "exact"] == pytest.approx(1 / 3)  # only ann-ben agree


@pytest.mark.slow
def test_the_whole_study_with_reviewers_reports_them(tmp_path: Path):
    first = open_run(_params(tmp_path / "a", n_problems=6, verifications=None))
    study.generate_problems(first, made_up_reference())
    problems = scoring.problems_frame(read_jsonl(first.dir / "generated.jsonl"))
    store = LabelStore(tmp_path / "labels")
    for who, decision in (("ann", "approved"), ("ben", "rejected")):
        for pos, row in enumerate(problems.to_dict("records")):
            item = make_item("verification", row)
            store.append(LabelRecord(
                task="r", kind="verification", item=item.id, item_digest=item.digest,
                annotator=who, time=T0, position=pos, status=decision,
                scores=dict.fromkeys(scoring.DIMENSIONS, 3.0),
            ))  # fmt: skip
    path = _params(tmp_path / "b", n_problems=6, verifications=str(tmp_path / "labels"))
    result = study.run_study(open_run(path), made_up_reference())
    assert result.summary.human is None  # two reviewers who always disagree: no majority
    note = report.reviewers_note(result)
    assert "2 reviewers (ann, ben)" in note and "without a majority left out" in note
    # 6 slots, tier full: 1.96 · sqrt(0.25 / 6) = 0.400
    assert "6 problem slots (tier full" in report.size_sentence(result)
    assert "±40.0%" in report.size_sentence(result)
    shown, caption = report.reviewers_table(result)
    assert "Krippendorff" in caption and shown["measure"].iloc[0] == "status"


def test_tiers_subsample_the_slots_by_topic(tmp_path: Path):
    quick = open_run(_params(tmp_path / "q", n_problems=60, tier="quick"))
    gen = study.generate_problems(quick, made_up_reference())
    topics = pd.Series([s.topic for s in gen.slots]).value_counts()
    # 60 slots over the 7 topics: 8 or 9 each; ceil(0.1 · 8) = ceil(0.1 · 9) = 1 per topic
    assert len(scoring.TOPICS) == 7
    assert len(gen.slots) == 7 and topics.eq(1).all()


@pytest.mark.parametrize(
    ("name", "content", "says"),
    [("reviews_verifications.json", b'{"p1": ', r"reviews_verifications.json: not JSON"),
     ("reviews_verifications.json", b'{"p1": "caf\xe9"}', r"json:1: not UTF-8: byte 0xe9"),
     ("labels.jsonl", b"not json\n", r"labels.jsonl:1")],
)  # fmt: skip
def test_a_bad_reviews_file_fails_before_any_problem_is_generated(tmp_path, name, content, says):
    reviews = tmp_path / name
    reviews.write_bytes(content)
    run = open_run(_params(tmp_path / "r", n_problems=6, verifications=str(reviews)))
    with pytest.raises(ValueError, match=says):
        study.run_study(run, made_up_reference())
    asked = sorted(p.name for p in (run.dir / "records").glob("*.jsonl"))
    assert asked == [], f"generated before reading the reviews: {asked}"
