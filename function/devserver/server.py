"""Plain HTTP on 127.0.0.1 -> the API Gateway HTTP API (payload 2.0) event the handler receives in AWS.

Bodies that API Gateway would treat as binary (anything but text-like content types, or bytes that are not
UTF-8) are base64-encoded with isBase64Encoded=true, exactly as the function sees them behind an HTTP API.
HTTP framing, limits and time-outs are framing.py's (h11). Development only, as all of function/devserver/.
"""
from __future__ import annotations

import base64
import socket
import socketserver
import time
import traceback
import uuid
from collections.abc import Callable
from types import SimpleNamespace
from urllib.parse import parse_qsl, urlsplit

from function.devserver import docs
from function.devserver.cors import CorsPolicy
from function.devserver.framing import HttpConnection, IncomingRequest, Limits
from function.http_errors import internal_error_response
from function.responses import TEXT_TYPES, Response

# API Gateway passes more request bodies as text than the function answers with: these too, and +json / +xml.
REQUEST_TEXT_TYPES = (*TEXT_TYPES, "application/xml", "application/javascript", "application/x-www-form-urlencoded")
Handler = Callable[[dict, object], dict]


def as_text(content_type: str, body: bytes) -> str | None:
    """The body as text when API Gateway would pass it as text (a textual type, valid UTF-8), else None."""
    kind = content_type.split(";")[0].strip().lower()
    textual = kind.endswith(("+json", "+xml")) or any(
        kind == text or (text.endswith("/") and kind.startswith(text)) for text in REQUEST_TEXT_TYPES)
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


def respond_with(handler: Handler, cors: CorsPolicy | None = None) -> Callable[[IncomingRequest, str], Response]:
    """One HTTP request -> its event -> the handler -> the HTTP response API Gateway would send back, with API
    Gateway's CORS handling when `cors` allows an origin; /docs (the API console) is this server's own."""

    def respond(request: IncomingRequest, source_ip: str) -> Response:
        if cors is not None and cors.enabled and CorsPolicy.is_preflight(request.method, request.headers):
            return cors.preflight(request.headers)
        path = urlsplit(request.target).path
        answer = docs.docs(request.method, path) if docs.is_docs_path(path) else call_handler(request, source_ip)
        return cors.decorate(request.headers, answer) if cors is not None else answer

    def call_handler(request: IncomingRequest, source_ip: str) -> Response:
        event = http_api_event(request.method, request.target, request.headers, request.body, source_ip)
        context = SimpleNamespace(aws_request_id=event["requestContext"]["requestId"], function_name="local")
        try:
            result = handler(event, context)
            payload = result.get("body") or ""
            raw = base64.b64decode(payload) if result.get("isBase64Encoded") else payload.encode("utf-8")
            return Response(result["statusCode"], raw, dict(result.get("headers") or {}))
        except Exception:  # noqa: BLE001  (the handler promises never to raise; if it does, say so and keep serving)
            traceback.print_exc()
            return internal_error_response()

    return respond


class LocalHTTPServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64  # the default backlog of 5 dropped connections under 16 concurrent clients

    def __init__(self, address: tuple[str, int], handler: Handler, limits: Limits,
                 cors: CorsPolicy | None = None) -> None:
        respond = respond_with(handler, cors)

        class Connection(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                source_ip = self.client_address[0]
                HttpConnection(self.request, lambda request: respond(request, source_ip), limits).serve()

        super().__init__(address, Connection)


def make_server(handler: Handler, host: str, port: int, max_body_bytes: int, cors: CorsPolicy | None = None,
                **limits: float) -> LocalHTTPServer:
    """`limits`: Limits' time-outs and sizes other than max_body_bytes (tests shorten the time-outs)."""
    return LocalHTTPServer((host, port), handler, Limits(max_body_bytes=max_body_bytes, **limits), cors)
