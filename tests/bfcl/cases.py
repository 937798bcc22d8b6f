"""Hand-made BFCL items and small builders shared by the BFCL tests (``from bfcl.cases``)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import yaml

from evalbench import bfcl
from evalbench.bfcl.checker import Check
from evalbench.bfcl.records import BfclResult
from evalbench.bfcl.schema import CALL_FAILED, CATEGORIES, PYTHON, Item, ResultLine
from evalbench.bfcl.scoring import Verdict, verdict_frame
from evalbench.studies import load_params

INT = {"type": "integer"}
STR = {"type": "string"}
FLOAT = {"type": "float"}
OFFICIAL_ROWS = {"glyphh-ada-1.1": 2591, "gemma4-e4b-toolcall-v02": 2351, "AIREV-Agent-0.8B": 2607}


def fn(name: str, props: dict, required: tuple[str, ...] = ()) -> dict:
    """A function doc in the BFCL shape."""
    return {
        "name": name,
        "description": "",
        "parameters": {"type": "dict", "properties": props, "required": list(required)},
    }


def item(category: str, functions: list[dict], answer: list[dict] | None) -> Item:
    return Item(f"{category}_0", category, [[{"role": "user", "content": "q"}]], functions, answer)


def verdict(it: Item, raw, style: str = "prompt", **kw) -> Check:
    return bfcl.check(it, bfcl.decode(raw, style), **kw)


MATH = item(
    "simple_python",
    [fn("math.factorial", {"number": INT}, ("number",))],
    [{"math.factorial": {"number": [5]}}],
)
AREA = item(
    "simple_python",
    [fn("area", {"base": INT, "height": INT, "unit": STR}, ("base", "height"))],
    [{"area": {"base": [10], "height": [5], "unit": ["", "cm"]}}],
)
PAIR = item(
    "parallel",
    [fn("f", {"a": INT}, ("a",))],
    [{"f": {"a": [1]}}, {"f": {"a": [2]}}],
)
CHOICE = item(
    "multiple",
    [fn("g", {"x": INT}, ("x",)), fn("h", {"x": INT}, ("x",))],
    [{"h": {"x": [1]}}],
)
NONE_FITS = item("irrelevance", [fn("f", {"a": INT})], None)


def write_jsonl(path: Path, rows: list) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


class _NoAliases(yaml.SafeDumper):
    """Writes a repeated value out again: params files refuse YAML anchors."""

    def ignore_aliases(self, data) -> bool:
        return True


def study_params(tmp_path: Path, **fields) -> bfcl.BfclParams:
    path = tmp_path / "p.yaml"
    path.write_text(yaml.dump({"study": "bfcl", "title": "t", **fields}, Dumper=_NoAliases))
    return load_params(path)  # type: ignore[return-value]


def verdict_rows(rows: list[tuple]) -> pd.DataFrame:
    """A verdict frame from ``(system, category, valid, error_type, params)`` rows."""
    verdicts = [
        Verdict(system, cat, f"{cat}_{i}", valid, etype, None, None, "", params or [])
        for i, (system, cat, valid, etype, params) in enumerate(rows)
    ]
    return verdict_frame(verdicts)


def gorilla(root: Path) -> Path:
    """A small gorilla checkout: 12 items in each of five categories."""
    data = root / "berkeley-function-call-leaderboard" / "bfcl_eval" / "data"
    area = fn("geo.area", {"base": INT, "height": INT, "unit": STR}, ("base", "height"))
    pick = [fn("g", {"x": INT}, ("x",)), fn("h", {"x": INT, "y": FLOAT}, ("x",))]
    city = fn("weather", {"city": STR}, ("city",))
    rows: dict[str, list] = {c: [] for c in CATEGORIES}
    answers: dict[str, list] = {c: [] for c in CATEGORIES}
    for i in range(12):
        ask = [[{"role": "user", "content": f"question {i}"}]]
        add = [
            (
                "simple_python",
                f"simple_python_{i}",
                [area],
                [{"geo.area": {"base": [i], "height": [i + 1], "unit": ["", "cm"]}}],
            ),
            ("multiple", f"multiple_{i}", pick, [{"h": {"x": [i], "y": ["", 2.5]}}]),
            (
                "parallel",
                f"parallel_{i}",
                [city],
                [{"weather": {"city": [f"City {i}"]}}, {"weather": {"city": ["Paris"]}}],
            ),
            ("irrelevance", f"irrelevance_{i}", [city], None),
            ("live_relevance", f"live_relevance_{i}-0-0", [city], None),
        ]
        for cat, item_id, functions, truth in add:
            rows[cat].append({"id": item_id, "question": ask, "function": functions})
            if truth is not None:
                answers[cat].append({"id": item_id, "ground_truth": truth})
    for cat, items_ in rows.items():
        if items_:
            write_jsonl(data / f"BFCL_v4_{cat}.json", items_)
        if answers[cat]:
            write_jsonl(data / "possible_answer" / f"BFCL_v4_{cat}.json", answers[cat])
    return root


def verdicts(rows: list[tuple[str, bool, str | None]]) -> pd.DataFrame:
    """One ``simple_python`` verdict per ``(system, valid, error type)`` row; every call that
    did not fail decoded to one call (``f()``), as a model that calls functions answers."""
    made = []
    for i, (system, valid, etype) in enumerate(rows):
        decoded = None if etype == CALL_FAILED else [{"f": {}}]
        made.append(Verdict(system, "simple_python", f"simple_python_{i}", valid, etype, None,
                            decoded, "", []))  # fmt: skip
    return verdict_frame(made)


def hand_made_result(tmp_path: Path) -> BfclResult:
    """files: 3 of 4 valid; simmy: 2 of 4 valid, 1 failed call; real: both calls failed."""
    (tmp_path / "res").mkdir()
    params = study_params(
        tmp_path,
        result_sets=[{"name": "files", "folder": "res"}],
        systems=[
            {"name": "simmy", "provider": "sim"},
            {"name": "real", "provider": "openai", "model": "m"},
        ],
        limit_per_category=4,
    )
    rows = [("files", True, None)] * 3 + [("files", False, "value_error:string")]
    rows += [("simmy", True, None)] * 2 + [("simmy", False, "type_error:simple")]
    rows += [("simmy", False, CALL_FAILED)] + [("real", False, CALL_FAILED)] * 2
    usage = pd.DataFrame(
        [("simmy", 4, 1, {"sim_error": 1}), ("real", 2, 2, {"http_401": 2})],
        columns=["system", "calls", "errors", "error_reasons"],
    )
    return BfclResult(
        params=params,
        items=[],
        verdicts=verdicts(rows).assign(mode="results"),
        summary=None,  # type: ignore[arg-type]
        order=["files", "simmy", "real"],
        sources=pd.DataFrame(),
        comparison=pd.DataFrame(columns=["system", "metric", "ours", "published", "difference"]),
        truth=None,
        examples=[],
        result_files=None,
        usage=usage,
        simulated=frozenset({"simmy"}),
    )


def python_results(model: str) -> list[ResultLine]:
    """A registered result set's lines of the eleven Python categories (those it has)."""
    return [line for line in bfcl.fetch_results(model) if line.category in PYTHON]
