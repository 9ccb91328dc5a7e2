"""A DynamoDB client on the standard library, for exactly the two calls the result store makes.

Why not boto3: on a cold container `import boto3` plus creating its client (botocore parses the whole service
model and endpoint rules) cost 0.2-0.45 s of the first request and ~23 MB of RSS, and boto3's stack is ~25 MB
of the image, all to send two JSON requests. Here: DynamoDB's JSON protocol (POST /, `X-Amz-Target`), signed
with AWS Signature Version 4 (function/aws/sigv4.py, the one signer), over one persistent http.client connection
per thread.

Requests and responses are the low-level client's dicts (DynamoDB JSON, `RequestItems` in, parsed JSON out), so
`DynamoDBResultStore` cannot tell the difference. Only S and N attributes are sent: binary (B) values would need
base64, which the store never writes. Errors raise `DynamoDBError` with botocore's `.response` shape.

Every call has one deadline that covers connecting, sending, every read of the answer, the retry and its pause. A
timeout per socket read (http.client's, botocore's) restarts with each byte, so a server trickling one byte every
0.25 s held a call for 39 s; here each read waits only for what is left of the call's time.
"""
from __future__ import annotations

import functools
import http.client
import io
import json
import os
import random
import socket
import ssl
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from urllib.parse import urlsplit

from function.aws import sigv4
from function.aws.sigv4 import Credentials, credentials_from_environment, region_from_environment  # noqa: F401

SERVICE = "dynamodb"
TARGET_PREFIX = "DynamoDB_20120810."  # the API version every DynamoDB JSON operation is addressed by
CONTENT_TYPE = "application/x-amz-json-1.0"
DEFAULT_PORTS = {"http": 80, "https": 443}
# Full jitter, at most this long, before the one retry: short, so a failing call's worst case stays
# attempts x (connect + read) + this (docs/caching.md, "Failures").
MAX_BACKOFF_SECONDS = 0.1
# A kept-alive connection the server (or a frozen Lambda's network) dropped fails like this before any reply;
# it is reopened and the request sent again at once, without spending one of the attempts.
STALE_CONNECTION_ERRORS = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError,
                           ConnectionAbortedError)


# The one SigV4 signer, bound to this service.
sign = functools.partial(sigv4.sign, service=SERVICE)


class DynamoDBError(Exception):
    """An error answer (4xx/5xx), shaped like botocore's ClientError so callers read `.response["Error"]["Code"]`."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{code} (HTTP {status}): {message}")
        self.status = status
        self.response = {"Error": {"Code": code, "Message": message}, "ResponseMetadata": {"HTTPStatusCode": status}}


class ResponseCorrupted(http.client.HTTPException):
    """The body does not match DynamoDB's x-amz-crc32 header: a damaged response, retried like a dropped one."""


class DeadlineExceeded(TimeoutError):
    """The call's time ran out: raised in place of whatever the interrupted read or connect was doing."""


def remaining_seconds(deadline: float) -> float:
    """Time left before `deadline` (time.monotonic()); raises DeadlineExceeded when none is."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise DeadlineExceeded("the DynamoDB call ran out of time")
    return left


class _DeadlineReader(io.RawIOBase):
    """The raw stream http.client reads a response from: every read waits at most until the call's deadline."""

    def __init__(self, sock: "DeadlineSocket") -> None:
        super().__init__()
        self._sock = sock

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        raw = self._sock.raw
        raw.settimeout(remaining_seconds(self._sock.deadline))
        try:
            return raw.recv_into(buffer)
        except TimeoutError as error:  # the timeout was the time left: the deadline has come
            raise DeadlineExceeded("the DynamoDB call ran out of time waiting for the answer") from error

    def close(self) -> None:
        if not self.closed:
            super().close()
            self._sock.reader_closed()


