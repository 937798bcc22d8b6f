"""inspect_ai logs written by inspect_ai itself (a real eval on its mock model, and its log
writer), read into outcomes, compared, and used for an agreement analysis between scorers."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from evalbench.agreement import cohen_kappa
from evalbench.history import compare_runs
from evalbench.importers import ImporterUnavailable, OutcomeError, read_outcomes
from evalbench.importers.inspect_logs import read_inspect_samples, to_float

# inspect_ai's retry setup uses a tenacity argument that tenacity deprecates (their business)
# inspect_ai takes ~2 s to import: its tests share one test process (xdist_group)
pytestmark = [
    pytest.mark.filterwarnings("ignore:The 'initial' parameter is deprecated"),
    pytest.mark.xdist_group("inspect_ai"),
]

QUESTIONS = [(f"q{i}", f"What is {i} + {i}?", str(2 * i), "math" if i % 2 else "arith")
             for i in range(8)]  # fmt: skip


def run_eval(log_dir: Path, answers: list[str], *, log_format: str = "eval", epochs: int = 1):
    """A real inspect eval (mock model answering ``answers``; match + includes scorers)."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import includes, match
    from inspect_ai.solver import generate

    samples = [Sample(id=i, input=q, target=t, metadata={"subject": s}) for i, q, t, s in QUESTIONS]
    outputs = []
    for answer in answers * epochs:
        out = ModelOutput.from_content(model="mockllm/model", content=answer)
        out.usage = ModelUsage(input_tokens=5, output_tokens=1, total_tokens=6)  # no tokenizer
        outputs.append(out)
    model = get_model("mockllm/model", custom_outputs=outputs)
    task = Task(dataset=samples, solver=generate(), scorer=[match(), includes()], epochs=epochs)
    [log] = inspect_eval(task, model=model, log_dir=str(log_dir), log_format=log_format,
                         display="none", max_samples=1)  # fmt: skip
    assert log.status == "success", log.error
    return Path(log.location)


RIGHT_A = ["0", "2", "4", "9", "8", "10", "0", "14"]  # q3 and q6 wrong
RIGHT_B = ["0", "2", "4", "6", "8", "1", "12", "3"]  # q5 and q7 wrong


@pytest.mark.slow
def test_a_real_eval_log_reads_into_outcomes_in_both_formats(inspect_ai, tmp_path):
    for fmt in ("eval", "json"):
        path = run_eval(tmp_path / fmt, RIGHT_A, log_format=fmt)
        assert path.suffix == f".{fmt}"
        run = read_outcomes(path, slices=["subject"])
        assert run.source == "inspect_ai" and run.benchmark == "inspect:task"
        assert run.systems == ["mockllm/model"] and run.simulated == {"mockllm/model"}
        match = run.outcomes[run.outcomes["metric"] == "match"].set_index("item_id")
        assert len(match) == 8 and (match["kind"] == "binary").all()
        assert match.loc["q3", "value"] == 0.0 and match.loc["q6", "value"] == 0.0
        assert match["value"].sum() == 6  # 6 of 8 right, as inspect's own accuracy says
        assert match.loc["q1", "subject"] == "math"
        assert run.meta["run_id"] and run.meta["started_at"]


@pytest.mark.slow
def test_two_inspect_runs_compare_item_by_item(inspect_ai, tmp_path):
    a = read_outcomes(run_eval(tmp_path / "a", RIGHT_A), slices=["subject"])
    b = read_outcomes(run_eval(tmp_path / "b", RIGHT_B), slices=["subject"])
    tests = compare_runs([a, b], metrics=["match"], rounds=100).tests
    overall = tests[tests["slice"] == "all"].iloc[0]
    # right only in A: q5, q7; right only in B: q3, q6 -> McNemar b = c = 2, p = 1
    assert (overall.n, overall.discordant_a, overall.discordant_b) == (8, 2, 2)
    assert overall.p == 1.0
    assert set(tests["slice_value"]) == {"all", "arith", "math"}


@pytest.mark.slow  # over ~1 s
def test_several_epochs_use_the_reductions_inspect_wrote(inspect_ai, tmp_path):
    path = run_eval(tmp_path / "e", RIGHT_A, epochs=2)
    run = read_outcomes(path)
    match = run.outcomes[run.outcomes["metric"] == "match"].set_index("item_id")
    assert len(match) == 8 and match.loc["q3", "value"] == 0.0 and match.loc["q0", "value"] == 1.0
    assert any("reductions" in note for note in run.notes)


