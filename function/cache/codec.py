"""How a result is written to and read back from a shared store: canonical JSON plus its sha256.

A reader accepts an entry only if the checksum matches and the JSON is an object, so a torn, truncated or
hand-edited entry is a miss, never an answer.
"""
from __future__ import annotations

import json

from function.cache.keys import digest_text as checksum_of


def canonical_json(result: dict) -> str:
    return json.dumps(result, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def encode_result(result: dict) -> tuple[str, str]:
    """Return (canonical JSON, sha256 hex of it)."""
    text = canonical_json(result)
    return text, checksum_of(text)


def decode_result(text: object, checksum: object) -> dict | None:
    """The stored result, or None when the entry is not exactly what `encode_result` wrote."""
    if not isinstance(text, str) or not isinstance(checksum, str) or checksum_of(text) != checksum:
        return None
    try:
        result = json.loads(text)
    except ValueError:
        return None
    return result if isinstance(result, dict) else None
