"""HTTP/1.1 on one connection of the local server: framing by h11, limits and time-outs here, errors as JSON.

Every request is either read whole (head and body, Content-Length or chunked, within the limits) and handed to
`respond`, or answered with the project's JSON error and the connection closed: bytes the framing did not account
for are never read as another request. Development only, as all of function/devserver/.
"""
from __future__ import annotations

import re
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus

import h11

from function.http_errors import internal_error_response
from function.responses import Response, json_response

MAX_HEADERS = 100  # http.server's limit too
RECEIVE_BYTES = 65536
LINGER_SECONDS = 0.5  # after an error, how long unread request bytes are drained so the client sees the answer
# RFC 9112's request line: method token, target, version. Without the version it is HTTP/0.9, which has no headers.
REQUEST_LINE = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+ [^ \r\n]+ HTTP/[0-9]\.[0-9]\r?")


@dataclass(frozen=True)
class Limits:
    max_body_bytes: int
    max_target_bytes: int = 8192  # the request target (path and query): over it, 414
    max_head_bytes: int = 16384  # request line and headers together: over it, 431
    idle_timeout: float = 15.0  # a kept-alive connection without a new request for this long is closed
    request_timeout: float = 30.0  # from a request's first byte to its last: over it, 408


@dataclass(frozen=True)
class IncomingRequest:
    method: str
    target: str
    headers: dict[str, str]  # names lower-cased, repeated names joined with commas (as API Gateway does)
    body: bytes


