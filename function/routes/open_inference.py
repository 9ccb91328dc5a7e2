"""The Open Inference Protocol v2 over the tensor view of any model: health, server and model metadata, model
readiness and POST /v2/models/{name}/infer (each model route also under /versions/{version}), JSON or Triton's
binary tensor data. Errors take the protocol's shape, {"error": "..."} (function/router.py)."""
from __future__ import annotations

from function.errors import refuse
from function.protocols import open_inference
from function.responses import BINARY_CONTENT_TYPE, Response, json_bytes, json_response
from function.routes import inputs
from function.routes.context import RouteContext
from function.tasks.tensor import TensorTask


def _task(ctx: RouteContext) -> TensorTask:
    """The version the path names (the stable one, or a canary's share, when it names none)."""
    return ctx.registry.tensor_task(ctx.path_params["name"], ctx.path_params.get("version"))


def server_live(ctx: RouteContext) -> Response:
    return json_response(200, {"live": True})


def server_ready(ctx: RouteContext) -> Response:
    """Ready when every model directory can be served (interpreters load on first use, as on every route)."""
    broken = sorted(ctx.registry.unservable)
    if broken:
        raise refuse("not_ready", f"Model(s) {broken} cannot be served; GET /models says why.")
    return json_response(200, {"ready": True})


def server_metadata(ctx: RouteContext) -> Response:
    return json_response(200, open_inference.server_metadata())


def model_metadata(ctx: RouteContext) -> Response:
    task = _task(ctx)
    versions = [task.manifest.version] if ctx.names_version else [
        version.manifest.version for version in ctx.registry.versions(task.manifest.name)]
    return json_response(200, open_inference.model_metadata(task, versions))


def model_ready(ctx: RouteContext) -> Response:
    task = _task(ctx)
    return json_response(200, {"name": task.manifest.name, "ready": True})


def infer(ctx: RouteContext) -> Response:
    request = ctx.request
    inputs.check_body_size(request, ctx.settings.max_body_bytes)
    inputs.check_not_compressed(request)
    task = _task(ctx)
    with ctx.timings.stage("parse"):
        header, binary = open_inference.split_body(request.body, request.headers.get(open_inference.HEADER_LENGTH))
        body = inputs.parse_json_object(header)
        infer_request = open_inference.parse_infer(body, binary, task, ctx.settings.max_tensor_batch)
    prediction = ctx.predict(task, infer_request.instances, {})
    answer, binary_out = open_inference.infer_response(prediction.task, infer_request, prediction.results)
    if not infer_request.binary:
        return json_response(200, answer)
    head = json_bytes(answer)
    return Response(200, head + binary_out, {"content-type": BINARY_CONTENT_TYPE,
                                             open_inference.HEADER_LENGTH: str(len(head))})
