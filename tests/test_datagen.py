"""Tests of evalbench.datagen: parsing and validation, reference data, near-duplicates,
summaries, human verification files, the conclusion and the simulated generator."""

from __future__ import annotations

import csv
import json
import math
from collections import Counter
from datetime import datetime, timezone
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from evalbench import datagen as D
from evalbench.records import read_jsonl
from evalbench.runs import Run, open_run

REF_ROW = {
    "id": "ref:1",
    "problem": "Find the number of ordered pairs $(x,y)$ of positive integers with $x+y=10$.",
    "answer": 9,
}


def _output(**fields: object) -> str:
    return json.dumps(
        {"problem": "x" * 40, "answer": 7, "solution": "s", "topic": "algebra", **fields}
    )


# --------------------------------------------------------------------------- JSON + LaTeX


RAW_LATEX = r"""Here is my problem.

```json
{
  "problem": "Let \(x\) satisfy \(\frac{x}{2}+\sqrt{x}=12\). Find \(x\cdot 7\) if \(x \neq 0\).",
  "answer": 112,
  "solution": "Put \(t=\sqrt{x}\): \(t^2+2t=24\), \(t=4\), \(16\cdot 7=112\); \(\binom{4}{2}=6\).",
  "topic": "Algebra"
}
```"""


def test_raw_latex_breaks_plain_json_but_parses_to_the_latex_meant() -> None:
    body = RAW_LATEX.split("```json\n")[1].split("```")[0]
    with pytest.raises(json.JSONDecodeError):
        json.loads(body)  # \( and \s are invalid JSON escapes
    result = D.parse_generated(RAW_LATEX, id="g1", reference_id="ref:1")
    assert isinstance(result, D.GeneratedProblem)
    assert result.problem.startswith(r"Let \(x\) satisfy \(\frac{x}{2}+\sqrt{x}=12\)")
    assert r"x \neq 0" in result.problem  # \n of \neq is LaTeX, not a newline
    assert r"\(\binom{4}{2}=6\)" in result.solution  # \b of \binom is LaTeX, not a backspace
    assert (result.answer, result.topic, result.reference_id) == (112, "algebra", "ref:1")
    assert result.raw == RAW_LATEX


def test_frac_would_silently_become_a_form_feed_without_repair() -> None:
    text = (
        '{"problem": "Compute $\\frac{1}{2}$ of the number of divisors of 1000.", '
        '"answer": 8, "solution": "It has 16 divisors; $\\frac{16}{2}=8$.", '
        '"topic": "number theory"}'
    )
    naive = json.loads(text)  # valid JSON: \f is a form feed
    assert "\x0crac" in naive["problem"]
    result = D.parse_generated(text, id="g2")
    assert isinstance(result, D.GeneratedProblem)
    assert r"$\frac{1}{2}$" in result.problem and result.topic == "number_theory"


def test_bare_json_after_prose_and_properly_escaped_json_parse() -> None:
    escaped = "Sure!\n" + json.dumps(
        {
            "problem": r"Find $\sqrt{144}+\frac{30}{3}$ times two, minus one.",
            "answer": "043",
            "solution": r"$\sqrt{144}=12$, $12+10=22$, $2\cdot 22-1=43$.",
            "topic": "algebra",
        }
    )
    result = D.parse_generated(escaped, id="g3")
    assert isinstance(result, D.GeneratedProblem)
    assert result.answer == 43 and result.problem.startswith(r"Find $\sqrt{144}")


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("value", "expected"),
    [(42, 42), ("042", 42), (42.0, 42), ("42.0", 42), (" 7 ", 7), (0, 0), (999, 999), ("-1", -1)],
)
def test_parse_answer_accepts_integers_in_any_spelling(value: object, expected: int) -> None:
    assert D.parse_answer(value) == expected


@pytest.mark.parametrize("value", [3.5, "3.5", "abc", "", None, True, float("nan"), "4 2", [4]])
def test_parse_answer_rejects_non_integers(value: object) -> None:
    assert D.parse_answer(value) is None


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (1000, "answer 1000 is outside 0-999"),
        (-1, "answer -1 is outside 0-999"),
        (3.5, "answer '3.5' is not an integer"),
        ("abc", "answer 'abc' is not an integer"),
    ],
)
def test_bad_answers_give_a_specific_reason(answer: object, reason: str) -> None:
    result = D.parse_generated(_output(answer=answer), id="g", attempt=2)
    assert isinstance(result, D.InvalidGeneration)
    assert result.reason == reason
    assert (result.attempt, result.id, result.raw) == (2, "g", _output(answer=answer))


@pytest.mark.parametrize("answer", ["042", 42.0, 0, 999])
def test_good_answers_validate(answer: object) -> None:
    assert D.validate(json.loads(_output(answer=answer))) == []


def test_validate_lists_every_problem_with_the_output() -> None:
    reasons = D.validate({"problem": "too short", "answer": 1000, "topic": "calculus"})
    assert reasons == [
        "missing field 'solution'",
        f"problem text too short (9 < {D.PROBLEM_MIN_CHARS} chars)",
        "answer 1000 is outside 0-999",
        f"topic 'calculus' is not one of {', '.join(D.TOPICS)}",
    ]
    assert D.validate(json.loads(_output(solution="   "))) == ["solution is empty"]
    assert D.validate(json.loads(_output(problem="p" * 5001))) == [
        "problem text too long (5001 > 5000 chars)"
    ]


def test_outputs_without_json_are_invalid_records() -> None:
    prose = D.parse_generated("I cannot think of a problem.", id="g")
    assert isinstance(prose, D.InvalidGeneration) and prose.reason == "no JSON object found"
    empty = D.parse_generated(None, id="g")
    assert isinstance(empty, D.InvalidGeneration) and empty.reason == "empty output"


@pytest.mark.parametrize(
    "topic", ["Number Theory", "number-theory", "number_theory", " NUMBER THEORY "]
)
def test_topic_spellings_normalise(topic: str) -> None:
    assert D.normalize_topic(topic) == "number_theory"


# --------------------------------------------------------------------------- reference data


def test_reference_has_30_plus_60_problems_and_2024_answers_agree(mirror: Path) -> None:
    ref = D.load_reference()
    assert ref["source"].value_counts().to_dict() == {"matharena": 60, "qwen25math": 30}
    assert ref["id"].is_unique and ref["answer"].between(0, 999).all()
    assert ref.groupby(["source", "year", "contest"]).size().eq(15).all()
    both = ref[ref.source == "qwen25math"].merge(
        ref[ref.source == "matharena"], on=["year", "contest", "number"]
    )
    assert len(both) == 30 and (both["answer_x"] == both["answer_y"]).all()
    assert D.answer_mismatches(ref).empty
    first = ref.set_index("id")
    assert first.loc["qwen25math:2024-I-1", "answer"] == 204  # Aya's walk: 204 minutes
    assert first.loc["matharena:2024-I-2", "answer"] == 25  # '025' in answers.csv
    assert first.loc["matharena:2025-I-1", "answer"] == 70  # bases b > 9 with 17_b | 97_b
    assert first.loc["qwen25math:2024-I-1", "solution"].startswith("$\\frac{9}{s} + t = 4$")
    assert len(D.unique_reference(ref)) == 60


def test_answer_mismatch_is_reported() -> None:
    ref = pd.DataFrame(
        [
            {"id": "a:1", "source": "a", "year": 2024, "contest": "I", "number": 1, "answer": 5},
            {"id": "b:1", "source": "b", "year": 2024, "contest": "I", "number": 1, "answer": 6},
            {"id": "b:2", "source": "b", "year": 2024, "contest": "I", "number": 2, "answer": 7},
        ]
    )
    bad = D.answer_mismatches(ref)
    assert bad[["id_x", "answer_x", "id_y", "answer_y"]].values.tolist() == [["a:1", 5, "b:1", 6]]


