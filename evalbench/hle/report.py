"""What the HLE notebook says: sentences with numbers, captions, titles, the index headlines.

Every function takes the study's :class:`~.records.HleResult` (or nothing) and returns
text: sentences as escaped HTML (:func:`evalbench.display.fill`), captions and titles as
plain text. Nothing here computes a number :mod:`.metrics` does not; the figures are
:mod:`~.figures`'.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from evalbench import display
from evalbench.calibration import BIN_SIZE
from evalbench.findings import Findings, count, percent, size_caveat
from evalbench.measured import by_system, headline
from evalbench.records import plain_rows
from evalbench.tiers import expected_half_width, subset_label

from . import metrics
from .data import ANSWER_TYPES, DEMO_NOTE, OFFICIAL_COMMIT, OFFICIAL_REPO, category_counts
from .records import HleResult

ACCURACY_COLUMNS = [
    "system",
    "n",
    "scored",
    "unscored",
    "no_response",
    "correct",
    "accuracy",
    "ci_low",
    "ci_high",
    "official_pct",
    "wald_pct",
    "accuracy_scored",
    "scored_low",
    "scored_high",
]
CALIBRATION_COLUMNS = [
    "system",
    "n_calibration_official",
    "calib_official_pct",
    "calib_official_note",
    "n_calibration",
    "calib_corrected_pct",
    "mean_confidence",
    "overconfidence",
    "confidence_missing",
    "confidence_out_of_range",
]
CATEGORY_COLUMNS = [
    "system",
    "category",
    "n",
    "correct",
    "accuracy",
    "ci_low",
    "ci_high",
    "unscored",
    "no_response",
    "n_calibration",
    "calib_corrected_pct",
    "calib_official_pct",
    "mean_confidence",
    "overconfidence",
]


def _pct(value: float, digits: int = 1) -> str:
    return (
        "—"
        if value is None or (isinstance(value, float) and math.isnan(value))
        else (f"{value:.{digits}f}")
    )


def system_kind(result: HleResult, name: str) -> str:
    """``simulated``, ``imported predictions`` or ``real model``: each system on its own."""
    if name in result.imported:
        return "imported predictions"
    return display.system_kind(name, result.simulated)


def headlines(result: HleResult) -> dict[str, Any]:
    """The index headlines: the first system's accuracy (official denominator) and corrected
    calibration error, and the second system's accuracy."""
    rows = result.summary.systems.to_dict("records")
    measured = by_system(metrics.measured_systems(result.records))
    out: dict[str, Any] = {}
    if rows:
        first = rows[0]
        m = measured.get(str(first["system"]))
        out[f"accuracy {first['system']}"] = headline(float(first["accuracy"]), m)
        corrected = first["calib_corrected_pct"]
        label = f"calibration error (corrected) {first['system']}"
        out[label] = headline("undefined" if math.isnan(corrected) else f"{corrected:.1f}%", m)
    if len(rows) > 1:
        second = str(rows[1]["system"])
        out[f"accuracy {second}"] = headline(float(rows[1]["accuracy"]), measured.get(second))
    return out


def notes(result: HleResult) -> list[str]:
    """Short remarks for the index: exclusions, undefined official calibration, missing answers."""
    out = []
    if result.excluded_images:
        out.append(f"{result.excluded_images} image questions excluded (exclude_images)")
    for row in result.summary.systems.to_dict("records"):
        if math.isnan(row["calib_official_pct"]):
            out.append(
                f"{row['system']}: official calibration error undefined (< "
                f"{result.params.calibration_bin_size} judged items)"
            )
    return out


def key_result(result: HleResult) -> str:
    """Each system's accuracy (official denominator) with both intervals and both
    calibration errors, labelled simulated / imported / real."""
    level = result.params.confidence_level
    head = display.fill(
        "<p><b>Key result.</b> Accuracy over every question asked (the official denominator: "
        "an unscored judgment or a missing answer counts as wrong), judged with the official "
        "HLE judge prompt; the official Wald 95% half-width and a {level:.0%} Wilson interval; "
        "RMS calibration error of the stated confidences, official and corrected, in percent: ",
        level=level,
    )
    sentences = [_system_sentence(row, result) for row in result.summary.systems.to_dict("records")]
    return head + "; ".join(sentences) + ".</p>"