class DeadlineSocket:
    """A connected socket as http.client uses it (sendall, makefile, close), bound by the current call's deadline.

    http.client builds each response on `sock.makefile("rb")`: handing it a reader that re-arms the timeout with
    the time left before every recv is what turns per-read timeouts into one deadline."""

    def __init__(self, raw: socket.socket) -> None:
        self.raw = raw
        self.deadline = 0.0  # set by the client before each exchange
        # Like a socket's own makefile(): closing the connection while a response is still being read (http.client
        # does, when the server says Connection: close) closes the socket only once that reader is closed too.
        self._readers = 0
        self._closing = False

    def sendall(self, data: bytes) -> None:
        self.raw.settimeout(remaining_seconds(self.deadline))  # since 3.5 sendall's timeout bounds the whole send
        try:
            self.raw.sendall(data)
        except TimeoutError as error:
            raise DeadlineExceeded("the DynamoDB call ran out of time sending the request") from error

    def makefile(self, mode: str = "rb", *args, **kwargs) -> io.BufferedReader:
        self._readers += 1
        return io.BufferedReader(_DeadlineReader(self))

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


@dataclass(frozen=True)
class Endpoint:
    scheme: str  # http or https
    host: str
    port: int
    path: str  # the request path: "/" unless the endpoint URL names one

    @property
    def host_header(self) -> str:
        """What Host says and what is signed: the port only when it is not the scheme's default."""
        return self.host if self.port == DEFAULT_PORTS[self.scheme] else f"{self.host}:{self.port}"


def resolve_endpoint(region: str, environ: Mapping[str, str] | None = None) -> Endpoint:
    """AWS_ENDPOINT_URL_DYNAMODB, then AWS_ENDPOINT_URL (the SDKs' standard overrides), else the regional endpoint."""
    environ = os.environ if environ is None else environ
    url = (environ.get("AWS_ENDPOINT_URL_DYNAMODB") or environ.get("AWS_ENDPOINT_URL") or "").strip()
    url = url or f"https://dynamodb.{region}.amazonaws.com"
    parts = urlsplit(url)
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        raise ValueError(f"DynamoDB endpoint must be an http(s) URL with a host, got {url!r}")
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname  # an IPv6 literal keeps its brackets
    return Endpoint(parts.scheme, host, parts.port or DEFAULT_PORTS[parts.scheme], parts.path or "/")


def _error_from(status: int, headers: http.client.HTTPMessage, body: bytes) -> DynamoDBError:
    """DynamoDB's error body is {"__type": "com.amazonaws.dynamodb.v20120810#Code", "message": ...}."""
    code, message = "", ""
    try:
        parsed = json.loads(body or b"{}")
    except ValueError:
        parsed = {}
    if isinstance(parsed, dict):
        code = str(parsed.get("__type", "")).rpartition("#")[2]
        message = str(parsed.get("message") or parsed.get("Message") or "")
    if not code:  # a proxy's or load balancer's page: fall back to the header, then to the status, as botocore does
        code = (headers.get("x-amzn-ErrorType") or "").partition(":")[0] or str(status)
    return DynamoDBError(status, code, message or body[:200].decode("utf-8", "replace"))


