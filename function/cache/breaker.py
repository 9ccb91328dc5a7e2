"""Stops calling a failing store for a while, so a dead table costs one timeout per cool-down, not one per request."""
from __future__ import annotations

import threading
import time
from collections.abc import Callable


class CircuitBreaker:
    def __init__(self, cooldown_seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.cooldown_seconds = cooldown_seconds
        self._clock = clock
        self._open_until = 0.0
        self._lock = threading.Lock()

    def allows(self) -> bool:
        with self._lock:
            return self._clock() >= self._open_until

    def trip(self) -> None:
        with self._lock:
            self._open_until = self._clock() + self.cooldown_seconds
