"""Every study end to end through papermill, and the promises a published report makes.

- every params/*.yaml renders (ok; or skipped with the reason when its public data is
  unreachable), with the record fields its study promises (one contract test); a study
  titled "offline" renders with no mirror, an empty cache and downloads off;
- reports keep untrusted text inert (XSS canaries) and open in headless Chromium;
- an API key never lands in outputs or the cache (canary key);
- killing a run and rerunning it finishes with exactly one record per item;
- a finished study replays from the cache with no API key and no request;
- a bad params file is one line and exit code 2; the index lists every run.
"""

from __future__ import annotations

import html as htmllib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from studyfiles import CANARY_KEY, gaia_dataset, gaia_params, openai_system

from evalbench import sources
from evalbench.cli import main
from evalbench.params import discover_params
from evalbench.publish import build_index, run_study
from evalbench.records import read_jsonl
from evalbench.settings import get_settings
from evalbench.studies import get_study, load_params

ROOT = Path(__file__).resolve().parents[1]
LOCAL = [p for p in discover_params(ROOT / "params") if p.stem.startswith("local_")]
"""The real-model studies (SmolLM2-135M served by evalbench): 1-3 minutes of model time in
all, so they are checked here for what their files promise, and one of them is rendered
end to end (tests/models/test_local_server.py)."""
PARAMS = [p for p in discover_params(ROOT / "params") if p not in LOCAL]


@pytest.mark.slow
@pytest.mark.parametrize("path", PARAMS, ids=lambda p: p.stem)
def test_every_study_renders_with_its_promised_records(path, request):
    offline = "offline" in load_params(path).title.lower()
    if offline:  # what its title promises: no mirror, nothing cached, no download
        request.getfixturevalue("offline")
    result = run_study(path, warm=True)
    manifest = json.loads((result.run_dir / "manifest.json").read_text())
    if result.status == "skipped" and "LocalModelUnavailable" in result.reason:
        assert not os.environ.get("EVALBENCH_CI"), f"CI installs the local extra: {result.reason}"
        pytest.skip(f"{path.name}: {result.reason}")
    if result.status == "skipped":
        assert "DataUnavailable" in result.reason and not os.environ.get("EVALBENCH_DATA_MIRROR")
        assert not offline, f"{path.name} is titled offline but needs data: {result.reason}"
        pytest.skip(f"{path.name}: {result.reason}")
    assert result.status == "ok", result.reason
    if offline:
        assert not set(manifest["data_files"]) & set(sources.registry()), "a pinned file was read"
    html = (result.run_dir / "report.html").read_text()
    assert "<img" in html and "<table" in html and "<script" not in html
    assert "No description has been provided" not in html  # each figure named by its section
    assert (result.run_dir / "summary.html").is_file(), "every run writes its one-page summary"
    for key in ("params_hash", "environment", "models", "data_files", "usage", "headlines",
                "started_at", "ended_at", "wall_time_s", "counts", "seeds"):  # fmt: skip
        assert key in manifest, key
    assert manifest["headlines"], "a study must give the index two or three headline numbers"
    # what the headlines stand on: every study says, per system, what it scored (an ok run
    # scored something), and every usage row counts its truncated outputs
    assert manifest["measured"] and any(m["scored"] for m in manifest["measured"])
    assert not manifest["no_result"]
    assert all("truncated" in row for row in manifest["usage"])
    # The contract: every record file the study declares is there, and every line of it
    # is a valid record of the declared type (the study's own list; no second registry).
    study = get_study(manifest["kind"])
    for name, record_type in study.records.items():
        path = result.run_dir / "records" / f"{name}.jsonl"
        if name in study.optional_records and not path.exists():
            continue
        rows = read_jsonl(path)
        assert rows, f"records/{name}.jsonl is empty"
        for number, row in enumerate(rows, start=1):
            try:
                record_type.model_validate(row)
            except ValueError as exc:
                raise AssertionError(f"records/{name}.jsonl:{number}: {exc}") from None
    if manifest["simulated"]:
        assert "SIMULATED" in html
    _opens_with_its_findings(html, manifest["findings"])
    _every_json_file_is_strict_json(result.run_dir)
    if path.stem == "bfcl_public":
        _agrees_with_the_official_bfcl_checker(result.run_dir / "records" / "bfcl.jsonl")


