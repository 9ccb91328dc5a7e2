"""S3 ObjectCreated notifications: classify each new image, tag it with the answer, write the answer as JSON.

Per record, in order: the key must follow the upload rules (UPLOADS_PREFIX, UPLOADS_SUFFIX: the bucket's
notification filter, checked again) and never lie under RESULTS_PREFIX, so the function never classifies its own
output. The object (the version the record names, if any) is read by the doors' one reader and its answer written
by their one writer (function/door_s3.py: within MAX_BODY_BYTES, then the image task's own pixel and format checks)
and classified by the doors' one answering core (function/answering.py: the default image model, through the
result cache, so the same content is computed once however often it is uploaded or the event retried). This module
only translates: a record into the core's calls, their outcome into tags, a log line and Lambda's retry. Outcomes:

- classified: tags `label`, `score`, `model_version`; the object's result key (function/door_s3.py, the doors'
  one writer: <RESULTS_PREFIX><bucket>/<key>.json, <bucket>@<version> for a versioned object) holds the /classify
  answer;
- refused (not an image, too large, no such model): tag `error` = the error code, the JSON holds the error body;
  not retried, since the same bytes would be refused again;
- skipped: outside the rules, not an ObjectCreated event, or deleted before it was read;
- refused_by_s3: S3 refused one of the function's own calls for good (a 4xx other than throttling: AccessDenied,
  NoSuchBucket, InvalidTag..., the answer's write included): logged with S3's code (`error_code`; at ERROR, with
  `result_refused`, when the answer itself could not be written), not retried, since the same call would be
  refused again.

Tags: the uploader's own tags are kept as they are; ours replace our earlier ones and are added, in the order
label, score, model_version (or error alone), only while the object has room under S3's limit of MAX_TAGS tags:
an object that already carries 8 user tags gets label and score, one with 10 gets none (the log line's
`tags_left_out` names them; the JSON answer always holds everything). A refusal of the tags alone is noted in the
log line (`tags_refused`) and the answer is still written. The tags are written before the JSON answer, so a
transient failure retries both, and the JSON is written once, last.

A transient failure (S3 5xx or throttling, a dropped connection, the model unavailable) raises once every record
is done: Lambda retries the event, then sends it to the function's on-failure destination.
"""
from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass
from urllib.parse import unquote_plus

from function import answering, door_s3
from function.async_routes import ANSWERED, NOT_FINISHED, TRANSIENT, outcome_of
from function.aws.s3 import S3Error
from function.errors import ServingError, quoted
from function.log import Timings
from function import recorder
from function.service import Service
from function.tasks.image_classification import ImageInput

log = logging.getLogger("function")
UPLOAD_ROUTE = "s3:upload"  # the `route` of an upload's log line and metrics

OWN_TAGS = ("label", "score", "labels", "model_version", "error")
# What S3 accepts in a tag value (letters, digits, spaces, + - = . _ : / @), at most 256 characters.
TAG_VALUE_REFUSED = re.compile(r"[^A-Za-z0-9 +\-=._:/@]")
MAX_TAG_VALUE = 256
MAX_TAGS = 10  # S3's limit per object
# An S3 key is up to 1,024 bytes: enough of one, quoted, to find the object in an error message.
MAX_WHERE_CHARS = 300


class UploadsNotProcessed(RuntimeError):
    """Some records failed for a reason that may pass: raised so that Lambda retries the event."""


class ResultNotWritten(OSError):
    """The answer's write failed for a reason that may pass (S3's 5xx or throttling, a dropped connection)."""


@dataclass(frozen=True)
class Upload:
    bucket: str
    key: str
    size: int
    version_id: str | None = None  # when the bucket keeps versions


def tag_value(text: str) -> str:
    return TAG_VALUE_REFUSED.sub("_", text)[:MAX_TAG_VALUE]


def upload_of(record: dict) -> Upload | None:
    """The object an ObjectCreated record names, or None for any other record."""
    if not str(record.get("eventName", "")).startswith("ObjectCreated:"):
        return None
    s3 = record.get("s3")
    try:
        # Keys arrive URL-encoded, spaces as "+" (AWS's S3 event documentation).
        bucket, key, size = s3["bucket"]["name"], s3["object"]["key"], s3["object"].get("size", 0)
        version_id = s3["object"].get("versionId")
    except (KeyError, TypeError, AttributeError):
        return None
    if not isinstance(bucket, str) or not isinstance(key, str):
        return None
    version_id = version_id if isinstance(version_id, str) and version_id else None
    # S3 sends the size as a whole number; anything else (Infinity, a fraction, text) is unknown: the GET's own
    # length is checked against the limit anyway.
    return Upload(bucket, unquote_plus(key), size if isinstance(size, int) and not isinstance(size, bool) else 0,
                  version_id)


