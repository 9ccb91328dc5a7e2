"""GET /models and GET /health: what this container serves, and that it is alive. Neither loads a model."""
from __future__ import annotations

from function.events import Response, json_response
from function.routes.context import RouteContext


def list_models(ctx: RouteContext) -> Response:
    registry = ctx.registry
    models = [{**manifest.summary(), "loaded": registry.is_loaded(name)}
              for name, manifest in sorted(registry.manifests.items())]
    defaults = {"image": ctx.settings.default_image_model, "text": ctx.settings.default_text_model}
    return json_response(200, {"models": models, "defaults": defaults})


def health(ctx: RouteContext) -> Response:
    return json_response(200, {"status": "ok", "models": len(ctx.registry.manifests)})
