"""The in-process LRU in front of a shared store: repeats in a warm container never leave the process."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from function.cache.base import Result, SharedResultStore
from function.cache.memory import MemoryResultStore


class TieredResultStore:
    def __init__(self, memory: MemoryResultStore, shared: SharedResultStore) -> None:
        self.memory = memory
        self.shared = shared

    def get_many(self, keys: Sequence[str]) -> dict[str, Result]:
        found = self.memory.get_many(keys)
        remaining = [key for key in dict.fromkeys(keys) if key not in found]
        if remaining:
            entries = self.shared.get_entries(remaining)
            # The LRU copy keeps the shared item's expiry, so it never outlives it.
            self.memory.put_entries(entries)
            found.update({key: entry.result for key, entry in entries.items()})
        return found

    def put_many(self, results: Mapping[str, Result], model_version: str = "") -> None:
        self.memory.put_many(results)
        self.shared.put_many(results, model_version)