def test_a_hand_written_log_with_partial_dict_and_unreadable_values(inspect_ai, tmp_path):
    """Written with inspect's own writer (write_eval_log), in its documented model."""
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalSample,
        EvalSpec,
        EvalStats,
        write_eval_log,
    )  # fmt: skip
    from inspect_ai.scorer import Score

    values = {"s1": "C", "s2": "P", "s3": "I", "s4": "banana", "s5": float("nan")}
    samples = [
        EvalSample(id=sid, epoch=1, input="?", target="x",
                   scores={"grade": Score(value=v), "rubric": Score(value={"style": 4, "facts": 2})})
        for sid, v in values.items()
    ]  # fmt: skip
    log = EvalLog(
        status="success",
        eval=EvalSpec(created="2026-01-01T00:00:00+00:00", task="hand", model="openai/gpt-x",
                      dataset=EvalDataset(name="hand", samples=5, sample_ids=list(values)),
                      config=EvalConfig(epochs=1)),
        stats=EvalStats(started_at="2026-01-01T00:00:00+00:00"),
        samples=samples,
    )  # fmt: skip
    path = tmp_path / "hand.eval"
    write_eval_log(log, str(path))
    run = read_outcomes(path)
    grade = run.outcomes[run.outcomes["metric"] == "grade"].set_index("item_id")
    # C 1, P 0.5, I 0 (inspect's value_to_float); "banana" and NaN: unscored, no number
    assert grade.loc[["s1", "s2", "s3"], "value"].tolist() == [1.0, 0.5, 0.0]
    assert grade.loc["s4", "state"] == "unscored" and grade["value"].isna().sum() == 2
    assert (grade["kind"] == "score").all()  # 0.5 is not binary
    assert set(run.outcomes["metric"]) == {"grade", "rubric/style", "rubric/facts"}
    assert run.simulated == frozenset()


def test_to_float_follows_inspects_value_to_float():
    assert [to_float(v) for v in ("C", "P", "I", "N", "yes", "False", "0.25", True, 3)] == [
        1.0, 0.5, 0.0, 0.0, 1.0, 0.0, 0.25, 1.0, 3.0,
    ]  # fmt: skip
    assert to_float("banana") != to_float("banana")  # NaN (inspect: 0 with a warning)


@pytest.mark.slow
def test_agreement_between_two_scorers_of_an_imported_log(inspect_ai, tmp_path):
    path = run_eval(tmp_path / "k", ["0", "2 is it", "4", "no 6", "8", "10", "0", "14"])
    samples = read_inspect_samples(path)
    wide = samples.pivot(index="id", columns="scorer", values="value")
    # match() checks the end of the answer, includes() anywhere: "no 6" ends with the target,
    # "2 is it" only contains it -> they disagree on q1 only; q6 ("0" for 12) both wrong
    assert (wide["match"] != wide["includes"]).sum() == 1
    kappa = cohen_kappa(wide["match"].tolist(), wide["includes"].tolist())
    # 7 of 8 agree (p_o = 0.875); match 6 right / 2 wrong, includes 7 / 1:
    # p_e = 6/8 × 7/8 + 2/8 × 1/8 = 0.6875; κ = (0.875 − 0.6875) / 0.3125 = 0.6
    assert kappa == pytest.approx(0.6)


def test_without_the_extra_the_message_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)  # import fails as if absent
    path = tmp_path / "x.eval"
    path.write_bytes(b"PK\x03\x04")
    with pytest.raises(ImporterUnavailable, match=r"pip install 'evalbench\[importers\]'"):
        read_outcomes(path)


def test_a_file_that_is_not_a_log_is_one_line(inspect_ai, tmp_path):
    path = tmp_path / "broken.eval"
    path.write_bytes(b"not a zip at all")
    with pytest.raises(OutcomeError, match=r"broken\.eval: not a readable inspect_ai log"):
        read_outcomes(path)


@pytest.mark.slow
@pytest.mark.parametrize("bad", [float("inf"), "-Infinity"])
def test_an_infinite_score_names_the_log_sample_and_scorer(hand_log, tmp_path, bad):
    """inspect's value_to_float turns both into ±inf; a mean with it is meaningless."""
    for suffix in (".eval", ".json"):
        path = hand_log(tmp_path / f"inf{suffix}", {"s1": 1.0, "s2": bad})
        pattern = rf"inf{re.escape(suffix)}: sample 's2' epoch 1: grade: .* is not a finite number"
        with pytest.raises(OutcomeError, match=pattern):
            read_outcomes(path)
