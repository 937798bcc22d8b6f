"""The sweep report's text: escaped sentences, tables (frames with captions) and the index
headlines. Text only: figures live in figures.py."""

from __future__ import annotations

import math
from math import nan
from typing import Any

import pandas as pd

from evalbench import display
from evalbench.display import count, fill
from evalbench.executors.base import redact_address
from evalbench.findings import Findings, percent

from .expand import ZIPPED
from .records import SweepResult
from .scoring import not_separated


def _num(value: Any, digits: int = 3) -> str:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return "—"
    return "—" if not math.isfinite(number) else f"{number:.{digits}f}"


def _p(value: Any) -> str:
    number = float(value) if value is not None else math.nan
    if not math.isfinite(number):
        return "—"
    return f"{number:.3f}" if number >= 0.001 else f"{number:.1e}"


def _entry(config: int, system: str, result: SweepResult) -> str:
    """``config 3`` (``config 3 · strong-sim`` when the cells have several systems)."""
    several = result.configs["system"].nunique() > 1 if len(result.configs) else False
    return f"config {config}" + (f" · {system}" if several else "")


def _best_row(result: SweepResult) -> pd.Series | None:
    configs = result.configs
    if not len(configs):
        return None
    order = configs.sort_values(
        ["estimate", "config"], ascending=[not result.higher_is_better, True]
    )
    return order.iloc[0]


def headlines(result: SweepResult) -> dict[str, Any]:
    """The index headlines: the cells and how they ended, and the best configuration."""
    cells = result.cells
    ok = int((cells["status"] == "ok").sum())
    out: dict[str, Any] = {"cells": f"{len(cells)} ({ok} ok)"}
    best = _best_row(result)
    if best is None:  # a headline over nothing measured is no number
        why = "no cell ended ok" if not ok else f"no cell has {result.metric}"
        out[f"best {result.metric}"] = f"no result ({why})"
        return out
    out[f"best {result.metric}"] = (
        f"{_entry(int(best['config']), str(best['system']), result)}: {best['estimate']:.3f}"
    )
    if spread := _item_spread(result):
        out[f"best {result.metric}"] += f" (cells over different items: {spread[0]} to {spread[1]})"
    return out


def _item_spread(result: SweepResult) -> tuple[int, int] | None:
    """The fewest and most items a cell measured the ranking metric on, when they differ (a
    swept key that changes the items, such as ``levels``): a ranking of different tasks."""
    chosen = result.estimates[result.estimates["metric"] == result.metric]
    if "n" not in chosen or not len(chosen):
        return None
    low, high = int(chosen["n"].min()), int(chosen["n"].max())
    return (low, high) if low != high else None


def notes(result: SweepResult) -> list[str]:
    """Remarks for the index: cells that did not end ok, and what was not computed."""
    bad = result.cells[result.cells["status"] != "ok"]
    return [f"cell {r.cell} {r.status}: {r.reason}" for r in bad.itertuples()] + result.notes


def _settings(result: SweepResult, config: int) -> str:
    """A configuration's swept values (a URL without its credentials, query or fragment)."""
    row = result.cells[result.cells["config"] == config].iloc[0]
    shown = [f"{f.removesuffix(ZIPPED)} = {_shown_value(row[f])}" for f in result.factors]
    return ", ".join(shown) or "the study as written"


def _shown_value(value: Any) -> Any:
    if isinstance(value, str) and "://" in value:
        return redact_address(value)
    return value


def key_result(result: SweepResult) -> str:
    """The sweep in one paragraph: its shape, how the cells ended, and the best configuration
    with its uncertainty."""
    cells = result.cells
    configs, seeds = cells["config"].nunique(), cells["seed"].nunique()
    ok = int((cells["status"] == "ok").sum())
    head = fill(
        "<p><b>Key result.</b> {cells} ({configs} × {seeds}); {ok} ended ok. ",
        cells=count(len(cells), "cell"),
        configs=count(configs, "configuration"),
        seeds=count(seeds, "seed"),
        ok=f"{ok} of {len(cells)}",
    )
    return head + best_sentence(result) + "</p>"


SHARE_WORDS = ("accuracy", "rate", "share", "success", "within", "pass@")
"""A ranking metric whose name has one of these, with values in [0, 1], reads as a percentage."""


