"""The one HTTP transport the AWS clients here send through (function/aws/s3.py, function/aws/dynamodb.py).

It keeps one http.client connection per thread and host alive between calls, resends a request at once when a
kept-alive connection turns out to have been dropped, verifies TLS with one context per transport, and bounds
time in one of two ways: a deadline for the whole call (connect, send, every read: DynamoDB's latency bound) or a
timeout per read (S3's streamed downloads). It also resolves endpoints the way the SDKs do. Signing, retries and
error bodies are each client's own.

A timeout per socket read (http.client's, botocore's) restarts with each byte, so a server trickling one byte every
0.25 s held a DynamoDB call for 39 s; with a deadline each read waits only for what is left of the call's time.
"""
from __future__ import annotations

import http.client
import io
import os
import socket
import ssl
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar
from urllib.parse import urlsplit

from function.config import Env

DEFAULT_PORTS = {"http": 80, "https": 443}
# A kept-alive connection the server (or a frozen Lambda's network) dropped fails like this before any reply;
# it is reopened and the request sent again at once, without spending one of the client's attempts.
STALE_CONNECTION_ERRORS = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError,
                           ConnectionAbortedError)

Answer = TypeVar("Answer")


class DeadlineExceeded(TimeoutError):
    """The call's time ran out: raised in place of whatever the interrupted read or connect was doing."""


def remaining_seconds(deadline: float) -> float:
    """Time left before `deadline` (time.monotonic()); raises DeadlineExceeded when none is."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise DeadlineExceeded("the call ran out of time")
    return left


@dataclass(frozen=True)
class Endpoint:
    scheme: str  # http or https
    host: str  # an IPv6 literal keeps its brackets
    port: int
    path: str  # the request path: "/" unless the endpoint URL names one

    @property
    def host_header(self) -> str:
        return host_header(self.host, self.scheme, self.port)


def host_header(host: str, scheme: str, port: int) -> str:
    """What Host says and what is signed: the port only when it is not the scheme's default."""
    return host if port == DEFAULT_PORTS[scheme] else f"{host}:{port}"


def endpoint_url(service_variable: str, environ: Mapping[str, str] | None = None) -> str:
    """AWS_ENDPOINT_URL_<SERVICE>, then AWS_ENDPOINT_URL (the SDKs' standard overrides); "" when neither is set."""
    environ = os.environ if environ is None else environ
    return (environ.get(service_variable) or environ.get(Env.AWS_ENDPOINT_URL) or "").strip()


def parse_endpoint(url: str, service: str) -> Endpoint:
    parts = urlsplit(url)
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        raise ValueError(f"{service} endpoint must be an http(s) URL with a host, got {url!r}")
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return Endpoint(parts.scheme, host, parts.port or DEFAULT_PORTS[parts.scheme], parts.path or "/")


class _BoundedReader(io.RawIOBase):
    """The raw stream http.client reads a response from: every read waits at most what its socket allows."""

    def __init__(self, sock: "BoundedSocket") -> None:
        super().__init__()
        self._sock = sock

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        self._sock.arm("waiting for the answer")
        try:
            return self._sock.raw.recv_into(buffer)
        except TimeoutError as error:
            raise self._sock.timed_out(error, "waiting for the answer")

    def close(self) -> None:
        if not self.closed:
            super().close()
            self._sock.reader_closed()


