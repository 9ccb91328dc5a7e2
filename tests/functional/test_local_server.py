"""`python -m function.devserver` driven by a real HTTP client over 127.0.0.1 on an ephemeral port."""
from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request

import pytest

from tests.support.function_fixtures import demo_models  # noqa: F401
from tests.support.serve_process import serving
from kit.photos import CAT_LABELS, encode, photo

MAX_BODY = 300_000


@pytest.fixture(scope="module")
def server(demo_models, tmp_path_factory):  # noqa: F811
    with serving(demo_models, tmp_path_factory.mktemp("serve"), MAX_BODY_BYTES=str(MAX_BODY)) as url:
        yield url


def _request(url: str, method: str = "GET", data: bytes | None = None, content_type: str | None = None):
    request = urllib.request.Request(url, data=data, method=method)
    if content_type:
        request.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.headers, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, error.headers, json.loads(error.read())


def test_raw_jpeg_body_like_curl_data_binary(server):
    jpeg = encode(photo("chelsea"), "JPEG", quality=90)
    status, headers, body = _request(f"{server}/classify", "POST", jpeg, "image/jpeg")
    assert status == 200 and headers["Content-Type"] == "application/json; charset=utf-8"
    assert body["predictions"][0]["label"] in CAT_LABELS
    # curl without -H sends application/x-www-form-urlencoded: still an image, still the same answer
    status, _, again = _request(f"{server}/classify", "POST", jpeg, "application/x-www-form-urlencoded")
    assert status == 200 and again["predictions"][0]["label"] == body["predictions"][0]["label"]
    assert again["predictions"][0]["cached"] is True


def test_query_options_for_raw_bodies(server):
    digit = encode(photo("chelsea").convert("L").resize((8, 8)), "PNG")
    status, _, body = _request(f"{server}/classify?model=digits&top_k=2", "POST", digit, "image/png")
    assert status == 200 and body["model"] == "digits" and len(body["predictions"][0]["top_k"]) == 2


def test_json_routes(server):
    status, _, body = _request(f"{server}/sentiment", "POST", json.dumps({"text": "Señor, ¡qué película tan buena!"})
                               .encode(), "application/json")
    assert status == 200 and body["predictions"][0]["label"] in ("positive", "negative")
    status, _, body = _request(f"{server}/tokenize", "POST", b'{"text": "hello there"}', "application/json")
    assert status == 200 and body["results"][0]["count"] >= 2
    assert _request(f"{server}/models")[2]["models"]
    assert _request(f"{server}/health")[2]["status"] == "ok"


def test_the_page_and_the_openapi_document(server):
    with urllib.request.urlopen(f"{server}/", timeout=60) as response:
        assert response.headers["Content-Type"] == "text/html; charset=utf-8"
        assert b"<title>Try the models" in response.read()
    status, _, document = _request(f"{server}/openapi.json")
    assert status == 200 and document["openapi"] == "3.1.0" and "/" in document["paths"]


@pytest.mark.parametrize("method,path,data,content_type,status,code", [
    ("GET", "/nowhere", None, None, 404, "route_not_found"),
    ("PUT", "/classify", b"{}", "application/json", 405, "method_not_allowed"),
    ("POST", "/classify", b"{broken", "application/json", 400, "invalid_json"),
    ("POST", "/classify", b"not an image at all", "image/jpeg", 415, "unsupported_image"),
    ("POST", "/classify", b"\0" * (MAX_BODY + 1), "image/jpeg", 413, "body_too_large"),
    ("TRACE", "/classify", None, None, 405, "method_not_allowed"),  # http.server alone answers 501 in HTML
    ("QUERY", "/health", None, None, 405, "method_not_allowed"),
    # As API Gateway passes it: an empty query value is an empty string, not a missing option.
    ("POST", "/classify?model=", encode(photo("chelsea"), "JPEG"), "image/jpeg", 400, "invalid_field"),
])
def test_errors_over_http(server, method, path, data, content_type, status, code):
    got_status, _, body = _request(f"{server}{path}", method, data, content_type)
    assert (got_status, body["error"]["code"]) == (status, code)
    assert _request(f"{server}/health")[0] == 200


def test_malformed_http_gets_a_json_error_and_the_server_keeps_serving(server):
    host, port = server.removeprefix("http://").split(":")
    smuggled = b"GET /models HTTP/1.1\r\nHost: x\r\n\r\n"
    with socket.create_connection((host, int(port)), timeout=10) as client:
        client.sendall(b"POST /sentiment HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n" + smuggled)
        received = b""
        while chunk := client.recv(65536):
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400 ") and json.loads(body)["error"]["code"] == "malformed_request"
    assert received.count(b"HTTP/1.1 ") == 1  # the body was not run as a second request
    assert _request(f"{server}/health")[0] == 200
