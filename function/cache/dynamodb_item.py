"""The shape of one cached result in DynamoDB (docs/caching.md, "DynamoDB table"): build, measure, parse."""
from __future__ import annotations

from function.cache.base import Entry, Result
from function.cache.codec import decode_result, encode_result

KEY_ATTRIBUTE = "result_key"
TTL_ATTRIBUTE = "expires_at"
MAX_ITEM_BYTES = 400 * 1024  # DynamoDB's item limit, attribute names included
MAX_NUMBER_BYTES = 21  # DynamoDB stores a number in at most 21 bytes: counting that much never underestimates


class CorruptItem(ValueError):
    """The item is not what `build_item` writes: missing or mistyped attributes, or a checksum mismatch."""


def build_item(key: str, result: Result, now: float, ttl_seconds: float, model_version: str = "") -> dict:
    """The low-level (typed) item for `result`. Raises TypeError/ValueError when the result is not JSON."""
    text, checksum = encode_result(result)
    return {
        KEY_ATTRIBUTE: {"S": key},
        "result": {"S": text},
        "checksum": {"S": checksum},
        "model_version": {"S": model_version},
        "created_at": {"N": str(int(now))},
        TTL_ATTRIBUTE: {"N": str(int(now + ttl_seconds))},
    }


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


def parse_item(item: dict) -> tuple[str, Entry]:
    """(key, entry) from a stored item, expired or not. Raises CorruptItem for anything `build_item` did not write."""
    try:
        key = item[KEY_ATTRIBUTE]["S"]
        expires_at = float(item[TTL_ATTRIBUTE]["N"])
        text = item["result"]["S"]
        checksum = item["checksum"]["S"]
    except (KeyError, TypeError, ValueError) as error:
        raise CorruptItem(f"missing or mistyped attribute: {error!r}") from None
    result = decode_result(text, checksum)
    if result is None:
        raise CorruptItem("result does not match its checksum or is not a JSON object")
    return key, Entry(result, expires_at)
