"""Every client error is a stable code with the right status, never a 500, and the process stays healthy."""
from __future__ import annotations

import json
import struct
import zlib

import pytest
from PIL import Image

from function.entry import handle_event
from tests.support.function_fixtures import (  # noqa: F401
    assert_healthy, call, demo_models, make_service, registry, service,
)
from kit.photos import b64, encode, photo


def _png_bomb() -> bytes:
    data = bytearray(encode(Image.new("L", (1, 1)), "PNG"))
    data[16:24] = struct.pack(">II", 50_000, 50_000)
    data[29:33] = struct.pack(">I", zlib.crc32(bytes(data[12:29])))
    return bytes(data)


JPEG = encode(photo("chelsea").resize((120, 80)), "JPEG")

CASES = [
    # (method, path, body, content type, binary, status, code)
    ("POST", "/classify", "{not json", "application/json", False, 400, "invalid_json"),
    ("POST", "/classify", "", "application/json", False, 400, "invalid_json"),
    ("POST", "/classify", {}, "application/json", False, 400, "missing_field"),
    ("POST", "/classify", {"image": 5}, "application/json", False, 400, "invalid_field"),
    ("POST", "/classify", {"images": "abc"}, "application/json", False, 400, "invalid_field"),
    ("POST", "/classify", {"image": "*** not base64 ***"}, "application/json", False, 400, "invalid_base64"),
    ("POST", "/classify", {"images": []}, "application/json", False, 400, "empty_batch"),
    ("POST", "/classify", {"image": b64(JPEG), "top_k": 0}, "application/json", False, 400, "invalid_field"),
    ("POST", "/classify", {"image": b64(JPEG), "model": 7}, "application/json", False, 400, "invalid_field"),
    ("POST", "/classify", {"image": b64(JPEG), "model": "sentiment"}, "application/json", False, 400,
     "wrong_model_task"),
    ("POST", "/classify", {"image": b64(JPEG), "model": "nope"}, "application/json", False, 404, "model_not_found"),
    ("POST", "/classify", {"images": [b64(JPEG)] * 17}, "application/json", False, 413, "batch_too_large"),
    ("POST", "/classify", {"image": b64(_png_bomb())}, "application/json", False, 413, "image_too_large"),
    ("POST", "/classify", _png_bomb(), "image/png", True, 413, "image_too_large"),
    ("POST", "/classify", {"image": b64(b"plain text, not an image")}, "application/json", False, 415,
     "unsupported_image"),
    ("POST", "/classify", {"images": [b64(JPEG), b64(JPEG[:200])]}, "application/json", False, 415,
     "unsupported_image"),
    ("POST", "/classify", b"GIF89a but not really", "image/gif", True, 415, "unsupported_image"),
    ("POST", "/classify", b"", "image/jpeg", True, 400, "missing_field"),
    ("POST", "/classify", b"--x\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\n" + JPEG + b"\r\n--x--",
     "multipart/form-data; boundary=x", True, 415, "unsupported_media_type"),
    ("POST", "/sentiment", {"text": "   "}, "application/json", False, 400, "empty_text"),
    ("POST", "/sentiment", {"texts": ["fine", ""]}, "application/json", False, 400, "empty_text"),
    ("POST", "/sentiment", {"texts": ["fine", 3]}, "application/json", False, 400, "invalid_field"),
    ("POST", "/sentiment", {"text": "x" * 10_001}, "application/json", False, 413, "text_too_large"),
    ("POST", "/sentiment", {"text": "good", "model": "digits"}, "application/json", False, 400, "wrong_model_task"),
    ("POST", "/sentiment", b"\xff\xd8\xff", "image/jpeg", True, 400, "invalid_json"),
    ("POST", "/tokenize", {"text": ""}, "application/json", False, 400, "empty_text"),
    ("POST", "/tokenize", {"texts": ["a"] * 129}, "application/json", False, 413, "batch_too_large"),
    ("POST", "/sentiment", {"texts": ["a"] * 129}, "application/json", False, 413, "batch_too_large"),
    ("GET", "/nope", None, "application/json", False, 404, "route_not_found"),
    ("GET", "/classify", None, "application/json", False, 405, "method_not_allowed"),
    ("DELETE", "/models", None, "application/json", False, 405, "method_not_allowed"),
    ("POST", "/health", {}, "application/json", False, 405, "method_not_allowed"),
]


@pytest.mark.parametrize("event_format", ["2.0", "1.0"])
@pytest.mark.parametrize("method,path,body,content_type,binary,status,code", CASES,
                         ids=[f"{c[0]} {c[1]} {c[6]}" for c in CASES])
def test_client_errors(service, event_format, method, path, body, content_type, binary, status, code):
    got_status, got = call(service, method, path, body, content_type, binary, event_format)
    assert (got_status, got["error"]["code"]) == (status, code)
    message = got["error"]["message"]
    assert message and "\n" not in message and "Traceback" not in message
    assert_healthy(service)
    # ...and the model still answers correctly after the bad request.
    ok_status, ok = call(service, "POST", "/classify", {"image": b64(JPEG), "top_k": 1})
    assert ok_status == 200 and len(ok["predictions"]) == 1


def test_405_names_the_allowed_methods(service):
    from kit.events import http_api_event

    result = handle_event(service, http_api_event("GET", "/classify"), None)
    assert result["headers"]["allow"] == "POST"


def test_body_over_the_limit_is_413(registry):  # noqa: F811
    small = make_service(registry, max_body_bytes=1000)
    status, body = call(small, "POST", "/classify", JPEG, "image/jpeg", True)
    assert (status, body["error"]["code"]) == (413, "body_too_large")
    assert_healthy(small)


@pytest.mark.parametrize("event", [{}, {"Records": [{"s3": {}}]}, {"version": "2.0"}])
def test_events_that_are_not_api_gateway_are_400(service, event):
    result = handle_event(service, event, None)
    assert result["statusCode"] == 400
    assert json.loads(result["body"])["error"]["code"] == "unsupported_event"
    assert_healthy(service)


@pytest.mark.parametrize("path,raw,code", [
    ("/sentiment", '{"text": "bad \\ud800 surrogate"}', "invalid_field"),
    ("/classify", '{"image": "x", "model": "\\ud800"}', "invalid_base64"),
    ("/classify", '{"image": ' + "[" * 100_000 + "]" * 100_000 + "}", "invalid_json"),
])
def test_hostile_json_is_a_400_not_a_crash(service, path, raw, code):
    status, body = call(service, "POST", path, raw)
    assert (status, body["error"]["code"]) == (400, code)
    assert_healthy(service)


def test_unknown_model_name_with_a_lone_surrogate_is_still_a_clean_404(service):
    status, body = call(service, "POST", "/classify", '{"image": "%s", "model": "\\ud800"}' % b64(JPEG))
    assert (status, body["error"]["code"]) == (404, "model_not_found")
