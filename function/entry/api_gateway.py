"""API Gateway proxy events (HTTP API payload 2.0, REST API 1.0): a Request in, a proxy result out. Never raises."""
from __future__ import annotations

import logging

from function.errors import UnsupportedEvent
from function.events import parse_event
from function.http_errors import error_response
from function.responses import to_result
from function.service import Service

log = logging.getLogger("function")


def handle(service: Service, event: object, lambda_request_id: str) -> dict:
    try:
        request = parse_event(event)
    except UnsupportedEvent as exc:
        log.warning("unsupported event", extra={"fields": {"problem": exc.message,
                                                           "lambda_request_id": lambda_request_id}})
        return to_result(error_response(exc))
    if not request.request_id and lambda_request_id:
        request = request._replace(request_id=lambda_request_id)
    return to_result(service.handle(request, lambda_request_id))