def _system_sentence(row: dict[str, Any], result: HleResult) -> str:
    text = display.fill(
        "<b>{name}</b> ({kind}) {acc:.1%} ({k} of {n}; official {off}% ± {wald}%, Wilson "
        "[{lo:.1%}, {hi:.1%}]), calibration error official {cal_off}, corrected {cal_cor}",
        name=row["system"],
        kind=system_kind(result, row["system"]),
        acc=row["accuracy"],
        k=row["correct"],
        n=row["n"],
        off=_pct(row["official_pct"], 2),
        wald=_pct(row["wald_pct"], 2),
        lo=row["ci_low"],
        hi=row["ci_high"],
        cal_off=official_calibration_text(row, result.params.calibration_bin_size),
        cal_cor=_pct(row["calib_corrected_pct"]),
    )
    lost = row["unscored"] + row["no_response"]
    if lost:
        text += display.fill(
            " — {u} unscored and {r} without an answer, counted wrong; ",
            u=row["unscored"],
            r=row["no_response"],
        )
        if not row["scored"]:  # no accuracy over zero scored items: no "nan%"
            return text + "none scored"
        text += display.fill("{acc:.1%} of the {s} scored", acc=row["accuracy_scored"],
                             s=row["scored"])  # fmt: skip
    return text


CALIBRATION_RISK = 20.0
"""An RMS calibration error (corrected, in points) above this is a risk worth naming: the
system's stated confidence and its accuracy are far apart."""


def findings(result: HleResult) -> Findings:
    """What the study found (the report's opening, the summary's key result): each system's
    accuracy over every question in words with its interval; the answers counted wrong
    without a verdict, the demo suite and the sample's size as caveats; confidences far
    from accuracy as a risk."""
    rows = result.summary.systems.to_dict("records")
    key = "Share of questions answered right (the official HLE judge; every question asked "
    key += (
        "counts): "
        + "; ".join(
            display.fill(
                "{s} ({k}) about {a} of {n}, likely between {lo} and {hi}",
                s=r["system"],
                k=system_kind(result, r["system"]),
                a=percent(r["accuracy"]),
                n=count(int(r["n"]), "question"),
                lo=percent(r["ci_low"]),
                hi=percent(r["ci_high"]),
            )
            for r in rows
            if r["scored"]
        )
        + "."
    )
    n = max((int(r["n"]) for r in rows), default=0)
    caveats = [_lost_caveat(rows), _demo_caveat(result)]
    caveats.append(size_caveat(n, "question", result.params.confidence_level))
    risks = [_calibration_risk(result, rows)]
    return Findings(
        key, tuple(c for c in caveats if c), tuple(r for r in risks if r), detail=key_result(result)
    )


def _lost_caveat(rows: list[dict[str, Any]]) -> str:
    lost = [r for r in rows if r["unscored"] + r["no_response"]]
    if not lost:
        return ""
    total = sum(int(r["unscored"] + r["no_response"]) for r in lost)
    each = "; ".join(
        display.fill(
            "{s} {u} unscored and {r} without an answer",
            s=r["system"],
            u=int(r["unscored"]),
            r=int(r["no_response"]),
        )
        for r in lost
    )
    return (
        display.fill(
            "{n} count as wrong without being judged right or wrong (the official denominator): ",
            n=count(total, "answer"),
        )
        + each
        + "."
    )


def _demo_caveat(result: HleResult) -> str:
    if result.params.dataset != "demo":
        return ""
    return (
        "The questions are evalbench's own HLE-format demo suite, not Humanity's Last Exam: "
        "the numbers show how the study works, not how a model does on HLE."
    )


def _calibration_risk(result: HleResult, rows: list[dict[str, Any]]) -> str:
    far = [r for r in rows if r["calib_corrected_pct"] > CALIBRATION_RISK]
    if not far:
        return ""
    each = ", ".join(
        display.fill("{s} {c:.0f} points", s=r["system"], c=r["calib_corrected_pct"]) for r in far
    )
    return (
        "<b>Stated confidence far from accuracy</b>: RMS calibration error "
        + each
        + " (0 = a system right on 80% of the answers it is 80% sure of); its confidence "
        "is no guide to when it is right."
    )


def official_calibration_text(row: dict[str, Any], beta: int = BIN_SIZE) -> str:
    """The official calibration error as the official script prints it, or why it is not
    defined (plain text; ``beta``: the study's bin size)."""
    if math.isnan(row["calib_official_pct"]):
        return f"undefined ({row['n_calibration_official']} judged items < {beta})"
    value = f"{row['calib_official_pct']:g}"
    return value + (" (one bin, skipped)" if row["calib_official_note"] else "")


def demo_notice(result: HleResult) -> str:
    """A banner when the questions are the offline demo suite, not HLE ("" otherwise)."""
    if result.params.dataset != "demo":
        return ""
    imported = (
        " The imported predictions file is also generated for the demo." if result.imported else ""
    )
    return display.banner(
        f"{DEMO_NOTE} — the questions are evalbench's own HLE-format demo suite, not Humanity's "
        "Last Exam. Set dataset: hf in params (gated cais/hle, needs HF_TOKEN) or a local copy "
        "for real HLE." + imported
    )


