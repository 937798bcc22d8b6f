"""The BFCL study: params, the live path end to end (generate, check, official files,
resume), result-set folders, the published leaderboard numbers."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml
from bfcl.cases import gorilla, study_params, write_jsonl

from evalbench import bfcl
from evalbench.bfcl.data import published_row, read_result_dir, read_results, write_results
from evalbench.bfcl.metrics import injected_vs_detected
from evalbench.bfcl.records import VerdictRecord
from evalbench.bfcl.schema import CALL_FAILED, LIVE, BfclDataError, ResultLine
from evalbench.bfcl.study import (
    answer_jobs,
    leaderboard_comparison,
    load_study_items,
    published_extras,
    run_study,
    score_result_set,
)
from evalbench.models import ModelSpec
from evalbench.params import ParamsError
from evalbench.records import read_jsonl
from evalbench.studies import load_params, open_run

# --------------------------------------------------------------------------- params


def test_params_validate_names_modes_and_sources(tmp_path):
    sims = [{"name": "a", "provider": "sim"}, {"name": "b", "provider": "sim"}]
    params = study_params(tmp_path, categories="live", systems=sims, system_modes={"b": "tools"})
    assert params.categories == list(LIVE)
    assert (params.mode_of("a"), params.mode_of("b")) == ("prompt", "tools")
    assert [s.name for s in params.model_specs()] == ["a", "b"] and params.simulated
    public = study_params(tmp_path, result_sets=[{"name": "g", "model": "glyphh-ada-1.1"}])
    assert public.result_sets[0].decode_style == "fc" and public.model_specs() == []
    assert not public.simulated
    (tmp_path / "res").mkdir()
    local = study_params(tmp_path, result_sets=[{"name": "m", "folder": "res"}])
    assert local.result_sets[0].folder == str(tmp_path / "res")
    assert local.result_sets[0].decode_style == "auto"
    bad = [
        ({}, "at least one entry"),
        ({"systems": [*sims, sims[0]]}, "names must be unique"),
        ({"systems": sims, "system_modes": {"c": "tools"}}, "unknown system 'c'"),
        ({"systems": sims, "mode": "json"}, "mode: expected one of"),
        ({"systems": sims, "categories": ["simple"]}, "unknown BFCL category 'simple'"),
        ({"result_sets": [{"name": "x"}]}, "exactly one of 'model', 'folder'"),
        ({"result_sets": [{"name": "x", "model": "nobody"}]}, "no registered BFCL results"),
        ({"result_sets": [{"name": "x", "folder": "nowhere"}]}, "data path not found"),
        (
            {
                "categories": "live",
                "result_sets": [
                    {"name": "x", "model": "glyphh-ada-1.1", "categories": ["multiple"]}
                ],
            },
            "categories \\['multiple'\\] are not studied",
        ),
    ]
    for fields, message in bad:
        with pytest.raises(ParamsError, match=message):
            study_params(tmp_path, **fields)


def test_shipped_params_files_load():
    root = Path(__file__).resolve().parents[2] / "params"
    public = load_params(root / "bfcl_public.yaml")
    assert [r.name for r in public.result_sets] == list(bfcl.PUBLIC_SYSTEMS)
    demo = load_params(root / "bfcl_demo.yaml")
    modes = {s.name: demo.mode_of(s.name) for s in demo.systems}
    assert sorted(modes.values()) == ["prompt", "prompt", "tools"] and demo.simulated


# --------------------------------------------------------------------------- the study end to end


STUDY_CATEGORIES = ["simple_python", "multiple", "parallel", "irrelevance", "live_relevance"]


def _study_file(tmp_path: Path, **fields) -> Path:
    gorilla(tmp_path / "gorilla")
    body = {
        "study": "bfcl",
        "title": "test",
        "data": "gorilla",
        "categories": STUDY_CATEGORIES,
        "systems": [
            {"name": "tooly", "provider": "sim", "sim": {"accuracy": 0.5, "malformed_rate": 0.1}},
            {
                "name": "texty",
                "provider": "sim",
                "sim": {"accuracy": 0.6, "malformed_rate": 0.1, "error_rate": 0.1},
            },
        ],
        "system_modes": {"tooly": "tools"},
        **fields,
    }
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(body))
    return path


@pytest.mark.slow
def test_live_study_generates_checks_writes_official_files_and_resumes(tmp_path):
    path = _study_file(tmp_path)
    run = open_run(path)
    items = load_study_items(run.params)
    assert len(items) == 5 * 12
    verdicts = run_study(run, items).verdicts
    # one record per (system, category, id), with the fields the issue names
    records = read_jsonl(run.dir / "records" / "bfcl.jsonl")
    assert len(records) == 2 * 60
    keys = {(r["system"], r["test_category"], r["id"]) for r in records}
    assert len(keys) == len(records)
    assert {"system", "test_category", "id", "valid", "error_type"} <= set(records[0])
    VerdictRecord.model_validate(records[0])  # the records follow the schema
    assert set(verdicts["mode"]) == {"tools", "prompt"}
    # every verdict is what the injected mistake implies, or a simulated API failure
    truth = injected_vs_detected(verdicts)
    off = truth[~truth["as_expected"]]
    assert set(off["verdict"]) <= {CALL_FAILED}
    failed = verdicts[verdicts["error_type"] == CALL_FAILED]
    assert set(failed["system"]) == {"texty"} and len(failed) > 0  # texty's error rate
    assert {"none", "malformed"} <= set(verdicts["injected"])
    # official result files: re-read and re-scored they give the same verdicts (interop)
    for system, style, u2d in [("tooly", "fc", True), ("texty", "prompt", False)]:
        folder = run.dir / "bfcl_results" / system
        assert (folder / "non_live" / "BFCL_v4_simple_python_result.json").is_file()
        assert (folder / "live" / "BFCL_v4_live_relevance_result.json").is_file()
        lines = read_result_dir(folder)
        ours = verdicts[(verdicts["system"] == system) & (verdicts["error_type"] != CALL_FAILED)]
        assert sorted(line.id for line in lines) == sorted(ours["id"])  # failed calls left out
        again = bfcl.score_results(
            items, lines, system=system, style=style, underscore_to_dot=u2d, allow_missing=True
        )
        merged = again.merge(ours, on="id")
        assert (merged["valid_x"] == merged["valid_y"]).all()
        assert (merged["error_type_x"].fillna("") == merged["error_type_y"].fillna("")).all()
    tools_line = read_results(
        run.dir / "bfcl_results" / "tooly" / "non_live" / "BFCL_v4_simple_python_result.json"
    )[0]
    assert isinstance(tools_line.result, (list, str)) and tools_line.latency is not None
    # a rerun resumes: no request for answered items, identical verdicts
    rerun = open_run(path)
    again = run_study(rerun, items).verdicts
    assert rerun.ledger.summary().get("tooly", {}).get("requests", 0) == 0
    pd.testing.assert_frame_equal(
        again.drop(columns=["latency"]), verdicts.drop(columns=["latency"])
    )


def test_planned_mistakes_do_not_depend_on_the_subset(tmp_path):
    run = open_run(_study_file(tmp_path))
    items = load_study_items(run.params)
    spec = run.params.systems[0]
    full = {j.key: j.sim.truth["mistake"] for j in answer_jobs(items, spec, "tools", seed=0)}
    part = answer_jobs(items[::7], spec, "tools", seed=0)
    assert all(full[j.key] == j.sim.truth["mistake"] for j in part)
    real = ModelSpec(name="real", provider="openai", model="m")
    assert all(j.sim is None for j in answer_jobs(items[:3], real, "prompt", seed=0))
    other_seed = answer_jobs(items, spec, "tools", seed=1)
    assert [j.sim.truth["mistake"] for j in other_seed] != list(full.values())


def _result_folder(tmp_path: Path, rows: list) -> Path:
    folder = tmp_path / "results" / "mine"
    write_jsonl(folder / "non_live" / "BFCL_v4_simple_python_result.json", rows)
    return tmp_path / "results"


def test_result_set_folders_subsets_and_their_errors(tmp_path):
    gorilla(tmp_path / "gorilla")
    good = [
        {"id": f"simple_python_{i}", "result": f"[geo.area(base={i}, height={i + 1})]"}
        for i in range(12)
    ]
    folder = _result_folder(tmp_path, good)
    common = {"data": "gorilla", "categories": ["simple_python", "multiple"]}
    params = study_params(
        tmp_path,
        result_sets=[{"name": "m", "folder": "results", "style": "prompt"}],
        limit_per_category=3,
        **common,
    )
    items = load_study_items(params)
    known = {it.id for it in bfcl.load(params.categories, source=params.data)}
    scored = score_result_set(params.result_sets[0], items, known).verdicts
    # results of known items outside the 3-item subset are skipped; multiple is not submitted
    assert scored["id"].tolist() == ["simple_python_0", "simple_python_1", "simple_python_2"]
    assert scored["valid"].all() and set(scored["mode"]) == {"results"}
    # an unknown id is an error naming file and line, even when a subset is scored
    write_jsonl(
        folder / "mine" / "non_live" / "BFCL_v4_simple_python_result.json",
        [*good, {"id": "simple_python_99", "result": "[]"}],
    )
    with pytest.raises(BfclDataError, match=r"BFCL_v4_simple_python_result.json:13: unknown id"):
        score_result_set(params.result_sets[0], items, known)
    # a bad JSON line names file and line
    write_jsonl(
        folder / "mine" / "non_live" / "BFCL_v4_simple_python_result.json", [good[0], "{broken"]
    )
    with pytest.raises(BfclDataError, match=r"BFCL_v4_simple_python_result.json:2: not a valid"):
        score_result_set(params.result_sets[0], items, known)
    # a category the set must cover but has no file for
    strict = study_params(
        tmp_path,
        result_sets=[{"name": "m", "folder": "results", "categories": ["multiple"]}],
        **common,
    )
    with pytest.raises(BfclDataError, match="no result files for category 'multiple'"):
        score_result_set(strict.result_sets[0], load_study_items(strict))


# --------------------------------------------------------------------------- published scores


@pytest.mark.slow
def test_glyphh_matches_every_published_number(public_items, mirror, tmp_path):
    params = study_params(
        tmp_path,
        result_sets=[
            {
                "name": "glyphh",
                "model": "glyphh-ada-1.1",
                "leaderboard_model": "Glyphh Ada 1.1 (HDC+FC)",
            }
        ],
    )
    verdicts = score_result_set(params.result_sets[0], public_items).verdicts
    summary = bfcl.summarize(verdicts, extra_categories=published_extras(params))
    table = leaderboard_comparison(summary, params).set_index("metric")
    compared = table.dropna(subset=["published"])
    assert len(compared) == 10 + 5  # 10 submitted categories, 5 aggregates with a number
    # published percentages have two decimals: agreement to rounding (half of 0.0001)
    assert (compared["difference"].abs() <= 0.00005).all()
    assert table.loc["overall", "published"] == 0.7450
    assert math.isnan(table.loc["relevance", "published"])  # N/A: no relevance file submitted
    with pytest.raises(BfclDataError, match="no model 'Nobody'"):
        published_row("data_overall", "Nobody")


# --------------------------------------------------------------------------- run(run) and STUDY


def test_run_returns_every_table_the_notebook_shows(tmp_path):
    run = open_run(_study_file(tmp_path))
    result = bfcl.run(run)
    verdicts = result.verdicts
    assert len(result.items) == 5 * 12 and len(verdicts) == 2 * 60
    assert result.order == ["tooly", "texty"] and result.simulated == {"tooly", "texty"}
    assert result.truth is not None and result.truth["items"].sum() == len(verdicts)
    assert result.result_files["result files"].tolist() == [5, 5]  # one file per category
    assert set(result.usage["system"]) == {"tooly", "texty"}
    assert result.comparison.empty and len(result.examples) > 0
    assert result.sources[["system", "outputs", "decoder / mode"]].values.tolist() == [
        ["tooly", "asked live", "tools"],
        ["texty", "asked live", "prompt"],
    ]
    failed_calls = int((verdicts["error_type"] == CALL_FAILED).sum())
    assert failed_calls > 0
    assert bfcl.study.counts(result) == {
        "items": 60,
        "records": 120,
        "failed": int((~verdicts["valid"]).sum()),
        "call_errors": failed_calls,
    }
    study = bfcl.study.STUDY
    assert study.kind == "bfcl" and study.notebook == "bfcl_categories.ipynb"
    for name, record_type in study.records.items():  # every written line is a valid record
        path = run.dir / "records" / f"{name}.jsonl"
        if name in study.optional_records and not path.exists():
            continue  # steps: only a live run with multi-turn items converses
        for row in read_jsonl(path):
            record_type.model_validate(row)
    heads = study.headlines(result)
    share = verdicts.groupby("system", sort=False)["valid"].mean()
    assert heads == {f"{s} accuracy (60 items scored)": share[s] for s in ("tooly", "texty")}


def test_system_sources_list_result_sets_and_live_systems(tmp_path):
    (tmp_path / "res").mkdir()
    params = study_params(
        tmp_path,
        result_sets=[
            {"name": "g", "model": "glyphh-ada-1.1"},
            {"name": "mine", "folder": "res", "style": "prompt"},
        ],
        systems=[{"name": "s", "provider": "openai", "model": "gpt-x"}],
        mode="tools",
    )
    table = bfcl.study.system_sources(params)
    assert table["system"].tolist() == ["g", "mine", "s"]
    assert table["outputs"].tolist() == ["result files", "result files", "asked live"]
    assert table.loc[0, "source"].endswith("/result/glyphh-ada-1.1/")
    assert table.loc[1, "source"] == str(tmp_path / "res")
    assert table["decoder / mode"].tolist() == ["fc", "prompt", "tools"]
    assert table.loc[2, "source"] == "openai: gpt-x"


def test_result_file_counts_per_system(tmp_path):
    folder = tmp_path / "bfcl_results"
    lines = [ResultLine("simple_python_0", "simple_python", "[f()]")]
    write_results(lines, folder, "a")
    write_results([*lines, ResultLine("live_simple_0-0-0", "live_simple", "")], folder, "b")
    table = bfcl.data.result_file_counts(folder)
    assert table.values.tolist() == [["bfcl_results/a/", 1], ["bfcl_results/b/", 2]]
    assert bfcl.data.result_file_counts(tmp_path / "none").empty


def test_the_package_exports_what_its_docstring_lists():
    assert sorted(bfcl.__all__) == [
        "BfclParams", "BfclResult", "EXAMPLE_FIELDS", "GROUPS", "PUBLIC_SYSTEMS",
        "RELEVANCE_CATEGORIES",
        "check", "decode", "fetch_results", "load", "run", "score_results", "summarize",
    ]  # fmt: skip
    doc = str(bfcl.__doc__)
    assert all(re.search(rf"\b{name}\b", doc) and hasattr(bfcl, name) for name in bfcl.__all__)
