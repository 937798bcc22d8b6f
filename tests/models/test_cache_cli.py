"""`evalbench cache` on a cache it cannot use: locked by another process, damaged text, a
path that is no cache file. One line and exit 2, never a traceback; a healthy database is
never moved aside (`cache clear` deletes what was moved aside)."""

from __future__ import annotations

import sqlite3
import time

import pytest

from evalbench.cli import main
from evalbench.models import cache as cache_module
from evalbench.models.cache import ResponseCache, corrupt_copies
from evalbench.settings import get_settings


def _one_line(capfd) -> str:
    err = capfd.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def _cache_with(rows: list[tuple[str, bytes | str]]):
    path = get_settings().cache_dir / "responses.sqlite"
    ResponseCache(path).close()
    conn = sqlite3.connect(path)
    with conn:
        conn.executemany("INSERT INTO responses VALUES (?, CAST(? AS TEXT), '{}', ?)",
                         [(key, system, time.time()) for key, system in rows])  # fmt: skip
    conn.close()  # an open connection (even idle) keeps another from its exclusive lock
    return path


def test_a_cache_another_process_holds_is_in_use_not_corrupt(capfd, monkeypatch):
    # a healthy cache behind another process's lock was "unreadable (database is locked)",
    # moved aside after a minute, and the next `cache clear` deleted it, every answer lost
    path = _cache_with([("k1", "sys")])
    monkeypatch.setattr(cache_module, "BUSY_TIMEOUT_S", 0.2)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        assert main(["cache"]) == 2
        err = _one_line(capfd)
        assert err.startswith(f"evalbench: the response cache {path} is in use by another "
                              "process (database is locked)"), err  # fmt: skip
        assert main(["cache", "clear"]) == 2
        _one_line(capfd)
    finally:
        holder.close()
    assert not corrupt_copies(path)
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT COUNT(*) FROM responses").fetchone() == (1,)
    conn.close()


def test_stats_show_names_with_bad_bytes_or_control_characters_escaped(capfd):
    _cache_with([("k1", b"sys\xff\xfe"), ("k2", "\x1b[31mRED\x1b]0;title\x07"), ("k3", "ok")])
    assert main(["cache"]) == 0
    out = capfd.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "sys\ufffd\ufffd" in out and "\\x1b[31mRED\\x1b]0;title\\x07" in out and "  ok " in out


@pytest.mark.parametrize("where", ["the cache folder is a file", "the cache file is a folder"])
def test_a_cache_path_that_is_no_cache_file_is_one_line_and_nothing_moved(
    tmp_path, capfd, monkeypatch, where
):
    if where == "the cache folder is a file":
        folder = tmp_path / "cfile"
        folder.write_text("hi\n")
        monkeypatch.setenv("EVALBENCH_CACHE", str(folder))
        name = str(folder)
    else:
        folder = get_settings().cache_dir
        (folder / "responses.sqlite").mkdir(parents=True)
        name = str(folder / "responses.sqlite")
    for argv in (["cache"], ["cache", "clear"]):
        assert main(argv) == 2
        err = _one_line(capfd)
        assert err.startswith("evalbench: ") and name in err, err
    assert folder.exists() and not list(folder.parent.glob("*corrupt*"))
    assert not list(folder.glob("*corrupt*")) if folder.is_dir() else True


def test_stats_count_the_live_cache_and_name_the_copies_moved_aside(capfd):
    path = get_settings().cache_dir / "responses.sqlite"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a database" * 100_000)  # 1.4 MB, moved aside
    assert main(["cache"]) == 0
    out = capfd.readouterr()
    (aside,) = corrupt_copies(path)
    live = sum(p.stat().st_size for p in path.parent.glob("responses.sqlite*")
               if "corrupt" not in p.name)  # fmt: skip
    assert f"response cache {path} ({live:,d} bytes)" in out.out
    assert f"1 corrupt copy moved aside ({1_400_000:,d} bytes; `evalbench cache clear` " in out.out
    (aside.parent / (aside.name + "-old")).mkdir()  # left by an older release: a folder
    assert main(["cache", "clear"]) == 0
    out = capfd.readouterr().out
    assert f"deleted the corrupt copy {aside}" in out and f"left {aside}-old: a folder" in out
