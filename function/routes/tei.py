"""Hugging Face Text Embeddings Inference's HTTP API (its router's docs/openapi.json and router/src/http/server.rs),
so that its clients (`huggingface_hub.InferenceClient(".../embed").feature_extraction`, LangChain's and LlamaIndex's
TEI integrations) work unchanged: POST /embed and POST /tokenize with {"inputs": str | [str], ...}, told apart from
this API's own bodies on the same paths by "inputs" (function/routes/embed.py, `tokenize` here), and GET /info.

Answers and errors take TEI's shapes: a list of vectors, a list of token lists, `{"error", "error_type"}` with TEI's
statuses (422 for what fails validation, 400 for an empty batch). As in TEI, fields it does not know are ignored, and
the default embedding model answers; "model" may name another (this server's addition). Text longer than the
model's max_length tokens is refused unless "truncate": true, as TEI refuses it."""
from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from function.errors import ServingError, refuse
from function.http_errors import status_of
from function.responses import Response, json_response
from function.routes import inputs
from function.routes.answer_limit import sized_answer
from function.routes.context import RouteContext
from function.routes.text import checked_texts
from function.tasks.text import TextTask
from function.tasks.text_embedding import TextEmbedding, output_vector

TASK = "text_embedding"
DIRECTIONS = ("right", "Right")  # what TEI reads as its default direction; "left" cuts the start, which is not done
VERSION = "1"  # of this API (function/openapi/document.py), where TEI's /info gives its router's version
# TEI's ErrorType names, as its answers spell them (router/src/lib.rs).
VALIDATION, EMPTY, UNHEALTHY = "Validation", "Empty", "Unhealthy"


def tei_error(error: ServingError) -> Response:
    """A refusal in TEI's shape and status: an empty batch 400 "Empty", the model not servable now 503 "Unhealthy",
    any other client error 422 "Validation" (TEI's status for a request it cannot validate), and a model this
    server does not serve (only "model", this server's addition, can name one) 404."""
    status = status_of(error)
    if error.code == "empty_batch":
        status, kind = 400, EMPTY
    elif status == 503:
        kind = UNHEALTHY
    else:
        status, kind = (404 if status == 404 else 422), VALIDATION
    return json_response(status, {"error": error.message, "error_type": kind})


def answering_errors(route: Callable[..., Response]) -> Callable[..., Response]:
    """`route(ctx, ...)` answering its refusals in TEI's shape; the request's log line still names the code."""
    @functools.wraps(route)  # the route keeps its name: the OpenAPI document finds its description by it
    def route_in_tei_shape(ctx: RouteContext, *args) -> Response:
        try:
            return route(ctx, *args)
        except ServingError as error:
            ctx.log_fields["error_code"] = error.code
            return tei_error(error)
    return route_in_tei_shape


def _texts(ctx: RouteContext, body: dict) -> list[str]:
    value = body["inputs"]
    texts = [value] if isinstance(value, str) else value
    if not isinstance(texts, list):
        raise refuse("invalid_field", "`inputs` must be a string or a list of strings.", param="inputs")
    if not texts:
        raise refuse("empty_batch", "Input validation error: `inputs` cannot be empty", param="inputs")
    if not all(isinstance(text, str) for text in texts):
        raise refuse("unsupported_input", "`inputs` must hold strings: token ids are not accepted here (the model's "
                     "own tokenizer makes them).", param="inputs")
    if len(texts) > ctx.settings.max_embedding_batch:
        raise refuse("batch_too_large", f"batch size {len(texts)} > maximum allowed batch size "
                     f"{ctx.settings.max_embedding_batch}", param="inputs")
    return checked_texts(ctx, texts, lambda: ["`inputs`"] if isinstance(value, str) else
                         [f"`inputs[{i}]`" for i in range(len(texts))], param="inputs")


def _flag(body: dict, field: str, default: bool) -> bool:
    value = body.get(field)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise refuse("invalid_field", f"`{field}` must be true or false.", param=field)
    return value


def _check_prompt_and_direction(body: dict) -> None:
    if body.get("prompt_name") is not None:
        raise refuse("invalid_field", "`prompt_name` is set but this model has no prompts.", param="prompt_name")
    direction = body.get("truncation_direction")
    if direction is not None and direction not in DIRECTIONS:
        raise refuse("invalid_field", "`truncation_direction` must be right: this server truncates the end of a "
                     "text only.", param="truncation_direction")


def _dimensions(body: dict, task: TextEmbedding) -> int:
    value = body.get("dimensions")
    if value is None:
        return task.dimensions
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise refuse("invalid_field", "`dimensions` should be positive", param="dimensions")
    if value > task.dimensions:
        raise refuse("invalid_field", "`dimensions` should be smaller than the maximum embedding dimension.",
                     param="dimensions")
    return value


