"""POST /sentiment (text classification) and POST /tokenize: a text model and its tokenizer."""
from __future__ import annotations

from typing import TYPE_CHECKING

from function.config import MAX_BODY_BYTES, MAX_TEXT_BATCH, MAX_TEXT_CHARS
from function.errors import refuse
from function.inference import cached_results
from function.openapi import described_by
from function.responses import Response, json_response
from function.routes import inputs
from function.routes.context import RouteContext
from function.tasks import TASKS
from function.tasks.text import TextTask

if TYPE_CHECKING:
    from function.openapi.operation import Deployment, Operation

TASK = "text_classification"


def _is_unicode(text: str) -> bool:
    # JSON allows "\ud800", which Python decodes to a str that cannot be encoded, hashed or tokenized.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def texts_of(ctx: RouteContext, body: dict) -> list[str]:
    """{"text": ...} or {"texts": [...]}: non-empty, valid Unicode, within the limits."""
    texts = inputs.one_or_many(body, "text", "texts", str, "string", ctx.settings.max_text_batch)
    return checked_texts(ctx, texts, inputs.field_names(body, "text", "texts"))


def checked_texts(ctx: RouteContext, texts: list[str], names: list[str], param: str | None = None) -> list[str]:
    """Every text non-empty, valid Unicode and within the length limit; `names` say where each came from and
    `param` is the request field that holds them (OpenAI's error shape reports it)."""
    for text, name in zip(texts, names):
        if not text.strip():
            raise refuse("empty_text", f"{name} is empty; send some text.", param=param)
        if not _is_unicode(text):
            raise refuse("invalid_field", f"{name} contains invalid Unicode (a lone surrogate).", param=param)
        if len(text) > ctx.settings.max_text_chars:
            raise refuse("text_too_large", f"{name} has {len(text)} characters; the limit is "
                         f"{ctx.settings.max_text_chars}.", param=param)
    return texts


def text_request(ctx: RouteContext) -> tuple[dict, list[str]]:
    inputs.check_body_size(ctx.request, ctx.settings.max_body_bytes)
    with ctx.timings.stage("parse"):
        body = inputs.json_object(ctx.request)
        return body, texts_of(ctx, body)


def describe_sentiment(deployment: Deployment) -> Operation:
    from function.openapi import spec  # noqa: PLC0415  (on the first GET /openapi.json only, never at init)

    prediction = spec.obj({"label": spec.STRING, "score": {**spec.PROBABILITY, "description": "The probability of "
                                                           "label."}, "cached": spec.CACHED})
    return spec.Operation(
        summary="Classify the sentiment of one text or a batch",
        description="The most likely label of each text (the sentiment demo model: positive or negative) and its "
                    "probability, in input order.",
        request={"application/json": spec.texts_body(deployment, spec.model_field(deployment, TASK))},
        response=spec.obj({"model": spec.STRING, "model_version": spec.MODEL_VERSION,
                           "predictions": spec.array(prediction, minItems=1)}),
        errors=(*spec.JSON_BODY, *spec.TEXTS, *spec.MODEL_CHOICE),
        limits=(MAX_BODY_BYTES, MAX_TEXT_BATCH, MAX_TEXT_CHARS),
        tags=("text",),
    )


@described_by(describe_sentiment)
def sentiment(ctx: RouteContext) -> Response:
    body, texts = text_request(ctx)
    task = ctx.task(body, TASK)
    prediction = cached_results(task, ctx.store, texts, {}, ctx.timings, ctx.log_fields)
    return json_response(200, {"model": task.manifest.name, "model_version": task.manifest.version,
                               "predictions": prediction.with_cached_flags()})


def describe_tokenize(deployment: Deployment) -> Operation:
    from function.openapi import spec  # noqa: PLC0415  (on the first GET /openapi.json only, never at init)

    ids = spec.array({"type": "integer"})
    truncated = {**spec.BOOLEAN, "description": "The text had more than max_length tokens and was cut."}
    result = spec.obj({"ids": ids, "attention_mask": ids, "tokens": spec.array(spec.STRING), "count": spec.COUNT,
                       "truncated": truncated})
    text_models = sorted(name for name, task in deployment.models.items() if issubclass(TASKS[task], TextTask))
    return spec.Operation(
        summary="The token ids a text model sees",
        description="The model's own tokenizer alone (no inference): ids, attention mask and tokens of each text "
                    "before padding, their count, and whether the text was cut at the model's max_length.",
        request={"application/json": spec.texts_body(deployment, spec.model_field(deployment, TASK, text_models))},
        response=spec.obj({"model": spec.STRING, "max_length": spec.COUNT,
                           "results": spec.array(result, minItems=1)}),
        errors=(*spec.JSON_BODY, *spec.TEXTS, *spec.MODEL_CHOICE),
        limits=(MAX_BODY_BYTES, MAX_TEXT_BATCH, MAX_TEXT_CHARS),
        tags=("text",),
    )


@described_by(describe_tokenize)
def tokenize(ctx: RouteContext) -> Response:
    """The token ids a text model would see: the tokenizer alone, no interpreter."""
    body, texts = text_request(ctx)
    task = ctx.task(body, TASK, accepts=TextTask)
    encoder = task.encoder()
    with ctx.timings.stage("preprocess"):
        encoded = encoder.encode(texts)
    ctx.log_fields.update(model=task.manifest.name, batch=len(texts))
    return json_response(200, {
        "model": task.manifest.name,
        "max_length": encoder.max_length,
        "results": [{"ids": e.ids, "attention_mask": e.attention_mask, "tokens": e.tokens, "count": len(e.ids),
                     "truncated": e.truncated} for e in encoded],
    })
