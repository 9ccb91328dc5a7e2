"""The in-process tier: a bounded, thread-safe LRU whose entries expire."""
from __future__ import annotations

import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence

from function.cache.base import Entry, Result
from function.cache.codec import canonical_json
from function.cache.stats import StoreStats

log = logging.getLogger(__name__)


class MemoryResultStore:
    """Keeps up to `max_items` results; the least recently used one goes first.

    Results are held as JSON text, so a caller that edits a returned dict (adds "cached") never edits the cache.
    """

    def __init__(self, max_items: int, ttl_seconds: float, clock: Callable[[], float] = time.time) -> None:
        self.max_items = max(0, int(max_items))
        self.ttl_seconds = ttl_seconds
        self.stats = StoreStats()
        self._clock = clock
        self._entries: OrderedDict[str, tuple[str, float]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def get_many(self, keys: Sequence[str]) -> dict[str, Result]:
        return {key: entry.result for key, entry in self.get_entries(keys).items()}

    def get_entries(self, keys: Sequence[str]) -> dict[str, Entry]:
        now = self._clock()
        found: dict[str, tuple[str, float]] = {}
        expired = 0
        with self._lock:
            for key in dict.fromkeys(keys):
                stored = self._entries.get(key)
                if stored is None:
                    continue
                if stored[1] <= now:
                    del self._entries[key]
                    expired += 1
                    continue
                self._entries.move_to_end(key)
                found[key] = stored
        self.stats.add("expired", expired)
        self.stats.add("hits", len(found))
        self.stats.add("misses", len(set(keys)) - len(found))
        return {key: Entry(json.loads(text), expires_at) for key, (text, expires_at) in found.items()}

    def put_many(self, results: Mapping[str, Result], model_version: str = "") -> None:
        expires_at = self._clock() + self.ttl_seconds
        self.put_entries({key: Entry(result, expires_at) for key, result in results.items()})

    def put_entries(self, entries: Mapping[str, Entry]) -> None:
        """Store results that already carry their expiry (an LRU fill from the shared store)."""
        if self.max_items == 0:
            return
        encoded: dict[str, tuple[str, float]] = {}
        for key, (result, expires_at) in entries.items():
            try:
                encoded[key] = (canonical_json(result), expires_at)
            except (TypeError, ValueError) as error:
                # Not JSON (NaN, an object): never cacheable anywhere, so only counted.
                log.warning("result cache: not storing %s in memory: %s", key[:12], error)
                self.stats.add("errors")
        with self._lock:
            for key, stored in encoded.items():
                self._entries[key] = stored
                self._entries.move_to_end(key)
            while len(self._entries) > self.max_items:
                self._entries.popitem(last=False)
        self.stats.add("writes", len(encoded))
