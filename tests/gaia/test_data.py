"""GAIA data: safe loading (folder, JSONL, parquet, hub), clear errors, the leaderboard
export, and the demo suite recomputed from its own files."""

from __future__ import annotations

import csv
import datetime
import json
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from gaia.cases import pred, row, write_jsonl

from evalbench import gaia, sources
from evalbench.gaia import data
from evalbench.settings import MissingSecret

# ----------------------------------------------------------------------------- loading


def test_load_local_folder_jsonl_file_and_level_filter(tmp_path):
    (tmp_path / "data.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    rows = [
        row("a", 1, "1", steps=3),
        row("b", "2", "x", file_name="data.csv"),  # GAIA sometimes stores Level as text
        row("c", 3, "?"),  # the test split's hidden answer
    ]
    path = write_jsonl(tmp_path, rows)
    from_folder, from_file = gaia.load(tmp_path), gaia.load(path)
    assert from_folder == from_file
    assert [it.level for it in from_folder] == [1, 2, 3]
    assert from_folder[0].annotated_steps == 3
    assert from_folder[1].attachment == (tmp_path / "data.csv").resolve()
    assert from_folder[2].final_answer is None
    assert [it.task_id for it in gaia.load(tmp_path, levels=[2, 3])] == ["b", "c"]
    assert [it.task_id for it in gaia.load(tmp_path, task_ids=["c"])] == ["c"]
    reads = sources.reads()
    assert str(path.resolve()) in reads and str((tmp_path / "data.csv").resolve()) in reads


