"""GET /models and GET /health: what this container serves, and that it is alive. Neither loads a model."""
from __future__ import annotations

from typing import TYPE_CHECKING

from function.openapi import described_by
from function.responses import Response, json_response
from function.routes.context import RouteContext

if TYPE_CHECKING:
    from function.openapi.operation import Deployment, Operation

# The kinds of route that have a default model, and the task of each: GET /models names the defaults served.
DEFAULT_KINDS = {"image": "image_classification", "text": "text_classification", "embedding": "text_embedding"}


def describe_list_models(deployment: Deployment) -> Operation:
    from function.openapi import spec  # noqa: PLC0415  (on the first GET /openapi.json only, never at init)

    tensor = spec.obj({"name": spec.STRING, "shape": spec.array({"type": "integer"}), "dtype": spec.STRING})
    loaded = {**spec.BOOLEAN, "description": "Whether this container has loaded the model yet (first use)."}
    served = spec.obj({"name": spec.STRING, "task": spec.STRING, "version": spec.MODEL_VERSION,
                       "quantization": spec.STRING, "inputs": spec.array(tensor), "outputs": spec.array(tensor),
                       "labels": spec.COUNT, "available": {"const": True}, "loaded": loaded})
    unservable = spec.obj({"name": spec.STRING, "available": {"const": False},
                           "reason": {**spec.STRING, "description": "Why the model directory cannot be served."}})
    defaults = spec.obj({kind: spec.STRING for kind in DEFAULT_KINDS}, required=[],
                        description="The model each kind of route uses when a request names none, if served.")
    return spec.Operation(
        summary="Every model this deployment serves",
        description="Each model directory under MODEL_DIR: its task, version, quantization and tensors, or why it "
                    "cannot be served. Loads nothing.",
        response=spec.obj({"models": spec.array({"oneOf": [served, unservable]}), "defaults": defaults}),
        tags=("service",),
    )


def describe_health(deployment: Deployment) -> Operation:
    from function.openapi import spec  # noqa: PLC0415  (on the first GET /openapi.json only, never at init)

    return spec.Operation(
        summary="Liveness",
        description="Cheap: loads nothing. How many models are served and how many cannot be.",
        response=spec.obj({"status": {"const": "ok"}, "models": spec.COUNT, "unavailable": spec.COUNT}),
        tags=("service",),
    )


@described_by(describe_list_models)
def list_models(ctx: RouteContext) -> Response:
    registry = ctx.registry
    models = [{**task.manifest.summary(), "available": True, "loaded": task.loaded}
              for _, task in sorted(registry.tasks.items())]
    models += [entry.summary() for _, entry in sorted(registry.unservable.items())]
    defaults = {}
    for kind, task in DEFAULT_KINDS.items():
        name, _ = ctx.settings.default_model(task)
        if name in registry.tasks:  # only defaults that exist: naming an absent one would mislead
            defaults[kind] = name
    return json_response(200, {"models": models, "defaults": defaults})


@described_by(describe_health)
def health(ctx: RouteContext) -> Response:
    return json_response(200, {"status": "ok", "models": len(ctx.registry.tasks),
                               "unavailable": len(ctx.registry.unservable)})