def test_hugging_face_columns_map_from_an_in_memory_dataset() -> None:
    datasets = pytest.importorskip("datasets")
    aime_1983_2025 = datasets.Dataset.from_dict(
        {
            "ID": ["1983-1", "2025-II-7"],
            "Year": [1983, 2025],
            "Problem Number": [1, 7],
            "Question": ["Let $x$, $y$ and $z$ all exceed $1$ ...", "Let $A$ be the set ..."],
            "Answer": ["60", "237"],
            "Part": [None, "II"],
        }
    )
    df = D.reference_from_rows(aime_1983_2025, source="TianHongZXY/aime-1983-2025")
    assert df[["id", "year", "number", "answer"]].values.tolist() == [
        ["TianHongZXY/aime-1983-2025:1983-1", 1983, 1, 60],
        ["TianHongZXY/aime-1983-2025:2025-II-7", 2025, 7, 237],
    ]
    assert pd.isna(df["contest"][0]) and df["contest"][1] == "II"  # 1983 had one contest
    aime25 = pd.DataFrame(
        {"id": ["0", "2025-I-13"], "problem": ["P0 ...", "P13 ..."], "answer": ["070", 490]}
    )
    df = D.reference_from_rows(aime25, source="math-ai/aime25")
    assert df["answer"].tolist() == [70, 490] and df["problem"].tolist() == ["P0 ...", "P13 ..."]
    assert df[["year", "contest", "number"]].iloc[1].tolist() == [2025, "I", 13]
    assert df["id"].tolist() == ["math-ai/aime25:0", "math-ai/aime25:2025-I-13"]


def test_load_hf_reference_takes_the_only_split(monkeypatch: pytest.MonkeyPatch) -> None:
    datasets = pytest.importorskip("datasets")
    table = datasets.Dataset.from_dict(
        {"id": ["2025-I-1"], "problem": ["Find ..."], "answer": [70]}
    )
    calls = []

    def fake_load_dataset(name: str, revision: str | None = None) -> object:
        calls.append((name, revision))
        return datasets.DatasetDict({"test": table})

    monkeypatch.setattr(datasets, "load_dataset", fake_load_dataset)
    df = D.load_hf_reference("math-ai/aime25", revision="abc")
    assert calls == [("math-ai/aime25", "abc")] and df["id"].tolist() == ["math-ai/aime25:2025-I-1"]
    monkeypatch.setattr(
        datasets, "load_dataset", lambda *a, **k: datasets.DatasetDict({"a": table, "b": table})
    )
    with pytest.raises(ValueError, match=r"several splits \['a', 'b'\]; pass split="):
        D.load_hf_reference("x/y")
    assert len(D.load_hf_reference("x/y", split="b")) == 1


def test_hugging_face_rows_with_bad_answers_or_no_problem_column_fail_loudly() -> None:
    with pytest.raises(ValueError, match=r"src row 1: answer '12/5' is not an integer 0-999"):
        D.reference_from_rows(
            pd.DataFrame({"problem": ["a", "b"], "answer": [1, "12/5"]}), source="src"
        )
    with pytest.raises(ValueError, match=r"no 'problem' column"):
        D.reference_from_rows(pd.DataFrame({"text": ["a"], "answer": [1]}), source="src")


# --------------------------------------------------------------------------- generation prompt


def test_generation_prompt_shows_a_reference_picked_with_the_rng() -> None:
    pool = pd.DataFrame(
        {
            "id": [f"r{i}" for i in range(20)],
            "problem": [f"Problem number {i}." for i in range(20)],
            "answer": range(20),
        }
    )
    a = D.build_generation_messages(pool, "geometry", np.random.default_rng(5))
    b = D.build_generation_messages(pool, "geometry", np.random.default_rng(5))
    assert a == b
    expected = int(np.random.default_rng(5).integers(20))
    assert a.reference_id == f"r{expected}" and a.topic == "geometry"
    user = a.messages[1]["content"]
    assert f"Problem: Problem number {expected}.\nAnswer: {expected}" in user
    assert "topic: geometry" in user and '"answer": <integer 0-999>' in user
    picks = {
        D.build_generation_messages(pool, "algebra", np.random.default_rng(s)).reference_id
        for s in range(30)
    }
    assert len(picks) > 10
    with pytest.raises(ValueError, match="unknown topic 'calculus'"):
        D.build_generation_messages(pool, "calculus", np.random.default_rng(0))


def test_assign_topics_is_balanced() -> None:
    topics = D.assign_topics(30, np.random.default_rng(0))
    counts = Counter(topics)
    assert set(counts) == set(D.TOPICS) and set(counts.values()) == {4, 5}  # 30 = 7·4 + 2


# --------------------------------------------------------------------------- near duplicates


def test_tfidf_matches_scikit_learn() -> None:
    sklearn_text = pytest.importorskip("sklearn.feature_extraction.text")
    texts = ["find the number of pairs", "find all pairs of integers", "a circle of radius 3", ""]
    ours = D.tfidf_vectors(texts, (3, 5))
    vec = sklearn_text.TfidfVectorizer(analyzer="char", ngram_range=(3, 5), lowercase=False)
    theirs = vec.fit_transform(texts)
    np.testing.assert_allclose((ours @ ours.T).toarray(), (theirs @ theirs.T).toarray(), atol=1e-12)


def test_normalisation_ignores_markup_figures_and_spacing() -> None:
    a = r"Let $s+\frac{1}{2}$ be  given.[asy]draw((0,0)--(1,1));[/asy]"
    b = r"let \( s + \dfrac{1}{2} \) be given."
    assert D.normalize_problem_text(a) == D.normalize_problem_text(b) == "let s + frac 1 2 be given"
    assert D.normalize_problem_text("x = 12, y = 7", mask_numbers=True) == "x = 0 y = 0"


def test_verbatim_and_lightly_edited_copies_are_flagged(mirror: Path) -> None:
    ref = D.unique_reference(D.load_reference())
    verbatim = ref.assign(id="copy-" + ref["id"])
    report = D.near_duplicates(verbatim, ref)
    assert report.top["flagged"].all() and np.allclose(report.top["similarity"], 1.0)
    for seed in range(5):
        rng = np.random.default_rng(seed)
        edited = ref.assign(
            id="edit-" + ref["id"], problem=[D.lightly_edit(p, rng) for p in ref["problem"]]
        )
        assert (edited["problem"] != ref["problem"]).all()
        top = D.near_duplicates(edited, ref).top
        assert top["flagged"].all(), top.loc[~top["flagged"]]
        assert (top["reference_id"].to_numpy() == ref["id"].to_numpy()).all()
        assert top["similarity"].min() > 0.8  # measured minimum 0.84 over 30 seeds


def test_different_real_problems_are_not_near_duplicates(mirror: Path) -> None:
    ref = D.unique_reference(D.load_reference())
    report = D.near_duplicates(ref, ref)  # each problem against all *other* problems
    assert report.pairs.empty
    assert report.top["similarity"].max() < D.DEFAULT_DUPLICATE_THRESHOLD - 0.1  # measured 0.46


def test_two_transcriptions_of_the_same_problem_match(mirror: Path) -> None:
    ref = D.load_reference()
    qwen, arena = ref[ref.source == "qwen25math"], ref[ref.source == "matharena"]
    top = D.near_duplicates(qwen, arena).top
    same = top["generated_id"].str.split(":").str[1] == top["reference_id"].str.split(":").str[1]
    assert same.all()  # the closest MathArena problem is always the same problem
    # all but 2024 I-5, which MathArena rewrote as a different statement without the figure
    assert set(top.loc[~top["flagged"], "generated_id"]) == {"qwen25math:2024-I-5"}


