"""Domain errors: what went wrong, in terms the client can act on, and nothing about HTTP.

Code below the routes (tasks, preprocessing, the registry, request parsing) raises these. Only the HTTP edge
(`function/http_errors.py`) knows which status each kind gets, and each protocol group (function/router.py) writes
the body in its own shape.

Every error code is declared once, in ERROR_CODES: the kind of error that carries it (hence its status) and when it
happens, which GET /openapi.json publishes. Code raises an error by its code alone, `raise refuse("invalid_field",
"...", param="model")`; tests/unit/test_openapi_error_codes.py reads every raise in function/ and checks this table
against them, both ways.

A message that shows a value the client sent (a method, a path, a model name, a header) shows it through `quoted`
alone: quoted, escaped to printable ASCII, at most MAX_QUOTED_CHARS characters.
"""
from __future__ import annotations

from function.records import named_tuple

MAX_QUOTED_CHARS = 80


def quoted(value: object, limit: int = MAX_QUOTED_CHARS) -> str:
    """A client's value as an error message may show it: a string quoted and escaped to printable ASCII (control
    characters, newlines and non-ASCII become escapes), cut to `limit` characters with "..." after the quote when
    longer; a number or a boolean as JSON would spell it; any other value by its JSON kind only."""
    if isinstance(value, str):
        return ascii(value[:limit]) + ("..." if len(value) > limit else "")
    if value is None or isinstance(value, (bool, int, float)):
        return ascii(value)[:limit]
    return {dict: "an object", list: "a list"}.get(type(value), f"a {type(value).__name__}")


