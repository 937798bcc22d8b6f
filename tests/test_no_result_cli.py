"""What ``evalbench run`` shows of a run that measured nothing, of truncated outputs and of
identical attempts: the status line and exit code, the report, the summary and the index."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalbench.cli import main
from evalbench.settings import get_settings

ROOT = Path(__file__).resolve().parents[1]
GAIA = str(ROOT / "params" / "gaia_demo.yaml")


def _run_dir(out: str) -> Path:
    line = next(x for x in out.splitlines() if x.startswith("report: "))
    return Path(line.removeprefix("report: ")).parent


@pytest.mark.slow
def test_a_run_whose_every_call_failed_is_no_result_everywhere_and_exits_1(warm_cli, capsys):
    # 32 items x 3 attempts x 3 systems, every call fails; first attempts: 3 x 32 = 96 answers
    failing = [f"-p systems.{i}.sim.error_rate=1.0".split(" ", 1) for i in range(3)]
    failing = [part for pair in failing for part in pair]
    code = main(["run", GAIA, *failing, "-p", "max_error_rate=1.0"])
    out = capsys.readouterr().out
    assert code == 1
    text = "no result: 0 of 96 answers scored — failed call (sim_error) × 96"
    status = next(x for x in out.splitlines() if x.startswith("no_result"))
    assert f"result={text}" in status and "accuracy" not in status and "0.000" not in status
    run_dir = _run_dir(out)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "no_result" and manifest["headlines"] == {"result": text}
    reason = text.removeprefix("no result: ")
    report = _text(run_dir / "report.html")
    assert f"NO RESULT — {reason}. Nothing below is a measurement." in report
    summary = _text(run_dir / "summary.html")
    assert f"No result. {reason}." in summary
    assert "about 0%" not in summary  # no number for either system
    index = (get_settings().outputs_dir / "index.html").read_text()
    assert 'class="st no_result"' in index and text in index
    # within the error budget of the params (0.1) it is a failed run, not a result either
    assert main(["run", GAIA, *failing]) == 1
    assert next(x for x in capsys.readouterr().out.splitlines() if x.startswith("failed"))


@pytest.mark.slow
def test_truncated_outputs_and_identical_attempts_are_counted_in_report_and_summary(
    warm_cli, capsys
):
    # strong-sim may write 6 tokens (24 characters): each of its 96 answers (32 items x 3
    # attempts) is cut, and cut to the same 24 characters on every attempt of an item
    assert main(["run", GAIA, "-p", "systems.0.max_tokens=6"]) == 0
    run_dir = _run_dir(capsys.readouterr().out)
    usage = {u["system"]: u for u in json.loads((run_dir / "manifest.json").read_text())["usage"]}
    assert (usage["strong-sim"]["truncated"], usage["weak-sim"]["truncated"]) == (96, 0)
    report = _text(run_dir / "report.html")
    assert (
        "TRUNCATED — strong-sim: 96 of 96 outputs truncated (finish_reason=length) at "
        "max_tokens 6" in report
    )
    assert "IDENTICAL ATTEMPTS — strong-sim: 32 of 32 items' attempts identical" in report
    assert "Identical attempts. strong-sim: 32 of 32 items' attempts identical" in report
    summary = _text(run_dir / "summary.html")
    assert "96 of 96 outputs truncated (finish_reason=length)" in summary
    assert "0 of 96 outputs truncated" in summary  # weak-sim: every system shows its count
    assert "32 of 32 items' attempts identical" in summary


def _text(path: Path) -> str:
    """A page's text: tags dropped, entities read, whitespace collapsed."""
    import html
    import re

    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", path.read_text())).split())
