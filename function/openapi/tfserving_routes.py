"""The descriptions of TensorFlow Serving's REST API routes (function/router.py TF_SERVING)."""
from __future__ import annotations

from function.openapi import openai_routes, spec
from function.openapi.operation import Deployment, Operation
from function.protocols import tfserving
from function.protocols.tensor_values import DTYPE_NAMES

TAGS = ("tensorflow-serving",)
# A version beyond int64 is TF Serving's 400 malformed_request (function/protocols/tfserving_paths.py), read first.
TF_MODEL = ("malformed_request", *spec.TENSOR_MODEL)
MODEL_STATES = ["UNKNOWN", "START", "LOADING", "AVAILABLE", "UNLOADING", "END"]  # TF Serving's ModelVersionStatus


def _path_parameters(deployment: Deployment) -> tuple:
    version = spec.Parameter("version", {**spec.STRING, "pattern": "^[0-9]+$"}, "TF Serving versions are integers: "
                             "here the first 12 hex digits of the model's model_version, in decimal (GET "
                             "/v1/models/{name} lists every version served). Another is a 404.", location="path")
    label = spec.Parameter("label", {**spec.STRING, "pattern": "^[a-z][a-z0-9_-]{0,63}$"}, "A version label, as "
                           "`python -m convert publish --label` sets it: stable (what a request naming no version "
                           "gets, but for a canary's share) or another, e.g. canary. Another is a 404.",
                           location="path")
    return spec.model_name_parameter(deployment), version, label


def describe_model_status(deployment: Deployment) -> Operation:
    status = spec.obj({"error_code": spec.STRING, "error_message": spec.STRING})
    version = spec.obj({"version": {**spec.STRING, "pattern": "^[0-9]+$"}, "state": {"enum": MODEL_STATES},
                        "status": status})
    return spec.Operation(
        summary="TF Serving: model status",
        description="TensorFlow Serving's GetModelStatusResponse: every version served (the stable one first, then "
                    "each labelled one), or the one the path names, AVAILABLE (the interpreter loads on first use). "
                    "Also OpenAI's Model (id, object, created, owned_by): OpenAI's `models.retrieve` reads this "
                    "answer. Loads nothing.",
        parameters=_path_parameters(deployment),
        response=spec.obj({"model_version_status": spec.array(version, minItems=1), **openai_routes.MODEL}),
        errors=(*TF_MODEL, "label_not_found"),
        tags=TAGS,
    )


def describe_model_metadata(deployment: Deployment) -> Operation:
    dim = spec.obj({"size": {**spec.STRING, "pattern": "^-?[0-9]+$", "description": "An int64 as a string "
                                                                                    "(proto3 JSON); -1: any."},
                    "name": spec.STRING})
    tensor = spec.obj({"dtype": {"enum": sorted({*(names.tf for names in DTYPE_NAMES.values()), "DT_STRING"})},
                       "tensor_shape": spec.obj({"dim": spec.array(dim, minItems=1), "unknown_rank": spec.BOOLEAN}),
                       "name": spec.STRING})
    tensors = {"type": "object", "additionalProperties": tensor, "minProperties": 1}
    signature = spec.obj({"inputs": tensors, "outputs": tensors, "method_name": {"const": tfserving.PREDICT_METHOD},
                          "defaults": {"type": "object"}})
    model_spec = spec.obj({"name": spec.STRING, "signature_name": spec.STRING,
                           "version": {**spec.STRING, "pattern": "^[0-9]+$"}})
    signatures = spec.obj({"signature_def": {"type": "object", "additionalProperties": signature,
                                             "minProperties": 1}})
    return spec.Operation(
        summary="TF Serving: model metadata",
        description="TensorFlow Serving's GetModelMetadataResponse: the model's one signature (serving_default), "
                    "each input and output with its dtype and shape, batch first (-1). An image model's image input "
                    "is DT_STRING of shape [-1], one encoded image per instance, as TF Serving shows an image-bytes "
                    "input (it takes the decoded pixels as numbers too). Loads nothing.",
        parameters=_path_parameters(deployment),
        response=spec.obj({"model_spec": model_spec, "metadata": spec.obj({"signature_def": signatures})}),
        errors=(*TF_MODEL, "label_not_found"),
        tags=TAGS,
    )


def describe_predict(deployment: Deployment) -> Operation:
    # A value for a single-input model, or an object naming every input (values of any other type are refused).
    encoded = {"type": "object", "required": ["b64"], "properties": {"b64": {
        **spec.STRING, "description": "An image model's image input: one encoded image, in base64."}}}
    images = spec.array(encoded, description="Encoded images, batch first (columnar format).")
    value_or_named = {"type": ["number", "boolean", "array", "object"], "items": spec.JSON_TENSOR["items"],
                      "additionalProperties": {"anyOf": [spec.JSON_TENSOR, encoded, images]}}
    body = {"type": "object", "oneOf": [{"required": [tfserving.ROW]}, {"required": [tfserving.COLUMNAR]}],
            "properties": {
                "signature_name": {"type": ["string", "null"], "description": "The model's one signature, "
                                   "serving_default (or \"\"); null or left out, the same."},
                tfserving.ROW: spec.array({"anyOf": [encoded, value_or_named]}, minItems=1,
                                          maxItems=deployment.settings.max_tensor_batch,
                                          description="Row format: one entry per instance, "
                                                      f"{spec.batch_limit(deployment)}; an object naming every input "
                                                      "per instance, or the bare value for a single-input model."),
                tfserving.COLUMNAR: {"anyOf": [value_or_named, images], "description": "Columnar format: every "
                                     "input batched, batch first; an object naming every input, or the bare value "
                                     f"for a single-input model; {spec.batch_limit(deployment)}."},
            }}
    return spec.tensor_infer(
        body,
        summary="TF Serving: predict",
        description="TensorFlow Serving's REST predict over any served model, as raw tensors: send exactly one of "
                    "\"instances\" (row format) or \"inputs\" (columnar format); the answer mirrors it, "
                    "\"predictions\" (one entry per instance) or \"outputs\" (batched), an object of every output "
                    "when the model has several, the bare value when it has one. Values follow docs/api.md's tensor "
                    "value rules: numbers and booleans, and for an image model's image input encoded images, "
                    "{\"b64\": \"<base64 of a JPEG, PNG, WebP, GIF, BMP or TIFF>\"} per instance (Google's "
                    "{\"image_bytes\": {\"b64\": ...}} too), decoded, resized and normalized as /classify does, at "
                    "most MAX_BATCH per request. Errors are TF Serving's {\"error\": \"<message>\"}.",
        parameters=_path_parameters(deployment),
        response={"oneOf": [spec.obj({"predictions": spec.array(value_or_named, minItems=1)}),
                            spec.obj({"outputs": value_or_named})]},
        errors=(*spec.TENSOR_BODY, *TF_MODEL, "label_not_found", "unknown_signature", "missing_field",
                "invalid_field",
                "empty_batch", "batch_too_large", *spec.TENSOR_VALUES, "batch_mismatch", "invalid_base64",
                "unsupported_image", "image_too_large"),
        tags=TAGS,
    )


DESCRIPTIONS = {
    "tfserving:model_status": describe_model_status,
    "tfserving:model_metadata": describe_model_metadata,
    "tfserving:predict_route": describe_predict,
}
