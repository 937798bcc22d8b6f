"""Failures never look like results (issue 12): each fault injected for real.

Every test runs a real study (a small GAIA-format dataset the test writes) against the
loopback OpenAI-compatible server on 127.0.0.1, in-process or as an ``evalbench`` process.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from loopback import Chaos, Fault
from proctree import wait_for
from studyfiles import CANARY_KEY, KEY_ENV, gaia_dataset, gaia_params, openai_system

from evalbench import publish
from evalbench.cli import main
from evalbench.publish import build_index, run_study
from evalbench.records import read_jsonl
from evalbench.settings import get_settings

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, CANARY_KEY)


def _study(tmp_path, loopback, n=6, name="gaia_test", **system):
    answers = [str(i) for i in range(n)]
    system = {"max_retries": 0, "timeout_s": 2.0, **system}
    return gaia_params(tmp_path, gaia_dataset(tmp_path, answers, name=f"data_{name}"),
                       [openai_system(loopback, **system)], name=name)  # fmt: skip


def _manifest(run_dir: Path) -> dict:
    return json.loads((run_dir / "manifest.json").read_text())


def _run_dir(study: str) -> Path:
    """The study's one run folder (the study's folder holds other files too)."""
    (manifest,) = get_settings().outputs_dir.glob(f"{study}/*/manifest.json")
    return manifest.parent


def _responses(run_dir: Path) -> list[dict]:
    return read_jsonl(run_dir / "records" / "responses.jsonl")


# --- 1. status tells the truth ------------------------------------------------------------

FAULTS = {
    "http_401": [Fault("401")],
    "http_500": [Fault("500")],
    "malformed_response": [Fault("malformed")],
    "empty_choices": [Fault("empty")],
    "timeout": [Fault("slow", seconds=2)],  # past timeout_s=1; the next test waits it out
    "connection_error": [Fault("drop")],
}


@pytest.mark.slow
@pytest.mark.parametrize("reason", sorted(FAULTS))
def test_a_study_whose_every_call_failed_is_failed_and_says_so(tmp_path, loopback, reason):
    loopback.enqueue(*(FAULTS[reason] * 6))
    result = run_study(_study(tmp_path, loopback, timeout_s=1.0), warm=True)
    assert result.status == "failed"
    expected = "malformed_response" if reason == "empty_choices" else reason
    assert f"loop: 6 of 6 calls failed: {expected} × 6" in result.reason
    index = build_index().read_text()
    assert f"6 of 6 calls failed: {expected}" in index and ">failed<" in index
    assert not (result.run_dir / "report.html").exists()  # nothing published


@pytest.mark.slow
def test_the_cli_exits_non_zero_and_names_the_failed_calls(tmp_path, loopback, capsys, warm_cli):
    # main's return value is the process's exit status (cli.py: sys.exit(main())); the
    # exit status of a real process is checked by the tests below that start one
    loopback.enqueue(*[Fault("401")] * 6)
    assert main(["run", str(_study(tmp_path, loopback))]) == 1
    out = capsys.readouterr().out
    assert "failed" in out and "6 of 6 calls failed: http_401 × 6" in out


@pytest.mark.slow
def test_errors_within_max_error_rate_are_ok_and_above_it_degraded(tmp_path, loopback, warm_cli):
    loopback.enqueue(Fault("500"))  # 1 of 6 calls fails
    ok = run_study(_study(tmp_path, loopback, name="a"), ["max_error_rate=0.2"], warm=True)
    assert ok.status == "ok", ok.reason
    loopback.enqueue(Fault("500"))
    degraded = run_study(_study(tmp_path, loopback, name="b"), ["allow_degraded=true"], warm=True)
    assert degraded.status == "degraded"
    assert "1 of 6 calls failed: http_500 × 1 (above max_error_rate 0)" in degraded.reason
    assert (degraded.run_dir / "report.html").exists()  # published, marked degraded
    assert main(["run", str(_study(tmp_path, loopback, name="c")), "-p", "max_error_rate=0.2"]) == 0


def test_a_missing_api_key_is_one_line_and_exit_code_2(tmp_path, loopback, monkeypatch, capsys):
    # a remote endpoint (never contacted: the key is checked first); loopback ones need none
    monkeypatch.delenv(KEY_ENV)
    remote = {"base_url": "https://api.example.invalid/v1"}
    assert main(["run", str(_study(tmp_path, loopback, **remote))]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"evalbench: system 'loop' needs the environment variable {KEY_ENV}; it is not set (an "
        "endpoint that takes no key: set api_key_env: null for this system; endpoints on "
        "loopback, such as http://127.0.0.1:8000/v1, need none)"
    )
    assert loopback.count == 0


_AGENTS = {
    "python": {"entrypoint": "tests.agents.example_agent:answer"},
    "command": {"argv": ["python3", "agent.py"]},
    "agent": {"model": "m"},  # the reference agent calls its model's endpoint
    "openai": {"model": "m"},
}


@pytest.mark.parametrize("provider", sorted(_AGENTS))
def test_only_systems_that_call_an_endpoint_need_a_key(tmp_path, monkeypatch, provider):
    from evalbench.cli import check_secrets
    from evalbench.settings import MissingSecret
    from evalbench.studies import load_params

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    system = {"name": "my-agent", "provider": provider, **_AGENTS[provider]}
    params = load_params(gaia_params(tmp_path, gaia_dataset(tmp_path, ["1"]), [system]))
    if provider in ("python", "command"):
        check_secrets(params)  # a user's own agent: evalbench calls no endpoint for it
        return
    with pytest.raises(MissingSecret, match=r"system 'my-agent' needs .* OPENAI_API_KEY"):
        check_secrets(params)


# --- 2. reruns heal ------------------------------------------------------------------------


@pytest.mark.slow
def test_fixing_the_key_and_rerunning_heals_the_run(tmp_path, loopback):
    path = _study(tmp_path, loopback)
    loopback.enqueue(*[Fault("401")] * 6)
    assert run_study(path, warm=True).status == "failed"
    before = loopback.count
    healed = run_study(path, warm=True)  # the server answers now ("the key is fixed")
    assert healed.status == "ok", healed.reason
    assert loopback.count - before == 6  # every failed item asked again, once
    rows = _responses(healed.run_dir)
    assert len(rows) == 6 and all(r["error"] is None for r in rows)
    again = loopback.count
    assert run_study(path, warm=True).status == "current"
    assert loopback.count == again  # nothing re-paid


# --- 3. one writer per run folder ------------------------------------------------------------


@pytest.mark.slow
def test_a_second_run_of_the_same_study_refuses_and_nothing_is_paid_twice(
    tmp_path, loopback, capsys
):
    # timing-free: the first run's answers wait until the second run has been refused (under
    # load the first run could otherwise finish before the second had started)
    loopback.hold = threading.Event()
    path = _study(tmp_path, loopback, n=12, max_concurrency=2, timeout_s=600)
    first = subprocess.Popen([sys.executable, "-m", "evalbench.cli", "run", str(path)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             env={**os.environ, KEY_ENV: CANARY_KEY})  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while loopback.count < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        second = main(["run", str(path)])  # here: it is refused before any kernel starts
        loopback.hold.set()
        assert second == 1
        out = capsys.readouterr().out
        assert "busy" in out and "is in use by process" in out
        assert first.wait(120) == 0
    finally:
        first.kill()
    assert loopback.count == 12  # every call paid once
    run_dir = _run_dir("gaia_test")
    assert len(_responses(run_dir)) == 12 and _manifest(run_dir)["status"] == "ok"


# --- 4. the cache cannot take the study down ---------------------------------------------------


@pytest.mark.slow
def test_a_corrupt_cache_is_moved_aside_and_the_study_goes_on(tmp_path, loopback, capfd):
    cache = get_settings().cache_dir / "responses.sqlite"
    cache.parent.mkdir(parents=True)
    cache.write_bytes(b"this is not a database" * 100)
    result = run_study(_study(tmp_path, loopback), warm=True)
    assert result.status == "ok", result.reason
    aside = list(cache.parent.glob("responses.sqlite.corrupt-*"))
    assert len(aside) == 1 and aside[0].read_bytes().startswith(b"this is not a database")
    assert f"the response cache {cache} is unreadable" in capfd.readouterr().err
    with sqlite3.connect(cache) as conn:
        assert conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 6


def test_cache_clear_works_on_a_corrupt_file(capfd):
    cache = get_settings().cache_dir / "responses.sqlite"
    cache.parent.mkdir(parents=True)
    cache.write_bytes(b"garbage" * 1000)
    assert main(["cache", "clear"]) == 0
    out = capfd.readouterr().out
    assert "deleted 0 cached responses" in out and "deleted the corrupt copy" in out
    assert not list(cache.parent.glob("responses.sqlite.corrupt-*"))


@pytest.mark.slow
@pytest.mark.parametrize("system", [{"name": "s"},
                                    {"name": "a", "provider": "python", **_AGENTS["python"]}],
                         ids=["sim", "python_agent"])  # fmt: skip
def test_a_study_without_endpoint_calls_never_opens_the_cache(tmp_path, system):
    cache = get_settings().cache_dir / "responses.sqlite"
    cache.parent.mkdir(parents=True)
    cache.write_bytes(b"garbage" * 1000)
    path = gaia_params(tmp_path, gaia_dataset(tmp_path, ["1", "2"]), [system])
    assert run_study(path, warm=True).status == "ok"
    assert cache.read_bytes() == b"garbage" * 1000  # untouched


# --- 5. publishing is atomic ------------------------------------------------------------------


@pytest.mark.slow
def test_a_later_failure_keeps_the_published_report(tmp_path, loopback):
    path = _study(tmp_path, loopback)
    good = run_study(path, warm=True)
    assert good.status == "ok"
    report = (good.run_dir / "report.html").read_bytes()
    notebook = (good.run_dir / "notebook.ipynb").read_bytes()
    with open(tmp_path / "data_gaia_test" / "metadata.jsonl", "a") as fh:  # same params
        fh.write('{"task_id": "t9", "Question": "?", "Level": 7, "Final answer": "1"}\n')
    bad = run_study(path, warm=True)
    assert bad.status == "failed" and "Level" in bad.reason
    assert (good.run_dir / "report.html").read_bytes() == report
    assert (good.run_dir / "notebook.ipynb").read_bytes() == notebook
    assert (good.run_dir / "notebook.failed.ipynb").exists()
    manifest = _manifest(good.run_dir)
    assert manifest["status"] == "failed" and manifest["published"]["status"] == "ok"
    index = build_index().read_text()
    assert 'href="gaia_test/' in index and "latest attempt failed at" in index


@pytest.mark.slow
def test_a_killed_run_shows_interrupted_not_running(tmp_path, loopback):
    # timing-free: the server holds its answers, so the run is still running when killed
    loopback.hold = threading.Event()
    path = _study(tmp_path, loopback, n=12, max_concurrency=1, timeout_s=600)
    proc = subprocess.Popen([sys.executable, "-m", "evalbench.cli", "run", str(path)],
                            start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env={**os.environ, KEY_ENV: CANARY_KEY})  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while loopback.count < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "running" in build_index().read_text()
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
    finally:
        loopback.hold.set()
    # the kernel (a session of its own) dies with its parent, killed by the parent's watchdog
    # (evalbench.processes): polled, bounded, not a fixed sleep
    assert wait_for(lambda: ">interrupted<" in build_index().read_text(), 30)
    assert ">running<" not in build_index().read_text()
    run_dir = _run_dir("gaia_test")
    assert _manifest(run_dir)["status"] == "interrupted"  # the file agrees (it said running)
    from evalbench.history.runs import study_runs

    assert [m["status"] for m in study_runs("gaia_test")] == ["interrupted"]


@pytest.mark.parametrize("kernel", [True, False], ids=["a second signal", "before the kernel"])
def test_a_signal_that_aborts_at_once_leaves_the_manifest_interrupted_saying_why(
    tmp_path, loopback, monkeypatch, kernel
):
    """The handler (publish._Interrupts) aborts at once on a second signal, or on the first
    when the study's kernel is not up yet: KeyboardInterrupt wherever the run is. It still
    ends the run (no rendering; the command exits 130), but the manifest said ``running``
    for ever, and then called every such stop "a second signal"."""
    from evalbench import publish
    from evalbench.runs import lock_run, release_run, update_manifest

    stand_in = subprocess.Popen(["sleep", "60"])  # the "kernel" the first signal interrupts

    def signals(self, output):
        assert _manifest(output.parent)["status"] == "running"
        if kernel:
            update_manifest(output.parent, kernel_pid=stand_in.pid)
            os.kill(os.getpid(), signal.SIGINT)  # forwarded to the kernel
        os.kill(os.getpid(), signal.SIGINT)  # aborts here
        raise AssertionError("the signal did not abort")

    monkeypatch.setattr(publish._Execution, "__call__", signals)
    try:
        with pytest.raises(KeyboardInterrupt):
            run_study(_study(tmp_path, loopback), warm=True)
    finally:
        stand_in.kill()
        stand_in.wait()
    manifest = _manifest(_run_dir("gaia_test"))
    assert manifest["status"] == "interrupted" and manifest["ended_at"]
    assert manifest["reason"] == (
        "interrupted by SIGINT, then aborted at once by a second signal"
        if kernel
        else "interrupted by SIGINT before the study's kernel started"
    )
    assert stand_in.returncode == (-signal.SIGINT if kernel else -signal.SIGKILL)
    lock_run(_run_dir("gaia_test"))  # released: a rerun may take it
    release_run(_run_dir("gaia_test"))


def test_a_study_that_ran_to_its_end_after_the_first_signal_is_interrupted_not_published(
    tmp_path, loopback, monkeypatch
):
    """A study with no request left to stop (a compare's, rendering) took the first Ctrl-C,
    said "stopping the study", ran on to its end and was published: `compare` exited 0. A
    signal received is an interrupted run (exit 130), whatever the notebook did after it."""
    import nbformat

    from evalbench import publish
    from evalbench.runs import update_manifest

    stand_in = subprocess.Popen(["sleep", "60"])  # the "kernel" the first signal interrupts

    def ran_on(self, output):
        update_manifest(output.parent, kernel_pid=stand_in.pid)
        os.kill(os.getpid(), signal.SIGINT)  # forwarded to the kernel, which goes on
        update_manifest(output.parent, status="executed")  # what run.finish() writes
        output.write_text(nbformat.writes(nbformat.v4.new_notebook()))  # exports as it is
        self.timing = {"kernel_start_s": 0.0, "data_load_s": 0.0, "compute_s": 0.0}

    monkeypatch.setattr(publish._Execution, "__call__", ran_on)
    try:
        result = run_study(_study(tmp_path, loopback), warm=True)
    finally:
        stand_in.kill()
        stand_in.wait()
    assert (result.status, result.reason) == ("interrupted", "interrupted by SIGINT")
    manifest = _manifest(_run_dir("gaia_test"))
    assert manifest["status"] == "interrupted" and not manifest.get("published")
    assert not (_run_dir("gaia_test") / "report.html").exists()


@pytest.mark.slow
def test_sigint_stops_new_requests_and_records_those_in_flight(tmp_path, loopback):
    """Timing-free (it failed under load: the last of 40 slow requests was asked before the
    interrupt landed): the server answers 6 requests and holds the next ones, so exactly 4
    (max_concurrency) are in flight when SIGINT comes; they are answered only once the
    kernel says it starts no new request, and must then be recorded."""
    n, answered, concurrency = 20, 6, 4
    hold = threading.Event()

    def after_the_first_answers(count: int) -> None:  # called as each request arrives
        if count == answered + 1:
            loopback.hold = hold

    loopback.on_request = after_the_first_answers
    path = _study(tmp_path, loopback, n=n, max_concurrency=concurrency, timeout_s=600)
    proc = subprocess.Popen([sys.executable, "-m", "evalbench.cli", "run", str(path)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, KEY_ENV: CANARY_KEY})  # fmt: skip
    said = bytearray()

    def read_stderr() -> None:
        while chunk := proc.stderr.read1(4096):
            said.extend(chunk)

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    try:
        assert wait_for(lambda: loopback.count == answered + concurrency
                        and loopback.in_flight == concurrency, 90), said.decode()[-2000:]  # fmt: skip
        proc.send_signal(signal.SIGINT)
        # the kernel's own line (relayed): from here it starts nothing new
        assert wait_for(lambda: b"starting no new request" in said, 60), said.decode()[-2000:]
    finally:
        hold.set()  # the requests in flight are answered now
    assert proc.wait(60) == 130, said.decode()[-2000:]
    reader.join(10)
    run_dir = _run_dir("gaia_test")
    assert loopback.count == answered + concurrency  # nothing new was asked
    responses = _responses(run_dir)
    assert len(responses) == answered + concurrency and all(r["error"] is None for r in responses)
    assert _manifest(run_dir)["status"] == "interrupted"
    loopback.on_request = None  # the rerun asks the rest
    assert run_study(path, warm=True).status == "ok"
    assert loopback.count == n and len(_responses(run_dir)) == n


# --- 6. params files are untrusted input -------------------------------------------------------

HOSTILE = {
    "not_utf8": (b"study: gaia\ntitle: caf\xe9\n", "bad.yaml:2: not UTF-8: byte 0xe9 at offset 22"),
    "alias_bomb": (
        b"a: &a [x, x, x, x, x, x, x, x, x]\n"
        + b"".join(f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, "
                   f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n".encode() for i in range(9)),
        "bad.yaml:1:4: YAML anchor &a is not allowed in params files",
    ),
    "duplicate_key": (b"study: gaia\ntitle: a\ntitle: b\n",
                      "bad.yaml:3:1: duplicate key 'title' (first on line 2)"),
    "complex_key": (b"study: gaia\n{a: 1}: 2\n",
                    "bad.yaml:2:1: a mapping key must be text or a number, not a mapping"),
    "deep_nesting": (b"study: gaia\nx: " + b"[" * 10_000 + b"]" * 10_000 + b"\n",
                     "bad.yaml:2:103: nested deeper than 100 levels"),
    "infinite_number": (b"study: gaia\ntitle: t\nsystems: [{name: s, sim: {noise: .inf}}]\n",
                        "bad.yaml: systems.0.sim.noise: expected a finite number, got inf"),
}  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_params_file_is_one_line_exit_2_and_fast(tmp_path, case, capsys):
    content, message = HOSTILE[case]
    path = tmp_path / "bad.yaml"
    path.write_bytes(content)
    started = time.process_time()  # CPU time: load from other processes does not change it
    assert main(["run", str(path)]) == 2
    assert time.process_time() - started < 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


@pytest.mark.slow
def test_make_report_carries_on_after_a_bad_params_file_and_rebuilds_the_index(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(b"study: gaia\ntitle: caf\xe9\n")
    good = gaia_params(tmp_path, gaia_dataset(tmp_path, ["1", "2"]), [{"name": "s"}])
    assert main(["report", str(bad), str(good)]) == 1  # one study left: this process renders it
    out = capsys.readouterr().out
    assert "not UTF-8" in out and "ok " in out
    assert (get_settings().outputs_dir / "index.html").exists()


@pytest.mark.parametrize("content", [b"study: gaia\ntitle: caf\xe9\n", b"study: [", b"study: nope\n"],
                         ids=["not_utf8", "yaml", "unknown_kind"])  # fmt: skip
def test_a_file_that_does_not_parse_starts_no_worker_and_the_one_left_renders_here(
    tmp_path, monkeypatch, content
):
    # report with jobs=2 of a broken file and a good one: the broken one fails at once, in
    # this process; one study is left, so it renders here (no pool of spawned workers, whose
    # start costs seconds): the stand-in below sees it only if it ran in this process
    bad, good = tmp_path / "bad.yaml", tmp_path / "good.yaml"
    bad.write_bytes(content)
    good.write_text("study: gaia\n")
    here: list[Path] = []

    def render(path: Path, force: bool = False) -> publish.StudyResult:
        here.append(path)
        return publish.StudyResult(path, "ok", None, 0.0, "")

    monkeypatch.setattr(publish, "_run_or_fail", render)
    results = {r.params_file.name: r for r in publish.run_many([bad, good], jobs=2)}
    assert here == [good] and results["good.yaml"].status == "ok"
    assert results["bad.yaml"].status == "failed"
    assert str(bad) in results["bad.yaml"].reason and "\n" not in results["bad.yaml"].reason


def _in_private_mount(
    tmp_path: Path, options: str, command: list[str]
) -> subprocess.CompletedProcess:
    """Run ``command`` with EVALBENCH_OUTPUTS on a tmpfs mounted with ``options`` in a private
    mount namespace (nothing outside this process sees it; nothing to clean up)."""
    import shlex
    import shutil

    if shutil.which("unshare") is None or os.geteuid() != 0:
        pytest.skip("needs root and util-linux unshare for a private read-only/full mount")
    target = tmp_path / "mnt"
    target.mkdir()
    script = (f"mount -t tmpfs -o {options} tmpfs {target} && "
              + " ".join(shlex.quote(c) for c in command))  # fmt: skip
    env = {**os.environ, "EVALBENCH_OUTPUTS": str(target / "outputs")}
    return subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True,
                          timeout=120, env=env)  # fmt: skip


# a 16 KiB tmpfs is full before the run folder's first file (a 64 KiB probe) is written
@pytest.mark.slow
@pytest.mark.parametrize("options", ["ro,size=64k", "size=16k"], ids=["read_only", "full"])
def test_unwritable_outputs_is_one_line(tmp_path, options):
    path = gaia_params(tmp_path, gaia_dataset(tmp_path, ["1", "2"]), [{"name": "s"}])
    proc = _in_private_mount(tmp_path, options,
                             [sys.executable, "-m", "evalbench.cli", "run", str(path)])  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("evalbench: cannot write to ")
    assert "Traceback" not in proc.stderr


_AFTER_THE_RUN = """
import json, pathlib, sys
for path in sorted(pathlib.Path(sys.argv[1]).glob("*/*/*")):
    print("file", path.name, json.loads(path.read_text())["status"] if path.name == "manifest.json" else "-")
"""


# 30 items: the 64 KiB probe fits, then the disk fills while the notebook is saved (100k)
# or while the report is exported (300k)
@pytest.mark.slow
@pytest.mark.parametrize("size", ["100k", "300k"])
def test_a_disk_that_fills_during_the_run_is_one_line_and_a_consistent_manifest(tmp_path, size):
    answers = [str(i) for i in range(30)]
    path = gaia_params(tmp_path, gaia_dataset(tmp_path, answers), [{"name": "s"}])
    script = tmp_path / "run.sh"  # the run, its exit status, then what it left on that disk
    script.write_text(f"{sys.executable} -m evalbench.cli run {path}\necho status $?\n"
                      f"{sys.executable} -c '{_AFTER_THE_RUN}' {tmp_path}/mnt/outputs\n")  # fmt: skip
    proc = _in_private_mount(tmp_path, f"size={size}", ["sh", str(script)])
    assert "status 2" in proc.stdout.splitlines(), proc.stdout + proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip() and "it/s" not in line]
    assert len(lines) == 1 and lines[0].startswith("evalbench: cannot write to "), proc.stderr
    assert "No space left on device" in lines[0]
    files = dict(line.split()[1:] for line in proc.stdout.splitlines() if line.startswith("file"))
    assert files["manifest.json"] == "failed"  # it says how the run ended
    assert not [name for name in files if name.endswith(".tmp")]  # no half-written file left


# --- 7. faults classified right -----------------------------------------------------------------


@pytest.mark.slow
def test_a_connection_reset_is_a_connection_error_not_a_timeout(tmp_path, loopback):
    loopback.enqueue(*[Fault("drop")] * 6)
    result = run_study(_study(tmp_path, loopback, timeout_s=30.0), warm=True)
    rows = _responses(result.run_dir)
    assert all(r["error"].startswith("connection_error: ServerDisconnected") for r in rows), rows[0]


# --- chaos and kill ------------------------------------------------------------------------------


@pytest.mark.slow
def test_chaos_every_item_ends_with_exactly_one_record(tmp_path, loopback):
    """400 requests, 20% random faults (429, 500, bad JSON, reset, hang), retries on."""
    n = 400
    loopback.chaos = Chaos(0.2, ["429", "500", "malformed", "drop", "hang"], seed=7, hang_s=1.5)
    path = _study(tmp_path, loopback, n=n, max_retries=2, timeout_s=0.5, max_concurrency=32)
    result = run_study(path, ["max_error_rate=0.05", "bootstrap_rounds=10"], warm=True)
    rows = _responses(result.run_dir)
    keys = [r["key"] for r in rows]
    assert sorted(keys) == sorted(f"t{i}#0" for i in range(n))  # one record per item
    failed = sum(r["error"] is not None for r in rows)
    # P(3 faults in a row) = 0.2^3 = 0.8%: a few items keep an error, within 5%
    assert failed <= 0.05 * n
    assert result.status == ("ok" if failed == 0 or failed / n <= 0.05 else "failed")
    calls = _manifest(result.run_dir)["usage"]
    assert calls[0]["errors"] == failed and calls[0]["calls"] == n
    print(f"chaos: {loopback.count} requests for {n} items, injected {loopback.chaos.injected}, "
          f"{failed} items still failed after 2 retries")  # fmt: skip


# imports once, then for each line on stdin forks a study process (the study's run(), as the
# notebook's kernel runs it), prints its pid, reaps it when it dies and prints "ended"
_STUDIES = """
import os, sys
from evalbench import gaia
from evalbench.studies import open_run
for _ in sys.stdin:
    pid = os.fork()
    if pid == 0:
        gaia.run(open_run(sys.argv[1]))
        os._exit(0)
    print(pid, flush=True)
    os.waitpid(pid, 0)
    print("ended", flush=True)
"""


@pytest.mark.slow
def test_kill_9_at_five_random_moments_then_rerun(tmp_path, loopback):
    """A study process (the study's run() without the notebook: the same Run, records and
    client) is killed with SIGKILL at 5 random moments while it asks; each time the server
    may have seen at most the requests in flight then. The final rerun completes. The five
    are forked from one process that imported evalbench once (~1.5 s CPU each otherwise)."""
    import random

    rng = random.Random(11)
    n, concurrency = 100, 3
    loopback.latency = 0.2  # 15 answers/s: five kills cannot finish the study
    path = _study(tmp_path, loopback, n=n, max_concurrency=concurrency)
    recorded, bound = 0, 0
    studies = subprocess.Popen([sys.executable, "-c", _STUDIES, str(path)], text=True,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               start_new_session=True, env={**os.environ, KEY_ENV: CANARY_KEY})  # fmt: skip
    try:
        for _ in range(5):
            before = loopback.count
            studies.stdin.write("go\n")
            studies.stdin.flush()
            pid = int(studies.stdout.readline())
            deadline = time.monotonic() + 60
            while loopback.count == before and time.monotonic() < deadline:
                time.sleep(0.01)  # it is asking
            time.sleep(rng.uniform(0.25, 0.8))  # at least one answer back
            os.kill(pid, signal.SIGKILL)
            assert studies.stdout.readline() == "ended\n"  # dead and reaped
            bound += concurrency  # at most this many were in flight at the kill
            run_dir = _run_dir("gaia_test")
            now = len(_responses(run_dir))
            assert now > recorded  # progress every time, nothing lost
            assert loopback.count <= now + bound  # only what was in flight was paid twice
            recorded = now
    finally:
        os.killpg(studies.pid, signal.SIGKILL)  # and a study still asking, after a failure
        studies.wait(30)
        studies.stdin.close()
        studies.stdout.close()
    loopback.latency = 0.0  # the rerun only has to finish
    result = run_study(path, warm=True)
    assert result.status == "ok", result.reason
    keys = [r["key"] for r in _responses(result.run_dir)]
    assert sorted(keys) == sorted(f"t{i}#0" for i in range(n))
    assert loopback.count <= n + bound


def test_a_full_disk_names_the_file_and_its_variable_other_errors_stay_errors(
    tmp_path, monkeypatch
):
    import errno

    from evalbench import publish
    from evalbench.publish import OutputsUnwritable

    path = gaia_params(tmp_path, gaia_dataset(tmp_path, ["1"]), [{"name": "s"}])
    cache_file = get_settings().cache_dir / "responses.sqlite"
    full = f"OSError: [Errno 28] No space left on device: '{cache_file}'"  # in the kernel
    monkeypatch.setattr(publish, "_attempt", lambda *a: ("failed", full))
    with pytest.raises(OutputsUnwritable) as err:
        run_study(path)
    assert str(err.value) == (f"cannot write to {cache_file} (No space left on device); set "
                              "EVALBENCH_CACHE to a writable folder or free some disk space")  # fmt: skip

    def lost(*args):
        raise FileNotFoundError(errno.ENOENT, "No such file or directory", "report.attempt.html")

    monkeypatch.setattr(publish, "_attempt", lambda *a: ("ok", ""))
    monkeypatch.setattr(publish, "_end", lost)  # not a write refused: a bug to see, not a disk
    with pytest.raises(FileNotFoundError):
        run_study(path)


def test_report_of_only_broken_files_before_any_run_is_one_line_each_not_a_traceback(
    tmp_path, capsys
):
    # a first `evalbench report` whose every file fails to load: the outputs folder did not
    # exist yet, and the index's scorecard listed it (FileNotFoundError, a traceback)
    bad = tmp_path / "bad.yaml"
    bad.write_text("study: [\n")
    assert not get_settings().outputs_dir.exists()
    assert main(["report", str(bad), str(tmp_path / "missing.yaml")]) == 1
    out = capsys.readouterr().out
    assert "YAML syntax error" in out and "params file not found" in out
    assert "no results yet" in (get_settings().outputs_dir / "index.html").read_text()