@pytest.mark.parametrize("path", LOCAL, ids=lambda p: p.stem)
def test_every_local_study_is_a_small_real_model_study_to_copy(path):
    params = load_params(path)  # validates (the local extra is not needed to load)
    specs = params.model_specs()
    assert specs and all(spec.local is not None for spec in specs), "every model is local"
    for spec in specs:
        assert spec.local.threads == 1 and spec.local.engine == "llama-cpp-python"
        assert spec.max_tokens is not None and spec.max_tokens <= 160
        # temperature 0 (a rerun is served from the cache), or seeded
        assert spec.temperature == 0 or spec.seed is not None, spec.name
    # its title says what it needs: not "offline demo", which promises a run without extras
    assert "offline" not in params.title.lower(), params.title
    assert "(SmolLM2-135M; needs the local extra)" in params.title
    text = path.read_text(encoding="utf-8")
    for change in ("model_file:", "engine:", "n_ctx:", "What to expect from a 135M"):
        assert change in text, f"{path.name} does not say {change!r}"
    # small: a limit or a sample of at most 5 items (datagen: its problem count)
    bounded = ("limit_per_level", "limit_per_category", "limit", "sample", "n_problems")
    sizes = {name: getattr(params, name) for name in bounded if getattr(params, name, None)}
    assert sizes and max(sizes.values()) <= 5, f"{path.name} is not small: {sizes}"


def _strict(constant: str) -> None:
    raise ValueError(f"{constant} is not JSON")


def _every_json_file_is_strict_json(run_dir: Path) -> None:
    """Records, manifest, exports: what any JSON parser reads (no NaN, no Infinity)."""
    files = [p for p in run_dir.rglob("*") if p.suffix in (".json", ".jsonl")]
    assert run_dir / "manifest.json" in files
    for path in files:
        text = path.read_text(encoding="utf-8")
        # one document, or JSON Lines (BFCL's result files are JSON Lines named .json)
        lines = text.splitlines() if path.suffix == ".jsonl" or _lines(text) else [text]
        for number, line in enumerate(lines, start=1):
            try:
                line.strip() and json.loads(line, parse_constant=_strict)
            except ValueError as exc:
                raise AssertionError(f"{path.relative_to(run_dir)}:{number}: {exc}") from None


def _lines(text: str) -> bool:
    try:
        json.loads(text, parse_constant=_strict)
    except json.JSONDecodeError as exc:
        return exc.msg == "Extra data"
    except ValueError:  # NaN or Infinity: the caller reports it
        return False
    return False


def _agrees_with_the_official_bfcl_checker(records: Path) -> None:
    """Every verdict of the public study equals the official checker's (oracle files)."""
    oracles = Path(
        os.environ.get("EVALBENCH_ORACLES")
        or Path(os.environ["EVALBENCH_DATA_MIRROR"]).parent / "oracles"
    )
    ours = {(r["system"], r["test_category"], r["id"]): r for r in read_jsonl(records)}
    checked = 0
    for folder in sorted((oracles / "bfcl").iterdir()):
        for row in read_jsonl(folder / "official_verdicts.jsonl"):
            mine = ours[(folder.name, row["test_category"], row["id"])]
            assert mine["valid"] == row["valid"], (folder.name, row["id"])
            if (
                row["error_type"] is not None
            ):  # "error types matching wherever the official one is set"
                assert mine["error_type"] == row["error_type"], (folder.name, row["id"])
            checked += 1
    assert checked == 7549  # 2591 + 2351 + 2607 official verdicts, 100% agreement on valid


# --- a GAIA study on a small local dataset, used by the tests below ---------------------


def _dataset(tmp_path: Path, answers: list[str]) -> Path:
    return gaia_dataset(tmp_path, answers)


def _params(tmp_path: Path, dataset: Path, systems: list[dict], **extra) -> Path:
    return gaia_params(tmp_path, dataset, systems, **extra)


