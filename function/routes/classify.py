"""POST /classify: one image or a batch -> ranked labels, from a JSON body or a raw image body."""
from __future__ import annotations

from typing import TYPE_CHECKING

from function.config import MAX_BATCH, MAX_BODY_BYTES, MAX_IMAGE_PIXELS
from function.errors import refuse
from function.inference import Prediction, cached_results
from function.openapi import described_by
from function.responses import Response, json_response
from function.routes import inputs
from function.routes.context import RouteContext
from function.tasks.base import Task
from function.tasks.image_classification import DEFAULT_TOP_K, ImageInput

if TYPE_CHECKING:
    from function.openapi.operation import Deployment, Operation

TASK = "image_classification"


def describe(deployment: Deployment) -> Operation:
    from function.openapi import spec  # noqa: PLC0415  (on the first GET /openapi.json only, never at init)

    top_k = {"type": "integer", "minimum": 1, "default": DEFAULT_TOP_K,
             "description": "How many labels to rank; capped at the model's number of labels."}
    image = {"type": "string", "minLength": 1, "contentEncoding": "base64",
             "description": "An image (JPEG, PNG, WebP, GIF, BMP or TIFF) in standard or URL-safe base64, padding "
                            "and line breaks optional, with or without a data: URL prefix."}
    properties, constraint = spec.one_or_many("image", "images", image, deployment.settings.max_batch, "image")
    model = spec.model_field(deployment, TASK)
    body = {"type": "object", **constraint, "properties": {**properties, "model": model, "top_k": top_k}}
    prediction = spec.obj({"label": spec.STRING, "score": spec.PROBABILITY,
                           "top_k": spec.array(spec.LABEL_SCORE, minItems=1), "cached": spec.CACHED})
    return spec.Operation(
        summary="Classify one image or a batch of images",
        description="Ranked labels for each image, in input order. Send base64 JSON, or the raw image as the body "
                    "(any body that is not a JSON object is read as an image) with its options in the query string.",
        request={"application/json": body, "image/*": {"type": "string", "format": "binary"}},
        parameters=(spec.Parameter("model", model, "The model, for a raw image body."),
                    spec.Parameter("top_k", top_k, "How many labels, for a raw image body.")),
        response=spec.obj({"model": spec.STRING, "model_version": spec.MODEL_VERSION,
                           "predictions": spec.array(prediction, minItems=1)}),
        errors=(*spec.JSON_BODY, *spec.ONE_OR_MANY, "invalid_base64", "unsupported_media_type", "image_too_large",
                "unsupported_image", *spec.MODEL_CHOICE),
        limits=(MAX_BODY_BYTES, MAX_BATCH, MAX_IMAGE_PIXELS),
        tags=("images",),
    )


@described_by(describe)
def classify(ctx: RouteContext) -> Response:
    settings, request = ctx.settings, ctx.request
    inputs.check_body_size(request, settings.max_body_bytes)
    with ctx.timings.stage("parse"):
        if inputs.is_json(request):
            body = inputs.json_object(request)
            texts = inputs.one_or_many(body, "image", "images", str, "base64 string", settings.max_batch)
            where = inputs.field_names(body, "image", "images")
            images = [ImageInput(inputs.decode_base64(text, name), name) for text, name in zip(texts, where)]
        elif request.content_type.startswith("multipart/"):
            raise refuse("unsupported_media_type", "Multipart form uploads are not accepted; send the "
                         "image as the raw body (curl --data-binary @file) or as base64 JSON.")
        else:
            if not request.body:
                raise refuse("missing_field", "The request body is empty; send an image or JSON.")
            body, images = inputs.query_options(request.query), [ImageInput(request.body, "the request body")]
        top_k = inputs.positive_int(body, "top_k", DEFAULT_TOP_K)
    task = ctx.task(body, TASK)
    prediction = cached_results(task, ctx.store, images, {"top_k": top_k}, ctx.timings, ctx.log_fields)
    return json_response(200, answer(task, prediction))


def answer(task: Task, prediction: Prediction) -> dict:
    """The /classify answer, which an S3 upload's result file holds too."""
    return {"model": task.manifest.name, "model_version": task.manifest.version,
            "predictions": prediction.with_cached_flags()}
