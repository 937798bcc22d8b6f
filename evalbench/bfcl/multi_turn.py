"""The official multi-turn check: replay the model's calls and the ground truth, compare.

Reimplements (does not import or copy) ``_evaluate_single_multi_turn_entry`` of
``bfcl_eval/eval_checker/eval_runner.py`` and ``multi_turn_checker`` of
``bfcl_eval/eval_checker/multi_turn_eval/multi_turn_checker.py`` (bfcl-eval 2026.3.23,
gorilla commit 6ea5797), with the official backend classes (:mod:`.backends`) and
evalbench's executor (:mod:`.replay`). Per item, in the official order:

1. a ``result`` that is not a list is ``multi_turn:inference_error``; a number of turns
   other than the ground truth's is ``multi_turn:force_terminated``;
2. each step is decoded (a step that does not decode, or decodes to nothing, is skipped:
   chat text between calls is allowed);
3. turn by turn: the model's steps run in the model's instances, the turn's ground truth in
   the ground truth's (both created from the item's initial configuration, persisting
   across turns; long-context categories load the long-context scenario). A turn whose
   ground truth has calls but where the model made none is
   ``multi_turn:empty_turn_model_response``; a turn whose ground truth is empty (the
   held-out turns) is not checked, though the model's calls there still run. Otherwise the
   instances' public attributes must be equal (``multi_turn:instance_state_mismatch``,
   first class in ``involved_classes`` order) and every ground-truth result of the turn
   must be among the results of *all* the model's calls so far, as a multiset
   (``multi_turn:execution_response_mismatch``).

The first failing check decides; messages are the official ones.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from .decode import decode
from .replay import ExecCall, Side, fc_call, prompt_call, source_call
from .schema import MultiTurnItem

INFERENCE_ERROR = "multi_turn:inference_error"
FORCE_TERMINATED = "multi_turn:force_terminated"
EMPTY_TURN = "multi_turn:empty_turn_model_response"
STATE_MISMATCH = "multi_turn:instance_state_mismatch"
RESPONSE_MISMATCH = "multi_turn:execution_response_mismatch"
ERROR_TYPES = (INFERENCE_ERROR, FORCE_TERMINATED, EMPTY_TURN, STATE_MISMATCH, RESPONSE_MISMATCH)
STYLES = ("fc", "prompt", "auto")

Step = tuple[ExecCall, ...]


class TurnTrace(NamedTuple):
    """What ran in one turn (for diagnostics; not part of the verdict)."""

    model: list[list[str]]
    """Per decoded step, the result of each model call."""
    truth: list[str]
    """The result of each ground-truth call."""


class MultiTurnCheck(NamedTuple):
    """The verdict on one multi-turn item."""

    valid: bool
    error_type: str | None = None
    error: str | None = None
    turn: int | None = None
    """The turn that failed."""
    details: dict[str, Any] | None = None
    """Official-style details: differing attributes, or missing results."""
    decoded: list[list[Step]] | None = None
    """The decoded steps per turn (None when the result was not a list of turns)."""
    trace: tuple[TurnTrace, ...] = ()
    unsupported: tuple[str, ...] = ()
    """Expressions the executor did not evaluate (:mod:`.replay`); empty in practice."""


# --------------------------------------------------------------------------- decoding


def decode_step(step: Any, style: str) -> Step | None:
    """One step's output -> its calls; None when the official decoder would skip it.

    ``fc``: ``convert_to_function_call`` (``[{name: "<JSON args>"}]`` or one such dict);
    ``prompt``: ``default_decode_execute_prompting`` (Python call text); ``auto``: ``fc``
    for lists and dicts, ``prompt`` for text.
    """
    if style == "auto":
        style = "prompt" if isinstance(step, str) else "fc"
    try:
        calls = _fc_calls(step) if style == "fc" else _prompt_calls(step)
    except Exception:  # the official runner skips any step that does not decode
        return None
    if not calls or (len(calls) == 1 and not calls[0].source):
        return None
    return calls


def _fc_calls(step: Any) -> Step:
    calls = []
    for call in [step] if type(step) is dict else step:
        for name, args in call.items():
            if type(args) is str:
                args = json.loads(args)
            if not isinstance(args, dict):
                raise TypeError("arguments are not an object")
            calls.append(fc_call(name, args))
    return tuple(calls)


def _prompt_calls(step: Any) -> Step:
    decoded = decode(step, "prompt")
    if decoded.calls is None:
        raise ValueError(decoded.error)
    return tuple(prompt_call(call.name, call.args) for call in decoded.calls)


def decode_turns(result: list[Any], style: str) -> list[list[Step]]:
    """Every turn's decodable steps (official ``_evaluate_single_multi_turn_entry``)."""
    if style not in STYLES:
        raise ValueError(f"unknown decode style {style!r}; use one of {STYLES}")
    turns = []
    for turn in result:
        steps = [decode_step(s, style) for s in (turn if isinstance(turn, (list, str)) else ())]
        turns.append([s for s in steps if s is not None])
    return turns


