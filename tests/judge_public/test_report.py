"""The judge_public notebook's sentences: numbers checked by hand, text escaped."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalbench.judge.tables import longer_summary
from evalbench.judge_public import metrics, report, scoring
from evalbench.judge_public.records import (
    JudgePublicParams,
    JudgePublicResult,
    MtBenchResult,
    PandalmResult,
    PrdResult,
)

RATERS = {"n_items": 3, "with_ties": 0.5, "without_ties": 0.75, "fleiss_kappa": 0.1,
          "krippendorff_alpha": 0.2}  # fmt: skip


def _params(**changes) -> JudgePublicParams:
    data = {"study": "judge_public", "title": "t", "bootstrap_rounds": 50, **changes}
    return JudgePublicParams.model_validate(data)


def _prd(reviewer: str = "gpt4") -> PrdResult:
    """Five items of one pair; the reviewer's two orders and the human majority:

    q  x-first y-first resolved human  len_x len_y
    0  a       a       a        a      10    20
    1  a       b       tie      b      10    20
    2  b       b       b        b      30    10
    3  tie     tie     tie      tie     5     5
    4  b       b       b        (none: no majority)
    """
    pairs = [("a", "a"), ("a", "b"), ("b", "b"), ("tie", "tie"), ("b", "b")]
    reviews = pd.DataFrame(
        [(reviewer, "a", q, "m1", "m2", shown, v)
         for q, (one, two) in enumerate(pairs) for shown, v in ((True, one), (False, two))],
        columns=["reviewer", "run", "question_id", "model_x", "model_y", "x_first", "verdict"],
    )  # fmt: skip
    orders = scoring.prd_orders(reviews).assign(len_x=[10, 10, 30, 5, 8], len_y=[20, 20, 10, 5, 9])
    items = pd.DataFrame(
        {"question_id": range(5), "model_x": "m1", "model_y": "m2",
         "human": ["a", "b", "b", "tie", None]}
    )  # fmt: skip
    llm_items = items.assign(len_x=orders["len_x"], len_y=orders["len_y"])
    table = metrics.prd_reviewer_table(
        orders, items, rng=np.random.default_rng(0), rounds=50, level=0.95
    )
    return PrdResult(
        human=pd.DataFrame(), orders=orders, items=items, llm_items=llm_items, raters=RATERS,
        table=table, confusions=pd.DataFrame(),
        human_longer=longer_summary(items["human"], llm_items["len_x"], llm_items["len_y"], 0.95),
        rerun=None, lead=reviewer,
    )  # fmt: skip


def _mtbench() -> MtBenchResult:
    """Five pairs, all 'writing': three consistent, two that favour the first-shown answer."""
    pairs = pd.DataFrame(
        {"category": "writing", "first": ["a", "b", "tie", "a", "a"],
         "second": ["a", "b", "tie", "b", "b"], "resolved": ["a", "b", "tie", "tie", "tie"],
         "outcome": ["consistent"] * 3 + ["inconsistent_tie"] * 2,
         "len_1": [100, 10, 5, 5, 5], "len_2": [50, 20, 5, 5, 5]}
    )  # fmt: skip
    table = metrics.mtbench_pair_table(pairs, 0.95)
    return MtBenchResult(pd.DataFrame(), pd.DataFrame(), {}, pairs, table)


def _result(**changes) -> JudgePublicResult:
    base = JudgePublicResult(
        params=_params(sections=["prd", "mtbench"]), sources=pd.DataFrame(), prd=_prd(),
        pandalm=None, mtbench=_mtbench(), usage=pd.DataFrame(), simulated=frozenset(),
    )  # fmt: skip
    return base._replace(**changes)


def test_key_result_states_each_section_with_its_interval() -> None:
    text = report.key_result(_result())
    # resolved a, tie, b, tie vs human a, b, b, tie: 3 of 4 labelled items; decisive (both
    # pick a winner): q0 and q2, both agree -> 2 of 2
    assert "gpt4 agrees with the MTurk majority on 75.0% [" in text
    assert "of 4 items with ties, 100.0% [" in text and "of 2 decisive items" in text
    assert "two MTurk workers agree 50.0% / 75.0%" in text
    # MT-Bench: 3 of 5 pairs give the same verdict in both orders
    assert "both answer orders on 60.0% [" in text and "of 5 pairs" in text
    assert "nothing is simulated" in text and "PandaLM" not in text
    assert text.endswith("Intervals: 95% Wilson.</p>")


def test_key_result_escapes_a_reviewer_name() -> None:
    text = report.key_result(_result(prd=_prd("<b>r</b>")))
    assert "<b>r</b>" not in text and "&lt;b&gt;r&lt;/b&gt; agrees" in text


def test_prd_humans_counts_items_without_a_majority() -> None:
    text = report.prd_humans(_result())
    assert "<p>1 of the 5 reviewer items have three different votes" in text
    assert "are left out." in text
    assert "Fleiss' kappa 0.100, Krippendorff's alpha 0.200" in text
    tie = report.prd_humans(_result(params=_params(human_no_majority="tie")))
    assert "are counted as ties." in tie


def test_prd_tables_show_agreement_over_all_items_and_the_humans_length_share() -> None:
    table = report.prd_agreement_table(_result())
    assert '<th style="text-align:right">with_ties_all</th>' in table
    assert "inconsistent → tie" in table and "bootstrap, 50 rounds" in table
    # humans: decisive items with unequal lengths q0 (a, x shorter), q1 (b, y longer),
    # q2 (b, y shorter) -> the longer wins at q1 only: 1/3
    assert report.prd_bias_table(_result()).count("humans: 0.333 [") == 1


def test_prd_against_papers_needs_gpt4() -> None:
    assert "GPT-4 agrees with the MTurk majority 75.0% / 100.0%" in report.prd_against_papers(
        _result()
    )
    assert report.prd_against_papers(_result(prd=_prd("bard"))) == ""
    assert report.prd_rerun(_result()) == ""  # this PRD result has no second run


def test_mtbench_pairs_sentence_by_hand() -> None:
    text = report.mtbench_pairs(_result())
    # 2 inconsistent pairs, both (a, b): the first-shown answer wins twice -> 100% lean first
    assert "<p>5 first-turn pairs, re-parsed here (0 unscored)" in text
    assert "60.0% (95% Wilson" in text and "100% of the 2 inconsistent pairs" in text
    assert "so 40.0% of pairs lean first and 0.0% second" in text
    # decisive resolved verdicts with unequal lengths: q0 (a, 1 longer), q1 (b, 2 longer)
    assert "The longer answer wins 100.0% of decisive verdicts (2;" in text


def test_pandalm_setup_says_whether_the_published_numbers_are_reproduced() -> None:
    frame = pd.DataFrame(
        {"human": ["a", "b", "tie", "a"], "gpt-3.5-turbo": ["a", "b", "tie", None],
         "pandalm-7b": ["a", "a", "tie", "a"], "gpt-3.5-turbo_garbage": [False] * 3 + [True],
         "pandalm-7b_garbage": [False] * 4}
    )  # fmt: skip
    judges = metrics.pandalm_judge_table(frame, rng=np.random.default_rng(0), rounds=20, level=0.95)
    # gpt-3.5: 3 of 3 answered correct, 3 of 4 over every item (the dropped one a miss)
    gpt = judges.set_index("judge").loc["gpt-3.5-turbo"]
    assert (gpt["accuracy"], gpt["accuracy_all"]) == (1.0, 0.75)
    panda = PandalmResult(frame, judges, metrics.pandalm_comparison(judges), pd.DataFrame(),
                          pd.DataFrame(), pd.DataFrame(), pd.DataFrame())  # fmt: skip
    result = _result(params=_params(pandalm_garbage="drop"), pandalm=panda)
    text = report.pandalm_setup(result)
    assert text.startswith("<p>4 pairs of responses") and "verdict 1 times" in text
    assert "counts as <b>unscored (left out)</b>" in text
    assert "our numbers differ from the published ones" in text
    assert "accuracy_all" in report.pandalm_judges_table(result)


def test_headlines_and_sections_left_out() -> None:
    heads = report.headlines(_result())
    assert heads == {
        "PRD gpt4 vs human (with ties)": pytest.approx(3 / 4),
        "MT-Bench GPT-4 position consistency": pytest.approx(3 / 5),
    }


def test_a_section_not_run_is_one_line_at_its_head_and_nothing_else() -> None:
    result = _result()  # sections: prd, mtbench
    line = "<p>PandaLM is not in this run's <code>sections</code>.</p>"
    assert report.pandalm_setup(result) == line
    assert report.pandalm_judges_table(result) == ""
    assert report.pandalm_published_tables(result) == ""
    assert report.pandalm_longer_table(result) == ""
    no_prd = result._replace(prd=None, params=_params(sections=["mtbench"]))
    assert report.prd_humans(no_prd) == "<p>PRD is not in this run's <code>sections</code>.</p>"
    for rest in (report.prd_agreement_table, report.prd_bias_table, report.prd_rerun,
                 report.prd_against_papers):  # fmt: skip
        assert rest(no_prd) == ""
    no_mt = result._replace(mtbench=None, params=_params(sections=["prd"]))
    line = "<p>MT-Bench is not in this run's <code>sections</code>.</p>"
    assert report.mtbench_retest(no_mt) == line and report.mtbench_pairs(no_mt) == line
    assert report.mtbench_pair_table(no_mt) == ""


def test_findings_state_each_section_in_words_and_the_noisy_humans_first() -> None:
    found = report.findings(_result())
    prd = _prd().table.set_index("reviewer").loc["gpt4"]
    # 3 of 4 labelled items with ties (see the key-result test)
    assert (
        "on PRD's Vicuna-80 questions, gpt4 agrees with the MTurk majority on about 75% of 4 "
        f"items (ties counted), likely between {prd['with_ties_low'] * 100:.0f}% and "
        f"{prd['with_ties_high'] * 100:.0f}%"
    ) in found.key_result
    assert "on MT-Bench, GPT-4 gives the same verdict in both answer orders on about 60% of 5" in (
        found.key_result
    )
    assert found.caveats[0] == (
        "The human labels are noisy: two MTurk workers agree with each other on only 50% of "
        "items (ties counted), which caps how far any judge can agree with them."
    )
    # MT-Bench: 2 of 5 pairs (40%) change verdict when the answers swap places
    assert found.risks[0].startswith(
        "<b>GPT-4 is position-inconsistent on MT-Bench</b>: its verdict changes when the two "
        "answers swap places in about 40% of 5 pairs"
    )
