"""POST /embed: one text or a batch -> sentence vectors (L2-normalised unless "normalize": false)."""
from __future__ import annotations

from function.errors import refuse
from function.inference import Prediction
from function.responses import Response, json_response
from function.routes.context import RouteContext
from function.routes.text import text_request
from function.tasks.text_embedding import output_vector

TASK = "text_embedding"


def embed(ctx: RouteContext) -> Response:
    body, texts = text_request(ctx)
    normalize = body.get("normalize", True)
    if not isinstance(normalize, bool):
        raise refuse("invalid_field", "'normalize' must be true or false.", param="normalize")
    task = ctx.task(body, TASK)
    prediction = ctx.predict(task, texts, {})
    return json_response(200, answer(prediction, normalize))


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
