"""Human pairwise votes in the arena: loading, orientation, majority and agreement by hand,
and the whole path: run -> label_pairs.jsonl -> label task -> votes -> export -> study."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalbench import arena
from evalbench.arena import metrics, report, sim
from evalbench.arena.records import HumanBattle
from evalbench.arena.study import STUDY
from evalbench.labels import LabelStore, export_labels, load_tasks
from evalbench.labels.views import parse_label
from evalbench.ratings import ArenaError
from evalbench.studies import open_run

SYSTEMS = """
study: arena
title: t
bootstrap_rounds: 50
limit: 8
anchor: base
systems:
  - {name: strong, provider: sim, sim: {strength: 1.0}}
  - {name: base, provider: sim, sim: {strength: 0.0}}
  - {name: weak, provider: sim, sim: {strength: -1.0}}
judge: {name: j, provider: sim, sim: {noise: 0.5}}
"""


def _write(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _params(tmp_path: Path, extra: str = "") -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "arena.yaml"
    path.write_text(SYSTEMS + extra, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("row", "message"),
    [({"model_a": "strong", "model_b": "nobody", "winner": "a"}, r"v.jsonl:1: field 'model_b': 'nobody'"),
     ({"model_a": "strong", "model_b": "strong", "winner": "a"}, "the same system"),
     ({"model_a": "strong", "model_b": "base", "winner": "A>B"}, r"field 'winner': 'A>B'"),
     ({"model_a": "strong", "model_b": "base"}, r"field 'winner': missing"),
     ({"model_a": "strong", "model_b": "base", "winner": "a", "weight": "x"}, "field 'weight'")],
)  # fmt: skip
def test_a_bad_vote_names_file_line_and_field(tmp_path, row, message):
    with pytest.raises(ArenaError, match=message):
        arena.data.load_human_battles(_write(tmp_path / "v.jsonl", [row]), ["strong", "base"])


def test_a_weight_of_zero_is_zero_in_jsonl_as_in_csv(tmp_path):
    """Before: ``"weight": 0`` in JSON Lines read as 1 (``0 or 1.0``), while the same vote in
    a CSV file read as 0: a vote meant to count for nothing counted in full."""
    rows = [{"model_a": "strong", "model_b": "base", "winner": "a", "weight": 0},
            {"model_a": "strong", "model_b": "base", "winner": "b", "weight": 1},
            {"model_a": "strong", "model_b": "base", "winner": "b"}]  # fmt: skip
    jsonl = arena.data.load_human_battles(_write(tmp_path / "v.jsonl", rows), ["strong", "base"])
    assert jsonl["weight"].tolist() == [0.0, 1.0, 1.0]  # missing: 1
    csv = tmp_path / "v.csv"
    csv.write_text("model_a,model_b,winner,weight\nstrong,base,a,0\nstrong,base,b,1\n"
                   "strong,base,b,\n")  # fmt: skip
    assert arena.data.load_human_battles(csv, ["strong", "base"])["weight"].tolist() == [
        0.0, 1.0, 1.0]  # fmt: skip
    flag = [{**rows[0], "weight": False}]
    with pytest.raises(ArenaError, match="field 'weight': False is not a weight"):
        arena.data.load_human_battles(_write(tmp_path / "f.jsonl", flag), ["strong", "base"])


def test_votes_are_oriented_like_the_judge_and_the_majority_is_strict():
    votes = pd.DataFrame({
        "model_a": ["x", "y", "x", "x", "y"], "model_b": ["y", "x", "y", "y", "x"],
        "winner": ["a", "a", "tie", "b", "b"], "question_id": ["q1", "q1", "q2", "q2", "q2"],
        "annotator": ["ann", "ben", "ann", "ben", "cy"],
    })  # fmt: skip
    flipped = metrics.oriented(votes, [("x", "y")])
    assert list(flipped["model_a"]) == ["x"] * 5
    assert list(flipped["winner"]) == ["a", "b", "tie", "b", "a"]  # y-first votes swapped
    majority = metrics.human_majority(flipped).set_index("question_id")
    # q1: a, b -> no side has more than half; q2: tie, b, a -> none either
    assert majority["human"].isna().all() and list(majority["n_votes"]) == [2, 3]
    more = metrics.human_majority(metrics.oriented(pd.concat([votes, votes.head(1)]), [("x", "y")]))
    assert more.set_index("question_id").loc["q1", "human"] == "a"  # a, b, a: 2 of 3


def test_judge_against_the_human_majority_by_hand():
    human = pd.DataFrame({"key": ["q1|x|y", "q2|x|y", "q3|x|y", "q4|x|y"],
                          "human": ["a", "tie", "b", None], "n_votes": [3, 1, 2, 2]})  # fmt: skip
    judge = pd.DataFrame({"question_id": ["q1", "q2", "q3"], "model_a": "x", "model_b": "y",
                          "winner": ["a", "a", "a"]})  # fmt: skip
    got = metrics.judge_human_agreement(judge, human)
    # common pairs q1, q2, q3 (q4 the judge did not decide); q4 also has no majority
    assert (got["pairs"], got["judged"], got["no_majority"]) == (4, 3, 0)
    # with ties: q1 agrees, q2 (a vs tie) and q3 (a vs b) do not -> 1/3
    assert got["agreement"].with_ties == pytest.approx(1 / 3)
    # without ties: q1 and q3 are decisive on both sides -> 1/2
    assert got["agreement"].without_ties == 0.5 and got["agreement"].n_without_ties == 2
    # per vote (MT-Bench counts each vote): q1 x3 agree, q2 x1 and q3 x2 disagree -> 3/6
    assert got["per_vote"].with_ties == 0.5


@pytest.mark.slow
def test_the_whole_path_from_a_run_to_human_battles(tmp_path):
    first = arena.run(open_run(_params(tmp_path / "one")))
    assert first.human is None and "No human votes" in report.human_intro(first)
    # 8 prompts: 1.96 · sqrt(0.25 / 8) = 0.346
    assert "8 prompts (tier full)" in report.size_sentence(first)
    assert "±34.6%" in report.size_sentence(first)
    pairs_file = open_run(_params(tmp_path / "one")).dir / "label_pairs.jsonl"
    rows = [json.loads(x) for x in pairs_file.read_text().splitlines()]
    assert len(rows) == 8 * 3  # 8 prompts x 3 system pairs, every answer ok
    # a label task over the run's pairs; two people vote through it
    (tmp_path / "votes.yaml").write_text(
        f"kind: pairwise\ntitle: votes\nitems: {pairs_file}\nannotators: [ann, ben]\n"
    )
    tasks = load_tasks(tmp_path / "votes.yaml")
    store = LabelStore(tasks.labels_dir)
    strength = {"strong": 1, "base": 0, "weak": -1}
    for name in ("ann", "ben"):
        for pos, item in enumerate(tasks.items):
            better_x = strength[item.hidden["system_x"]] > strength[item.hidden["system_y"]]
            left = parse_label(tasks, item, name, pos, {"choice": "tie"}).left
            choice = "left" if better_x == (left == "x") else "right"
            store.append(parse_label(tasks, item, name, pos, {"choice": choice}))
    votes = export_labels(tasks, tmp_path / "votes.jsonl").path
    result = arena.run(open_run(_params(tmp_path / "two", f"human_battles: {votes}\n")))
    h = result.human
    assert len(h.votes) == 2 * 24 and set(h.votes["winner"]) == {"a"}  # always the stronger
    assert h.ratings is None and "never beat" in h.rating_error  # a perfect order: no MLE
    assert h.annotators["exact"] == 1.0 and h.agreement["judged"] <= 24
    assert STUDY.counts(result)["human_votes"] == 48
    records = [json.loads(x) for x in
               (open_run(_params(tmp_path / "two", f"human_battles: {votes}\n")).dir
                / "records" / "human_battles.jsonl").read_text().splitlines()]  # fmt: skip
    for row in records:
        HumanBattle.model_validate(row)
    assert "human votes by 2 annotators" in report.human_intro(result)
    assert "No ratings from the human votes alone" in report.human_ratings_table(result)


@pytest.mark.slow
def test_simulated_votes_are_labelled_and_rated_near_the_truth(tmp_path):
    params = open_run(_params(tmp_path / "p")).params
    prompts = arena.load_prompts("demo")
    votes = sim.sim_human_votes(params, params.pairs(), prompts, [("s1", 0.5), ("s2", 1.0)],
                                rng=np.random.default_rng(0))  # fmt: skip
    path = _write(tmp_path / "v.jsonl", votes.to_dict("records"))
    result = arena.run(open_run(_params(tmp_path / "r", f"human_battles: {path}\n")))
    intro = report.human_intro(result)
    assert "SIMULATED VOTES" in intro
    assert f"{(40 - 8) * 3 * 2} votes on prompts outside this run were left out" in intro
    human = result.human.ratings.table.set_index("model")["rating"]
    assert human["strong"] > human["base"] > human["weak"]
    assert "human_rating" in report.human_ratings_table(result)


def test_tiers_subsample_the_prompts_nested(tmp_path):
    def prompts(tier: str) -> list[str]:
        path = tmp_path / tier / "arena.yaml"
        path.parent.mkdir()
        path.write_text(SYSTEMS.replace("limit: 8\n", "") + f"tier: {tier}\n")
        return [p.id for p in arena.study.study_prompts(open_run(path).params)]

    quick, standard, full = prompts("quick"), prompts("standard"), prompts("full")
    assert (len(quick), len(standard), len(full)) == (4, 12, 40)  # ceil(0.1·40), ceil(0.3·40)
    assert set(quick) <= set(standard) <= set(full)


def test_votes_left_out_read_singular_and_plural():
    assert report._outside(0) == ""
    assert report._outside(1) == " 1 vote on prompts outside this run was left out."
    assert report._outside(3) == " 3 votes on prompts outside this run were left out."


@pytest.mark.parametrize(
    ("votes", "says"),
    [(b"model_a,model_b,winner\nstrong,base,caf\xe9\n", "not UTF-8: byte 0xe9"),
     (b'{"model_a": "strong", "model_b": "nobody", "winner": "a"}\n', "field 'model_b'"),
     (b'{"model_a": "strong", "model_b": "base", "winner": "a", "question_id": "elsewhere"}\n',
      "none of its 1 votes is on a prompt of this run")],
)  # fmt: skip
def test_a_bad_votes_file_is_refused_before_any_system_or_judge_is_asked(tmp_path, votes, says):
    path = tmp_path / ("votes.csv" if votes.startswith(b"model_a") else "votes.jsonl")
    path.write_bytes(votes)
    run = open_run(_params(tmp_path / "r", f"human_battles: {path}\n"))
    with pytest.raises(ArenaError, match=says):
        arena.run(run)
    asked = sorted(p.name for p in (run.dir / "records").glob("*.jsonl"))
    assert asked == [], f"asked before reading the votes: {asked}"