class DynamoDBClient:
    """`batch_get_item(**request)` and `batch_write_item(**request)`, as boto3's low-level client takes them, plus
    an optional `deadline` (a time.monotonic() value; default: `call_timeout` from now).

    Within the deadline, at most `max_attempts` attempts: another one after a connection failure, a 5xx or a code in
    `retry_codes` (throttling), after a jittered pause of at most MAX_BACKOFF_SECONDS. Any other 4xx raises at once,
    and so does running out of time (DeadlineExceeded, a TimeoutError). Safe to share between threads: each thread
    has its own connection.
    """

    def __init__(self, endpoint: Endpoint, region: str, credentials: Credentials, *, connect_timeout: float,
                 call_timeout: float, max_attempts: int, retry_codes: Iterable[str] = (),
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.endpoint = endpoint
        self.region = region
        self.credentials = credentials
        self.connect_timeout = connect_timeout
        self.call_timeout = call_timeout
        self.max_attempts = max(1, max_attempts)
        self.retry_codes = frozenset(retry_codes)
        self._sleep = sleep
        self._local = threading.local()
        self._ssl_context: ssl.SSLContext | None = None

    def batch_get_item(self, deadline: float | None = None, **request) -> dict:
        return self.call("BatchGetItem", request, deadline)

    def batch_write_item(self, deadline: float | None = None, **request) -> dict:
        return self.call("BatchWriteItem", request, deadline)

    def call(self, operation: str, request: dict, deadline: float | None = None) -> dict:
        deadline = time.monotonic() + self.call_timeout if deadline is None else deadline
        body = json.dumps(request, separators=(",", ":")).encode("utf-8")
        for attempt in range(1, self.max_attempts + 1):
            try:
                return self._send(operation, body, deadline)
            except DynamoDBError as error:
                retryable = error.status >= 500 or error.response["Error"]["Code"] in self.retry_codes
                if not retryable or attempt == self.max_attempts or time.monotonic() >= deadline:
                    raise
            except DeadlineExceeded:
                self.close()  # a half-read answer leaves the connection unusable
                raise
            except (OSError, http.client.HTTPException):  # refused, timed out, dropped, corrupted
                self.close()
                if attempt == self.max_attempts or time.monotonic() >= deadline:
                    raise
            self._sleep(min(random.uniform(0, MAX_BACKOFF_SECONDS), remaining_seconds(deadline)))
        raise AssertionError("unreachable")  # the loop returns or raises

    def _send(self, operation: str, body: bytes, deadline: float) -> dict:
        """One attempt. A kept-alive connection found dead is reopened and the request resent once, for free."""
        connection, reused = self._connection(deadline)
        try:
            return self._exchange(connection, operation, body)
        except STALE_CONNECTION_ERRORS:
            self.close()
            if not reused:
                raise
        connection, _ = self._connection(deadline)
        return self._exchange(connection, operation, body)

    def _exchange(self, connection: http.client.HTTPConnection, operation: str, body: bytes) -> dict:
        headers = {"Host": self.endpoint.host_header, "Content-Type": CONTENT_TYPE,
                   "X-Amz-Target": TARGET_PREFIX + operation}
        headers.update(sign("POST", self.endpoint.path, headers, body, self.credentials, self.region,
                            datetime.now(timezone.utc)))
        connection.request("POST", self.endpoint.path, body=body, headers=headers)
        response = connection.getresponse()
        payload = response.read()
        expected_crc = response.getheader("x-amz-crc32")
        if expected_crc is not None and expected_crc.isdigit() and int(expected_crc) != zlib.crc32(payload):
            raise ResponseCorrupted(f"x-amz-crc32 {expected_crc} does not match the {len(payload)} bytes received")
        if response.status >= 400:
            raise _error_from(response.status, response.headers, payload)
        return json.loads(payload or b"{}")

    def _connection(self, deadline: float) -> tuple[http.client.HTTPConnection, bool]:
        """This thread's connection, bound to `deadline`; a new one connects within connect_timeout (and the
        deadline)."""
        connection = getattr(self._local, "connection", None)
        if connection is not None and connection.sock is not None:
            connection.sock.deadline = deadline
            return connection, True
        if connection is None:
            host = self.endpoint.host.strip("[]")
            if self.endpoint.scheme == "https":
                connection = http.client.HTTPSConnection(host, self.endpoint.port, context=self._tls_context())
            else:
                connection = http.client.HTTPConnection(host, self.endpoint.port)
            connection.auto_open = 0  # only this method opens connections: an unwrapped socket would have no deadline
            self._local.connection = connection
        connection.timeout = min(self.connect_timeout, remaining_seconds(deadline))
        try:
            connection.connect()  # TCP (and TLS); the server closing it later sets sock to None
        except TimeoutError as error:
            if time.monotonic() >= deadline:
                raise DeadlineExceeded("the DynamoDB call ran out of time while connecting") from error
            raise
        connection.sock = DeadlineSocket(connection.sock)
        connection.sock.deadline = deadline
        return connection, False

    def _tls_context(self) -> ssl.SSLContext:
        """One verifying context per client: loading the system's CA certificates is the slow part of a new one.
        (botocore brought its own CA bundle; the Lambda images' system trust store is what this one uses.)"""
        if self._ssl_context is None:
            self._ssl_context = ssl.create_default_context()
        return self._ssl_context

    def close(self) -> None:
        """Drops this thread's connection; the next call opens a new one."""
        connection = getattr(self._local, "connection", None)
        self._local.connection = None
        if connection is not None:
            connection.close()


def client_from_environment(environ: Mapping[str, str] | None = None, **settings) -> DynamoDBClient:
    """Region, credentials and endpoint from the environment Lambda provides; `settings` are DynamoDBClient's."""
    region = region_from_environment(environ)
    return DynamoDBClient(resolve_endpoint(region, environ), region, credentials_from_environment(environ),
                          **settings)