def findings(result: SweepResult) -> Findings:
    """What the sweep found (the report's opening, the summary's key result): its cells and
    how many ended ok, the best configuration with its uncertainty and what it was (not)
    told apart from; the cells that did not end ok first among the caveats; the cost per
    cell from the cells themselves."""
    cells = result.cells
    ok = int((cells["status"] == "ok").sum())
    degraded = int((cells["status"] == "degraded").sum())
    head = fill(
        "{cells} ({configs} × {seeds}); {ok} of {n} ended ok{d}. ",
        cells=count(len(cells), "cell"),
        configs=count(cells["config"].nunique(), "configuration"),
        seeds=count(cells["seed"].nunique(), "seed"),
        ok=ok,
        n=len(cells),
        d=f", {degraded} degraded (kept)" if degraded else "",
    )
    caveats = [_failed_caveat(result), _degraded_caveat(result), _tied_caveat(result)]
    return Findings(
        head + _best_words(result),
        tuple(c for c in caveats if c),
        cost=_cost_words(result),
        detail=key_result(result),
    )


def _shown(result: SweepResult, value: float) -> str:
    values = result.estimates["estimate"].dropna() if len(result.estimates) else pd.Series()
    share = any(w in result.metric.lower() for w in SHARE_WORDS) and values.between(0, 1).all()
    return percent(value) if share else _num(value)


def _spread(result: SweepResult, value: float) -> str:
    """A half-width as the metric reads: percentage points for a share."""
    shown = _shown(result, value)
    return f"{value * 100:.0f} points" if shown.endswith("%") else shown


def _best_words(result: SweepResult) -> str:
    """The best configuration, its value with its uncertainty, and what it beat."""
    best = _best_row(result)
    if best is None:
        return "No cell ended ok: nothing to rank."
    config, system = int(best["config"]), str(best["system"])
    name = _entry(config, system, result)
    text = fill(
        "Best by {m}: <b>{name}</b> ({settings}): ",
        m=result.metric,
        name=name,
        settings=_settings(result, config),
    )
    if int(best["seeds"]) > 1:
        text += fill(
            "about {est}, the mean over {k} (seeds from {lo} to {hi}; each run's own interval "
            "±{hw})",
            est=_shown(result, best["estimate"]),
            k=count(int(best["seeds"]), "seed"),
            lo=_shown(result, best["low_seed"]),
            hi=_shown(result, best["high_seed"]),
            hw=_spread(result, best["half_width"]),
        )
    else:
        own = _own_interval(result, config, system)
        text += fill(
            "about {est}, likely between {lo} and {hi} (one seed)",
            est=_shown(result, best["estimate"]),
            lo=_shown(result, own[0]),
            hi=_shown(result, own[1]),
        )
    return text + _on_degraded(result, config) + _beaten(result) + "."


def _on_degraded(result: SweepResult, config: int) -> str:
    """Says so when the best configuration's numbers rest on degraded cells (kept)."""
    mine = result.cells[result.cells["config"] == config]
    kept = mine[mine["status"].isin(["ok", "degraded"])]
    degraded = int((kept["status"] == "degraded").sum())
    if not degraded:
        return ""
    return fill(" (on degraded cells: {d} of its {c} had more failed calls than "
                "max_error_rate)", d=degraded, c=count(len(kept), "cell"))  # fmt: skip


def _own_interval(result: SweepResult, config: int, system: str) -> tuple[float, float]:
    cell = set(result.cells.loc[result.cells["config"] == config, "cell"])
    est = result.estimates
    row = est[est["cell"].isin(cell) & (est["system"] == system) & (est["metric"] == result.metric)]
    return (float(row["low"].iloc[0]), float(row["high"].iloc[0])) if len(row) else (nan, nan)


def _beaten(result: SweepResult) -> str:
    best, alpha = result.best, result.params.sweep.alpha
    compared = best[best["n"] > 0] if len(best) else best
    if not len(compared):
        return ""
    tied = not_separated(compared, alpha)
    better = compared[~compared.index.isin(tied.index)]
    parts = (
        [fill("better than {o} beyond chance", o=_entries(better, result))] if len(better) else []
    )
    if len(tied):
        parts.append(fill("not told apart from {o}", o=_entries(tied, result)))
    return "; " + " and ".join(parts)


