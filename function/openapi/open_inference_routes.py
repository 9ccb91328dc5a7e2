"""The descriptions of the Open Inference Protocol v2 routes (function/router.py OPEN_INFERENCE)."""
from __future__ import annotations

from function.openapi import spec
from function.openapi.operation import Deployment, Operation
from function.protocols import open_inference
from function.protocols.tensor_values import DTYPE_NAMES
from function.responses import BINARY_CONTENT_TYPE

TAGS = ("open-inference",)
COUNT_ITEM = {"type": "integer", "minimum": 0}


def _path_parameters(deployment: Deployment) -> tuple:
    version = spec.Parameter("version", spec.SHA256, "The model's model_version (the sha256 its files are known by; "
                             "GET /v2/models/{name} lists every version served: the stable one first, then each "
                             "labelled one).", location="path")
    return spec.model_name_parameter(deployment), version


def _datatypes() -> dict:
    return {"enum": [names.v2 for names in DTYPE_NAMES.values()],
            "description": "The datatypes served here (the protocol's BF16 and BYTES are not)."}


def describe_server_metadata(deployment: Deployment) -> Operation:
    return spec.Operation(
        summary="Open Inference: server metadata",
        description="The server's name, version and protocol extensions (binary_tensor_data and Triton's "
                    "model_repository, model_configuration and statistics).",
        response=spec.obj({"name": spec.STRING, "version": spec.STRING, "extensions": spec.array(spec.STRING)}),
        tags=TAGS,
    )


def describe_server_live(deployment: Deployment) -> Operation:
    return spec.Operation(summary="Open Inference: server liveness", description="200 while the server answers.",
                          response=spec.obj({"live": spec.BOOLEAN}), tags=TAGS)


def describe_server_ready(deployment: Deployment) -> Operation:
    return spec.Operation(
        summary="Open Inference: server readiness",
        description="200 when every model directory can be served (interpreters load on first use, as on every "
                    "route); 503 naming the ones that cannot.",
        response=spec.obj({"ready": spec.BOOLEAN}),
        errors=("not_ready",),
        tags=TAGS,
    )


