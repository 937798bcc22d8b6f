"""What the published-ratings notebook says: sentences with numbers, tables with captions.

Every sentence is escaped HTML built with :func:`evalbench.display.fill`; the figures are
:mod:`~.figures`'. The data are published votes and judgments: no model is asked, so
nothing here is simulated.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from evalbench import display, ratings_report
from evalbench.findings import Findings, about, ordinal
from evalbench.tiers import expected_half_width, subset_label

from .data import PUBLIC_DATASETS
from .metrics import winner_counts
from .records import ArenaPublicResult, PublicStyle

ALPACA_COLUMNS = {
    "leaderboard_win_rate": "leaderboard",
    "standard_error": "SE",
    "n_total": "n",
    "prefer_longer": "P(longer)",
    "prefer_longer_low": "low",
    "prefer_longer_high": "high",
}
"""AlpacaEval table columns -> the short names shown."""


def _top_two(result: ArenaPublicResult, name: str) -> str:
    p, rated = result.params, result.rated[name]
    table = rated.ratings.table
    top = ", ".join(
        f"{r.model} {r.rating:.0f} [{r.ci_low:.0f}, {r.ci_high:.0f}]"
        for r in table.head(2).itertuples()
    )
    return display.fill(
        "{title} (mean {mean:g}): {top} (top two of {n}, {b:,} battles)",
        title=PUBLIC_DATASETS[name].title, mean=p.anchor_rating, top=top, n=len(table),
        b=len(rated.battles),
    )  # fmt: skip


def max_leaderboard_gap(result: ArenaPublicResult) -> float:
    """The largest |our AlpacaEval win rate − the leaderboard's| over the models (points)."""
    if result.alpaca is None:
        return float("nan")
    return float(result.alpaca.table["difference"].abs().max())


def key_result(result: ArenaPublicResult) -> str:
    """The key-result sentence: the top two of each rated dataset, AlpacaEval's agreement.

    E.g. ``PRD Vicuna-80: human pairwise votes (mean 1000): gpt4 1134 [1118, 1150], ...``.
    """
    p = result.params
    parts = [_top_two(result, name) for name in result.rated]
    if result.alpaca is not None:
        parts.append(display.fill(
            "AlpacaEval 2: win rates recomputed from the official annotations differ from the "
            "leaderboard by at most {gap:.3f} percentage points", gap=max_leaderboard_gap(result),
        ) + _lc_clause(result))  # fmt: skip
    return display.fill(
        "<p><b>Key results</b> (published human votes and judge verdicts; no model was asked). "
        "Bradley–Terry ratings on the Elo scale with {lvl:.0%} bootstrap intervals ({r} rounds): ",
        lvl=p.confidence_level, r=p.bootstrap_rounds,
    ) + "; ".join(parts) + ".</p>" + tier_note(result)  # fmt: skip


def findings(result: ArenaPublicResult) -> Findings:
    """What the study found (the report's opening, the summary's key result): the top two of
    each rated dataset in words with their intervals, and how close the recomputed AlpacaEval
    win rates are to the leaderboard; caveats: separate scales per dataset, top two not told
    apart, a subsample; whether style control or AlpacaEval's length control changes the
    order (first when it does)."""
    parts = [_top_two_words(result, name) for name in result.rated]
    if result.alpaca is not None:
        parts.append(
            display.fill(
                "AlpacaEval 2: win rates recomputed from the official annotations differ from "
                "the leaderboard's by at most {gap:.2f} percentage points",
                gap=max_leaderboard_gap(result),
            )
        )
    key = "Ratings on the Elo scale from published human votes and judge verdicts (no model "
    key += "was asked; higher is better): " + "; ".join(parts) + "."
    caveats = [_scales_caveat(result), _tied_caveat(result), _subsample_caveat(result)]
    controlled = [_style_caveat(result), _alpaca_lc_caveat(result)]
    moved = [c for c in controlled if c.startswith((CHANGES, LC_CHANGES))]
    caveats = moved + caveats + [c for c in controlled if c not in moved]
    return Findings(key, tuple(c for c in caveats if c), detail=key_result(result))


CHANGES = "The order changes once answer length and formatting are controlled"
"""How the style caveat begins when a rank moves (then it is the top caveat)."""


