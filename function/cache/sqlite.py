"""The embedded shared store: one SQLite file in WAL mode, safe across threads and processes (`make serve`)."""
from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from function.cache.base import BaseResultStore, Record, chunks
from function.cache.breaker import CircuitBreaker

log = logging.getLogger(__name__)

# The longest one lookup or one write waits for another connection's lock (opening the file included). In WAL
# mode a lookup never waits for a writer, so a request waits at most once, twice at worst: docs/caching.md.
BUSY_TIMEOUT_MS = 500
# After any failure the file is skipped this long, so a lock another process keeps costs one wait, not one per request.
COOLDOWN_SECONDS = 10.0
SETUP_PAUSE_SECONDS = 0.02  # between attempts to set up a fresh file that racing connections have locked
KEYS_PER_QUERY = 500  # below SQLite's bound-parameter limit on every build
# Connections kept open between calls. A pool, not one per thread: the local server runs each client connection
# on a new thread, and per-thread connections (3 file descriptors each) stayed open until the garbage collector
# found them.
IDLE_CONNECTIONS = 4
# Each connection's page cache, in KiB. SQLite's default (2 MiB) fills as the file grows: with the pool that let a
# long-running server grow 8 MB; lookups by primary key touch a few pages, and the OS caches the file anyway.
PAGE_CACHE_KIB = 512
PURGE_EVERY_WRITES = 200  # expired rows are deleted now and then by writers; readers ignore them anyway

SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    result_key TEXT PRIMARY KEY,
    result TEXT NOT NULL,
    checksum TEXT NOT NULL,
    model_version TEXT NOT NULL,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS results_expires_at ON results (expires_at);
"""
SCHEMA_PRESENT = "SELECT count(*) FROM sqlite_master WHERE name IN ('results', 'results_expires_at')"


class SqliteResultStore(BaseResultStore):
    """Results in one SQLite file, through a small pool of connections; any SQLite error is a miss.

    A durable file (the local server's) is flushed at WAL checkpoints (synchronous NORMAL: a power cut loses the last
    writes, never the file). One that is not (a Lambda container's, in the /tmp that goes with the container) is
    never flushed: setting up a fresh file alone took six fdatasyncs, 3-25 ms of a cold start's first request.
    """

    name = "sqlite"

    def __init__(self, path: Path | str, ttl_seconds: float, clock: Callable[[], float] = time.time,
                 durable: bool = True) -> None:
        super().__init__(ttl_seconds, clock)
        self.path = Path(path)
        self.durable = durable
        self._idle: list[sqlite3.Connection] = []
        self._pool_pid = os.getpid()
        self._pool_lock = threading.Lock()
        self._setup_lock = threading.Lock()
        self._writes_since_purge = 0
        self.breaker = CircuitBreaker(COOLDOWN_SECONDS)

    @contextlib.contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        """A connection for one call, used by one thread at a time; back to the pool only if the call succeeded."""
        with self._pool_lock:
            if self._pool_pid != os.getpid():  # a connection must not cross fork(): the child opens its own
                self._idle, self._pool_pid = [], os.getpid()
            connection = self._idle.pop() if self._idle else None
        if connection is None:
            with self._setup_lock:
                connection = self._open()
        try:
            yield connection
        except BaseException:
            connection.close()
            raise
        with self._pool_lock:
            if len(self._idle) < IDLE_CONNECTIONS and self._pool_pid == os.getpid():
                self._idle.append(connection)
                return
        connection.close()

    def _open(self) -> sqlite3.Connection:
        """On a fresh file, connections racing to set it up can get "database is locked" at once (SQLite's
        deadlock avoidance skips the busy wait), so setting up is retried, all within one BUSY_TIMEOUT_MS."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        while True:
            try:
                return self._open_once(deadline)
            except sqlite3.OperationalError as error:
                locked = "locked" in str(error) or "busy" in str(error)
                if not locked or time.monotonic() + SETUP_PAUSE_SECONDS >= deadline:
                    raise  # a path that cannot be opened will not open on a retry either
                time.sleep(SETUP_PAUSE_SECONDS)

    def _open_once(self, deadline: float) -> sqlite3.Connection:
        connection = sqlite3.connect(self.path, timeout=max(0.001, deadline - time.monotonic()), isolation_level=None,
                                     check_same_thread=False)  # pooled: one thread at a time, not always the same
        try:
            if not self.durable:  # first, so that setting up the fresh file does not flush it either
                connection.execute("PRAGMA synchronous = OFF")
            mode = connection.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise sqlite3.OperationalError(f"journal_mode stayed {mode}: database is locked")
            if self.durable:
                connection.execute("PRAGMA synchronous = NORMAL")
            connection.execute(f"PRAGMA cache_size = -{PAGE_CACHE_KIB}")
            # Only a fresh file needs the write lock: an open while another process writes must not wait for it.
            if connection.execute(SCHEMA_PRESENT).fetchone()[0] < 2:
                connection.executescript(f"BEGIN IMMEDIATE; {SCHEMA} COMMIT;")
            connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        except sqlite3.Error:
            connection.close()
            raise
        return connection

    def _fail(self, what: str, error: Exception) -> None:
        log.warning("result cache: sqlite %s failed (%s); skipping the file for %.0f s", what, error,
                    self.breaker.cooldown_seconds)
        self.stats.add("errors")
        self.breaker.trip()

    def _get_records(self, keys: list[str]) -> list[tuple[str, Record]]:
        if not self.breaker.allows():
            self.stats.add("skipped", len(keys))
            return []
        found: list[tuple[str, Record]] = []
        try:
            with self._connection() as connection:
                for chunk in chunks(keys, KEYS_PER_QUERY):
                    found += ((key, Record(text, checksum, expires_at)) for key, text, checksum, expires_at in
                              connection.execute("SELECT result_key, result, checksum, expires_at FROM results"
                                                 f" WHERE result_key IN ({','.join('?' * len(chunk))})", chunk))
        except (sqlite3.Error, OSError) as error:
            self._fail(f"read of {len(keys)} keys", error)
        return found

    def _put_records(self, records: Mapping[str, Record]) -> int:
        if not self.breaker.allows():
            self.stats.add("skipped", len(records))
            return 0
        rows = [(key, record.text, record.checksum, record.model_version, record.created_at, record.expires_at)
                for key, record in records.items()]
        try:
            with self._connection() as connection:
                self._insert(connection, rows, self._clock())
        except (sqlite3.Error, OSError) as error:
            self._fail(f"write of {len(rows)} results", error)
            return 0
        return len(rows)

    def _insert(self, connection: sqlite3.Connection, rows: list[tuple], now: float) -> None:
        # BEGIN IMMEDIATE takes the write lock up front: no lock upgrade, so no deadlock between processes.
        connection.execute("BEGIN IMMEDIATE")
        try:
            connection.executemany("INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?, ?)", rows)
            self._writes_since_purge += len(rows)
            if self._writes_since_purge >= PURGE_EVERY_WRITES:
                connection.execute("DELETE FROM results WHERE expires_at <= ?", (now,))
                self._writes_since_purge = 0
            connection.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                connection.execute("ROLLBACK")
            raise

    def close(self) -> None:
        """Close the idle connections (tests, shutdown); one in use closes when its call returns it."""
        with self._pool_lock:
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()
