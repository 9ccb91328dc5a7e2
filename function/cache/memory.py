"""The in-process tier: a bounded, thread-safe LRU whose entries expire."""
from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping

from function.cache.base import BaseResultStore, Record, Result


class MemoryResultStore(BaseResultStore):
    """Keeps up to `max_items` results; the least recently used one goes first.

    Results are held as JSON text, so a caller that edits a returned dict (adds "cached") never edits the cache.
    """

    name = "memory"

    def __init__(self, max_items: int, ttl_seconds: float, clock: Callable[[], float] = time.time) -> None:
        super().__init__(ttl_seconds, clock)
        self.max_items = max(0, int(max_items))
        self._entries: OrderedDict[str, Record] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def _store(self, results: Iterable[tuple[str, Result, float]], model_version: str, now: float) -> None:
        if self.max_items:  # a zero-sized LRU stores nothing, so it encodes and counts nothing either
            super()._store(results, model_version, now)

    def _get_records(self, keys: list[str]) -> list[tuple[str, Record]]:
        found = []
        with self._lock:
            for key in keys:
                record = self._entries.get(key)
                if record is not None:
                    self._entries.move_to_end(key)
                    found.append((key, record))
        return found

    def _put_records(self, records: Mapping[str, Record]) -> int:
        with self._lock:
            for key, record in records.items():
                self._entries[key] = record
                self._entries.move_to_end(key)
            while len(self._entries) > self.max_items:
                self._entries.popitem(last=False)
        return len(records)

    def _delete_records(self, records: Mapping[str, Record]) -> None:
        with self._lock:
            for key, record in records.items():
                if self._entries.get(key) is record:  # not one a concurrent writer has just put
                    del self._entries[key]
