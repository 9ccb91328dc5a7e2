"""Counters every store keeps, so failures are visible without reading logs."""
from __future__ import annotations

import threading
from collections import Counter

# The names used across stores; docs/caching.md explains each.
COUNTER_NAMES = ("hits", "misses", "writes", "expired", "corrupt", "oversize", "errors", "throttled", "skipped")


class StoreStats:
    """Thread-safe named counters; `snapshot()` gives a plain dict for logs, metrics and tests."""

    def __init__(self) -> None:
        self._counts: Counter[str] = Counter({name: 0 for name in COUNTER_NAMES})
        self._lock = threading.Lock()

    def add(self, name: str, amount: int = 1) -> None:
        if amount:
            with self._lock:
                self._counts[name] += amount

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(self._counts)

    def __getitem__(self, name: str) -> int:
        with self._lock:
            return self._counts[name]