def describe_model_metadata(deployment: Deployment) -> Operation:
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
    parameters = {"type": "object", "description": "Other parameters are ignored; shared_memory_region and "
                                                   "classification are refused."}
    batch = {"type": "integer", "minimum": 1, "maximum": deployment.settings.max_tensor_batch,
             "description": f"The batch: {spec.batch_limit(deployment)}."}
    tensor_in = {"type": "object", "required": ["name", "shape", "datatype", "data"], "properties": {
        "name": {**spec.STRING, "description": "One of the model's inputs (its metadata names them), each once."},
        "shape": spec.array({"type": "integer", "minimum": 0}, minItems=1, prefixItems=[batch],
                            description="Batch first; the input's fixed dimensions as its metadata gives them."),
        "datatype": {**_datatypes(), "description": "The input's own datatype, as its metadata gives it; any "
                     "other (FP64 for an FP32 input) is a 400, as Triton refuses it."},
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
    return spec.tensor_infer(
        body,
        summary="Open Inference: infer",
        description="The Open Inference Protocol v2 (KServe, Triton, MLServer) infer request over any served model: "
                    "typed input tensors in, typed output tensors out, values as docs/api.md's tensor value rules say. "
                    "This schema is the JSON form. Triton's binary tensor data extension (what tritonclient sends by "
                    "default) is also taken: the JSON part, then each input's raw little-endian bytes, its length "
                    "in the Inference-Header-Content-Length header, inputs declaring parameters.binary_data_size in "
                    "place of data. Errors are the protocol's {\"error\": \"<message>\"}.",
        parameters=_path_parameters(deployment),
        response=answer,
        other_responses={BINARY_CONTENT_TYPE: binary},
        errors=(*spec.TENSOR_BODY, "invalid_header", *spec.TENSOR_MODEL, "missing_field", "invalid_field",
                "unsupported_parameter", "unknown_input", "missing_input", *spec.TENSOR_VALUES,
                "invalid_binary_data", "batch_mismatch", "empty_batch", "batch_too_large", "unknown_output"),
        tags=TAGS,
    )


def describe_repository_index(deployment: Deployment) -> Operation:
    entry = spec.obj({"name": spec.STRING, "version": spec.MODEL_VERSION,
                      "state": {"enum": ["READY", "UNAVAILABLE"]},
                      "reason": {**spec.STRING, "description": "Why the model cannot be served; empty when READY."}},
                     required=["name", "state", "reason"])
    body = {"type": "object", "properties": {"ready": {**spec.BOOLEAN, "default": False,
                                                       "description": "Only the models ready for inference."}}}
    return spec.Operation(
        summary="Triton: model repository index",
        description="Triton's model repository extension, as tritonclient's get_model_repository_index() calls it "
                    "(an empty body, or {\"ready\": true}): every version of every model served (READY) and every "
                    "model directory that cannot be served (UNAVAILABLE, with the reason). Load and unload are not "
                    "served: the models are the deployment's.",
        request={"application/json": body},
        request_required=False,
        response=spec.array(entry),
        errors=("body_too_large", "invalid_json", "invalid_field"),
        tags=TAGS,
    )


def describe_model_config(deployment: Deployment) -> Operation:
    tensor = spec.obj({"name": spec.STRING,
                       "data_type": {"enum": [f"TYPE_{names.v2}" for names in DTYPE_NAMES.values()]},
                       "dims": spec.array({"type": "integer", "minimum": -1}, minItems=1,
                                          description="Without the batch dimension; -1 where dynamic."),
                       "reshape": spec.obj({"shape": spec.array(COUNT_ITEM, maxItems=0)})},
                      required=["name", "data_type", "dims"])
    return spec.Operation(
        summary="Triton: model configuration",
        description="Triton's model configuration extension (tritonclient's get_model_config()): the model's "
                    "ModelConfig, its inputs and outputs without the batch dimension (max_batch_size is "
                    "MAX_TENSOR_BATCH); a tensor of one value per instance is dims [1] reshaped to [].",
        parameters=_path_parameters(deployment),
        response=spec.obj({"name": spec.STRING, "platform": {"const": open_inference.PLATFORM},
                           "backend": spec.STRING, "max_batch_size": spec.COUNT,
                           "input": spec.array(tensor, minItems=1), "output": spec.array(tensor, minItems=1),
                           "parameters": spec.obj({"model_version": spec.obj({"string_value": spec.MODEL_VERSION})})}),
        errors=spec.TENSOR_MODEL,
        tags=TAGS,
    )


def describe_model_statistics(deployment: Deployment) -> Operation:
    duration = spec.obj({"count": spec.COUNT, "ns": spec.COUNT})
    stages = ("success", "fail", "queue", "compute_input", "compute_infer", "compute_output", "cache_hit", "cache_miss")
    stat = spec.obj({"name": spec.STRING, "version": spec.MODEL_VERSION,
                     "last_inference": {**spec.COUNT, "description": "Milliseconds since the epoch; 0: never."},
                     "inference_count": {**spec.COUNT, "description": "Instances computed (not cache hits)."},
                     "execution_count": {**spec.COUNT, "description": "Model runs."},
                     "inference_stats": spec.obj({stage: duration for stage in stages}),
                     "response_stats": {"type": "object", "maxProperties": 0},
                     "batch_stats": spec.array(spec.STRING, maxItems=0),
                     "memory_usage": spec.array(spec.STRING, maxItems=0)})
    return spec.Operation(
        summary="Triton: inference statistics",
        description="Triton's statistics extension (tritonclient's get_inference_statistics()): per model version, "
                    "what this container answered since it started, whatever the route (each Lambda container "
                    "counts its own): requests (success, fail) with their whole time, instances computed, model "
                    "runs and the time of their input, inference and output stages, cache hits and misses. No "
                    "queue inside a container: queue counts requests with no time. Without a model in the path, "
                    "every version of every model; without a version, every version of that model.",
        parameters=_path_parameters(deployment),
        response=spec.obj({"model_stats": spec.array(stat)}),
        errors=spec.TENSOR_MODEL,
        tags=TAGS,
    )


DESCRIPTIONS = {
    "open_inference:server_metadata": describe_server_metadata,
    "open_inference:server_live": describe_server_live,
    "open_inference:server_ready": describe_server_ready,
    "open_inference:model_metadata": describe_model_metadata,
    "open_inference:model_ready": describe_model_ready,
    "open_inference:infer": describe_infer,
    "open_inference:repository_index": describe_repository_index,
    "open_inference:model_config": describe_model_config,
    "open_inference:model_statistics": describe_model_statistics,
}
