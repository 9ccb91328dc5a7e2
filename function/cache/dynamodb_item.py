"""The shape of one cached result in DynamoDB (docs/caching.md, "DynamoDB table"): build, measure, parse."""
from __future__ import annotations

from function.cache.base import Record, Result
from function.cache.codec import encode_result

KEY_ATTRIBUTE = "result_key"
TTL_ATTRIBUTE = "expires_at"
MAX_ITEM_BYTES = 400 * 1024  # DynamoDB's item limit, attribute names included
MAX_NUMBER_BYTES = 21  # DynamoDB stores a number in at most 21 bytes: counting that much never underestimates


class CorruptItem(ValueError):
    """The item is not what `item_of` writes: missing or mistyped attributes."""


def item_of(key: str, record: Record) -> dict:
    """The low-level (typed) item the store writes for a record."""
    return {
        KEY_ATTRIBUTE: {"S": key},
        "result": {"S": record.text},
        "checksum": {"S": record.checksum},
        "model_version": {"S": record.model_version},
        "created_at": {"N": str(int(record.created_at))},
        TTL_ATTRIBUTE: {"N": str(int(record.expires_at))},
    }


def build_item(key: str, result: Result, now: float, ttl_seconds: float, model_version: str = "") -> dict:
    """The item the store writes for `result` at `now` (tests and tools put such items by hand). Raises
    TypeError/ValueError when the result is not JSON."""
    text, checksum = encode_result(result)
    return item_of(key, Record(text, checksum, now + ttl_seconds, model_version, now))


def item_size(item: dict) -> int:
    """Bytes DynamoDB counts for a flat item of S and N attributes (names included; numbers at their maximum)."""
    size = 0
    for name, value in item.items():
        size += len(name.encode("utf-8"))
        if "S" in value:
            size += len(value["S"].encode("utf-8"))
        elif "N" in value:
            size += MAX_NUMBER_BYTES
        else:
            raise ValueError(f"unexpected attribute type in {name}: {sorted(value)}")
    return size


def parse_item(item: dict) -> tuple[str, Record]:
    """(key, record) from a stored item, expired or not, its result not yet checked against its checksum (the
    store's base class does that). Raises CorruptItem when an attribute `item_of` writes is missing or mistyped."""
    try:
        key = item[KEY_ATTRIBUTE]["S"]
        expires_at = float(item[TTL_ATTRIBUTE]["N"])
        text = item["result"]["S"]
        checksum = item["checksum"]["S"]
    except (KeyError, TypeError, ValueError) as error:
        raise CorruptItem(f"missing or mistyped attribute: {error!r}") from None
    if not isinstance(text, str) or not isinstance(checksum, str):
        raise CorruptItem("result and checksum must be strings")
    return key, Record(text, checksum, expires_at)
