"""Throttling and unprocessed batches: faults DynamoDB Local and moto cannot be made to produce, so a scripted
HTTP server on 127.0.0.1 answers what DynamoDB answers then, through the store's own client (its retries
included). Every one must end as a miss or a skipped write, counted, never an exception."""
import pytest

from function.cache.breaker import CircuitBreaker
from function.cache.dynamodb import DynamoDBResultStore
from function.cache.dynamodb_item import build_item
from kit.dynamodb_server import use_fake_credentials
from test_aws_dynamodb_client import INTERNAL, THROTTLED, ScriptedDynamoDB  # the same scripted server

TABLE = "results"
THROTTLING = (400, {"__type": "com.amazon.coral.availability#ThrottlingException", "message": "Rate exceeded"})


@pytest.fixture
def scripted(monkeypatch):
    """(store, server): the store builds its client from the environment, as in Lambda, aimed at the server."""
    use_fake_credentials()
    with ScriptedDynamoDB() as server:
        monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", server.url)
        yield DynamoDBResultStore(TABLE, ttl_seconds=60, sleep=lambda seconds: None), server
        assert server.answers == [], "scripted answers left unused"


def keys_request(*keys):
    return {"RequestItems": {TABLE: {"Keys": [{"result_key": {"S": key}} for key in keys]}}}


def test_throttled_read_is_a_miss_and_opens_the_breaker(scripted):
    store, server = scripted
    server.answers += [THROTTLED, THROTTLED]  # the client's own retry is throttled too
    assert store.get_many(["a", "b"]) == {}
    assert store.stats["throttled"] == 1 and store.stats["misses"] == 2
    assert len(server.requests) == 2
    # The breaker is open: the next calls do not reach the server at all.
    assert store.get_many(["a"]) == {}
    store.put_many({"a": {"n": 1}})
    assert store.stats["skipped"] == 2 and len(server.requests) == 2


def test_throttled_write_is_skipped_and_counted(scripted):
    store, server = scripted
    server.answers += [THROTTLING, THROTTLING]
    store.put_many({"a": {"n": 1}})
    assert store.stats["throttled"] == 1 and store.stats["writes"] == 0
    assert [r["headers"]["X-Amz-Target"] for r in server.requests] == ["DynamoDB_20120810.BatchWriteItem"] * 2


def test_one_throttled_attempt_is_absorbed_by_the_clients_retry(scripted):
    store, server = scripted
    server.answers += [THROTTLED, (200, {"Responses": {TABLE: []}})]
    assert store.get_many(["a"]) == {}
    assert store.stats["throttled"] == 0 and store.stats["misses"] == 1 and store.breaker.allows()


def test_unprocessed_keys_are_retried_then_answered(scripted):
    store, server = scripted
    item_a = build_item("a", {"n": 1}, now=store._clock(), ttl_seconds=60)
    item_b = build_item("b", {"n": 2}, now=store._clock(), ttl_seconds=60)
    server.answers += [
        (200, {"Responses": {TABLE: [item_a]}, "UnprocessedKeys": keys_request("b")["RequestItems"]}),
        (200, {"Responses": {TABLE: [item_b]}}),
    ]
    assert store.get_many(["a", "b"]) == {"a": {"n": 1}, "b": {"n": 2}}
    assert [r["body"] for r in server.requests] == [keys_request("a", "b"), keys_request("b")]


def test_keys_left_unprocessed_after_the_retries_are_misses(scripted):
    store, server = scripted
    unprocessed = {"Responses": {TABLE: []}, "UnprocessedKeys": keys_request("a")["RequestItems"]}
    server.answers += [(200, unprocessed)] * 3
    assert store.get_many(["a"]) == {}
    assert store.stats["throttled"] == 1 and store.stats["misses"] == 1
    assert [r["body"] for r in server.requests] == [keys_request("a")] * 3


def test_unprocessed_writes_are_retried(scripted):
    store, server = scripted
    server.answers += [
        (200, {"UnprocessedItems": {TABLE: [{"PutRequest": {"Item": build_item("b", {"n": 2}, 0, 60)}}]}}),
        (200, {"UnprocessedItems": {}}),
    ]
    store.put_many({"a": {"n": 1}, "b": {"n": 2}})
    assert store.stats["writes"] == 2 and store.stats["throttled"] == 0
    first, second = (r["body"]["RequestItems"][TABLE] for r in server.requests)
    assert len(first) == 2 and [put["PutRequest"]["Item"]["result_key"] for put in second] == [{"S": "b"}]


def test_breaker_closes_again_after_the_cooldown(scripted):
    store, server = scripted
    now = [0.0]
    store.breaker = CircuitBreaker(cooldown_seconds=30, clock=lambda: now[0])
    server.answers += [INTERNAL, INTERNAL]
    store.get_many(["a"])
    assert store.stats["errors"] == 1
    now[0] = 31
    server.answers.append((200, {"Responses": {TABLE: []}}))
    assert store.get_many(["a"]) == {}
    assert store.stats["skipped"] == 0 and len(server.requests) == 3


def test_a_client_that_cannot_be_created_is_an_error_not_an_exception():
    def no_client():
        raise RuntimeError("no region configured")

    store = DynamoDBResultStore(TABLE, ttl_seconds=60, client_factory=no_client)
    assert store.get_many(["a"]) == {}
    store.put_many({"a": {"n": 1}})
    assert store.stats["errors"] == 1 and store.stats["skipped"] == 1


def test_missing_credentials_are_an_error_not_an_exception(monkeypatch):
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    store = DynamoDBResultStore(TABLE, ttl_seconds=60)
    assert store.get_many(["a"]) == {}
    assert store.stats["errors"] == 1
