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
        self.path.parent.mkdir(parents=True, exist_ok=True)
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
        """Entries per system and the file size."""
        self.flush()
        with self._write_lock:
            rows = self._conn.execute(
                "SELECT system, COUNT(*) FROM responses GROUP BY system ORDER BY system"
            ).fetchall()
        size = sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "*"))
        return {"path": str(self.path), "bytes": size, "entries": dict(rows)}

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


def _connect(path: Path) -> sqlite3.Connection:
    """Open (or create) the cache database and check that it is one.

    Raises:
        sqlite3.DatabaseError: the file is not a readable SQLite database.
    """
    conn = sqlite3.connect(path, timeout=60, check_same_thread=False)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA busy_timeout=60000")
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
