"""The DynamoDB item shape: what is written is what parses back; anything else is corrupt; size is measured."""
import hashlib
import json

import pytest

from function.cache.codec import decode_result
from function.cache.dynamodb_item import MAX_ITEM_BYTES, CorruptItem, build_item, item_size, parse_item


def parse_and_decode(item: dict):
    """What the store reads from an item: parse_item's record, checked by the base class's decode."""
    key, record = parse_item(item)
    result = decode_result(record.text, record.checksum)
    if result is None:
        raise CorruptItem("result does not match its checksum or is not a JSON object")
    return key, record.expires_at, result


def test_round_trip_keeps_result_and_expiry():
    item = build_item("k" * 64, {"label": "cat"}, now=1000.7, ttl_seconds=60, model_version="abc")
    key, expires_at, result = parse_and_decode(item)
    assert key == "k" * 64
    assert result == {"label": "cat"}
    assert expires_at == 1060
    assert item["model_version"] == {"S": "abc"}


@pytest.mark.parametrize("damage", [
    lambda item: item.pop("checksum"),
    lambda item: item.update(result={"S": item["result"]["S"][:-3]}),
    lambda item: item.update(expires_at={"S": "soon"}),
    lambda item: item.update(result={"S": "[1,2]"}, checksum={"S": hashlib.sha256(b"[1,2]").hexdigest()}),
])
def test_damaged_items_are_corrupt(damage):
    item = build_item("k", {"label": "cat"}, now=0, ttl_seconds=60)
    damage(item)
    with pytest.raises(CorruptItem):
        parse_and_decode(item)


def test_size_counts_names_strings_and_numbers_at_their_maximum():
    item = build_item("key", {"a": "é"}, now=0, ttl_seconds=60)
    text = item["result"]["S"]
    expected_strings = len("result_key") + 3 + len("result") + len(text.encode()) + len("checksum") + 64
    expected_strings += len("model_version") + 0
    expected_numbers = len("created_at") + 21 + len("expires_at") + 21
    assert item_size(item) == expected_strings + expected_numbers


def test_a_result_near_the_limit_measures_over_it():
    payload = "x" * MAX_ITEM_BYTES
    item = build_item("k", {"blob": payload}, now=0, ttl_seconds=60)
    assert item_size(item) > MAX_ITEM_BYTES
    assert len(json.dumps({"blob": payload})) > MAX_ITEM_BYTES
