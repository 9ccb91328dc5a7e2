"""The descriptions of this API's own routes (function/router.py API): /classify, /classify-text (and /sentiment),
/tokenize, /embed, /models, /health, /openapi.json and the page. /tokenize's and /embed's take TEI's bodies too: their
entries are in function/openapi/tei_routes.py, which builds on describe_tokenize and describe_embed here."""
from __future__ import annotations

from function.catalog.registry import DUPLICATE_NAME, UNSERVABLE
from function.config import Env
from function.openapi import spec
from function.openapi.operation import Deployment, Operation
from function.routes import classify, embed, text
from function.tasks import DEFAULT_KINDS
from function.tasks import TASKS
from function.tasks.image_classification import DEFAULT_TOP_K
from function.tasks.text import TextTask


def describe_classify(deployment: Deployment) -> Operation:
    top_k = {**spec.TOP_K, "default": DEFAULT_TOP_K}
    image = {"type": "string", "minLength": 1, "contentEncoding": "base64",
             "description": "An image (JPEG, PNG, WebP, GIF, BMP or TIFF) in standard or URL-safe base64, padding "
                            "and line breaks optional, with or without a data: URL prefix."}
    properties, constraint = spec.one_or_many("image", "images", image, deployment.settings.max_batch, "image")
    model = spec.model_field(deployment, classify.TASK)
    body = {"type": "object", **constraint, "additionalProperties": False,
            "properties": {**properties, "model": model, "top_k": top_k, "threshold": spec.THRESHOLD}}
    prediction = {"oneOf": [with_values(spec.RANKED), with_values(spec.MULTI_LABEL)]}
    return spec.Operation(
        summary="Classify one image or a batch of images",
        description="Ranked labels for each image, in input order. Send base64 JSON, or the raw image as the body "
                    "(any body that is not a JSON object is read as an image) with its options in the query string. "
                    "A model with outputs beside its class scores (a value head) answers them in \"outputs\", by "
                    "name.",
        request={"application/json": body, "image/*": {"type": "string", "format": "binary"}},
        parameters=(spec.Parameter("model", model, "The model, for a raw image body."),
                    spec.Parameter("top_k", top_k, "How many labels, for a raw image body."),
                    spec.Parameter("threshold", spec.THRESHOLD, "Multi-label threshold, for a raw image body.")),
        response=spec.obj({"model": spec.STRING, "model_version": spec.MODEL_VERSION,
                           "predictions": spec.array(prediction, minItems=1)}),
        errors=(*spec.JSON_BODY, *spec.STRICT, *spec.ONE_OR_MANY, "invalid_base64", "unsupported_media_type",
                "image_too_large", "unsupported_image", *spec.MODEL_CHOICE),
        limits=(Env.MAX_BODY_BYTES, Env.MAX_BATCH, Env.MAX_IMAGE_PIXELS),
        tags=("images",),
    )


# The outputs an image classifier answers beside its labels (function/tasks/values.py).
VALUES = {"type": "object", "additionalProperties": spec.array({"type": "number"}),
          "description": "A model with outputs besides its class scores (a value head): each of them by its name, "
                         "one instance's values flattened, as the model gives them."}


def with_values(prediction: dict) -> dict:
    """A classifier's prediction schema that may carry the values of the model's other outputs."""
    return {**prediction, "properties": {**prediction["properties"], "outputs": VALUES}}


def _texts_operation(deployment: Deployment, model: dict, response: dict, options: dict | None = None,
                     **fields) -> Operation:
    """A route that takes texts (one or a batch) for a text model and no other field, bounded by the text limits;
    `options`: its request fields besides the texts and the model."""
    body = {**spec.texts_body(deployment, model, options), "additionalProperties": False}
    return spec.Operation(request={"application/json": body},
                          response=response,
                          errors=(*spec.JSON_BODY, *spec.STRICT, *spec.TEXTS, *spec.MODEL_CHOICE),
                          limits=(Env.MAX_BODY_BYTES, Env.MAX_TEXT_BATCH, Env.MAX_TEXT_CHARS), tags=("text",), **fields)


def describe_classify_text(deployment: Deployment, alias: str | None = None) -> Operation:
    best = spec.obj({"label": spec.STRING, "score": {**spec.PROBABILITY, "description": "The probability of label."},
                     "cached": spec.CACHED, "model_version": spec.INPUT_VERSION}, ["label", "score", "cached"])
    prediction = {"oneOf": [best, spec.RANKED, spec.MULTI_LABEL]}
    named = f"/classify-text under its first name, {alias}, kept for the clients that call it. " if alias else ""
    return _texts_operation(
        deployment, spec.model_field(deployment, text.TASK),
        spec.obj({"model": spec.STRING, "model_version": spec.MODEL_VERSION,
                  "predictions": spec.array(prediction, minItems=1)}),
        {"top_k": spec.TOP_K, "threshold": spec.THRESHOLD},
        summary="Classify one text or a batch" + (f" ({alias}: an alias of /classify-text)" if alias else ""),
        description=named + "The most likely label of each text and its probability, in input order, whatever the "
                    "classifier's labels (the sentiment demo model's are negative and positive); with top_k, the k "
                    "best labels ranked too (\"all\": every label with its probability). A multi-label model "
                    "answers every label at or above threshold (at most top_k of them).",
    )


def describe_sentiment(deployment: Deployment) -> Operation:
    return describe_classify_text(deployment, alias="/sentiment")


