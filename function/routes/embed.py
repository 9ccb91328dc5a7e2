"""POST /embed: one text or a batch -> sentence vectors (L2-normalised unless "normalize": false). A body with
"inputs" is Hugging Face Text Embeddings Inference's request on the same path (function/routes/tei.py)."""
from __future__ import annotations

from function.errors import refuse
from function.inference import Prediction
from function.responses import Response
from function.routes import inputs
from function.routes.answer_limit import sized_answer
from function.routes.context import RouteContext
from function.routes.text import texts_of
from function.tasks.text_embedding import output_vector

TASK = "text_embedding"
FIELDS = frozenset({"text", "texts", "model", "normalize"})


def embed(ctx: RouteContext) -> Response:
    inputs.check_body_size(ctx.request, ctx.settings.max_body_bytes)
    with ctx.timings.stage("parse"):
        body = inputs.json_object(ctx.request)
    if "inputs" in body:
        from function.routes import tei  # noqa: PLC0415  (only TEI's clients pay for its module)

        return tei.embed(ctx, body)
    with ctx.timings.stage("parse"):
        inputs.only_fields(body, FIELDS)
        texts = texts_of(ctx, body, ctx.settings.max_embedding_batch)
    normalize = body.get("normalize", True)
    if not isinstance(normalize, bool):
        raise refuse("invalid_field", "'normalize' must be true or false.", param="normalize")
    task = ctx.task(body, TASK)
    prediction = ctx.predict(task, texts, {})
    return sized_answer(answer(prediction, normalize), "send fewer texts")


def answer(prediction: Prediction, normalize: bool) -> dict:
    """The /embed answer, which a bulk run's result file holds too; the version that answered says so."""
    embeddings = [{"embedding": output_vector(result, normalize).tolist(), "tokens": result["tokens"],
                   "truncated": result["truncated"], "cached": cached}
                  for result, cached in zip(prediction.results, prediction.cached)]
    if prediction.tasks is not None:  # a canary answered some of the texts: each says which version did
        for embedding, answered_by in zip(embeddings, prediction.tasks):
            embedding["model_version"] = answered_by.manifest.version
    task = prediction.task
    return {"model": task.manifest.name, "model_version": task.manifest.version,
            "dimensions": task.dimensions, "normalized": normalize, "embeddings": embeddings}

