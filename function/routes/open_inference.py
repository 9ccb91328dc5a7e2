"""The Open Inference Protocol v2 over the tensor view of any model: health, server and model metadata, model
readiness and POST /v2/models/{name}/infer (each model route also under /versions/{version}), JSON or Triton's
binary tensor data. Errors take the protocol's shape, {"error": "..."} (function/http_errors.py)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from function.config import MAX_BODY_BYTES, MAX_TENSOR_BATCH
from function.errors import refuse
from function.inference import cached_results
from function.openapi import described_by
from function.protocols import open_inference
from function.responses import BINARY_CONTENT_TYPE, Response, json_bytes, json_response
from function.routes import inputs
from function.routes.context import RouteContext
from function.tasks.tensor import TensorTask

if TYPE_CHECKING:
    from function.openapi.operation import Deployment, Operation

TAGS = ("open-inference",)


def _path_parameters(deployment: Deployment) -> tuple:
    from function.openapi import spec  # noqa: PLC0415  (on the first GET /openapi.json only, never at init)

    version = spec.Parameter("version", spec.SHA256, "The model's model_version (the sha256 its files are known by; "
                             "GET /v2/models/{name} lists it): the only version served.", location="path")
    return spec.model_name_parameter(deployment), version


def _datatypes() -> dict:
    from function.protocols.tensor_values import DTYPE_NAMES  # noqa: PLC0415

    return {"enum": [names.v2 for names in DTYPE_NAMES.values()],
            "description": "The datatypes served here (the protocol's FP16, BF16 and BYTES are not)."}


def describe_server_metadata(deployment: Deployment) -> Operation:
    from function.openapi import spec  # noqa: PLC0415  (on the first GET /openapi.json only, never at init)

    return spec.Operation(
        summary="Open Inference: server metadata",
        description="The server's name, version and protocol extensions (binary_tensor_data).",
        response=spec.obj({"name": spec.STRING, "version": spec.STRING, "extensions": spec.array(spec.STRING)}),
        tags=TAGS,
    )


def describe_server_live(deployment: Deployment) -> Operation:
    from function.openapi import spec  # noqa: PLC0415  (on the first GET /openapi.json only, never at init)

    return spec.Operation(summary="Open Inference: server liveness", description="200 while the server answers.",
                          response=spec.obj({"live": spec.BOOLEAN}), tags=TAGS)


def describe_server_ready(deployment: Deployment) -> Operation:
    from function.openapi import spec  # noqa: PLC0415  (on the first GET /openapi.json only, never at init)

    return spec.Operation(
        summary="Open Inference: server readiness",
        description="200 when every model directory can be served (interpreters load on first use, as on every "
                    "route); 503 naming the ones that cannot.",
        response=spec.obj({"ready": spec.BOOLEAN}),
        errors=("not_ready",),
        tags=TAGS,
    )


def describe_model_metadata(deployment: Deployment) -> Operation:
    from function.openapi import spec  # noqa: PLC0415  (on the first GET /openapi.json only, never at init)

    tensor = spec.obj({"name": spec.STRING, "datatype": _datatypes(),
                       "shape": spec.array({"type": "integer", "minimum": -1}, minItems=1,
                                           description="Batch first; -1 for the batch and any dynamic dimension.")})
    return spec.Operation(
        summary="Open Inference: model metadata",
        description="The model's version, platform (litert_tflite) and typed inputs and outputs. Loads nothing.",
        parameters=_path_parameters(deployment),
        response=spec.obj({"name": spec.STRING, "versions": spec.array(spec.MODEL_VERSION, minItems=1),
                           "platform": {"const": open_inference.PLATFORM}, "inputs": spec.array(tensor, minItems=1),
                           "outputs": spec.array(tensor, minItems=1)}),
        errors=spec.TENSOR_MODEL,
        tags=TAGS,
    )


def describe_model_ready(deployment: Deployment) -> Operation:
    from function.openapi import spec  # noqa: PLC0415  (on the first GET /openapi.json only, never at init)

    return spec.Operation(
        summary="Open Inference: model readiness",
        description="200 for a model that can be served (its interpreter loads on first use); 404 for an unknown "
                    "one, 503 for one that cannot be served.",
        parameters=_path_parameters(deployment),
        response=spec.obj({"name": spec.STRING, "ready": spec.BOOLEAN}),
        errors=spec.TENSOR_MODEL,
        tags=TAGS,
    )


def describe_infer(deployment: Deployment) -> Operation:
    from function.openapi import spec  # noqa: PLC0415  (on the first GET /openapi.json only, never at init)

    parameters = {"type": "object", "description": "Other parameters are ignored; shared_memory_region and "
                                                   "classification are refused."}
    batch = {"type": "integer", "minimum": 1, "maximum": deployment.settings.max_tensor_batch,
             "description": f"The batch: {spec.batch_limit(deployment)}."}
    tensor_in = {"type": "object", "required": ["name", "shape", "datatype", "data"], "properties": {
        "name": {**spec.STRING, "description": "One of the model's inputs (its metadata names them), each once."},
        "shape": spec.array({"type": "integer", "minimum": 0}, minItems=1, prefixItems=[batch],
                            description="Batch first; the input's fixed dimensions as its metadata gives them."),
        "datatype": {**_datatypes(), "description": "The input's own datatype (its metadata gives it)."},
        "parameters": {**parameters, "properties": {"binary_data_size": {
            "type": "integer", "minimum": 0, "description": "Binary tensor data extension: the input's bytes follow "
                                                            "the JSON part, in place of data."}}},
        "data": spec.array(spec.JSON_TENSOR["items"], description="The whole batch, flat in row-major order or "
                                                                  "nested as the shape."),
    }}
    tensor_asked = {"type": "object", "required": ["name"], "properties": {
        "name": {**spec.STRING, "description": "One of the model's outputs."},
        "parameters": {**parameters, "properties": {"binary_data": {
            **spec.BOOLEAN, "description": "Answer this output as binary tensor data."}}}}}
    body = {"type": "object", "required": ["inputs"], "properties": {
        "id": {"type": ["string", "null"], "description": "Echoed in the answer (null: no id)."},
        "parameters": {**parameters, "properties": {"binary_data_output": {
            **spec.BOOLEAN, "description": "Answer every output as binary tensor data (application/octet-stream)."}}},
        "inputs": spec.array(tensor_in, minItems=1, description="Every model input, once."),
        "outputs": spec.array(tensor_asked, minItems=1, description="Only these outputs, in this order; left out, "
                                                                    "every output."),
    }}
    tensor_out = spec.obj({"name": spec.STRING, "datatype": _datatypes(),
                           "shape": spec.array(spec.COUNT, minItems=1, description="Batch first."),
                           "data": spec.array({"type": ["number", "boolean"]}, description="Flat, row-major.")})
    answer = spec.obj({"model_name": spec.STRING, "model_version": spec.MODEL_VERSION, "id": spec.STRING,
                       "outputs": spec.array(tensor_out, minItems=1)},
                      required=["model_name", "model_version", "outputs"])
    binary = {"type": "string", "format": "binary",
              "description": "Binary tensor data: the JSON answer (Inference-Header-Content-Length bytes, outputs "
                             "asked as binary carry parameters.binary_data_size instead of data), then their raw "
                             "little-endian bytes in output order."}
    return spec.Operation(
        summary="Open Inference: infer",
        description="The Open Inference Protocol v2 (KServe, Triton, MLServer) infer request over any served model: "
                    "typed input tensors in, typed output tensors out, values as docs/api.md's tensor value rules say. "
                    "This schema is the JSON form. Triton's binary tensor data extension (what tritonclient sends by "
                    "default) is also taken: the JSON part, then each input's raw little-endian bytes, its length "
                    "in the Inference-Header-Content-Length header, inputs declaring parameters.binary_data_size in "
                    "place of data. Errors are the protocol's {\"error\": \"<message>\"}.",
        request={"application/json": body},
        parameters=_path_parameters(deployment),
        response=answer,
        other_responses={BINARY_CONTENT_TYPE: binary},
        errors=(*spec.TENSOR_BODY, "invalid_header", *spec.TENSOR_MODEL, "missing_field", "invalid_field",
                "unsupported_parameter", "unknown_input", "missing_input", *spec.TENSOR_VALUES,
                "invalid_binary_data", "batch_mismatch", "empty_batch", "batch_too_large", "unknown_output"),
        limits=(MAX_BODY_BYTES, MAX_TENSOR_BATCH),
        tags=TAGS,
    )


def _task(ctx: RouteContext) -> TensorTask:
    task = ctx.registry.tensor_task(ctx.path_params["name"])
    open_inference.check_version(task.manifest, ctx.path_params.get("version"))
    return task


@described_by(describe_server_live)
def server_live(ctx: RouteContext) -> Response:
    return json_response(200, {"live": True})


@described_by(describe_server_ready)
def server_ready(ctx: RouteContext) -> Response:
    """Ready when every model directory can be served (interpreters load on first use, as on every route)."""
    broken = sorted(ctx.registry.unservable)
    if broken:
        raise refuse("not_ready", f"Model(s) {broken} cannot be served; GET /models says why.")
    return json_response(200, {"ready": True})


@described_by(describe_server_metadata)
def server_metadata(ctx: RouteContext) -> Response:
    return json_response(200, open_inference.server_metadata())


@described_by(describe_model_metadata)
def model_metadata(ctx: RouteContext) -> Response:
    return json_response(200, open_inference.model_metadata(_task(ctx)))


@described_by(describe_model_ready)
def model_ready(ctx: RouteContext) -> Response:
    task = _task(ctx)
    return json_response(200, {"name": task.manifest.name, "ready": True})


@described_by(describe_infer)
def infer(ctx: RouteContext) -> Response:
    request = ctx.request
    inputs.check_body_size(request, ctx.settings.max_body_bytes)
    inputs.check_not_compressed(request)
    task = _task(ctx)
    with ctx.timings.stage("parse"):
        header, binary = open_inference.split_body(request.body, request.headers.get(open_inference.HEADER_LENGTH))
        body = inputs.parse_json_object(header)
        infer_request = open_inference.parse_infer(body, binary, task, ctx.settings.max_tensor_batch)
    prediction = cached_results(task, ctx.store, infer_request.instances, {}, ctx.timings, ctx.log_fields)
    answer, binary_out = open_inference.infer_response(task, infer_request, prediction.results)
    if not infer_request.binary:
        return json_response(200, answer)
    head = json_bytes(answer)
    return Response(200, head + binary_out, {"content-type": BINARY_CONTENT_TYPE,
                                             open_inference.HEADER_LENGTH: str(len(head))})