def describe_tokenize(deployment: Deployment) -> Operation:
    ids = spec.array({"type": "integer"})
    truncated = {**spec.BOOLEAN, "description": "The text had more than max_length tokens and was cut."}
    result = spec.obj({"ids": ids, "attention_mask": ids, "tokens": spec.array(spec.STRING), "count": spec.COUNT,
                       "truncated": truncated})
    text_models = sorted(name for name, task in deployment.models.items() if issubclass(TASKS[task], TextTask))
    return _texts_operation(
        deployment, spec.model_field(deployment, text.TASK, text_models),
        spec.obj({"model": spec.STRING, "max_length": spec.COUNT, "results": spec.array(result, minItems=1)}),
        summary="The token ids a text model sees",
        description="The model's own tokenizer alone (no inference): ids, attention mask and tokens of each text "
                    "before padding, their count, and whether the text was cut at the model's max_length.",
    )


def describe_embed(deployment: Deployment) -> Operation:
    normalize = {**spec.BOOLEAN, "default": True,
                 "description": "L2-normalise each vector, so that cosine similarity is a dot product."}
    embedding = spec.obj({"embedding": spec.array({"type": "number"}, minItems=1), "tokens": spec.COUNT,
                          "truncated": spec.BOOLEAN, "cached": spec.CACHED, "model_version": spec.INPUT_VERSION},
                         ["embedding", "tokens", "truncated", "cached"])
    return spec.Operation(
        summary="Sentence embeddings of one text or a batch",
        description="One vector per text, in input order, from a text_embedding model.",
        request={"application/json": {**spec.texts_body(deployment, spec.model_field(deployment, embed.TASK),
                                                        {"normalize": normalize},
                                                        deployment.settings.max_embedding_batch),
                                      "additionalProperties": False}},
        response=spec.obj({"model": spec.STRING, "model_version": spec.MODEL_VERSION, "dimensions": spec.COUNT,
                           "normalized": spec.BOOLEAN, "embeddings": spec.array(embedding, minItems=1)}),
        errors=(*spec.JSON_BODY, "unknown_field", *spec.TEXTS, "too_many_tokens", "answer_too_large",
                *spec.MODEL_CHOICE),
        limits=(Env.MAX_BODY_BYTES, Env.MAX_EMBEDDING_BATCH, Env.MAX_TEXT_CHARS, Env.MAX_BATCH_TOKENS),
        tags=("embeddings",),
    )


def describe_list_models(deployment: Deployment) -> Operation:
    bounds = {  # an input's bounds from `convert` (docs/model-format.md), when the model has them
        "max_shape": spec.array({"type": "integer"}, description="The largest size of each dimension; -1: the "
                                "batch (MAX_TENSOR_BATCH)."),
        "value_range": spec.array({"type": "integer"}, minItems=2, maxItems=2, description="The lowest and "
                                  "highest id: the rows of the table the input indexes."),
    }
    tensor = spec.obj({"name": spec.STRING, "shape": spec.array({"type": "integer"}), "dtype": spec.STRING,
                       **bounds}, required=["name", "shape", "dtype"])
    loaded = {**spec.BOOLEAN, "description": "Whether this container has loaded the model yet (first use)."}
    served = spec.obj({"name": spec.STRING, "task": spec.STRING, "version": spec.MODEL_VERSION,
                       "quantization": spec.STRING, "inputs": spec.array(tensor), "outputs": spec.array(tensor),
                       "labels": spec.COUNT, "available": {"const": True}, "loaded": loaded})
    code = {"enum": [DUPLICATE_NAME, UNSERVABLE], "description": f"{DUPLICATE_NAME}: two or more model directories "
            f"claim this name, and none is served; {UNSERVABLE}: anything else, which the reason names."}
    unservable = spec.obj({"name": spec.STRING, "available": {"const": False}, "code": code,
                           "reason": {**spec.STRING, "description": "Why the model directory cannot be served."}})
    defaults = spec.obj({kind: spec.STRING for kind in DEFAULT_KINDS}, required=[],
                        description="The model each kind of route uses when a request names none, if served.")
    return spec.Operation(
        summary="Every model this deployment serves",
        description="Each model directory under MODEL_DIR: its task, version, quantization and tensors, or why it "
                    "cannot be served. Loads nothing.",
        response=spec.obj({"models": spec.array({"oneOf": [served, unservable]}), "defaults": defaults}),
        tags=("service",),
    )


def describe_health(deployment: Deployment) -> Operation:
    return spec.Operation(
        summary="Liveness",
        description="Cheap: loads nothing. How many models are served and how many cannot be.",
        response=spec.obj({"status": {"const": "ok"}, "models": spec.COUNT, "unavailable": spec.COUNT}),
        tags=("service",),
    )


def describe_openapi_document(deployment: Deployment) -> Operation:
    return spec.Operation(
        summary="This document",
        description="The OpenAPI 3.1 document of every route, schema, error code and limit in force here.",
        response={"type": "object", "required": ["openapi", "info", "paths"]},
        tags=("service",),
    )


def describe_page(deployment: Deployment) -> Operation | None:
    if not deployment.settings.serve_page:
        return None
    return spec.Operation(
        summary="A page to try every model",
        description=f"HTML: classify a photo, classify a text, the similarity of two sentences ({Env.SERVE_PAGE}"
                    "=true; on with `python -m function.devserver`).",
        response={"type": "string"},
        response_type="text/html",
        tags=("service",),
    )


DESCRIPTIONS = {
    "classify:classify": describe_classify,
    "text:classify_text": describe_classify_text,
    "text:sentiment": describe_sentiment,
    "catalog:list_models": describe_list_models,
    "catalog:health": describe_health,
    "openapi_document:openapi_document": describe_openapi_document,
    "page:page": describe_page,
}
