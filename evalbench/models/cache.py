"""Persistent response cache: SQLite in WAL mode, keyed by a canonical request hash.

WAL lets several notebook kernels read while one writes; ``busy_timeout`` makes a writer
wait for another instead of failing. The key covers everything that changes the answer
(provider, base URL, model, messages, generation settings, tools) and never the API key.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import sqlite3
import sys
import threading
import time
import weakref
from pathlib import Path
from typing import Any

from evalbench.models import local
from evalbench.models.types import ChatRequest, ChatResponse, ModelSpec, SimTask
from evalbench.records import OutputsUnwritable

BUSY_TIMEOUT_S = 60.0
"""How long opening the cache waits for another process's lock (then: in use)."""
# SQLite's primary result codes (sqlite.org/rescode.html; typeshed lists few of them)
_IN_USE = {5, 6}  # SQLITE_BUSY, SQLITE_LOCKED
# errors of the disk, the folder or the process, not of the file (never moved aside):
# SQLITE_PERM, _NOMEM, _READONLY, _IOERR, _FULL, _CANTOPEN, _AUTH
_NOT_ITS_FAULT = {3, 7, 8, 10, 13, 14, 23}

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    system TEXT NOT NULL,
    value TEXT NOT NULL,
    created REAL NOT NULL
)
"""


class CacheMiss(RuntimeError):
    """Replay mode asked for a response that is not in the cache."""


class CacheUnavailable(OutputsUnwritable):
    """The response cache cannot be opened, and its file is not to blame: another process
    holds it, its folder is a file or cannot be made, it is a folder, the disk refuses.
    One line (``evalbench`` exits 2); nothing is moved aside."""


def canonical_json(value: Any) -> str:
    """Deterministic JSON (sorted keys, no spaces) used for hashing."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def cache_key(
    spec: ModelSpec,
    request: ChatRequest,
    *,
    base_url: str | None,
    sim: SimTask | None = None,
    sim_seed: int | None = None,
) -> str:
    """sha256 of everything that determines a response (never the API key).

    Args:
        spec: the system; its provider, model and generation settings enter the key (a
            local model's :func:`evalbench.models.local.fingerprint` too: its file's sha256,
            engine and version, chat format, context size).
        request: the request, with ``None`` fields resolved from ``spec`` by the caller.
        base_url: the resolved endpoint URL (a value, not a secret).
        sim: for simulated systems, the item key and hidden truth also enter the key.
        sim_seed: the seed the simulation uses.
    """
    payload: dict[str, Any] = {
        "provider": spec.provider,
        "base_url": base_url,
        "model": spec.model,
        "request": request.model_dump(mode="json"),
    }
    # Request-shaping fields added later: the spec's dump leaves them out at their defaults,
    # so keys of requests that do not use them stay what they always were.
    payload.update(spec.model_dump(mode="json", include={"max_tokens_field", "extra_body"}))
    if spec.local is not None:  # its server's port changes every start; its model does not
        payload["local"] = local.fingerprint(spec)
    if spec.simulated:
        payload["sim"] = {
            "system": spec.name,
            "knobs": spec.sim.model_dump(mode="json"),
            "seed": sim_seed,
            "key": sim.key if sim else None,
            "truth": sim.truth if sim else None,
        }
    return hashlib.sha256(canonical_json(payload).encode()).hexdigest()