class BoundedSocket:
    """A connected socket as http.client uses it (sendall, makefile, close): before every send and read it is
    given the time left before the call's `deadline`, or `read_timeout` when the call has no deadline.

    http.client builds each response on `sock.makefile("rb")`: handing it a reader that re-arms the timeout before
    every recv is what turns per-read timeouts into one deadline."""

    def __init__(self, raw: socket.socket, read_timeout: float | None) -> None:
        self.raw = raw
        self.read_timeout = read_timeout
        self.deadline: float | None = None  # set by the transport before each exchange
        # Like a socket's own makefile(): closing the connection while a response is still being read (http.client
        # does, when the server says Connection: close) closes the socket only once that reader is closed too.
        self._readers = 0
        self._closing = False

    def arm(self, doing: str) -> None:
        if self.deadline is None:
            self.raw.settimeout(self.read_timeout)
            return
        try:
            self.raw.settimeout(remaining_seconds(self.deadline))
        except DeadlineExceeded:
            raise DeadlineExceeded(f"the call ran out of time {doing}") from None

    def timed_out(self, error: TimeoutError, doing: str) -> TimeoutError:
        """With a deadline, the timeout was the time left: the deadline has come."""
        if self.deadline is None:
            return error
        exceeded = DeadlineExceeded(f"the call ran out of time {doing}")
        exceeded.__cause__ = error
        return exceeded

    def sendall(self, data: bytes) -> None:
        self.arm("sending the request")  # since 3.5 sendall's timeout bounds the whole send
        try:
            self.raw.sendall(data)
        except TimeoutError as error:
            raise self.timed_out(error, "sending the request")

    def makefile(self, mode: str = "rb", *args, **kwargs) -> io.BufferedReader:
        self._readers += 1
        return io.BufferedReader(_BoundedReader(self))

    def reader_closed(self) -> None:
        self._readers -= 1
        if self._closing and not self._readers:
            self.raw.close()

    def close(self) -> None:
        self._closing = True
        if not self._readers:
            self.raw.close()

    def __getattr__(self, name: str):
        return getattr(self.raw, name)


class HttpTransport:
    """Connections to one scheme and port (any host: S3 puts the bucket in the host name). Safe to share between
    threads: each thread keeps its own connection per host. Without a deadline, each read waits `read_timeout`."""

    def __init__(self, scheme: str, port: int, *, connect_timeout: float, read_timeout: float | None = None) -> None:
        self.scheme = scheme
        self.port = port
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.tls_context: ssl.SSLContext | None = None  # made on first use; a test may set its own
        self._local = threading.local()

    def host_header(self, host: str) -> str:
        return host_header(host, self.scheme, self.port)

    def exchange(self, host: str, method: str, target: str, headers: Mapping[str, str], body: bytes | None, *,
                 deadline: float | None = None,
                 read: Callable[[http.client.HTTPResponse], Answer] = lambda response: response) -> Answer:
        """One attempt: the request sent and `read(response)` returned (by default the response, its status read,
        for the caller to read the body). A kept-alive connection found dead is reopened and the request resent
        once, for free."""
        connection, reused = self._connection(host, deadline)
        try:
            connection.request(method, target, body=body, headers=dict(headers))
            return read(connection.getresponse())
        except STALE_CONNECTION_ERRORS:
            self.close()
            if not reused:
                raise
        connection, _ = self._connection(host, deadline)
        connection.request(method, target, body=body, headers=dict(headers))
        return read(connection.getresponse())

    def _connection(self, host: str, deadline: float | None) -> tuple[http.client.HTTPConnection, bool]:
        """This thread's connection to `host`, bound to `deadline`; a new one connects within connect_timeout (and
        the deadline)."""
        connections = self._local.__dict__.setdefault("connections", {})
        connection = connections.get(host)
        if connection is not None and connection.sock is not None:
            connection.sock.deadline = deadline
            return connection, True
        if connection is None:
            address = host.strip("[]")
            if self.scheme == "https":
                connection = http.client.HTTPSConnection(address, self.port, context=self._tls_context())
            else:
                connection = http.client.HTTPConnection(address, self.port)
            connection.auto_open = 0  # only this method opens connections: an unwrapped socket would have no bound
            connections[host] = connection
        connection.timeout = self.connect_timeout if deadline is None else min(self.connect_timeout,
                                                                                remaining_seconds(deadline))
        try:
            connection.connect()  # TCP (and TLS); the server closing it later sets sock to None
        except TimeoutError as error:
            if deadline is not None and time.monotonic() >= deadline:
                raise DeadlineExceeded("the call ran out of time while connecting") from error
            raise
        connection.sock = BoundedSocket(connection.sock, self.read_timeout)
        connection.sock.deadline = deadline
        return connection, False

    def _tls_context(self) -> ssl.SSLContext:
        """One verifying context per transport: loading the system's CA certificates is the slow part of a new one.
        (botocore brought its own CA bundle; the Lambda images' system trust store is what this one uses.)"""
        if self.tls_context is None:
            self.tls_context = ssl.create_default_context()
        return self.tls_context

    def close(self) -> None:
        """Drops this thread's connections; the next call opens new ones."""
        for connection in self._local.__dict__.pop("connections", {}).values():
            connection.close()
