"""Run folders and resumable model calls (Run.ask): what a rerun asks again, and what not."""

from __future__ import annotations

import json
import os

import pytest
import yaml
from loopback import Fault

from evalbench.kernels import KERNEL_ARGS
from evalbench.models import ChatRequest, Job, ModelSpec, SimReply, SimTask
from evalbench.records import read_jsonl
from evalbench.runs import run_dir_for
from evalbench.studies import open_run


def _study(tmp_path, **extra):
    path = tmp_path / "runs_test.yaml"
    data = {"study": "gaia", "title": "t", "systems": [{"name": "s", "provider": "sim"}], **extra}
    path.write_text(yaml.safe_dump(data))
    return path


def _echo(request, knobs, rng):
    return SimReply("answer")


def _jobs(n, sim=True):
    return [
        Job(
            f"k{i}",
            ChatRequest(messages=[{"role": "user", "content": f"q{i}"}]),
            SimTask(_echo, f"k{i}") if sim else None,
        )
        for i in range(n)
    ]


def test_the_run_folder_is_a_function_of_the_params(tmp_path):
    path = _study(tmp_path)
    first, again, other = open_run(path), open_run(path), open_run(path, ["seed=3"])
    assert first.dir == again.dir == run_dir_for(path, first.params)
    assert other.dir != first.dir and other.dir.parent == first.dir.parent
    manifest = json.loads((first.dir / "manifest.json").read_text())
    assert manifest["status"] == "running" and manifest["params_hash"] == first.run_id
    assert yaml.safe_load((first.dir / "params.yaml").read_text())["seed"] == 0


def test_a_rerun_asks_again_exactly_the_failed_jobs(tmp_path):
    # The sim fails the same items again (it is deterministic): 40 - failed answers are
    # read back, every failed job is asked once more.
    spec = ModelSpec(name="flaky", provider="sim", sim={"error_rate": 0.5})
    run = open_run(_study(tmp_path))
    answers = run.ask(spec, _jobs(40), progress=False)
    failed = sum(a.error is not None for a in answers.values())
    assert 0 < failed < 40 and run.ledger.frame().iloc[0]["calls"] == 40
    rerun = open_run(_study(tmp_path))
    again = rerun.ask(spec, _jobs(40), progress=False)

    def outcomes(records):  # a failed call's latency is its own: how long it took to fail
        return {k: r.model_copy(update={"latency_s": 0.0}) for k, r in records.items()}

    assert outcomes(again) == outcomes(answers)  # the same outcomes
    assert rerun.ledger.frame().iloc[0]["calls"] == failed  # only the failed ones re-asked
    rows = read_jsonl(run.dir / "records" / "responses.jsonl")
    assert len(rows) == 40 and len({r["key"] for r in rows}) == 40


def test_a_rerun_retries_every_failed_call_once_each(tmp_path, loopback, monkeypatch):
    # k0 failed with a 500 (transient), k1 with a 401 (a wrong key: permanent). After the
    # cause is fixed, one rerun asks exactly those two again; the two answers stay.
    monkeypatch.setenv("EVALBENCH_LOOP_KEY", "k")
    spec = ModelSpec(name="loop", provider="openai", model="m", base_url=loopback.base_url,
                     api_key_env="EVALBENCH_LOOP_KEY", max_retries=0, max_concurrency=1)  # fmt: skip
    loopback.enqueue(Fault("500"), Fault("401"))
    run = open_run(_study(tmp_path))
    first = run.ask(spec, _jobs(4, sim=False), progress=False)
    assert first["k0"].error.startswith("http_500") and first["k1"].error.startswith("http_401")
    again = open_run(_study(tmp_path)).ask(spec, _jobs(4, sim=False), progress=False)
    assert again["k0"].text == "echo: q0" and again["k1"].text == "echo: q1"
    assert loopback.count == 4 + 2
    keys = [r["key"] for r in read_jsonl(run.dir / "records" / "responses.jsonl")]
    assert sorted(keys) == ["k0", "k1", "k2", "k3"]
    open_run(_study(tmp_path)).ask(spec, _jobs(4, sim=False), progress=False)
    assert loopback.count == 6  # all answered: nothing asked again


