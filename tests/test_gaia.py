"""GAIA: official scorer quirks, extraction, safe loading, level metrics, export, demo suite."""

from __future__ import annotations

import csv
import datetime
import json
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from evalbench import gaia, sources
from evalbench.settings import MissingSecret

Z95 = float(sps.norm.ppf(0.975))

# ----------------------------------------------------------------------------- scorer

# (model_answer, ground_truth, verdict, why). Every row is a behaviour of the official
# leaderboard scorer (spaces/gaia-benchmark/leaderboard, scorer.py), reproduced on purpose.
OFFICIAL_CASES = [
    # --- ground truth parses as a float: numeric comparison
    ("1000", "1000", True, "identical number"),
    ("1,000", "1000", True, "commas are stripped from the answer"),
    ("$5", "5", True, "dollar signs are stripped"),
    ("5%", "5", True, "percent signs are stripped"),
    ("$1,234.50", "1234.5", True, "all three strippers at once, then float equality"),
    ("5.0", "5", True, "compared as floats, not as text"),
    ("0.1", "0.10", True, "trailing zero in the truth does not matter"),
    ("1e3", "1000", True, "float() accepts scientific notation"),
    (" 5 ", "5", True, "float() ignores surrounding whitespace"),
    ("1_000", "1000", True, "float() accepts digit underscores (Python >= 3.6)"),
    ("1000", "1_000", True, "... in the ground truth too: '1_000' is a float"),
    ("4.6", "+4.6", True, "a leading plus sign still parses"),
    ("5 m", "5", False, "any unit other than $ and % makes float() fail: wrong"),
    ("five", "5", False, "number words are not numbers"),
    ("1 000", "1000", False, "an inner space makes float() fail"),
    ("−5", "-5", False, "the Unicode minus sign is not accepted by float()"),
    ("5.01", "5", False, "no tolerance: exact float equality"),
    ("", "5", False, "an empty answer is unparseable, so wrong"),
    (None, "5", False, "None becomes the string 'None': unparseable"),
    # the official unparseable-answer sentinel is +inf, hence these two quirks:
    ("banana", "inf", True, "QUIRK: any unparseable answer equals float('inf')"),
    ("", "inf", True, "QUIRK: even an empty answer matches an 'inf' ground truth"),
    ("nan", "nan", False, "QUIRK: nan never equals nan, so a 'nan' truth is unreachable"),
    # --- ground truth with ',' or ';' (and not a float): a list
    ("1000", "1,000", False, "QUIRK: '1,000' is not a float, so it is a 2-element list"),
    ("1,000", "1,000", True, "... compared element-wise: 1 == 1 and 000 == 0"),
    ("1,0", "1,000", True, "QUIRK: '0' equals '000' as numbers inside lists"),
    ("a;b", "a, b", True, "',' and ';' are interchangeable separators"),
    ("a, b", "a;b", True, "... in both directions"),
    ("b, a", "a, b", False, "order matters"),
    ("a, b, c", "a, b", False, "lengths must agree"),
    ("a, b,", "a, b", False, "a trailing separator adds an empty element"),
    ("A,B", "a, b", True, "elements lose whitespace and case"),
    ("2, $3", "2, 3", True, "numeric ground-truth elements are compared as numbers"),
    ("2, 3.0", "2, 3", True, "... as floats"),
    ("St. Louis, Paris", "St. Louis, Paris", True, "identical list"),
    ("St.Louis, paris", "St. Louis, Paris", True, "whitespace and case do not matter"),
    ("st louis, Paris", "St. Louis, Paris", False, "punctuation is KEPT inside list elements"),
    ("St. Louis, Paris.", "St. Louis, Paris", False, "... including a trailing period"),
    ("West, 78.10", "West, 78.1", True, "mixed list: string then number"),
    # --- otherwise: a string (whitespace, case and ASCII punctuation removed)
    ("st louis", "St. Louis", True, "punctuation removed for plain strings"),
    ("sea gull", "seagull", True, "all whitespace removed"),
    ("Paris!", "paris", True, "trailing punctuation removed"),
    ("2024-07-19", "2024/07/19", True, "both reduce to 20240719"),
    ("76.7 km/h", "76.7 km/h", True, "a number with a unit is a string"),
    ("76.7", "76.7 km/h", False, "... so the bare number is wrong"),
    ("The Beatles", "Beatles", False, "articles are not removed"),
    ("Paris’", "paris", False, "non-ASCII punctuation (’) is not removed"),
    (None, "None", True, "QUIRK: a None answer is the string 'None'"),
    ("", "Paris", False, "empty answer"),
]


