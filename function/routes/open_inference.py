"""The Open Inference Protocol v2 over the tensor view of any model: health, server and model metadata, model
readiness and POST /v2/models/{name}/infer (each model route also under /versions/{version}), JSON or Triton's
binary tensor data; and Triton's repository index, model configuration and statistics extensions. Errors take the
protocol's shape, {"error": "..."} (function/router.py)."""
from __future__ import annotations

from function.errors import refuse
from function.protocols import open_inference, triton_extensions
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


def repository_index(ctx: RouteContext) -> Response:
    """Every version of every model, READY, and each model that cannot be served, UNAVAILABLE with its reason;
    {"ready": true}: the READY ones only."""
    request = ctx.request
    inputs.check_body_size(request, ctx.settings.max_body_bytes)
    body = inputs.parse_json_object(request.body) if request.body.strip() else None
    ready_only = triton_extensions.index_ready_only(body)
    registry, entries = ctx.registry, []
    for name in registry.names:
        unservable = registry.unservable.get(name)
        if unservable is None:
            entries.extend(triton_extensions.index_entry(name, task.manifest.version, None)
                           for task in registry.versions(name))
        elif not ready_only:
            entries.append(triton_extensions.index_entry(name, None, unservable.reason))
    return json_response(200, entries)


def model_config(ctx: RouteContext) -> Response:
    return json_response(200, triton_extensions.model_config(_task(ctx), ctx.settings.max_tensor_batch))


def model_statistics(ctx: RouteContext) -> Response:
    """The versions the path names: one, every version of one model, or every version of every model."""
    registry, name = ctx.registry, ctx.path_params.get("name")
    if name is None:
        tasks = [task for served in sorted(registry.tasks) for task in registry.versions(served)]
    elif "version" in ctx.path_params:
        tasks = [registry.version_task(name, ctx.path_params["version"])]
    else:
        tasks = registry.versions(name)
    stats = registry.statistics
    return json_response(200, {"model_stats": [
        triton_extensions.model_stat(task.manifest.name, task.manifest.version,
                                     stats.of(task.manifest.name, task.manifest.version)) for task in tasks]})
