"""Replaying calls against the official backends: evalbench's executor vs the official one.

Each tricky call string runs through ``replay.Side`` and through the official
``execute_multi_turn_func_call`` (bfcl-eval, installed without its dependencies); results
and the resulting states must be equal.
"""

from __future__ import annotations

import itertools

import pytest

from evalbench.bfcl import backends
from evalbench.bfcl.replay import ERROR_PREFIX, Side, fc_call, prompt_call, source_call

pytestmark = pytest.mark.skipif(
    not backends.available(), reason=f"needs the official BFCL backends: {backends.INSTALL_HINT}"
)

CLASSES = ("GorillaFileSystem", "MathAPI")
CONFIG = {
    "GorillaFileSystem": {
        "root": {
            "alex": {
                "type": "directory",
                "contents": {
                    "notes.txt": {"type": "file", "content": "b line\na line"},
                    "docs": {"type": "directory", "contents": {}},
                },
            }
        }
    }
}
_names = (f"evalbench_test_{n}" for n in itertools.count())


def _official(source: str) -> tuple[list[str], dict]:
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils import (
        execute_multi_turn_func_call,
    )

    # a fresh model name per call: the official instances live in module globals
    results, instances = execute_multi_turn_func_call(
        [source], CONFIG, list(CLASSES), next(_names), "t_0", is_evaL_run=True
    )
    return results, {c: backends.public_state(i) for c, i in instances.items()}


def _ours(call) -> tuple[list[str], dict, Side]:
    side = Side(CLASSES, CONFIG, False, "evalbench_eval_t_0")
    results = side.run([call])
    return results, {c: backends.public_state(i) for c, i in side.instances.items()}, side


@pytest.mark.parametrize(
    "source",
    [
        "cd(folder='docs')",
        "ls(a=True)",
        "sort('notes.txt')",  # positional, as ground truth writes it
        "echo(content='run cd(folder) now', file_name='x.txt')",  # a method name in a string
        "touch(file_name='a\\ncd(b).txt')",  # the official pattern sees the escaped text
        "cd(from='x')",  # a keyword: SyntaxError
        "cd(folder='a', folder='b')",  # repeated keyword: SyntaxError
        "cd(nope='x')",  # TypeError from the method
        "frobnicate(x=1)",  # NameError
        "kill(pid=1)",  # refused by name
        "cd(folder=pwd())",  # a nested call runs first
        "mkdir(dir_name=-1)",  # unary minus
        "mean(numbers=[1, 2, 3.5])",
        "logarithm(value=8, base=2, precision=30)",  # mpmath precision
        "square_root(number=2, precision=40)",  # decimal precision
        "mkdir(dir_name={'a': (1, 2)})",
        "ls(a=True) ; pwd()",
    ],
)
def test_same_results_and_state_as_the_official_executor(source):
    official_results, official_state = _official(source)
    results, state, side = _ours(source_call(source))
    assert results == official_results
    assert state == official_state
    assert side.unsupported == []


def test_the_fast_path_equals_the_string_path():
    kwargs = {"content": "héllo \"world\" 'x'\n", "file_name": "notes.txt"}
    fast = fc_call("echo", kwargs)
    assert fast.kwargs is kwargs  # invoked directly: the string holds one "("
    slow = fast._replace(kwargs=None)
    for call in (fast, slow):
        results, state, _ = _ours(call)
        assert (results, state) == _official(fast.source)


def test_calls_the_string_would_not_reproduce_take_the_string_path():
    # json gives inf; its repr does not eval ("name 'inf' is not defined")
    assert fc_call("mean", {"numbers": [float("inf")]}).kwargs is None
    assert fc_call("cd", {"folder": "a(b)"}).kwargs is None  # a "(" inside a string
    assert fc_call("cd", {"from": "x"}).kwargs is None  # not an identifier keyword
    results, _, _ = _ours(fc_call("mean", {"numbers": [float("inf")]}))
    assert results == [f"{ERROR_PREFIX}name 'inf' is not defined"]


def test_prompt_calls_render_nested_dicts_as_calls():
    # parse_nested_value: a dict whose values are all dicts is written as a call
    call = prompt_call("cd", {"folder": {"pwd": {}}})
    assert call.source == "cd(folder=pwd())" and call.kwargs is None
    assert prompt_call("ls", {"a": True}).source == "ls(a=True)"
    with pytest.raises(IndexError):
        prompt_call("cd", {"folder": {}})  # the official decoder fails the whole step


def test_code_the_official_eval_would_run_is_not_evaluated():
    results, state, side = _ours(source_call("cd(folder=str(1))"))
    assert results == [f"{ERROR_PREFIX}evalbench does not evaluate str(1)"]
    assert side.unsupported == ["str(1)"]
    assert (
        state["GorillaFileSystem"]["root"]
        == _ours(source_call("pwd()"))[1]["GorillaFileSystem"]["root"]
    )  # nothing ran


def test_instances_persist_across_steps_and_ground_truth_calls_are_copied():
    side = Side(CLASSES, CONFIG, False, "p")
    assert side.run([source_call("mkdir(dir_name='new')")]) == ["None"]
    assert side.run([source_call("cd(folder='new')")]) == ['{"current_working_directory": "new"}']
    assert side.run([source_call("pwd()")]) == ['{"current_working_directory": "/alex/new"}']
    cached = source_call("mean(numbers=[1, 2])")
    assert cached is source_call("mean(numbers=[1, 2])")  # parsed once
    assert side.run([cached, cached]) == ['{"result": 1.5}'] * 2