def test_near_duplicate_report_shape_and_threshold() -> None:
    gen = pd.DataFrame(
        {"id": ["g1", "g2"], "problem": [REF_ROW["problem"], "Compute the area of a unit circle."]}
    )
    ref = pd.DataFrame(
        {"id": ["r1", "r2"], "problem": [REF_ROW["problem"], "A triangle has sides 3, 4, 5."]}
    )
    report = D.near_duplicates(gen, ref)
    assert report.pairs[["generated_id", "reference_id"]].values.tolist() == [["g1", "r1"]]
    assert report.flagged_ids() == {"g1"}
    assert report.top.set_index("generated_id").loc["g2", "flagged"] == False  # noqa: E712
    assert D.near_duplicates(gen, ref, threshold=0.0).pairs.shape[0] == 4
    no_ref = D.near_duplicates(gen, ref.iloc[:0])
    assert no_ref.pairs.empty and no_ref.top["similarity"].isna().all()


# --------------------------------------------------------------------------- summaries


def _judge_frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "problem_id": ["p1", "p2", "p3", "p4"],
            "status": ["scored", "scored", "scored", "unscored"],
            "weighted": [4.0, 3.0, 5.0, np.nan],
            "correctness": [4, 2, 5, np.nan],
            "clarity": [4, 4, 5, np.nan],
            "difficulty_match": [4, 3, 5, np.nan],
            "completeness": [4, 3, 5, np.nan],
        }
    )


def test_judge_summary_by_hand() -> None:
    summary = D.judge_summary(_judge_frame(), rng=np.random.default_rng(0), rounds=200)
    m = summary.metrics
    assert m.loc["mean_score", "estimate"] == pytest.approx((4 + 3 + 5) / 3)  # 4.0
    assert m.loc["pass_rate", "estimate"] == pytest.approx(2 / 3)  # 4 and 5 are >= 3.5
    assert m.loc["excellent_rate", "estimate"] == pytest.approx(1 / 3)  # only 5 is >= 4.5
    assert m.loc["correctness", "estimate"] == pytest.approx((4 + 2 + 5) / 3)
    assert m.loc["pass_rate", "n"] == 3
    assert (summary.n_items, summary.n_scored, summary.n_unscored) == (4, 3, 1)
    assert summary.unscored_by_status == {"unscored": 1}
    assert m.loc["mean_score", "low"] <= 4.0 <= m.loc["mean_score", "high"]


def test_judge_summary_accepts_judge_results_frame_names() -> None:
    frame = _judge_frame().rename(
        columns={"weighted": "weighted_score", "clarity": "score_clarity"}
    )
    summary = D.judge_summary(frame, rng=np.random.default_rng(0), rounds=50)
    assert summary.metrics.loc["clarity", "estimate"] == pytest.approx((4 + 4 + 5) / 3)


def test_judge_summary_rejects_a_scored_row_without_score() -> None:
    bad = _judge_frame()
    bad.loc[0, "weighted"] = np.nan
    with pytest.raises(
        ValueError, match="problem 'p1' is scored but its weighted score is missing"
    ):
        D.judge_summary(bad, rng=np.random.default_rng(0))


def _verdicts() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "generated_id": ["g1", "g2", "g3", "g4", "g5", "g6"],
            "outcome": ["win", "win", "loss", "tie", "tie", None],
        }
    )


def test_win_rate_by_hand_with_duplicates_counted_as_losses() -> None:
    plain = D.win_rate(_verdicts(), rng=np.random.default_rng(0), rounds=200)
    assert (plain.n, plain.wins, plain.losses, plain.ties, plain.unscored) == (5, 2, 1, 2, 1)
    assert plain.table.loc["win_rate", "estimate"] == pytest.approx((2 + 2 / 2) / 5)  # 0.6
    assert plain.table.loc["wins", "estimate"] == pytest.approx(2 / 5)
    assert plain.table.loc["ties", "low"] == pytest.approx(D.stats.wilson_interval(2, 5).low)
    dup = D.win_rate(
        _verdicts(), rng=np.random.default_rng(0), duplicate_ids={"g1", "g4"}, rounds=200
    )
    assert (dup.wins, dup.losses, dup.ties) == (1, 3, 1)  # g1's win and g4's tie become losses
    assert dup.table.loc["win_rate", "estimate"] == pytest.approx((1 + 1 / 2) / 5)  # 0.3
    assert (dup.duplicate_comparisons, dup.duplicate_wins_changed) == (2, 2)


def test_win_rate_can_exclude_duplicates_instead() -> None:
    out = D.win_rate(
        _verdicts(),
        rng=np.random.default_rng(0),
        duplicate_ids=["g1", "g3"],
        duplicate_policy="exclude",
    )
    assert (out.n, out.wins, out.losses, out.ties) == (3, 1, 0, 2)
    assert out.table.loc["win_rate", "estimate"] == pytest.approx((1 + 2 / 2) / 3)
    assert (out.duplicate_comparisons, out.duplicate_wins_changed) == (2, 1)  # g3 was a loss


def test_pairwise_outcome_maps_model_level_verdicts() -> None:
    assert [D.pairwise_outcome(v) for v in ("x", "y", "tie", None)] == ["win", "loss", "tie", None]
    assert D.pairwise_outcome("y", generated_side="y") == "win"
    with pytest.raises(ValueError):
        D.pairwise_outcome("A")


def test_topic_distribution_lists_every_topic() -> None:
    table = D.topic_distribution(pd.DataFrame({"topic": ["algebra", "algebra", "geometry", "x"]}))
    assert table.loc["algebra", "count"] == 2 and table.loc["probability", "count"] == 0
    assert table.loc["geometry", "share"] == pytest.approx(1 / 4)
    assert list(table.index) == [*D.TOPICS, "x"]


def test_answer_distribution_by_hand() -> None:
    s = D.answer_distribution([10, 20, 30, 41, 510, 10])
    assert (s.n, s.min, s.max) == (6, 10, 510)
    assert s.share_below_100 == pytest.approx(5 / 6) and s.share_below_10 == 0
    assert s.most_common[0] == (10, 2)
    assert s.last_digit_counts == [5, 1, 0, 0, 0, 0, 0, 0, 0, 0]
    expected = 6 / 10  # uniform expectation per digit
    chi2 = ((5 - expected) ** 2 + (1 - expected) ** 2 + 8 * expected**2) / expected
    assert s.last_digit_chi2 == pytest.approx(chi2)  # (19.36 + 0.16 + 2.88) / 0.6 = 37.33
    assert s.last_digit_p == pytest.approx(sps.chi2.sf(chi2, df=9))
    assert D.answer_distribution([]).n == 0


# --------------------------------------------------------------------------- verification


def _review(pid: str, scores: tuple[int, int, int, int], status: str, when: str) -> D.Verification:
    return D.make_verification(
        pid,
        dict(zip(D.DIMENSIONS, scores, strict=True)),
        status,
        "ok",
        verified_at=datetime.fromisoformat(when),
    )


def test_verification_file_round_trip_and_merge(tmp_path: Path) -> None:
    path = D.verifications_path(tmp_path / "aime_generated.json")
    assert path.name == "aime_generated_verifications.json"
    first = _review("gen_1", (5, 4, 4, 5), "approved", "2025-01-10T12:00:00+00:00")
    D.save_verifications(path, [first])
    raw = json.loads(path.read_text())
    assert raw["gen_1"]["scores"] == {
        "correctness": 5,
        "clarity": 4,
        "difficulty_match": 4,
        "completeness": 5,
    }
    assert raw["gen_1"]["total_score"] == pytest.approx((5 + 4 + 4 + 5) / 4)  # 4.5
    assert raw["gen_1"]["verified_at"].startswith("2025-01-10T12:00:00")
    assert (
        datetime.fromisoformat(raw["gen_1"]["verified_at"].replace("Z", "+00:00"))
        .utcoffset()
        .total_seconds()
        == 0
    )
    assert set(raw["gen_1"]) >= {"scores", "total_score", "status", "comments", "verified_at"}
    second = _review("gen_2", (2, 3, 3, 2), "rejected", "2025-01-11T09:30:00+02:00")
    D.save_verifications(path, {"gen_2": second})
    loaded = D.load_verifications(path)
    assert set(loaded) == {"gen_1", "gen_2"} and loaded["gen_1"] == first
    assert loaded["gen_2"].verified_at == datetime(2025, 1, 11, 7, 30, tzinfo=timezone.utc)
    redo = _review("gen_1", (3, 3, 3, 3), "needs_revision", "2025-01-12T00:00:00+00:00")
    stale = _review("gen_2", (5, 5, 5, 5), "approved", "2024-12-31T00:00:00+00:00")
    merged = D.save_verifications(path, [redo, stale])
    assert merged["gen_1"].status == "needs_revision"  # newer review wins
    assert merged["gen_2"].status == "rejected"  # an older review does not overwrite
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary files left


