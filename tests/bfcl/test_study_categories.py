"""The study with the Java/JavaScript, multi-turn and web-search categories: one categories
list, a run on registered result files, the report's sections and figures for them."""

from __future__ import annotations

import os

import matplotlib

matplotlib.use("Agg")

import pytest
from bfcl.cases import hand_made_result, study_params
from matplotlib.figure import Figure

from evalbench import bfcl
from evalbench.bfcl import backends, figures, report
from evalbench.bfcl.published import published_extras
from evalbench.bfcl.schema import CATEGORIES, MULTI_TURN, PYTHON
from evalbench.params import ParamsError
from evalbench.studies import open_run

SETS = [{"name": "g", "model": "glyphh-ada-1.1"}]


def test_one_categories_list_takes_every_name_and_group(tmp_path):
    params = study_params(tmp_path, result_sets=SETS, categories=["multi_turn", "simple_java"])
    assert params.categories == [*MULTI_TURN, "simple_java"]
    assert study_params(tmp_path, result_sets=SETS).categories == list(PYTHON)  # the default
    # all = 11 Python + 2 Java/JavaScript + 4 multi-turn + 2 web search + 3 memory
    assert (
        study_params(tmp_path, result_sets=SETS, categories="all").categories == list(CATEGORIES)
        and len(CATEGORIES) == 11 + 2 + 4 + 2 + 3
    )
    assert study_params(tmp_path, result_sets=SETS, categories="non_live").categories == [
        "simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance",
        "simple_java", "simple_javascript"]  # fmt: skip
    with pytest.raises(ParamsError, match=r"categories.*unknown BFCL category 'multi_turn_x'"):
        study_params(tmp_path, result_sets=SETS, categories="multi_turn_x")
    # the official groups memory and agentic (memory + web search)
    assert study_params(tmp_path, result_sets=SETS, categories="agentic").categories == [
        "memory_kv", "memory_vector", "memory_rec_sum", "web_search_base",
        "web_search_no_snippet"]  # fmt: skip


def test_the_old_more_categories_key_says_what_to_write(tmp_path):
    with pytest.raises(ParamsError) as caught:
        study_params(tmp_path, result_sets=SETS, categories="all", more_categories="more")
    message = str(caught.value)
    # the old 'all' was the eleven Python categories, the old 'more' every other scored one
    assert "'more_categories' is no longer a key" in message
    assert "categories: [python, java_js, multi_turn, web_search]" in message
    assert "\n" not in message
    with pytest.raises(ParamsError, match=r"e\.g\. categories: \[python, multi_turn_base\]"):
        study_params(tmp_path, result_sets=SETS, more_categories=["multi_turn_base"])


def test_sections_say_why_they_are_empty_without_multi_turn(tmp_path):
    result = hand_made_result(tmp_path)
    assert "No multi-turn item was scored" in report.multi_turn_sentence(result)
    assert "no published table" in report.official_tables_sentence(result)
    assert report.behaviour_table(result).empty and report.multi_turn_examples(result) == []
    coverage = report.coverage_v4_table(result).set_index("test_category")
    assert coverage.loc["multi_turn_base", "in BFCL v4"] == 200
    assert coverage.loc["multi_turn_base", "not scored"] == "not in this study"
    assert coverage.loc["memory_kv", "in BFCL v4"] == 155
    assert coverage.loc["memory_kv", "not scored"] == "not in this study"
    with pytest.raises(ValueError, match="no multi-turn item"):
        figures.multi_turn_outcomes(result)