def _degraded_caveat(result: SweepResult) -> str:
    """Degraded cells (published with ``allow_degraded``) are kept in every statistic."""
    kept = result.cells[result.cells["status"] == "degraded"]
    if not len(kept):
        return ""
    each = "; ".join(fill("cell {c} (config {k}, seed {s}): {r}", c=r.cell, k=r.config,
                          s=r.seed, r=r.reason or "no reason given")
                     for r in kept.itertuples())  # fmt: skip
    its = "its numbers are kept, its failed calls" if len(kept) == 1 else (
        "their numbers are kept, their failed calls")  # fmt: skip
    return fill("{k} of {n} ended degraded (more failed calls than max_error_rate, allowed "
                "by allow_degraded), and {its} counted as the study counts them: ",
                k=len(kept), n=count(len(result.cells), "cell"), its=its) + each + "."  # fmt: skip


def _failed_caveat(result: SweepResult) -> str:
    bad = result.cells[~result.cells["status"].isin(["ok", "degraded"])]
    if not len(bad):
        return ""
    each = "; ".join(
        fill(
            "cell {c} (config {k}, seed {s}) {st}: {r}",
            c=r.cell,
            k=r.config,
            s=r.seed,
            st=r.status,
            r=r.reason or "no reason given",
        )
        for r in bad.itertuples()
    )
    its = "its numbers are" if len(bad) == 1 else "their numbers are"
    text = (
        fill(
            "{k} of {n} did not end ok, so {its} left out: ",
            k=len(bad),
            n=count(len(result.cells), "cell"),
            its=its,
        )
        + each
        + "."
    )
    return text + _not_compared(result).replace(" Not compared:", " Not compared with the best:")


def _tied_caveat(result: SweepResult) -> str:
    best = result.best
    compared = best[best["n"] > 0] if len(best) else best
    if not len(compared) or not len(not_separated(compared, result.params.sweep.alpha)):
        return ""
    return (
        "The best is picked on the same data it is measured on, so its lead over the "
        "configurations it is not told apart from is if anything overstated."
    )


def _cost_words(result: SweepResult) -> str:
    """``$0.03 to $0.69 per cell (mean $0.36), $0.72 in all over 12 cells``, from the cells."""
    costs = result.cells["cost_usd"].dropna().astype(float) if len(result.cells) else pd.Series()
    if not len(costs):
        return ""
    if not costs.sum():
        return fill(
            "No recorded cost in any of the {n} (simulated, unpriced or cached calls).",
            n=count(len(costs), "cell"),
        )
    return fill(
        "${lo:.2f} to ${hi:.2f} per cell (mean ${mean:.2f}), ${total:.2f} in all over {n}.",
        lo=costs.min(),
        hi=costs.max(),
        mean=costs.mean(),
        total=costs.sum(),
        n=count(len(costs), "cell"),
    )


def best_sentence(result: SweepResult) -> str:
    """ "Best by accuracy: config 5 (...); not significantly better than configs 2 and 7"."""
    best = _best_row(result)
    if best is None:
        return "No cell ended ok: nothing to rank."
    name = _entry(int(best["config"]), str(best["system"]), result)
    spread = ""
    if best["seeds"] > 1:
        spread = fill(", seeds {lo}–{hi}", lo=_num(best["low_seed"]), hi=_num(best["high_seed"]))
    text = fill(
        "Best by {metric}: <b>{name}</b> ({settings}; {est} mean over {seeds}{spread})",
        metric=result.metric,
        name=name,
        settings=_settings(result, int(best["config"])),
        est=_num(best["estimate"]),
        seeds=count(int(best["seeds"]), "seed"),
        spread=spread,
    )
    text += _versus_others(result) + _not_compared(result)
    if items := _item_spread(result):
        text += fill(" The cells measured different items ({low} to {high} per cell): this "
                     "ranking compares different tasks; the paired comparisons, on the items "
                     "two cells share, compare like with like.", low=items[0],
                     high=items[1])  # fmt: skip
    return text


def _joined(names: list[str]) -> str:
    if len(names) <= 2:
        return " and ".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def _entries(rows: pd.DataFrame, result: SweepResult) -> str:
    return _joined([_entry(int(r.config), str(r.system), result) for r in rows.itertuples()])