@pytest.mark.parametrize(("answer", "truth", "verdict", "why"), OFFICIAL_CASES)
def test_question_scorer_matches_the_leaderboard(answer, truth, verdict, why):
    assert gaia.question_scorer(answer, truth) is verdict, why


def test_official_helpers_pin_normalisations():
    assert gaia.official_number("$1,234.5%") == 1234.5
    assert gaia.official_number("12 km") == math.inf  # the official sentinel
    assert gaia.official_text(" St. Louis ", keep_punctuation=True) == "st.louis"
    assert gaia.official_text(" St. Louis ", keep_punctuation=False) == "stlouis"
    assert gaia.official_split("a, b;c,") == ["a", " b", "c", ""]


LENIENT_CASES = [
    ("5.004", "5", True, "within 1% relative tolerance"),
    ("5.1", "5", False, "2% off is outside the default tolerance"),
    ("5 m", "5", True, "a trailing unit is allowed"),
    ("1000", "1,000", True, "'1,000' is one number here, not a list"),
    ("b, a", "a, b", True, "lists are unordered"),
    ("b, b", "a, b", False, "... but still a multiset"),
    ("the Beatles", "Beatles", True, "articles dropped"),
    ("True", "Yes", True, "yes synonyms"),
    ("incorrect", "no", True, "no synonyms"),
    (None, "None", False, "no answer is never right (unlike the official quirk)"),
    ("banana", "inf", False, "no sentinel quirk"),
]


@pytest.mark.parametrize(("answer", "truth", "verdict", "why"), LENIENT_CASES)
def test_lenient_scorer_is_a_separate_forgiving_diagnostic(answer, truth, verdict, why):
    assert gaia.lenient_scorer(answer, truth) is verdict, why


def test_lenient_never_replaces_official_in_records(tmp_path):
    items = gaia.load(_write_jsonl(tmp_path, [_row("t1", 1, "5")]))
    recs = gaia.score(items, [_pred("A", "t1", "FINAL ANSWER: 5 m")], with_lenient=True)
    # the official verdict stays in `correct`; the lenient one is only an extra column
    assert recs["correct"].dtype == bool and not recs.loc[0, "correct"]
    assert bool(recs.loc[0, "correct_lenient"]) is True


# ----------------------------------------------------------------------------- extraction