CANARIES = ["<script>alert('xss')</script>", "<img src=x onerror=alert(1)>"]


def _words(fragment: str) -> str:
    return " ".join(htmllib.unescape(re.sub(r"<[^>]+>", "", fragment)).split())


def _opens_with_its_findings(html: str, found: dict[str, object]) -> None:
    """The report opens (before its first figure) with the sentences the summary carries."""
    opening = html[: html.index("<img")]
    text = _words(opening)
    assert "What the study found." in text and "&lt;mark&gt;" not in opening
    for sentence in [found["key_result"], *found["caveats"], *found["risks"]]:  # type: ignore[misc]
        assert _words(str(sentence)) in text, sentence


@pytest.mark.slow
def test_untrusted_text_stays_inert_in_the_report(tmp_path):
    # The sim answers with the (canary) ground truth, or a near miss of it: both land in
    # the tables and failure examples of the report.
    dataset = _dataset(tmp_path, CANARIES * 3)
    systems = [{"name": "<b>sys</b>", "provider": "sim", "sim": {"accuracy": 0.5}}]
    result = run_study(_params(tmp_path, dataset, systems), warm=True)
    assert result.status == "ok", result.reason
    html = (result.run_dir / "report.html").read_text()
    assert "<script" not in html and "onerror=alert" not in html.replace("onerror=alert(1)&gt;", "")
    assert "&lt;script&gt;alert(" in html  # shown as text
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "<b>sys</b>" not in html and "&lt;b&gt;sys&lt;/b&gt;" in html
    index = build_index().read_text()
    assert "<b>sys</b>" not in index


@pytest.mark.slow
@pytest.mark.browser
def test_a_report_opens_in_headless_chromium_with_a_figure_and_a_table(tmp_path):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("needs Debian chromium (apt-get install chromium; .ci/run installs it)")
    dataset = _dataset(tmp_path, ["42", "7", "a, b", "Paris", "3.5", "x"])
    result = run_study(_params(tmp_path, dataset, [{"name": "s", "provider": "sim"}]), warm=True)
    assert result.status == "ok", result.reason
    dom = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", f"--user-data-dir={tmp_path / 'chrome'}", "--dump-dom",
         (result.run_dir / "report.html").as_uri()],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip
    assert re.search(r'<img [^>]*src="data:image/png;base64,', dom)  # a figure, embedded
    assert "<table" in dom and "accuracy" in dom  # a table, rendered
    assert "SIMULATED" in dom


# --- a study against a real OpenAI-compatible server on 127.0.0.1 ------------------------


def _openai_system(loopback, **kw) -> dict:
    return openai_system(loopback, **kw)


@pytest.mark.slow
def test_the_api_key_never_reaches_outputs_or_the_cache(tmp_path, loopback, monkeypatch):
    monkeypatch.setenv("EVALBENCH_CANARY_KEY", CANARY_KEY)
    dataset = _dataset(tmp_path, ["1", "2", "3", "4"])
    result = run_study(_params(tmp_path, dataset, [_openai_system(loopback)]), warm=True)
    assert result.status == "ok", result.reason
    assert loopback.count == 4
    assert all(h["authorization"] == f"Bearer {CANARY_KEY}" for h in loopback.headers)
    settings = get_settings()
    for folder in (settings.outputs_dir, settings.cache_dir):
        for path in folder.rglob("*"):
            if path.is_file():
                assert CANARY_KEY.encode() not in path.read_bytes(), path


@pytest.mark.slow
def test_the_api_key_never_reaches_the_warm_kernels_history(tmp_path, monkeypatch):
    # the warm kernel is handed this process's environment (the key with it) as code to run;
    # IPython keeps the code a kernel runs in $IPYTHONDIR (by default ~/.ipython)
    monkeypatch.setenv("EVALBENCH_CANARY_KEY", CANARY_KEY)
    path = _params(tmp_path, _dataset(tmp_path, ["1"]), [{"name": "s", "provider": "sim"}])
    assert run_study(path, warm=True).status == "ok"
    stored = [p.read_bytes() for p in Path(os.environ["IPYTHONDIR"]).rglob("*") if p.is_file()]
    assert stored and not [text for text in stored if CANARY_KEY.encode() in text]