def test_naive_time_stamps_read_as_utc_and_bad_files_name_the_key(tmp_path: Path) -> None:
    path = tmp_path / "v.json"
    entry = {
        "scores": {"correctness": 5, "clarity": 4, "difficulty_match": 4, "completeness": 5},
        "total_score": 4.5,
        "status": "approved",
        "comments": "",
        "verified_at": "2025-01-10T12:00:00",
    }
    path.write_text(json.dumps({"gen_aime_1": entry}))  # the Hello-Agents layout
    assert D.load_verifications(path)["gen_aime_1"].verified_at.tzinfo == timezone.utc
    path.write_text(json.dumps({"gen_aime_1": {**entry, "total_score": 3.0}}))
    with pytest.raises(ValueError, match=r"v.json: verification 'gen_aime_1': .*not the mean"):
        D.load_verifications(path)
    path.write_text(json.dumps({"gen_aime_1": {**entry, "status": "ok"}}))
    with pytest.raises(ValueError, match=r"verification 'gen_aime_1': status"):
        D.load_verifications(path)
    assert D.load_verifications(tmp_path / "missing.json") == {}


def _problems() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "id": ["gen_1", "gen_2", "gen_3"],
            "topic": ["algebra", "geometry", "probability"],
            "problem": ["Line one\nline two of problem 1", "Problem <b>2</b>", "Problem 3"],
            "answer": [12, 34, 56],
            "solution": ["s1", "s2", '=HYPERLINK("http://x")'],
        }
    )


def _edit_csv(path: Path, edits: dict[str, dict[str, str]]) -> None:
    with open(path, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    for row in rows:
        row.update(edits.get(row["problem_id"], {}))
    with open(path, "w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def test_csv_export_edit_import_round_trip(tmp_path: Path) -> None:
    csv_path = D.export_verification_csv(_problems(), tmp_path / "review.csv")
    with open(csv_path, encoding="utf-8", newline="") as fh:
        exported = list(csv.DictReader(fh))
    assert exported[0]["problem"] == "Line one\nline two of problem 1"
    assert exported[2]["solution"].startswith("'=HYPERLINK")  # not run as a formula
    scores = {"correctness": "5", "clarity": "4.0", "difficulty_match": "4", "completeness": "5"}
    _edit_csv(
        csv_path,
        {
            "gen_1": {**scores, "status": "approved", "comments": "fine"},
            "gen_3": {**scores, "status": "needs_revision"},
        },
    )
    when = datetime(2025, 2, 1, tzinfo=timezone.utc)
    imported = D.import_verification_csv(csv_path, verified_at=when)
    assert set(imported) == {"gen_1", "gen_3"}  # gen_2 was left blank: not reviewed yet
    assert imported["gen_1"].scores == {
        "correctness": 5,
        "clarity": 4,
        "difficulty_match": 4,
        "completeness": 5,
    }
    assert imported["gen_1"].total_score == pytest.approx(18 / 4)
    assert imported["gen_1"].verified_at == when and imported["gen_1"].comments == "fine"
    store = tmp_path / "v.json"
    D.save_verifications(store, imported)
    again = D.export_verification_csv(
        _problems(), tmp_path / "again.csv", D.load_verifications(store)
    )
    reimported = D.import_verification_csv(
        again, verified_at=datetime(2025, 3, 1, tzinfo=timezone.utc)
    )
    merged = D.save_verifications(store, reimported)
    assert merged["gen_1"].verified_at == when  # unchanged review keeps its time stamp


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ({"correctness": "6"}, r"review.csv:4: correctness must be an integer 1-5, got '6'"),
        ({"clarity": "4.5"}, r"review.csv:4: clarity must be an integer 1-5, got '4.5'"),
        ({"completeness": ""}, r"review.csv:4: completeness must be an integer 1-5, got ''"),
        (
            {"status": "ok"},
            r"review.csv:4: status must be one of approved, rejected, needs_revision",
        ),
    ],
)
def test_bad_csv_row_error_names_the_line(
    tmp_path: Path, edit: dict[str, str], message: str
) -> None:
    csv_path = D.export_verification_csv(_problems(), tmp_path / "review.csv")
    good = {
        "correctness": "5",
        "clarity": "4",
        "difficulty_match": "4",
        "completeness": "5",
        "status": "approved",
    }
    # line 1 header; gen_1 spans lines 2-3 (its problem has a newline); gen_2 starts on line 4
    _edit_csv(csv_path, {"gen_1": good, "gen_2": {**good, **edit}})
    with pytest.raises(ValueError, match=message):
        D.import_verification_csv(csv_path)