EXTRACTION_CASES = [
    ("Thoughts.\nFINAL ANSWER: 42", "42", "the official template"),
    ("FINAL ANSWER: 41\nWait, recheck.\nFINAL ANSWER: 42", "42", "last occurrence wins"),
    ("**FINAL ANSWER:** **Paris**.", "Paris", "markdown bold and trailing period stripped"),
    ("**Final Answer**: Paris", "Paris", "bold around the marker, any case"),
    ("final answer: st. louis, paris.", "st. louis, paris", "inner punctuation kept"),
    ("FINAL ANSWER：42", "42", "full-width colon"),
    ("FINAL ANSWER: [42]", "42", "the template's brackets are removed"),
    ("FINAL ANSWER: `x`", "x", "backticks removed"),
    ('FINAL ANSWER: "Paris"', "Paris", "surrounding quotes removed"),
    ("FINAL ANSWER: \\boxed{17}", "17", "a boxed wrapper is removed"),
    ("FINAL ANSWER: 42\n\nHope this helps!", "42", "the answer ends at a blank line"),
    ("FINAL ANSWER: apples,\nbananas", "apples, bananas", "wrapped lines are joined"),
    ("FINAL ANSWER:\n- apples\n- bananas", "apples, bananas", "a bullet list becomes a list"),
    ("FINAL ANSWER:\n\n  7  ", "7", "answer on a later line"),
    ("Use FINAL ANSWER: [YOUR FINAL ANSWER].\nFINAL ANSWER: 9", "9", "template echo ignored"),
    ("Final answer - 7", "7", "fallback: dash form"),
    ("The final answer is 12.", "12", "fallback: 'final answer is'"),
    ("The final answer is: 12.", "12", "fallback with a colon after 'is'"),
    ("FINAL ANSWER: 3\nso the final answer is 4", "3", "the official template beats fallbacks"),
    ("So \\boxed{\\frac{1}{2}} and \\boxed{7}", "7", "fallback: the last boxed{}"),
    ("\\boxed{\\text{a}{b}}", "\\text{a}{b}", "boxed with nested braces"),
]


@pytest.mark.parametrize(("text", "expected", "why"), EXTRACTION_CASES)
def test_extract_answer(text, expected, why):
    assert gaia.extract_answer(text) == expected, why


@pytest.mark.parametrize(
    "text",
    [
        None,
        "",
        "I could not find it.",
        "FINAL ANSWER:",
        "FINAL ANSWER: [YOUR FINAL ANSWER]",
        "FINAL ANSWER: **.**",
        "\\boxed{unclosed",
    ],
)
def test_extract_answer_none_when_nothing_extractable(text):
    assert gaia.extract_answer(text) is None


# ----------------------------------------------------------------------------- prompting


def test_system_prompt_is_the_papers():
    p = gaia.SYSTEM_PROMPT
    assert p.startswith("You are a general AI assistant. I will ask you a question.")
    assert "FINAL ANSWER: [YOUR FINAL ANSWER]." in p
    assert "don't use comma to write your number neither use units such as $ or percent" in p
    assert p.endswith("whether the element to be put in the list is a number or a string.")


def test_build_messages_inlines_and_clips_text_attachments(tmp_path):
    (tmp_path / "notes.txt").write_text("x" * 50 + "```" + "y" * 50, encoding="utf-8")
    (tmp_path / "pic.png").write_bytes(b"\x89PNG" + b"\0" * 96)
    rows = [_row("t1", 1, "1", file_name="notes.txt"), _row("t2", 1, "1", file_name="pic.png")]
    items = gaia.load(_write_jsonl(tmp_path, rows))
    system, user = gaia.build_messages(items[0], attachment_chars=60)
    assert system == {"role": "system", "content": gaia.SYSTEM_PROMPT}
    assert user["role"] == "user" and user["content"].startswith(
        "Q t1?\n\nAttached file: notes.txt"
    )
    assert "x" * 50 + "```" + "y" * 7 in user["content"]  # 50 + 3 + 7 = 60 characters shown
    assert "y" * 8 not in user["content"]
    assert "````" in user["content"]  # the fence outgrows the file's own ```
    assert "[clipped: the first 60 of 103 characters are shown]" in user["content"]
    named = gaia.build_messages(items[1])[1]["content"]
    assert "Attached file: pic.png (100 bytes). Its content is not included" in named


def test_build_messages_without_attachment_is_the_question():
    item = gaia.load("demo", task_ids=["demo-l1-01"])[0]
    assert gaia.build_messages(item)[1]["content"] == "What is 17 multiplied by 23?"


# ----------------------------------------------------------------------------- loading


def _row(task_id, level, answer, *, file_name="", steps=None):
    meta = {"Number of steps": str(steps), "Tools": "1. Calculator"} if steps else {}
    return {
        "task_id": task_id,
        "Question": f"Q {task_id}?",
        "Level": level,
        "Final answer": answer,
        "file_name": file_name,
        "Annotator Metadata": meta,
    }