class ServingError(Exception):
    """A stable machine-readable `code` plus a sentence. Subclasses say which kind of problem it is."""

    def __init__(self, code: str, message: str, param: str | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.param = param  # the request field at fault, when there is one (OpenAI's error shape reports it)


class InvalidInput(ServingError):
    """The request is malformed or asks for something that cannot be done."""


class PayloadTooLarge(ServingError):
    """The body, a batch, an image or a text is over a documented limit."""


class UnsupportedMedia(ServingError):
    """The bytes are not a kind of content the model takes (not an image, a multipart form...)."""


class ModelNotFound(ServingError):
    """No model of that name is served here."""


class WrongTask(ServingError):
    """The model exists but does another task than the route needs."""


class ModelUnavailable(ServingError):
    """The model is known but cannot answer now (its directory is broken, its file failed to load)."""


class RouteNotFound(ServingError):
    """No route at this path."""


class MethodNotAllowed(ServingError):
    def __init__(self, method: str, path: str, allowed: list[str]):
        # `path` is the route's template (ours); the method is the client's.
        super().__init__("method_not_allowed", f"Method {quoted(method)} is not allowed on {path}; use "
                         f"{', '.join(allowed)}.")
        self.allowed = allowed


class ObjectNotFound(ServingError):
    """A bulk run's item names an S3 object (or version) that does not exist."""


class UnsupportedEvent(ServingError):
    """The Lambda event is not one this function understands."""


@named_tuple
class ErrorCode:
    kind: type[ServingError]
    when: str


ERROR_CODES: dict[str, ErrorCode] = {
    "invalid_json": ErrorCode(InvalidInput, "the body is not a JSON object (or is empty, not UTF-8, or nests too "
                              "deeply) where JSON is expected"),
    "missing_field": ErrorCode(InvalidInput, "a required field is missing, or both of a single/batch pair "
                               "(image/images, text/texts, TF Serving's instances/inputs) are sent; an empty raw "
                               "image body; a v2 input without data"),
    "invalid_field": ErrorCode(InvalidInput, "a field of the wrong type or value: a batch that is not a list, an "
                               "item that is not a string, top_k not a positive integer or \"all\", threshold not a "
                               "number in "
                               "[0, 1] (or sent to a model that answers one label), model not a non-empty string, "
                               "normalize not a boolean, text with a lone surrogate; on the tensor routes "
                               "a request field of the wrong type or an input named twice or not as the model "
                               "names them"),
    "unknown_field": ErrorCode(InvalidInput, "a JSON body field the route does not read (a misspelt option, or "
                               "one of another route); the message lists the fields it reads"),
    "invalid_base64": ErrorCode(InvalidInput, "an image string that is not base64 or decodes to nothing"),
    "empty_batch": ErrorCode(InvalidInput, "images or texts is an empty list; a tensor request of no instances"),
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
    "image_too_large": ErrorCode(PayloadTooLarge, "an image header declares more than MAX_IMAGE_PIXELS pixels, or "
                                 "pixels whose decoding would take more than 200 MB (16-bit or float pixels near the "
                                 "pixel cap): refused before decoding"),
    "batch_too_large": ErrorCode(PayloadTooLarge, "more items than MAX_BATCH images, MAX_TEXT_BATCH texts, "
                                 "MAX_EMBEDDING_BATCH texts to embed or "
                                 "MAX_TENSOR_BATCH tensor instances"),
    "answer_too_large": ErrorCode(PayloadTooLarge, "an embedding answer over the 6 MB an AWS Lambda function can "
                                  "return (~800 vectors of 384 dimensions as JSON numbers): ask for base64 or send "
                                  "fewer texts"),
    "text_too_large": ErrorCode(PayloadTooLarge, "a text over MAX_TEXT_CHARS characters"),
    "too_many_tokens": ErrorCode(PayloadTooLarge, "the texts of one embedding request hold more than "
                                 "MAX_BATCH_TOKENS tokens in all"),
    "unsupported_media_type": ErrorCode(UnsupportedMedia, "a multipart form upload: send the raw image or base64 "
                                        "JSON"),
    "unsupported_image": ErrorCode(UnsupportedMedia, "bytes that are not a JPEG, PNG, WebP, GIF, BMP or TIFF image, "
                                   "or a truncated or corrupt one"),
    "model_unavailable": ErrorCode(ModelUnavailable, "the model's files could not be loaded (from S3: downloaded "
                                   "and verified against its manifest); retried on the next request"),
    "invalid_route": ErrorCode(InvalidInput, "an SQS message whose \"route\" is not /classify, /classify-text, "
                               "/sentiment or /embed (docs/events.md); never seen over HTTP"),
    "invalid_id": ErrorCode(InvalidInput, "an SQS message whose \"id\" cannot name its answer's S3 key "
                            "(docs/events.md); never seen over HTTP"),
    # Bulk runs (Step Functions Distributed Map, S3 Batch Operations: docs/events.md); never seen over HTTP.
    "object_not_found": ErrorCode(ObjectNotFound, "a bulk run's item names an S3 object, or a version of one, "
                                  "that does not exist"),
    "object_unreadable": ErrorCode(InvalidInput, "S3 refused to read a bulk run's object (AccessDenied: outside "
                                   "the bucket and prefix the function may read)"),
    "unreadable_text": ErrorCode(UnsupportedMedia, "a bulk run's object for a text task is not UTF-8 text"),
    "invalid_item": ErrorCode(InvalidInput, "a bulk run's item names no object (Key or s3Key) and carries no "
                              "text, a text for an image task, an id that cannot name a result key, or an "
                              "object under the function's own results prefix"),
    # The tensor routes: TensorFlow Serving's REST API and the Open Inference Protocol v2.
    "version_not_found": ErrorCode(ModelNotFound, "the model exists but not in that version: it serves its "
                                   "stable version and its labelled ones (GET /v1/models/{name} lists them)"),
    "label_not_found": ErrorCode(ModelNotFound, "the model has no version under that label (labels come from "
                                 "`python -m convert publish --label`)"),
    "unsupported_content_encoding": ErrorCode(UnsupportedMedia, "a compressed body (Content-Encoding other than "
                                              "identity) on a tensor route: send it uncompressed"),
    "malformed_request": ErrorCode(InvalidInput, "a /v1/ path or method TensorFlow Serving's REST API does not "
                                   "have (POST /v1/models, /v1/foo, GET on :predict, a version that "
                                   "is not decimal digits or overflows int64, :classify, :regress): 400, as TF "
                                   "Serving answers"),
    "unknown_signature": ErrorCode(InvalidInput, "TF Serving's signature_name is not the model's one signature"),
    "invalid_tensor": ErrorCode(InvalidInput, "a tensor's nested lists differ in length or mix lists with values"),
    "invalid_dtype": ErrorCode(InvalidInput, "a tensor value or v2 datatype of the wrong kind for the input: "
                               "strings, null, objects, b64, a fraction for an integer input, a number for a bool"),
    "value_out_of_range": ErrorCode(InvalidInput, "a value beyond the input dtype's range, or a category index "
                                    "beyond a structured model's CategoryEncoding"),
    "unknown_category": ErrorCode(InvalidInput, "a structured model's column value outside its vocabulary, where "
                                  "the lookup layer had no out-of-vocabulary index (num_oov_indices=0)"),
    "invalid_shape": ErrorCode(InvalidInput, "a tensor's rank or a fixed dimension differs from the input's, v2 "
                               "data does not hold as many values as its shape, inputs open in the same "
                               "dimension (ids and their mask) differ in size there, or shapes the model's graph "
                               "cannot run (a sequence shorter than a convolution's kernel)"),
    "dimension_too_large": ErrorCode(InvalidInput, "an open dimension (a sequence length) beyond the largest the "
                                     "model takes, its manifest's max_shape; the message names the input and bound"),
    "tensor_too_large": ErrorCode(InvalidInput, "a tensor (batch included) declared or sent with more than "
                                  "MAX_TENSOR_ELEMENTS (4,194,304) elements"),
    "index_out_of_range": ErrorCode(InvalidInput, "an id beyond the table the input indexes (its manifest's "
                                    "value_range, e.g. a token id outside the vocabulary)"),
    "batch_mismatch": ErrorCode(InvalidInput, "the inputs of one request hold different numbers of instances"),
    "unknown_input": ErrorCode(InvalidInput, "a v2 input the model does not have"),
    "missing_input": ErrorCode(InvalidInput, "a v2 request without one of the model's inputs"),
    "unknown_output": ErrorCode(InvalidInput, "a v2 requested output the model does not have"),
    "unsupported_parameter": ErrorCode(InvalidInput, "a v2 parameter asking for shared memory or the "
                                       "classification extension"),
    "invalid_header": ErrorCode(InvalidInput, "Inference-Header-Content-Length is not the length of the body's "
                                "JSON part (binary tensor data extension)"),
    "invalid_binary_data": ErrorCode(InvalidInput, "binary tensor data whose size differs from what the inputs' "
                                     "binary_data_size and shapes declare, or BOOL bytes other than 0 and 1"),
    "not_ready": ErrorCode(ModelUnavailable, "GET /v2/health/ready while a model directory cannot be served; GET "
                           "/models says why"),
    "internal_error": ErrorCode(ServingError, "a bug of ours; the traceback goes to the log, never to the client"),
}


def refuse(code: str, message: str, param: str | None = None) -> ServingError:
    """The error `code` names, of the kind ERROR_CODES declares for it: what every raise of a domain error builds."""
    return ERROR_CODES[code].kind(code, message, param)


def body_too_large(size: int, limit: int) -> ServingError:
    return refuse("body_too_large", f"The request body is {size} bytes; the limit is {limit} bytes.")


def wrong_task(name: str, does: str, wanted: str, answered_at: str = "") -> ServingError:
    """A model asked for by name that does another task than the route needs (`wanted`); `answered_at`: where the
    model's own answers are (its task's `answered_at`, with {name})."""
    elsewhere = f"; {answered_at.replace('{name}', name)}" if answered_at else ""
    return refuse("wrong_model_task", f"Model {quoted(name)} does {does}, not {wanted}{elsewhere}.", param="model")


def first_line(error: BaseException, limit: int = 200) -> str:
    """The informative head of a library's exception text, for an error message: its first line, cut short."""
    lines = str(error).strip().splitlines()
    return lines[0][:limit] if lines else "no details"
