"""GAIA report sentences: each number written out by hand, every untrusted name escaped."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from gaia.cases import SPEC, records, wilson_by_hand

from evalbench import gaia
from evalbench.gaia import metrics, report
from evalbench.stats import Interval, PairedComparison


def _usage(**errors: tuple[int, int, dict[str, int]]) -> pd.DataFrame:
    rows = [{"system": name, "calls": calls, "errors": n, "error_reasons": reasons}
            for name, (calls, n, reasons) in errors.items()]  # fmt: skip
    return pd.DataFrame(rows, columns=["system", "calls", "errors", "error_reasons"])


def _result(recs: pd.DataFrame, **fields) -> gaia.GaiaResult:
    names = sorted(recs["system"].unique())
    params = gaia.GaiaParams(title="t", systems=[{"name": n} for n in names])
    summary = metrics.summarize(recs, rng=np.random.default_rng(0), rounds=50)
    base = {
        "params": params, "items": [], "records": recs, "summary": summary,
        "scorers": metrics.scorer_comparison(recs), "pair": None, "comparison": None,
        "submission": Path("/run/submission/gaia_submission.jsonl"),
        "submission_system": names[0], "usage": _usage(), "simulated": frozenset(names),
    }  # fmt: skip
    return gaia.GaiaResult(**(base | fields))


def test_headlines_are_the_overall_accuracies_of_the_first_three_systems():
    spec = {name: SPEC["A"] for name in ("d", "c", "b", "a")}
    heads = report.headlines(_result(records(spec)))
    # 7 of 14 items correct for each; names in order, the fourth left out
    assert heads == {"accuracy a": 7 / 14, "accuracy b": 7 / 14, "accuracy c": 7 / 14}


def test_key_result_labels_each_system_and_shows_its_interval():
    recs = records({"A": SPEC["A"], "B": {1: [True, False]}})
    text = report.key_result(_result(recs, simulated=frozenset({"A"})))
    low, high = wilson_by_hand(7, 14)  # A: 7 of 14
    assert f"A (simulated) 50.0% [{low:.1%}, {high:.1%}], 7 of 14" in text
    assert "B (real model) 50.0%" in text  # labelled on its own, not "every system simulated"
    assert "95% Wilson intervals" in text and "failed" not in text


def test_key_result_states_failed_calls_and_accuracy_over_answered_items():
    recs = records({"A": SPEC["A"]})
    recs.loc[recs.task_id == "L3-3", "error"] = "http_500: boom"
    usage = _usage(A=(28, 2, {"http_500": 2}))  # 2 attempts per item: 28 calls, 2 failed
    text = report.key_result(_result(recs, usage=usage))
    # 7 correct of the 13 items whose first call succeeded: 53.8%
    assert "— 2 of 28 calls failed: http_500 × 2 (every attempt counted)" in text
    assert "; 53.8% of the 13 items whose first call succeeded" in text


def test_key_result_when_every_call_failed():
    # Before: "A (simulated) 0.0% [0.0%, 65.8%], 0 of 2": a number over nothing measured,
    # beside the banner's "no result"
    recs = records({"A": {1: [False, False]}, "B": {1: [True, False]}})
    recs.loc[recs.system == "A", "error"] = "http_401: no"
    text = report.key_result(_result(recs, usage=_usage(A=(2, 2, {"http_401": 2}))))
    low, high = wilson_by_hand(1, 2)
    assert text.endswith(
        "A (simulated): no result, every first call failed — 2 of 2 calls failed: http_401 × 2 "
        f"(every attempt counted); B (simulated) 50.0% [{low:.1%}, {high:.1%}], 1 of 2.</p>"
    )


def test_no_paired_comparison_with_a_system_that_measured_nothing():
    # Before: "A vs B … difference -50.0% … exact McNemar p = …" for a system none of whose
    # answers was measured: a significant "difference" between a failure and a result
    recs = records({"A": {1: [False, False]}, "B": {1: [True, True]}})
    recs.loc[recs.system == "A", "error"] = "http_401: no"
    cmp = PairedComparison(n=2, accuracy_a=0.0, accuracy_b=1.0, only_a=0, only_b=2,
                           difference=Interval(-1.0, -1.0, -1.0, 0.95), mcnemar_p=0.5)  # fmt: skip
    text = report.paired_sentence(_result(recs, pair=("A", "B"), comparison=cmp))
    assert text == ("<p>No paired comparison of <b>A</b> and <b>B</b>: A has no result (every "
                    "first call failed).</p>")  # fmt: skip


def test_untrusted_names_are_escaped():
    recs = records({"<b>x</b>": {1: [True]}})
    text = report.key_result(_result(recs))
    assert "<b>x</b>" not in text and "&lt;b&gt;x&lt;/b&gt;" in text


def test_paired_sentence_writes_out_the_comparison():
    recs = records({"A": {1: [True, False]}, "B": {1: [False, False]}})
    cmp = PairedComparison(n=10, accuracy_a=0.7, accuracy_b=0.5, only_a=3, only_b=1,
                           difference=Interval(0.2, -0.1, 0.5, 0.95), mcnemar_p=0.625)  # fmt: skip
    text = report.paired_sentence(_result(recs, pair=("A", "B"), comparison=cmp))
    assert "<b>A</b> vs <b>B</b> on 10 items: accuracy 70.0% vs 50.0%" in text
    assert "difference +20.0% (95% paired bootstrap interval -10.0% to +50.0%)" in text
    assert "only A right: 3, only B right: 1; exact McNemar p = 0.625" in text
    assert "One system only" in report.paired_sentence(_result(recs))


def test_degenerate_drop_note_names_the_system_and_transition():
    recs = records({"A": {1: [True], 2: [True, False], 3: [False, False]}})
    note = report.degenerate_drops_note(_result(recs))
    assert note.startswith("<p>A L2→L3: a level with no correct answer")
    assert report.degenerate_drops_note(_result(records(SPEC))) == ""


def test_scorers_section_counts_answers_only_the_lenient_scorer_accepts():
    recs = records({"A": {1: [True, False, False]}})
    recs["correct_lenient"] = [True, True, True]  # 2 official misses the lenient one accepts
    html = report.scorers_section(_result(recs))
    assert "<td" in html and html.endswith(
        "<p>2 answers are wrong for the official scorer but right for the lenient one.</p>"
    )
    off = report.scorers_section(_result(recs, scorers=None))
    assert (
        off
        == "<p>Lenient scoring is off (<code>lenient: false</code>): official verdicts only.</p>"
    )


def test_tables_and_captions():
    recs = records(SPEC, prompt_tokens=100.0)
    result = _result(recs)
    assert report.demo_notice(result).startswith('<div class="evalbench-banner"')
    assert "(dataset: demo, split: validation)" in report.items_caption(result)
    assert "not reported" not in report.usage_caption(result)  # every cell has a number
    usage = report.usage_table(result)
    assert list(usage.columns) == ["system", "level", "answers", "prompt_tokens_mean"]
    assert usage.iloc[0]["answers"] == 14  # "all": 5 + 5 + 4 records
    drops = report.drops_table(result)
    assert drops.iloc[0]["relative"].startswith("0.500 [")  # 1 - 0.4 / 0.8
    assert set(report.ACCURACY_COLUMNS) <= set(result.summary.accuracy.columns)
    examples = report.failure_examples(
        result._replace(records=recs.assign(extracted_answer=None)), 3
    )
    assert len(examples) == 3 and report.failure_fields(examples)[-1] == "expected"
    examples[1]["error"] = "x"
    assert report.failure_fields(examples)[-1] == "error"
    assert report.submission_sentence(result) == (
        "<p>Wrote <code>gaia_submission.jsonl</code> (system <b>A</b>) and its guide "
        "<code>gaia_submission.md</code>.</p>"
    )


def test_pass_at_k_section_names_the_attempts():
    two = pd.concat([records(SPEC), records(SPEC).assign(attempt=1)], ignore_index=True)
    result = _result(two)
    result = result._replace(params=result.params.model_copy(update={"attempts": 2}))
    html = report.pass_at_k_section(result)
    assert "from 2 attempts per item" in html and "pass@1</th>" in html
    one = _result(records(SPEC))
    assert report.pass_at_k_section(one) == (
        "<p>1 attempt per item (<code>attempts: 1</code>): pass@k needs several.</p>"
    )


def test_agent_sections_show_tables_or_say_there_is_no_agent(agent_result):
    assert agent_result.agents is not None
    assert report.agents_sentence(agent_result).startswith(
        "<p><b>sim-agent</b> (simulated agent): 12 tasks"
    )
    for section in (report.agent_states, report.agent_effort, report.steps_accuracy):
        assert "<table" in section(agent_result)
    assert "<details>" in report.failures_html(agent_result)
    chat_only = agent_result._replace(agents=None, steps=())
    assert report.agents_sentence(chat_only) == report.NO_AGENTS
    assert report.steps_accuracy(chat_only) == report.failures_html(chat_only) == report.NO_AGENTS
    assert report.agent_states(chat_only) == report.agent_effort(chat_only) == ""


def test_answered_is_the_end_state_only_and_no_error_counts_the_calls_that_did_not_fail(
    agent_result,
):
    states = agent_result.agents.states.set_index(["system", "level"]).loc[("sim-agent", "all")]
    # the fixture's agent: 12 tasks = 10 answered + 1 timeout + 1 step_limit + 0 error
    assert (states["tasks"], states["answered"], states["timeout"], states["step_limit"]) == (
        12, 10, 1, 1,
    )  # fmt: skip
    accuracy = report.accuracy_table(agent_result).set_index(["system", "level"])
    assert "answered" not in accuracy.columns
    assert accuracy.loc[("sim-agent", "all"), "no_error"] == 12 - 0  # tasks - errors
    assert "no_error = n − errors" in report.accuracy_caption(agent_result)
    scorers = report.scorers_section(agent_result)
    assert ">answered<" not in scorers and ">official_no_error<" in scorers
    assert "answered (the agent returned an answer" in report.agent_states(agent_result)


def test_usage_table_shows_the_columns_its_caption_names(agent_result):
    usage = report.usage_table(agent_result)
    assert list(usage.columns) == ["system", "level", "answers", "prompt_tokens_mean",
                                   "completion_tokens_mean", "cost_usd_mean", "latency_s_mean"]  # fmt: skip
    caption = report.usage_caption(agent_result)
    assert "prompt and completion tokens, cost (USD) and latency (s)" in caption
    # the simulated agent reports neither cost nor latency: its cells are dashes, explained
    assert usage.set_index("system").loc["sim-agent", "latency_s_mean"].isna().all()
    assert "— = not reported (an agent's time is per task, in the effort table below)" in caption


def test_a_count_of_one_reads_in_the_singular():
    recs = records({"A": {1: [False, True]}, "B": {1: [False, False]}})
    recs["correct_lenient"] = [True, True, False, False]  # A's first item: lenient only
    assert report.scorers_section(_result(recs)).endswith(
        "<p>1 answer is wrong for the official scorer but right for the lenient one.</p>"
    )
    recs.loc[(recs.system == "A") & (recs.task_id == "L1-0"), "error"] = "http_500"
    text = report.key_result(_result(recs, usage=_usage(A=(2, 1, {"http_500": 1}))))
    assert "; 100.0% of the 1 item whose first call succeeded" in text  # 1 correct of 1
    cmp = PairedComparison(n=1, accuracy_a=1.0, accuracy_b=0.0, only_a=1, only_b=0,
                           difference=Interval(1.0, 1.0, 1.0, 0.95), mcnemar_p=1.0)  # fmt: skip
    assert "on 1 item:" in report.paired_sentence(_result(recs, pair=("A", "B"), comparison=cmp))


def test_an_agent_with_one_task_reads_in_the_singular(agent_result):
    agents = agent_result.agents
    one = agents.states.assign(tasks=1, answered=1, timeout=0, step_limit=0, error=0)
    effort = agents.effort.assign(steps_mean=1.0, tool_calls_mean=1.0)
    one_task = agent_result._replace(agents=agents._replace(states=one, effort=effort))
    text = report.agents_sentence(one_task)
    # counts agree with their number; a mean stays plural ("1.0 steps")
    assert ": 1 task, 1 answered, 0 timed out, 0 hit the step limit, 0 failed; 1.0 steps" in text


def test_the_tier_caption_counts_its_items():
    result = _result(records(SPEC), items=gaia.load("demo")[:1])
    result = result._replace(params=result.params.model_copy(update={"tier": "quick"}))
    assert "an accuracy near 50% over 1 item has a 95% interval" in report.items_caption(result)


def test_failed_trajectories_are_a_sample_across_end_states(agent_result):
    failures = agent_result.agents.failures
    # the fixture's agent failed 7 tasks: 5 wrong answers, 1 timeout, 1 step limit
    assert failures["state"].value_counts().to_dict() == {"answered": 5, "timeout": 1,
                                                          "step_limit": 1}  # fmt: skip
    html = report.failures_html(agent_result, limit=3)
    heads = [h.split("</summary>")[0] for h in html.split("<summary>")[1:] if " — " in h]
    shown = sorted(h.split(" — ")[1].split(",")[0] for h in heads if "sim-agent · " in h)
    assert shown == ["answered", "step_limit", "timeout"]
    assert "4 more not shown (answered 4)" in html


# ------------------------------------------------------------------ findings (report opening, summary)


def test_findings_state_each_accuracy_in_words_with_its_interval():
    found = report.findings(_result(records(SPEC)))
    low, high = wilson_by_hand(7, 14)  # A: 7 of 14
    assert f"{low:.3f}, {high:.3f}" == "0.268, 0.732"
    assert "A (simulated) answered about 50% of 14 tasks right, likely between 27% and 73%" in (
        found.key_result
    )
    # 14 tasks: 1.96 * sqrt(0.25 / 14) = 0.262 -> about ±26 points
    assert found.caveats[0].startswith("Only 14 tasks: each share is known to about ±26 points")
    assert found.detail == report.key_result(_result(records(SPEC)))


def test_a_near_miss_is_a_risk_with_the_differing_characters_marked():
    recs = records(SPEC, extracted_answer="x", expected="y")
    recs.loc[0, ["extracted_answer", "expected"]] = ["<b>1 2</b>", "<b>1, 2</b>"]  # L1-0
    recs.loc[1, ["extracted_answer", "expected"]] = ["kramhnceb", "kramhcneb"]  # L1-1
    recs.loc[[0, 1], "correct"] = False
    (risk,) = report.findings(_result(recs)).risks
    assert risk.startswith("<b>2 wrong answers are near misses</b> of the expected answer")
    assert "A on L1-1 answered “kramh<mark>nc</mark>eb” for “kramh<mark>cn</mark>eb”" in risk
    assert "<b>1" not in risk and "for “&lt;b&gt;1<mark>,</mark> 2&lt;/b&gt;”" in risk


def test_a_system_that_measured_nothing_shows_no_number_in_the_tables():
    """Before: a system whose every call failed showed accuracy 0.000 [0.000, 0.107] per level
    and drop rates 0.000 [0.000, 0.000] under a banner saying it had no result. Its counts
    stay (n, errors); its rates are blank ("—")."""
    recs = records({"A": SPEC["A"], "F": SPEC["A"]})
    failed = recs["system"] == "F"
    recs.loc[failed, "correct"] = False
    recs.loc[failed, "error"] = "http_500: boom"
    result = _result(recs)
    table = report.accuracy_table(result).set_index(["system", "level"])
    f_rows = table.loc["F"]
    assert f_rows[["accuracy", "ci_low", "ci_high", "accuracy_no_error"]].isna().all().all()
    assert (f_rows["errors"] == f_rows["n"]).all() and f_rows["n"].sum() > 0  # counts stay
    assert table.loc["A", "accuracy"].notna().all()
    drops = report.drops_table(result)
    assert drops[drops["system"] == "F"][["relative", "absolute"]].isna().all().all()
    assert drops[drops["system"] == "A"][["relative", "absolute"]].notna().all().all()
    assert "— = no result: none of its answers was measured" in report.accuracy_caption(result)
    recs["correct_lenient"] = recs["correct"]
    lenient = _result(recs, scorers=metrics.scorer_comparison(recs))
    section = report.scorers_section(lenient)
    f_row = section.split(">F</td>", 1)[1].split("</tr>", 1)[0]
    assert "0.000" not in f_row and "—" in f_row


def test_the_drop_and_pass_at_k_tables_show_no_number_for_a_system_with_no_result():
    # Before: a system every call of which failed showed acc_from 0.000, acc_to 0.000 in the
    # drop table and pass@1 0.000 on every pass@k row: numbers over nothing measured
    spec = {"A": {1: [False, False], 2: [False], 3: [False]},
            "B": {1: [True, False], 2: [True], 3: [False]}}  # fmt: skip
    recs = pd.concat([records(spec), records(spec).assign(attempt=1)], ignore_index=True)
    recs.loc[recs.system == "A", "error"] = "http_401: no"
    result = _result(recs, usage=_usage(A=(8, 8, {"http_401": 8})))
    drops = report.drops_table(result).set_index("system")
    assert drops.loc["A", ["acc_from", "acc_to", "relative", "absolute"]].isna().all().all()
    assert drops.loc["B", "acc_from"].tolist() == [0.5, 1.0]  # L1→L2, L2→L3: 1 of 2, 1 of 1
    result = result._replace(params=result.params.model_copy(update={"attempts": 2}))
    html = report.pass_at_k_section(result)
    rows = {line.split("</td>")[0].rsplit(">", 1)[1]: line
            for line in html.split("<tr>")[1:] if "<td" in line}  # fmt: skip
    assert "0.000" not in rows["A"] and "—" in rows["A"], rows["A"]
