"""Every study kind, with nothing measured: an honest state, never a crash or a number.

Each shipped params file that asks simulated systems is run in-process (the study's own
``run``, as a sweep cell is, no notebook) with every simulated system, judge and generator
failing every call (``sim.error_rate: 1``), then with every judge asking a loopback server
whose every answer is prose without a verdict. What the run records must say so: no system scored anything,
one headline "no result: 0 of N ... scored — <reasons>", and ``no_result`` in the manifest
(the status ``evalbench run`` gives it: :mod:`tests.test_no_result_cli`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import yaml
from loopback import Reply
from studyfiles import CANARY_KEY, KEY_ENV

from evalbench.measured import NoResult
from evalbench.params import discover_params
from evalbench.runs import Run, release_run
from evalbench.sources import DataUnavailable
from evalbench.studies import get_study, load_params, summarize

ROOT = Path(__file__).resolve().parents[1]
PARAMS = discover_params(ROOT / "params")
JUDGE_KEYS = ("judge", "judges", "grader", "pairwise_judge", "second_judge")


def sim_paths(data: Any, prefix: str = "") -> Iterator[str]:
    """Dotted paths of every ``provider: sim`` mapping in a params tree (not the sweep's)."""
    if isinstance(data, dict):
        if data.get("provider") == "sim":
            yield prefix.rstrip(".")
        for key, value in data.items():
            if key not in ("sweep", "runs"):
                yield from sim_paths(value, f"{prefix}{key}.")
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from sim_paths(value, f"{prefix}{index}.")


def _data(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text())


def failing(path: Path) -> list[str]:
    """Overrides that make every simulated spec fail every call and allow every call to fail
    (``max_error_rate: 1``: the run is judged on what it measured, not on its errors)."""
    paths = list(sim_paths(_data(path)))
    extra = ["sweep.seeds=[0]"] if _data(path).get("sweep") else []
    return [*(f"{p}.sim.error_rate=1.0" for p in paths), "max_error_rate=1.0", *extra]


def unreadable_judges(path: Path, base_url: str) -> list[str]:
    """Overrides that send every judge (grader) to ``base_url``, a server whose every answer
    is prose with no verdict in it (a small real model's, often)."""
    judges = [p for p in sim_paths(_data(path)) if p.startswith(JUDGE_KEYS)]
    fields = {"provider": "openai", "model": "m", "base_url": base_url, "max_retries": 0,
              "api_key_env": KEY_ENV}  # fmt: skip
    return [f"{j}.{k}={v}" for j in judges for k, v in fields.items()] + ["max_error_rate=1.0"]


ASKING = [p for p in PARAMS if list(sim_paths(_data(p)))]
JUDGED = [p for p in ASKING if any(j.startswith(JUDGE_KEYS) for j in sim_paths(_data(p)))]
PARTLY_JUDGED = {
    "browse_suite_demo": "a task whose every criterion is checked by rule needs no judge",
}
"""Studies that still measure something when no judge output can be read, and why."""
ONE_REASON = {"sweep_demo": "cell no_result"}
"""The reason a study's no-result headline gives, when not the failed calls themselves."""


def run_in_process(path: Path, overrides: list[str]) -> dict[str, Any]:
    """The study's own ``run`` and ``finish`` (no notebook), as a sweep cell computes it; the
    manifest it wrote (a study that stopped with :class:`NoResult` wrote it first)."""
    params = load_params(path, overrides)
    study = get_study(params.study)
    run = Run(params, path, overrides, summarize=partial(summarize, study))
    run.start()
    try:
        run.finish(study.run(run))
    except NoResult:
        pass
    except DataUnavailable as exc:  # a study of public data, without the mirror
        if os.environ.get("EVALBENCH_DATA_MIRROR"):
            raise
        pytest.skip(f"needs the public-data mirror: set EVALBENCH_DATA_MIRROR ({exc})"[:200])
    finally:
        release_run(run.dir)
    return json.loads((run.dir / "manifest.json").read_text())


def assert_no_result(manifest: dict[str, Any], reason: str) -> None:
    """The manifest says nothing was measured: one headline, the reasons, no number."""
    assert list(manifest["headlines"]) == ["result"], manifest["headlines"]
    text = manifest["headlines"]["result"]
    assert text.startswith("no result: 0 of "), text
    assert reason in text, text
    assert manifest["no_result"] == text
    assert manifest["measured"], "a study says what it measured"
    assert [m["scored"] for m in manifest["measured"]] == [0] * len(manifest["measured"])
    # what the study found (its report's opening, its summary): "no result" and why, never
    # the study's sentences with numbers over nothing (GAIA's "0.0% [0.0%, 10.7%]")
    found = manifest["findings"]
    assert found["key_result"].startswith(f"No result: {text.removeprefix('no result: ')}")
    assert "%" not in found["key_result"] and "[" not in found["key_result"], found
    assert found["caveats"] == [] and found["risks"] == [] and found["cost"] == ""


@pytest.mark.slow
@pytest.mark.parametrize(
    "path",
    ASKING,
    ids=lambda p: p.stem,
)
def test_a_study_whose_every_call_failed_has_no_result(path):
    manifest = run_in_process(path, failing(path))
    assert_no_result(manifest, ONE_REASON.get(path.stem, "failed call (sim_error)"))


@pytest.mark.slow
@pytest.mark.parametrize("path", JUDGED, ids=lambda p: p.stem)
def test_a_study_whose_every_judge_output_was_unparsed_has_no_result(path, loopback, monkeypatch):
    monkeypatch.setenv(KEY_ENV, CANARY_KEY)
    loopback.default = Reply(text="I am not able to judge this response.")
    manifest = run_in_process(path, unreadable_judges(path, loopback.base_url))
    assert loopback.count > 0
    if path.stem not in PARTLY_JUDGED:
        assert_no_result(manifest, "unparsed judge output")
        return
    reasons = [r for m in manifest["measured"] for r in m["unscored"]]
    assert "unparsed judge output" in reasons, manifest["measured"]
    assert not manifest["no_result"] and "result" not in manifest["headlines"]


@pytest.mark.slow
def test_a_function_calling_model_that_never_called_a_function_has_no_bfcl_result(
    loopback, monkeypatch
):
    # the server answers prose to everything, as a server that never received the functions
    # does: every irrelevance item "passes" (abstaining), every other item fails. Before, the
    # headline read 2 of 6 = 0.333 for a model with no function-calling result at all.
    monkeypatch.setenv(KEY_ENV, CANARY_KEY)
    loopback.default = Reply(text="Sure! The weather is nice today.")
    system = {"name": "silent", "provider": "openai", "model": "m", "max_retries": 0,
              "base_url": loopback.base_url, "api_key_env": KEY_ENV}  # fmt: skip
    path = ROOT / "params" / "bfcl_demo.yaml"
    overrides = ["categories=[simple_python, multiple, irrelevance]", "limit_per_category=2",
                 "format_limit_per_category=null", f"systems=[{json.dumps(system)}]",
                 "system_modes={}", "mode=tools"]  # fmt: skip
    manifest = run_in_process(path, overrides)
    text = manifest["headlines"]["result"]
    # 6 items: 2 simple_python + 2 multiple need a call, 2 irrelevance; none measured
    assert text == (
        "no result: 0 of 6 items scored — no function call by this system in any item that "
        "needs one × 6"
    )
    assert manifest["measured"] == [
        {"system": "silent", "scored": 0, "total": 6, "unit": "item", "identical": None,
         "repeated": 0, "unscored": {"no function call by this system in any item that needs "
                                     "one": 6}}
    ]  # fmt: skip


@pytest.mark.slow
def test_a_judge_whose_every_output_was_unparsed_has_no_headline_number():
    # judge-sim (the primary judge) writes nothing readable: its headline was "nan [nan, nan]"
    path = ROOT / "params" / "judge_golden_demo.yaml"
    manifest = run_in_process(path, ["judges.0.sim.malformed_rate=1.0", "retest=false"])
    label = "within ±1 on accuracy (judge-sim; 95% Wilson)"
    assert manifest["headlines"][label].startswith("no result: 0 of 60 judgments scored — ")
    assert "unparsed judge output" in manifest["headlines"][label]
    assert not manifest["no_result"]  # the two other judges measured something
    by_judge = {m["system"]: m for m in manifest["measured"]}
    assert by_judge["judge-sim"]["scored"] == 0 and by_judge["judge-sim-strict"]["scored"] == 60


ONE_FAILS = [
    p for p in ASKING
    if isinstance(_data(p).get("systems"), list) and len(_data(p)["systems"]) >= 2
    and any(s.startswith("systems.0") for s in sim_paths(_data(p)))
    and not _data(p).get("sweep")
]  # fmt: skip
WHOLE_STUDY = {"arena_deep_research_demo": "two systems: no battle without the first one"}
"""Studies in which the first system's failure leaves nothing measured at all."""


@pytest.mark.slow
@pytest.mark.parametrize("path", ONE_FAILS, ids=lambda p: p.stem)
def test_a_system_whose_every_call_failed_has_no_number_in_what_the_study_found(path):
    # Before: GAIA's and the browse suite's key result said "strong-sim answered about 0% of
    # 32 tasks right, likely between 0% and 11%" for a system none of whose answers was
    # measured (every call failed), beside the headline's "no result".
    data = _data(path)
    name = str(data["systems"][0]["name"])
    first = [p for p in sim_paths(data) if p.startswith("systems.0")]
    manifest = run_in_process(
        path, [f"{p}.sim.error_rate=1.0" for p in first] + ["max_error_rate=1.0"]
    )
    found = manifest["findings"]
    if path.stem in WHOLE_STUDY:
        assert found["key_result"].startswith("No result: "), found
        return
    scored = {m["system"]: m["scored"] for m in manifest["measured"]}
    assert scored[name] == 0 and any(scored.values()), scored
    clauses = [c for c in found["key_result"].split(";") if f"{name} (" in c or f"{name}:" in c]
    assert all("no " in c.lower() and "%" not in c for c in clauses), found["key_result"]
    assert found["caveats"][0].startswith(f"No result for {name}: 0 of "), found["caveats"]