def _versus_others(result: SweepResult) -> str:
    """What the best was tested against: better than, or not told apart from (only entries
    with paired items; :func:`_not_compared` names the rest)."""
    best, alpha = result.best, result.params.sweep.alpha
    compared = best[best["n"] > 0] if len(best) else best
    if not len(compared):
        return "."
    tied = not_separated(compared, alpha)
    better = compared[~compared.index.isin(tied.index)]
    every = len(compared) == len(best) and not _missing(result)
    text = ""
    if len(better):
        several = result.configs["system"].nunique() > 1
        others = "every other configuration" + (" and system" if several else "")
        text = fill(
            "; significantly better than {others} (Holm-adjusted p below {alpha:g}, items paired "
            "within each seed)",
            others=others if every and not len(tied) else _entries(better, result),
            alpha=alpha,
        )
    if not len(tied):
        return text + "."
    return text + fill(
        "; <b>not significantly better than {others}</b> (Holm-adjusted p at least {alpha:g}, "
        "items paired within each seed): with these items and seeds they are not told apart. "
        "The best is picked on the same data, so its lead is if anything overstated.",
        others=_entries(tied, result),
        alpha=alpha,
    )


def _missing(result: SweepResult) -> list[tuple[int, str]]:
    """Configurations with no result on the ranking metric, each with why."""
    have = set(result.configs["config"]) if len(result.configs) else set()
    out = []
    for config, cells in result.cells.groupby("config", sort=True):
        if int(config) in have:
            continue
        ended = cells["status"].isin(["ok", "degraded"]).any()
        why = f"no cell has {result.metric}" if ended else "no cell ended ok"
        out.append((int(config), why))
    return out


def _not_compared(result: SweepResult) -> str:
    """ " Not compared: config 1 (no cell ended ok)." — every entry the best was not tested
    against, and why (empty when it was tested against all)."""
    best = result.best
    parts = [f"config {config} ({why})" for config, why in _missing(result)]
    if len(best):
        unpaired = best[best["n"] == 0]
        parts += [f"{_entry(int(r.config), str(r.system), result)} (no seed at which both "
                  "ended ok)" for r in unpaired.itertuples()]  # fmt: skip
    if not parts:
        return ""
    return fill(" Not compared: {parts}.", parts="; ".join(parts))


def sweep_table(result: SweepResult) -> tuple[pd.DataFrame, str]:
    """Each configuration's settings (the legend of every later table)."""
    rows = result.cells.drop_duplicates("config")
    keys = list(result.cells["settings"].iloc[0]) if len(rows) else []
    frame = rows[["config", *keys, "baseline"]].reset_index(drop=True)
    spec = result.params.sweep
    seeds = spec.seeds if spec.seeds is not None else [result.params.seed]
    caption = (
        f"Configurations ({' × '.join(result.factors) or 'none swept'}); each runs at "
        f"seed {', '.join(map(str, seeds))} (set at {', '.join(spec.seed_keys)})"
    )
    return frame, caption


def resumed_sentence(result: SweepResult) -> str:
    """The cells that went on from an earlier attempt, and the requests that attempt had sent
    and not recorded (asked again: paid twice). Empty when none."""
    cells = result.cells
    resumed = cells[cells["resumed"]] if "resumed" in cells else cells.iloc[:0]
    if not len(resumed):
        return ""
    many = len(resumed) > 1
    ids = _joined([f"cell {c}" if not many else str(c) for c in resumed["cell"]])
    text = fill(
        "{n} went on from an earlier attempt that stopped ({cells}); ",
        n=count(len(resumed), "cell"),
        cells=("cells " if many else "") + ids,
    )
    asked = int(resumed["reasked"].sum())
    if not asked:
        return text + "none had a request in flight when it stopped."
    return text + fill(
        "{asked} {they} had sent and not recorded were asked again: paid twice, {usd} USD "
        "(in the costs below).",
        asked=count(asked, "request"),
        they="they" if many else "it",
        usd=f"{float(resumed['reasked_cost_usd'].sum()):.4f}",
    )


