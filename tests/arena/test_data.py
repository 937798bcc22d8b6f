"""The arena runner's prompts: the demo set and malformed prompt files."""

from __future__ import annotations

import pytest

from evalbench import arena
from evalbench.ratings import ArenaError


def test_demo_prompts_are_40_with_two_documents():
    prompts = arena.load_prompts("demo")
    assert len(prompts) == 40 and len({p.id for p in prompts}) == 40
    assert all(len(p.documents) == 2 and p.question.endswith("?") for p in prompts)
    assert [p.id for p in arena.load_prompts("demo", limit=3)] == ["demo-01", "demo-02", "demo-03"]


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"id": "q1", "question": "Why?"}', "{oops"], r"line 2: not JSON"),
        (['{"id": "q1"}'], r"line 1: question must be a non-empty string"),
        (['{"id": "", "question": "Why?"}'], r"line 1: id must be"),
        (['{"id": "q1", "question": "Why?", "documents": "doc"}'], r"line 1: documents must be"),
        (
            ['{"id": 1, "question": "A?"}', "", '{"id": "1", "question": "B?"}'],
            r"line 3: id '1' repeats",
        ),
        (["", "  "], r"no prompts \(empty file\)"),
        (['["q1", "Why?"]'], r"line 1: expected a JSON object"),
    ],
)
def test_malformed_prompt_files_name_file_and_line(tmp_path, lines, message):
    path = tmp_path / "prompts.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ArenaError, match=rf"prompts.jsonl.*{message}"):
        arena.load_prompts(path)
