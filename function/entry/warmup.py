"""The scheduled {"warmup": true} event (serverless.yml): load every model, infer nothing."""
from __future__ import annotations


def handle(service, event: object, context: object) -> dict:
    return service.warm_up(context)
