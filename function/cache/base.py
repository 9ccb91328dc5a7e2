"""The one interface every result store implements; routes only ever talk to this."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple, Protocol

# A result is the JSON-serialisable prediction for one input (without the "cached" flag).
Result = dict


class ResultStore(Protocol):
    def get_many(self, keys: Sequence[str]) -> dict[str, Result]:
        """Return the stored, unexpired results for whichever of `keys` are present. Never raises."""

    def put_many(self, results: Mapping[str, Result], model_version: str = "") -> None:
        """Store results under their keys; `model_version` (the model that computed them) is kept beside each for
        operators, never used for lookups. Never raises: a failing store only costs a recomputation."""


def chunks(items: list, size: int) -> list[list]:
    """Consecutive slices of at most `size` items: the batch limits of DynamoDB and SQLite queries."""
    return [items[start:start + size] for start in range(0, len(items), size)]


class Entry(NamedTuple):
    """A stored result with the epoch second after which readers must ignore it."""

    result: Result
    expires_at: float


class SharedResultStore(ResultStore, Protocol):
    """A store behind the in-process LRU: also tells when each hit expires, so the LRU never outlives it."""

    def get_entries(self, keys: Sequence[str]) -> dict[str, Entry]:
        """Like get_many, with each hit's expiry. Never raises."""


class NullResultStore:
    """RESULTS_CACHE=off: never stores, always misses."""

    def get_many(self, keys: Sequence[str]) -> dict[str, Result]:
        return {}

    def put_many(self, results: Mapping[str, Result], model_version: str = "") -> None:
        return None