def failed_sentence(result: SweepResult) -> str:
    """Cells that did not end ok, each with its reason (never dropped: shown here), and the
    cells resumed from an earlier attempt (:func:`resumed_sentence`)."""
    resumed = resumed_sentence(result)
    return _failed_cells(result) + (f"<p>{resumed}</p>" if resumed else "")


def _failed_cells(result: SweepResult) -> str:
    bad = result.cells[~result.cells["status"].isin(["ok", "degraded"])]
    kept = result.cells[result.cells["status"] == "degraded"]
    if not len(bad) and not len(kept):
        return fill(
            "<p>Every cell ended ok ({reused} read from an earlier run: finished with "
            "the same code, params and data).</p>",
            reused=int(result.cells["reused"].sum()),
        )
    return _cells_list(bad, "did not end ok", "left out of every statistic below; rerun the "
                       "sweep to retry them") + _cells_list(kept, "ended degraded", "kept in "
                       "every statistic below, with more failed calls than max_error_rate, "
                       "allowed by allow_degraded")  # fmt: skip


def _cells_list(bad: pd.DataFrame, ended: str, numbers: str) -> str:
    """The cells of ``bad`` (each with its reason) under "{n} {ended}" (numbers "{numbers}")."""
    if not len(bad):
        return ""
    items = "".join(
        fill(
            "<li>cell {cell} (config {config}, seed {seed}) <b>{status}</b>: {reason}</li>",
            cell=r.cell,
            config=r.config,
            seed=r.seed,
            status=r.status,
            reason=r.reason or "",
        )
        for r in bad.itertuples()
    )
    its = "its numbers are" if len(bad) == 1 else "their numbers are"
    return (
        fill(
            "<p><b>{n} {ended}</b> ({its} {numbers}):</p><ul>",
            n=count(len(bad), "cell"),
            ended=ended,
            its=its,
            numbers=numbers,
        )
        + items
        + "</ul>"
    )


def cells_table(result: SweepResult) -> tuple[pd.DataFrame, str]:
    """Every cell: settings, status, each system's ranking metric with its interval, cost."""
    est = result.estimates[result.estimates["metric"] == result.metric]
    shown = {
        (int(r.cell), r.system): f"{_num(r.estimate)} [{_num(r.low)}, {_num(r.high)}]"
        for r in est.itertuples()
    }
    systems = sorted(est["system"].unique()) if len(est) else []
    frame = result.cells[["cell", "config", "seed", "status"]].copy()
    for system in systems:
        frame[f"{result.metric} {system}"] = [shown.get((c, system), "—") for c in frame["cell"]]
    frame["cost (USD)"] = result.cells["cost_usd"]
    frame["tokens"] = result.cells["prompt_tokens"] + result.cells["completion_tokens"]
    frame["s per call"] = result.cells["latency_s"]
    frame["cell s"] = result.cells["wall_s"]
    level = result.params.confidence_level
    caption = (
        f"Every cell: {result.metric} over all items with its {level:.0%} interval "
        "(Wilson for rates, bootstrap for scores), cost of its paid calls, tokens, mean "
        "seconds per call (agents: per task), seconds the cell took (— when read from "
        "an earlier run)"
    )
    return frame, caption


def baseline_sentence(result: SweepResult) -> str:
    """How many tests against the baseline are significant over the whole sweep."""
    tests = result.comparisons
    if not len(tests):
        return "<p>No cell was compared with a baseline cell (one configuration, or none ok).</p>"
    alpha = result.params.sweep.alpha
    holm_n = int((tests["p_holm"] < alpha).sum())
    bh_n = int((tests["p_bh"] < alpha).sum())
    return fill(
        "<p>{tests} (every system, metric and slice of every cell, each against the baseline "
        "cell of its seed): {holm} with Holm-adjusted p below {alpha:g} (family-wise error over "
        "all of them), {bh} with Benjamini–Hochberg (false discovery rate). "
        "<code>evalbench compare BASELINE_CELL CELL</code> on two cell folders prints the same "
        "tests, differences, intervals and p-values; its Holm and BH adjust within that one "
        "comparison (the columns “Holm (cell)” and in records/comparisons.jsonl).</p>",
        tests=count(len(tests), "test"),
        holm=holm_n,
        bh=bh_n,
        alpha=alpha,
    )


