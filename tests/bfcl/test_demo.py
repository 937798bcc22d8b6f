"""evalbench's BFCL-format demo suite (``evalbench/demo/bfcl``, ``data: demo``).

The demo items are evalbench's own, written in BFCL's file format so the demo study runs
offline. These tests read them with the loader's own checks (every row validated as the
pinned files are), run every multi-turn ground-truth call in the official ``bfcl-eval``
backend classes, and check that what the simulated systems inject is what the checker flags.
"""

from __future__ import annotations

import inspect
import json

import numpy as np
import pytest

from evalbench import bfcl, sources
from evalbench.bfcl import backends, memory, multi_turn, sim
from evalbench.bfcl.data import load_format_items
from evalbench.bfcl.files import DOC_FILES, demo_categories, demo_path, function_docs
from evalbench.bfcl.records import BfclParams
from evalbench.bfcl.replay import ERROR_PREFIX, Side, source_call
from evalbench.bfcl.schema import MEMORY_SCENARIOS, BfclDataError, Item, MultiTurnItem
from evalbench.bfcl.scoring import correct_calls, render_calls, score_item

HELD = [
    "simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance",
    "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple", "live_relevance",
    "live_irrelevance", "multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param",
    "multi_turn_long_context", "memory_kv", "memory_rec_sum", "format_sensitivity",
]  # fmt: skip
SIZES = {
    **dict.fromkeys(["simple_python", "multiple", "parallel", "parallel_multiple"], 8),
    "irrelevance": 8, "live_simple": 4, "live_multiple": 4, "live_parallel": 3,
    "live_parallel_multiple": 3, "live_relevance": 3, "live_irrelevance": 4,
    "multi_turn_base": 3, "multi_turn_miss_func": 1, "multi_turn_miss_param": 1,
    "multi_turn_long_context": 1, "memory_kv": 5 + 5, "memory_rec_sum": 5 + 5,
}  # fmt: skip
"""Items written per category (memory: 2 scenarios x 5 questions)."""


@pytest.fixture(autouse=True)
def _no_pinned_file(monkeypatch):
    """The demo never reads a pinned BFCL file: any attempt fails the test."""

    def refuse(name, **kwargs):
        raise AssertionError(f"the demo suite read the pinned file {name}")

    monkeypatch.setattr(sources, "fetch", refuse)


@pytest.fixture(scope="module")
def items():
    return bfcl.load([c for c in HELD if c != "format_sensitivity"], source="demo")


def test_the_demo_holds_these_categories_with_these_many_items(items):
    assert demo_categories() == HELD
    counts = {cat: sum(it.category == cat for it in items) for cat in SIZES}
    assert counts == SIZES
    # Ids never collide with BFCL's own (compare pairs items by id across runs).
    assert all("_demo" in it.id for it in items)
    assert len({it.id for it in items}) == len(items)


def test_every_correct_single_turn_answer_is_valid(items):
    for item in (it for it in items if isinstance(it, Item)):
        if item.category in ("irrelevance", "live_irrelevance"):
            raw = "None of the functions fits."  # abstaining is the right answer
        elif item.category == "live_relevance":
            raw = render_calls(sim.sim_calls(item, "none", np.random.default_rng(0)))
        else:
            raw = render_calls(correct_calls(item))
        verdict = score_item(item, raw, system="demo", style="prompt")
        assert verdict.valid, (item.id, verdict.error_type, verdict.error)


def test_every_mistake_the_simulator_injects_is_flagged(items):
    checked = 0
    for item in (it for it in items if isinstance(it, Item)):
        for mistake in (*sim.applicable_mistakes(item, "prompt"), "malformed"):
            calls = sim.sim_calls(item, mistake, np.random.default_rng(1))
            raw = sim.sim_respond(None, None, np.random.default_rng(1), item=item,
                                  mode="prompt", mistake=mistake).text  # fmt: skip
            verdict = score_item(item, raw, system="demo", style="prompt")
            abstains = item.category.endswith("irrelevance") and mistake == "malformed"
            assert verdict.valid is abstains, (item.id, mistake, calls, verdict.error_type)
            checked += 1
    assert checked > 5 * len(items) // 2  # every item has several applicable mistakes


def test_every_multi_turn_ground_truth_call_runs_in_the_official_backends(items):
    ran = 0
    for item in (it for it in items if isinstance(it, MultiTurnItem)):
        side = Side(item.involved_classes, item.initial_config, item.long_context, "demo")
        for turn in item.ground_truth:
            for call, result in zip(turn, side.run(map(source_call, turn)), strict=True):
                assert not result.startswith((ERROR_PREFIX, '{"error"')), (item.id, call, result)
                ran += 1
        assert side.unsupported == []
    assert ran == 6 + 3 + 4 + 4 + 2 + 3  # the calls written in the six items, item by item


def test_the_multi_turn_ground_truth_passes_the_check_and_held_out_turns_are_empty(items):
    for item in (it for it in items if isinstance(it, MultiTurnItem)):
        result = [[render_calls(calls), "Done."] if calls else ["Which function should I use?"]
                  for calls in (sim.planned_calls(item, sim.MultiTurnPlan("none"), t)
                                for t in range(len(item.ground_truth)))]  # fmt: skip
        check = multi_turn.check_multi_turn(item, result, style="prompt")
        assert check.valid, (item.id, check.error_type, check.error)
        held_out = [t for t, calls in enumerate(item.ground_truth) if not calls]
        expected = {"multi_turn_miss_func": [1], "multi_turn_miss_param": [1]}
        assert held_out == expected.get(item.category, []), item.id
    miss_func = next(it for it in items if it.category == "multi_turn_miss_func")
    assert miss_func.missed_function == {2: ["sort"]} and miss_func.question[2] == []


