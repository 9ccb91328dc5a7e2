"""Another process holds the SQLite file's lock while a request comes in: the request is answered with computed
results, waits at most once for the lock (docs/caching.md, "Failures": +1.0 s at most), the failure is counted,
and the next requests skip the file until the cool-down ends. Run with -s to see each case's time.

The lock holder is a real second process, as another `make serve`, a test run or an open `sqlite3` shell would be.
"""
from __future__ import annotations

import subprocess
import sys
import time

import pytest

from function.cache.breaker import CircuitBreaker
from function.cache.memory import MemoryResultStore
from function.cache.sqlite import SqliteResultStore
from function.cache.tiered import TieredResultStore
from function.service import Service
from tests.support.digits_service import classify, digits_models, digits_service  # noqa: F401  (fixture)

SQLITE_BOUND_SECONDS = 1.0  # docs/caching.md: the most a locked SQLite file adds to one request

# Runs SQL that takes a lock, says so, and keeps the lock until its stdin closes.
HOLDER = """
import sqlite3, sys
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.executescript(sys.argv[2])
print("holding", flush=True)
sys.stdin.read()
"""

LOCKS = {
    "another process is writing (BEGIN IMMEDIATE)": "BEGIN IMMEDIATE; INSERT INTO results VALUES"
                                                    " ('x', '{}', '', '', 0, 0);",
    "another process holds BEGIN EXCLUSIVE": "BEGIN EXCLUSIVE; INSERT INTO results VALUES ('x', '{}', '', '', 0, 0);",
}
FRESH_FILE_LOCKS = {
    "a fresh WAL file another process is writing": "PRAGMA journal_mode = WAL; CREATE TABLE other (a);"
                                                   " BEGIN IMMEDIATE; INSERT INTO other VALUES (1);",
    # Before the file is in WAL mode the lock keeps out readers too: the first lookup is the one that waits.
    "a fresh rollback-journal file held exclusively": "CREATE TABLE other (a); BEGIN EXCLUSIVE;",
}


class LockHolder:
    def __init__(self, path, sql: str) -> None:
        self.process = subprocess.Popen([sys.executable, "-c", HOLDER, str(path), sql], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def __enter__(self) -> "LockHolder":
        line = self.process.stdout.readline()
        assert line == "holding\n", line + self.process.stderr.read()
        return self

    def __exit__(self, *exc_info) -> None:
        self.process.stdin.close()  # the holder ends, and its lock with it
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def container(path, model_dir) -> tuple[Service, SqliteResultStore, list[float]]:
    """A warm service on the SQLite file, its store, and the breaker's clock (a list the test moves)."""
    shared = SqliteResultStore(path, ttl_seconds=60)
    now = [0.0]
    shared.breaker = CircuitBreaker(shared.breaker.cooldown_seconds, clock=lambda: now[0])
    service = digits_service(model_dir, TieredResultStore(MemoryResultStore(100, ttl_seconds=60), shared))
    return service, shared, now


def assert_waited_once_then_skips(service, shared, seconds: float) -> None:
    assert seconds < SQLITE_BOUND_SECONDS
    assert shared.stats["errors"] == 1 and not shared.breaker.allows()
    skipped = shared.stats["skipped"]
    started = time.perf_counter()
    classify(service, 5)
    assert shared.stats["skipped"] == skipped + 2 and shared.stats["errors"] == 1  # not tried: no second wait
    assert time.perf_counter() - started < SQLITE_BOUND_SECONDS


def assert_recovers(service, shared, now: list[float]) -> None:
    now[0] += shared.breaker.cooldown_seconds + 1
    writes = shared.stats["writes"]
    classify(service, 4)
    assert shared.stats["writes"] == writes + 1 and shared.stats["errors"] == 1


@pytest.mark.parametrize("sql", LOCKS.values(), ids=LOCKS.keys())
def test_a_lock_held_by_another_process_costs_one_wait(sql, tmp_path, digits_models, request):  # noqa: F811
    path = tmp_path / "results.sqlite3"
    service, shared, now = container(path, digits_models)
    classify(service, 0)  # the file is set up and the model loaded before the lock is taken
    with LockHolder(path, sql):
        _, seconds = classify(service, 3)
        print(f"\n[sqlite] {request.node.callspec.id}: {seconds:.3f} s")
        assert_waited_once_then_skips(service, shared, seconds)
    assert_recovers(service, shared, now)


@pytest.mark.parametrize("sql", FRESH_FILE_LOCKS.values(), ids=FRESH_FILE_LOCKS.keys())
def test_a_fresh_file_locked_before_the_first_request_costs_one_wait(sql, tmp_path, digits_models, request):  # noqa: F811
    path = tmp_path / "results.sqlite3"
    service, shared, now = container(path, digits_models)
    service.registry.preload()
    with LockHolder(path, sql):
        _, seconds = classify(service, 3)
        print(f"\n[sqlite] {request.node.callspec.id}: {seconds:.3f} s")
        assert_waited_once_then_skips(service, shared, seconds)
    assert_recovers(service, shared, now)