def test_a_changed_request_makes_its_stored_answer_stale(tmp_path):
    spec = ModelSpec(name="s", provider="sim")
    run = open_run(_study(tmp_path))
    run.ask(spec, _jobs(5), progress=False)
    edited = _jobs(5)
    edited[2] = Job(
        "k2",
        ChatRequest(messages=[{"role": "user", "content": "q2, edited"}]),
        SimTask(_echo, "k2"),
    )
    rerun = open_run(_study(tmp_path))
    rerun.ask(spec, edited, progress=False)
    assert rerun.ledger.frame().iloc[0]["calls"] == 1  # only the edited item was asked again
    rows = read_jsonl(run.dir / "records" / "responses.jsonl")
    assert sorted(r["key"] for r in rows) == [f"k{i}" for i in range(5)]  # still one record each


def test_recorded_usage_sums_every_session_and_prices_paid_calls(tmp_path, loopback, monkeypatch):
    monkeypatch.setenv("EVALBENCH_LOOP_KEY", "k")
    from loopback import Reply

    spec = ModelSpec(name="loop", provider="openai", model="m", base_url=loopback.base_url,
                     api_key_env="EVALBENCH_LOOP_KEY", max_concurrency=1,
                     price_input_per_mtok=2.0, price_output_per_mtok=8.0)  # fmt: skip
    loopback.enqueue(*[Reply(text="a", prompt_tokens=1000, completion_tokens=500)] * 3)
    run = open_run(_study(tmp_path))
    run.ask(spec, _jobs(2, sim=False), progress=False)  # session 1: two paid calls
    rerun = open_run(_study(tmp_path, title="other title"))  # a new run folder, same cache
    rerun.ask(spec, _jobs(3, sim=False), progress=False)  # two cache hits, one paid call
    usage = rerun.recorded_usage().iloc[0]
    assert (usage["calls"], usage["cached"], usage["errors"]) == (3, 2, 0)
    assert usage["prompt_tokens"] == 3 * 1000 and usage["completion_tokens"] == 3 * 500
    assert usage["cost_usd"] == pytest.approx(
        1 * (1000 * 2.0 + 500 * 8.0) / 1e6
    )  # only k2 was paid


_ASK_IN_A_KERNEL = """
import os
from evalbench.models import ChatRequest, Job, ModelSpec
from evalbench.studies import open_run

def fds():
    return len(os.listdir("/proc/self/fd"))

run = open_run({params!r})
jobs = [Job("k", ChatRequest(messages=[{{"role": "user", "content": "q"}}]))]
run.ask(ModelSpec(name="warm-up"), jobs)  # what the first call opens once (cache, loop ...)
before = fds()
for i in range({n}):
    run.ask(ModelSpec(name=f"s{{i}}"), jobs)  # progress bars on, as `evalbench run` shows them
print("growth", fds() - before)
"""


@pytest.mark.slow
def test_run_ask_opens_no_file_descriptor_per_call_in_a_notebook_kernel(tmp_path):
    """A study asks once per system; in a notebook kernel each call used to leave a file
    descriptor behind (ipykernel opens one per thread that writes output, and every call ran
    on a new thread), so ~1,000 systems ended in "Too many open files"."""
    from jupyter_client.manager import KernelManager

    n = 150
    code = _ASK_IN_A_KERNEL.format(params=str(_study(tmp_path)), n=n)
    km = KernelManager(kernel_name="python3")
    km.start_kernel(cwd=str(tmp_path), env={**os.environ, "EVALBENCH_PROGRESS": "text"},
                    extra_arguments=KERNEL_ARGS)  # fmt: skip
    client = km.client()
    client.start_channels()
    out: list[str] = []

    def collect(msg):
        if msg["msg_type"] == "stream" and msg["content"]["name"] == "stdout":
            out.append(msg["content"]["text"])
        elif msg["msg_type"] == "error":
            out.append("\n".join(msg["content"]["traceback"]))

    try:
        client.wait_for_ready(timeout=60)
        client.execute_interactive(code, timeout=120, output_hook=collect)
    finally:
        client.stop_channels()
        km.shutdown_kernel(now=True)
    growth = [line for line in "".join(out).splitlines() if line.startswith("growth")]
    assert growth == ["growth 0"], "".join(out)[-2000:]  # was "growth 150": one per call


