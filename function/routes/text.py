"""POST /sentiment (text classification) and POST /tokenize: the text model and its tokenizer."""
from __future__ import annotations

from function.cache.keys import digest_text
from function.errors import bad_request, too_large
from function.events import Response, json_response
from function.models.manifest import Manifest
from function.models.outputs import probabilities
from function.routes import inputs
from function.routes.context import RouteContext
from function.routes.predictions import answer_with_cache

TASK = "text_classification"


def _is_unicode(text: str) -> bool:
    # JSON allows "\ud800", which Python decodes to a str that cannot be encoded, hashed or tokenized.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _texts(ctx: RouteContext) -> tuple[Manifest, list[str]]:
    settings = ctx.settings
    inputs.check_body_size(ctx.request, settings.max_body_bytes)
    with ctx.timings.stage("parse"):
        body = inputs.json_object(ctx.request)
        texts = inputs.one_or_many(body, "text", "texts", str, "string", settings.max_batch)
        where = inputs.field_names(body, "text", "texts")
        for text, name in zip(texts, where):
            if not text.strip():
                raise bad_request("empty_text", f"{name} is empty; send some text.")
            if not _is_unicode(text):
                raise bad_request("invalid_field", f"{name} contains invalid Unicode (a lone surrogate).")
            if len(text) > settings.max_text_chars:
                raise too_large("text_too_large", f"{name} has {len(text)} characters; the limit is "
                                f"{settings.max_text_chars}.")
        name = inputs.model_name(body, settings.default_text_model)
    return ctx.registry.manifest(name, TASK), texts


def sentiment(ctx: RouteContext) -> Response:
    manifest, texts = _texts(ctx)

    def compute(indexes: list[int]) -> list[dict]:
        with ctx.timings.stage("load"):  # ~0 when warm; the interpreter load on a cold start
            model = ctx.registry.load(manifest)
        with ctx.timings.stage("preprocess"):
            encoded = model.preprocessor.encode([texts[i] for i in indexes])
            batch = model.preprocessor.batch(encoded)
        with ctx.timings.stage("invoke"):
            raw = model.runner.run(batch)
        with ctx.timings.stage("postprocess"):
            results = []
            for row in probabilities(raw, manifest.output):
                best = int(row.argmax())
                results.append({"label": manifest.labels[best], "score": round(float(row[best]), 6)})
        return results

    return answer_with_cache(ctx, manifest, [digest_text(text) for text in texts], {}, compute)


def tokenize(ctx: RouteContext) -> Response:
    manifest, texts = _texts(ctx)
    encoder = ctx.registry.load(manifest).preprocessor
    with ctx.timings.stage("preprocess"):
        encoded = encoder.encode(texts)
    ctx.log_fields.update(model=manifest.name, batch=len(texts))
    return json_response(200, {
        "model": manifest.name,
        "max_length": encoder.max_length,
        "results": [{"ids": e.ids, "attention_mask": e.attention_mask, "tokens": e.tokens, "count": len(e.ids),
                     "truncated": e.truncated} for e in encoded],
    })
