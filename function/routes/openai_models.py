"""GET /v1/models: OpenAI's model list, which OpenAI's clients (and LangChain, LiteLLM, Open WebUI) read to find the
models behind a base URL. GET /v1/models/{id} is TF Serving's model status (function/routes/tfserving.py), which
carries OpenAI's Model fields too (`model_fields`): one answer that both protocols' clients read."""
from __future__ import annotations

from function.model.manifest import Manifest
from function.responses import Response, json_response
from function.routes.context import RouteContext

OWNER = "lambda-tflite-serving"
CREATED_AT_FORMAT = "%Y-%m-%dT%H:%M:%SZ"  # what `convert` writes in a manifest's created_at


def created(manifest: Manifest) -> int:
    """When the model was converted, in Unix seconds as OpenAI's `created`; 0 when its manifest does not say."""
    import calendar  # noqa: PLC0415  (only this route's answers need it, and time.strptime's imports)
    import time  # noqa: PLC0415

    try:
        return calendar.timegm(time.strptime(manifest.created_at, CREATED_AT_FORMAT))
    except ValueError:
        return 0


def model_fields(manifest: Manifest) -> dict:
    """OpenAI's Model object for one served model."""
    return {"id": manifest.name, "object": "model", "created": created(manifest), "owned_by": OWNER}


def list_models(ctx: RouteContext) -> Response:
    """Every model served here (any task: a client filters by what it calls), by name."""
    return json_response(200, {"object": "list", "data": [model_fields(task.manifest) for _, task in
                                                          sorted(ctx.registry.tasks.items())]})