def _write_jsonl(folder: Path, rows, name="metadata.jsonl") -> Path:
    path = folder / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_load_local_folder_jsonl_file_and_level_filter(tmp_path):
    (tmp_path / "data.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    rows = [
        _row("a", 1, "1", steps=3),
        _row("b", "2", "x", file_name="data.csv"),  # GAIA sometimes stores Level as text
        _row("c", 3, "?"),  # the test split's hidden answer
    ]
    path = _write_jsonl(tmp_path, rows)
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


def test_load_parquet_folder_like_the_current_hub_layout(tmp_path):
    (tmp_path / "f.txt").write_text("hi", encoding="utf-8")
    rows = [_row("p1", 1, "4", steps=2), _row("p2", 2, "hi", file_name="f.txt", steps=5)]
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
    path = _write_jsonl(folder, [_row("a", 1, "1"), _row("b", 1, "1", file_name=file_name)])
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
    ok = gaia.load(_write_jsonl(folder, [_row("a", 1, "1", file_name="alias.txt")]))
    assert ok[0].attachment == (folder / "inside.txt").resolve()
    _write_jsonl(folder, [_row("a", 1, "1", file_name="escape.txt")])
    with pytest.raises(gaia.GaiaDataError, match="resolves outside the dataset folder"):
        gaia.load(folder)


@pytest.mark.parametrize(
    ("rows", "kwargs", "message"),
    [
        (
            [_row("a", 1, "1"), _row("a", 2, "2")],
            {},
            r":2: duplicate task_id 'a' \(first at .*:1\)",
        ),
        ([_row("a", 4, "1")], {}, r":1: field 'Level' must be 1, 2 or 3, got 4"),
        ([_row("a", "L1", "1")], {}, r"field 'Level' must be 1, 2 or 3, got 'L1'"),
        ([_row("a", True, "1")], {}, r"field 'Level' must be 1, 2 or 3, got True"),
        ([{"task_id": "a", "Question": "q", "Level": 1}], {}, r":1: missing field 'Final answer'"),
        ([_row("a", 1, "1")], {"levels": [3]}, r"no GAIA items left after filtering"),
        ([_row("a", 1, "1")], {"levels": [4]}, r"levels must be among 1, 2, 3; got \[4\]"),
        ([_row("a", 1, "1")], {"task_ids": ["zz"]}, r"unknown task ids \['zz'\]"),
    ],
)
def test_bad_input_gives_one_clear_line(tmp_path, rows, kwargs, message):
    path = _write_jsonl(tmp_path, rows)
    with pytest.raises(gaia.GaiaDataError, match=message) as err:
        gaia.load(path, **kwargs)
    assert "\n" not in str(err.value)


def test_bad_json_line_names_file_and_line(tmp_path):
    path = tmp_path / "m.jsonl"
    path.write_text(json.dumps(_row("a", 1, "1")) + "\n{oops\n", encoding="utf-8")
    with pytest.raises(gaia.GaiaDataError, match=r"m.jsonl:2: not valid JSON"):
        gaia.load(path)


def test_hub_without_token_is_a_clear_error_and_no_network(monkeypatch):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    with pytest.raises(MissingSecret, match=r"gaia-benchmark/GAIA.*HF_TOKEN"):
        gaia.load("hf")
    with pytest.raises(gaia.GaiaDataError, match="split must be one of"):
        gaia.load("hf", split="train")


# ----------------------------------------------------------------------------- records


def _pred(system, task_id, output, error=None, **extra):
    return {"system": system, "task_id": task_id, "output": output, "error": error, **extra}