def test_csv_with_missing_columns_or_repeated_problem_fails(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text("problem_id,correctness\ngen_1,5\n")
    with pytest.raises(ValueError, match=r"r.csv:1: missing column"):
        D.import_verification_csv(path)
    row = "gen_1,5,4,4,5,approved,\n"
    path.write_text(
        "problem_id,correctness,clarity,difficulty_match,completeness,status,comments\n" + row + row
    )
    with pytest.raises(ValueError, match=r"r.csv:3: problem 'gen_1' already reviewed on line 2"):
        D.import_verification_csv(path)


def test_verification_form_saves_through_the_same_file(tmp_path: Path) -> None:
    pytest.importorskip("ipywidgets")
    path = tmp_path / "v.json"
    form = D.verification_form(_problems(), path)
    view, controls, buttons, _message = form.children
    assert "Problem &lt;b&gt;2&lt;/b&gt;" not in view.value  # first problem shown
    prev, save, nxt = buttons.children
    nxt.click()
    assert "Problem &lt;b&gt;2&lt;/b&gt;" in view.value and "<b>2</b>" not in view.value  # escaped
    *sliders, status, comments = controls.children
    for slider, value in zip(sliders, (5, 4, 3, 2), strict=True):
        slider.value = value
    status.value, comments.value = "needs_revision", "check the answer"
    save.click()
    saved = D.load_verifications(path)["gen_2"]
    assert saved.scores == {
        "correctness": 5,
        "clarity": 4,
        "difficulty_match": 3,
        "completeness": 2,
    }
    assert (saved.status, saved.comments, saved.total_score) == (
        "needs_revision",
        "check the answer",
        3.5,
    )
    prev.click()
    nxt.click()  # back on gen_2: the form shows the saved review
    assert [s.value for s in sliders] == [5, 4, 3, 2] and status.value == "needs_revision"


def test_human_summary_and_agreement_with_the_judge() -> None:
    reviews = {
        "p1": _review("p1", (4, 4, 4, 4), "approved", "2025-01-01T00:00:00+00:00"),
        "p2": _review("p2", (2, 4, 3, 3), "rejected", "2025-01-01T00:00:00+00:00"),
        "p3": _review("p3", (5, 5, 4, 4), "approved", "2025-01-01T00:00:00+00:00"),
        "p4": _review("p4", (4, 3, 4, 3), "needs_revision", "2025-01-01T00:00:00+00:00"),
    }
    human = D.human_summary(reviews)
    assert human.approved_rate.estimate == pytest.approx(2 / 4)
    assert human.score_pass_rate.estimate == pytest.approx(3 / 4)  # totals 4, 3, 4.5, 3.5
    assert human.status_counts == {"approved": 2, "rejected": 1, "needs_revision": 1}
    assert human.dimension_means["correctness"] == pytest.approx((4 + 2 + 5 + 4) / 4)
    pairs = D.paired_human_judge(reviews, _judge_frame())
    assert len(pairs) == 3 * 5  # p1-p3 scored by both (p4 unscored by the judge), 4 dims + total
    table = D.human_judge_agreement(reviews, _judge_frame())
    # correctness: human (4, 2, 5) vs judge (4, 2, 5) -> perfect
    assert table.loc["correctness", "exact"] == 1.0 and table.loc[
        "correctness", "qwk"
    ] == pytest.approx(1.0)
    # clarity: human (4, 4, 5) vs judge (4, 4, 5)
    assert table.loc["clarity", "pearson"] == pytest.approx(1.0)
    # completeness: human (4, 3, 4) vs judge (4, 3, 5): exact 2/3, bias (0 + 0 + 1) / 3
    assert table.loc["completeness", "exact"] == pytest.approx(2 / 3)
    assert table.loc["completeness", "bias"] == pytest.approx(1 / 3)
    # total: human (4, 3, 4.5) vs judge weighted (4, 3, 5)
    assert table.loc["total", "within_1"] == 1.0 and math.isnan(table.loc["total", "qwk"])
    assert table["n"].eq(3).all()


# --------------------------------------------------------------------------- conclusion


def test_conclusion_table_met_unmet_and_missing() -> None:
    out = D.conclusion(
        {"judge_mean": 4.2, "win_rate": 0.40, "judge_pass_rate": 0.80, "human_pass_rate": None},
        duplicate_rate=0.05,
    )
    assert out.table["threshold"].tolist() == [4.0, 0.45, 0.80, 0.90]
    assert out.table["met"].tolist() == [True, False, True, None]  # 0.80 >= 0.80 is met
    assert out.table["value"].tolist()[:3] == [4.2, 0.40, 0.80] and pd.isna(out.table["value"][3])
    assert any("real problems" in s for s in out.next_steps)  # advice for the win rate
    assert any(s.startswith("No data for human pass rate") for s in out.next_steps)
    assert any("5% of generated problems nearly copy" in s for s in out.next_steps)
    done = D.conclusion(
        {"judge_mean": 4.5, "win_rate": 0.5, "judge_pass_rate": 0.9, "human_pass_rate": 0.95}
    )
    assert done.table["met"].tolist() == [True] * 4 and done.next_steps[0].startswith(
        "All criteria met"
    )
    assert D.conclusion({"judge_mean": float("nan")}).table["met"].iloc[0] is None


# --------------------------------------------------------------------------- simulation


def test_sim_output_is_deterministic_for_a_seed() -> None:
    def run(seed: int) -> list[D.SimGeneration]:
        rng = np.random.default_rng(seed)
        return [
            D.sim_generation_output(REF_ROW, t, rng=rng, malformed_rate=0.2, copy_rate=0.1)
            for t in D.assign_topics(50, np.random.default_rng(seed))
        ]

    first, again = run(3), run(3)
    assert [g[:4] for g in first] == [g[:4] for g in again]  # text, kind, detail, answer
    np.testing.assert_array_equal([g.true_quality for g in first], [g.true_quality for g in again])
    assert [g.text for g in first] != [g.text for g in run(4)]


def test_sim_validity_rates_answers_and_hidden_quality() -> None:
    n, malformed, copies = 1400, 0.2, 0.1
    rng = np.random.default_rng(11)
    out = [
        D.sim_generation_output(
            REF_ROW,
            D.TOPICS[i % 7],
            rng=rng,
            quality=3.5,
            malformed_rate=malformed,
            copy_rate=copies,
        )
        for i in range(n)
    ]
    parsed = [D.parse_generated(g.text, id=f"g{i}") for i, g in enumerate(out)]
    kinds = Counter(g.kind for g in out)
    sd = math.sqrt(malformed * (1 - malformed) / n)  # binomial standard error of the share
    assert abs(kinds["malformed"] / n - malformed) < 4 * sd
    assert abs(kinds["copy"] / n - copies) < 4 * math.sqrt(copies * (1 - copies) / n)
    for g, p in zip(out, parsed, strict=True):
        assert isinstance(p, D.InvalidGeneration) == (g.kind == "malformed"), (g, p)
        if g.kind == "valid":
            assert isinstance(p, D.GeneratedProblem) and p.answer == g.answer
            assert D.sim_true_quality(p.problem) == pytest.approx(g.true_quality)
    details = Counter(g.detail for g in out)
    assert sum(v for k, v in details.items() if k.endswith("+raw_latex")) > 100
    assert {"answer_1000", "missing_solution", "prose"} <= set(details)
    valid = [g.true_quality for g in out if g.kind == "valid"]
    assert abs(np.mean(valid) - 3.5) < 0.15 and min(valid) >= 1.0 and max(valid) <= 5.0


def test_sim_answers_are_correct_for_each_template() -> None:
    rng = np.random.default_rng(2)
    for topic in D.TOPICS:
        for _ in range(20):
            g = D.sim_generation_output(REF_ROW, topic, rng=rng)
            p = D.parse_generated(g.text, id="g")
            assert isinstance(p, D.GeneratedProblem) and p.topic == topic
            assert str(p.answer) in p.solution  # the worked solution ends at the answer
    # recompute one template's answer by hand from the problem text alone
    p = D.parse_generated(D.sim_generation_output(REF_ROW, "probability", rng=rng).text, id="g")
    assert isinstance(p, D.GeneratedProblem)
    sides = int(p.problem.split("fair ")[1].split("-sided")[0])
    total = int(p.problem.split("sum of the two numbers rolled is $")[1].split("$")[0])
    ways = sum(1 for a in range(1, sides + 1) for b in range(1, sides + 1) if a + b == total)
    prob = Fraction(ways, sides * sides)
    assert p.answer == prob.numerator + prob.denominator


def test_sim_copies_are_caught_and_fresh_problems_are_not(mirror: Path) -> None:
    ref = D.unique_reference(D.load_reference())
    rng = np.random.default_rng(7)
    rows = []
    for i in range(300):
        ref_row = ref.iloc[i % len(ref)]
        g = D.sim_generation_output(ref_row, D.TOPICS[i % 7], rng=rng, copy_rate=0.2)
        p = D.parse_generated(g.text, id=f"g{i}", reference_id=ref_row["id"])
        assert isinstance(p, D.GeneratedProblem)
        rows.append({**p.model_dump(), "kind": g.kind})
    problems = pd.DataFrame(rows)
    report = D.near_duplicates(problems, ref)
    flagged = problems["id"].isin(report.flagged_ids())
    assert (flagged == (problems["kind"] == "copy")).all()
    copies = report.top[flagged.to_numpy()]
    assert (
        copies["reference_id"].to_numpy() == problems.loc[flagged, "reference_id"].to_numpy()
    ).all()


def test_summarize_puts_the_pieces_together() -> None:
    rng = np.random.default_rng(0)
    gens = [D.sim_generation_output(REF_ROW, t, rng=rng) for t in D.assign_topics(14, rng)]
    problems = D.problems_frame(
        D.parse_generated(g.text, id=f"p{i + 1}") for i, g in enumerate(gens)
    )
    verdicts = pd.DataFrame({"generated_id": ["p1", "p2"], "outcome": ["win", "loss"]})
    dup = D.near_duplicates(
        problems, pd.DataFrame({"id": ["r"], "problem": [problems["problem"][0]]})
    )
    out = D.summarize(
        problems, rng=rng, judge_results=_judge_frame(), verdicts=verdicts, duplicates=dup
    )
    assert out.win.wins == 0 and out.win.losses == 2  # p1 copies the 'reference': its win is a loss
    assert out.topics["count"].sum() == 14 and out.topics["count"].eq(2).all()
    assert out.human is None and out.conclusion.table["met"].tolist() == [True, False, False, None]
    assert out.answers.n == 14


# --------------------------------------------------------------------------- the study

_SETTINGS = (
    "Find the number of ordered pairs of positive integers whose sum is a multiple of seven.",
    "A circle of radius five is inscribed in a right triangle with integer side lengths.",
    "Let the sequence of real numbers satisfy a recurrence relation with two initial terms.",
    "Determine the remainder when the product of the first twenty odd primes is divided by.",
    "There exist complex numbers whose modulus and argument satisfy the following equations.",
    "A fair coin is tossed repeatedly until the pattern heads tails heads first appears here.",
)


def _reference() -> pd.DataFrame:
    """Six made-up 'real' problems (no mirror needed) in the reference layout."""
    return pd.DataFrame(
        {
            "id": [f"demo:2000-I-{i + 1}" for i in range(6)],
            "source": "demo",
            "year": 2000,
            "contest": "I",
            "number": range(1, 7),
            "problem": list(_SETTINGS),
            "answer": [12, 345, 6, 789, 10, 111],
            "solution": None,
        }
    )


def _params_file(tmp_path: Path, name: str = "dg", **changes: object) -> Path:
    data: dict[str, object] = {
        "study": "datagen",
        "title": "test",
        "n_problems": 14,
        "win_rate_pairs": 10,
        "bootstrap_rounds": 50,
        "verifications": "simulated",
        "human_sample": 8,
        "generator": {
            "name": "gen",
            "provider": "sim",
            "sim": {"quality": 4.0, "malformed_rate": 0.3, "copy_rate": 0.1},
        },
        "judge": {"name": "judge", "provider": "sim", "sim": {"noise": 0.5}},
    }
    for key, value in changes.items():
        target = data
        *path, last = key.split("__")
        for part in path:
            target = target[part]
        target[last] = value
    path = tmp_path / f"{name}.yaml"
    path.write_text(json.dumps(data))  # JSON is YAML
    return path


def _open(path: Path) -> Run:
    return open_run(path)


def test_params_validate_topics_names_and_verification_paths(tmp_path: Path) -> None:
    from evalbench.params import ParamsError, load_params

    params = load_params(_params_file(tmp_path, topics=["Number Theory", "geometry"]))
    assert isinstance(params, D.DatagenParams)
    assert params.topics == ["number_theory", "geometry"]
    assert [s.name for s in params.model_specs()] == ["gen", "judge"] and params.simulated
    assert params.thresholds.model_dump() == D.THRESHOLDS
    with pytest.raises(ParamsError, match=r"topics: .*subset of algebra.*\['calculus'\]"):
        load_params(_params_file(tmp_path, topics=["algebra", "calculus"]))
    with pytest.raises(ParamsError, match=r"generator and judge need different names"):
        load_params(_params_file(tmp_path, judge__name="gen"))
    with pytest.raises(ParamsError, match=r"thresholds.win_rat: unknown key"):
        load_params(_params_file(tmp_path, thresholds={"win_rat": 0.5}))
    with pytest.raises(ParamsError, match=r"verifications: data path not found"):
        load_params(_params_file(tmp_path, verifications="nope_verifications.json"))
    with pytest.raises(ParamsError, match=r"simulated reviews need a simulated generator"):
        load_params(
            _params_file(tmp_path, generator={"name": "g", "provider": "openai", "model": "m"})
        )
    (tmp_path / "mine_verifications.json").write_text("{}")
    found = load_params(_params_file(tmp_path, verifications="mine_verifications.json"))
    assert found.verifications == str(tmp_path / "mine_verifications.json")


def test_demo_params_load() -> None:
    from evalbench.params import load_params

    root = Path(__file__).resolve().parents[1]
    params = load_params(root / "params" / "datagen_demo.yaml")
    assert isinstance(params, D.DatagenParams) and params.simulated
    assert params.verifications == "simulated" and params.n_problems == 60


def test_slots_are_balanced_and_attempts_draw_their_own_reference() -> None:
    slots = D.problem_slots(9, np.random.default_rng(0), ["algebra", "geometry"])
    assert [s.id for s in slots][:2] == ["gen_0001", "gen_0002"] and len(slots) == 9
    assert sorted(Counter(s.topic for s in slots).values()) == [4, 5]  # 9 = 2·4 + 1
    ref = _reference()
    first = D.generation_job(slots[0], 1, ref, seed=3)
    again = D.generation_job(slots[0], 1, ref, seed=3)
    assert first.job.key == "gen:gen_0001#1" and first.job.request == again.job.request
    expected = int(D.attempt_rng(3, "gen_0001", 1).integers(len(ref)))
    assert first.reference_id == ref["id"][expected]
    assert f"Problem: {ref['problem'][expected]}" in first.job.request.messages[1]["content"]
    assert first.job.request.seed is None and first.job.request.response_format is None
    retry = D.generation_job(slots[0], 2, ref, seed=3, json_mode=True)
    assert retry.job.key == "gen:gen_0001#2" and retry.job.request.seed == 2
    assert retry.job.request.response_format == {"type": "json_object"}
    picks = {D.generation_job(slots[0], a, ref, seed=3).reference_id for a in range(1, 30)}
    assert len(picks) == len(ref)  # 29 attempts see every one of the 6 references


def test_sim_generate_reads_its_knobs() -> None:
    from evalbench.models import ChatRequest, SimSpec

    request = ChatRequest(messages=[])
    ref = _reference().iloc[0]

    def outputs(**knobs: float) -> list[D.GeneratedProblem | D.InvalidGeneration]:
        rng = np.random.default_rng(0)
        return [
            D.parse_generated(
                D.sim_generate(
                    request,
                    SimSpec(**knobs),
                    rng,
                    reference_problem=ref["problem"],
                    reference_answer=int(ref["answer"]),
                    topic="algebra",
                ).text,
                id="g",
            )
            for _ in range(40)
        ]

    assert all(isinstance(o, D.InvalidGeneration) for o in outputs(malformed_rate=1.0))
    copies = outputs(copy_rate=1.0)
    assert all(isinstance(c, D.GeneratedProblem) and c.answer == 12 for c in copies)
    assert all(D.similarity_matrix([c.problem], [ref["problem"]])[0, 0] > 0.6 for c in copies)
    good = [o for o in outputs(quality=2.0) if isinstance(o, D.GeneratedProblem)]
    assert len(good) == 40 and np.mean([D.sim_true_quality(g.problem) for g in good]) < 2.5


def test_generation_retries_invalid_outputs_and_keeps_their_reasons(tmp_path: Path) -> None:
    run = _open(_params_file(tmp_path, n_problems=40))
    gen = D.generate_problems(run, _reference())
    problems, invalid = gen.problems, gen.invalid
    assert problems["id"].is_unique and len(problems) + len(gen.unfilled) == 40
    assert gen.calls == len(problems) + len(invalid)  # every call is valid or invalid
    # a problem that needed k attempts left k - 1 invalid records, numbered 1 .. k - 1
    for row in problems.itertuples():
        tried = invalid[invalid["id"] == row.id]["attempt"].tolist()
        assert tried == list(range(1, row.attempts)), (row.id, tried)
    for slot in gen.unfilled:
        assert invalid[invalid["id"] == slot]["attempt"].tolist() == [1, 2, 3]
    assert invalid["reason"].str.len().gt(0).all() and invalid["raw"].str.len().gt(0).all()
    assert 0.15 < len(invalid) / gen.calls < 0.45  # malformed_rate 0.3
    assert (problems["topic"] == problems["requested_topic"]).all()
    np.testing.assert_allclose(
        problems["true_quality"], [D.sim_true_quality(p) for p in problems["problem"]]
    )
    stored = read_jsonl(run.dir / "records" / "problems.jsonl")
    assert [r["id"] for r in stored] == problems["id"].tolist()
    dataset = read_jsonl(run.dir / "generated.jsonl")
    assert list(dataset[0]) == [
        "id", "topic", "problem", "answer", "solution", "reference_id", "attempts"
    ]  # fmt: skip
    assert len(read_jsonl(run.dir / "records" / "invalid.jsonl")) == len(invalid)


def test_slots_that_never_validate_are_left_unfilled(tmp_path: Path) -> None:
    path = _params_file(
        tmp_path, n_problems=5, max_attempts=2, generator__sim={"malformed_rate": 1}
    )
    gen = D.generate_problems(_open(path), _reference())
    assert gen.problems.empty and len(gen.unfilled) == 5
    assert len(gen.invalid) == gen.calls == 5 * 2  # two attempts per slot, all recorded
    with pytest.raises(
        ValueError, match=r"no valid problem: all 10 generator outputs were invalid"
    ):
        D.run_study(_open(path), _reference())


class _CrashAfter:
    """A run whose generator progress callback raises after ``k`` answers (a crash)."""

    def __init__(self, run: Run, k: int):
        self.run, self.left = run, k

    def __getattr__(self, name: str) -> object:
        return getattr(self.run, name)

    def ask(self, spec: object, jobs: object, **kw: object) -> object:
        inner = kw["postfix"]

        def postfix(job: object, response: object) -> object:
            self.left -= 1
            if self.left < 0:
                raise RuntimeError("simulated crash")
            return inner(job, response)

        return self.run.ask(spec, jobs, **{**kw, "postfix": postfix})


def _calls(run: Run, system: str) -> int:
    frame = run.ledger.frame().set_index("system")
    return int(frame.loc[system, "calls"]) if system in frame.index else 0


def test_an_interrupted_generation_resumes_without_losing_or_repeating(tmp_path: Path) -> None:
    path = _params_file(tmp_path, n_problems=30)
    with pytest.raises(RuntimeError, match="simulated crash"):
        D.generate_problems(_CrashAfter(_open(path), 12), _reference())
    store = _open(path).dir / "records" / "generations.jsonl"
    # the 13th answer was written before its callback raised; answers already in flight
    # (8 at a time) may have been written too, the rest were never asked
    stored = len(read_jsonl(store))
    assert 13 <= stored < 30
    resumed_run = _open(path)
    resumed = D.generate_problems(resumed_run, _reference())
    whole = D.generate_problems(
        _open(_params_file(tmp_path, "uninterrupted", n_problems=30)), _reference()
    )
    assert _calls(resumed_run, "gen") == whole.calls - stored  # nothing asked twice
    keys = [r["key"] for r in read_jsonl(store)]
    assert len(keys) == len(set(keys)) == whole.calls
    pd.testing.assert_frame_equal(resumed.problems, whole.problems)  # nothing lost
    pd.testing.assert_frame_equal(resumed.invalid, whole.invalid)
    assert resumed.problems["id"].is_unique


def test_a_torn_response_store_is_repaired_and_refilled(tmp_path: Path) -> None:
    path = _params_file(tmp_path, n_problems=12)
    before = D.generate_problems(_open(path), _reference())
    store = _open(path).dir / "records" / "generations.jsonl"
    lines = store.read_text().splitlines(keepends=True)
    store.write_text("".join(lines[:-3]) + lines[-3][: len(lines[-3]) // 2])  # crash mid-write
    run = _open(path)
    after = D.generate_problems(run, _reference())
    assert _calls(run, "gen") == 3  # the two lost answers and the torn one
    pd.testing.assert_frame_equal(after.problems, before.problems)
    assert len(read_jsonl(store)) == len(lines)


def test_progress_postfix_shows_topic_and_answer() -> None:
    from evalbench.models import ChatRequest, ChatResponse, Job

    job = Job("gen:gen_0001#1", ChatRequest(messages=[]))
    ok = ChatResponse(system="g", text=_output(answer=42, topic="Geometry"))
    assert D.progress_postfix(job, ok) == {"topic": "geometry", "answer": 42}
    failed = ChatResponse(system="g", error="timeout")
    assert D.progress_postfix(job, failed) == {"topic": "-", "answer": "invalid"}


def test_pair_plan_uses_each_problem_before_repeating() -> None:
    problems = pd.DataFrame({"id": ["a", "b", "c"], "problem": ["A?", "B?", "C?"]})
    plan = D.pair_plan(problems, _reference(), 7, np.random.default_rng(0))
    assert plan["pair_id"].str.split("@").str[0].tolist() == [f"w{k:04d}" for k in range(1, 8)]
    first = plan.iloc[0]
    texts = problems.set_index("id")["problem"], _reference().set_index("id")["problem"]
    assert first["pair_id"] == D.content_key(
        "w0001", texts[0][first["generated_id"]], texts[1][first["reference_id"]]
    )
    counts = Counter(plan["generated_id"])
    assert sorted(counts.values()) == [2, 2, 3]  # 7 = 3 + 3 + 1 in fresh permutations
    assert set(plan["generated_id"][:3]) == {"a", "b", "c"}
    assert set(plan["reference_id"]) <= set(_reference()["id"])
    assert D.pair_plan(problems, _reference(), 0, np.random.default_rng(0)).empty


def test_pairwise_truth_maps_quality_to_log_odds() -> None:
    # one quality point below a real problem: P(win) = σ(-1) for an unbiased, tie-free judge
    delta = D.quality_logit(3.5) - D.quality_logit(D.REAL_TRUE_QUALITY)
    assert delta == pytest.approx(-1.0 * D.LOGIT_PER_POINT)
    from evalbench.judge import sim_pairwise_probabilities

    p_win, p_tie, _ = sim_pairwise_probabilities(
        D.quality_logit(3.5), D.quality_logit(4.5), tie_margin=0.0
    )
    assert p_win == pytest.approx(1 / (1 + math.exp(1))) and p_tie == pytest.approx(0.0)
    problems = pd.DataFrame(
        {"id": ["g"], "problem": [REF_ROW["problem"]], "answer": [9], "solution": ["s"]}
    )
    plan = pd.DataFrame(
        {"pair_id": ["w1"], "generated_id": ["g"], "reference_id": ["demo:2000-I-2"]}
    )
    (task,) = D.pair_tasks(plan, problems, _reference())
    assert task.answer_x == f"Problem: {REF_ROW['problem']}\n\nAnswer: 9"  # no solution shown
    assert task.answer_y == f"Problem: {_SETTINGS[1]}\n\nAnswer: 345"
    assert task.quality_x == pytest.approx(D.sim_true_quality(REF_ROW["problem"]) - 3.0)
    assert task.quality_y == pytest.approx(4.5 - 3.0)


@pytest.mark.parametrize(
    ("quality", "scores", "status"),
    [
        (4.4, 4, "approved"),  # mean 4 >= 3.5, no score below 3
        (3.5, 4, "approved"),  # rint(3.5) = 4 (half to even)
        (3.2, 3, "needs_revision"),  # mean 3 < 3.5
        (2.4, 2, "rejected"),  # mean 2 < 2.5
    ],
)
def test_sim_review_status_follows_the_scores(quality: float, scores: int, status: str) -> None:
    review = D.sim_review("p", quality, np.random.default_rng(0), noise=0.0)
    assert review.scores == dict.fromkeys(D.DIMENSIONS, scores) and review.status == status
    assert review.total_score == scores and review.verified_at == D.SIM_REVIEW_TIME


def test_sim_review_mixed_scores_need_revision_and_noise_averages_out() -> None:
    class Fixed:
        def standard_normal(self, n: int) -> np.ndarray:
            return np.array([1.0, 1.0, 1.0, -2.0])

    review = D.sim_review("p", 4.0, Fixed(), noise=1.0)
    assert list(review.scores.values()) == [5, 5, 5, 2]  # mean 4.25, but one score below 3
    assert review.status == "needs_revision"
    rng = np.random.default_rng(1)
    totals = [D.sim_review("p", 3.0, rng).total_score for _ in range(400)]
    assert abs(np.mean(totals) - 3.0) < 0.05  # unbiased away from the scale ends


def test_sim_verifications_sample_n_problems() -> None:
    problems = pd.DataFrame(
        {"id": [f"g{i}" for i in range(10)], "true_quality": np.linspace(1, 5, 10)}
    )
    picked = D.sim_verifications(problems, 4, np.random.default_rng(0))
    assert len(picked) == 4 and set(picked) <= set(problems["id"])
    assert picked == D.sim_verifications(problems, 4, np.random.default_rng(0))
    assert len(D.sim_verifications(problems, 50, np.random.default_rng(0))) == 10


def test_study_reads_a_reviewers_file_from_the_run_folder(tmp_path: Path) -> None:
    run = _open(_params_file(tmp_path, n_problems=6, verifications=None))
    gen = D.generate_problems(run, _reference())
    empty = D.study_verifications(run, gen.problems)
    assert empty.verifications == {} and empty.path is None and not empty.simulated
    # a reviewer's round trip: generated.jsonl -> CSV -> edited -> generated_verifications.json
    data = run.dir / "generated.jsonl"
    problems = D.problems_frame(read_jsonl(data))
    first, second = problems["id"].iloc[:2]
    csv_path = D.export_verification_csv(problems, tmp_path / "review.csv")
    scores = {"correctness": "5", "clarity": "4", "difficulty_match": "4", "completeness": "5"}
    _edit_csv(
        csv_path,
        {
            first: {**scores, "status": "approved"},
            second: {**scores, "correctness": "1", "status": "rejected", "comments": "wrong"},
        },
    )
    path = D.verifications_path(data)
    assert path == run.dir / "generated_verifications.json"
    D.save_verifications(path, D.import_verification_csv(csv_path))
    D.save_verifications(
        path, [_review("gen_9999", (1, 1, 1, 1), "rejected", "2025-01-10T12:00:00+00:00")]
    )
    human = D.study_verifications(run, gen.problems)
    assert sorted(human.verifications) == sorted([first, second])
    assert human.unknown_ids == ["gen_9999"] and human.path == path and not human.simulated
    assert human.verifications[second].total_score == pytest.approx((1 + 4 + 4 + 5) / 4)
    summary = D.human_summary(human.verifications)
    assert summary.approved_rate.estimate == pytest.approx(1 / 2)  # one approved of two


def test_simulated_verifications_need_a_simulated_generator(tmp_path: Path) -> None:
    run = _open(_params_file(tmp_path))
    problems = pd.DataFrame({"id": ["g1"], "true_quality": [None]})
    with pytest.raises(ValueError, match="simulated needs a simulated generator"):
        D.study_verifications(run, problems)


def test_the_whole_study_on_a_small_run(tmp_path: Path) -> None:
    run = _open(_params_file(tmp_path, n_problems=21, generator__sim={"copy_rate": 0.3}))
    study = D.run_study(run, _reference())
    problems, verdicts = study.generation.problems, study.verdicts
    assert verdicts is not None and len(verdicts) == 10
    assert (
        verdicts["order_outcome"]
        .isin(["consistent", "inconsistent_tie", "inconsistent_dropped", "unscored"])
        .all()
    )
    assert verdicts["outcome"].tolist() == [D.pairwise_outcome(f) for f in verdicts["final"]]
    judged = study.judge_results
    assert judged["problem_id"].tolist() == problems["id"].tolist()
    assert study.summary.judge is not None and study.summary.judge.n_items == len(problems)
    assert study.human.simulated and len(study.human.verifications) == 8
    assert study.human.path == run.dir / "simulated_verifications.json"
    flagged = study.duplicates.flagged_ids()
    assert flagged  # copy_rate 0.3 of 21: some copies of the six references
    win = study.summary.win
    assert win is not None
    dup_rows = verdicts[verdicts["generated_id"].isin(flagged) & verdicts["outcome"].notna()]
    assert win.duplicate_comparisons == len(dup_rows)
    records = {p.stem for p in (run.dir / "records").iterdir()}
    assert {"problems", "invalid", "quality", "pairwise", "duplicates"} <= records
    assert set(D.finish_headlines(study.summary)) == {
        "judge mean (1-5)", "win rate vs real", "human pass rate"
    }  # fmt: skip
    info = D.basic_info(study).set_index("item")["value"]
    assert info["valid problems"] == len(problems) and info["real problems (unique)"] == 6
    assert info["generator calls"] == study.generation.calls
    again = D.run_study(
        _open(_params_file(tmp_path, n_problems=21, generator__sim={"copy_rate": 0.3})),
        _reference(),
    )
    assert again.summary.conclusion.table.equals(study.summary.conclusion.table)  # reproducible


def test_report_tables_by_hand() -> None:
    invalid = pd.DataFrame(
        {"reason": ["no JSON object found", "answer 1000 is outside 0-999; solution is empty",
                    "no JSON object found"]}
    )  # fmt: skip
    table = D.invalid_reasons(invalid).set_index("reason")
    assert table.loc["no JSON object found", "count"] == 2
    assert table.loc["solution is empty", "share"] == pytest.approx(1 / 3)
    assert D.invalid_reasons(invalid.iloc[:0]).empty
    compared = D.answer_comparison(
        D.answer_distribution([5, 50, 500]), D.answer_distribution([100, 200])
    )
    assert compared.loc["share_below_100", "generated"] == pytest.approx(2 / 3)
    assert compared.loc["median", "real"] == 150
    judged = pd.DataFrame(
        {"problem_id": ["a", "b", "c"], "status": ["scored", "unscored", "scored"],
         "weighted_score": [4.0, np.nan, 2.5]}
    )  # fmt: skip
    problems = pd.DataFrame({"id": ["a", "b", "c"], "true_quality": [3.8, 2.0, None]})
    truth = D.judge_vs_truth(judged, problems)
    assert truth.values.tolist() == [["a", 3.8, 4.0]]  # b unscored, c has no truth
    verdicts = pd.DataFrame({"order_outcome": ["consistent", "inconsistent_tie", "consistent"]})
    order = D.order_consistency(verdicts).set_index("resolution")
    assert order.loc["consistent", "pairs"] == 2 and order.loc["inconsistent_tie", "share"] == 1 / 3


def test_the_study_is_skipped_without_the_reference_data(monkeypatch: pytest.MonkeyPatch) -> None:
    from evalbench.params import load_params
    from evalbench.sources import DataUnavailable

    monkeypatch.delenv("EVALBENCH_DATA_MIRROR", raising=False)
    monkeypatch.setenv("EVALBENCH_OFFLINE", "1")
    root = Path(__file__).resolve().parents[1]
    params = load_params(root / "params" / "datagen_demo.yaml")
    with pytest.raises(DataUnavailable, match="evalbench fetch"):
        D.load_study_reference(params)


def test_judgments_are_keyed_by_content_so_a_changed_problem_is_judged_again(
    tmp_path: Path,
) -> None:
    path = _params_file(tmp_path, n_problems=5, generator__sim={"malformed_rate": 0})
    problems = D.generate_problems(_open(path), _reference()).problems
    first = D.judge_problems(_open(path), problems)
    assert first["problem_id"].tolist() == problems["id"].tolist()
    assert first["case_id"][0] == D.content_key(
        problems["id"][0], D.problem_card(problems.iloc[0], with_solution=True)
    )
    changed = problems.copy()
    changed.loc[0, "problem"] = changed.loc[0, "problem"] + " Give the answer as an integer."
    run = _open(path)
    again = D.judge_problems(run, changed)
    assert _calls(run, "judge") == 1  # only the changed problem; the stored four are reused
    assert again["case_id"][0] != first["case_id"][0]
    assert again["case_id"][1:].tolist() == first["case_id"][1:].tolist()
