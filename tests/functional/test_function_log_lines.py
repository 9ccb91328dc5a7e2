"""One request, exactly one JSON line: through the real handler, with a client's method, path and request id
holding line separators, lone surrogates and controls, written to a strict UTF-8 stream as Lambda's stdout is."""
from __future__ import annotations

import copy
import io
import json
import logging
import re

import pytest

from function.cache.memory import MemoryResultStore
from function.entry import handle_event
from function.log import UNSAFE_IN_A_LINE, JsonLineFormatter
from tests.support.digits_service import digits_models, digits_service  # noqa: F401  (fixture)
from kit.events import http_api_event, rest_api_event
from tests.support.log_capture import attached

HOSTILE = ["\u2028", "\u2029", "\u0085", "\ud800", "\udfff", "\n", "\r\n", "\x1e", "\x00", "\U0001f600"]


class FailureRecordingHandler(logging.StreamHandler):
    def __init__(self, stream) -> None:
        super().__init__(stream)
        self.failures: list = []

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802  (logging's name)
        self.failures.append(record)


@pytest.fixture()
def log_bytes():
    """The bytes the function's logger writes during the test, through a strict UTF-8 text stream."""
    raw = io.BytesIO()
    handler = FailureRecordingHandler(io.TextIOWrapper(raw, encoding="utf-8", errors="strict", newline="\n",
                                                       write_through=True))
    handler.setFormatter(JsonLineFormatter())
    with attached(handler):
        yield raw
    assert handler.failures == [], "logging dropped a line it could not format or write"


def hostile_events() -> list[dict]:
    events = []
    for text in HOSTILE:
        v2 = http_api_event("GET", "/health")
        v2["requestContext"]["requestId"] = f"id{text}"
        events.append(v2)
        v2 = copy.deepcopy(v2)
        v2["requestContext"]["http"]["method"] = f"GET{text}"
        v2["rawPath"] = v2["requestContext"]["http"]["path"] = f"/health{text}"
        events.append(v2)
        v1 = rest_api_event("POST", f"/sentiment{text}", {"text": "fine"})
        v1["httpMethod"] = f"P{text}ST"
        v1["requestContext"]["requestId"] = text
        events.append(v1)
    return events


def test_each_request_writes_exactly_one_json_line(digits_models, log_bytes):  # noqa: F811
    service = digits_service(digits_models, MemoryResultStore(10, ttl_seconds=60))
    events = hostile_events()
    statuses = [handle_event(service, event, None)["statusCode"] for event in events]
    assert all(status < 500 for status in statuses), statuses
    lines = log_bytes.getvalue().split(b"\n")
    assert lines.pop() == b"" and len(lines) == len(events)
    for line in lines:
        text = line.decode("utf-8")
        assert len(text.splitlines()) == 1 and not re.search(UNSAFE_IN_A_LINE, text)
        assert isinstance(json.loads(text), dict)


def test_a_bug_is_one_line_too_with_its_traceback_inside(digits_models, log_bytes, monkeypatch):  # noqa: F811
    # A fault we cannot cause from outside (a bug of ours): the one place a mock is the right tool.
    service = digits_service(digits_models, MemoryResultStore(10, ttl_seconds=60))

    def broken(*args, **kwargs):
        raise RuntimeError("a bug of ours")

    monkeypatch.setattr(service.store, "get_many", broken)
    result = handle_event(service, http_api_event("POST", "/sentiment", {"text": "fine", "model": "nope"}), None)
    assert result["statusCode"] == 404  # the model lookup comes first: no bug reached
    result = handle_event(service, http_api_event("POST", "/classify", {"model": "digits", "image": "aGk="}), None)
    assert result["statusCode"] == 500 and json.loads(result["body"])["error"]["code"] == "internal_error"
    lines = log_bytes.getvalue().decode("utf-8").splitlines()
    assert len(lines) == 2
    record = json.loads(lines[1])
    assert record["level"] == "ERROR" and record["error_code"] == "internal_error"
    assert "a bug of ours" in record["exception"] and "a bug of ours" not in result["body"]