# --------------------------------------------------------------------------- checking


def check_multi_turn(
    item: MultiTurnItem, result: Any, *, style: str = "fc", model_name: str = "evalbench"
) -> MultiTurnCheck:
    """Score one multi-turn result with the official semantics.

    Args:
        item: the test entry.
        result: the ``result`` of its result-file line (turns of steps).
        style: how steps are decoded (:data:`STYLES`).
        model_name: the model folder name the official checker runs under; it only shows
            where a backend method name inside a string argument gets rewritten.

    Raises:
        BackendUnavailable: the official backend classes are not installed.
    """
    if type(result) is not list:
        message = "Error during inference phase. Model did not output a list of model responses."
        return MultiTurnCheck(False, INFERENCE_ERROR, message)
    if len(result) != len(item.ground_truth):
        message = (
            "Model was force-terminated during inference phase. The length of the model "
            f"result turns ({len(result)}) does not match the length of the ground truth "
            f"turns ({len(item.ground_truth)})."
        )
        return MultiTurnCheck(False, FORCE_TERMINATED, message)
    return replay_turns(item, decode_turns(result, style), model_name=model_name)


def replay_turns(
    item: MultiTurnItem, turns: Sequence[Sequence[Step]], *, model_name: str = "evalbench"
) -> MultiTurnCheck:
    """Replay decoded steps turn by turn against the ground truth (the official
    ``multi_turn_checker``); ``turns`` has one entry per ground-truth turn."""
    prefix = f"{model_name}_eval_{item.id}"
    truth_prefix = f"{model_name}_ground_truth_eval_{item.id}"
    model = Side(item.involved_classes, item.initial_config, item.long_context, prefix)
    truth = Side(item.involved_classes, item.initial_config, item.long_context, truth_prefix)
    done = _Replayed(turns, [], [])
    seen: list[str] = []
    for index, expected in enumerate(item.ground_truth):
        steps = turns[index]
        ran = [model.run(step) for step in steps]
        for results in ran:
            seen.extend(results)
        truth_results = truth.run(source_call(call) for call in expected)
        done.trace.append(TurnTrace(ran, truth_results))
        done.unsupported[:] = model.unsupported + truth.unsupported
        if expected and not steps:
            return done.fail(EMPTY_TURN, f"Model response list is empty for turn {index}", index)
        if not expected:
            continue
        failure = _state_failure(model, truth) or _response_failure(seen, truth_results, index)
        if failure is not None:
            return done.fail(*failure[:2], index, failure[2])
    return MultiTurnCheck(True, decoded=list(map(list, turns)), trace=tuple(done.trace),
                          unsupported=tuple(done.unsupported))  # fmt: skip


class _Replayed(NamedTuple):
    turns: Sequence[Sequence[Step]]
    trace: list[TurnTrace]
    unsupported: list[str]

    def fail(
        self, error_type: str, message: str, turn: int, details: dict[str, Any] | None = None
    ) -> MultiTurnCheck:
        decoded = list(map(list, self.turns))
        return MultiTurnCheck(
            False, error_type, message, turn, details, decoded, tuple(self.trace),
            tuple(self.unsupported),
        )  # fmt: skip


def _state_failure(model: Side, truth: Side) -> tuple[str, str, dict[str, Any]] | None:
    for cls, expected in truth.instances.items():
        actual = model.instances[cls]
        differing = [
            attr
            for attr in vars(expected)
            if not attr.startswith("_")
            and getattr(actual, attr, _MISSING) != getattr(expected, attr)
        ]
        if differing:
            message = (
                f"Model instance for {cls} does not match the state with ground truth instance."
            )
            return STATE_MISMATCH, message, {"class": cls, "differences": differing}
    return None


_MISSING = object()


def _response_failure(
    seen: Iterable[str], expected: Sequence[str], turn: int
) -> tuple[str, str, dict[str, Any]] | None:
    available = Counter(seen)
    missing = []
    for result in expected:
        if available[result] > 0:
            available[result] -= 1
        else:
            missing.append(result)
    if not missing:
        return None
    message = (
        "Model response execution results so far does not contain all the ground truth "
        f"response execution results for turn {turn}."
    )
    return RESPONSE_MISMATCH, message, {"missing_items": missing}
