"""The DynamoDB store against a real DynamoDB protocol server (DynamoDB Local in the namespace, else moto)."""
import time

import pytest

from function.cache.dynamodb import DynamoDBResultStore
from function.cache.dynamodb_item import MAX_ITEM_BYTES, build_item, item_size
from function.cache.keys import digest_bytes, result_key
from function.cache.memory import MemoryResultStore
from function.cache.tiered import TieredResultStore
from tests.support.dynamodb_fixtures import dynamodb_server, results_table  # noqa: F401  (fixtures)

pytestmark = pytest.mark.slow

MODEL_V1 = "1" * 64
MODEL_V2 = "2" * 64


def key_for(model_version: str, image: bytes, top_k: int = 5) -> str:
    return result_key(model_version, "image_classification", digest_bytes(image), {"top_k": top_k})


def prediction(label: str) -> dict:
    return {"model": {"name": "digits", "version": MODEL_V1}, "predictions": [{"label": label, "score": 0.97}]}


def test_hit_and_miss(results_table):
    store = DynamoDBResultStore(results_table, ttl_seconds=60)
    store.put_many({key_for(MODEL_V1, b"seven"): prediction("7")})
    assert store.get_many([key_for(MODEL_V1, b"seven"), key_for(MODEL_V1, b"eight")]) == {
        key_for(MODEL_V1, b"seven"): prediction("7")
    }
    counts = store.stats.snapshot()
    assert (counts["hits"], counts["misses"], counts["writes"], counts["errors"]) == (1, 1, 1, 0)


def test_stored_item_has_the_documented_attributes(results_table, dynamodb_server):
    store = DynamoDBResultStore(results_table, ttl_seconds=60)
    key = key_for(MODEL_V1, b"seven")
    before = int(time.time())
    store.put_many({key: prediction("7")}, MODEL_V1)
    item = dynamodb_server.client().get_item(TableName=results_table, Key={"result_key": {"S": key}})["Item"]
    assert set(item) == {"result_key", "result", "checksum", "model_version", "created_at", "expires_at"}
    assert item["model_version"] == {"S": MODEL_V1}
    assert before + 60 <= int(item["expires_at"]["N"]) <= int(time.time()) + 60


def test_a_new_model_version_misses(results_table):
    store = DynamoDBResultStore(results_table, ttl_seconds=60)
    store.put_many({key_for(MODEL_V1, b"seven"): prediction("7")})
    assert store.get_many([key_for(MODEL_V2, b"seven")]) == {}
    assert store.get_many([key_for(MODEL_V1, b"seven", top_k=3)]) == {}  # an option that changes the answer


def test_batch_partial_hits(results_table):
    store = DynamoDBResultStore(results_table, ttl_seconds=60)
    stored = {key_for(MODEL_V1, bytes([i])): prediction(str(i)) for i in range(0, 10, 2)}
    store.put_many(stored)
    asked = [key_for(MODEL_V1, bytes([i])) for i in range(10)]
    assert store.get_many(asked) == stored
    assert store.stats["hits"] == 5 and store.stats["misses"] == 5


def test_batches_over_the_api_limits(results_table):
    # 260 items are 11 writes and 3 lookups: more than one request's deadline allows on a shared test server.
    store = DynamoDBResultStore(results_table, ttl_seconds=60, call_deadline_seconds=30)
    stored = {key_for(MODEL_V1, i.to_bytes(2, "big")): prediction(str(i)) for i in range(260)}
    store.put_many(stored)  # 11 BatchWriteItem calls of <= 25
    asked = list(stored) + [key_for(MODEL_V2, b"absent")] + list(stored)[:5]  # duplicates are asked once
    assert store.get_many(asked) == stored  # 3 BatchGetItem calls of <= 100
    assert store.stats["writes"] == 260 and store.stats["hits"] == 260 and store.stats["misses"] == 1


def test_readers_ignore_expired_items(results_table):
    # Written with a real 30 s TTL, so no server may have removed it yet; the reader's clock is past expires_at.
    now = [time.time()]
    writer = DynamoDBResultStore(results_table, ttl_seconds=30, clock=lambda: now[0])
    writer.put_many({"short": prediction("7")})
    assert writer.get_many(["short"]) == {"short": prediction("7")}
    now[0] += 31
    reader = DynamoDBResultStore(results_table, ttl_seconds=30, clock=lambda: now[0])
    assert reader.get_many(["short"]) == {}
    assert reader.stats["expired"] == 1  # the server still returned it: the reader's own check dropped it


def test_a_large_result_within_the_item_limit_round_trips(results_table, dynamodb_server):
    # DynamoDB Local enforces the real limit; moto rejects some valid items above ~405 KB, so it gets 400,000 bytes.
    target = MAX_ITEM_BYTES if dynamodb_server.kind == "dynamodb-local" else 400_000
    overhead = item_size(build_item("k" * 64, {"blob": ""}, time.time(), 60))
    large = {"blob": "x" * (target - overhead)}
    key = "k" * 64
    assert item_size(build_item(key, large, time.time(), 60)) == target
    store = DynamoDBResultStore(results_table, ttl_seconds=60)
    store.put_many({key: large, "small": prediction("1")})
    assert store.stats["oversize"] == 0 and store.stats["errors"] == 0
    assert store.get_many([key, "small"]) == {key: large, "small": prediction("1")}


def test_an_oversize_result_is_refused_and_counted(results_table):
    store = DynamoDBResultStore(results_table, ttl_seconds=60)
    store.put_many({"huge": {"blob": "x" * MAX_ITEM_BYTES}, "small": prediction("1")})
    assert store.stats["oversize"] == 1 and store.stats["errors"] == 0
    assert store.get_many(["huge", "small"]) == {"small": prediction("1")}


def test_corrupt_items_are_ignored(results_table, dynamodb_server):
    client = dynamodb_server.client()
    good = build_item("good", prediction("1"), time.time(), 60)
    torn = build_item("torn", prediction("2"), time.time(), 60)
    torn["result"] = {"S": torn["result"]["S"][:20]}  # a half-written result with the whole result's checksum
    no_checksum = build_item("no-checksum", prediction("3"), time.time(), 60)
    del no_checksum["checksum"]
    wrong_type = build_item("wrong-type", prediction("4"), time.time(), 60)
    wrong_type["expires_at"] = {"S": "tomorrow"}
    for item in (good, torn, no_checksum, wrong_type):
        client.put_item(TableName=results_table, Item=item)
    store = DynamoDBResultStore(results_table, ttl_seconds=60)
    assert store.get_many(["good", "torn", "no-checksum", "wrong-type"]) == {"good": prediction("1")}
    assert store.stats["corrupt"] == 3 and store.stats["errors"] == 0


def test_tiered_store_answers_repeats_from_memory(results_table):
    shared = DynamoDBResultStore(results_table, ttl_seconds=60)
    shared.put_many({"a": prediction("1")})
    tiered = TieredResultStore(MemoryResultStore(100, ttl_seconds=60), shared)
    for _ in range(3):
        assert tiered.get_many(["a"]) == {"a": prediction("1")}
    assert shared.stats["hits"] == 1 and tiered.memory.stats["hits"] == 2
