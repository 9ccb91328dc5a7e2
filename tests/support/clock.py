"""A clock the test moves by hand: what the model registry reads to decide when a refresh is due."""
from __future__ import annotations


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now
