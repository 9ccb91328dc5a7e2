"""The DynamoDB server dies mid-run, or was never there: every call still returns, as misses and skipped
writes, and the failure is counted. (No durations are asserted; docs/caching.md states the bound.)"""
import socket

import pytest

from kit.ports import free_port
from function.cache.dynamodb import DynamoDBResultStore
from function.cache.memory import MemoryResultStore
from function.cache.tiered import TieredResultStore
from kit.dynamodb_server import DynamoDBServer, create_results_table

pytestmark = pytest.mark.slow


def closed_port_endpoint() -> str:
    return f"http://127.0.0.1:{free_port()}"  # bound then closed: nothing listens there now


def test_server_killed_mid_run(monkeypatch):
    with DynamoDBServer() as server:  # a private server: killing it must not disturb the other tests
        monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", server.endpoint)
        table = create_results_table(server.client())
        shared = DynamoDBResultStore(table, ttl_seconds=60)
        tiered = TieredResultStore(MemoryResultStore(100, ttl_seconds=60), shared)
        tiered.put_many({"before": {"label": "cat"}})
        assert shared.get_many(["before"]) == {"before": {"label": "cat"}}
        server.stop()

        assert shared.get_many(["before", "other"]) == {}
        assert shared.stats["errors"] == 1
        shared.put_many({"after": {"label": "dog"}})  # the breaker is open: not even tried
        assert shared.stats["skipped"] == 1 and shared.stats["errors"] == 1
        # The in-process tier still answers what this container computed.
        assert tiered.get_many(["before", "after"]) == {"before": {"label": "cat"}}


def test_nothing_listening_is_a_miss_and_a_skipped_write(monkeypatch):
    from kit.dynamodb_server import use_fake_credentials

    use_fake_credentials()
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", closed_port_endpoint())
    store = DynamoDBResultStore("results", ttl_seconds=60)
    store.put_many({"a": {"label": "cat"}})
    assert store.get_many(["a"]) == {}
    assert store.stats["errors"] == 1 and store.stats["skipped"] == 1 and store.stats["writes"] == 0


def test_a_server_that_never_answers_is_a_miss(monkeypatch):
    from kit.dynamodb_server import use_fake_credentials

    use_fake_credentials()
    # A listener that accepts connections (the kernel's backlog) but never replies: the call's deadline must end it.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", f"http://127.0.0.1:{silent.getsockname()[1]}")
        store = DynamoDBResultStore("results", ttl_seconds=60)
        assert store.get_many(["a", "b"]) == {}
        store.put_many({"a": {"label": "cat"}})
    assert store.stats["errors"] == 1 and store.stats["misses"] == 2 and store.stats["skipped"] == 1
