"""The embedded shared store: one SQLite file in WAL mode, safe across threads and processes (`make serve`)."""
from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from function.cache.base import Entry, Result, chunks
from function.cache.codec import decode_result, encode_result
from function.cache.stats import StoreStats

log = logging.getLogger(__name__)

BUSY_TIMEOUT_MS = 2000  # the longest a request waits for another writer before it gives up on the cache
KEYS_PER_QUERY = 500  # below SQLite's bound-parameter limit on every build
SETUP_ATTEMPTS = 5  # opening a fresh file from racing connections; the pauses add up to 0.5 s at most
SETUP_PAUSE_SECONDS = 0.05
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


class SqliteResultStore:
    """Results in one SQLite file. One connection per thread and process; any SQLite error is a miss."""

    def __init__(self, path: Path | str, ttl_seconds: float, clock: Callable[[], float] = time.time) -> None:
        self.path = Path(path)
        self.ttl_seconds = ttl_seconds
        self.stats = StoreStats()
        self._clock = clock
        self._local = threading.local()
        self._setup_lock = threading.Lock()
        self._writes_since_purge = 0

    def _connection(self) -> sqlite3.Connection:
        # A connection must not cross fork(): remember which process opened it.
        cached = getattr(self._local, "connection", None)
        if cached is not None and cached[0] == os.getpid():
            return cached[1]
        with self._setup_lock:
            connection = self._open()
        self._local.connection = (os.getpid(), connection)
        return connection

    def _open(self) -> sqlite3.Connection:
        """On a fresh file, connections racing to set it up can get "database is locked" at once (SQLite's
        deadlock avoidance skips the busy wait), so setting up is retried a few times."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        for attempt in range(1, SETUP_ATTEMPTS):
            try:
                return self._open_once()
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) and "busy" not in str(error):
                    raise  # a path that cannot be opened will not open on a retry either
                time.sleep(SETUP_PAUSE_SECONDS * attempt)
        return self._open_once()

    def _open_once(self) -> sqlite3.Connection:
        connection = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        try:
            connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            mode = connection.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise sqlite3.OperationalError(f"journal_mode stayed {mode}: database is locked")
            connection.execute("PRAGMA synchronous = NORMAL")
            connection.executescript(f"BEGIN IMMEDIATE; {SCHEMA} COMMIT;")
        except sqlite3.Error:
            connection.close()
            raise
        return connection

    def get_many(self, keys: Sequence[str]) -> dict[str, Result]:
        return {key: entry.result for key, entry in self.get_entries(keys).items()}

    def get_entries(self, keys: Sequence[str]) -> dict[str, Entry]:
        wanted = list(dict.fromkeys(keys))
        found: dict[str, Entry] = {}
        now = self._clock()
        try:
            connection = self._connection()
            for chunk in chunks(wanted, KEYS_PER_QUERY):
                rows = connection.execute(
                    "SELECT result_key, result, checksum, expires_at FROM results"
                    f" WHERE result_key IN ({','.join('?' * len(chunk))})",
                    chunk,
                ).fetchall()
                for key, text, checksum, expires_at in rows:
                    if not isinstance(expires_at, (int, float)) or expires_at <= now:
                        self.stats.add("expired")
                        continue
                    result = decode_result(text, checksum)
                    if result is None:
                        log.warning("result cache: sqlite row %s is corrupt, ignored", key[:12])
                        self.stats.add("corrupt")
                        continue
                    found[key] = Entry(result, float(expires_at))
        except (sqlite3.Error, OSError) as error:
            log.warning("result cache: sqlite read failed (%s), treating %d keys as misses", error, len(wanted))
            self.stats.add("errors")
        self.stats.add("hits", len(found))
        self.stats.add("misses", len(wanted) - len(found))
        return found

    def put_many(self, results: Mapping[str, Result], model_version: str = "") -> None:
        now = self._clock()
        rows = []
        for key, result in results.items():
            try:
                text, checksum = encode_result(result)
            except (TypeError, ValueError) as error:
                log.warning("result cache: result for %s is not JSON, not stored: %s", key[:12], error)
                self.stats.add("errors")
                continue
            rows.append((key, text, checksum, model_version, now, now + self.ttl_seconds))
        if not rows:
            return
        try:
            connection = self._connection()
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
        except (sqlite3.Error, OSError) as error:
            log.warning("result cache: sqlite write of %d results failed: %s", len(rows), error)
            self.stats.add("errors")
            return
        self.stats.add("writes", len(rows))

    def close(self) -> None:
        """Close this thread's connection (tests, shutdown); other threads' close when they end."""
        cached = getattr(self._local, "connection", None)
        if cached is not None:
            cached[1].close()
            self._local.connection = None
