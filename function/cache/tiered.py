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
        by_tier = self.get_many_by_tier(keys)
        return {**by_tier["shared"], **by_tier["memory"]}

    def get_many_by_tier(self, keys: Sequence[str]) -> dict[str, dict[str, Result]]:
        """The hits of each tier ("memory", "shared"): a request's log line and metrics count them apart."""
        found = self.memory.get_many(keys)
        remaining = [key for key in dict.fromkeys(keys) if key not in found]
        shared: dict[str, Result] = {}
        if remaining:
            entries = self.shared.get_entries(remaining)
            # The LRU copy keeps the shared item's expiry, so it never outlives it.
            self.memory.put_entries(entries)
            shared = {key: entry.result for key, entry in entries.items()}
        return {"memory": found, "shared": shared}

    def put_many(self, results: Mapping[str, Result], model_version: str = "") -> None:
        self.memory.put_many(results)
        self.shared.put_many(results, model_version)

    def close(self) -> None:
        self.shared.close()


def lookup_by_tier(store, keys: Sequence[str]) -> dict[str, dict[str, Result]]:
    """`store.get_many(keys)` split by the tier that answered: a lone store is the memory tier
    (RESULTS_CACHE=memory) or none at all (off)."""
    if isinstance(store, TieredResultStore):
        return store.get_many_by_tier(keys)
    return {"memory" if isinstance(store, MemoryResultStore) else "shared": store.get_many(keys)}