def test_score_builds_records_with_errors_and_no_answers(tmp_path):
    items = gaia.load(
        _write_jsonl(tmp_path, [_row("a", 1, "1,000"), _row("b", 2, "Paris"), _row("c", 3, "?")])
    )
    preds = [
        _pred("S", "a", "Thinking...\nFINAL ANSWER: 1,000", steps=4),
        _pred("S", "b", "It is Paris, I think."),  # no template: no answer
        _pred("T", "a", None, error="HTTP 500 after 3 retries"),
        _pred("T", "b", "FINAL ANSWER: paris"),
        _pred("T", "c", "FINAL ANSWER: 3"),  # hidden truth: no verdict
    ]
    recs = gaia.score(items, preds)
    assert list(recs.columns) == [*gaia.RECORD_COLUMNS, "steps"]
    by = {(r.system, r.task_id): r for r in recs.itertuples()}
    assert (
        by["S", "a"].correct
        and by["S", "a"].extracted_answer == "1,000"
        and by["S", "a"].steps == 4
    )
    assert not by["S", "b"].correct and by["S", "b"].no_answer and by["S", "b"].error is None
    assert not by["T", "a"].correct and not by["T", "a"].no_answer
    assert by["T", "a"].error == "HTTP 500 after 3 retries" and by["T", "a"].model_answer is None
    assert by["T", "b"].correct and by["T", "b"].level == 2
    assert by["T", "c"].correct is None and by["T", "c"].expected is None
    with pytest.raises(gaia.GaiaDataError, match="hidden test answers"):
        gaia.level_accuracy(recs)


@pytest.mark.parametrize(
    ("preds", "message"),
    [
        ([_pred("S", "zz", "x")], r"unknown task ids \['zz'\]"),
        ([_pred("S", "a", "x"), _pred("S", "a", "y")], r"duplicate \(system, task_id, attempt\)"),
        ([{"system": "S", "task_id": "a"}], r"missing column\(s\) \['output'\]"),
    ],
)
def test_score_rejects_bad_predictions(tmp_path, preds, message):
    items = gaia.load(_write_jsonl(tmp_path, [_row("a", 1, "1")]))
    with pytest.raises(gaia.GaiaDataError, match=message):
        gaia.score(items, preds)


# ----------------------------------------------------------------------------- metrics


def _records(spec: dict[str, dict[int, list[bool]]], **columns) -> pd.DataFrame:
    """Hand-made records: spec[system][level] = correctness per item (ids shared)."""
    rows = []
    for system, by_level in spec.items():
        for level, marks in by_level.items():
            for i, ok in enumerate(marks):
                rows.append(
                    {
                        "system": system,
                        "task_id": f"L{level}-{i}",
                        "level": level,
                        "attempt": 0,
                        "correct": ok,
                        "no_answer": False,
                        "error": None,
                    }
                )
    frame = pd.DataFrame(rows)
    return frame.assign(**columns) if columns else frame


def _wilson_by_hand(k: int, n: int) -> tuple[float, float]:
    p = k / n
    center = (p + Z95**2 / (2 * n)) / (1 + Z95**2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n)) / (1 + Z95**2 / n)
    return center - half, center + half


SPEC = {"A": {1: [True] * 4 + [False], 2: [True] * 2 + [False] * 3, 3: [True] + [False] * 3}}


def test_level_accuracy_with_wilson_intervals_by_hand():
    recs = _records(SPEC)
    recs.loc[recs.task_id == "L2-4", ["no_answer"]] = True
    recs.loc[recs.task_id == "L3-3", ["error"]] = "timeout"
    table = gaia.level_accuracy(recs).set_index("level")
    assert table.loc["all", "n"] == 14 and table.loc["all", "correct"] == 4 + 2 + 1
    assert table.loc["all", "accuracy"] == pytest.approx(7 / 14)
    assert table.loc["L1", "accuracy"] == pytest.approx(4 / 5)
    assert (table.loc["L1", "ci_low"], table.loc["L1", "ci_high"]) == pytest.approx(
        _wilson_by_hand(4, 5)
    )
    assert (table.loc["L3", "ci_low"], table.loc["L3", "ci_high"]) == pytest.approx(
        _wilson_by_hand(1, 4)
    )
    assert table.loc["L2", "no_answer_rate"] == pytest.approx(1 / 5)
    assert table.loc["all", "no_answer_rate"] == pytest.approx(1 / 14)
    assert table.loc["L3", "errors"] == 1 and table.loc["L3", "error_rate"] == pytest.approx(1 / 4)


