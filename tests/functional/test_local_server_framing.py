"""The local server's HTTP framing over raw sockets: every malformed request gets one JSON error in the project's
shape and the connection closes, a body is never run as a request, limits and time-outs hold, and well-formed
requests (keep-alive, pipelined, chunked, Expect: 100-continue, HEAD) still become the same payload 2.0 event.

The handler here records the events it gets, so "never runs a body as a request" is a count, not a hope.
"""
from __future__ import annotations

import json
import socket
import threading
import time

import pytest

from function.devserver.server import make_server

MAX_BODY = 1000
IDLE_TIMEOUT = 0.3
REQUEST_TIMEOUT = 0.6
SMUGGLED = b"GET /models HTTP/1.1\r\nHost: x\r\n\r\n"  # a request hidden in a body: must never be answered


class RecordingHandler:
    def __init__(self) -> None:
        self.events: list[dict] = []

    def __call__(self, event: dict, context: object) -> dict:
        self.events.append(event)
        body = json.dumps({"path": event["rawPath"], "method": event["requestContext"]["http"]["method"]})
        return {"statusCode": 200, "headers": {"content-type": "application/json"}, "body": body,
                "isBase64Encoded": False}


@pytest.fixture()
def server():
    handler = RecordingHandler()
    http = make_server(handler, "127.0.0.1", 0, MAX_BODY, idle_timeout=IDLE_TIMEOUT, request_timeout=REQUEST_TIMEOUT)
    thread = threading.Thread(target=http.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield http.server_address[1], handler
    finally:
        http.shutdown()
        http.server_close()


def exchange(port: int, *pieces: bytes, pause: float = 0.0, wait: float = 5.0) -> tuple[bytes, bool]:
    """Send the pieces (pausing between them), then read until the server closes; (bytes, closed by the server)."""
    with socket.create_connection(("127.0.0.1", port)) as client:
        for piece in pieces:
            try:
                client.sendall(piece)
            except OSError:
                break  # the server already answered and closed
            time.sleep(pause)
        received, ends = b"", time.monotonic() + wait
        while time.monotonic() < ends:
            client.settimeout(max(0.01, ends - time.monotonic()))
            try:
                chunk = client.recv(65536)
            except TimeoutError:
                return received, False
            except ConnectionResetError:
                return received, True
            if not chunk:
                return received, True
            received += chunk
        return received, False


def responses(data: bytes) -> list[tuple[int, dict[str, str], bytes]]:
    """(status, headers, body) of each Content-Length framed response in `data`, in order."""
    found = []
    while data:
        head, _, rest = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines[1:])}
        status = int(lines[0].split()[1])
        length = 0 if status < 200 else int(headers["content-length"])  # an interim answer has no body
        found.append((status, headers, rest[:length]))
        data = rest[length:]
    return found


def assert_one_json_error(data: bytes, closed: bool, status: int, code: str) -> dict:
    answers = [answer for answer in responses(data) if answer[0] != 100]
    assert len(answers) == 1, data
    got_status, headers, body = answers[0]
    error = json.loads(body)["error"]
    assert (got_status, error["code"]) == (status, code), body
    assert isinstance(error["message"], str) and error["message"].endswith(".")
    assert headers["content-type"].startswith("application/json") and headers["connection"] == "close"
    assert closed, "the connection must close after a refused request"
    return error


def post(headers: bytes, body: bytes = b"") -> bytes:
    return b"POST /sentiment HTTP/1.1\r\nHost: x\r\n" + headers + b"\r\n" + body