def _style_caveat(result: ArenaPublicResult) -> str:
    """Whether style control moves the order, per dataset with published answers ("" when
    no dataset has a style control)."""
    moved, same, unchecked = [], [], []
    for name, rated in result.rated.items():
        title = PUBLIC_DATASETS[name].title
        control = rated.style.control if rated.style is not None else None
        if control is None:
            unchecked.append(title)
            continue
        table = control.table[control.table["rank_change"] != 0]
        if not len(table):
            same.append(title)
            continue
        moves = " and ".join(
            display.fill(
                "{m} from {a} to {b}",
                m=r.model,
                a=ordinal(int(r.rank)),
                b=ordinal(int(r.style_rank)),
            )
            for r in table.itertuples()
        )
        moved.append(display.fill("on {t}, ", t=title) + moves)
    if moved:
        return f"{CHANGES} (style control): " + "; ".join(moved) + "."
    if not same:
        return ""
    text = display.fill(
        "Controlled for answer length and formatting (style control), the order stays the "
        "same on {s}",
        s=", ".join(same),
    )
    if unchecked:
        text += display.fill("; not checked on {u} (no answers published)", u=", ".join(unchecked))
    return text + "."


LC_CHANGES = "The AlpacaEval order changes once answer length is controlled"
"""How the AlpacaEval length-control caveat begins when the order moves (a top caveat)."""


def _alpaca_lc_caveat(result: ArenaPublicResult) -> str:
    """Raw and length-controlled AlpacaEval orders of the models (the baseline apart)."""
    lc = result.alpaca_lc
    if lc is None:
        return ""
    rated = lc[lc["note"].fillna("") != "the baseline"].dropna(subset=["lc_win_rate"])
    if len(rated) < 2:
        return ""
    raw = rated.sort_values("win_rate", ascending=False)
    controlled = rated.sort_values("lc_win_rate", ascending=False)
    if list(raw["model"]) == list(controlled["model"]):
        each = ", ".join(
            display.fill("{m} {w:.0f}% → {c:.0f}%", m=r.model, w=r.win_rate, c=r.lc_win_rate)
            for r in raw.itertuples()
        )
        return "AlpacaEval's length-controlled win rates keep the raw order: " + each + "."
    by_raw = " then ".join(
        display.fill("{m} {w:.0f}%", m=r.model, w=r.win_rate) for r in raw.itertuples()
    )
    by_lc = " then ".join(
        display.fill("{m} {w:.0f}%", m=r.model, w=r.lc_win_rate) for r in controlled.itertuples()
    )
    return f"{LC_CHANGES}: by raw win rate {by_raw}; length-controlled {by_lc}."


def _top_two_words(result: ArenaPublicResult, name: str) -> str:
    rated = result.rated[name]
    table = rated.ratings.table
    top = ", then ".join(
        display.fill("{m} {about}", m=r.model, about=about(r.rating, r.ci_low, r.ci_high, "rating"))
        for r in table.head(2).itertuples()
    )
    return (
        display.fill("{title}: ", title=PUBLIC_DATASETS[name].title)
        + top
        + display.fill(" (top two of {n}, {b:,} battles)", n=len(table), b=len(rated.battles))
    )


def _scales_caveat(result: ArenaPublicResult) -> str:
    if len(result.rated) < 2:
        return ""
    return display.fill(
        "Each dataset's ratings are on their own scale (mean {m:g}): compare models within a "
        "dataset, not across (the same name in two datasets is rated against different "
        "opponents and judges).",
        m=result.params.anchor_rating,
    )


def _tied_caveat(result: ArenaPublicResult) -> str:
    tied = []
    for name, rated in result.rated.items():
        table = rated.ratings.table
        if len(table) >= 2 and table["ci_low"].iloc[0] <= table["ci_high"].iloc[1]:
            tied.append(
                display.fill(
                    "{a} and {b} ({d})",
                    a=table["model"].iloc[0],
                    b=table["model"].iloc[1],
                    d=PUBLIC_DATASETS[name].title.split(":")[0],
                )
            )
    if not tied:
        return ""
    return "Not told apart (their intervals overlap): " + "; ".join(tied) + "."


def _subsample_caveat(result: ArenaPublicResult) -> str:
    p = result.params
    if p.tier == "full" and p.sample is None:
        return ""
    return display.fill(
        "A subsample ({size}): the leaderboard numbers are not reproduced.",
        size=subset_label(p.tier, p.sample),
    )


def _lc_clause(result: ArenaPublicResult) -> str:
    if result.alpaca_lc is None:
        return ""
    return display.fill(
        ", the length-controlled ones by at most {gap:.1f} (AlpacaEval's instruction "
        "difficulty is not in the mirror: fitted here on the models shown)",
        gap=max_lc_gap(result),
    )


