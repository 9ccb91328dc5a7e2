"""One container's serving state and the request loop: a Request in, a Response out, one log line per request.

The request path reads in one direction: handler (app.py) -> the adapter for the event's kind (entry/), which
reads the event (events.py) -> Service.handle, here -> the route the router's tables match (router.py, routes/)
-> the task through the result cache (inference.py, tasks/) -> response (responses.py), which the adapter turns
into the Lambda result. Errors become responses only at the edge, here, in the matched group's body shape
(http_errors.py).
"""
from __future__ import annotations

import logging
import time

from function.cache.base import ResultStore
from function.config import ServiceSettings
from function.errors import ServingError
from function.events import Request
from function.http_errors import error_response, internal_error_response
from function.log import Timings
from function.catalog.registry import ModelRegistry
from function.catalog.configured_source import open_model_source
from function.responses import Response
from function.recorder import record
from function.router import match
from function.routes.context import RouteContext

log = logging.getLogger("function")


class Service:
    def __init__(self, settings: ServiceSettings, store: ResultStore, registry: ModelRegistry | None = None):
        self.settings = settings
        self.store = store
        self.registry = registry or ModelRegistry(open_model_source(settings), settings.task_limits())
        self._cold = True
        self.lines_recorded = 0  # function/recorder.py: an event that wrote none gets one if it escapes
        self._s3 = None
        if settings.preload_models:
            self.registry.preload()

    def first_call(self) -> bool:
        """True once per container ("restore" after a SnapStart restore): for the first event's log line
        (`cold_start`), whatever its kind."""
        cold, self._cold = self._cold, False
        return cold

    def s3(self):
        """The S3 client of the S3 and SQS paths, made on first use (never on the API path)."""
        if self._s3 is None:
            from function.aws.s3 import DOOR_CALL_SECONDS, client_from_environment  # noqa: PLC0415  (~15 ms)

            self._s3 = client_from_environment(deadline_seconds=DOOR_CALL_SECONDS)
        return self._s3

    def close_connections(self) -> None:
        """Closes every socket and file this container holds open (the result store's, the model source's, S3's),
        before a SnapStart snapshot; each opens again on its next use, with the credentials read again."""
        self.registry.settle()  # a background model check's connections are its thread's: let it end first
        self.store.close()
        self.registry.source.close()
        s3, self._s3 = self._s3, None
        if s3 is not None:
            s3.close()

    def restored(self) -> None:
        """After a SnapStart restore: the next request's log line says so, and long-lived clients re-read the
        credentials of the restored environment."""
        self._cold = "restore"
        self.registry.source.renew_credentials()

    def warm_up(self, lambda_request_id: str = "") -> list[str]:
        """Load every interpreter, infer nothing, so that the next real request in this container pays neither
        model loading nor first-call costs; the models served."""
        start = time.perf_counter()
        self.registry.preload()
        models = sorted(self.registry.tasks)
        record(self, "warmup", {"models": models, "route": "warmup", "status": 200}, start,
               lambda_request_id=lambda_request_id)
        return models

    def handle(self, request: Request, lambda_request_id: str = "") -> Response:
        start = time.perf_counter()
        found = match(request.path)
        ctx = RouteContext(request, self.settings, self.registry, self.store, Timings(), path_params=found.params)
        error_code, failure = None, None
        try:
            response = found.route(request.method)(ctx)
        except ServingError as exc:
            error_code = exc.code
            response = error_response(exc, found.group.error_body)
        except Exception as exc:  # noqa: BLE001  (a bug of ours: log it, answer 500, keep the container serving)
            error_code, failure = "internal_error", exc
            response = internal_error_response(found.group.error_body)
        fields = {
            "request_id": request.request_id,
            "lambda_request_id": lambda_request_id,  # matches the runtime's START/END/REPORT lines
            "route": found.template or "unknown",  # never echo arbitrary client paths into logs
            "method": request.method,
            "event_format": request.event_format,
            "status": response.status,
            "body_bytes": len(request.body),
            **ctx.log_fields,
        }
        if error_code:
            fields["error_code"] = error_code
        # One line per request, always, which is also its metrics: a bug's traceback goes into it, not a second one.
        record(self, "request", fields, start, ctx.timings, failure=failure)
        return response
