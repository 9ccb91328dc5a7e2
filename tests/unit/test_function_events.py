"""API Gateway events -> Request, for both payload formats, with bodies decoded to bytes exactly once."""
from __future__ import annotations

import base64
import json

import pytest

from function.errors import UnsupportedEvent
from function.events import parse_event
from function.responses import Response, json_response, to_result
from kit.events import load_event


def test_http_api_v2_json_event():
    request = parse_event(load_event("http_api_v2_post_json.json"))
    assert (request.method, request.path, request.event_format) == ("POST", "/sentiment", "2.0")
    assert request.content_type == "application/json"
    assert json.loads(request.body) == {"text": "What a wonderful, delightful film."}
    assert request.request_id == "JKJaXmPLvHcESHA="


def test_rest_v1_json_event_lowercases_headers():
    request = parse_event(load_event("rest_v1_post_json.json"))
    assert (request.method, request.path, request.event_format) == ("POST", "/sentiment", "1.0")
    assert request.headers["content-type"] == "application/json"
    assert "Content-Type" not in request.headers


@pytest.mark.parametrize("name", ["http_api_v2_post_image_binary.json", "rest_v1_post_image_binary.json"])
def test_binary_body_is_decoded_to_the_exact_bytes(name):
    event = load_event(name)
    request = parse_event(event)
    assert request.body == base64.b64decode(event["body"])
    assert request.body.startswith(b"\x89PNG\r\n\x1a\n")
    assert request.query == {"model": "digits", "top_k": "3"}


def test_raw_jpeg_bytes_survive_untouched():
    # Bytes that are not UTF-8: a text decode (Powertools' decoded_body) would mangle them.
    jpeg_like = bytes(range(256)) * 4
    event = load_event("http_api_v2_post_image_binary.json")
    event["body"] = base64.b64encode(jpeg_like).decode()
    assert parse_event(event).body == jpeg_like


def test_get_without_body_has_empty_bytes():
    request = parse_event(load_event("http_api_v2_get_health.json"))
    assert (request.method, request.path, request.body) == ("GET", "/health", b"")


def test_named_stage_is_stripped_from_http_api_path():
    event = load_event("http_api_v2_get_health.json")
    event["rawPath"] = "/prod/health"
    event["requestContext"]["stage"] = "prod"
    assert parse_event(event).path == "/health"


@pytest.mark.parametrize("event", [
    {"hello": "world"},
    ["not", "an", "object"],
    {"version": "2.0", "requestContext": {"http": {}}},
])
def test_non_proxy_events_are_refused(event):
    with pytest.raises(UnsupportedEvent):
        parse_event(event)


def test_body_flagged_base64_but_not_base64_is_refused():
    event = load_event("http_api_v2_post_image_binary.json")
    event["body"] = "this is not base64!"
    with pytest.raises(UnsupportedEvent):
        parse_event(event)


def test_result_shape_and_utf8_json():
    result = to_result(json_response(200, {"label": "café ☕"}))
    assert result["statusCode"] == 200
    assert result["isBase64Encoded"] is False
    assert result["headers"]["content-type"] == "application/json; charset=utf-8"
    assert "café ☕" in result["body"]  # not \u escapes
    assert to_result(Response(204, b""))["body"] == ""