def test_level_accuracy_uses_first_attempts():
    first = _records({"A": {1: [True, False]}})
    second = first.assign(attempt=1, correct=[False, True])
    table = gaia.level_accuracy(pd.concat([second, first])).set_index("level")
    assert table.loc["L1", "accuracy"] == pytest.approx(1 / 2)  # attempt 0: True, False


def test_drop_rates_by_hand_and_bootstrap_replayed():
    recs = _records(SPEC)
    table = gaia.drop_rates(recs, rng=np.random.default_rng(3), rounds=200)
    l12, l23 = table.iloc[0], table.iloc[1]
    assert l12.transition == "L1→L2" and l23.transition == "L2→L3"
    assert l12.relative_drop == pytest.approx(1 - 0.4 / 0.8)  # = 0.5
    assert l12.absolute_drop == pytest.approx(0.8 - 0.4)
    assert l23.relative_drop == pytest.approx(1 - 0.25 / 0.4)  # = 0.375
    assert l23.absolute_drop == pytest.approx(0.4 - 0.25)
    # Replay the bootstrap: items resampled within each level, levels drawn in order 1, 2, 3.
    rng = np.random.default_rng(3)
    acc = {}
    for level, marks in SPEC["A"].items():
        values = np.array(marks, dtype=float)
        acc[level] = values[rng.integers(0, values.size, size=(200, values.size))].mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(acc[1] > 0, 1 - acc[2] / acc[1], np.nan)
    low, high = np.quantile(rel[np.isfinite(rel)], [0.025, 0.975])
    assert (l12.relative_low, l12.relative_high) == pytest.approx((low, high))
    low, high = np.quantile(acc[2] - acc[3], [0.025, 0.975])
    assert (l23.absolute_low, l23.absolute_high) == pytest.approx((low, high))


def test_drop_rate_is_nan_when_the_easier_level_is_all_wrong():
    recs = _records({"A": {1: [False, False], 2: [True], 3: [False]}})
    assert math.isnan(gaia.drop_rates(recs, rng=np.random.default_rng(0)).iloc[0].relative_drop)
    assert gaia.relative_drop(0.8, 0.4) == pytest.approx(0.5)


def test_pass_at_k_estimate_matches_the_formula():
    for n, c, k in [(5, 2, 2), (10, 3, 1), (10, 3, 5), (4, 0, 2), (3, 3, 3), (6, 5, 2)]:
        expected = 1 - math.comb(n - c, k) / math.comb(n, k)
        assert gaia.pass_at_k_estimate(n, c, k) == pytest.approx(expected)
    assert gaia.pass_at_k_estimate(5, 2, 2) == pytest.approx(1 - 3 / 10)
    with pytest.raises(ValueError, match="1 <= k <= n"):
        gaia.pass_at_k_estimate(2, 1, 3)


def test_pass_at_k_table_averages_items():
    # item L1-0: 3 attempts, 1 correct; item L1-1: 3 attempts, 0 correct.
    attempts = [
        _records({"A": {1: [ok0, ok1]}}).assign(attempt=a)
        for a, (ok0, ok1) in enumerate([(True, False), (False, False), (False, False)])
    ]
    table = gaia.pass_at_k(pd.concat(attempts), ks=(1, 2)).set_index(["level", "k"])
    # pass@1 = mean(1/3, 0); pass@2 = mean(1 - C(2,2)/C(3,2), 0) = mean(2/3, 0)
    assert table.loc[("L1", 1), "pass_at_k"] == pytest.approx((1 / 3 + 0) / 2)
    assert table.loc[("L1", 2), "pass_at_k"] == pytest.approx((1 - 1 / 3 + 0) / 2)
    with pytest.raises(gaia.GaiaDataError, match="fewer than k=4"):
        gaia.pass_at_k(pd.concat(attempts), ks=(4,))


