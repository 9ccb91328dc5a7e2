"""S3 on the standard library, for exactly what the function does there: get and put objects, read and write tags.

Why not boto3 on these paths: in a fresh process `import boto3` plus an S3 client cost 0.46-0.56 s here and
~30-40 MB, against 0.04-0.07 s and 3-10 MB for this module, mostly http.client and ssl (`python -m bench --section
11` measures both), all for plain REST calls. Requests are signed by function/aws/sigv4.py, the one signer, and
sent through function/aws/transport.py (one kept-alive connection per thread and host, each read bounded by
read_timeout). Errors raise `S3Error` with S3's own code (NoSuchKey, AccessDenied, SlowDown...).
"""
from __future__ import annotations

import base64
import hashlib
import http.client
import random
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

from function.aws.client import AwsClient
from function.aws.sigv4 import Credentials, query_string, uri_path
from function.aws.transport import DeadlineExceeded, Endpoint, HttpTransport, endpoint_url, parse_endpoint
from function.config import Env

XML_NAMESPACE = "http://s3.amazonaws.com/doc/2006-03-01/"
CHUNK_BYTES = 1 << 20
MAX_BACKOFF_SECONDS = 0.2
# What one call of an asynchronous door (an upload, a message, a bulk item) may wait for S3, every attempt and the
# whole body included: what does not end by then is not finished, and its engine delivers it again.
DOOR_CALL_SECONDS = 2.5
TRANSIENT_CODES = frozenset({"SlowDown", "RequestTimeout", "InternalError", "ServiceUnavailable"})


class S3Error(Exception):
    """An error answer from S3: its HTTP status, its code and its message."""

    def __init__(self, status: int, code: str, message: str, where: str) -> None:
        super().__init__(f"{code} (HTTP {status}) on {where}: {message}")
        self.status = status
        self.code = code
        self.message = message

    @property
    def transient(self) -> bool:
        """Whether trying again later may succeed (S3's 5xx and throttling), as opposed to a refusal."""
        return self.status >= 500 or self.code in TRANSIENT_CODES


