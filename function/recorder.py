"""The one recorder of every door's line: an HTTP request's, an SQS message's (through the HTTP path), an upload's,
a bulk batch's, the warm-up's, and an event that escapes its adapter (function/entry/__init__.py).

Each is one JSON line (function/log.py) that is also the event's metrics (function/metrics.py: the EMF block):
the Lambda request id, `cold_start` (True on the container's first line, "restore" on the first after a SnapStart
restore, whatever door it came through), the stage times with their total, and the door's own fields (its `route`,
the `status` an HTTP client would have had, the model and counts). A door says what happened; this writes it.
"""
from __future__ import annotations

import logging
import time

from function.log import Timings, log_fields
from function.metrics import metric_fields

log = logging.getLogger("function")


def record(service, message: str, fields: dict, started: float, timings: Timings | None = None,
           lambda_request_id: str | None = None, failure: BaseException | None = None,
           level: int | None = None) -> dict:
    """Writes the line `message` of `fields` (which it completes: `lambda_request_id` when given, `cold_start`,
    `timings_ms` from `timings` and the time since `started`, `tokens` when the texts tokenized say and the fields
    do not, the metrics) and returns them. A `failure` (a bug of
    ours) is the line's traceback, at ERROR."""
    if lambda_request_id is not None:
        fields.setdefault("lambda_request_id", lambda_request_id)
    fields["cold_start"] = service.first_call()
    service.lines_recorded += 1
    stages = timings.as_dict() if timings is not None else {}
    if timings is not None and timings.tokens and "tokens" not in fields:  # the texts tokenized, when results
        fields["tokens"] = timings.tokens  # do not count them (a text classifier's): the tokens metric
    fields["timings_ms"] = {**stages, "total": round((time.perf_counter() - started) * 1000.0, 3)}
    fields.update(metric_fields(fields, service.settings.metrics))
    if level is None:
        level = logging.ERROR if failure else logging.INFO
    log_fields(log, level, message, fields, failure)
    return fields


def record_escape(service, kind: str, exc: Exception, started: float, lambda_request_id: str) -> None:
    """The line of an event whose adapter raised before writing any (a bulk run's settings it cannot act on, the
    model unavailable for a whole batch, a bug of ours): the error's class is its code, and a bug its traceback."""
    expected = type(exc).__name__ in ("InvalidBatchInput", "BatchNotFinished", "UploadsNotProcessed")
    fields = {"route": f"event:{kind}", "status": 400 if type(exc).__name__ == "InvalidBatchInput" else 500,
              "error_code": type(exc).__name__, "problem": str(exc)[:500]}
    record(service, "event failed", fields, started, lambda_request_id=lambda_request_id,
           failure=None if expected else exc, level=logging.WARNING if expected else None)
