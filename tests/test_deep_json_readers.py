"""JSON nested past the parser's recursion limit, from a model or a file, is the reader's own
one-line error (never a RecursionError traceback): tool-call arguments, arena prompt files.
The rest of the readers are covered where they live (an endpoint's reply:
tests/models/test_hostile_replies.py; records, importers)."""

from __future__ import annotations

import pytest

from evalbench.agents.tools.base import ToolError, parse_arguments
from evalbench.arena.data import ArenaError, load_prompts

DEEP = "[" * 200_000 + "]" * 200_000


def test_deep_tool_arguments_are_a_tool_error_the_model_sees():
    with pytest.raises(ToolError, match="not valid JSON"):
        parse_arguments('{"a": ' + DEEP + "}")


def test_a_deep_prompts_line_names_file_and_line(tmp_path):
    path = tmp_path / "prompts.jsonl"
    path.write_text('{"id": 1, "question": "q"}\n' + DEEP + "\n")
    with pytest.raises(ArenaError, match=r"prompts.jsonl line 2: not JSON"):
        load_prompts(path)