MALFORMED = {
    "Content-Length: superscript two": (post(b"Content-Length: \xc2\xb2\r\n", SMUGGLED), 400, "malformed_request"),
    "Content-Length of 5,000 digits": (post(b"Content-Length: " + b"9" * 5000 + b"\r\n", SMUGGLED), 400,
                                       "malformed_request"),
    "negative Content-Length": (post(b"Content-Length: -5\r\n", SMUGGLED), 400, "malformed_request"),
    "non-numeric Content-Length": (post(b"Content-Length: abc\r\n", SMUGGLED), 400, "malformed_request"),
    "two different Content-Lengths": (post(b"Content-Length: 3\r\nContent-Length: 4\r\n", b"abcd"), 400,
                                      "malformed_request"),
    "Transfer-Encoding: gzip, chunked": (post(b"Transfer-Encoding: gzip, chunked\r\n", b"0\r\n\r\n" + SMUGGLED),
                                         400, "malformed_request"),
    "chunked plus Content-Length": (post(b"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n",
                                         b"0\r\n\r\n" + SMUGGLED), 400, "malformed_request"),
    "a bad chunk size": (post(b"Transfer-Encoding: chunked\r\n", b"zz\r\nhello\r\n0\r\n\r\n"), 400,
                         "malformed_request"),
    "a bad request line": (b"HELLO\r\n\r\n", 400, "malformed_request"),
    # HTTP/0.9 sends no headers and waits: answered at once, not after the request time-out (that would be 408).
    "an HTTP/0.9 request line": (b"GET /health\r\n", 400, "malformed_request"),
    "an HTTP/0.9 request line, LF only": (b"GET /health\n", 400, "malformed_request"),
    "a request line without a version, after an empty line": (b"\r\nGET /\r\n", 400, "malformed_request"),
    "a request line alone that is not one": (b"HELLO\r\n", 400, "malformed_request"),
    "a request line with a space in the target": (b"GET /a b HTTP/1.1\r\nHost: x\r\n\r\n", 400, "malformed_request"),
    "NUL in the target": (b"GET /\x00 HTTP/1.1\r\nHost: x\r\n\r\n", 400, "malformed_request"),
    "HTTP/1.1 without Host": (b"GET /health HTTP/1.1\r\n\r\n", 400, "malformed_request"),
    "a header without a colon": (b"GET /health HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n", 400,
                                 "malformed_request"),
    "HTTP/2.0 in the request line": (b"GET /health HTTP/2.0\r\nHost: x\r\n\r\n", 400, "malformed_request"),
    "a 9 KB target": (b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414, "uri_too_long"),
    "a 200 KB target": (b"GET /" + b"a" * 200_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414, "uri_too_long"),
    "101 headers": (b"GET /health HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-%d: y\r\n" % i for i in range(101))
                    + b"\r\n", 431, "headers_too_large"),
    "a 20 KB header": (b"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 20_000 + b"\r\n\r\n", 431,
                       "headers_too_large"),
    "a 200 KB header": (b"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 200_000 + b"\r\n\r\n", 431,
                        "headers_too_large"),
    "a body over the limit, by Content-Length": (post(b"Content-Length: %d\r\n" % (MAX_BODY + 1)), 413,
                                                 "body_too_large"),
    "a body over the limit, chunked": (post(b"Transfer-Encoding: chunked\r\n",
                                            b"%x\r\n" % (MAX_BODY + 1) + b"a" * (MAX_BODY + 1) + b"\r\n0\r\n\r\n"),
                                       413, "body_too_large"),
    "CONNECT": (b"CONNECT /health HTTP/1.1\r\nHost: x\r\n\r\n", 501, "method_not_implemented"),
}