@pytest.fixture(scope="module")
def small_public(tmp_path_factory):
    """glyphh-ada-1.1 and gemma on 8 items of simple_python and of four other categories."""
    if not os.environ.get("EVALBENCH_DATA_MIRROR"):
        pytest.skip("needs the public-data mirror: set EVALBENCH_DATA_MIRROR (.ci/run does)")
    if not backends.available():
        pytest.skip(f"needs the official BFCL backends: {backends.INSTALL_HINT}")
    tmp = tmp_path_factory.mktemp("more_study")
    path = tmp / "study.yaml"
    path.write_text(
        "study: bfcl\ntitle: t\nlimit_per_category: 8\ncategories: [simple_python, "
        "simple_java, multi_turn_base, multi_turn_miss_func, web_search_base]\n"
        "result_sets:\n  - {name: g, model: glyphh-ada-1.1, "
        "leaderboard_model: Glyphh Ada 1.1 (HDC+FC)}\n"
        "  - {name: gemma, model: gemma4-e4b-toolcall-v02}\n"
    )
    with pytest.MonkeyPatch.context() as env:  # module scope: the run's own folders
        env.setenv("EVALBENCH_OUTPUTS", str(tmp / "outputs"))
        env.setenv("EVALBENCH_CACHE", str(tmp / "cache"))
        return bfcl.run(open_run(path))


@pytest.mark.slow
def test_a_run_scores_the_other_categories_of_the_sets_that_have_them(small_public):
    result = small_public
    assert len(result.items) == 5 * 8
    per_system = result.verdicts.groupby("system")["test_category"].unique().map(set).to_dict()
    assert per_system["gemma"] == {"simple_python"}  # gemma submitted no other category
    assert per_system["g"] == {"simple_python", "simple_java", "multi_turn_base",
                               "multi_turn_miss_func", "web_search_base"}  # fmt: skip
    assert len(result.multi_turn) == 16 and set(result.multi_turn["system"]) == {"g"}
    # scored categories are never filled in from the published table; those not studied are
    extra = published_extras(result.params, set(result.verdicts["test_category"]))
    assert extra is not None
    assert "simple_java" not in set(extra["test_category"])
    assert {"memory_kv", "multi_turn_long_context"} <= set(extra["test_category"])


@pytest.mark.slow
def test_the_new_report_sections_and_figures(small_public):
    result = small_public
    assert "g: " in report.multi_turn_sentence(result)
    tables = report.official_tables_table(result)
    assert set(tables["table"]) == {"data_non_live", "data_live", "data_multi_turn",
                                    "data_agentic", "data_overall"}  # fmt: skip
    assert "cannot be without the memory categories" in report.official_tables_sentence(result)
    behaviours = report.behaviour_table(result)
    assert behaviours["n"].iloc[0] == 16 and "share" in behaviours
    assert set(report.efficiency_table(result)["test_category"]) == {
        "multi_turn_base", "multi_turn_miss_func"}  # fmt: skip
    assert len(report.backend_table(result)) >= 1
    for example in report.multi_turn_examples(result):
        assert example["system"] == "g" and example["error_type"].startswith("multi_turn:")
    assert isinstance(figures.multi_turn_outcomes(result), Figure)
    assert isinstance(figures.multi_turn_behaviours(result), Figure)


def test_a_local_result_folder_is_scored_on_the_categories_it_has(tmp_path):
    if not os.environ.get("EVALBENCH_DATA_MIRROR"):
        pytest.skip("needs the public-data mirror: set EVALBENCH_DATA_MIRROR (.ci/run does)")
    from evalbench.bfcl.data import write_results
    from evalbench.bfcl.study import load_study_items, score_result_set

    lines = bfcl.fetch_results("glyphh-ada-1.1", ["simple_java", "web_search_base"])
    written = write_results(lines, tmp_path / "res", "mine")
    # the official result sub-folders (get_general_grouping)
    assert sorted(p.relative_to(tmp_path / "res").as_posix() for p in written) == [
        "mine/agentic/BFCL_v4_web_search_base_result.json",
        "mine/non_live/BFCL_v4_simple_java_result.json",
    ]
    params = study_params(tmp_path, result_sets=[{"name": "mine", "folder": "res", "style": "fc"}],
                          categories=["java_js", "web_search_base"], limit_per_category=5)  # fmt: skip
    known = {item.id for item in bfcl.load(params.categories)}
    scores = score_result_set(params.result_sets[0], load_study_items(params), known)
    # simple_javascript is studied but the folder has no file for it: not submitted, no error
    assert scores.verdicts.groupby("test_category").size().to_dict() == {
        "simple_java": 5, "web_search_base": 5}  # fmt: skip
    assert scores.multi_turn.empty  # no multi-turn item
