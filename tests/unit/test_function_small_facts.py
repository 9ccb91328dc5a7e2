"""Small facts with one home each: which bodies are text (function/responses.py, extended by the development
server for API Gateway's request side) and the head of a library's exception text (function/errors.py)."""
from __future__ import annotations

import json

import pytest

from function.devserver.server import REQUEST_TEXT_TYPES, as_text
from function.errors import first_line
from function.responses import TEXT_TYPES, Response, to_result


@pytest.mark.parametrize("content_type", ["application/json", "text/html; charset=utf-8", "text/plain"])
def test_what_the_function_answers_as_text_the_dev_server_passes_as_text(content_type):
    assert to_result(Response(200, b"ok", {"content-type": content_type}))["isBase64Encoded"] is False
    assert as_text(content_type, b"ok") == "ok"


@pytest.mark.parametrize("content_type,text", [
    ("application/xml", True), ("application/javascript", True), ("application/x-www-form-urlencoded", True),
    ("application/vnd.api+json", True), ("image/svg+xml", True), ("TEXT/CSV", True),
    ("application/jsonl", False), ("application/octet-stream", False), ("image/png", False), ("", False),
])
def test_the_dev_server_passes_api_gateways_text_types_as_text(content_type, text):
    assert set(TEXT_TYPES) <= set(REQUEST_TEXT_TYPES)
    assert (as_text(content_type, b"<a/>") is not None) is text
    assert as_text(content_type, b"\xff\xfe") is None  # not UTF-8: base64, whatever the type says


def test_first_line_is_the_head_of_the_message_or_says_there_is_none():
    with pytest.raises(ValueError) as caught:
        json.loads("{")
    assert first_line(caught.value) == str(caught.value)
    assert first_line(RuntimeError("  first\nsecond")) == "first"
    assert first_line(RuntimeError("x" * 500)) == "x" * 200
    assert first_line(RuntimeError()) == "no details"
