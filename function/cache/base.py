"""The one interface every result store implements (routes only ever talk to it), and the base class that
does for every backend what is the same in each: expiry, encoding and decoding, and the counters.

As Powertools' idempotency BasePersistenceLayer owns expiry and hashing while its backends implement a few small
methods, BaseResultStore owns when a record is a hit, expired or corrupt; memory.py, sqlite.py and dynamodb.py
only get, put and delete raw records (and count their own failures: errors, throttled, skipped, oversize).
"""
from __future__ import annotations

import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import ClassVar, Protocol

from function.cache.codec import decode_result, encode_result
from function.cache.stats import StoreStats
from function.records import named_tuple

log = logging.getLogger(__name__)

# A result is the JSON-serialisable prediction for one input (without the "cached" flag).
Result = dict


class ResultStore(Protocol):
    def get_many(self, keys: Sequence[str]) -> dict[str, Result]:
        """Return the stored, unexpired results for whichever of `keys` are present. Never raises."""

    def put_many(self, results: Mapping[str, Result], model_version: str = "") -> None:
        """Store results under their keys; `model_version` (the model that computed them) is kept beside each for
        operators, never used for lookups. Never raises: a failing store only costs a recomputation."""

    def close(self) -> None:
        """Closes every connection and file the store holds (before a SnapStart snapshot: a restored copy must
        not share them); the next call opens new ones."""


def chunks(items: list, size: int) -> list[list]:
    """Consecutive slices of at most `size` items: the batch limits of DynamoDB and SQLite queries."""
    return [items[start:start + size] for start in range(0, len(items), size)]


@named_tuple
class Entry:
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

    def close(self) -> None:
        return None


@named_tuple
class Record:
    """A result as a backend keeps it: canonical JSON, its sha256 (function/cache/codec.py), and the epoch second
    after which readers must ignore it; the model version and the time of writing are kept for operators."""

    text: str
    checksum: str
    expires_at: float
    model_version: str = ""
    created_at: float = 0.0


class BaseResultStore(ABC):
    """A ResultStore (and a SharedResultStore) over a backend's raw records. Never raises: a backend that fails
    counts the failure and answers with what it has (nothing, for a lookup)."""

    name: ClassVar[str]  # the backend, in log lines

    def __init__(self, ttl_seconds: float, clock: Callable[[], float] = time.time) -> None:
        self.ttl_seconds = ttl_seconds
        self.stats = StoreStats()
        self._clock = clock

    # ---- what a backend implements ------------------------------------------------------------------------------

    @abstractmethod
    def _get_records(self, keys: list[str]) -> Iterable[tuple[str, Record]]:
        """The stored records of whichever of `keys` (no duplicates) are present, expired or not."""

    @abstractmethod
    def _put_records(self, records: Mapping[str, Record]) -> int:
        """Store the records under their keys; returns how many were written."""

    def _delete_records(self, records: Mapping[str, Record]) -> None:
        """Forget these expired records, each only if it is still the one read. SQLite purges expired rows when it
        writes and DynamoDB deletes them by its TTL, so only the memory tier does anything here."""

    def close(self) -> None:
        """No connection to close, unless the backend says otherwise."""

    # ---- what the base class does for every backend ------------------------------------------------------------

    def get_many(self, keys: Sequence[str]) -> dict[str, Result]:
        return {key: entry.result for key, entry in self.get_entries(keys).items()}

    def get_entries(self, keys: Sequence[str]) -> dict[str, Entry]:
        wanted = list(dict.fromkeys(keys))
        asked = set(wanted)
        now = self._clock()
        found: dict[str, Entry] = {}
        expired: dict[str, Record] = {}
        for key, record in self._get_records(wanted):
            if key not in asked:
                self.corrupt(key, "a record for a key that was not asked for")
            elif not isinstance(record.expires_at, (int, float)) or record.expires_at <= now:
                expired[key] = record  # real DynamoDB deletes expired items late, moto never: readers check
            else:
                result = decode_result(record.text, record.checksum)
                if result is None:
                    self.corrupt(key, "the result does not match its checksum or is not a JSON object")
                else:
                    found[key] = Entry(result, float(record.expires_at))
        if expired:
            self.stats.add("expired", len(expired))
            self._delete_records(expired)
        self.stats.add("hits", len(found))
        self.stats.add("misses", len(wanted) - len(found))
        return found

    def put_many(self, results: Mapping[str, Result], model_version: str = "") -> None:
        now = self._clock()
        self._store(((key, result, now + self.ttl_seconds) for key, result in results.items()), model_version, now)

    def put_entries(self, entries: Mapping[str, Entry], model_version: str = "") -> None:
        """Store results that already carry their expiry (an LRU fill from the shared store)."""
        self._store(((key, result, expires_at) for key, (result, expires_at) in entries.items()), model_version,
                    self._clock())

    def _store(self, results: Iterable[tuple[str, Result, float]], model_version: str, now: float) -> None:
        records: dict[str, Record] = {}
        for key, result, expires_at in results:
            try:
                text, checksum = encode_result(result)
            except (TypeError, ValueError) as error:
                # Not JSON (NaN, an object): never cacheable anywhere, so only counted.
                log.warning("result cache: result for %s is not JSON, not stored in %s: %s", key[:12], self.name,
                            error)
                self.stats.add("errors")
                continue
            records[key] = Record(text, checksum, expires_at, model_version, now)
        if records:
            self.stats.add("writes", self._put_records(records))

    def corrupt(self, key: str | None, reason: object) -> None:
        """A stored record that is not what this code writes: a miss, counted and logged, never an answer."""
        log.warning("result cache: corrupt %s record %s ignored: %s", self.name, (key or "?")[:12], reason)
        self.stats.add("corrupt")