def test_compare_systems_on_a_hand_table():
    # 10 items: both right 4, only A 3, only B 1, both wrong 2.
    a = [True] * 4 + [True] * 3 + [False] * 1 + [False] * 2
    b = [True] * 4 + [False] * 3 + [True] * 1 + [False] * 2
    recs = _records({"A": {1: a}, "B": {1: b}})
    result = gaia.compare_systems(recs, "A", "B", rng=np.random.default_rng(0), rounds=300)
    assert (result.n, result.only_a, result.only_b) == (10, 3, 1)
    assert result.accuracy_a - result.accuracy_b == pytest.approx((7 - 5) / 10)
    # exact McNemar: 2 * P[Binom(4, 1/2) <= 1] = 2 * (1 + 4) / 16
    assert result.mcnemar_p == pytest.approx(2 * (1 + 4) / 16)
    assert result.difference.low <= 0.2 <= result.difference.high
    with pytest.raises(gaia.GaiaDataError, match="item sets differ: 1 only in 'A'"):
        gaia.compare_systems(recs.iloc[:-1], "A", "B", rng=np.random.default_rng(0))
    with pytest.raises(gaia.GaiaDataError, match="no records for system 'C'"):
        gaia.compare_systems(recs, "A", "C", rng=np.random.default_rng(0))


def test_usage_by_level_and_summary():
    recs = _records(SPEC)
    recs["steps"] = [2, 4, 6, 8, 10] + [1] * 5 + [None, 3, 3, 3]
    recs["cost_usd"] = 0.5
    summary = gaia.summarize(recs, rng=np.random.default_rng(0), rounds=50)
    usage = summary.usage.set_index("level")
    assert usage.loc["L1", "steps_mean"] == pytest.approx((2 + 4 + 6 + 8 + 10) / 5)
    assert usage.loc["L3", "steps_mean"] == pytest.approx((3 + 3 + 3) / 3)  # None not counted
    assert usage.loc["all", "cost_usd_total"] == pytest.approx(14 * 0.5)
    assert summary.pass_at_k is None  # a single attempt per item
    assert list(summary.accuracy["level"]) == ["all", "L1", "L2", "L3"]
    assert len(summary.drops) == 2


# ----------------------------------------------------------------------------- export


def test_export_submission_round_trip_and_guide(tmp_path):
    items = gaia.load(
        _write_jsonl(tmp_path, [_row("a", 1, "5"), _row("b", 2, "x"), _row("c", 3, "y")])
    )
    preds = [
        _pred("S", "a", "Reasoning.\nFINAL ANSWER: 5"),
        _pred("S", "b", "no template here"),
        _pred("S", "c", None, error="timeout"),
        _pred("T", "a", "FINAL ANSWER: 6"),
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
    assert gaia.LEADERBOARD_URL in guide and "sub.jsonl" in guide
    assert "test split's answers are hidden" in guide


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
    assert gaia.level_counts(items) == {1: 12, 2: 12, 3: 8}
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


def test_demo_end_to_end_perfect_and_empty_systems():
    items = gaia.load("demo")
    preds = [_pred("oracle", it.task_id, f"Done.\nFINAL ANSWER: {it.final_answer}") for it in items]
    preds += [_pred("mute", it.task_id, "I am not sure.") for it in items]
    recs = gaia.score(items, preds)
    acc = gaia.level_accuracy(recs).set_index(["system", "level"])
    assert acc.loc[("oracle", "all"), "accuracy"] == 1.0
    assert acc.loc[("mute", "all"), "accuracy"] == 0.0
    assert acc.loc[("mute", "all"), "no_answer_rate"] == 1.0
