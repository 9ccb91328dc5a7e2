"""POST /embed: one text or a batch -> sentence vectors (L2-normalised unless "normalize": false)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from function.config import MAX_BATCH_TOKENS, MAX_BODY_BYTES, MAX_TEXT_BATCH, MAX_TEXT_CHARS
from function.errors import refuse
from function.inference import cached_results
from function.openapi import described_by
from function.responses import Response, json_response
from function.routes.context import RouteContext
from function.routes.text import text_request
from function.tasks.text_embedding import output_vector

if TYPE_CHECKING:
    from function.openapi.operation import Deployment, Operation

TASK = "text_embedding"


def describe(deployment: Deployment) -> Operation:
    from function.openapi import spec  # noqa: PLC0415  (on the first GET /openapi.json only, never at init)

    normalize = {**spec.BOOLEAN, "default": True,
                 "description": "L2-normalise each vector, so that cosine similarity is a dot product."}
    embedding = spec.obj({"embedding": spec.array({"type": "number"}, minItems=1), "tokens": spec.COUNT,
                          "truncated": spec.BOOLEAN, "cached": spec.CACHED})
    return spec.Operation(
        summary="Sentence embeddings of one text or a batch",
        description="One vector per text, in input order, from a text_embedding model.",
        request={"application/json": spec.texts_body(deployment, spec.model_field(deployment, TASK),
                                                     {"normalize": normalize})},
        response=spec.obj({"model": spec.STRING, "model_version": spec.MODEL_VERSION, "dimensions": spec.COUNT,
                           "normalized": spec.BOOLEAN, "embeddings": spec.array(embedding, minItems=1)}),
        errors=(*spec.JSON_BODY, *spec.TEXTS, "too_many_tokens", *spec.MODEL_CHOICE),
        limits=(MAX_BODY_BYTES, MAX_TEXT_BATCH, MAX_TEXT_CHARS, MAX_BATCH_TOKENS),
        tags=("embeddings",),
    )


@described_by(describe)
def embed(ctx: RouteContext) -> Response:
    body, texts = text_request(ctx)
    normalize = body.get("normalize", True)
    if not isinstance(normalize, bool):
        raise refuse("invalid_field", "'normalize' must be true or false.", param="normalize")
    task = ctx.task(body, TASK)
    prediction = cached_results(task, ctx.store, texts, {}, ctx.timings, ctx.log_fields)
    embeddings = [{"embedding": output_vector(result, normalize).tolist(), "tokens": result["tokens"],
                   "truncated": result["truncated"], "cached": cached}
                  for result, cached in zip(prediction.results, prediction.cached)]
    return json_response(200, {"model": task.manifest.name, "model_version": task.manifest.version,
                               "dimensions": task.dimensions, "normalized": normalize, "embeddings": embeddings})
