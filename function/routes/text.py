"""POST /classify-text (text classification, whatever the classifier's labels: /sentiment is the same route under the
name the demo model gave it) and POST /tokenize: a text model and its tokenizer."""
from __future__ import annotations

from collections.abc import Callable

from function.errors import refuse
from function.inference import Prediction
from function.responses import Response, json_response
from function.routes import inputs
from function.routes.context import RouteContext
from function.tasks.text import TextTask

TASK = "text_classification"
TEXT_FIELDS = frozenset({"text", "texts", "model"})
CLASSIFY_FIELDS = TEXT_FIELDS | {"top_k", "threshold"}


def is_unicode(text: str) -> bool:
    # JSON allows "\ud800", which Python decodes to a str that cannot be encoded, hashed or tokenized.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def texts_of(ctx: RouteContext, body: dict, max_batch: int | None = None) -> list[str]:
    """{"text": ...} or {"texts": [...]}: non-empty, valid Unicode, within the limits (`max_batch` texts, else
    MAX_TEXT_BATCH)."""
    max_batch = ctx.settings.max_text_batch if max_batch is None else max_batch
    texts = inputs.one_or_many(body, "text", "texts", str, "string", max_batch)
    return checked_texts(ctx, texts, lambda: inputs.field_names(body, "text", "texts"))


def checked_texts(ctx: RouteContext, texts: list[str], names: Callable[[], list[str]],
                  param: str | None = None) -> list[str]:
    """Every text non-empty, valid Unicode and within the length limit; `names()` says where each came from (made
    only for an error) and `param` is the request field that holds them (OpenAI's error shape reports it)."""
    max_chars = ctx.settings.max_text_chars
    for index, text in enumerate(texts):
        if not text or text.isspace() or len(text) > max_chars or not (text.isascii() or is_unicode(text)):
            check_text(text, names()[index], max_chars, param)  # it raises, for the first rule the text breaks
    return texts


def check_text(text: str, name: str, max_chars: int, param: str | None = None) -> None:
    """One text non-empty, valid Unicode and within `max_chars` (bulk runs check each of their texts alone)."""
    if not text or text.isspace():  # what strip() would empty, without copying the text
        raise refuse("empty_text", f"{name} is empty; send some text.", param=param)
    if not text.isascii() and not is_unicode(text):
        raise refuse("invalid_field", f"{name} contains invalid Unicode (a lone surrogate).", param=param)
    if len(text) > max_chars:
        raise refuse("text_too_large", f"{name} has {len(text)} characters; the limit is {max_chars}.",
                     param=param)


def text_request(ctx: RouteContext, fields: frozenset[str] | None = None,
                 max_batch: int | None = None) -> tuple[dict, list[str]]:
    """The JSON body and its texts; a field outside `fields`, when given, is refused (inputs.only_fields)."""
    inputs.check_body_size(ctx.request, ctx.settings.max_body_bytes)
    with ctx.timings.stage("parse"):
        body = inputs.json_object(ctx.request)
        if fields is not None:
            inputs.only_fields(body, fields)
        return body, texts_of(ctx, body, max_batch)


def classify_text(ctx: RouteContext) -> Response:
    """Each text's most likely label and its score; with top_k, the k best labels too ("all": every label)."""
    body, texts = text_request(ctx, CLASSIFY_FIELDS)
    options = {**inputs.top_k_option(body, None), **inputs.threshold_option(body)}
    task = ctx.task(body, TASK)
    prediction = ctx.predict(task, texts, options)
    return json_response(200, answer(prediction))


def sentiment(ctx: RouteContext) -> Response:
    """/sentiment: /classify-text under its first name, kept for the clients that call it."""
    return classify_text(ctx)


def answer(prediction: Prediction) -> dict:
    """The /classify-text answer, which a bulk run's result file holds too; the version that answered says so."""
    manifest = prediction.task.manifest
    return {"model": manifest.name, "model_version": manifest.version, "predictions": prediction.with_cached_flags()}


def tokenize(ctx: RouteContext) -> Response:
    """The token ids a text model would see: the tokenizer alone, no interpreter."""
    body, texts = text_request(ctx, TEXT_FIELDS)
    task = ctx.task(body, TASK, accepts=TextTask)
    encoder = task.encoder()
    with ctx.timings.stage("preprocess"):
        encoded = encoder.encode(texts)
    ctx.log_fields.update(model=task.manifest.name, model_version=task.manifest.version, batch=len(texts),
                          tokens=sum(len(e.ids) for e in encoded))
    return json_response(200, {
        "model": task.manifest.name,
        "max_length": encoder.max_length,
        "results": [{"ids": e.ids, "attention_mask": e.attention_mask, "tokens": e.tokens, "count": len(e.ids),
                     "truncated": e.truncated} for e in encoded],
    })