@pytest.mark.parametrize("raw, status, code", MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_request_gets_one_json_error_and_nothing_runs(server, raw, status, code):
    port, handler = server
    data, closed = exchange(port, raw)
    assert_one_json_error(data, closed, status, code)
    assert handler.events == [], "no part of a refused request may reach the handler"


def test_a_smuggled_request_in_a_body_is_never_answered(server):
    port, handler = server
    data, closed = exchange(port, post(b"Content-Length: abc\r\n", SMUGGLED), SMUGGLED, pause=0.05)
    assert_one_json_error(data, closed, 400, "malformed_request")
    assert handler.events == []


def test_a_body_of_the_declared_length_is_read_and_the_next_request_follows(server):
    port, handler = server
    body = b'{"text": "GET /models HTTP/1.1"}'
    data, _ = exchange(port, post(b"Content-Type: application/json\r\nContent-Length: %d\r\n" % len(body), body)
                       + b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert [status for status, _, _ in responses(data)] == [200, 200]
    assert [(e["requestContext"]["http"]["method"], e["rawPath"]) for e in handler.events] == [
        ("POST", "/sentiment"), ("GET", "/health")]
    assert handler.events[0]["body"] == body.decode() and handler.events[0]["isBase64Encoded"] is False


def test_pipelined_requests_are_answered_in_order(server):
    port, handler = server
    requests = b"".join(b"GET /r%d HTTP/1.1\r\nHost: x\r\n\r\n" % i for i in range(5))
    data, _ = exchange(port, requests + b"GET /last HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert [json.loads(body)["path"] for _, _, body in responses(data)] == [f"/r{i}" for i in range(5)] + ["/last"]


def test_a_chunked_body_becomes_the_events_body(server):
    port, handler = server
    data, _ = exchange(port, post(b"Transfer-Encoding: chunked\r\nContent-Type: image/png\r\nConnection: close\r\n",
                                  b"3\r\n\x89PN\r\n2\r\nG\x00\r\n0\r\n\r\n"))
    assert responses(data)[0][0] == 200
    event = handler.events[0]
    assert event["isBase64Encoded"] is True and event["body"] == "iVBORwA="  # base64 of the 5 bytes


def test_expect_100_continue_gets_its_interim_answer(server):
    port, handler = server
    head = post(b"Content-Type: application/json\r\nContent-Length: 2\r\nExpect: 100-continue\r\nConnection: close\r\n")
    data, _ = exchange(port, head, b"{}", pause=0.1)
    assert [status for status, _, _ in responses(data)] == [100, 200]


@pytest.mark.parametrize("method", [b"TRACE", b"QUERY", b"BREW"])
def test_any_method_token_reaches_the_function(server, method):
    # The function's router answers 405 with Allow for a method a route lacks (the OpenAPI fuzzer sends TRACE).
    port, handler = server
    data, _ = exchange(port, method + b" /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert responses(data)[0][0] == 200
    assert [e["requestContext"]["http"]["method"] for e in handler.events] == [method.decode()]


def test_head_answers_headers_only(server):
    port, _ = server
    data, _ = exchange(port, b"HEAD /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    head, _, rest = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200") and b"content-length: " in head and rest == b""


def test_the_event_is_the_http_api_payload_2_0_shape(server):
    port, handler = server
    exchange(port, b"GET /models?x=1&x=2&y=%C3%A9 HTTP/1.1\r\nHost: here:1\r\nX-Twice: a\r\nX-Twice: b\r\n"
             b"Connection: close\r\n\r\n")
    (event,) = handler.events
    assert event["version"] == "2.0" and event["routeKey"] == "$default" and event["rawPath"] == "/models"
    assert event["rawQueryString"] == "x=1&x=2&y=%C3%A9"
    assert event["queryStringParameters"] == {"x": "1,2", "y": "é"}  # repeated names joined, as API Gateway does
    assert event["headers"]["x-twice"] == "a,b" and event["requestContext"]["domainName"] == "here:1"
    assert event["requestContext"]["http"]["sourceIp"] == "127.0.0.1" and event["body"] is None


def test_an_idle_connection_is_closed(server):
    port, _ = server
    started = time.monotonic()
    data, closed = exchange(port, wait=5)
    assert closed and data == b"" and time.monotonic() - started < IDLE_TIMEOUT + 2


def test_a_kept_alive_connection_is_closed_when_idle(server):
    port, handler = server
    data, closed = exchange(port, b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n", wait=5)
    assert closed and [status for status, _, _ in responses(data)] == [200]


def test_a_request_trickled_past_its_time_limit_gets_408(server):
    port, handler = server
    pieces = [b"GET /health HTTP/1.1\r\n"] + [b"X: y\r\n"] * 40  # never finishes its head; each piece is in time
    data, closed = exchange(port, *pieces, pause=0.05)
    assert_one_json_error(data, closed, 408, "request_timeout")
    assert handler.events == []


@pytest.mark.parametrize("broken", [
    lambda event, context: 1 / 0,  # the handler's contract is "never raises": if it does, the server says so
    lambda event, context: {"statusCode": 200, "headers": {"x-bad": "a\r\nInjected: yes"}, "body": "{}"},
], ids=["handler raises", "header with a line break"])
def test_a_broken_handler_answer_is_a_json_500_not_a_dropped_connection(broken):
    http = make_server(broken, "127.0.0.1", 0, MAX_BODY, idle_timeout=IDLE_TIMEOUT)
    threading.Thread(target=http.serve_forever, args=(0.02,), daemon=True).start()
    try:
        data, _ = exchange(http.server_address[1], b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
    finally:
        http.shutdown()
        http.server_close()
    ((status, headers, body),) = responses(data)
    assert status == 500 and json.loads(body)["error"]["code"] == "internal_error"
    assert "injected" not in headers
