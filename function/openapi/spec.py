"""Everything a route's description uses, in one import: the Operation it returns, the error code groups, and the
JSON Schema pieces the routes share (OpenAPI 3.1 uses JSON Schema 2020-12 as it is).

Only the descriptions (function/openapi/*_routes.py) import it, so only the first GET /openapi.json pays for it.
"""
from __future__ import annotations

from function.config import Env
from function.tasks import default_kind
# Re-exported: a description needs this one module.
from function.openapi.operation import Deployment, Operation, Parameter  # noqa: F401

# Error codes (function/errors.py ERROR_CODES) that travel together, because one shared step of several routes
# raises them all.
JSON_BODY = ("body_too_large", "invalid_json")  # function/routes/inputs.py: check_body_size, json_object
ONE_OR_MANY = ("missing_field", "invalid_field", "empty_batch", "batch_too_large")  # inputs.one_or_many
TEXTS = (*ONE_OR_MANY, "empty_text", "text_too_large")  # function/routes/text.py: texts_of
STRICT = ("unknown_field",)  # inputs.only_fields: a body field the route does not read
MODEL_CHOICE = ("invalid_field", "model_not_found", "wrong_model_task", "model_unavailable")  # RouteContext.task
TENSOR_MODEL = ("model_not_found", "version_not_found", "model_unavailable")  # the tensor routes' _task
TENSOR_BODY = ("body_too_large", "unsupported_content_encoding", "invalid_json")  # their body checks, in order
# function/protocols/tensor_values.py: to_array, check_shape, check_bounds and check_values, which both protocols
# run on every tensor
TENSOR_VALUES = ("invalid_tensor", "invalid_dtype", "value_out_of_range", "invalid_shape", "tensor_too_large",
                 "dimension_too_large", "index_out_of_range")

STRING = {"type": "string"}
BOOLEAN = {"type": "boolean"}
COUNT = {"type": "integer", "minimum": 0}
PROBABILITY = {"type": "number", "minimum": 0, "maximum": 1}
SHA256 = {"type": "string", "pattern": "^[0-9a-f]{64}$"}
CACHED = {"type": "boolean", "description": "Whether the answer came from the result cache instead of the model."}
MODEL_VERSION = {**SHA256, "description": "The serving version: the sha256 the model's files are known by."}
LABEL_SCORE = {"type": "object", "required": ["label", "score"], "additionalProperties": False,
               "properties": {"label": STRING, "score": PROBABILITY}}

TOP_K = {"oneOf": [{"type": "integer", "minimum": 1}, {"const": "all"}],
         "description": "How many labels to rank, best first, capped at the model's number of labels; \"all\": every "
                        "label (HF pipelines' top_k=None). A multi-label model answers at most this many of its labels "
                        "at or above the threshold."}
THRESHOLD = {"type": "number", "minimum": 0, "maximum": 1, "default": 0.5,
             "description": "Multi-label models only: answer every label scoring at least this (refused for a "
                            "model that answers with one label)."}
# Present only when a canary answered some inputs of a batch and the stable version the others.
INPUT_VERSION = {**SHA256, "description": "The serving version that answered this input, when the inputs of the "
                 "batch were answered by different versions (a canary's share is chosen per input)."}
MULTI_LABEL = {"type": "object", "required": ["labels", "cached"], "additionalProperties": False,
               "description": "A multi-label model's answer: every label at or above the threshold, best first.",
               "properties": {"labels": {"type": "array", "items": LABEL_SCORE}, "cached": CACHED,
                              "model_version": INPUT_VERSION}}


def obj(properties: dict, required: list[str] | None = None, **extra) -> dict:
    """An object of exactly these properties (all required unless `required` says which)."""
    return {"type": "object", "properties": properties,
            "required": list(properties) if required is None else required, "additionalProperties": False, **extra}


def array(items: dict, **extra) -> dict:
    return {"type": "array", "items": items, **extra}


RANKED = obj({"label": STRING, "score": PROBABILITY, "top_k": array(LABEL_SCORE, minItems=1), "cached": CACHED,
             "model_version": INPUT_VERSION}, ["label", "score", "top_k", "cached"],
            description="The most likely label and its probability, and the top_k labels ranked, best first.")


def one_or_many(single: str, plural: str, item: dict, max_items: int, what: str) -> tuple[dict, dict]:
    """(properties, constraint) of a body taking `single` or a non-empty `plural` list of at most max_items."""
    properties = {single: {**item, "description": f"One {what}."},
                  plural: array(item, minItems=1, maxItems=max_items,
                                description=f"A batch of {what}s, answered in order (at most {max_items}).")}
    return properties, {"oneOf": [{"required": [single]}, {"required": [plural]}]}


def model_field(deployment: Deployment, task: str, served: list[str] | None = None) -> dict:
    """The optional "model" field of a route of `task`: the served models it takes (by default, those of `task`)
    and the model it uses without one."""
    default, variable = deployment.settings.default_model(default_kind(task))
    served = deployment.served(task) if served is None else served
    schema = {"type": "string", "minLength": 1,
              "description": f"One of the models served here for this route ({', '.join(served) or 'none'}); "
                             f"without it, {default!r} (set by {variable})."}
    return {**schema, "enum": served} if served else schema


def texts_body(deployment: Deployment, model: dict, extra: dict | None = None, max_batch: int | None = None) -> dict:
    """{"text": ...} or {"texts": [...]} (at most `max_batch`, else MAX_TEXT_BATCH), plus "model": the body of every
    route that reads text."""
    settings = deployment.settings
    text = {"type": "string", "minLength": 1, "maxLength": settings.max_text_chars,
            "description": f"Not only whitespace; at most {settings.max_text_chars} characters (MAX_TEXT_CHARS)."}
    properties, constraint = one_or_many("text", "texts", text, max_batch or settings.max_text_batch, "text")
    return {"type": "object", "properties": {**properties, "model": model, **(extra or {})}, **constraint}


# The tensor routes (TensorFlow Serving's REST API, the Open Inference Protocol v2): every served model answers there.
JSON_TENSOR = {"type": ["number", "boolean", "array"], "items": {"type": ["number", "boolean", "array"]},
               "description": "A tensor as JSON: a number, true/false, or lists of them nested as its shape. NaN, "
                              "Infinity and -Infinity are read as such (JSON extensions, as TF Serving reads them)."}


def model_name_parameter(deployment: Deployment) -> Parameter:
    names = sorted(deployment.models)
    schema = {**STRING, "enum": names} if names else STRING
    return Parameter("name", schema, "A model served here, whatever its task: each answers as raw tensors (its "
                     "metadata names and shapes them).", location="path")


def tensor_infer(body: dict, **fields) -> Operation:
    """A tensor protocol's predict/infer operation: a JSON body of tensors, bounded by the body and tensor batch
    limits; `fields` gives the rest (summary, description, parameters, response, errors, tags, ...)."""
    return Operation(request={"application/json": body}, limits=(Env.MAX_BODY_BYTES, Env.MAX_TENSOR_BATCH), **fields)


def batch_limit(deployment: Deployment) -> str:
    return f"at most {deployment.settings.max_tensor_batch} instances (MAX_TENSOR_BATCH)"
