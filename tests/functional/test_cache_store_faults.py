"""A DynamoDB that misbehaves on the wire, behind a real request: every request is still answered with computed
results, the store adds less than its documented bound (docs/caching.md, "Failures": +1.5 s per request), the
failure is counted and opens the breaker, and the next request does not call the table at all.

The endpoint is a real TCP server on 127.0.0.1 (tests/support/faulty_endpoint.py): bytes trickled one every
0.25 s, 200s whose JSON has the wrong shape, HTML, resets, silence. The model is the small digits one, so the
time measured is the store's. Run with -s to see each case's time (the failure table in docs/caching.md).
"""
from __future__ import annotations

import json

import pytest

from function.cache.dynamodb import DynamoDBResultStore
from function.cache.memory import MemoryResultStore
from function.cache.tiered import TieredResultStore
from function.service import Service
from tests.support.digits_service import classify, digits_models, digits_service  # noqa: F401  (fixture)
from kit.dynamodb_server import use_fake_credentials
from tests.support.faulty_endpoint import FaultyEndpoint, after, answer, hold, http_response, reset, trickle

STORE_BOUND_SECONDS = 1.5  # docs/caching.md: the most a failing or slow table adds to one request
TABLE = "results"
LOOKUP_MISS = json.dumps({"Responses": {TABLE: []}, "UnprocessedKeys": {}}).encode()
WRITTEN = json.dumps({"UnprocessedItems": {}}).encode()
HTML = b"<html><body><h1>502 Bad Gateway</h1></body></html>"


def json_200(text: str):
    return answer(200, text.encode())


LOOKUP_FAULTS = {
    "one byte every 0.25 s": trickle(http_response(200, LOOKUP_MISS)),
    "status line, then silence": hold(b"HTTP/1.1 200 OK\r\n"),
    "accepts, never answers": hold(),
    "Responses null": json_200('{"Responses": null}'),
    "UnprocessedKeys a string": json_200('{"Responses": {"results": []}, "UnprocessedKeys": "x"}'),
    "UnprocessedKeys.results.Keys null": json_200('{"Responses": {}, "UnprocessedKeys": {"results": {"Keys": null}}}'),
    "more unprocessed keys than asked": json_200(
        '{"Responses": {}, "UnprocessedKeys": {"results": {"Keys": [{}, {}, {}]}}}'),
    "Responses.results a string": json_200('{"Responses": {"results": "x"}}'),
    "items that are not objects": json_200('{"Responses": {"results": [1, "two", null]}}'),
    "no Responses": json_200("{}"),
    "a JSON list": json_200("[]"),
    "JSON null": json_200("null"),
    "an integer of 5,000 digits": json_200('{"Responses": {"results": []}, "n": ' + "1" * 5000 + "}"),
    "nested 100,000 deep": json_200("[" * 100_000),
    "truncated JSON": json_200('{"Responses": {"resu'),
    "HTML with 200": answer(200, HTML, "text/html"),
    "HTML with 502": answer(502, HTML, "text/html"),
    "reset after the request": reset(),
    "reset mid-answer": reset(http_response(200, LOOKUP_MISS)[:40]),
    "shorter body than its Content-Length": reset(http_response(200, LOOKUP_MISS)[:-5]),
}

WRITE_FAULTS = {
    "one byte every 0.25 s": trickle(http_response(200, WRITTEN)),
    "accepts, never answers": hold(),
    "UnprocessedItems a string": json_200('{"UnprocessedItems": "x"}'),
    "UnprocessedItems.results an object": json_200('{"UnprocessedItems": {"results": {"a": 1}}}'),
    "HTML with 200": answer(200, HTML, "text/html"),
    "reset after the request": reset(),
}


@pytest.fixture()
def table_at(monkeypatch, digits_models):  # noqa: F811
    """(endpoint url) -> (service, its DynamoDB store): one warm container whose table is at that url."""
    use_fake_credentials()

    def build(url: str) -> tuple[Service, DynamoDBResultStore]:
        monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", url)
        shared = DynamoDBResultStore(TABLE, ttl_seconds=60)
        service = digits_service(digits_models, TieredResultStore(MemoryResultStore(100, ttl_seconds=60), shared))
        classify(service, 0)  # warm: the interpreter is loaded before anything is timed
        return service, shared

    return build


def assert_skipped_next_time(service: Service, shared: DynamoDBResultStore, endpoint: FaultyEndpoint) -> None:
    calls, skipped = endpoint.requests, shared.stats["skipped"]
    classify(service, 6)
    assert endpoint.requests == calls, "the breaker is open: the table must not be called"
    assert shared.stats["skipped"] == skipped + 2  # the lookup and the write of that request


@pytest.mark.parametrize("fault", LOOKUP_FAULTS.values(), ids=LOOKUP_FAULTS.keys())
def test_a_failing_lookup_still_answers_within_the_bound(fault, table_at, request):
    with FaultyEndpoint(answer(200, LOOKUP_MISS), answer(200, WRITTEN), fault) as endpoint:
        service, shared = table_at(endpoint.url)  # the warm-up request found the table healthy
        _, seconds = classify(service, 3)
        print(f"\n[lookup] {request.node.callspec.id}: {seconds:.3f} s")
        assert seconds < STORE_BOUND_SECONDS
        assert shared.stats["errors"] + shared.stats["throttled"] == 1 and not shared.breaker.allows()
        assert shared.stats["skipped"] == 1  # the write after the failed lookup never left
        assert_skipped_next_time(service, shared, endpoint)


@pytest.mark.parametrize("fault", WRITE_FAULTS.values(), ids=WRITE_FAULTS.keys())
def test_a_slow_lookup_then_a_failing_write_still_answers_within_the_bound(fault, table_at, request):
    # The worst case of one request: a lookup that answers just inside its deadline, then a write that uses all of
    # its own. 0.5 s of the 0.7 s deadline leaves scheduling slack on two shared cores.
    slow_lookup = after(0.5, answer(200, LOOKUP_MISS))
    with FaultyEndpoint(answer(200, LOOKUP_MISS), answer(200, WRITTEN), slow_lookup, fault) as endpoint:
        service, shared = table_at(endpoint.url)
        _, seconds = classify(service, 3)
        print(f"\n[slow lookup + write] {request.node.callspec.id}: {seconds:.3f} s")
        assert seconds < STORE_BOUND_SECONDS
        assert shared.stats["errors"] + shared.stats["throttled"] == 1 and not shared.breaker.allows()
        assert shared.stats["misses"] == 2 and shared.stats["writes"] == 1  # only the warm-up's write landed
        assert_skipped_next_time(service, shared, endpoint)


def test_a_trickling_table_is_cut_at_the_deadline_not_when_the_answer_ends(table_at):
    # The whole answer would take ~30 s at one byte per 0.25 s; one request pays one deadline of it.
    with FaultyEndpoint(answer(200, LOOKUP_MISS), answer(200, WRITTEN), trickle(http_response(200, LOOKUP_MISS)))\
            as endpoint:
        service, shared = table_at(endpoint.url)
        _, seconds = classify(service, 3)
        assert 0.5 < seconds < STORE_BOUND_SECONDS
        assert endpoint.requests == 3  # warm-up lookup and write, then this lookup: no retry once time is up