def data_sentence(result: HleResult) -> str:
    """How many questions, of which types, in how many categories; the image switch; the tier."""
    frame = pd.Series([it.answer_type for it in result.items]).value_counts()
    with_image = sum(it.has_image for it in result.items)
    params = result.params
    source = params.dataset + (f" @ {params.revision}" if params.dataset == "hf" else "")
    text = display.fill(
        "<p>{n} ({types}) in {c} (dataset: {ds}). ",
        n=display.count(len(result.items), "question"),
        c=display.count(len({it.category for it in result.items}), "category"),
        ds=source,
        types=", ".join(f"{int(frame.get(t, 0))} {t}" for t in ANSWER_TYPES),
    )
    if params.exclude_images:
        text += display.fill(
            "Questions with an image excluded (exclude_images: true): {x}. ",
            x=result.excluded_images,
        )
    else:
        text += display.fill(
            "Questions with an image: {w}, sent as image_url content after the text (as the "
            "official code does); none excluded. ",
            w=with_image,
        )
    if params.sample is not None or params.tier != "full":
        how = subset_label(params.tier, params.sample)
        text += display.fill("Subsample ({h}), stratified by category. ", h=how)
    return text + display.fill(
        "At this size an accuracy near 50% has a {lvl:.0%} half-width of about ±{hw:.1%}.</p>",
        lvl=params.confidence_level,
        hw=expected_half_width(len(result.items), params.confidence_level),
    )


def items_table(result: HleResult) -> pd.DataFrame:
    """Questions per category and answer type (:func:`~.data.category_counts`)."""
    return category_counts(result.items)


def items_caption(result: HleResult) -> str:
    """Caption of the questions-per-category table."""
    return (
        "Questions per category and answer type (with_image = questions that have an "
        f"image; dataset: {result.params.dataset})"
    )


def accuracy_caption(result: HleResult) -> str:
    """Caption of the accuracy table (:data:`ACCURACY_COLUMNS`)."""
    level = result.params.confidence_level
    return (
        "n = questions asked; scored = judgments with a yes/no verdict, unscored = judge output "
        "unparseable or its call failed, no_response = no answer to judge (failed call or missing "
        "prediction); correct = 'yes' verdicts; accuracy = correct / n (unscored and no_response "
        f"count as wrong, as in the official script) with its {level:.0%} Wilson interval "
        "(ci_low–ci_high); official_pct = round(100·correct/n, 2) and wald_pct = the official "
        "Wald 95% half-width round(1.96·√(a(100−a)/n), 2) on that rounded accuracy, both in "
        "percent; accuracy_scored = correct / scored with its Wilson interval (scored_low–high)"
    )


def calibration_caption(result: HleResult) -> str:
    """Caption of the calibration table (:data:`CALIBRATION_COLUMNS`)."""
    beta = result.params.calibration_bin_size
    return (
        "Calibration error (RMS over bins of the stated confidence), in percent. Official "
        f"(calib_official_pct over n_calibration_official judged items): sorted by confidence "
        f"(unstable sort), bins of {beta} with the last bin stretched to the end, every bin "
        f"but the last counted, weights |bin|/n, reported as 100·round(x, 2); undefined below "
        f"{beta} items (the official script raises IndexError), exactly 0 for {beta}–"
        f"{2 * beta - 1}. Corrected (calib_corrected_pct over n_calibration items with a valid "
        "0–100 confidence): the same bins, all counted, stable sort, defined for any n, not "
        "rounded. mean_confidence and overconfidence (= mean confidence − accuracy over those "
        "items; > 0: overconfident) are fractions; confidence_missing / out_of_range = scored "
        "items left out of the corrected error (out-of-range values stay in the official one, "
        "which uses the judge's number unclipped)"
    )


