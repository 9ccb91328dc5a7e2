"""One container's serving state and the request loop, one log line per request.

The request path reads in one direction: handler (app.py) -> event (events.py) -> route (router.py, routes/) ->
task through the result cache (inference.py, tasks/) -> response (responses.py); errors become responses only
at the edge, here (http_errors.py).
"""
from __future__ import annotations

import dataclasses
import logging
import time

from function.cache.base import ResultStore
from function.config import ServiceSettings
from function.errors import ServingError, UnsupportedEvent
from function.events import Request, parse_event
from function.http_errors import error_response, internal_error_response
from function.log import Timings
from function.models.registry import ModelRegistry
from function.responses import Response, json_response, to_result
from function.router import resolve, template_of
from function.routes.context import RouteContext

log = logging.getLogger("function")


class Service:
    def __init__(self, settings: ServiceSettings, store: ResultStore, registry: ModelRegistry | None = None):
        self.settings = settings
        self.store = store
        self.registry = registry or ModelRegistry(settings.model_dir, settings.task_limits())
        self._cold = True
        if settings.preload_models:
            self.registry.preload()

    def handle_event(self, event: object, context: object = None) -> dict:
        """The Lambda contract: an API Gateway proxy event in, a proxy result out. Never raises."""
        if isinstance(event, dict) and event.get("warmup") is True:
            return self.warm_up(context)
        lambda_request_id = _lambda_request_id(context)
        try:
            request = parse_event(event)
        except UnsupportedEvent as exc:
            log.warning("unsupported event", extra={"fields": {"problem": exc.message,
                                                               "lambda_request_id": lambda_request_id}})
            return to_result(error_response(exc))
        if not request.request_id and lambda_request_id:
            request = dataclasses.replace(request, request_id=lambda_request_id)
        return to_result(self.handle(request, lambda_request_id))

    def warm_up(self, context: object = None) -> dict:
        """The scheduled {"warmup": true} event (serverless.yml): load every interpreter, infer nothing, so the
        next real request in this container pays neither model loading nor first-call costs."""
        start = time.perf_counter()
        cold, self._cold = self._cold, False
        self.registry.preload()
        models = sorted(self.registry.tasks)
        fields = {"lambda_request_id": _lambda_request_id(context), "cold_start": cold, "models": models,
                  "timings_ms": {"total": round((time.perf_counter() - start) * 1000.0, 3)}}
        log.info("warmup", extra={"fields": fields})
        return to_result(json_response(200, {"warm": True, "models": models}))

    def handle(self, request: Request, lambda_request_id: str = "") -> Response:
        start = time.perf_counter()
        ctx = RouteContext(request, self.settings, self.registry, self.store, Timings())
        cold, self._cold = self._cold, False
        error_code, failure = None, None
        try:
            match = resolve(request.method, request.path)
            ctx.path_params = match.params
            response = match.function(ctx)
        except ServingError as exc:
            error_code = exc.code
            response = error_response(exc, request.path)
        except Exception as exc:  # noqa: BLE001  (a bug of ours: log it, answer 500, keep the container serving)
            error_code, failure = "internal_error", exc
            response = internal_error_response(request.path)
        matched = template_of(request.path)
        fields = {
            "request_id": request.request_id,
            "lambda_request_id": lambda_request_id,  # matches the runtime's START/END/REPORT lines
            "cold_start": cold,
            "route": matched[0] if matched else "unknown",  # never echo arbitrary client paths into logs
            "method": request.method,
            "event_format": request.event_format,
            "status": response.status,
            "body_bytes": len(request.body),
            **ctx.log_fields,
            "timings_ms": {**ctx.timings.as_dict(), "total": round((time.perf_counter() - start) * 1000.0, 3)},
        }
        if error_code:
            fields["error_code"] = error_code
        # One line per request, always: a bug's traceback goes into that line, not a second one.
        log.log(logging.ERROR if failure else logging.INFO, "request", exc_info=failure, extra={"fields": fields})
        return response


def _lambda_request_id(context: object) -> str:
    value = getattr(context, "aws_request_id", "")
    return value if isinstance(value, str) else ""