def baseline_table(result: SweepResult) -> tuple[pd.DataFrame, str]:
    """The overall tests (slice ``all``) of every cell against its baseline cell."""
    tests = result.comparisons
    if not len(tests):
        return pd.DataFrame(), "No comparisons"
    rows = tests[tests["slice"] == "all"]
    frame = pd.DataFrame(
        {
            "cell": rows["cell"],
            "vs cell": rows["baseline_cell"],
            "system": rows["system_b"],
            "metric": rows["metric"],
            "n": rows["n"],
            "baseline": rows["mean_a"],
            "cell mean": rows["mean_b"],
            "change [interval]": _changes(rows),
            "test": [t.split(" (")[0] for t in rows["test"]],
            "p": [_p(p) for p in rows["p"]],
            "Holm": [_p(p) for p in rows["p_holm"]],
            "BH": [_p(p) for p in rows["p_bh"]],
            "Holm (cell)": [_p(p) for p in rows["p_holm_pair"]],
        }
    )
    level = result.params.confidence_level
    caption = (
        f"Each cell against the baseline cell of its seed, over all items, paired by "
        f"item ({level:.0%} paired bootstrap interval of the change; Holm and BH over "
        "the whole sweep; per slice in records/comparisons.jsonl)"
    )
    return frame.reset_index(drop=True), caption


def seeds_table(result: SweepResult) -> tuple[pd.DataFrame, str]:
    """Between-seed spread of each configuration beside its within-run interval."""
    configs = result.configs
    if not len(configs):
        return pd.DataFrame(), "No configuration ended ok"
    frame = pd.DataFrame(
        {
            "config": configs["config"],
            "system": configs["system"],
            "seeds": configs["seeds"],
            f"{result.metric} (mean over seeds)": configs["estimate"],
            "lowest seed": configs["low_seed"],
            "highest seed": configs["high_seed"],
            "between-seed SD": configs["seed_sd"],
            "within-run half-width": configs["half_width"],
        }
    )
    level = result.params.confidence_level
    caption = (
        f"Seed variance: the spread of one configuration's estimates over seeds (SD) "
        f"beside the half-width of one run's {level:.0%} interval (item sampling); "
        "when the SD is a sizeable part of the half-width, one seed's number is not "
        "the configuration's"
    )
    return frame, caption


def separation_sentence(result: SweepResult) -> str:
    """Seeds needed to separate the top two configurations."""
    sep = result.separation
    if sep.get("first") is None:
        return "<p>Fewer than two configurations ended ok: nothing to separate.</p>"
    first, second = sep["first"], sep["second"]
    names = fill(
        "{a} ({ea}) and {b} ({eb})",
        a=_entry(first["config"], first["system"], result),
        ea=_num(first["estimate"]),
        b=_entry(second["config"], second["system"], result),
        eb=_num(second["estimate"]),
    )
    if sep.get("seeds") is None:
        return "<p>The top two, " + names + fill(", share {why}.</p>", why=sep["why"])
    spec = result.params.sweep
    if not math.isfinite(sep["seeds"]):
        return (
            "<p>The top two, "
            + names
            + ", do not differ on average over their shared seeds: no number of seeds "
            "separates them.</p>"
        )
    return (
        "<p>The top two, "
        + names
        + fill(
            ", differ by {d} on average per seed (SD {sd} over {k} shared seeds): about "
            "<b>{n} seeds</b> each would tell them apart in a paired test at {alpha:g} with "
            "{power:.0%} power (normal approximation; the SD itself is uncertain with few seeds, "
            "and this is about these items: another sample of items adds its own interval).</p>",
            d=f"{sep['difference']:+.3f}",
            sd=_num(sep["sd"]),
            k=sep["shared_seeds"],
            n=sep["seeds"],
            alpha=spec.alpha,
            power=spec.power,
        )
    )


