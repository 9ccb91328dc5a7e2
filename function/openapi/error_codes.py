"""Every error code the function answers with: the domain error that carries it (and so its status, from
function/http_errors.py) and when it happens. tests/unit/test_openapi_error_codes.py reads every `raise` in
function/ and checks this table against them, both ways.
"""
from __future__ import annotations

from dataclasses import dataclass

from function.errors import (InvalidInput, MethodNotAllowed, ModelNotFound, ModelUnavailable, PayloadTooLarge,
                             RouteNotFound, ServingError, UnsupportedEvent, UnsupportedMedia, WrongTask)


@dataclass(frozen=True)
class ErrorCode:
    kind: type[ServingError]
    when: str


ERROR_CODES: dict[str, ErrorCode] = {
    "invalid_json": ErrorCode(InvalidInput, "the body is not a JSON object (or is empty, not UTF-8, or nests too "
                              "deeply) where JSON is expected"),
    "missing_field": ErrorCode(InvalidInput, "a required field is missing, or both of a single/batch pair "
                               "(image/images, text/texts) are sent; an empty raw image body"),
    "invalid_field": ErrorCode(InvalidInput, "a field of the wrong type or value: a batch that is not a list, an "
                               "item that is not a string, top_k not a positive integer, model not a non-empty "
                               "string, normalize not a boolean, text with a lone surrogate"),
    "invalid_base64": ErrorCode(InvalidInput, "an image string that is not base64 or decodes to nothing"),
    "empty_batch": ErrorCode(InvalidInput, "images or texts is an empty list"),
    "empty_text": ErrorCode(InvalidInput, "a text that is empty or only whitespace"),
    "unsupported_input": ErrorCode(InvalidInput, "token ids instead of text in /v1/embeddings' input"),
    "unsupported_dimensions": ErrorCode(InvalidInput, "/v1/embeddings' dimensions differs from the model's own"),
    "wrong_model_task": ErrorCode(WrongTask, "the named model exists but does another task than the route's"),
    "unsupported_event": ErrorCode(UnsupportedEvent, "the Lambda event is not an API Gateway proxy event "
                                   "(payload 1.0 or 2.0); never seen over HTTP"),
    "model_not_found": ErrorCode(ModelNotFound, "no served model has that name (or the route's default model is "
                                 "not served here); the message lists the served ones"),
    "route_not_found": ErrorCode(RouteNotFound, "no route at this path"),
    "method_not_allowed": ErrorCode(MethodNotAllowed, "the path exists with another method; the Allow header "
                                    "names it"),
    "body_too_large": ErrorCode(PayloadTooLarge, "the (decoded) body is over MAX_BODY_BYTES"),
    "image_too_large": ErrorCode(PayloadTooLarge, "an image header declares more than MAX_IMAGE_PIXELS pixels "
                                 "(refused before decoding)"),
    "batch_too_large": ErrorCode(PayloadTooLarge, "more items than MAX_BATCH images or MAX_TEXT_BATCH texts"),
    "text_too_large": ErrorCode(PayloadTooLarge, "a text over MAX_TEXT_CHARS characters"),
    "too_many_tokens": ErrorCode(PayloadTooLarge, "the texts of one embedding request hold more than "
                                 "MAX_BATCH_TOKENS tokens in all"),
    "unsupported_media_type": ErrorCode(UnsupportedMedia, "a multipart form upload: send the raw image or base64 "
                                        "JSON"),
    "unsupported_image": ErrorCode(UnsupportedMedia, "bytes that are not a JPEG, PNG, WebP, GIF, BMP or TIFF image, "
                                   "or a truncated or corrupt one"),
    "model_unavailable": ErrorCode(ModelUnavailable, "the model's files could not be loaded (from S3: downloaded "
                                   "and verified against its manifest); retried on the next request"),
    "invalid_route": ErrorCode(InvalidInput, "an SQS message whose \"route\" is not /classify, /sentiment or "
                               "/embed (docs/events.md); never seen over HTTP"),
    "invalid_id": ErrorCode(InvalidInput, "an SQS message whose \"id\" cannot name its answer's S3 key "
                            "(docs/events.md); never seen over HTTP"),
    "internal_error": ErrorCode(ServingError, "a bug of ours; the traceback goes to the log, never to the client"),
}

# Codes that travel together, because one shared step of several routes raises them all.
JSON_BODY = ("body_too_large", "invalid_json")  # function/routes/inputs.py: check_body_size, json_object
ONE_OR_MANY = ("missing_field", "invalid_field", "empty_batch", "batch_too_large")  # inputs.one_or_many
TEXTS = (*ONE_OR_MANY, "empty_text", "text_too_large")  # function/routes/text.py: texts_of
MODEL_CHOICE = ("invalid_field", "model_not_found", "wrong_model_task", "model_unavailable")  # RouteContext.task