class ResponseCache:
    """A SQLite file of successful responses.

    Writes are grouped and made by a writer thread: :meth:`put` only queues (a response is
    visible to :meth:`get` at once), and the thread commits every ``batch`` responses or
    ``max_delay_s`` seconds; :meth:`flush` (at the end of every batch of calls, and at exit)
    commits what is left before it returns. So the event loop never waits for SQLite: a
    commit, a WAL checkpoint, or another kernel holding the write lock (up to
    ``busy_timeout``) stalled every request in flight (``make bench``: 78% → 83% of ideal at
    256 in flight). A crash loses at most the uncommitted group; a study's own records are
    written per response, so a resumed study re-pays nothing it recorded.

    Args:
        path: the database file (created with its folder).
        batch: responses per commit.
        max_delay_s: longest time a response waits for its commit.
    """

    IDLE_S = 5.0
    """The writer thread ends after this long with nothing to write (started again by the
    next write)."""

    def __init__(self, path: Path | str, *, batch: int = 64, max_delay_s: float = 1.0):
        self.path = Path(path)
        _check_place(self.path)
        self._lock = threading.Lock()  # the queue and the writer's state
        self._write_lock = threading.Lock()  # one commit at a time, on the write connection
        self._read_lock = threading.Lock()  # the read connection
        self._pending: dict[str, tuple[str, str, str, float]] = {}
        self._batch, self._max_delay, self._last_commit = batch, max_delay_s, time.monotonic()
        self._wake = threading.Event()
        self._writer: threading.Thread | None = None
        self._closed = False
        self.broken: str | None = None
        """Why the cache stopped working mid-run (then it is bypassed), else ``None``."""
        try:
            self._conn = _connect(self.path)
        except sqlite3.DatabaseError as exc:
            _refuse_unless_damaged(self.path, exc)
            aside = move_aside(self.path)
            _warn(f"the response cache {self.path} is unreadable ({exc}); moved it to "
                  f"{aside.name} and started a fresh one")  # fmt: skip
            self._conn = _connect(self.path)
        # reads get their own connection: a read never queues behind a commit
        self._read = _connect(self.path)
        _OPEN.add(self)

    def get(self, key: str) -> ChatResponse | None:
        """The cached response for ``key``, or ``None`` (also when the cache is broken)."""
        with self._lock:
            pending = self._pending.get(key)
        if pending:
            return ChatResponse.model_validate_json(pending[2])
        if self.broken:
            return None
        try:
            with self._read_lock:
                row = self._read.execute(
                    "SELECT value FROM responses WHERE key=?", (key,)
                ).fetchone()
        except sqlite3.DatabaseError as exc:
            self._break(exc)
            return None
        return ChatResponse.model_validate_json(row[0]) if row else None

    def put(self, key: str, response: ChatResponse) -> None:
        """Queue a successful response for storing (errors are never cached)."""
        if not response.ok or self.broken:
            return
        value = response.model_dump_json(exclude={"cached", "attempts"})
        with self._lock:
            self._pending[key] = (key, response.system, value, time.time())
            if self._writer is None and not self._closed:
                self._writer = threading.Thread(
                    target=self._write_loop, name=f"evalbench-cache {self.path}", daemon=True
                )
                self._writer.start()
            if len(self._pending) >= self._batch:
                self._wake.set()

    def _write_loop(self) -> None:
        """The writer thread: commit when a group is full or ``max_delay_s`` has passed."""
        idle_since = time.monotonic()
        while True:
            woken = self._wake.wait(self._max_delay)
            self._wake.clear()
            with self._lock:
                if self._closed:
                    self._writer = None
                    return
                waiting = len(self._pending)
                due = time.monotonic() - self._last_commit >= self._max_delay
                if not waiting and time.monotonic() - idle_since >= self.IDLE_S:
                    self._writer = None  # the next put() starts another
                    return
            if waiting and (woken or due):
                self._commit()
                idle_since = time.monotonic()

    def _break(self, exc: sqlite3.DatabaseError) -> None:
        """Stop using the cache for this process: the study goes on (its records hold every
        answer already received), and the next run moves a corrupt file aside."""
        if not self.broken:
            self.broken = str(exc)
            _warn(f"the response cache {self.path} failed ({exc}); this run continues "
                  "without it")  # fmt: skip

    def flush(self) -> None:
        """Commit every queued response now (on the caller's thread)."""
        self._commit()

    def _commit(self) -> None:
        with self._write_lock:
            with self._lock:
                group = dict(self._pending)
            if group and not self.broken:
                try:
                    self._conn.executemany(
                        "INSERT OR REPLACE INTO responses(key, system, value, created) "
                        "VALUES (?,?,?,?)",
                        list(group.values()),
                    )
                    self._conn.commit()
                except sqlite3.DatabaseError as exc:
                    self._break(exc)
            with self._lock:  # drop what was written (not a newer answer to the same key)
                for key, row in group.items():
                    if self._pending.get(key) is row:
                        del self._pending[key]
                self._last_commit = time.monotonic()

    def stats(self) -> dict[str, Any]:
        """Entries per system (names with bytes that are not UTF-8 decoded with U+FFFD) and
        the size of the database with its WAL and shared-memory files (not the copies moved
        aside: :func:`corrupt_copies`)."""
        self.flush()
        with self._write_lock:
            rows = self._conn.execute(
                "SELECT CAST(system AS BLOB), COUNT(*) FROM responses GROUP BY system "
                "ORDER BY system"
            ).fetchall()
        entries: dict[str, int] = {}
        for system, count in rows:
            name = bytes(system).decode("utf-8", "replace")
            entries[name] = entries.get(name, 0) + count
        parts = [self.path.with_name(self.path.name + s) for s in ("", "-wal", "-shm")]
        size = sum(p.stat().st_size for p in parts if p.is_file())
        return {"path": str(self.path), "bytes": size, "entries": entries}

    def clear(self, system: str | None = None) -> int:
        """Delete all entries (or one system's); returns how many were deleted."""
        self.flush()
        with self._write_lock:
            if system is None:
                cur = self._conn.execute("DELETE FROM responses")
            else:
                cur = self._conn.execute("DELETE FROM responses WHERE system=?", (system,))
            self._conn.commit()
        return cur.rowcount

    def close(self) -> None:
        """Commit what is queued, stop the writer thread and close the connections."""
        with self._lock:
            self._closed = True
            writer = self._writer
        self._wake.set()
        if writer is not None and writer is not threading.current_thread():
            writer.join()
        self.flush()
        with self._write_lock, self._read_lock:
            self._conn.close()
            self._read.close()
        _OPEN.discard(self)


