"""Builds the store CacheSettings asks for; the only place that knows which backends exist."""
from __future__ import annotations

from function.cache.base import NullResultStore, ResultStore
from function.cache.memory import MemoryResultStore
from function.cache.tiered import TieredResultStore
from function.config import CacheSettings


def open_result_store(settings: CacheSettings) -> ResultStore:
    """No I/O happens here: SQLite opens its file and DynamoDB its connection on first use."""
    if settings.backend == "off":
        return NullResultStore()
    memory = MemoryResultStore(settings.memory_items, settings.ttl_seconds)
    if settings.backend == "memory":
        return memory
    if settings.backend == "sqlite":
        from function.cache.sqlite import SqliteResultStore  # noqa: PLC0415  (sqlite3: 3 ms, 7 modules)

        return TieredResultStore(memory, SqliteResultStore(settings.sqlite_path, settings.ttl_seconds,
                                                           durable=not settings.sqlite_ephemeral))
    if settings.backend == "dynamodb":
        # The DynamoDB client (http.client, ssl, the signer): ~26 ms and 37 modules after function.app's imports.
        from function.cache.dynamodb import DynamoDBResultStore  # noqa: PLC0415

        return TieredResultStore(memory, DynamoDBResultStore(settings.table, settings.ttl_seconds))
    raise ValueError(f"unknown result cache backend {settings.backend!r}")