@answering_errors
def embed(ctx: RouteContext, body: dict) -> Response:
    """TEI's POST /embed: one vector per input, its first `dimensions` values, L2-normalised after the cut unless
    "normalize": false (TEI's order)."""
    with ctx.timings.stage("parse"):
        texts = _texts(ctx, body)
        normalize = _flag(body, "normalize", True)
        truncate = _flag(body, "truncate", False)
        _check_prompt_and_direction(body)
    task = ctx.task(body, TASK)
    dimensions = _dimensions(body, task)
    prediction = ctx.predict(task, texts, {})
    if not truncate and any(result["truncated"] for result in prediction.results):
        max_length = task.manifest.preprocessing["max_length"]
        raise refuse("text_too_large", f"Input validation error: `inputs` must have less than {max_length} tokens; "
                     "send \"truncate\": true to embed the first ones.", param="inputs")
    vectors = []
    for result in prediction.results:
        vector = output_vector(result, normalize=False)[:dimensions]
        if normalize:
            norm = float(np.sqrt(vector.dot(vector)))
            vector = vector / np.float32(norm) if norm > 0.0 else vector
        vectors.append(vector.tolist())
    return sized_answer(vectors, "send fewer texts")


def tokenize(ctx: RouteContext) -> Response:
    """POST /tokenize: TEI's body ("inputs") or this API's own (function/routes/text.py)."""
    inputs.check_body_size(ctx.request, ctx.settings.max_body_bytes)
    with ctx.timings.stage("parse"):
        body = inputs.json_object(ctx.request)
    if "inputs" not in body:
        from function.routes import text  # noqa: PLC0415

        return text.tokenize(ctx)
    return tei_tokenize(ctx, body)


@answering_errors
def tei_tokenize(ctx: RouteContext, body: dict) -> Response:
    """TEI's tokens: id, text (the input's own bytes for a token, the token for a special one), special, and the
    UTF-8 byte offsets of the text (null for a special token). "add_special_tokens": false leaves those out."""
    with ctx.timings.stage("parse"):
        texts = _texts(ctx, body)
        add_special = _flag(body, "add_special_tokens", True)
        if body.get("prompt_name") is not None:
            raise refuse("invalid_field", "`prompt_name` is set but this model has no prompts.", param="prompt_name")
    task = ctx.task(body, TASK, accepts=TextTask)
    with ctx.timings.stage("preprocess"):
        encoded = task.encoder().encode(texts)
    answer = []
    for text, item in zip(texts, encoded):
        encoding = item.encoding
        starts = _byte_starts(text)
        tokens = []
        for token_id, token, special, (start, stop) in zip(encoding.ids, encoding.tokens,
                                                           encoding.special_tokens_mask, encoding.offsets):
            if special:
                if add_special:
                    tokens.append({"id": token_id, "text": token, "special": True, "start": None, "stop": None})
                continue
            first, last = starts[start], starts[stop]
            tokens.append({"id": token_id, "text": text.encode("utf-8")[first:last].decode("utf-8", "replace"),
                           "special": False, "start": first, "stop": last})
        answer.append(tokens)
    ctx.log_fields.update(model=task.manifest.name, model_version=task.manifest.version, batch=len(texts))
    return json_response(200, answer)


def _byte_starts(text: str) -> list[int]:
    """The UTF-8 byte offset of each character of `text`, and of its end: TEI's offsets are bytes, Python's
    tokenizers gives characters."""
    if text.isascii():
        return list(range(len(text) + 1))
    starts = [0]
    for character in text:
        starts.append(starts[-1] + len(character.encode("utf-8", "surrogatepass")))
    return starts


@answering_errors
def info(ctx: RouteContext) -> Response:
    """TEI's GET /info for the default embedding model (DEFAULT_EMBEDDING_MODEL)."""
    task = ctx.task({}, TASK)
    manifest, settings = task.manifest, ctx.settings
    return json_response(200, {
        "model_id": manifest.name, "model_sha": manifest.version, "model_dtype": manifest.quantization,
        "model_type": {"embedding": {"pooling": str(manifest.preprocessing.get("pooling", "mean"))}},
        "served_model_name": manifest.name,
        "max_concurrent_requests": 1,  # a Lambda container answers one request at a time
        "max_input_length": manifest.preprocessing["max_length"],
        "max_batch_tokens": settings.max_batch_tokens, "max_batch_requests": None,
        "max_client_batch_size": settings.max_embedding_batch,
        "auto_truncate": False, "tokenization_workers": 1, "version": VERSION, "sha": None, "docker_label": None,
    })
