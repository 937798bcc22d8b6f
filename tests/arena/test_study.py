"""The arena runner's params and its run end to end (simulated systems and judge)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalbench import arena
from evalbench.arena import sim, study
from evalbench.arena.metrics import dimension_means
from evalbench.judge import get_rubric


def params_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "study.yaml"
    path.write_text(text, encoding="utf-8")
    return path


RUNNER = """
study: arena
title: t
systems:
  - {name: a, provider: sim}
  - {name: b, provider: sim}
judge: {name: j, provider: sim}
"""


@pytest.mark.parametrize("name", ["arena_demo", "arena_deep_research_demo"])
def test_shipped_params_load(name):
    from evalbench.studies import load_params

    params = load_params(Path(__file__).resolve().parents[2] / "params" / f"{name}.yaml")
    assert isinstance(params, arena.ArenaParams)
    assert bool(params.systems) == (name != "arena_public")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("pairing: vs_baseline", "baseline: required with pairing: vs_baseline"),
        ("pairing: vs_baseline\nbaseline: c", "baseline: unknown system 'c'"),
        ("anchor: c", "anchor: unknown system 'c'"),
        ("retrieval_systems: [a, z]", r"retrieval_systems: unknown system\(s\) \['z'\]"),
        ("document_effect: {depth: 1}", "document_effect: keys must be dimensions"),
        ("rubric: nope", "rubric: unknown rubric 'nope'"),
        ("judging: duel", "judging: expected one of 'pairwise' or 'rubric'"),
        ("public: [prd_human]", "public: unknown key"),  # published data: arena_public
        ("judge_documents: maybe", "judge_documents: Input should be a valid boolean"),
        ("bogus_key: 1", "bogus_key: unknown key"),
    ],
)
def test_params_errors_name_the_field(tmp_path, extra, message):
    from evalbench.params import ParamsError
    from evalbench.studies import load_params

    with pytest.raises(ParamsError, match=message):
        load_params(params_file(tmp_path, RUNNER + extra + "\n"))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("study: arena\ntitle: t\n", "nothing to do"),
        (RUNNER.replace("judge: {name: j, provider: sim}", ""), "judge: required"),
        (
            RUNNER.replace("{name: b, provider: sim}", "{name: a, provider: sim}"),
            r"listed more than once: \['a'\]",
        ),
        (RUNNER.replace("  - {name: b, provider: sim}\n", ""), "need at least 2"),
        (RUNNER.replace("name: j", "name: a"), "judge: name 'a' is also a system's"),
        (
            RUNNER.replace("{name: b, provider: sim}", "{name: b, provider: openai, model: m}"),
            "a sim judge needs sim systems",
        ),
    ],
)
def test_runner_params_consistency(tmp_path, text, message):
    from evalbench.params import ParamsError
    from evalbench.studies import load_params

    with pytest.raises(ParamsError, match=message):
        load_params(params_file(tmp_path, text))


def test_pairs_all_or_versus_baseline(tmp_path):
    from evalbench.studies import load_params

    three = RUNNER.replace("judge:", "  - {name: c, provider: sim}\njudge:")
    every = load_params(params_file(tmp_path, three))
    assert every.pairs() == [("a", "b"), ("a", "c"), ("b", "c")]  # params order
    assert every.rating_anchor() is None
    versus = load_params(params_file(tmp_path, three + "pairing: vs_baseline\nbaseline: c\n"))
    assert versus.pairs() == [("c", "a"), ("c", "b")]
    assert versus.rating_anchor() == "c"
    assert [s.name for s in versus.model_specs()] == ["a", "b", "c", "j"]


def runner_file(tmp_path: Path, extra: str = "") -> Path:
    return params_file(
        tmp_path,
        """
study: arena
title: runner test
limit: 8
bootstrap_rounds: 50
systems:
  - {name: good, provider: sim, sim: {strength: 1.0, noise: 0.3, verbosity: 1.0}}
  - {name: fair, provider: sim, sim: {strength: 0.0, noise: 0.3, verbosity: 2.0}}
  - {name: poor, provider: sim, sim: {strength: -1.0, noise: 0.3, error_rate: 0.45}}