def test_items_frame_keeps_a_missing_answer_or_attachment_as_none(tmp_path):
    """pandas 3 made ``None`` next to text NaN (a str column), which is truthy and not a
    path: the hidden answer and the items without a file must read back as None."""
    (tmp_path / "data.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    rows = [row("a", 1, "1"), row("b", 2, "x", file_name="data.csv"), row("c", 3, "?")]
    frame = data.items_frame(gaia.load(write_jsonl(tmp_path, rows)))
    assert frame["final_answer"].tolist() == ["1", "x", None]
    assert frame["attachment"].tolist() == [None, str((tmp_path / "data.csv").resolve()), None]


def test_load_parquet_folder_like_the_current_hub_layout(tmp_path):
    (tmp_path / "f.txt").write_text("hi", encoding="utf-8")
    rows = [row("p1", 1, "4", steps=2), row("p2", 2, "hi", file_name="f.txt", steps=5)]
    frame = pd.DataFrame([r | {"file_path": r["file_name"]} for r in rows])
    frame.to_parquet(tmp_path / "metadata.parquet")
    items = gaia.load(tmp_path)
    assert [(it.task_id, it.level, it.final_answer, it.annotated_steps) for it in items] == [
        ("p1", 1, "4", 2),
        ("p2", 2, "hi", 5),
    ]
    assert items[1].attachment == (tmp_path / "f.txt").resolve()


@pytest.mark.parametrize(
    ("file_name", "message"),
    [
        ("../../etc/passwd", "contains '..'"),
        ("sub/../../secret.txt", "contains '..'"),
        ("/etc/passwd", "is an absolute path"),
        ("missing.csv", "attachment 'missing.csv' not found"),
    ],
)
def test_unsafe_or_missing_attachments_are_refused(tmp_path, file_name, message):
    folder = tmp_path / "data"
    folder.mkdir()
    (tmp_path / "secret.txt").write_text("s", encoding="utf-8")
    path = write_jsonl(folder, [row("a", 1, "1"), row("b", 1, "1", file_name=file_name)])
    with pytest.raises(gaia.GaiaDataError, match=message) as err:
        gaia.load(path)
    assert f"{path}:2" in str(err.value)  # names file and line


def test_symlink_escaping_the_folder_is_refused_but_inside_is_fine(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    (tmp_path / "outside.txt").write_text("secret", encoding="utf-8")
    (folder / "inside.txt").write_text("ok", encoding="utf-8")
    (folder / "escape.txt").symlink_to(tmp_path / "outside.txt")
    (folder / "alias.txt").symlink_to(folder / "inside.txt")
    ok = gaia.load(write_jsonl(folder, [row("a", 1, "1", file_name="alias.txt")]))
    assert ok[0].attachment == (folder / "inside.txt").resolve()
    write_jsonl(folder, [row("a", 1, "1", file_name="escape.txt")])
    with pytest.raises(gaia.GaiaDataError, match="resolves outside the dataset folder"):
        gaia.load(folder)


@pytest.mark.parametrize(
    ("rows", "kwargs", "message"),
    [
        (
            [row("a", 1, "1"), row("a", 2, "2")],
            {},
            r":2: duplicate task_id 'a' \(first at .*:1\)",
        ),
        ([row("a", 4, "1")], {}, r":1: field 'Level' must be 1, 2 or 3, got 4"),
        ([row("a", "L1", "1")], {}, r"field 'Level' must be 1, 2 or 3, got 'L1'"),
        ([row("a", True, "1")], {}, r"field 'Level' must be 1, 2 or 3, got True"),
        ([{"task_id": "a", "Question": "q", "Level": 1}], {}, r":1: missing field 'Final answer'"),
        ([row("a", 1, "1")], {"levels": [3]}, r"no GAIA items left after filtering"),
        ([row("a", 1, "1")], {"levels": [4]}, r"levels must be among 1, 2, 3; got \[4\]"),
        ([row("a", 1, "1")], {"task_ids": ["zz"]}, r"unknown task ids \['zz'\]"),
        # before: any file_name that is not text was "no attachment", without a word
        ([{**row("a", 1, "1"), "file_name": 5}], {}, r":1: field 'file_name' must be a string "
         r"\(or empty: no attachment\), got 5"),
        ([{**row("a", 1, "1"), "file_name": ["x.csv"]}], {}, r"field 'file_name' must be a "
         r"string"),
    ],
)  # fmt: skip
def test_bad_input_gives_one_clear_line(tmp_path, rows, kwargs, message):
    path = write_jsonl(tmp_path, rows)
    with pytest.raises(gaia.GaiaDataError, match=message) as err:
        gaia.load(path, **kwargs)
    assert "\n" not in str(err.value)


def test_bad_json_line_names_file_and_line(tmp_path):
    path = tmp_path / "m.jsonl"
    path.write_text(json.dumps(row("a", 1, "1")) + "\n{oops\n", encoding="utf-8")
    with pytest.raises(gaia.GaiaDataError, match=r"m.jsonl:2: not valid JSON"):
        gaia.load(path)


def test_hub_without_token_is_a_clear_error_and_no_network(monkeypatch):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    with pytest.raises(MissingSecret, match=r"gaia-benchmark/GAIA.*HF_TOKEN"):
        gaia.load("hf")
    with pytest.raises(gaia.GaiaDataError, match="split must be one of"):
        gaia.load("hf", split="train")


# ----------------------------------------------------------------------------- export


def test_export_submission_round_trip_and_guide(tmp_path):
    items = gaia.load(write_jsonl(tmp_path, [row("a", 1, "5"), row("b", 2, "x"), row("c", 3, "y")]))
    preds = [
        pred("S", "a", "Reasoning.\nFINAL ANSWER: 5"),
        pred("S", "b", "no template here"),
        pred("S", "c", None, error="timeout"),
        pred("T", "a", "FINAL ANSWER: 6"),
    ]
    recs = gaia.score(items, preds)
    with pytest.raises(gaia.GaiaDataError, match="pick one"):
        gaia.export_submission(recs, tmp_path / "out.jsonl")
    with pytest.raises(gaia.GaiaDataError, match="2 item"):
        gaia.export_submission(recs, tmp_path / "out.jsonl", system="T", items=items)
    path = gaia.export_submission(recs, tmp_path / "out" / "sub.jsonl", system="S", items=items)
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert lines == [
        {"task_id": "a", "model_answer": "5", "reasoning_trace": "Reasoning.\nFINAL ANSWER: 5"},
        {"task_id": "b", "model_answer": "", "reasoning_trace": "no template here"},
        {"task_id": "c", "model_answer": "", "reasoning_trace": ""},
    ]
    back = gaia.read_submission(path)
    assert back.to_dict("records") == lines
    guide = path.with_suffix(".md").read_text(encoding="utf-8")
    assert data.LEADERBOARD_URL in guide and "sub.jsonl" in guide
    assert "test split's answers are hidden" in guide


def test_read_submission_reads_a_null_reasoning_trace_as_empty_text(tmp_path):
    """A null trace became NaN next to a text one (pandas 3): it reads as "", like an absent one."""
    path = tmp_path / "s.jsonl"
    path.write_text(
        '{"task_id": "a", "model_answer": "1", "reasoning_trace": "r"}\n'
        '{"task_id": "b", "model_answer": "2", "reasoning_trace": null}\n'
        '{"task_id": "c", "model_answer": "3"}\n'
    )
    assert gaia.read_submission(path)["reasoning_trace"].tolist() == ["r", "", ""]
    path.write_text('{"task_id": "a", "model_answer": "1", "reasoning_trace": 7}\n')
    with pytest.raises(gaia.GaiaDataError, match=r"s.jsonl:1: field 'reasoning_trace' must be"):
        gaia.read_submission(path)


def test_read_submission_rejects_bad_lines(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text(
        '{"task_id": "a", "model_answer": "1"}\n{"task_id": "a", "model_answer": "2"}\n'
    )
    with pytest.raises(gaia.GaiaDataError, match=r"s.jsonl:2: duplicate task_id 'a'"):
        gaia.read_submission(path)
    path.write_text('{"task_id": "a"}\n')
    with pytest.raises(gaia.GaiaDataError, match=r"s.jsonl:1: missing field 'model_answer'"):
        gaia.read_submission(path)


# ----------------------------------------------------------------------------- demo suite


def _csv(name: str) -> list[dict[str, str]]:
    with open(gaia.demo_path() / name, encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _sales_revenue(month: str | None = None) -> dict[str, float]:
    out: Counter[str] = Counter()
    for r in _csv("demo-sales.csv"):
        if month is None or r["month"] == month:
            out[r["region"]] += int(r["units"]) * float(r["unit_price_usd"])
    return dict(out)


def _trips(driver: str) -> tuple[int, int]:
    rows = [r for r in _csv("demo-trips.csv") if r["driver"] == driver]
    return sum(int(r["km"]) for r in rows), sum(int(r["minutes"]) for r in rows)


def _inventory() -> list[dict]:
    return json.loads((gaia.demo_path() / "demo-inventory.json").read_text(encoding="utf-8"))[
        "items"
    ]


def _log() -> list[list[str]]:
    text = (gaia.demo_path() / "demo-server-log.txt").read_text(encoding="utf-8")
    return [line.split(" ", 3) for line in text.splitlines()]


def _growth() -> str:
    jan, mar = _sales_revenue("Jan"), _sales_revenue("Mar")
    growth = {r: 100 * (mar[r] - jan[r]) / jan[r] for r in jan}
    best = max(growth, key=growth.__getitem__)
    return f"{best}, {growth[best]:.1f}"


def _uptime_minutes() -> int:
    log = _log()
    start = next(
        datetime.datetime.fromisoformat(f"{d} {t}") for d, t, _, m in log if m == "service started"
    )
    stop = next(
        datetime.datetime.fromisoformat(f"{d} {t}") for d, t, _, m in log if m == "service stopped"
    )
    return int((stop - start).total_seconds() // 60)


def _fastest_driver() -> str:
    speeds = {d: km / (mins / 60) for d in ("Ana", "Ben", "Chloe") for km, mins in [_trips(d)]}
    return max(speeds, key=speeds.__getitem__)


def _fib(n: int) -> list[int]:
    out = [1, 1]
    while len(out) < n:
        out.append(out[-1] + out[-2])
    return out


# Every demo answer recomputed independently (attachment answers from the files).
DEMO_ANSWERS = {
    "demo-l1-01": lambda: 17 * 23,
    "demo-l1-02": lambda: "benchmark"[::-1],
    "demo-l1-03": lambda: "evergreen tree".count("e"),
    "demo-l1-04": lambda: 1.25 * 8,
    "demo-l1-05": lambda: 240 * 15 / 100,
    "demo-l1-06": lambda: ", ".join(sorted(["pear", "apple", "mango"])),
    "demo-l1-07": lambda: 29 + 31,
    "demo-l1-08": lambda: max(2**10, 10**3),
    "demo-l1-09": lambda: sum(int(r["units"]) for r in _csv("demo-sales.csv")),
    "demo-l1-10": lambda: sum(1 for it in _inventory() if it["stock"] == 0),
    "demo-l1-11": lambda: sum(1 for _, _, level, _ in _log() if level == "ERROR"),
    "demo-l1-12": lambda: _trips("Ana")[0],
    "demo-l2-01": lambda: sum(p for p in range(2, 30) if all(p % d for d in range(2, p))),
    "demo-l2-02": lambda: ", ".join(map(str, _fib(6))),
    "demo-l2-03": lambda: round(1_250_000 * 1.04**2),
    "demo-l2-04": lambda: [
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
    ][100 % 7],
    "demo-l2-05": lambda: 3.5 * 3600,
    "demo-l2-06": lambda: ", ".join(
        sorted(ch for ch, n in Counter("bookkeeper").items() if n == 2)
    ),
    "demo-l2-07": lambda: float(np.median([7, 3, 9, 1, 4, 8])),
    "demo-l2-08": lambda: max(_sales_revenue(), key=_sales_revenue().__getitem__),
    "demo-l2-09": lambda: sum(_sales_revenue().values()),
    "demo-l2-10": lambda: ", ".join(
        sorted(it["name"] for it in _inventory() if it["stock"] < it["reorder_level"])
    ),
    "demo-l2-11": lambda: Counter(
        m.rsplit(" ", 1)[0] for _, _, lv, m in _log() if lv == "ERROR"
    ).most_common(1)[0][0],
    "demo-l2-12": _fastest_driver,
    "demo-l3-01": lambda: sum(1 for i in range(1, 1001) if (i % 3 == 0 or i % 5 == 0) and i % 15),
    "demo-l3-02": lambda: next(n for n in range(1, 100) if 10_000 * 1.05**n > 15_000),
    "demo-l3-03": lambda: ", ".join(
        w for w in ["eye", "cat", "pop", "dog", "nun", "sun", "wow"] if w == w[::-1]
    ),
    "demo-l3-04": lambda: (datetime.date(2024, 1, 1) + datetime.timedelta(days=200)).isoformat(),
    "demo-l3-05": _growth,
    "demo-l3-06": lambda: round(sum(it["stock"] * it["weight_kg"] for it in _inventory()), 2),
    "demo-l3-07": _uptime_minutes,
    "demo-l3-08": lambda: f"{round(_trips('Ben')[0] / (_trips('Ben')[1] / 60), 1)} km/h",
}


def test_demo_suite_loads_and_is_labelled():
    items = gaia.load("demo")
    assert len(items) >= 30
    assert data.level_counts(items) == {1: 12, 2: 12, 3: 8}
    assert all("DEMO — not GAIA" in it.annotator_metadata["Note"] for it in items)
    assert all(it.annotated_steps and "Tools" in it.annotator_metadata for it in items)
    assert "DEMO, not GAIA" in (gaia.demo_path() / "README.md").read_text(encoding="utf-8")
    suffixes = {it.attachment.suffix for it in items if it.attachment is not None}
    assert suffixes == {".csv", ".json", ".txt"}
    kinds = Counter(_answer_kind(it.final_answer) for it in items)
    assert kinds["number"] >= 10 and kinds["list"] >= 5 and kinds["string"] >= 5


def _answer_kind(answer: str) -> str:
    try:
        float(answer)
    except ValueError:
        return "list" if ("," in answer or ";" in answer) else "string"
    return "number"


def test_every_demo_answer_is_recomputed_and_self_consistent():
    items = gaia.load("demo")
    assert set(DEMO_ANSWERS) == {it.task_id for it in items}
    for item in items:
        computed = DEMO_ANSWERS[item.task_id]()
        truth = item.final_answer
        if isinstance(computed, str):
            assert computed == truth, item.task_id
        else:
            assert float(truth) == pytest.approx(computed), item.task_id
        assert gaia.question_scorer(str(computed), truth), item.task_id
        assert gaia.question_scorer(gaia.extract_answer(f"FINAL ANSWER: {truth}"), truth)
