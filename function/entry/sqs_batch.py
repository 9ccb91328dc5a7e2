"""SQS batches: each message is one request to /classify, /classify-text (or /sentiment) or /embed; each answer goes
to S3.

A message body is the JSON an HTTP client would POST to the route, plus "route" and an optional "id". The request
goes through the very routes the HTTP API uses (Service.handle), and the answer, success or client error alike, is
written to s3://RESULTS_BUCKET/<RESULTS_PREFIX><id or messageId>.json, exactly as an HTTP client would have read
it. Then:

- answered (2xx) or refused (4xx: the same message would be refused again): acknowledged;
- a 5xx (the model unavailable, a bug) or a write that may pass (S3's 5xx or throttling, a dropped connection):
  reported in batchItemFailures, so SQS delivers that message again after its visibility timeout, and moves it to
  the dead-letter queue after maxReceiveCount;
- a write S3 refuses for good (AccessDenied, NoSuchBucket: function/door_s3.py, the doors' one writer): logged at
  ERROR with S3's code, and reported too: the dead-letter queue is where SQS keeps a message that cannot be
  answered, and the answer has nowhere else to go.

- a body that is not a JSON object (not JSON, a list, a string, a number, null, or no string at all) is refused
  like any malformed request: its 400 answer is written and the message acknowledged;
- a record that is not a message at all (not an object, or without a messageId that could name its answer: SQS's
  are UUIDs, only a hand-made event holds another) is logged and dropped: it has no id to report, and Lambda takes a
  failure with an empty or unknown itemIdentifier as the whole batch's;
- a bug of ours on one message is logged with its traceback and reported for that message alone.

The answer is Lambda's partial batch response, which the event source mapping reads when it has
ReportBatchItemFailures (serverless.yml): only the listed messages are retried, never the whole batch, and no
record makes the handler raise.
"""
from __future__ import annotations

import json
import logging

from function import door_s3
from function.async_routes import NOT_FINISHED, ROUTE_PATHS
from function.door_s3 import is_result_id
from function.errors import ServingError, quoted, refuse
from function.events import Request
from function.http_errors import error_response
from function.service import Service

log = logging.getLogger("function")

ROUTES = ROUTE_PATHS  # the routes every asynchronous door may call (function/async_routes.py)


def handle(service: Service, event: dict, lambda_request_id: str) -> dict:
    failures = []
    for position, record in enumerate(event["Records"]):
        message_id = record.get("messageId") if isinstance(record, dict) else None
        if not is_result_id(message_id):
            log.error("sqs record dropped: not a message with a messageId", extra={"fields": {
                "position": position, "record_type": type(record).__name__}})
            continue
        try:
            answered = answer_message(service, record, message_id, lambda_request_id)
        except Exception:  # noqa: BLE001  (a bug of ours: this message is retried, the others keep their outcome)
            log.exception("sqs message failed", extra={"fields": {"message_id": message_id}})
            answered = False
        if not answered:
            failures.append({"itemIdentifier": message_id})
    return {"batchItemFailures": failures}


def answer_message(service: Service, record: dict, message_id: str, lambda_request_id: str) -> bool:
    """True when the message is done with (its answer written), False when it should be delivered again."""
    settings = service.settings
    try:
        request, result_id = request_of(record.get("body"), message_id)
        response = service.handle(request, lambda_request_id)
    except ServingError as exc:  # the message itself is malformed: answered like an HTTP client would be
        result_id, response = message_id, error_response(exc)
    fields = {"message_id": message_id, "result_id": result_id, "status": response.status}
    if response.status >= 500:
        log.warning("sqs message not answered, to be delivered again", extra={"fields": fields})
        return False
    if not settings.results_bucket:
        log.error("sqs message not answered: RESULTS_BUCKET is not set", extra={"fields": fields})
        return False
    failure = door_s3.write_result(service, settings.results_bucket,
                                   door_s3.named_result_key(settings.results_prefix, result_id), response)
    if failure is not None:
        # Either way the message is delivered again: one refused for good ends in the dead-letter queue after
        # maxReceiveCount, which keeps it (its answer has nowhere else to go), and its line says S3's code at ERROR.
        permanent = failure.status != NOT_FINISHED
        log.log(logging.ERROR if permanent else logging.WARNING,
                "sqs result refused by S3, to be delivered again until the dead-letter queue" if permanent
                else "sqs result not written, to be delivered again",
                extra={"fields": {**fields, "error_code": failure.code, "problem": failure.message}})
        return False
    log.info("sqs message answered", extra={"fields": fields})
    return True


def request_of(body: object, message_id: str) -> tuple[Request, str]:
    """The HTTP request a message stands for, and the id its answer is stored under."""
    try:
        message = json.loads(body) if isinstance(body, str) else None
    except (ValueError, RecursionError) as exc:
        raise refuse("invalid_json", f"The message body is not valid JSON: {exc}.") from exc
    if not isinstance(message, dict):
        raise refuse("invalid_json", "The message body must be a JSON object with a \"route\".")
    route = message.pop("route", None)
    if route not in ROUTES:
        raise refuse("invalid_route", f"'route' must be one of {', '.join(ROUTES)}, not {quoted(route)}.",
                     param="route")
    result_id = message.pop("id", message_id)
    if not is_result_id(result_id):
        raise refuse("invalid_id", "'id' must be up to 512 letters, digits or !_.*'()- characters, in "
                     "'/'-separated parts that are not '.' or '..'.", param="id")
    # ASCII JSON: a lone surrogate stays an escape, which the route refuses with its own 400.
    try:
        body_bytes = json.dumps(message).encode("ascii")
    except RecursionError as exc:
        raise refuse("invalid_json", "The message body nests too deeply.") from exc
    return Request("POST", route, {"content-type": "application/json"}, body_bytes, request_id=message_id,
                   event_format="sqs"), result_id
