"""One container's serving state and the request loop: event -> route -> result, one log line per request."""
from __future__ import annotations

import dataclasses
import logging
import time

from function.cache.base import ResultStore
from function.config import ServiceSettings
from function.errors import ApiError, error_response, internal_error_response
from function.events import EventFormatError, Request, Response, json_response, parse_event, to_result
from function.log import Timings
from function.models.registry import ModelRegistry
from function.router import ROUTES, normalize, resolve
from function.routes.context import RouteContext

log = logging.getLogger("function")


class Service:
    def __init__(self, settings: ServiceSettings, store: ResultStore, registry: ModelRegistry | None = None):
        self.settings = settings
        self.store = store
        self.registry = registry or ModelRegistry(settings.model_dir, settings.max_image_pixels)
        self._cold = True
        if settings.preload_models:
            self.registry.preload()

    def handle_event(self, event: dict, context: object = None) -> dict:
        """The Lambda contract: an API Gateway proxy event in, a proxy result out. Never raises."""
        if isinstance(event, dict) and event.get("warmup") is True:
            return self.warm_up(context)
        try:
            request = parse_event(event)
        except EventFormatError as exc:
            log.warning("unsupported event", extra={"fields": {"problem": str(exc)}})
            return to_result(error_response(ApiError(400, "unsupported_event", f"{exc}.")))
        lambda_request_id = str(getattr(context, "aws_request_id", "") or "")
        if not request.request_id and lambda_request_id:
            request = dataclasses.replace(request, request_id=lambda_request_id)
        return to_result(self.handle(request, lambda_request_id))

    def warm_up(self, context: object = None) -> dict:
        """The scheduled {"warmup": true} event (serverless.yml): load every interpreter, infer nothing, so the
        next real request in this container pays neither model loading nor first-call costs."""
        start = time.perf_counter()
        cold, self._cold = self._cold, False
        self.registry.preload()
        fields = {"lambda_request_id": getattr(context, "aws_request_id", ""), "cold_start": cold,
                  "models": sorted(self.registry.manifests),
                  "timings_ms": {"total": round((time.perf_counter() - start) * 1000.0, 3)}}
        log.info("warmup", extra={"fields": fields})
        return to_result(json_response(200, {"warm": True, "models": fields["models"]}))

    def handle(self, request: Request, lambda_request_id: str = "") -> Response:
        start = time.perf_counter()
        ctx = RouteContext(request, self.settings, self.registry, self.store, Timings())
        cold, self._cold = self._cold, False
        error_code = None
        try:
            response = resolve(request.method, request.path)(ctx)
        except ApiError as exc:
            error_code = exc.code
            response = error_response(exc)
        except Exception:  # noqa: BLE001  (a bug of ours: log it, answer 500, keep the container serving)
            log.exception("request failed", extra={"fields": {"request_id": request.request_id}})
            error_code = "internal_error"
            response = internal_error_response()
        route = normalize(request.path)
        fields = {
            "request_id": request.request_id,
            "lambda_request_id": lambda_request_id,  # matches the runtime's START/END/REPORT lines
            "cold_start": cold,
            "route": route if route in ROUTES else "unknown",  # never echo arbitrary client paths into logs
            "method": request.method,
            "event_format": request.event_format,
            "status": response.status,
            "body_bytes": len(request.body),
            **ctx.log_fields,
            "timings_ms": {**ctx.timings.as_dict(), "total": round((time.perf_counter() - start) * 1000.0, 3)},
        }
        if error_code:
            fields["error_code"] = error_code
        log.info("request", extra={"fields": fields})
        return response
