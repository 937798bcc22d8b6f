"""Sentences and tables about style- and length-controlled ratings, shared by the reports of
the arena studies (``arena``, ``arena_public``).

Pure text from :class:`evalbench.ratings_style.StyleControl` and
:func:`evalbench.ratings_lc.lc_win_rates` tables: escaped HTML built with
:func:`evalbench.display.fill`, tables with :func:`evalbench.display.table_block`.
"""

from __future__ import annotations

import pandas as pd

from evalbench import display
from evalbench.ratings_style import StyleControl


def style_paragraph(control: StyleControl, *, level: float, rounds: int) -> str:
    """The style-controlled ratings in one paragraph: the coefficients with their intervals,
    the features that never varied, and who moves in the ranking."""
    coefs = control.coefficients
    shown = coefs[coefs["estimable"]]
    parts = [display.fill("{f} {c:+.2f} [{lo:+.2f}, {hi:+.2f}]", f=r.feature, c=r.coefficient,
                          lo=r.ci_low, hi=r.ci_high) for r in shown.itertuples()]  # fmt: skip
    constant = ", ".join(coefs.loc[~coefs["estimable"], "feature"])
    return display.fill(
        "<p><b>Style-controlled</b> Bradley–Terry (Chatbot Arena's style control, as FastChat's "
        "<code>compute_style_control</code>): each battle also carries the two answers' "
        "normalized differences in length (tokens), headers, list items and bold, and the fit "
        "gives each a coefficient (log-odds per standard deviation; {lvl:.0%} bootstrap "
        "intervals, {r} rounds): ",
        lvl=level, r=rounds,
    ) + ", ".join(parts) + display.fill(
        ".{const} Rank changes once style is controlled (raw rank − controlled rank): {moves}."
        "</p>",
        const=f" Never varied, left out: {constant} (no answer differs in them)." if constant
        else "", moves=rank_moves(control.table),
    )  # fmt: skip


def rank_moves(table: pd.DataFrame) -> str:
    """``"b +1, a −1"`` for the models whose rank changes (``"none"`` when no rank does)."""
    moved = table[table["rank_change"] != 0]
    return ", ".join(display.fill("{m} {c:+d}", m=r.model, c=int(r.rank_change))
                     for r in moved.itertuples()) or "none"  # fmt: skip


def style_table(control: StyleControl, *, level: float, rounds: int, what: str = "") -> str:
    """Raw and style-controlled ratings side by side with the ranks.

    Args:
        control: the style-controlled ratings.
        level: interval level.
        rounds: bootstrap rounds.
        what: which battles, put before the caption (e.g. ``"PRD, 1,760 votes: "``).
    """
    caption = (
        f"{what}Raw and style-controlled Bradley–Terry ratings, {level:.0%} bootstrap "
        f"intervals of the controlled ones ({rounds} rounds), same anchor; "
        "rank_change = raw rank − controlled rank"
    )
    return display.table_block(control.table, caption, digits=1)


def style_coefficients_table(control: StyleControl, *, what: str = "") -> str:
    """The style coefficients with their intervals (``what`` as in :func:`style_table`)."""
    caption = (
        f"{what}Style coefficients: log-odds of winning per standard deviation of the "
        "normalized difference (a − b)/(a + b + 1); estimable = the feature varies between "
        "answers"
    )
    return display.table_block(control.coefficients.drop(columns=["level", "rounds"]), caption)


def lc_sentence(lc: pd.DataFrame, baseline: str) -> str:
    """The length-controlled win rates in a sentence, beside the raw ones (``lc``: rows of
    :func:`evalbench.ratings_lc.lc_win_rates`; the baseline's own row is left out); why there
    is none when no model has one."""
    lc = lc[lc["model"] != baseline]
    rated = lc.dropna(subset=["lc_win_rate"])
    if rated.empty:
        return display.fill("<p>No length-controlled win rate: {why}</p>",
                            why="; ".join(lc["note"].dropna()) or "no model")  # fmt: skip
    parts = ", ".join(display.fill("{m} {w:.1f}% raw, {lc:.1f}% ± {se:.1f} length-controlled",
                                   m=r.model, w=r.win_rate, lc=r.lc_win_rate,
                                   se=r.lc_standard_error) for r in rated.itertuples())  # fmt: skip
    return display.fill("<p>Against {b}: ", b=baseline) + parts + ".</p>"
