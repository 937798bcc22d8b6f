"""The published-ratings study's params, and a small run of it (mirror)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalbench import arena_public
from evalbench.arena_public import report, study
from evalbench.params import ParamsError
from evalbench.studies import load_params

ROOT = Path(__file__).resolve().parents[2]
PUBLIC = """
study: arena_public
title: t
"""


def params_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "study.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_shipped_params_load():
    params = load_params(ROOT / "params" / "arena_public.yaml")
    assert isinstance(params, arena_public.ArenaPublicParams)
    assert params.public == ["prd_human", "arena_hard_pr44", "alpaca_eval"]
    assert "systems" not in type(params).model_fields  # no model is asked
    assert params.simulated is False and params.model_specs() == []


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("public: [prd_human, prd_human]", r"public: listed more than once: \['prd_human'\]"),
        (
            "public: [alpaca_eval]\nalpaca_models: [gpt-5]",
            r"alpaca_models: no registered .*\['gpt-5'\]",
        ),
        ("public: []", "public: List should have at least 1 item"),
        ("public: [lmsys]", r"public\.0: expected one of .*got 'lmsys'"),
        ("public: [prd_human]\nsystems: []", "systems: unknown key"),  # the runner: study arena
    ],
)
def test_params_errors_name_the_field(tmp_path, extra, message):
    with pytest.raises(ParamsError, match=message):
        load_params(params_file(tmp_path, PUBLIC + extra + "\n"))


def test_a_small_run_rates_arena_hard_and_writes_its_records(tmp_path, mirror):
    from evalbench.studies import open_run

    run = open_run(
        params_file(tmp_path, PUBLIC + "public: [arena_hard_pr44]\nbootstrap_rounds: 50\n")
    )
    result = arena_public.run(run)
    assert list(result.rated) == ["arena_hard_pr44"] and result.alpaca is None
    assert study.counts(result) == {"battles_arena_hard_pr44": 1348}
    heads = report.headlines(result)
    assert list(heads) == ["arena_hard_pr44 top: gpt-4o"]
    rows = [json.loads(line) for line in (run.dir / "records" / "ratings.jsonl").open()]
    assert [r["model"] for r in rows] == list(
        result.rated["arena_hard_pr44"].ratings.table["model"]
    )
    assert all(r["dataset"] == "arena_hard_pr44" and r["rounds"] == 50 for r in rows)
    for name, record in study.STUDY.records.items():
        for line in (run.dir / "records" / f"{name}.jsonl").open():
            record.model_validate(json.loads(line))


def test_the_package_exports_what_its_docstring_lists():
    import re

    import evalbench.arena_public as package

    assert sorted(package.__all__) == [
        "ArenaPublicParams",
        "ArenaPublicResult",
        "PUBLIC_DATASETS",
        "alpaca_eval_study",
        "public_battles",
        "run",
    ]
    doc = str(package.__doc__)
    assert all(
        re.search(rf"\b{name}\b", doc) and hasattr(package, name) for name in package.__all__
    )


def _records(run, name: str) -> list[dict]:
    return [json.loads(line) for line in (run.dir / "records" / f"{name}.jsonl").open()]


@pytest.mark.slow  # reads PRD's 65 files and fits 50 bootstrap rounds twice
def test_prd_run_style_controls_the_votes_whose_answers_are_published(tmp_path, mirror):
    from evalbench.studies import open_run

    text = PUBLIC + "public: [prd_human, arena_hard_pr44]\nbootstrap_rounds: 50\n"
    run = open_run(params_file(tmp_path, text))
    result = arena_public.run(run)
    style = result.rated["prd_human"].style
    assert style is not None and style.control is not None and len(style.battles) == 1760
    assert result.rated["arena_hard_pr44"].style.control is None
    rows = _records(run, "style_ratings")
    assert {r["dataset"] for r in rows} == {"prd_human"}  # Arena-Hard: no answers
    assert sorted(r["model"] for r in rows) == ["bard", "claude", "gpt35", "gpt4", "vicuna-13b"]
    assert all(r["rounds"] == 50 and r["rank"] - r["style_rank"] == r["rank_change"] for r in rows)
    coefs = _records(run, "style_coefficients")
    assert [c["feature"] for c in coefs] == ["tokens", "headers", "lists", "bold"]
    assert [c["estimable"] for c in coefs] == [True, False, True, True]  # no PRD answer has '# '
    battles = [b for b in _records(run, "battles") if b["dataset"] == "prd_human"]
    answered = [b for b in battles if b["tokens_a"] is not None]
    assert len(battles) == 7040 and len(answered) == 1760
    assert all("guanaco" not in b["model_a"] + b["model_b"] for b in answered)
    for name, record in study.STUDY.records.items():
        for row in _records(run, name):
            record.model_validate(row)


@pytest.mark.slow  # AlpacaEval's 5 annotation files, 2 bootstraps, 4 GLMs
def test_alpaca_run_has_style_control_and_lc_win_rates_in_its_records(tmp_path, mirror):
    from evalbench.studies import open_run

    text = PUBLIC + "public: [alpaca_eval]\nbootstrap_rounds: 40\nsample: 60\n"
    run = open_run(params_file(tmp_path, text))
    result = arena_public.run(run)
    assert result.alpaca_style is not None and result.alpaca_lc is not None
    n = len(result.alpaca.battles.drop_duplicates(["model_b", "question_id"]))
    assert n == 4 * result.alpaca_lc.set_index("model").loc["alpaca-7b", "n"]  # same instructions
    ratings = {r["model"]: r for r in _records(run, "ratings")}
    lc = result.alpaca_lc.set_index("model")
    for model, row in ratings.items():
        assert row["lc_win_rate"] == pytest.approx(lc.loc[model, "lc_win_rate"])
        assert row["leaderboard_lc_win_rate"] == pytest.approx(
            lc.loc[model, "leaderboard_lc_win_rate"])  # fmt: skip
    styled = {r["model"]: r for r in _records(run, "style_ratings")}
    assert styled["gpt4_1106_preview"]["style_rating"] == 1000.0  # the anchor, as the raw one
    assert "SUBSAMPLE" in report.key_result(result)  # the leaderboard is not reproduced on it


def test_a_sample_too_small_to_rate_says_so_with_advice_that_applies(tmp_path, monkeypatch):
    # sample: 3 on Arena-Hard keeps 14 battles in which claude-3-5-sonnet never loses: no
    # maximum-likelihood rating. Before, the run failed with "...; add battles or set
    # prior > 0", and arena_public has no prior. Here: b beats a three times out of three.
    import contextlib
    from types import SimpleNamespace

    import numpy as np
    import pandas as pd

    battles = pd.DataFrame({"model_a": ["a"] * 3, "model_b": ["b"] * 3,
                            "winner": ["b"] * 3, "question_id": ["1", "2", "3"]})  # fmt: skip
    monkeypatch.setattr(study, "public_battles", lambda name: battles)
    params = load_params(params_file(tmp_path, PUBLIC + "public: [arena_hard_pr44]\nsample: 3\n"))
    run = SimpleNamespace(params=params, timed=lambda phase: contextlib.nullcontext(),
                          rng=lambda *labels: np.random.default_rng(0))  # fmt: skip
    with pytest.raises(study.ArenaError) as caught:
        study.rate_public(run, "arena_hard_pr44")
    assert str(caught.value) == (
        "arena_hard_pr44: its 3 battles (sample of about 3) cannot be rated: the win graph "
        "splits into 2 groups, e.g. ['a'] never beat (or never lose to) the others, so the "
        "Bradley–Terry MLE does not exist; rate more battles (a larger sample, or tier: "
        "standard or full), or leave arena_hard_pr44 out of public"
    )