def cost_table(result: SweepResult) -> tuple[pd.DataFrame, str]:
    """Quality against cost, tokens and latency per configuration, fronts marked."""
    configs = result.configs
    if not len(configs):
        return pd.DataFrame(), "No configuration ended ok"
    mark = {True: "front", False: ""}
    frame = pd.DataFrame(
        {
            "config": configs["config"],
            "system": configs["system"],
            result.metric: configs["estimate"],
            "cost (USD)": configs["cost_usd"],
            "Pareto (cost)": configs["front_cost"].map(mark),
            "tokens": configs["tokens"],
            "Pareto (tokens)": configs["front_tokens"].map(mark),
            "s per call": configs["latency_s"],
            "Pareto (latency)": configs["front_latency"].map(mark),
        }
    )
    caption = (
        f"Mean over seeds per cell; “front”: no other configuration is at least as good "
        f"on {result.metric} and at most as costly, and better in one of the two"
    )
    return frame, caption


def _changes(rows: pd.DataFrame) -> list[str]:
    """Each row's ``difference [low, high]`` signed to 3 decimals; "—" where not computed."""
    return [
        f"{d:+.3f} [{lo:+.3f}, {hi:+.3f}]" if d is not None and math.isfinite(d) else "—"
        for d, lo, hi in zip(rows["difference"], rows["low"], rows["high"], strict=True)
    ]


def best_table(result: SweepResult) -> tuple[pd.DataFrame, str]:
    """The best configuration against every other, pooled over seeds."""
    best = result.best
    if not len(best):
        return pd.DataFrame(), "Nothing to compare the best with"
    frame = pd.DataFrame(
        {
            "config": best["config"],
            "system": best["system"],
            "items × seeds": best["n"],
            "change vs best [interval]": _changes(best),
            "test": [t.split(" (")[0] for t in best["test"]],
            "p": [_p(p) for p in best["p"]],
            "Holm": [_p(p) for p in best["p_holm"]],
        }
    )
    level = result.params.confidence_level
    top = _entry(int(best["best_config"].iloc[0]), str(best["best_system"].iloc[0]), result)
    caption = (
        f"Every configuration against the best ({top}) "
        f"on {result.metric}: items paired within each seed both ran, pooled over seeds; "
        f"{level:.0%} paired bootstrap interval; Holm over these comparisons"
    )
    return frame, caption


def effects_table(result: SweepResult) -> tuple[pd.DataFrame, str]:
    """Main effects: mean of the ranking metric per swept key and value."""
    effects = result.effects
    if not len(effects):
        return pd.DataFrame(), "No swept key (or no cell ended ok)"
    frame = display.fold_intervals(
        effects.rename(columns={"low": "mean_low", "high": "mean_high"}), ["mean"]
    )
    level = result.params.confidence_level
    caption = (
        f"Main effects on {result.metric}: the mean over every cell with that value "
        f"(all other settings and seeds), {level:.0%} bootstrap interval over those "
        "cells, and the effect: that mean minus the mean over all cells"
    )
    return frame, caption + _unbalanced(result)


def _unbalanced(result: SweepResult) -> str:
    """Configurations with no kept cell: each swept value's mean is then over unequal sets
    of the other keys' values (a failed corner of a grid shows as an "effect")."""
    cells = result.cells
    measured = result.estimates["cell"] if len(result.estimates) else []
    kept = set(cells.loc[cells["cell"].isin(measured), "config"])
    missing = sorted(set(result.cells["config"]) - kept)
    if not missing or len(result.factors) < 2:
        return ""
    named = "; ".join(fill("config {k} ({s})", k=k, s=_settings(result, k)) for k in missing)
    return fill(". Unbalanced: {named} {has} no cell that ended ok, so each value is averaged "
                "over unequal sets of the other keys' values: an effect here can come from the "
                "missing cells, not the key", named=named,
                has="has" if len(missing) == 1 else "have")  # fmt: skip


def interactions_table(result: SweepResult) -> tuple[pd.DataFrame, str]:
    """Two-way interactions of the swept keys."""
    inter = result.interactions
    if not len(inter):
        return pd.DataFrame(), "Interactions need two swept keys"
    caption = (
        f"Interactions on {result.metric}: the mean of the cells with both values, and "
        "the residual mean − (value a's mean) − (value b's mean) + (overall mean): 0 "
        "when the two keys' effects simply add up"
    )
    return inter.reset_index(drop=True), caption


def notes_sentence(result: SweepResult) -> str:
    """What could not be computed (empty when nothing)."""
    if not result.notes:
        return ""
    items = "".join(fill("<li>{note}</li>", note=n) for n in result.notes)
    return "<p>Notes:</p><ul>" + items + "</ul>"