class ObjectTooLarge(Exception):
    """The object is bigger than the caller accepts; none of it was read."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"the object is {size} bytes; the limit is {limit}")
        self.size = size
        self.limit = limit


@dataclass(frozen=True)
class S3Object:
    body: bytes
    etag: str
    tag_count: int  # how many tags the object has (S3 says so on every GET)


@dataclass(frozen=True)
class S3Endpoint(Endpoint):
    path_style: bool = False  # bucket in the path (custom endpoints, dotted names) or in the host name (AWS's default)

    def locate(self, bucket: str, key: str) -> tuple[str, str]:
        """(host, unencoded path) of an object, or of the bucket when key is empty."""
        # A dotted bucket name in the host would not match S3's wildcard TLS certificate.
        if self.path_style or "." in bucket:
            return self.host, f"/{bucket}/{key}" if key else f"/{bucket}"
        return f"{bucket}.{self.host}", f"/{key}"


def resolve_endpoint(region: str, environ: Mapping[str, str] | None = None) -> S3Endpoint:
    """AWS_ENDPOINT_URL_S3, then AWS_ENDPOINT_URL (path-style there), else the regional endpoint with the bucket in
    the host name."""
    url = endpoint_url(Env.AWS_ENDPOINT_URL_S3, environ)
    if not url:
        return S3Endpoint("https", f"s3.{region}.amazonaws.com", 443, "/", path_style=False)
    parsed = parse_endpoint(url, "S3")
    return S3Endpoint(parsed.scheme, parsed.host, parsed.port, "/", path_style=True)


def _xml_escape(text: str) -> str:
    # xml.sax.saxutils.escape would import urllib.request (~10 ms of a cold start) for these three replacements.
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _xml_root(body: bytes):
    """Parsed XML; ElementTree (1.7 ms, 8 modules) is imported here, off the path of calls that never read XML
    (GET, PUT)."""
    import xml.etree.ElementTree as ElementTree  # noqa: PLC0415

    return ElementTree.fromstring(body)


def _xml_text(body: bytes, name: str) -> str:
    """The text of the first element called `name` (any namespace), or "" when the body is not such XML."""
    from xml.etree.ElementTree import ParseError  # noqa: PLC0415

    try:
        root = _xml_root(body)
    except ParseError:
        return ""
    for element in root.iter():
        if element.tag.rpartition("}")[2] == name:
            return element.text or ""
    return ""


def tagging_xml(tags: Mapping[str, str]) -> bytes:
    tag_set = "".join(f"<Tag><Key>{_xml_escape(key)}</Key><Value>{_xml_escape(value)}</Value></Tag>"
                      for key, value in tags.items())
    return f'<Tagging xmlns="{XML_NAMESPACE}"><TagSet>{tag_set}</TagSet></Tagging>'.encode("utf-8")


def parse_tagging(body: bytes) -> dict[str, str]:
    tags = {}
    for element in _xml_root(body).iter():
        if element.tag.rpartition("}")[2] == "Tag":
            fields = {child.tag.rpartition("}")[2]: child.text or "" for child in element}
            tags[fields.get("Key", "")] = fields.get("Value", "")
    return tags


class S3Client(AwsClient):
    """Safe to share between threads: each thread keeps its own connection per host.

    At most `max_attempts` attempts per call: another one after a connection failure, a timeout, a 5xx or S3's
    throttling, after a jittered pause of at most MAX_BACKOFF_SECONDS; any other error raises at once. With
    `deadline_seconds`, a call (every attempt, pause and read of its body) ends by then whatever S3 does: a read
    timeout restarts with each byte, so a trickling S3 would hold a call without one (DeadlineExceeded, a
    TimeoutError, when it runs out).
    """

    service = "s3"
    resolve_endpoint = staticmethod(resolve_endpoint)

    def __init__(self, endpoint: S3Endpoint, region: str, credentials: Credentials, *, connect_timeout: float = 2.0,
                 read_timeout: float = 10.0, max_attempts: int = 3, deadline_seconds: float | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        super().__init__(endpoint, region, credentials, HttpTransport(
            endpoint.scheme, endpoint.port, connect_timeout=connect_timeout, read_timeout=read_timeout))
        self.max_attempts = max(1, max_attempts)
        self.deadline_seconds = deadline_seconds
        self._sleep = sleep

    def with_limits(self, *, connect_timeout: float, read_timeout: float, max_attempts: int,
                    deadline_seconds: float | None = None) -> "S3Client":
        """The same endpoint and credentials with other time limits, on its own connections: e.g. one attempt
        and short waits for the calls a request may have to wait for."""
        return S3Client(self.endpoint, self.region, self.credentials, connect_timeout=connect_timeout,
                        read_timeout=read_timeout, max_attempts=max_attempts, deadline_seconds=deadline_seconds,
                        sleep=self._sleep)

    def deadline(self) -> float | None:
        """When a call starting now must end (time.monotonic()), or None: for an operation of several calls (a
        model's files) to share one."""
        return None if self.deadline_seconds is None else time.monotonic() + self.deadline_seconds

    # ---- the calls --------------------------------------------------------------------------------------------

    def get_object(self, bucket: str, key: str, *, if_none_match: str | None = None,
                   max_bytes: int | None = None, version_id: str | None = None) -> S3Object | None:
        """The object (its version `version_id` when given), or None when `if_none_match` is its ETag (304: nothing
        was downloaded). Raises ObjectTooLarge, before reading any of it, when it is bigger than `max_bytes`."""
        headers = {"If-None-Match": if_none_match} if if_none_match else {}
        query = {"versionId": version_id} if version_id else None
        with self._open("GET", bucket, key, headers=headers, query=query) as response:
            if response.status == 304:
                response.read()
                return None
            size = int(response.getheader("Content-Length") or 0)
            if max_bytes is not None and size > max_bytes:
                self.close()  # the unread body stays on this connection: drop it
                raise ObjectTooLarge(size, max_bytes)
            body = response.read()
            return S3Object(body, response.getheader("ETag") or "", int(response.getheader("x-amz-tagging-count") or 0))

    def download(self, bucket: str, key: str, write: Callable[[bytes], object], *,
                 deadline: float | None = None) -> int:
        """Streams the object to `write` in chunks; returns its size. A body cut short raises
        http.client.IncompleteRead (the caller must throw away what it wrote). `deadline`: one shared with other
        calls (see `deadline()`), in place of this call's own."""
        with self._open("GET", bucket, key, deadline=deadline) as response:
            expected = int(response.getheader("Content-Length") or -1)
            received = 0
            while chunk := response.read(CHUNK_BYTES):
                write(chunk)
                received += len(chunk)
            if expected >= 0 and received != expected:
                raise http.client.IncompleteRead(b"", expected - received)
            return received

    def put_object(self, bucket: str, key: str, body: bytes, content_type: str = "application/octet-stream", *,
                   if_match: str | None = None, if_none_match: str | None = None) -> str:
        """Writes the object; returns its ETag. `if_match` (an ETag) / `if_none_match="*"`: S3 refuses with 412
        PreconditionFailed when the object changed / exists (a compare-and-swap for pointers and indexes)."""
        headers = {"Content-Type": content_type}
        if if_match:
            headers["If-Match"] = if_match
        if if_none_match:
            headers["If-None-Match"] = if_none_match
        with self._open("PUT", bucket, key, headers=headers, body=body) as response:
            response.read()
            return response.getheader("ETag") or ""

    def get_object_tagging(self, bucket: str, key: str) -> dict[str, str]:
        with self._open("GET", bucket, key, query={"tagging": ""}) as response:
            return parse_tagging(response.read())

    def put_object_tagging(self, bucket: str, key: str, tags: Mapping[str, str]) -> None:
        """Replaces the object's whole tag set with `tags`."""
        body = tagging_xml(tags)
        # S3 requires an integrity header on this call; MD5 is what it accepts here (not a security use).
        md5 = base64.b64encode(hashlib.md5(body, usedforsecurity=False).digest()).decode("ascii")
        headers = {"Content-Type": "application/xml", "Content-MD5": md5}
        with self._open("PUT", bucket, key, query={"tagging": ""}, headers=headers, body=body) as response:
            response.read()

    # ---- one request --------------------------------------------------------------------------------------------

    @contextmanager
    def _open(self, method: str, bucket: str, key: str, *, query: Mapping[str, str] | None = None,
              headers: Mapping[str, str] | None = None, body: bytes = b"",
              deadline: float | None = None) -> Iterator[http.client.HTTPResponse]:
        """The response with its status read (2xx or 304); the caller reads the body inside the block (within the
        call's deadline, when it has one: the socket keeps it)."""
        host, path = self.endpoint.locate(bucket, key)
        where = f"s3://{bucket}/{key}"
        deadline = self.deadline() if deadline is None else deadline
        for attempt in range(1, self.max_attempts + 1):
            try:
                response = self._send(method, host, path, query, dict(headers or {}), body, deadline)
                if response.status >= 400 and response.status != 304:
                    raise _error_from(response, where)
                break
            except S3Error as error:
                if not error.transient or attempt == self.max_attempts:
                    raise
            except DeadlineExceeded:
                self.close()
                raise
            except (OSError, http.client.HTTPException):  # refused, timed out, dropped
                self.close()
                if attempt == self.max_attempts:
                    raise
            pause = random.uniform(0, MAX_BACKOFF_SECONDS)
            if deadline is not None and time.monotonic() + pause >= deadline:
                raise DeadlineExceeded(f"the call ran out of time on {where}")
            self._sleep(pause)
        try:
            yield response
        except BaseException:
            self.close()  # a body half read must not be mistaken for the next response
            raise

    def _send(self, method: str, host: str, path: str, query: Mapping[str, str] | None, headers: dict[str, str],
              body: bytes, deadline: float | None = None) -> http.client.HTTPResponse:
        """One attempt, signed now; the transport resends it once on a dropped kept-alive connection."""
        headers["Host"] = self.transport.host_header(host)
        headers["x-amz-content-sha256"] = hashlib.sha256(body).hexdigest()
        target = uri_path(path) + (f"?{query_string(query)}" if query else "")
        return self.transport.exchange(host, method, target, self.signed(method, path, headers, body, query),
                                       body if method in ("PUT", "POST") else None, deadline=deadline)


def _error_from(response: http.client.HTTPResponse, where: str) -> S3Error:
    """S3's error body is <Error><Code>NoSuchKey</Code><Message>...</Message></Error>; HEAD-like answers have none."""
    body = response.read()
    code = _xml_text(body, "Code") or http.client.responses.get(response.status, str(response.status)).replace(" ", "")
    message = _xml_text(body, "Message") or body[:200].decode("utf-8", "replace")
    return S3Error(response.status, code, message, where)


# Region, credentials and endpoint from the environment Lambda provides; the keywords are S3Client's.
client_from_environment = S3Client.from_environment