judge: {name: judge, provider: sim, sim: {noise: 0.5, position_bias: 0.5, malformed_rate: 0.1}}
"""
        + extra,
    )


def test_runner_pairwise_end_to_end_and_cached(tmp_path):
    from evalbench.studies import open_run

    run = open_run(runner_file(tmp_path))
    prompts = arena.load_prompts(run.params.prompts, limit=run.params.limit)
    result = study.run_study(run, prompts)
    errors = int(result.answers["error"].notna().sum())
    c = result.counts
    assert (c["prompts"], c["answers"] + c["answer_errors"]) == (8, 3 * 8)
    assert c["answer_errors"] == errors > 0  # poor's simulated API failures
    # every prompt has 3 pairs; a pair with a failed answer is skipped, the rest judged
    assert c["skipped_pairs"] + c["judgments"] == 3 * 8
    assert c["battles"] == c["judgments"] - c["unscored"] - c["dropped"]
    assert set(result.battles.columns) >= {"model_a", "model_b", "winner", "weight", "question_id"}
    # the judge's truth is the systems' truth: each pair carries both answers' hidden quality
    tasks, _ = study.pair_tasks(result.answers, prompts, run.params)
    spec = run.params.systems[0]
    rubric = get_rubric(run.params.rubric)
    q0 = sim.overall_quality(sim.system_quality(run.params, spec, prompts[0].id), rubric)
    assert tasks[0].model_x == "good" and tasks[0].quality_x == pytest.approx(q0)
    assert (run.dir / "records" / "pair_judgments.jsonl").exists()
    again = study.run_study(open_run(runner_file(tmp_path)), prompts)
    pd.testing.assert_frame_equal(again.battles, result.battles)
    assert result.battles.attrs == again.battles.attrs


def test_runner_rubric_with_documents(tmp_path):
    from evalbench.studies import open_run

    extra = """judging: rubric
pairing: vs_baseline
baseline: fair
retrieval_systems: [good]
document_effect: {accuracy: 2.0}
"""
    run = open_run(runner_file(tmp_path, extra))
    prompts = arena.load_prompts("demo", limit=8)
    result = study.run_study(run, prompts)
    assert result.answers.set_index("system")["with_documents"].to_dict() == {
        "good": True, "fair": False, "poor": False,
    }  # fmt: skip
    good = result.answers[result.answers["system"] == "good"]
    assert good["answer"].str.contains(r"\[1\]|\[2\]").all()  # document citations
    scores = result.judgments
    assert len(scores) == result.counts["answers"]  # failed answers are not graded
    assert {"system", "question_id", "status", "weighted_score", "score_accuracy"} <= set(
        scores.columns
    )
    b = result.battles
    assert (b["model_a"] == "fair").all() and set(b["model_b"]) <= {"good", "poor"}
    means = dimension_means(scores, "fine_grained", rng=np.random.default_rng(0), rounds=50)
    assert len(means) == 3 * 3 and (means["ci_low"] <= means["mean"]).all()
    truth = sim.true_dimension_means(run.params, prompts).set_index(["system", "dimension"])
    # accuracy: 1 + 9·σ(1 + 2 + 0.3·z) averaged, well above 'fair' at 1 + 9·σ(0 + 0.3·z) ≈ 5.5
    assert truth.loc[("good", "accuracy"), "true_mean"] > 8.5
    assert truth.loc[("fair", "accuracy"), "true_mean"] == pytest.approx(5.5, abs=0.5)
    assert sim.truth_table(run.params)["strength"].tolist() == pytest.approx(
        [1.0 + 0.5 * 2.0, 0.0, -1.0]
    )


def test_the_package_exports_what_its_docstring_lists():
    assert sorted(arena.__all__) == [
        "ArenaParams", "ArenaResult", "answer_messages", "demo_prompts_path", "load_prompts", "run",
    ]  # fmt: skip
    doc = str(arena.__doc__)
    assert all(re.search(rf"\b{name}\b", doc) and hasattr(arena, name) for name in arena.__all__)


@pytest.mark.slow
def test_run_returns_what_the_notebook_shows_and_writes_records(tmp_path):
    import json

    from evalbench.arena.study import STUDY
    from evalbench.studies import open_run

    run = open_run(runner_file(tmp_path, "pairing: vs_baseline\nbaseline: fair\n"))
    result = arena.run(run)
    assert result.anchor == "fair" and result.table["model"].iloc[0] == "good"
    assert result.position is not None and result.means is None and result.versus is not None
    # the sim truth sits beside the fit: good = fair + 400·1.0/ln 10 (anchored at fair)
    truth = result.table.set_index("model")["true_rating"]
    assert truth["good"] - truth["fair"] == pytest.approx(400 / np.log(10))
    assert set(result.simulated) == {"good", "fair", "poor", "judge"}
    errors = result.usage.set_index("system")["errors"]
    assert errors["poor"] == result.counts["answer_errors"] > 0
    best = result.versus.sort_values("win_rate").iloc[-1]
    assert STUDY.headlines(result) == {
        "position consistency": round(result.position.consistency, 3),
        f"{best['model']} win rate vs fair": round(best["win_rate"], 3),
        "top: good": round(result.table["rating"].iloc[0], 1),
    }
    assert not (run.dir / "records" / "human_battles.jsonl").exists()  # no human votes given
    for name, record in STUDY.records.items():
        if name in STUDY.optional_records:
            continue
        rows = [json.loads(x) for x in (run.dir / "records" / f"{name}.jsonl").open()]
        assert rows, name
        for row in rows:
            record.model_validate(row)
