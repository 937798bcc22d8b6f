"""The leaderboard tables: the official formulas by hand, and glyphh-ada-1.1's published rows."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from bfcl.cases import python_results
from bfcl.category_cases import glyphh_own_checker_verdicts

from evalbench import bfcl
from evalbench.bfcl import backends, data, leaderboard, metrics
from evalbench.bfcl.leaderboard import NEEDS_MEMORY, Score
from evalbench.bfcl.schema import MEMORY

HAND = {
    "simple_python": Score(0.9, 400),
    "simple_java": Score(0.6, 100),
    "simple_javascript": Score(0.3, 50),
    "multiple": Score(0.8, 200),
    "parallel": Score(0.7, 200),
    "parallel_multiple": Score(0.5, 200),
    "irrelevance": Score(0.9, 240),
    "live_simple": Score(0.5, 258),
    "live_multiple": Score(1.0, 1053),
    "live_parallel": Score(0.0, 16),
    "live_parallel_multiple": Score(0.5, 24),
    "live_irrelevance": Score(0.7, 884),
    "multi_turn_base": Score(0.4, 200),
    "multi_turn_miss_func": Score(0.5, 200),
    "multi_turn_miss_param": Score(0.6, 200),
    "multi_turn_long_context": Score(0.7, 200),
    "web_search_base": Score(0.8, 100),
    "web_search_no_snippet": Score(0.6, 100),
}  # fmt: skip  (no live_relevance, no memory)


def test_the_official_formulas_by_hand():
    t = leaderboard.leaderboard_tables(HAND)
    assert t["data_non_live"]["Simple AST"] == pytest.approx((0.9 + 0.6 + 0.3) / 3)
    non_live = (0.6 + 0.8 + 0.7 + 0.5) / 4
    assert t["data_non_live"]["Non-Live Overall Acc"] == pytest.approx(non_live)
    live = (0.5 * 258 + 1.0 * 1053 + 0.0 * 16 + 0.5 * 24) / (258 + 1053 + 16 + 24)
    assert t["data_live"]["Live Overall Acc"] == pytest.approx(live)
    assert t["data_multi_turn"]["Multi Turn Overall Acc"] == pytest.approx(0.55)
    # memory not scored: its cells are N/A, but the agentic overall counts it as 0
    assert t["data_agentic"]["Web Search Summary"] == pytest.approx(0.7)
    assert t["data_agentic"]["Memory Summary"] is None
    assert t["data_agentic"]["Agentic Overall Acc"] == pytest.approx((0.7 + 0) / 2)
    irrelevance = (0.9 + 0.7) / 2
    assert t["data_overall"]["Irrelevance Detection"] == pytest.approx(irrelevance)
    assert t["data_overall"]["Relevance Detection"] is None  # live_relevance missing
    overall = 0.1 * non_live + 0.1 * live + 0.1 * irrelevance + 0.3 * 0.55 + 0.4 * 0.35
    assert t["data_overall"]["Overall Acc"] == pytest.approx(overall)


def test_a_missing_language_shows_na_in_summaries_but_not_in_the_section_overall():
    t = leaderboard.leaderboard_tables({k: v for k, v in HAND.items() if k != "simple_java"})
    assert t["data_non_live"]["Simple AST"] is None and t["data_non_live"]["AST Summary"] is None
    # the overall still counts Java as 0: simple = (0.9 + 0 + 0.3) / 3
    assert t["data_non_live"]["Non-Live Overall Acc"] == pytest.approx(
        ((0.9 + 0.3) / 3 + 0.8 + 0.7 + 0.5) / 4
    )


def test_one_formula_for_the_aggregates_and_the_tables():
    agg = leaderboard.aggregates(HAND)
    tables = leaderboard.leaderboard_tables(HAND)
    # the section overalls are the tables' own cells, not a second computation
    assert agg["overall"] == tables["data_overall"]["Overall Acc"]
    assert agg["non_live"] == tables["data_non_live"]["Non-Live Overall Acc"]
    assert agg["live"] == tables["data_live"]["Live Overall Acc"]
    assert agg["multi_turn"] == tables["data_multi_turn"]["Multi Turn Overall Acc"]
    # live_relevance is not in HAND: 0 in the aggregates, N/A in the table
    assert agg["relevance"] == 0.0 and tables["data_live"]["Relevance Detection"] is None
    assert agg["irrelevance"] == tables["data_overall"]["Irrelevance Detection"]
    assert agg["missing"] == ["live_relevance", "memory_kv", "memory_rec_sum", "memory_vector"]
    frame = pd.DataFrame(
        [("s", c, v.accuracy, v.total) for c, v in HAND.items()],
        columns=["system", "test_category", "accuracy", "n"],
    )
    row = metrics.overall_table(frame).iloc[0].to_dict()
    assert row == {"system": "s", **agg}


@pytest.mark.slow
@pytest.mark.skipif(
    not backends.available(), reason=f"needs the official BFCL backends: {backends.INSTALL_HINT}"
)
def test_glyphh_published_rows_are_reproduced(public_items):
    single = bfcl.score_results(public_items, python_results("glyphh-ada-1.1"),
                                system="glyphh-ada-1.1", style="fc")  # fmt: skip
    memory = bfcl.score_results(bfcl.load("memory"), bfcl.fetch_results("glyphh-ada-1.1", MEMORY),
                                system="glyphh-ada-1.1", style="fc")  # fmt: skip
    model = "Glyphh Ada 1.1 (HDC+FC)"
    tables = ("data_non_live", "data_live", "data_multi_turn", "data_agentic", "data_overall")
    published = {t: data.published_row(t, model) for t in tables}
    # without the memory categories, exactly the columns that need them differ
    scores = leaderboard.scores_from_verdicts(pd.concat([single, glyphh_own_checker_verdicts()]))
    table = leaderboard.comparison(leaderboard.leaderboard_tables(scores), published)
    unequal = table[~table["equal"]]
    needs_memory = {(t, c) for t, cols in NEEDS_MEMORY.items() for c in cols}
    assert set(zip(unequal["table"], unequal["column"], strict=True)) == needs_memory
    assert (unequal["reason"] == "needs the memory categories").all()
    multi_turn = table[table["table"] == "data_multi_turn"].set_index("column")["ours"]
    assert [round(v * 100, 2) for v in multi_turn] == [53.75, 60.50, 51.00, 47.50, 56.00]
    # with our memory verdicts (135 of 155 in each) every published column is reproduced
    full = leaderboard.scores_from_verdicts(
        pd.concat([single, glyphh_own_checker_verdicts(), memory])
    )
    table = leaderboard.comparison(leaderboard.leaderboard_tables(full), published)
    assert table["equal"].all() and (table["reason"] == "").all()
    ours = leaderboard.leaderboard_tables(full)
    assert round(ours["data_agentic"]["Memory Summary"] * 100, 2) == 87.10  # 135 / 155
    # agentic = (web search 79.50 + memory 87.10) / 2; overall weighs agentic 40 of 100
    assert round(ours["data_agentic"]["Agentic Overall Acc"] * 100, 2) == 83.30
    assert round(ours["data_overall"]["Overall Acc"] * 100, 2) == 74.50


def test_an_n_a_cell_of_a_published_row_is_nan_not_dropped(mirror):
    # data_live.csv's last column for glyphh-ada-1.1 is "N/A": pandas read it as a missing
    # value, so the "N/A" branch never ran and the column vanished from the row
    row = data.published_row("data_live", "Glyphh Ada 1.1 (HDC+FC)")
    na = [column for column, value in row.items() if math.isnan(value)]
    assert row["Live Overall Acc"] == pytest.approx(0.7432)
    assert na == ["Relevance Detection"]