@pytest.mark.slow
def test_replay_rerenders_a_finished_study_with_no_key_and_no_request(
    tmp_path, loopback, monkeypatch
):
    monkeypatch.setenv("EVALBENCH_CANARY_KEY", CANARY_KEY)
    path = _params(tmp_path, _dataset(tmp_path, ["1", "2", "3"]), [_openai_system(loopback)])
    assert run_study(path, warm=True).status == "ok"
    asked = loopback.count
    monkeypatch.delenv("EVALBENCH_CANARY_KEY")
    # a fresh run folder (replay changes the params), answers only from the cache
    replay = run_study(path, ["cache=replay"], warm=True)
    assert replay.status == "ok", replay.reason
    assert loopback.count == asked
    records = read_jsonl(replay.run_dir / "records" / "responses.jsonl")
    assert len(records) == 3 and all(r["cached"] for r in records)


@pytest.mark.slow
def test_a_killed_run_resumes_with_exactly_one_record_per_item(tmp_path, loopback, monkeypatch):
    monkeypatch.setenv("EVALBENCH_CANARY_KEY", CANARY_KEY)
    loopback.latency = 0.25
    n = 24
    path = _params(tmp_path, _dataset(tmp_path, [str(i) for i in range(n)]),
                   [_openai_system(loopback, max_concurrency=2)])  # fmt: skip
    proc = subprocess.Popen([sys.executable, "-m", "evalbench.cli", "run", str(path)],
                            start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    responses = None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        found = list(get_settings().outputs_dir.glob("gaia_test/*/records/responses.jsonl"))
        if found and len(found[0].read_text().splitlines()) >= 5:
            responses = found[0]
            break
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(30)
    assert responses is not None, "the run never wrote 5 records"
    written = len(read_jsonl(responses))
    assert 5 <= written < n  # killed mid-study
    loopback.latency = 0.0
    result = run_study(path, warm=True)
    assert result.status == "ok", result.reason
    keys = [r["key"] for r in read_jsonl(responses)]
    assert sorted(keys) == sorted(f"t{i}#0" for i in range(n))  # each item exactly once
    scored = read_jsonl(result.run_dir / "records" / "gaia.jsonl")
    assert sorted(r["task_id"] for r in scored) == sorted(f"t{i}" for i in range(n))
    assert (
        loopback.count <= n + 2
    )  # only the missing ones (and the ones in flight) were asked again


def test_a_bad_params_file_is_one_line_and_exit_code_2(tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    path.write_text("study: gaia\ntitle: t\nsystems: [{name: s}]\nlevles: [1]\n")
    assert main(["run", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"evalbench: {path}: levles: unknown key"
    assert not list(get_settings().outputs_dir.glob("bad/*"))  # nothing half-written


@pytest.mark.slow
def test_a_failing_notebook_is_marked_failed_never_ok(tmp_path):
    dataset = _dataset(tmp_path, ["1", "2"])
    with open(dataset / "metadata.jsonl", "a") as fh:  # valid params, bad data inside
        fh.write('{"task_id": "t9", "Question": "?", "Level": 7, "Final answer": "1"}\n')
    result = run_study(_params(tmp_path, dataset, [{"name": "s", "provider": "sim"}]), warm=True)
    assert (
        result.status == "failed" and "GaiaDataError" in result.reason and "Level" in result.reason
    )
    manifest = json.loads((result.run_dir / "manifest.json").read_text())
    assert manifest["status"] == "failed" and manifest["report"] is None
    assert "failed" in build_index().read_text()


def test_rendering_never_builds_jsonschemas_iri_parsers():
    # papermill/nbconvert -> nbformat -> jsonschema imports rfc3987_syntax when installed,
    # which builds ~35 Lark parsers at import (1.1 s CPU in every process that renders);
    # no notebook schema uses the IRI format, so evalbench.publish keeps it out
    import papermill  # noqa: F401

    import evalbench.publish  # noqa: F401

    assert sys.modules.get("rfc3987_syntax") is None
