"""What every asynchronous door (S3 uploads, SQS, Distributed Map, S3 Batch Operations) does with S3: the one
reader of the objects it answers, and the one writer of its answers.

`read_object` reads an object within the HTTP limits (MAX_BODY_BYTES: from a size the event gives, then from the
GET's own length, before reading the body): body_too_large past it, `object_not_found` for a key or version that
is not there, `object_unreadable` for any other refusal S3 gives for good; an S3 error or a dropped connection that
may pass is raised as it is.

An answer is the JSON an HTTP client would have read for the same input (an answer or an error body), written to
one key of the results bucket:

- an object's answer (an upload, an S3 Batch Operations task) goes to `object_result_key`:
  <prefix><bucket>/<key>.json, and for a version <prefix><bucket>@<version, %-quoted>/<key>.json. A bucket name
  has no "@" and no "/", a quoted version no "/", so two objects never share a result key, whichever door read
  them;
- a message's or a row's answer goes to <prefix><its id>.json (`named_result_key`): the id names it.

`write_result` writes one, through the doors' S3 client (each call within its deadline, DOOR_CALL_SECONDS), and
says how a failure ends, in the doors' one vocabulary (function/async_routes.py): REFUSED when S3 refuses the write
for good (AccessDenied, NoSuchBucket, a key it will not take: the same write would be refused again), NOT_FINISHED
when it may pass (S3's 5xx or throttling, a dropped connection, the deadline).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import quote

from function.async_routes import NOT_FINISHED, TRANSIENT, outcome_of
from function.aws.s3 import ObjectTooLarge, S3Error, S3Object
from function.errors import body_too_large, refuse
from function.responses import Response, json_response

if TYPE_CHECKING:
    from function.service import Service

MAX_KEY_BYTES = 1024  # S3's limit on a key
MISSING_OBJECT_CODES = frozenset({"NoSuchKey", "NoSuchVersion"})
# An id becomes part of an S3 key: S3's safe characters, "/" between non-empty segments that are not "." or "..".
RESULT_ID = re.compile(r"(?!.*(^|/)\.{1,2}(/|$))[A-Za-z0-9!_.*'()-]+(/[A-Za-z0-9!_.*'()-]+)*")
MAX_ID_CHARS = 512


def is_result_id(value: object) -> bool:
    """Whether `value` can name an answer's S3 key (an SQS message's "id" or messageId, a row's "id")."""
    return isinstance(value, str) and len(value) <= MAX_ID_CHARS and RESULT_ID.fullmatch(value) is not None


def read_object(service: "Service", bucket: str, key: str, version_id: str | None = None,
                size: int | None = None) -> S3Object:
    """The object (its version `version_id`), read within MAX_BODY_BYTES; `size` is the one the event gave, if any.
    A ServingError when it is refused for good (the item's refusal); an S3 error or a connection error that may
    pass as it is."""
    limit = service.settings.max_body_bytes
    if size is not None and size > limit:
        raise body_too_large(size, limit)
    try:
        return service.s3().get_object(bucket, key, max_bytes=limit, version_id=version_id)
    except ObjectTooLarge as exc:
        raise body_too_large(exc.size, exc.limit) from exc
    except S3Error as exc:
        if exc.code in MISSING_OBJECT_CODES:
            what = f"version {version_id} of " if version_id else ""
            raise refuse("object_not_found", f"There is no {what}s3://{bucket}/{key}.") from exc
        if outcome_of(exc) == NOT_FINISHED:
            raise
        raise refuse("object_unreadable", f"S3 refused to read s3://{bucket}/{key}: {exc.code} "
                     f"(HTTP {exc.status}).") from exc


def object_result_key(prefix: str, bucket: str, key: str, version_id: str | None = None) -> str:
    """The result key of object `key` of `bucket` (of its version `version_id`, when given)."""
    version = f"@{quote(version_id, safe='')}" if version_id else ""
    return f"{prefix}{bucket}{version}/{key}.json"


def named_result_key(prefix: str, name: str) -> str:
    """The result key of a message or a row that names its answer (an id, or its text's digest)."""
    return f"{prefix}{name}.json"


def fits(result_key: str) -> bool:
    """Whether S3 takes `result_key` as a key."""
    return len(result_key.encode("utf-8")) <= MAX_KEY_BYTES


@dataclass(frozen=True)
class WriteFailure:
    status: str  # REFUSED (S3 refused the write for good) or NOT_FINISHED (it may pass)
    code: str  # S3's code (AccessDenied, SlowDown...), or the exception's class
    message: str


def json_result(http_status: int, body: dict | None) -> Response:
    """An answer or error body as an HTTP client would have read it."""
    return json_response(http_status, body)


def write_result(service: "Service", bucket: str, result_key: str, response: Response) -> WriteFailure | None:
    """Writes `response`'s body, with its content type, to `result_key`; None when written, else how the failure
    ends."""
    try:
        service.s3().put_object(bucket, result_key, response.body, response.headers["content-type"])
    except (S3Error, *TRANSIENT) as exc:
        return WriteFailure(outcome_of(exc), getattr(exc, "code", type(exc).__name__),
                            f"its result was not written: {exc}")
    return None
