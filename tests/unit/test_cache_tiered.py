"""The LRU in front of the shared store, and the factory that picks backends from the environment."""
import subprocess
import sys
from pathlib import Path

from function.cache.base import NullResultStore
from function.cache.factory import open_result_store
from function.cache.memory import MemoryResultStore
from function.cache.sqlite import SqliteResultStore
from function.cache.tiered import TieredResultStore
from function.config import LAMBDA_SQLITE_PATH, CacheSettings


def test_shared_hits_fill_the_memory_tier_with_their_expiry(tmp_path):
    now = [1000.0]
    shared = SqliteResultStore(tmp_path / "r.sqlite3", ttl_seconds=10, clock=lambda: now[0])
    shared.put_many({"a": {"n": 1}})
    tiered = TieredResultStore(MemoryResultStore(100, ttl_seconds=3600, clock=lambda: now[0]), shared)
    assert tiered.get_many(["a", "b"]) == {"a": {"n": 1}}
    assert tiered.get_many(["a"]) == {"a": {"n": 1}}
    assert shared.stats["hits"] == 1  # the second read never left the process
    now[0] += 11
    assert tiered.get_many(["a"]) == {}  # the LRU copy expired with the shared row, not an hour later


def test_writes_go_to_both_tiers(tmp_path):
    shared = SqliteResultStore(tmp_path / "r.sqlite3", ttl_seconds=60)
    memory = MemoryResultStore(100, ttl_seconds=60)
    TieredResultStore(memory, shared).put_many({"a": {"n": 1}})
    assert memory.get_many(["a"]) == shared.get_many(["a"]) == {"a": {"n": 1}}


def test_factory_builds_each_backend(tmp_path):
    sqlite_path = str(tmp_path / "r.sqlite3")
    assert isinstance(open_result_store(CacheSettings.from_env({"RESULTS_CACHE": "off"})), NullResultStore)
    assert isinstance(open_result_store(CacheSettings.from_env({"RESULTS_CACHE": "memory"})), MemoryResultStore)
    local = open_result_store(CacheSettings.from_env({"RESULTS_SQLITE_PATH": sqlite_path}))
    assert isinstance(local.shared, SqliteResultStore) and str(local.shared.path) == sqlite_path
    assert local.shared.durable
    # Only a Lambda container's own file in its /tmp, which goes with the container, is never flushed.
    in_lambda = open_result_store(CacheSettings.from_env({"LAMBDA_TASK_ROOT": "/var/task"}))
    assert in_lambda.shared.path == LAMBDA_SQLITE_PATH and not in_lambda.shared.durable
    named = open_result_store(CacheSettings.from_env({"LAMBDA_TASK_ROOT": "/var/task",
                                                      "RESULTS_SQLITE_PATH": sqlite_path}))
    assert named.shared.durable
    shared = open_result_store(CacheSettings.from_env({"RESULTS_TABLE": "results", "CACHE_TTL_SECONDS": "5"}))
    assert type(shared.shared).__name__ == "DynamoDBResultStore" and shared.shared.ttl_seconds == 5


def test_sqlite_and_memory_backends_never_import_boto3(tmp_path):
    code = (
        "import sys\n"
        "from function.cache.factory import open_result_store\n"
        "from function.config import CacheSettings\n"
        f"store = open_result_store(CacheSettings.from_env({{'RESULTS_SQLITE_PATH': {str(tmp_path / 'r.db')!r}}}))\n"
        "store.put_many({'a': {'n': 1}}); assert store.get_many(['a'])\n"
        "print('boto3' in sys.modules, 'botocore' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[2])
    assert out.stdout.split() == ["False", "False"]
