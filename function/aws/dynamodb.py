"""A DynamoDB client on the standard library, for exactly the two calls the result store makes.

Why not boto3: on a cold container `import boto3` plus creating its client (botocore parses the whole service
model and endpoint rules) cost 0.2-0.45 s of the first request and ~23 MB of RSS, and boto3's stack is ~25 MB
of the image, all to send two JSON requests. Here: DynamoDB's JSON protocol (POST /, `X-Amz-Target`), signed
with AWS Signature Version 4 (function/aws/sigv4.py, the one signer), through function/aws/transport.py (one
kept-alive connection per thread, one deadline per call).

Requests and responses are the low-level client's dicts (DynamoDB JSON, `RequestItems` in, parsed JSON out), so
`DynamoDBResultStore` cannot tell the difference. Only S and N attributes are sent: binary (B) values would need
base64, which the store never writes. Errors raise `DynamoDBError` with botocore's `.response` shape.

Every call has one deadline that covers connecting, sending, every read of the answer, the retry and its pause.
"""
from __future__ import annotations

import http.client
import json
import random
import time
import zlib
from collections.abc import Callable, Iterable, Mapping

from function.aws.client import AwsClient
from function.aws.sigv4 import Credentials
from function.aws.transport import DeadlineExceeded, Endpoint, HttpTransport, endpoint_url, parse_endpoint, \
    remaining_seconds
from function.config import Env

TARGET_PREFIX = "DynamoDB_20120810."  # the API version every DynamoDB JSON operation is addressed by
CONTENT_TYPE = "application/x-amz-json-1.0"
# Full jitter, at most this long, before the one retry: short, so a failing call's worst case stays
# attempts x (connect + read) + this (docs/caching.md, "Failures").
MAX_BACKOFF_SECONDS = 0.1


class DynamoDBError(Exception):
    """An error answer (4xx/5xx), shaped like botocore's ClientError so callers read `.response["Error"]["Code"]`."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{code} (HTTP {status}): {message}")
        self.status = status
        self.response = {"Error": {"Code": code, "Message": message}, "ResponseMetadata": {"HTTPStatusCode": status}}


class ResponseCorrupted(http.client.HTTPException):
    """The body does not match DynamoDB's x-amz-crc32 header: a damaged response, retried like a dropped one."""


def resolve_endpoint(region: str, environ: Mapping[str, str] | None = None) -> Endpoint:
    """AWS_ENDPOINT_URL_DYNAMODB, then AWS_ENDPOINT_URL (the SDKs' standard overrides), else the regional endpoint."""
    url = endpoint_url(Env.AWS_ENDPOINT_URL_DYNAMODB, environ) or f"https://dynamodb.{region}.amazonaws.com"
    return parse_endpoint(url, "DynamoDB")


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


def _read_answer(response: http.client.HTTPResponse) -> dict:
    """The parsed JSON of a 2xx answer; DynamoDBError for an error answer, ResponseCorrupted for a damaged one."""
    payload = response.read()
    expected_crc = response.getheader("x-amz-crc32")
    if expected_crc is not None and expected_crc.isdigit() and int(expected_crc) != zlib.crc32(payload):
        raise ResponseCorrupted(f"x-amz-crc32 {expected_crc} does not match the {len(payload)} bytes received")
    if response.status >= 400:
        raise _error_from(response.status, response.headers, payload)
    return json.loads(payload or b"{}")


class DynamoDBClient(AwsClient):
    """`batch_get_item(**request)` and `batch_write_item(**request)`, as boto3's low-level client takes them, plus
    an optional `deadline` (a time.monotonic() value; default: `call_timeout` from now).

    Within the deadline, at most `max_attempts` attempts: another one after a connection failure, a 5xx or a code in
    `retry_codes` (throttling), after a jittered pause of at most MAX_BACKOFF_SECONDS. Any other 4xx raises at once,
    and so does running out of time (DeadlineExceeded, a TimeoutError). Safe to share between threads: each thread
    has its own connection.
    """

    service = "dynamodb"
    resolve_endpoint = staticmethod(resolve_endpoint)

    def __init__(self, endpoint: Endpoint, region: str, credentials: Credentials, *, connect_timeout: float,
                 call_timeout: float, max_attempts: int, retry_codes: Iterable[str] = (),
                 sleep: Callable[[float], None] = time.sleep) -> None:
        super().__init__(endpoint, region, credentials,
                         HttpTransport(endpoint.scheme, endpoint.port, connect_timeout=connect_timeout))
        self.call_timeout = call_timeout
        self.max_attempts = max(1, max_attempts)
        self.retry_codes = frozenset(retry_codes)
        self._sleep = sleep

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
        """One attempt, signed now; the transport resends it once on a dropped kept-alive connection."""
        headers = {"Host": self.endpoint.host_header, "Content-Type": CONTENT_TYPE,
                   "X-Amz-Target": TARGET_PREFIX + operation}
        return self.transport.exchange(self.endpoint.host, "POST", self.endpoint.path,
                                       self.signed("POST", self.endpoint.path, headers, body), body,
                                       deadline=deadline, read=_read_answer)


# Region, credentials and endpoint from the environment Lambda provides; the keywords are DynamoDBClient's.
client_from_environment = DynamoDBClient.from_environment
