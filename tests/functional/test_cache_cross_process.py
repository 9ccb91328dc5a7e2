"""A second process gets the first one's results: from the SQLite file and from DynamoDB, configured only
through the environment, exactly as the function is."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from function.cache.factory import open_result_store
from function.config import CacheSettings
from tests.support.dynamodb_fixtures import dynamodb_server, results_table  # noqa: F401  (fixtures)

REPO_ROOT = Path(__file__).resolve().parents[2]

# Reads the keys given as arguments, prints what it found, then stores one result of its own.
CHILD = """
import json, sys
from function.cache.factory import open_result_store
from function.config import CacheSettings
store = open_result_store(CacheSettings.from_env())
found = store.get_many(sys.argv[1:])
store.put_many({"from-child": {"written_by": "child"}})
print(json.dumps({"found": found, "shared": store.shared.stats.snapshot()}))
"""

# Writes its own share of keys, concurrently with the other writers.
WRITER = """
import sys
from function.cache.factory import open_result_store
from function.config import CacheSettings
store = open_result_store(CacheSettings.from_env())
worker = sys.argv[1]
for i in range(100):
    store.put_many({f"{worker}-{i}": {"worker": worker, "i": i}})
assert store.shared.stats["errors"] == 0, store.shared.stats.snapshot()
"""


def run_python(code: str, args: list[str], env: dict) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code, *args], cwd=REPO_ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def run_child(env: dict, keys: list[str]) -> dict:
    child = run_python(CHILD, keys, env)
    out, err = child.communicate(timeout=120)
    assert child.returncode == 0, err
    return json.loads(out)


def sqlite_env(tmp_path) -> dict:
    return {**os.environ, "RESULTS_CACHE": "sqlite", "RESULTS_SQLITE_PATH": str(tmp_path / "shared.sqlite3")}


def test_sqlite_results_are_shared_between_processes(tmp_path):
    env = sqlite_env(tmp_path)
    first = open_result_store(CacheSettings.from_env(env))
    first.put_many({"a": {"label": "cat"}, "b": {"label": "dog"}})
    answer = run_child(env, ["a", "b", "c"])
    assert answer["found"] == {"a": {"label": "cat"}, "b": {"label": "dog"}}
    assert answer["shared"]["hits"] == 2 and answer["shared"]["misses"] == 1
    assert first.get_many(["from-child"]) == {"from-child": {"written_by": "child"}}


def test_sqlite_concurrent_writer_processes_lose_nothing(tmp_path):
    env = sqlite_env(tmp_path)
    writers = [run_python(WRITER, [f"w{n}"], env) for n in range(3)]
    for writer in writers:
        _, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err
    store = open_result_store(CacheSettings.from_env(env))
    found = store.get_many([f"w{n}-{i}" for n in range(3) for i in range(100)])
    assert len(found) == 300 and found["w2-99"] == {"worker": "w2", "i": 99}


@pytest.mark.slow
def test_dynamodb_results_are_shared_between_processes(results_table, dynamodb_server):
    env = {**os.environ, "RESULTS_CACHE": "auto", "RESULTS_TABLE": results_table,
           "AWS_ENDPOINT_URL_DYNAMODB": dynamodb_server.endpoint}
    first = open_result_store(CacheSettings.from_env(env))
    first.put_many({"a": {"label": "cat"}, "b": {"label": "dog"}})
    answer = run_child(env, ["a", "b", "c"])
    assert answer["found"] == {"a": {"label": "cat"}, "b": {"label": "dog"}}
    assert answer["shared"]["hits"] == 2 and answer["shared"]["errors"] == 0
    assert first.get_many(["from-child"]) == {"from-child": {"written_by": "child"}}