def style_key(result: ArenaPublicResult) -> str:
    """One sentence on style control: per dataset with published answers, the length
    coefficient and the rank changes; the datasets without answers named."""
    p = result.params
    parts, without = [], []
    for name in p.public:
        style = _style(result, name)
        if style is None or style.control is None:
            without.append(name)
            continue
        coefs = style.control.coefficients.set_index("feature")
        parts.append(display.fill(
            "{name} ({n}): length {c:+.2f} [{lo:+.2f}, {hi:+.2f}] "
            "log-odds per SD, rank changes {moves}", name=name, n=style_units(name, style),
            c=coefs.loc["tokens", "coefficient"], lo=coefs.loc["tokens", "ci_low"],
            hi=coefs.loc["tokens", "ci_high"], moves=ratings_report.rank_moves(style.control.table),
        ))  # fmt: skip
    if not parts:
        return ""
    missing = display.fill(" No style control for {w} (no answers).", w=", ".join(without))
    return (
        "<p><b>Style-controlled</b> ratings (answer length and markdown held apart): "
        + "; ".join(parts)
        + "."
        + (missing if without else "")
        + "</p>"
    )


def tier_note(result: ArenaPublicResult) -> str:
    """With ``tier`` / ``sample``: what was kept and the half-width to expect of a pairwise
    win rate at the median number of battles per model pair ("" for the full data)."""
    p = result.params
    if p.tier == "full" and p.sample is None:
        return ""
    battles = {name: r.battles for name, r in result.rated.items()}
    if result.alpaca is not None:
        battles["alpaca_eval"] = result.alpaca.battles
    parts = []
    for name, frame in battles.items():
        pairs = [tuple(sorted(x)) for x in zip(frame["model_a"], frame["model_b"], strict=True)]
        per_pair = int(pd.Series(pairs).value_counts().median()) if pairs else 0
        parts.append(display.fill(
            "{name}: {b:,} battles, median {k} per model pair (±{hw:.3f})", name=name,
            b=len(frame), k=per_pair, hw=expected_half_width(per_pair, p.confidence_level),
        ))  # fmt: skip
    size = subset_label(p.tier, p.sample)
    return display.banner(
        f"SUBSAMPLE — {size} (seeded by sample_seed {p.sample_seed}; items = question × model "
        "pair, strata = model pairs; AlpacaEval: instructions, strata = its source datasets; "
        "nested): the leaderboard numbers are not reproduced on a subsample."
    ) + display.fill(
        "<p>Kept, with the expected {lvl:.0%} half-width of a pairwise win rate near 50%: ",
        lvl=p.confidence_level,
    ) + "; ".join(parts) + ".</p>"  # fmt: skip


def source(result: ArenaPublicResult, name: str) -> str:
    """What the dataset is, the paper, the pinned files and their licenses."""
    info = PUBLIC_DATASETS[name]
    return display.fill(
        "<p>{note}</p><p><small>Source: {ref}. Data: {data}. License: {lic}.</small></p>",
        note=info.note, ref=info.reference, data=info.data, lic=result.licenses[name],
    )  # fmt: skip


def battle_counts(battles: pd.DataFrame) -> str:
    """``1,348 battles: model A won 310, model B won 850, 188 ties.``"""
    won = winner_counts(battles)
    return display.fill(
        "<p>{n:,} battles: model A won {a:,}, model B won {b:,}, {t:,} ties.</p>",
        n=len(battles), a=won["a"], b=won["b"], t=won["tie"],
    )  # fmt: skip


def ratings_table(result: ArenaPublicResult, name: str) -> str:
    """The dataset's ratings with intervals and online Elo, with a caption that says how."""
    p, table = result.params, result.rated[name].ratings.table
    degenerate = int(table["degenerate_rounds"].max())
    left_out = f", {degenerate} without a finite fit left out" if degenerate else ""
    caption = (
        f"{PUBLIC_DATASETS[name].title}: Bradley–Terry ratings (mean {p.anchor_rating:g}), "
        f"{p.confidence_level:.0%} bootstrap intervals ({p.bootstrap_rounds} rounds{left_out}), "
        f"online Elo (K={p.elo_k:g}, file order); n_battles = battles the model played"
    )
    shown = table[["model", "rating", "ci_low", "ci_high", "online_elo", "n_battles"]]
    return display.table_block(shown, caption, digits=1)