def _abandoned(tmp_path, status):
    """A run folder as `kill -9` leaves it: the manifest says ``status``, no process holds it."""
    from evalbench.runs import update_manifest

    run_dir = tmp_path / "outputs" / "study" / "abc123"
    update_manifest(run_dir, study="study", status=status, started_at="2025-01-01T00:00:00")
    return run_dir


@pytest.mark.parametrize("status", ["running", "executed"])
def test_an_abandoned_run_is_interrupted_for_every_reader_and_in_its_manifest(tmp_path, status):
    from evalbench.history.runs import study_runs
    from evalbench.index import collect_runs
    from evalbench.runs import current_manifest

    run_dir = _abandoned(tmp_path, status)
    assert current_manifest(run_dir)["status"] == "interrupted"
    on_disk = json.loads((run_dir / "manifest.json").read_text())
    assert on_disk["status"] == "interrupted" and on_disk["reason"]  # the file says so too
    assert [m["status"] for m in collect_runs(tmp_path / "outputs")] == ["interrupted"]
    assert [m["status"] for m in study_runs("study", tmp_path / "outputs")] == ["interrupted"]


def test_a_run_whose_lock_is_held_stays_running(tmp_path):
    from filelock import FileLock

    from evalbench.runs import current_manifest

    run_dir = _abandoned(tmp_path, "running")
    holder = FileLock(run_dir / ".lock", timeout=0)  # another process, as flock sees it
    holder.acquire()
    try:
        assert current_manifest(run_dir)["status"] == "running"
        assert json.loads((run_dir / "manifest.json").read_text())["status"] == "running"
    finally:
        holder.release()
    assert current_manifest(run_dir)["status"] == "interrupted"  # once it lets go


def test_an_unreadable_manifest_is_a_failed_run_saying_why(tmp_path):
    from evalbench.runs import current_manifest

    run_dir = _abandoned(tmp_path, "running")
    (run_dir / "manifest.json").write_text('{"status": "runn')
    found = current_manifest(run_dir)
    assert found["status"] == "failed" and "unreadable manifest" in found["reason"]


def test_taking_a_run_folder_sweeps_the_temp_files_a_killed_writer_left(tmp_path):
    from evalbench.runs import lock_run, release_run

    run_dir = tmp_path / "run"
    (run_dir / "records").mkdir(parents=True)
    left = [run_dir / ".manifest.json.123-abc.tmp", run_dir / "records" / ".x.jsonl.9-f.tmp"]
    for path in left:
        path.write_text("half a wri")  # kill -9 between write and rename
    (run_dir / "keep.tmp").write_text("not ours")
    lock_run(run_dir)
    try:
        assert not any(p.exists() for p in left) and (run_dir / "keep.tmp").exists()
    finally:
        release_run(run_dir)


def test_the_git_revision_never_writes_the_checkouts_index(tmp_path):
    # `git status` refreshes a stale index and writes it under .git/index.lock: killed
    # meanwhile (evalbench killed with -9 takes its children along) it leaves the lock and
    # the user's next git command fails ("Another git process seems to be running")
    import subprocess

    from evalbench.runs import git_revision

    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    (repo / "f.txt").write_text("a\n")
    for args in (["init", "-q"], ["add", "f.txt"], ["commit", "-qm", "one"]):
        subprocess.run([*git, *args], check=True, capture_output=True)
    os.utime(repo / "f.txt", (2_000_000_000, 2_000_000_000))  # same bytes, newer stat: stale
    index = (repo / ".git" / "index").read_bytes()
    found = git_revision(repo)
    assert found["dirty"] is False and len(found["commit"]) == 40
    assert (repo / ".git" / "index").read_bytes() == index, "evalbench rewrote the git index"
