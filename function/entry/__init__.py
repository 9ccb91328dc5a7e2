"""Lambda events in: one adapter module per kind of event, picked by the event's shape.

API Gateway (payload 1.0 and 2.0, and anything unrecognised, which it refuses with 400 unsupported_event), the
scheduled warm-up, S3 ObjectCreated notifications and SQS batches. Every adapter calls the same tasks through the
same result cache (Service); the S3 and SQS ones are imported only when such an event arrives, so the API path
never loads the S3 client.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable

ADAPTERS = {
    "api_gateway": "function.entry.api_gateway",
    "warmup": "function.entry.warmup",
    "s3": "function.entry.s3_upload",
    "sqs": "function.entry.sqs_batch",
}
RECORD_SOURCES = {"aws:s3": "s3", "aws:sqs": "sqs"}  # a record's eventSource, as AWS documents the events


def event_kind(event: object) -> str:
    if isinstance(event, dict):
        if event.get("warmup") is True:
            return "warmup"
        records = event.get("Records")
        if isinstance(records, list) and records and isinstance(records[0], dict):
            kind = RECORD_SOURCES.get(records[0].get("eventSource"))
            if kind:
                return kind
    return "api_gateway"


def adapter_for(event: object) -> Callable:
    """`handle(service, event, context) -> dict` of the module for this event's kind."""
    return importlib.import_module(ADAPTERS[event_kind(event)]).handle