def dataset_section(result: ArenaPublicResult, name: str) -> str:
    """A rated dataset's source, battle counts and ratings table (``""`` if not rated)."""
    if name not in result.rated:
        return f"<p>Not rated in this run ({display.escape(name)} is not in params).</p>"
    rated = result.rated[name]
    return source(result, name) + battle_counts(rated.battles) + ratings_table(result, name)


def alpaca_section(result: ArenaPublicResult) -> str:
    """AlpacaEval's source and the win-rate table (ours vs the leaderboard, lengths)."""
    if result.alpaca is None:
        return (
            "<p>Not rated in this run (<code>alpaca_eval</code> is not in <code>public</code>).</p>"
        )
    p = result.params
    shown = result.alpaca.table.rename(columns=ALPACA_COLUMNS)
    shown["avg_length"] = shown["avg_length"].round().astype(int)
    caption = (
        f"AlpacaEval 2 vs {p.alpaca_baseline}: our win rate vs the leaderboard's (percent; "
        f"SE = standard error; n = instructions), average answer length (characters), "
        f"P(prefer longer) with its {p.confidence_level:.0%} interval ({p.bootstrap_rounds} "
        "rounds) over the n_compared instructions whose answers differ in length"
    )
    table = display.table_block(shown.drop(columns="leaderboard_avg_length"), caption, digits=3)
    return source(result, "alpaca_eval") + table


def alpaca_ratings(result: ArenaPublicResult) -> str:
    """The star ratings table (AlpacaEval as Bradley–Terry ratings)."""
    if result.alpaca_ratings is None:
        return ""
    p = result.params
    caption = (
        f"AlpacaEval 2 as ratings: {p.anchor_rating:g} + 400·log10(w / (1 − w)) for win rate w "
        f"against {p.alpaca_baseline}; {p.confidence_level:.0%} bootstrap intervals over "
        f"instructions ({p.bootstrap_rounds} rounds); n_battles = judged instructions"
    )
    shown = result.alpaca_ratings[["model", "rating", "ci_low", "ci_high", "n_battles"]]
    return display.table_block(shown, caption, digits=1)


# --------------------------------------------------------------------------- style and length


def _style(result: ArenaPublicResult, name: str) -> PublicStyle | None:
    if name == "alpaca_eval":
        return result.alpaca_style
    rated = result.rated.get(name)
    return None if rated is None else rated.style


def style_section(result: ArenaPublicResult, name: str) -> str:
    """Style control of one dataset: which battles, the coefficients and rank changes, raw and
    controlled ratings side by side, the coefficients table; or why there is none."""
    style, p = _style(result, name), result.params
    if style is None:
        return f"<p>Not rated in this run ({display.escape(name)} is not in params).</p>"
    if style.control is None:
        return display.fill("<p>{note}</p>", note=style.note)
    title = PUBLIC_DATASETS[name].title.split(":")[0]
    what = f"{title}, {style_units(name, style)}: "
    lvl, rounds = p.confidence_level, p.bootstrap_rounds
    return (
        style_scope(result, name)
        + ratings_report.style_paragraph(style.control, level=lvl, rounds=rounds)
        + ratings_report.style_table(style.control, level=lvl, rounds=rounds, what=what)
        + ratings_report.style_coefficients_table(style.control, what=what)
    )


def style_units(name: str, style: PublicStyle) -> str:
    """What the style control fitted: ``1,760 battles with both answers``, or for AlpacaEval
    (two soft halves per verdict) ``3,220 annotations``."""
    if name == "alpaca_eval":
        return f"{len(style.battles.drop_duplicates(['model_b', 'question_id'])):,} annotations"
    return f"{len(style.battles):,} battles with both answers"


def style_scope(result: ArenaPublicResult, name: str) -> str:
    """Which battles the style control covers and what its raw ratings are."""
    style, p = _style(result, name), result.params
    if style is None or style.control is None:
        return ""
    if name == "alpaca_eval":
        return display.fill(
            "<p>{answers} Its {k:,} annotations (as {n:,} soft battles: one annotation = one "
            "unit of weight split between the two sides) are fitted with the four style terms; "
            "the raw ratings beside "
            "them are the star ratings above, {base} fixed at {a:g} in both. The bootstrap "
            "resamples annotations (both halves of a soft verdict together); the fit has "
            "FastChat's ridge (0.5) on ratings and coefficients, the star ratings none.</p>",
            answers=PUBLIC_DATASETS[name].answers, n=len(style.battles), base=p.alpaca_baseline,
            k=len(style.battles.drop_duplicates(["model_b", "question_id"])),
            a=p.anchor_rating,
        )  # fmt: skip
    return display.fill(
        "<p>{answers} {n:,} of the {total:,} battles compare two of them; the raw ratings "
        "beside the controlled ones are refitted on those battles alone (Bradley–Terry, mean "
        "{a:g}), so they differ from the table above.</p>",
        answers=PUBLIC_DATASETS[name].answers, n=len(style.battles),
        total=len(result.rated[name].battles), a=p.anchor_rating,
    )  # fmt: skip


