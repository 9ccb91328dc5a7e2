"""A DynamoDB client on the standard library, for exactly the two calls the result store makes.

Why not boto3: on a cold container `import boto3` plus creating its client (botocore parses the whole service
model and endpoint rules) cost 0.2-0.45 s of the first request and ~23 MB of RSS, and boto3's stack is ~25 MB
of the image, all to send two JSON requests. Here: DynamoDB's JSON protocol (POST /, `X-Amz-Target`), signed
with AWS Signature Version 4 (function/aws/sigv4.py, the one signer), over one persistent http.client connection
per thread.

Requests and responses are the low-level client's dicts (DynamoDB JSON, `RequestItems` in, parsed JSON out), so
`DynamoDBResultStore` cannot tell the difference. Only S and N attributes are sent: binary (B) values would need
base64, which the store never writes. Errors raise `DynamoDBError` with botocore's `.response` shape.
"""
from __future__ import annotations

import functools
import http.client
import json
import os
import random
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
    """`batch_get_item(**request)` and `batch_write_item(**request)`, as boto3's low-level client takes them.

    At most `max_attempts` attempts per call: another one after a connection failure, a timeout, a 5xx or a
    code in `retry_codes` (throttling), after a jittered pause of at most MAX_BACKOFF_SECONDS. Any other 4xx
    raises at once. Safe to share between threads: each thread has its own connection.
    """

    def __init__(self, endpoint: Endpoint, region: str, credentials: Credentials, *, connect_timeout: float,
                 read_timeout: float, max_attempts: int, retry_codes: Iterable[str] = (),
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.endpoint = endpoint
        self.region = region
        self.credentials = credentials
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.max_attempts = max(1, max_attempts)
        self.retry_codes = frozenset(retry_codes)
        self._sleep = sleep
        self._local = threading.local()
        self._ssl_context: ssl.SSLContext | None = None

    def batch_get_item(self, **request) -> dict:
        return self.call("BatchGetItem", request)

    def batch_write_item(self, **request) -> dict:
        return self.call("BatchWriteItem", request)

    def call(self, operation: str, request: dict) -> dict:
        body = json.dumps(request, separators=(",", ":")).encode("utf-8")
        for attempt in range(1, self.max_attempts + 1):
            try:
                return self._send(operation, body)
            except DynamoDBError as error:
                retryable = error.status >= 500 or error.response["Error"]["Code"] in self.retry_codes
                if not retryable or attempt == self.max_attempts:
                    raise
            except (OSError, http.client.HTTPException):  # refused, timed out, dropped, corrupted
                self.close()
                if attempt == self.max_attempts:
                    raise
            self._sleep(random.uniform(0, MAX_BACKOFF_SECONDS))
        raise AssertionError("unreachable")  # the loop returns or raises

    def _send(self, operation: str, body: bytes) -> dict:
        """One attempt. A kept-alive connection found dead is reopened and the request resent once, for free."""
        connection, reused = self._connection()
        try:
            return self._exchange(connection, operation, body)
        except STALE_CONNECTION_ERRORS:
            self.close()
            if not reused:
                raise
        connection, _ = self._connection()
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

    def _connection(self) -> tuple[http.client.HTTPConnection, bool]:
        """This thread's connection, opened within connect_timeout; then every socket read waits read_timeout."""
        connection = getattr(self._local, "connection", None)
        if connection is not None and connection.sock is not None:
            return connection, True
        if connection is None:
            host = self.endpoint.host.strip("[]")
            if self.endpoint.scheme == "https":
                connection = http.client.HTTPSConnection(host, self.endpoint.port, timeout=self.connect_timeout,
                                                         context=self._tls_context())
            else:
                connection = http.client.HTTPConnection(host, self.endpoint.port, timeout=self.connect_timeout)
            self._local.connection = connection
        connection.timeout = self.connect_timeout
        connection.connect()  # TCP (and TLS) under the connect timeout; the server closing it sets sock to None
        connection.sock.settimeout(self.read_timeout)
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