def calibration_sentence(result: HleResult) -> str:
    """What the official loop counted, per system, in one paragraph."""
    beta = result.params.calibration_bin_size
    parts = []
    for row in result.summary.systems.to_dict("records"):
        n = row["n_calibration_official"]
        if n < beta:
            parts.append(display.fill(
                "{s}: {n}, fewer than {b}, so the official function fails (undefined)",
                s=row["system"], n=display.count(n, "judged item"), b=beta,
            ))  # fmt: skip
            continue
        counted = (n // beta - 1) * beta
        parts.append(display.fill(
            "{s}: {n} make {b}; the official loop skips the last and counts {c} items ({w:.0%} "
            "of the weight)", s=row["system"], n=display.count(n, "judged item"),
            b=display.count(n // beta, "bin"), c=counted, w=counted / n,
        ))  # fmt: skip
    return "<p>" + "; ".join(parts) + ".</p>"


def bins_caption(result: HleResult) -> str:
    """Caption of the equal-mass bin table."""
    return (
        f"The calibration bins of the corrected error, per system (valid confidences sorted "
        f"stably, bins of {result.params.calibration_bin_size}, last stretched): first/last = "
        "sorted positions, mean_confidence and accuracy of the bin, gap = their difference "
        "(> 0 overconfident), weight = n/N, official = whether the official loop counts this "
        "bin"
    )


def reliability_caption(result: HleResult) -> str:
    """Caption of the reliability table."""
    return (
        f"Reliability: {result.params.reliability_bins} fixed-width confidence bins (valid "
        "confidences of scored items; lower/upper = the bin's bounds); mean_confidence and "
        "accuracy as fractions with the accuracy's Wilson interval; gap = mean_confidence − "
        "accuracy (> 0: overconfident in that bin); empty bins left out. A response that states "
        "no confidence gets 100 from the judge (the official judge prompt says so), so it lands "
        "in the top bin whatever the system believed"
    )


def overconfidence_sentence(result: HleResult) -> str:
    """Each system's overall over/under-confidence (mean confidence − accuracy)."""
    parts = []
    for row in result.summary.systems.to_dict("records"):
        gap = row["overconfidence"]
        if math.isnan(gap):
            parts.append(display.fill("{s}: no valid confidence", s=row["system"]))
            continue
        word = "overconfident" if gap > 0 else "underconfident"
        parts.append(
            display.fill(
                "{s} states {c:.1%} on average and is right {a:.1%} of the time over the same {n} "
                "items: {w} by {g:.1%}",
                s=row["system"],
                c=row["mean_confidence"],
                a=row["mean_confidence"] - gap,
                n=row["n_calibration"],
                w=word,
                g=abs(gap),
            )
        )
    return "<p>" + "; ".join(parts) + ".</p>"


def category_caption(result: HleResult) -> str:
    """Caption of the per-category table (:data:`CATEGORY_COLUMNS`)."""
    return (
        f"Per category: accuracy = correct / n with its {result.params.confidence_level:.0%} "
        "Wilson interval (unscored and no_response counted wrong); n_calibration = scored items "
        "with a valid confidence; calibration errors in percent as in the calibration table "
        "(the official one is undefined for a category under 100 judged items, which the "
        "official script never breaks down); "
        "mean_confidence and overconfidence as fractions"
    )


def truth_caption() -> str:
    """Caption of the simulated-truth table."""
    return (
        "Simulated systems only: estimates beside the simulation's truth (fractions). "
        "true_accuracy = share of responses whose stated answer is right; expected_accuracy = "
        "mean latent P(right); measured_accuracy = the judge's (official denominator); "
        "judge_agreement = verdict = truth among scored; true_calibration = √mean((stated − p)²) "
        "(infinitely fine bins); corrected / official = the estimates above; "
        "true_overconfidence = mean(stated − p). true_accuracy − expected_accuracy is chance "
        "(which answers happened to come out right); it moves measured_overconfidence away from "
        "true_overconfidence by about as much, even for a calibrated system"
    )


def truth_note(result: HleResult) -> str:
    """Why the simulated-truth table is empty ("" when a system is simulated)."""
    if not result.summary.truth.empty:
        return ""
    return "<p>No simulated system in this run: there is no truth to set the estimates beside.</p>"


def judge_caption() -> str:
    """Caption of the judge-output table."""
    return (
        "Judge outputs per system: judged = answers sent to the judge; scored / unscored; "
        "json / text = how the scored ones were parsed; confidence_ok = a valid 0–100 number, "
        "fraction = a number in (0, 1) read as a share (0.85 → 85), out_of_range = outside "
        "0–100 (kept unclipped by the official number only), missing / unparseable = no "
        "usable number; judge_errors = failed judge calls (unscored)"
    )


def unscored_examples(result: HleResult, limit: int = 6) -> list[dict[str, Any]]:
    """Up to ``limit`` unscored judgments, each system's in turn (its first, then every
    system's second …, record order within a system), missing values as ``None``."""
    rows = result.records[result.records["status"] == "unscored"]
    turn = rows.groupby("system", sort=False).cumcount()
    return plain_rows(rows.iloc[turn.argsort(kind="stable")[:limit]])


def unscored_fields() -> list[str]:
    """Fields shown for each unscored example."""
    return ["system", "id", "unscored_reason", "judge_error", "judge_raw"]


def official_files_sentence(result: HleResult) -> str:
    """Where the official-format files were written."""
    names = ", ".join(p.name for p in result.official_files)
    return display.fill(
        "<p>Wrote, in the official tooling's format (<code>{repo}</code> @ {commit}), into "
        "<code>official/</code>: {names}. A judged file holds an entry only where the official "
        "script would have stored a judge_response (a yes/no verdict with a confidence number); "
        "its <code>dump_metrics</code> gives the official numbers above when n is the number of "
        "questions asked.</p>",
        repo=OFFICIAL_REPO,
        commit=OFFICIAL_COMMIT[:7],
        names=names,
    )
