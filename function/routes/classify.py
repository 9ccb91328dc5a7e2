"""POST /classify: one image or a batch -> ranked labels, from a JSON body or a raw image body."""
from __future__ import annotations

from function.errors import refuse
from function.inference import Prediction
from function.responses import Response, json_response
from function.routes import inputs
from function.routes.context import RouteContext
from function.tasks.image_classification import DEFAULT_TOP_K, ImageInput

TASK = "image_classification"
JSON_FIELDS = frozenset({"image", "images", "model", "top_k", "threshold"})


def classify(ctx: RouteContext) -> Response:
    settings, request = ctx.settings, ctx.request
    inputs.check_body_size(request, settings.max_body_bytes)
    with ctx.timings.stage("parse"):
        if inputs.is_json(request):
            body = inputs.json_object(request)
            inputs.only_fields(body, JSON_FIELDS)
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
        options = {**inputs.top_k_option(body, DEFAULT_TOP_K), **inputs.threshold_option(body)}
    task = ctx.task(body, TASK)
    prediction = ctx.predict(task, images, options)
    return json_response(200, answer(prediction))


def answer(prediction: Prediction) -> dict:
    """The /classify answer, which an S3 upload's result file holds too; the version that answered says so."""
    manifest = prediction.task.manifest
    return {"model": manifest.name, "model_version": manifest.version,
            "predictions": prediction.with_cached_flags()}