class FramingError(Exception):
    """A request that cannot be read as one HTTP request: answered with this status and the API's error shape,
    then the connection is closed. HTTP-level, so it carries its own status (408, 414, 431...).

    Any method token but CONNECT reaches the function, whose router answers 405 naming the route's methods (Allow),
    so the OpenAPI fuzzer's undeclared-method check (TRACE) sees that answer on every path. CONNECT asks for a
    tunnel (h11 would switch the connection to raw bytes on a 2xx): 501."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message

    def response(self) -> Response:
        return json_response(self.status, {"error": {"code": self.code, "message": self.message}})


def body_too_large(size: int, limit: int) -> FramingError:
    return FramingError(413, "body_too_large", f"The request body is {size} bytes; the limit is {limit} bytes.")


def malformed(message: str) -> FramingError:
    return FramingError(400, "malformed_request", message)


def request_timeout(limits: Limits) -> FramingError:
    return FramingError(408, "request_timeout", f"The request did not arrive within {limits.request_timeout:g} s.")


def uri_too_long(message: str) -> FramingError:
    return FramingError(414, "uri_too_long", message)


def headers_too_large(limits: Limits) -> FramingError:
    return FramingError(431, "headers_too_large", f"Send at most {MAX_HEADERS} headers and "
                        f"{limits.max_head_bytes} bytes of request line and headers.")


class ClientGone(Exception):
    """The client closed the connection or stayed idle: nothing to answer."""


class HttpConnection:
    def __init__(self, sock: socket.socket, respond: Callable[[IncomingRequest], Response], limits: Limits,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.sock = sock
        self.respond = respond
        self.limits = limits
        self._clock = clock
        # h11's own cap on a head still arriving; a head that arrives at once is measured in _check_head.
        self.h11 = h11.Connection(h11.SERVER, max_incomplete_event_size=limits.max_head_bytes)

    def serve(self) -> None:
        """Requests in order (pipelined ones too) until the client closes, idles out, or a request is refused."""
        try:
            while True:
                try:
                    request = self._read_request()
                except ClientGone:
                    return
                except FramingError as refused:
                    self._send(refused.response(), head_only=False, close=True)
                    self._linger()
                    return
                self._send(self.respond(request), head_only=request.method == "HEAD", close=False)
                if self.h11.our_state is not h11.DONE or self.h11.their_state is not h11.DONE:
                    return  # HTTP/1.0 or "Connection: close": h11 says this connection is finished
                self.h11.start_next_cycle()
        except OSError:
            return  # the client went away mid-exchange: nobody is left to answer

    # -- reading -------------------------------------------------------------------------------------------

    def _read_request(self) -> IncomingRequest:
        deadline = None  # the request's clock starts with its first byte; until then the idle timeout applies
        head: h11.Request | None = None
        body = bytearray()
        while True:
            try:
                event = self.h11.next_event()
            except h11.RemoteProtocolError as error:
                raise self._framing_error(error) from None
            if event is h11.NEED_DATA:
                if head is None:
                    self._check_request_line()
                deadline = self._receive(deadline)
            elif isinstance(event, h11.Request):
                head = event
                self._check_head(event)
                if self.h11.they_are_waiting_for_100_continue:
                    self.sock.sendall(self.h11.send(h11.InformationalResponse(status_code=100, headers=[])))
            elif isinstance(event, h11.Data):
                body += event.data
                if len(body) > self.limits.max_body_bytes:  # chunked: the size is known only while reading
                    raise body_too_large(len(body), self.limits.max_body_bytes)
            elif isinstance(event, h11.EndOfMessage):
                return IncomingRequest(head.method.decode("ascii"), head.target.decode("latin-1"),
                                       _joined_headers(head.headers), bytes(body))
            else:  # ConnectionClosed (or PAUSED, which cannot happen while reading)
                raise ClientGone()

    def _receive(self, deadline: float | None) -> float:
        """Feed h11 the next bytes; returns the request's deadline (set by its first byte)."""
        wait = self.limits.idle_timeout if deadline is None else deadline - self._clock()
        if wait <= 0:
            raise request_timeout(self.limits)
        self.sock.settimeout(wait)
        try:
            data = self.sock.recv(RECEIVE_BYTES)
        except TimeoutError:
            if deadline is None:
                raise ClientGone() from None  # idle between requests: close quietly, as keep-alive allows
            raise request_timeout(self.limits) from None
        except OSError:
            raise ClientGone() from None
        if deadline is None:
            if not data:
                raise ClientGone()
            deadline = self._clock() + self.limits.request_timeout
        self.h11.receive_data(data)  # b"" tells h11 the client closed its side
        return deadline

    def _framing_error(self, error: h11.RemoteProtocolError) -> FramingError:
        if error.error_status_hint == 431:  # h11's buffer cap: the head never ended within max_head_bytes
            pending = self.h11.trailing_data[0]
            if b"\n" not in pending:  # still inside the request line
                return uri_too_long(f"The request line is over {self.limits.max_head_bytes} bytes.")
            return headers_too_large(self.limits)
        text = str(error)
        if "Transfer-Encoding" in text:
            return malformed("Transfer-Encoding must be chunked alone (no other coding is supported).")
        if "Content-Length" in text:
            return malformed("Content-Length must be one non-negative decimal number.")
        return malformed(f"The request is not valid HTTP/1.1 ({text}).")

    def _check_request_line(self) -> None:
        """A request line that has ended but is not one (`GET /health` without a version is HTTP/0.9) is refused
        at once: h11 would wait for headers such a client never sends, and the client for an answer."""
        pending = self.h11.trailing_data[0].lstrip(b"\r\n")  # RFC 9112 lets a server skip empty lines first
        line, ended, _ = pending.partition(b"\n")
        if ended and not REQUEST_LINE.fullmatch(line):
            raise malformed("The request line must be `METHOD target HTTP/1.1` (a line without the version is "
                            "HTTP/0.9, which is not served here).")

    def _check_head(self, request: h11.Request) -> None:
        if request.http_version not in (b"1.0", b"1.1"):
            # A client error, so a 4xx: RFC 9110's 505 would be the only 5xx a client could cause here.
            raise malformed(f"HTTP/{request.http_version.decode('ascii')} is not served here; send HTTP/1.1 "
                            "(or HTTP/1.0).")
        if len(request.target) > self.limits.max_target_bytes:
            raise uri_too_long(f"The request target is {len(request.target)} bytes; the limit is "
                               f"{self.limits.max_target_bytes}.")
        size = len(request.method) + len(request.target) + sum(len(n) + len(v) + 4 for n, v in request.headers)
        if len(request.headers) > MAX_HEADERS or size > self.limits.max_head_bytes:
            raise headers_too_large(self.limits)
        if request.method == b"CONNECT":
            raise FramingError(501, "method_not_implemented", "CONNECT (a tunnel) is not served here.")
        names = {name for name, _ in request.headers}
        if b"transfer-encoding" in names and b"content-length" in names:
            # RFC 9112 lets Transfer-Encoding win, but the pair is how requests are smuggled: refuse it.
            raise malformed("Send Content-Length or Transfer-Encoding: chunked, not both.")
        # h11 has checked it is one decimal number; refuse before reading, as Lambda refuses a payload over its limit.
        declared = next((int(value) for name, value in request.headers if name == b"content-length"), 0)
        if declared > self.limits.max_body_bytes:
            raise body_too_large(declared, self.limits.max_body_bytes)

    # -- writing -------------------------------------------------------------------------------------------

    def _send(self, response: Response, head_only: bool, close: bool) -> None:
        headers = [(name, value) for name, value in response.headers.items()
                   if name.lower() not in ("content-length", "connection")]
        headers.append(("content-length", str(len(response.body))))
        if close:
            headers.append(("connection", "close"))
        try:
            reason = HTTPStatus(response.status).phrase.encode("ascii")
        except ValueError:
            reason = b""
        # One write for head and body: two small writes met the client's delayed ACK (Nagle) under keep-alive.
        try:
            data = self.h11.send(h11.Response(status_code=response.status, headers=headers, reason=reason))
        except h11.LocalProtocolError:  # a header h11 will not write (a newline in a value): a bug of ours
            return self._send(internal_error_response(), head_only, close=True)
        if not head_only:
            data += self.h11.send(h11.Data(data=response.body))
        data += self.h11.send(h11.EndOfMessage())
        self.sock.settimeout(self.limits.request_timeout)
        self.sock.sendall(data)

    def _linger(self) -> None:
        """Half-close, then read and drop what the client is still sending for a moment: closing a socket with
        unread bytes resets it, and the reset can destroy the error answer before the client has read it."""
        try:
            self.sock.shutdown(socket.SHUT_WR)
            ends = self._clock() + LINGER_SECONDS
            while (left := ends - self._clock()) > 0:
                self.sock.settimeout(left)
                if not self.sock.recv(RECEIVE_BYTES):
                    return
        except OSError:
            return


def _joined_headers(headers) -> dict[str, str]:
    joined: dict[str, str] = {}
    for name, value in headers:
        key, text = name.decode("latin-1"), value.decode("latin-1")
        joined[key] = f"{joined[key]},{text}" if key in joined else text
    return joined
