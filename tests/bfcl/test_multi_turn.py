"""The multi-turn check, rule by rule, on a hand-made item; each verdict is also compared with
the official ``multi_turn_checker`` (bfcl-eval, installed without its dependencies)."""

from __future__ import annotations

import itertools
import json

import pytest

from evalbench.bfcl import backends
from evalbench.bfcl.multi_turn import (
    EMPTY_TURN,
    FORCE_TERMINATED,
    INFERENCE_ERROR,
    RESPONSE_MISMATCH,
    STATE_MISMATCH,
    check_multi_turn,
    decode_step,
    decode_turns,
)
from evalbench.bfcl.schema import MultiTurnItem

pytestmark = pytest.mark.skipif(
    not backends.available(), reason=f"needs the official BFCL backends: {backends.INSTALL_HINT}"
)

CONFIG = {
    "GorillaFileSystem": {
        "root": {
            "alex": {
                "type": "directory",
                "contents": {"notes.txt": {"type": "file", "content": "b line\na line"}},
            }
        }
    }
}
# turn 0: make a folder; turn 1: held out (no ground truth); turn 2: read the notes
ITEM = MultiTurnItem(
    id="multi_turn_base_990",
    category="multi_turn_base",
    question=[[{"role": "user", "content": "q"}], [], [{"role": "user", "content": "q"}]],
    functions=[],
    initial_config=CONFIG,
    involved_classes=["GorillaFileSystem", "MathAPI"],
    ground_truth=[["mkdir(dir_name='out')"], [], ["cat(file_name='notes.txt')"]],
    missed_function={},
)


def fc(name: str, **args) -> dict[str, str]:
    return {name: json.dumps(args)}


RIGHT = [
    [[fc("mkdir", dir_name="out")]],
    [],
    ["Reading it now.", [fc("cat", file_name="notes.txt")], "Done."],
]
_models = (f"evalbench_mt_{n}" for n in itertools.count())


def both(result, item=ITEM):
    """(evalbench's check, the official (valid, error_type)) for one result."""
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker

    model = next(_models)  # the official instances live in module globals: one name per run
    ours = check_multi_turn(item, result, style="fc", model_name=model)
    if ours.error_type in (INFERENCE_ERROR, FORCE_TERMINATED):
        return ours, None  # decided before the official multi_turn_checker runs
    strings = [[[c.source for c in step] for step in turn] for turn in decode_turns(result, "fc")]
    entry = {"id": item.id, "initial_config": item.initial_config,
             "involved_classes": item.involved_classes}  # fmt: skip
    official = multi_turn_checker(strings, item.ground_truth, entry, item.category, model)
    return ours, (official["valid"], official.get("error_type"))


def test_a_right_answer_passes_and_chat_steps_are_skipped():
    ours, official = both(RIGHT)
    assert (ours.valid, ours.error_type) == official == (True, None)
    assert [len(turn) for turn in ours.decoded] == [1, 0, 1]  # the two texts are not calls


def test_not_a_list_and_a_wrong_number_of_turns_fail_first():
    assert check_multi_turn(ITEM, "text").error_type == INFERENCE_ERROR
    short = check_multi_turn(ITEM, RIGHT[:2])
    assert short.error_type == FORCE_TERMINATED
    assert "result turns (2) does not match the length of the ground truth turns (3)" in short.error


def test_a_turn_without_calls_where_the_truth_has_some_is_empty():
    ours, official = both([[], [], RIGHT[2]])
    assert (ours.valid, ours.error_type, ours.turn) == (False, EMPTY_TURN, 0)
    assert official == (False, EMPTY_TURN)


def test_a_different_state_fails_before_the_responses():
    ours, official = both([[[fc("mkdir", dir_name="output")]], [], RIGHT[2]])
    assert (ours.error_type, ours.turn) == (STATE_MISMATCH, 0) and official[1] == STATE_MISMATCH
    assert ours.details == {"class": "GorillaFileSystem", "differences": ["root"]}
    assert ours.error == (
        "Model instance for GorillaFileSystem does not match the state with ground truth instance."
    )


def test_a_missing_read_is_a_response_mismatch():
    # same state (cat changes nothing) but the file's content was never returned
    ours, official = both([RIGHT[0], [], [[fc("ls")]]])
    assert (ours.error_type, ours.turn) == (RESPONSE_MISMATCH, 2)
    assert official == (False, RESPONSE_MISMATCH)
    assert ours.details == {"missing_items": ['{"file_content": "b line\\na line"}']}


def test_results_of_earlier_turns_count_and_held_out_turns_still_run():
    # the read happens in the held-out turn: not checked there, but it counts at turn 2
    early = [RIGHT[0], [[fc("cat", file_name="notes.txt")]], [[fc("pwd")]]]
    ours, official = both(early)
    assert (ours.valid, official) == (True, (True, None))
    # a state change in the held-out turn is seen by the next check
    moved = [RIGHT[0], [[fc("rmdir", dir_name="out")]], RIGHT[2]]
    ours, official = both(moved)
    assert (ours.error_type, ours.turn) == (STATE_MISMATCH, 2) and official[1] == STATE_MISMATCH


def test_duplicated_ground_truth_results_need_as_many_model_results():
    twice = ITEM._replace(
        ground_truth=[["mkdir(dir_name='out')"], [], ["cat(file_name='notes.txt')"] * 2]
    )
    once, official = both(RIGHT, twice)
    assert (once.error_type, official[1]) == (RESPONSE_MISMATCH, RESPONSE_MISMATCH)
    two = [RIGHT[0], [], [[fc("cat", file_name="notes.txt"), fc("cat", file_name="notes.txt")]]]
    ours, official = both(two, twice)
    assert (ours.valid, official) == (True, (True, None))


@pytest.mark.parametrize(
    ("step", "decodes"),
    [
        ([{"cd": '{"folder": "a"}'}], True),
        ({"cd": '{"folder": "a"}'}, True),  # one call as a dict
        ([{"cd": {"folder": "a"}}], True),  # already decoded arguments
        ("I will now list the files.", False),
        ([{"cd": "not json"}], False),
        ([{"cd": "[1, 2]"}], False),  # arguments that are not an object
        ([], False),
        (None, False),
    ],
)
def test_fc_steps_that_do_not_decode_are_skipped(step, decodes):
    assert (decode_step(step, "fc") is not None) is decodes


def test_prompt_and_auto_styles():
    calls = decode_step("[cd(folder='a'), ls(a=True)]", "prompt")
    assert calls is not None and [c.source for c in calls] == ["cd(folder='a')", "ls(a=True)"]
    assert decode_step("Let me check.", "prompt") is None
    assert decode_step([{"cd": '{"folder": "a"}'}], "auto") is not None
    assert decode_step("[cd(folder='a')]", "auto") is not None