@pytest.mark.parametrize("mistake", ["missing_call", "wrong_argument", "no_call"])
def test_multi_turn_mistakes_that_change_the_outcome_are_flagged(items, mistake):
    """A left-out call, a changed argument or no call fails the official check at every
    turn where the simulator can make it (an extra or reordered call may legitimately pass:
    the official check compares states and results, not call lists)."""
    options = 0
    for item in (it for it in items if isinstance(it, MultiTurnItem)):
        for turn in sim._mistake_turns(item, mistake):
            plan = sim.MultiTurnPlan(mistake, turn)
            result = [[render_calls(c), "Done."] if c else ["I cannot."]
                      for c in (sim.planned_calls(item, plan, t)
                                for t in range(len(item.ground_truth)))]  # fmt: skip
            check = multi_turn.check_multi_turn(item, result, style="prompt")
            assert not check.valid, (item.id, mistake, turn)
            options += 1
    assert options >= 6


def test_the_function_docs_describe_the_official_classes():
    for cls in ("GorillaFileSystem", "MathAPI", "MessageAPI", "TwitterAPI", "TicketAPI",
                "MemoryAPI_kv", "MemoryAPI_rec_sum"):  # fmt: skip
        docs = function_docs(cls, "demo")
        official = backends.backend_class(cls)
        assert [d["name"] for d in docs] == sorted(backends.method_names(cls)), cls
        for doc in docs:
            signature = inspect.signature(getattr(official, doc["name"]))
            params = [p for p in signature.parameters if p != "self"]
            assert sorted(doc["parameters"]["properties"]) == sorted(params), doc["name"]
            required = [p for p in params if signature.parameters[p].default is inspect._empty]
            assert doc["parameters"]["required"] == required, doc["name"]
        assert (demo_path() / "multi_turn_func_doc" / f"{DOC_FILES[cls]}.json").is_file()


def test_memory_questions_answers_and_prerequisite_conversations(items):
    questions = [it for it in items if it.category == "memory_kv"]
    assert {q.scenario for q in questions} == {"customer", "student"}
    for scenario in ("customer", "student"):
        chain = memory.load_prereqs("memory_kv", scenario, "demo")
        assert [p.id for p in chain] == [
            f"memory_kv_prereq_demo{n}-{scenario}-{k}"
            for k, n in enumerate((0, 1) if scenario == "customer" else (2, 3))
        ]
        said = " ".join(turn[0]["content"] for p in chain for turn in p.question)
        for q in (q for q in questions if q.scenario == scenario):
            assert q.source in said, q.id  # the answer was said in a prerequisite conversation
            assert any(answer in q.source for answer in q.answers), q.id
    for q in questions:
        right = [[str({"answer": q.answers[0], "context": "from our talks"})]]
        wrong = [[str({"answer": "I do not know", "context": "I do not know"})]]
        assert memory.check_memory(q, right, style="prompt").valid, q.id
        assert not memory.check_memory(q, wrong, style="prompt").valid, q.id


def test_memory_scenarios_are_official_ones_so_the_official_prompts_apply(items):
    assert {it.scenario for it in items if it.category.startswith("memory")} <= set(
        MEMORY_SCENARIOS
    )


def test_format_sensitivity_selects_demo_items_of_its_official_categories():
    chosen = load_format_items(source="demo")
    selection = json.loads((demo_path() / "BFCL_v4_format_sensitivity.json").read_text())
    assert list(selection) == [
        "simple_python",
        "parallel",
        "multiple",
        "parallel_multiple",
        "live_simple",
        "live_multiple",
        "live_parallel",
        "live_parallel_multiple",
    ]  # the official file's categories
    # the official order: the categories as listed, each category's items in file order
    in_file_order = [sorted(ids, key=lambda i: int(i.rsplit("demo", 1)[1])) for ids in
                     selection.values()]  # fmt: skip
    assert [it.id for it in chosen] == [i for ids in in_file_order for i in ids]
    assert len(chosen) == 8 * 2


def test_data_demo_refuses_what_the_demo_cannot_give():
    base = {"study": "bfcl", "title": "t", "data": "demo",
            "systems": [{"name": "s", "provider": "sim"}]}  # fmt: skip
    with pytest.raises(ValueError, match=r"the demo suite has no simple_java, simple_javascript"):
        BfclParams.model_validate({**base, "categories": ["python", "java_js"]})
    public = {"name": "g", "model": "glyphh-ada-1.1"}
    with pytest.raises(ValueError, match=r"result sets \['g'\] answer BFCL's items"):
        BfclParams.model_validate({**base, "categories": ["python"], "result_sets": [public]})
    assert BfclParams.model_validate({**base, "categories": HELD}).data == "demo"


def test_a_category_the_demo_lacks_is_a_one_line_error_naming_it():
    with pytest.raises(
        BfclDataError, match=r"no file for 'bfcl/question/simple_java'.*data: registry"
    ):
        bfcl.load("simple_java", source="demo")
