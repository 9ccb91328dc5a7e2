"""Throttling and unprocessed batches: faults a local server cannot be made to produce, so a botocore Stubber
stands in for the wire. Every one must end as a miss or a skipped write, counted, never an exception."""
import boto3
import pytest
from botocore.stub import Stubber

from function.cache.breaker import CircuitBreaker
from function.cache.dynamodb import DynamoDBResultStore
from function.cache.dynamodb_item import build_item

TABLE = "results"


@pytest.fixture
def stubbed():
    client = boto3.session.Session().client(
        "dynamodb", region_name="us-east-1", aws_access_key_id="testing", aws_secret_access_key="testing"
    )
    with Stubber(client) as stubber:
        store = DynamoDBResultStore(TABLE, ttl_seconds=60, client=client, sleep=lambda seconds: None)
        yield store, stubber
        stubber.assert_no_pending_responses()


def keys_request(*keys):
    return {"RequestItems": {TABLE: {"Keys": [{"result_key": {"S": key}} for key in keys]}}}


def test_throttled_read_is_a_miss_and_opens_the_breaker(stubbed):
    store, stubber = stubbed
    stubber.add_client_error("batch_get_item", "ProvisionedThroughputExceededException", http_status_code=400)
    assert store.get_many(["a", "b"]) == {}
    assert store.stats["throttled"] == 1 and store.stats["misses"] == 2
    # The breaker is open: the next calls do not reach the client at all (no stubbed response is left).
    assert store.get_many(["a"]) == {}
    store.put_many({"a": {"n": 1}})
    assert store.stats["skipped"] == 2


def test_throttled_write_is_skipped_and_counted(stubbed):
    store, stubber = stubbed
    stubber.add_client_error("batch_write_item", "ThrottlingException", http_status_code=400)
    store.put_many({"a": {"n": 1}})
    assert store.stats["throttled"] == 1 and store.stats["writes"] == 0


def test_unprocessed_keys_are_retried_then_answered(stubbed):
    store, stubber = stubbed
    item_a = build_item("a", {"n": 1}, now=store._clock(), ttl_seconds=60)
    item_b = build_item("b", {"n": 2}, now=store._clock(), ttl_seconds=60)
    stubber.add_response(
        "batch_get_item",
        {"Responses": {TABLE: [item_a]}, "UnprocessedKeys": {TABLE: keys_request("b")["RequestItems"][TABLE]}},
        keys_request("a", "b"),
    )
    stubber.add_response("batch_get_item", {"Responses": {TABLE: [item_b]}}, keys_request("b"))
    assert store.get_many(["a", "b"]) == {"a": {"n": 1}, "b": {"n": 2}}


def test_keys_left_unprocessed_after_the_retries_are_misses(stubbed):
    store, stubber = stubbed
    unprocessed = {"Responses": {TABLE: []}, "UnprocessedKeys": {TABLE: keys_request("a")["RequestItems"][TABLE]}}
    for _ in range(3):
        stubber.add_response("batch_get_item", unprocessed, keys_request("a"))
    assert store.get_many(["a"]) == {}
    assert store.stats["throttled"] == 1 and store.stats["misses"] == 1


def test_unprocessed_writes_are_retried(stubbed):
    store, stubber = stubbed
    stubber.add_response(
        "batch_write_item",
        {"UnprocessedItems": {TABLE: [{"PutRequest": {"Item": build_item("b", {"n": 2}, 0, 60)}}]}},
    )
    stubber.add_response("batch_write_item", {"UnprocessedItems": {}})
    store.put_many({"a": {"n": 1}, "b": {"n": 2}})
    assert store.stats["writes"] == 2 and store.stats["throttled"] == 0


def test_breaker_closes_again_after_the_cooldown(stubbed):
    store, stubber = stubbed
    now = [0.0]
    store.breaker = CircuitBreaker(cooldown_seconds=30, clock=lambda: now[0])
    stubber.add_client_error("batch_get_item", "InternalServerError", http_status_code=500)
    store.get_many(["a"])
    assert store.stats["errors"] == 1
    now[0] = 31
    stubber.add_response("batch_get_item", {"Responses": {TABLE: []}}, keys_request("a"))
    assert store.get_many(["a"]) == {}
    assert store.stats["skipped"] == 0


def test_a_client_that_cannot_be_created_is_an_error_not_an_exception():
    def no_client():
        raise RuntimeError("no region configured")

    store = DynamoDBResultStore(TABLE, ttl_seconds=60, client_factory=no_client)
    assert store.get_many(["a"]) == {}
    store.put_many({"a": {"n": 1}})
    assert store.stats["errors"] == 1 and store.stats["skipped"] == 1
