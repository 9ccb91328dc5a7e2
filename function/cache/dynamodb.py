"""The shared store across containers: a DynamoDB table, through a lazily created standard-library client
(function/aws/dynamodb.py: boto3 cost 0.2-0.45 s of cold start for the two calls made here).

Every failure (down, slow, throttled, malformed item, oversize result) is logged, counted and becomes a miss or
a skipped write. Latency bound and table definition: docs/caching.md.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping

from function.aws.dynamodb import client_from_environment
from function.cache.base import BaseResultStore, Record, chunks
from function.cache.breaker import CircuitBreaker
from function.cache.dynamodb_item import KEY_ATTRIBUTE, MAX_ITEM_BYTES, CorruptItem, item_of, item_size, parse_item
from function.cache.dynamodb_response import MalformedResponse, read_get_answer, read_write_answer

log = logging.getLogger(__name__)

GET_BATCH = 100  # BatchGetItem's limit
PUT_BATCH = 25  # BatchWriteItem's limit
UNPROCESSED_RETRIES = 2  # extra rounds for UnprocessedKeys/Items before they count as throttled
UNPROCESSED_PAUSE_SECONDS = 0.05  # times the round number: 50 ms, then 100 ms
COOLDOWN_SECONDS = 30.0  # after a failed call, the store is skipped this long (docs/caching.md: latency bound)
# One lookup or one write (every batch, attempt, pause and unprocessed round of it) ends within this: a request
# makes at most one of each, so the store adds at most 2 x 0.7 s to it (docs/caching.md states +1.5 s).
STORE_CALL_DEADLINE_SECONDS = 0.7
CONNECT_TIMEOUT_SECONDS = 0.5
TOTAL_MAX_ATTEMPTS = 2
FAILED = object()  # what _call returns for a failed call (an answer may itself be JSON null)
THROTTLING_CODES = frozenset({
    "ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded", "Throttling",
})


def create_dynamodb_client():
    """A DynamoDB client with a short deadline and one retry, configured from the environment Lambda provides."""
    return client_from_environment(
        connect_timeout=CONNECT_TIMEOUT_SECONDS,
        call_timeout=STORE_CALL_DEADLINE_SECONDS,
        max_attempts=TOTAL_MAX_ATTEMPTS,
        retry_codes=THROTTLING_CODES,
    )


def _error_code(error: Exception) -> str:
    response = getattr(error, "response", None)
    if isinstance(response, dict):
        return str(response.get("Error", {}).get("Code", ""))
    return ""


class DynamoDBResultStore(BaseResultStore):
    name = "DynamoDB"

    def __init__(
        self,
        table: str,
        ttl_seconds: float,
        client_factory: Callable[[], object] = create_dynamodb_client,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
        call_deadline_seconds: float = STORE_CALL_DEADLINE_SECONDS,
    ) -> None:
        super().__init__(ttl_seconds, clock)
        self.table = table
        self.breaker = CircuitBreaker(COOLDOWN_SECONDS)
        self._client = None
        self._client_factory = client_factory
        self._client_lock = threading.Lock()
        self._sleep = sleep
        self.call_deadline_seconds = call_deadline_seconds

    def _dynamodb(self):
        if self._client is None:
            with self._client_lock:
                if self._client is None:
                    self._client = self._client_factory()
        return self._client

    def close(self) -> None:
        """Drops the client: the next call makes a new one, with new connections and the credentials read again."""
        with self._client_lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def _fail(self, counter: str, operation: str, count: int, reason: str) -> None:
        """Every failed call ends here: counted, logged, and the table skipped for the cool-down."""
        self.stats.add(counter)
        self.breaker.trip()
        log.warning("result cache: DynamoDB %s of %d items failed (%s); skipping the table for %.0f s",
                    operation, count, reason, self.breaker.cooldown_seconds)

    def _call(self, operation: str, count: int, deadline: float, **request) -> object:
        """One API call within `deadline`: its parsed JSON answer, or FAILED (counted, breaker opened)."""
        try:
            return getattr(self._dynamodb(), operation)(deadline=deadline, **request)
        except Exception as error:  # the contract is "never raises": HTTP errors, sockets, bad config alike
            code = _error_code(error)
            self._fail("throttled" if code in THROTTLING_CODES else "errors", operation, count,
                       f"{code or type(error).__name__}: {error}")
            return FAILED

    def _get_records(self, keys: list[str]) -> list[tuple[str, Record]]:
        found: list[tuple[str, Record]] = []
        deadline = time.monotonic() + self.call_deadline_seconds
        for chunk in chunks(keys, GET_BATCH):  # BatchGetItem rejects duplicate keys: the base class sends none

            def collect(answer: object, sent: int) -> dict:
                items, unprocessed = read_get_answer(answer, self.table, sent)
                for item in items:
                    try:
                        found.append(parse_item(item))
                    except CorruptItem as error:
                        self.corrupt(None, error)
                return unprocessed

            request = {self.table: {"Keys": [{KEY_ATTRIBUTE: {"S": key}} for key in chunk]}}
            self._batch_rounds("batch_get_item", request, self._keys_in, collect, deadline,
                               "keys unprocessed, treated as misses")
        return found

    def _put_records(self, records: Mapping[str, Record]) -> int:
        items = []
        for key, record in records.items():
            item = item_of(key, record)
            size = item_size(item)
            if size > MAX_ITEM_BYTES:
                log.warning("result cache: result for %s is %d bytes as an item, over DynamoDB's %d: not stored",
                            key[:12], size, MAX_ITEM_BYTES)
                self.stats.add("oversize")
                continue
            items.append(item)
        written = 0
        deadline = time.monotonic() + self.call_deadline_seconds
        for chunk in chunks(items, PUT_BATCH):

            def count_writes(answer: object, sent: int) -> dict:
                nonlocal written
                unprocessed = read_write_answer(answer, self.table, sent)
                written += sent - self._writes_in(unprocessed)
                return unprocessed

            request = {self.table: [{"PutRequest": {"Item": item}} for item in chunk]}
            self._batch_rounds("batch_write_item", request, self._writes_in, count_writes, deadline,
                               "writes unprocessed, skipped")
        return written

    def _keys_in(self, request: dict) -> int:
        return len(request.get(self.table, {}).get("Keys", []))

    def _writes_in(self, request: dict) -> int:
        return len(request.get(self.table, []))

    def _batch_rounds(self, operation: str, request: dict, pending: Callable[[dict], int],
                      handle: Callable[[object, int], dict], deadline: float, leftover: str) -> None:
        """One batch call, then up to UNPROCESSED_RETRIES more (pausing longer each time) for what DynamoDB left
        unprocessed, all before `deadline`; handle(answer, items sent) reads an answer (MalformedResponse when it
        is not shaped like one) and returns the request for what is left."""
        for round_number in range(UNPROCESSED_RETRIES + 1):
            sent = pending(request)
            if not self.breaker.allows():
                self.stats.add("skipped", sent)
                return
            pause = UNPROCESSED_PAUSE_SECONDS * round_number
            if time.monotonic() + pause >= deadline:  # answered, but too slowly to finish within the call's time
                self._fail("errors", operation, sent, f"{self.call_deadline_seconds} s deadline reached")
                return
            if pause:
                self._sleep(pause)
            answer = self._call(operation, sent, deadline, RequestItems=request)
            if answer is FAILED:
                return
            try:
                request = handle(answer, sent)
            except MalformedResponse as error:
                self._fail("errors", operation, sent, f"malformed answer: {error}")
                return
            if not pending(request):
                return
        left = pending(request)
        log.warning("result cache: DynamoDB left %d %s", left, leftover)
        self.stats.add("throttled", left)
