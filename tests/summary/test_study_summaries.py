"""Every study kind's summary.html names its key number and its top caveat.

Each shipped study is run in-process on a small slice (its own ``run`` and ``finish``, as a
sweep cell is, no notebook), published as ``evalbench run`` publishes it, and its summary
written. The page must carry the study's own key result (the sentence its report opens
with), a key number computed here from the study's result tables (not from the sentence),
its top caveat under "Read with care", and no test names (the page is for readers who are
not statisticians). Studies on public data skip without the mirror.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

import pytest
import yaml
from alerts.helpers import outcomes_from, write_run

from evalbench.runs import Run, read_manifest, release_run, update_manifest
from evalbench.settings import get_settings
from evalbench.studies import get_study, load_params, summarize
from evalbench.summary import write_summary

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
JARGON = (
    "Holm",
    "Wilson",
    "McNemar",
    "bootstrap",
    "p-value",
    "p =",
    "significan",
    "confidence interval",
    "MDD",
)
"""Words the summary never shows (its readers are not statisticians)."""


def pct(value: float) -> str:
    return f"{value * 100:.0f}%"


class Case(NamedTuple):
    params: str
    overrides: list[str]
    key: Callable[[Any], list[str]]
    """The key number(s) in the summary's words, from the study's result tables."""
    caveat: str
    """How the top caveat begins."""
    mirror: bool = False
    page: Callable[[Any, str, str], None] | None = None
    """More checks: (result, the page's visible text, its HTML)."""


def _gaia_key(result: Any) -> list[str]:
    acc = result.summary.accuracy.set_index(["system", "level"]).loc[("strong-sim", "all")]
    k, n = int(acc["correct"]), int(acc["n"])
    return [f"strong-sim (simulated) answered about {pct(k / n)} of {n} tasks right"]


def _gaia_page(result: Any, text: str, page: str) -> None:
    # demo-l1-02: strong-sim answered kramhnceb for kramhcneb (two letters swapped)
    assert "answered “kramh<mark>nc</mark>eb” for “kramh<mark>cn</mark>eb”" in page
    assert "Judges and graders (not rated): semantic-judge-sim." in text
    semantic = result.semantic.accuracy.set_index("system").loc["variant-sim"]
    low, high = (round(semantic[f"difference_{e}"] * 100) for e in ("low", "high"))
    assert f"likely between {low:+d} and {high:+d} points)." in text  # said once, not "+14 points"


def _arena_key(result: Any) -> list[str]:
    strong = result.table.set_index("model").loc["sim-strong"]
    return [
        f"sim-strong (simulated) about {strong['rating']:.0f}, likely between "
        f"{strong['ci_low']:.0f} and {strong['ci_high']:.0f}"
    ]


def _arena_page(result: Any, text: str, page: str) -> None:
    bias = result.position
    assert "sim-base (simulated) is the anchor, fixed at 1000" in text
    assert "sim-base — rating (demo): fixed at 1000, the anchor" in text
    assert "between 1000 and 1000" not in text
    assert "4 systems: sim-base, sim-strong, sim-verbose, sim-weak." in text
    assert "Judges and graders (not rated): sim-judge." in text
    risks = text[text.index("Top risks") :]
    assert (
        f"The judge is position-inconsistent: in {bias.n_inconsistent} of {bias.n} pairs" in risks
    )
    assert "The judge prefers the longer answer" in risks and "No failures" not in text


def _bfcl_key(result: Any) -> list[str]:
    shares = result.verdicts.groupby("system")["valid"].agg(["mean", "size"])
    return [
        f"{system} (result files) about {pct(row['mean'])} of {int(row['size']):,d} items"
        for system, row in shares.iterrows()
    ]


def _bfcl_demo_key(result: Any) -> list[str]:
    shares = result.verdicts.groupby("system")["valid"].agg(["mean", "size"])
    return [
        f"{system} (simulated) about {pct(row['mean'])} of {int(row['size']):,d} items"
        for system, row in shares.iterrows()
    ]


def _sweep_key(result: Any) -> list[str]:
    cost = result.cells["cost_usd"]
    return [
        f"{len(result.cells)} cells (2 configurations × 1 seed); 2 of 2 ended ok.",
        f"${cost.min():.2f} to ${cost.max():.2f} per cell",
    ]


def _sweep_page(result: Any, text: str, page: str) -> None:
    assert "No model calls were recorded" not in text and "0 system" not in text


def _grading_key(result: Any) -> list[str]:
    dims = result.summary.dimensions
    row = dims[(dims["dimension"] == "overall") & (dims["source"] == "dataset")].iloc[0]
    agree = result.summary.agreement.set_index("dimension").loc["overall"]
    return [
        f"the set's own answers about {row['mean']:.1f}, likely between {row['ci_low']:.1f}",
        f"within ±10 points on about {pct(agree['within_k'])} of {int(agree['n'])} answers",
    ]


def _grading_page(result: Any, text: str, page: str) -> None:
    assert "mean overall dataset: 77.624" not in text  # the index's bare number


def _hle_key(result: Any) -> list[str]:
    row = result.summary.systems.set_index("system").loc["calibrated-sim"]
    return [
        f"calibrated-sim (simulated) about {pct(row['correct'] / row['n'])} of "
        f"{int(row['n'])} questions"
    ]


def _browsecomp_key(result: Any) -> list[str]:
    row = result.accuracy.iloc[0]
    return [
        f"{row['system']} (simulated) about {pct(row['accuracy'])} of {int(row['graded'])} "
        "graded questions"
    ]


def _suite_key(result: Any) -> list[str]:
    rows = result.levels[result.levels["level"] == "all"].set_index("system")
    return [
        f"browse-sim-careful (simulated agent) about "
        f"{pct(rows.loc['browse-sim-careful', 'success_rate'])}"
    ]


def _judge_public_key(result: Any) -> list[str]:
    row = result.prd.table.set_index("reviewer").loc[result.prd.lead]
    return [
        f"{result.prd.lead} agrees with the MTurk majority on about {pct(row['with_ties'])} "
        f"of {int(row['n'])} items"
    ]


def _golden_key(result: Any) -> list[str]:
    table = result.agreement
    row = table[(table["judge"] == "judge-sim") & (table["dimension"] == "accuracy")].iloc[0]
    return [
        f"judge-sim (simulated, primary judge) about {pct(row['within_k'])} of "
        f"{int(row['n_scored'])} scored items"
    ]


def _datagen_key(result: Any) -> list[str]:
    mean = result.summary.judge.metrics.loc["mean_score", "estimate"]
    return [
        f"{len(result.problems)} valid problems of {result.params.n_problems} requested",
        f"gave them a mean score of about {mean:.1f} of 5",
    ]


def _loop_key(result: Any) -> list[str]:
    gains = result.gains[result.gains["arm"] == "suggestion"].sort_values("round").iloc[-1]
    return [f"score about {gains['cumulative']:+.2f} points higher than the first answers"]


def _loop_page(result: Any, text: str, page: str) -> None:
    assert "The loop judge favours the answers it helped write" in text


def _public_key(result: Any) -> list[str]:
    top = result.rated["prd_human"].ratings.table.iloc[0]
    return [f"{top['model']} about {top['rating']:.0f}, likely between {top['ci_low']:.0f}"]


def _compare_key(result: Any) -> list[str]:
    return ["B vs A, item by item: s accuracy went from 25% to 88% (+62 points"]


SWEEP = [
    "sweep.seeds=[0]",
    'sweep.grid={"systems.0.limits.max_steps": [15]}',
    'sweep.baseline={"systems.0.limits.max_steps": 15, "systems.0.model": small}',
    "bootstrap_rounds=50",
]
"""The sweep demo cut to two cells: the small and the large model at 15 steps, one seed."""

CASES = {
    "gaia": Case(
        "gaia_demo",
        ["bootstrap_rounds=50"],
        _gaia_key,
        "The official scorer accepts exact matches only",
        page=_gaia_page,
    ),
    "arena": Case(
        "arena_demo",
        ["bootstrap_rounds=50", "limit=12", "baseline=null"],
        _arena_key,
        "These ratings are what one judge, sim-judge (simulated), prefers",
        page=_arena_page,
    ),
    "bfcl_public": Case(
        "bfcl_public",
        ["tier=quick"],
        _bfcl_key,
        "Not directly comparable: the systems were scored on different categories",
        mirror=True,
    ),
    "bfcl_demo": Case(
        "bfcl_demo",
        ["limit_per_category=4", "format_limit_per_category=null"],
        _bfcl_demo_key,
        "The items are evalbench's own demo items",
    ),
    "sweep": Case("sweep_demo", SWEEP, _sweep_key, "", page=_sweep_page),
    "hle_grading": Case(
        "hle_grading_demo",
        ["bootstrap_rounds=50"],
        _grading_key,
        "The expert set is evalbench's demo",
        page=_grading_page,
    ),
    "hle": Case("hle_demo", ["bootstrap_rounds=50", "tier=quick"], _hle_key, ""),
    "browsecomp": Case(
        "browsecomp_official",
        ["tier=quick", "bootstrap_rounds=50"],
        _browsecomp_key,
        "",
        mirror=True,
    ),
    "browse_suite": Case(
        "browse_suite_demo",
        ["bootstrap_rounds=50"],
        _suite_key,
        "The web is evalbench's own small invented one",
    ),
    "judge_public": Case(
        "judge_public",
        ["tier=quick", "bootstrap_rounds=50"],
        _judge_public_key,
        "The human labels are noisy",
        mirror=True,
    ),
    "judge_golden": Case(
        "judge_golden_demo",
        ["bootstrap_rounds=50", "retest=false"],
        _golden_key,
        "The golden set is synthetic",
    ),
    "datagen": Case(
        "datagen_demo",
        ["bootstrap_rounds=50", "n_problems=20"],
        _datagen_key,
        "The reviews are simulated",
    ),
    "retry_loop": Case(
        "retry_loop_demo",
        ["bootstrap_rounds=50", "limit=8", "rounds=2"],
        _loop_key,
        "The loop stops at a score of 8",
        page=_loop_page,
    ),
    "arena_public": Case(
        "arena_public",
        ["tier=quick", "bootstrap_rounds=50"],
        _public_key,
        # on this subsample, length control swaps alpaca-7b and vicuna-13b
        "The AlpacaEval order changes once answer length is controlled",
        mirror=True,
    ),
    "compare": Case(
        "",
        ["bootstrap_rounds=50", "calibration_repeats=20"],
        _compare_key,
        "“No change” is not proof of none",
    ),
}


def _compare_params(tmp_path: Path) -> Path:
    """Two GAIA runs by hand: s right on 8 of 32 tasks, then on 28 of the same 32."""
    outputs = get_settings().outputs_dir
    a = write_run(
        outputs,
        "a",
        {"s": outcomes_from([True] * 8 + [False] * 24), "same": outcomes_from([True, False] * 16)},
    )
    b = write_run(
        outputs,
        "b",
        {"s": outcomes_from([True] * 28 + [False] * 4), "same": outcomes_from([True, False] * 16)},
    )
    data = {
        "study": "compare",
        "title": "cmp",
        "runs": [{"path": str(a), "label": "A"}, {"path": str(b), "label": "B"}],
    }
    path = tmp_path / "cmp.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def run_published(path: Path, overrides: list[str]) -> tuple[Any, Path]:
    """The study in-process, its manifest marked published as ``evalbench run`` does, and
    its summary written: (result, run folder)."""
    params = load_params(path, overrides)
    study = get_study(params.study)
    run = Run(params, path, overrides, summarize=partial(summarize, study))
    run.start()
    try:
        result = study.run(run)
        run.finish(result)
    finally:
        release_run(run.dir)
    update_manifest(run.dir, status="ok")
    assert write_summary(run.dir).problem == ""
    return result, run.dir


def visible(page: str) -> str:
    """The page's text as a reader sees it (blocks apart, tags away, entities decoded)."""
    body = re.sub(r"</(?:li|p|h1|h2|div)>", " ", page.split("<main>")[1])
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", body)))


@pytest.mark.parametrize("kind", list(CASES))
def test_the_summary_names_the_key_number_and_the_top_caveat(kind, request, tmp_path):
    case = CASES[kind]
    if case.mirror:
        request.getfixturevalue("mirror")  # skips without it
    path = (
        _compare_params(tmp_path) if kind == "compare" else ROOT / "params" / f"{case.params}.yaml"
    )
    result, run_dir = run_published(path, case.overrides)
    found = read_manifest(run_dir)["findings"]
    page = (run_dir / "summary.html").read_text()
    text = visible(page)
    assert visible(f"<main>{found['key_result']}") in text  # the study's own sentence
    for number in case.key(result):
        assert number in text, (number, text)
    if found["caveats"]:
        top = visible(f"<main>{found['caveats'][0]}")
        assert f"Read with care: {top}" in text
        assert top.startswith(case.caveat), top
    else:
        assert not case.caveat and "Read with care" not in text
    description = str(read_manifest(run_dir)["params"].get("description") or "")
    plain = visible(page.replace(html.escape(description, quote=True), ""))
    for word in JARGON:
        assert word.lower() not in plain.lower(), word
    if case.page is not None:
        case.page(result, text, page)