def _check_place(path: Path) -> None:
    """Make the cache's folder; refuse a folder where the file goes.

    Raises:
        CacheUnavailable: one line naming the path and what is wrong there.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise CacheUnavailable(f"the response cache folder {path.parent} is a file; set "
                               "EVALBENCH_CACHE to a folder") from None  # fmt: skip
    except OSError as exc:
        raise CacheUnavailable(f"the response cache folder {path.parent} cannot be made "
                               f"({exc.strerror or exc}); set EVALBENCH_CACHE to a writable "
                               "folder") from None  # fmt: skip
    if path.is_dir():
        raise CacheUnavailable(f"the response cache {path} is a folder, not a database; move "
                               "it away (or set EVALBENCH_CACHE to another folder)")  # fmt: skip


def _refuse_unless_damaged(path: Path, exc: sqlite3.DatabaseError) -> None:
    """Return when the file itself is damaged (not a database, malformed, another schema):
    then it is moved aside. A lock held by another process, or a disk or folder that
    refuses, is no damage: the file stays where it is.

    Raises:
        CacheUnavailable: one line saying why the cache cannot be used now.
    """
    code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
    if code in _IN_USE:
        raise CacheUnavailable(
            f"the response cache {path} is in use by another process ({exc}) for over "
            f"{BUSY_TIMEOUT_S:g} s; run again when it is done (it was left as it is)"
        ) from None
    if code in _NOT_ITS_FAULT:
        raise CacheUnavailable(f"the response cache {path} cannot be opened ({exc}); set "
                               "EVALBENCH_CACHE to a writable folder") from None  # fmt: skip


def _connect(path: Path) -> sqlite3.Connection:
    """Open (or create) the cache database and check that it is one.

    Raises:
        sqlite3.DatabaseError: the file is not a readable SQLite database.
    """
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, check_same_thread=False)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
        conn.execute(_SCHEMA)
        conn.execute("SELECT key FROM responses LIMIT 1").fetchall()
        conn.commit()
    except sqlite3.DatabaseError:
        conn.close()
        raise
    return conn


def move_aside(path: Path) -> Path:
    """Rename a broken database (and its WAL/SHM files) to ``<name>.corrupt-<UTC time>``."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    aside = path.with_name(f"{path.name}.corrupt-{stamp}")
    for suffix in ("", "-wal", "-shm"):
        part = path.with_name(path.name + suffix)
        if part.exists():
            part.replace(aside.with_name(aside.name + suffix))
    return aside


def corrupt_copies(path: Path) -> list[Path]:
    """Files :func:`move_aside` left next to ``path``."""
    return sorted(path.parent.glob(f"{path.name}.corrupt-*"))


def _warn(message: str) -> None:
    print(f"evalbench: {message}", file=sys.stderr, flush=True)


_OPEN: weakref.WeakSet[ResponseCache] = weakref.WeakSet()


@atexit.register
def _flush_all() -> None:
    for cache in list(_OPEN):
        with contextlib.suppress(sqlite3.Error):
            cache.flush()
