"""A response cache that fails mid-run (a full disk) leaves the study going on without it:
the run says so where it is read (its status line, its manifest's notes), not only on a
kernel's stderr, which ``make report`` does not show."""

from __future__ import annotations

import sqlite3

from studyfiles import CANARY_KEY, KEY_ENV, gaia_dataset, gaia_params, openai_system

from evalbench import gaia
from evalbench.publish import measured_verdict
from evalbench.runs import read_manifest
from evalbench.studies import open_run


def test_a_cache_that_failed_is_a_note_of_the_run(tmp_path, loopback, monkeypatch):
    # Before: the run ended ok with no note; a replay of it (no key) then failed on
    # every call although the run said nothing was wrong.
    monkeypatch.setenv(KEY_ENV, CANARY_KEY)
    path = gaia_params(tmp_path, gaia_dataset(tmp_path, ["4", "5"]), [openai_system(loopback)])
    run = open_run(path)
    run.cache._break(sqlite3.OperationalError("database or disk is full"))  # as ENOSPC does
    run.finish(gaia.run(run))
    note = (
        f"the response cache {run.cache.path} failed (database or disk is full): this run's "
        "answers are in its records but not in the cache, so a replay of it would ask again"
    )
    manifest = read_manifest(run.dir)
    assert manifest["notes"][-1] == note
    assert measured_verdict(("ok", ""), manifest) == ("ok", note)  # its status line


def test_a_run_whose_cache_worked_has_no_such_note(tmp_path, loopback, monkeypatch):
    monkeypatch.setenv(KEY_ENV, CANARY_KEY)
    path = gaia_params(tmp_path, gaia_dataset(tmp_path, ["4"]), [openai_system(loopback)])
    run = open_run(path)
    run.finish(gaia.run(run))
    manifest = read_manifest(run.dir)
    assert not any("response cache" in note for note in manifest["notes"])
    assert measured_verdict(("ok", ""), manifest) == ("ok", "")
