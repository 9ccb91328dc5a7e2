"""TensorFlow Serving's REST API over the tensor view of any model: GET /v1/models/{name} (status),
GET /v1/models/{name}/metadata (the signature), POST /v1/models/{name}:predict; each also under
/v1/models/{name}/versions/{version} and /v1/models/{name}/labels/{label}, which that version answers (without
either: the stable version, or a canary's share). Errors take TF Serving's shape, {"error": "..."}
(function/router.py)."""
from __future__ import annotations

from function.protocols import tfserving
from function.protocols.tfserving_paths import check_int64_version
from function.responses import Response, json_response
from function.routes import inputs
from function.routes.context import RouteContext
from function.routes.openai_models import model_fields
from function.tasks.tensor import TensorTask


def _task(ctx: RouteContext) -> TensorTask:
    name, registry = ctx.path_params["name"], ctx.registry
    if "label" in ctx.path_params:
        return registry.tensor_task(name, registry.label_version(name, ctx.path_params["label"]))
    if "version" in ctx.path_params:
        # Read as the int64 TF Serving reads (0050 is 50; beyond int64 a 400) before the model is looked up, as
        # TF Serving parses the whole path first.
        number = check_int64_version(ctx.path_params["version"])
        manifests = [task.manifest for task in registry.versions(name)]
        return registry.tensor_task(name, tfserving.find_version(manifests, str(number)))
    return registry.tensor_task(name)


def model_status(ctx: RouteContext) -> Response:
    """TF Serving's GetModelStatusResponse, with OpenAI's Model fields beside it: GET /v1/models/{id} is OpenAI's
    "retrieve model" too, and each client reads only its own fields."""
    task = _task(ctx)  # the model must be servable as tensors
    manifests = [task.manifest] if ctx.names_version else [version.manifest for version in
                                                           ctx.registry.versions(ctx.path_params["name"])]
    return json_response(200, {**tfserving.model_status(manifests), **model_fields(task.manifest)})


def model_metadata(ctx: RouteContext) -> Response:
    return json_response(200, tfserving.model_metadata(_task(ctx)))


def predict_route(ctx: RouteContext) -> Response:
    inputs.check_body_size(ctx.request, ctx.settings.max_body_bytes)
    inputs.check_not_compressed(ctx.request)
    task = _task(ctx)
    with ctx.timings.stage("parse"):
        body = inputs.json_object(ctx.request)
        images = tfserving.EncodedImages(ctx.settings.max_batch, ctx.timings)  # decode: timed within parse
        request = tfserving.parse_predict(body, task, ctx.settings.max_tensor_batch, images)
    prediction = ctx.predict(task, request.instances, {})
    return json_response(200, tfserving.predict_response(prediction.task, request, prediction.results))
