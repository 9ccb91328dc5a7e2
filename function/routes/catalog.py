"""GET /models and GET /health: what this container serves, and that it is alive. Neither loads a model."""
from __future__ import annotations

from function.responses import Response, json_response
from function.routes.context import RouteContext
from function.tasks import DEFAULT_KINDS


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
    for kind in DEFAULT_KINDS:
        name, _ = ctx.settings.default_model(kind)
        if name in registry.tasks:  # only defaults that exist: naming an absent one would mislead
            defaults[kind] = name
    return json_response(200, {"models": models, "defaults": defaults})


def health(ctx: RouteContext) -> Response:
    return json_response(200, {"status": "ok", "models": len(ctx.registry.tasks),
                               "unavailable": len(ctx.registry.unservable)})
