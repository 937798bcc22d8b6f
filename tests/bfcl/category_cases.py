"""Shared, loaded-once data of the Java / JavaScript / multi-turn / web-search tests."""

from __future__ import annotations

from functools import cache

import pandas as pd

from evalbench import bfcl
from evalbench.bfcl.schema import JAVA_JS, MULTI_TURN, WEB_SEARCH, MultiTurnItem

OWN_CHECKERS = JAVA_JS + MULTI_TURN + WEB_SEARCH
"""The categories scored by their own checkers (not the Python AST checker)."""


def doc(name: str, **params: str) -> dict:
    props = {p: {"type": t, "description": p} for p, t in params.items()}
    return {"name": name, "description": f"{name} things.",
            "parameters": {"type": "dict", "properties": props, "required": list(params)}}  # fmt: skip


CONFIG = {"GorillaFileSystem": {"root": {"alex": {"type": "directory", "contents": {
    "notes.txt": {"type": "file", "content": "b line\na line"}}}}}}  # fmt: skip
# turn 0: make a folder; turn 1: 'cat' comes back (held out until then) and reads the notes
ITEM = MultiTurnItem(
    "multi_turn_miss_func_990", "multi_turn_miss_func",
    [[{"role": "user", "content": "Make a folder out."}], []],
    [doc("mkdir", dir_name="string"), doc("cat", file_name="string"), doc("ls", a="boolean")],
    CONFIG, ["GorillaFileSystem"],
    [["mkdir(dir_name='out')"], ["cat(file_name='notes.txt')"]], {1: ["cat"]},
)  # fmt: skip


@cache
def own_checker_items() -> list:
    """Every item of the eight categories (the mirror must be set)."""
    return bfcl.load(OWN_CHECKERS)


@cache
def glyphh_own_checker_verdicts() -> pd.DataFrame:
    """glyphh-ada-1.1's 1,150 verdicts on them (the official backends must be installed)."""
    lines = bfcl.fetch_results("glyphh-ada-1.1", OWN_CHECKERS)
    return bfcl.score_results(own_checker_items(), lines, system="glyphh-ada-1.1", style="fc")
