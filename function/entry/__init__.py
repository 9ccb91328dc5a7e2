"""Lambda events in: the adapter for each kind of event, picked by the event's shape (as Mangum picks its handler).

`handle_event` is the Lambda contract (function.app.handler calls it with the container's Service). The adapter
for the event's kind reads the event, calls the Service (once per request it holds), and writes the Lambda
result; the Service never sees an event. API Gateway (payload 1.0 and 2.0, and anything unrecognised, which it
refuses with 400 unsupported_event), the scheduled warm-up, S3 ObjectCreated notifications, SQS batches, and
bulk runs' batches from Step Functions Distributed Map and S3 Batch Operations.
"""
from __future__ import annotations

import time
from collections.abc import Callable

from function.entry import api_gateway, warmup
from function.recorder import record_escape
from function.service import Service

Adapter = Callable[[Service, dict, str], dict]  # (service, event, Lambda request id) -> the Lambda result


def _s3_upload(service: Service, event: dict, lambda_request_id: str) -> dict:
    from function.entry import s3_upload  # noqa: PLC0415  (~26 ms, 34 modules with the S3 client: not on the API path)

    return s3_upload.handle(service, event, lambda_request_id)


def _sqs_batch(service: Service, event: dict, lambda_request_id: str) -> dict:
    from function.entry import sqs_batch  # noqa: PLC0415  (~26 ms, 34 modules with the S3 client: not on the API path)

    return sqs_batch.handle(service, event, lambda_request_id)


def _distributed_map(service: Service, event: dict, lambda_request_id: str) -> dict:
    from function.entry import distributed_map  # noqa: PLC0415  (~50 ms, 41 modules with the S3 client: bulk only)

    return distributed_map.handle(service, event, lambda_request_id)


def _s3_batch(service: Service, event: dict, lambda_request_id: str) -> dict:
    from function.entry import s3_batch  # noqa: PLC0415  (~50 ms, 41 modules with the S3 client: bulk only)

    return s3_batch.handle(service, event, lambda_request_id)


ADAPTERS: dict[str, Adapter] = {
    "api_gateway": api_gateway.handle,
    "warmup": warmup.handle,
    "s3": _s3_upload,
    "sqs": _sqs_batch,
    "distributed_map": _distributed_map,
    "s3_batch_operations": _s3_batch,
}
RECORD_SOURCES = {"aws:s3": "s3", "aws:sqs": "sqs"}  # a record's eventSource, as AWS documents the events


def event_kind(event: object) -> str:
    if isinstance(event, dict):
        if event.get("warmup") is True:
            return "warmup"
        if isinstance(event.get("Items"), list) and isinstance(event.get("BatchInput"), dict):
            return "distributed_map"  # a Distributed Map child's batch (ItemBatcher)
        if "invocationSchemaVersion" in event and isinstance(event.get("tasks"), list):
            return "s3_batch_operations"
        records = event.get("Records")
        if isinstance(records, list) and records and isinstance(records[0], dict):
            kind = RECORD_SOURCES.get(records[0].get("eventSource"))
            if kind:
                return kind
    return "api_gateway"


def handle_event(service: Service, event: object, context: object = None) -> dict:
    """The Lambda result for any event this function is wired to: an API Gateway proxy result, the warm-up answer,
    an S3 upload summary, an SQS partial batch response, a Distributed Map batch's summary, an S3 Batch Operations
    result list."""
    started, lines = time.perf_counter(), service.lines_recorded
    service.registry.refresh()  # one cheap conditional request when a published model may have changed
    kind, lambda_request_id = event_kind(event), lambda_request_id_of(context)
    try:
        return ADAPTERS[kind](service, event, lambda_request_id)
    except Exception as exc:
        if service.lines_recorded == lines:  # every event has its line (and its cold start), even one that escapes
            record_escape(service, kind, exc, started, lambda_request_id)
        raise


def lambda_request_id_of(context: object) -> str:
    value = getattr(context, "aws_request_id", "")
    return value if isinstance(value, str) else ""
