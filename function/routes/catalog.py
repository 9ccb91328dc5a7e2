"""GET /models and GET /health: what this container serves, and that it is alive. Neither loads a model."""
from __future__ import annotations

from function.responses import Response, json_response
from function.routes.context import RouteContext

# The kinds of route that have a default model, and the task of each: GET /models names the defaults served.
DEFAULT_KINDS = {"image": "image_classification", "text": "text_classification", "embedding": "text_embedding"}


def list_models(ctx: RouteContext) -> Response:
    registry = ctx.registry
    # `refresh`: the newer version the source lists and why it is not served yet (the current one still is).
    models = [{**task.manifest.summary(), "available": True, "loaded": task.loaded,
               **({"refresh": registry.pending[name]} if name in registry.pending else {})}
              for name, task in sorted(registry.tasks.items())]
    for model in models:  # a model published with labels (a canary): each label's version and weight
        if model["name"] in registry.rollouts:
            model["version_labels"] = registry.rollouts[model["name"]].summary()
    models += [entry.summary() for _, entry in sorted(registry.unservable.items())]
    defaults = {}
    for kind, task in DEFAULT_KINDS.items():
        name, _ = ctx.settings.default_model(task)
        if name in registry.tasks:  # only defaults that exist: naming an absent one would mislead
            defaults[kind] = name
    return json_response(200, {"models": models, "defaults": defaults})


def health(ctx: RouteContext) -> Response:
    return json_response(200, {"status": "ok", "models": len(ctx.registry.tasks),
                               "unavailable": len(ctx.registry.unservable)})
