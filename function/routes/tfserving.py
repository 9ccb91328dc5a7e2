"""TensorFlow Serving's REST API over the tensor view of any model: GET /v1/models/{name} (status),
GET /v1/models/{name}/metadata (the signature), POST /v1/models/{name}:predict; each also under
/v1/models/{name}/versions/{version}. Errors take TF Serving's shape, {"error": "..."} (function/router.py)."""
from __future__ import annotations

from function.inference import cached_results
from function.protocols import tfserving
from function.responses import Response, json_response
from function.routes import inputs
from function.routes.context import RouteContext
from function.tasks.tensor import TensorTask


def _task(ctx: RouteContext) -> TensorTask:
    task = ctx.registry.tensor_task(ctx.path_params["name"])
    tfserving.check_version(task.manifest, ctx.path_params.get("version"))
    return task


def model_status(ctx: RouteContext) -> Response:
    return json_response(200, tfserving.model_status(_task(ctx).manifest))


def model_metadata(ctx: RouteContext) -> Response:
    return json_response(200, tfserving.model_metadata(_task(ctx)))


def predict_route(ctx: RouteContext) -> Response:
    inputs.check_body_size(ctx.request, ctx.settings.max_body_bytes)
    inputs.check_not_compressed(ctx.request)
    task = _task(ctx)
    with ctx.timings.stage("parse"):
        body = inputs.json_object(ctx.request)
        request = tfserving.parse_predict(body, task, ctx.settings.max_tensor_batch)
    prediction = cached_results(task, ctx.store, request.instances, {}, ctx.timings, ctx.log_fields)
    return json_response(200, tfserving.predict_response(task, request, prediction.results))