def handle(service: Service, event: dict, lambda_request_id: str) -> dict:
    outcomes, failed = [], []
    for record in event["Records"]:
        upload = upload_of(record) if isinstance(record, dict) else None
        started = time.perf_counter()
        timings, fields = Timings(), {}
        if upload is None:
            outcome = "skipped"
            fields["reason"] = "not an ObjectCreated record"
        else:
            try:
                outcome = process(service, upload, timings, fields)
            except (S3Error, ServingError, *TRANSIENT) as exc:  # in the doors' one vocabulary (async_routes)
                fields["problem"] = f"{type(exc).__name__}: {exc}"
                outcome = "failed" if outcome_of(exc) == NOT_FINISHED else "refused_by_s3"
                if outcome == "failed":
                    failed.append(upload.key)
                else:
                    fields["error_code"] = getattr(exc, "code", type(exc).__name__)
            fields.update(bucket=upload.bucket, key=upload.key)
        # As metrics: one route for every upload, and the status an HTTP client would have seen.
        status = 500 if outcome == "failed" else 400 if "error_code" in fields else 200
        level = logging.ERROR if fields.get("result_refused") else None
        recorder.record(service, "s3 upload", {"outcome": outcome, **fields, "route": UPLOAD_ROUTE, "status": status},
                        started, timings, lambda_request_id, level=level)
        outcomes.append({"key": upload.key if upload else None, "outcome": outcome,
                         **{k: fields[k] for k in ("error_code", "label", "labels") if k in fields}})
    if failed:
        raise UploadsNotProcessed(f"{len(failed)} of {len(outcomes)} uploads failed and will be retried: "
                                  f"{', '.join(failed)[:500]}")
    return {"uploads": outcomes}


@dataclass(frozen=True)
class Answer:
    status: int
    payload: dict  # the JSON body an HTTP client would get for the same image
    tag_count: int | None  # the tags the object had when read; None when it was refused unread


def process(service: Service, upload: Upload, timings: Timings, fields: dict) -> str:
    settings = service.settings
    if not upload.key.startswith(settings.uploads_prefix) or not upload.key.endswith(settings.uploads_suffix):
        fields["reason"] = "outside UPLOADS_PREFIX / UPLOADS_SUFFIX"
        return "skipped"
    if upload.key.startswith(settings.results_prefix):
        fields["reason"] = "a result of this function"
        return "skipped"
    try:
        result = classify(service, upload, timings, fields)
    except S3Error as exc:
        if exc.code in door_s3.MISSING_OBJECT_CODES:
            fields["reason"] = "deleted before it was read"
            return "skipped"
        raise
    with timings.stage("write"):
        tag(service.s3(), upload, result, fields)  # first: a retried event writes the JSON once, last
        key = door_s3.object_result_key(settings.results_prefix, upload.bucket, upload.key, upload.version_id)
        fields["result_key"] = key
        failure = door_s3.write_result(service, settings.results_bucket or upload.bucket, key,
                                       door_s3.json_result(result.status, result.payload))
    if failure is not None and failure.status == NOT_FINISHED:
        raise ResultNotWritten(failure.message)
    if failure is not None:  # the answer has nowhere to go: a setting to fix (a grant, a bucket)
        fields.update(error_code=failure.code, problem=failure.message, result_refused=True)
        return "refused_by_s3"
    return "classified" if result.status == 200 else "refused"


def classify(service: Service, upload: Upload, timings: Timings, fields: dict) -> Answer:
    """The answer for the object; a 5xx raises instead (a retry is worth it)."""
    tag_count = None
    try:
        with timings.stage("read"):
            stored = door_s3.read_object(service, upload.bucket, upload.key, upload.version_id, upload.size)
        tag_count = stored.tag_count
        image: object = ImageInput(stored.body, quoted(f"s3://{upload.bucket}/{upload.key}", MAX_WHERE_CHARS))
    except ServingError as exc:
        if exc.code in ("object_not_found", "object_unreadable"):  # S3's refusal of our read, not the object's fault
            raise exc.__cause__ from None  # the S3Error: skipped (deleted before it was read) or refused_by_s3
        image = exc
    # An upload is a /classify request with the default model and options: the version an HTTP request with these
    # bytes would get (a canary's share included), the same answer.
    (found,) = answering.answers_to(service, "classify", "", {}, [image], timings, fields)
    if found.status == NOT_FINISHED:
        raise found.error
    if found.status == ANSWERED:
        fields.update(found.summary)
    else:
        fields["error_code"] = found.code
    return Answer(found.http_status, found.body, tag_count)


def tag(s3, upload: Upload, result: Answer, fields: dict) -> None:
    """Our tags replace our earlier ones (a re-upload may now fail, or succeed); the uploader's stay, and ours
    take only the room S3's limit leaves. S3 refusing them for good is noted, not raised."""
    if result.status == 200 and "labels" in fields:  # multi-label: every label at or above the threshold
        ours = {"labels": tag_value("/".join(fields["labels"])), "model_version": result.payload["model_version"]}
    elif result.status == 200:
        ours = {"label": tag_value(fields["label"]), "score": str(fields["score"]),
                "model_version": result.payload["model_version"]}
    else:
        ours = {"error": tag_value(fields["error_code"])}
    # Reading the tags costs a request: only when the object has some (its GET said how many) or was not read.
    existing = s3.get_object_tagging(upload.bucket, upload.key) if result.tag_count != 0 else {}
    kept = {key: value for key, value in existing.items() if key not in OWN_TAGS}
    added, left_out = within_tag_limit(kept, ours)
    if left_out:
        fields["tags_left_out"] = left_out
    try:
        s3.put_object_tagging(upload.bucket, upload.key, {**kept, **added})
    except S3Error as exc:
        if exc.transient:
            raise
        fields["tags_refused"] = f"{exc.code}: {quoted(exc.message)}"


def within_tag_limit(kept: dict[str, str], ours: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """(our tags that fit beside the uploader's `kept` ones, in our order; the names of those that do not)."""
    room = max(MAX_TAGS - len(kept), 0)
    names = list(ours)
    return {name: ours[name] for name in names[:room]}, names[room:]
