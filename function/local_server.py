"""Plain HTTP on 127.0.0.1 -> the API Gateway HTTP API (payload 2.0) event the handler receives in AWS.

Bodies that API Gateway would treat as binary (anything but text-like content types, or bytes that are not
UTF-8) are base64-encoded with isBase64Encoded=true, exactly as the function sees them behind an HTTP API.
"""
from __future__ import annotations

import base64
import time
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace
from urllib.parse import parse_qsl, urlsplit

from function.errors import body_too_large
from function.http_errors import error_response
from function.responses import Response, json_response

TEXT_TYPES = ("application/json", "application/xml", "application/javascript", "application/x-www-form-urlencoded")
Handler = Callable[[dict, object], dict]


def as_text(content_type: str, body: bytes) -> str | None:
    """The body as text when API Gateway would pass it as text (a textual type, valid UTF-8), else None."""
    kind = content_type.split(";")[0].strip().lower()
    textual = kind.startswith("text/") or kind in TEXT_TYPES or kind.endswith(("+json", "+xml"))
    if not textual:
        return None
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return None


def http_api_event(method: str, target: str, headers: dict[str, str], body: bytes, source_ip: str) -> dict:
    """The payload 2.0 event API Gateway builds for this request ($default stage and route)."""
    url = urlsplit(target)
    lowered = {name.lower(): value for name, value in headers.items()}
    text = as_text(lowered.get("content-type", ""), body)
    now = time.time()
    return {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": url.path,
        "rawQueryString": url.query,
        # API Gateway joins repeated names with commas and keeps empty values (`?model=` is model "").
        **({"queryStringParameters": _joined(parse_qsl(url.query, keep_blank_values=True))} if url.query else {}),
        "headers": lowered,
        "requestContext": {
            "accountId": "000000000000",
            "apiId": "local",
            "domainName": lowered.get("host", "localhost"),
            "domainPrefix": "local",
            "http": {"method": method, "path": url.path, "protocol": "HTTP/1.1", "sourceIp": source_ip,
                     "userAgent": lowered.get("user-agent", "")},
            "requestId": uuid.uuid4().hex,
            "routeKey": "$default",
            "stage": "$default",
            "time": time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(now)),
            "timeEpoch": int(now * 1000),
        },
        "body": (text if text is not None else base64.b64encode(body).decode("ascii")) if body else None,
        "isBase64Encoded": bool(body) and text is None,
    }


def _joined(pairs: list[tuple[str, str]]) -> dict[str, str]:
    joined: dict[str, str] = {}
    for name, value in pairs:
        joined[name] = f"{joined[name]},{value}" if name in joined else value
    return joined


def make_request_handler(handler: Handler, max_body_bytes: int) -> type[BaseHTTPRequestHandler]:
    class ApiGatewayRequestHandler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out in two writes: with Nagle on, each keep-alive answer waited ~44 ms for the
        # client's delayed ACK (measured by bench/throughput.py).
        disable_nagle_algorithm = True

        def _serve(self) -> None:
            length = self.headers.get("content-length")
            if self.headers.get("transfer-encoding", "").lower() == "chunked" and length is None:
                self.close_connection = True
                return self._send(json_response(411, {"error": {"code": "length_required",
                                                                     "message": "Send a Content-Length header."}}))
            size = int(length) if length and length.isdigit() else 0
            if size > max_body_bytes:
                # Refuse before reading, as Lambda refuses a payload over its limit.
                self.close_connection = True
                return self._send(error_response(body_too_large(size, max_body_bytes)))
            body = self.rfile.read(size) if size else b""
            event = http_api_event(self.command, self.path, dict(self.headers.items()), body, self.client_address[0])
            context = SimpleNamespace(aws_request_id=event["requestContext"]["requestId"], function_name="local")
            result = handler(event, context)
            payload = result.get("body") or ""
            raw = base64.b64decode(payload) if result.get("isBase64Encoded") else payload.encode("utf-8")
            self._send(Response(result["statusCode"], raw, dict(result.get("headers") or {})))

        def _send(self, response: Response) -> None:
            self.send_response(response.status)
            for name, value in response.headers.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(response.body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(response.body)

        def __getattr__(self, name: str):
            # Every method reaches the function, which answers 405 where a route lacks it: http.server alone
            # answers an HTML 501 to any method it has no do_ attribute for (TRACE, QUERY...).
            if name.startswith("do_"):
                return self._serve
            raise AttributeError(name)

        def log_message(self, format: str, *args) -> None:  # noqa: A002
            pass  # the handler already logs one JSON line per request

    return ApiGatewayRequestHandler


class LocalHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64  # the default backlog of 5 dropped connections under 16 concurrent clients


def make_server(handler: Handler, host: str, port: int, max_body_bytes: int) -> ThreadingHTTPServer:
    server = LocalHTTPServer((host, port), make_request_handler(handler, max_body_bytes))
    return server