LC_SHOWN = ["model", "win_rate", "lc_win_rate", "lc_standard_error", "leaderboard_lc_win_rate",
            "lc_difference", "length_weight", "C", "n"]  # fmt: skip
"""Columns of the length-controlled table, in the order shown."""


def max_lc_gap(result: ArenaPublicResult) -> float:
    """The largest |our LC win rate − the leaderboard's| over the models (points; NaN: none)."""
    if result.alpaca_lc is None:
        return float("nan")
    return float(result.alpaca_lc["lc_difference"].abs().max())


def lc_section(result: ArenaPublicResult) -> str:
    """AlpacaEval's length-controlled win rates beside the leaderboard's, and why they differ."""
    lc, p = result.alpaca_lc, result.params
    if lc is None:
        return "<p>Not computed in this run (<code>alpaca_eval</code> is not in params).</p>"
    caption = (
        f"AlpacaEval 2 vs {p.alpaca_baseline}: raw win rate, length-controlled win rate "
        "(GLM length_controlled_noreg, instruction difficulty fitted on the models shown) with "
        "its standard error, the leaderboard's length-controlled win rate and our difference "
        "from it (percent); length_weight = the GLM's coefficient on tanh(standardized "
        "baseline − model length), C its chosen regularization, n = instructions"
    )
    shown = lc[[c for c in LC_SHOWN if c in lc.columns]]
    return (
        ratings_report.lc_sentence(lc, p.alpaca_baseline)
        + display.table_block(shown, caption, digits=2)
        + lc_difference_note(result)
    )


def lc_difference_note(result: ArenaPublicResult) -> str:
    """The documented difference from the leaderboard's LC win rates, with its size."""
    lc = result.alpaca_lc
    if lc is None:
        return ""
    rated = lc.dropna(subset=["lc_win_rate", "leaderboard_lc_win_rate"])
    ours = list(rated.sort_values("lc_win_rate", ascending=False)["model"])
    theirs = list(rated.sort_values("leaderboard_lc_win_rate", ascending=False)["model"])
    return display.fill(
        "<p><b>Why they differ from the leaderboard.</b> The leaderboard's numbers come from "
        "AlpacaEval's <code>length_controlled_v1</code> GLM, which reads its instruction "
        "difficulty vector and the annotations of the baseline made verbose and concise (the "
        "regularizer) from the Hugging Face hub (<code>tatsu-lab/alpaca_eval</code>: df_gamed.csv, "
        "instruction_difficulty.csv); neither is a registered source nor in the data mirror. "
        "Here the GLM is <code>length_controlled_noreg</code> (no gamed rows) with a "
        "per-instruction difficulty fitted on the {k} models shown (as AlpacaEval fitted its "
        "own on its leaderboard's models), so the numbers differ by up to {gap:.2f} points; the "
        "order of the models is {order}. The GLM itself is the official one: on the same inputs "
        "it equals <code>get_length_controlled_winrate</code> (tests/arena_public).</p>",
        k=int((lc["note"] != "the baseline").sum()), gap=max_lc_gap(result),
        order="the leaderboard's" if ours == theirs else "not the leaderboard's",
    )  # fmt: skip


def headlines(result: ArenaPublicResult) -> dict[str, Any]:
    """The index's numbers: each rated dataset's top rating, AlpacaEval's largest gap to the
    leaderboard; the first three of these."""
    heads: dict[str, Any] = {}
    for name, rated in result.rated.items():
        top = rated.ratings.table.iloc[0]
        heads[f"{name} top: {top['model']}"] = round(float(top["rating"]), 1)
    if result.alpaca is not None:
        heads["AlpacaEval max |win rate − leaderboard|"] = max_leaderboard_gap(result)
    return dict(list(heads.items())[:3])
